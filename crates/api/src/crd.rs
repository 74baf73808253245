//! CustomResourceDefinitions of every `landscaper.gardener.cloud` kind, generated from the types.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceValidation,
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::CustomResourceExt;
use schemars::JsonSchema;

use crate::constants::{GROUP, VERSION};
use crate::core::{
    ComponentVersionOverwrites, Context, CriticalProblems, DataObject, DeployItem,
    DeployerRegistration, Environment, Execution, Installation, LsHealthCheck, SyncObject, Target,
    TargetSync,
};

/// All CRDs, in a stable order (sorted by name).
pub fn all() -> Vec<CustomResourceDefinition> {
    let mut crds = vec![
        Installation::crd(),
        Execution::crd(),
        DeployItem::crd(),
        Target::crd(),
        Environment::crd(),
        DeployerRegistration::crd(),
        TargetSync::crd(),
        SyncObject::crd(),
        CriticalProblems::crd(),
        top_level::<DataObject>(
            Names {
                kind: "DataObject",
                plural: "dataobjects",
                singular: "dataobject",
                short_names: &["dobj", "do"],
            },
            data_object_columns(),
        ),
        top_level::<Context>(
            Names {
                kind: "Context",
                plural: "contexts",
                singular: "context",
                short_names: &["ctx"],
            },
            vec![age_column()],
        ),
        top_level::<LsHealthCheck>(
            Names {
                kind: "LsHealthCheck",
                plural: "lshealthchecks",
                singular: "lshealthcheck",
                short_names: &["lshc"],
            },
            vec![
                column("Status", "string", ".status"),
                column("LastUpdateTime", "date", ".lastUpdateTime"),
            ],
        ),
        top_level::<ComponentVersionOverwrites>(
            Names {
                kind: "ComponentVersionOverwrites",
                plural: "componentversionoverwrites",
                singular: "componentversionoverwrite",
                short_names: &["compveroverwrite", "cvo"],
            },
            Vec::new(),
        ),
    ];
    for crd in &mut crds {
        for version in &mut crd.spec.versions {
            if let Some(schema) = version
                .schema
                .as_mut()
                .and_then(|s| s.open_api_v3_schema.as_mut())
            {
                strip_defaults(schema);
                restrict_metadata(schema);
            }
        }
    }
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    crds
}

/// Removes the defaults schemars derives from `#[serde(default)]`: they describe how our
/// decoder fills gaps, not what the API server should store, and upstream's CRDs have none.
fn strip_defaults(schema: &mut JSONSchemaProps) {
    schema.default = None;
    let children = schema
        .properties
        .iter_mut()
        .flat_map(|properties| properties.values_mut())
        .chain(schema.all_of.iter_mut().flatten())
        .chain(schema.any_of.iter_mut().flatten())
        .chain(schema.one_of.iter_mut().flatten());
    for child in children {
        strip_defaults(child);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = schema.items.as_mut() {
        strip_defaults(items);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(additional)) = schema.additional_properties.as_mut() {
        strip_defaults(additional);
    }
}

/// Leaves the root `metadata` schema as `{type: object}`: kube-apiserver refuses a CRD whose
/// schema says anything more of it (a description included) than restrictions of `name` and
/// `generateName`, since every object's metadata is described by the API server itself.
fn restrict_metadata(schema: &mut JSONSchemaProps) {
    if let Some(metadata) = schema
        .properties
        .as_mut()
        .and_then(|properties| properties.get_mut("metadata"))
    {
        *metadata = JSONSchemaProps {
            type_: Some("object".to_owned()),
            ..Default::default()
        };
    }
}

/// The file name a CRD is stored under, as upstream names them: `<group>_<plural>.yaml`.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

/// One CRD as a YAML document that YAML 1.1 readers take as written too (the selector
/// operator `=` quoted).
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    // A CRD consists of strings, numbers, booleans, maps and lists only; it always serializes.
    crate::yaml::to_string(crd).unwrap_or_default()
}

struct Names {
    kind: &'static str,
    plural: &'static str,
    singular: &'static str,
    short_names: &'static [&'static str],
}

/// A CRD for a kind with top-level fields, generated with the same schema settings and
/// structural rewrites kube's derive uses.
fn top_level<T: JsonSchema>(
    names: Names,
    columns: Vec<CustomResourceColumnDefinition>,
) -> CustomResourceDefinition {
    let generator = schemars::generate::SchemaSettings::openapi3()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .into_generator();
    let schema: JSONSchemaProps = serde_json::to_value(generator.into_root_schema_for::<T>())
        .and_then(serde_json::from_value)
        .unwrap_or_default();
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{GROUP}", names.plural)),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: GROUP.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: names.kind.to_owned(),
                plural: names.plural.to_owned(),
                singular: Some(names.singular.to_owned()),
                short_names: Some(names.short_names.iter().map(|s| (*s).to_owned()).collect()),
                ..Default::default()
            },
            scope: "Namespaced".to_owned(),
            versions: vec![CustomResourceDefinitionVersion {
                name: VERSION.to_owned(),
                served: true,
                storage: true,
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: Some(schema),
                }),
                additional_printer_columns: (!columns.is_empty()).then_some(columns),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    }
}

fn column(name: &str, type_: &str, json_path: &str) -> CustomResourceColumnDefinition {
    CustomResourceColumnDefinition {
        name: name.to_owned(),
        type_: type_.to_owned(),
        json_path: json_path.to_owned(),
        ..Default::default()
    }
}

fn age_column() -> CustomResourceColumnDefinition {
    column("Age", "date", ".metadata.creationTimestamp")
}

fn data_object_columns() -> Vec<CustomResourceColumnDefinition> {
    vec![
        column(
            "Context",
            "string",
            ".metadata.labels['data\\.landscaper\\.gardener\\.cloud\\/context']",
        ),
        column(
            "Key",
            "string",
            ".metadata.labels['data\\.landscaper\\.gardener\\.cloud\\/key']",
        ),
        age_column(),
    ]
}
