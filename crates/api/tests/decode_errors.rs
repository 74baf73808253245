//! Bad manifests fail with an error naming the file and the field path.

mod common;

use landscaper_api::config::{AgentConfiguration, LandscaperConfiguration};
use landscaper_api::core::{Environment, Installation};
use landscaper_api::decode::{DecodeError, config_from_yaml, from_yaml};
use landscaper_api::deployer::ManifestProviderConfiguration;

#[test]
fn unknown_enum_value_names_file_and_path() {
    let text = r#"
apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Environment
metadata: {name: fenced}
spec:
  namespace: ls-system
  hostTarget: {type: landscaper.gardener.cloud/kubernetes-cluster}
  landscaperClusterConfig: {host: "https://ls", apiPath: ""}
  targetSelectors:
  - annotations:
    - key: landscaper.gardener.cloud/environment
      operator: "~"
      values: [fenced]
"#;
    let error = from_yaml::<Environment>(text, "env.yaml").unwrap_err();
    let DecodeError::Field {
        source_name,
        path,
        message,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(source_name, "env.yaml");
    assert_eq!(path, ".spec.targetSelectors[0].annotations[0].operator");
    assert!(
        message.starts_with("unknown variant `~`, expected one of"),
        "{message}"
    );
}

#[test]
fn unknown_manifest_policy_is_rejected() {
    let text = "manifests:\n- policy: sometimes\n  manifest: {apiVersion: v1, kind: ConfigMap}\n";
    let error = from_yaml::<ManifestProviderConfiguration>(text, "config.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("config.yaml: field .manifests[0].policy: unknown variant `sometimes`, expected one of `manage`, `fallback`, `keep`, `ignore`, `immutable`"),
        "{error}"
    );
}

#[test]
fn wrong_type_names_file_and_path() {
    let text = r#"
apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata: {name: inst}
spec:
  blueprint: {ref: {resourceName: bp}}
  imports:
    data:
    - name: a
      dataRef: [not, a, string]
"#;
    let error = from_yaml::<Installation>(text, "inst.yaml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "inst.yaml: field .spec.imports.data[0].dataRef: invalid type: sequence, expected a string"
    );
}

#[test]
fn invalid_duration_names_the_field_and_the_syntax() {
    let text = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DeployItem\nmetadata: {name: a}\nspec: {type: x, timeout: ten minutes}\n";
    let error = from_yaml::<landscaper_api::core::DeployItem>(text, "item.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("item.yaml: field .spec.timeout: invalid duration \"ten minutes\""),
        "{error}"
    );
}

#[test]
fn unknown_status_phase_is_kept_not_rejected() {
    let text = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Installation\nmetadata: {name: a}\nspec: {blueprint: {ref: {resourceName: bp}}}\nstatus: {phase: Running}\n";
    let installation = from_yaml::<Installation>(text, "inst.yaml").unwrap().value;
    let phase = installation.status.unwrap().phase.unwrap();
    assert_eq!(phase.as_str(), "Running");
    assert_eq!(serde_json::to_value(&phase).unwrap(), "Running");
}

/// Upstream's own configuration examples write `operation` where the selector has `operator`:
/// still rejected, with the field that was meant.
#[test]
fn upstream_operation_typo_is_rejected_with_the_field_meant() {
    let dir = common::landscaper_conformance_dir().join("examples");
    let agent = std::fs::read_to_string(dir.join("ex__01-Agent-Configuration.yaml")).unwrap();
    let error = config_from_yaml::<AgentConfiguration>(&agent, "agent.yaml").unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent.yaml: unknown field .targetSelectors[0].annotations[0].operation, did you mean \"operator\"?"
    );
    let landscaper =
        std::fs::read_to_string(dir.join("ex__00-Landscaper-Configuration.yaml")).unwrap();
    let error =
        config_from_yaml::<LandscaperConfiguration>(&landscaper, "landscaper.yaml").unwrap_err();
    assert!(
        error.to_string().contains(
            ".deployerManagement.agent.targetSelectors[0].annotations[0].operation (did you mean \"operator\"?)"
        ),
        "{error}"
    );
}
