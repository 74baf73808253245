//! The state loader puts upstream's controller test state into a cluster as upstream's envtest
//! and fake-client loaders do.

use landscaper_api::core::data_object_name;
use landscaper_e2e::states::{Loader, cluster_with_crds, load, loaded};

#[tokio::test]
async fn envtest_state_lands_in_a_fresh_namespace_with_its_status() {
    let (_bed, client, state) =
        loaded("controllers/execution/testdata/test2", Loader::EnvTest).await;
    assert!(state.namespace.starts_with("tests-"), "{}", state.namespace);
    let ns = &state.namespace;
    let execution = state.get("Execution", &format!("{ns}/exec-2"));
    assert_eq!(execution["status"]["jobID"], "job1");
    assert_eq!(execution["status"]["jobIDFinished"], "job1");
    let item = state.get("DeployItem", &format!("{ns}/di-a"));
    assert_eq!(
        item["metadata"]["labels"]["execution.landscaper.gardener.cloud/managed-by"],
        "exec-2"
    );
    let again = load(
        &client,
        "controllers/execution/testdata/test2",
        Loader::EnvTest,
    )
    .await;
    assert_ne!(
        again.namespace, state.namespace,
        "each load gets its own namespace"
    );
}

#[tokio::test]
async fn owners_get_real_uids_and_deleted_objects_keep_a_deletion_timestamp() {
    let (_bed, _, state) = loaded(
        "controllers/installations/testdata/state/test8",
        Loader::EnvTest,
    )
    .await;
    let ns = &state.namespace;
    let root = state.get("Installation", &format!("{ns}/root"));
    let a = state.get("Installation", &format!("{ns}/a"));
    assert_eq!(
        a["metadata"]["ownerReferences"][0]["uid"],
        root["metadata"]["uid"]
    );
    for name in ["root", "a", "b"] {
        let installation = state.get("Installation", &format!("{ns}/{name}"));
        assert!(
            installation["metadata"]["deletionTimestamp"].is_string(),
            "{name} is being deleted: {installation}"
        );
    }
}

#[tokio::test]
async fn fake_client_state_reads_every_folder_with_named_namespaces() {
    let (_bed, _, state) = loaded("installations/exports/testdata/state", Loader::FakeClient).await;
    assert_eq!(state.namespace, "");
    let name = data_object_name("Inst.root", "a.z");
    let data_object = state.get("DataObject", &format!("test1/{name}"));
    assert_eq!(data_object["metadata"]["name"], name.as_str());
    state.get("Installation", "test2/root");
    state.get("Execution", "test2/root");
}

/// Every state folder a Go test reads loads without error: envtest folders one at a time, into
/// one cluster per parent folder (some name fixed namespaces such as `test1`), and fake-client
/// trees whole, each into a cluster of its own. The healthcheck and targetsync folders hold kinds this project does not serve.
#[tokio::test]
async fn every_state_folder_loads() {
    let root = landscaper_e2e::states::states_dir();
    let mut loaded = 0;
    for parent in [
        "controllers/installations/testdata/state",
        "controllers/execution/testdata",
        "installations/testdata/state",
        "installations/subinstallations/testdata/state",
    ] {
        let mut folders: Vec<_> = std::fs::read_dir(root.join(parent))
            .expect("state folder")
            .map(|entry| entry.expect("entry").path())
            .filter(|path| path.is_dir())
            .collect();
        folders.sort();
        let bed = cluster_with_crds().await;
        let client = bed.cluster().client();
        for folder in folders {
            load(&client, &folder, Loader::EnvTest).await;
            loaded += 1;
        }
    }
    let bed = cluster_with_crds().await;
    load(
        &bed.cluster().client(),
        "controllers/deployitem/testdata",
        Loader::EnvTest,
    )
    .await;
    for tree in [
        "installations/imports/testdata/state",
        "installations/exports/testdata/state",
        "installations/executions/testdata/state",
        "execution/testdata/state",
    ] {
        let own = cluster_with_crds().await;
        let state = load(&own.cluster().client(), tree, Loader::FakeClient).await;
        for (object, message) in &state.refused {
            assert!(
                object.starts_with("Target ") && message.contains("spec.type: Required value"),
                "only Targets without a type are refused, not {object}: {message}"
            );
        }
        loaded += 1;
    }
    assert!(loaded > 25, "only {loaded} folders found");
}
