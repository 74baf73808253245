//! The pair's access to the landscaper cluster: a kubeconfig Secret whose token is a
//! TokenRequest token of the pair's ServiceAccount, renewed at 80% of its lifetime and when the
//! environment's `landscaperClusterConfig` changes.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams, PostParams};
use landscaper_deployer::error::describe_kube_error;

use super::pair::{KUBECONFIG_KEY, Pair, hash_of};

/// When the Secret's token must be replaced.
pub const RENEW_AT: &str = "deployers.landscaper.gardener.cloud/token-renew-at";
/// The hash of the `landscaperClusterConfig` the Secret's kubeconfig was written from.
const CLUSTER_HASH: &str = "deployers.landscaper.gardener.cloud/cluster-hash";

/// Why the access Secret could not be written.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// An API request failed: the server's message and code.
    #[error("{}", describe_kube_error(.0))]
    Api(#[from] kube::Error),
    /// The API server granted no token.
    #[error("the TokenRequest for ServiceAccount {0} returned no token")]
    NoToken(String),
}

/// What [`ensure`] found or did.
pub enum Access {
    /// The Secret is current; its token is renewed at this time.
    Current(Timestamp),
    /// A new token was written; it is renewed at this time.
    Renewed(Timestamp),
}

impl Access {
    /// When to look at the Secret again.
    pub fn renew_at(&self) -> Timestamp {
        match self {
            Access::Current(at) | Access::Renewed(at) => *at,
        }
    }
}

/// Keeps the pair's access Secret current; `existing` is the Secret's metadata as last seen.
pub async fn ensure(
    client: &kube::Client,
    pair: &Pair<'_>,
    existing: Option<&ObjectMeta>,
    lifetime: Duration,
    manager: &str,
) -> Result<Access, AccessError> {
    let cluster = &pair.environment.spec.landscaper_cluster_config;
    let cluster_hash = hash_of(&serde_json::to_value(cluster).unwrap_or_default());
    let now = Timestamp::now();
    if let Some(renew_at) = existing.and_then(|metadata| current_until(metadata, &cluster_hash))
        && renew_at > now
    {
        return Ok(Access::Current(renew_at));
    }
    let granted = request_token(client, pair, lifetime).await;
    crate::metrics::pair_token_renewed(granted.is_ok());
    let (token, expires) = granted?;
    let lifetime = expires.duration_since(now).max(SignedDuration::ZERO);
    let renew_at = now.checked_add(lifetime * 4 / 5).unwrap_or(expires);
    let user = format!("system:serviceaccount:{}:{}", pair.namespace, pair.name());
    let kubeconfig = cluster.kubeconfig_with_token(&user, &token);
    let metadata = ObjectMeta {
        name: Some(pair.access_secret_name()),
        namespace: Some(pair.namespace.to_owned()),
        labels: Some(pair.labels()),
        annotations: Some(BTreeMap::from([
            (RENEW_AT.to_owned(), renew_at.to_string()),
            (CLUSTER_HASH.to_owned(), cluster_hash),
        ])),
        ..Default::default()
    };
    let secret = Secret {
        metadata,
        data: Some(BTreeMap::from([(
            KUBECONFIG_KEY.to_owned(),
            ByteString(kubeconfig.into_bytes()),
        )])),
        type_: Some("Opaque".to_owned()),
        ..Secret::default()
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), pair.namespace);
    secrets
        .patch(
            &pair.access_secret_name(),
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&secret),
        )
        .await?;
    Ok(Access::Renewed(renew_at))
}

/// Until when the Secret of `metadata` holds a usable kubeconfig for the cluster of
/// `cluster_hash` (this controller writes the annotations together with the kubeconfig).
fn current_until(metadata: &ObjectMeta, cluster_hash: &str) -> Option<Timestamp> {
    let annotations = metadata.annotations.as_ref()?;
    if annotations.get(CLUSTER_HASH).map(String::as_str) != Some(cluster_hash) {
        return None;
    }
    annotations.get(RENEW_AT)?.parse().ok()
}

/// A token of the pair's ServiceAccount and when it expires.
async fn request_token(
    client: &kube::Client,
    pair: &Pair<'_>,
    lifetime: Duration,
) -> Result<(String, Timestamp), AccessError> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), pair.namespace);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX)),
            bound_object_ref: None,
        },
        ..TokenRequest::default()
    };
    let granted = accounts
        .create_token_request(pair.name(), &PostParams::default(), &request)
        .await?;
    match granted.status {
        Some(status) if !status.token.is_empty() => {
            Ok((status.token, status.expiration_timestamp.0))
        }
        _ => Err(AccessError::NoToken(format!(
            "{}/{}",
            pair.namespace,
            pair.name()
        ))),
    }
}
