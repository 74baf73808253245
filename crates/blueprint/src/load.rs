//! Reading `blueprint.yaml` from a blueprint's filesystem.

use landscaper_api::core::{Blueprint, ExportDefinition, ImportDefinition};

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
    let mut blueprint = decoded.value;
    default_imports(&mut blueprint.imports);
    default_exports(&mut blueprint.exports);
    Ok(Loaded {
        blueprint,
        unknown_fields: decoded.unknown_fields,
    })
}

/// The domain upstream puts before a target type given without one (`mock` is
/// `landscaper.gardener.cloud/mock`).
const TARGET_TYPE_DOMAIN: &str = "landscaper.gardener.cloud";

/// A target type with upstream's domain when it has none.
fn qualified_target_type(target_type: &mut Option<String>) {
    if let Some(t) = target_type.as_mut()
        && !t.is_empty()
        && !t.contains('/')
    {
        *t = format!("{TARGET_TYPE_DOMAIN}/{t}");
    }
}

/// Upstream's `SetDefaults_DefinitionImport`: the type follows from a schema (`data`) or a
/// target type (`target`); target types of target and targetList imports get the domain.
fn default_imports(imports: &mut [ImportDefinition]) {
    for import in imports {
        default_imports(&mut import.imports);
        if import.schema.is_some() && import.target_type.is_some() {
            continue; // invalid; validation reports it
        }
        if import.type_.as_deref().is_none_or(str::is_empty) {
            if import.schema.is_some() {
                import.type_ = Some("data".into());
            } else if import.target_type.as_deref().is_some_and(|t| !t.is_empty()) {
                import.type_ = Some("target".into());
            }
        }
        if matches!(import.type_.as_deref(), Some("target" | "targetList")) {
            qualified_target_type(&mut import.target_type);
        }
    }
}

/// Upstream's `SetDefaults_DefinitionExport`, as for imports (only `target` exports get the
/// domain).
fn default_exports(exports: &mut [ExportDefinition]) {
    for export in exports {
        if export.schema.is_some() && export.target_type.is_some() {
            continue;
        }
        if export.type_.as_deref().is_none_or(str::is_empty) {
            if export.schema.is_some() {
                export.type_ = Some("data".into());
            } else if export.target_type.as_deref().is_some_and(|t| !t.is_empty()) {
                export.type_ = Some("target".into());
            }
        }
        if export.type_.as_deref() == Some("target") {
            qualified_target_type(&mut export.target_type);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_get_upstreams_defaults() {
        let mut fs = Filesystem::new();
        fs.insert(
            BLUEPRINT_FILE,
            b"imports:\n- name: t\n  targetType: mock\n- name: l\n  type: targetList\n  targetType: mock\n- name: m\n  type: targetMap\n  targetType: mock\n- name: q\n  type: target\n  targetType: example.org/kind\n- name: d\n  schema: {type: string}\n  imports:\n  - name: c\n    targetType: mock\nexports:\n- name: e\n  targetType: mock\n".to_vec(),
        );
        let blueprint = load(&fs).unwrap().blueprint;
        let import = |i: &ImportDefinition| (i.type_.clone(), i.target_type.clone());
        let typed =
            |t: &str, target: Option<&str>| (Some(t.to_string()), target.map(str::to_string));
        let imports: Vec<_> = blueprint.imports.iter().map(import).collect();
        assert_eq!(
            imports,
            [
                typed("target", Some("landscaper.gardener.cloud/mock")),
                typed("targetList", Some("landscaper.gardener.cloud/mock")),
                typed("targetMap", Some("mock")),
                typed("target", Some("example.org/kind")),
                typed("data", None),
            ]
        );
        assert_eq!(
            import(&blueprint.imports[4].imports[0]),
            typed("target", Some("landscaper.gardener.cloud/mock"))
        );
        let export = &blueprint.exports[0];
        assert_eq!(
            (export.type_.as_deref(), export.target_type.as_deref()),
            (Some("target"), Some("landscaper.gardener.cloud/mock"))
        );
    }

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
