//! `landscaper blueprint render|validate` on upstream's manifest-deployer blueprint and on
//! broken blueprints: what a user sees on the command line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn landscaper(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_landscaper"))
        .args(args)
        .env("RUST_LOG", "off")
        .output()
        .expect("landscaper runs")
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/blueprint/tests/data")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn manifest_deployer_blueprint() -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/conformance/landscaper/examples/ls-manifest-deployer-bp__blueprint.yaml",
    );
    if path.exists() {
        return Some(path.to_string_lossy().into_owned());
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the conformance data is required in CI"
    );
    None
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The stderr of a command that exited with 1.
fn failed_stderr(out: &Output) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn render_prints_the_helm_deploy_item_with_the_chart_of_the_component() {
    let Some(blueprint) = manifest_deployer_blueprint() else {
        return;
    };
    let out = landscaper(&[
        "blueprint",
        "render",
        &blueprint,
        "-f",
        &data("manifest-deployer-imports.yaml"),
        "--component-descriptor",
        &data("manifest-deployer-component.yaml"),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    assert!(stdout.starts_with("--- # deployItem deploy\n"), "{stdout}");
    for line in [
        "type: landscaper.gardener.cloud/helm",
        "ref: registry.example.test/landscaper/charts/manifest-deployer:v0.120.0",
        "repository: registry.example.test/landscaper/images/manifest-deployer-controller",
        "tag: v0.120.0",
        "identity: manifest-default",
        "import: cluster",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
}

#[test]
fn imports_that_do_not_fit_the_blueprint_are_reported_by_name() {
    let Some(blueprint) = manifest_deployer_blueprint() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let imports = dir.path().join("imports.yaml");
    std::fs::write(&imports, "imports:\n  releaseName: 7\n").unwrap();
    let out = landscaper(&[
        "blueprint",
        "validate",
        &blueprint,
        "-f",
        &imports.to_string_lossy(),
    ]);
    let stdout = text(&out.stdout);
    assert!(!out.status.success());
    assert!(
        stdout.contains("the import \"cluster\" is required but not satisfied"),
        "{stdout}"
    );
    assert!(
        stdout.contains("import imports[2] (releaseName) at /: 7 is not of type \"string\""),
        "{stdout}"
    );
}

/// `landscaper blueprint render` of the blueprint in `dir` with the imports file `imports`.
fn render_with_imports(dir: &Path, imports: &Path) -> Output {
    landscaper(&[
        "blueprint",
        "render",
        &dir.to_string_lossy(),
        "-f",
        &imports.to_string_lossy(),
    ])
}

/// `landscaper blueprint render` of the blueprint in `dir` for the component descriptor
/// `descriptor`, resolving references in the repository context `context`.
fn render_in_context(dir: &Path, descriptor: &Path, context: &Path) -> Output {
    landscaper(&[
        "blueprint",
        "render",
        &dir.to_string_lossy(),
        "--component-descriptor",
        &descriptor.to_string_lossy(),
        "--repository-context",
        &context.to_string_lossy(),
    ])
}

fn write_blueprint(dir: &Path, template: &str) {
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  file: /templates/deploy.yaml\n";
    std::fs::write(dir.join("blueprint.yaml"), blueprint).unwrap();
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(dir.join("templates/deploy.yaml"), template).unwrap();
}

/// `landscaper blueprint render` of a blueprint whose one GoTemplate execution is `template`.
fn render_template(template: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    write_blueprint(dir.path(), template);
    landscaper(&["blueprint", "render", &dir.path().to_string_lossy()])
}

#[test]
fn a_template_error_names_the_execution_file_and_line() {
    let out = render_template(
        "deployItems:\n- name: a\n  type: t\n  config:\n    x: {{ .imports.missing.field }}\n",
    );
    let stderr = failed_stderr(&out);
    assert!(
        stderr.contains(
            "deploy execution \"main\": file /templates/deploy.yaml: template: execution:5:"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("5:        x: {{ .imports.missing.field }}\n"),
        "{stderr}"
    );
}

#[test]
fn a_spiff_execution_renders_and_its_errors_name_the_execution() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("blueprint.yaml"),
        "deployExecutions:\n- name: spiffy\n  type: Spiff\n  template:\n    deployItems:\n    - name: (( \"item-\" imports.suffix ))\n      type: landscaper.gardener.cloud/mock\n      config:\n        sum: (( 1 + 2 ))\n",
    )
    .unwrap();
    let imports = dir.path().join("imports.yaml");
    std::fs::write(&imports, "imports:\n  suffix: a\n").unwrap();
    let out = render_with_imports(dir.path(), &imports);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("name: item-a\n"), "{stdout}");
    assert!(stdout.contains("sum: 3\n"), "{stdout}");
    let out = landscaper(&["blueprint", "render", &dir.path().to_string_lossy()]);
    let stderr = failed_stderr(&out);
    assert!(stderr.contains("deploy execution \"spiffy\": "), "{stderr}");
    assert!(stderr.contains("imports.suffix"), "{stderr}");
}

#[test]
fn render_quotes_strings_yaml_11_reads_otherwise() {
    let out = render_template(
        "deployItems:\n- name: a\n  type: t\n  config:\n    operator: \"=\"\n    merge: \"<<\"\n    flag: \"on\"\n",
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", text(&out.stderr));
    for line in ["operator: \"=\"", "merge: \"<<\"", "flag: \"on\""] {
        assert!(stdout.contains(line), "{line} missing from\n{stdout}");
    }
}

#[test]
fn references_resolve_in_the_repository_context_for_get_component() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/conformance/landscaper/templates/testdata/executions-template/shared_data/localocmrepository",
    );
    if !repo.exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the conformance data is required in CI"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write_blueprint(
        dir.path(),
        "deployItems:\n- name: a\n  type: t\n  config:\n    ref: {{ (getComponent .cd \"name\" \"ref1\").component.name }}\n    all:\n    {{- range .components.components }}\n    - {{ .component.name }}\n    {{- end }}\n",
    );
    let out = render_in_context(
        dir.path(),
        &repo.join("component-descriptor-v2.yaml"),
        &repo,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("  ref: example.com/landscaper-component-v2-ref1\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "all:\n  - example.com/landscaper-component-v2\n  - example.com/landscaper-component-v2-ref1\n  - example.com/landscaper-component-v2-ref2\n"
        ),
        "{stdout}"
    );
}

/// Writes a transport archive (CTF) folder holding `example.test/leaf` 1.0.0 with the local
/// blob `config` (YAML text). The descriptor layer is plain YAML, which OCM also reads; the
/// blobs are named by fixed digests, as a CTF is not checked against them.
fn write_ctf(root: &Path) {
    let blob = |n: u8| format!("sha256:{}", format!("{n:02x}").repeat(32));
    std::fs::create_dir_all(root.join("blobs")).unwrap();
    let put = |digest: &str, data: &str| {
        std::fs::write(root.join("blobs").join(digest.replace(':', ".")), data).unwrap();
    };
    let descriptor = format!(
        "meta: {{schemaVersion: v2}}\ncomponent: {{name: example.test/leaf, version: 1.0.0, provider: internal, repositoryContexts: [], sources: [], componentReferences: [], resources: [{{name: config, version: 1.0.0, type: blob, relation: local, access: {{type: localBlob, localReference: '{}', mediaType: application/yaml}}}}]}}\n",
        blob(3)
    );
    put(&blob(1), &descriptor);
    put(&blob(3), "replicas: 3\n");
    put(
        &blob(2),
        &format!(
            r#"{{"schemaVersion":2,"config":{{"mediaType":"application/vnd.ocm.software.component.config.v1+json","digest":"{}","size":2}},"layers":[{{"mediaType":"application/vnd.ocm.software.component-descriptor.v2+yaml","digest":"{}"}}]}}"#,
            blob(4),
            blob(1)
        ),
    );
    put(&blob(4), "{}");
    std::fs::write(
        root.join("artifact-index.json"),
        format!(
            r#"{{"schemaVersion":1,"artifacts":[{{"repository":"component-descriptors/example.test/leaf","tag":"1.0.0","digest":"{}"}}]}}"#,
            blob(2)
        ),
    )
    .unwrap();
}

#[test]
fn resource_keys_and_contents_resolve_in_a_transport_archive() {
    let dir = tempfile::tempdir().unwrap();
    let ctf = dir.path().join("ctf");
    write_ctf(&ctf);
    let root = dir.path().join("root.yaml");
    std::fs::write(
        &root,
        "meta: {schemaVersion: v2}\ncomponent: {name: example.test/root, version: 1.0.0, provider: internal, repositoryContexts: [], sources: [], resources: [], componentReferences: [{name: leaf, componentName: example.test/leaf, version: 1.0.0}]}\n",
    )
    .unwrap();
    let blueprint = dir.path().join("bp");
    std::fs::create_dir(&blueprint).unwrap();
    write_blueprint(
        &blueprint,
        "deployItems:\n- name: a\n  type: t\n  config:\n    key: {{ getResourceKey \"cd://componentReferences/leaf/resources/config\" }}\n    content:\n{{ getResourceContent \"cd://componentReferences/leaf/resources/config\" | indent 6 }}\n",
    );
    let out = render_in_context(&blueprint, &root, &ctf);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // base64 of "component:\n  name: example.test/leaf\n  version: 1.0.0\nresource:\n  name: config\n"
    assert!(
        stdout.contains(
            "key: Y29tcG9uZW50OgogIG5hbWU6IGV4YW1wbGUudGVzdC9sZWFmCiAgdmVyc2lvbjogMS4wLjAKcmVzb3VyY2U6CiAgbmFtZTogY29uZmlnCg==\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("  content:\n    replicas: 3\n"), "{stdout}");

    let missing = render_in_context(&blueprint, &root, &dir.path().join("nothing.tgz"));
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).contains("nothing.tgz"),
        "{}",
        text(&missing.stderr)
    );
}

/// A blueprint importing the Target `cluster`, whose deploy execution is `template`.
fn write_target_blueprint(dir: &Path, template: &str) {
    write_blueprint(dir, template);
    let blueprint = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n- name: cluster\n  type: target\n  targetType: landscaper.gardener.cloud/kubernetes-cluster\ndeployExecutions:\n- name: main\n  type: GoTemplate\n  file: /templates/deploy.yaml\n";
    std::fs::write(dir.join("blueprint.yaml"), blueprint).unwrap();
}

/// Without a cluster, `getOidcKubeconfig` reads an inline Target; a ServiceAccount kubeconfig
/// needs a cluster, and the error says which function, Target and request.
#[test]
fn kubeconfig_functions_on_the_command_line_need_no_cluster_or_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster: {server: 'https://api.example'}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user: {token: t}\n";
    let target = serde_json::json!({
        "imports": {"cluster": {
            "metadata": {"name": "cluster", "namespace": "default"},
            "spec": {"type": "landscaper.gardener.cloud/kubernetes-cluster", "config": {"kubeconfig": kubeconfig}},
        }},
    });
    let imports = dir.path().join("imports.yaml");
    std::fs::write(&imports, target.to_string()).unwrap();
    write_target_blueprint(
        dir.path(),
        "deployItems:\n- name: a\n  type: t\n  config:\n    oidc: {{ getOidcKubeconfig \"https://issuer\" \"client\" .imports.cluster | b64dec | quote }}\n",
    );
    let out = render_with_imports(dir.path(), &imports);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("--oidc-issuer-url=https://issuer"),
        "{stdout}"
    );

    write_target_blueprint(
        dir.path(),
        "deployItems:\n- name: a\n  type: t\n  config:\n    k: {{ getServiceAccountKubeconfig \"sa\" \"ns\" 600 .imports.cluster }}\n",
    );
    let out = render_with_imports(dir.path(), &imports);
    let stderr = failed_stderr(&out);
    assert!(
        stderr.contains(
            "templating function getServiceAccountKubeconfig: Target default/cluster: token request failed: a TokenRequest for ServiceAccount ns/sa needs a cluster, and none is reachable here"
        ),
        "{stderr}"
    );
}
