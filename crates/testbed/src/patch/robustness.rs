//! Hostile bodies: random documents and patches must give a result or a classified error,
//! never a panic.

use serde_json::{Map, Value, json};

use super::apply::{Manager, Operation, Scope, Shape, apply, update_managed_fields};
use super::{json_patch, merge_patch, strategic};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const KEYS: &[&str] = &[
    "metadata",
    "spec",
    "status",
    "data",
    "labels",
    "finalizers",
    "containers",
    "name",
    "image",
    "ports",
    "containerPort",
    "protocol",
    "env",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "template",
    "tags",
    "managedFields",
    "ownerReferences",
    "uid",
    "replicas",
    "",
];

fn value(rng: &mut Rng, depth: u32) -> Value {
    let choice = if depth == 0 {
        rng.below(4)
    } else {
        rng.below(7)
    };
    match choice {
        0 => Value::Null,
        1 => json!(rng.below(3) as i64 - 1),
        2 => json!(rng.pick(&["a", "replace", "delete", "merge", "x", "TCP"])),
        3 => json!(rng.below(2) == 0),
        4 | 5 => {
            let mut m = Map::new();
            for _ in 0..rng.below(4) {
                m.insert(rng.pick(KEYS).to_string(), value(rng, depth - 1));
            }
            Value::Object(m)
        }
        _ => Value::Array((0..rng.below(4)).map(|_| value(rng, depth - 1)).collect()),
    }
}

fn json_patch_ops(rng: &mut Rng) -> Value {
    let ops: Vec<Value> = (0..rng.below(4))
        .map(|_| {
            let path: String = (0..rng.below(4))
                .map(|_| {
                    format!(
                        "/{}",
                        rng.pick(&["spec", "data", "0", "-", "~1", "~0x", "labels", "9"])
                    )
                })
                .collect();
            json!({"op": rng.pick(&["add", "remove", "replace", "move", "copy", "test", "bogus"]),
                   "path": path, "from": "/spec", "value": value(rng, 2)})
        })
        .collect();
    Value::Array(ops)
}

fn status_code_is_known(code: u16) -> bool {
    matches!(code, 400 | 413 | 422 | 500)
}

#[test]
fn random_documents_and_patches_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let deployment = strategic::schema_for("apps", "Deployment").expect("built-in");
    let crd_schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object"}}}}}});
    let shapes = [
        Shape::builtin(deployment),
        Shape::custom_resource(&crd_schema),
        Shape::deduced(),
    ];
    let manager = Manager {
        name: "fuzz",
        operation: Operation::Apply,
        api_version: "v1",
        subresource: "",
    };
    let updater = Manager {
        operation: Operation::Update,
        ..manager
    };
    for _ in 0..3000 {
        let doc = value(&mut rng, 4);
        let patch = value(&mut rng, 4);
        if let Err(e) = merge_patch::apply(&doc, &patch) {
            assert!(status_code_is_known(e.code()));
        }
        if let Err(e) = strategic::apply(&doc, &patch, deployment) {
            assert!(status_code_is_known(e.code()), "{e:?}");
        }
        if let Err(e) = json_patch::apply(&doc, &json_patch_ops(&mut rng)) {
            assert!(status_code_is_known(e.code()));
        }
        let shape = &shapes[rng.below(3) as usize];
        let scope = if rng.below(2) == 0 {
            Scope::Whole
        } else {
            Scope::MAIN_WITH_STATUS
        };
        match apply(
            Some(&doc),
            &patch,
            &manager,
            rng.below(2) == 0,
            shape,
            scope,
            "t",
        ) {
            Ok(applied) => {
                let again = apply(
                    Some(&applied.object),
                    &patch,
                    &manager,
                    false,
                    shape,
                    scope,
                    "t",
                );
                assert!(
                    again.is_ok(),
                    "re-applying the same configuration is a no-op: {again:?}"
                );
            }
            Err(e) => assert!(matches!(e.status()["code"].as_u64(), Some(400 | 409 | 500))),
        }
        let mut updated = patch.clone();
        update_managed_fields(Some(&doc), &mut updated, &updater, shape, scope, "t");
    }
}
