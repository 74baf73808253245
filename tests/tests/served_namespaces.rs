//! An agent configured to serve other namespaces than its landscaper namespace
//! (`deployItemNamespaces`) deploys the helm DeployItems there with the documented RBAC copied
//! into those namespaces, and leaves the items of every other namespace alone, without a
//! single request refused.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use landscaper_agent::Agent;
use landscaper_agent::clients::ClusterAccess;
use landscaper_api::constants::annotations;
use landscaper_api::core::{DeployItem, DeployItemPhase, ObjectReference, Target};
use landscaper_e2e::charts::{HelmRelease, archive_raw, helm_deploy_item};
use landscaper_e2e::objects::list;
use landscaper_e2e::rbac::{create_all, documented_landscaper_rbac, documents};
use landscaper_e2e::{LS_NAMESPACE, World, eventually, eventually_within, spawn_helm_deployer};
use serde_json::json;

const ENVIRONMENT: &str = "teams";
const SERVED: &str = "team-a";

/// The hello example chart deploying release `name` from an item in `namespace`, for the
/// Target `target` there.
fn hello_item(name: &str, namespace: &str, target: &str) -> DeployItem {
    let chart =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/charts/hello");
    let raw = archive_raw(&chart);
    let release = HelmRelease {
        name,
        namespace: name,
        raw: &raw,
        values: json!({}),
    };
    let mut item = helm_deploy_item(name, target, release);
    item.metadata.namespace = Some(namespace.to_owned());
    item.spec.target = Some(ObjectReference {
        name: target.to_owned(),
        namespace: Some(namespace.to_owned()),
    });
    item
}

#[tokio::test]
async fn an_agent_serves_the_namespaces_it_is_configured_for_and_no_other() {
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let landscaper = world.landscaper_cluster();
    world.create_namespace(landscaper, SERVED).await;
    let production = world.production_agent(ENVIRONMENT).await;
    // The documented Role of a served namespace, copied into team-a.
    let deploy_items_role: Vec<_> = documents(&documented_landscaper_rbac(ENVIRONMENT))
        .into_iter()
        .filter(|d| {
            d["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(":deploy-items"))
        })
        .map(|mut d| {
            d["metadata"]["namespace"] = json!(SERVED);
            d
        })
        .collect();
    assert_eq!(deploy_items_role.len(), 2, "a Role and its binding");
    create_all(&landscaper.client(), &deploy_items_role, SERVED).await;

    let mut settings = production.agent.settings().clone();
    settings.deploy_item_namespaces = vec![SERVED.to_owned()];
    let host = ClusterAccess::from_kubeconfig_file(&production.host_kubeconfig, "fenced")
        .await
        .unwrap();
    let access = ClusterAccess::from_kubeconfig_file(&settings.landscaper_kubeconfig, "ls")
        .await
        .unwrap();
    let agent = Agent::new(settings, host, access, "v0.0.0-test");
    let (stop, running) = spawn_helm_deployer(agent, 2);
    let admin = landscaper.client();
    let environment_target: Api<Target> = Api::namespaced(admin.clone(), LS_NAMESPACE);
    eventually(
        "the landscaper created the environment's Target",
        || async {
            environment_target
                .get_opt(ENVIRONMENT)
                .await
                .unwrap()
                .is_some()
        },
    )
    .await;
    // A Target of the environment in team-a, as a user makes one beside their items.
    let mut target = environment_target.get(ENVIRONMENT).await.unwrap();
    target.metadata = kube::core::ObjectMeta {
        name: Some(ENVIRONMENT.to_owned()),
        namespace: Some(SERVED.to_owned()),
        annotations: Some([(annotations::ENVIRONMENT.to_owned(), ENVIRONMENT.to_owned())].into()),
        ..Default::default()
    };
    Api::<Target>::namespaced(admin.clone(), SERVED)
        .create(&PostParams::default(), &target)
        .await
        .unwrap();

    let served = hello_item("served", SERVED, ENVIRONMENT);
    let unserved = hello_item("unserved", LS_NAMESPACE, ENVIRONMENT);
    for item in [&served, &unserved] {
        let namespace = item.metadata.namespace.as_deref().unwrap();
        Api::<DeployItem>::namespaced(admin.clone(), namespace)
            .create(&PostParams::default(), item)
            .await
            .unwrap();
    }
    let items = |namespace| Api::<DeployItem>::namespaced(admin.clone(), namespace);
    eventually_within(
        "the item in team-a succeeded",
        Duration::from_secs(120),
        || async {
            let status = items(SERVED).get("served").await.unwrap().status;
            status.and_then(|s| s.phase) == Some(DeployItemPhase::Succeeded)
        },
    )
    .await;
    let configs: Api<ConfigMap> = Api::namespaced(world.fenced_cluster().client(), "served");
    eventually("the release is in the fenced cluster", || async {
        !list(&configs).await.is_empty()
    })
    .await;
    // Its landscaper namespace is not served now: that item was never picked up.
    let untouched = items(LS_NAMESPACE).get("unserved").await.unwrap();
    assert!(untouched.status.is_none(), "{:?}", untouched.status);

    stop.send(()).unwrap();
    running.await.unwrap();
    let refused: Vec<_> = landscaper
        .requests()
        .into_iter()
        .filter(|r| r.user == production.landscaper_user && r.code == 403)
        .collect();
    assert!(refused.is_empty(), "forbidden requests: {refused:#?}");
}
