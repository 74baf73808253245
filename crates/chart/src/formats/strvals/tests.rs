use super::*;

fn json_of(m: &Map) -> String {
    json::to_json(&Data::Map(m.clone())).unwrap()
}

fn set_json(line: &str) -> String {
    json_of(&parse(line).unwrap())
}

fn err(line: &str) -> String {
    parse(line).unwrap_err().0
}

#[test]
fn scalars_are_typed_like_helm_set() {
    let m = parse("a=1,b=true,c=FALSE,d=null,e=0,f=007,g=-5,h=+3,i=1.5,j=x,k=").unwrap();
    assert_eq!(m["a"], Data::Int(1));
    assert_eq!(m["b"], Data::Bool(true));
    assert_eq!(m["c"], Data::Bool(false));
    assert_eq!(m["d"], Data::Null);
    assert_eq!(m["e"], Data::Int(0));
    assert_eq!(m["f"], Data::String("007".into()));
    assert_eq!(m["g"], Data::Int(-5));
    assert_eq!(m["h"], Data::Int(3));
    assert_eq!(m["i"], Data::String("1.5".into()));
    assert_eq!(m["j"], Data::String("x".into()));
    assert_eq!(m["k"], Data::String(String::new()));
    assert_eq!(
        parse("big=99999999999999999999").unwrap()["big"],
        Data::String("99999999999999999999".into())
    );
}

#[test]
fn set_string_keeps_text() {
    let mut m = Map::default();
    parse_into_string("a=1,b=true,c=null", &mut m).unwrap();
    assert_eq!(json_of(&m), r#"{"a":"1","b":"true","c":"null"}"#);
}

#[test]
fn dotted_paths_lists_and_escapes() {
    assert_eq!(
        set_json("a.b.c=1,a.b.d=x"),
        r#"{"a":{"b":{"c":1,"d":"x"}}}"#
    );
    assert_eq!(
        set_json("list[0]=a,list[2]=c"),
        r#"{"list":["a",null,"c"]}"#
    );
    assert_eq!(
        set_json("l[0].name=x,l[0].port=80"),
        r#"{"l":[{"name":"x","port":80}]}"#
    );
    assert_eq!(set_json("m[0][1]=x"), r#"{"m":[[null,"x"]]}"#);
    assert_eq!(set_json("a={x,y,3}"), r#"{"a":["x","y",3]}"#);
    assert_eq!(set_json("a={}"), r#"{"a":[""]}"#);
    assert_eq!(set_json("a={x}b=1"), r#"{"a":["x"],"b":1}"#);
    assert_eq!(set_json(r"a\.b=1,c=x\,y"), r#"{"a.b":1,"c":"x,y"}"#);
    assert_eq!(set_json("name=a=b"), r#"{"name":"a=b"}"#);
    assert_eq!(set_json("a[0]"), r#"{"a":[]}"#);
    // A line cut inside an index ends parsing without an error, as in Helm.
    assert_eq!(set_json("a=1,b[1"), r#"{"a":1}"#);
    assert_eq!(set_json(""), "{}");
}

#[test]
fn later_assignments_merge_into_existing_values() {
    let mut m = parse("a.b=1,l[1]=y").unwrap();
    parse_into("a.c=2,l[0]=x", &mut m).unwrap();
    assert_eq!(json_of(&m), r#"{"a":{"b":1,"c":2},"l":["x","y"]}"#);
}

#[test]
fn errors_read_like_helm() {
    assert_eq!(err("a"), r#"key "a" has no value"#);
    assert_eq!(err("a,b=1"), r#"key "a" has no value (cannot end with ,)"#);
    assert_eq!(err("a.=1"), r#"key map "a" has no value"#);
    assert_eq!(
        err("a[x]=1"),
        r#"error parsing index: strconv.Atoi: parsing "x": invalid syntax"#
    );
    assert_eq!(err("a[-1]=1"), "negative -1 index not allowed");
    assert_eq!(
        err("a[65537]=1"),
        "index of 65537 is greater than maximum supported index of 65536"
    );
    assert_eq!(
        err("a[0]x=1"),
        "unexpected data at end of array index: ['x']"
    );
    assert_eq!(err("a={x,y"), "list must terminate with '}'");
    assert_eq!(
        err("a=x,a.b=1"),
        "unable to parse key: interface conversion: interface {} is string, not map[string]interface {}"
    );
    assert_eq!(
        err("a=1,a[0]=1"),
        "unable to parse key: interface conversion: interface {} is int64, not []interface {}"
    );
    let deep = vec!["k"; 32].join(".") + "=1";
    assert_eq!(
        err(&deep),
        "value name nested level is greater than maximum supported nested level of 30"
    );
}

#[test]
fn json_values() {
    let mut m = Map::default();
    parse_json_into(r#"a={"x":[1,"y"]},b=,c=  "s" ,d=[1, 2]"#, &mut m).unwrap();
    assert_eq!(
        json_of(&m),
        r#"{"a":{"x":[1,"y"]},"b":null,"c":"s","d":[1,2]}"#
    );
    let mut m = Map::default();
    parse_json_into("a[1]=true,n=1b=2", &mut m).unwrap();
    assert_eq!(json_of(&m), r#"{"a":[null,true],"b":2,"n":1}"#);
    let mut m = Map::default();
    let e = parse_json_into("a={", &mut m).unwrap_err();
    assert_eq!(e.0, "unexpected EOF");
    let e = parse_json_into("a=x", &mut m).unwrap_err();
    assert_eq!(e.0, "invalid character 'x' looking for beginning of value");
}

#[test]
fn literal_values_take_the_rest_of_the_line() {
    let mut m = Map::default();
    parse_literal_into(r"a.b[0]=x,y=\z{}", &mut m).unwrap();
    assert_eq!(json_of(&m), r#"{"a":{"b":["x,y=\\z{}"]}}"#);
}

#[test]
fn file_values_go_through_the_reader() {
    let mut m = Map::default();
    let mut reader = |path: &str| -> Result<Data, String> {
        if path == "missing" {
            Err(format!("open {path}: no such file or directory"))
        } else {
            Ok(Data::String(format!("contents of {path}")))
        }
    };
    parse_file_into("a=f1,b={f2,f3}", &mut m, &mut reader).unwrap();
    assert_eq!(
        json_of(&m),
        r#"{"a":"contents of f1","b":["contents of f2","contents of f3"]}"#
    );
    let e = parse_file_into("c=missing", &mut m, &mut reader).unwrap_err();
    assert_eq!(e.0, "open missing: no such file or directory");
}

#[test]
fn deep_list_nesting_is_an_error_not_a_crash() {
    let line = format!("a{}=1", "[0]".repeat(MAX_RECURSION + 10));
    assert!(parse(&line).is_err());
}

#[test]
fn random_lines_never_panic() {
    let alphabet: Vec<char> = "ab=.,[]{}0129\\-x\" :".chars().collect();
    let mut state: u64 = 0xDEAD_BEEF_CAFE_F00D;
    for _ in 0..5000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let line: String = (0..(state % 20))
            .map(|k| alphabet[((state >> (k * 3)) % alphabet.len() as u64) as usize])
            .collect();
        let mut m = Map::default();
        let _ = parse_into(&line, &mut m);
        let _ = parse_json_into(&line, &mut m);
        let _ = parse_literal_into(&line, &mut m);
        let _ = parse_into_string(&line, &mut m);
    }
}
