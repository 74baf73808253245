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
use kube::api::{Api, PostParams};
use tracing::info;

use super::object::{self, Repair, Stored, add_owned_labels};
use super::{RegistrationError, api_error, owned_labels};
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
            object::describe(&namespaces, self.namespace),
        ))?;
        Ok(namespace.metadata.uid.unwrap_or_default())
    }

    /// Replaces the token in the Secret with a fresh one.
    pub async fn renew_token(&self) -> Result<TokenLifetime, RegistrationError> {
        self.ensure_token_secret(true).await
    }

    async fn ensure_namespace(&self) -> Result<(), RegistrationError> {
        let desired = Namespace {
            metadata: meta(self.namespace, None, self.names),
            ..Default::default()
        };
        // A namespace that exists may not be the agent's own: it is left as it is.
        let keep = |existing, _| Ok(Repair::Keep(existing));
        let namespaces = Api::all(self.client.clone());
        object::ensure(&namespaces, self.namespace, desired, keep).await?;
        Ok(())
    }

    async fn ensure_service_account(&self) -> Result<(), RegistrationError> {
        let name = self.names.deployer_service_account();
        let desired = ServiceAccount {
            metadata: meta(&name, Some(self.namespace), self.names),
            ..Default::default()
        };
        let repair = |mut existing: ServiceAccount, _| {
            let unlabelled = add_owned_labels(&mut existing.metadata, &self.names.environment);
            Ok(Repair::replace_if(unlabelled, existing))
        };
        let accounts = Api::namespaced(self.client.clone(), self.namespace);
        object::ensure(&accounts, &name, desired, repair).await?;
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
        let name = self.names.deployer_cluster_role();
        let repair = |mut existing: ClusterRole, desired: ClusterRole| {
            let stale = existing.rules != desired.rules;
            existing.rules = desired.rules;
            let unlabelled = add_owned_labels(&mut existing.metadata, &self.names.environment);
            Ok(Repair::replace_if(stale || unlabelled, existing))
        };
        let roles = Api::all(self.client.clone());
        let desired = self.desired_cluster_role();
        object::ensure(&roles, &name, desired, repair).await?;
        Ok(())
    }

    async fn ensure_cluster_role_binding(&self) -> Result<(), RegistrationError> {
        let name = self.names.deployer_cluster_role();
        let desired = ClusterRoleBinding {
            metadata: meta(&name, None, self.names),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: name.clone(),
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".into(),
                name: self.names.deployer_service_account(),
                namespace: Some(self.namespace.to_owned()),
                api_group: None,
            }]),
        };
        // roleRef is immutable: a binding that differs is replaced as a whole.
        let repair = |existing: ClusterRoleBinding, desired: ClusterRoleBinding| {
            let same =
                existing.role_ref == desired.role_ref && existing.subjects == desired.subjects;
            Ok(if same {
                Repair::Keep(existing)
            } else {
                Repair::Recreate(desired)
            })
        };
        let bindings = Api::all(self.client.clone());
        object::ensure(&bindings, &name, desired, repair).await?;
        Ok(())
    }

    async fn ensure_token_secret(
        &self,
        force_renew: bool,
    ) -> Result<TokenLifetime, RegistrationError> {
        let secrets = Api::namespaced(self.client.clone(), self.namespace);
        let name = self.names.target_access_secret();
        let user = self.names.deployer_service_account();
        let stored = Stored::read(&secrets, &name).await?;
        let current = stored
            .found()
            .and_then(|secret| self.current_token(secret, &user));
        if let Some(lifetime) = current.filter(|_| !force_renew) {
            return Ok(lifetime);
        }
        let token = self.request_token().await;
        crate::token::renewed(token.is_ok());
        let token = token?;
        let lifetime = TokenLifetime::of(&token).ok_or_else(|| RegistrationError::NoToken {
            object: format!("{}/{user}", self.namespace),
        })?;
        let kubeconfig = self.endpoint.kubeconfig_with_token(&user, &token);
        let desired = Secret {
            metadata: meta(&name, Some(self.namespace), self.names),
            data: Some(
                [(
                    KUBECONFIG_KEY.to_owned(),
                    ByteString(kubeconfig.into_bytes()),
                )]
                .into(),
            ),
            type_: Some("Opaque".into()),
            ..Default::default()
        };
        stored
            .ensure(desired, |mut existing, desired| {
                existing.data = desired.data;
                add_owned_labels(&mut existing.metadata, &self.names.environment);
                Ok(Repair::Replace(existing))
            })
            .await?;
        info!(secret = %name, expires = %lifetime.expires, "issued a fresh deployer token");
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
        let role = self.names.deployer_cluster_role();
        let client = || self.client.clone();
        object::delete(&Api::<ClusterRoleBinding>::all(client()), &role).await?;
        object::delete(&Api::<ClusterRole>::all(client()), &role).await?;
        let secrets = Api::<Secret>::namespaced(client(), self.namespace);
        object::delete(&secrets, &self.names.target_access_secret()).await?;
        let accounts = Api::<ServiceAccount>::namespaced(client(), self.namespace);
        object::delete(&accounts, &self.names.deployer_service_account()).await
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

#[cfg(test)]
mod tests {
    use testbed::Testbed;

    use super::*;

    #[tokio::test]
    async fn drifted_identity_is_repaired_and_a_right_one_is_not_written() {
        let testbed = Testbed::start().await.unwrap();
        let cluster = testbed.cluster();
        let client = cluster.client();
        let endpoint = Endpoint {
            server: cluster.url(),
            ca_pem: Some(cluster.ca_pem().to_owned()),
            insecure: false,
            tls_server_name: None,
        };
        let names = Names::new("drift");
        let host = HostRegistration {
            client: &client,
            endpoint: &endpoint,
            names: &names,
            namespace: "ls-system",
            token_lifetime: Duration::from_secs(3600),
        };
        host.ensure().await.unwrap();
        cluster.reset_requests();
        host.ensure().await.unwrap();
        assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());

        let post = PostParams::default();
        let accounts = Api::<ServiceAccount>::namespaced(client.clone(), "ls-system");
        let mut account = accounts
            .get(&names.deployer_service_account())
            .await
            .unwrap();
        account.metadata.labels = None;
        accounts
            .replace(&names.deployer_service_account(), &post, &account)
            .await
            .unwrap();
        let role_name = names.deployer_cluster_role();
        let roles = Api::<ClusterRole>::all(client.clone());
        let mut role = roles.get(&role_name).await.unwrap();
        role.rules = None;
        roles.replace(&role_name, &post, &role).await.unwrap();
        let bindings = Api::<ClusterRoleBinding>::all(client.clone());
        let mut binding = bindings.get(&role_name).await.unwrap();
        let before = binding.metadata.uid.clone();
        binding.subjects = None;
        bindings.replace(&role_name, &post, &binding).await.unwrap();

        host.ensure().await.unwrap();

        let account = accounts
            .get(&names.deployer_service_account())
            .await
            .unwrap();
        assert_eq!(account.metadata.labels, Some(owned_labels("drift")));
        let role = roles.get(&role_name).await.unwrap();
        assert_eq!(role.rules, host.desired_cluster_role().rules);
        let binding = bindings.get(&role_name).await.unwrap();
        assert_ne!(binding.metadata.uid, before, "recreated, not updated");
        assert_eq!(binding.subjects.unwrap()[0].name, "deployer-drift");
    }
}
