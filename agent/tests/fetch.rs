//! `template` with remote charts, against real servers on loopback: a Helm repository
//! (index.yaml plus archives, behind basic auth) and Debian's `docker-registry` (a real OCI
//! registry) for `oci://` charts, both from `testbed`. The registry tests are skipped with a
//! printed reason when the binary is missing, except under `CI=true`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;

use base64::Engine as _;
use landscaper_chart::fetch::FetchOptions;
use testbed::fixtures::chart_repository::{self, ChartRepository, RepoChart, RepoOptions};
use testbed::fixtures::registry::Registry;

/// A packaged chart `demo` at `version` whose output shows release, version and values.
fn demo_chart(version: &str) -> Vec<u8> {
    let chart_yaml = format!("apiVersion: v2\nname: demo\nversion: {version}\n");
    chart_repository::package(&[
        ("demo/Chart.yaml", chart_yaml.as_str()),
        ("demo/values.yaml", "greeting: hello\n"),
        (
            "demo/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  version: {{ .Chart.Version | quote }}\n  greeting: {{ .Values.greeting }}\n",
        ),
    ])
}

/// Writes the demo chart's archive into `dir` (a test's scratch folder, removed with it).
fn archive_path(version: &str, dir: &Path) -> PathBuf {
    let path = dir.join(format!("demo-{version}.tgz"));
    std::fs::write(&path, demo_chart(version)).expect("write archive");
    path
}

fn template(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_landscaper-agent"))
        .arg("template")
        .args(args)
        .env("HOME", home)
        .env_remove("HELM_CACHE_HOME")
        .env_remove("XDG_CACHE_HOME")
        .output()
        .expect("run landscaper-agent")
}

/// Fails the test with the command's stderr unless it succeeded.
/// The stdout of a command that succeeded; a failure shows its stderr.
fn succeeded_stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stderr of a command that exited with 1.
fn failed_stderr(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("landscaper-fetch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

/// What rendering the archive from disk prints: the reference for remote fetches.
fn local_render(version: &str, home: &Path) -> String {
    let path = archive_path(version, home);
    let out = template(&["rel", path.to_str().unwrap_or("")], home);
    succeeded_stdout(&out)
}

/// A repository with demo 0.1.0 and 0.2.0 that demands alice's basic auth; its index lists
/// the archives below `archive_base` (another host) when given.
fn serve_repository(archive_base: Option<&str>) -> ChartRepository {
    let charts = ["0.1.0", "0.2.0"]
        .map(|version| RepoChart {
            name: "demo".into(),
            version: version.into(),
            archive: demo_chart(version),
        })
        .to_vec();
    ChartRepository::serve(
        charts,
        RepoOptions {
            basic_auth: Some(("alice".into(), "s3cret".into())),
            archive_base: archive_base.map(str::to_string),
            ..RepoOptions::default()
        },
    )
    .expect("repository serves")
}

#[test]
fn repository_charts_resolve_ranges_with_basic_auth() {
    let home = scratch("repo");
    let repo = serve_repository(None);
    let repo = repo.url();
    let auth = ["--username", "alice", "--password", "s3cret"];

    let mut args = vec!["rel", "demo", "--repo", repo, "--version", "~0.1"];
    args.extend(auth);
    let out = template(&args, &home);
    assert_eq!(succeeded_stdout(&out), local_render("0.1.0", &home));

    let mut latest = vec!["rel", "demo", "--repo", repo];
    latest.extend(auth);
    let out = template(&latest, &home);
    assert_eq!(succeeded_stdout(&out), local_render("0.2.0", &home));

    let denied = template(&["rel", "demo", "--repo", repo], &home);
    let err = String::from_utf8_lossy(&denied.stderr);
    assert_eq!(denied.status.code(), Some(1));
    assert!(
        err.contains("401 Unauthorized") && err.contains("/index.yaml"),
        "{err}"
    );

    let mut missing = vec!["rel", "demo", "--repo", repo, "--version", ">=9"];
    missing.extend(auth);
    let err = String::from_utf8_lossy(&template(&missing, &home).stderr).into_owned();
    assert!(
        err.contains("chart \"demo\" version \">=9\" not found"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(home);
}

#[test]
fn unreachable_repository_is_a_one_line_error() {
    let home = scratch("unreachable");
    // Bind and drop to get a loopback port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port");
    let repo = format!("http://127.0.0.1:{port}");
    let out = template(&["demo", "--repo", repo.as_str()], &home);
    let err = failed_stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "Error: looks like \"{repo}\" is not a valid chart repository or cannot be reached"
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(home);
}

/// `helm repo add` and `helm repo update` as files: repositories.yaml naming the repository
/// `myrepo` (with its credentials) and its cached index, in the default places below `home`.
fn add_named_repository(home: &Path, repo: &ChartRepository) {
    let url = repo.url();
    let config = home.join(".config/helm");
    std::fs::create_dir_all(&config).expect("config folder");
    std::fs::write(
        config.join("repositories.yaml"),
        format!(
            "apiVersion: \"\"\nrepositories:\n- name: myrepo\n  url: {url}\n  username: alice\n  password: s3cret\n"
        ),
    )
    .expect("repositories.yaml");
    let cache = home.join(".cache/helm/repository");
    std::fs::create_dir_all(&cache).expect("cache folder");
    std::fs::write(cache.join("myrepo-index.yaml"), repo.index_yaml()).expect("cached index");
}

#[test]
fn named_repositories_come_from_repositories_yaml_and_the_cached_index() {
    let home = scratch("named");
    let repo = serve_repository(None);
    add_named_repository(&home, &repo);

    let out = template(&["rel", "myrepo/demo"], &home);
    assert_eq!(succeeded_stdout(&out), local_render("0.2.0", &home));
    if let Some(helm) = std::env::var_os("HELM") {
        // helm itself, with the same files (the same HOME), prints the same.
        let helm_out = Command::new(helm)
            .args(["template", "rel", "myrepo/demo"])
            .env("HOME", &home)
            .output()
            .expect("run helm");
        assert_eq!(
            String::from_utf8_lossy(&helm_out.stdout),
            String::from_utf8_lossy(&out.stdout),
            "helm: {}",
            String::from_utf8_lossy(&helm_out.stderr)
        );
    }

    // Explicit paths instead of the defaults.
    let elsewhere = scratch("named-elsewhere");
    let config = home.join(".config/helm/repositories.yaml");
    let cache = home.join(".cache/helm/repository");
    let args = [
        "rel",
        "myrepo/demo",
        "--version",
        "~0.1",
        "--repository-config",
        config.to_str().unwrap_or(""),
        "--repository-cache",
        cache.to_str().unwrap_or(""),
    ];
    let out = template(&args, &elsewhere);
    assert_eq!(succeeded_stdout(&out), local_render("0.1.0", &home));

    let out = template(&["rel", "other/demo"], &home);
    assert_eq!(failed_stderr(&out), "Error: repo other not found\n");

    std::fs::remove_file(cache.join("myrepo-index.yaml")).expect("remove the cached index");
    let out = template(&["rel", "myrepo/demo"], &home);
    assert_eq!(
        failed_stderr(&out),
        format!(
            "Error: no cached repo found. (try 'helm repo update'): open {}: no such file or directory\n",
            cache.join("myrepo-index.yaml").display()
        )
    );
    let _ = std::fs::remove_dir_all(home);
    let _ = std::fs::remove_dir_all(elsewhere);
}

#[test]
fn credentials_reach_other_hosts_only_with_pass_credentials() {
    let home = scratch("pass-credentials");
    let archives = serve_repository(None);
    let repo = serve_repository(Some(archives.url()));
    let args = [
        "rel",
        "demo",
        "--repo",
        repo.url(),
        "--version",
        "0.1.0",
        "--username",
        "alice",
        "--password",
        "s3cret",
    ];
    let out = template(&args, &home);
    let err = failed_stderr(&out);
    assert!(err.contains("401 Unauthorized"), "{err}");

    let mut passing = args.to_vec();
    passing.push("--pass-credentials");
    let out = template(&passing, &home);
    assert_eq!(succeeded_stdout(&out), local_render("0.1.0", &home));
    let _ = std::fs::remove_dir_all(home);
}

/// Pushes the demo chart 0.1.0 over plain HTTP to `registry` with `options` (a login);
/// returns its reference.
fn push_demo_chart(registry: &Registry, options: FetchOptions) -> String {
    let reference = format!("{}/charts/demo", registry.address());
    let options = FetchOptions {
        plain_http: true,
        ..options
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime
        .block_on(landscaper_chart::fetch::push(
            &reference,
            "0.1.0",
            demo_chart("0.1.0"),
            br#"{"apiVersion":"v1","name":"demo","version":"0.1.0"}"#.to_vec(),
            &options,
        ))
        .expect("push the chart");
    reference
}

#[test]
fn oci_charts_pull_from_a_real_registry() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let home = scratch("oci");
    let registry = Registry::start(&binary).expect("docker-registry starts");
    let reference = push_demo_chart(&registry, FetchOptions::default());

    let oci = format!("oci://{reference}");
    for version in ["0.1.0", "~0.1", ""] {
        let out = template(
            &["rel", oci.as_str(), "--version", version, "--plain-http"],
            &home,
        );
        assert!(
            out.status.success(),
            "{version}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            local_render("0.1.0", &home)
        );
    }
    let cached: Vec<_> = std::fs::read_dir(home.join(".cache/landscaper/charts"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(cached.len(), 1, "one archive cached by digest: {cached:?}");

    let out = template(
        &["rel", oci.as_str(), "--version", "9.9.9", "--plain-http"],
        &home,
    );
    let err = failed_stderr(&out);
    assert!(
        err.starts_with(&format!("Error: failed to fetch {oci}:9.9.9")),
        "{err}"
    );
    drop(registry);
    let _ = std::fs::remove_dir_all(home);
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

#[test]
fn oci_credentials_come_from_the_registry_config() {
    let Some(binary) = Registry::binary_or_skip() else {
        return;
    };
    let home = scratch("oci-auth");
    let line = htpasswd_line("alice", "s3cret");
    let registry = Registry::start_with_htpasswd(&binary, &format!("{line}\n"))
        .expect("docker-registry starts");
    let login = FetchOptions {
        username: Some("alice".to_string()),
        password: Some("s3cret".to_string()),
        ..Default::default()
    };
    let reference = push_demo_chart(&registry, login);
    let oci = format!("oci://{reference}");
    let pull = ["rel", oci.as_str(), "--version", "0.1.0", "--plain-http"];

    let out = template(&pull, &home);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "anonymous pull must fail: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // `docker login` / `helm registry login` write this file; the default place is used.
    let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3cret");
    let config_dir = home.join(".config/helm/registry");
    std::fs::create_dir_all(&config_dir).expect("registry config folder");
    let config = format!(
        "{{\"auths\": {{\"{}\": {{\"auth\": \"{auth}\"}}}}}}",
        registry.address()
    );
    std::fs::write(config_dir.join("config.json"), &config).expect("config.json");
    let out = template(&pull, &home);
    assert_eq!(succeeded_stdout(&out), local_render("0.1.0", &home));

    // The same file given explicitly, from elsewhere.
    let moved = home.join("elsewhere.json");
    std::fs::rename(config_dir.join("config.json"), &moved).expect("move config.json");
    let mut explicit = pull.to_vec();
    explicit.extend(["--registry-config", moved.to_str().unwrap_or("")]);
    succeeded_stdout(&template(&explicit, &home));
    drop(registry);
    let _ = std::fs::remove_dir_all(home);
}

/// A one-thread HTTP server without authentication that serves `(path, body)` pairs (404
/// elsewhere).
fn serve_files(files: &'static [(&'static str, &'static str)]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                    break;
                }
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("/");
            let (status, body) = match files.iter().find(|(p, _)| *p == path) {
                Some((_, body)) => ("200 OK", *body),
                None => ("404 Not Found", ""),
            };
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    base
}

#[test]
fn values_files_and_set_files_can_be_urls() {
    let home = scratch("values-url");
    let base = serve_files(&[
        ("/values.yaml", "greeting: from-a-url\n"),
        ("/greeting.txt", "from-a-file-url"),
    ]);
    let archive = archive_path("0.1.0", &home);
    let chart = archive.to_str().unwrap_or("");
    let url = format!("{base}/values.yaml");

    let out = template(&["rel", chart, "-f", &url], &home);
    let stdout = succeeded_stdout(&out);
    assert!(stdout.contains("greeting: from-a-url\n"), "{stdout}");
    let set_file = format!("greeting={base}/greeting.txt");
    let out = template(&["rel", chart, "--set-file", &set_file], &home);
    let stdout = succeeded_stdout(&out);
    assert!(stdout.contains("greeting: from-a-file-url\n"), "{stdout}");

    let missing = format!("{base}/missing.yaml");
    let out = template(&["rel", chart, "-f", &missing], &home);
    assert_eq!(
        failed_stderr(&out),
        format!("Error: failed to fetch {missing} : 404 Not Found\n")
    );
    if let Some(helm) = std::env::var_os("HELM") {
        // helm reads the same URL the same way.
        let helm_out = Command::new(helm)
            .args(["template", "rel", chart, "-f", &url])
            .env("HOME", &home)
            .output()
            .expect("run helm");
        let ours = template(&["rel", chart, "-f", &url], &home);
        assert_eq!(
            String::from_utf8_lossy(&helm_out.stdout),
            String::from_utf8_lossy(&ours.stdout)
        );
    }
    let _ = std::fs::remove_dir_all(home);
}
