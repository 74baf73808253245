//! Well-known names of the Landscaper API: groups, finalizers, annotations, labels and types.
//!
//! These strings are part of the wire contract with upstream Landscaper; they live here only.

/// The domain every Landscaper name is built from.
pub const LANDSCAPER_DOMAIN: &str = "landscaper.gardener.cloud";
/// The API group of the core Landscaper kinds.
pub const GROUP: &str = "landscaper.gardener.cloud";
/// The version of the core Landscaper kinds.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of the core Landscaper kinds.
pub const API_VERSION: &str = "landscaper.gardener.cloud/v1alpha1";
/// `apiVersion` of the configuration kinds.
pub const CONFIG_API_VERSION: &str = "config.landscaper.gardener.cloud/v1alpha1";
/// `apiVersion` of the helm deployer's provider configuration and status.
pub const HELM_API_VERSION: &str = "helm.deployer.landscaper.gardener.cloud/v1alpha1";
/// `apiVersion` of the manifest deployer's provider configuration and status.
pub const MANIFEST_API_VERSION: &str = "manifest.deployer.landscaper.gardener.cloud/v1alpha2";
/// `apiVersion` of the mock deployer's provider configuration.
pub const MOCK_API_VERSION: &str = "mock.deployer.landscaper.gardener.cloud/v1alpha1";

/// Finalizers.
pub mod finalizers {
    /// Set by the landscaper and by deployers on the objects they reconcile.
    pub const LANDSCAPER: &str = "finalizer.landscaper.gardener.cloud";
    /// Set on an Environment by the landscaper's deployer management.
    pub const DEPLOYER_MANAGEMENT: &str = "finalizer.deployermanagement.landscaper.gardener.cloud";
    /// Set on an Environment by the agent that registered it.
    pub const AGENT: &str = "finalizer.agent.landscaper.gardener.cloud";
}

/// Annotations.
pub mod annotations {
    /// Requests an operation on an object; see [`crate::core::Operation`].
    pub const OPERATION: &str = "landscaper.gardener.cloud/operation";
    /// Deletes an object without uninstalling what it deployed.
    pub const DELETE_WITHOUT_UNINSTALL: &str = "landscaper.gardener.cloud/delete-without-uninstall";
    /// Deletes an installation even when others still depend on it.
    pub const DELETE_IGNORE_SUCCESSORS: &str = "landscaper.gardener.cloud/delete-ignore-successors";
    /// Why a reconcile was requested (for example a retry).
    pub const RECONCILE_REASON: &str = "landscaper.gardener.cloud/reconcile-reason";
    /// Reconciles an installation automatically when its spec changed.
    pub const RECONCILE_IF_CHANGED: &str = "landscaper.gardener.cloud/reconcile-if-changed";
    /// When a deploy item's reconcile started; used to detect timeouts.
    pub const RECONCILE_TIME: &str = "landscaper.gardener.cloud/reconcile-time";
    /// Stops reconciliation of an object while it is `"true"`.
    pub const IGNORE: &str = "landscaper.gardener.cloud/ignore";
    /// Triggers a reconcile event without other meaning.
    pub const TOUCH: &str = "landscaper.gardener.cloud/touch";
    /// Requests rotation of a token.
    pub const ROTATE_TOKEN: &str = "landscaper.gardener.cloud/rotate-token";
    /// Caches the helm charts of an installation.
    pub const CACHE_HELM_CHARTS: &str = "landscaper.gardener.cloud/cache-helm-charts";
    /// The deployer type a target or installation is meant for.
    pub const DEPLOYER_TYPE: &str = "landscaper.gardener.cloud/deployer-type";
    /// The target a deployer is installed for.
    pub const DEPLOYER_TARGET_NAME: &str = "landscaper.gardener.cloud/deployer-target-name";
    /// The environment a Target belongs to; the default target selector of an agent matches it.
    pub const ENVIRONMENT: &str = "landscaper.gardener.cloud/environment";
    /// Marks a target that is used to deploy deployers only.
    pub const DEPLOYER_ONLY: &str = "landscaper.gardener.cloud/deployer-only";
    /// On an agent's Environment: the namespace of the agent's heartbeat Lease in the
    /// landscaper cluster (the agent's `landscaperNamespace`), where the landscaper reads it
    /// whatever its own deployer management namespace is. Additive: upstream defines no such
    /// annotation.
    pub const HEARTBEAT_LEASE_NAMESPACE: &str =
        "agent.landscaper.gardener.cloud/heartbeat-lease-namespace";
    /// On an agent's Environment: the namespaces of the landscaper cluster whose helm
    /// DeployItems the agent's embedded helm deployer serves (its `deployItemNamespaces`),
    /// comma-separated; a registered helm deployer in that environment leaves them alone.
    /// Additive: upstream defines no such annotation.
    pub const AGENT_DEPLOY_ITEM_NAMESPACES: &str =
        "agent.landscaper.gardener.cloud/deploy-item-namespaces";
    /// Keeps the landscaper's internal deployer away from an installation.
    pub const NOT_INTERNAL: &str = "landscaper.gardener.cloud/not-internal";
    /// Pauses continuous reconcile of a deploy item while it is `"false"`.
    pub const CONTINUOUS_RECONCILE_ACTIVE: &str =
        "continuousreconcile.extensions.landscaper.gardener.cloud/active";
}

/// Labels.
pub mod labels {
    /// Names the landscaper component (landscaper, a deployer) an object belongs to.
    pub const COMPONENT: &str = "landscaper.gardener.cloud/component";
    /// The DeployerRegistration an object was created for.
    pub const DEPLOYER_REGISTRATION: &str =
        "deployers.landscaper.gardener.cloud/deployer-registration";
    /// The Environment an object was created for.
    pub const DEPLOYER_ENVIRONMENT: &str = "deployers.landscaper.gardener.cloud/environment";
    /// The context of a DataObject or Target.
    pub const DATA_CONTEXT: &str = "data.landscaper.gardener.cloud/context";
    /// The key of a DataObject or Target.
    pub const DATA_KEY: &str = "data.landscaper.gardener.cloud/key";
    /// The list index of a Target in a target list.
    pub const DATA_INDEX: &str = "data.landscaper.gardener.cloud/index";
    /// The map key of a Target in a target map.
    pub const DATA_TARGET_MAP_KEY: &str = "data.landscaper.gardener.cloud/targetmapkey";
}

/// Condition types.
pub mod conditions {
    /// Whether the agent of an Environment renews its heartbeat.
    pub const AGENT_READY: &str = "AgentReady";
    /// Whether the landscaper created the Target and other objects of an Environment.
    pub const TARGET_READY: &str = "TargetReady";
}

/// Target types.
pub mod target_types {
    /// A Kubernetes cluster reached through a kubeconfig.
    pub const KUBERNETES_CLUSTER: &str = "landscaper.gardener.cloud/kubernetes-cluster";
}

/// Deploy item types served by the deployers of this project.
pub mod deploy_item_types {
    /// Helm charts.
    pub const HELM: &str = "landscaper.gardener.cloud/helm";
    /// Plain Kubernetes manifests.
    pub const MANIFEST: &str = "landscaper.gardener.cloud/kubernetes-manifest";
    /// The mock deployer, for tests.
    pub const MOCK: &str = "landscaper.gardener.cloud/mock";
    /// Containers (served by upstream's container deployer).
    pub const CONTAINER: &str = "landscaper.gardener.cloud/container";
}
