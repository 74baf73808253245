//! `landscaper validate`: decodes manifests with the API types and reports what is wrong.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use landscaper_api::KnownDocument;
use landscaper_api::decode::{DecodeError, yaml_documents};
use serde_json::Value;

/// Arguments of `landscaper validate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or directories (searched for `.yaml`, `.yml` and `.json` files).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// Validates every document of every file; fails when any document is invalid.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for path in &args.paths {
        collect_files(path, &mut files)?;
    }
    let mut report = Report::default();
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        validate_text(&text, &file.display().to_string(), &mut report);
    }
    println!(
        "{} documents valid, {} invalid, {} not of a landscaper kind",
        report.valid, report.invalid, report.other
    );
    Ok(if report.invalid == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[derive(Default)]
struct Report {
    valid: usize,
    invalid: usize,
    other: usize,
}

fn validate_text(text: &str, source: &str, report: &mut Report) {
    let documents = match yaml_documents(text, source) {
        Ok(documents) => documents,
        Err(error) => {
            println!("error: {error}");
            report.invalid += 1;
            return;
        }
    };
    for (index, document) in documents.into_iter().enumerate() {
        let name = format!("{source} (document {})", index + 1);
        match validate_document(document, &name) {
            Ok(Some(summary)) => {
                println!("ok: {name}: {summary}");
                report.valid += 1;
            }
            Ok(None) => report.other += 1,
            Err(error) => {
                println!("error: {error}");
                report.invalid += 1;
            }
        }
    }
}

/// Decodes one document and the provider configurations nested in it; `Ok(None)` when the
/// document is not of a kind we know.
fn validate_document(document: Value, source: &str) -> Result<Option<String>, DecodeError> {
    let nested = nested_configs(&document);
    let Some(decoded) = KnownDocument::decode(document.clone(), source)? else {
        return Ok(None);
    };
    let mut notes = Vec::new();
    for (path, config) in nested {
        if let Some(inner) = KnownDocument::decode(config, &format!("{source} at {path}"))? {
            notes.extend(
                inner
                    .unknown_fields
                    .iter()
                    .map(|field| format!("{path}{field}")),
            );
        }
    }
    notes.extend(decoded.unknown_fields);
    let kind = document.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = document
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut summary = format!("{kind} {name}").trim_end().to_owned();
    if !notes.is_empty() {
        summary.push_str(&format!(" (ignored unknown fields: {})", notes.join(", ")));
    }
    Ok(Some(summary))
}

/// The deployer configurations inside a DeployItem or Execution, with their paths.
fn nested_configs(document: &Value) -> Vec<(String, Value)> {
    let mut configs = Vec::new();
    if let Some(config) = document.pointer("/spec/config") {
        configs.push((".spec.config".to_owned(), config.clone()));
    }
    if let Some(items) = document
        .pointer("/spec/deployItems")
        .and_then(Value::as_array)
    {
        for (index, item) in items.iter().enumerate() {
            if let Some(config) = item.get("config") {
                configs.push((format!(".spec.deployItems[{index}].config"), config.clone()));
            }
        }
    }
    configs
}

fn collect_files(path: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let metadata =
        std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if metadata.is_file() {
        files.push(path.to_owned());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("listing {}", path.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let is_manifest = matches!(
            entry.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        );
        if entry.is_dir() || is_manifest {
            collect_files(&entry, files)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_invalid_nested_provider_configuration_with_its_path() {
        let text = r#"
apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DeployItem
metadata: {name: web}
spec:
  type: landscaper.gardener.cloud/kubernetes-manifest
  config:
    apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
    kind: ProviderConfiguration
    manifests:
    - policy: sometimes
      manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
"#;
        let document = yaml_documents(text, "item.yaml").unwrap().remove(0);
        let error = validate_document(document, "item.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(
                "item.yaml at .spec.config: field .manifests[0].policy: unknown variant `sometimes`"
            ),
            "{error}"
        );
    }

    #[test]
    fn summarises_valid_documents_and_skips_foreign_kinds() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Target\nmetadata: {name: t}\nspec: {type: x, extra: 1}\n";
        let mut report = Report::default();
        validate_text(text, "two.yaml", &mut report);
        assert_eq!((report.valid, report.invalid, report.other), (1, 0, 1));
        let document = yaml_documents(text, "two.yaml").unwrap().remove(1);
        let summary = validate_document(document, "two.yaml").unwrap().unwrap();
        assert_eq!(summary, "Target t (ignored unknown fields: .spec.extra)");
    }
}
