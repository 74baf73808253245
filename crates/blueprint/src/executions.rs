//! Running a blueprint's executions: the binding each template sees, the template engines,
//! state between runs, and the decoding and combination of what they render.

use std::sync::Arc;

use landscaper_api::core::{Blueprint, InstallationTemplate, TemplateExecutor};
use serde_json::{Map, Value as Json, json};

use crate::component::{Descriptor, SchemaVersion};
use crate::filesystem::Filesystem;
use crate::gotemplate::{self, Context};
use crate::kubeconfig::{InlineOnly, TargetResolver};
use crate::output::{self, DeployItemSpecification};
use crate::resource_ref::ComponentSource;
use crate::state::StateHandler;
use crate::{Error, ExecutionKind};

/// The blueprint annotation that chooses the schema version templates see descriptors in.
pub const SCHEMA_VERSION_ANNOTATION: &str = "ocmSchemaVersion";

/// Everything an execution's template may see.
#[derive(Clone, Debug, Default)]
pub struct ExecutionOptions {
    /// The blueprint whose executions run.
    pub blueprint: Blueprint,
    /// Its filesystem (`include`, `readFile`, executions given by `file`).
    pub filesystem: Arc<Filesystem>,
    /// The Installation (as JSON), when there is one.
    pub installation: Option<Json>,
    /// The installation's component descriptor.
    pub component: Option<Descriptor>,
    /// The resolved component versions (the transitive references), when resolved.
    pub components: Option<Vec<Descriptor>>,
    /// The imports: name to value; target imports are Target objects.
    pub imports: Map<String, Json>,
    /// Where components that are not in `components`, and resource contents, are looked up
    /// (`getResourceKey`, `getResourceContent`): the repository of the installation's component.
    pub source: Option<Arc<dyn ComponentSource>>,
    /// How the kubeconfig functions reach the clusters behind Targets; without one, only
    /// inline kubeconfigs are read and no cluster is asked ([`InlineOnly`]).
    pub targets: Option<Arc<dyn TargetResolver>>,
}

impl ExecutionOptions {
    /// The resolver of the kubeconfig functions.
    pub fn target_resolver(&self) -> Arc<dyn TargetResolver> {
        self.targets.clone().unwrap_or_else(|| Arc::new(InlineOnly))
    }

    /// The blueprint's `ocmSchemaVersion` annotation, else the component's own version.
    pub fn schema_version(&self) -> Result<SchemaVersion, Error> {
        let annotation = self
            .blueprint
            .annotations
            .as_ref()
            .and_then(|a| a.get(SCHEMA_VERSION_ANNOTATION));
        match (annotation, &self.component) {
            (Some(name), _) => SchemaVersion::parse(name),
            (None, Some(component)) => Ok(component.schema_version()),
            (None, None) => Ok(SchemaVersion::V2),
        }
    }

    /// The binding (`.` of a GoTemplate) of an execution of `kind`, without `state`.
    pub fn binding(
        &self,
        kind: ExecutionKind,
        values: Option<&Map<String, Json>>,
    ) -> Result<Map<String, Json>, Error> {
        let schema = self.schema_version()?;
        let mut binding = Map::new();
        binding.insert(
            "cd".into(),
            self.component
                .as_ref()
                .map_or(Json::Null, |c| c.in_version(schema)),
        );
        let components = self.components.as_ref().map_or(Json::Null, |list| {
            let each: Vec<Json> = list.iter().map(|c| c.in_version(schema)).collect();
            match schema {
                SchemaVersion::V2 => json!({"meta": {"schemaVersion": "v2"}, "components": each}),
                SchemaVersion::V3Alpha1 => Json::Array(each),
            }
        });
        binding.insert("components".into(), components);
        binding.insert("imports".into(), Json::Object(self.imports.clone()));
        if let Some(installation) = &self.installation {
            let spec = installation.get("spec");
            let blueprint = spec
                .and_then(|s| s.get("blueprint"))
                .cloned()
                .unwrap_or(Json::Null);
            binding.insert("blueprint".into(), blueprint.clone());
            binding.insert("blueprintDef".into(), blueprint);
            if let Some(cd) = spec.and_then(|s| s.get("componentDescriptor")) {
                binding.insert("componentDescriptorDef".into(), cd.clone());
            }
        }
        if kind == ExecutionKind::Export {
            let values = values.cloned().unwrap_or_default();
            for (key, value) in &values {
                binding.insert(key.clone(), value.clone());
            }
            binding.insert("values".into(), Json::Object(values));
        }
        Ok(binding)
    }

    fn context(&self) -> Result<Arc<Context>, Error> {
        Ok(Arc::new(Context {
            filesystem: self.filesystem.clone(),
            component: self.component.clone(),
            components: self.components.clone().unwrap_or_default(),
            schema: self.schema_version()?,
            source: self.source.clone(),
            targets: self.target_resolver(),
        }))
    }
}

/// What import executions compute: further imports, or the errors that stopped them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportResult {
    /// The imports with every execution's `bindings` merged in.
    pub imports: Map<String, Json>,
    /// The errors of the execution that reported some (the later ones did not run).
    pub errors: Vec<String>,
}

impl ImportResult {
    /// Upstream's message for failed import validation, if there were errors.
    pub fn error_message(&self) -> Option<String> {
        (!self.errors.is_empty())
            .then(|| format!("import validation failed: {}", self.errors.join(", ")))
    }
}

/// Runs executions, keeping their state in a [`StateHandler`].
pub struct Templater<'s> {
    state: &'s dyn StateHandler,
}

impl<'s> Templater<'s> {
    /// A templater keeping state in `state`.
    pub fn new(state: &'s dyn StateHandler) -> Self {
        Self { state }
    }

    /// The deploy items of the blueprint's `deployExecutions`, in order.
    pub fn deploy_executions(
        &self,
        options: &ExecutionOptions,
    ) -> Result<Vec<DeployItemSpecification>, Error> {
        let mut items = Vec::new();
        for executor in &options.blueprint.deploy_executions {
            let doc = self.run(ExecutionKind::Deploy, executor, options, None)?;
            items.extend(
                output::deploy_items(&doc)
                    .map_err(|m| execution_error(ExecutionKind::Deploy, executor, m))?,
            );
        }
        Ok(items)
    }

    /// The installation templates of the blueprint's `subinstallationExecutions`, in order.
    pub fn subinstallation_executions(
        &self,
        options: &ExecutionOptions,
    ) -> Result<Vec<InstallationTemplate>, Error> {
        let kind = ExecutionKind::Subinstallation;
        let mut templates = Vec::new();
        for executor in &options.blueprint.subinstallation_executions {
            let doc = self.run(kind, executor, options, None)?;
            let Some(list) = output::field(&doc, "subinstallations").filter(|v| !v.is_null())
            else {
                continue;
            };
            let decoded: Vec<InstallationTemplate> =
                landscaper_api::decode::from_value(list.clone(), "subinstallations")
                    .map(|d| d.value)
                    .map_err(|e| execution_error(kind, executor, e.to_string()))?;
            templates.extend(decoded);
        }
        Ok(templates)
    }

    /// The exports the blueprint's `exportExecutions` compute from `values` (the exports of
    /// the installation's deploy items, data objects and targets), merged deeply in order.
    pub fn export_executions(
        &self,
        options: &ExecutionOptions,
        values: &Map<String, Json>,
    ) -> Result<Map<String, Json>, Error> {
        let kind = ExecutionKind::Export;
        let mut exports = Map::new();
        for executor in &options.blueprint.export_executions {
            let doc = self.run(kind, executor, options, Some(values))?;
            match output::field(&doc, "exports") {
                None | Some(Json::Null) => {}
                Some(Json::Object(these)) => output::merge_exports(&mut exports, these),
                Some(_) => {
                    return Err(execution_error(
                        kind,
                        executor,
                        "exports: expected a map".into(),
                    ));
                }
            }
        }
        Ok(exports)
    }

    /// Runs the blueprint's `importExecutions`: each one's `bindings` join the imports the
    /// next one sees; the first one that reports `errors` stops them.
    pub fn import_executions(&self, options: &ExecutionOptions) -> Result<ImportResult, Error> {
        let kind = ExecutionKind::Import;
        let mut current = options.clone();
        for executor in &options.blueprint.import_executions {
            let doc = self.run(kind, executor, &current, None)?;
            if let Some(Json::Object(bindings)) = output::field(&doc, "bindings") {
                for (key, value) in bindings {
                    current.imports.insert(key.clone(), value.clone());
                }
            }
            let errors: Vec<String> = match output::field(&doc, "errors") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(list)) => list
                    .iter()
                    .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                    .collect(),
                Some(_) => {
                    return Err(execution_error(
                        kind,
                        executor,
                        "errors: expected a list of strings".into(),
                    ));
                }
            };
            if !errors.is_empty() {
                return Ok(ImportResult {
                    imports: current.imports,
                    errors,
                });
            }
        }
        Ok(ImportResult {
            imports: current.imports,
            errors: Vec::new(),
        })
    }

    /// Runs one execution and returns the map it rendered.
    fn run(
        &self,
        kind: ExecutionKind,
        executor: &TemplateExecutor,
        options: &ExecutionOptions,
        values: Option<&Map<String, Json>>,
    ) -> Result<Map<String, Json>, Error> {
        let fail = |message: String| execution_error(kind, executor, message);
        let mut binding = options.binding(kind, values)?;
        let state_key = kind.state_key(executor.name.as_deref().unwrap_or_default());
        match executor.type_.as_str() {
            "GoTemplate" => {
                let text = go_template_text(executor, &options.filesystem).map_err(fail)?;
                if let Some(key) = &state_key {
                    binding.insert("state".into(), self.stored_state(key)?);
                }
                let check = (kind != ExecutionKind::Import).then_some(kind);
                let rendered =
                    gotemplate::render(check, &text, &binding, options.context()?).map_err(fail)?;
                let doc = crate::values::parse_yaml(&rendered)
                    .map_err(|e| format!("unable to decode the rendered template: {e}"))
                    .and_then(document_map)
                    .map_err(fail)?;
                if let Some(key) = &state_key {
                    self.store_state(key, output::field(&doc, "state"))?;
                }
                Ok(doc)
            }
            "Spiff" => {
                let template = crate::spiff::template(
                    executor.template.as_ref(),
                    executor.file.as_deref(),
                    &options.filesystem,
                )
                .map_err(fail)?;
                let stored = match &state_key {
                    Some(key) => self.state.get(key)?,
                    None => None,
                };
                let (document, state) = crate::spiff::render(
                    &template,
                    &binding,
                    stored.as_deref(),
                    options.filesystem.clone(),
                    crate::spiff::Components {
                        component: options.component.clone(),
                        components: options.components.clone().unwrap_or_default(),
                        schema: options.schema_version()?,
                        source: options.source.clone(),
                        targets: options.target_resolver(),
                    },
                )
                .map_err(|message| {
                    fail(format!(
                        "{message}\ntemplate input:\n{}",
                        crate::report::format_input(
                            &binding,
                            crate::report::SPIFF_SENSITIVE_KEYS,
                            "\t",
                            false
                        )
                    ))
                })?;
                if let Some(key) = &state_key {
                    self.store_state(key, Some(&state))?;
                }
                document_map(document).map_err(fail)
            }
            other => Err(fail(format!("unknown template type {other}"))),
        }
    }

    /// The state stored under `key`, parsed; `{}` when nothing is stored.
    fn stored_state(&self, key: &str) -> Result<Json, Error> {
        let Some(data) = self.state.get(key)? else {
            return Ok(json!({}));
        };
        let text = String::from_utf8_lossy(&data);
        crate::values::parse_yaml(&text).map_err(|e| Error::State(format!("state {key}: {e}")))
    }

    /// Stores a rendered top-level `state` node as JSON when it is present and not empty.
    fn store_state(&self, key: &str, state: Option<&Json>) -> Result<(), Error> {
        let empty = match state {
            None | Some(Json::Null) => true,
            Some(Json::Object(m)) => m.is_empty(),
            Some(Json::Array(l)) => l.is_empty(),
            Some(Json::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        match state {
            Some(state) if !empty => self.state.set(key, state.to_string().into_bytes()),
            _ => Ok(()),
        }
    }
}

/// A rendered document as the map executions must render; nothing rendered is an empty map.
fn document_map(document: Json) -> Result<Map<String, Json>, String> {
    match document {
        Json::Null => Ok(Map::new()),
        Json::Object(map) => Ok(map),
        _ => Err("the rendered template is not a map".into()),
    }
}

/// Renders GoTemplate `text` with `binding` and the Landscaper functions over `filesystem`,
/// as an execution's template is rendered, without decoding or checking the output.
pub fn render_go_template(
    text: &str,
    binding: &Map<String, Json>,
    filesystem: Arc<Filesystem>,
) -> Result<String, String> {
    let context = Context {
        filesystem,
        component: None,
        components: Vec::new(),
        schema: SchemaVersion::V2,
        source: None,
        targets: Arc::new(InlineOnly),
    };
    gotemplate::render(None, text, binding, Arc::new(context))
}

/// The text of a GoTemplate execution: its `template` string or its `file`.
fn go_template_text(executor: &TemplateExecutor, fs: &Filesystem) -> Result<String, String> {
    match (&executor.template, &executor.file) {
        (Some(Json::String(text)), _) => Ok(text.clone()),
        (Some(Json::Null) | None, Some(file)) => fs
            .read_text(file)
            .map(str::to_string)
            .map_err(|e| e.to_string()),
        (Some(Json::Null) | None, None) => Err("no template found".into()),
        (Some(_), _) => Err("a GoTemplate template must be a string".into()),
    }
}

/// An execution's error, naming the file of the template when it has one.
fn execution_error(kind: ExecutionKind, executor: &TemplateExecutor, message: String) -> Error {
    let message = match &executor.file {
        Some(file) => format!("file {file}: {message}"),
        None => message,
    };
    Error::Execution {
        kind,
        name: executor.name.clone().unwrap_or_default(),
        message,
    }
}
