//! Server-side apply and managedFields pinned to the server-side-apply recordings, step by step.

use serde_json::{Value, json};

use super::*;
use crate::patch::strategic::schema_for;

const T1: &str = "2024-01-01T00:00:01Z";
const T2: &str = "2024-01-01T00:00:02Z";

fn cm_shape() -> Shape<'static> {
    Shape::builtin(schema_for("", "ConfigMap").unwrap())
}

fn mgr(name: &str, operation: Operation) -> Manager<'_> {
    Manager {
        name,
        operation,
        api_version: "v1",
        subresource: "",
    }
}

fn do_apply(
    live: Option<&Value>,
    config: Value,
    name: &str,
    force: bool,
) -> Result<Value, ApplyError> {
    apply(
        live,
        &config,
        &mgr(name, Operation::Apply),
        force,
        &cm_shape(),
        Scope::Whole,
        T2,
    )
    .map(|a| a.object)
}

/// Records an update of the ConfigMap `obj` (over `live`) by the manager `name` at `time`.
fn do_update(live: Option<&Value>, obj: &mut Value, name: &str, time: &str) {
    update_managed_fields(
        live,
        obj,
        &mgr(name, Operation::Update),
        &cm_shape(),
        Scope::Whole,
        time,
    );
}

/// managedFields as (manager, operation, has time, fieldsV1), sorted by manager.
fn owners(obj: &Value) -> Vec<(String, String, bool, Value)> {
    let mut out: Vec<_> = obj["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
                e.get("time").is_some(),
                e["fieldsV1"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn own(m: &str, op: &str, time: bool, fields: Value) -> (String, String, bool, Value) {
    (m.to_string(), op.to_string(), time, fields)
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa1"}, "data": data})
}

#[test]
fn the_recorded_apply_sequence() {
    let created = do_apply(
        None,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa1", "labels": {"a": "1"}}, "data": {"k1": "v1", "k2": "v2"}}),
        "mgr1",
        false,
    )
    .unwrap();
    assert_eq!(created["data"], json!({"k1": "v1", "k2": "v2"}));
    assert_eq!(
        owners(&created),
        vec![own(
            "mgr1",
            "Apply",
            true,
            json!({"f:data": {"f:k1": {}, "f:k2": {}}, "f:metadata": {"f:labels": {"f:a": {}}}})
        )]
    );
    assert_eq!(created["metadata"]["managedFields"][0]["time"], T2);

    let err = do_apply(Some(&created), cm(json!({"k1": "other"})), "mgr2", false).unwrap_err();
    assert_eq!(
        err.status(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Apply failed with 1 conflict: conflict with \"mgr1\": .data.k1",
               "reason": "Conflict",
               "details": {"causes": [{"reason": "FieldManagerConflict", "message": "conflict with \"mgr1\"", "field": ".data.k1"}]},
               "code": 409})
    );

    let shared = do_apply(Some(&created), cm(json!({"k1": "v1"})), "mgr2", false).unwrap();
    assert_eq!(shared["data"], json!({"k1": "v1", "k2": "v2"}));
    assert_eq!(
        owners(&shared),
        vec![
            own(
                "mgr1",
                "Apply",
                true,
                json!({"f:data": {"f:k1": {}, "f:k2": {}}, "f:metadata": {"f:labels": {"f:a": {}}}})
            ),
            own("mgr2", "Apply", false, json!({"f:data": {"f:k1": {}}})),
        ]
    );

    let forced = do_apply(Some(&shared), cm(json!({"k2": "forced"})), "mgr3", true).unwrap();
    assert_eq!(forced["data"], json!({"k1": "v1", "k2": "forced"}));
    assert_eq!(
        owners(&forced),
        vec![
            own(
                "mgr1",
                "Apply",
                true,
                json!({"f:data": {"f:k1": {}}, "f:metadata": {"f:labels": {"f:a": {}}}})
            ),
            own("mgr2", "Apply", false, json!({"f:data": {"f:k1": {}}})),
            own("mgr3", "Apply", true, json!({"f:data": {"f:k2": {}}})),
        ]
    );

    let err = do_apply(
        Some(&forced),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa1", "labels": {"a": "1"}}, "data": {"k1": "v1", "k2": "v2"}}),
        "mgr1",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"mgr3\": .data.k2"
    );

    let dropped = do_apply(
        Some(&forced),
        cm(json!({"k1": "v1", "k3": "v3"})),
        "mgr1",
        false,
    )
    .unwrap();
    assert!(dropped["metadata"].get("labels").is_none());
    assert_eq!(
        dropped["data"],
        json!({"k1": "v1", "k2": "forced", "k3": "v3"})
    );
    assert_eq!(
        owners(&dropped),
        vec![
            own(
                "mgr1",
                "Apply",
                true,
                json!({"f:data": {"f:k1": {}, "f:k3": {}}})
            ),
            own("mgr2", "Apply", false, json!({"f:data": {"f:k1": {}}})),
            own("mgr3", "Apply", true, json!({"f:data": {"f:k2": {}}})),
        ]
    );

    let emptied = do_apply(
        Some(&dropped),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa1"}}),
        "mgr2",
        false,
    )
    .unwrap();
    assert_eq!(
        emptied["data"],
        json!({"k1": "v1", "k2": "forced", "k3": "v3"})
    );
    assert_eq!(owners(&emptied).len(), 2);

    let k1_gone = do_apply(Some(&emptied), cm(json!({"k3": "v3"})), "mgr1", false).unwrap();
    assert_eq!(k1_gone["data"], json!({"k2": "forced", "k3": "v3"}));
    assert_eq!(
        owners(&k1_gone),
        vec![
            own("mgr1", "Apply", true, json!({"f:data": {"f:k3": {}}})),
            own("mgr3", "Apply", true, json!({"f:data": {"f:k2": {}}})),
        ]
    );

    // An ordinary patch by "editor" takes k3; mgr1 is left with nothing.
    let mut edited = k1_gone.clone();
    edited["data"]["k3"] = json!("edited");
    do_update(Some(&k1_gone), &mut edited, "editor", T2);
    assert_eq!(
        owners(&edited),
        vec![
            own("editor", "Update", true, json!({"f:data": {"f:k3": {}}})),
            own("mgr3", "Apply", true, json!({"f:data": {"f:k2": {}}})),
        ]
    );

    let err = do_apply(Some(&edited), cm(json!({"k3": "v3"})), "mgr1", false).unwrap_err();
    assert_eq!(
        err.status()["message"],
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.k3"
    );
    assert_eq!(
        err.status()["details"]["causes"][0]["message"],
        "conflict with \"editor\" using v1"
    );

    // A PUT by "replay" that adds k9 owns only k9.
    let mut put = edited.clone();
    put["data"]["k9"] = json!("put");
    do_update(Some(&edited), &mut put, "replay", T2);
    assert_eq!(
        owners(&put),
        vec![
            own("editor", "Update", true, json!({"f:data": {"f:k3": {}}})),
            own("mgr3", "Apply", true, json!({"f:data": {"f:k2": {}}})),
            own("replay", "Update", true, json!({"f:data": {"f:k9": {}}})),
        ]
    );
}

#[test]
fn create_by_update_owns_maps_with_dot_entries() {
    let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "jp", "namespace": "ns", "uid": "u", "resourceVersion": "1", "creationTimestamp": T1, "labels": {"app": "x"}},
        "data": {"a": "1"}});
    do_update(None, &mut obj, "replay", T1);
    assert_eq!(
        obj["metadata"]["managedFields"],
        json!([{"manager": "replay", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}])
    );
    // A merge patch that deletes b and adds d, as in the patch-merge recording.
    let old = {
        let mut o = obj.clone();
        o["data"] = json!({"a": "1", "b": "2", "c": "3"});
        let mut created = o.clone();
        created["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        do_update(None, &mut created, "replay", T1);
        created
    };
    let mut new = old.clone();
    new["data"] = json!({"a": "10", "c": "3", "d": "4"});
    do_update(Some(&old), &mut new, "replay", T2);
    assert_eq!(
        new["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}, "f:c": {}, "f:d": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
    );
    assert_eq!(new["metadata"]["managedFields"][0]["time"], T2);
}

#[test]
fn an_update_that_changes_nothing_keeps_the_entries() {
    let mut obj = cm(json!({"a": "1"}));
    do_update(None, &mut obj, "first", T1);
    let mut same = obj.clone();
    do_update(Some(&obj), &mut same, "second", T2);
    assert_eq!(same, obj);
}

#[test]
fn managed_fields_reset_with_an_empty_entry() {
    let mut obj = cm(json!({"a": "1"}));
    do_update(None, &mut obj, "first", T1);
    let mut reset = obj.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    do_update(Some(&obj), &mut reset, "replay", T2);
    assert!(reset["metadata"].get("managedFields").is_none());
    // Garbage managedFields in a request fall back to the live ones.
    let mut garbage = obj.clone();
    garbage["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Bogus"}]);
    do_update(Some(&obj), &mut garbage, "replay", T2);
    assert_eq!(
        garbage["metadata"]["managedFields"],
        obj["metadata"]["managedFields"]
    );
}

fn thing_schema() -> Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "owner": {"type": "string"},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}, "ready": {"type": "boolean"}}}}})
}

fn thing(spec: Value) -> Value {
    json!({"apiVersion": "x.example.com/v1", "kind": "Thing", "metadata": {"name": "t1"}, "spec": spec})
}

#[test]
fn the_recorded_custom_resource_sequence() {
    let schema = thing_schema();
    let shape = Shape::custom_resource(&schema);
    let m = |name: &'static str, sub: &'static str| Manager {
        name,
        operation: Operation::Apply,
        api_version: "x.example.com/v1",
        subresource: sub,
    };
    let run =
        |live: Option<&Value>, config: Value, manager: Manager<'_>, force: bool, scope: Scope| {
            apply(live, &config, &manager, force, &shape, scope, T2).map(|a| a.object)
        };

    let mut config =
        thing(json!({"replicas": 1, "ports": [{"name": "http", "port": 80}], "tags": ["x"]}));
    config["status"] = json!({"phase": "ignored"});
    let created = run(None, config, m("alice", ""), false, Scope::MAIN_WITH_STATUS).unwrap();
    assert!(created.get("status").is_none());
    assert_eq!(
        owners(&created),
        vec![own(
            "alice",
            "Apply",
            true,
            json!({"f:spec": {"f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}}, "f:replicas": {}, "f:tags": {"v:\"x\"": {}}}})
        )]
    );

    let bob = run(
        Some(&created),
        thing(json!({"ports": [{"name": "https", "port": 443}], "tags": ["y"]})),
        m("bob", ""),
        false,
        Scope::MAIN_WITH_STATUS,
    )
    .unwrap();
    assert_eq!(
        bob["spec"],
        json!({"replicas": 1, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}], "tags": ["x", "y"]})
    );
    assert_eq!(
        owners(&bob)[1],
        own(
            "bob",
            "Apply",
            true,
            json!({"f:spec": {"f:ports": {"k:{\"name\":\"https\"}": {".": {}, "f:name": {}, "f:port": {}}}, "f:tags": {"v:\"y\"": {}}}})
        )
    );

    let err = run(
        Some(&bob),
        thing(json!({"ports": [{"name": "http", "port": 8080}]})),
        m("bob", ""),
        false,
        Scope::MAIN_WITH_STATUS,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[name=\"http\"].port"
    );

    let alice = run(
        Some(&bob),
        thing(json!({"replicas": 2})),
        m("alice", ""),
        false,
        Scope::MAIN_WITH_STATUS,
    )
    .unwrap();
    assert_eq!(
        alice["spec"],
        json!({"replicas": 2, "ports": [{"name": "https", "port": 443}], "tags": ["y"]})
    );

    let mut status_config = thing(json!({}));
    status_config.as_object_mut().unwrap().remove("spec");
    status_config["status"] = json!({"phase": "Running", "ready": true});
    let status = run(
        Some(&alice),
        status_config,
        m("ctrl", "status"),
        false,
        Scope::CUSTOM_RESOURCE_STATUS,
    )
    .unwrap();
    assert_eq!(status["status"], json!({"phase": "Running", "ready": true}));
    let ctrl = status["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ctrl")
        .unwrap()
        .clone();
    assert_eq!(ctrl["subresource"], "status");
    assert_eq!(
        ctrl["fieldsV1"],
        json!({"f:status": {"f:phase": {}, "f:ready": {}}})
    );

    let mut other = thing(json!({"replicas": 99}));
    other["status"] = json!({"phase": "Failed"});
    let err = run(
        Some(&status),
        other.clone(),
        m("other", "status"),
        false,
        Scope::CUSTOM_RESOURCE_STATUS,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"ctrl\" with subresource \"status\": .status.phase"
    );
    let forced = run(
        Some(&status),
        other,
        m("other", "status"),
        true,
        Scope::CUSTOM_RESOURCE_STATUS,
    )
    .unwrap();
    assert_eq!(forced["status"], json!({"phase": "Failed", "ready": true}));
    assert_eq!(forced["spec"]["replicas"], 2);

    let mut main = thing(json!({"replicas": 2}));
    main["status"] = json!({"phase": "FromMain"});
    let applied = apply(
        Some(&forced),
        &main,
        &m("alice", ""),
        false,
        &shape,
        Scope::MAIN_WITH_STATUS,
        "2030-01-01T00:00:00Z",
    )
    .unwrap();
    assert!(!applied.changed);
    assert_eq!(
        applied.object["status"],
        json!({"phase": "Failed", "ready": true})
    );
    let alice_entry = applied.object["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "alice")
        .unwrap()
        .clone();
    assert_eq!(
        alice_entry["time"], T2,
        "an apply that changes nothing keeps the time"
    );
    let owned: Vec<_> = owners(&applied.object)
        .into_iter()
        .map(|o| (o.0, o.3))
        .collect();
    assert!(owned.contains(&("ctrl".to_string(), json!({"f:status": {"f:ready": {}}}))));
    assert!(owned.contains(&("other".to_string(), json!({"f:status": {"f:phase": {}}}))));
}

#[test]
fn multiple_conflicts_are_grouped_by_manager() {
    let live = do_apply(None, cm(json!({"a": "1", "b": "2"})), "one", false).unwrap();
    let live = do_apply(Some(&live), cm(json!({"c": "3"})), "two", false).unwrap();
    let err = do_apply(
        Some(&live),
        cm(json!({"a": "x", "b": "y", "c": "z"})),
        "three",
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 3 conflicts: conflicts with \"one\":\n- .data.a\n- .data.b\nconflicts with \"two\":\n- .data.c"
    );
    assert_eq!(
        err.status()["details"]["causes"].as_array().unwrap().len(),
        3
    );
}

#[test]
fn containers_merge_by_name_and_prune_by_owner() {
    let shape = Shape::builtin(schema_for("apps", "Deployment").unwrap());
    let m = |name| Manager {
        name,
        operation: Operation::Apply,
        api_version: "apps/v1",
        subresource: "",
    };
    let dep = |containers: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"spec": {"containers": containers}}}})
    };
    // `manager` applies `containers` over `live` at `time`.
    let step = |live: Option<&Value>, containers: Value, manager, time| {
        let config = dep(containers);
        apply(
            live,
            &config,
            &m(manager),
            false,
            &shape,
            Scope::MAIN_WITH_STATUS,
            time,
        )
        .unwrap()
        .object
    };
    let names = |deployment: &Value| -> Vec<String> {
        deployment["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let first = step(
        None,
        json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]),
        "one",
        T1,
    );
    let fields = &first["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"];
    assert_eq!(fields["f:selector"], json!({}));
    assert_eq!(
        fields["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"a\"}"],
        json!({".": {}, "f:image": {}, "f:name": {}})
    );
    let second = step(
        Some(&first),
        json!([{"name": "c", "image": "c:1"}]),
        "two",
        T2,
    );
    assert_eq!(names(&second), ["a", "b", "c"]);
    let third = step(
        Some(&second),
        json!([{"name": "a", "image": "a:1"}]),
        "one",
        T2,
    );
    assert_eq!(names(&third), ["a", "c"]);
}

#[test]
fn apply_orders_shared_items_like_the_configuration() {
    let schema = thing_schema();
    let shape = Shape::custom_resource(&schema);
    let m = Manager {
        name: "m",
        operation: Operation::Apply,
        api_version: "v1",
        subresource: "",
    };
    let live = thing(json!({"tags": ["a", "b", "c"]}));
    let out = apply(
        Some(&live),
        &thing(json!({"tags": ["c", "new", "a"]})),
        &m,
        true,
        &shape,
        Scope::Whole,
        T1,
    )
    .unwrap()
    .object;
    assert_eq!(out["spec"]["tags"], json!(["b", "c", "new", "a"]));
}

#[test]
fn objects_without_history_credit_before_first_apply() {
    let live = cm(json!({"old": "1"}));
    let err = do_apply(Some(&live), cm(json!({"old": "2"})), "m", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.old"
    );
    let ok = do_apply(Some(&live), cm(json!({"new": "1"})), "m", false).unwrap();
    assert_eq!(ok["data"], json!({"old": "1", "new": "1"}));
    assert_eq!(owners(&ok)[0].0, "before-first-apply");
}

#[test]
fn bad_configurations_are_refused() {
    let err = do_apply(None, json!([1]), "m", false).unwrap_err();
    assert_eq!(err.status()["code"], 400);
    let mut with_mf = cm(json!({}));
    with_mf["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        do_apply(None, with_mf, "m", false).unwrap_err().status()["code"],
        400
    );
    let shape = Shape::builtin(schema_for("apps", "Deployment").unwrap());
    let m = Manager {
        name: "m",
        operation: Operation::Apply,
        api_version: "apps/v1",
        subresource: "",
    };
    let missing_key = json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    let err = apply(None, &missing_key, &m, false, &shape, Scope::Whole, T1).unwrap_err();
    assert!(err.to_string().contains("omits key field \"name\""));
    assert_eq!(err.status()["code"], 500);
    let dup =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}}});
    let live = apply(
        None,
        &json!({"spec": {"template": {"spec": {"containers": [{"name": "z"}]}}}}),
        &m,
        false,
        &shape,
        Scope::Whole,
        T1,
    )
    .unwrap()
    .object;
    assert!(apply(Some(&live), &dup, &m, false, &shape, Scope::Whole, T1).is_err());
}

#[test]
fn patch_options_errors_match_the_recording() {
    assert_eq!(
        patch_options_error(true, "", false).unwrap(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
               "reason": "Invalid",
               "details": {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]},
               "code": 422})
    );
    assert_eq!(
        patch_options_error(false, "replay", true).unwrap()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    assert!(patch_options_error(true, "m", true).is_none());
    assert!(patch_options_error(false, &"x".repeat(129), false).is_some());
}

#[test]
fn default_manager_is_the_user_agent_prefix() {
    assert_eq!(
        default_field_manager("replay/1.0 (apiserver-conformance)"),
        "replay"
    );
    assert_eq!(
        default_field_manager("kubectl/v1.33.0 (linux/amd64)"),
        "kubectl"
    );
    assert_eq!(default_field_manager(&"é".repeat(100)).len(), 128);
    assert_eq!(default_field_manager(""), "");
}

#[test]
fn status_updates_are_owned_under_the_subresource() {
    let schema = thing_schema();
    let shape = Shape::custom_resource(&schema);
    let mut old = thing(json!({"replicas": 1}));
    update_managed_fields(
        None,
        &mut old,
        &Manager {
            name: "c",
            operation: Operation::Update,
            api_version: "v1",
            subresource: "",
        },
        &shape,
        Scope::MAIN_WITH_STATUS,
        T1,
    );
    let mut new = old.clone();
    new["status"] = json!({"phase": "Running"});
    let m = Manager {
        name: "ctrl",
        operation: Operation::Update,
        api_version: "v1",
        subresource: "status",
    };
    update_managed_fields(
        Some(&old),
        &mut new,
        &m,
        &shape,
        Scope::CUSTOM_RESOURCE_STATUS,
        T2,
    );
    let entries = new["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1]["subresource"], "status");
    assert_eq!(
        entries[1]["fieldsV1"],
        json!({"f:status": {".": {}, "f:phase": {}}})
    );
}

#[test]
fn ports_are_keyed_by_number_and_defaulted_protocol() {
    let shape = Shape::builtin(schema_for("apps", "Deployment").unwrap());
    let m = Manager {
        name: "m",
        operation: Operation::Apply,
        api_version: "apps/v1",
        subresource: "",
    };
    let config = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}}});
    let out = apply(None, &config, &m, false, &shape, Scope::Whole, T1)
        .unwrap()
        .object;
    let fields = &out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]
        ["f:containers"]["k:{\"name\":\"a\"}"]["f:ports"];
    assert_eq!(
        fields,
        &json!({"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}})
    );
    // The live object, defaulted by the server, is the same item.
    let mut live = out.clone();
    live["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] = json!("TCP");
    let again = apply(Some(&live), &config, &m, false, &shape, Scope::Whole, T1).unwrap();
    assert!(!again.changed);
}

#[test]
fn custom_resource_keys_take_schema_defaults() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}, "proto": {"type": "string", "default": "tcp"}}}}}}}});
    let shape = Shape::custom_resource(&schema);
    let m = Manager {
        name: "m",
        operation: Operation::Apply,
        api_version: "v1",
        subresource: "",
    };
    let out = apply(
        None,
        &thing(json!({"ports": [{"name": "a"}]})),
        &m,
        false,
        &shape,
        Scope::Whole,
        T1,
    )
    .unwrap()
    .object;
    assert!(
        out["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:ports"]
            .get("k:{\"name\":\"a\",\"proto\":\"tcp\"}")
            .is_some()
    );
}

#[test]
fn event_references_are_owned_whole_like_the_recording() {
    let shape = Shape::builtin(schema_for("", "Event").unwrap());
    let mut ev = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "cm1.17a", "namespace": "ns"},
        "involvedObject": {"kind": "ConfigMap", "name": "cm1", "namespace": "ns"},
        "reason": "Synced", "message": "m", "source": {"component": "c"}, "count": 1,
        "firstTimestamp": T1, "lastTimestamp": T1, "type": "Normal"});
    update_managed_fields(
        None,
        &mut ev,
        &mgr("replay", Operation::Update),
        &shape,
        Scope::Whole,
        T1,
    );
    assert_eq!(
        ev["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:count": {}, "f:firstTimestamp": {}, "f:involvedObject": {}, "f:lastTimestamp": {}, "f:message": {},
               "f:reason": {}, "f:source": {"f:component": {}}, "f:type": {}})
    );
}

#[test]
fn token_requests_are_owned_under_their_subresource() {
    let mut tr = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "metadata": {"name": "sa1", "namespace": "ns"}, "spec": {"expirationSeconds": 3600}});
    let m = Manager {
        name: "replay",
        operation: Operation::Update,
        api_version: "authentication.k8s.io/v1",
        subresource: "token",
    };
    update_managed_fields(
        None,
        &mut tr,
        &m,
        &Shape::builtin_untyped(),
        Scope::Whole,
        T1,
    );
    assert_eq!(
        tr["metadata"]["managedFields"],
        json!([{"manager": "replay", "operation": "Update", "apiVersion": "authentication.k8s.io/v1", "time": T1,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:expirationSeconds": {}}}, "subresource": "token"}])
    );
}

#[test]
fn access_review_specs_are_plain_structs_with_pointer_attributes() {
    let mut review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "metadata": {"creationTimestamp": null},
        "spec": {"resourceAttributes": {"namespace": "ns", "verb": "get", "resource": "configmaps"}}});
    let m = Manager {
        name: "replay",
        operation: Operation::Update,
        api_version: "authorization.k8s.io/v1",
        subresource: "",
    };
    update_managed_fields(
        None,
        &mut review,
        &m,
        &Shape::builtin_untyped(),
        Scope::Whole,
        T1,
    );
    assert_eq!(
        review["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:resourceAttributes": {".": {}, "f:namespace": {}, "f:resource": {}, "f:verb": {}}}})
    );
}

#[test]
fn owner_references_are_owned_per_item_as_a_whole() {
    let mut child = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "p", "uid": "p-uid"}]}, "data": {"b": "1"}});
    do_update(None, &mut child, "replay", T1);
    assert_eq!(
        child["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:b": {}}, "f:metadata": {"f:ownerReferences": {".": {}, "k:{\"uid\":\"p-uid\"}": {}}}})
    );
}

#[test]
fn a_status_put_on_a_custom_resource_steals_the_labels_it_sent() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    let shape = Shape::custom_resource(&schema);
    let upd = |sub: &'static str| Manager {
        name: "replay",
        operation: Operation::Update,
        api_version: "x/v1",
        subresource: sub,
    };
    let mut live = json!({"apiVersion": "x/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 4}});
    update_managed_fields(
        None,
        &mut live,
        &upd(""),
        &shape,
        Scope::MAIN_WITH_STATUS,
        T1,
    );
    let mut labelled = live.clone();
    labelled["metadata"]["labels"] = json!({"team": "a"});
    update_managed_fields(
        Some(&live),
        &mut labelled,
        &upd(""),
        &shape,
        Scope::MAIN_WITH_STATUS,
        T1,
    );
    let mut put = labelled.clone();
    put["metadata"]["labels"] = json!({"team": "b"});
    put["spec"] = json!({"size": 10});
    put["status"] = json!({"phase": "Ready", "observedGeneration": 2});
    update_managed_fields(
        Some(&labelled),
        &mut put,
        &upd("status"),
        &shape,
        Scope::CUSTOM_RESOURCE_STATUS,
        T2,
    );
    let entries = put["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(
        entries[0]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {}}, "f:spec": {".": {}, "f:size": {}}})
    );
    assert_eq!(entries[1]["subresource"], "status");
    assert_eq!(
        entries[1]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:team": {}}}, "f:status": {".": {}, "f:observedGeneration": {}, "f:phase": {}}})
    );
}

#[test]
fn lease_specs_exist_before_their_first_write() {
    let shape = Shape::builtin(schema_for("coordination.k8s.io", "Lease").unwrap());
    let mut lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 10}});
    update_managed_fields(
        None,
        &mut lease,
        &mgr("replay", Operation::Update),
        &shape,
        Scope::Whole,
        T1,
    );
    assert_eq!(
        lease["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:holderIdentity": {}, "f:leaseDurationSeconds": {}}})
    );
}

#[test]
fn a_created_deployment_owns_its_defaults_like_kube() {
    let shape = Shape::builtin(schema_for("apps", "Deployment").unwrap());
    let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}], "securityContext": {}}}}});
    let m = Manager {
        name: "kubectl-create",
        operation: Operation::Update,
        api_version: "apps/v1",
        subresource: "",
    };
    update_managed_fields(None, &mut d, &m, &shape, Scope::MAIN_WITH_STATUS, T1);
    assert_eq!(
        d["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {
            "f:replicas": {}, "f:selector": {},
            "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}},
                           "f:securityContext": {}}}}})
    );
}

#[test]
fn more_than_ten_update_managers_merge_the_oldest() {
    let mut obj = cm(json!({}));
    for i in 0..12 {
        let prev = obj.clone();
        obj["data"][format!("k{i}")] = json!("v");
        let name = format!("m{i:02}");
        let now = format!("2024-01-01T00:00:{i:02}Z");
        update_managed_fields(
            Some(&prev),
            &mut obj,
            &mgr(&name, Operation::Update),
            &cm_shape(),
            Scope::Whole,
            &now,
        );
    }
    let entries = obj["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 10);
    let ancient = entries
        .iter()
        .find(|e| e["manager"] == ANCIENT_CHANGES)
        .unwrap();
    assert_eq!(
        ancient["fieldsV1"]["f:data"],
        json!({"f:k0": {}, "f:k1": {}, "f:k2": {}})
    );
    assert_eq!(ancient["time"], "2024-01-01T00:00:02Z");
    assert!(
        entries
            .iter()
            .all(|e| e["manager"] != "m00" && e["manager"] != "m02")
    );
}
