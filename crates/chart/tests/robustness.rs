//! Hostile or random templates never panic, hang or exhaust the stack: they render or fail
//! with an error.

#[path = "support/live.rs"]
mod live;

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::{Map, Value};
use live::Rng;

/// Fragments random templates are built from: Go template syntax, valid and broken.
const FRAGMENTS: &[&str] = &[
    "{{",
    "}}",
    "{{- ",
    " -}}",
    "if ",
    "else ",
    "end",
    "range ",
    "with ",
    "define ",
    "template ",
    "block ",
    "break",
    "continue",
    "$x",
    "$",
    ":=",
    "=",
    ".a",
    ".b",
    ".l",
    ".m",
    ".",
    "|",
    "(",
    ")",
    "\"t\"",
    "\"s\"",
    "`raw`",
    "'c'",
    "1",
    "-2",
    "1.5",
    "0x1F",
    "nil",
    "true",
    "printf ",
    "print ",
    "len ",
    "index ",
    "slice ",
    "include ",
    "tpl ",
    "required ",
    "fail ",
    "and ",
    "or ",
    "not ",
    "eq ",
    "lt ",
    "html ",
    "js ",
    "urlquery ",
    "call ",
    " ",
    "\n",
    "text",
    "/*",
    "*/",
    ",",
    "%v",
    "\"%d %s\"",
    "\"{{.a}}\"",
    "\"{{ tpl . . }}\"",
];

fn dot() -> Value {
    let map = Map::new();
    map.insert("a", Value::from("x"));
    map.insert("b", Value::Float(2.0));
    map.insert(
        "l",
        Value::list(vec![Value::Int(1), Value::Nil, Value::from("s")]),
    );
    let inner = Map::new();
    inner.insert("k", Value::Bool(true));
    map.insert("m", Value::Map(inner));
    Value::Map(map)
}

#[test]
fn random_templates_render_or_fail_cleanly() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let data = dot();
    let mut rendered = 0;
    for _ in 0..20_000 {
        let len = 1 + rng.below(24);
        let template: String = (0..len)
            .map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())])
            .collect();
        let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
        if engine.add_template("t", &template).is_ok() && engine.render("t", &data).is_ok() {
            rendered += 1;
        }
    }
    assert!(rendered > 100, "only {rendered} random templates rendered");
}

#[test]
fn deep_nesting_is_refused_or_handled_without_overflow() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    let parens = format!("{{{{{}1{}}}}}", "(".repeat(20_000), ")".repeat(20_000));
    let error = engine
        .add_template("parens", &parens)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        error.as_deref(),
        Some("template: parens:1: max expression depth exceeded")
    );
    let nested_ifs = format!("{}x{}", "{{if 1}}".repeat(5_000), "{{end}}".repeat(5_000));
    engine.add_template("ifs", &nested_ifs).unwrap_or_default();
    assert_eq!(engine.render("ifs", &Value::Nil).ok().as_deref(), Some("x"));
}

#[test]
fn endless_include_and_tpl_recursion_end_in_errors() {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    engine
        .add_template(
            "inc",
            "{{define \"r\"}}{{include \"r\" .}}{{end}}{{include \"r\" .}}",
        )
        .unwrap_or_default();
    let error = engine
        .render("inc", &Value::Nil)
        .err()
        .map(|e| e.to_string());
    assert!(error.is_some_and(|e| e.ends_with(
        "rendering template has a nested reference name: r: unable to execute template"
    )));
    engine
        .add_template("tpl", "{{tpl .a .}}")
        .unwrap_or_default();
    let map = Map::new();
    map.insert("a", Value::from("{{tpl .a .}}"));
    let error = engine
        .render("tpl", &Value::Map(map.clone()))
        .err()
        .map(|e| e.to_string());
    assert!(error.is_some_and(|e| e.contains("exceeded maximum template depth")));
}
