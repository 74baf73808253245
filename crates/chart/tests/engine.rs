//! Go `text/template` behaviour, row by row, written from Go's documented semantics.

mod support;

use landscaper_chart::engine::value::{MethodError, Object, Value};
use landscaper_chart::engine::{Engine, MissingKey};
use landscaper_chart::engine::{FuncError, args, go_builtins};
use support::data;

/// Renders `template` (named `t`) with `dot` given as JSON; the output or the error message.
fn run(template: &str, dot: &str) -> String {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    run_in(&mut engine, template, dot)
}

fn run_in(engine: &mut Engine, template: &str, dot: &str) -> String {
    if let Err(e) = engine.add_template("t", template) {
        return format!("PARSE: {e}");
    }
    match engine.render("t", &data(dot)) {
        Ok(out) => out,
        Err(e) => format!("ERROR: {e}"),
    }
}

/// Like [`check`], with only Go's builtin functions (Helm's Sprig functions replace some).
fn check_go_builtins(rows: &[(&str, &str, &str)]) {
    for (template, dot, want) in rows {
        let mut engine = Engine::new(go_builtins());
        assert_eq!(
            run_in(&mut engine, template, dot),
            *want,
            "template {template:?} with {dot}"
        );
    }
}

fn check(rows: &[(&str, &str, &str)]) {
    for (template, dot, want) in rows {
        assert_eq!(
            run(template, dot),
            *want,
            "template {template:?} with {dot}"
        );
    }
}

#[test]
fn variables_follow_go_scoping() {
    check(&[
        (
            "{{$x := 1}}{{range .l}}{{$x = .}}{{end}}{{$x}}",
            r#"{"l":[1,2,3]}"#,
            "3",
        ),
        (
            "{{$x := \"a\"}}{{if true}}{{$x := \"b\"}}{{$x}}{{end}}{{$x}}",
            "{}",
            "ba",
        ),
        ("{{with $y := .a}}{{$y}}{{.}}{{end}}", r#"{"a":"v"}"#, "vv"),
        ("{{range .l}}{{$.n}}{{end}}", r#"{"l":[1,2],"n":"x"}"#, "xx"),
        ("{{$x := 1}}{{$x}}{{$x = 2}}{{$x}}", "{}", "12"),
        ("{{$}}", r#"{"a":1}"#, "map[a:1]"),
        (
            "{{if $x := .a}}{{$x}}{{else}}{{$x}}!{{end}}",
            r#"{"a":0}"#,
            "0!",
        ),
    ]);
}

#[test]
fn trim_markers_and_comments() {
    check(&[
        ("a  {{- 1 -}}  b", "{}", "a1b"),
        ("a {{- /* note */ -}} b", "{}", "ab"),
        ("a{{/* note */}}b", "{}", "ab"),
        ("x\n{{- if true }}\n  y\n{{- end }}\n", "{}", "x\n  y\n"),
        ("{{ 3 -}} {{- -3 }}", "{}", "3-3"),
    ]);
}

#[test]
fn conditionals_and_with() {
    check(&[
        (
            "{{if .a}}A{{else if .b}}B{{else}}C{{end}}",
            r#"{"b":true}"#,
            "B",
        ),
        ("{{if .a}}A{{else if .b}}B{{else}}C{{end}}", "{}", "C"),
        (
            "{{with .a}}{{.}}{{else with .b}}{{.}}{{else}}none{{end}}",
            r#"{"b":"bee"}"#,
            "bee",
        ),
        ("{{with .a}}{{.}}{{else}}none{{end}}", r#"{"a":[]}"#, "none"),
        (
            "{{if .m}}y{{else}}n{{end}}{{if .e}}y{{else}}n{{end}}",
            r#"{"m":{"k":1},"e":{}}"#,
            "yn",
        ),
        (
            "{{if 0.0}}y{{else}}n{{end}}{{if \"\"}}y{{else}}n{{end}}",
            "{}",
            "nn",
        ),
    ]);
}

#[test]
fn range_over_lists_maps_and_integers() {
    check(&[
        (
            "{{range $i, $v := .l}}{{$i}}={{$v}} {{end}}",
            r#"{"l":["a","b"]}"#,
            "0=a 1=b ",
        ),
        (
            "{{range $k, $v := .m}}{{$k}}:{{$v}},{{end}}",
            r#"{"m":{"b":2,"a":1,"c":3}}"#,
            "a:1,b:2,c:3,",
        ),
        (
            "{{range .m}}{{.}}{{end}}",
            r#"{"m":{"b":"B","a":"A"}}"#,
            "AB",
        ),
        ("{{range 3}}{{.}}{{end}}", "{}", "012"),
        ("{{range $i := 2}}[{{$i}}]{{end}}", "{}", "[0][1]"),
        ("{{range .l}}x{{else}}empty{{end}}", r#"{"l":[]}"#, "empty"),
        ("{{range .missing}}x{{else}}none{{end}}", "{}", "none"),
        (
            "{{range .l}}{{if eq . 2.0}}{{break}}{{end}}{{.}}{{end}}",
            r#"{"l":[1,2,3]}"#,
            "1",
        ),
        (
            "{{range .l}}{{if eq . 2.0}}{{continue}}{{end}}{{.}}{{end}}",
            r#"{"l":[1,2,3]}"#,
            "13",
        ),
        (
            "{{$i := 0}}{{range $i = .l}}{{end}}{{$i}}",
            r#"{"l":["p","q"]}"#,
            "q",
        ),
        (
            "{{range $i, $v := 3}}{{end}}",
            "{}",
            "ERROR: template: t:1:18: executing \"t\" at <3>: can't use 3 to iterate over more than one variable",
        ),
        (
            "{{range .s}}{{end}}",
            r#"{"s":"abc"}"#,
            "ERROR: template: t:1:8: executing \"t\" at <.s>: range can't iterate over abc",
        ),
        (
            "{{range .f}}{{end}}",
            r#"{"f":3}"#,
            "ERROR: template: t:1:8: executing \"t\" at <.f>: range can't iterate over 3",
        ),
    ]);
}

#[test]
fn and_or_short_circuit_and_return_the_deciding_operand() {
    check(&[
        (
            "{{and 1 0 2}}|{{and 1 2}}|{{or 0 \"\" \"x\"}}|{{or 0 \"\"}}",
            "{}",
            "0|2|x|",
        ),
        ("{{or 1 .nope.deeper}}", "{}", "1"),
        ("{{and .a .a.b}}", "{}", "<no value>"),
        ("{{or 1 (fail \"never\")}}", "{}", "1"),
        ("{{not 0}}{{not .l}}", r#"{"l":[1]}"#, "truefalse"),
        ("{{ 0 | and 1 }}", "{}", "0"),
    ]);
}

#[test]
fn comparisons_follow_go_kind_rules() {
    check(&[
        (
            "{{eq 1 1}}{{eq .f 1.0}}{{eq \"a\" \"b\" \"a\"}}{{ne 1 2}}",
            r#"{"f":1}"#,
            "truetruetruetrue",
        ),
        (
            "{{lt 1 2}}{{le 2 2}}{{gt \"b\" \"a\"}}{{ge 1.5 2.5}}",
            "{}",
            "truetruetruefalse",
        ),
        (
            "{{eq .missing \"x\"}}{{eq .missing nil}}",
            "{}",
            "falsetrue",
        ),
        (
            "{{eq 1 1.0}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <eq 1 1.0>: error calling eq: incompatible types for comparison: int and float64",
        ),
        (
            "{{eq .f 1}}",
            r#"{"f":1}"#,
            "ERROR: template: t:1:2: executing \"t\" at <eq .f 1>: error calling eq: incompatible types for comparison: float64 and int",
        ),
        (
            "{{lt true false}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <lt true false>: error calling lt: invalid type for comparison",
        ),
        (
            "{{lt .l 1}}",
            r#"{"l":[]}"#,
            "ERROR: template: t:1:2: executing \"t\" at <lt .l 1>: error calling lt: invalid type for comparison",
        ),
        (
            "{{eq 1}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <eq 1>: error calling eq: missing argument for comparison",
        ),
    ]);
}

#[test]
fn builtins_behave_like_go() {
    // Go's own builtins: in Helm, Sprig's `slice` replaces Go's (lists only).
    check_go_builtins(&[
        (
            "{{len .l}} {{len .s}} {{len .m}}",
            r#"{"l":[1,2],"s":"héllo","m":{"a":1}}"#,
            "2 6 1",
        ),
        (
            "{{index .l 1}} {{index .m \"a\"}} {{index .n \"x\" 0}}",
            r#"{"l":[1,2],"m":{"a":"A"},"n":{"x":["deep"]}}"#,
            "2 A deep",
        ),
        ("{{index .m \"zz\"}}", r#"{"m":{}}"#, "<no value>"),
        (
            "{{slice .s 1 3}} {{slice .l 1}}",
            r#"{"s":"abcd","l":[1,2,3]}"#,
            "bc [2 3]",
        ),
        (
            "{{print 1 2 \"a\" \"b\" 3}}|{{println \"x\" 1}}|",
            "{}",
            "1 2ab3|x 1\n|",
        ),
        (
            "{{printf \"%s-%05.1f-%v\" .s .f .l}}",
            r#"{"s":"x","f":3.25159,"l":[1,"a"]}"#,
            "x-003.3-[1 a]",
        ),
        (
            "{{html \"<a href='x'>&</a>\"}}",
            "{}",
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;",
        ),
        (
            "{{js \"it's <b> \\\"q\\\" =\"}}",
            "{}",
            "it\\'s \\u003Cb\\u003E \\\"q\\\" \\u003D",
        ),
        ("{{urlquery \"a b&c=d/é\"}}", "{}", "a+b%26c%3Dd%2F%C3%A9"),
        (
            "{{print nil}} {{printf \"%v\" .missing}}",
            "{}",
            "<nil> <nil>",
        ),
        (
            "{{index .l 5}}",
            r#"{"l":[1]}"#,
            "ERROR: template: t:1:2: executing \"t\" at <index .l 5>: error calling index: index out of range: 5",
        ),
        (
            "{{index .missing \"a\" \"b\"}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <index .missing \"a\" \"b\">: error calling index: index of untyped nil",
        ),
        (
            "{{len 3}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <len 3>: error calling len: len of type int",
        ),
        (
            "{{call .f}}",
            r#"{"f":"x"}"#,
            "ERROR: template: t:1:2: executing \"t\" at <call .f>: error calling call: non-function .f of type string",
        ),
    ]);
}

#[test]
fn values_print_the_go_way() {
    check(&[
        (
            "{{.a}} {{.b}} {{.c}} {{.d}}",
            r#"{"a":1000000,"b":1.5,"c":123456,"d":0.00001}"#,
            "1e+06 1.5 123456 1e-05",
        ),
        (
            "{{.l}} {{.m}}",
            r#"{"l":[1,"x",null,true],"m":{"b":[],"a":{"k":"v"}}}"#,
            "[1 x <nil> true] map[a:map[k:v] b:[]]",
        ),
        (
            "{{.n}}|{{.missing}}",
            r#"{"n":null}"#,
            "<no value>|<no value>",
        ),
        (
            "{{1}} {{1.0}} {{1e3}} {{0x10}} {{'a'}} {{true}} {{\"s\"}} {{`r`}}",
            "{}",
            "1 1 1000 16 97 true s r",
        ),
        (
            "{{printf \"%T %T %T %T\" 1 1.5 .l .m}}",
            r#"{"l":[],"m":{}}"#,
            "int float64 []interface {} map[string]interface {}",
        ),
    ]);
}

#[test]
fn pipelines_pass_the_value_as_last_argument() {
    check(&[
        ("{{\"x\" | printf \"%s-%s\" \"y\"}}", "{}", "y-x"),
        ("{{.l | len | printf \"%d\"}}", r#"{"l":[1,2,3]}"#, "3"),
        ("{{(index .l 0).name}}", r#"{"l":[{"name":"n"}]}"#, "n"),
        ("{{ (print \"a\" \"b\") }}", "{}", "ab"),
        ("{{ $x := (len .l) }}{{ $x }}", r#"{"l":[1]}"#, "1"),
    ]);
}

#[test]
fn missing_fields_and_nil_errors_match_go() {
    check(&[
        (
            "{{.Values.missing.foo}}",
            r#"{"Values":{}}"#,
            "ERROR: template: t:1:9: executing \"t\" at <.Values.missing.foo>: nil pointer evaluating interface {}.foo",
        ),
        (
            "{{.s.foo}}",
            r#"{"s":"x"}"#,
            "ERROR: template: t:1:4: executing \"t\" at <.s.foo>: can't evaluate field foo in type interface {}",
        ),
        (
            "{{$x := \"s\"}}{{$x.foo}}",
            "{}",
            "ERROR: template: t:1:17: executing \"t\" at <$x.foo>: can't evaluate field foo in type string",
        ),
        ("{{$x := .nope}}{{$x.foo}}", "{}", "<no value>"),
        ("{{(.nope).foo}}", "{}", "<no value>"),
        (
            "a\n  {{ .x.y }}",
            r#"{"x":null}"#,
            "ERROR: template: t:2:7: executing \"t\" at <.x.y>: nil pointer evaluating interface {}.y",
        ),
        (
            "{{.a 1}}",
            r#"{"a":1}"#,
            "ERROR: template: t:1:2: executing \"t\" at <.a>: a is not a method but has arguments",
        ),
        (
            "{{1 2}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <1>: can't give argument to non-function 1",
        ),
        (
            "{{printf 1}}",
            "{}",
            "ERROR: template: t:1:9: executing \"t\" at <1>: expected string; found 1",
        ),
        (
            "{{printf .f}}",
            r#"{"f":1}"#,
            "ERROR: template: t:1:9: executing \"t\" at <.f>: wrong type for value; expected string; got float64",
        ),
        (
            "{{len 1 2}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <len>: wrong number of args for len: want 1 got 2",
        ),
        (
            "{{template \"nope\"}}",
            "{}",
            "ERROR: template: t:1:11: executing \"t\" at <{{template \"nope\"}}>: template \"nope\" not defined",
        ),
        (
            "{{nil}}",
            "{}",
            "ERROR: template: t:1:2: executing \"t\" at <nil>: nil is not a command",
        ),
    ]);
}

#[test]
fn missing_key_options_change_map_lookups() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine.options_mut().missing_key = MissingKey::Default;
    assert_eq!(run_in(&mut engine, "{{.a.b}}", "{}"), "<no value>");
    engine.options_mut().missing_key = MissingKey::Error;
    assert_eq!(
        run_in(&mut engine, "{{.a}}", "{}"),
        "ERROR: template: t:1:2: executing \"t\" at <.a>: map has no entry for key \"a\""
    );
}

#[test]
fn parse_errors_name_file_and_line() {
    check(&[
        (
            "{{foo}}",
            "{}",
            "PARSE: template: t:1: function \"foo\" not defined",
        ),
        (
            "line\n{{if .a}}",
            "{}",
            "PARSE: template: t:2: unexpected EOF",
        ),
        (
            "{{range .}}{{end}}{{break}}",
            "{}",
            "PARSE: template: t:1: {{break}} outside {{range}}",
        ),
        (
            "{{ .a | 1 }}",
            "{}",
            "PARSE: template: t:1: non executable command in pipeline stage 2",
        ),
        (
            "{{else}}",
            "{}",
            "PARSE: template: t:1: unexpected {{else}}",
        ),
        (
            "{{ .a\n",
            "{}",
            "PARSE: template: t:2: unclosed action started at t:1",
        ),
        (
            "{{ (1 }}",
            "{}",
            "PARSE: template: t:1: unclosed left paren",
        ),
    ]);
}

#[test]
fn templates_share_one_namespace_where_the_last_definition_wins() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("base", "[{{block \"x\" .}}default {{.}}{{end}}]")
        .unwrap_or_default();
    assert_eq!(
        engine.render("base", &Value::from("d")).ok(),
        Some("[default d]".into())
    );
    engine
        .add_template("override", "{{define \"x\"}}override {{.}}{{end}}")
        .unwrap_or_default();
    assert_eq!(
        engine.render("base", &Value::from("d")).ok(),
        Some("[override d]".into())
    );
    engine
        .add_template("empty", "{{define \"x\"}} {{end}}")
        .unwrap_or_default();
    assert_eq!(
        engine.render("base", &Value::from("d")).ok(),
        Some("[override d]".into())
    );
    engine
        .add_template("caller", "{{template \"x\"}}|{{template \"x\" 5}}")
        .unwrap_or_default();
    assert_eq!(
        engine.render("caller", &Value::Nil).ok(),
        Some("override <no value>|override 5".into())
    );
}

#[test]
fn template_calls_start_with_fresh_variables() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template(
            "t",
            "{{define \"inner\"}}{{$}}{{end}}{{$x := 1}}{{template \"inner\" \"dot\"}}",
        )
        .unwrap_or_default();
    assert_eq!(engine.render("t", &Value::Nil).ok(), Some("dot".into()));
}

#[test]
fn endless_template_recursion_is_an_error_not_a_crash() {
    let result = run(
        "{{define \"a\"}}{{template \"a\" .}}{{end}}{{template \"a\" .}}",
        "{}",
    );
    assert!(
        result.contains("exceeded maximum template depth"),
        "{result}"
    );
}

#[test]
fn helm_render_removes_no_value() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template("t", "a{{.missing}}b{{.n}}c")
        .unwrap_or_default();
    assert_eq!(
        engine.render_helm("t", &data(r#"{"n":null}"#)).ok(),
        Some("abc".into())
    );
    engine
        .add_template("dir/_partial.tpl", "x")
        .unwrap_or_default();
    let all = engine.render_all(&data("{}")).unwrap_or_default();
    assert_eq!(all.keys().collect::<Vec<_>>(), ["t"]);
}

/// A stand-in for Helm's `.Files`.
struct Files;

impl Object for Files {
    fn type_name(&self) -> String {
        "chart.Files".into()
    }

    fn field(&self, _name: &str) -> Option<Value> {
        None
    }

    fn has_method(&self, name: &str) -> bool {
        name == "Get"
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, MethodError> {
        match (name, args) {
            ("Get", [Value::String(path)]) => Ok(Value::from(format!("content of {path}"))),
            ("Get", [_]) => Err(MethodError::ArgType {
                index: 0,
                expected: "string".into(),
            }),
            ("Get", _) => Err(MethodError::ArgCount {
                want: 1,
                got: args.len(),
            }),
            _ => Err(MethodError::NoSuchMethod),
        }
    }

    fn format(&self) -> String {
        "map[]".into()
    }
}

/// A stand-in for a struct with a field.
struct Version;

impl Object for Version {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }

    fn field(&self, name: &str) -> Option<Value> {
        (name == "Major").then_some(Value::Int64(1))
    }

    fn format(&self) -> String {
        "1.2.3".into()
    }
}

#[test]
fn objects_offer_fields_and_methods() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    let dot = data("{}");
    if let Value::Map(m) = &dot {
        m.insert("Files", Value::object(Files));
        m.insert("Version", Value::object(Version));
    }
    let rows = [
        ("{{.Files.Get \"a.txt\"}}", "content of a.txt"),
        ("{{\"b\" | .Files.Get}}", "content of b"),
        ("{{.Version.Major}} {{.Version}}", "1 1.2.3"),
        (
            "{{.Files.Get 1}}",
            "ERROR: template: t:1:13: executing \"t\" at <1>: expected string; found 1",
        ),
        (
            "{{.Files.Get}}",
            "ERROR: template: t:1:8: executing \"t\" at <.Files.Get>: wrong number of args for Get: want 1 got 0",
        ),
        (
            "{{.Version.Minor}}",
            "ERROR: template: t:1:10: executing \"t\" at <.Version.Minor>: can't evaluate field Minor in type interface {}",
        ),
        (
            "{{.Version.Major 1}}",
            "ERROR: template: t:1:10: executing \"t\" at <.Version.Major>: Major has arguments but cannot be invoked as function",
        ),
    ];
    for (template, want) in rows {
        engine.add_template("t", template).unwrap_or_default();
        let got = match engine.render("t", &dot) {
            Ok(out) => out,
            Err(e) => format!("ERROR: {e}"),
        };
        assert_eq!(got, want, "template {template:?}");
    }
}

#[test]
fn functions_can_mutate_shared_maps() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine.funcs_mut().add("set", |a: &[Value]| {
        args::count(a, 3)?;
        let key = args::string(a, 1)?;
        let map = args::map(a, 0)?;
        map.insert(key, a[2].clone());
        Ok(a[0].clone())
    });
    engine
        .funcs_mut()
        .add("boom", |_: &[Value]| Err(FuncError::failed("it broke")));
    assert_eq!(
        run_in(
            &mut engine,
            "{{$_ := set .m \"k\" \"v\"}}{{.m.k}}",
            r#"{"m":{}}"#
        ),
        "v"
    );
    assert_eq!(
        run_in(
            &mut engine,
            "{{range $k, $v := .m}}{{$_ := set $.m \"z\" 1}}{{$k}}{{end}}{{len .m}}",
            r#"{"m":{"a":1}}"#
        ),
        "a2"
    );
    assert_eq!(
        run_in(&mut engine, "x{{ boom }}", "{}"),
        "ERROR: template: t:1:4: executing \"t\" at <boom>: error calling boom: it broke"
    );
}

#[test]
fn errors_render_the_offending_line_with_a_marker() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template(
            "chart/templates/a.yaml",
            "kind: x\nname: {{ .Values.a.b }}\n",
        )
        .unwrap_or_default();
    let error = engine
        .render("chart/templates/a.yaml", &data(r#"{"Values":{}}"#))
        .err()
        .map(|e| e.render())
        .unwrap_or_default();
    assert_eq!(
        error,
        "template: chart/templates/a.yaml:2:16: executing \"chart/templates/a.yaml\" at <.Values.a.b>: nil pointer evaluating interface {}.b\n  --> chart/templates/a.yaml:2\n2 | name: {{ .Values.a.b }}\n  |                 ^"
    );
}
