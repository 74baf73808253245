//! What the kubeconfig functions need from outside the template: the kubeconfig of a Target,
//! and the credentials the clusters behind it issue. The controllers supply a resolver that
//! talks to the clusters; the command line, which has none, uses [`InlineOnly`].

use std::future::Future;
use std::pin::Pin;

use landscaper_api::core::Target;

/// A boxed future, as a resolver's methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A credential a cluster issued, and when it expires.
#[derive(Clone, Debug, PartialEq)]
pub struct Issued {
    /// The token (TokenRequest), or the base64 kubeconfig as delivered (AdminKubeconfigRequest).
    pub value: String,
    /// When the credential expires.
    pub expiration: jiff::Timestamp,
}

/// A request for a credential: whose, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialRequest<'a> {
    /// The kubeconfig of the cluster the request goes to.
    pub kubeconfig: &'a str,
    /// The namespace of the ServiceAccount or Shoot.
    pub namespace: &'a str,
    /// The name of the ServiceAccount or Shoot.
    pub name: &'a str,
    /// The lifetime asked for, in seconds.
    pub expiration_seconds: i64,
}

/// Resolves Targets to kubeconfigs and asks the clusters behind them for credentials.
/// Errors are messages that name what failed (the Target, the Secret, the object) and why.
pub trait TargetResolver: Send + Sync + std::fmt::Debug {
    /// The kubeconfig (YAML text) of `target`: its inline `spec.config.kubeconfig`, or the one
    /// in the Secret it references.
    fn kubeconfig<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<String, String>>;

    /// Creates a TokenRequest for the ServiceAccount `request.namespace/request.name` in the
    /// cluster of `request.kubeconfig`.
    fn service_account_token<'a>(
        &'a self,
        request: CredentialRequest<'a>,
    ) -> BoxFuture<'a, Result<Issued, String>>;

    /// Creates an `AdminKubeconfigRequest` on `shoots/adminkubeconfig` of the Shoot
    /// `request.namespace/request.name` in the garden cluster of `request.kubeconfig`.
    fn shoot_admin_kubeconfig<'a>(
        &'a self,
        request: CredentialRequest<'a>,
    ) -> BoxFuture<'a, Result<Issued, String>>;
}

/// The resolver of a place without clusters (`landscaper blueprint render`): a Target's
/// inline kubeconfig is read, so `getOidcKubeconfig` works; a Secret reference, a TokenRequest
/// or an AdminKubeconfigRequest fails, naming what would need a cluster.
#[derive(Clone, Copy, Debug, Default)]
pub struct InlineOnly;

impl TargetResolver for InlineOnly {
    fn kubeconfig<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move { inline_kubeconfig(target) })
    }

    fn service_account_token<'a>(
        &'a self,
        request: CredentialRequest<'a>,
    ) -> BoxFuture<'a, Result<Issued, String>> {
        let message = format!(
            "a TokenRequest for ServiceAccount {}/{} needs a cluster, and none is reachable here",
            request.namespace, request.name
        );
        Box::pin(async move { Err(message) })
    }

    fn shoot_admin_kubeconfig<'a>(
        &'a self,
        request: CredentialRequest<'a>,
    ) -> BoxFuture<'a, Result<Issued, String>> {
        let message = format!(
            "an AdminKubeconfigRequest for Shoot {}/{} needs a garden cluster, and none is reachable here",
            request.namespace, request.name
        );
        Box::pin(async move { Err(message) })
    }
}

/// `namespace/name` of a Target, as messages name it.
pub fn target_name(target: &Target) -> String {
    format!(
        "{}/{}",
        target.metadata.namespace.as_deref().unwrap_or_default(),
        target.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The kubeconfig a Target holds inline in `spec.config.kubeconfig`; any other form is an
/// error naming the field.
pub fn inline_kubeconfig(target: &Target) -> Result<String, String> {
    if let Some(secret) = &target.spec.secret_ref {
        return Err(format!(
            "spec.secretRef names Secret {:?}, which only a resolver with cluster access can read",
            secret.name
        ));
    }
    match target.spec.config.as_ref().and_then(|c| c.get("kubeconfig")) {
        Some(serde_json::Value::String(text)) => Ok(text.clone()),
        Some(serde_json::Value::Object(o)) if o.contains_key("secretRef") => Err(
            "spec.config.kubeconfig.secretRef names a Secret, which only a resolver with cluster access can read"
                .into(),
        ),
        _ => Err("spec.config contains no kubeconfig".into()),
    }
}
