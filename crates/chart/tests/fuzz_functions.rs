//! Property-based fuzzing of the parser and executor through the function library: random
//! arguments of every Go kind (extreme numbers, NaN, nil, nested and empty lists and maps) fed
//! to every function Helm registers, and random pipelines built from function names, literals
//! and template syntax. Each case must render or fail with an error: no panic, no hang, no
//! unbounded allocation. Case counts are fixed so the suite stays fast.

use landscaper_chart::engine::Engine;
use landscaper_chart::engine::value::{Map, Value};
use landscaper_chart::helm::funcs::helm_funcs;
use proptest::prelude::*;
use proptest::sample::select;

/// Functions that do cryptographic work by design (key generation, password hashing) take
/// seconds per call in a debug build; the crypto property tests cover them.
const SLOW_BY_DESIGN: &[&str] = &[
    "bcrypt",
    "buildCustomCert",
    "derivePassword",
    "genCA",
    "genCAWithKey",
    "genPrivateKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "htpasswd",
];

fn function_names() -> Vec<String> {
    helm_funcs()
        .names()
        .into_iter()
        .filter(|name| !SLOW_BY_DESIGN.contains(name))
        .map(str::to_string)
        .collect()
}

fn text() -> impl Strategy<Value = String> {
    let chars = vec![
        'a', 'b', 'Z', '0', '7', '-', '.', '/', ':', '%', '@', '#', '?', '=', ' ', '\n', '{', '}',
        '"', '\\', 'é', '_', 'x', '1',
    ];
    proptest::collection::vec(select(chars), 0..12).prop_map(|cs| cs.into_iter().collect())
}

fn integer() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(0i64),
        Just(-1),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(1_000_000_000),
        -50i64..50,
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        integer().prop_map(Value::Int),
        integer().prop_map(Value::Int64),
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            Just(1e300),
            Just(0.1),
            -1e6f64..1e6,
        ]
        .prop_map(Value::Float),
        text().prop_map(Value::from),
        text().prop_map(|s| Value::Bytes(s.into_bytes().into())),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::list),
            proptest::collection::vec((text(), inner), 0..4)
                .prop_map(|entries| Value::Map(Map::from_entries(entries))),
        ]
    })
}

/// Renders `template` with `dot`; the result does not matter, only that it returns.
fn render(template: &str, dot: &Value) {
    let mut engine = Engine::new(landscaper_chart::helm::funcs::helm_funcs());
    if engine.add_template("fuzz", template).is_ok() {
        let _ = engine.render_helm("fuzz", dot);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_function_survives_random_arguments(
        name in select(function_names()),
        args in proptest::collection::vec(value(), 0..4),
        piped in any::<bool>(),
    ) {
        let dot = Map::new();
        let mut refs = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            dot.insert(format!("a{i}"), arg.clone());
            refs.push(format!(".a{i}"));
        }
        let template = match (piped, refs.split_last()) {
            (true, Some((last, rest))) => format!("{{{{ {last} | {name} {} }}}}", rest.join(" ")),
            _ => format!("{{{{ {name} {} }}}}", refs.join(" ")),
        };
        render(&template, &Value::Map(dot));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_pipelines_parse_and_run_cleanly(
        tokens in proptest::collection::vec(
            prop_oneof![
                select(function_names()),
                select(vec![
                    "{{", "}}", "{{-", "-}}", "|", "(", ")", "$x", ":=", "=", "$", ".", ".a",
                    ".m.k", ".l", "1", "-3", "2.5", "\"s\"", "`r`", "nil", "true", "if", "else",
                    "end", "range", "with", "define", "template", "\"t\"", "break", "continue",
                    "0x7fffffffffffffff", "1e308", "'c'", " ", "\n", "text",
                ].into_iter().map(str::to_string).collect::<Vec<_>>()),
            ],
            1..24,
        ),
    ) {
        let dot = Map::new();
        dot.insert("a", Value::from("x"));
        dot.insert("l", Value::list(vec![Value::Int(1), Value::Nil, Value::from("s")]));
        let inner = Map::new();
        inner.insert("k", Value::Float(2.0));
        dot.insert("m", Value::Map(inner));
        render(&tokens.join(" "), &Value::Map(dot));
    }
}
