//! The Context controller on the testbed: a Context `default` appears in every namespace but
//! the excluded ones, carries the configured repository context, is put back when deleted, and
//! is not rewritten while it matches the configuration.

use kube::ResourceExt;
use kube::api::{Api, DeleteParams};
use landscaper::controllers::context::{ContextController, DEFAULT_CONTEXT, DefaultContext};
use landscaper_api::core::Context;
use landscaper_e2e::{World, eventually};
use serde_json::json;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_contexts_follow_the_configuration() {
    let mut world = World::start().await;
    // The world's landscaper runs with the default configuration: stopped, so this test's
    // controller, configured with a repository context, is the only writer.
    world.stop_landscaper().await;
    let cluster = world.landscaper_cluster();
    let client = cluster.client();
    world.create_namespace(cluster, "team-a").await;
    world.create_namespace(cluster, "skipped").await;
    let repository = json!({ "type": "OCIRegistry", "baseUrl": "registry.example/components" });
    let config = DefaultContext::from_config(Some(&json!({ "default": {
        "excludedNamespaces": ["skipped"],
        "repositoryContext": repository,
    }})));
    assert_eq!(config.excluded_namespaces, vec!["skipped".to_owned()]);
    let controller = Arc::new(ContextController::new(client.clone(), config));
    tokio::spawn(landscaper::controllers::context::run(
        controller,
        std::future::pending(),
    ));

    let team: Api<Context> = Api::namespaced(client.clone(), "team-a");
    eventually("team-a has the configured default Context", || async {
        team.get_opt(DEFAULT_CONTEXT)
            .await
            .unwrap()
            .is_some_and(|c| c.repository_context.as_ref() == Some(&repository))
    })
    .await;
    let skipped: Api<Context> = Api::namespaced(client.clone(), "skipped");
    assert!(skipped.get_opt(DEFAULT_CONTEXT).await.unwrap().is_none());

    let version = team.get(DEFAULT_CONTEXT).await.unwrap().resource_version();
    world.create_namespace(cluster, "team-b").await;
    let other: Api<Context> = Api::namespaced(client.clone(), "team-b");
    eventually("a new namespace gets its default Context", || async {
        other
            .get_opt(DEFAULT_CONTEXT)
            .await
            .unwrap()
            .is_some_and(|c| c.repository_context.as_ref() == Some(&repository))
    })
    .await;
    assert_eq!(
        team.get(DEFAULT_CONTEXT).await.unwrap().resource_version(),
        version,
        "a matching Context is not rewritten"
    );

    team.delete(DEFAULT_CONTEXT, &DeleteParams::default())
        .await
        .unwrap();
    eventually("a deleted default Context is put back", || async {
        team.get_opt(DEFAULT_CONTEXT)
            .await
            .unwrap()
            .is_some_and(|c| c.repository_context.as_ref() == Some(&repository))
    })
    .await;
}
