//! Live differential test of the template engine against the reference helm binary ($HELM or
//! `helm` on PATH; CI installs helm v4.1.4). Every snippet below is rendered by helm and by
//! this crate in the same chart with the same values; outputs (and error messages, for the
//! failing snippets) must be byte-identical. Without helm the test is skipped, except under
//! CI=true where it fails.
//!
//! Snippets cover Go's builtins and printing, Helm's `include`/`tpl`/`required`/`fail` and
//! the Sprig functions charts use most (defaults, dicts, lists, math, semver, encodings,
//! `toYaml`/`toJson`).

#[path = "support/live.rs"]
mod live;
mod support;

use live::Rng;

use std::path::Path;
use std::process::Command;

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::helm::objects::Files;

const VALUES: &str = r#"{
  "f": 1, "big": 1234567, "small": 0.00001, "frac": 2.5, "neg": -3,
  "s": "hello world", "u": "café ☃ \u0007", "e": "", "t": true, "n": null,
  "l": [1, "a", null, true, 2.5], "strs": ["pear", "apple", "fig"], "empty": [],
  "m": {"b": 2, "a": {"k": "v"}, "z": null}, "multi": "line one\nline two\n",
  "tmpl": "{{ .Values.s | upper }}", "deep": {"x": {"y": {"z": "bottom"}}},
  "pi": 3.141592653589793, "tiny": 1e-300, "huge": 1.7976931348623157e308, "negz": -0.0,
  "id": 123456789012, "mixed": [1, "a", null, [2, 3], {"k": "v"}]
}"#;

const HELPERS: &str = r#"{{- define "helper.name" -}}{{ .Values.s | trunc 5 }}{{- end -}}
{{- define "helper.args" -}}[{{ . }}]{{- end -}}
{{- define "helper.nested" -}}<{{ include "helper.name" . }}>{{- end -}}
"#;

/// Snippets that render: each becomes a `define` included from one file.
const SNIPPETS: &[&str] = &[
    r#"{{ .Values.f }} {{ .Values.big }} {{ .Values.small }} {{ .Values.frac }} {{ .Values.neg }}"#,
    r#"{{ .Values.l }} {{ .Values.m }} {{ .Values.n }} {{ .Values.missing }} {{ .Values.empty }}"#,
    r#"{{ printf "%v|%d|%s|%q|%x|%X|%o|%b|%c|%U" .Values.l 42 .Values.s .Values.u 255 255 8 5 65 9731 }}"#,
    r#"{{ printf "%5d|%-5d|%05d|%+d|% d|%.3d|%x|% x|%#x" 7 7 -7 3 3 7 "hi" "hi" 255 }}"#,
    r#"{{ printf "%f|%.2f|%8.3f|%-8.3f|%e|%E|%g|%.3g|%G" 3.25159 2.675 3.25159 3.25159 1234.5678 0.000123 100000.0 1234.0 1e-7 }}"#,
    r#"{{ printf "%v %v %v %v %v" 1e21 1e20 123456789.0 0.0001 -0.0 }}"#,
    r#"{{ printf "%s|%10s|%-10s|%.2s|%q|%+q|%#q" "abc" "hi" "hi" "hello" "a\"b\n" "é" "raw" }}"#,
    r#"{{ printf "%T %T %T %T %T %T" 1 1.5 "s" .Values.l .Values.m .Values.n }}"#,
    r#"{{ printf "%d %s" "x" 5 }}|{{ printf "%d" }}|{{ printf "%d" 1 2 }}|{{ printf "%!" }}|{{ printf "%[2]d %[1]d" 1 2 }}"#,
    r#"{{ printf "%v" .Values.m }}|{{ printf "%d" .Values.m }}|{{ printf "%s" .Values.l }}|{{ printf "%#v" .Values.m }}"#,
    r#"{{ printf "%*d|%-*d|%.*f" 5 1 4 2 2 3.14159 }}"#,
    r#"{{ print 1 2 "a" "b" 3 nil .Values.n }}|{{ println "x" 1 }}|"#,
    r#"{{ $x := 1 }}{{ range .Values.strs }}{{ $x = . }}{{ end }}{{ $x }}"#,
    r#"{{ $x := "a" }}{{ if true }}{{ $x := "b" }}{{ $x }}{{ end }}{{ $x }}"#,
    r#"{{ range $i, $v := .Values.l }}{{ $i }}={{ $v }};{{ end }}"#,
    r#"{{ range $k, $v := .Values.m }}{{ $k }}:{{ $v }};{{ end }}"#,
    r#"{{ range .Values.empty }}x{{ else }}empty{{ end }} {{ range .Values.missing }}x{{ else }}none{{ end }}"#,
    r#"{{ range 4 }}{{ . }}{{ end }} {{ range $i := 3 }}[{{ $i }}]{{ end }}"#,
    r#"{{ range .Values.l }}{{ if not . }}{{ continue }}{{ end }}{{ if eq (printf "%v" .) "true" }}{{ break }}{{ end }}{{ . }},{{ end }}"#,
    r#"{{ with .Values.deep.x }}{{ .y.z }}{{ end }} {{ with .Values.missing }}x{{ else with .Values.s }}{{ . }}{{ end }}"#,
    r#"{{ if .Values.e }}a{{ else if .Values.empty }}b{{ else if .Values.t }}c{{ else }}d{{ end }}"#,
    r#"{{ and 1 0 2 }} {{ and 1 2 }} {{ or 0 "" "x" }} {{ or 0 "" }} {{ not .Values.l }} {{ not .Values.empty }}"#,
    r#"{{ eq .Values.f 1.0 }} {{ eq "a" "b" "a" }} {{ ne 1 2 }} {{ lt 1.5 2.5 }} {{ le "b" "a" }} {{ gt 3 2 }} {{ ge 2 2 }} {{ eq .Values.n nil }} {{ eq .Values.missing "x" }}"#,
    r#"{{ len .Values.l }} {{ len .Values.u }} {{ len .Values.m }} {{ index .Values.l 1 }} {{ index .Values.m "a" "k" }} {{ index .Values.m "nope" }}"#,
    r#"{{ html "<a href='x'>&\"</a>" }} {{ js "it's <b> \"q\" = & \u2028" }} {{ urlquery "a b&c=d/é?" }}"#,
    r#"{{ 1e3 }} {{ 0x1F }} {{ 'a' }} {{ 1_000 }} {{ 0x1p4 }} {{ -0x10 }} {{ 017 }} {{ 0o17 }} {{ 0b101 }} {{ .5 }}"#,
    r#"a  {{- " b " -}}  c {{- /* comment */ -}} d {{/* note */}} e"#,
    r#"{{ (printf "%s-%s" "a" "b") }} {{ .Values.s | printf "%s!" }} {{ "x" | printf "%s-%s" "y" }} {{ (index .Values.l 0) }}"#,
    r#"{{ include "helper.name" . }} {{ include "helper.args" "x" }} {{ include "helper.nested" . }} {{ template "helper.args" 5 }}"#,
    r#"{{ tpl .Values.tmpl . }} {{ tpl "{{ define \"inner\" }}in{{ end }}{{ include \"inner\" . }}" . }} {{ tpl "plain <no value>" . }}"#,
    r#"{{ required "needed" .Values.s }} {{ required "needed" .Values.f }}"#,
    r#"{{ upper .Values.s }} {{ lower "ÀB" }} {{ title "hello wORLD-x_y" }} {{ untitle "First Try" }} {{ swapcase "Hello World" }}"#,
    r#"{{ trim "  x  " }}|{{ trimAll "$" "$5$" }}|{{ trimPrefix "a" "abc" }}|{{ trimSuffix "c" "abc" }}|{{ nospace " a b  c " }}"#,
    r#"{{ trunc 5 "hello world" }}|{{ trunc -3 "hello" }}|{{ abbrev 8 "hello world" }}|{{ abbrevboth 5 10 "1234 5678 9123" }}|{{ substr 1 3 "hello" }}"#,
    r#"{{ contains "ll" "hello" }} {{ hasPrefix "he" "hello" }} {{ hasSuffix "lo" "hello" }} {{ repeat 3 "ab" }} {{ replace "l" "L" "hello" }}"#,
    r#"{{ quote "a" 1 .Values.n "é" }}|{{ squote "a" 1 }}|{{ cat "a" 1 .Values.n "b" }}"#,
    r#"{{ indent 2 .Values.multi }}|{{ nindent 4 "a\nb" }}"#,
    r#"{{ wrap 5 "Hello World again" }}|{{ wrapWith 5 "\t" "Hello World" }}|{{ initials "First Try" }}|{{ plural "one" "many" 2 }}"#,
    r#"{{ snakecase "HTTPServerName" }} {{ camelcase "http_server" }} {{ kebabcase "FirstName" }}"#,
    r#"{{ join "," .Values.strs }} {{ join "-" .Values.l }} {{ splitList "," "a,b,c" }} {{ sortAlpha .Values.strs }} {{ (split "$" "a$b")._1 }}"#,
    r#"{{ .Release.Name }} {{ .Chart.Name }} {{ .Template.Name }} {{ .Template.BasePath }}"#,
    r#"{{ .Values.pi }} {{ .Values.tiny }} {{ .Values.huge }} {{ .Values.negz }} {{ .Values.id }} {{ .Values.mixed }}"#,
    r#"{{ printf "%q|%+q|%x|%6s|%-6s|%.1s" "\u00a0\u200b日本😀" "é☃" "é" "é☃" "é☃" "日本" }}"#,
    r#"{{ printf "%x|%o|%#o|%08.3f|%+.2e|%.0f|%.0f|%5.1g|%#x" -255 8 8 -3.5 12345.678 2.5 3.5 123.0 "hi" }}"#,
    r#"{{ printf "%c|%c|%U|%#U|%q" 128512 -1 1114112 9731 128512 }}"#,
    r#"{{ printf "%v %d %s" .Values.mixed .Values.mixed .Values.mixed }}"#,
    r#"{{ printf "%t|%t|%v|%5t" true 1 false true }}"#,
    r#"{{ printf "%6.2v|%-8v|%08v|%x" 3.14159 "ab" 42 3.5 }}"#,
    r#"{{ print "a" 1 2 "b" "c" 3.5 true }}|{{ print 1 "" 2 }}|{{ print nil nil }}"#,
    r#"{{ js "\u2028\u0001é" }} {{ html 42 "<" }} {{ urlquery "x" 1 nil }}"#,
    "{{- \"a\" }}\t\n  {{- \"b\" -}}\n\t {{ \"c\" -}}\n",
    r#"{{ len "日本" }} {{ eq "日本" "日本" }} {{ lt "Z" "a" }} {{ index "abc" 1 }}"#,
    r#"{{ upper "straße" }} {{ title "o'neil mc-donald" }} {{ lower "İ" }} {{ swapcase "ßÀ" }}"#,
    r#"{{ snakecase "http2xx" }} {{ snakecase "HTTP2XX" }} {{ snakecase "HTTP20xOK" }} {{ snakecase "Wi_thF" }} {{ snakecase "_AnotherTES_TCaseP" }}"#,
    r#"{{ snakecase "ALL" }} {{ snakecase "_HELLO_WORLD_" }} {{ snakecase "HELLO____WORLD" }} {{ snakecase "TW" }} {{ snakecase "_C" }} {{ snakecase "  sentence case  " }} {{ snakecase "camelCase" }}"#,
    r#"{{ camelcase "some words" }} {{ camelcase "GOLANG_IS_GREAT" }} {{ camelcase "hello-world" }} {{ camelcase "___" }} {{ camelcase "x" }}"#,
    r#"{{ kebabcase "HTTPServer" }} {{ kebabcase "some_words here" }} {{ kebabcase "ABCxyz" }}"#,
    r#"{{ initials "  leading spaces here" }} {{ untitle "ÀB cD" }} {{ wrap 3 "a verylongword b" }} {{ wrapWith 4 "|" "abcdefghij" }}"#,
    r#"{{ abbrev 4 "hello" }} {{ abbrev 5 "hello" }} {{ abbrevboth 0 4 "hello world" }} {{ abbrevboth 10 7 "0123456789abcdef" }}"#,
    r#"{{ repeat 0 "x" }}|{{ substr -1 2 "hello" }}|{{ substr 2 -1 "hello" }}|{{ substr 2 99 "hello" }}|{{ trunc 0 "x" }}|{{ trunc -9 "abc" }}"#,
    r#"{{ indent 0 "a\nb" }}|{{ nindent 2 "" }}|{{ plural "one" "many" 1 }}|{{ cat .Values.mixed .Values.m }}"#,
    r#"{{ join "," .Values.mixed }}|{{ splitn "," 2 "a,b,c" }}|{{ split "" "abc" }}|{{ sortAlpha .Values.mixed }}|{{ splitList "" "ab" }}"#,
    r#"{{ quote .Values.mixed }} {{ squote .Values.m }} {{ quote }} {{ trimAll "ab" "abcba" }}"#,
    r#"{{ printf "%08s|%-08d|%x|%.2x|%5.3s|%.20f|%5v|%-5v|" "ab" 5 -1 "hello" "abcdef" 0.1 true nil }}"#,
    r#"{{ printf "%3c|%-3c|%05q|%#v|%#v|%#v|%#v" 65 66 "a" 1 "s" .Values.l .Values.f }}"#,
    r#"{{ printf "%v|%s|%d" .Values.e .Values.e .Values.t }}|{{ printf "%[3]v %[1]v %v" 1 2 3 }}|{{ printf "%.*d" -1 5 }}"#,
    r#"{{ printf "%e|%.0e|%#.0e|%g|%#g|%G" 0.0 5.0 5.0 0.0 1.0 1e-10 }}"#,
    r#"{{ -0 }} {{ +5 }} {{ 1_0.5 }} {{ 0.1e1 }} {{ 1E2 }} {{ 0X1f }} {{ 0B11 }} {{ '\n' }} {{ '\x41' }} {{ '\u263a' }}"#,
    r#"{{ .Files.missing }} {{ .Files.Get "nope" | len }} {{ len .Files }} {{ if .Files.missing }}y{{ else }}n{{ end }}"#,
    r#"{{ printf "%q|%+q" "\u0378\u00ad\u2028\ufffd\ue000\u0301\u200d\u061c\u180e\ufeff\U0001F9FF\U000E0001\u0085\u00a0\u3000\u2060\uFFF9\U0001D173" "é\u0301" }}"#,
    "{{ printf \"%q\" \"\\u1539\\u0522\\U0003600a\\U0003738f\\u0448\\uc5e6\\U0006a23d\\U00013c4f\\u1855\\U000ce2eb\\U0001e807\\ufb5c\\U000a6734\\u167b\\U0001d614\\u0a3a\\U0001a0a3\\u268a\\U00012147\\U00068db4\\U00010b8d\\u0b41\\uf4aa\\u9415\\u96d2\\U000d4d66\\u5d1c\\U00015d5c\\U0001d680\\u2787\\U00085e7e\\U000c260c\\U00055718\\u0ae3\\u070d\\ucd1d\\U00014c0e\\u16bb\\U0009afb2\\U000149c9\\u73c7\\U00016911\\U00010dd8\\U000185b0\\U00017211\\u6919\\U000532dd\\U00010ed6\\U00016325\\u1d1f\\u4a26\\u161d\\u1f2f\\u4eb2\\U0001de2b\\U0009691b\\ue98c\\u56b1\\U0001f2de\\u0a7a\\ud651\\U00016c0d\\U00017b27\\ubb5a\\U00105cfe\\uc556\\U000ff703\\ucbca\\u0b87\\U000cead4\\ubf6f\\U000a1f98\\U00012071\\U00016618\\ub216\\ub5f1\\U0003f229\\u80e4\\U00016ce5\\U00014f13\" }}",
    r#"{{ .Values.missing | default "d" }} {{ .Values.e | default "e" }} {{ .Values.f | default 5 }} {{ default "x" .Values.n }}"#,
    r#"{{ dict "a" 1 "b" (list 1 "x") | toYaml }}|{{ list 1 2.5 "s" nil | toJson }}|{{ toYaml .Values.m | nindent 2 }}"#,
    r#"{{ include "helper.name" . | sha256sum }} {{ int .Values.frac }} {{ int64 "12" }} {{ float64 "1.5" }} {{ add 1 2 .Values.f }} {{ sub 5 .Values.frac }}"#,
    r#"{{ .Values.l | first }} {{ .Values.l | last }} {{ rest .Values.strs }} {{ initial .Values.strs }} {{ ternary "a" "b" true }} {{ empty .Values.e }} {{ empty .Values.m }}"#,
    r#"{{ hasKey .Values.m "a" }} {{ keys .Values.m | sortAlpha }} {{ values (dict "x" 1) }} {{ merge (dict "a" 1) (dict "b" 2 "a" 3) }} {{ mergeOverwrite (dict "a" 1) (dict "a" 2) }}"#,
    r#"{{ semverCompare ">=1.2" "1.3.0" }} {{ (semver "1.2.3-beta+x").Prerelease }} {{ regexReplaceAll "a" "banana" "o" }} {{ regexFind "[0-9]+" "ab123" }} {{ b64enc "x" }} {{ b64dec "eA==" }}"#,
    r#"{{ typeOf (list) }} {{ typeOf .Values.m }} {{ kindOf 1 }} {{ kindIs "float64" .Values.f }} {{ toString 1.5 }} {{ atoi "12" }} {{ until 3 }} {{ untilStep 0 10 3 }} {{ seq 1 3 }}"#,
    r#"{{ coalesce .Values.n .Values.e "x" }} {{ tpl (toYaml .Values.m) . }} {{ .Values.m | toPrettyJson }} {{ fromYaml "a: 1\nb: [x]" }} {{ fromJson "{\"a\":1.5}" }}"#,
    r#"{{ get .Values.m "b" }} {{ set (dict) "k" "v" }} {{ pluck "b" .Values.m (dict "b" 9) }} {{ uniq (list 1 1 2) }} {{ without (list 1 2 3) 2 }} {{ has 2 (list 1 2) }} {{ compact (list "" "a" nil) }}"#,
    r#"{{ floor 1.5 }} {{ ceil 1.2 }} {{ round 2.555 2 }} {{ div 7 2 }} {{ mod 7 2 }} {{ max 1 2 3 }} {{ min 4 2 }} {{ mul 2 3.5 }} {{ addf 1.5 2 }} {{ maxf 1 2.5 }}"#,
    r#"{{ sha1sum "x" }} {{ adler32sum "x" }} {{ trimSuffix "-" "a-" }} {{ printf "%v" (list 1 "a") }} {{ toStrings (list 1 nil "a") }} {{ cat (dict "a" 1) }}"#,
    r#"{{ dict "z" 1 "a" (dict "b" 2) | toYaml }}|{{ list "on" "yes" "1e3" "2001-12-14" "" "a: b" "multi\nline" | toYaml }}"#,
    r#"{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ $_ := unset $d "a" }}{{ $d }} {{ deepCopy .Values.m | toJson }} {{ dig "x" "y" "z" "none" .Values.deep }} {{ omit .Values.m "a" }} {{ pick .Values.m "b" }}"#,
    r#"{{ list 3 1 2 | sortAlpha }} {{ reverse (list 1 2 3) }} {{ append (list 1) 2 }} {{ prepend (list 1) 0 }} {{ concat (list 1) (list 2 3) }} {{ slice (list 1 2 3) 1 }} {{ chunk 2 (list 1 2 3) }}"#,
    r#"{{ upper "straße" }} {{ title "hello world" }} {{ camelcase "hello_world" }} {{ snakecase "HelloWorld" }} {{ nospace "a b" }} {{ trunc 63 "short" }} {{ .Release.Name | trunc 63 | trimSuffix "-" }}"#,
    r#"{{ semver "1.2.3" }} {{ (semver "v2.0.0").Major }} {{ semverCompare "^1.2" "1.9.9" }} {{ semverCompare "~1.2.0" "1.3.0" }} {{ urlParse "https://u:p@h:8/p?q=1#f" | toJson }} {{ urlJoin (dict "scheme" "http" "host" "x") }}"#,
    r#"{{ base "/a/b.txt" }} {{ dir "/a/b.txt" }} {{ ext "b.tar.gz" }} {{ clean "/a/../b" }} {{ isAbs "/a" }} {{ quote (toDecimal "0777") }} {{ int "0x1F" }} {{ toJson (dict "html" "<&>") }} {{ toRawJson (dict "html" "<&>") }}"#,
    r#"{{ trunc 3.0 "abcdef" }} {{ repeat 2.0 "x" }} {{ indent 2.0 "a" }}"#,
    "{{ `raw\\n` }} {{ \"tab\\there\" }} {{ \"\\u263a\\x41\\101\" }}",
];

/// Snippets that fail: each is rendered alone and the error messages compared.
const FAILING: &[&str] = &[
    r#"{{ .Values.m.z.y }}"#,
    r#"{{ .Values.s.y }}"#,
    r#"{{ include "bad.nested" . }}"#,
    r#"{{ include "missing.template" . }}"#,
    r#"{{ include "bad.fail" . }}"#,
    r#"{{ required "a value is required" .Values.missing }}"#,
    r#"{{ fail "stop here" }}"#,
    r#"{{ tpl "{{ .Values.m.z.y }}" . }}"#,
    r#"{{ tpl "{{ nosuchfunc }}" . }}"#,
    r#"{{ eq 1 1.0 }}"#,
    r#"{{ lt .Values.l 1 }}"#,
    r#"{{ len 3 }}"#,
    r#"{{ index .Values.l 9 }}"#,
    r#"{{ printf 1 }}"#,
    r#"{{ upper 1 }}"#,
    r#"{{ trunc .Values.f "abc" }}"#,
    r#"{{ range .Values.s }}{{ end }}"#,
    r#"{{ template "missing.template" }}"#,
    r#"{{ .Values.s 1 }}"#,
    r#"{{ nosuchfunc }}"#,
    "{{ if .Values.t }}",
    "{{ .Values.s | 1 }}",
    r#"{{ .Values.l.x }}"#,
    r#"{{ $x := .Values.s }}{{ $x.y }}"#,
    r#"{{ index .Values.m 1 }}"#,
    r#"{{ index .Values.s 10 }}"#,
    r#"{{ nindent -1 "x" }}"#,
    r#"{{ repeat -1 "x" }}"#,
    r#"{{ substr 3 1 "hello" }}"#,
    r#"{{ trunc 2 }}"#,
    r#"{{ .Values.f.x }}"#,
    r#"{{ or .Values.n .Values.n.x }}"#,
    r#"{{ and }}"#,
    "{{ break }}",
    "{{ define \"x\" }}",
    "{{ \"unterminated }}",
    "{{ 1 2 }}",
    "{{ (1).x }}",
    "{{ nil }}",
    "{{ $undefined }}",
    "{{ $a, $b := 1 }}",
    "{{ range $a, $b, $c := .Values.l }}{{ end }}",
    "text\n{{ .Values.s\n",
    "{{ .Values.s }}{{ else }}",
    "{{ template \"bad.usesmissing\" . }}",
    "{{ 1e400 }}",
    r#"{{ trunc 2.5 "abc" }}"#,
    r#"{{ trunc "2" "abc" }}"#,
    "{{ 1.2.3 }}",
    "{{ 0x }}",
    "{{ 'ab' }}",
    "{{ \"\\q\" }}",
    "{{ .Values.s.x.y }}",
    "{{ index .Values.n 0 }}",
    "{{ .Values.f | printf \"%d\" | len 1 }}",
];

const BAD_HELPERS: &str = r#"{{- define "bad.nested" -}}{{ include "bad.inner" . }}{{- end -}}
{{- define "bad.inner" -}}{{ .Values.m.z.y }}{{- end -}}
{{- define "bad.fail" -}}{{ fail "failed inside" }}{{- end -}}
{{- define "bad.usesmissing" -}}{{ template "not.there" . }}{{- end -}}
"#;

fn write_chart(dir: &Path, templates: &[(&str, String)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("templates")).expect("chart dir");
    std::fs::write(
        dir.join("Chart.yaml"),
        "apiVersion: v2\nname: hc\nversion: 0.1.0\n",
    )
    .expect("Chart.yaml");
    std::fs::write(dir.join("values.yaml"), VALUES).expect("values");
    for (name, text) in templates {
        std::fs::write(dir.join("templates").join(name), text).expect("template");
    }
}

/// Runs `helm template` on the chart: stdout on success, the error message otherwise.
fn run_helm(helm: &Path, dir: &Path) -> Result<String, String> {
    let out = Command::new(helm)
        .args(["template", "rel"])
        .arg(dir)
        .env("HOME", dir.join("home"))
        .env_remove("HELM_DRIVER")
        .output()
        .expect("run helm");
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let message = stderr
        .split("\n\nUse --debug flag")
        .next()
        .unwrap_or(&stderr)
        .strip_prefix("Error: ")
        .unwrap_or(&stderr)
        .trim_end()
        .to_string();
    Err(message)
}

/// The render context Helm builds for the chart's templates.
fn context(template_name: &str) -> Value {
    let json: serde_json::Value = serde_json::from_str(VALUES).unwrap_or_default();
    let top = Map::new();
    top.insert("Values", support::from_json(&json));
    let release = Map::new();
    release.insert("Name", Value::from("rel"));
    top.insert("Release", Value::Map(release));
    let chart = Map::new();
    chart.insert("Name", Value::from("hc"));
    top.insert("Chart", Value::Map(chart));
    let info = Map::new();
    info.insert("Name", Value::from(template_name));
    info.insert("BasePath", Value::from("hc/templates"));
    top.insert("Template", Value::Map(info));
    top.insert("Files", Value::object(Files::new::<Vec<u8>>([])));
    Value::Map(top)
}

/// Renders the files as Helm would (partials skipped); the first error's Helm message.
fn run_ours(templates: &[(&str, String)]) -> Result<Vec<(String, String)>, String> {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    let mut names: Vec<String> = templates
        .iter()
        .map(|(name, _)| format!("hc/templates/{name}"))
        .collect();
    for (name, text) in templates {
        engine
            .add_template(&format!("hc/templates/{name}"), text)
            .map_err(|e| e.helm_message())?;
    }
    names.sort();
    let mut out = Vec::new();
    for name in names {
        if name.rsplit('/').next().is_some_and(|b| b.starts_with('_')) {
            continue;
        }
        let rendered = engine
            .render_helm(&name, &context(&name))
            .map_err(|e| e.helm_message())?;
        out.push((name, rendered));
    }
    Ok(out)
}

/// Each snippet's line from `# N: <urlquery of the output>` lines.
fn snippet_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("# ") && !l.starts_with("# Source:"))
        .map(str::to_string)
        .collect()
}

/// Renders every snippet with helm and with our engine and describes each one whose outputs
/// differ. The snippets are `define`d as `<prefix><i>` beside `helpers` in the template
/// `names.0`, and printed url-quoted on a `# <i>:` line of the template `names.1`.
fn snippet_differences(
    helm: &Path,
    dir: &Path,
    names: (&str, &str),
    prefix: &str,
    helpers: &str,
    snippets: &[&str],
) -> Vec<String> {
    let mut defines = String::from(helpers);
    let mut lines = String::new();
    for (i, snippet) in snippets.iter().enumerate() {
        defines.push_str(&format!(
            "{{{{- define \"{prefix}{i}\" -}}}}{snippet}{{{{- end -}}}}\n"
        ));
        lines.push_str(&format!(
            "# {i}: {{{{ include \"{prefix}{i}\" . | urlquery }}}}\n"
        ));
    }
    let templates = [(names.0, defines), (names.1, lines)];
    write_chart(dir, &templates);
    let helm_out = run_helm(helm, dir).unwrap_or_else(|e| panic!("helm failed: {e}"));
    let ours = run_ours(&templates).unwrap_or_else(|e| panic!("we failed: {e}"));
    let ours_text: String = ours.iter().map(|(_, text)| text.as_str()).collect();
    let want = snippet_lines(&helm_out);
    let got = snippet_lines(&ours_text);
    assert_eq!(want.len(), snippets.len(), "helm printed {helm_out}");
    want.iter()
        .zip(&got)
        .enumerate()
        .filter(|(_, (w, g))| w != g)
        .map(|(i, (w, g))| format!("snippet {i} {:?}\n  helm: {w}\n  ours: {g}", snippets[i]))
        .collect()
}

#[test]
fn engine_matches_live_helm() {
    let Some(helm) = live::helm_or_skip() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("landscaper-engine-{}", std::process::id()));
    let mut differences = snippet_differences(
        &helm,
        &dir,
        ("_snippets.tpl", "lines.yaml"),
        "s",
        HELPERS,
        SNIPPETS,
    );
    for (i, snippet) in FAILING.iter().enumerate() {
        let templates = [
            ("_bad.tpl", BAD_HELPERS.to_string()),
            ("fail.yaml", format!("# {snippet}\n")),
        ];
        write_chart(&dir, &templates);
        let want = run_helm(&helm, &dir).err();
        let got = run_ours(&templates).err();
        if want != got {
            differences.push(format!(
                "failing snippet {i} {snippet:?}\n  helm: {want:?}\n  ours: {got:?}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A random `printf` call: flags, widths, precisions, argument indexes and verbs, applied to
/// values of every kind.
fn random_printf(rng: &mut Rng) -> String {
    const FLAGS: &[&str] = &["", "", "-", "+", "#", " ", "0", "-0", "+ ", "#0"];
    const WIDTHS: &[&str] = &["", "", "1", "5", "12", "*"];
    const PRECS: &[&str] = &["", "", ".", ".0", ".2", ".7", ".*"];
    const VERBS: &[&str] = &[
        "v", "v", "s", "d", "q", "x", "X", "o", "b", "c", "U", "e", "E", "f", "F", "g", "G", "t",
        "T", "%", "z",
    ];
    const ARGS: &[&str] = &[
        "0",
        "-7",
        "42",
        "255",
        "1.5",
        "-0.25",
        "1e6",
        "123456.789",
        "\"\"",
        "\"héllo\"",
        "\"a\\tb\"",
        "true",
        "nil",
        ".Values.l",
        ".Values.m",
        ".Values.f",
        ".Values.big",
        ".Values.small",
        ".Values.n",
        ".Values.strs",
        ".Values.u",
        ".Values.pi",
        "3",
    ];
    let directives = 1 + rng.next() % 3;
    let mut format = String::new();
    let mut args = Vec::new();
    for _ in 0..directives {
        let width = rng.pick(WIDTHS);
        let prec = rng.pick(PRECS);
        if width == "*" {
            args.push(rng.pick(&["3", "-4", "\"x\""]).to_string());
        }
        if prec == ".*" {
            args.push(rng.pick(&["2", "-1", "0"]).to_string());
        }
        format.push_str(&format!(
            "%{}{width}{prec}{}|",
            rng.pick(FLAGS),
            rng.pick(VERBS)
        ));
        args.push(rng.pick(ARGS).to_string());
    }
    if rng.next().is_multiple_of(5) {
        args.push(rng.pick(ARGS).to_string());
    }
    format!("{{{{ printf {:?} {} }}}}", format, args.join(" "))
}

#[test]
fn random_printf_calls_match_live_helm() {
    let Some(helm) = live::helm_or_skip() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("landscaper-printf-{}", std::process::id()));
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let snippets: Vec<String> = (0..2000).map(|_| random_printf(&mut rng)).collect();
    let snippets: Vec<&str> = snippets.iter().map(String::as_str).collect();
    let differences = snippet_differences(
        &helm,
        &dir,
        ("_printf.tpl", "printf.yaml"),
        "p",
        "",
        &snippets,
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Random error-free templates: nested `if`/`with`/`range` (with `break`/`continue`), variable
/// declarations and assignments across scopes, trim markers and includes, over the values.
struct TemplateGen {
    rng: Rng,
    scopes: Vec<Vec<String>>,
    next_var: usize,
}

impl TemplateGen {
    fn vars(&self) -> Vec<String> {
        self.scopes.iter().flatten().cloned().collect()
    }

    fn expr(&mut self, depth: usize) -> String {
        const LEAVES: &[&str] = &[
            "$.Values.s",
            "$.Values.f",
            "$.Values.l",
            "$.Values.m",
            "$.Values.n",
            "$.Values.missing",
            "$.Values.deep.x.y.z",
            "$.Values.strs",
            "$.Values.e",
            "1",
            "\"x\"",
            "true",
            "1.5",
            "$.Values.m.a",
            "$.Values.frac",
        ];
        let vars = self.vars();
        if depth > 2 || !self.rng.next().is_multiple_of(3) {
            if !vars.is_empty() && self.rng.next().is_multiple_of(3) {
                let i = (self.rng.next() % vars.len() as u64) as usize;
                return vars[i].clone();
            }
            return self.rng.pick(LEAVES).to_string();
        }
        let a = self.expr(depth + 1);
        let b = self.expr(depth + 1);
        match self.rng.next() % 20 {
            9 => format!("(default \"d\" {a})"),
            10 => format!("(toJson {a})"),
            11 => format!("(toYaml (list {a} {b}))"),
            12 => format!("(dict \"k\" {a} \"j\" {b})"),
            13 => format!("(ternary {a} {b} (empty {a}))"),
            14 => format!("(coalesce {a} {b})"),
            15 => format!("(upper (toString {a}))"),
            16 => format!("(b64enc (toString {b}))"),
            17 => format!("(printf \"%s/%s\" (kindOf {a}) (typeOf {b}))"),
            18 => format!("(list {a} (toPrettyJson (dict \"x\" {b})))"),
            0 => "(len $.Values.l)".to_string(),
            1 => format!("(printf \"%v-%v\" {a} {b})"),
            2 => format!("(print {a} {b})"),
            3 => format!("(not {a})"),
            4 => format!("(and {a} {b})"),
            5 => format!("(or {a} {b})"),
            6 => format!("(quote {a})"),
            7 => format!("(index $.Values.strs {})", self.rng.next() % 3),
            _ => format!("(eq (printf \"%v\" {a}) \"1\")"),
        }
    }

    fn open(&mut self) -> &'static str {
        self.rng.pick(&["{{ ", "{{- ", "{{ ", "{{"])
    }

    fn close(&mut self) -> &'static str {
        self.rng.pick(&[" }}", " -}}", " }}", "}}"])
    }

    fn block(&mut self, depth: usize, in_range: bool) -> String {
        self.scopes.push(Vec::new());
        let count = 1 + self.rng.next() % 3;
        let mut out = String::new();
        for _ in 0..count {
            out.push_str(&self.statement(depth, in_range));
        }
        self.scopes.pop();
        out
    }

    fn statement(&mut self, depth: usize, in_range: bool) -> String {
        const TEXT: &[&str] = &["a", " ", "\n", "x\n  ", "\t-", ", "];
        let choice = if depth > 3 {
            self.rng.next() % 4
        } else {
            self.rng.next() % 11
        };
        let (o, c) = (self.open(), self.close());
        match choice {
            0 => self.rng.pick(TEXT).to_string(),
            1 | 2 => format!("{o}{}{c}", self.expr(0)),
            3 => {
                let name = format!("$v{}", self.next_var);
                self.next_var += 1;
                let expr = self.expr(0);
                if let Some(scope) = self.scopes.last_mut() {
                    scope.push(name.clone());
                }
                format!("{o}{name} := {expr}{c}")
            }
            4 => {
                let vars = self.vars();
                if vars.is_empty() {
                    return "b".into();
                }
                let name = vars[(self.rng.next() % vars.len() as u64) as usize].clone();
                format!("{o}{name} = {}{c}", self.expr(0))
            }
            5 | 6 => {
                let condition = self.expr(0);
                let body = self.block(depth + 1, in_range);
                let otherwise = if self.rng.next().is_multiple_of(2) {
                    format!("{{{{ else }}}}{}", self.block(depth + 1, in_range))
                } else {
                    String::new()
                };
                format!("{o}if {condition}{c}{body}{otherwise}{{{{ end }}}}")
            }
            7 => {
                let target = self.expr(0);
                let body = self.block(depth + 1, in_range);
                format!("{o}with {target}{c}{body}{{{{ else }}}}none{{{{ end }}}}")
            }
            8 | 9 => {
                let declare = self.rng.next().is_multiple_of(2);
                // An integer range takes at most one variable.
                let over = if declare {
                    self.rng.pick(&[
                        "$.Values.l",
                        "$.Values.strs",
                        "$.Values.m",
                        "$.Values.empty",
                    ])
                } else {
                    self.rng
                        .pick(&["$.Values.l", "$.Values.m", "3", "$.Values.empty"])
                };
                let (i, e) = (
                    format!("$i{}", self.next_var),
                    format!("$e{}", self.next_var),
                );
                self.next_var += 1;
                if declare {
                    self.scopes.push(vec![i.clone(), e.clone()]);
                }
                let mut body = self.block(depth + 1, true);
                if self.rng.next().is_multiple_of(3) {
                    let keyword = self.rng.pick(&["break", "continue"]);
                    let condition = self.expr(0);
                    body =
                        format!("{{{{ if {condition} }}}}{{{{ {keyword} }}}}{{{{ end }}}}{body}");
                }
                if declare {
                    self.scopes.pop();
                }
                let vars = if declare {
                    format!("{i}, {e} := ")
                } else {
                    String::new()
                };
                format!("{o}range {vars}{over}{c}[{body}]{{{{ else }}}}empty{{{{ end }}}}")
            }
            _ => {
                let arg = self.expr(0);
                format!("{o}include \"helper.args\" {arg}{c}")
            }
        }
    }
}

#[test]
fn random_templates_match_live_helm() {
    let Some(helm) = live::helm_or_skip() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("landscaper-random-{}", std::process::id()));
    let mut generator = TemplateGen {
        rng: Rng(0x0DDB_1A5E_5BAD_5EED),
        scopes: Vec::new(),
        next_var: 0,
    };
    let snippets: Vec<String> = (0..800)
        .map(|_| {
            generator.scopes = vec![Vec::new()];
            generator.block(0, false)
        })
        .collect();
    let snippets: Vec<&str> = snippets.iter().map(String::as_str).collect();
    let differences = snippet_differences(
        &helm,
        &dir,
        ("_random.tpl", "random.yaml"),
        "r",
        HELPERS,
        &snippets,
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn random_failing_templates_match_live_helm() {
    const FAULTS: &[&str] = &[
        "{{ $.Values.n.x }}",
        "{{ index $.Values.l 9 }}",
        "{{ upper 1 }}",
        "{{ include \"bad.nested\" $ }}",
        "{{ len 3 }}",
        "{{ eq 1 1.5 }}",
        "{{ fail \"stopped\" }}",
        "{{ template \"bad.inner\" $ }}",
        "{{ $.Values.s.x }}",
        "{{ include \"missing.template\" $ }}",
        "{{ required \"needed\" $.Values.missing }}",
    ];
    let Some(helm) = live::helm_or_skip() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("landscaper-faults-{}", std::process::id()));
    let mut generator = TemplateGen {
        rng: Rng(0xFA17_5EED_0BAD_CAFE),
        scopes: Vec::new(),
        next_var: 0,
    };
    let mut differences = Vec::new();
    let mut failures = 0;
    for case in 0..40 {
        generator.scopes = vec![Vec::new()];
        let before = generator.block(0, false);
        let after = generator.block(0, false);
        let fault = generator.rng.pick(FAULTS);
        let wrapped = if generator.rng.next().is_multiple_of(2) {
            format!(
                "{{{{ range $.Values.strs }}}}{{{{ if eq . \"fig\" }}}}{fault}{{{{ end }}}}{{{{ end }}}}"
            )
        } else {
            format!("{{{{ define \"faulty\" }}}}{fault}{{{{ end }}}}{{{{ include \"faulty\" . }}}}")
        };
        let templates = [
            ("_bad.tpl", BAD_HELPERS.to_string()),
            (
                "case.yaml",
                format!("# {before}{wrapped}{after}\n").replace('\n', "\n# "),
            ),
        ];
        write_chart(&dir, &templates);
        let want = run_helm(&helm, &dir).map(|out| snippet_lines(&out).join("\n"));
        let got = run_ours(&templates).map(|out| {
            snippet_lines(&out.iter().map(|(_, t)| t.as_str()).collect::<String>()).join("\n")
        });
        failures += usize::from(want.is_err());
        if want != got {
            differences.push(format!(
                "case {case}: {:?}\n  helm: {want:?}\n  ours: {got:?}",
                templates[1].1
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(
        failures >= 10,
        "only {failures} of 40 cases failed to render"
    );
}
