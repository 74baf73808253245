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

#[tokio::test]
async fn aggregated_discovery_lists_every_group_version_in_one_document() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let get = |path: &str| {
        http::Request::get(path)
            .header("accept", accept)
            .body(Vec::new())
            .unwrap()
    };
    let apis: serde_json::Value = client.request(get("/apis")).await.unwrap();
    assert_eq!(apis["kind"], "APIGroupDiscoveryList");
    assert_eq!(apis["apiVersion"], "apidiscovery.k8s.io/v2");
    let apps = apis["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "apps")
        .expect("apps is listed");
    let v1 = &apps["versions"][0];
    assert_eq!(
        (v1["version"].as_str(), v1["freshness"].as_str()),
        (Some("v1"), Some("Current"))
    );
    let deployments = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .expect("deployments are listed");
    assert_eq!(
        deployments["responseKind"],
        serde_json::json!({"group": "apps", "version": "v1", "kind": "Deployment"})
    );
    assert_eq!(deployments["scope"], "Namespaced");
    let scale = deployments["subresources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["subresource"] == "scale")
        .expect("the scale subresource");
    assert_eq!(scale["responseKind"]["kind"], "Scale");

    let core: serde_json::Value = client.request(get("/api")).await.unwrap();
    let core_v1 = &core["items"][0]["versions"][0];
    assert_eq!(core_v1["version"], "v1");
    assert!(
        core_v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["resource"] == "namespaces" && r["scope"] == "Cluster")
    );

    // Without the media type in Accept, the unaggregated documents stay.
    let plain: serde_json::Value = client
        .request(http::Request::get("/apis").body(Vec::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(plain["kind"], "APIGroupList");
}
