//! The functions Landscaper gives GoTemplate executions on top of Sprig: the blueprint
//! filesystem (`include`, `readFile`, `readDir`), YAML (`toYaml`, `fromYaml`), OCI references,
//! component lookups and the kubeconfig functions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::helm::funcs::{FuncError, FuncMap, args, helm_funcs};
use serde_json::Value as Json;

use crate::component::{Descriptor, SchemaVersion};
use crate::filesystem::Filesystem;
use crate::kubeconfig::{self, TargetResolver};
use crate::oci_ref;
use crate::resource_ref::{self, ComponentSource, Resolved};
use crate::values::{from_template, to_template};

/// How often one file may be `include`d inside itself before rendering stops.
const MAX_INCLUDE_NESTING: usize = 100;

/// What the functions of one execution work on.
pub struct Context {
    /// The blueprint filesystem.
    pub filesystem: Arc<Filesystem>,
    /// The installation's component descriptor.
    pub component: Option<Descriptor>,
    /// The resolved component versions (`.components`).
    pub components: Vec<Descriptor>,
    /// The schema version templates see descriptors in.
    pub schema: SchemaVersion,
    /// Where further components and resource contents are looked up.
    pub source: Option<Arc<dyn ComponentSource>>,
    /// How the kubeconfig functions reach the clusters behind Targets.
    pub targets: Arc<dyn TargetResolver>,
}

impl Context {
    /// The resource a `getResourceKey`/`getResourceContent` argument names; `too_many` is the
    /// function's message for more than one argument.
    fn resolve_resource(&self, a: &[Value], too_many: String) -> Result<Resolved, FuncError> {
        let argument = match a {
            [] => {
                return Err(FuncError::failed(
                    "unable to provide key for empty relative artifact reference",
                ));
            }
            [Value::String(text)] => text.to_string(),
            [_] => {
                return Err(FuncError::failed(
                    "unable to assert the first argument as string",
                ));
            }
            _ => return Err(FuncError::failed(too_many)),
        };
        resource_ref::resolve_argument(
            self.component.as_ref(),
            &self.components,
            self.source.as_deref(),
            &argument,
        )
        .map_err(FuncError::failed)
    }
}

/// Sprig's functions (without `env` and `expandenv`) and Go's builtins, with the Landscaper
/// functions of `context`.
pub fn landscaper_funcs(context: Arc<Context>) -> FuncMap {
    let mut funcs = sprig_funcs();
    let include_depths = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    let ctx = context.clone();
    funcs.add_with_engine("include", move |exec, a| {
        args::count(a, 2)?;
        let path = args::string(a, 0)?.to_string();
        let text = ctx
            .filesystem
            .read(&path)
            .and_then(|data| std::str::from_utf8(data).ok())
            .ok_or_else(|| FuncError::failed(format!("unable to read include file \"{path}\"")))?
            .to_string();
        {
            let mut depths = include_depths.lock().unwrap_or_else(|p| p.into_inner());
            let depth = depths.entry(path.clone()).or_default();
            if *depth >= MAX_INCLUDE_NESTING {
                return Err(FuncError::failed(format!(
                    "rendering template has a nested reference name: {path}: unable to execute template"
                )));
            }
            *depth += 1;
        }
        let result = exec.execute_text(&text, a[1].clone());
        if let Some(depth) = include_depths
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(&path)
        {
            *depth -= 1;
        }
        result
            .map(Value::from)
            .map_err(|e| FuncError::Template(Box::new(e)))
    });
    let ctx = context.clone();
    funcs.add("readFile", move |a: &[Value]| {
        args::count(a, 1)?;
        let path = args::string(a, 0)?;
        ctx.filesystem
            .read(path)
            .map(|data| Value::Bytes(data.into()))
            .ok_or_else(|| FuncError::failed(format!("open {path}: file does not exist")))
    });
    let ctx = context.clone();
    funcs.add("readDir", move |a: &[Value]| {
        args::count(a, 1)?;
        let path = args::string(a, 0)?;
        let entries = ctx
            .filesystem
            .read_dir(path)
            .ok_or_else(|| FuncError::failed(format!("open {path}: file does not exist")))?;
        Ok(Value::list(
            entries
                .into_iter()
                .map(|entry| {
                    Value::Map(Map::from_entries([
                        ("Name".to_string(), Value::from(entry.name.as_str())),
                        ("IsDir".to_string(), Value::Bool(entry.is_dir)),
                        ("Size".to_string(), Value::Int64(entry.size as i64)),
                    ]))
                })
                .collect(),
        ))
    });
    funcs.add("toYaml", |a: &[Value]| {
        args::count(a, 1)?;
        let yaml = from_template(&a[0])
            .and_then(|json| crate::values::to_yaml(&json))
            .unwrap_or_default();
        Ok(Value::from(yaml))
    });
    funcs.add("fromYaml", |a: &[Value]| {
        args::count(a, 1)?;
        let json = crate::values::parse_yaml(args::string(a, 0)?).map_err(FuncError::failed)?;
        Ok(as_go_json(&json))
    });
    funcs.add("parseOCIRef", |a: &[Value]| {
        args::count(a, 1)?;
        let (repo, version) = oci_ref::parse(args::string(a, 0)?).map_err(FuncError::failed)?;
        Ok(Value::list(vec![Value::from(repo), Value::from(version)]))
    });
    funcs.add("ociRefRepo", |a: &[Value]| {
        args::count(a, 1)?;
        let (repo, _) = oci_ref::parse(args::string(a, 0)?).map_err(FuncError::failed)?;
        Ok(Value::from(repo))
    });
    funcs.add("ociRefVersion", |a: &[Value]| {
        args::count(a, 1)?;
        let (_, version) = oci_ref::parse(args::string(a, 0)?).map_err(FuncError::failed)?;
        Ok(Value::from(version))
    });
    let ctx = context.clone();
    funcs.add("getResource", move |a: &[Value]| {
        let (descriptor, selector) = descriptor_and_selector(&ctx, a)?;
        let found = descriptor.resources(&selector);
        found
            .first()
            .map(to_template)
            .ok_or_else(|| FuncError::failed(not_found("resource", &selector)))
    });
    let ctx = context.clone();
    funcs.add("getResources", move |a: &[Value]| {
        let (descriptor, selector) = descriptor_and_selector(&ctx, a)?;
        let found = descriptor.resources(&selector);
        if found.is_empty() {
            return Err(FuncError::failed(not_found("resource", &selector)));
        }
        Ok(Value::list(found.iter().map(to_template).collect()))
    });
    let ctx = context.clone();
    funcs.add("getComponent", move |a: &[Value]| {
        let (descriptor, selector) = descriptor_and_selector(&ctx, a)?;
        let reference = descriptor
            .references(&selector)
            .into_iter()
            .next()
            .ok_or_else(|| FuncError::failed(not_found("component reference", &selector)))?;
        let field = |name: &str| reference.get(name).and_then(Json::as_str).unwrap_or("");
        let (name, version) = (field("componentName"), field("version"));
        ctx.components
            .iter()
            .find(|c| c.name() == name && c.version() == version)
            .map(|c| to_template(&c.in_version(ctx.schema)))
            .ok_or_else(|| {
                FuncError::failed(format!(
                    "unable to resolve component {}:{version}",
                    field("name")
                ))
            })
    });
    let ctx = context.clone();
    funcs.add("getResourceKey", move |a: &[Value]| {
        let too_many = format!(
            "this function requires 1 argument, but {} were provided",
            a.len()
        );
        let resolved = ctx.resolve_resource(a, too_many)?;
        resolved
            .identity()
            .key()
            .map(Value::from)
            .map_err(|e| FuncError::failed(e.to_string()))
    });
    let ctx = context.clone();
    funcs.add("getResourceContent", move |a: &[Value]| {
        let too_many =
            "this function only requires a single argument, but multiple were provided".into();
        let resolved = ctx.resolve_resource(a, too_many)?;
        let data = resource_ref::resolved_content(ctx.source.as_deref(), &resolved)
            .map_err(FuncError::failed)?;
        Ok(Value::from(resource_ref::content_text(
            &resolved.resource,
            &data,
        )))
    });
    funcs.add("getRepositoryContext", |a: &[Value]| {
        args::count(a, 1)?;
        let Value::Map(_) = &a[0] else {
            return Err(FuncError::failed(
                "getRepositoryContext: the argument must be a component descriptor",
            ));
        };
        let json = from_template(&a[0]).map_err(FuncError::failed)?;
        Ok(Descriptor::from_json(json)
            .ok()
            .and_then(|d| d.repository_context())
            .map_or(Value::Nil, |c| to_template(&c)))
    });
    for function in kubeconfig::Function::ALL {
        let ctx = context.clone();
        funcs.add(function.name(), move |a: &[Value]| {
            let args = a
                .iter()
                .map(|value| {
                    Ok(kubeconfig::Argument {
                        value: from_template(value).map_err(FuncError::failed)?,
                        go_type: value.type_name(),
                    })
                })
                .collect::<Result<Vec<_>, FuncError>>()?;
            kubeconfig::call(ctx.targets.as_ref(), function, &args)
                .map(|result| to_template(&result))
                .map_err(FuncError::failed)
        });
    }
    funcs
}

/// Sprig's text function map with Go's builtins: Helm's set without what Helm adds itself.
fn sprig_funcs() -> FuncMap {
    let mut funcs = helm_funcs();
    for helm_only in [
        "include",
        "tpl",
        "required",
        "lookup",
        "toYamlPretty",
        "mustToYaml",
        "fromYamlArray",
        "fromJsonArray",
        "toToml",
        "fromToml",
    ] {
        funcs.remove(helm_only);
    }
    // Sprig's `fail` returns its message as an error; Helm's marks it for its own reporting.
    funcs.add("fail", |a: &[Value]| {
        args::count(a, 1)?;
        Err(FuncError::failed(args::string(a, 0)?.to_string()))
    });
    funcs
}

/// A value as Go holds it after a JSON round trip: every number a `float64`.
fn as_go_json(json: &Json) -> Value {
    match json {
        Json::Number(n) => Value::Float(n.as_f64().unwrap_or_default()),
        Json::Array(items) => Value::list(items.iter().map(as_go_json).collect()),
        Json::Object(map) => Value::Map(Map::from_entries(
            map.iter().map(|(k, v)| (k.clone(), as_go_json(v))),
        )),
        other => to_template(other),
    }
}

/// `[cd,] key1, value1, …`: the descriptor (given, or the installation's) and the selector.
fn descriptor_and_selector(
    ctx: &Context,
    a: &[Value],
) -> Result<(Descriptor, Vec<(String, String)>), FuncError> {
    let (descriptor, pairs) = match a.first() {
        Some(Value::Map(_)) => {
            let json = from_template(&a[0]).map_err(FuncError::failed)?;
            let descriptor = Descriptor::from_json(json).map_err(|e| {
                FuncError::failed(format!(
                    "the first argument is no component descriptor: {e}"
                ))
            })?;
            (descriptor, &a[1..])
        }
        _ => {
            let descriptor = ctx
                .component
                .clone()
                .ok_or_else(|| FuncError::failed("no component descriptor is defined"))?;
            (descriptor, a)
        }
    };
    if pairs.len() < 2 {
        return Err(FuncError::failed(
            "at least one key-value pair is needed to select an element",
        ));
    }
    if pairs.len() % 2 != 0 {
        return Err(FuncError::failed(
            "keys and values must come in pairs: the number of arguments is odd",
        ));
    }
    let mut selector = Vec::new();
    for pair in pairs.chunks(2) {
        match (&pair[0], &pair[1]) {
            (Value::String(k), Value::String(v)) => selector.push((k.to_string(), v.to_string())),
            _ => {
                return Err(FuncError::failed(
                    "the keys and values of a selector must be strings",
                ));
            }
        }
    }
    Ok((descriptor, selector))
}

fn not_found(what: &str, selector: &[(String, String)]) -> String {
    let pairs: Vec<String> = selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("no {what} matches {}: NotFound", pairs.join(", "))
}
