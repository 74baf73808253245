//! Names and labels of the objects that carry data between installations.

use landscaper_api::core::{Installation, data_object_name};

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

/// The name of the object holding `key` in `context`, as upstream's `GenerateDataObjectName`.
///
/// A key starting with `#` names its object literally in every context (upstream); the api
/// crate's helper applies that rule only to the root context, so it is applied here first.
pub fn object_name(context: &str, key: &str) -> String {
    match key.strip_prefix('#') {
        Some(literal) => literal.to_owned(),
        None => data_object_name(context, key),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_keys_name_their_object_in_every_context() {
        assert_eq!(object_name("Inst.root", "#my-data"), "my-data");
        assert_eq!(object_name("", "my-data"), "my-data");
        assert_ne!(object_name("Inst.root", "my-data"), "my-data");
    }
}
