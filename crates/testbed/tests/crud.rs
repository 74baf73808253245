//! CRUD, conflicts, generation and status through `kube::Client`.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use testbed::Testbed;

fn cm(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}),
    )
    .unwrap()
}

#[tokio::test]
async fn configmap_create_get_update_delete() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");

    let created = api
        .create(&PostParams::default(), &cm("a", json!({"k": "1"})))
        .await
        .unwrap();
    let uid = created.metadata.uid.clone().unwrap();
    assert_eq!(uid.len(), 36);
    assert!(created.metadata.creation_timestamp.is_some());
    assert!(
        created.metadata.generation.is_none(),
        "ConfigMaps have no generation"
    );

    let got = api.get("a").await.unwrap();
    assert_eq!(
        got.metadata.resource_version,
        created.metadata.resource_version
    );

    let mut changed = got.clone();
    changed.data = Some([("k".to_string(), "2".to_string())].into());
    let updated = api
        .replace("a", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_ne!(
        updated.metadata.resource_version,
        got.metadata.resource_version
    );

    // Writing the stale copy again is a conflict.
    let err = api
        .replace("a", &PostParams::default(), &changed)
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(s.reason, "Conflict");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }

    let dup = api
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(dup, kube::Error::Api(ref s) if s.code == 409 && s.reason == "AlreadyExists"),
        "{dup:?}"
    );

    api.delete("a", &DeleteParams::default()).await.unwrap();
    let missing = api.get("a").await.unwrap_err();
    assert!(
        matches!(missing, kube::Error::Api(ref s) if s.code == 404 && s.reason == "NotFound"),
        "{missing:?}"
    );
}

#[tokio::test]
async fn generate_name_and_label_selected_lists() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let mut obj = cm("", json!({}));
    obj.metadata.name = None;
    obj.metadata.generate_name = Some("gen-".into());
    obj.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    let name = created.metadata.name.unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    let listed = api
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    let none = api
        .list(&ListParams::default().labels("app notin (web)"))
        .await
        .unwrap();
    assert!(
        none.items
            .iter()
            .all(|c| c.metadata.name.as_deref() != Some(name.as_str()))
    );
}

/// The 422 a write of `obj` gets: its message and causes' fields.
async fn refused(api: &Api<ConfigMap>, obj: &ConfigMap) -> (String, Vec<String>) {
    match api.create(&PostParams::default(), obj).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(
                (s.code, s.reason.as_str()),
                (422, "Invalid"),
                "{}",
                s.message
            );
            let fields = s
                .details
                .map(|d| d.causes.into_iter().map(|c| c.field).collect())
                .unwrap_or_default();
            (s.message, fields)
        }
        other => panic!("expected a 422, got {other:?}"),
    }
}

#[tokio::test]
async fn names_prefixes_labels_and_annotation_keys_are_validated_as_kube_does() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let mut prefixed = cm("", json!({}));
    prefixed.metadata.name = None;
    prefixed.metadata.generate_name = Some("Web_1-".into());
    let (message, fields) = refused(&api, &prefixed).await;
    assert!(
        message.contains("is invalid: [metadata.generateName: Invalid value: \"Web_1-\": a lowercase RFC 1123 subdomain"),
        "{message}"
    );
    assert_eq!(fields, ["metadata.generateName", "metadata.name"]);

    let mut labelled = cm("labelled", json!({}));
    labelled.metadata.labels = Some([("team".to_string(), "a b".to_string())].into());
    let (message, fields) = refused(&api, &labelled).await;
    assert_eq!(
        message,
        "ConfigMap \"labelled\" is invalid: metadata.labels: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
    assert_eq!(fields, ["metadata.labels"]);
    labelled.metadata.labels = Some([("bad key!".to_string(), "v".to_string())].into());
    let (message, _) = refused(&api, &labelled).await;
    assert!(
        message.contains("metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters"),
        "{message}"
    );

    let mut annotated = cm("annotated", json!({}));
    annotated.metadata.annotations = Some(
        [(
            "Example.com/Note".to_string(),
            "any value at all".to_string(),
        )]
        .into(),
    );
    api.create(&PostParams::default(), &annotated)
        .await
        .expect("annotation keys are checked in lower case, values only for their total size");
    annotated.metadata.name = Some("annotated-2".into());
    annotated.metadata.annotations = Some([("a/b/c".to_string(), "v".to_string())].into());
    let (message, fields) = refused(&api, &annotated).await;
    assert!(
        message.contains(
            "metadata.annotations: Invalid value: \"a/b/c\": a qualified name must consist"
        ),
        "{message}"
    );
    assert_eq!(fields, ["metadata.annotations"]);

    // An update is checked too.
    let mut valid = api
        .create(&PostParams::default(), &cm("valid", json!({})))
        .await
        .unwrap();
    valid.metadata.labels = Some([("team".to_string(), "-x".to_string())].into());
    match api.replace("valid", &PostParams::default(), &valid).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 422, "{}", s.message),
        other => panic!("expected a 422, got {other:?}"),
    }
}

#[tokio::test]
async fn annotations_together_may_have_at_most_256_kib() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let annotated = |name: &str, bytes: usize| {
        let mut object = cm(name, json!({}));
        // The key counts: "note" and its value together are `bytes` long.
        object.metadata.annotations = Some([("note".to_string(), "x".repeat(bytes - 4))].into());
        object
    };
    let at_limit = api
        .create(&PostParams::default(), &annotated("at-limit", 262_144))
        .await
        .expect("262,144 bytes of annotations are allowed");

    let (message, fields) = refused(&api, &annotated("over", 262_145)).await;
    assert_eq!(
        message,
        "ConfigMap \"over\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
    );
    assert_eq!(fields, ["metadata.annotations"]);

    // An update that grows them past the limit is refused the same way.
    let mut grown = at_limit;
    grown
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("a".into(), String::new());
    match api
        .replace("at-limit", &PostParams::default(), &grown)
        .await
    {
        Err(kube::Error::Api(s)) => assert_eq!(
            (s.code, s.message.as_str()),
            (
                422,
                "ConfigMap \"at-limit\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
            )
        ),
        other => panic!("expected a 422, got {other:?}"),
    }
}

#[tokio::test]
async fn pagination_with_limit_and_continue() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let ns: Api<Namespace> = Api::all(client.clone());
    ns.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "pages"}})).unwrap(),
    )
    .await
    .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "pages");
    for i in 0..5 {
        api.create(&PostParams::default(), &cm(&format!("p{i}"), json!({})))
            .await
            .unwrap();
    }
    let mut names = Vec::new();
    let mut params = ListParams::default().limit(2);
    loop {
        let page = api.list(&params).await.unwrap();
        names.extend(page.items.into_iter().filter_map(|c| c.metadata.name));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => break,
        }
    }
    // Five of ours plus the kube-root-ca.crt ConfigMap every namespace gets.
    assert_eq!(
        names,
        vec!["kube-root-ca.crt", "p0", "p1", "p2", "p3", "p4"]
    );
}

#[tokio::test]
async fn deployment_generation_follows_spec_and_status_is_separate() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(bed.cluster().client(), "default");
    let dep: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &dep).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));

    let pp = PatchParams::default();
    let labeled = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        labeled.metadata.generation,
        Some(1),
        "metadata changes keep the generation"
    );

    let scaled = api
        .patch("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 3}})))
        .await
        .unwrap();
    assert_eq!(scaled.metadata.generation, Some(2));

    let status = api
        .patch_status(
            "web",
            &pp,
            &Patch::Merge(json!({"status": {"readyReplicas": 3}, "spec": {"replicas": 9}})),
        )
        .await
        .unwrap();
    assert_eq!(status.status.unwrap().ready_replicas, Some(3));
    assert_eq!(
        status.spec.unwrap().replicas,
        Some(3),
        "the status subresource ignores spec"
    );
    assert_eq!(status.metadata.generation, Some(2));

    let main = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"status": {"readyReplicas": 0}})),
        )
        .await
        .unwrap();
    assert_eq!(
        main.status.unwrap().ready_replicas,
        Some(3),
        "the main resource ignores status"
    );
}

#[tokio::test]
async fn server_side_apply_records_managers_and_conflicts() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(bed.cluster().client(), "default");
    let config = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"k": v}});
    let created = api
        .patch(
            "ssa",
            &PatchParams::apply("alice"),
            &Patch::Apply(config("1")),
        )
        .await
        .unwrap();
    let managers: Vec<_> = created
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .map(|m| (m.manager.unwrap(), m.operation.unwrap()))
        .collect();
    assert_eq!(managers, vec![("alice".to_string(), "Apply".to_string())]);

    let err = api
        .patch(
            "ssa",
            &PatchParams::apply("bob"),
            &Patch::Apply(config("2")),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(
                s.message,
                "Apply failed with 1 conflict: conflict with \"alice\": .data.k"
            );
        }
        other => panic!("{other:?}"),
    }
    let forced = api
        .patch(
            "ssa",
            &PatchParams::apply("bob").force(),
            &Patch::Apply(config("2")),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["k"], "2");
}

#[tokio::test]
async fn strategic_merge_patch_merges_containers_by_name() {
    let bed = Testbed::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(bed.cluster().client(), "default");
    let dep: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "smp"},
        "spec": {"selector": {"matchLabels": {"app": "smp"}},
                 "template": {"metadata": {"labels": {"app": "smp"}}, "spec": {"containers": [{"name": "a", "image": "busybox:1.36"}]}}}
    }))
    .unwrap();
    api.create(&PostParams::default(), &dep).await.unwrap();
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "nginx:1.25"}]}}}});
    let patched = api
        .patch("smp", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    let names: Vec<_> = patched
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .containers
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, vec!["b", "a"], "new list entries come first");
}

/// A protobuf message field of wire type 2 (length-delimited, short payloads).
fn proto_field(num: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(num << 3) | 2, payload.len() as u8];
    out.extend_from_slice(payload);
    out
}

/// A DELETE whose body is a protobuf DeleteOptions with a resourceVersion precondition, as
/// client-go's typed clients (e.g. helm's release storage) send it.
fn protobuf_delete(name: &str, resource_version: &str) -> http::Request<Vec<u8>> {
    let options = proto_field(2, &proto_field(2, resource_version.as_bytes()));
    let type_meta = [proto_field(1, b"v1"), proto_field(2, b"DeleteOptions")].concat();
    let body = [
        b"k8s\0".to_vec(),
        proto_field(1, &type_meta),
        proto_field(2, &options),
    ]
    .concat();
    http::Request::builder()
        .method("DELETE")
        .uri(format!("/api/v1/namespaces/default/configmaps/{name}"))
        .header("content-type", "application/vnd.kubernetes.protobuf")
        .body(body)
        .unwrap()
}

#[tokio::test]
async fn protobuf_delete_options_are_read_and_their_preconditions_hold() {
    let bed = Testbed::start().await.unwrap();
    let client = bed.cluster().client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &cm("p", json!({})))
        .await
        .unwrap();
    match client.request_text(protobuf_delete("p", "999999")).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 409, "{s:?}"),
        other => panic!("a stale precondition must conflict: {other:?}"),
    }
    let rv = created.metadata.resource_version.unwrap();
    client
        .request_text(protobuf_delete("p", &rv))
        .await
        .expect("deleted with a matching precondition");
    assert!(api.get_opt("p").await.unwrap().is_none());
}
