//! With `deployerManagement.agent` set, the landscaper runs an agent for its own cluster, so its
//! cluster is an environment like any fenced one and registered deployers are installed there.

use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper::own_environment;
use landscaper_api::config::LandscaperConfiguration;
use landscaper_api::constants::conditions;
use landscaper_api::core::{
    ConditionStatus, DeployerRegistration, Environment, Installation, Target,
};
use landscaper_api::decode::config_from_yaml;
use landscaper_e2e::{LS_NAMESPACE, eventually};
use serde_json::json;

fn configuration(agent: &str) -> LandscaperConfiguration {
    let text = format!(
        "apiVersion: config.landscaper.gardener.cloud/v1alpha1\nkind: LandscaperConfiguration\ndeployerManagement:\n  agent:\n{agent}"
    );
    config_from_yaml(&text, "landscaper.yaml").expect("a configuration")
}

#[test]
fn the_agent_runs_only_when_configured_and_not_disabled() {
    let settings = own_environment::agent_settings(&configuration("    name: landscaper\n"))
        .expect("valid")
        .expect("an agent");
    assert_eq!(settings.name, "landscaper");
    let disabled = configuration("    name: landscaper\n    disable: true\n");
    assert!(
        own_environment::agent_settings(&disabled)
            .expect("valid")
            .is_none()
    );
    assert!(
        own_environment::agent_settings(&LandscaperConfiguration::default())
            .expect("valid")
            .is_none()
    );
    let nameless = configuration("    namespace: ls-system\n");
    let error = own_environment::agent_settings(&nameless).expect_err("a name is required");
    assert!(error.to_string().contains("name"), "{error}");
}

#[tokio::test]
async fn the_landscapers_own_cluster_becomes_an_environment_that_gets_the_registered_deployers() {
    let bed = landscaper_e2e::states::cluster_with_crds().await;
    let cluster = bed.cluster();
    let client = cluster.client();
    let namespace =
        serde_json::from_value(json!({ "metadata": { "name": LS_NAMESPACE } })).unwrap();
    Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .expect("namespace");
    let kubeconfig: Kubeconfig =
        serde_yaml_ng::from_str(&cluster.kubeconfig_yaml()).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    let agent = own_environment::agent_settings(&configuration("    name: landscaper\n"))
        .expect("valid")
        .expect("an agent");
    let settings = landscaper::settings::Settings {
        namespace: LS_NAMESPACE.to_owned(),
        ..Default::default()
    };
    tokio::spawn(landscaper::controllers::run(
        client.clone(),
        settings,
        std::future::pending(),
    ));
    tokio::spawn(own_environment::run(agent, config, std::future::pending()));

    let environments: Api<Environment> = Api::all(client.clone());
    eventually("the own environment's agent is ready", || async {
        environments
            .get_opt("landscaper")
            .await
            .expect("read")
            .is_some_and(|environment| {
                environment
                    .status
                    .unwrap_or_default()
                    .conditions
                    .iter()
                    .any(|condition| {
                        condition.type_ == conditions::AGENT_READY
                            && condition.status == ConditionStatus::True
                    })
            })
    })
    .await;
    Api::<Target>::namespaced(client.clone(), LS_NAMESPACE)
        .get("landscaper")
        .await
        .expect("the environment's Target");

    let registration: DeployerRegistration = serde_json::from_value(json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "DeployerRegistration",
        "metadata": { "name": "mock" },
        "spec": {
            "types": ["landscaper.gardener.cloud/mock"],
            "installationTemplate": { "blueprint": { "ref": { "resourceName": "mock-deployer-blueprint" } } },
        },
    }))
    .expect("a registration");
    Api::<DeployerRegistration>::all(client.clone())
        .create(&PostParams::default(), &registration)
        .await
        .expect("registered");
    let installations: Api<Installation> = Api::namespaced(client, LS_NAMESPACE);
    eventually("the deployer's pair in the own environment", || async {
        installations
            .get_opt("mock-landscaper")
            .await
            .expect("read")
            .is_some()
    })
    .await;
}
