//! Loads upstream Landscaper's controller test state (`../shared/conformance/landscaper/states/`)
//! into a testbed cluster, the way upstream's two envtest loaders do (see `states/cases.md`).
//!
//! State files are Go templates with a few placeholders (`{{ .Namespace }}`, `dataObjectName`,
//! `dataObjectContext`, `executionDataObjectNameExec`); they are rendered, created, their owner
//! references pointed at the real owners' UIDs, and their `status` written through the status
//! subresource. A real API server ignores `metadata.deletionTimestamp` on create, so an object
//! whose file sets one is deleted right after it is loaded: its finalizers keep it, now with a
//! deletion timestamp, which is the state the upstream test works on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, pinned_kind};
use landscaper_api::core::{data_object_name, execution_data_object_name};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use testbed::Testbed;

use crate::objects::ensure_namespace;

/// The folder of upstream's state test data.
pub fn states_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/landscaper/states")
}

/// The executor list of the template case `inline/<file>` of the conformance templates (beside
/// the states folder), as upstream's Go tests set a blueprint's executions inline.
pub fn inline_executions(file: &str) -> Vec<landscaper_api::core::TemplateExecutor> {
    let path = states_dir().join("../templates/inline").join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
    let yaml = landscaper_blueprint::values::parse_yaml(&text)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_value(yaml)
        .unwrap_or_else(|error| panic!("{} is a list of executions: {error}", path.display()))
}

/// Which of upstream's loaders to behave like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loader {
    /// `testenv.InitResources`: fresh namespaces (`.Namespace`, `.Namespace2`), several YAML
    /// documents per file, only the files directly in the folder.
    EnvTest,
    /// `NewFakeClientFromPath`: every file below the folder, one object per file, `.Namespace`
    /// rendered as `""` (the files name their namespaces).
    FakeClient,
}

/// What a state folder became in the cluster.
#[derive(Debug)]
pub struct LoadedState {
    /// The value of `{{ .Namespace }}` (empty for [`Loader::FakeClient`]).
    pub namespace: String,
    /// The value of `{{ .Namespace2 }}` (empty for [`Loader::FakeClient`]).
    pub namespace2: String,
    /// Objects the API server refused, with its message. Only the fake-client loader keeps
    /// going after a refusal: upstream's fake client validates nothing, so some of its files
    /// (a Target without `spec.type`) never met a real API server's schema.
    pub refused: Vec<(String, String)>,
    objects: BTreeMap<(String, String), Value>,
}

impl LoadedState {
    /// The loaded object of `kind` named `namespace/name`, as the API server returned it.
    pub fn get(&self, kind: &str, key: &str) -> &Value {
        self.objects
            .get(&(kind.to_owned(), key.to_owned()))
            .unwrap_or_else(|| {
                panic!(
                    "the state holds no {kind} {key}; it holds {:?}",
                    self.keys()
                )
            })
    }

    /// The loaded object of `kind` named `namespace/name`, decoded as `T`.
    pub fn typed<T: DeserializeOwned>(&self, kind: &str, key: &str) -> T {
        serde_json::from_value(self.get(kind, key).clone())
            .unwrap_or_else(|error| panic!("{kind} {key} decodes: {error}"))
    }

    /// `kind namespace/name` of every loaded object.
    pub fn keys(&self) -> Vec<String> {
        self.objects
            .keys()
            .map(|(kind, key)| format!("{kind} {key}"))
            .collect()
    }
}

/// A one-cluster testbed with the Landscaper CRDs served and no controller running, for tests
/// that drive the controllers themselves.
pub async fn cluster_with_crds() -> Testbed {
    let bed = Testbed::builder().start().await.expect("testbed starts");
    let client = bed.cluster().client();
    landscaper::crds::ensure(&client)
        .await
        .expect("CRDs are installed");
    let installations: Api<landscaper_api::core::Installation> = Api::all(client);
    crate::eventually("the Installation CRD is served", || async {
        installations.list(&Default::default()).await.is_ok()
    })
    .await;
    bed
}

/// A cluster of its own with the CRDs (see [`cluster_with_crds`]) holding the state folder
/// `dir` (see [`load`]): the testbed, a client and what was loaded.
pub async fn loaded(dir: impl AsRef<Path>, loader: Loader) -> (Testbed, kube::Client, LoadedState) {
    let bed = cluster_with_crds().await;
    let client = bed.cluster().client();
    let state = load(&client, dir, loader).await;
    (bed, client, state)
}

/// Loads the state folder `dir` (absolute, or relative to [`states_dir`]) into the cluster of
/// `client`.
pub async fn load(client: &kube::Client, dir: impl AsRef<Path>, loader: Loader) -> LoadedState {
    let dir = states_dir().join(dir.as_ref());
    let (namespace, namespace2) = match loader {
        Loader::EnvTest => (fresh_name(), fresh_name()),
        Loader::FakeClient => (String::new(), String::new()),
    };
    let values = Placeholders {
        namespace: &namespace,
        namespace2: &namespace2,
    };
    let mut pending = Vec::new();
    for file in state_files(&dir, loader) {
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|error| panic!("reading {}: {error}", file.display()));
        let rendered = values.render(&text, &file);
        for object in documents(&rendered, &file, loader) {
            pending.push((file.clone(), object));
        }
    }
    if loader == Loader::EnvTest {
        for name in [&namespace, &namespace2] {
            ensure_namespace(client, name).await;
        }
    }
    let mut state = LoadedState {
        namespace,
        namespace2,
        refused: Vec::new(),
        objects: BTreeMap::new(),
    };
    // Owners first: an object whose owner is not created yet waits for a later pass.
    while !pending.is_empty() {
        let before = pending.len();
        let mut waiting = Vec::new();
        for (file, object) in pending {
            match with_owner_uids(object, &state) {
                Ok(object) => create(client, &file, object, loader, &mut state).await,
                Err(object) => waiting.push((file, object)),
            }
        }
        if waiting.len() == before {
            let names: Vec<String> = waiting
                .iter()
                .map(|(file, object)| format!("{} ({})", describe(object), file.display()))
                .collect();
            panic!("these objects name owners that the state does not hold: {names:?}");
        }
        pending = waiting;
    }
    state
}

/// The files a loader reads, in name order (upstream creates them in directory order).
fn state_files(dir: &Path, loader: Loader) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .unwrap_or_else(|error| panic!("reading {}: {error}", folder.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                if loader == Loader::FakeClient {
                    folders.push(path);
                }
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The objects of a rendered file: one for the fake-client loader, every non-empty document
/// for envtest's.
fn documents(text: &str, file: &Path, loader: Loader) -> Vec<Value> {
    let mut objects = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value = Value::deserialize(document)
            .unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        if value.is_null() {
            continue;
        }
        objects.push(value);
        if loader == Loader::FakeClient {
            break;
        }
    }
    objects
}

/// Replaces each owner reference's UID by the loaded owner's, or gives the object back when an
/// owner is not loaded yet.
fn with_owner_uids(mut object: Value, state: &LoadedState) -> Result<Value, Value> {
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let Some(owners) = object["metadata"]["ownerReferences"].as_array_mut() else {
        return Ok(object);
    };
    let mut uids = Vec::new();
    for owner in owners.iter() {
        let kind = owner["kind"].as_str().unwrap_or_default();
        let name = owner["name"].as_str().unwrap_or_default();
        match state
            .objects
            .get(&(kind.to_owned(), format!("{namespace}/{name}")))
        {
            Some(loaded) => uids.push(loaded["metadata"]["uid"].clone()),
            None => return Err(object),
        }
    }
    for (owner, uid) in owners.iter_mut().zip(uids) {
        owner["uid"] = uid;
    }
    Ok(object)
}

async fn create(
    client: &kube::Client,
    file: &Path,
    mut object: Value,
    loader: Loader,
    state: &mut LoadedState,
) {
    let what = format!("{} ({})", describe(&object), file.display());
    let status = object.as_object_mut().and_then(|map| map.remove("status"));
    let being_deleted = object["metadata"]
        .as_object_mut()
        .and_then(|metadata| metadata.remove("deletionTimestamp"))
        .is_some();
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if !namespace.is_empty() {
        ensure_namespace(client, &namespace).await;
    }
    let api = api_for(client, &object, &namespace).await;
    let dynamic: DynamicObject = serde_json::from_value(object)
        .unwrap_or_else(|error| panic!("{what} is an object: {error}"));
    let name = dynamic
        .metadata
        .name
        .clone()
        .expect("state objects are named");
    let mut created = match api.create(&PostParams::default(), &dynamic).await {
        Ok(created) => created,
        Err(kube::Error::Api(refusal)) if loader == Loader::FakeClient && refusal.code == 422 => {
            state.refused.push((what, refusal.message));
            return;
        }
        Err(error) => panic!("creating {what}: {error}"),
    };
    if let Some(status) = status.filter(|status| !status.is_null()) {
        created = api
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .unwrap_or_else(|error| panic!("writing the status of {what}: {error}"));
    }
    if being_deleted {
        api.delete(&name, &DeleteParams::default())
            .await
            .unwrap_or_else(|error| panic!("deleting {what}: {error}"));
        created = api
            .get(&name)
            .await
            .unwrap_or_else(|error| panic!("{what} is kept by its finalizers: {error}"));
    }
    let kind = created
        .types
        .as_ref()
        .map(|types| types.kind.clone())
        .unwrap_or_default();
    let value = serde_json::to_value(&created).expect("objects serialize");
    state
        .objects
        .insert((kind, format!("{namespace}/{name}")), value);
}

async fn api_for(client: &kube::Client, object: &Value, namespace: &str) -> Api<DynamicObject> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, _): (ApiResource, _) = pinned_kind(client, &gvk)
        .await
        .unwrap_or_else(|error| panic!("the cluster serves no {api_version} {kind}: {error}"));
    if namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    }
}

fn describe(object: &Value) -> String {
    format!(
        "{} {}/{}",
        object["kind"].as_str().unwrap_or("?"),
        object["metadata"]["namespace"].as_str().unwrap_or(""),
        object["metadata"]["name"].as_str().unwrap_or("?")
    )
}

/// A namespace name as envtest makes them: `tests-` and five random letters and digits.
fn fresh_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos() as u64)
        .unwrap_or_default()
        ^ (u64::from(std::process::id()) << 32)
        ^ NEXT.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
    let mut value = seed;
    let mut suffix = String::new();
    for _ in 0..5 {
        value = value
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        suffix.push(char::from(
            b"abcdefghijklmnopqrstuvwxyz0123456789"[(value >> 33) as usize % 36],
        ));
    }
    format!("tests-{suffix}")
}

/// The values and functions upstream's loaders render state files with.
struct Placeholders<'a> {
    namespace: &'a str,
    namespace2: &'a str,
}

impl Placeholders<'_> {
    /// Renders every `{{ … }}` action of `text`.
    fn render(&self, text: &str, file: &Path) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let end = rest[start..]
                .find("}}")
                .unwrap_or_else(|| panic!("{}: an unclosed {{{{", file.display()));
            let action = &rest[start + 2..start + end];
            let tokens = tokenize(action);
            let (value, used) = self
                .evaluate(&tokens)
                .unwrap_or_else(|error| panic!("{}: {{{{{action}}}}}: {error}", file.display()));
            if used != tokens.len() {
                panic!("{}: {{{{{action}}}}} has trailing words", file.display());
            }
            out.push_str(&value);
            rest = &rest[start + end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Evaluates the expression at the start of `tokens`: its value and how many tokens it used.
    fn evaluate(&self, tokens: &[String]) -> Result<(String, usize), String> {
        let first = tokens.first().ok_or("an empty expression")?;
        match first.as_str() {
            ".Namespace" => Ok((self.namespace.to_owned(), 1)),
            ".Namespace2" => Ok((self.namespace2.to_owned(), 1)),
            "dataObjectName" | "dataObjectContext" | "executionDataObjectNameExec" => {
                let (a, used_a) = self.argument(tokens, 1)?;
                let (b, used_b) = self.argument(tokens, 1 + used_a)?;
                let value = match first.as_str() {
                    "dataObjectName" => data_object_name(&a, &b),
                    "dataObjectContext" => format!("Inst.{b}"),
                    _ => execution_data_object_name(&b),
                };
                Ok((value, 1 + used_a + used_b))
            }
            other => Err(format!("the loaders know no {other:?}")),
        }
    }

    fn argument(&self, tokens: &[String], at: usize) -> Result<(String, usize), String> {
        let token = tokens.get(at).ok_or("a missing argument")?;
        if token == "(" {
            let (value, used) = self.evaluate(&tokens[at + 1..])?;
            if tokens.get(at + 1 + used).map(String::as_str) != Some(")") {
                return Err("an unclosed (".to_owned());
            }
            Ok((value, used + 2))
        } else if let Some(literal) = token.strip_prefix('"') {
            Ok((literal.to_owned(), 1))
        } else {
            self.evaluate(&tokens[at..])
        }
    }
}

/// Splits an action into words, parentheses and string literals (kept with a leading `"`);
/// `{{-` and `-}}` trim markers are dropped.
fn tokenize(action: &str) -> Vec<String> {
    let action = action.trim();
    let action = action.strip_prefix('-').unwrap_or(action);
    let action = action.strip_suffix('-').unwrap_or(action);
    let mut tokens = Vec::new();
    let mut chars = action.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' | ')' => tokens.push(c.to_string()),
            '"' => {
                let literal: String = chars.by_ref().take_while(|&c| c != '"').collect();
                tokens.push(format!("\"{literal}"));
            }
            _ => {
                let mut word = c.to_string();
                while let Some(&next) = chars.peek() {
                    if next.is_whitespace() || next == '(' || next == ')' {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                tokens.push(word);
            }
        }
    }
    tokens
}
