//! The fuzz target over template text, as a proptest that runs with the other tests (no
//! nightly toolchain or cargo-fuzz needed): mutated seeds, random expressions, interpolated
//! strings and arbitrary text, each evaluated without and with string interpolation, end with
//! a value or an error, without panics; the engine's limits bound time and memory per case.

use std::time::{Duration, Instant};

use landscaper_spiff::{Limits, Spiff};
use proptest::prelude::*;

/// Templates taken from the conformance data and the documentation, used as seeds.
const SEEDS: &[&str] = &[
    "image: (( \"my-custom-image:\" imports.version ))",
    "state:\n  <<<: (( &state ))\n  version: \"0.0.1\"\nimage: (( \"x:\" .state.version ))",
    "names: (( map[components|c|->{\"name\"=c.metadata.name}] ))",
    "fib: (( lambda |x|-> x <= 0 ? 0 :x == 1 ? 1 :_(x - 2) + _( x - 1 ) ))\nv: (( .fib(12) ))",
    "foo:\n  bar:\n    <<: (( &template ))\n    bob: (( verb \" \" alice ))\n    alice: a\nuse: (( *foo.bar ))\nverb: v",
    "l: (( [1 .. 5] ))\ns: (( sum[l|0|s,x|->s + x] ))\nt: (( select[l|x|->x > 2] ))",
    "a: (( b || c // \"d\" ))\nm: (( { \"k\" = [1, 2]... } ))",
    "x: (( format(\"%s-%d\", join(\",\", split(\",\", \"a,b\")), length(keys({\"a\" = 1}))) ))",
];

const TOKENS: &[&str] = &[
    "((",
    "))",
    " ",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "|",
    "->",
    ",",
    ".",
    "..",
    "...",
    "=",
    "==",
    " + ",
    " - ",
    " * ",
    " / ",
    " || ",
    " // ",
    "?",
    ":",
    "!",
    "*",
    "&temporary",
    "&template",
    "&state",
    "_",
    "__",
    "___",
    "lambda",
    "map[",
    "sum[",
    "select[",
    "merge",
    "\"s\"",
    "1",
    "-1",
    "a",
    "b.c",
    "<<:",
    "\n",
    "  ",
    "- ",
    "x: ",
    "~",
    "~~",
    "((!",
    "\\\"",
    "$x",
    "__ctx.OUTER[0]",
];

fn spiff() -> Spiff {
    Spiff::new()
        .with_values(serde_json::json!({"imports": {"version": "1"}, "components": []}))
        .with_limits(Limits {
            max_steps: 200_000,
            max_nodes: 100_000,
            max_string_bytes: 1 << 20,
            max_depth: 100,
            max_passes: 200,
        })
}

/// Evaluates `text` without and with string interpolation: each ends with a value or an error
/// (a panic fails the test), within the limits, in bounded time.
fn check(text: &str) {
    for interpolation in [false, true] {
        let start = Instant::now();
        let _ = spiff()
            .with_interpolation(interpolation)
            .evaluate_text(text);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "too slow (interpolation {interpolation}): {text:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_seeds(seed in 0..SEEDS.len(), at in 0usize..200, cut in 0usize..20, tok in 0..TOKENS.len()) {
        let s = SEEDS[seed];
        let mut chars: Vec<char> = s.chars().collect();
        let at = at.min(chars.len());
        let end = (at + cut).min(chars.len());
        chars.splice(at..end, TOKENS[tok].chars());
        check(&chars.into_iter().collect::<String>());
    }

    #[test]
    fn arbitrary_text(text in "\\PC{0,300}") {
        check(&text);
    }

    #[test]
    fn interpolated_strings(toks in proptest::collection::vec(0..TOKENS.len(), 0..30)) {
        let body: String = toks.iter().map(|t| TOKENS[*t]).collect();
        check(&format!("a: 1\nb: {{c: 2}}\ns: \"x (( {body} )) y (( a )) z\"\n"));
    }

    #[test]
    fn random_expressions(toks in proptest::collection::vec(0..TOKENS.len(), 0..40)) {
        let body: String = toks.iter().map(|t| TOKENS[*t]).collect();
        check(&format!("a: 1\nb: {{c: 2}}\nx: \"(({body}))\"\ny: \"(( {body} ))\""));
    }
}
