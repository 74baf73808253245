//! The state blueprint executions keep between jobs (`.state` in GoTemplate, `&state` in
//! Spiff), stored as upstream stores it: one Secret per execution, named from the
//! installation and the execution's state key, with the data under `config`, owned by the
//! installation so that it goes with it.
//!
//! A step of a job may run twice (a reconcile on an object the cache has not caught up with
//! yet), and executions that count or append must see the same state both times: the Secret
//! records the job that wrote it, and keeps the state that job started from under `previous`.

use std::collections::HashMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use landscaper_api::core::{Installation, TemplateExecutor};
use landscaper_blueprint::state::{SECRET_DATA_KEY, secret_name};
use landscaper_blueprint::{ExecutionKind, ExecutionOptions, MemoryState};

use super::{Context, Error, MANAGER};

/// Annotation on a state Secret: the job that last wrote it.
const JOB_ANNOTATION: &str = "landscaper.gardener.cloud/job-id";
/// Data key of a state Secret holding the state its job started from.
const PREVIOUS_KEY: &str = "previous";

/// The executions of `kinds` in the blueprint of `options`, with their kind.
fn executions<'a>(
    options: &'a ExecutionOptions,
    kinds: &[ExecutionKind],
) -> Vec<(ExecutionKind, &'a TemplateExecutor)> {
    let blueprint = &options.blueprint;
    kinds
        .iter()
        .flat_map(|&kind| {
            let list = match kind {
                ExecutionKind::Deploy => &blueprint.deploy_executions,
                ExecutionKind::Export => &blueprint.export_executions,
                ExecutionKind::Subinstallation => &blueprint.subinstallation_executions,
                ExecutionKind::Import => &blueprint.import_executions,
            };
            list.iter().map(move |executor| (kind, executor))
        })
        .collect()
}

/// Whether an execution can read or write state: its template mentions it. Sparing the read
/// of a Secret for every other execution keeps a job to a few requests.
fn uses_state(executor: &TemplateExecutor, options: &ExecutionOptions) -> bool {
    let text = match (&executor.template, &executor.file) {
        (Some(template), _) => template.to_string(),
        (None, Some(file)) => options
            .filesystem
            .read(file)
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_default(),
        (None, None) => String::new(),
    };
    text.contains("state")
}

/// The execution state an installation's job starts from.
pub struct Loaded {
    /// The state the executions read and write.
    pub state: MemoryState,
    /// The state the job started from, by key.
    before: HashMap<String, Vec<u8>>,
    /// The job this is.
    job: String,
}

/// The state `job` starts from, as stored in `secret`.
fn start_of_job(secret: Secret, job: &str) -> Option<Vec<u8>> {
    let written_by_job = secret.annotations().get(JOB_ANNOTATION).map(String::as_str) == Some(job);
    let mut data = secret.data?;
    if written_by_job {
        data.remove(PREVIOUS_KEY).map(|d| d.0)
    } else {
        data.remove(SECRET_DATA_KEY).map(|d| d.0)
    }
}

/// Reads the stored state of the executions of `kinds` that use state.
pub async fn load(
    installation: &Installation,
    context: &Context,
    options: &ExecutionOptions,
    kinds: &[ExecutionKind],
) -> Result<Loaded, Error> {
    let secrets = secrets(installation, context);
    let name = installation.name_any();
    let job = job(installation);
    let mut before = HashMap::new();
    for (kind, executor) in executions(options, kinds) {
        let Some(key) = kind.state_key(executor.name.as_deref().unwrap_or_default()) else {
            continue;
        };
        if !uses_state(executor, options) {
            continue;
        }
        let secret_name = secret_name(&name, &key);
        let secret = secrets.get_opt(&secret_name).await.map_err(|source| {
            Error::api(
                installation,
                format!("read the state Secret {secret_name} of execution {key}"),
                source,
            )
        })?;
        if let Some(data) = secret.and_then(|s| start_of_job(s, &job)) {
            before.insert(key, data);
        }
    }
    Ok(Loaded {
        state: MemoryState::with(before.clone()),
        before,
        job,
    })
}

/// Writes the state the executions changed.
pub async fn save(
    installation: &Installation,
    context: &Context,
    loaded: &Loaded,
) -> Result<(), Error> {
    let secrets = secrets(installation, context);
    let name = installation.name_any();
    for (key, data) in loaded.state.entries() {
        if loaded.before.get(&key) == Some(&data) {
            continue;
        }
        let secret_name = secret_name(&name, &key);
        let mut data = vec![(SECRET_DATA_KEY.to_owned(), ByteString(data))];
        if let Some(previous) = loaded.before.get(&key) {
            data.push((PREVIOUS_KEY.to_owned(), ByteString(previous.clone())));
        }
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(secret_name.clone()),
                namespace: installation.namespace(),
                owner_references: installation.controller_owner_ref(&()).map(|o| vec![o]),
                annotations: Some([(JOB_ANNOTATION.to_owned(), loaded.job.clone())].into()),
                ..ObjectMeta::default()
            },
            data: Some(data.into_iter().collect()),
            ..Secret::default()
        };
        secrets
            .patch(
                &secret_name,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&secret),
            )
            .await
            .map_err(|source| {
                Error::api(
                    installation,
                    format!("write the state Secret {secret_name} of execution {key}"),
                    source,
                )
            })?;
    }
    Ok(())
}

fn job(installation: &Installation) -> String {
    installation
        .status
        .as_ref()
        .and_then(|s| s.job_id.clone())
        .unwrap_or_default()
}

fn secrets(installation: &Installation, context: &Context) -> Api<Secret> {
    Api::namespaced(
        context.client.clone(),
        &installation.namespace().unwrap_or_default(),
    )
}
