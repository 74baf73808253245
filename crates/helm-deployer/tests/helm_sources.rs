//! Chart sources of the helm deployer and bad input, on two testbed clusters with RBAC: the
//! deployer reads the landscaper cluster and deploys to the target as restricted users.
//! Charts come inline, from a Helm repository on loopback (HTTPS behind basic auth, the
//! credentials from the item's Context), from an archive URL and from Debian's
//! `docker-registry`; the objects equal what our `template` renders. Unreachable
//! repositories (retried with backoff until the timeout), missing versions, a malformed
//! Chart.yaml, missing dependencies, template errors and schema violations end Failed with a
//! one-line message naming the chart, file and position, and a fixed item succeeds; a target
//! that forbids release records fails at once.

mod common;

use base64::Engine as _;
use common::*;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use landscaper_api::constants::deploy_item_types::HELM;
use landscaper_api::core::{Context, Target};
use landscaper_chart::formats::tree::Map;
use landscaper_chart::helm::render::{ReleaseOptions, TemplateOptions};
use landscaper_helm_deployer::source::{SourceSettings, Sources};
use landscaper_helm_deployer::{self as helm, HelmDeployer};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testbed::fixtures::chart_repository::{self, ChartRepository, RepoChart, RepoOptions};
use testbed::fixtures::registry::Registry;

const SCHEMA: &str = r#"{"type": "object", "properties": {"greeting": {"type": "string"}}}"#;

/// The `demo` chart at `version`; `broken` adds a template calling an unknown function.
fn demo_chart(version: &str, broken: bool) -> Vec<u8> {
    let chart_yaml = format!("apiVersion: v2\nname: demo\nversion: {version}\n");
    let mut files = vec![
        ("demo/Chart.yaml", chart_yaml.as_str()),
        ("demo/values.yaml", "greeting: hello\n"),
        ("demo/values.schema.json", SCHEMA),
        (
            "demo/templates/configmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\n  labels:\n    chart: {{ .Chart.Name }}-{{ .Chart.Version }}\ndata:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting | quote }}\n  namespace: {{ .Release.Namespace }}\n",
        ),
    ];
    if broken {
        files.push((
            "demo/templates/broken.yaml",
            "{{ .Values.greeting | nosuchfunc }}",
        ));
    }
    chart_repository::package(&files)
}

fn repo_chart(version: &str, broken: bool) -> RepoChart {
    RepoChart {
        name: "demo".into(),
        version: version.into(),
        archive: demo_chart(version, broken),
    }
}

/// A repository with demo 0.1.0, 0.2.0 and a broken 0.3.0.
fn repository(options: RepoOptions) -> ChartRepository {
    ChartRepository::serve(
        vec![
            repo_chart("0.1.0", false),
            repo_chart("0.2.0", false),
            repo_chart("0.3.0", true),
        ],
        options,
    )
    .expect("repository serves")
}

fn repo_source(url: &str, version: &str) -> Value {
    json!({"helmChartRepo": {"helmChartRepoUrl": url, "helmChartName": "demo", "helmChartVersion": version}})
}

/// What a helm deployer may do in the landscaper cluster: items, targets, the Context and
/// its Secrets, events.
fn landscaper_rules() -> Value {
    json!([
        {"apiGroups": ["landscaper.gardener.cloud"], "resources": ["deployitems", "targets"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": ["landscaper.gardener.cloud"], "resources": ["deployitems/status"], "verbs": ["get", "patch"]},
        {"apiGroups": ["landscaper.gardener.cloud"], "resources": ["contexts"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}
    ])
}

/// What the deploying identity may do in the target cluster; `secrets` adds release records.
fn target_rules(secrets: bool) -> Value {
    let mut rules =
        vec![json!({"apiGroups": [""], "resources": ["configmaps", "namespaces"], "verbs": ["*"]})];
    if secrets {
        rules.push(json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}));
    }
    Value::Array(rules)
}

/// The clusters, a Target `cluster` for a restricted deploying identity, and a helm deployer
/// running as a restricted landscaper user with its own chart cache.
struct Bed {
    env: Env,
    deployer: Running,
    target_token: String,
    cache: std::path::PathBuf,
}

async fn bed(name: &str, target_secrets: bool, plain_http_registries: Vec<String>) -> Bed {
    let sources = SourceSettings {
        plain_http_registries,
        ..SourceSettings::default()
    };
    bed_with(name, target_secrets, sources).await
}

/// Like [`bed`], with the deployer's chart sources set as given (the cache is the bed's).
async fn bed_with(name: &str, target_secrets: bool, sources: SourceSettings) -> Bed {
    let env = env().await;
    let target_token = user(
        env.target_cluster(),
        "deployer",
        target_rules(target_secrets),
    )
    .await;
    let target = Target::new(
        "cluster",
        landscaper_api::core::TargetSpec {
            type_: landscaper_api::constants::target_types::KUBERNETES_CLUSTER.into(),
            config: Some(
                json!({"kubeconfig": env.target_cluster().kubeconfig_yaml_for(&target_token)}),
            ),
            secret_ref: None,
        },
    );
    env.create_target(&target).await;
    let ls_token = user(env.ls_cluster(), "helm-deployer", landscaper_rules()).await;
    let ls = env.ls_cluster().client_as(&ls_token);
    let cache = std::env::temp_dir().join(format!(
        "landscaper-helm-sources-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&cache);
    let mut setup = helm::setup(ls.clone(), ls, config(HELM));
    setup.deployer = HelmDeployer {
        sources: Arc::new(Sources::new(SourceSettings {
            cache_dir: Some(cache.clone()),
            ..sources
        })),
    };
    Bed {
        deployer: start(setup),
        env,
        target_token,
        cache,
    }
}

impl Bed {
    /// Creates the helm item `name` deploying release `name` of `chart` with `values` to the
    /// Target `cluster`, and starts its first job.
    async fn item(&self, name: &str, chart: Value, values: Value) {
        let config = provider_config(name, chart, values);
        self.env.item(name, HELM, Some("cluster"), config).await;
    }

    /// Changes the item's release to `chart` with `values` and drops its timeout (a new
    /// generation), starts job `job` and asserts that it succeeds.
    async fn fix(&self, name: &str, chart: Value, values: Value, job: &str) {
        let config = provider_config(name, chart, values);
        self.env
            .items()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"config": config, "timeout": null}})),
            )
            .await
            .unwrap();
        self.env.trigger(name, job).await;
        self.env.succeeded(name, job).await;
    }

    /// The item failed with `reason`; returns the message.
    async fn failed(&self, name: &str, job: &str, reason: &str) -> String {
        let error = self.env.failed(name, job).await;
        assert_eq!(error.reason, reason, "{}", error.message);
        error.message
    }

    /// Job `job` of item `release` succeeded, and the ConfigMaps of the target equal what
    /// `template` renders for `archive` and `values` as release `release` in `apps` (plus the
    /// deployer's ownership metadata).
    async fn assert_deployed_as_template(
        &self,
        release: &str,
        job: &str,
        archive: &[u8],
        values: Value,
    ) {
        self.env.succeeded(release, job).await;
        let chart = landscaper_chart::helm::chart::load_archive(archive).unwrap();
        let values: Map =
            landscaper_chart::formats::json::parse_object(&values.to_string()).unwrap();
        let options = TemplateOptions {
            release: ReleaseOptions {
                name: release.into(),
                namespace: "apps".into(),
                revision: 1,
                is_upgrade: false,
            },
            ..Default::default()
        };
        let rendered = landscaper_chart::helm::render::install(&chart, &values, &options).unwrap();
        let objects = helm::render::parse_documents(&rendered.manifest, "demo", "test").unwrap();
        assert!(!objects.is_empty());
        for want in objects {
            let name = want["metadata"]["name"].as_str().unwrap();
            let got = self
                .env
                .configmap("apps", name)
                .await
                .unwrap_or_else(|| panic!("ConfigMap apps/{name} deployed"));
            let got = serde_json::to_value(got).unwrap();
            assert_eq!(got["data"], want["data"], "{name}");
            for (k, v) in want["metadata"]["labels"].as_object().unwrap() {
                assert_eq!(&got["metadata"]["labels"][k], v, "{name} label {k}");
            }
        }
    }
}

impl Bed {
    /// Stops the deployer and removes its cache.
    async fn stop(self) {
        self.deployer.stop().await;
        let _ = std::fs::remove_dir_all(&self.cache);
    }
}

/// A Context `name` in the items namespace with `fields` (`configurations`,
/// `registryPullSecrets`, `repositoryContext`, …).
async fn context(env: &Env, name: &str, fields: Value) {
    let mut object = json!({
        "apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Context",
        "metadata": {"name": name, "namespace": NS},
    });
    object
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().expect("fields are an object").clone());
    let ctx: Context = serde_json::from_value(object).unwrap();
    Api::<Context>::namespaced(env.ls.clone(), NS)
        .create(&PostParams::default(), &ctx)
        .await
        .unwrap();
}

async fn secret(env: &Env, name: &str, type_: &str, data: Value) {
    let s: Secret = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": NS}, "type": type_, "stringData": data,
    }))
    .unwrap();
    Api::<Secret>::namespaced(env.ls.clone(), NS)
        .create(&PostParams::default(), &s)
        .await
        .unwrap();
}

#[tokio::test]
async fn charts_from_every_source_deploy_as_template_renders_them() {
    let registry = Registry::binary_or_skip().map(|b| Registry::start(&b).expect("registry"));
    let plain = registry.iter().map(|r| r.address().to_string()).collect();
    let bed = bed("sources", true, plain).await;
    let repo = repository(RepoOptions {
        basic_auth: Some(("alice".into(), "s3cret".into())),
        tls: true,
        ..RepoOptions::default()
    });
    // The Context authenticates by URL prefix with a header from a Secret and trusts the
    // repository's CA; the registry login comes from a pull secret.
    let header = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("alice:s3cret")
    );
    secret(&bed.env, "repo-auth", "Opaque", json!({"header": header})).await;
    let registry_auth = base64::engine::general_purpose::STANDARD.encode("puller:pw");
    let registry_host = registry.as_ref().map_or("none", |r| r.address());
    secret(
        &bed.env,
        "pull",
        "kubernetes.io/dockerconfigjson",
        json!({".dockerconfigjson": json!({"auths": {registry_host: {"auth": registry_auth}}}).to_string()}),
    )
    .await;
    context(
        &bed.env,
        "default",
        json!({
            "configurations": {"helmChartRepoCredentials": {"auths": [{
                "url": format!("{}/", repo.url()),
                "customCAData": repo.ca_pem().unwrap(),
                "secretRef": {"name": "repo-auth", "key": "header"},
            }]}},
            "registryPullSecrets": [{"name": "pull"}],
        }),
    )
    .await;

    let inline = demo_chart("0.1.0", false);
    let raw = base64::engine::general_purpose::STANDARD.encode(&inline);
    bed.item(
        "inline",
        json!({"archive": {"raw": raw}}),
        json!({"greeting": "inline"}),
    )
    .await;
    bed.item("repo", repo_source(repo.url(), "~0.2"), json!({}))
        .await;
    let url = format!("{}/charts/demo-0.1.0.tgz", repo.url());
    bed.item(
        "remote",
        json!({"archive": {"remote": {"url": url}}}),
        json!({}),
    )
    .await;
    bed.assert_deployed_as_template("inline", "job-1", &inline, json!({"greeting": "inline"}))
        .await;
    bed.assert_deployed_as_template("repo", "job-1", &demo_chart("0.2.0", false), json!({}))
        .await;
    bed.assert_deployed_as_template("remote", "job-1", &demo_chart("0.1.0", false), json!({}))
        .await;

    let Some(registry) = registry else {
        return;
    };
    let reference = push_demo_chart(&registry, None).await;
    bed.item(
        "oci",
        json!({"ref": format!("{reference}:0.2.0")}),
        json!({"greeting": "oci"}),
    )
    .await;
    bed.assert_deployed_as_template(
        "oci",
        "job-1",
        &demo_chart("0.2.0", false),
        json!({"greeting": "oci"}),
    )
    .await;
    bed.stop().await;
}

#[tokio::test]
async fn without_credentials_the_repository_denies_access_and_the_items_named_context_grants_it() {
    let bed = bed("denied", true, Vec::new()).await;
    let repo = repository(RepoOptions {
        basic_auth: Some(("alice".into(), "s3cret".into())),
        tls: false,
        ..RepoOptions::default()
    });
    bed.item("web", repo_source(repo.url(), "0.1.0"), json!({}))
        .await;
    let message = bed.failed("web", "job-1", "ChartAccessDenied").await;
    assert!(
        message.contains("chart demo 0.1.0 of repository http://127.0.0.1")
            && message.contains("401 Unauthorized"),
        "{message}"
    );
    // The item names a Context of its own (`spec.context`); its credentials are used.
    context(
        &bed.env,
        "team",
        json!({"configurations": {"helmChartRepoCredentials": {"auths": [{
            "url": repo.url(),
            "authHeader": format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("alice:s3cret")),
        }]}}}),
    )
    .await;
    bed.env
        .items()
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"context": "team"}})),
        )
        .await
        .unwrap();
    bed.env.trigger("web", "job-2").await;
    bed.env.succeeded("web", "job-2").await;
    bed.stop().await;
}

#[tokio::test]
async fn an_unchanged_repository_chart_is_downloaded_once() {
    let bed = bed("cache", true, Vec::new()).await;
    let repo = repository(RepoOptions::default());
    for name in ["one", "two"] {
        bed.item(name, repo_source(repo.url(), "0.1.0"), json!({}))
            .await;
        bed.env.succeeded(name, "job-1").await;
    }
    // Two index reads, one archive download: the second item's archive came from the cache.
    assert_eq!(repo.requests(), 3);
    bed.stop().await;
}

#[tokio::test]
async fn a_missing_version_a_template_error_and_a_schema_violation_fail_and_fixes_succeed() {
    let bed = bed("bad", true, Vec::new()).await;
    let repo = repository(RepoOptions::default());

    bed.item("missing", repo_source(repo.url(), "9.9.9"), json!({}))
        .await;
    let message = bed.failed("missing", "job-1", "ChartNotFound").await;
    assert!(
        one_line(&message)
            .contains("spec.config.chart.helmChartRepo: chart demo 9.9.9 of repository")
            && message.contains("version \"9.9.9\" not found"),
        "{message}"
    );
    bed.fix(
        "missing",
        repo_source(repo.url(), "0.1.0"),
        json!({}),
        "job-2",
    )
    .await;

    bed.item("broken", repo_source(repo.url(), "0.3.0"), json!({}))
        .await;
    let message = bed.failed("broken", "job-1", "RenderChart").await;
    assert!(
        one_line(&message).contains("chart demo-0.3.0")
            && message.contains("demo/templates/broken.yaml:1")
            && message.contains("nosuchfunc"),
        "{message}"
    );
    bed.fix(
        "broken",
        repo_source(repo.url(), "0.2.0"),
        json!({}),
        "job-2",
    )
    .await;

    bed.item(
        "schema",
        repo_source(repo.url(), "0.1.0"),
        json!({"greeting": 5}),
    )
    .await;
    let message = bed.failed("schema", "job-1", "RenderChart").await;
    assert!(
        one_line(&message).contains("chart demo-0.1.0")
            && message.contains("demo/values.schema.json: at '/greeting'"),
        "{message}"
    );
    assert!(bed.env.configmap("apps", "schema-config").await.is_none());
    bed.fix(
        "schema",
        repo_source(repo.url(), "0.1.0"),
        json!({"greeting": "five"}),
        "job-2",
    )
    .await;
    bed.stop().await;
}

/// Asserts that a failed item's message is one line (status, Event and log line alike).
fn one_line(message: &str) -> &str {
    assert!(!message.contains('\n'), "not one line: {message:?}");
    message
}

#[tokio::test]
async fn bad_charts_fail_at_once_with_one_line_naming_chart_file_and_position() {
    let bed = bed("bad-charts", true, Vec::new()).await;
    let inline = |files: &[(&str, &str)]| {
        json!({"archive": {"raw": base64::engine::general_purpose::STANDARD
            .encode(chart_repository::package(files))}})
    };
    let chart_yaml = "apiVersion: v2\nname: demo\nversion: 0.1.0\n";
    let cases = [
        (
            "chart-yaml",
            inline(&[(
                "demo/Chart.yaml",
                "apiVersion: v2\nname: demo\nversion: 0.1.0\n  bad: [\n",
            )]),
            json!({}),
            "InvalidChart",
            vec![
                "inline chart archive (chart folder demo)",
                "cannot load Chart.yaml",
                "line 4",
            ],
        ),
        (
            "dependency",
            inline(&[(
                "demo/Chart.yaml",
                "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n- name: redis\n  version: 1.x\n  repository: https://127.0.0.1:9/charts\n",
            )]),
            json!({}),
            "RenderChart",
            vec![
                "chart demo-0.1.0",
                "demo/Chart.yaml: dependencies[0] (redis)",
            ],
        ),
        (
            "template",
            inline(&[
                ("demo/Chart.yaml", chart_yaml),
                ("demo/templates/cm.yaml", "a: 1\nb: {{ .Values.x.y.z }}\n"),
            ]),
            json!({}),
            "RenderChart",
            vec![
                "chart demo-0.1.0",
                "demo/templates/cm.yaml:2:",
                "nil pointer",
            ],
        ),
        (
            "schema",
            inline(&[
                ("demo/Chart.yaml", chart_yaml),
                ("demo/values.schema.json", SCHEMA),
            ]),
            json!({"greeting": 5}),
            "RenderChart",
            vec![
                "chart demo-0.1.0",
                "demo/values.schema.json: at '/greeting': got number, want string",
            ],
        ),
    ];
    for (name, chart, values, _, _) in &cases {
        bed.item(name, chart.clone(), values.clone()).await;
    }
    for (name, _, _, reason, wanted) in &cases {
        let message = bed.failed(name, "job-1", reason).await;
        let message = one_line(&message);
        for part in wanted {
            assert!(message.contains(part), "{name}: {part:?} in {message}");
        }
    }
    bed.stop().await;
}

#[tokio::test]
async fn an_unreachable_repository_is_retried_with_backoff_until_the_timeout_then_fails() {
    let bed = bed("unreachable", true, Vec::new()).await;
    // A port that accepts connections and closes them at once: every attempt is recorded.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", listener.local_addr().unwrap());
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let recorded = attempts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            recorded
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Instant::now());
            drop(stream);
        }
    });
    let config = provider_config("web", repo_source(&dead, "0.1.0"), json!({}));
    bed.env
        .item_with_timeout("web", HELM, Some("cluster"), config, "5s")
        .await;
    let message = bed.failed("web", "job-1", "ProgressingTimeout").await;
    assert!(
        one_line(&message).contains("within its timeout of 5s")
            && message.contains(&format!("chart demo 0.1.0 of repository {dead}"))
            && message.contains("cannot be reached"),
        "{message}"
    );
    // Retried, and each retry waited at least its backoff (50 ms doubling up to 500 ms in the
    // test configuration) — load can only stretch the gaps, and a hot loop would shrink them.
    let attempts = attempts.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(attempts.len() >= 2, "{} attempts", attempts.len());
    let mut backoff = Duration::from_millis(50);
    for (i, pair) in attempts.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= backoff,
            "retry {} came {gap:?} after the attempt before it, within its backoff {backoff:?}",
            i + 1
        );
        backoff = (backoff * 2).min(Duration::from_millis(500));
    }

    let repo = repository(RepoOptions::default());
    bed.fix("web", repo_source(repo.url(), "0.1.0"), json!({}), "job-2")
        .await;
    bed.stop().await;
}

#[tokio::test]
async fn a_target_forbidding_release_records_fails_at_once_naming_verb_and_resource() {
    let bed = bed("forbidden", false, Vec::new()).await;
    let raw = base64::engine::general_purpose::STANDARD.encode(demo_chart("0.1.0", false));
    bed.item("web", json!({"archive": {"raw": raw}}), json!({}))
        .await;
    let message = bed.failed("web", "job-1", "Forbidden").await;
    assert!(
        message.contains("refuses to list secrets in namespace apps")
            && message.contains("helm release web"),
        "{message}"
    );
    assert!(!message.contains(&bed.target_token), "{message}");
    assert!(
        !message.contains("deployer\""),
        "names no identity: {message}"
    );

    // Granting the verb and starting a new job succeeds.
    grant(
        bed.env.target_cluster(),
        "deployer-records",
        "deployer",
        json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}]),
    )
    .await;
    bed.env.trigger("web", "job-2").await;
    bed.env.succeeded("web", "job-2").await;
    bed.stop().await;
}

/// An htpasswd line for `user`, made with the chart engine's own `htpasswd` (bcrypt).
fn htpasswd_line(user: &str, password: &str) -> String {
    let mut engine =
        landscaper_chart::engine::Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("h", &format!("{{{{ htpasswd {user:?} {password:?} }}}}"))
        .expect("template");
    engine
        .render("h", &landscaper_chart::engine::value::Value::Nil)
        .expect("htpasswd")
}

/// The deployer's `oci` settings with upstream's meaning: `allowPlainHttp` reaches a registry
/// that only speaks plain HTTP (no registry list, no environment variable), and `configFiles`
/// give the registry login the item's Context does not have; a missing file fails the item
/// naming it.
#[tokio::test]
async fn oci_settings_reach_a_plain_http_registry_with_config_file_credentials() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    assert!(
        std::env::var_os(landscaper_helm_deployer::source::PLAIN_HTTP_REGISTRIES_ENV).is_none()
    );
    let registry =
        Registry::start_with_htpasswd(&binary, &format!("{}\n", htpasswd_line("alice", "s3cret")))
            .expect("registry starts");
    let reference = push_demo_chart(&registry, Some(("alice", "s3cret"))).await;
    let dir = tempfile::tempdir().unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
    let docker_config = dir.path().join("config.json");
    std::fs::write(
        &docker_config,
        json!({"auths": {registry.address(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let oci: landscaper_api::config::OciConfiguration = serde_json::from_value(json!({
        "allowPlainHttp": true,
        "configFiles": [dir.path().join("missing.json"), docker_config],
    }))
    .unwrap();
    let bed = bed_with(
        "oci-settings",
        true,
        SourceSettings::default().with_oci(&oci),
    )
    .await;
    let chart = json!({"ref": format!("{reference}:0.2.0")});
    bed.item("oci", chart.clone(), json!({})).await;
    let message = bed.failed("oci", "job-1", "RegistryConfigUnreadable").await;
    assert!(message.contains("missing.json: no such file"), "{message}");

    std::fs::write(dir.path().join("missing.json"), "{}").unwrap();
    bed.fix("oci", chart, json!({"greeting": "oci"}), "job-2")
        .await;
    bed.assert_deployed_as_template(
        "oci",
        "job-2",
        &demo_chart("0.2.0", false),
        json!({"greeting": "oci"}),
    )
    .await;
    bed.stop().await;
}

/// Pushes the demo chart 0.2.0 to `registry` (plain HTTP, logging in with `credentials`
/// when given); returns its reference.
async fn push_demo_chart(registry: &Registry, credentials: Option<(&str, &str)>) -> String {
    let reference = format!("{}/charts/demo", registry.address());
    landscaper_chart::fetch::push(
        &reference,
        "0.2.0",
        demo_chart("0.2.0", false),
        br#"{"apiVersion":"v2","name":"demo","version":"0.2.0"}"#.to_vec(),
        &landscaper_chart::fetch::FetchOptions {
            plain_http: true,
            username: credentials.map(|(user, _)| user.to_string()),
            password: credentials.map(|(_, password)| password.to_string()),
            ..Default::default()
        },
    )
    .await
    .expect("chart pushed");
    reference
}

/// A component whose resource `chart` is the Helm chart pushed to `reference:0.2.0`.
fn chart_component(reference: &str) -> Value {
    json!({"meta": {"schemaVersion": "v2"}, "component": {
        "name": "example.test/demo", "version": "1.0.0", "provider": "internal",
        "repositoryContexts": [], "sources": [], "componentReferences": [],
        "resources": [{"name": "chart", "version": "0.2.0", "type": "helmChart", "relation": "external",
            "access": {"type": "ociRegistry", "imageReference": format!("{reference}:0.2.0")}}]
    }})
}

#[tokio::test]
async fn charts_from_component_resources_deploy_inline_and_from_a_repository() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let registry = Registry::start(&binary).expect("registry");
    let bed = bed("from-resource", true, vec![registry.address().to_string()]).await;
    let reference = push_demo_chart(&registry, None).await;
    let component = chart_component(&reference);
    let base_url = format!("{}/components", registry.address());
    landscaper_blueprint::RegistryAccess::new(landscaper_blueprint::RegistryOptions {
        plain_http: vec![registry.address().to_string()],
        ..Default::default()
    })
    .push_component(
        &base_url,
        &landscaper_blueprint::Descriptor::from_json(component.clone()).unwrap(),
        Vec::new(),
    )
    .await
    .expect("component pushed");
    bed.item(
        "inline-cd",
        json!({"fromResource": {"inline": component, "resourceName": "chart"}}),
        json!({"greeting": "inline"}),
    )
    .await;
    bed.item(
        "ref-cd",
        json!({"fromResource": {"ref": {
            "repositoryContext": {"type": "ociRegistry", "baseUrl": base_url},
            "componentName": "example.test/demo", "version": "1.0.0"
        }, "resourceName": "chart"}}),
        json!({"greeting": "ref"}),
    )
    .await;
    bed.item(
        "no-such-resource",
        json!({"fromResource": {"inline": component, "resourceName": "nope"}}),
        json!({}),
    )
    .await;
    bed.assert_deployed_as_template(
        "inline-cd",
        "job-1",
        &demo_chart("0.2.0", false),
        json!({"greeting": "inline"}),
    )
    .await;
    bed.assert_deployed_as_template(
        "ref-cd",
        "job-1",
        &demo_chart("0.2.0", false),
        json!({"greeting": "ref"}),
    )
    .await;
    let message = bed
        .failed("no-such-resource", "job-1", "InvalidChartSource")
        .await;
    assert!(
        message.contains(
            "spec.config.chart.fromResource.resourceName: component example.test/demo:1.0.0 has no resource \"nope\""
        ),
        "{message}"
    );
    bed.stop().await;
}

#[tokio::test]
async fn charts_from_resource_keys_are_looked_up_in_the_repository_of_the_items_context() {
    let bed = bed("resource-key", true, Vec::new()).await;
    // A `type: local` repository holding the component, its chart a blob beside it.
    let repository = tempfile::tempdir().unwrap();
    std::fs::create_dir(repository.path().join("blobs")).unwrap();
    std::fs::write(
        repository.path().join("blobs/demo.tgz"),
        demo_chart("0.3.0", false),
    )
    .unwrap();
    std::fs::write(
        repository.path().join("demo.yaml"),
        "meta: {schemaVersion: v2}\ncomponent: {name: example.test/demo, version: 1.0.0, provider: internal, repositoryContexts: [], sources: [], componentReferences: [], resources: [{name: chart, version: 0.3.0, type: helmChart, relation: local, access: {type: localFilesystemBlob, filename: demo.tgz, mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip}}]}\n",
    )
    .unwrap();
    context(
        &bed.env,
        "default",
        json!({"repositoryContext": {"type": "local", "filePath": repository.path().to_string_lossy()}}),
    )
    .await;
    let key = |resource: &str| {
        landscaper_blueprint::GlobalResourceIdentity {
            name: "example.test/demo".into(),
            version: "1.0.0".into(),
            resource: serde_json::Map::from_iter([("name".to_string(), json!(resource))]),
        }
        .key()
        .unwrap()
    };
    bed.item(
        "by-key",
        json!({"resourceRef": key("chart")}),
        json!({"greeting": "key"}),
    )
    .await;
    bed.item(
        "no-such-resource",
        json!({"resourceRef": key("nope")}),
        json!({}),
    )
    .await;
    bed.assert_deployed_as_template(
        "by-key",
        "job-1",
        &demo_chart("0.3.0", false),
        json!({"greeting": "key"}),
    )
    .await;
    let message = bed
        .failed("no-such-resource", "job-1", "ChartResourceUnavailable")
        .await;
    assert!(
        message.contains(
            "spec.config.chart.resourceRef: component: component example.test/demo:1.0.0 has no resource {\"name\":\"nope\"}"
        ),
        "{message}"
    );
    bed.stop().await;
}
