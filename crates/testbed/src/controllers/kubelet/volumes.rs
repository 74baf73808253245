//! What a kubelet prepares before a container starts: the files of its volumes, its
//! environment, and the ServiceAccount token it reaches the API server with.

use crate::cluster::ClusterState;
use crate::kubelet::Mount;
use crate::token::{BoundObject, ServiceAccountRef, TokenRequestSpec};
use base64::Engine as _;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Where a pod's ServiceAccount token is mounted unless the pod opts out.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Lifetime of the ServiceAccount tokens handed to containers: a day, so a dev session does
/// not outlive them (they are not renewed).
const TOKEN_SECONDS: i64 = 24 * 3600;

/// A container made ready to start.
#[derive(Debug)]
pub struct Prepared {
    /// Volume mounts, longest container path first.
    pub mounts: Vec<Mount>,
    /// Resolved environment.
    pub env: BTreeMap<String, String>,
    /// The in-cluster kubeconfig.
    pub kubeconfig: PathBuf,
}

/// Writes the volumes of `pod` into `root` and resolves the environment of its container
/// `container`; the error names the volume, object or field that is missing.
pub fn prepare(
    state: &ClusterState,
    pod: &Value,
    container: &Value,
    root: &Path,
) -> Result<Prepared, String> {
    let namespace = text(pod, "/metadata/namespace");
    let token = service_account_token(state, pod)?;
    let kubeconfig = root.join("kubeconfig");
    write_file(
        &kubeconfig,
        crate::kubeconfig::render(
            &state.name,
            &format!("https://{}", state.addr),
            &state.ca_pem,
            &token,
        )
        .as_bytes(),
    )?;
    let mut volume_dirs = BTreeMap::new();
    for volume in array(pod, "/spec/volumes") {
        let name = text(volume, "/name");
        let dir = root.join("volumes").join(safe_component(name)?);
        std::fs::create_dir_all(&dir).map_err(|e| format!("volume {name}: {e}"))?;
        write_volume(state, pod, volume, &dir, &token)
            .map_err(|e| format!("volume {name}: {e}"))?;
        volume_dirs.insert(name.to_owned(), dir);
    }
    let mut mounts = Vec::new();
    for mount in array(container, "/volumeMounts") {
        let volume = text(mount, "/name");
        let dir = volume_dirs.get(volume).ok_or_else(|| {
            format!(
                "volumeMounts {}: no volume named {volume:?}",
                text(mount, "/mountPath")
            )
        })?;
        let sub = text(mount, "/subPath");
        mounts.push(Mount {
            container_path: PathBuf::from(text(mount, "/mountPath")),
            host_path: if sub.is_empty() {
                dir.clone()
            } else {
                dir.join(relative(sub)?)
            },
        });
    }
    let automount = pod
        .pointer("/spec/automountServiceAccountToken")
        .and_then(Value::as_bool)
        != Some(false);
    if automount
        && !mounts
            .iter()
            .any(|m| m.container_path == Path::new(SERVICE_ACCOUNT_DIR))
    {
        let dir = root.join("serviceaccount");
        write_file(&dir.join("token"), token.as_bytes())?;
        write_file(&dir.join("ca.crt"), state.ca_pem.as_bytes())?;
        write_file(&dir.join("namespace"), namespace.as_bytes())?;
        mounts.push(Mount {
            container_path: SERVICE_ACCOUNT_DIR.into(),
            host_path: dir,
        });
    }
    mounts.sort_by_key(|m| std::cmp::Reverse(m.container_path.as_os_str().len()));
    let env = environment(state, pod, container)?;
    Ok(Prepared {
        mounts,
        env,
        kubeconfig,
    })
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn array<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A path relative to a volume, refusing `..` and absolute paths.
fn relative(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if p.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(p.to_owned())
    } else {
        Err(format!(
            "path {path:?} must be relative and must not contain '..'"
        ))
    }
}

fn safe_component(name: &str) -> Result<&str, String> {
    if !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != ".." {
        Ok(name)
    } else {
        Err(format!("volume name {name:?} is not a valid name"))
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// A bound token of the pod's ServiceAccount, as the kubelet requests one.
fn service_account_token(state: &ClusterState, pod: &Value) -> Result<String, String> {
    let namespace = text(pod, "/metadata/namespace");
    let name = match text(pod, "/spec/serviceAccountName") {
        "" => "default",
        name => name,
    };
    let sa = state
        .store
        .get("/serviceaccounts", namespace, name)
        .filter(|sa| !sa.deleting)
        .ok_or_else(|| {
            format!("spec.serviceAccountName: serviceaccount {namespace}/{name} not found")
        })?;
    let sa_ref = ServiceAccountRef {
        namespace,
        name,
        uid: &sa.uid,
    };
    let spec = TokenRequestSpec {
        audiences: state.issuer.api_audiences().to_vec(),
        expiration_seconds: TOKEN_SECONDS,
        bound_object_ref: None,
    };
    let bound = BoundObject {
        kind: "Pod".into(),
        name: text(pod, "/metadata/name").into(),
        uid: text(pod, "/metadata/uid").into(),
    };
    let (now, _) = crate::clock::unix_now();
    state
        .issuer
        .issue(&sa_ref, &spec, Some(&bound), now)
        .map(|t| t.token)
        .map_err(|e| format!("token of serviceaccount {namespace}/{name}: {e}"))
}

/// The decoded data of a Secret or ConfigMap, `None` when it does not exist.
fn object_data(
    state: &ClusterState,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<BTreeMap<String, Vec<u8>>>, String> {
    let key = if kind == "secret" {
        "/secrets"
    } else {
        "/configmaps"
    };
    let Some(obj) = state
        .store
        .get(key, namespace, name)
        .filter(|o| !o.deleting)
    else {
        return Ok(None);
    };
    let value = obj.value();
    let mut data = BTreeMap::new();
    let b64 = base64::engine::general_purpose::STANDARD;
    let (encoded, plain) = if kind == "secret" {
        ("data", None)
    } else {
        ("binaryData", Some("data"))
    };
    for (k, v) in value
        .get(encoded)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let bytes = b64
            .decode(v.as_str().unwrap_or_default())
            .map_err(|e| format!("{kind} {namespace}/{name} {encoded}.{k}: {e}"))?;
        data.insert(k.clone(), bytes);
    }
    if let Some(plain) = plain {
        for (k, v) in value
            .get(plain)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            data.insert(
                k.clone(),
                v.as_str().unwrap_or_default().as_bytes().to_vec(),
            );
        }
    }
    Ok(Some(data))
}

/// Writes the keys of a Secret or ConfigMap source (`items` select and rename them).
fn write_source(
    state: &ClusterState,
    namespace: &str,
    kind: &str,
    source: &Value,
    dir: &Path,
) -> Result<(), String> {
    let name_field = if kind == "secret" && source.get("secretName").is_some() {
        "/secretName"
    } else {
        "/name"
    };
    let name = text(source, name_field);
    let optional = source.get("optional").and_then(Value::as_bool) == Some(true);
    let Some(data) = object_data(state, kind, namespace, name)? else {
        return if optional {
            Ok(())
        } else {
            Err(format!("{kind} {namespace}/{name} not found"))
        };
    };
    let items: Vec<&Value> = array(source, "/items").collect();
    if items.is_empty() {
        for (key, bytes) in &data {
            write_file(&dir.join(relative(key)?), bytes)?;
        }
        return Ok(());
    }
    for item in items {
        let key = text(item, "/key");
        let Some(bytes) = data.get(key) else {
            if optional {
                continue;
            }
            return Err(format!("{kind} {namespace}/{name} has no key {key:?}"));
        };
        write_file(&dir.join(relative(text(item, "/path"))?), bytes)?;
    }
    Ok(())
}

fn write_volume(
    state: &ClusterState,
    pod: &Value,
    volume: &Value,
    dir: &Path,
    token: &str,
) -> Result<(), String> {
    let namespace = text(pod, "/metadata/namespace");
    if let Some(secret) = volume.get("secret") {
        return write_source(state, namespace, "secret", secret, dir);
    }
    if let Some(config_map) = volume.get("configMap") {
        return write_source(state, namespace, "configmap", config_map, dir);
    }
    if volume.get("emptyDir").is_some() {
        return Ok(());
    }
    let Some(projected) = volume.get("projected") else {
        return Err("only secret, configMap, projected and emptyDir volumes are supported".into());
    };
    for source in array(projected, "/sources") {
        if let Some(secret) = source.get("secret") {
            write_source(state, namespace, "secret", secret, dir)?;
        } else if let Some(config_map) = source.get("configMap") {
            write_source(state, namespace, "configmap", config_map, dir)?;
        } else if let Some(sa) = source.get("serviceAccountToken") {
            write_file(&dir.join(relative(text(sa, "/path"))?), token.as_bytes())?;
        } else if let Some(downward) = source.get("downwardAPI") {
            for item in array(downward, "/items") {
                let field = text(item, "/fieldRef/fieldPath");
                let value = field_value(pod, field)?;
                write_file(&dir.join(relative(text(item, "/path"))?), value.as_bytes())?;
            }
        }
    }
    Ok(())
}

/// The value of a downward API `fieldPath` of the pod.
fn field_value(pod: &Value, field: &str) -> Result<String, String> {
    let simple = match field {
        "metadata.name" => Some("/metadata/name"),
        "metadata.namespace" => Some("/metadata/namespace"),
        "metadata.uid" => Some("/metadata/uid"),
        "spec.serviceAccountName" => Some("/spec/serviceAccountName"),
        "spec.nodeName" => Some("/spec/nodeName"),
        _ => None,
    };
    if let Some(pointer) = simple {
        return Ok(text(pod, pointer).to_owned());
    }
    match field {
        "status.podIP" | "status.hostIP" => return Ok("127.0.0.1".into()),
        _ => {}
    }
    for (prefix, map) in [
        ("metadata.labels", "labels"),
        ("metadata.annotations", "annotations"),
    ] {
        if let Some(key) = field
            .strip_prefix(prefix)
            .and_then(|k| k.strip_prefix("['"))
            .and_then(|k| k.strip_suffix("']"))
        {
            let values = pod.pointer(&format!("/metadata/{map}"));
            return Ok(values
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned());
        }
    }
    Err(format!("fieldRef.fieldPath {field:?} is not supported"))
}

/// One value of a Secret or ConfigMap key selector (`secretKeyRef`, `configMapKeyRef`);
/// `None` when an optional one is missing.
fn key_value(
    state: &ClusterState,
    namespace: &str,
    kind: &str,
    selector: &Value,
) -> Result<Option<String>, String> {
    let name = text(selector, "/name");
    let key = text(selector, "/key");
    let optional = selector.get("optional").and_then(Value::as_bool) == Some(true);
    let value = object_data(state, kind, namespace, name)?.and_then(|d| d.get(key).cloned());
    match value {
        Some(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        None if optional => Ok(None),
        None => Err(format!("{kind} {namespace}/{name} key {key:?} not found")),
    }
}

/// The container's environment: `envFrom` first, then `env` (later entries win).
fn environment(
    state: &ClusterState,
    pod: &Value,
    container: &Value,
) -> Result<BTreeMap<String, String>, String> {
    let namespace = text(pod, "/metadata/namespace");
    let mut env = BTreeMap::new();
    for (i, from) in array(container, "/envFrom").enumerate() {
        let prefix = text(from, "/prefix");
        let (kind, selector) = match (from.get("secretRef"), from.get("configMapRef")) {
            (Some(s), _) => ("secret", s),
            (None, Some(c)) => ("configmap", c),
            (None, None) => continue,
        };
        let name = text(selector, "/name");
        let optional = selector.get("optional").and_then(Value::as_bool) == Some(true);
        match object_data(state, kind, namespace, name).map_err(|e| format!("envFrom[{i}]: {e}"))? {
            Some(data) => {
                for (k, v) in data {
                    env.insert(
                        format!("{prefix}{k}"),
                        String::from_utf8_lossy(&v).into_owned(),
                    );
                }
            }
            None if optional => {}
            None => return Err(format!("envFrom[{i}]: {kind} {namespace}/{name} not found")),
        }
    }
    for (i, var) in array(container, "/env").enumerate() {
        let name = text(var, "/name").to_owned();
        let Some(from) = var.get("valueFrom") else {
            env.insert(name, text(var, "/value").to_owned());
            continue;
        };
        let value = if let Some(field) = from.get("fieldRef") {
            Some(field_value(pod, text(field, "/fieldPath")))
        } else if let Some(s) = from.get("secretKeyRef") {
            key_value(state, namespace, "secret", s).transpose()
        } else if let Some(c) = from.get("configMapKeyRef") {
            key_value(state, namespace, "configmap", c).transpose()
        } else {
            Some(Err(
                "only fieldRef, secretKeyRef and configMapKeyRef are supported".into(),
            ))
        };
        if let Some(value) = value {
            let value = value.map_err(|e| format!("env[{i}] {name}: {e}"))?;
            env.insert(name, value);
        }
    }
    Ok(env)
}
