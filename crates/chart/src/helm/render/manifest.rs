//! From rendered files to manifests (Helm's `releaseutil`): splitting files into YAML
//! documents, reading each document's head, separating hooks, and Helm's install order.

use super::head::{Head, read_head};
use super::quick_head::quick_head;
use crate::formats::yaml::{self, split_manifests};
use crate::helm::values::Warnings;

pub use super::head::HOOK_ANNOTATION;

/// Helm's install order by kind; other kinds follow, sorted by name.
pub const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// The hook events Helm knows; a document naming any other is skipped.
const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// One document of a rendered file.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The template path, e.g. `mychart/templates/deployment.yaml`.
    pub path: String,
    /// The document text, trimmed.
    pub content: String,
    /// `kind` of the document (empty when absent).
    pub kind: String,
    /// For hooks, the events of `helm.sh/hook` (lower-cased, trimmed).
    pub events: Vec<String>,
}

impl Manifest {
    /// Whether this hook runs on `helm test`.
    pub fn is_test_hook(&self) -> bool {
        self.events.iter().any(|e| e == "test")
    }
}

/// The documents of one rendered file, each with what Helm reads from it or Helm's error
/// naming the file.
#[derive(Debug, Default)]
pub struct CheckedFile {
    docs: Vec<(String, Result<Head, String>)>,
}

/// Splits a rendered file into documents and reads each one's YAML (the check Helm makes of
/// every document). Partial templates (`_*`) and empty files have no documents.
pub fn check_file(path: &str, content: &str) -> CheckedFile {
    let base = path.rsplit('/').next().unwrap_or(path);
    if base.starts_with('_') || content.trim().is_empty() {
        return CheckedFile::default();
    }
    let docs = split_manifests(content)
        .into_iter()
        .map(|doc| {
            let head = match quick_head(&doc) {
                Some(head) => Ok(head),
                None => yaml::parse_yaml(&doc)
                    .and_then(|doc| read_head(&doc))
                    .map_err(|e| format!("YAML parse error on {path}: {}", e.helm_message())),
            };
            (doc, head)
        })
        .collect();
    CheckedFile { docs }
}

/// Splits checked files (in path order) into plain manifests and hooks, both in install
/// order; the first document that is not valid YAML fails with Helm's message naming the file.
/// A hook with an event Helm does not know is dropped, and logged as Helm logs it.
pub fn sort_manifests(
    files: impl IntoIterator<Item = (String, CheckedFile)>,
    warnings: &mut Warnings,
) -> Result<(Vec<Manifest>, Vec<Manifest>), String> {
    let mut generic = Vec::new();
    let mut hooks = Vec::new();
    for (path, checked) in files {
        for (doc, head) in checked.docs {
            let head = head?;
            let manifest = Manifest {
                path: path.clone(),
                content: doc,
                kind: head.kind,
                events: Vec::new(),
            };
            let Some(hook) = head.hook else {
                generic.push(manifest);
                continue;
            };
            let events: Vec<String> = hook.split(',').map(|e| e.trim().to_lowercase()).collect();
            if events.iter().any(|e| !HOOK_EVENTS.contains(&e.as_str())) {
                warnings.info_with("skipping unknown hooks", &[("hookTypes", &hook)]);
                continue;
            }
            hooks.push(Manifest { events, ..manifest });
        }
    }
    sort_by_kind(&mut generic);
    sort_by_kind(&mut hooks);
    Ok((generic, hooks))
}

/// Stable sort by install order; unknown kinds last, alphabetically among themselves.
fn sort_by_kind(manifests: &mut [Manifest]) {
    // Each kind is looked up in the order once, not at every comparison.
    manifests.sort_by_cached_key(|m| match INSTALL_ORDER.iter().position(|k| *k == m.kind) {
        Some(rank) => (rank, String::new()),
        None => (INSTALL_ORDER.len(), m.kind.clone()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(files: &[(String, String)]) -> Vec<(String, CheckedFile)> {
        files
            .iter()
            .map(|(path, content)| (path.clone(), check_file(path, content)))
            .collect()
    }

    /// Go's `releaseutil.SplitManifests`, through the regular expression Helm compiles and
    /// Go's `Regexp.Split`.
    fn split_as_helm(separator: &regex::Regex, text: &str) -> Vec<String> {
        let text = text.trim();
        let mut docs = Vec::new();
        let (mut begin, mut end) = (0, 0);
        for found in separator.find_iter(text) {
            end = found.start();
            if found.end() != 0 {
                docs.push(&text[begin..end]);
            }
            begin = found.end();
        }
        if end != text.len() {
            docs.push(&text[begin..]);
        }
        docs.into_iter()
            .filter(|d| !d.is_empty())
            .map(|d| d.trim().to_string())
            .collect()
    }

    #[test]
    fn documents_split_where_helm_s_regular_expression_splits_them() {
        let pieces = [
            "---", "--", "-", "\n", "\r\n", " ", "\t", "\x0C", "a", "b: 1", "# c", "----", "é",
            // Whitespace to `trim`, not to the separator.
            "\x0B", "\u{A0}",
        ];
        // Every text of up to four pieces, and some longer ones.
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(longer);
        }
        texts.sort();
        texts.dedup();
        texts.extend([
            "a\n---\n---\nb".to_string(),
            "a\n \n\t---x\n---\n\n---\nb\n---".to_string(),
            "---\n---\n".to_string(),
            "a: |\n  ---\n  x\n--- # c\nb".to_string(),
        ]);
        let separator = regex::Regex::new(r"(?:^|[\t\n\x0C\r ]*\n)---[\t\n\x0C\r ]*").unwrap();
        for text in &texts {
            assert_eq!(
                split_manifests(text),
                split_as_helm(&separator, text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn splits_on_line_start_separators_only() {
        let docs = split_manifests("\n---\na: 1\n---   \nb: 2\nc: ---x\n---\n\n");
        assert_eq!(docs, vec!["a: 1", "b: 2\nc: ---x"]);
        assert!(split_manifests("  \n").is_empty());
    }

    #[test]
    fn hooks_are_separated_and_kinds_sorted() {
        let files = [(
            "c/templates/a.yaml".to_string(),
            "kind: Deployment\n---\nkind: Zed\n---\nkind: Alpha\n---\nkind: ServiceAccount\n---\nkind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: Test\n".to_string(),
        )];
        let (generic, hooks) = sort_manifests(checked(&files), &mut Warnings::default()).unwrap();
        let kinds: Vec<&str> = generic.iter().map(|m| m.kind.as_str()).collect();
        assert_eq!(kinds, ["ServiceAccount", "Deployment", "Alpha", "Zed"]);
        assert!(hooks[0].is_test_hook());
    }

    #[test]
    fn hooks_with_an_unknown_event_are_dropped_and_logged() {
        let files = [(
            "c/templates/a.yaml".to_string(),
            "kind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install, later\n"
                .to_string(),
        )];
        let mut warnings = Warnings::default();
        let (generic, hooks) = sort_manifests(checked(&files), &mut warnings).unwrap();
        assert!(generic.is_empty() && hooks.is_empty());
        assert_eq!(
            warnings.0,
            [r#"level=INFO msg="skipping unknown hooks" hookTypes="pre-install, later""#]
        );
    }

    #[test]
    fn invalid_documents_name_the_file() {
        let files = [("c/templates/a.yaml".to_string(), "a: [\n".to_string())];
        let err = sort_manifests(checked(&files), &mut Warnings::default()).unwrap_err();
        assert!(
            err.starts_with(
                "YAML parse error on c/templates/a.yaml: error converting YAML to JSON: yaml: line"
            ),
            "{err}"
        );
    }
}
