//! `installations/executions/testdata/state/test2` (fake-client loader; the files name their
//! namespace `test2`), as upstream's `executions/executions_test.go` uses it: the template
//! cases `executions/test2-*` run through our Installation controller, which resolves the
//! deploy items' target references from the imported Targets in the cluster. Upstream calls
//! `RenderDeployItemTemplates`; ours renders them in the root's `Init` and writes them to the
//! Execution, or fails the job with the same message. Upstream's `root-target-import` items
//! have no `config`, which its own Execution CRD requires: a real API server refuses that
//! Execution (upstream's test used a fake client), so the test reads the registry from a copy
//! in which those items have `config: {}`.

use std::path::Path;

use kube::api::Api;
use landscaper_api::constants::annotations;
use landscaper_api::core::{Execution, Installation, InstallationPhase, ObjectReference};
use landscaper_e2e::eventually;
use landscaper_e2e::states::{Loader, cluster_with_crds, load};
use serde_json::json;

use crate::support::{installation_controller, local_repository, patch, registry};

const STATE: &str = "installations/executions/testdata/state/test2";
const REGISTRY: &str = "installations/executions/testdata/registry/root";
const NAMESPACE: &str = "test2";

/// The installations of the folder, each with the message its job must fail with (`None`:
/// it succeeds in rendering).
const CASES: &[(&str, Option<&str>)] = &[
    ("root", None),
    (
        "import-index-wrong",
        Some("invalid deployitem specification \"myDi\": index 5 out of bounds"),
    ),
    (
        "import-not-exist",
        Some("invalid deployitem specification \"myDi\": target import \"foo\" not found"),
    ),
    (
        "import-wrong-type-1",
        Some(
            "invalid deployitem specification \"myDi\": targetlist import \"targetImp\" not found",
        ),
    ),
    (
        "import-wrong-type-2",
        Some(
            "invalid deployitem specification \"myDi\": target import \"targetListImp\" not found",
        ),
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test2_deploy_item_targets_are_resolved_from_the_imported_targets() {
    let bed = cluster_with_crds().await;
    let client = bed.cluster().client();
    load(&client, STATE, Loader::FakeClient).await;
    let installations: Api<Installation> = Api::namespaced(client.clone(), NAMESPACE);
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&registry(REGISTRY), copy.path());
    let blueprint = copy.path().join("blobs/root-target-import/blueprint.yaml");
    let text = std::fs::read_to_string(&blueprint).unwrap();
    let item_type = "      type: landscaper.gardener.cloud/mock\n";
    assert_eq!(text.matches(item_type).count(), 3, "{text}");
    std::fs::write(
        &blueprint,
        text.replace(item_type, &format!("{item_type}      config: {{}}\n")),
    )
    .unwrap();
    for (name, _) in CASES {
        // The registry root upstream's test gives as `LocalRegistryConfiguration.RootPath`.
        patch(
            &installations,
            name,
            json!({
                "metadata": {"annotations": {annotations::OPERATION: "reconcile"}},
                "spec": {"componentDescriptor": {"ref": {
                    "repositoryContext": local_repository(copy.path()),
                }}},
            }),
        )
        .await;
    }
    let _controller = installation_controller(&client);
    let executions: Api<Execution> = Api::namespaced(client.clone(), NAMESPACE);
    for (name, expected_error) in CASES {
        match expected_error {
            None => {
                eventually(&format!("{name} writes its Execution or fails"), || async {
                    let failed = installations
                        .get(name)
                        .await
                        .ok()
                        .and_then(|i| i.status)
                        .is_some_and(|s| s.last_error.is_some());
                    failed || executions.get_opt(name).await.ok().flatten().is_some()
                })
                .await;
                let status = installations.get(name).await.unwrap().status;
                assert!(
                    status.as_ref().is_none_or(|s| s.last_error.is_none()),
                    "{name}: {status:?}"
                );
                let execution = executions.get(name).await.unwrap();
                let items: Vec<(&str, Option<&ObjectReference>)> = execution
                    .spec
                    .deploy_items
                    .iter()
                    .map(|item| (item.name.as_str(), item.target.as_ref()))
                    .collect();
                let mytarget = ObjectReference {
                    name: "mytarget".into(),
                    namespace: Some(NAMESPACE.into()),
                };
                assert_eq!(
                    items,
                    [
                        ("myDi", Some(&mytarget)),
                        ("myOtherDi", Some(&mytarget)),
                        ("myLegacyDi", Some(&mytarget)),
                    ]
                );
            }
            Some(message) => {
                eventually(&format!("{name} fails in Init"), || async {
                    installations.get(name).await.ok().is_some_and(|i| {
                        i.status.as_ref().is_some_and(|s| {
                            s.phase == Some(InstallationPhase::Failed) && s.last_error.is_some()
                        })
                    })
                })
                .await;
                let status = installations.get(name).await.unwrap().status.unwrap();
                let error = status.last_error.unwrap();
                assert_eq!(error.operation, "Init", "{name}");
                assert!(error.message.contains(message), "{name}: {}", error.message);
            }
        }
    }
}

/// Copies the folder `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
