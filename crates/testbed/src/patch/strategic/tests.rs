//! Strategic merge patch behaviour pinned to the patch-strategic recording, step by step.

use serde_json::{Value, json};

use super::*;

fn deployment_schema() -> Ty {
    schema_for("apps", "Deployment").expect("built-in")
}

fn web() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "a", "image": "busybox:1.36", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                 "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "b", "image": "nginx:1.25"}
            ]}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
        }
    })
}

fn patch(obj: &Value, p: Value) -> Value {
    apply(obj, &p, deployment_schema()).expect("patch applies")
}

fn containers(obj: &Value) -> &Vec<Value> {
    obj["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
}

fn names(obj: &Value) -> Vec<String> {
    containers(obj)
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn images(obj: &Value) -> Vec<String> {
    containers(obj)
        .iter()
        .map(|c| c["image"].as_str().unwrap().to_string())
        .collect()
}

fn container<'a>(obj: &'a Value, name: &str) -> &'a Value {
    containers(obj).iter().find(|c| c["name"] == name).unwrap()
}

fn pod_spec(p: Value) -> Value {
    json!({"spec": {"template": {"spec": p}}})
}

#[test]
fn the_recorded_sequence_of_container_patches() {
    let d = patch(
        &web(),
        pod_spec(json!({"containers": [{"name": "b", "image": "nginx:1.26"}]})),
    );
    assert_eq!(names(&d), ["a", "b"]);
    assert_eq!(images(&d), ["busybox:1.36", "nginx:1.26"]);

    let d = patch(
        &d,
        pod_spec(json!({"containers": [{"name": "c", "image": "redis:7"}]})),
    );
    assert_eq!(names(&d), ["c", "a", "b"]);
    assert_eq!(images(&d), ["redis:7", "busybox:1.36", "nginx:1.26"]);

    let d = patch(
        &d,
        pod_spec(
            json!({"containers": [{"name": "a", "env": [{"name": "Y", "value": "20"}, {"name": "Z", "value": "3"}]}]}),
        ),
    );
    assert_eq!(
        container(&d, "a")["env"],
        json!([{"name": "X", "value": "1"}, {"name": "Y", "value": "20"}, {"name": "Z", "value": "3"}])
    );
    assert_eq!(
        container(&d, "a")["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );

    let d = patch(
        &d,
        pod_spec(
            json!({"containers": [{"name": "a", "env": [{"name": "X", "$patch": "delete"}]}]}),
        ),
    );
    assert_eq!(
        container(&d, "a")["env"],
        json!([{"name": "Y", "value": "20"}, {"name": "Z", "value": "3"}])
    );

    let d = patch(
        &d,
        pod_spec(json!({"containers": [{"name": "a", "$patch": "delete"}]})),
    );
    assert_eq!(names(&d), ["c", "b"]);
    assert_eq!(images(&d), ["redis:7", "nginx:1.26"]);

    let d = patch(
        &d,
        pod_spec(json!({
            "$setElementOrder/containers": [{"name": "e"}, {"name": "c"}, {"name": "b"}],
            "containers": [{"name": "e", "image": "e:1"}]
        })),
    );
    assert_eq!(names(&d), ["e", "c", "b"]);
    assert_eq!(images(&d), ["e:1", "redis:7", "nginx:1.26"]);
    assert!(
        d["spec"]["template"]["spec"]
            .get("$setElementOrder/containers")
            .is_none()
    );

    let d = patch(
        &d,
        pod_spec(json!({"containers": [{"name": "d", "image": "d:1"}, {"$patch": "replace"}]})),
    );
    assert_eq!(names(&d), ["d"]);
    assert_eq!(images(&d), ["d:1"]);
}

#[test]
fn plain_maps_merge_and_retain_keys_prunes() {
    let d = patch(&web(), json!({"spec": {"strategy": {"type": "Recreate"}}}));
    assert_eq!(
        d["spec"]["strategy"],
        json!({"type": "Recreate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    let d = patch(
        &web(),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    );
    assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn retain_keys_refuses_unlisted_patch_keys() {
    let err = apply(
        &web(),
        &json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        PatchError::BadRequest("invalid patch format of retainKeys".into())
    );
    let err = apply(
        &web(),
        &json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(err.code(), 400);
}

#[test]
fn finalizers_merge_as_a_set_new_first() {
    let d = patch(
        &web(),
        json!({"metadata": {"finalizers": ["example.com/a"]}}),
    );
    assert_eq!(d["metadata"]["finalizers"], json!(["example.com/a"]));
    let d = patch(&d, json!({"metadata": {"finalizers": ["example.com/b"]}}));
    assert_eq!(
        d["metadata"]["finalizers"],
        json!(["example.com/b", "example.com/a"])
    );
    let d = patch(&d, json!({"metadata": {"finalizers": ["example.com/a"]}}));
    assert_eq!(
        d["metadata"]["finalizers"],
        json!(["example.com/b", "example.com/a"])
    );
    let d = patch(
        &d,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}}),
    );
    assert_eq!(d["metadata"]["finalizers"], json!(["example.com/b"]));
    assert!(
        d["metadata"]
            .get("$deleteFromPrimitiveList/finalizers")
            .is_none()
    );
}

#[test]
fn labels_merge_and_null_deletes() {
    let d = patch(&web(), json!({"metadata": {"labels": {"extra": "1"}}}));
    assert_eq!(d["metadata"]["labels"], json!({"app": "web", "extra": "1"}));
    let d = patch(&d, json!({"metadata": {"labels": {"extra": null}}}));
    assert_eq!(d["metadata"]["labels"], json!({"app": "web"}));
    let cm = json!({"metadata": {"name": "smp"}, "data": {"a": "1"}});
    let out = apply(
        &cm,
        &json!({"data": {"a": null, "b": "2"}}),
        schema_for("", "ConfigMap").unwrap(),
    )
    .unwrap();
    assert_eq!(out["data"], json!({"b": "2"}));
}

#[test]
fn unknown_directives_are_internal_errors() {
    let err = apply(
        &web(),
        &pod_spec(json!({"containers": [{"name": "d", "$patch": "explode"}]})),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
    assert!(err.reason().is_none());
    assert!(
        err.message()
            .starts_with("unknown patch type: explode in map: ")
    );
    let err = apply(
        &web(),
        &json!({"spec": {"$patch": "explode"}}),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
    let err = apply(
        &web(),
        &pod_spec(json!({"containers": [{"$patch": "merge"}]})),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "merging lists cannot yet be specified in the patch"
    );
}

#[test]
fn list_items_need_their_merge_key() {
    let err = apply(
        &web(),
        &pod_spec(json!({"containers": [{"image": "x"}]})),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
    assert!(
        err.message()
            .contains("does not contain declared merge key: name")
    );
    let err = apply(
        &web(),
        &pod_spec(json!({"containers": [{"name": "a", "$patch": "delete"}, {"$patch": "delete"}]})),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
}

#[test]
fn lists_of_lists_and_mixed_lists_are_refused() {
    let pod = json!({"metadata": {"finalizers": ["a"]}});
    let schema = schema_for("", "Pod").unwrap();
    let err = apply(&pod, &json!({"metadata": {"finalizers": [["x"]]}}), schema).unwrap_err();
    assert_eq!(err.code(), 422);
    let err = apply(
        &pod,
        &json!({"metadata": {"finalizers": [{"x": 1}]}}),
        schema,
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
}

#[test]
fn map_directives_replace_and_delete() {
    let d = patch(
        &web(),
        json!({"spec": {"selector": {"$patch": "replace", "matchLabels": {"x": "y"}}}}),
    );
    assert_eq!(d["spec"]["selector"], json!({"matchLabels": {"x": "y"}}));
    let d = patch(&web(), json!({"spec": {"strategy": {"$patch": "delete"}}}));
    assert_eq!(d["spec"]["strategy"], json!({}));
}

#[test]
fn new_fields_are_merged_into_emptiness() {
    let d = patch(
        &web(),
        json!({"metadata": {"annotations": {"$patch": "replace", "a": "1", "b": null}}}),
    );
    assert_eq!(d["metadata"]["annotations"], json!({"a": "1"}));
    let d = patch(
        &web(),
        pod_spec(
            json!({"volumes": [{"name": "v", "emptyDir": {}}, {"name": "gone", "$patch": "delete"}]}),
        ),
    );
    assert_eq!(
        d["spec"]["template"]["spec"]["volumes"],
        json!([{"name": "v", "emptyDir": {}}])
    );
}

#[test]
fn lists_without_a_strategy_are_replaced() {
    let d = patch(&web(), pod_spec(json!({"tolerations": [{"key": "a"}]})));
    let d = patch(
        &d,
        pod_spec(json!({"tolerations": [{"key": "b", "value": null}]})),
    );
    assert_eq!(
        d["spec"]["template"]["spec"]["tolerations"],
        json!([{"key": "b"}])
    );
}

#[test]
fn ports_merge_by_number_and_services_by_port() {
    let d = patch(
        &web(),
        pod_spec(
            json!({"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443}]}]}),
        ),
    );
    assert_eq!(
        container(&d, "a")["ports"],
        json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 443}])
    );
    let svc = json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}]}});
    let out = apply(
        &svc,
        &json!({"spec": {"ports": [{"port": 81}]}}),
        schema_for("", "Service").unwrap(),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["ports"],
        json!([{"port": 81}, {"port": 80, "targetPort": 8080}])
    );
}

#[test]
fn owner_references_merge_by_uid() {
    let cm = json!({"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}});
    let out = apply(&cm, &json!({"metadata": {"ownerReferences": [{"uid": "1", "name": "b"}, {"uid": "2", "name": "c"}]}}), schema_for("", "ConfigMap").unwrap()).unwrap();
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([{"uid": "1", "name": "b"}, {"uid": "2", "name": "c"}])
    );
}

#[test]
fn set_element_order_rejects_patch_items_out_of_order() {
    let err = apply(
        &web(),
        &pod_spec(json!({
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
            "containers": [{"name": "b", "image": "x"}, {"name": "a", "image": "y"}]
        })),
        deployment_schema(),
    )
    .unwrap_err();
    assert_eq!(err.code(), 500);
    let d = patch(
        &web(),
        pod_spec(json!({"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]})),
    );
    assert_eq!(names(&d), ["b", "a"]);
    let with_x = patch(&web(), json!({"metadata": {"finalizers": ["x"]}}));
    let d = patch(
        &with_x,
        json!({"metadata": {"$setElementOrder/finalizers": ["y", "x"], "finalizers": ["y"]}}),
    );
    assert_eq!(d["metadata"]["finalizers"], json!(["y", "x"]));
    let d = patch(
        &with_x,
        json!({"metadata": {"$setElementOrder/finalizers": ["x", "y"], "finalizers": ["y"]}}),
    );
    assert_eq!(d["metadata"]["finalizers"], json!(["x", "y"]));
}

#[test]
fn custom_resources_refuse_strategic_merge_patch() {
    assert!(schema_for("example.com", "Widget").is_none());
    let status = unsupported_media_type_status();
    assert_eq!(status["code"], 415);
    assert_eq!(status["reason"], "UnsupportedMediaType");
    for (group, kind) in [
        ("", "Namespace"),
        ("", "Secret"),
        ("apps", "DaemonSet"),
        ("batch", "Job"),
        ("coordination.k8s.io", "Lease"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ] {
        assert!(schema_for(group, kind).is_some(), "{kind}");
    }
}

#[test]
fn non_object_patches_are_bad_requests() {
    assert_eq!(
        apply(&web(), &json!([1]), deployment_schema())
            .unwrap_err()
            .code(),
        400
    );
    assert_eq!(
        apply_bytes(&web(), b"{", deployment_schema())
            .unwrap_err()
            .code(),
        400
    );
    assert_eq!(
        apply_bytes(&web(), b"{}", deployment_schema()).unwrap(),
        web()
    );
}
