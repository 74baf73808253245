//! Deleting an installation end to end, with real deployers on the two-cluster world: a root
//! whose subinstallation `chart` installs a chart with the agent's embedded helm deployer and
//! whose subinstallation `objects`, importing an export of `chart`, applies a ConfigMap with
//! the manifest deployer, both into the fenced cluster. `delete-without-uninstall` leaves the
//! deployed objects there; a plain delete removes them, the importer's first: `chart` waits
//! while `objects` exists.

use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use landscaper_api::constants::{annotations, deploy_item_types};
use landscaper_api::core::{DeployItem, Installation, InstallationPhase, Target};
use landscaper_deployer::controller::DeployerConfig;
use landscaper_e2e::charts::{helm_config, package};
use landscaper_e2e::{LS_NAMESPACE, World, eventually, eventually_within};
use serde_json::{Value, json};

const ENVIRONMENT: &str = "east";
/// Installing a chart through the agent in a debug build takes a while.
const JOB_LIMIT: Duration = Duration::from_secs(120);

/// A chart holding one ConfigMap named after the release.
fn chart_raw(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(
        dir.join("Chart.yaml"),
        "apiVersion: v2\nname: tiny\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("templates/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  from: chart\n",
    )
    .unwrap();
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, package(dir))
}

fn target_import() -> Value {
    json!({"name": "cluster", "type": "target", "targetType": "landscaper.gardener.cloud/kubernetes-cluster"})
}

/// `chart`: the helm item installing release `<prefix>-chart` into namespace `<prefix>`, which
/// it exports as `namespace`.
fn chart_blueprint(prefix: &str, raw: &str) -> Value {
    let config = helm_config(
        &format!("{prefix}-chart"),
        prefix,
        json!({"archive": {"raw": raw}}),
        json!({}),
    );
    let template = format!(
        "deployItems:\n- name: chart\n  type: {}\n  target:\n    import: cluster\n  config: {config}\n",
        deploy_item_types::HELM
    );
    let blueprint = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Blueprint",
        "imports": [target_import()],
        "exports": [{"name": "namespace", "schema": {"type": "string"}}],
        "deployExecutions": [{"name": "main", "type": "GoTemplate", "template": template}],
        "exportExecutions": [{"name": "out", "type": "GoTemplate", "template": format!("exports:\n  namespace: {prefix}\n")}],
    });
    json!({"blueprint.yaml": blueprint.to_string()})
}

/// `objects`: the manifest item applying ConfigMap `<prefix>-objects` into the namespace it
/// imports.
fn objects_blueprint(prefix: &str) -> Value {
    let template = format!(
        "deployItems:\n- name: objects\n  type: {}\n  target:\n    import: cluster\n  config:\n    apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2\n    kind: ProviderConfiguration\n    updateStrategy: update\n    manifests:\n    - policy: manage\n      manifest:\n        apiVersion: v1\n        kind: ConfigMap\n        metadata:\n          name: {prefix}-objects\n          namespace: {{{{ .imports.namespace }}}}\n        data:\n          from: manifest\n",
        deploy_item_types::MANIFEST
    );
    let blueprint = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Blueprint",
        "imports": [target_import(), {"name": "namespace", "schema": {"type": "string"}}],
        "deployExecutions": [{"name": "main", "type": "GoTemplate", "template": template}],
    });
    json!({"blueprint.yaml": blueprint.to_string()})
}

/// The root `prefix`: imports the environment's Target as `cluster` and runs `chart`, then
/// `objects` (which imports `chart`'s export).
fn root(prefix: &str, raw: &str) -> Installation {
    let cluster = json!([{"name": "cluster", "target": "cluster"}]);
    let blueprint = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1",
        "kind": "Blueprint",
        "imports": [target_import()],
        "subinstallations": [
            {
                "name": "chart",
                "blueprint": {"filesystem": chart_blueprint(prefix, raw)},
                "imports": {"targets": cluster},
                "exports": {"data": [{"name": "namespace", "dataRef": "namespace"}]},
            },
            {
                "name": "objects",
                "blueprint": {"filesystem": objects_blueprint(prefix)},
                "imports": {"targets": cluster, "data": [{"name": "namespace", "dataRef": "namespace"}]},
            },
        ],
    });
    serde_json::from_value(json!({
        "metadata": {"name": prefix, "annotations": {annotations::OPERATION: "reconcile"}},
        "spec": {
            "blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint.to_string()}}},
            "imports": {"targets": [{"name": "cluster", "target": ENVIRONMENT}]},
        },
    }))
    .expect("an installation")
}

/// The world with the agent (its helm deployer) and a manifest deployer serving the
/// environment's Target, whose kubeconfig Secret it reads in the fenced cluster as the agent
/// does.
async fn world() -> World {
    let world = World::start().await;
    let agent = world.agent(world.agent_settings(ENVIRONMENT)).await;
    tokio::spawn(landscaper_agent::helm_deployer::run_with_agent(
        agent,
        2,
        std::future::pending(),
    ));
    let mut config = DeployerConfig::new(deploy_item_types::MANIFEST, "manifest-deployer");
    config.namespace = Some(LS_NAMESPACE.into());
    config.retry_initial = Duration::from_millis(200);
    let setup = landscaper_deployer::deployers::manifest::setup(
        world.landscaper_cluster().client(),
        world.fenced_cluster().client(),
        config,
    );
    tokio::spawn(landscaper_deployer::run(setup, std::future::pending()));
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually("the environment's Target exists", || async {
        targets.get_opt(ENVIRONMENT).await.unwrap().is_some()
    })
    .await;
    world
}

/// Waits until the root `name` finished its job Succeeded; fails at once on a failed job.
async fn succeeded(installations: &Api<Installation>, name: &str) {
    eventually_within(&format!("{name} succeeds"), JOB_LIMIT, || async {
        let status = installations
            .get(name)
            .await
            .unwrap()
            .status
            .unwrap_or_default();
        assert_ne!(
            status.phase,
            Some(InstallationPhase::Failed),
            "{name} failed: {:?}",
            status.last_error
        );
        status.job_id.is_some()
            && status.job_id == status.job_id_finished
            && status.phase == Some(InstallationPhase::Succeeded)
    })
    .await;
}

/// Deletes the root `name` and waits until it and everything below it are gone.
async fn delete_and_wait(world: &World, name: &str) {
    let installations: Api<Installation> =
        Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    installations
        .delete(name, &DeleteParams::default())
        .await
        .expect("the root is deleted");
    wait_gone(&installations, name).await;
}

/// Waits until the root `name` and its subinstallations are gone.
async fn wait_gone(installations: &Api<Installation>, name: &str) {
    eventually_within(
        &format!("{name} and its subinstallations are gone"),
        JOB_LIMIT,
        || async {
            installations
                .list(&Default::default())
                .await
                .unwrap()
                .items
                .iter()
                .all(|i| {
                    let parent = i
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("landscaper.gardener.cloud/encompassed-by"));
                    i.metadata.name.as_deref() != Some(name)
                        && parent.map(String::as_str) != Some(name)
                })
        },
    )
    .await;
}

async fn config_map(world: &World, namespace: &str, name: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(world.fenced_cluster().client(), namespace)
        .get_opt(name)
        .await
        .expect("ConfigMap read")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_without_uninstall_keeps_the_deployed_objects_and_delete_removes_them_importer_first()
 {
    let world = world().await;
    let dir = tempfile::tempdir().unwrap();
    let raw = chart_raw(dir.path());
    let installations: Api<Installation> =
        Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    for prefix in ["kept", "removed"] {
        installations
            .create(&PostParams::default(), &root(prefix, &raw))
            .await
            .expect("the root is created");
    }
    for prefix in ["kept", "removed"] {
        succeeded(&installations, prefix).await;
        for name in [format!("{prefix}-chart"), format!("{prefix}-objects")] {
            assert!(
                config_map(&world, prefix, &name).await.is_some(),
                "{prefix}/{name} is deployed"
            );
        }
    }

    // delete-without-uninstall: the landscaper's objects go, the deployed ones stay.
    installations
        .patch(
            "kept",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {annotations::DELETE_WITHOUT_UNINSTALL: "true"}}})),
        )
        .await
        .unwrap();
    delete_and_wait(&world, "kept").await;
    for name in ["kept-chart", "kept-objects"] {
        assert!(
            config_map(&world, "kept", name).await.is_some(),
            "kept/{name} stays in the fenced cluster"
        );
    }

    // A plain delete uninstalls, `objects` (the importer) before `chart`: while a finalizer of
    // the test holds `objects`' DeployItem, `chart` waits and its release stays.
    let objects = subinstallation(&installations, "removed", "objects").await;
    let chart = subinstallation(&installations, "removed", "chart").await;
    let items: Api<DeployItem> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    let held = items
        .list(&ListParams::default().labels(&format!("{MANAGED_BY}={objects}")))
        .await
        .unwrap()
        .items
        .pop()
        .expect("objects' DeployItem");
    let held = held.metadata.name.clone().unwrap();
    let finalizers = |list: Value| json!({"metadata": {"finalizers": list}});
    let mut with_hold = items
        .get(&held)
        .await
        .unwrap()
        .metadata
        .finalizers
        .unwrap_or_default();
    with_hold.push(HOLD.to_owned());
    items
        .patch(
            &held,
            &PatchParams::default(),
            &Patch::Merge(finalizers(json!(with_hold))),
        )
        .await
        .unwrap();
    installations
        .delete("removed", &DeleteParams::default())
        .await
        .expect("the root is deleted");
    eventually_within("objects' ConfigMap is uninstalled", JOB_LIMIT, || async {
        config_map(&world, "removed", "removed-objects")
            .await
            .is_none()
    })
    .await;
    eventually("chart waits for objects", || async {
        installations.get(&chart).await.is_ok_and(|c| {
            c.status.unwrap_or_default().conditions.iter().any(|c| {
                c.message.contains(&format!(
                    "a sibling still imports some of the exports ({objects})"
                ))
            })
        })
    })
    .await;
    assert!(
        config_map(&world, "removed", "removed-chart")
            .await
            .is_some(),
        "chart's release stays while its importer exists"
    );
    let remaining: Vec<String> = items
        .get(&held)
        .await
        .unwrap()
        .metadata
        .finalizers
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f != HOLD)
        .collect();
    items
        .patch(
            &held,
            &PatchParams::default(),
            &Patch::Merge(finalizers(json!(remaining))),
        )
        .await
        .unwrap();
    wait_gone(&installations, "removed").await;
    assert!(
        config_map(&world, "removed", "removed-chart")
            .await
            .is_none(),
        "chart's release is uninstalled"
    );
}

/// The finalizer with which the test holds a DeployItem.
const HOLD: &str = "test.landscaper.gardener.cloud/hold";
/// The label naming the Execution that manages a DeployItem.
const MANAGED_BY: &str = "execution.landscaper.gardener.cloud/managed-by";

/// The name of the subinstallation of `root` made from template `template`.
async fn subinstallation(installations: &Api<Installation>, root: &str, template: &str) -> String {
    installations
        .list(
            &ListParams::default()
                .labels(&format!("landscaper.gardener.cloud/encompassed-by={root}")),
        )
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|i| {
            i.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("landscaper.gardener.cloud/subinstallation-name"))
                .map(String::as_str)
                == Some(template)
        })
        .and_then(|i| i.metadata.name)
        .unwrap_or_else(|| panic!("{root} has no subinstallation {template}"))
}
