//! Where an installation sits: its parent, its siblings and the data context it reads its
//! imports in and its subinstallations read theirs in (upstream `installations/context.go`).

use std::sync::Arc;

use kube::api::{Api, ListParams};
use landscaper_api::core::Installation;

use super::DataflowError;
use super::names::{ENCOMPASSED_BY, installation_context, parent_name};

/// Where an installation sits: parent, siblings, and the data context its imports are read in.
#[derive(Clone, Debug)]
pub struct Scope {
    /// The namespace of the installation, its parent and its siblings.
    pub namespace: String,
    /// The name of the installation.
    pub name: String,
    /// The installation it is encompassed by; `None` for a root installation.
    pub parent: Option<Arc<Installation>>,
    /// The other installations with the same parent (for roots: the other roots).
    pub siblings: Vec<Arc<Installation>>,
    /// The context its imports are read in: `""` for roots, `Inst.<parent>` otherwise.
    pub context: String,
}

impl Scope {
    /// The scope of `installation` from its parent and the installations that may be its
    /// siblings (a controller's cache): those with another parent, and itself, are left out.
    pub fn new(
        installation: &Installation,
        parent: Option<Arc<Installation>>,
        candidates: impl IntoIterator<Item = Arc<Installation>>,
    ) -> Self {
        let namespace = installation.metadata.namespace.clone().unwrap_or_default();
        let name = installation.metadata.name.clone().unwrap_or_default();
        let parent_name = parent_name(installation);
        let context = parent_name
            .as_deref()
            .map(installation_context)
            .unwrap_or_default();
        let siblings = candidates
            .into_iter()
            .filter(|other| other.metadata.namespace.as_deref() == Some(namespace.as_str()))
            .filter(|other| other.metadata.name.as_deref() != Some(name.as_str()))
            .filter(|other| self::parent_name(other) == parent_name)
            .collect();
        Self {
            namespace,
            name,
            parent,
            siblings,
            context,
        }
    }

    /// Whether the installation has no parent.
    pub fn is_root(&self) -> bool {
        self.parent.is_none()
    }

    /// The context the installation's subinstallations (and its own exports' consumers inside
    /// it) use: `Inst.<name>`.
    pub fn own_context(&self) -> String {
        installation_context(&self.name)
    }
}

/// The scope of `installation`: reads its parent (which must exist) and lists its siblings.
pub async fn scope(
    client: &kube::Client,
    installation: &Installation,
) -> Result<Scope, DataflowError> {
    scope_of(client, installation, true).await
}

/// The scope of `installation`, listing its siblings only when `with_siblings` (a caller that
/// only reads and writes data needs no siblings, and sparing the list keeps many root
/// installations in one namespace cheap).
pub async fn scope_of(
    client: &kube::Client,
    installation: &Installation,
    with_siblings: bool,
) -> Result<Scope, DataflowError> {
    let namespace = installation.metadata.namespace.clone().unwrap_or_default();
    let name = installation.metadata.name.clone().unwrap_or_default();
    let api: Api<Installation> = Api::namespaced(client.clone(), &namespace);
    let parent_name = parent_name(installation);
    let parent = match &parent_name {
        Some(parent) => Some(Arc::new(api.get(parent).await.map_err(|source| {
            DataflowError::Api {
                context: format!(
                    "Installation {namespace}/{name}: reading its parent Installation {namespace}/{parent}"
                ),
                source,
            }
        })?)),
        None => None,
    };
    if !with_siblings {
        return Ok(Scope::new(installation, parent, []));
    }
    // Subinstallations carry their parent's name in the label; roots have none (upstream
    // `GetRootInstallations` and `ListSubinstallations`).
    let selector = match &parent_name {
        Some(parent) => format!("{ENCOMPASSED_BY}={parent}"),
        None => format!("!{ENCOMPASSED_BY}"),
    };
    let all = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| DataflowError::Api {
            context: format!(
                "Installation {namespace}/{name}: listing its siblings in namespace {namespace}"
            ),
            source,
        })?;
    Ok(Scope::new(
        installation,
        parent,
        all.items.into_iter().map(Arc::new),
    ))
}
