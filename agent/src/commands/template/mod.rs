//! `landscaper-agent template`: renders a chart and prints what `helm template` prints, with
//! the same argument meanings, output and exit status (errors as `Error: …` on stderr, the
//! warnings helm logs as `level=… msg=…` lines on stderr). helm's flags that only matter to
//! an install are accepted and ignored as helm ignores them (see `ignored`); those it acts on
//! but this command does not implement are rejected with the reason (see `unsupported`).

mod ignored;
pub(crate) mod namespace;
mod output_dir;
mod unsupported;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::Value;
use landscaper_chart::fetch::{self, FetchOptions};
use landscaper_chart::formats::strvals;
use landscaper_chart::formats::tree::{Data, Map};
use landscaper_chart::formats::yaml;
use landscaper_chart::helm::chart::{self, Chart};
use landscaper_chart::helm::render::{self, ReleaseOptions, TemplateOptions};
use landscaper_chart::helm::values::{merge_maps, slog_line};

use ignored::Ignored;
use output_dir::OutputDir;
use unsupported::Unsupported;

/// Arguments of `template`, as `helm template` takes them.
#[derive(clap::Args, Debug, Default)]
#[command(
    override_usage = "landscaper-agent template [NAME] [CHART] [flags]",
    after_help = "CHART is a chart folder or a packaged chart (.tgz). Values are merged in this \
order, later winning: the chart's values.yaml, each --values file in order, then --set-json, \
--set, --set-string, --set-file and --set-literal."
)]
pub struct Args {
    /// Release name (default `release-name`) and chart; with one argument it is the chart.
    #[arg(value_name = "NAME] [CHART")]
    pub args: Vec<String>,

    /// Values file (YAML) to merge over the chart's defaults; repeatable and comma-separated,
    /// later files win; `-` reads standard input, an `http(s)://` URL is downloaded.
    #[arg(
        short = 'f',
        long = "values",
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub values: Vec<String>,

    /// Set values on the command line (`a.b=1,c[0]=x`): numbers, booleans and null are typed.
    #[arg(long = "set", value_name = "KEY=VAL")]
    pub set: Vec<String>,

    /// Like --set, but every value stays a string.
    #[arg(long = "set-string", value_name = "KEY=VAL")]
    pub set_string: Vec<String>,

    /// Like --set, with JSON values (`a={"b":1}`).
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,

    /// Like --set, each value read from the named file (or `http(s)://` URL).
    #[arg(long = "set-file", value_name = "KEY=PATH")]
    pub set_file: Vec<String>,

    /// Set one value verbatim: everything after the first `=` is the string value.
    #[arg(long = "set-literal", value_name = "KEY=VAL")]
    pub set_literal: Vec<String>,

    /// Namespace for `.Release.Namespace` (as helm: else $HELM_NAMESPACE, else the kubeconfig
    /// context's namespace, else in a pod its namespace, else `default`).
    #[arg(short = 'n', long = "namespace")]
    pub namespace: Option<String>,

    /// Kubernetes version for `.Capabilities.KubeVersion` (default v1.35.0, as helm v4.1.4).
    #[arg(long = "kube-version", value_name = "VERSION")]
    pub kube_version: Option<String>,

    /// Extra API versions for `.Capabilities.APIVersions` (repeatable, comma-separated).
    #[arg(
        short = 'a',
        long = "api-versions",
        value_delimiter = ',',
        value_name = "GROUP/VERSION"
    )]
    pub api_versions: Vec<String>,

    /// Print only the documents of these templates (a path inside the chart, globs allowed).
    #[arg(short = 's', long = "show-only", value_name = "PATH")]
    pub show_only: Vec<String>,

    /// Also print the charts' `crds/` files.
    #[arg(long = "include-crds")]
    pub include_crds: bool,

    /// Leave out `helm.sh/hook: test` documents.
    #[arg(long = "skip-tests")]
    pub skip_tests: bool,

    /// Leave out all hook documents.
    #[arg(long = "no-hooks")]
    pub no_hooks: bool,

    /// Do not validate values against `values.schema.json`.
    #[arg(long = "skip-schema-validation")]
    pub skip_schema_validation: bool,

    /// Set `.Release.IsUpgrade` (and clear `.Release.IsInstall`).
    #[arg(long = "is-upgrade")]
    pub is_upgrade: bool,

    /// Release name from a template (Sprig functions allowed), instead of NAME.
    #[arg(long = "name-template", value_name = "TEMPLATE")]
    pub name_template: Option<String>,

    /// On a render error, print the manifests rendered so far before the error.
    #[arg(long = "debug")]
    pub debug: bool,

    /// Chart repository URL: CHART is then a chart name in that repository's index.yaml.
    #[arg(long = "repo", value_name = "URL")]
    pub repo: Option<String>,

    /// Version or semver range of the chart to fetch (default: the latest stable version).
    #[arg(long = "version", value_name = "RANGE", default_value = "")]
    pub version: String,

    /// User name for the chart repository or OCI registry.
    #[arg(long = "username")]
    pub username: Option<String>,

    /// Password for the chart repository or OCI registry.
    #[arg(long = "password")]
    pub password: Option<String>,

    /// PEM file of CA certificates to trust for the repository or registry.
    #[arg(long = "ca-file", value_name = "FILE")]
    pub ca_file: Option<std::path::PathBuf>,

    /// Skip TLS certificate checks of the repository or registry.
    #[arg(long = "insecure-skip-tls-verify")]
    pub insecure_skip_tls_verify: bool,

    /// Use plain HTTP for an OCI registry (oci:// charts).
    #[arg(long = "plain-http")]
    pub plain_http: bool,

    /// Send the repository credentials to every host the chart is downloaded from, not only
    /// the repository's.
    #[arg(long = "pass-credentials")]
    pub pass_credentials: bool,

    /// Also consider pre-release versions (like --version '>0.0.0-0'); ignored with --version.
    #[arg(long = "devel")]
    pub devel: bool,

    /// Let the release name be generated; NAME must then not be given (helm template still
    /// names the release `release-name`, or what --name-template renders).
    #[arg(short = 'g', long = "generate-name")]
    pub generate_name: bool,

    /// Write each template's documents to DIR/CHART_PATH (the path of each template in the chart) instead of printing them.
    #[arg(long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,

    /// With --output-dir, write the templates below DIR/RELEASE_NAME.
    #[arg(long = "release-name")]
    pub use_release_name: bool,

    /// Named repositories for `REPO/CHART` references, as `helm repo add` writes them
    /// (default: $HELM_REPOSITORY_CONFIG or ~/.config/helm/repositories.yaml).
    #[arg(long = "repository-config", value_name = "FILE")]
    pub repository_config: Option<PathBuf>,

    /// The repository indexes `helm repo update` cached, read for `REPO/CHART` references
    /// (default: $HELM_REPOSITORY_CACHE or ~/.cache/helm/repository).
    #[arg(long = "repository-cache", value_name = "DIR")]
    pub repository_cache: Option<PathBuf>,

    /// Registry credentials (Docker config.json `auths`) for oci:// charts when --username is
    /// not given (default: $HELM_REGISTRY_CONFIG or ~/.config/helm/registry/config.json).
    #[arg(long = "registry-config", value_name = "FILE")]
    pub registry_config: Option<PathBuf>,

    /// Where fetched chart archives are cached by digest (default:
    /// $HELM_CACHE_HOME/landscaper/charts or ~/.cache/landscaper/charts).
    #[arg(long = "content-cache", value_name = "DIR")]
    pub content_cache: Option<PathBuf>,

    /// Kubeconfig context whose namespace is the default namespace (else $HELM_KUBECONTEXT,
    /// else the current context); no cluster is contacted.
    #[arg(long = "kube-context", value_name = "CONTEXT")]
    pub kube_context: Option<String>,

    /// Kubeconfig file to read the default namespace from (else $KUBECONFIG, else
    /// ~/.kube/config).
    #[arg(long = "kubeconfig", value_name = "FILE")]
    pub kubeconfig: Option<String>,

    /// helm flags that only matter to an install: accepted and ignored, as helm does.
    #[command(flatten)]
    pub ignored: Ignored,

    /// helm flags this command rejects, with the reason.
    #[command(flatten)]
    pub unsupported: Unsupported,
}

/// The command's outcome: text for stdout, and warnings and an error for stderr.
#[derive(Default)]
pub struct Outcome {
    /// What goes to standard output.
    pub stdout: String,
    /// Lines helm logs on stderr (`level=WARN msg=…`), in order.
    pub warnings: Vec<String>,
    /// The error message (printed as `Error: MESSAGE`), if the command failed.
    pub error: Option<String>,
}

/// Runs `template` and prints like helm; exit status 1 on errors.
pub fn run(args: Args) -> ExitCode {
    let outcome = execute(&args);
    let mut stderr = std::io::stderr().lock();
    for line in &outcome.warnings {
        let _ = writeln!(stderr, "{line}");
    }
    drop(stderr);
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (e.g. piped into `head`) is not worth a second error.
    let _ = stdout.write_all(outcome.stdout.as_bytes());
    let _ = stdout.flush();
    match outcome.error {
        None => ExitCode::SUCCESS,
        Some(message) => {
            let _ = writeln!(std::io::stderr().lock(), "Error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn fail(message: impl Into<String>) -> Outcome {
    Outcome {
        error: Some(message.into()),
        ..Outcome::default()
    }
}

/// Computes what `template` prints, without printing it. Meant for the process's one render:
/// the parse trees are left to the exit to free.
pub fn execute(args: &Args) -> Outcome {
    if let Some(message) = args.unsupported.error() {
        return fail(message);
    }
    let flag_warnings = match args.ignored.check() {
        Ok(warnings) => warnings,
        Err(message) => return fail(message),
    };
    if args.args.is_empty() {
        return fail(
            "\"landscaper-agent template\" requires at least 1 argument\n\nUsage:  landscaper-agent template [NAME] [CHART] [flags]",
        );
    }
    if args.args.len() > 2 {
        return fail(format!(
            "expected at most two arguments, unexpected arguments: {}",
            args.args[2..].join(", ")
        ));
    }
    let (name, chart_ref) = match name_and_chart(args) {
        Ok(pair) => pair,
        Err(e) => return fail(e),
    };
    let user_values = match gather_values(args) {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    // helm treats an empty --kube-version as not given.
    let kube_version = match args
        .kube_version
        .as_deref()
        .filter(|v| !v.is_empty())
        .map(render::parse_kube_version)
        .transpose()
    {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let chart = match locate_and_load(&chart_ref, args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let mut warnings = flag_warnings;
    if chart.metadata.deprecated {
        warnings.push(slog_line("WARN", "this chart is deprecated", &[]));
    }
    let options = TemplateOptions {
        release: ReleaseOptions {
            name,
            namespace: namespace::release_namespace(
                args.namespace.as_deref(),
                args.kube_context.as_deref(),
                args.kubeconfig.as_deref().map(Path::new),
            ),
            revision: 1,
            is_upgrade: args.is_upgrade,
        },
        kube_version,
        extra_api_versions: args.api_versions.clone(),
        include_crds: args.include_crds,
        skip_tests: args.skip_tests,
        disable_hooks: args.no_hooks,
        show_only: args.show_only.clone(),
        skip_schema_validation: args.skip_schema_validation,
        // `helm template` answers without a cluster.
        cluster_api_versions: None,
        lookup: None,
        // The process ends once the output is printed.
        leave_to_exit: true,
    };
    let release = match render::install_owned(chart, &user_values, &options) {
        Ok(r) => r,
        Err(e) => {
            let error = match (&e.partial_manifest, args.debug) {
                (Some(_), false) => {
                    format!(
                        "{}\n\nUse --debug flag to render out invalid YAML",
                        e.message
                    )
                }
                _ => e.message,
            };
            let stdout = match (e.partial_manifest, args.debug) {
                (Some(manifest), true) => format!("{}\n", manifest.trim()),
                _ => String::new(),
            };
            return Outcome {
                stdout,
                warnings,
                error: Some(error),
            };
        }
    };
    warnings.extend(release.warnings.iter().cloned());
    if let Some(dir) = &args.output_dir {
        let printed_crds = if options.include_crds {
            &release.crds[..]
        } else {
            &[]
        };
        // Read by the render, which fails if a CRD file it printed could not be read.
        let crds: Vec<(String, String)> = printed_crds
            .iter()
            .map(|(name, data)| {
                let text = String::from_utf8_lossy(data.bytes_or_empty()).into_owned();
                (name.clone(), text)
            })
            .collect();
        let target = OutputDir {
            dir,
            release_dir: args
                .use_release_name
                .then_some(options.release.name.as_str()),
        };
        let (stdout, error) = target.write(&release, &crds, &options);
        return Outcome {
            stdout,
            warnings,
            error,
        };
    }
    match render::template_output(release, &options) {
        Ok(stdout) => Outcome {
            stdout,
            warnings,
            error: None,
        },
        Err(e) => Outcome {
            warnings,
            ..fail(e)
        },
    }
}

/// Helm's `NameAndChart` with `helm template`'s default name.
fn name_and_chart(args: &Args) -> Result<(String, String), String> {
    // An empty template is no template.
    let name_template = args.name_template.as_deref().filter(|t| !t.is_empty());
    let (name, chart) = match args.args.as_slice() {
        [_, _] if args.generate_name => {
            return Err("cannot set --generate-name and also specify a name".to_string());
        }
        [_, _] if name_template.is_some() => {
            return Err("cannot set --name-template and also specify a name".to_string());
        }
        [name, chart] => (name.clone(), chart.clone()),
        [chart] => match name_template {
            Some(t) => (render_name_template(t)?, chart.clone()),
            None => ("release-name".to_string(), chart.clone()),
        },
        _ => return Err("expected a chart".to_string()),
    };
    if !render::is_valid_release_name(&name) {
        return Err(format!(
            "release name is invalid: {name}: {}",
            render::INVALID_RELEASE_NAME
        ));
    }
    Ok((name, chart))
}

fn render_name_template(text: &str) -> Result<String, String> {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("name-template", text)
        .map_err(|e| e.to_string())?;
    engine
        .render("name-template", &Value::Nil)
        .map_err(|e| e.to_string())
}

/// Values in Helm's order: files, then --set-json, --set, --set-string, --set-file,
/// --set-literal.
fn gather_values(args: &Args) -> Result<Map, String> {
    let mut base = Map::default();
    for file in &args.values {
        let text = read_values_source(file)?;
        let current = yaml::parse_values_file(file, &text)
            .map_err(|e| format!("failed to parse {file}: {}", e.values_file_message()))?;
        merge_maps(&mut base, current);
    }
    for line in &args.set_json {
        strvals::parse_json_into(line, &mut base)
            .map_err(|e| format!("failed parsing --set-json data {line}: {e}"))?;
    }
    for line in &args.set {
        strvals::parse_into(line, &mut base)
            .map_err(|e| format!("failed parsing --set data: {e}"))?;
    }
    for line in &args.set_string {
        strvals::parse_into_string(line, &mut base)
            .map_err(|e| format!("failed parsing --set-string data: {e}"))?;
    }
    for line in &args.set_file {
        let mut reader =
            |path: &str| -> Result<Data, String> { read_values_source(path).map(Data::String) };
        strvals::parse_file_into(line, &mut base, &mut reader)
            .map_err(|e| format!("failed parsing --set-file data: {e}"))?;
    }
    for line in &args.set_literal {
        strvals::parse_literal_into(line, &mut base)
            .map_err(|e| format!("failed parsing --set-literal data: {e}"))?;
    }
    Ok(base)
}

/// A values source as helm reads it: `-` is standard input, an `http(s)://` URL is
/// downloaded, anything else is a local file.
fn read_values_source(path: &str) -> Result<String, String> {
    if path.starts_with("http://") || path.starts_with("https://") {
        let bytes = block_on(fetch::fetch_url(path))?;
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("read -: {e}"))?;
        return Ok(text);
    }
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("open {path}: no such file or directory"),
        _ => format!("open {path}: {e}"),
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Finds the chart as Helm's `LocateChart` does (a local path, a repository entry with
/// `--repo`, an `oci://` reference or a URL), then loads it.
fn locate_and_load(reference: &str, args: &Args) -> Result<Chart, String> {
    let remote = args.repo.is_some()
        || reference.starts_with("oci://")
        || reference.starts_with("http://")
        || reference.starts_with("https://");
    if remote {
        let archive = fetch_archive(reference, args)?;
        return chart::load_archive_to_render(&archive)
            .and_then(chart::check_api_version)
            .map_err(|e| e.to_string());
    }
    let path = Path::new(reference);
    if path.exists() {
        return chart::load(path).map_err(|e| e.to_string());
    }
    if path.is_absolute() || reference.starts_with('.') {
        return Err(format!("path \"{reference}\" not found"));
    }
    let Some((repo_name, chart_name)) = reference.split_once('/') else {
        return Err(format!(
            "non-absolute URLs should be in form of repo_name/path_to_chart, got: {reference}"
        ));
    };
    let repository_config = args.repository_config.clone().unwrap_or_else(|| {
        helm_path(
            "HELM_REPOSITORY_CONFIG",
            HelmHome::Config,
            "repositories.yaml",
        )
    });
    let repository =
        fetch::find_repository(&repository_config, repo_name).map_err(|e| e.message)?;
    let index_cache = args
        .repository_cache
        .clone()
        .unwrap_or_else(|| helm_path("HELM_REPOSITORY_CACHE", HelmHome::Cache, "repository"));
    let options = fetch_options(args);
    let archive = block_on(fetch::fetch_from_named_repository(
        &repository,
        &index_cache,
        chart_name,
        &version_range(args),
        &options,
    ))?;
    chart::load_archive_to_render(&archive)
        .and_then(chart::check_api_version)
        .map_err(|e| e.to_string())
}

/// Which of helm's base folders a default path is in.
enum HelmHome {
    Config,
    Cache,
}

/// A helm default path: the variable `env` if set, else `rest` below helm's config or cache
/// home (`$HELM_CONFIG_HOME`, `$XDG_CONFIG_HOME/helm`, `~/.config/helm`; likewise for the
/// cache).
fn helm_path(env: &str, home: HelmHome, rest: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    let (helm_var, xdg_var, default) = match home {
        HelmHome::Config => ("HELM_CONFIG_HOME", "XDG_CONFIG_HOME", ".config"),
        HelmHome::Cache => ("HELM_CACHE_HOME", "XDG_CACHE_HOME", ".cache"),
    };
    let base = std::env::var_os(helm_var)
        .map(PathBuf::from)
        .or_else(|| std::env::var_os(xdg_var).map(|x| PathBuf::from(x).join("helm")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(default).join("helm")))
        .unwrap_or_default();
    base.join(rest)
}

/// `--version`, or with `--devel` and no version every version including pre-releases.
fn version_range(args: &Args) -> String {
    if args.version.is_empty() && args.devel {
        ">0.0.0-0".to_string()
    } else {
        args.version.clone()
    }
}

/// Where fetched archives are cached: `$HELM_CACHE_HOME`, `$XDG_CACHE_HOME` or `~/.cache`,
/// under `landscaper/charts`.
fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("HELM_CACHE_HOME")
        .or_else(|| std::env::var_os("XDG_CACHE_HOME"))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("landscaper").join("charts"))
}

fn fetch_options(args: &Args) -> FetchOptions {
    FetchOptions {
        username: args.username.clone(),
        password: args.password.clone(),
        ca_file: args.ca_file.clone(),
        insecure_skip_tls_verify: args.insecure_skip_tls_verify,
        plain_http: args.plain_http,
        pass_credentials: args.pass_credentials,
        registry_config: Some(args.registry_config.clone().unwrap_or_else(|| {
            helm_path(
                "HELM_REGISTRY_CONFIG",
                HelmHome::Config,
                "registry/config.json",
            )
        })),
        cache_dir: args.content_cache.clone().or_else(cache_dir),
        ..FetchOptions::default()
    }
}

fn block_on<T>(
    fetch: impl std::future::Future<Output = Result<T, fetch::FetchError>>,
) -> Result<T, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the fetcher: {e}"))?;
    runtime.block_on(fetch).map_err(|e| e.to_string())
}

fn fetch_archive(reference: &str, args: &Args) -> Result<Vec<u8>, String> {
    block_on(fetch::fetch_chart(
        reference,
        args.repo.as_deref(),
        &version_range(args),
        &fetch_options(args),
    ))
}
