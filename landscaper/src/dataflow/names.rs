//! Names and labels of the objects that carry data between installations.

use landscaper_api::core::Installation;

/// Label on a subinstallation naming its parent installation.
pub const ENCOMPASSED_BY: &str = "landscaper.gardener.cloud/encompassed-by";
/// Label naming the installation (`Inst.<name>`) that wrote a DataObject or Target.
pub const DATA_SOURCE: &str = "data.landscaper.gardener.cloud/source";
/// Label saying whether a DataObject or Target was written as an `export` or an `import`.
pub const DATA_SOURCE_TYPE: &str = "data.landscaper.gardener.cloud/sourceType";
/// Label with the job ID of the installation that wrote a DataObject or Target.
pub const DATA_JOB_ID: &str = "data.landscaper.gardener.cloud/jobid";
/// Prefix of the context an installation gives its subinstallations.
pub const INSTALLATION_PREFIX: &str = "Inst.";
/// The `sourceType` of exported objects.
pub const EXPORT_SOURCE_TYPE: &str = "export";
/// The `sourceType` of objects written for imports.
pub const IMPORT_SOURCE_TYPE: &str = "import";

/// `Inst.<name>`: the context an installation gives its subinstallations and the `source`
/// label of what it writes.
pub fn installation_context(name: &str) -> String {
    format!("{INSTALLATION_PREFIX}{name}")
}

/// The name of an installation's parent, if it has one (its `encompassed-by` label, else an
/// owner reference to an Installation).
pub fn parent_name(installation: &Installation) -> Option<String> {
    let meta = &installation.metadata;
    if let Some(parent) = meta.labels.as_ref().and_then(|l| l.get(ENCOMPASSED_BY)) {
        return Some(parent.clone());
    }
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| {
            o.kind == "Installation" && o.api_version.starts_with("landscaper.gardener.cloud/")
        })
        .map(|o| o.name.clone())
}
