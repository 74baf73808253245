//! `landscaper validate`: decodes manifests with the API types and reports what is wrong.
//! A Helm chart folder is rendered with its default values and its output checked instead.

mod chart;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use landscaper_api::KnownDocument;
use landscaper_api::decode::{DecodeError, yaml_documents};
use serde_json::Value;

/// Arguments of `landscaper validate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or directories (searched for `.yaml`, `.yml` and `.json` files; a folder with a
    /// `Chart.yaml` is a Helm chart, rendered with its default values).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// What a path given to `validate` holds.
enum Input {
    /// A manifest file.
    File(PathBuf),
    /// A Helm chart folder.
    Chart(PathBuf),
}

/// Validates every document of every file and chart; fails when any is invalid.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut inputs = Vec::new();
    for path in &args.paths {
        collect_inputs(path, &mut inputs)?;
    }
    let mut report = Report::default();
    for input in &inputs {
        match input {
            Input::File(file) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("reading {}", file.display()))?;
                validate_text(&text, &file.display().to_string(), &mut report);
            }
            Input::Chart(dir) => validate_chart(dir, &mut report),
        }
    }
    println!(
        "{} documents valid, {} invalid, {} not of a landscaper kind; {} Helm charts rendered, {} skipped",
        report.valid, report.invalid, report.other, report.charts, report.charts_skipped
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
    charts: usize,
    charts_skipped: usize,
}

/// Renders the chart in `dir` and validates what it renders; a failing render counts as
/// one invalid document.
fn validate_chart(dir: &Path, report: &mut Report) {
    let source = dir.display().to_string();
    match chart::check(dir) {
        Ok(chart::Outcome::Rendered { chart, manifests }) => {
            println!("ok: {source}: Helm chart {chart} renders with its default values");
            report.charts += 1;
            validate_text(&manifests, &format!("{source} (rendered)"), report);
        }
        Ok(chart::Outcome::Skipped(why)) => {
            println!("skipped: {source}: {why}");
            report.charts_skipped += 1;
        }
        Err(error) => {
            println!("error: {source}: {error}");
            report.invalid += 1;
        }
    }
}

/// Why a file with template directives does not decode, appended to its errors.
const NEEDS_RENDERING: &str = "the file holds template directives ({{ … }}) and needs rendering first (helm template, or landscaper-agent template); validate the output";

fn validate_text(text: &str, source: &str, report: &mut Report) {
    let templated = text.contains("{{");
    let report_error = |error: DecodeError, report: &mut Report| {
        if templated {
            println!("error: {error}; {NEEDS_RENDERING}");
        } else {
            println!("error: {error}");
        }
        report.invalid += 1;
    };
    let documents = match yaml_documents(text, source) {
        Ok(documents) => documents,
        Err(error) => {
            report_error(error, report);
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
            Err(error) => report_error(error, report),
        }
    }
}

/// Decodes one document and the provider configurations nested in it; `Ok(None)` when the
/// document is not of a kind we know.
fn validate_document(document: Value, source: &str) -> Result<Option<String>, DecodeError> {
    let nested = nested_configs(&document);
    let Some((_, unknown)) = KnownDocument::decode_explained(document.clone(), source)? else {
        return Ok(None);
    };
    let mut notes = Vec::new();
    for (path, config) in nested {
        if let Some((_, inner)) =
            KnownDocument::decode_explained(config, &format!("{source} at {path}"))?
        {
            notes.extend(inner.iter().map(|field| format!("{path}{field}")));
        }
    }
    notes.extend(unknown.iter().map(ToString::to_string));
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

/// The manifest files and chart folders under `path`; a chart folder's own files are the
/// chart's, not manifests.
fn collect_inputs(path: &Path, inputs: &mut Vec<Input>) -> anyhow::Result<()> {
    let metadata =
        std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if metadata.is_file() {
        inputs.push(Input::File(path.to_owned()));
        return Ok(());
    }
    if chart::is_chart_dir(path) {
        inputs.push(Input::Chart(path.to_owned()));
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
            collect_inputs(&entry, inputs)?;
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

    #[test]
    fn ignored_unknown_fields_name_the_field_probably_meant() {
        let text = r#"
apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DeployItem
metadata: {name: web}
spec:
  type: landscaper.gardener.cloud/kubernetes-manifest
  timout: 5m
  config:
    apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
    kind: ProviderConfiguration
    manifests:
    - polcy: manage
      manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
"#;
        let document = yaml_documents(text, "item.yaml").unwrap().remove(0);
        let summary = validate_document(document, "item.yaml").unwrap().unwrap();
        assert_eq!(
            summary,
            "DeployItem web (ignored unknown fields: .spec.config.manifests[0].polcy (did you mean \"policy\"?), .spec.timout (did you mean \"timeout\"?))"
        );
    }
}
