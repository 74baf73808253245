//! Discovery through `kube::Discovery`, and several clusters in one process.

use kube::discovery::{Discovery, Scope};
use testbed::Testbed;

#[tokio::test]
async fn kube_discovery_finds_builtin_kinds() {
    let bed = Testbed::start().await.unwrap();
    let discovery = Discovery::new(bed.cluster().client()).run().await.unwrap();
    let find = |group: &str, kind: &str| {
        discovery
            .groups()
            .flat_map(|g| g.recommended_resources())
            .find(|(ar, _)| ar.group == group && ar.kind == kind)
    };
    let (deploy, caps) = find("apps", "Deployment").expect("deployments are discovered");
    assert_eq!(deploy.plural, "deployments");
    assert_eq!(caps.scope, Scope::Namespaced);
    let (_, ns_caps) = find("", "Namespace").expect("namespaces are discovered");
    assert_eq!(ns_caps.scope, Scope::Cluster);
    assert!(find("apiextensions.k8s.io", "CustomResourceDefinition").is_some());
}

#[tokio::test]
async fn clusters_are_independent() {
    let bed = Testbed::builder()
        .named(&["landscaper", "fenced"])
        .start()
        .await
        .unwrap();
    let a = bed.cluster_named("landscaper").unwrap();
    let b = bed.cluster_named("fenced").unwrap();
    assert_ne!(a.url(), b.url());
    let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(a.client(), "default");
    cms.create(
        &Default::default(),
        &serde_json::from_value(serde_json::json!({"metadata": {"name": "only-in-a"}})).unwrap(),
    )
    .await
    .unwrap();
    let other: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(b.client(), "default");
    assert!(other.get_opt("only-in-a").await.unwrap().is_none());
    assert!(a.kubeconfig_path().exists() && b.kubeconfig_path().exists());
}
