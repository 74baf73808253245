//! Agents as they run in production: in the fenced cluster the ServiceAccount and RBAC the
//! agent chart renders, in the landscaper cluster the RBAC documented in
//! `examples/landscaper-cluster-rbac-for-agent.yaml`; never a cluster admin.

use std::path::PathBuf;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use landscaper_agent::Agent;
use serde_json::Value;

use crate::{LS_NAMESPACE, World};

/// The namespace the agent chart is installed into in the fenced cluster.
pub const AGENT_NAMESPACE: &str = "agent-system";

/// An agent with production RBAC, and the user names it acts as.
pub struct ProductionAgent {
    /// The agent, not started.
    pub agent: Agent,
    /// A kubeconfig of the fenced cluster as the agent's ServiceAccount (for
    /// `landscaper-agent run --kubeconfig`).
    pub host_kubeconfig: PathBuf,
    /// A kubeconfig of the landscaper cluster as the documented ServiceAccount.
    pub landscaper_kubeconfig: PathBuf,
    /// Its user in the fenced cluster: the chart's ServiceAccount.
    pub host_user: String,
    /// Its user in the landscaper cluster: the documented ServiceAccount.
    pub landscaper_user: String,
}

/// The agent chart in this repository.
pub fn agent_chart_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../charts/landscaper-agent")
}

/// Renders the agent chart with our engine, as
/// `helm template RELEASE charts/landscaper-agent -n NAMESPACE --set …`.
pub fn render_agent_chart(release: &str, namespace: &str, sets: &[&str]) -> String {
    let values = crate::charts::ValuesInput { files: &[], sets };
    crate::charts::render_chart(&agent_chart_dir(), release, namespace, values)
        .unwrap_or_else(|e| panic!("the agent chart renders: {e}"))
}

/// The YAML documents of `text` as JSON values.
pub fn documents(text: &str) -> Vec<Value> {
    landscaper_api::decode::yaml_documents(text, "test manifests").expect("valid YAML documents")
}

/// Creates `documents` as the client's user; namespaced ones without a namespace go to
/// `default_namespace`.
pub async fn create_all(client: &kube::Client, documents: &[Value], default_namespace: &str) {
    for document in documents {
        let object: DynamicObject =
            serde_json::from_value(document.clone()).expect("a Kubernetes object");
        let types = object.types.as_ref().expect("apiVersion and kind");
        let gvk = GroupVersionKind::try_from(types).expect("a valid apiVersion");
        let (resource, capabilities) = pinned_kind(client, &gvk).await.expect("a served kind");
        let api: Api<DynamicObject> = match capabilities.scope {
            Scope::Namespaced => Api::namespaced_with(
                client.clone(),
                object
                    .metadata
                    .namespace
                    .as_deref()
                    .unwrap_or(default_namespace),
                &resource,
            ),
            Scope::Cluster => Api::all_with(client.clone(), &resource),
        };
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("creating {} {:?}: {e}", types.kind, object.metadata.name));
    }
}

/// Creates the ServiceAccount, ClusterRole and ClusterRoleBinding the agent chart renders
/// (release `release` in `namespace`, with `sets`) as the admin; returns the ServiceAccount's
/// name.
pub async fn install_agent_chart_rbac(
    admin: &kube::Client,
    release: &str,
    namespace: &str,
    sets: &[&str],
) -> String {
    let rbac: Vec<Value> = documents(&render_agent_chart(release, namespace, sets))
        .into_iter()
        .filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some("ServiceAccount" | "ClusterRole" | "ClusterRoleBinding")
            )
        })
        .collect();
    create_all(admin, &rbac, namespace).await;
    rbac.iter()
        .find(|d| d["kind"] == "ServiceAccount")
        .and_then(|d| d["metadata"]["name"].as_str())
        .expect("the chart creates a ServiceAccount")
        .to_owned()
}

/// A short-lived token of a ServiceAccount, made by the admin.
pub async fn service_account_token(client: &kube::Client, namespace: &str, name: &str) -> String {
    let request: TokenRequest =
        serde_json::from_value(serde_json::json!({ "spec": { "expirationSeconds": 3600 } }))
            .expect("token request");
    Api::<ServiceAccount>::namespaced(client.clone(), namespace)
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .expect("a token")
        .status
        .expect("token status")
        .token
}

/// The documented landscaper-cluster RBAC for the agent of `environment` (the example is
/// written for `default`; its comment says to replace that name).
pub fn documented_landscaper_rbac(environment: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/landscaper-cluster-rbac-for-agent.yaml");
    std::fs::read_to_string(path)
        .expect("the documented RBAC")
        .replace("agent-default", &format!("agent-{environment}"))
        .replace(
            "landscaper:agent:default",
            &format!("landscaper:agent:{environment}"),
        )
        .replace(
            "resourceNames: [default]",
            &format!("resourceNames: [{environment}]"),
        )
}

impl World {
    /// The agent of `environment` as deployed in production: the agent chart's ServiceAccount
    /// and RBAC in the fenced cluster (release `environment` in [`AGENT_NAMESPACE`]) and the
    /// documented RBAC in the landscaper cluster, each reached with a token of its
    /// ServiceAccount.
    pub async fn production_agent(&self, environment: &str) -> ProductionAgent {
        let fenced = self.fenced_cluster().client();
        self.create_namespace(self.fenced_cluster(), AGENT_NAMESPACE)
            .await;
        let name_set = format!("agent.name={environment}");
        let account = install_agent_chart_rbac(
            &fenced,
            environment,
            AGENT_NAMESPACE,
            &[
                "agent.landscaperClusterKubeconfig.secretRef.name=landscaper-kubeconfig",
                &name_set,
            ],
        )
        .await;
        let host_token = service_account_token(&fenced, AGENT_NAMESPACE, &account).await;

        let landscaper = self.landscaper_cluster().client();
        create_all(
            &landscaper,
            &documents(&documented_landscaper_rbac(environment)),
            LS_NAMESPACE,
        )
        .await;
        let landscaper_account = format!("agent-{environment}");
        let landscaper_token =
            service_account_token(&landscaper, LS_NAMESPACE, &landscaper_account).await;

        let settings = self.agent_settings_with_token(environment, &landscaper_token);
        let landscaper_kubeconfig = settings.landscaper_kubeconfig.clone();
        ProductionAgent {
            agent: self.agent_with_host_token(settings, &host_token).await,
            host_kubeconfig: self.kubeconfig_file(self.fenced_cluster(), Some(&host_token)),
            landscaper_kubeconfig,
            host_user: format!("system:serviceaccount:{AGENT_NAMESPACE}:{account}"),
            landscaper_user: format!("system:serviceaccount:{LS_NAMESPACE}:{landscaper_account}"),
        }
    }
}
