//! Reading `blueprint.yaml` from a blueprint's filesystem.

use landscaper_api::core::Blueprint;

use crate::Error;
use crate::filesystem::{BLUEPRINT_FILE, Filesystem};

/// A decoded blueprint and the fields of its file that no field of the type took.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The blueprint.
    pub blueprint: Blueprint,
    /// Paths of unknown fields (upstream ignores them; callers may warn).
    pub unknown_fields: Vec<String>,
}

/// Decodes the blueprint of `fs`; errors name the file and the field.
pub fn load(fs: &Filesystem) -> Result<Loaded, Error> {
    let text = fs.read_text(BLUEPRINT_FILE)?;
    let json = crate::values::parse_yaml(text)
        .map_err(|e| Error::Blueprint(format!("{BLUEPRINT_FILE}: {e}")))?;
    let decoded = landscaper_api::decode::from_value::<Blueprint>(json, BLUEPRINT_FILE)
        .map_err(|e| Error::Blueprint(e.to_string()))?;
    Ok(Loaded {
        blueprint: decoded.value,
        unknown_fields: decoded.unknown_fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blueprint_decodes_and_errors_name_the_field() {
        let mut fs = Filesystem::new();
        fs.insert(
            BLUEPRINT_FILE,
            b"apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n- name: a\n  type: data\n  schema: {type: string}\ndeployExecutions:\n- name: x\n  type: GoTemplate\n  file: /x.yaml\n".to_vec(),
        );
        let loaded = load(&fs).unwrap();
        assert_eq!(loaded.blueprint.imports[0].name, "a");
        assert_eq!(
            loaded.blueprint.deploy_executions[0].file.as_deref(),
            Some("/x.yaml")
        );
        fs.insert(BLUEPRINT_FILE, b"deployExecutions:\n- name: x\n".to_vec());
        let err = load(&fs).unwrap_err().to_string();
        assert!(
            err.starts_with("blueprint.yaml: field .deployExecutions[0]"),
            "{err}"
        );
        assert!(
            load(&Filesystem::new())
                .unwrap_err()
                .to_string()
                .contains("blueprint.yaml: no such file")
        );
    }
}
