//! Rendering a chart as `helm install --dry-run` / `helm template` do: dependency processing,
//! values coalescing and schema validation, all templates of the chart and its subcharts in
//! one namespace with Helm's render context, NOTES kept apart, documents split, hooks
//! separated, install order, and the text `helm template` prints.

pub mod context;
mod head;
mod late;
pub mod manifest;
mod quick_head;

pub use context::{default_capabilities, parse_kube_version};
pub use manifest::{CheckedFile, Manifest, check_file, sort_manifests};

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;
use bytestring::ByteString;

use crate::engine::value::{Map, Value};
use crate::engine::{self, Engine, ErrorKind, ParsedTemplate};
use crate::formats::tree::Map as DataMap;
use crate::formats::yaml::split_manifests;
use crate::helm::chart::metadata::is_compatible_range;
use crate::helm::chart::pattern;
use crate::helm::chart::{Chart, Contents, LoadError, file_text, source_text};
use crate::helm::funcs::{Lookup, install_lookup};
use crate::helm::objects::{ApiVersions, Capabilities};
use crate::helm::objects::{Files, KubeVersion};
use crate::helm::values::{self, Warnings};

/// `.Release` settings.
#[derive(Debug, Clone)]
pub struct ReleaseOptions {
    /// The release name.
    pub name: String,
    /// The namespace.
    pub namespace: String,
    /// The revision (1 for an install).
    pub revision: i64,
    /// Whether this is an upgrade rather than an install.
    pub is_upgrade: bool,
}

impl Default for ReleaseOptions {
    /// `helm template`'s defaults: `release-name` in `default`, revision 1, an install.
    fn default() -> Self {
        ReleaseOptions {
            name: "release-name".to_string(),
            namespace: "default".to_string(),
            revision: 1,
            is_upgrade: false,
        }
    }
}

/// Helm's words for a release name that breaks [`is_valid_release_name`]'s rule.
pub const INVALID_RELEASE_NAME: &str = "invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53";

/// Helm's release name rule: a DNS-1123 subdomain of at most 53 characters.
pub fn is_valid_release_name(name: &str) -> bool {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    !name.is_empty() && name.len() <= 53 && name.split('.').all(label_ok)
}

/// Everything besides chart and values that decides what `helm template` prints.
#[derive(Debug, Clone, Default)]
pub struct TemplateOptions {
    /// `.Release`.
    pub release: ReleaseOptions,
    /// `--kube-version` for `.Capabilities.KubeVersion` (Helm's default when `None`).
    pub kube_version: Option<KubeVersion>,
    /// `--api-versions`: added to Helm's default `.Capabilities.APIVersions`.
    pub extra_api_versions: Vec<String>,
    /// The API versions a cluster serves, which replace Helm's default set (as `helm install`
    /// asks the cluster); `extra_api_versions` still follow.
    pub cluster_api_versions: Option<Vec<String>>,
    /// A `lookup` answered by a cluster; `None` keeps `helm template`'s empty answers.
    pub lookup: Option<Lookup>,
    /// `--include-crds`: print the charts' `crds/` files first.
    pub include_crds: bool,
    /// `--skip-tests`: leave out `helm.sh/hook: test` documents.
    pub skip_tests: bool,
    /// `--no-hooks`: leave out all hooks.
    pub disable_hooks: bool,
    /// `--show-only`: print only the documents of these templates (Go path patterns).
    pub show_only: Vec<String>,
    /// `--skip-schema-validation`.
    pub skip_schema_validation: bool,
    /// Leave what a render built (the template engine with its parse trees, the chart it
    /// rendered, which is [`install`]'s copy or what [`install_owned`] took, and the coalesced
    /// values) allocated after it succeeds, for a process that exits right after
    /// (`template`): freeing hundreds of thousands of small allocations one by one costs
    /// milliseconds that the exit saves. Long-running callers leave it false.
    pub leave_to_exit: bool,
}

/// A render failure, with what Helm shows of a half-made release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderError {
    /// Helm's message (what follows `Error: `); some are several lines (schema violations,
    /// template traces).
    pub message: String,
    /// The same failure on one line naming the file and position (the values path for a
    /// schema violation), for statuses and logs where a multi-line message does not fit.
    pub summary: String,
    /// When the failure happened while rendering, the manifest made so far (`--debug` prints
    /// it, and without `--debug` Helm adds a hint to the message).
    pub partial_manifest: Option<String>,
}

impl RenderError {
    fn before_render(message: impl Into<String>) -> RenderError {
        let message = message.into();
        RenderError {
            summary: one_line(&message),
            message,
            partial_manifest: None,
        }
    }

    fn during_render(message: impl Into<String>, manifest: String) -> RenderError {
        let message = message.into();
        RenderError {
            summary: one_line(&message),
            message,
            partial_manifest: Some(manifest),
        }
    }

    fn with_summary(mut self, summary: String) -> RenderError {
        self.summary = one_line(&summary);
        self
    }

    /// A template that failed to parse or execute: Helm's words, and Go's one-line error
    /// (`template: FILE:LINE:COL: executing …`) where Helm's take several lines.
    fn template(error: &engine::Error, helm_message: String) -> RenderError {
        let summary = if helm_message.contains('\n') {
            error.to_string()
        } else {
            helm_message.clone()
        };
        RenderError::during_render(helm_message, String::new()).with_summary(summary)
    }
}

/// `text` on one line: its non-blank lines, trimmed, joined by `; ` (a `fail` message or a
/// YAML error can carry line breaks of its own).
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RenderError {}

/// A rendered release: the manifest text, hooks and notes.
#[derive(Debug, Clone, Default)]
pub struct Release {
    /// The plain manifests as Helm stores them (`---\n# Source: …\n…\n` per document).
    pub manifest: String,
    /// Hook documents in install order.
    pub hooks: Vec<Manifest>,
    /// The root chart's rendered `NOTES.txt`.
    pub notes: String,
    /// Lines Helm would log, in its order (values that could not be merged, unknown
    /// conditions, then hooks skipped for an unknown event).
    pub warnings: Vec<String>,
    /// The CRD files of the chart as rendered (without disabled subcharts, under their
    /// aliases), by path, as Helm installs them; the manifest starts with them when
    /// `include_crds` is set.
    pub crds: Vec<(String, Contents)>,
}

/// Renders `chart` with the user values `user_values` as `helm install` does without a
/// cluster.
pub fn install(
    chart: &Chart,
    user_values: &DataMap,
    options: &TemplateOptions,
) -> Result<Release, RenderError> {
    check_installable(chart)?;
    install_checked(chart.clone(), user_values, options)
}

/// [`install`] for a caller done with the chart: processing its dependencies edits the chart
/// itself rather than a copy of it (of every values tree in it).
pub fn install_owned(
    chart: Chart,
    user_values: &DataMap,
    options: &TemplateOptions,
) -> Result<Release, RenderError> {
    check_installable(&chart)?;
    install_checked(chart, user_values, options)
}

/// Whether Helm would install `chart`: an application chart with its dependencies present.
fn check_installable(chart: &Chart) -> Result<(), RenderError> {
    match chart.metadata.chart_type.as_str() {
        "" | "application" => {}
        other => {
            return Err(RenderError::before_render(format!(
                "{other} charts are not installable"
            )));
        }
    }
    values::check_dependencies(chart).map_err(|e| {
        let missing: Vec<String> = values::missing_dependencies(chart)
            .iter()
            .map(|(i, name)| format!("dependencies[{i}] ({name})"))
            .collect();
        RenderError::before_render(format!(
            "an error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: {e}"
        ))
        .with_summary(format!(
            "{}/Chart.yaml: {}: missing in charts/ (`helm dependency build` fetches them)",
            chart.name(),
            missing.join(", ")
        ))
    })
}

fn install_checked(
    mut chart: Chart,
    user_values: &DataMap,
    options: &TemplateOptions,
) -> Result<Release, RenderError> {
    let mut warnings = Warnings::default();
    values::process_dependencies(&mut chart, user_values, &mut warnings)
        .map_err(RenderError::before_render)?;
    // Nothing reads the chart's defaults once they are coalesced.
    let coalesced = values::coalesce_values_taking(&mut chart, user_values, &mut warnings)
        .map_err(RenderError::before_render)?;
    if !options.skip_schema_validation {
        values::validate_against_schema(&chart, &coalesced).map_err(|e| {
            RenderError::before_render(format!(
                "values don't meet the specifications of the schema(s) in the following chart(s):\n{e}"
            ))
            .with_summary(format!(
                "values don't meet the specifications of the schema(s): {}",
                e.one_line()
            ))
        })?;
    }
    let mut release = render_resources(&chart, &coalesced, options)?;
    // Helm logs the values warnings before those of the render.
    warnings.0.append(&mut release.warnings);
    release.warnings = warnings.0;
    if options.leave_to_exit {
        std::mem::forget(chart);
        std::mem::forget(coalesced);
    }
    Ok(release)
}

fn render_resources(
    chart: &Chart,
    values: &DataMap,
    options: &TemplateOptions,
) -> Result<Release, RenderError> {
    check_kube_version(chart, options)?;
    // Each file's YAML is checked on other cores while the next templates render.
    let render_checked = |parse_late: bool| {
        crate::parallel::pipeline(
            |(path, content): (String, String)| {
                let checked = if path.ends_with("NOTES.txt") {
                    CheckedFile::default()
                } else {
                    check_file(&path, &content)
                };
                (path, content, checked)
            },
            |submit| {
                render_each(chart, values, options, parse_late, &mut |path, text| {
                    submit((path, text))
                })
            },
        )
    };
    // On one core, a file parsed late would only wait for the same core.
    let (rendered, checked) = match render_checked(crate::parallel::cores() > 1) {
        // Helm's answer is that of the render with every file parsed first.
        (Err(Failure::Early(_)), _) => render_checked(false),
        done => done,
    };
    rendered.map_err(|(Failure::Early(e) | Failure::Render(e))| e)?;
    // A template read a file that loading left to be read on first use, and reading it
    // failed: the template saw it empty.
    if let Some(e) = chart.deferred_read_failure() {
        return Err(RenderError::before_render(e.0.clone()));
    }
    let (files, checked_files, notes) = sort_out_notes(chart, checked);
    assemble_release(chart, options, files, checked_files, notes)
}

/// Fails when the chart's `kubeVersion` does not admit the Kubernetes version rendered for.
fn check_kube_version(chart: &Chart, options: &TemplateOptions) -> Result<(), RenderError> {
    let capabilities = capabilities(options);
    let kube = &capabilities.kube_version.version;
    if !chart.metadata.kube_version.is_empty()
        && !is_compatible_range(&chart.metadata.kube_version, kube)
    {
        return Err(RenderError::during_render(
            format!(
                "chart requires kubeVersion: {} which is incompatible with Kubernetes {kube}",
                chart.metadata.kube_version
            ),
            String::new(),
        ));
    }
    Ok(())
}

/// The rendered files by path, their checked documents by path, and the top chart's notes
/// (subcharts' notes are dropped, as Helm drops them).
type SortedOut = (
    BTreeMap<String, String>,
    BTreeMap<String, CheckedFile>,
    String,
);

/// Sorts the rendered and checked files into manifests and the notes.
fn sort_out_notes(chart: &Chart, checked: Vec<(String, String, CheckedFile)>) -> SortedOut {
    let notes_key = format!("{}/templates/NOTES.txt", chart.name());
    let mut notes = String::new();
    let mut files = BTreeMap::new();
    let mut checked_files = BTreeMap::new();
    for (path, content, checked) in checked {
        if path == notes_key {
            notes = content;
        } else if !path.ends_with("NOTES.txt") {
            checked_files.insert(path.clone(), checked);
            files.insert(path, content);
        }
    }
    (files, checked_files, notes)
}

/// The release from the rendered files: manifests in Helm's install order after the CRDs
/// (when asked for), hooks apart, and the notes.
fn assemble_release(
    chart: &Chart,
    options: &TemplateOptions,
    files: BTreeMap<String, String>,
    checked_files: BTreeMap<String, CheckedFile>,
    notes: String,
) -> Result<Release, RenderError> {
    let mut warnings = Warnings::default();
    let (manifests, hooks) = match sort_manifests(checked_files, &mut warnings) {
        Ok(sorted) => sorted,
        Err(e) => {
            let rendered: Vec<_> = files
                .iter()
                .filter(|(_, content)| !content.trim().is_empty())
                .map(|(name, content)| (name.as_str(), Cow::Borrowed(content.as_str())))
                .collect();
            let mut blob = String::new();
            push_source_blocks(&mut blob, &rendered);
            return Err(RenderError::during_render(e, blob));
        }
    };
    let crds = chart.crd_objects(chart.name());
    let printed_crds = if options.include_crds { &crds[..] } else { &[] };
    let printed_crds = printed_crds
        .iter()
        .map(|(name, file)| Ok((name.as_str(), file_text(file.data.read()?))))
        .collect::<Result<Vec<_>, LoadError>>()
        .map_err(|e| RenderError::before_render(e.0))?;
    let sources = printed_crds
        .into_iter()
        .chain(
            manifests
                .iter()
                .map(|m| (m.path.as_str(), Cow::Borrowed(m.content.as_str()))),
        )
        .collect::<Vec<_>>();
    let mut manifest = String::new();
    push_source_blocks(&mut manifest, &sources);
    Ok(Release {
        manifest,
        hooks,
        notes,
        warnings: warnings.0,
        crds: crds
            .into_iter()
            .map(|(name, file)| (name, file.data.clone()))
            .collect(),
    })
}

/// One template to render, with the context of the chart it belongs to.
struct Renderable<'c> {
    /// The file's contents: its template text, by which a parse made while the chart loaded
    /// is also found.
    data: &'c Contents,
    dot: Map,
    base_path: String,
}

/// Why rendering the templates stopped.
enum Failure {
    /// A file did not parse or a template failed while files were still to be parsed late:
    /// perhaps only because a template called one of them by name before the render reached
    /// it.
    Early(RenderError),
    /// The render failed as Helm's does.
    Render(RenderError),
}

/// Renders every template of `chart` and its subcharts, handing each path (such as
/// `mychart/charts/sub/templates/x.yaml`) and text (`<no value>` removed) to `emit` as soon as
/// it is rendered, in Helm's parse order, not path order.
///
/// With `parse_late`, files that define nothing but themselves and were not parsed while the
/// chart loaded are parsed on another thread while the templates before them execute
/// (`late`); a failure then is [`Failure::Early`].
fn render_each(
    chart: &Chart,
    values: &DataMap,
    options: &TemplateOptions,
    parse_late: bool,
    emit: &mut dyn FnMut(String, String),
) -> Result<(), Failure> {
    let top = Top {
        release: release_object(options),
        capabilities: Value::object(capabilities(options)),
    };
    let mut renderables = BTreeMap::new();
    let root_values = Value::from_data_map(values);
    collect(
        chart,
        chart.name(),
        true,
        root_values,
        &top,
        &mut renderables,
    );

    let mut names: Vec<&String> = renderables.keys().collect();
    // Helm parses deeper paths first and, at equal depth, in reverse order, so that a parent
    // chart's definitions come last and win.
    // Keys worked out once per name, not at every comparison.
    names.sort_by_cached_key(|name| (Reverse(name.matches('/').count()), Reverse(*name)));
    let mut engine = Engine::new(crate::helm::funcs::helm_funcs());
    if let Some(lookup) = &options.lookup {
        install_lookup(engine.funcs_mut(), lookup.clone());
    }
    let (files, parsed) = template_texts(chart, &names, &renderables)?;
    let is_late = if parse_late {
        late::choose(&files, &parsed)
    } else {
        vec![false; files.len()]
    };
    let late: Vec<usize> = (0..files.len()).filter(|&i| is_late[i]).collect();
    let (first, first_parsed): (Vec<_>, Vec<_>) = files
        .iter()
        .cloned()
        .zip(parsed)
        .zip(&is_late)
        .filter(|(_, late)| !**late)
        .map(|(file, _)| file)
        .unzip();
    let failure = if late.is_empty() {
        Failure::Render
    } else {
        Failure::Early
    };
    // The helper begins on the late files while the others are added.
    late::with_late_parses(&files, &late, |late_parses| {
        engine
            .add_templates_parsed(&first, first_parsed)
            .map_err(|e| failure(RenderError::template(&e, e.helm_message())))?;
        // A file parsed late adds only its own template: if nothing else has its name, the
        // namespace is what Helm's order of adding makes it; if something has, the render
        // starts again in that order.
        if late.iter().any(|&i| engine.has_template(files[i].0)) {
            return Err(Failure::Early(RenderError::before_render(
                "a template is named as a template file",
            )));
        }
        for ((name, r), (file, parsed_late)) in names
            .iter()
            .map(|name| (*name, &renderables[*name]))
            .zip(files.iter().zip(&is_late))
        {
            if *parsed_late {
                let parsed = late_parses.take_next();
                engine
                    .add_templates_parsed(std::slice::from_ref(file), vec![parsed])
                    .map_err(|e| failure(RenderError::template(&e, e.helm_message())))?;
            }
            let base = name.rsplit('/').next().unwrap_or(name);
            if base.starts_with('_') {
                continue;
            }
            let template = Map::new();
            template.insert("Name", Value::from(name.as_str()));
            template.insert("BasePath", Value::from(r.base_path.as_str()));
            r.dot.insert("Template", Value::Map(template));
            let rendered = engine
                .render_helm(name, &Value::Map(r.dot.clone()))
                .map_err(|e| failure(RenderError::template(&e, exec_message(&e))))?;
            emit(name.clone(), rendered);
        }
        Ok(())
    })?;
    if options.leave_to_exit {
        std::mem::forget(engine);
    }
    Ok(())
}

/// Template files by name with their texts, and the parses made while the chart loaded.
type TemplateTexts<'n> = (Vec<(&'n str, ByteString)>, Vec<Option<ParsedTemplate>>);

/// The text of each template file in `names`' order, with the parse made of it while the
/// chart loaded, if any.
fn template_texts<'n>(
    chart: &Chart,
    names: &[&'n String],
    renderables: &BTreeMap<String, Renderable<'_>>,
) -> Result<TemplateTexts<'n>, Failure> {
    let contents = names
        .iter()
        .map(|name| renderables[*name].data.read())
        .collect::<Result<Vec<&Bytes>, LoadError>>()
        .map_err(|e| Failure::Render(RenderError::before_render(e.0)))?;
    let mut parsed = chart.parsed_ahead.take_all(&contents);
    parsed.resize_with(names.len(), || None);
    // A file parsed ahead has had its text checked as UTF-8 already.
    let files = names
        .iter()
        .zip(&contents)
        .zip(&parsed)
        .map(|((name, data), ahead)| {
            let text = ahead
                .as_ref()
                .map_or_else(|| source_text(data), |ahead| ahead.text().clone());
            (name.as_str(), text)
        })
        .collect();
    Ok((files, parsed))
}

/// `.Release` for `options`.
fn release_object(options: &TemplateOptions) -> Value {
    let release = Map::new();
    release.insert("Name", Value::from(options.release.name.as_str()));
    release.insert("Namespace", Value::from(options.release.namespace.as_str()));
    release.insert("IsUpgrade", Value::Bool(options.release.is_upgrade));
    release.insert("IsInstall", Value::Bool(!options.release.is_upgrade));
    release.insert("Revision", Value::Int(options.release.revision));
    release.insert("Service", Value::from("Helm"));
    Value::Map(release)
}

/// `.Capabilities` for `options`: Helm's defaults, or the cluster's API versions when known.
fn capabilities(options: &TemplateOptions) -> Capabilities {
    let mut caps = default_capabilities(options.kube_version.as_ref(), &options.extra_api_versions);
    if let Some(served) = &options.cluster_api_versions {
        let mut versions = served.clone();
        versions.extend(options.extra_api_versions.iter().cloned());
        caps.api_versions = std::rc::Rc::new(ApiVersions(versions));
    }
    caps
}

/// The message Helm v4.1.4 prints for a failed template execution.
pub fn exec_message(error: &engine::Error) -> String {
    let helm = error.helm_message();
    if helm.starts_with("execution error at (") {
        return helm;
    }
    match error.kind() {
        ErrorKind::Exec => error.trace(),
        _ => helm,
    }
}

struct Top {
    release: Value,
    capabilities: Value,
}

/// Helm's `recAllTpls`: the context map of `chart` (shared by its templates), registering
/// its templates and recursing into subcharts.
fn collect<'c>(
    chart: &'c Chart,
    full_path: &str,
    is_root: bool,
    values: Value,
    top: &Top,
    out: &mut BTreeMap<String, Renderable<'c>>,
) -> Map {
    let subcharts = Map::new();
    let dot = Map::new();
    dot.insert("Chart", chart.metadata.to_value(is_root));
    dot.insert(
        "Files",
        Value::object(Files::new(
            chart.files.iter().map(|f| (f.name.clone(), f.data.clone())),
        )),
    );
    dot.insert("Release", top.release.clone());
    dot.insert("Capabilities", top.capabilities.clone());
    dot.insert("Values", values.clone());
    dot.insert("Subcharts", Value::Map(subcharts.clone()));
    for sub in &chart.dependencies {
        let sub_values = match values.as_map().and_then(|m| m.get(sub.name())) {
            Some(v @ Value::Map(_)) => v,
            _ => Value::empty_map(),
        };
        let sub_path = format!("{full_path}/charts/{}", sub.name());
        let sub_dot = collect(sub, &sub_path, false, sub_values, top, out);
        subcharts.insert(sub.name(), Value::Map(sub_dot));
    }
    for t in &chart.templates {
        let base = t.name.rsplit('/').next().unwrap_or(&t.name);
        if chart.metadata.is_library() && !base.starts_with('_') {
            continue;
        }
        out.insert(
            format!("{full_path}/{}", t.name),
            Renderable {
                data: &t.data,
                dot: dot.clone(),
                base_path: format!("{full_path}/templates"),
            },
        );
    }
    dot
}

/// Appends `---`, a `# Source:` line and the content for each named content to `text`, grown
/// once (a large chart's manifest is a megabyte or more).
fn push_source_blocks(text: &mut String, blocks: &[(&str, Cow<'_, str>)]) {
    text.reserve(source_blocks_len(blocks));
    for (name, content) in blocks {
        for part in ["---\n# Source: ", name, "\n", content, "\n"] {
            text.push_str(part);
        }
    }
}

/// How long the text [`push_source_blocks`] appends for `blocks` is.
fn source_blocks_len(blocks: &[(&str, Cow<'_, str>)]) -> usize {
    const FRAME: usize = "---\n# Source: \n\n".len();
    blocks
        .iter()
        .map(|(name, content)| FRAME + name.len() + content.len())
        .sum()
}

/// What `helm template` writes to stdout for a rendered release: its manifest, trimmed, with
/// the hooks appended in place (a large chart's manifest is a megabyte or more).
pub fn template_output(release: Release, options: &TemplateOptions) -> Result<String, String> {
    let Release {
        manifest: mut manifests,
        hooks,
        ..
    } = release;
    let hooks: &[Manifest] = if options.disable_hooks { &[] } else { &hooks };
    let hooks = hooks
        .iter()
        .filter(|hook| !(options.skip_tests && hook.is_test_hook()))
        .map(|hook| (hook.path.as_str(), Cow::Borrowed(hook.content.as_str())))
        .collect::<Vec<_>>();
    manifests.truncate(manifests.trim_end().len());
    let leading = manifests.len() - manifests.trim_start().len();
    manifests.drain(..leading);
    manifests.push('\n');
    push_source_blocks(&mut manifests, &hooks);
    if options.show_only.is_empty() {
        return Ok(manifests);
    }
    let docs = split_manifests(&manifests);
    let mut out = String::new();
    for wanted in &options.show_only {
        let wanted = wanted.replace('\\', "/");
        let mut missing = true;
        for doc in &docs {
            let Some(name) = source_name(doc) else {
                continue;
            };
            if !pattern::matches(&wanted, name).unwrap_or(false) {
                continue;
            }
            out.push_str(&format!("---\n{doc}\n"));
            missing = false;
        }
        if missing {
            return Err(format!("could not find template {wanted} in chart"));
        }
    }
    Ok(out)
}

/// The template path after the chart name in a document's `# Source: chart/…` line.
fn source_name(doc: &str) -> Option<&str> {
    let start = doc.find("# Source: ")? + "# Source: ".len();
    let rest = &doc[start..];
    let slash = rest.find('/')?;
    if slash == 0 || rest[..slash].contains('\n') {
        return None;
    }
    let name = &rest[slash + 1..];
    let end = name.find('\n').unwrap_or(name.len());
    let name = &name[..end];
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::tree::Data;

    fn chart(template: &str) -> Chart {
        chart_of(&[
            ("Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n"),
            ("templates/t.yaml", template),
        ])
    }

    #[test]
    fn a_cluster_lookup_and_api_versions_replace_the_offline_answers() {
        let c = chart(
            "a: {{ lookup \"v1\" \"Secret\" \"ns\" \"s\" | toJson }}\nb: {{ .Capabilities.APIVersions.Has \"x.io/v1\" }}\nc: {{ .Capabilities.APIVersions.Has \"apps/v1\" }}\n",
        );
        let offline = install(&c, &DataMap::default(), &TemplateOptions::default()).unwrap();
        assert!(
            offline.manifest.contains("a: {}\nb: false\nc: true"),
            "{}",
            offline.manifest
        );
        let lookup = Lookup(std::sync::Arc::new(
            |api: &str, kind: &str, ns: &str, name: &str| {
                let mut data = DataMap::default();
                data.insert(
                    "k".into(),
                    Data::String(format!("{api}|{kind}|{ns}|{name}")),
                );
                let mut obj = DataMap::default();
                obj.insert("data".into(), Data::Map(data));
                Ok(Data::Map(obj))
            },
        ));
        let options = TemplateOptions {
            cluster_api_versions: Some(vec!["v1".into(), "x.io/v1".into()]),
            lookup: Some(lookup),
            ..Default::default()
        };
        let online = install(&c, &DataMap::default(), &options).unwrap();
        assert!(
            online
                .manifest
                .contains("a: {\"data\":{\"k\":\"v1|Secret|ns|s\"}}\nb: true\nc: false"),
            "{}",
            online.manifest
        );
        let failing = TemplateOptions {
            lookup: Some(Lookup(std::sync::Arc::new(
                |_: &str, _: &str, _: &str, _: &str| Err("forbidden".to_string()),
            ))),
            ..Default::default()
        };
        let e = install(&c, &DataMap::default(), &failing).unwrap_err();
        assert!(
            e.message.contains("error calling lookup: forbidden"),
            "{}",
            e.message
        );
    }

    #[test]
    fn source_names_skip_the_chart_name() {
        assert_eq!(
            source_name("# Source: c/templates/a.yaml\nkind: X"),
            Some("templates/a.yaml")
        );
        assert_eq!(source_name("kind: X"), None);
    }

    #[test]
    fn the_release_carries_the_crds_of_the_chart_as_rendered() {
        let crd = "kind: CustomResourceDefinition\nmetadata:\n  name: a\n";
        let c = chart_of(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: p\nversion: 0.1.0\ndependencies:\n- name: used\n  version: 0.1.0\n  alias: renamed\n- name: gone\n  version: 0.1.0\n  condition: gone.enabled\n",
            ),
            ("values.yaml", "gone:\n  enabled: false\n"),
            ("crds/own.yaml", crd),
            (
                "charts/used/Chart.yaml",
                "apiVersion: v2\nname: used\nversion: 0.1.0\n",
            ),
            ("charts/used/crds/used.yaml", crd),
            (
                "charts/gone/Chart.yaml",
                "apiVersion: v2\nname: gone\nversion: 0.1.0\n",
            ),
            ("charts/gone/crds/gone.yaml", crd),
        ]);
        let release = install(&c, &DataMap::default(), &TemplateOptions::default()).unwrap();
        let paths: Vec<&str> = release.crds.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["p/crds/own.yaml", "p/charts/renamed/crds/used.yaml"]
        );
        assert!(!release.manifest.contains("CustomResourceDefinition"));
    }

    #[test]
    fn a_subchart_taken_under_two_aliases_renders_twice_with_its_own_values() {
        let c = chart_of(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: p\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  alias: one\n- name: sub\n  version: 0.1.0\n  alias: two\n",
            ),
            ("values.yaml", "one:\n  x: 1\ntwo:\n  x: 2\n"),
            (
                "charts/sub/Chart.yaml",
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
            ),
            ("charts/sub/values.yaml", "x: 0\n"),
            (
                "charts/sub/templates/t.yaml",
                "name: {{ .Chart.Name }}\nx: {{ .Values.x }}\n",
            ),
            (
                "charts/extra/Chart.yaml",
                "apiVersion: v2\nname: extra\nversion: 0.1.0\n",
            ),
            ("charts/extra/templates/t.yaml", "name: {{ .Chart.Name }}\n"),
        ]);
        let release = install(&c, &DataMap::default(), &TemplateOptions::default()).unwrap();
        assert_eq!(
            release.manifest,
            "---\n# Source: p/charts/extra/templates/t.yaml\nname: extra\n\
             ---\n# Source: p/charts/one/templates/t.yaml\nname: one\nx: 1\n\
             ---\n# Source: p/charts/two/templates/t.yaml\nname: two\nx: 2\n"
        );
    }

    #[test]
    fn crd_files_left_unread_by_the_load_are_read_only_by_renders_that_use_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |name: &str, data: &str| {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, data).unwrap();
        };
        write("Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
        write("templates/cm.yaml", "kind: ConfigMap\n");
        write(
            "templates/copy.yaml",
            "{{ if .Values.copy }}copied: {{ .Files.Get \"crds/a.yaml\" | quote }}{{ end }}\n",
        );
        write("crds/a.yaml", "kind: CustomResourceDefinition\n");
        let load = || crate::helm::chart::load_dir(root).unwrap();
        let copy = crate::formats::yaml::parse_values("copy: true").unwrap();
        let with_crds = TemplateOptions {
            include_crds: true,
            ..TemplateOptions::default()
        };
        let plain = TemplateOptions::default();

        let release = install(&load(), &copy, &with_crds).unwrap();
        assert!(
            release
                .manifest
                .starts_with("---\n# Source: c/crds/a.yaml\nkind: CustomResourceDefinition\n"),
            "{}",
            release.manifest
        );
        assert!(
            release
                .manifest
                .contains("copied: \"kind: CustomResourceDefinition\\n\""),
            "{}",
            release.manifest
        );

        // Loaded, then grown beyond the size limit: a render that does not read the file
        // succeeds; one that prints it or hands it to a template fails, naming it.
        let [unread, printed, copied] = [load(), load(), load()];
        std::fs::File::options()
            .write(true)
            .open(root.join("crds/a.yaml"))
            .and_then(|f| f.set_len(crate::helm::chart::MAX_DECOMPRESSED_FILE_SIZE + 1))
            .unwrap();
        let release = install(&unread, &DataMap::default(), &plain).unwrap();
        assert_eq!(
            release.manifest,
            "---\n# Source: c/templates/cm.yaml\nkind: ConfigMap\n"
        );
        assert_eq!(unread.deferred_read_failure(), None);
        for (chart, values, options) in [
            (&printed, &DataMap::default(), &with_crds),
            (&copied, &copy, &plain),
        ] {
            let e = install(chart, values, options).unwrap_err();
            assert!(
                e.message
                    .contains("chart file \"a.yaml\" is larger than the maximum file size"),
                "{}",
                e.message
            );
        }
    }

    fn chart_of(files: &[(&str, &str)]) -> Chart {
        crate::helm::chart::load_files(
            files
                .iter()
                .map(|(name, data)| crate::helm::chart::File {
                    name: name.to_string(),
                    data: Bytes::copy_from_slice(data.as_bytes()).into(),
                    modified: None,
                })
                .collect(),
        )
        .unwrap()
    }

    fn failure(c: &Chart, values: &str) -> RenderError {
        let values = crate::formats::yaml::parse_values(values).unwrap();
        install(c, &values, &TemplateOptions::default()).unwrap_err()
    }

    #[test]
    fn a_template_trace_keeps_helms_lines_and_sums_up_in_gos_one_line() {
        let e = failure(&chart("a: 1\nb: {{ .Values.x.y.z }}\n"), "");
        assert!(
            e.message.starts_with("c/templates/t.yaml:2:"),
            "{}",
            e.message
        );
        assert!(e.message.contains('\n'), "{}", e.message);
        assert!(!e.summary.contains('\n'), "{}", e.summary);
        assert!(
            e.summary.starts_with("template: c/templates/t.yaml:2:")
                && e.summary.contains("nil pointer evaluating interface {}.y"),
            "{}",
            e.summary
        );
        let e = failure(&chart("a: {{ .Values.a\n"), "");
        assert_eq!(e.summary, e.message);
        assert!(
            e.summary.starts_with("parse error at (c/templates/t.yaml:"),
            "{}",
            e.summary
        );
    }

    #[test]
    fn a_render_that_leaves_its_allocations_to_the_exit_prints_the_same() {
        let c = chart("{{ define \"x\" }}b: {{ . }}{{ end }}a: 1\n{{ template \"x\" 2 }}\n");
        let freed = install(&c, &DataMap::default(), &TemplateOptions::default()).unwrap();
        let leaving = TemplateOptions {
            leave_to_exit: true,
            ..Default::default()
        };
        let left = install_owned(c, &DataMap::default(), &leaving).unwrap();
        assert_eq!(left.manifest, freed.manifest);
        assert!(left.manifest.contains("a: 1\nb: 2"), "{}", left.manifest);
    }

    #[test]
    fn values_and_version_errors_come_before_parse_errors() {
        // Large enough to be parsed on several threads.
        let padding = format!("# {}\n", "x".repeat(crate::parallel::MIN_PARALLEL_SIZE));
        let broken = format!("{padding}a: {{{{ .Values.a\n");
        let files = |chart_yaml: &'static str| {
            chart_of(&[
                ("Chart.yaml", chart_yaml),
                (
                    "values.schema.json",
                    r#"{"properties": {"count": {"type": "integer"}}}"#,
                ),
                ("templates/a.yaml", &padding),
                ("templates/b.yaml", &broken),
            ])
        };
        let c = files("apiVersion: v2\nname: c\nversion: 0.1.0\n");
        let e = failure(&c, "count: x\n");
        assert!(e.message.starts_with("values don't meet"), "{}", e.message);
        let e = failure(&c, "count: 1\n");
        assert!(
            e.summary.starts_with("parse error at (c/templates/b.yaml:"),
            "{}",
            e.summary
        );
        let old = files("apiVersion: v2\nname: c\nversion: 0.1.0\nkubeVersion: '< 1.0.0'\n");
        let e = failure(&old, "count: 1\n");
        assert!(
            e.message.starts_with("chart requires kubeVersion: < 1.0.0"),
            "{}",
            e.message
        );
    }

    #[test]
    fn schema_violations_sum_up_per_schema_file_and_values_path() {
        let schema = r#"{"properties": {"count": {"type": "integer", "minimum": 1}}}"#;
        let c = chart_of(&[
            ("Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n"),
            ("values.schema.json", schema),
            (
                "charts/sub/Chart.yaml",
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
            ),
            ("charts/sub/values.schema.json", schema),
        ]);
        let e = failure(&c, "count: 0\nsub:\n  count: x\n");
        assert_eq!(
            e.message,
            "values don't meet the specifications of the schema(s) in the following chart(s):\nc:\n- at '/count': minimum: got 0, want 1\nsub:\n- at '/count': got string, want integer\n"
        );
        assert_eq!(
            e.summary,
            "values don't meet the specifications of the schema(s): c/values.schema.json: at '/count': minimum: got 0, want 1; c/charts/sub/values.schema.json: at '/count': got string, want integer"
        );
    }

    #[test]
    fn missing_dependencies_are_named_by_their_place_in_chart_yaml() {
        let c = chart_of(&[
            (
                "Chart.yaml",
                "apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n- name: here\n  version: 0.1.0\n- name: redis\n  version: 1.x\n",
            ),
            (
                "charts/here/Chart.yaml",
                "apiVersion: v2\nname: here\nversion: 0.1.0\n",
            ),
        ]);
        let e = failure(&c, "");
        assert!(
            e.message
                .ends_with("found in Chart.yaml, but missing in charts/ directory: redis"),
            "{}",
            e.message
        );
        assert_eq!(
            e.summary,
            "c/Chart.yaml: dependencies[1] (redis): missing in charts/ (`helm dependency build` fetches them)"
        );
    }

    /// `text` with a template comment that makes it large enough to be parsed late.
    fn padded(text: &str) -> String {
        format!(
            "{{{{/* {} */}}}}{text}",
            "x".repeat(crate::parallel::MIN_PARALLEL_SIZE)
        )
    }

    fn config_map(name: &str, data: &str) -> String {
        padded(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  d: {data}\n"
        ))
    }

    fn chart_with(templates: &[(&str, &str)]) -> Chart {
        let mut files = vec![("Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")];
        files.extend_from_slice(templates);
        chart_of(&files)
    }

    /// Renders the templates with files parsed late, as a `template` run does.
    fn render_parsing_late(c: &Chart) -> Result<Vec<(String, String)>, Failure> {
        let mut rendered = Vec::new();
        let values = crate::formats::yaml::parse_values("").unwrap();
        render_each(
            c,
            &values,
            &TemplateOptions::default(),
            true,
            &mut |path, text| rendered.push((path, text)),
        )?;
        Ok(rendered)
    }

    #[test]
    fn files_parsed_late_render_as_if_parsed_first() {
        let z = config_map("z", "{{ .Values | len }}");
        let a = config_map("a", "{{ .Release.Name }}");
        let c = chart_with(&[("templates/z.yaml", &z), ("templates/a.yaml", &a)]);
        let rendered = render_parsing_late(&c).unwrap_or_else(|_| panic!("renders"));
        let names: Vec<&str> = rendered.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["c/templates/z.yaml", "c/templates/a.yaml"]);
        assert!(
            rendered[1].1.ends_with("d: release-name\n"),
            "{}",
            rendered[1].1
        );
    }

    #[test]
    fn a_template_calling_a_file_not_parsed_yet_renders_again_with_every_file_parsed() {
        // z runs first and includes a, which is parsed late.
        let z = config_map("z", r#"{{ include "c/templates/a.yaml" . | len }}"#);
        let a = config_map("a", "x");
        let c = chart_with(&[("templates/z.yaml", &z), ("templates/a.yaml", &a)]);
        assert!(matches!(render_parsing_late(&c), Err(Failure::Early(_))));
        let values = crate::formats::yaml::parse_values("").unwrap();
        let release = install(&c, &values, &TemplateOptions::default()).unwrap();
        let included = a.len() - padded("").len();
        assert!(
            release.manifest.contains(&format!("d: {included}\n")),
            "{}",
            release.manifest
        );
    }

    #[test]
    fn a_file_parsed_late_that_does_not_parse_fails_the_render_before_anything_executes() {
        // z fails when it executes, before a, which does not parse, would be parsed late.
        let z = config_map("z", r#"{{ fail "z ran" }}"#);
        let a = config_map("a", "{{ if }}");
        let c = chart_with(&[("templates/z.yaml", &z), ("templates/a.yaml", &a)]);
        let e = failure(&c, "");
        assert!(
            e.summary.starts_with("parse error at (c/templates/a.yaml:"),
            "{}",
            e.summary
        );
    }

    #[test]
    fn a_definition_named_as_a_file_parsed_late_replaces_it_as_helm_orders_them() {
        // Helm adds z, a, then _helpers, whose definition replaces a's own template.
        let defined = r#"{{ define "c/templates/a.yaml" }}apiVersion: v1
kind: ConfigMap
metadata:
  name: defined
{{ end }}"#;
        let z = config_map("z", "z");
        let a = config_map("file", "a");
        let c = chart_with(&[
            ("templates/_helpers.tpl", defined),
            ("templates/z.yaml", &z),
            ("templates/a.yaml", &a),
        ]);
        assert!(matches!(render_parsing_late(&c), Err(Failure::Early(_))));
        let values = crate::formats::yaml::parse_values("").unwrap();
        let release = install(&c, &values, &TemplateOptions::default()).unwrap();
        assert!(
            release.manifest.contains("name: defined"),
            "{}",
            release.manifest
        );
        assert!(
            !release.manifest.contains("name: file"),
            "{}",
            release.manifest
        );
    }

    #[test]
    fn release_names_follow_helms_rule() {
        assert!(is_valid_release_name("web-1.prod"));
        for bad in ["", "Web", "-web", "web-", "a..b", &"a".repeat(54)] {
            assert!(!is_valid_release_name(bad), "{bad:?}");
        }
        assert!(is_valid_release_name(&"a".repeat(53)));
    }
}
