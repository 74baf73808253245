//! The installation flow end to end on the testbed, with every landscaper controller and the
//! mock deployer running: a root installation whose inline blueprint has a producer and a
//! consumer subinstallation; the data flows root import → producer → consumer → root export;
//! a changed import fails the job in `Completing`; bad input (a missing blueprint file, an
//! import that fails its schema, a template error) ends the job Failed with a message naming
//! the installation and the problem, and nothing retries it.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use landscaper_api::core::{DataObject, DeployItem, Installation, data_object_name};
use landscaper_e2e::blueprints::{blueprint_filesystem, mock_item_template};
use landscaper_e2e::installations::{
    create_root, failed, finished_after, request_reconcile, succeeded,
};
use landscaper_e2e::objects::{create, list};
use landscaper_e2e::{World, eventually, flow};
use serde_json::{Value, json};

async fn data_object(client: &Client, namespace: &str, name: &str, data: Value) {
    let api: Api<DataObject> = Api::namespaced(client.clone(), namespace);
    create(&api, json!({"metadata": {"name": name}, "data": data})).await;
}

fn subinstallation<'a>(list: &'a [Installation], template: &str) -> &'a Installation {
    list.iter()
        .find(|i| {
            i.annotations()
                .get(landscaper::controllers::installation::SUBINSTALLATION_NAME)
                .is_some_and(|t| t == template)
        })
        .unwrap_or_else(|| panic!("subinstallation {template}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_flows_from_the_root_import_through_producer_and_consumer_to_the_root_export() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "flow").await;
    data_object(&client, "flow", "greeting-in", json!("hello")).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), "flow");
    create(
        &installations,
        flow::root_installation("root", "greeting-in", "flow-result"),
    )
    .await;
    succeeded(&installations, "root").await;

    let objects: Api<DataObject> = Api::namespaced(client.clone(), "flow");
    let result = objects.get(&data_object_name("", "flow-result")).await;
    assert_eq!(
        result.expect("the root's export DataObject").data,
        json!("hello, produced, consumed")
    );
    let produced = objects
        .get(&data_object_name("Inst.root", "produced"))
        .await
        .expect("the producer's export, in the root's context");
    assert_eq!(produced.data, json!("hello, produced"));

    // The consumer imports the producer's export: its item was made after the producer ended.
    let list = installations.list(&Default::default()).await.unwrap().items;
    let producer = subinstallation(&list, "producer");
    let consumer = subinstallation(&list, "consumer");
    let producer_done = producer
        .status
        .as_ref()
        .and_then(|s| s.phase_transition_time.clone())
        .expect("the producer's last transition")
        .0;
    let items: Api<DeployItem> = Api::namespaced(client, "flow");
    let consumer_item = items
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|item| item.name_any().starts_with(&consumer.name_any()))
        .expect("the consumer's deploy item");
    assert!(
        consumer_item.creation_timestamp().unwrap().0 >= producer_done,
        "the consumer's item was created after the producer finished"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_changed_during_the_job_fails_it_in_completing() {
    let world = World::start().await;
    // No deployer serves this item type: the test finishes the item itself, after the change.
    let client = world.landscaper_namespace("changed").await;
    data_object(&client, "changed", "setting", json!("one")).await;
    let blueprint = json!({"blueprint.yaml": r#"apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
- name: setting
  schema: {type: string}
deployExecutions:
- name: main
  type: GoTemplate
  template: |
    deployItems:
    - name: item
      type: example.com/by-hand
      config: {setting: {{ .imports.setting | quote }}}
"#});
    let installations: Api<Installation> = Api::namespaced(client.clone(), "changed");
    create_root(
        &installations,
        "root",
        json!({
            "blueprint": {"inline": {"filesystem": blueprint}},
            "imports": {"data": [{"name": "setting", "dataRef": "setting"}]},
        }),
    )
    .await;
    let items: Api<DeployItem> = Api::namespaced(client.clone(), "changed");
    let item_job = || async {
        let list = items.list(&Default::default()).await.ok()?.items;
        let item = list.into_iter().next()?;
        let job = item.status.as_ref()?.job_id.clone()?;
        Some((item.name_any(), job))
    };
    eventually("the item gets the job", || async {
        item_job().await.is_some()
    })
    .await;
    let (item, job) = item_job().await.unwrap();

    let objects: Api<DataObject> = Api::namespaced(client.clone(), "changed");
    objects
        .patch(
            "setting",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": "two"})),
        )
        .await
        .unwrap();
    items
        .patch_status(
            &item,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Succeeded", "jobIDFinished": job}})),
        )
        .await
        .unwrap();
    let message = failed(&installations, "root").await;
    assert!(
        message.contains("Installation changed/root") && message.contains("imports changed"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_fails_the_job_with_a_message_naming_the_installation_and_is_not_retried() {
    let world = World::start().await;
    let client = world.landscaper_namespace("bad").await;
    data_object(&client, "bad", "number", json!(42)).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), "bad");
    let header = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n";
    let cases = [
        (
            "no-blueprint",
            json!({"blueprint": {"inline": {"filesystem": {"other.yaml": "a: b"}}}}),
            "blueprint.yaml",
        ),
        (
            "missing-import",
            json!({
                "blueprint": {"inline": {"filesystem": {"blueprint.yaml": header}}},
                "imports": {"data": [{"name": "x", "dataRef": "absent"}]},
            }),
            "DataObject bad/absent",
        ),
        (
            "wrong-type",
            json!({
                "blueprint": {"inline": {"filesystem": {"blueprint.yaml": format!("{header}imports:\n- name: x\n  schema: {{type: string}}\n")}}},
                "imports": {"data": [{"name": "x", "dataRef": "number"}]},
            }),
            "(x) at /: 42 is not of type",
        ),
        (
            "template-error",
            json!({
                "blueprint": {"inline": {"filesystem": {"blueprint.yaml": format!("{header}deployExecutions:\n- name: broken\n  type: GoTemplate\n  template: |\n    deployItems: {{{{ .imports.nothing.deeper | fail }}}}\n")}}},
            }),
            "broken",
        ),
    ];
    for (name, spec, _) in &cases {
        create_root(&installations, name, spec.clone()).await;
    }
    for (name, _, detail) in cases {
        let message = failed(&installations, name).await;
        assert!(
            message.contains(&format!("Installation bad/{name}")) && message.contains(detail),
            "{name}: {message}"
        );
    }
    // Failed jobs stay failed: no status write for a while (no hot retry).
    let resource_versions = || async {
        list(&installations)
            .await
            .iter()
            .map(|i| i.resource_version().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    let before = resource_versions().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        before,
        resource_versions().await,
        "a failed installation is written again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execution_state_is_kept_in_a_secret_between_jobs() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "stateful").await;
    // Each job counts up the state its previous job left.
    let template = format!(
        "{{{{- $count := add (default 0 .state.count) 1 }}}}\n{}state:\n  count: {{{{ $count }}}}\n",
        mock_item_template("Succeeded", "    providerStatus: {run: {{ $count }}}\n")
    );
    let blueprint = blueprint_filesystem(json!({
        "deployExecutions": [{"name": "main", "type": "GoTemplate", "template": template}],
    }));
    let installations: Api<Installation> = Api::namespaced(client.clone(), "stateful");
    create_root(
        &installations,
        "counter",
        json!({"blueprint": {"inline": {"filesystem": blueprint}}}),
    )
    .await;
    let first = succeeded(&installations, "counter").await;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), "stateful");
    let name = landscaper_blueprint::state::secret_name("counter", "deploymain");
    let stored = |secret: k8s_openapi::api::core::v1::Secret| {
        let bytes = secret.data.unwrap().remove("config").unwrap().0;
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    let secret = secrets.get(&name).await.expect("the state Secret");
    assert_eq!(
        secret.owner_references()[0].name,
        "counter",
        "the state goes with its installation"
    );
    assert_eq!(stored(secret), json!({"count": 1}));

    let first_job = first.status.unwrap().job_id;
    request_reconcile(&installations, "counter").await;
    finished_after(&installations, "counter", first_job.as_deref()).await;
    assert_eq!(
        stored(secrets.get(&name).await.unwrap()),
        json!({"count": 2})
    );
    let items: Api<DeployItem> = Api::namespaced(client, "stateful");
    let item = items
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .remove(0);
    let config = item.spec.config.expect("the item's configuration");
    assert_eq!(config["providerStatus"], json!({"run": 2}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_from_a_secret_that_fails_its_schema_is_reported_without_its_value() {
    let world = World::start().await;
    let client = world.landscaper_namespace("secrets").await;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(client.clone(), "secrets");
    create(
        &secrets,
        json!({"metadata": {"name": "credentials"}, "stringData": {"token": "s3cr3t-t0ken-value"}}),
    )
    .await;
    let installations: Api<Installation> = Api::namespaced(client, "secrets");
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n- name: token\n  schema: {type: object}\n";
    create_root(
        &installations,
        "leaky",
        json!({
            "blueprint": {"inline": {"filesystem": {"blueprint.yaml": blueprint}}},
            "imports": {"data": [{"name": "token", "secretRef": {"name": "credentials", "key": "token"}}]},
        }),
    )
    .await;
    let message = failed(&installations, "leaky").await;
    assert!(
        message.contains("(token)") && message.contains("not shown"),
        "{message}"
    );
    let installation = installations.get("leaky").await.unwrap();
    let status = serde_json::to_string(&installation.status).unwrap();
    assert!(
        !status.contains("s3cr3t"),
        "the Secret's value leaked: {status}"
    );
}

/// An installation's templates reach its component and the components it references:
/// `getComponent`, `getResourceKey` and `getResourceContent` look in the repository its
/// component came from (here a `type: local` folder: `root` references `leaf`, whose resource
/// `config` is a local blob).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_reach_the_installations_component_and_its_references() {
    let world = World::start().await;
    let client = flow::namespace_with_mock_deployer(&world, "components").await;
    let repository = world.dir.path().join("components");
    std::fs::create_dir_all(repository.join("blobs")).unwrap();
    std::fs::write(
        repository.join("root.yaml"),
        "meta: {schemaVersion: v2}\ncomponent: {name: example.test/root, version: 1.0.0, provider: internal, repositoryContexts: [], sources: [], resources: [], componentReferences: [{name: leaf, componentName: example.test/leaf, version: 1.0.0}]}\n",
    )
    .unwrap();
    std::fs::write(
        repository.join("leaf.yaml"),
        "meta: {schemaVersion: v2}\ncomponent: {name: example.test/leaf, version: 1.0.0, provider: internal, repositoryContexts: [], sources: [], componentReferences: [], resources: [{name: config, version: 1.0.0, type: blob, relation: local, access: {type: localFilesystemBlob, filename: config.yaml, mediaType: application/yaml}}]}\n",
    )
    .unwrap();
    std::fs::write(repository.join("blobs/config.yaml"), "replicas: 3\n").unwrap();
    let found = mock_item_template(
        "Succeeded",
        r#"    export:
      found: {{ printf "%s %d %s %s" $leaf.component.name (len .components) (getResourceKey "cd://componentReferences/leaf/resources/config") (getResourceContent "cd://componentReferences/leaf/resources/config") | quote }}
"#,
    );
    let blueprint = blueprint_filesystem(json!({
        "deployExecutions": [{
            "name": "main",
            "type": "GoTemplate",
            "template": format!("{{{{- $leaf := getComponent .cd \"name\" \"leaf\" }}}}\n{found}"),
        }],
        "exportExecutions": [{
            "name": "out",
            "type": "GoTemplate",
            "template": "exports:\n  found: {{ .values.deployitems.item.found | quote }}\n",
        }],
        "exports": [{"name": "found", "schema": {"type": "string"}}],
    }));
    let installations: Api<Installation> = Api::namespaced(client.clone(), "components");
    create_root(
        &installations,
        "with-component",
        json!({
            "componentDescriptor": {"ref": {
                "repositoryContext": {"type": "local", "filePath": repository},
                "componentName": "example.test/root",
                "version": "1.0.0",
            }},
            "blueprint": {"inline": {"filesystem": blueprint}},
            "exports": {"data": [{"name": "found", "dataRef": "found"}]},
        }),
    )
    .await;
    succeeded(&installations, "with-component").await;
    let found = Api::<DataObject>::namespaced(client, "components")
        .get(&data_object_name("", "found"))
        .await
        .expect("the export's DataObject")
        .data;
    // The key is upstream's: base64 of the leaf's component and resource identity.
    assert_eq!(
        found,
        json!(
            "example.test/leaf 2 Y29tcG9uZW50OgogIG5hbWU6IGV4YW1wbGUudGVzdC9sZWFmCiAgdmVyc2lvbjogMS4wLjAKcmVzb3VyY2U6CiAgbmFtZTogY29uZmlnCg== replicas: 3\n"
        )
    );
}
