//! Decoding any document of a kind this crate knows, chosen by `apiVersion` and `kind`.

use serde_json::Value;

use crate::config::{AgentConfiguration, LandscaperConfiguration};
use crate::core::{
    Blueprint, ComponentVersionOverwrites, Context, CriticalProblems, DataObject, DeployItem,
    DeployerRegistration, Environment, Execution, Installation, InstallationTemplate,
    LsHealthCheck, SyncObject, Target, TargetSync,
};
use crate::decode::{DecodeError, Decoded, UnknownField, from_value_explained};
use crate::deployer::{
    HelmProviderConfiguration, HelmProviderStatus, ManifestProviderConfiguration,
    ManifestProviderStatus, MockProviderConfiguration,
};

/// A document of one of the kinds this crate types.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum KnownDocument {
    /// An Installation.
    Installation(Installation),
    /// An Execution.
    Execution(Execution),
    /// A DeployItem.
    DeployItem(DeployItem),
    /// A Target.
    Target(Target),
    /// A DataObject.
    DataObject(DataObject),
    /// A Context.
    Context(Context),
    /// An Environment.
    Environment(Environment),
    /// A DeployerRegistration.
    DeployerRegistration(DeployerRegistration),
    /// A TargetSync.
    TargetSync(TargetSync),
    /// An LsHealthCheck.
    LsHealthCheck(LsHealthCheck),
    /// A SyncObject.
    SyncObject(SyncObject),
    /// CriticalProblems.
    CriticalProblems(CriticalProblems),
    /// ComponentVersionOverwrites.
    ComponentVersionOverwrites(ComponentVersionOverwrites),
    /// A Blueprint file.
    Blueprint(Blueprint),
    /// An InstallationTemplate file.
    InstallationTemplate(InstallationTemplate),
    /// A helm deployer ProviderConfiguration.
    HelmProviderConfiguration(HelmProviderConfiguration),
    /// A helm deployer ProviderStatus.
    HelmProviderStatus(HelmProviderStatus),
    /// A manifest deployer ProviderConfiguration.
    ManifestProviderConfiguration(ManifestProviderConfiguration),
    /// A manifest deployer ProviderStatus.
    ManifestProviderStatus(ManifestProviderStatus),
    /// A mock deployer ProviderConfiguration.
    MockProviderConfiguration(MockProviderConfiguration),
    /// An AgentConfiguration.
    AgentConfiguration(AgentConfiguration),
    /// A LandscaperConfiguration.
    LandscaperConfiguration(LandscaperConfiguration),
}

macro_rules! dispatch {
    ($value:expr, $source:expr, $api_version:expr, $kind:expr, {
        $(($av:literal, $k:literal) => $variant:ident,)+
    }) => {
        match ($api_version, $kind) {
            $(($av, $k) => {
                let (value, unknown) = from_value_explained($value, $source)?;
                Ok(Some((KnownDocument::$variant(value), unknown)))
            })+
            _ => Ok(None),
        }
    };
}

impl KnownDocument {
    /// Decodes a document by its `apiVersion` and `kind`; `Ok(None)` for a kind this crate
    /// does not type (a ConfigMap, say).
    pub fn decode(value: Value, source_name: &str) -> Result<Option<Decoded<Self>>, DecodeError> {
        Ok(
            Self::decode_explained(value, source_name)?.map(|(value, unknown)| Decoded {
                value,
                unknown_fields: unknown.into_iter().map(|field| field.path).collect(),
            }),
        )
    }

    /// Like [`decode`](Self::decode), each unknown field with the known field it was
    /// probably meant to be.
    pub fn decode_explained(
        value: Value,
        source_name: &str,
    ) -> Result<Option<(Self, Vec<UnknownField>)>, DecodeError> {
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        dispatch!(value, source_name, api_version.as_str(), kind.as_str(), {
            ("landscaper.gardener.cloud/v1alpha1", "Installation") => Installation,
            ("landscaper.gardener.cloud/v1alpha1", "Execution") => Execution,
            ("landscaper.gardener.cloud/v1alpha1", "DeployItem") => DeployItem,
            ("landscaper.gardener.cloud/v1alpha1", "Target") => Target,
            ("landscaper.gardener.cloud/v1alpha1", "DataObject") => DataObject,
            ("landscaper.gardener.cloud/v1alpha1", "Context") => Context,
            ("landscaper.gardener.cloud/v1alpha1", "Environment") => Environment,
            ("landscaper.gardener.cloud/v1alpha1", "DeployerRegistration") => DeployerRegistration,
            ("landscaper.gardener.cloud/v1alpha1", "TargetSync") => TargetSync,
            ("landscaper.gardener.cloud/v1alpha1", "LsHealthCheck") => LsHealthCheck,
            ("landscaper.gardener.cloud/v1alpha1", "SyncObject") => SyncObject,
            ("landscaper.gardener.cloud/v1alpha1", "CriticalProblems") => CriticalProblems,
            ("landscaper.gardener.cloud/v1alpha1", "ComponentVersionOverwrites") => ComponentVersionOverwrites,
            ("landscaper.gardener.cloud/v1alpha1", "Blueprint") => Blueprint,
            ("landscaper.gardener.cloud/v1alpha1", "InstallationTemplate") => InstallationTemplate,
            ("helm.deployer.landscaper.gardener.cloud/v1alpha1", "ProviderConfiguration") => HelmProviderConfiguration,
            ("helm.deployer.landscaper.gardener.cloud/v1alpha1", "ProviderStatus") => HelmProviderStatus,
            ("manifest.deployer.landscaper.gardener.cloud/v1alpha2", "ProviderConfiguration") => ManifestProviderConfiguration,
            ("manifest.deployer.landscaper.gardener.cloud/v1alpha2", "ProviderStatus") => ManifestProviderStatus,
            ("mock.deployer.landscaper.gardener.cloud/v1alpha1", "ProviderConfiguration") => MockProviderConfiguration,
            ("config.landscaper.gardener.cloud/v1alpha1", "AgentConfiguration") => AgentConfiguration,
            ("config.landscaper.gardener.cloud/v1alpha1", "LandscaperConfiguration") => LandscaperConfiguration,
        })
    }

    /// The document serialized back to JSON.
    pub fn to_value(&self) -> Value {
        let result = match self {
            Self::Installation(v) => serde_json::to_value(v),
            Self::Execution(v) => serde_json::to_value(v),
            Self::DeployItem(v) => serde_json::to_value(v),
            Self::Target(v) => serde_json::to_value(v),
            Self::DataObject(v) => serde_json::to_value(v),
            Self::Context(v) => serde_json::to_value(v),
            Self::Environment(v) => serde_json::to_value(v),
            Self::DeployerRegistration(v) => serde_json::to_value(v),
            Self::TargetSync(v) => serde_json::to_value(v),
            Self::LsHealthCheck(v) => serde_json::to_value(v),
            Self::SyncObject(v) => serde_json::to_value(v),
            Self::CriticalProblems(v) => serde_json::to_value(v),
            Self::ComponentVersionOverwrites(v) => serde_json::to_value(v),
            Self::Blueprint(v) => serde_json::to_value(v),
            Self::InstallationTemplate(v) => serde_json::to_value(v),
            Self::HelmProviderConfiguration(v) => serde_json::to_value(v),
            Self::HelmProviderStatus(v) => serde_json::to_value(v),
            Self::ManifestProviderConfiguration(v) => serde_json::to_value(v),
            Self::ManifestProviderStatus(v) => serde_json::to_value(v),
            Self::MockProviderConfiguration(v) => serde_json::to_value(v),
            Self::AgentConfiguration(v) => serde_json::to_value(v),
            Self::LandscaperConfiguration(v) => serde_json::to_value(v),
        };
        // Serializing these types to a JSON value cannot fail: every map key is a string.
        result.unwrap_or(Value::Null)
    }
}
