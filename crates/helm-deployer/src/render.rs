//! Rendering a chart for one revision with `crates/chart` against the target cluster, and
//! turning the result into the objects to apply (CRDs of `crds/` first) and the chart as
//! Helm records it.

use super::render_target::RenderTarget;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use landscaper_chart::formats::tree::{Data, Map};
use landscaper_chart::formats::yaml::split_manifests;
use landscaper_chart::helm::chart::{Chart, File, Metadata};
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_deployer::error::Error;
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use tokio::sync::Semaphore;

const OPERATION: &str = "RenderChart";

/// What one revision deploys.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    /// The manifest text as Helm stores it in the release.
    pub manifest: String,
    /// The rendered hooks.
    pub hooks: Vec<landscaper_chart::helm::render::manifest::Manifest>,
    /// `NOTES.txt`.
    pub notes: String,
    /// The CRDs of `crds/`, installed before everything else.
    pub crds: Vec<Value>,
    /// The objects of the manifest, in Helm's install order.
    pub objects: Vec<Value>,
}

/// The inputs of one render.
pub struct Request<'a> {
    /// The chart, shared with the render's blocking thread.
    pub chart: &'a Arc<Chart>,
    /// The user values.
    pub values: &'a Map,
    /// Release name and namespace, revision and whether it is an upgrade.
    pub release: ReleaseOptions,
    /// The target cluster's `.Capabilities` and `lookup`.
    pub target: &'a RenderTarget,
    /// `namespace/name` of the item, for messages.
    pub item: &'a str,
}

/// Converts the configuration's values into template data with Go's JSON typing, as
/// Landscaper hands JSON values to Helm.
pub fn values(value: Option<&Value>, item: &str) -> Result<Map, Error> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(Map::default());
    };
    let text = serde_json::to_string(value).unwrap_or_default();
    landscaper_chart::formats::json::parse_object(&text).map_err(|e| {
        Error::config(
            OPERATION,
            "InvalidValues",
            format!(
                "DeployItem {item} spec.config.values must be an object: {}",
                e.message
            ),
        )
    })
}

/// Renders running at once in this process, at most one per core: rendering is CPU work, so
/// more at once finish no sooner, and each one running holds its peak memory (several MiB for
/// a chart like bitnami nginx), so the process's peak grows with every render running at once. Deploy workers beyond this wait
/// here and apply, await readiness and write records concurrently.
fn render_slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS
        .get_or_init(|| Semaphore::new(std::thread::available_parallelism().map_or(1, usize::from)))
}

/// Renders the chart as `helm install`/`upgrade` would. The template engine runs on a
/// blocking thread: it is CPU work, and `lookup` waits there for the cluster's answers.
pub async fn render(req: &Request<'_>) -> Result<Rendered, Error> {
    let chart_id = format!("{}-{}", req.chart.name(), req.chart.metadata.version);
    // The semaphore is never closed (were it, renders would just run unbounded).
    let _slot = render_slots().acquire().await.ok();
    let options = TemplateOptions {
        release: req.release.clone(),
        kube_version: req.target.kube_version.clone(),
        cluster_api_versions: Some(req.target.api_versions.clone()),
        lookup: Some(req.target.lookup.clone()),
        ..Default::default()
    };
    // A failure left by an earlier render must not explain this one.
    req.target.take_lookup_failure();
    let (chart, values) = (req.chart.clone(), req.values.clone());
    let rendered = tokio::task::spawn_blocking(move || render::install(&chart, &values, &options))
        .await
        .map_err(|e| {
            Error::transient(
                OPERATION,
                "RenderChart",
                format!(
                    "DeployItem {}: chart {chart_id}: the render stopped: {e}",
                    req.item
                ),
            )
        })?;
    let release = rendered.map_err(|e| {
        let message = format!("DeployItem {}: chart {chart_id}: {}", req.item, e.summary);
        // A template cannot recover from a failed `lookup`: when one failed, it is why the
        // render did, and its classification decides whether a retry can help.
        match req.target.take_lookup_failure() {
            Some(cause) => Error {
                operation: OPERATION.into(),
                message,
                ..cause
            },
            None => Error::config(OPERATION, "RenderChart", message),
        }
    })?;
    let objects = parse_documents(&release.manifest, &chart_id, req.item)?;
    let mut crds = Vec::new();
    // The CRDs of the chart as rendered: a disabled subchart's are not installed.
    for (path, data) in &release.crds {
        let data = data.read().map_err(|e| {
            Error::config(
                OPERATION,
                "RenderChart",
                format!("DeployItem {}: chart {chart_id}: {e}", req.item),
            )
        })?;
        let text = String::from_utf8_lossy(data);
        crds.extend(parse_documents(
            &text,
            &format!("{chart_id} {path}"),
            req.item,
        )?);
    }
    Ok(Rendered {
        manifest: release.manifest,
        hooks: release.hooks,
        notes: release.notes,
        crds,
        objects,
    })
}

/// Parses rendered YAML documents into objects; empty documents are dropped as Helm does.
pub fn parse_documents(text: &str, chart: &str, item: &str) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for doc in split_manifests(text) {
        let value: Value = serde_yaml_ng::from_str(&doc).map_err(|e| {
            Error::config(
                OPERATION,
                "InvalidManifest",
                format!("DeployItem {item}: chart {chart}: rendered YAML is invalid: {e}"),
            )
        })?;
        if value.is_object() {
            out.push(value);
        }
    }
    Ok(out)
}

/// The chart as Helm records it in a release: metadata, templates, values, schema, files.
pub fn chart_record(chart: &Chart) -> Value {
    json!({
        "metadata": metadata_record(&chart.metadata),
        "lock": null,
        "templates": files_record(&chart.templates),
        "values": data_record(&chart.values),
        "schema": chart.schema.as_ref().map(|s| STANDARD.encode(s)),
        "schemamodtime": go_time(chart.schema_modified),
        "files": files_record(&chart.files),
        "modtime": go_time(chart.modified),
    })
}

/// A time as Go's JSON writes `time.Time` in UTC; Go's zero time when unknown.
fn go_time(t: Option<k8s_openapi::jiff::Timestamp>) -> String {
    t.map_or_else(|| "0001-01-01T00:00:00Z".into(), |t| t.to_string())
}

/// Template data as JSON (Go's encoding).
pub fn data_record(map: &Map) -> Value {
    data_json(&Data::Map(map.clone())).unwrap_or_else(|| json!({}))
}

fn data_json(data: &Data) -> Option<Value> {
    landscaper_chart::formats::json::to_json(data)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
}

/// Files as Go encodes `[]*File`: `null` when there are none. The deployer's charts come from
/// archives ([`landscaper_chart::helm::chart::load_archive`]), whose files are all read as they load.
fn files_record(files: &[File]) -> Value {
    if files.is_empty() {
        return Value::Null;
    }
    Value::Array(
        files
            .iter()
            .map(|f| {
                json!({"name": f.name, "data": STANDARD.encode(f.data.bytes_or_empty()),
                    "modtime": go_time(f.modified)})
            })
            .collect(),
    )
}

/// Whether Go's `omitempty` leaves `v` out.
fn go_empty(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(b) => !b,
        Value::Null => true,
        Value::Number(_) => false,
    }
}

/// A JSON object of `fields`, leaving out the `omitempty` ones that are empty.
fn go_object(fields: &[(&str, Value, bool)]) -> Value {
    Value::Object(
        fields
            .iter()
            .filter(|(_, v, omitempty)| !(*omitempty && go_empty(v)))
            .map(|(k, v, _)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn metadata_record(m: &Metadata) -> Value {
    let mut out = serde_json::Map::new();
    let mut put = |key: &str, v: Value| {
        if !go_empty(&v) {
            out.insert(key.into(), v);
        }
    };
    put("name", json!(m.name));
    put("home", json!(m.home));
    put("sources", json!(m.sources));
    put("version", json!(m.version));
    put("description", json!(m.description));
    put("keywords", json!(m.keywords));
    put(
        "maintainers",
        Value::Array(
            m.maintainers
                .iter()
                .map(|x| {
                    go_object(&[
                        ("name", json!(x.name), true),
                        ("email", json!(x.email), true),
                        ("url", json!(x.url), true),
                    ])
                })
                .collect(),
        ),
    );
    put("icon", json!(m.icon));
    put("apiVersion", json!(m.api_version));
    put("condition", json!(m.condition));
    put("tags", json!(m.tags));
    put("appVersion", json!(m.app_version));
    put("deprecated", json!(m.deprecated));
    put("annotations", json!(m.annotations));
    put("kubeVersion", json!(m.kube_version));
    put(
        "dependencies",
        Value::Array(
            m.dependencies
                .iter()
                .map(|d| {
                    go_object(&[
                        ("name", json!(d.name), false),
                        ("version", json!(d.version), true),
                        ("repository", json!(d.repository), false),
                        ("condition", json!(d.condition), true),
                        ("tags", json!(d.tags), true),
                        ("enabled", json!(d.enabled), true),
                        (
                            "import-values",
                            data_json(&Data::List(d.import_values.clone())).unwrap_or_default(),
                            true,
                        ),
                        ("alias", json!(d.alias), true),
                    ])
                })
                .collect(),
        ),
    );
    put("type", json!(m.chart_type));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_without_content_are_dropped() {
        let objs = parse_documents(
            "---\n# Source: c/templates/a.yaml\nkind: ConfigMap\n---\n# Source: c/templates/b.yaml\n# only a comment\n",
            "c-1.0.0",
            "ns/item",
        )
        .unwrap();
        assert_eq!(objs, vec![json!({"kind": "ConfigMap"})]);
    }

    #[test]
    fn invalid_yaml_names_chart_and_item() {
        let e = parse_documents("a: [", "c-1.0.0", "ns/item").unwrap_err();
        assert!(
            e.message.contains("ns/item") && e.message.contains("chart c-1.0.0"),
            "{}",
            e.message
        );
    }

    #[test]
    fn values_keep_gos_json_typing() {
        let m = values(Some(&json!({"replicas": 2, "name": "x"})), "ns/item").unwrap();
        assert_eq!(data_record(&m), json!({"name": "x", "replicas": 2}));
        assert!(values(Some(&json!([1])), "ns/item").is_err());
    }
}
