//! Decoding the Kubernetes protobuf encoding of request bodies into JSON, for the kinds
//! kubectl sends that way (its typed commands: `create token`, `auth can-i`,
//! `create configmap|secret|namespace|serviceaccount|role|rolebinding|...`) and client-go's
//! typed deletes (DeleteOptions, e.g. helm's release records). Responses are always JSON, which
//! clients accept alongside protobuf.

use base64::Engine as _;
use serde_json::{Map, Value};

/// The media type of protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// How one field is encoded.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Int,
    Bool,
    Msg(&'static [Field]),
    RepStr,
    RepMsg(&'static [Field]),
    MapStr,
    /// A map of bytes (base64 in JSON).
    MapBytes,
}

#[derive(Clone, Copy)]
struct Field {
    num: u64,
    name: &'static str,
    ty: Ty,
}

const fn f(num: u64, name: &'static str, ty: Ty) -> Field {
    Field { num, name, ty }
}

const OWNER_REFERENCE: &[Field] = &[
    f(1, "kind", Ty::Str),
    f(3, "name", Ty::Str),
    f(4, "uid", Ty::Str),
    f(5, "apiVersion", Ty::Str),
    f(6, "controller", Ty::Bool),
    f(7, "blockOwnerDeletion", Ty::Bool),
];

const OBJECT_META: &[Field] = &[
    f(1, "name", Ty::Str),
    f(2, "generateName", Ty::Str),
    f(3, "namespace", Ty::Str),
    f(5, "uid", Ty::Str),
    f(6, "resourceVersion", Ty::Str),
    f(11, "labels", Ty::MapStr),
    f(12, "annotations", Ty::MapStr),
    f(13, "ownerReferences", Ty::RepMsg(OWNER_REFERENCE)),
    f(14, "finalizers", Ty::RepStr),
];

const BOUND_OBJECT_REFERENCE: &[Field] = &[
    f(1, "kind", Ty::Str),
    f(2, "apiVersion", Ty::Str),
    f(3, "name", Ty::Str),
    f(4, "uid", Ty::Str),
];

const TOKEN_REQUEST: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(
        2,
        "spec",
        Ty::Msg(&[
            f(1, "audiences", Ty::RepStr),
            f(3, "boundObjectRef", Ty::Msg(BOUND_OBJECT_REFERENCE)),
            f(4, "expirationSeconds", Ty::Int),
        ]),
    ),
];

const RESOURCE_ATTRIBUTES: &[Field] = &[
    f(1, "namespace", Ty::Str),
    f(2, "verb", Ty::Str),
    f(3, "group", Ty::Str),
    f(4, "version", Ty::Str),
    f(5, "resource", Ty::Str),
    f(6, "subresource", Ty::Str),
    f(7, "name", Ty::Str),
];

const NON_RESOURCE_ATTRIBUTES: &[Field] = &[f(1, "path", Ty::Str), f(2, "verb", Ty::Str)];

const SELF_SUBJECT_ACCESS_REVIEW: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(
        2,
        "spec",
        Ty::Msg(&[
            f(1, "resourceAttributes", Ty::Msg(RESOURCE_ATTRIBUTES)),
            f(2, "nonResourceAttributes", Ty::Msg(NON_RESOURCE_ATTRIBUTES)),
        ]),
    ),
];

const SELF_SUBJECT_RULES_REVIEW: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(2, "spec", Ty::Msg(&[f(1, "namespace", Ty::Str)])),
];

const CONFIG_MAP: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(2, "data", Ty::MapStr),
    f(3, "binaryData", Ty::MapBytes),
    f(4, "immutable", Ty::Bool),
];

const SECRET: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(2, "data", Ty::MapBytes),
    f(3, "type", Ty::Str),
    f(4, "stringData", Ty::MapStr),
    f(5, "immutable", Ty::Bool),
];

const NAMESPACE: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(2, "spec", Ty::Msg(&[f(1, "finalizers", Ty::RepStr)])),
];

const SERVICE_ACCOUNT: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(4, "automountServiceAccountToken", Ty::Bool),
];

const POLICY_RULE: &[Field] = &[
    f(1, "verbs", Ty::RepStr),
    f(2, "apiGroups", Ty::RepStr),
    f(3, "resources", Ty::RepStr),
    f(4, "resourceNames", Ty::RepStr),
    f(5, "nonResourceURLs", Ty::RepStr),
];

const ROLE: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(2, "rules", Ty::RepMsg(POLICY_RULE)),
];

const ROLE_BINDING: &[Field] = &[
    f(1, "metadata", Ty::Msg(OBJECT_META)),
    f(
        2,
        "subjects",
        Ty::RepMsg(&[
            f(1, "kind", Ty::Str),
            f(2, "apiGroup", Ty::Str),
            f(3, "name", Ty::Str),
            f(4, "namespace", Ty::Str),
        ]),
    ),
    f(
        3,
        "roleRef",
        Ty::Msg(&[
            f(1, "apiGroup", Ty::Str),
            f(2, "kind", Ty::Str),
            f(3, "name", Ty::Str),
        ]),
    ),
];

/// The body of a DELETE from client-go's typed clients (helm's release storage among them).
const DELETE_OPTIONS: &[Field] = &[
    f(1, "gracePeriodSeconds", Ty::Int),
    f(
        2,
        "preconditions",
        Ty::Msg(&[f(1, "uid", Ty::Str), f(2, "resourceVersion", Ty::Str)]),
    ),
    f(3, "orphanDependents", Ty::Bool),
    f(4, "propagationPolicy", Ty::Str),
    f(5, "dryRun", Ty::RepStr),
];

fn fields_of(kind: &str) -> Option<&'static [Field]> {
    Some(match kind {
        "TokenRequest" => TOKEN_REQUEST,
        "SelfSubjectAccessReview" => SELF_SUBJECT_ACCESS_REVIEW,
        "SelfSubjectRulesReview" => SELF_SUBJECT_RULES_REVIEW,
        "ConfigMap" => CONFIG_MAP,
        "Secret" => SECRET,
        "DeleteOptions" => DELETE_OPTIONS,
        "Namespace" => NAMESPACE,
        "ServiceAccount" => SERVICE_ACCOUNT,
        "Role" | "ClusterRole" => ROLE,
        "RoleBinding" | "ClusterRoleBinding" => ROLE_BINDING,
        _ => return None,
    })
}

/// Why a protobuf body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// Malformed bytes.
    #[error("protobuf: {0}")]
    Malformed(&'static str),
    /// A kind this server cannot read from protobuf.
    #[error("protobuf bodies of kind {0:?} are not supported")]
    Unsupported(String),
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self
                .buf
                .split_first()
                .ok_or(ProtoError::Malformed("truncated varint"))?;
            self.buf = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ProtoError::Malformed("varint too long"))
    }

    fn bytes(&mut self) -> Result<&'a [u8], ProtoError> {
        let len = usize::try_from(self.varint()?).map_err(|_| ProtoError::Malformed("length"))?;
        if len > self.buf.len() {
            return Err(ProtoError::Malformed("truncated field"));
        }
        let (head, rest) = self.buf.split_at(len);
        self.buf = rest;
        Ok(head)
    }

    fn skip(&mut self, wire: u64) -> Result<(), ProtoError> {
        let n = match wire {
            0 => return self.varint().map(|_| ()),
            1 => 8,
            2 => return self.bytes().map(|_| ()),
            5 => 4,
            _ => return Err(ProtoError::Malformed("wire type")),
        };
        self.buf = self
            .buf
            .get(n..)
            .ok_or(ProtoError::Malformed("truncated fixed field"))?;
        Ok(())
    }

    /// The next (field number, wire type), or `None` at the end.
    fn tag(&mut self) -> Result<Option<(u64, u64)>, ProtoError> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let t = self.varint()?;
        Ok(Some((t >> 3, t & 7)))
    }
}

fn text(b: &[u8]) -> Result<Value, ProtoError> {
    String::from_utf8(b.to_vec())
        .map(Value::String)
        .map_err(|_| ProtoError::Malformed("invalid UTF-8"))
}

fn map_entry(b: &[u8], bytes_value: bool) -> Result<(String, Value), ProtoError> {
    let mut r = Reader { buf: b };
    let (mut key, mut value) = (String::new(), Value::String(String::new()));
    while let Some((num, wire)) = r.tag()? {
        match (num, wire) {
            (1, 2) => key = String::from_utf8_lossy(r.bytes()?).into_owned(),
            (2, 2) if bytes_value => {
                value = base64::engine::general_purpose::STANDARD
                    .encode(r.bytes()?)
                    .into()
            }
            (2, 2) => value = text(r.bytes()?)?,
            (_, w) => r.skip(w)?,
        }
    }
    Ok((key, value))
}

fn message(b: &[u8], fields: &[Field]) -> Result<Value, ProtoError> {
    let mut r = Reader { buf: b };
    let mut out = Map::new();
    while let Some((num, wire)) = r.tag()? {
        let Some(field) = fields.iter().find(|f| f.num == num) else {
            r.skip(wire)?;
            continue;
        };
        let name = field.name.to_string();
        match (field.ty, wire) {
            (Ty::Int, 0) => {
                out.insert(name, Value::from(r.varint()? as i64));
            }
            (Ty::Bool, 0) => {
                out.insert(name, Value::Bool(r.varint()? != 0));
            }
            (Ty::Str, 2) => {
                out.insert(name, text(r.bytes()?)?);
            }
            (Ty::Msg(inner), 2) => {
                out.insert(name, message(r.bytes()?, inner)?);
            }
            (Ty::RepStr, 2) => {
                let v = text(r.bytes()?)?;
                push(&mut out, name, v);
            }
            (Ty::RepMsg(inner), 2) => {
                let v = message(r.bytes()?, inner)?;
                push(&mut out, name, v);
            }
            (Ty::MapStr | Ty::MapBytes, 2) => {
                let (k, v) = map_entry(r.bytes()?, matches!(field.ty, Ty::MapBytes))?;
                let entry = out.entry(name).or_insert_with(|| Value::Object(Map::new()));
                if let Some(m) = entry.as_object_mut() {
                    m.insert(k, v);
                }
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok(Value::Object(out))
}

fn push(out: &mut Map<String, Value>, name: String, v: Value) {
    let entry = out.entry(name).or_insert_with(|| Value::Array(Vec::new()));
    if let Some(a) = entry.as_array_mut() {
        a.push(v);
    }
}

/// Decodes a protobuf body (`k8s\0` + `runtime.Unknown`) into the JSON object it encodes.
pub fn decode(body: &[u8]) -> Result<Value, ProtoError> {
    let rest = body
        .strip_prefix(b"k8s\0")
        .ok_or(ProtoError::Malformed("missing k8s magic"))?;
    let mut r = Reader { buf: rest };
    let (mut api_version, mut kind, mut raw): (String, String, &[u8]) =
        (String::new(), String::new(), &[]);
    while let Some((num, wire)) = r.tag()? {
        match (num, wire) {
            (1, 2) => {
                let mut tm = Reader { buf: r.bytes()? };
                while let Some((n, w)) = tm.tag()? {
                    match (n, w) {
                        (1, 2) => api_version = String::from_utf8_lossy(tm.bytes()?).into_owned(),
                        (2, 2) => kind = String::from_utf8_lossy(tm.bytes()?).into_owned(),
                        (_, w) => tm.skip(w)?,
                    }
                }
            }
            (2, 2) => raw = r.bytes()?,
            (_, w) => r.skip(w)?,
        }
    }
    let fields = fields_of(&kind).ok_or_else(|| ProtoError::Unsupported(kind.clone()))?;
    let mut obj = message(raw, fields)?;
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), api_version.into());
        m.insert("kind".into(), kind.into());
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(num: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((num << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn decodes_a_config_map() {
        let meta = field(1, b"c1");
        let entry = [field(1, b"a"), field(2, b"1")].concat();
        let raw = [field(1, &meta), field(2, &entry)].concat();
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        assert_eq!(
            decode(&body).unwrap(),
            json!({"metadata": {"name": "c1"}, "data": {"a": "1"}, "apiVersion": "v1", "kind": "ConfigMap"})
        );
    }

    #[test]
    fn token_request_expiration_is_a_varint() {
        let spec = [vec![(4 << 3) as u8, 0x90, 0x1c]].concat();
        let raw = field(2, &spec);
        let type_meta = [
            field(1, b"authentication.k8s.io/v1"),
            field(2, b"TokenRequest"),
        ]
        .concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        assert_eq!(decode(&body).unwrap()["spec"]["expirationSeconds"], 3600);
    }

    #[test]
    fn decodes_delete_options() {
        let preconditions = field(2, b"42");
        let raw = [
            field(2, &preconditions),
            field(4, b"Foreground"),
            field(5, b"All"),
        ]
        .concat();
        let type_meta = [field(1, b"v1"), field(2, b"DeleteOptions")].concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        assert_eq!(
            decode(&body).unwrap(),
            json!({"preconditions": {"resourceVersion": "42"}, "propagationPolicy": "Foreground",
                "dryRun": ["All"], "apiVersion": "v1", "kind": "DeleteOptions"})
        );
    }

    #[test]
    fn unknown_kinds_and_garbage_are_errors() {
        assert!(matches!(decode(b"nope"), Err(ProtoError::Malformed(_))));
        let type_meta = [field(1, b"apps/v1"), field(2, b"Deployment")].concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta)].concat();
        assert!(matches!(decode(&body), Err(ProtoError::Unsupported(_))));
    }
}
