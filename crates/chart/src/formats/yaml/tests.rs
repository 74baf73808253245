use super::*;

fn f(v: f64) -> Data {
    Data::Float(v)
}

fn s(v: &str) -> Data {
    Data::String(v.to_owned())
}

#[test]
fn values_numbers_are_all_float64() {
    let m = parse_values("a: 1\nb: 0x10\nc: 1e3\nd: 1.5\ne: 017\n").unwrap();
    assert_eq!(m["a"], f(1.0));
    assert_eq!(m["b"], f(16.0));
    assert_eq!(m["c"], f(1000.0));
    assert_eq!(m["d"], f(1.5));
    assert_eq!(m["e"], f(15.0));
}

#[test]
fn yaml11_booleans_nulls_and_timestamps() {
    let m = parse_values("a: yes\nb: Off\nc: ~\nd:\ne: 2001-12-14\nf: 'on'\n").unwrap();
    assert_eq!(m["a"], Data::Bool(true));
    assert_eq!(m["b"], Data::Bool(false));
    assert_eq!(m["c"], Data::Null);
    assert_eq!(m["d"], Data::Null);
    assert_eq!(m["e"], s("2001-12-14"));
    assert_eq!(m["f"], s("on"));
}

#[test]
fn non_string_keys_become_strings() {
    let m = parse_values("1: a\ntrue: b\n1.5: c\n~: d\n").unwrap_err();
    assert!(m.reason.contains("unsupported map key"), "{m}");
    let m = parse_values("1: a\ntrue: b\n1.5: c\nno: d\n").unwrap();
    let keys: Vec<_> = m.keys().map(String::as_str).collect();
    assert_eq!(keys, ["1", "true", "1.5", "false"]);
}

#[test]
fn anchors_aliases_and_merges() {
    let src =
        "defaults: &d\n  image: nginx\n  port: 80\nweb:\n  <<: *d\n  port: 8080\nlist: [*d]\n";
    let m = parse_values(src).unwrap();
    let web = m["web"].as_map().unwrap();
    assert_eq!(web["image"], s("nginx"));
    assert_eq!(web["port"], f(8080.0));
    let Data::List(list) = &m["list"] else {
        panic!("list")
    };
    assert_eq!(list[0].as_map().unwrap()["port"], f(80.0));
}

#[test]
fn values_files_merge_all_their_documents() {
    let src = "a: {x: 1, z: 3}\n---\n---\na: {x: null, w: 2}\nl: [1]\n--- \nl: [2]\n---\n";
    let m = parse_values_file("values.yaml", src).unwrap();
    assert_eq!(
        crate::formats::json::to_json(&Data::Map(m)).unwrap(),
        r#"{"a":{"w":2,"x":null,"z":3},"l":[2]}"#
    );
    let m = parse_values_file("values.yaml", "---\na: 1\n--- # a separator\nb: 2\n").unwrap();
    assert_eq!((&m["a"], &m["b"]), (&f(1.0), &f(2.0)));
    let err = parse_values_file("values.yaml", "a: 1\n---x\nb: 2\n").unwrap_err();
    assert_eq!(
        err.values_file_message(),
        "error reading yaml document: invalid Yaml document separator: x"
    );
    assert_eq!(err.mark.map(|m| m.line), Some(2));
    // Every line ends in a line break, as Kubernetes' line reader ends it.
    let m = parse_values_file("values.yaml", "a: |\r\n  x\r\n---\r\nb: |\n  y").unwrap();
    assert_eq!((&m["a"], &m["b"]), (&s("x\n"), &s("y\n")));
    let err = parse_values_file("values.yaml", "a: 1\n---\nb: [\n").unwrap_err();
    assert_eq!(
        err.values_file_message(),
        "cannot unmarshal yaml document: error converting YAML to JSON: yaml: line 1: did not find expected node content"
    );
    assert_eq!(
        err.helm_message(),
        "error converting YAML to JSON: yaml: line 1: did not find expected node content"
    );
    assert_eq!(err.file.as_deref(), Some("values.yaml"));
    assert!(err.mark.is_some_and(|m| m.line >= 3), "{err:?}");
    let err = parse_values_file("v.yaml", "a: 1\n---\n- x\n").unwrap_err();
    assert_eq!(err.stage, Stage::Unmarshal);
}

#[test]
fn nel_is_a_line_break_as_in_yaml_1_1() {
    let m = parse_values("a: \"x\u{85}y\"\nb: |\n  p\u{85}  q\nc:\u{85}  d: 1\n").unwrap();
    assert_eq!(m["a"], s("x y"));
    assert_eq!(m["b"], s("p\nq\n"));
    assert_eq!(m["c"].as_map().unwrap()["d"], f(1.0));
    assert!(parse_values("a: x\u{85}y\n").is_err());
}

#[test]
fn quoted_scalars_may_continue_at_any_indentation_as_in_libyaml() {
    let m = parse_values("a: \"x\ny\"\nb:\n  c: 'text\n  more'\n  d: \"t\n more\"\n").unwrap();
    assert_eq!(m["a"], s("x y"));
    let b = m["b"].as_map().unwrap();
    assert_eq!(b["c"], s("text more"));
    assert_eq!(b["d"], s("t more"));
    assert!(parse_values("a: \"x\n---\n\"").is_err());
}

#[test]
fn tabs_after_colons_and_control_characters_as_in_libyaml() {
    let m = parse_values("a:\tb\nc:\t\t[1]\n").unwrap();
    assert_eq!(m["a"], s("b"));
    let err = parse_values("a: x\u{7f}y\n").unwrap_err();
    assert_eq!(
        err.helm_message(),
        "error converting YAML to JSON: yaml: control characters are not allowed"
    );
    assert!(parse_values("a: \"x\u{1}\"\n").is_err());
    assert!(parse_values("a: \"x\\u0001\"\n").is_ok());
}

#[test]
fn byte_order_mark_is_skipped() {
    assert_eq!(parse_values("\u{FEFF}a: 1\n").unwrap()["a"], f(1.0));
}

#[test]
fn error_messages_follow_go_yaml() {
    let cases = [
        (
            "a: b: c\n",
            "yaml: mapping values are not allowed in this context",
        ),
        (
            "a: [1, 2\n",
            "yaml: line 1: did not find expected ',' or ']'",
        ),
        (
            "- a\nb: 1\n",
            "yaml: line 1: did not find expected '-' indicator",
        ),
        (
            "a:\n  - b\n  c: 1\n",
            "yaml: line 2: did not find expected '-' indicator",
        ),
        (
            "a: @x\n",
            "yaml: found character that cannot start any token",
        ),
        ("a: 'x'y\n", "yaml: did not find expected key"),
        ("a: ,x\n", "yaml: did not find expected node content"),
        ("a: *nope\n", "yaml: unknown anchor 'nope' referenced"),
        (
            "a: - x\n",
            "yaml: block sequence entries are not allowed in this context",
        ),
        (
            "a:\n  b: plain\n  more\n",
            "yaml: line 4: could not find expected ':'",
        ),
        // Keys go-yaml cannot hash, printed with Go's %#v (as helm v4.1.4 prints them).
        (
            "? [a, 1, 1.5, true, null, [x], {k: v}]\n: 1",
            r#"yaml: invalid map key: []interface {}{"a", 1, 1.5, true, interface {}(nil), []interface {}{"x"}, map[interface {}]interface {}{"k":"v"}}"#,
        ),
        (
            "? {b: 2, a: 1, 1: x, true: y}\n: 1",
            r#"yaml: invalid map key: map[interface {}]interface {}{"a":1, "b":2, 1:"x", true:true}"#,
        ),
        (
            "? [\"q\\\"u\", \"é\\t\", 1e300, 0x10]\n: 1",
            r#"yaml: invalid map key: []interface {}{"q\"u", "é\t", 1e+300, 16}"#,
        ),
        ("? []\n: 1", "yaml: invalid map key: []interface {}{}"),
        (
            "~: [1, [2, {a: b}], 1.0, 18446744073709551615, null]",
            r#"unsupported map key of type: %!s(<nil>), key: <nil>, value: []interface {}{1, []interface {}{2, map[interface {}]interface {}{"a":"b"}}, 1, 0xffffffffffffffff, interface {}(nil)}"#,
        ),
    ];
    for (src, want) in cases {
        let got = parse_values(src).unwrap_err().helm_message();
        assert_eq!(
            got,
            format!("error converting YAML to JSON: {want}"),
            "{src:?}"
        );
    }
}

#[test]
fn only_the_first_document_is_read() {
    let m = parse_values("a: 1\n---\nb: 2\n").unwrap();
    assert_eq!(m.len(), 1);
    assert!(parse_values("").unwrap().is_empty());
    assert!(parse_values("# only a comment\n").unwrap().is_empty());
    assert_eq!(parse_yaml("---\n").unwrap(), Yaml::Null);
}

#[test]
fn wrong_document_kinds_read_like_helm() {
    let err = parse_values("- one\n- two\n").unwrap_err();
    assert_eq!(
        err.helm_message(),
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
    let err = parse_list("hello: world").unwrap_err();
    assert_eq!(
        err.helm_message(),
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go value of type []interface {}"
    );
    assert_eq!(
        parse_list("[\"one\", 2, { \"name\": \"helm\" }]").unwrap(),
        vec![
            s("one"),
            f(2.0),
            Data::Map([("name".to_owned(), s("helm"))].into_iter().collect())
        ]
    );
}

#[test]
fn syntax_errors_carry_file_line_and_column() {
    let err = parse_values_file("values.yaml", "a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("values.yaml: error converting YAML to JSON: yaml: line "),
        "{text}"
    );
    assert!(
        err.mark.is_some_and(|m| m.line >= 2 && m.column >= 1),
        "{err:?}"
    );
    let err = parse_values("a: b: c\n").unwrap_err();
    assert_eq!(
        err.helm_message(),
        "error converting YAML to JSON: yaml: mapping values are not allowed in this context"
    );
}

#[test]
fn nan_in_values_is_refused_like_json() {
    let err = parse_values("a: .nan\n").unwrap_err();
    assert_eq!(
        err.helm_message(),
        "error converting YAML to JSON: json: unsupported value: NaN"
    );
}

#[test]
fn alias_bombs_and_deep_nesting_are_errors_not_crashes() {
    let mut src = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        src.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let err = parse_yaml(&src).unwrap_err();
    assert_eq!(err.reason, "document contains excessive aliasing");
    let deep = "[".repeat(MAX_DEPTH + 5);
    assert!(parse_yaml(&deep).is_err());
}

#[test]
fn round_trip_through_to_yaml() {
    let src = "b:\n  list:\n  - 1\n  - two\n  - \"on\"\na: |-\n  line one\n  line two\n";
    let v = parse_value(src).unwrap();
    assert_eq!(
        to_yaml(&v),
        "a: |-\n  line one\n  line two\nb:\n  list:\n  - 1\n  - two\n  - \"on\""
    );
}

#[test]
fn random_input_never_panics() {
    let alphabet: Vec<char> = "ab:- \n\t[]{}&*!|>'\"%@`#,?<~.0123456789eE+\\"
        .chars()
        .collect();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        let mut text = String::new();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 40) as usize;
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        if let Ok(v) = parse_value(&text) {
            let out = to_yaml(&v);
            if !out.is_empty() {
                // What we write must read back to the same data.
                assert_eq!(parse_value(&out).ok(), Some(v), "{text:?} -> {out:?}");
            }
        }
    }
}

#[test]
fn nesting_just_below_the_limit_reads_and_writes() {
    let depth = MAX_DEPTH - 1;
    // Block style: yaml-rust2 stops flow collections at its own, lower, limit.
    let src = format!("{}x", "- ".repeat(depth));
    let v = parse_value(&src).unwrap();
    assert!(to_yaml(&v).starts_with("- - - "));
    assert!(
        crate::formats::json::to_json(&v)
            .unwrap()
            .starts_with("[[[")
    );
}

#[test]
fn writing_data_deeper_than_the_limit_is_an_error() {
    let mut v = Data::Null;
    for _ in 0..(MAX_DEPTH + 5) {
        v = Data::List(vec![v]);
    }
    assert_eq!(to_yaml(&v), "");
    assert!(marshal(&v).unwrap_err().0.starts_with("exceeded max depth"));
    assert!(crate::formats::json::to_json(&v).is_err());
}

#[test]
fn block_scalars_at_the_end_of_the_input_read_as_in_libyaml() {
    // (input, what helm v4.1.4's fromYaml reads under `f`)
    let cases = [
        ("f: |\n  hello file", "hello file"),
        ("f: |\n  hello file\n", "hello file\n"),
        ("f: >\n  hello\n  file", "hello file"),
        ("f: >\n  a\n  b\n\n  c", "a b\nc"),
        ("f: |+\n  hello file", "hello file"),
        ("f: |+\n  hello\n\n  ", "hello\n\n"),
        ("f: |-\n  hello file\n  ", "hello file"),
        ("f: |\n  hello\n  ", "hello\n"),
        ("f: |\n  x\n ", "x\n"),
        ("f: |\n  hello\n   file", "hello\n file"),
        ("f: |2\n    x", "  x"),
        ("f: |\n\n  x", "\nx"),
        ("f: |\n  x\r\n  y", "x\ny"),
        ("f: |\n  hello\n# c", "hello\n"),
        ("f: |\n", ""),
        ("f: |+\n", ""),
        ("f: |\n\n", ""),
        ("f: |+\n\n", "\n"),
        ("f: |+\n\n\n  ", "\n\n"),
        ("f: |\n  ", ""),
        ("f: >\n", ""),
        ("f: |", ""),
        ("f: |+\n\ng: 1", "\n"),
        ("f: |\n  |", "|"),
    ];
    for (input, want) in cases {
        let m = parse_values(input).unwrap();
        assert_eq!(m["f"], s(want), "{input:?}");
    }
    let nested = parse_values("a:\n  - |\n    x\n    y").unwrap();
    assert_eq!(nested["a"], Data::List(vec![s("x\ny")]));
    let before_key = parse_values("a:\n  f: |\n    x\n  g: 1").unwrap();
    let Data::Map(a) = &before_key["a"] else {
        panic!("not a map")
    };
    assert_eq!(a["f"], s("x\n"));
}
