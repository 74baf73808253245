//! The Context controller on the testbed: a Context `default` appears in every namespace but
//! the excluded ones, carries the configured repository context, is put back when deleted, and
//! is not rewritten while it matches the configuration.

use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use landscaper::controllers::context::{ContextController, DEFAULT_CONTEXT};
use landscaper::settings::DefaultContext;
use landscaper_api::core::Context;
use landscaper_e2e::eventually;
use serde_json::json;
use std::sync::Arc;
use testbed::Testbed;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_contexts_follow_the_configuration() {
    // A cluster of its own without the landscaper: this test's controller, configured with a
    // repository context, is the only writer of Contexts.
    let bed = Testbed::builder()
        .named(&["landscaper"])
        .start()
        .await
        .expect("testbed starts");
    let client = bed.cluster_named("landscaper").expect("cluster").client();
    landscaper::crds::ensure(&client)
        .await
        .expect("CRDs are installed");
    let contexts: Api<Context> = Api::all(client.clone());
    eventually("the Context CRD is served", || async {
        contexts.list(&Default::default()).await.is_ok()
    })
    .await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let create_namespace = |name: &'static str| {
        let namespaces = namespaces.clone();
        async move {
            let namespace: Namespace =
                serde_json::from_value(json!({ "metadata": { "name": name } })).unwrap();
            namespaces
                .create(&PostParams::default(), &namespace)
                .await
                .expect("namespace is created");
        }
    };
    create_namespace("team-a").await;
    create_namespace("skipped").await;
    let repository = json!({ "type": "OCIRegistry", "baseUrl": "registry.example/components" });
    let config = DefaultContext::from_config(Some(&json!({ "default": {
        "excludedNamespaces": ["skipped"],
        "repositoryContext": repository,
    }})));
    assert_eq!(config.excluded_namespaces, vec!["skipped".to_owned()]);
    let controller = Arc::new(ContextController::new(client.clone(), config));
    tokio::spawn(landscaper::controllers::context::run(
        controller,
        landscaper::health::Health::new(),
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
    create_namespace("team-b").await;
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
