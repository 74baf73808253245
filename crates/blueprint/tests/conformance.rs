//! Upstream Landscaper's template-execution cases (`shared/conformance/landscaper/templates`,
//! transcribed from its Go tests) against this crate: every GoTemplate and Spiff case that runs at the
//! level of this library passes; the cases that need the installation controllers' state
//! (objects in a cluster) are listed by name with the reason, so that the list can only shrink.
//! The cases on upstream's transport archive (CTF) read it from a copy of its folder in which
//! the binary blobs the conformance data leaves out are written back from its transcription.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use landscaper_api::core::{Blueprint, TemplateExecutor};
use landscaper_blueprint::{
    ComponentSource, Descriptor, ExecutionKind, ExecutionOptions, Filesystem, LocalRepository,
    MemoryState, RegistryAccess, RegistryOptions, Repository, RepositorySource, StateHandler,
    Templater, report,
};
use serde_json::{Map, Value as Json, json};

fn templates_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/landscaper/templates");
    dir.join("cases.yaml").exists().then_some(dir)
}

fn read_yaml(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Cases this library does not run, each with the reason and where it runs instead, if anywhere.
const NOT_AT_THIS_LEVEL: &[(&str, &str)] = &[
    (
        "helper/state-secret",
        "state kept in a Secret, as upstream's KubernetesStateHandler keeps it, is the installation controller's (landscaper/src/controllers/installation/state.rs); its name, `config` key and owner run in tests/tests/installation_flow.rs execution_state_is_kept_in_a_secret_between_jobs",
    ),
    (
        "exports/test1",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "exports/test1-no-exports-key",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "exports/test2",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "exports/test3",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "exports/test4",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "exports/test4-wrong-type",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "exports/test6",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
    (
        "subinstallations/test3",
        "the result is the subinstallation Installation objects, which the installation controller writes: runs in tests/tests/upstream_states/subinstallations.rs (test3_…, test5_…); the root's condition is our InstallationReconciled, not upstream's EnsureSubInstallations, so that assertion is not checked",
    ),
    (
        "subinstallations/test5",
        "the result is the subinstallation Installation objects, which the installation controller writes: runs in tests/tests/upstream_states/subinstallations.rs (test3_…, test5_…); the root's condition is our InstallationReconciled, not upstream's EnsureSubInstallations, so that assertion is not checked",
    ),
    (
        "simulator/01-subinstallations",
        "upstream's installation simulator (pkg/utils/landscaper) evaluates a whole tree of installations; here the controllers are the simulator: runs in tests/tests/simulator.rs simulator_01_subinstallations_runs_through_the_controllers (the installation, execution and deploy-item controllers on the testbed, the test as the mock items' deployer), every assertion of its expect file checked against the cluster",
    ),
    (
        "executions/test2-root",
        "the result is DeployItemTemplates whose targets are resolved (landscaper_blueprint::targets) among the Target objects the import constructor reads from the cluster; runs in tests/tests/upstream_states/executions.rs",
    ),
    (
        "executions/test2-import-index-wrong",
        "the result is DeployItemTemplates whose targets are resolved (landscaper_blueprint::targets) among the Target objects the import constructor reads from the cluster; runs in tests/tests/upstream_states/executions.rs",
    ),
    (
        "executions/test2-import-not-exist",
        "the result is DeployItemTemplates whose targets are resolved (landscaper_blueprint::targets) among the Target objects the import constructor reads from the cluster; runs in tests/tests/upstream_states/executions.rs",
    ),
    (
        "executions/test2-import-wrong-type-1",
        "the result is DeployItemTemplates whose targets are resolved (landscaper_blueprint::targets) among the Target objects the import constructor reads from the cluster; runs in tests/tests/upstream_states/executions.rs",
    ),
    (
        "executions/test2-import-wrong-type-2",
        "the result is DeployItemTemplates whose targets are resolved (landscaper_blueprint::targets) among the Target objects the import constructor reads from the cluster; runs in tests/tests/upstream_states/executions.rs",
    ),
    (
        "exports/test5",
        "the export values are the DataObjects and Targets the installation's children and Execution wrote to the cluster (landscaper::dataflow::construct_exports); runs in tests/tests/installation_exports.rs",
    ),
];

fn uses(case: &Json, engine: &str) -> bool {
    match &case["engine"] {
        Json::String(e) => e == engine,
        Json::Array(list) => list.iter().any(|e| e == engine),
        _ => false,
    }
}

#[test]
fn go_template_and_spiff_cases_pass() {
    let Some(dir) = templates_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the conformance data is required in CI"
        );
        eprintln!("conformance data not found: skipping");
        return;
    };
    let cases = read_yaml(&dir.join("cases.yaml"));
    let mut ran = 0;
    let mut failures = Vec::new();
    for case in cases["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        if !(uses(case, "GoTemplate") || uses(case, "Spiff") || uses(case, "none"))
            || NOT_AT_THIS_LEVEL.iter().any(|(skip, _)| *skip == id)
        {
            continue;
        }
        ran += 1;
        if let Err(message) = run_case(&dir, case) {
            failures.push(format!("{id}: {message}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(ran >= 92, "only {ran} cases ran");
    eprintln!(
        "{ran} GoTemplate, Spiff and engine-less cases passed; {} not at this level",
        NOT_AT_THIS_LEVEL.len()
    );
}

/// What a case's call returned, as JSON, or the error text.
type Outcome = Result<Json, String>;

fn run_case(dir: &Path, case: &Json) -> Result<(), String> {
    let input = read_yaml(&dir.join(case["input"].as_str().unwrap()));
    let expect = read_yaml(&dir.join(case["expect"].as_str().unwrap()));
    let outcome = match case["kind"].as_str().unwrap() {
        "engine" => run_engine(dir, case, &input),
        "helper" => run_helper(&input),
        "deploy" if expect["resultForm"] == "execution" => run_execution(dir, &input, &expect)?,
        "deploy" if input.get("importsFile").is_some() => run_render(dir, &input),
        "import" if expect["resultForm"] == "importConstructor" => {
            run_import_executions(dir, &input)?
        }
        kind => run_executions(dir, case, kind, &input, &expect)?,
    };
    check(&outcome, &expect)
}

fn kind_of(name: &str) -> ExecutionKind {
    match name {
        "deploy" => ExecutionKind::Deploy,
        "export" => ExecutionKind::Export,
        "subinstallation" => ExecutionKind::Subinstallation,
        _ => ExecutionKind::Import,
    }
}

/// Copies upstream's CTF folder to `to` and writes back, from the transcription, the blobs the
/// conformance data does not hold (descriptor tars, text blobs), each under its upstream digest.
fn materialize_ctf(dir: &Path, spec: &Json, to: &Path) {
    let from = dir.join(spec["ctf"].as_str().unwrap());
    std::fs::create_dir_all(to.join("blobs")).unwrap();
    for entry in walk(&from) {
        let relative = entry.strip_prefix(&from).unwrap();
        std::fs::copy(&entry, to.join(relative)).unwrap();
    }
    let transcription = read_yaml(&dir.join(spec["ctfTranscription"].as_str().unwrap()));
    let blob_path = |digest: &str| to.join("blobs").join(digest.replace(':', "."));
    for component in transcription["components"].as_array().unwrap() {
        let layer = &component["componentDescriptorLayer"];
        let path = blob_path(layer["digest"].as_str().unwrap());
        if !path.exists() {
            let content = layer["content"].as_str().unwrap().as_bytes();
            let mut header = tar::Header::new_gnu();
            header.set_size(content.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            let mut builder = tar::Builder::new(Vec::new());
            builder
                .append_data(&mut header, layer["tarMember"].as_str().unwrap(), content)
                .unwrap();
            std::fs::write(path, builder.into_inner().unwrap()).unwrap();
        }
        for blob in component["localBlobs"].as_array().into_iter().flatten() {
            let path = blob_path(blob["digest"].as_str().unwrap());
            if let (false, Some(content)) = (path.exists(), blob["content"].as_str()) {
                std::fs::write(path, content).unwrap();
            }
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The component version of a CTF case, read through the repository its context names (a
/// materialized copy of upstream's CTF), with the source its functions look further in.
fn ctf_component(dir: &Path, spec: &Json, input: &Json) -> (Descriptor, Arc<dyn ComponentSource>) {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance-ctf-local-blobs");
    let transcription_spec =
        json!({"ctf": spec["ctf"], "ctfTranscription": input["ctfTranscription"]});
    materialize_ctf(dir, &transcription_spec, &root);
    let mut context = spec["repositoryContext"].clone();
    context["filePath"] = json!(root.to_string_lossy());
    let repository = Repository::from_context(&context).unwrap();
    assert!(matches!(repository, Repository::Ctf { .. }));
    let access = Arc::new(RegistryAccess::new(RegistryOptions::default()));
    let descriptor = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(access.descriptor(
            &repository,
            spec["componentName"].as_str().unwrap(),
            spec["version"].as_str().unwrap(),
        ))
        .unwrap();
    (
        descriptor,
        Arc::new(RepositorySource { access, repository }),
    )
}

fn descriptor(dir: &Path, spec: &Json) -> Descriptor {
    if let Some(inline) = spec.get("inline") {
        return Descriptor::from_json(inline.clone()).unwrap();
    }
    let root = dir.join(
        spec["localRepository"]
            .as_str()
            .expect("a local repository"),
    );
    LocalRepository::open(&root)
        .unwrap()
        .get(
            spec["componentName"].as_str().unwrap(),
            spec["version"].as_str().unwrap(),
        )
        .unwrap()
        .clone()
}

fn options(
    dir: &Path,
    input: &Json,
    executors: Vec<TemplateExecutor>,
    kind: ExecutionKind,
) -> ExecutionOptions {
    let bp = &input["blueprint"];
    let mut blueprint = Blueprint {
        annotations: serde_json::from_value(bp["annotations"].clone()).unwrap_or_default(),
        ..Default::default()
    };
    match kind {
        ExecutionKind::Deploy => blueprint.deploy_executions = executors,
        ExecutionKind::Export => blueprint.export_executions = executors,
        ExecutionKind::Subinstallation => blueprint.subinstallation_executions = executors,
        ExecutionKind::Import => blueprint.import_executions = executors,
    }
    let filesystem = match &bp["filesystem"] {
        Json::Null => Filesystem::new(),
        fs => Filesystem::from_inline(fs).unwrap(),
    };
    let (component, source) = match &input["componentVersion"] {
        Json::Null => (None, None),
        spec if spec.get("ctf").is_some() => {
            let (component, source) = ctf_component(dir, spec, input);
            (Some(component), Some(source))
        }
        spec => (Some(descriptor(dir, spec)), None),
    };
    let components = match &input["componentVersions"] {
        Json::Array(list) => Some(list.iter().map(|s| descriptor(dir, s)).collect()),
        _ => None,
    };
    ExecutionOptions {
        blueprint,
        filesystem: Arc::new(filesystem),
        installation: match &input["installation"] {
            Json::Null => None,
            i => Some(i.clone()),
        },
        component,
        components,
        imports: input["imports"].as_object().cloned().unwrap_or_default(),
        source,
        targets: None,
    }
}

fn run_executions(
    dir: &Path,
    case: &Json,
    kind: &str,
    input: &Json,
    expect: &Json,
) -> Result<Outcome, String> {
    let executors: Vec<TemplateExecutor> =
        serde_json::from_value(read_yaml(&dir.join(case["template"].as_str().unwrap())))
            .map_err(|e| format!("executors: {e}"))?;
    let kind = kind_of(kind);
    let runs: Vec<Json> = match input.get("runs") {
        Some(Json::Array(runs)) => runs.clone(),
        _ => vec![json!({})],
    };
    let state = MemoryState::default();
    let mut outcome = Err("no run".to_string());
    for (i, run) in runs.iter().enumerate() {
        if let Some(Json::Object(before)) = run.get("stateBefore") {
            for (key, value) in before {
                state
                    .set(key, value.as_str().unwrap().as_bytes().to_vec())
                    .unwrap();
            }
        }
        let mut merged = input.clone();
        if let Some(imports) = run.get("imports") {
            merged["imports"] = imports.clone();
        }
        let opts = options(dir, &merged, executors.clone(), kind);
        let templater = Templater::new(&state);
        outcome = match kind {
            ExecutionKind::Deploy => templater
                .deploy_executions(&opts)
                .map(|items| serde_json::to_value(items).unwrap()),
            ExecutionKind::Export => {
                let values = input["exports"].as_object().cloned().unwrap_or_default();
                templater
                    .export_executions(&opts, &values)
                    .map(Json::Object)
            }
            ExecutionKind::Subinstallation => templater
                .subinstallation_executions(&opts)
                .map(|t| serde_json::to_value(t).unwrap()),
            ExecutionKind::Import => templater
                .import_executions(&opts)
                .map(|r| json!({"imports": r.imports, "errors": r.errors})),
        }
        .map_err(|e| e.to_string());
        if let Some(Json::Array(expected_runs)) = expect.get("runs")
            && expected_runs[i]["succeeds"] == json!(true)
            && let Err(e) = &outcome
        {
            return Err(format!("run {i} failed: {e}"));
        }
    }
    // The second run sees the state the first stored, and what it was given before.
    // Only the GoTemplate run reads the state the test stores before it.
    if let Some(image) = expect
        .pointer("/derived/run2ConfigImage")
        .filter(|_| uses(case, "GoTemplate"))
    {
        let got = outcome
            .as_ref()
            .ok()
            .and_then(|r| r.pointer("/0/config/image"));
        if got != Some(image) {
            return Err(format!(
                "the second run rendered image {got:?}, expected {image}"
            ));
        }
    }
    // Upstream asserts only that the key and the content are not empty; the transcription
    // derives their values, which are checked too.
    if let Some(key) = expect.pointer("/derived/key") {
        let got = outcome
            .as_ref()
            .ok()
            .and_then(|r| r.pointer("/0/config/key"));
        if got != Some(key) {
            return Err(format!("resource key {got:?}, expected {key}"));
        }
    }
    if let Some(content) = expect.pointer("/derived/content") {
        let got = outcome
            .as_ref()
            .ok()
            .and_then(|r| r.pointer("/0/config/content"));
        if got != Some(&normalize(content)) {
            return Err(format!("resource content {got:?}, expected {content}"));
        }
    }
    if let Some(after) = expect.pointer("/derived/stateAfterRun1")
        && runs.len() == 1
    {
        for (key, value) in after.as_object().unwrap() {
            let stored = state
                .get(key)
                .unwrap()
                .map(|d| String::from_utf8(d).unwrap());
            if stored.as_deref() != value.as_str() {
                return Err(format!("state {key}: {stored:?}"));
            }
        }
    }
    Ok(outcome)
}

/// The Installation `namespace/name` among the objects of the case's state folder.
fn installation_in_state(state: &Path, reference: &str) -> Json {
    let (namespace, name) = reference.split_once('/').unwrap();
    walk(&state.join(namespace))
        .into_iter()
        // Files holding Go template actions (`{{ .Namespace }}`) are other objects; skip them.
        .filter_map(|path| {
            serde_yaml_ng::from_str::<Json>(&std::fs::read_to_string(path).unwrap()).ok()
        })
        .find(|object| object["kind"] == "Installation" && object["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no Installation {reference} in {}", state.display()))
}

/// A deploy execution of a blueprint that an Installation of the state folder takes from its
/// component in upstream's local registry (descriptor and blueprint folders beside it); the
/// result is the Execution's `spec.deployItems`, which the controller copies from the
/// rendered items.
fn run_execution(dir: &Path, input: &Json, expect: &Json) -> Result<Outcome, String> {
    let mut installation = installation_in_state(
        &dir.join(input["state"].as_str().unwrap()),
        input["installation"].as_str().unwrap(),
    );
    let component = &input["componentVersion"];
    // The scope's external context gives the installation its component reference, in the
    // form templates see as `.componentDescriptorDef`.
    installation["spec"]["componentDescriptor"] = json!({"ref": {
        "repositoryContext": input["scope"]["external"]["context"]["repositoryContext"],
        "componentName": component["componentName"],
        "version": component["version"],
    }});
    let (descriptor, filesystem, blueprint) =
        installation_blueprint(dir, input, &installation, component)?;
    let options = ExecutionOptions {
        blueprint,
        filesystem: Arc::new(filesystem),
        installation: Some(installation),
        component: Some(descriptor),
        imports: input["imports"].as_object().cloned().unwrap_or_default(),
        ..Default::default()
    };
    let state = MemoryState::default();
    let items = match Templater::new(&state).deploy_executions(&options) {
        Ok(items) => serde_json::to_value(items).unwrap(),
        Err(e) => return Ok(Err(e.to_string())),
    };
    // Upstream asserts some fields; the whole item is derived from the template.
    if let Some(item) = expect.pointer("/derived/deployItem") {
        let mut got = items[0].clone();
        if let Some(map) = got.as_object_mut() {
            map.retain(|key, value| !value.is_null() && key != "dependsOn" && key != "labels");
        }
        if got != normalize(item) {
            return Err(format!("deploy item {got}, expected {item}"));
        }
    }
    Ok(Ok(json!({"spec": {"deployItems": items}})))
}

/// The descriptor of `component` (`componentName`, `version`) in the case's local registry,
/// and the installation's blueprint resource of it: its files and the loaded blueprint.
fn installation_blueprint(
    dir: &Path,
    input: &Json,
    installation: &Json,
    component: &Json,
) -> Result<(Descriptor, Filesystem, Blueprint), String> {
    let repository = Repository::Local {
        path: dir.join(input["registry"].as_str().unwrap()),
    };
    let access = RegistryAccess::new(RegistryOptions::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let descriptor = runtime
        .block_on(access.descriptor(
            &repository,
            component["componentName"].as_str().unwrap(),
            component["version"].as_str().unwrap(),
        ))
        .map_err(|e| e.to_string())?;
    let resource = installation["spec"]["blueprint"]["ref"]["resourceName"]
        .as_str()
        .unwrap();
    let filesystem = runtime
        .block_on(access.blueprint(&repository, &descriptor, resource))
        .map_err(|e| e.to_string())?;
    let blueprint = landscaper_blueprint::load::load(&filesystem)
        .map_err(|e| e.to_string())?
        .blueprint;
    Ok((descriptor, filesystem, blueprint))
}

/// The import executions of an Installation of the state folder, its blueprint a resource of
/// its component in upstream's local registry, on the imports its `importDataMappings` give
/// (transcribed as `importsBefore`). The result is `{imports, error}`; failed validation is
/// the error upstream reports. (The `ValidateImports` condition is the controller's.)
fn run_import_executions(dir: &Path, input: &Json) -> Result<Outcome, String> {
    let installation = installation_in_state(
        &dir.join(input["state"].as_str().unwrap()),
        input["installation"].as_str().unwrap(),
    );
    let reference = &installation["spec"]["componentDescriptor"]["ref"];
    let (descriptor, filesystem, blueprint) =
        installation_blueprint(dir, input, &installation, reference)?;
    let options = ExecutionOptions {
        blueprint,
        filesystem: Arc::new(filesystem),
        installation: Some(installation),
        component: Some(descriptor),
        imports: input["importsBefore"]
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    };
    let state = MemoryState::default();
    let result = match Templater::new(&state).import_executions(&options) {
        Ok(result) => result,
        Err(e) => return Ok(Err(e.to_string())),
    };
    Ok(match result.error_message() {
        Some(message) => Err(message),
        None => Ok(json!({"imports": result.imports, "error": null})),
    })
}

/// What upstream's blueprint renderer does for a blueprint folder and an imports file (a map
/// under `imports`, a target list given as Target maps): the imports validated against the
/// blueprint, then its deploy and subinstallation executions.
fn run_render(dir: &Path, input: &Json) -> Outcome {
    let filesystem = Filesystem::from_dir(&dir.join(input["blueprint"].as_str().unwrap()))
        .map_err(|e| e.to_string())?;
    let blueprint = landscaper_blueprint::load::load(&filesystem)
        .map_err(|e| e.to_string())?
        .blueprint;
    let given = read_yaml(&dir.join(input["importsFile"].as_str().unwrap()));
    let imports = landscaper_blueprint::imports::validate(
        &blueprint,
        &filesystem,
        given["imports"].as_object().unwrap(),
    )
    .map_err(|problems| problems.join("; "))?;
    let options = ExecutionOptions {
        blueprint,
        filesystem: Arc::new(filesystem),
        imports: imports.clone(),
        ..Default::default()
    };
    let state = MemoryState::default();
    let templater = Templater::new(&state);
    let items = templater
        .deploy_executions(&options)
        .map_err(|e| e.to_string())?;
    let subinstallations = templater
        .subinstallation_executions(&options)
        .map_err(|e| e.to_string())?;
    Ok(json!({"imports": imports, "deployItems": items, "subinstallations": subinstallations}))
}

fn run_engine(dir: &Path, case: &Json, input: &Json) -> Outcome {
    let text = std::fs::read_to_string(dir.join(case["template"].as_str().unwrap())).unwrap();
    let filesystem = match input.pointer("/blueprint/filesystem") {
        Some(fs @ Json::Object(_)) => Filesystem::from_inline(fs).unwrap(),
        _ => Filesystem::new(),
    };
    let binding = input["binding"].as_object().cloned().unwrap_or_default();
    landscaper_blueprint::executions::render_go_template(&text, &binding, Arc::new(filesystem))
        .map(Json::String)
}

fn run_helper(input: &Json) -> Outcome {
    match input["function"].as_str().unwrap() {
        "CreateSourceSnippet" => {
            let lines: Vec<&str> = input["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap())
                .collect();
            let line = input["errorLine"].as_u64().unwrap() as usize;
            let column = input["errorColumn"].as_u64().unwrap() as usize;
            Ok(Json::String(report::source_snippet(&lines, line, column)))
        }
        "TemplateInputFormatter.Format" => {
            let mut values: Map<String, Json> =
                input["input"].as_object().cloned().unwrap_or_default();
            if let Some(generator) = input.get("inputGenerator") {
                let text = generator["repeat"]
                    .as_str()
                    .unwrap()
                    .repeat(generator["count"].as_u64().unwrap() as usize);
                values.insert(
                    generator["key"].as_str().unwrap().into(),
                    Json::String(text),
                );
            }
            let sensitive: Vec<&str> = input["sensitiveKeys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            Ok(Json::String(report::format_input(
                &values,
                &sensitive,
                input["prefix"].as_str().unwrap(),
                input["prettyPrint"] == json!(true),
            )))
        }
        other => Err(format!("unknown helper {other}")),
    }
}

fn check(outcome: &Outcome, expect: &Json) -> Result<(), String> {
    if let Some(error) = expect.get("error") {
        let message = match outcome {
            Ok(result) => return Err(format!("expected an error, got {result}")),
            Err(message) => message,
        };
        if let Some(Json::Array(parts)) = error.get("contains") {
            for part in parts {
                let part = part.as_str().unwrap();
                if !message.contains(part) {
                    return Err(format!("error lacks {part:?}:\n{message}"));
                }
            }
        }
        if let Some(Json::String(equals)) = error.get("equals")
            && message != equals
        {
            return Err(format!("error is {message:?}, expected {equals:?}"));
        }
        return Ok(());
    }
    let result = outcome.as_ref().map_err(|e| format!("failed: {e}"))?;
    for assertion in expect["assert"].as_array().into_iter().flatten() {
        check_assertion(result, assertion)?;
    }
    Ok(())
}

fn check_assertion(result: &Json, assertion: &Json) -> Result<(), String> {
    if let Some(group) = assertion.get("regexGroup1") {
        return check_compressed(result, group);
    }
    let Some(path) = assertion.get("path").and_then(Json::as_str) else {
        return Ok(()); // checks about the Go call itself (input unchanged, …)
    };
    let found = result.pointer(path);
    let fail = |what: &str| Err(format!("{path}: {what}; got {found:?} in {result}"));
    if assertion.get("notNull") == Some(&json!(true)) && found.is_none_or(Json::is_null) {
        return fail("expected a value");
    }
    let empty = match found {
        None | Some(Json::Null) => true,
        Some(Json::String(s)) => s.is_empty(),
        Some(Json::Array(a)) => a.is_empty(),
        Some(Json::Object(m)) => m.is_empty(),
        Some(_) => false,
    };
    if assertion.get("nonEmpty") == Some(&json!(true)) && empty {
        return fail("expected a non-empty value");
    }
    if let Some(expected) = assertion.get("equals")
        && found != Some(&normalize(expected))
    {
        return fail(&format!("expected {expected}"));
    }
    if let Some(n) = assertion.get("len").and_then(Json::as_u64) {
        let len = match found {
            Some(Json::Array(a)) => a.len(),
            Some(Json::Object(m)) => m.len(),
            _ => usize::MAX,
        };
        if len as u64 != n {
            return fail(&format!("expected length {n}"));
        }
    }
    if let Some(subset) = assertion.get("matchesSubset").and_then(Json::as_object) {
        for (key, value) in subset {
            if found.and_then(|f| f.get(key)) != Some(&normalize(value)) {
                return fail(&format!("expected {key} = {value}"));
            }
        }
    }
    if let Some(keys) = assertion.get("keysExactly").and_then(Json::as_array) {
        let mut have: Vec<&str> = found
            .and_then(Json::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut want: Vec<&str> = keys.iter().map(|k| k.as_str().unwrap()).collect();
        have.sort();
        want.sort();
        if have != want {
            return fail(&format!("expected exactly the keys {want:?}"));
        }
    }
    if let Some(part) = assertion.get("contains").and_then(Json::as_str)
        && !found
            .and_then(Json::as_str)
            .is_some_and(|s| s.contains(part))
    {
        return fail(&format!("expected to contain {part:?}"));
    }
    if let Some(pattern) = assertion.get("regex").and_then(Json::as_str) {
        let prefix = pattern.split(" (").next().unwrap_or(pattern);
        if !found
            .and_then(Json::as_str)
            .is_some_and(|s| s.contains(prefix))
        {
            return fail(&format!("expected to match {pattern:?}"));
        }
    }
    Ok(())
}

/// YAML numbers in expectations are compared as the JSON numbers results hold.
fn normalize(value: &Json) -> Json {
    serde_json::from_str(&value.to_string()).unwrap()
}

/// The compressed formatter case: `large: >gzip>base64> B` where B decodes to the value's JSON.
fn check_compressed(result: &Json, group: &Json) -> Result<(), String> {
    use base64::Engine as _;
    use std::io::Read as _;
    let text = result.as_str().unwrap_or_default();
    let encoded = text
        .split(">gzip>base64> ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or_else(|| format!("not compressed: {text}"))?;
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| e.to_string())?;
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&compressed[..])
        .read_to_string(&mut plain)
        .map_err(|e| e.to_string())?;
    let expected = group["equals"].as_str().unwrap();
    let want = expected.replace("<1024 x a>", &"a".repeat(1024));
    (plain == want)
        .then_some(())
        .ok_or_else(|| format!("decompressed to {plain:?}"))
}
