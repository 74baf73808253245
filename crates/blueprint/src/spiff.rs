//! Spiff executions: the `landscaper-spiff` engine with the binding as values, the blueprint
//! filesystem behind `read()`, Landscaper's `getResource`, `getComponent`, `getResourceKey` and
//! `getResourceContent`, the kubeconfig functions, and the execution's state through spiff's
//! `&state` marker.

use std::sync::Arc;

use landscaper_spiff::{FileSystem, Functions, Spiff, Template};
use serde_json::{Map, Value as Json};

use crate::component::{Descriptor, SchemaVersion};
use crate::filesystem::Filesystem;
use crate::kubeconfig::{self, TargetResolver};
use crate::resource_ref::{self, ComponentSource, Resolved};

/// The component versions an execution's functions see.
pub struct Components {
    /// The installation's component.
    pub component: Option<Descriptor>,
    /// The resolved component versions.
    pub components: Vec<Descriptor>,
    /// The schema version descriptors are returned in.
    pub schema: SchemaVersion,
    /// Where further components and resource contents are looked up.
    pub source: Option<Arc<dyn ComponentSource>>,
    /// How the kubeconfig functions reach the clusters behind Targets.
    pub targets: Arc<dyn TargetResolver>,
}

/// The blueprint filesystem as spiff's `read()` sees it.
struct BlueprintFiles(Arc<Filesystem>);

impl FileSystem for BlueprintFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        self.0
            .read(path)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| format!("file {path:?} not found in the blueprint"))
    }
}

/// The template of an execution: its `template` (a YAML node, or text parsed as YAML) or its
/// `file`.
pub fn template(
    template: Option<&Json>,
    file: Option<&str>,
    fs: &Filesystem,
) -> Result<Template, String> {
    match (template, file) {
        (Some(t), _) if !t.is_null() => Template::from_value(t).map_err(|e| e.to_string()),
        (_, Some(file)) => {
            let text = fs.read_text(file).map_err(|e| e.to_string())?;
            Template::from_yaml(text).map_err(|e| e.to_string())
        }
        _ => Err("no template found".into()),
    }
}

/// Evaluates `template` with `binding`; returns the document and the `&state` entries.
pub fn render(
    template: &Template,
    binding: &Map<String, Json>,
    state: Option<&[u8]>,
    filesystem: Arc<Filesystem>,
    components: Components,
) -> Result<(Json, Json), String> {
    let state = state
        .map(|data| Template::from_yaml(&String::from_utf8_lossy(data)))
        .transpose()
        .map_err(|e| format!("stored state: {e}"))?;
    let spiff = Spiff::new()
        .with_features(&std::env::var(landscaper_spiff::FEATURES_ENV).unwrap_or_default())
        .with_values(Json::Object(binding.clone()))
        .with_functions(functions(Arc::new(components)))
        .with_file_system(Arc::new(BlueprintFiles(filesystem)));
    let output = spiff
        .cascade(template, &[], state.as_ref())
        .map_err(|e| e.to_string())?;
    Ok((output.document, output.state))
}

fn functions(known: Arc<Components>) -> Functions {
    let mut functions = Functions::new();
    functions.register("getResource", |args: &[Json]| {
        let (descriptor, selector) = descriptor_and_selector("getResource", args)?;
        descriptor
            .resources(&selector)
            .into_iter()
            .next()
            .ok_or_else(|| format!("getResource: no resource matches {selector:?}"))
    });
    let ctx = known.clone();
    functions.register("getComponent", move |args: &[Json]| {
        let (descriptor, selector) = descriptor_and_selector("getComponent", args)?;
        let reference = descriptor
            .references(&selector)
            .into_iter()
            .next()
            .ok_or_else(|| format!("getComponent: no component reference matches {selector:?}"))?;
        let field = |key: &str| reference.get(key).and_then(Json::as_str).unwrap_or("");
        ctx.components
            .iter()
            .find(|c| c.name() == field("componentName") && c.version() == field("version"))
            .map(|c| c.in_version(ctx.schema))
            .ok_or_else(|| {
                format!(
                    "unable to resolve component {}:{}",
                    field("name"),
                    field("version")
                )
            })
    });
    for function in kubeconfig::Function::ALL {
        let ctx = known.clone();
        functions.register(function.name(), move |args: &[Json]| {
            let args: Vec<_> = args.iter().map(kubeconfig::Argument::spiff).collect();
            kubeconfig::call(ctx.targets.as_ref(), function, &args)
        });
    }
    let ctx = known.clone();
    functions.register("getResourceKey", move |args: &[Json]| {
        let too_many = format!(
            "this function requires 1 argument, but {} were provided",
            args.len()
        );
        let resolved = resolve_resource(&ctx, args, too_many)?;
        resolved
            .identity()
            .key()
            .map(Json::String)
            .map_err(|e| e.to_string())
    });
    functions.register("getResourceContent", move |args: &[Json]| {
        let too_many =
            "this function only requires a single argument, but multiple were provided".into();
        let resolved = resolve_resource(&known, args, too_many)?;
        let data = resource_ref::resolved_content(known.source.as_deref(), &resolved)?;
        let text = resource_ref::content_text(&resolved.resource, &data);
        crate::values::parse_yaml(&text)
            .map_err(|_| "unable to marshal resource into spiff node".to_string())
    });
    functions
}

/// The resource a `getResourceKey`/`getResourceContent` argument names: a relative reference
/// as text, or as a map (read as its JSON).
fn resolve_resource(ctx: &Components, args: &[Json], too_many: String) -> Result<Resolved, String> {
    let argument = match args {
        [] => return Err("unable to provide key for empty relative artifact reference".into()),
        [Json::String(text)] => text.clone(),
        [other] => other.to_string(),
        _ => return Err(too_many),
    };
    resource_ref::resolve_argument(
        ctx.component.as_ref(),
        &ctx.components,
        ctx.source.as_deref(),
        &argument,
    )
}

/// `cd, key1, value1, …`: the descriptor (either schema version) and the selector.
fn descriptor_and_selector(
    function: &str,
    args: &[Json],
) -> Result<(Descriptor, Vec<(String, String)>), String> {
    let Some((cd, pairs)) = args.split_first() else {
        return Err(format!("{function}: a component descriptor is required"));
    };
    let descriptor = Descriptor::from_json(cd.clone()).map_err(|e| format!("{function}: {e}"))?;
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return Err(format!("{function}: keys and values must come in pairs"));
    }
    let selector = pairs
        .chunks(2)
        .map(|pair| match (&pair[0], &pair[1]) {
            (Json::String(k), Json::String(v)) => Ok((k.clone(), v.clone())),
            _ => Err(format!(
                "{function}: the keys and values of a selector must be strings"
            )),
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((descriptor, selector))
}
