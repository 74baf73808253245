//! Access to the cluster a `landscaper.gardener.cloud/kubernetes-cluster` Target points at:
//! an inline kubeconfig, a kubeconfig in a Secret referenced from the target config, or a
//! Target-level `secretRef`. Secrets are read through a client the deployer chooses, so the
//! agent resolves them in its host cluster. Kubeconfigs that run commands, use auth providers
//! or read local files are rejected: a Target must not make the deployer execute or read
//! anything on its own machine.

use crate::client_config::with_bounded_reads;
use crate::contract::interruptible::InterruptibleLayer;
use crate::discovery::{Discovery, Resolved};
use crate::error::{Error, is_not_found};
use k8s_openapi::api::core::v1::Secret;
use kube::api::DynamicObject;
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper_api::constants::target_types;
use landscaper_api::core::{SecretReference, Target};
use serde_json::Value;
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

const OPERATION: &str = "TargetAccess";
/// The Secret key read when a reference names none.
pub const DEFAULT_SECRET_KEY: &str = "kubeconfig";

/// A client for a target cluster with its discovery cache.
#[derive(Clone)]
pub struct TargetCluster {
    /// The client.
    pub client: kube::Client,
    /// Kinds resolved to resources in this cluster.
    pub discovery: Arc<Discovery>,
}

impl TargetCluster {
    /// The dynamic API of a resolved kind: in `namespace` when the kind lives in namespaces,
    /// cluster-wide otherwise (a namespace given for a cluster-scoped kind is ignored).
    pub fn api(&self, resolved: &Resolved, namespace: Option<&str>) -> kube::Api<DynamicObject> {
        match namespace {
            Some(ns) if resolved.namespaced => {
                kube::Api::namespaced_with(self.client.clone(), ns, &resolved.resource)
            }
            _ => kube::Api::all_with(self.client.clone(), &resolved.resource),
        }
    }
}

/// Resolves Targets to clients, caching one client per Target (by `namespace/name`) along
/// with a hash of the kubeconfig it was built from. A changed kubeconfig (a renewed token)
/// replaces the Target's client, so the cache does not grow with every renewal.
pub struct TargetAccess {
    secrets: kube::Client,
    clusters: Mutex<HashMap<String, (u64, TargetCluster)>>,
}

impl TargetAccess {
    /// Reads referenced Secrets with `secrets` (the landscaper cluster, or the agent's host
    /// cluster).
    pub fn new(secrets: kube::Client) -> Self {
        Self {
            secrets,
            clusters: Mutex::new(HashMap::new()),
        }
    }

    /// A client for the cluster the target points at.
    pub async fn cluster(&self, target: &Target) -> Result<TargetCluster, Error> {
        let text = self.kubeconfig_text(target).await?;
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let hash = hasher.finish();
        let name = target_name(target);
        if let Some((built_from, cluster)) = self.lock().get(&name)
            && *built_from == hash
        {
            return Ok(cluster.clone());
        }
        let client = client_from_kubeconfig(&text, &name).await?;
        let cluster = TargetCluster {
            discovery: Arc::new(Discovery::new(client.clone())),
            client,
        };
        self.lock().insert(name, (hash, cluster.clone()));
        Ok(cluster)
    }

    /// How many clients are cached: one per Target resolved so far.
    pub fn cached(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, TargetCluster)>> {
        self.clusters.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn kubeconfig_text(&self, target: &Target) -> Result<String, Error> {
        let name = target_name(target);
        if target.spec.type_ != target_types::KUBERNETES_CLUSTER {
            return Err(Error::config(
                OPERATION,
                "UnsupportedTargetType",
                format!(
                    "Target {name}: spec.type is {:?}, expected {:?}",
                    target.spec.type_,
                    target_types::KUBERNETES_CLUSTER
                ),
            ));
        }
        let namespace = target.metadata.namespace.clone().unwrap_or_default();
        if let Some(secret_ref) = &target.spec.secret_ref {
            let content = self
                .secret_value(
                    secret_ref,
                    &namespace,
                    &format!("Target {name}: spec.secretRef"),
                )
                .await?;
            return kubeconfig_from_content(&content, &name, "spec.secretRef");
        }
        let Some(config) = &target.spec.config else {
            return Err(Error::config(
                OPERATION,
                "MissingKubeconfig",
                format!("Target {name}: neither spec.config.kubeconfig nor spec.secretRef is set"),
            ));
        };
        match config.get("kubeconfig") {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Object(o)) if o.contains_key("secretRef") => {
                let r: SecretReference =
                    serde_json::from_value(o["secretRef"].clone()).map_err(|e| {
                        Error::config(
                            OPERATION,
                            "InvalidTargetConfig",
                            format!("Target {name}: spec.config.kubeconfig.secretRef: {e}"),
                        )
                    })?;
                self.secret_value(
                    &r,
                    &namespace,
                    &format!("Target {name}: spec.config.kubeconfig.secretRef"),
                )
                .await
            }
            _ => Err(Error::config(
                OPERATION,
                "MissingKubeconfig",
                format!(
                    "Target {name}: spec.config.kubeconfig must be a kubeconfig string or a secretRef"
                ),
            )),
        }
    }

    async fn secret_value(
        &self,
        r: &SecretReference,
        default_namespace: &str,
        field: &str,
    ) -> Result<String, Error> {
        let namespace = r.namespace.as_deref().unwrap_or(default_namespace);
        let key = r.key.as_deref().unwrap_or(DEFAULT_SECRET_KEY);
        let api: kube::Api<Secret> = kube::Api::namespaced(self.secrets.clone(), namespace);
        let what = format!("{field}: Secret {namespace}/{}", r.name);
        let secret = api.get(&r.name).await.map_err(|e| {
            if is_not_found(&e) {
                Error::transient(OPERATION, "SecretNotFound", format!("{what} not found"))
            } else {
                Error::from_kube(OPERATION, &what, &e)
            }
        })?;
        let data = secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|b| b.0.clone())
            .or_else(|| {
                secret
                    .string_data
                    .as_ref()
                    .and_then(|d| d.get(key))
                    .map(|s| s.clone().into_bytes())
            })
            .ok_or_else(|| {
                Error::config(
                    OPERATION,
                    "SecretKeyMissing",
                    format!("{what} has no key {key:?}"),
                )
            })?;
        String::from_utf8(data).map_err(|_| {
            Error::config(
                OPERATION,
                "InvalidKubeconfig",
                format!("{what}: key {key:?} is not UTF-8 text"),
            )
        })
    }
}

fn target_name(target: &Target) -> String {
    format!(
        "{}/{}",
        target.metadata.namespace.as_deref().unwrap_or_default(),
        target.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Secret content is either a target configuration (`kubeconfig: ...`) or a kubeconfig.
fn kubeconfig_from_content(content: &str, target: &str, field: &str) -> Result<String, Error> {
    let parsed: Value = serde_yaml_ng::from_str(content).map_err(|e| {
        Error::config(
            OPERATION,
            "InvalidKubeconfig",
            format!("Target {target}: {field}: the Secret value is not YAML: {e}"),
        )
    })?;
    match parsed.get("kubeconfig") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Ok(content.to_string()),
    }
}

/// Parses and checks a kubeconfig and builds a client for its current context, whose requests
/// end with the job that sends them.
pub async fn client_from_kubeconfig(text: &str, target: &str) -> Result<kube::Client, Error> {
    let invalid = |msg: String| {
        Error::config(
            OPERATION,
            "InvalidKubeconfig",
            format!("Target {target}: {msg}"),
        )
    };
    let kubeconfig =
        Kubeconfig::from_yaml(text).map_err(|e| invalid(format!("kubeconfig: {e}")))?;
    check_kubeconfig(&kubeconfig).map_err(invalid)?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| invalid(format!("kubeconfig: {e}")))?;
    let builder = kube::client::ClientBuilder::try_from(with_bounded_reads(config))
        .map_err(|e| invalid(format!("client: {e}")))?;
    Ok(builder.with_layer(&InterruptibleLayer::default()).build())
}

/// Rejects kubeconfigs that run commands, use auth providers or read local files.
pub fn check_kubeconfig(k: &Kubeconfig) -> Result<(), String> {
    for user in &k.auth_infos {
        let Some(a) = &user.auth_info else { continue };
        let name = &user.name;
        if a.exec.is_some() {
            return Err(format!("user {name:?} uses exec, which runs a command"));
        }
        if a.auth_provider.is_some() {
            return Err(format!("user {name:?} uses an auth-provider"));
        }
        for (field, set) in [
            ("tokenFile", a.token_file.is_some()),
            ("client-certificate", a.client_certificate.is_some()),
            ("client-key", a.client_key.is_some()),
        ] {
            if set {
                return Err(format!(
                    "user {name:?} sets {field}, which reads a local file"
                ));
            }
        }
    }
    for cluster in &k.clusters {
        if cluster
            .cluster
            .as_ref()
            .is_some_and(|c| c.certificate_authority.is_some())
        {
            return Err(format!(
                "cluster {:?} sets certificate-authority, which reads a local file",
                cluster.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(user: &str, cluster_extra: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n{cluster_extra}contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\nusers:\n- name: u\n  user:\n{user}"
        )
    }

    fn check(text: &str) -> Result<(), String> {
        check_kubeconfig(&Kubeconfig::from_yaml(text).unwrap())
    }

    #[test]
    fn tokens_and_inline_data_are_accepted() {
        assert_eq!(check(&kubeconfig("    token: abc\n", "")), Ok(()));
    }

    #[test]
    fn exec_auth_providers_and_local_files_are_rejected() {
        let exec = kubeconfig(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n",
            "",
        );
        assert!(check(&exec).unwrap_err().contains("exec"));
        let provider = kubeconfig("    auth-provider:\n      name: gcp\n", "");
        assert!(check(&provider).unwrap_err().contains("auth-provider"));
        let token_file = kubeconfig("    tokenFile: /etc/token\n", "");
        assert!(check(&token_file).unwrap_err().contains("tokenFile"));
        let cert = kubeconfig("    client-certificate: /etc/cert\n", "");
        assert!(check(&cert).unwrap_err().contains("client-certificate"));
        let ca = kubeconfig("    token: abc\n", "    certificate-authority: /etc/ca\n");
        assert!(check(&ca).unwrap_err().contains("certificate-authority"));
    }

    #[test]
    fn secret_content_may_be_a_target_config_or_a_kubeconfig() {
        let kc = kubeconfig("    token: abc\n", "");
        let wrapped = serde_json::json!({ "kubeconfig": kc }).to_string();
        assert_eq!(kubeconfig_from_content(&wrapped, "ns/t", "f").unwrap(), kc);
        assert_eq!(kubeconfig_from_content(&kc, "ns/t", "f").unwrap(), kc);
    }
}
