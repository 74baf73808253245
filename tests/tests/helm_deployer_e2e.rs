//! The agent's embedded helm deployer end to end, with RBAC enforced in both clusters: the
//! agent runs as `landscaper-agent run` does, with exactly the agent chart's RBAC in the fenced
//! cluster and the documented RBAC in the landscaper cluster. A helm DeployItem carrying the
//! real bitnami nginx chart is installed, upgraded and deleted; the fenced cluster holds what
//! our `template` renders, and every write to it is made as `deployer-<env>`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use landscaper_api::constants::annotations;
use landscaper_api::core::{DeployItem, DeployItemPhase, Target};
use landscaper_chart::helm::chart;
use landscaper_chart::helm::objects::KubeVersion;
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_e2e::charts::{HelmRelease, helm_deploy_item, nginx_chart_dir, package};
use landscaper_e2e::{LS_NAMESPACE, World, eventually, eventually_within, spawn_helm_deployer};
use serde_json::{Value, json};
use testbed::RequestRecord;

const ENVIRONMENT: &str = "east";
const RELEASE: &str = "web";
const RELEASE_NAMESPACE: &str = "web";
/// Rendering a real chart in a debug build, with RBAC on every request, takes a while.
const JOB_LIMIT: Duration = Duration::from_secs(120);

fn deployer_user() -> String {
    format!("system:serviceaccount:ls-system:deployer-{ENVIRONMENT}")
}

fn items(world: &World) -> Api<DeployItem> {
    Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE)
}

/// The nginx chart with its TLS certificate switched off: the chart would otherwise generate a
/// fresh random key on every render, and the objects could not be compared with a render.
fn install_values() -> Value {
    json!({ "tls": { "enabled": false } })
}

/// Changes the Deployment (replicas) and the Service (type), and nothing else.
fn upgrade_values() -> Value {
    json!({ "tls": { "enabled": false }, "replicaCount": 2, "service": { "type": "ClusterIP" } })
}

fn helm_item(name: &str, target: &str, raw: &str, values: Value) -> DeployItem {
    let release = HelmRelease {
        name: RELEASE,
        namespace: RELEASE_NAMESPACE,
        raw,
        values,
    };
    helm_deploy_item(name, target, release)
}

/// Waits until the item finished a job other than `previous` and returns it.
async fn finished(world: &World, name: &str, previous: Option<String>) -> DeployItem {
    let items = items(world);
    let deadline = tokio::time::Instant::now() + JOB_LIMIT;
    loop {
        let item = items.get(name).await.expect("item readable");
        let status = item.status.clone().unwrap_or_default();
        if status.job_id.is_some()
            && status.job_id == status.job_id_finished
            && status.job_id_finished != previous
        {
            return item;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "DeployItem {name} did not finish a job: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn assert_succeeded(item: &DeployItem) {
    let status = item.status.clone().unwrap_or_default();
    assert_eq!(
        status.phase,
        Some(DeployItemPhase::Succeeded),
        "last error: {:?}",
        status.last_error
    );
    assert_eq!(
        status.deployer.map(|d| d.identity),
        Some(format!("agent-helm-deployer-{ENVIRONMENT}"))
    );
}

/// What `landscaper-agent template` renders for the chart, as objects.
fn rendered(archive: &[u8], values: &Value, revision: i64, kube: &KubeVersion) -> Vec<Value> {
    let chart = chart::load_archive(archive).expect("the packaged chart loads");
    let values =
        landscaper_chart::formats::json::parse_object(&values.to_string()).expect("values");
    let options = TemplateOptions {
        release: ReleaseOptions {
            name: RELEASE.into(),
            namespace: RELEASE_NAMESPACE.into(),
            revision,
            is_upgrade: revision > 1,
        },
        kube_version: Some(kube.clone()),
        ..Default::default()
    };
    let release = render::install(&chart, &values, &options).expect("the chart renders");
    landscaper_api::decode::yaml_documents(&release.manifest, "rendered chart")
        .expect("rendered YAML")
        .into_iter()
        .filter(Value::is_object)
        .collect()
}

/// `Kind namespace/name` of a rendered object (namespaced ones default to the release's).
type Key = (String, String, String, String);

fn key(object: &Value, namespaced: bool) -> Key {
    let namespace = if namespaced {
        object["metadata"]["namespace"]
            .as_str()
            .unwrap_or(RELEASE_NAMESPACE)
    } else {
        ""
    };
    (
        object["apiVersion"].as_str().unwrap_or_default().to_owned(),
        object["kind"].as_str().unwrap_or_default().to_owned(),
        namespace.to_owned(),
        object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// The live objects for the rendered ones, by key (`None` when absent).
async fn live(
    client: &kube::Client,
    objects: &[Value],
) -> BTreeMap<Key, (Value, Option<DynamicObject>)> {
    let mut out = BTreeMap::new();
    for object in objects {
        let typed: DynamicObject = serde_json::from_value(object.clone()).expect("an object");
        let gvk = GroupVersionKind::try_from(typed.types.as_ref().expect("types")).expect("gvk");
        let (resource, capabilities) = pinned_kind(client, &gvk).await.expect("a served kind");
        let namespaced = capabilities.scope == Scope::Namespaced;
        let key = key(object, namespaced);
        let api: Api<DynamicObject> = if namespaced {
            Api::namespaced_with(client.clone(), &key.2, &resource)
        } else {
            Api::all_with(client.clone(), &resource)
        };
        let found = api.get_opt(&key.3).await.expect("object readable");
        out.insert(key, (object.clone(), found));
    }
    out
}

/// Where `live` differs from `want`: every field `want` sets must be in `live` with the same
/// value (the server adds defaults and metadata; those are not differences).
fn differences(path: &str, want: &Value, live: &Value, out: &mut Vec<String>) {
    match (want, live) {
        (Value::Null, _) => {}
        (Value::Object(w), Value::Object(l)) => {
            for (k, v) in w {
                let below = format!("{path}.{k}");
                match l.get(k) {
                    Some(lv) => differences(&below, v, lv, out),
                    None if v.is_null() => {}
                    None => out.push(format!("{below}: missing, want {v}")),
                }
            }
        }
        (Value::Array(w), Value::Array(l)) if w.len() == l.len() => {
            for (i, (wv, lv)) in w.iter().zip(l).enumerate() {
                differences(&format!("{path}[{i}]"), wv, lv, out);
            }
        }
        (w, l) if w == l => {}
        (w, l) => out.push(format!("{path}: want {w}, have {l}")),
    }
}

/// Every rendered object exists, carries the render's fields and the release's ownership.
fn assert_deployed_as_rendered(objects: &BTreeMap<Key, (Value, Option<DynamicObject>)>) {
    for (key, (want, found)) in objects {
        let found = found
            .as_ref()
            .unwrap_or_else(|| panic!("{key:?} was not deployed"));
        let have = serde_json::to_value(found).expect("object as JSON");
        let mut diffs = Vec::new();
        differences("", want, &have, &mut diffs);
        assert!(
            diffs.is_empty(),
            "{key:?} differs from the render: {diffs:#?}"
        );
        let metadata = &have["metadata"];
        let owned = (
            &metadata["labels"]["app.kubernetes.io/managed-by"],
            &metadata["labels"]["helm.deployer.landscaper.gardener.cloud/deployitem"],
            &metadata["annotations"]["meta.helm.sh/release-name"],
        );
        assert_eq!(
            owned,
            (&json!("Helm"), &json!("web"), &json!(RELEASE)),
            "{key:?}: {metadata:#}"
        );
    }
}

fn resource_versions(
    objects: &BTreeMap<Key, (Value, Option<DynamicObject>)>,
) -> BTreeMap<Key, String> {
    objects
        .iter()
        .map(|(k, (_, found))| {
            let rv = found
                .as_ref()
                .and_then(|o| o.metadata.resource_version.clone())
                .unwrap_or_default();
            (k.clone(), rv)
        })
        .collect()
}

/// The Helm release records of `web`: (revision, status) in revision order.
async fn release_records(client: &kube::Client) -> Vec<(String, String)> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), RELEASE_NAMESPACE);
    let mut records: Vec<(String, String)> = secrets
        .list(&ListParams::default().labels(&format!("owner=helm,name={RELEASE}")))
        .await
        .expect("release Secrets listed")
        .items
        .into_iter()
        .map(|s| {
            assert_eq!(s.type_.as_deref(), Some("helm.sh/release.v1"));
            let labels = s.metadata.labels.unwrap_or_default();
            (labels["version"].clone(), labels["status"].clone())
        })
        .collect();
    records.sort();
    records
}

/// Writes to the release's namespace (its objects and records) or to the namespace itself.
fn touches_the_release(record: &RequestRecord) -> bool {
    record.namespace == RELEASE_NAMESPACE
        || (record.resource == "namespaces" && record.name == RELEASE_NAMESPACE)
}

#[tokio::test]
async fn helm_item_is_installed_upgraded_and_deleted_as_the_deployer_identity() {
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let agent = world.production_agent(ENVIRONMENT).await;
    let (host_user, landscaper_user) = (agent.host_user.clone(), agent.landscaper_user.clone());
    let (stop, running) = spawn_helm_deployer(agent.agent, 4);
    let landscaper = world.landscaper_cluster().client();
    let targets: Api<Target> = Api::namespaced(landscaper.clone(), LS_NAMESPACE);
    eventually("the landscaper created Target east", || async {
        targets.get_opt(ENVIRONMENT).await.unwrap().is_some()
    })
    .await;

    // Bystanders: an item for another environment's Target, and an item of another type for
    // our Target. Both ask for a reconcile; neither is ours.
    let other: Target = serde_json::from_value(json!({
        "metadata": {
            "name": "west",
            "namespace": LS_NAMESPACE,
            "annotations": { annotations::ENVIRONMENT: "west" },
        },
        "spec": {
            "type": "landscaper.gardener.cloud/kubernetes-cluster",
            "secretRef": { "name": "west-target-access", "namespace": "ls-system", "key": "kubeconfig" },
        },
    }))
    .unwrap();
    targets
        .create(&PostParams::default(), &other)
        .await
        .unwrap();
    let archive = package(&nginx_chart_dir());
    let raw = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &archive);
    let items = items(&world);
    let foreign = helm_item("for-west", "west", &raw, install_values());
    let mut other_type = helm_item("manifest-for-east", ENVIRONMENT, &raw, install_values());
    other_type.spec.type_ = "landscaper.gardener.cloud/kubernetes-manifest".into();
    let mut bystanders = Vec::new();
    for item in [foreign, other_type] {
        bystanders.push(items.create(&PostParams::default(), &item).await.unwrap());
    }

    // Install.
    items
        .create(
            &PostParams::default(),
            &helm_item("web", ENVIRONMENT, &raw, install_values()),
        )
        .await
        .unwrap();
    let item = finished(&world, "web", None).await;
    assert_succeeded(&item);
    let fenced = world.fenced_cluster().client();
    let version = fenced.apiserver_version().await.unwrap();
    let kube = KubeVersion::parse(&version.git_version).expect("the testbed's version parses");
    let first = rendered(&archive, &install_values(), 1, &kube);
    assert!(first.len() >= 5, "the chart renders its objects: {first:?}");
    let installed = live(&fenced, &first).await;
    assert_deployed_as_rendered(&installed);
    let managed = item.status.clone().unwrap().provider_status.unwrap()["managedResources"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(
        managed,
        first.len(),
        "the item manages exactly the rendered objects"
    );
    assert_eq!(
        release_records(&fenced).await,
        vec![("1".to_owned(), "deployed".to_owned())]
    );

    // Upgrade: only the objects whose render changed are written.
    let before = resource_versions(&installed);
    items
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": { "annotations": { annotations::OPERATION: "reconcile" } },
                "spec": { "config": { "values": upgrade_values() } },
            })),
        )
        .await
        .unwrap();
    let item = finished(&world, "web", item.status.unwrap().job_id_finished).await;
    assert_succeeded(&item);
    let second = rendered(&archive, &upgrade_values(), 2, &kube);
    let upgraded = live(&fenced, &second).await;
    assert_deployed_as_rendered(&upgraded);
    let after = resource_versions(&upgraded);
    let was: BTreeMap<Key, Value> = installed
        .iter()
        .map(|(k, (v, _))| (k.clone(), v.clone()))
        .collect();
    let mut changed = Vec::new();
    for (key, (want, _)) in &upgraded {
        let render_changed = was.get(key) != Some(want);
        let written = before.get(key) != after.get(key);
        assert_eq!(
            written, render_changed,
            "{key:?}: written {written}, render changed {render_changed}"
        );
        if written {
            changed.push(key.1.clone());
        }
    }
    changed.sort();
    assert_eq!(changed, vec!["Deployment".to_owned(), "Service".to_owned()]);
    assert_eq!(
        release_records(&fenced).await,
        vec![
            ("1".to_owned(), "superseded".to_owned()),
            ("2".to_owned(), "deployed".to_owned())
        ]
    );

    // Delete: the objects and the release records go.
    items.delete("web", &DeleteParams::default()).await.unwrap();
    eventually_within("DeployItem web is gone", JOB_LIMIT, || async {
        items.get_opt("web").await.unwrap().is_none()
    })
    .await;
    for (key, (_, found)) in live(&fenced, &second).await {
        assert!(found.is_none(), "{key:?} remains after the delete");
    }
    assert!(release_records(&fenced).await.is_empty());

    // Every write to the release's objects and records was made as deployer-east.
    let fenced_log = world.fenced_cluster().requests();
    let release_writes: Vec<&RequestRecord> = fenced_log
        .iter()
        .filter(|r| r.is_write() && touches_the_release(r))
        .collect();
    let others: Vec<_> = release_writes
        .iter()
        .filter(|r| r.user != deployer_user())
        .collect();
    assert!(others.is_empty(), "writes by another identity: {others:#?}");
    for key in installed.keys() {
        assert!(
            release_writes
                .iter()
                .any(|r| r.verb == "patch" && r.name == key.3 && r.succeeded()),
            "no write of {key:?} by the deployer"
        );
    }
    for revision in ["v1", "v2"] {
        let name = format!("sh.helm.release.v1.{RELEASE}.{revision}");
        assert!(
            release_writes
                .iter()
                .any(|r| r.resource == "secrets" && r.verb == "create" && r.name == name),
            "release record {name} was not created by the deployer"
        );
    }
    // The agent's own identity wrote nothing but its registration.
    let agent_writes: Vec<_> = fenced_log
        .iter()
        .filter(|r| r.is_write() && r.user == host_user)
        .filter(|r| r.namespace != "ls-system" && !r.namespace.is_empty())
        .collect();
    assert!(agent_writes.is_empty(), "{agent_writes:#?}");

    // The RBAC of the chart and of the documentation was enough: nothing was forbidden.
    let landscaper_log = world.landscaper_cluster().requests();
    let forbidden: Vec<_> = fenced_log
        .iter()
        .filter(|r| r.user == host_user || r.user == deployer_user())
        .chain(landscaper_log.iter().filter(|r| r.user == landscaper_user))
        .filter(|r| r.code == 403)
        .collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");

    // The bystanders were never written to, not even their status.
    for bystander in &bystanders {
        let name = bystander.metadata.name.clone().unwrap();
        let writes: Vec<_> = landscaper_log
            .iter()
            .filter(|r| r.is_write() && r.verb != "create")
            .filter(|r| r.resource == "deployitems" && r.name == name)
            .collect();
        assert!(writes.is_empty(), "{name} was written: {writes:#?}");
        let now = items.get(&name).await.unwrap();
        assert_eq!(
            now.metadata.resource_version,
            bystander.metadata.resource_version
        );
        assert!(now.status.is_none(), "{name} has a status");
    }

    stop.send(()).unwrap();
    running.await.unwrap();
}

/// A chart with one ConfigMap, a pre-delete Job hook and a post-delete ConfigMap hook.
fn delete_hooked_archive() -> Vec<u8> {
    testbed::fixtures::chart_repository::package(&[
        (
            "hooked/Chart.yaml",
            "apiVersion: v2\nname: hooked\nversion: 0.1.0\n",
        ),
        (
            "hooked/templates/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  revision: {{ .Release.Revision | quote }}\n",
        ),
        (
            "hooked/templates/hooks.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pre-delete\n  annotations:\n    helm.sh/hook: pre-delete\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: run\n          image: busybox\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: post-delete\n  annotations:\n    helm.sh/hook: post-delete\ndata:\n  ran: \"yes\"\n",
        ),
    ])
}

/// Where the first successful write `verb` of `resource` `name` by the deployer is in `log`.
fn write_position(log: &[RequestRecord], verb: &str, resource: &str, name: &str) -> usize {
    log.iter()
        .position(|r| {
            r.verb == verb
                && r.resource == resource
                && r.name == name
                && r.user == deployer_user()
                && r.succeeded()
        })
        .unwrap_or_else(|| panic!("no {verb} of {resource} {name} by the deployer"))
}

#[tokio::test]
async fn deleting_a_helm_item_runs_its_delete_hooks_as_the_deployer_identity() {
    let world = World::start().await;
    world.fenced_cluster().set_simulate_workloads(true);
    let agent = world.production_agent(ENVIRONMENT).await;
    let host_user = agent.host_user.clone();
    let (stop, running) = spawn_helm_deployer(agent.agent, 2);
    let targets: Api<Target> = Api::namespaced(world.landscaper_cluster().client(), LS_NAMESPACE);
    eventually("the landscaper created Target east", || async {
        targets.get_opt(ENVIRONMENT).await.unwrap().is_some()
    })
    .await;

    let raw = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        delete_hooked_archive(),
    );
    let items = items(&world);
    items
        .create(
            &PostParams::default(),
            &helm_item("web", ENVIRONMENT, &raw, json!({})),
        )
        .await
        .unwrap();
    assert_succeeded(&finished(&world, "web", None).await);
    let fenced = world.fenced_cluster().client();
    let configmaps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(fenced.clone(), RELEASE_NAMESPACE);
    let jobs: Api<k8s_openapi::api::batch::v1::Job> =
        Api::namespaced(fenced.clone(), RELEASE_NAMESPACE);
    assert!(configmaps.get_opt("web-config").await.unwrap().is_some());
    assert!(jobs.get_opt("pre-delete").await.unwrap().is_none());
    assert!(configmaps.get_opt("post-delete").await.unwrap().is_none());

    items.delete("web", &DeleteParams::default()).await.unwrap();
    eventually_within("DeployItem web is gone", JOB_LIMIT, || async {
        items.get_opt("web").await.unwrap().is_none()
    })
    .await;
    assert!(configmaps.get_opt("web-config").await.unwrap().is_none());
    assert!(release_records(&fenced).await.is_empty());
    // The hooks ran around the deletion of the release's objects, the Job to completion.
    let job = jobs
        .get("pre-delete")
        .await
        .expect("the pre-delete Job ran");
    let conditions = job.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(
        conditions.iter().any(|c| c.type_ == "Complete"),
        "{conditions:?}"
    );
    assert!(configmaps.get_opt("post-delete").await.unwrap().is_some());
    let log = world.fenced_cluster().requests();
    let pre = write_position(&log, "create", "jobs", "pre-delete");
    let deleted = write_position(&log, "delete", "configmaps", "web-config");
    let post = write_position(&log, "create", "configmaps", "post-delete");
    assert!(
        pre < deleted && deleted < post,
        "order {pre} {deleted} {post}"
    );

    // Every write to the release was made as deployer-east, none as the agent itself.
    let others: Vec<_> = log
        .iter()
        .filter(|r| r.is_write() && touches_the_release(r) && r.user != deployer_user())
        .collect();
    assert!(others.is_empty(), "writes by another identity: {others:#?}");
    assert!(
        log.iter()
            .all(|r| !(r.is_write() && r.user == host_user && touches_the_release(r)))
    );

    stop.send(()).unwrap();
    running.await.unwrap();
}
