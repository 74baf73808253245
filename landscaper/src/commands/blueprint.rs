//! `landscaper blueprint render|validate`: run a blueprint's executions locally, as upstream's
//! `landscaper-cli blueprints render` does, without a cluster.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use landscaper_blueprint::{
    ComponentSource, Descriptor, ExecutionOptions, Filesystem, MemoryState, RegistryAccess,
    RegistryOptions, Repository, RepositorySource, Templater, imports, load, values,
};
use serde_json::{Map, Value as Json};

/// `landscaper blueprint` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Print what a blueprint's executions render for the given imports: the deploy items of
    /// the Execution it would create, its subinstallation templates and, with `--exports`,
    /// its exports.
    Render(RenderArgs),
    /// Check a blueprint, and imports against its import definitions.
    Validate(BlueprintArgs),
}

/// What identifies a blueprint and its inputs.
#[derive(clap::Args, Debug)]
pub struct BlueprintArgs {
    /// The blueprint: a directory holding `blueprint.yaml` and the files it reads, or the
    /// `blueprint.yaml` itself.
    #[arg(value_name = "BLUEPRINT")]
    blueprint: PathBuf,
    /// A YAML file `imports: {NAME: VALUE}` (a target import given as the Target object);
    /// repeatable, later files win.
    #[arg(short = 'f', long = "file", value_name = "IMPORTS.yaml")]
    imports: Vec<PathBuf>,
    /// The component descriptor (`v2` or `ocm.software/v3alpha1`) that `.cd`,
    /// `getResource` and `getComponent` see.
    #[arg(long, value_name = "FILE")]
    component_descriptor: Option<PathBuf>,
    /// Further component descriptors: the resolved references that `.components` and
    /// `getComponent` see; repeatable.
    #[arg(long = "component", value_name = "FILE")]
    components: Vec<PathBuf>,
    /// The repository the component descriptor's references are resolved in, for
    /// `.components`, `getComponent`, `getResourceKey` and `getResourceContent`: a file holding
    /// a repository context (`{type: ociRegistry, baseUrl: …}`, `{type: local, filePath: …}` or
    /// `{type: CommonTransportFormat/v1, filePath: …}`), an `oci://HOST/PATH` URL, a transport
    /// archive (a folder with `artifact-index.json`, or a `.tar`/`.tgz` file), or a folder of
    /// descriptors.
    #[arg(long, value_name = "FILE_OR_URL", requires = "component_descriptor")]
    repository_context: Option<String>,
    /// Registries (`host:port`) spoken to over plain HTTP; repeatable.
    #[arg(long = "plain-http", value_name = "HOST:PORT")]
    plain_http: Vec<String>,
}

/// Arguments of `landscaper blueprint render`.
#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    #[command(flatten)]
    blueprint: BlueprintArgs,
    /// A YAML file with the values export executions see (`deployitems`, `dataobjects`,
    /// `targets`, as the export constructor builds them); renders the exports too.
    #[arg(long, value_name = "EXPORTS.yaml")]
    exports: Option<PathBuf>,
}

/// Runs a `landscaper blueprint` subcommand.
pub fn run(command: &Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Render(args) => render(args),
        Command::Validate(args) => validate(args),
    }
}

fn render(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let mut options = options(&args.blueprint)?;
    if !args.blueprint.imports.is_empty() {
        options.imports =
            imports::validate(&options.blueprint, &options.filesystem, &options.imports).map_err(
                |problems| {
                    anyhow::anyhow!(
                        "the imports do not fit the blueprint:\n  {}",
                        problems.join("\n  ")
                    )
                },
            )?;
    }
    let state = MemoryState::default();
    let templater = Templater::new(&state);
    let mut out = String::new();
    for item in templater.deploy_executions(&options)? {
        let json = serde_json::to_value(&item)?;
        out.push_str(&format!(
            "--- # deployItem {}\n{}\n",
            item.name,
            yaml(&json)?
        ));
    }
    let mut subinstallations = inline_subinstallations(&options)?;
    for template in templater.subinstallation_executions(&options)? {
        subinstallations.push(serde_json::to_value(&template)?);
    }
    for template in subinstallations {
        let name = template["name"].as_str().unwrap_or_default().to_string();
        out.push_str(&format!(
            "--- # subinstallation {name}\n{}\n",
            yaml(&template)?
        ));
    }
    if let Some(path) = &args.exports {
        let values = yaml_map(path, None)?;
        let exports = templater.export_executions(&options, &values)?;
        out.push_str(&format!(
            "--- # exports\n{}\n",
            yaml(&Json::Object(exports))?
        ));
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn validate(args: &BlueprintArgs) -> anyhow::Result<ExitCode> {
    let options = options(args)?;
    if args.imports.is_empty() {
        println!("blueprint is valid");
        return Ok(ExitCode::SUCCESS);
    }
    match imports::validate(&options.blueprint, &options.filesystem, &options.imports) {
        Ok(_) => {
            println!("blueprint and imports are valid");
            Ok(ExitCode::SUCCESS)
        }
        Err(problems) => {
            for problem in &problems {
                println!("error: {problem}");
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The blueprint, its filesystem, the component descriptors and the imports as given.
fn options(args: &BlueprintArgs) -> anyhow::Result<ExecutionOptions> {
    // A file given by name is the blueprint whatever it is called; the files beside it are
    // its filesystem.
    let (root, file) = if args.blueprint.is_dir() {
        (args.blueprint.clone(), None)
    } else {
        let dir = args
            .blueprint
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        (dir, Some(&args.blueprint))
    };
    let mut filesystem = Filesystem::from_dir(&root)?;
    if let Some(file) = file {
        let text = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        filesystem.insert(landscaper_blueprint::filesystem::BLUEPRINT_FILE, text);
    }
    let loaded =
        load::load(&filesystem).with_context(|| format!("blueprint {}", root.display()))?;
    for field in &loaded.unknown_fields {
        eprintln!("warning: blueprint.yaml: unknown field {field} (ignored, as upstream does)");
    }
    let mut given = Map::new();
    for path in &args.imports {
        given.extend(yaml_map(path, Some("imports"))?);
    }
    let imports = given;
    let component = args
        .component_descriptor
        .as_deref()
        .map(read_descriptor)
        .transpose()?;
    let mut components = args
        .components
        .iter()
        .map(|p| read_descriptor(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut source = None;
    if let (Some(location), Some(root)) = (&args.repository_context, &component) {
        let repository = repository(location)?;
        let access = Arc::new(RegistryAccess::new(RegistryOptions {
            plain_http: args.plain_http.clone(),
            ..Default::default()
        }));
        let resolved = tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current()
                .block_on(access.transitive_components(&repository, root))
        })
        .with_context(|| {
            format!(
                "resolving the references of {}:{}",
                root.name(),
                root.version()
            )
        })?;
        components.extend(resolved);
        // `getResourceKey` and `getResourceContent` look further in the same repository.
        source =
            Some(Arc::new(RepositorySource { access, repository }) as Arc<dyn ComponentSource>);
    }
    Ok(ExecutionOptions {
        blueprint: loaded.blueprint,
        filesystem: Arc::new(filesystem),
        installation: None,
        component,
        components: (!components.is_empty()).then_some(components),
        imports,
        source,
        // No cluster here: the kubeconfig functions read a Target's inline kubeconfig
        // (`getOidcKubeconfig` works) and fail, naming the function, where a cluster is needed.
        targets: None,
    })
}

/// The subinstallations the blueprint lists itself, inline or by file.
fn inline_subinstallations(options: &ExecutionOptions) -> anyhow::Result<Vec<Json>> {
    let mut out = Vec::new();
    for (i, sub) in options.blueprint.subinstallations.iter().enumerate() {
        match (&sub.file, &sub.template) {
            (Some(file), _) => {
                let text = options.filesystem.read_text(file)?;
                out.push(values::parse_yaml(text).map_err(|e| {
                    anyhow::anyhow!("blueprint subinstallations[{i}]: file {file}: {e}")
                })?);
            }
            (None, Some(template)) => out.push(serde_json::to_value(template)?),
            (None, None) => bail!("blueprint subinstallations[{i}]: neither file nor template"),
        }
    }
    Ok(out)
}

/// The repository `--repository-context` names.
fn repository(location: &str) -> anyhow::Result<Repository> {
    if let Some(base_url) = location.strip_prefix("oci://") {
        return Ok(Repository::Oci {
            base_url: base_url.trim_end_matches('/').to_string(),
        });
    }
    let path = Path::new(location);
    if path
        .join(landscaper_blueprint::ctf::ARTIFACT_INDEX)
        .is_file()
    {
        return Ok(Repository::Ctf {
            path: path.to_path_buf(),
            format: Some(landscaper_blueprint::ctf::FileFormat::Directory),
        });
    }
    if [".tar", ".tgz", ".tar.gz"]
        .iter()
        .any(|suffix| location.ends_with(suffix))
    {
        return Ok(Repository::Ctf {
            path: path.to_path_buf(),
            format: None,
        });
    }
    if path.is_dir() {
        return Ok(Repository::Local {
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {location}"))?;
    let context = values::parse_yaml(&text).map_err(|e| anyhow::anyhow!("{location}: {e}"))?;
    Repository::from_context(&context).with_context(|| location.to_string())
}

fn read_descriptor(path: &Path) -> anyhow::Result<Descriptor> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let json = values::parse_yaml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Descriptor::from_json(json).with_context(|| path.display().to_string())
}

/// A YAML file's map, or the map under `key` of it.
fn yaml_map(path: &Path, key: Option<&str>) -> anyhow::Result<Map<String, Json>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let json = values::parse_yaml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let map = match key {
        Some(key) => json.get(key).cloned().unwrap_or(Json::Null),
        None => json,
    };
    match map {
        Json::Object(map) => Ok(map),
        Json::Null => Ok(Map::new()),
        _ => bail!(
            "{}: expected a map{}",
            path.display(),
            key.map(|k| format!(" under {k:?}")).unwrap_or_default()
        ),
    }
}

/// What `render` prints of one rendered object: Landscaper's YAML (keys sorted), with the
/// strings YAML 1.1 readers would misread (`=`, `<<`) quoted too.
fn yaml(json: &Json) -> anyhow::Result<String> {
    landscaper_chart::formats::yaml::marshal_for_every_reader(&values::to_data(json))
        .map(|text| text.trim_end_matches('\n').to_string())
        .map_err(|e| anyhow::anyhow!("encoding YAML: {e}"))
}
