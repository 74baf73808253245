//! Helm's `.Files` and `.Capabilities` as templates use them.

use std::rc::Rc;

use landscaper_chart::engine::Engine;
use landscaper_chart::objects::{ApiVersions, Capabilities, Files, HelmVersion, KubeVersion};
use landscaper_chart::value::{Map, Value};

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
        helm_version: Rc::new(HelmVersion {
            version: "v4.1.4".into(),
            git_commit: "05fa379".into(),
            git_tree_state: "clean".into(),
            go_version: "go1.25.9".into(),
        }),
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
    ];
    let dot = context();
    for (template, want) in rows {
        let mut engine = Engine::new();
        let rendered = engine
            .add_template("t", template)
            .and_then(|()| engine.render("t", &dot))
            .unwrap_or_else(|e| format!("ERROR: {e}"));
        assert_eq!(rendered, want, "template {template:?}");
    }
}
