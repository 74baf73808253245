//! The installation controller's [`TargetResolver`]: the kubeconfig functions of an
//! installation's templates read a Target's kubeconfig (inline, or from a Secret in the
//! installation's namespace) and ask the cluster behind it for a ServiceAccount token or a
//! Gardener shoot's admin kubeconfig.
//!
//! Secrets are read only in the installation's own namespace: a template builds the Target it
//! passes, so a Target naming another namespace would let it read any Secret the landscaper
//! can read. Kubeconfigs that run commands or read local files are refused, as the deployers
//! refuse them.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use landscaper_api::core::{SecretReference, Target};
use landscaper_blueprint::kubeconfig::{BoxFuture, CredentialRequest, Issued, TargetResolver};
use landscaper_deployer::client_config::with_read_timeout;
use landscaper_deployer::target_access::{DEFAULT_SECRET_KEY, check_kubeconfig};
use serde_json::{Value as Json, json};
use tracing::debug;

/// How long a template waits for a target cluster's answer: it holds an installation worker.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Gardener's Shoot resource, whose `adminkubeconfig` subresource issues admin kubeconfigs.
fn shoots() -> ApiResource {
    ApiResource {
        group: "core.gardener.cloud".into(),
        version: "v1beta1".into(),
        api_version: "core.gardener.cloud/v1beta1".into(),
        kind: "Shoot".into(),
        plural: "shoots".into(),
    }
}

/// Resolves the Targets of one installation's templates.
#[derive(Clone)]
pub struct ClusterTargets {
    /// The landscaper cluster, where Targets' Secrets are.
    client: kube::Client,
    /// The installation's namespace: the only one Secrets are read from.
    namespace: String,
}

impl std::fmt::Debug for ClusterTargets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterTargets")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl ClusterTargets {
    /// Resolves Targets of installations in `namespace`, reading Secrets with `client`.
    pub fn new(client: kube::Client, namespace: impl Into<String>) -> Self {
        Self {
            client,
            namespace: namespace.into(),
        }
    }

    /// `namespace` when it names another namespace than the installation's (an unset or empty
    /// one means the installation's).
    fn elsewhere<'a>(&self, namespace: Option<&'a str>) -> Option<&'a str> {
        namespace.filter(|ns| !ns.is_empty() && *ns != self.namespace)
    }

    async fn resolve(&self, target: &Target) -> Result<String, String> {
        if let Some(other) = self.elsewhere(target.metadata.namespace.as_deref()) {
            return Err(format!(
                "the Target is in namespace {other}, not in the installation's namespace {}",
                self.namespace
            ));
        }
        if let Some(reference) = &target.spec.secret_ref {
            let content = self.secret_value(reference, "spec.secretRef").await?;
            return Ok(kubeconfig_of_content(&content));
        }
        match target
            .spec
            .config
            .as_ref()
            .and_then(|c| c.get("kubeconfig"))
        {
            Some(Json::String(text)) => Ok(text.clone()),
            Some(Json::Object(o)) if o.contains_key("secretRef") => {
                let reference: SecretReference = serde_json::from_value(o["secretRef"].clone())
                    .map_err(|e| format!("spec.config.kubeconfig.secretRef: {e}"))?;
                self.secret_value(&reference, "spec.config.kubeconfig.secretRef")
                    .await
            }
            _ => Err("spec.config contains no kubeconfig".into()),
        }
    }

    async fn secret_value(
        &self,
        reference: &SecretReference,
        field: &str,
    ) -> Result<String, String> {
        if let Some(other) = self.elsewhere(reference.namespace.as_deref()) {
            return Err(format!(
                "{field} names a Secret in namespace {other}; only Secrets in the installation's namespace {} are read",
                self.namespace
            ));
        }
        let key = reference.key.as_deref().unwrap_or(DEFAULT_SECRET_KEY);
        let what = format!("{field}: Secret {}/{}", self.namespace, reference.name);
        let api: Api<Secret> = Api::namespaced(self.client.clone(), &self.namespace);
        let secret = api
            .get_opt(&reference.name)
            .await
            .map_err(|e| format!("{what}: {}", describe(&e)))?
            .ok_or_else(|| format!("{what} not found"))?;
        let data = secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .ok_or_else(|| format!("{what} has no key {key:?}"))?;
        String::from_utf8(data.0.clone()).map_err(|_| format!("{what}: key {key:?} is not text"))
    }
}

impl TargetResolver for ClusterTargets {
    fn kubeconfig<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(self.resolve(target))
    }

    fn service_account_token<'a>(
        &'a self,
        request: CredentialRequest<'a>,
    ) -> BoxFuture<'a, Result<Issued, String>> {
        Box::pin(async move {
            let client = client(request.kubeconfig).await?;
            let api: Api<ServiceAccount> = Api::namespaced(client, request.namespace);
            let body = TokenRequest {
                spec: TokenRequestSpec {
                    expiration_seconds: Some(request.expiration_seconds),
                    ..Default::default()
                },
                ..Default::default()
            };
            debug!(
                service_account = request.name,
                namespace = request.namespace,
                expiration_seconds = request.expiration_seconds,
                "template function requests a ServiceAccount token"
            );
            let what = format!("ServiceAccount {}/{}", request.namespace, request.name);
            let answer = api
                .create_token_request(request.name, &PostParams::default(), &body)
                .await
                .map_err(|e| format!("{what}: {}", describe(&e)))?;
            let status = answer
                .status
                .ok_or_else(|| format!("{what}: the TokenRequest came back without status"))?;
            Ok(Issued {
                value: status.token,
                expiration: status.expiration_timestamp.0,
            })
        })
    }

    fn shoot_admin_kubeconfig<'a>(
        &'a self,
        request: CredentialRequest<'a>,
    ) -> BoxFuture<'a, Result<Issued, String>> {
        Box::pin(async move {
            let client = client(request.kubeconfig).await?;
            let api: Api<DynamicObject> =
                Api::namespaced_with(client, request.namespace, &shoots());
            let body = json!({
                "apiVersion": "authentication.gardener.cloud/v1alpha1",
                "kind": "AdminKubeconfigRequest",
                "metadata": {"name": request.name, "namespace": request.namespace},
                "spec": {"expirationSeconds": request.expiration_seconds},
            });
            debug!(
                shoot = request.name,
                namespace = request.namespace,
                expiration_seconds = request.expiration_seconds,
                "template function requests a shoot's admin kubeconfig"
            );
            let what = format!("Shoot {}/{}", request.namespace, request.name);
            let answer: Json = api
                .create_subresource(
                    "adminkubeconfig",
                    request.name,
                    &PostParams::default(),
                    &body,
                )
                .await
                .map_err(|e| format!("{what}: {}", describe(&e)))?;
            let status = &answer["status"];
            let kubeconfig = status["kubeconfig"]
                .as_str()
                .ok_or_else(|| format!("{what}: the answer has no status.kubeconfig"))?;
            let expiration = status["expirationTimestamp"]
                .as_str()
                .ok_or_else(|| format!("{what}: the answer has no status.expirationTimestamp"))?;
            let expiration = expiration
                .parse::<jiff::Timestamp>()
                .map_err(|e| format!("{what}: status.expirationTimestamp {expiration:?}: {e}"))?;
            Ok(Issued {
                value: kubeconfig.to_string(),
                expiration,
            })
        })
    }
}

/// A Secret's content is a target configuration (`kubeconfig: …`) or a kubeconfig itself.
fn kubeconfig_of_content(content: &str) -> String {
    match landscaper_blueprint::values::parse_yaml(content) {
        Ok(Json::Object(map)) => match map.get("kubeconfig") {
            Some(Json::String(text)) => text.clone(),
            _ => content.to_string(),
        },
        _ => content.to_string(),
    }
}

/// A client for the cluster of `kubeconfig`, whose requests wait at most [`REQUEST_TIMEOUT`].
async fn client(kubeconfig: &str) -> Result<kube::Client, String> {
    let parsed =
        Kubeconfig::from_yaml(kubeconfig).map_err(|e| format!("invalid kubeconfig: {e}"))?;
    check_kubeconfig(&parsed).map_err(|e| format!("refused kubeconfig: {e}"))?;
    let mut config = kube::Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("invalid kubeconfig: {e}"))?;
    config.connect_timeout = Some(REQUEST_TIMEOUT);
    kube::Client::try_from(with_read_timeout(config, REQUEST_TIMEOUT))
        .map_err(|e| format!("client: {e}"))
}

/// What a failed request says: the API server's code and message, or why it was not answered.
fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => {
            format!("{} {}: {}", status.code, status.reason, status.message)
        }
        other => format!("the cluster is not reachable: {other}"),
    }
}
