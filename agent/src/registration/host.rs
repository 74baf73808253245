//! The deployer identity in the host cluster: namespace, ServiceAccount `deployer-<env>`, a
//! ClusterRole and ClusterRoleBinding of its own, and the kubeconfig Secret
//! `<env>-target-access` with a short-lived token of that ServiceAccount.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, PostParams};
use tracing::info;

use super::{RegistrationError, api_error, contains_all, owned_labels};
use crate::clients::{Endpoint, kubeconfig_matches, token_of_kubeconfig};
use crate::names::Names;
use crate::token::TokenLifetime;

/// The key of the kubeconfig in the target access Secret.
pub const KUBECONFIG_KEY: &str = "kubeconfig";

/// The host cluster side of one environment.
pub struct HostRegistration<'a> {
    /// Client of the host cluster (the agent's own identity).
    pub client: &'a kube::Client,
    /// How deployers reach the host cluster.
    pub endpoint: &'a Endpoint,
    /// Names of the environment's objects.
    pub names: &'a Names,
    /// The host namespace.
    pub namespace: &'a str,
    /// Requested lifetime of the deployer token.
    pub token_lifetime: Duration,
}

impl HostRegistration<'_> {
    /// Creates or repairs everything; returns the lifetime of the token now in the Secret.
    pub async fn ensure(&self) -> Result<TokenLifetime, RegistrationError> {
        self.ensure_namespace().await?;
        self.ensure_service_account().await?;
        self.ensure_cluster_role().await?;
        self.ensure_cluster_role_binding().await?;
        self.ensure_token_secret(false).await
    }

    /// The UID of the host namespace, which identifies this host cluster to the landscaper.
    pub async fn cluster_id(&self) -> Result<String, RegistrationError> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let namespace = namespaces.get(self.namespace).await.map_err(api_error(
            "reading",
            format!("Namespace {}", self.namespace),
        ))?;
        Ok(namespace.metadata.uid.unwrap_or_default())
    }

    /// Replaces the token in the Secret with a fresh one.
    pub async fn renew_token(&self) -> Result<TokenLifetime, RegistrationError> {
        self.ensure_token_secret(true).await
    }

    async fn ensure_namespace(&self) -> Result<(), RegistrationError> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let object = format!("Namespace {}", self.namespace);
        if namespaces
            .get_opt(self.namespace)
            .await
            .map_err(api_error("reading", object.clone()))?
            .is_none()
        {
            let namespace = Namespace {
                metadata: meta(self.namespace, None, self.names),
                ..Default::default()
            };
            namespaces
                .create(&PostParams::default(), &namespace)
                .await
                .map_err(api_error("creating", object.clone()))?;
            info!(object = %object, "created");
        }
        Ok(())
    }

    async fn ensure_service_account(&self) -> Result<(), RegistrationError> {
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client.clone(), self.namespace);
        let name = self.names.deployer_service_account();
        let object = format!("ServiceAccount {}/{name}", self.namespace);
        let desired = ServiceAccount {
            metadata: meta(&name, Some(self.namespace), self.names),
            ..Default::default()
        };
        match accounts
            .get_opt(&name)
            .await
            .map_err(api_error("reading", object.clone()))?
        {
            None => {
                accounts
                    .create(&PostParams::default(), &desired)
                    .await
                    .map_err(api_error("creating", object.clone()))?;
                info!(object = %object, "created");
            }
            Some(existing)
                if contains_all(
                    &existing.metadata.labels,
                    &owned_labels(&self.names.environment),
                ) => {}
            Some(mut existing) => {
                existing
                    .metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .extend(owned_labels(&self.names.environment));
                accounts
                    .replace(&name, &PostParams::default(), &existing)
                    .await
                    .map_err(api_error("updating", object.clone()))?;
                info!(object = %object, "updated its labels");
            }
        }
        Ok(())
    }

    /// Deployers install arbitrary charts, so the deployer identity may do anything in the
    /// host cluster; it is still its own identity, bound by its own ClusterRole, so it can be
    /// audited and revoked per environment.
    fn desired_cluster_role(&self) -> ClusterRole {
        ClusterRole {
            metadata: meta(&self.names.deployer_cluster_role(), None, self.names),
            rules: Some(vec![
                PolicyRule {
                    api_groups: Some(vec!["*".into()]),
                    resources: Some(vec!["*".into()]),
                    verbs: vec!["*".into()],
                    ..Default::default()
                },
                PolicyRule {
                    non_resource_urls: Some(vec!["*".into()]),
                    verbs: vec!["*".into()],
                    ..Default::default()
                },
            ]),
            aggregation_rule: None,
        }
    }

    async fn ensure_cluster_role(&self) -> Result<(), RegistrationError> {
        let roles: Api<ClusterRole> = Api::all(self.client.clone());
        let desired = self.desired_cluster_role();
        let name = self.names.deployer_cluster_role();
        let object = format!("ClusterRole {name}");
        match roles
            .get_opt(&name)
            .await
            .map_err(api_error("reading", object.clone()))?
        {
            None => {
                roles
                    .create(&PostParams::default(), &desired)
                    .await
                    .map_err(api_error("creating", object.clone()))?;
                info!(object = %object, "created");
            }
            Some(existing)
                if existing.rules == desired.rules
                    && contains_all(
                        &existing.metadata.labels,
                        &owned_labels(&self.names.environment),
                    ) => {}
            Some(mut existing) => {
                existing.rules = desired.rules;
                existing
                    .metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .extend(owned_labels(&self.names.environment));
                roles
                    .replace(&name, &PostParams::default(), &existing)
                    .await
                    .map_err(api_error("updating", object.clone()))?;
                info!(object = %object, "updated");
            }
        }
        Ok(())
    }

    async fn ensure_cluster_role_binding(&self) -> Result<(), RegistrationError> {
        let bindings: Api<ClusterRoleBinding> = Api::all(self.client.clone());
        let name = self.names.deployer_cluster_role();
        let object = format!("ClusterRoleBinding {name}");
        let role_ref = RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: name.clone(),
        };
        let subjects = Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: self.names.deployer_service_account(),
            namespace: Some(self.namespace.to_owned()),
            api_group: None,
        }]);
        match bindings
            .get_opt(&name)
            .await
            .map_err(api_error("reading", object.clone()))?
        {
            None => {
                let binding = ClusterRoleBinding {
                    metadata: meta(&name, None, self.names),
                    role_ref,
                    subjects,
                };
                bindings
                    .create(&PostParams::default(), &binding)
                    .await
                    .map_err(api_error("creating", object.clone()))?;
                info!(object = %object, "created");
            }
            Some(existing) if existing.role_ref == role_ref && existing.subjects == subjects => {}
            Some(existing) => {
                // roleRef is immutable: replace the binding as a whole.
                bindings
                    .delete(&name, &DeleteParams::default())
                    .await
                    .map_err(api_error("deleting", object.clone()))?;
                let binding = ClusterRoleBinding {
                    metadata: meta(&name, None, self.names),
                    role_ref,
                    subjects,
                };
                bindings
                    .create(&PostParams::default(), &binding)
                    .await
                    .map_err(api_error("recreating", object.clone()))?;
                info!(object = %object, previous_role = %existing.role_ref.name, "recreated");
            }
        }
        Ok(())
    }

    async fn ensure_token_secret(
        &self,
        force_renew: bool,
    ) -> Result<TokenLifetime, RegistrationError> {
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), self.namespace);
        let name = self.names.target_access_secret();
        let object = format!("Secret {}/{name}", self.namespace);
        let user = self.names.deployer_service_account();
        let existing = secrets
            .get_opt(&name)
            .await
            .map_err(api_error("reading", object.clone()))?;
        let current = existing
            .as_ref()
            .and_then(|secret| self.current_token(secret, &user));
        if let Some(lifetime) = current.filter(|_| !force_renew) {
            return Ok(lifetime);
        }
        let token = self.request_token().await?;
        let lifetime = TokenLifetime::of(&token).ok_or_else(|| RegistrationError::NoToken {
            object: format!("{}/{user}", self.namespace),
        })?;
        let kubeconfig = self.endpoint.kubeconfig_with_token(&user, &token);
        let data = [(
            KUBECONFIG_KEY.to_owned(),
            ByteString(kubeconfig.into_bytes()),
        )]
        .into();
        match existing {
            None => {
                let secret = Secret {
                    metadata: meta(&name, Some(self.namespace), self.names),
                    data: Some(data),
                    type_: Some("Opaque".into()),
                    ..Default::default()
                };
                secrets
                    .create(&PostParams::default(), &secret)
                    .await
                    .map_err(api_error("creating", object.clone()))?;
                info!(object = %object, expires = %lifetime.expires, "created with a fresh deployer token");
            }
            Some(mut secret) => {
                secret.data = Some(data);
                secret
                    .metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .extend(owned_labels(&self.names.environment));
                secrets
                    .replace(&name, &PostParams::default(), &secret)
                    .await
                    .map_err(api_error("updating", object.clone()))?;
                info!(object = %object, expires = %lifetime.expires, "renewed the deployer token");
            }
        }
        Ok(lifetime)
    }

    /// The lifetime of the token in the Secret, if the Secret is right and the token is not due
    /// for renewal.
    fn current_token(&self, secret: &Secret, user: &str) -> Option<TokenLifetime> {
        let kubeconfig = std::str::from_utf8(&secret.data.as_ref()?.get(KUBECONFIG_KEY)?.0).ok()?;
        if !kubeconfig_matches(kubeconfig, self.endpoint, user) {
            return None;
        }
        let lifetime = TokenLifetime::of(&token_of_kubeconfig(kubeconfig)?)?;
        (Timestamp::now() < lifetime.renew_at()).then_some(lifetime)
    }

    async fn request_token(&self) -> Result<String, RegistrationError> {
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client.clone(), self.namespace);
        let name = self.names.deployer_service_account();
        let object = format!("{}/{name}", self.namespace);
        let request = TokenRequest {
            spec: TokenRequestSpec {
                expiration_seconds: Some(
                    i64::try_from(self.token_lifetime.as_secs()).unwrap_or(i64::MAX),
                ),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = accounts
            .create_token_request(&name, &PostParams::default(), &request)
            .await
            .map_err(api_error(
                "requesting a token for ServiceAccount",
                object.clone(),
            ))?;
        answer
            .status
            .map(|s| s.token)
            .filter(|t| !t.is_empty())
            .ok_or(RegistrationError::NoToken { object })
    }

    /// Deletes the deployer identity and its Secret; objects already gone are fine.
    pub async fn remove(&self) -> Result<(), RegistrationError> {
        let name = self.names.deployer_cluster_role();
        delete(
            &Api::<ClusterRoleBinding>::all(self.client.clone()),
            &name,
            format!("ClusterRoleBinding {name}"),
        )
        .await?;
        delete(
            &Api::<ClusterRole>::all(self.client.clone()),
            &name,
            format!("ClusterRole {name}"),
        )
        .await?;
        let secret = self.names.target_access_secret();
        delete(
            &Api::<Secret>::namespaced(self.client.clone(), self.namespace),
            &secret,
            format!("Secret {}/{secret}", self.namespace),
        )
        .await?;
        let account = self.names.deployer_service_account();
        delete(
            &Api::<ServiceAccount>::namespaced(self.client.clone(), self.namespace),
            &account,
            format!("ServiceAccount {}/{account}", self.namespace),
        )
        .await
    }
}

async fn delete<K>(api: &Api<K>, name: &str, object: String) -> Result<(), RegistrationError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {
            info!(object = %object, "deleted");
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(RegistrationError::Api {
            action: "deleting",
            object,
            source,
        }),
    }
}

fn meta(name: &str, namespace: Option<&str>, names: &Names) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some(owned_labels(&names.environment)),
        ..Default::default()
    }
}
