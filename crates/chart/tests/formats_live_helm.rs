//! Live differential test of the format layer against the reference helm binary ($HELM or
//! `helm` on PATH; CI installs helm v4.1.4). Pseudo-random values are written as a values
//! file; helm and this crate both read it and print every encoder's output for each value.
//! Without helm the test is skipped, except under CI=true where it fails. The generator
//! leaves out NEL, LS and PS (YAML 1.1 line breaks that go-yaml folds and our YAML 1.2 reader
//! keeps) and `<<` keys; the recorded fixtures cover those for the encoders.

#[path = "support/live.rs"]
mod live;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use landscaper_chart::formats::tree::{Data, Map};
use landscaper_chart::{formats::json, formats::toml, formats::yaml};
use live::Rng;

/// The values this test writes, drawn from the shared generator.
impl Rng {
    fn text(&mut self) -> String {
        const WORDS: &[&str] = &[
            "on",
            "yes",
            "No",
            "true",
            "null",
            "~",
            "1e3",
            "0x1F",
            "017",
            "08",
            "1:20",
            "2001-12-14",
            "-",
            "---",
            "<<",
            "+1",
            "1_0",
            ".5",
            "a: b",
            "#c",
            "é",
            "日本",
        ];
        const CHARS: &[&str] = &[
            "a", "b", "x", "0", "7", " ", "  ", ":", "-", "#", "'", "\"", "\\", "\t", "\n", "\n\n",
            "{", "}", "[", "]", ",", "&", "*", "!", "|", ">", "%", "@", "`", "?", "é", "日", "😀",
            "\u{a0}", "<", "&",
        ];
        if self.below(5) == 0 {
            return WORDS[self.below(WORDS.len())].to_owned();
        }
        let len = [0, 1, 2, 3, 5, 10, 30, 90, 130][self.below(9)];
        (0..len).map(|_| CHARS[self.below(CHARS.len())]).collect()
    }

    /// A map key; never `<<`, which a YAML reader (helm's too) takes for a merge key.
    fn key(&mut self) -> String {
        let key = self.text();
        if key == "<<" { "<<<".to_owned() } else { key }
    }

    fn value(&mut self, depth: usize) -> Data {
        const NUMBERS: &[f64] = &[
            0.0, 1.0, -1.0, 1.5, 1e6, 1234567.5, 1e-7, 1e19, 1e20, 1e21, 0.1,
        ];
        match self.below(10) {
            0 | 1 if depth < 3 => {
                let n = self.below(4);
                Data::Map(
                    (0..n)
                        .map(|_| (self.key(), self.value(depth + 1)))
                        .collect(),
                )
            }
            2 if depth < 3 => {
                let n = self.below(4);
                Data::List((0..n).map(|_| self.value(depth + 1)).collect())
            }
            3 => Data::Float(NUMBERS[self.below(NUMBERS.len())]),
            4 => [Data::Bool(true), Data::Bool(false), Data::Null][self.below(3)].clone(),
            _ => Data::String(self.text()),
        }
    }
}

const TEMPLATE: &str = r#"# all: {{ toJson .Values | b64enc }}
{{- range $k, $v := .Values }}
# Y{{ $k }}: {{ toYaml $v | b64enc }}
# P{{ $k }}: {{ toYamlPretty $v | b64enc }}
# J{{ $k }}: {{ toJson $v | b64enc }}
# I{{ $k }}: {{ toPrettyJson $v | b64enc }}
# R{{ $k }}: {{ toRawJson $v | b64enc }}
{{- if not (eq $v nil) }}
# T{{ $k }}: {{ toToml $v | b64enc }}
{{- end }}
{{- end }}
"#;

fn write_chart(dir: &Path, values: &str) {
    std::fs::create_dir_all(dir.join("templates")).unwrap();
    std::fs::write(
        dir.join("Chart.yaml"),
        "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(dir.join("templates/out.yaml"), TEMPLATE).unwrap();
    std::fs::write(dir.join("input.yaml"), values).unwrap();
}

fn ours(values: &Map) -> Vec<(String, String)> {
    let mut lines = vec![(
        "all".to_owned(),
        json::to_json(&Data::Map(values.clone())).unwrap(),
    )];
    let mut keys: Vec<&String> = values.keys().collect();
    keys.sort();
    for k in keys {
        let v = &values[k];
        lines.push((format!("Y{k}"), yaml::to_yaml(v)));
        lines.push((format!("P{k}"), yaml::to_yaml_pretty(v)));
        lines.push((format!("J{k}"), json::to_json(v).unwrap_or_default()));
        lines.push((format!("I{k}"), json::to_pretty_json(v).unwrap_or_default()));
        lines.push((format!("R{k}"), json::to_raw_json(v).unwrap_or_default()));
        if let Ok(t) = toml::to_toml(v) {
            lines.push((format!("T{k}"), t));
        }
    }
    lines
}

fn helms(helm: &Path, dir: &Path) -> Vec<(String, String)> {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(helm)
        .args(["template", "p"])
        .arg(dir)
        .arg("-f")
        .arg(dir.join("input.yaml"))
        .env("HOME", &home)
        .env_remove("HELM_DRIVER")
        .output()
        .expect("run helm");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "helm failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# "))
        .filter(|l| !l.starts_with("Source:"))
        .filter_map(|l| {
            l.split_once(": ")
                .or_else(|| l.strip_suffix(':').map(|k| (k, "")))
        })
        .map(|(k, b64)| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap();
            (k.to_owned(), String::from_utf8(bytes).unwrap())
        })
        .collect()
}

#[test]
fn encoders_and_reader_match_live_helm() {
    let Some(helm) = live::helm_or_skip() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("landscaper-formats-{}", std::process::id()));
    let mut generator = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut report = String::new();
    for round in 0..3 {
        let values: Map = (0..150)
            .map(|i| (format!("k{i}"), generator.value(0)))
            .collect();
        // The file is our own toYaml output: helm and we must read it back alike, too.
        let text = yaml::marshal(&Data::Map(values)).unwrap();
        write_chart(&dir, &text);
        let read = yaml::parse_values_file("input.yaml", &text).unwrap();
        let want = helms(&helm, &dir);
        assert!(want.len() > 700, "helm printed only {} values", want.len());
        let got = ours(&read);
        if want != got {
            let first = want.iter().zip(&got).find(|(w, g)| w != g);
            let _ = writeln!(
                report,
                "round {round}: first difference {first:?} (helm {} lines, ours {})",
                want.len(),
                got.len()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.is_empty(), "{report}");
}
