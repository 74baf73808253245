//! Registration: the deployer identity in the host cluster and the Environment in the
//! landscaper cluster. Every step reads first and writes only what differs, so a restart of
//! an agent whose objects are right makes no write.

pub mod environment;
pub mod host;
mod object;

use std::collections::BTreeMap;

use landscaper_api::constants::labels;
use landscaper_deployer::error::describe_kube_error;

/// Why a registration step failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    /// An API request failed.
    #[error("{action} {object}: {}", describe_kube_error(.source))]
    Api {
        /// What was being done.
        action: &'static str,
        /// The object, as `kind namespace/name`.
        object: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// The Environment exists and belongs to another agent (or to no agent).
    #[error(
        "Environment {name} in the landscaper cluster belongs to {owner}, not to this agent (host cluster id {ours}); \
         refusing to take it over: choose another environment name, or delete that Environment if it is stale"
    )]
    OwnedByAnother {
        /// The environment.
        name: String,
        /// Who owns it.
        owner: String,
        /// Our host cluster id.
        ours: String,
    },
    /// The Environment is being deleted, so the agent must not register it again.
    #[error(
        "Environment {name} is being deleted; the agent registers it again only after a restart"
    )]
    BeingDeleted {
        /// The environment.
        name: String,
    },
    /// The TokenRequest API returned no token.
    #[error("TokenRequest for ServiceAccount {object} returned no token")]
    NoToken {
        /// The ServiceAccount.
        object: String,
    },
}

impl RegistrationError {
    /// Whether retrying soon can help (API failures), as opposed to a conflict a person must
    /// resolve.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Api { .. } | Self::NoToken { .. })
    }
}

/// Labels on every object the agent creates for an environment.
pub fn owned_labels(environment: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (labels::COMPONENT.to_owned(), "landscaper-agent".to_owned()),
        (
            labels::DEPLOYER_ENVIRONMENT.to_owned(),
            environment.to_owned(),
        ),
    ])
}

pub(crate) fn api_error(
    action: &'static str,
    object: String,
) -> impl FnOnce(kube::Error) -> RegistrationError {
    move |source| RegistrationError::Api {
        action,
        object,
        source,
    }
}
