//! The manifest and mock deployer charts: they render with our engine exactly as with helm,
//! pass `helm lint`, run `landscaper-agent deployer manifest|mock` with its Configuration and
//! kubeconfigs as mounted files, and put a Configuration into their Secret that the deployer's
//! strict decoding accepts.

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use landscaper_api::decode::config_from_yaml;
use landscaper_api::deployer::DeployerConfiguration;
use landscaper_e2e::charts::{
    ValuesInput, assert_renders_as_helm_does, helm, render_chart, repository_chart_dir,
};
use landscaper_e2e::rbac::documents;
use serde_json::{Value, json};

const RELEASE: &str = "manifest-default";
const NAMESPACE: &str = "ls-system";
const CHARTS: [(&str, &str); 2] = [("manifest-deployer", "manifest"), ("mock-deployer", "mock")];

fn values_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/deployer_charts/{name}.yaml"))
}

fn render(chart: &str, file: &Path, sets: &[&str]) -> Result<Vec<Value>, String> {
    let files = [file];
    let values = ValuesInput {
        files: &files,
        sets,
    };
    render_chart(&repository_chart_dir(chart), RELEASE, NAMESPACE, values).map(|t| documents(&t))
}

fn find<'a>(documents: &'a [Value], kind: &str, name: &str) -> &'a Value {
    documents
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind} {name} in {documents:#?}"))
}

#[test]
fn our_template_equals_helm_template_and_helm_lint_passes() {
    let Some(helm) = helm() else { return };
    let files: Vec<PathBuf> = ["minimal", "from-blueprint", "tuned"]
        .into_iter()
        .map(values_file)
        .collect();
    let each: Vec<[&Path; 1]> = files.iter().map(|file| [file.as_path()]).collect();
    let variants: Vec<ValuesInput<'_>> = each
        .iter()
        .map(|files| ValuesInput { files, sets: &[] })
        .collect();
    for (chart, _) in CHARTS {
        assert_renders_as_helm_does(
            &helm,
            &repository_chart_dir(chart),
            RELEASE,
            NAMESPACE,
            &variants,
        );
    }
}

#[test]
fn the_deployment_runs_the_deployer_on_mounted_files() {
    for (chart, kind) in CHARTS {
        let rendered = render(chart, &values_file("from-blueprint"), &[]).unwrap();
        let fullname = format!("{RELEASE}-{chart}");
        let deployment: Deployment =
            serde_json::from_value(find(&rendered, "Deployment", &fullname).clone()).unwrap();
        let pod = deployment.spec.unwrap().template.spec.unwrap();
        assert_eq!(pod.automount_service_account_token, Some(false), "{chart}");
        let container = &pod.containers[0];
        assert_eq!(
            container.image.as_deref(),
            Some("registry.example/landscaper/landscaper-agent:v0.1.0")
        );
        let mut expected = vec![
            "deployer".to_owned(),
            kind.to_owned(),
            "--config=/etc/landscaper-deployer/config/config.yaml".to_owned(),
            "--landscaper-kubeconfig=/etc/landscaper-deployer/landscaper-cluster/kubeconfig"
                .to_owned(),
        ];
        if kind == "manifest" {
            expected.push(
                "--secrets-kubeconfig=/etc/landscaper-deployer/secrets-cluster/kubeconfig"
                    .to_owned(),
            );
        }
        expected.push("--health-address=:8081".to_owned());
        assert_eq!(container.args.clone().unwrap(), expected, "{chart}");
        let probe_path = |probe: Option<&k8s_openapi::api::core::v1::Probe>| {
            probe
                .and_then(|p| p.http_get.as_ref())
                .and_then(|g| g.path.clone())
        };
        assert_eq!(
            probe_path(container.liveness_probe.as_ref()).as_deref(),
            Some("/healthz"),
            "{chart}"
        );
        assert_eq!(
            probe_path(container.readiness_probe.as_ref()).as_deref(),
            Some("/readyz"),
            "{chart}"
        );
        assert_eq!(
            container.ports.clone().unwrap()[0].container_port,
            8081,
            "{chart}"
        );
        let volumes: Vec<(String, String)> = pod
            .volumes
            .unwrap()
            .into_iter()
            .map(|v| (v.name, v.secret.unwrap().secret_name.unwrap()))
            .collect();
        let mut expected_volumes = vec![
            ("config".to_owned(), format!("{fullname}-config")),
            (
                "landscaper-cluster".to_owned(),
                format!("{fullname}-landscaper-cluster"),
            ),
        ];
        if kind == "manifest" {
            expected_volumes.push((
                "secrets-cluster".to_owned(),
                "default-target-access".to_owned(),
            ));
        }
        assert_eq!(volumes, expected_volumes, "{chart}");
        let mounts: Vec<String> = container
            .volume_mounts
            .clone()
            .unwrap()
            .into_iter()
            .map(|m| format!("{}={}", m.name, m.mount_path))
            .collect();
        assert!(mounts.contains(&"config=/etc/landscaper-deployer/config".to_owned()));

        // The inline kubeconfig is stored, base64 encoded, in the mounted Secret.
        let secret = find(
            &rendered,
            "Secret",
            &format!("{fullname}-landscaper-cluster"),
        );
        let stored = secret["data"]["kubeconfig"].as_str().unwrap();
        use base64::Engine as _;
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(stored)
            .unwrap();
        assert!(
            String::from_utf8(decoded)
                .unwrap()
                .contains("https://landscaper.example:6443")
        );
    }
}

#[test]
fn the_config_secret_holds_a_configuration_the_deployer_accepts() {
    for (chart, kind) in CHARTS {
        let rendered = render(chart, &values_file("from-blueprint"), &[]).unwrap();
        let secret = find(&rendered, "Secret", &format!("{RELEASE}-{chart}-config"));
        let text = secret["stringData"]["config.yaml"].as_str().unwrap();
        let config: DeployerConfiguration =
            config_from_yaml(text, "config.yaml").unwrap_or_else(|e| panic!("{chart}: {e}"));
        assert!(
            config
                .api_version
                .as_deref()
                .unwrap()
                .starts_with(&format!("{kind}.deployer.")),
            "{chart}: {config:?}"
        );
        assert_eq!(config.kind.as_deref(), Some("Configuration"));
        assert_eq!(config.identity.as_deref(), Some("manifest-default"));
        assert_eq!(
            serde_json::to_value(&config.target_selector).unwrap(),
            json!([{"annotations": [{"key": "landscaper.gardener.cloud/environment", "operator": "=", "values": ["default"]}]}])
        );
        assert_eq!(config.controller.unwrap().workers, Some(8));
        assert!(config.deploy_item_timeouts.is_none());

        let tuned = render(chart, &values_file("tuned"), &[]).unwrap();
        let secret = find(&tuned, "Secret", "deployer-config");
        let text = secret["stringData"]["config.yaml"].as_str().unwrap();
        let config: DeployerConfiguration = config_from_yaml(text, "config.yaml").unwrap();
        // Without an identity the release name is the identity.
        assert_eq!(config.identity.as_deref(), Some(RELEASE));
        assert_eq!(config.controller.unwrap().workers, Some(2));
        let timeout = config
            .deploy_item_timeouts
            .unwrap()
            .progressing_default
            .unwrap();
        assert_eq!(timeout.as_std(), std::time::Duration::from_secs(300));
    }
}

#[test]
fn a_chart_without_a_landscaper_kubeconfig_fails_with_a_clear_message() {
    for (chart, _) in CHARTS {
        let error = render(
            chart,
            &values_file("tuned"),
            &["deployer.landscaperClusterKubeconfig.secretRef.name="],
        )
        .unwrap_err();
        assert!(
            error
                .contains("deployer.landscaperClusterKubeconfig: set secretRef.name or kubeconfig"),
            "{chart}: {error}"
        );
        let error = render(
            chart,
            &values_file("minimal"),
            &["deployer.landscaperClusterKubeconfig.kubeconfig=x"],
        )
        .unwrap_err();
        assert!(error.contains("not both"), "{chart}: {error}");
    }
}
