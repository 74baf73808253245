//! Helm's `.Files` and `.Capabilities` as templates use them.

use std::rc::Rc;

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::helm::objects::{ApiVersions, Capabilities, Files, HelmVersion, KubeVersion};

/// Each of `rows` (template, output) renders with Helm's functions and `dot` as its output
/// (an error as `ERROR: …`).
fn assert_renders(rows: &[(&str, &str)], dot: &Value) {
    for (template, want) in rows {
        let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
        let rendered = engine
            .add_template("t", template)
            .and_then(|()| engine.render("t", dot))
            .unwrap_or_else(|e| format!("ERROR: {e}"));
        assert_eq!(&rendered, want, "template {template:?}");
    }
}

fn context() -> Value {
    let files = Files::new([
        ("config/a.conf".to_string(), b"x=1\n".to_vec()),
        ("config/b.conf".to_string(), b"y=2\n".to_vec()),
        ("author".to_string(), b"Virgil".to_vec()),
    ]);
    let capabilities = Capabilities {
        kube_version: Rc::new(KubeVersion::parse("1.20.0").unwrap_or_else(|| KubeVersion {
            version: String::new(),
            major: String::new(),
            minor: String::new(),
        })),
        api_versions: Rc::new(ApiVersions(vec!["v1".into(), "apps/v1".into()])),
        helm_version: Rc::new(HelmVersion::helm_v4_1_4()),
    };
    let top = Map::new();
    top.insert("Files", Value::object(files));
    top.insert("Capabilities", Value::object(capabilities));
    Value::Map(top)
}

#[test]
fn templates_reach_files_and_capabilities() {
    let rows = [
        ("{{ .Files.Get \"author\" }}", "Virgil"),
        ("{{ .Files.author | printf \"%s\" }}", "Virgil"),
        (
            "{{ range $path, $data := .Files.Glob \"config/*\" }}{{ $path }}={{ $data | printf \"%s\" }}{{ end }}",
            "config/a.conf=x=1\nconfig/b.conf=y=2\n",
        ),
        (
            "{{ (.Files.Glob \"config/**\").AsConfig }}",
            "a.conf: |\n  x=1\nb.conf: |\n  y=2",
        ),
        (
            "{{ len .Files }} {{ range .Files.Lines \"config/a.conf\" }}[{{ . }}]{{ end }}",
            "3 [x=1]",
        ),
        (
            "{{ .Capabilities.KubeVersion }} {{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }} {{ .Capabilities.KubeVersion.GitVersion }}",
            "v1.20.0 1.20 v1.20.0",
        ),
        (
            "{{ .Capabilities.APIVersions.Has \"apps/v1\" }} {{ .Capabilities.APIVersions.Has \"batch/v9\" }}",
            "true false",
        ),
        (
            "{{ range .Capabilities.APIVersions }}{{ . }};{{ end }}",
            "v1;apps/v1;",
        ),
        ("{{ .Capabilities.HelmVersion.Version }}", "v4.1.4"),
        // What helm v4.1.4 prints for these (its --kube-version 1.20.0 and two API versions).
        ("{{ .Capabilities.HelmVersion.KubeClientVersion }}", "v1.35"),
        (
            "{{ .Capabilities.HelmVersion }}|{{ printf \"%+v\" .Capabilities.HelmVersion }}",
            "{v4.1.4 05fa37973dc9e42b76e1d2883494c87174b6074f clean go1.25.9 v1.35}|{Version:v4.1.4 GitCommit:05fa37973dc9e42b76e1d2883494c87174b6074f GitTreeState:clean GoVersion:go1.25.9 KubeClientVersion:v1.35}",
        ),
        (
            "{{ toJson .Capabilities }}",
            r#"{"KubeVersion":{"Version":"v1.20.0","Major":"1","Minor":"20"},"APIVersions":["v1","apps/v1"],"HelmVersion":{"version":"v4.1.4","git_commit":"05fa37973dc9e42b76e1d2883494c87174b6074f","git_tree_state":"clean","go_version":"go1.25.9","kube_client_version":"v1.35"}}"#,
        ),
        (
            "{{ .Capabilities }}|{{ printf \"%v\" .Capabilities }}",
            "{{v1.20.0 v1.20.0 1 20} [v1 apps/v1] {v4.1.4 05fa37973dc9e42b76e1d2883494c87174b6074f clean go1.25.9 v1.35}}|&{{v1.20.0 v1.20.0 1 20} [v1 apps/v1] {v4.1.4 05fa37973dc9e42b76e1d2883494c87174b6074f clean go1.25.9 v1.35}}",
        ),
        (
            "{{ .Capabilities.KubeVersion | quote }} {{ printf \"%+v\" .Capabilities.KubeVersion }}",
            "\"{v1.20.0 v1.20.0 1 20}\" {Version:v1.20.0 normalizedVersion:v1.20.0 Major:1 Minor:20}",
        ),
        (
            "{{ toYaml .Capabilities.HelmVersion }}",
            "git_commit: 05fa37973dc9e42b76e1d2883494c87174b6074f\ngit_tree_state: clean\ngo_version: go1.25.9\nkube_client_version: v1.35\nversion: v4.1.4",
        ),
        (
            "{{ toPrettyJson .Capabilities.KubeVersion }}",
            "{\n  \"Version\": \"v1.20.0\",\n  \"Major\": \"1\",\n  \"Minor\": \"20\"\n}",
        ),
        (
            "{{ kindOf .Capabilities }} {{ kindOf .Capabilities.KubeVersion }}",
            "ptr struct",
        ),
    ];
    let dot = context();
    assert_renders(&rows, &dot);
}

/// Go strings are bytes: a binary file read with `.Files.Get` reaches `b64enc`, the checksums,
/// `len` and `%x` unchanged (kube-prometheus-stack ships its CRDs as `crds.bz2` this way).
#[test]
fn binary_files_keep_their_bytes_through_string_functions() {
    let files = Files::new([(
        "crds.bz2".to_string(),
        b"BZh91AY&SY\xff\x00\x80\xfe\xc3".to_vec(),
    )]);
    let top = Map::new();
    top.insert("Files", Value::object(files));
    let dot = Value::Map(top);
    let base64 = "QlpoOTFBWSZTWf8AgP7D";
    let rows = [
        (r#"{{ .Files.Get "crds.bz2" | b64enc }}"#, base64),
        (
            r#"{{ .Files.Get "crds.bz2" | sha256sum }}"#,
            "e7a0896f213d7c1d0b08d34ee262590adf7cce245cd269446ba1c199e8018c0c",
        ),
        (r#"{{ len (.Files.Get "crds.bz2") }}"#, "15"),
        (
            r#"{{ printf "%x" (.Files.Get "crds.bz2") }}"#,
            "425a6839314159265359ff0080fec3",
        ),
        (r#"{{ .Files.Get "crds.bz2" | toString | b64enc }}"#, base64),
        (
            r#"{{ .Files.GetBytes "crds.bz2" | toString | b64enc }}"#,
            base64,
        ),
        (
            r#"{{ .Files.Get "crds.bz2" | b64enc | b64dec | b64enc }}"#,
            base64,
        ),
        (
            r#"{{ $f := .Files.Get "crds.bz2" }}{{ typeOf $f }} {{ eq $f (b64dec (b64enc $f)) }}"#,
            "string true",
        ),
        // A decoded byte that is not UTF-8 survives the round trip.
        (r#"{{ "ww==" | b64dec | b64enc }}"#, "ww=="),
        // Functions that read text see U+FFFD for a bad byte, as Go's rune decoding does.
        (r#"{{ "ww==" | b64dec | upper | b64enc }}"#, "77+9"),
    ];
    assert_renders(&rows, &dot);
}
