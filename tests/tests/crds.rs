//! The generated CRDs are ones a real kube-apiserver accepts: the testbed validates CRD schemas
//! as kube-apiserver does (structural schemas, the root `metadata` restriction), and every CRD
//! `landscaper crds` prints is created and established on it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use kube::api::{Api, PostParams};
use kube::{Error, ResourceExt};
use testbed::Testbed;

#[tokio::test]
async fn every_generated_crd_is_accepted_and_established() {
    let bed = Testbed::start().await.expect("testbed starts");
    let crds: Api<CustomResourceDefinition> = Api::all(bed.cluster().client());
    for crd in landscaper_api::crd::all() {
        let created = crds
            .create(&PostParams::default(), &crd)
            .await
            .unwrap_or_else(|e| panic!("{} refused: {e}", crd.name_any()));
        assert_eq!(created.name_any(), crd.name_any());
    }
    for crd in landscaper_api::crd::all() {
        let name = crd.name_any();
        let mut established = false;
        for _ in 0..100 {
            let status = crds.get(&name).await.unwrap().status.unwrap_or_default();
            established = status
                .conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(established, "{name} is not established");
    }
}

/// The mistake the generated CRDs made before: a description on `metadata`.
#[tokio::test]
async fn a_metadata_schema_with_a_description_is_refused_as_kube_apiserver_refuses_it() {
    let bed = Testbed::start().await.expect("testbed starts");
    let crds: Api<CustomResourceDefinition> = Api::all(bed.cluster().client());
    let mut crd = landscaper_api::crd::all()
        .into_iter()
        .find(|c| c.spec.names.kind == "Context")
        .expect("a Context CRD");
    let schema = crd.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|s| s.open_api_v3_schema.as_mut())
        .expect("a schema");
    schema.properties.as_mut().unwrap().insert(
        "metadata".into(),
        JSONSchemaProps {
            type_: Some("object".into()),
            description: Some("Standard object metadata.".into()),
            ..Default::default()
        },
    );
    let err = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect_err("refused");
    let Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "CustomResourceDefinition.apiextensions.k8s.io \"contexts.landscaper.gardener.cloud\" is \
         invalid: spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not \
         specify anything other than name and generateName, but metadata is implicitly specified"
    );
}

/// The DeployerRegistration's inline component descriptor is typed as upstream's: a v2
/// descriptor keeps its fields (label values of any shape among them), fields the schema does
/// not know are pruned, and one without its required `meta` is refused.
#[tokio::test]
async fn a_deployer_registrations_inline_descriptor_is_validated_and_pruned() {
    let bed = Testbed::start().await.expect("testbed starts");
    let client = bed.cluster().client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = landscaper_api::crd::all()
        .into_iter()
        .find(|c| c.spec.names.kind == "DeployerRegistration")
        .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let resource = kube::discovery::ApiResource {
        group: "landscaper.gardener.cloud".into(),
        version: "v1alpha1".into(),
        api_version: "landscaper.gardener.cloud/v1alpha1".into(),
        kind: "DeployerRegistration".into(),
        plural: "deployerregistrations".into(),
    };
    let registrations: Api<kube::api::DynamicObject> = Api::all_with(client, &resource);
    let registration = |name: &str, inline: serde_json::Value| {
        serde_json::from_value::<kube::api::DynamicObject>(serde_json::json!({
            "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployerRegistration",
            "metadata": {"name": name},
            "spec": {"types": ["example.test/t"], "installationTemplate": {
                "blueprint": {"ref": {"resourceName": "bp"}},
                "componentDescriptor": {"inline": inline}}}
        }))
        .unwrap()
    };
    let descriptor = serde_json::json!({"meta": {"schemaVersion": "v2"}, "component": {
        "name": "example.test/c", "version": "1.0.0", "provider": "internal", "unknown": "pruned",
        "labels": [{"name": "l", "value": {"any": ["shape"]}}],
        "repositoryContexts": [{"type": "ociRegistry", "baseUrl": "r.test"}],
        "sources": [], "componentReferences": [],
        "resources": [{"name": "bp", "version": "1.0.0", "type": "blueprint", "relation": "local",
            "access": {"type": "localBlob", "localReference": "sha256:00", "mediaType": "x"}}]}});
    let created = registrations
        .create(&PostParams::default(), &registration("typed", descriptor))
        .await
        .expect("a v2 descriptor is accepted");
    let inline = &created.data["spec"]["installationTemplate"]["componentDescriptor"]["inline"];
    assert_eq!(inline["component"]["labels"][0]["value"]["any"][0], "shape");
    assert_eq!(
        inline["component"]["resources"][0]["access"]["mediaType"],
        "x"
    );
    assert!(
        inline["component"].get("unknown").is_none(),
        "unknown fields are pruned: {inline}"
    );
    let refused = registrations
        .create(
            &PostParams::default(),
            &registration("no-meta", serde_json::json!({"component": {"name": "c"}})),
        )
        .await
        .expect_err("a descriptor without meta is refused");
    let Error::Api(status) = refused else {
        panic!("expected the API server's refusal, got {refused}");
    };
    assert_eq!(status.code, 422, "{}", status.message);
    assert!(status.message.contains("meta"), "{}", status.message);
}
