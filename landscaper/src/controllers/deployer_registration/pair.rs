//! A pair: one DeployerRegistration in one Environment, and the objects that install its
//! deployer there (ServiceAccount, RBAC, the Target to the landscaper cluster, the
//! Installation), all named `<registration>-<environment>` in the deployer management
//! namespace. Building them is pure: what to write is decided here, whether to write by the
//! caller.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use landscaper_api::constants::{annotations, deploy_item_types, finalizers, labels, target_types};
use landscaper_api::core::{
    DataImport, DeployerRegistration, Environment, Installation, InstallationImports,
    InstallationSpec, LocalSecretReference, SecretReference, Target, TargetImport, TargetSpec,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The annotation holding the hash of what an object was written from; an object whose hash
/// matches is not written again.
pub const SPEC_HASH: &str = "deployers.landscaper.gardener.cloud/spec-hash";
/// The longest pair name: it is a label value on every pair object.
pub const MAX_NAME_LENGTH: usize = 63;
/// The key of the kubeconfig in the pair's access Secret.
pub const KUBECONFIG_KEY: &str = "kubeconfig";
/// The data import of a pair's Installation that holds the landscaper cluster's kubeconfig.
pub const LANDSCAPER_CLUSTER_KUBECONFIG_IMPORT: &str = "landscaperClusterKubeconfig";
/// The data mapping of a helm-serving pair's Installation that lists the namespaces whose
/// helm DeployItems the environment's agent serves, which its deployer must leave alone.
pub const EXCLUDED_NAMESPACES_MAPPING: &str = "excludedNamespaces";

/// A registration in an environment.
pub struct Pair<'a> {
    /// The registration.
    pub registration: &'a DeployerRegistration,
    /// The environment.
    pub environment: &'a Environment,
    /// The deployer management namespace.
    pub namespace: &'a str,
    name: String,
}

impl<'a> Pair<'a> {
    /// The pair, or why its name cannot be used.
    pub fn new(
        registration: &'a DeployerRegistration,
        environment: &'a Environment,
        namespace: &'a str,
    ) -> Result<Self, String> {
        let name = pair_name(&registration.name_any(), &environment.name_any())?;
        if environment.spec.namespace.is_empty() {
            return Err(format!(
                "Environment {} has no spec.namespace: the deployer has no namespace of the environment's cluster to be installed into (its agent sets it; set it on the Environment)",
                environment.name_any()
            ));
        }
        Ok(Self {
            registration,
            environment,
            namespace,
            name,
        })
    }

    /// `<registration>-<environment>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The registration's name.
    pub fn registration_name(&self) -> String {
        self.registration.name_any()
    }

    /// The environment's name.
    pub fn environment_name(&self) -> String {
        self.environment.name_any()
    }

    /// The Secret holding the kubeconfig of the pair's Target.
    pub fn access_secret_name(&self) -> String {
        access_secret_name(&self.name)
    }

    /// The ClusterRole and ClusterRoleBinding of the pair.
    pub fn cluster_role_name(&self) -> String {
        cluster_role_name(&self.name)
    }

    /// The labels every pair object carries.
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (
                labels::DEPLOYER_REGISTRATION.to_owned(),
                self.registration_name(),
            ),
            (
                labels::DEPLOYER_ENVIRONMENT.to_owned(),
                self.environment_name(),
            ),
        ])
    }

    fn meta(&self, name: String, namespaced: bool, hash: String) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: namespaced.then(|| self.namespace.to_owned()),
            labels: Some(self.labels()),
            annotations: Some(BTreeMap::from([(SPEC_HASH.to_owned(), hash)])),
            ..ObjectMeta::default()
        }
    }

    /// The deployer's identity in the landscaper cluster.
    pub fn service_account(&self) -> ServiceAccount {
        let hash = hash_of(&json!({ "name": self.name }));
        ServiceAccount {
            metadata: self.meta(self.name.clone(), true, hash),
            ..ServiceAccount::default()
        }
    }

    /// What a deployer needs in the landscaper cluster, and no more: the deploy items it serves
    /// and their status, their Targets and Contexts, the export Secrets it writes, and Events.
    /// No Secret is readable: the pairs' access Secrets (each a token of its pair) live in the
    /// deployer management namespace, and a cluster-wide read would hand every deployer the
    /// identity of every other. A deployer writes its export Secrets without reading them, and
    /// reads the Secrets its environment's Target names in the environment's cluster.
    pub fn cluster_role(&self) -> ClusterRole {
        let rule = |group: &str, resources: &[&str], verbs: &[&str]| PolicyRule {
            api_groups: Some(vec![group.to_owned()]),
            resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
            verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
            ..PolicyRule::default()
        };
        let rules = vec![
            rule(
                "landscaper.gardener.cloud",
                &["deployitems"],
                &["get", "list", "watch", "patch", "update"],
            ),
            rule(
                "landscaper.gardener.cloud",
                &["deployitems/status"],
                &["get", "patch", "update"],
            ),
            rule(
                "landscaper.gardener.cloud",
                &["targets", "contexts"],
                &["get", "list", "watch"],
            ),
            rule("", &["secrets"], &["create", "patch"]),
            rule("events.k8s.io", &["events"], &["create", "patch"]),
            rule("", &["events"], &["create", "patch"]),
        ];
        let hash = hash_of(&serde_json::to_value(&rules).unwrap_or_default());
        ClusterRole {
            metadata: self.meta(self.cluster_role_name(), false, hash),
            rules: Some(rules),
            ..ClusterRole::default()
        }
    }

    /// Binds the pair's ClusterRole to its ServiceAccount only.
    pub fn cluster_role_binding(&self) -> ClusterRoleBinding {
        let role_ref = RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "ClusterRole".to_owned(),
            name: self.cluster_role_name(),
        };
        let subject = Subject {
            kind: "ServiceAccount".to_owned(),
            name: self.name.clone(),
            namespace: Some(self.namespace.to_owned()),
            ..Subject::default()
        };
        let hash = hash_of(&json!({ "roleRef": role_ref, "subject": subject }));
        ClusterRoleBinding {
            metadata: self.meta(self.cluster_role_name(), false, hash),
            role_ref,
            subjects: Some(vec![subject]),
        }
    }

    /// The Target of the landscaper cluster, as the pair's ServiceAccount; its kubeconfig is in
    /// the access Secret.
    pub fn target(&self) -> Target {
        let spec = TargetSpec {
            type_: target_types::KUBERNETES_CLUSTER.to_owned(),
            config: None,
            secret_ref: Some(SecretReference {
                name: self.access_secret_name(),
                namespace: None,
                key: Some(KUBECONFIG_KEY.to_owned()),
            }),
        };
        let hash = hash_of(&serde_json::to_value(&spec).unwrap_or_default());
        Target {
            metadata: self.meta(self.name.clone(), true, hash),
            spec,
        }
    }

    /// The pair's Installation, as upstream's deployer lifecycle management documents it.
    /// Its hash covers the registration's template and the environment's spec, so it changes
    /// exactly when the deployer must be installed again.
    pub fn installation(&self) -> Installation {
        let template = &self.registration.spec.installation_template;
        let environment = &self.environment.spec;
        let mut mappings = template.import_data_mappings.clone().unwrap_or_default();
        let values = mappings.remove("values").unwrap_or_else(|| json!({}));
        mappings.insert("identity".to_owned(), json!(self.name));
        mappings.insert("releaseName".to_owned(), json!(self.name));
        mappings.insert("releaseNamespace".to_owned(), json!(environment.namespace));
        mappings.insert(
            "targetSelectors".to_owned(),
            serde_json::to_value(&environment.target_selectors).unwrap_or_default(),
        );
        mappings.insert("values".to_owned(), values);
        if self
            .registration
            .spec
            .types
            .iter()
            .any(|t| served_by_agent(t))
        {
            mappings.insert(
                EXCLUDED_NAMESPACES_MAPPING.to_owned(),
                json!(agent_namespaces(self.environment, self.namespace)),
            );
        }
        let mut imports = template.imports.clone().unwrap_or_default();
        let mut targets = vec![
            target_import("cluster", &self.environment_name()),
            target_import("landscaperCluster", &self.name),
        ];
        targets.extend(imports.targets.take().unwrap_or_default());
        imports.targets = Some(targets);
        // The Target keeps its kubeconfig in a Secret, which templates cannot read: the
        // kubeconfig itself is imported too, for blueprints that declare it (ours do).
        let mut data = vec![DataImport {
            name: LANDSCAPER_CLUSTER_KUBECONFIG_IMPORT.to_owned(),
            secret_ref: Some(LocalSecretReference {
                name: self.access_secret_name(),
                key: Some(KUBECONFIG_KEY.to_owned()),
            }),
            ..DataImport::default()
        }];
        data.extend(imports.data.take().unwrap_or_default());
        imports.data = Some(data);
        let spec = InstallationSpec {
            component_descriptor: template.component_descriptor.clone(),
            blueprint: template.blueprint.clone(),
            imports: Some(InstallationImports {
                data: imports.data,
                targets: imports.targets,
            }),
            import_data_mappings: Some(mappings),
            ..InstallationSpec::default()
        };
        let hash = hash_of(&json!({
            "spec": spec,
            "environment": environment,
        }));
        let mut metadata = self.meta(self.name.clone(), true, hash);
        // The Installation controller's finalizer too: it would add it with a write of its
        // own first thing, one write per pair.
        metadata.finalizers = Some(vec![
            finalizers::DEPLOYER_MANAGEMENT.to_owned(),
            finalizers::LANDSCAPER.to_owned(),
        ]);
        let mut installation = Installation::new(&self.name, spec);
        installation.metadata = metadata;
        installation
    }
}

/// The same Installation asked to start a job.
pub fn with_reconcile_annotation(mut installation: Installation) -> Installation {
    installation
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(annotations::OPERATION.to_owned(), "reconcile".to_owned());
    installation
}

/// Whether `deploy_item_type` is served in every environment without a registration: the
/// agent's embedded helm deployer.
pub fn served_by_agent(deploy_item_type: &str) -> bool {
    deploy_item_type == deploy_item_types::HELM
}

/// The namespaces whose helm DeployItems the environment's agent serves with its embedded helm
/// deployer, sorted: the deployer management namespace (where the pairs' items are, so that
/// the agent installs every deployer, a registered helm deployer included) and those its
/// Environment's annotation names (the agent's `deployItemNamespaces`). A registered helm
/// deployer there serves every other namespace, so that one helm deployer works on each item.
pub fn agent_namespaces(environment: &Environment, management_namespace: &str) -> Vec<String> {
    let announced = environment
        .annotations()
        .get(annotations::AGENT_DEPLOY_ITEM_NAMESPACES)
        .map(String::as_str)
        .unwrap_or_default();
    let namespaces: std::collections::BTreeSet<&str> = announced
        .split(',')
        .map(str::trim)
        .filter(|ns| !ns.is_empty())
        .chain([management_namespace])
        .collect();
    namespaces.into_iter().map(str::to_owned).collect()
}

fn target_import(name: &str, target: &str) -> TargetImport {
    TargetImport {
        name: name.to_owned(),
        target: Some(format!("#{target}")),
        ..TargetImport::default()
    }
}

/// The Secret holding the kubeconfig of the Target of the pair named `pair`.
pub fn access_secret_name(pair: &str) -> String {
    format!("{pair}-landscaper-cluster")
}

/// The ClusterRole and ClusterRoleBinding of the pair named `pair` (cluster-scoped, so
/// prefixed).
pub fn cluster_role_name(pair: &str) -> String {
    format!("landscaper:deployer:{pair}")
}

/// `<registration>-<environment>`, or why it cannot name the pair's objects.
pub fn pair_name(registration: &str, environment: &str) -> Result<String, String> {
    let name = format!("{registration}-{environment}");
    if name.len() > MAX_NAME_LENGTH {
        return Err(format!(
            "the pair name {name:?} has {} characters, more than the {MAX_NAME_LENGTH} a label value may have: shorten the registration or the environment name",
            name.len()
        ));
    }
    let valid = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !valid {
        return Err(format!(
            "the pair name {name:?} is not a valid object name (lower-case letters, digits, '-' and '.')"
        ));
    }
    Ok(name)
}

/// The hash recorded in [`SPEC_HASH`].
pub fn hash_of(value: &Value) -> String {
    let digest = Sha256::digest(value.to_string().as_bytes());
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// The hash an object was written from, if it carries one.
pub fn recorded_hash(metadata: &ObjectMeta) -> Option<&str> {
    metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(SPEC_HASH))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use landscaper_api::core::{
        DeployerRegistrationSpec, EnvironmentSpec, RemoteBlueprintReference,
    };

    fn registration() -> DeployerRegistration {
        let mut spec = DeployerRegistrationSpec {
            types: vec!["landscaper.gardener.cloud/mock".to_owned()],
            ..DeployerRegistrationSpec::default()
        };
        spec.installation_template.blueprint.reference = Some(RemoteBlueprintReference {
            resource_name: "mock-deployer-blueprint".to_owned(),
        });
        spec.installation_template.import_data_mappings = Some(BTreeMap::from([(
            "values".to_owned(),
            json!({"replicas": 2}),
        )]));
        DeployerRegistration::new("mock", spec)
    }

    fn environment() -> Environment {
        let spec = EnvironmentSpec {
            namespace: "ls-system".to_owned(),
            ..EnvironmentSpec::default()
        };
        Environment::new("default", spec)
    }

    #[test]
    fn the_installation_is_the_one_upstream_documents() {
        let (registration, environment) = (registration(), environment());
        let pair = Pair::new(&registration, &environment, "ls-system").unwrap();
        let installation = pair.installation();
        assert_eq!(installation.name_any(), "mock-default");
        assert_eq!(installation.labels()[labels::DEPLOYER_REGISTRATION], "mock");
        assert_eq!(
            installation.labels()[labels::DEPLOYER_ENVIRONMENT],
            "default"
        );
        assert_eq!(
            installation.finalizers(),
            [
                finalizers::DEPLOYER_MANAGEMENT.to_owned(),
                finalizers::LANDSCAPER.to_owned()
            ]
        );
        let mappings = installation.spec.import_data_mappings.as_ref().unwrap();
        assert_eq!(mappings["identity"], "mock-default");
        assert_eq!(mappings["releaseName"], "mock-default");
        assert_eq!(mappings["releaseNamespace"], "ls-system");
        assert_eq!(mappings["values"], json!({"replicas": 2}));
        let targets = installation
            .spec
            .imports
            .as_ref()
            .unwrap()
            .targets
            .as_ref()
            .unwrap();
        assert_eq!(targets[0].target.as_deref(), Some("#default"));
        assert_eq!(targets[1].name, "landscaperCluster");
        assert_eq!(targets[1].target.as_deref(), Some("#mock-default"));
    }

    #[test]
    fn a_helm_deployer_is_told_the_namespaces_the_agent_serves_and_others_are_not() {
        let mut environment = environment();
        environment.annotations_mut().insert(
            annotations::AGENT_DEPLOY_ITEM_NAMESPACES.to_owned(),
            "team-b,team-a".to_owned(),
        );
        let mut helm = registration();
        helm.spec.types = vec![deploy_item_types::HELM.to_owned()];
        let pair = Pair::new(&helm, &environment, "ls-system").unwrap();
        let mappings = pair.installation().spec.import_data_mappings.unwrap();
        assert_eq!(
            mappings[EXCLUDED_NAMESPACES_MAPPING],
            json!(["ls-system", "team-a", "team-b"])
        );
        let mock = registration();
        let pair = Pair::new(&mock, &environment, "ls-system").unwrap();
        let mappings = pair.installation().spec.import_data_mappings.unwrap();
        assert!(!mappings.contains_key(EXCLUDED_NAMESPACES_MAPPING));
        // An Environment without the agent's annotation: the pairs' namespace still is the
        // agent's.
        assert_eq!(
            agent_namespaces(&self::environment(), "ls-system"),
            ["ls-system"]
        );
    }

    #[test]
    fn the_hash_follows_the_registration_and_the_environment() {
        let (registration, environment) = (registration(), environment());
        let hash = |r: &DeployerRegistration, e: &Environment| {
            let pair = Pair::new(r, e, "ls-system").unwrap();
            recorded_hash(&pair.installation().metadata)
                .unwrap()
                .to_owned()
        };
        let before = hash(&registration, &environment);
        assert_eq!(before, hash(&registration, &environment));
        let mut changed = environment.clone();
        changed.spec.landscaper_cluster_config.host = "https://other".to_owned();
        assert_ne!(before, hash(&registration, &changed));
        let mut changed = registration.clone();
        changed.spec.installation_template.import_data_mappings = None;
        assert_ne!(before, hash(&changed, &environment));
    }

    #[test]
    fn an_environment_without_a_namespace_makes_no_pair() {
        let registration = registration();
        let mut environment = environment();
        environment.spec.namespace.clear();
        let error = Pair::new(&registration, &environment, "ls-system")
            .err()
            .expect("refused");
        assert!(error.contains("spec.namespace"), "{error}");
    }

    #[test]
    fn names_that_do_not_fit_are_refused_not_truncated() {
        let long = "e".repeat(60);
        let error = pair_name("mock", &long).unwrap_err();
        assert!(error.contains("more than the 63"), "{error}");
        assert!(pair_name("Mock", "default").is_err());
        assert_eq!(pair_name("mock", "default").unwrap(), "mock-default");
    }
}
