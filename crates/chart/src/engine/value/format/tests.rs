//! Printing rows written from Go's `fmt` documentation.

use super::*;
use crate::engine::value::Map;

fn s(text: &str) -> Value {
    Value::str(text)
}

#[test]
fn printf_verbs_match_go() {
    let rows: Vec<(&str, Vec<Value>, &str)> = vec![
        ("%d", vec![Value::Int(42)], "42"),
        (
            "%5d|%-5d|%05d",
            vec![Value::Int(7), Value::Int(7), Value::Int(-7)],
            "    7|7    |-0007",
        ),
        ("%+d % d", vec![Value::Int(3), Value::Int(3)], "+3  3"),
        ("%.3d", vec![Value::Int(7)], "007"),
        (
            "%x %X %o %O %b",
            vec![
                Value::Int(255),
                Value::Int(255),
                Value::Int(8),
                Value::Int(8),
                Value::Int(5),
            ],
            "ff FF 10 0o10 101",
        ),
        ("%#x %#o", vec![Value::Int(255), Value::Int(8)], "0xff 010"),
        (
            "%c %q %U",
            vec![Value::Int(65), Value::Int(65), Value::Int(65)],
            "A 'A' U+0041",
        ),
        (
            "%s|%10s|%-10s|%.2s",
            vec![s("hello"), s("hi"), s("hi"), s("hello")],
            "hello|        hi|hi        |he",
        ),
        ("%q", vec![s("a\"b\n\tc")], r#""a\"b\n\tc""#),
        (
            "%x % x %X",
            vec![s("hi"), s("hi"), s("hi")],
            "6869 68 69 6869",
        ),
        (
            "%v %t",
            vec![Value::Bool(true), Value::Bool(false)],
            "true false",
        ),
        (
            "%T %T %T %T",
            vec![Value::Int(1), Value::Float(1.0), s("x"), Value::Nil],
            "int float64 string <nil>",
        ),
        (
            "%T %T",
            vec![Value::list(vec![]), Value::empty_map()],
            "[]interface {} map[string]interface {}",
        ),
        ("%%", vec![], "%"),
        ("%[2]d %[1]d", vec![Value::Int(1), Value::Int(2)], "2 1"),
        (
            "%*d|%-*d",
            vec![Value::Int(4), Value::Int(1), Value::Int(3), Value::Int(2)],
            "   1|2  ",
        ),
        ("%.*f", vec![Value::Int(2), Value::Float(3.25159)], "3.25"),
    ];
    for (format, args, want) in rows {
        assert_eq!(sprintf(format, &args), want, "format {format:?}");
    }
}

#[test]
fn printf_reports_bad_verbs_missing_and_extra_arguments() {
    let rows: Vec<(&str, Vec<Value>, &str)> = vec![
        ("%d", vec![s("x")], "%!d(string=x)"),
        ("%s", vec![Value::Int(5)], "%!s(int=5)"),
        ("%s", vec![Value::Nil], "%!s(<nil>)"),
        ("%d", vec![Value::Float(1.5)], "%!d(float64=1.5)"),
        ("%d %d", vec![Value::Int(1)], "1 %!d(MISSING)"),
        ("%d", vec![Value::Int(1), s("a")], "1%!(EXTRA string=a)"),
        (
            "x",
            vec![Value::Nil, Value::Int(2)],
            "x%!(EXTRA <nil>, int=2)",
        ),
        ("%", vec![], "%!(NOVERB)"),
        ("%[3]d", vec![Value::Int(1)], "%!d(BADINDEX)"),
        ("%z", vec![Value::Int(1)], "%!z(int=1)"),
        (
            "%s",
            vec![Value::list(vec![s("a"), Value::Int(1)])],
            "[a %!s(int=1)]",
        ),
    ];
    for (format, args, want) in rows {
        assert_eq!(sprintf(format, &args), want, "format {format:?}");
    }
}

#[test]
fn floats_print_like_go() {
    let rows: Vec<(&str, f64, &str)> = vec![
        ("%v", 1.0, "1"),
        ("%v", 3.25, "3.25"),
        ("%v", 1_000_000.0, "1e+06"),
        ("%v", 123_456.0, "123456"),
        ("%v", 1_234_567.0, "1.234567e+06"),
        ("%v", 0.0001, "0.0001"),
        ("%v", 0.00001, "1e-05"),
        ("%v", 0.0, "0"),
        ("%v", -0.0, "-0"),
        ("%v", f64::INFINITY, "+Inf"),
        ("%v", f64::NEG_INFINITY, "-Inf"),
        ("%v", f64::NAN, "NaN"),
        ("%f", 3.25159, "3.251590"),
        ("%.2f", 2.675, "2.67"),
        ("%8.3f", 3.25159, "   3.252"),
        ("%-8.3f|", 3.25159, "3.252   |"),
        ("%08.3f", -3.25159, "-003.252"),
        ("%e", 1234.5678, "1.234568e+03"),
        ("%E", 0.000123, "1.230000E-04"),
        ("%g", 100000.0, "100000"),
        ("%g", 1e21, "1e+21"),
        ("%.3g", 1234.0, "1.23e+03"),
        ("%.3g", 1.0, "1"),
        ("%.10g", 0.1, "0.1"),
        ("%+.1f", 2.0, "+2.0"),
        ("%b", 1.0, "4503599627370496p-52"),
        ("%x", 1.0, "0x1p+00"),
        ("%x", 3.0, "0x1.8p+01"),
        ("%5.1f", f64::INFINITY, " +Inf"),
        ("%#.0e", 5.0, "5.e+00"),
        ("%12.7x", -0.25, "-0x1.0000000p-02"),
        ("%.0x", 1.5, "0x1p+01"),
        ("%.2X", 1_234_567.0, "0X1.2DP+20"),
        ("%5.2x", 0.00001, "0x1.50p-17"),
        ("%#g", 1.0, "1.00000"),
        ("%#.3g", 0.5, "0.500"),
        ("%#.0f", 3.0, "3."),
    ];
    for (format, value, want) in rows {
        assert_eq!(
            sprintf(format, &[Value::Float(value)]),
            want,
            "format {format:?} of {value}"
        );
    }
}

#[test]
fn lists_and_maps_print_elements_with_the_verb() {
    let map = Map::new();
    map.insert("b", Value::Int(2));
    map.insert("a", Value::list(vec![s("x"), Value::Nil]));
    let map = Value::Map(map);
    assert_eq!(
        sprintf("%v", std::slice::from_ref(&map)),
        "map[a:[x <nil>] b:2]"
    );
    assert_eq!(
        sprintf("%d", std::slice::from_ref(&map)),
        "map[%!d(string=a):[%!d(string=x) <nil>] %!d(string=b):2]"
    );
    assert_eq!(
        sprintf("%3v", &[Value::list(vec![Value::Int(1), Value::Int(2)])]),
        "[  1   2]"
    );
    assert_eq!(
        sprintf("%#v", &[map]),
        r#"map[string]interface {}{"a":[]interface {}{"x", interface {}(nil)}, "b":2}"#
    );
}

#[test]
fn bytes_print_as_numbers_or_text() {
    let bytes = Value::Bytes(b"hi".as_slice().into());
    assert_eq!(
        sprintf(
            "%v %s %x %T",
            &[bytes.clone(), bytes.clone(), bytes.clone(), bytes]
        ),
        "[104 105] hi 6869 []uint8"
    );
}

#[test]
fn sprint_spaces_only_between_non_strings() {
    assert_eq!(sprint(&[s("a"), s("b")]), "ab");
    assert_eq!(sprint(&[Value::Int(1), Value::Int(2)]), "1 2");
    assert_eq!(sprint(&[s("a"), Value::Int(1), s("b")]), "a1b");
    assert_eq!(sprint(&[Value::Nil, Value::Bool(true)]), "<nil> true");
    assert_eq!(sprintln(&[s("a"), s("b")]), "a b\n");
}

#[test]
fn printable_characters_follow_go_unicode_tables() {
    for printable in ['a', ' ', 'é', '\u{301}', '日', '\u{1F600}', '\u{FFFD}'] {
        assert!(is_print(printable), "{printable:?}");
    }
    for hidden in [
        '\u{7f}',
        '\u{a0}',
        '\u{ad}',
        '\u{378}',
        '\u{2028}',
        '\u{E000}',
        '\u{E0001}',
    ] {
        assert!(!is_print(hidden), "{hidden:?}");
    }
}

#[test]
fn quote_escapes_like_strconv() {
    assert_eq!(
        quote("caf\u{e9} \u{1}\u{7f}\u{a0}\u{200b}"),
        r#""café \x01\x7f\u00a0\u200b""#
    );
    assert_eq!(
        quote_to_ascii("caf\u{e9}\u{1F600}"),
        r#""caf\u00e9\U0001f600""#
    );
    assert_eq!(quote_rune('\'', false), r"'\''");
}
