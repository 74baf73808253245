//! One test per dynaml feature, with the examples of spiff's documentation.

use landscaper_spiff::{Error, Functions, Limits, Spiff, Template};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn eval(yaml: &str) -> Value {
    Spiff::new()
        .evaluate_text(yaml)
        .unwrap_or_else(|e| panic!("{yaml}\n{e}"))
        .document
}

fn eval_err(yaml: &str) -> String {
    match Spiff::new().evaluate_text(yaml) {
        Ok(o) => panic!("expected an error, got {}", o.document),
        Err(e) => e.to_string(),
    }
}

#[test]
fn references_are_lexically_scoped() {
    let out = eval(
        "fizz:\n  buzz:\n    foo: 1\n    bar: (( foo ))\n  bar: (( foo ))\nfoo: 3\nbar: (( foo ))\nabs:\n  foo: 9\n  v: (( .foo ))\n",
    );
    assert_eq!(out["fizz"], json!({"buzz": {"foo": 1, "bar": 1}, "bar": 3}));
    assert_eq!(out["bar"], 3);
    assert_eq!(out["abs"]["v"], 3);
}

#[test]
fn paths_indices_and_names() {
    let out = eval(
        "list:\n- name: alice\n  age: 25\n- name: bob\n  age: 24\na: (( list.alice.age ))\nb: (( list[1].age ))\nc: (( list.[-1].name ))\nk: age\nd: (( list[0].[k] ))\n",
    );
    assert_eq!(
        (
            out["a"].clone(),
            out["b"].clone(),
            out["c"].clone(),
            out["d"].clone()
        ),
        (json!(25), json!(24), json!("bob"), json!(25))
    );
}

#[test]
fn order_does_not_matter() {
    let out = eval("a: (( b.c ))\nb:\n  c: (( d ))\nd: (( 1 + 1 ))\n");
    assert_eq!(out["a"], 2);
}

#[test]
fn arithmetic_comparison_logic_and_conditions() {
    let out = eval(
        "foo: 3\nbar: (( 1 + 2 * foo ))\nsub: (( 6 - 3 - 2 ))\ndiv: (( 7 / 2 ))\nmod: (( 7 % 2 ))\nf: (( 1.5 * 2 ))\ncmp: (( foo >= 3 ))\nne: (( \"a\" != \"b\" ))\nor: (( 5 -or 6 ))\nand: (( true -and false ))\nnot: (( !false ))\nname: (( foo > 24 ? \"alice\" :\"bob\" ))\n",
    );
    assert_eq!(out["bar"], 7);
    assert_eq!(out["sub"], 1);
    assert_eq!(out["div"], 3);
    assert_eq!(out["mod"], 1);
    assert_eq!(out["f"], 3.0);
    assert_eq!(out["cmp"], true);
    assert_eq!(out["ne"], true);
    assert_eq!(out["or"], 7);
    assert_eq!(out["and"], false);
    assert_eq!(out["not"], true);
    assert_eq!(out["name"], "bob");
    assert!(eval_err("x: (( 1 / 0 ))").contains("division by zero"));
}

#[test]
fn concatenation_of_strings_lists_and_maps() {
    let out = eval(
        "domain: example.com\nuri: (( \"https://\" domain ))\nfoo: 3\nbar: (( [1] 2 foo \"alice\" ))\nm1: {a: 1, b: 2}\nm2: {b: 3}\nm: (( m1 m2 ))\nt: (( foo \" times 2 yields \" 2 * foo ))\n",
    );
    assert_eq!(out["uri"], "https://example.com");
    assert_eq!(out["bar"], json!([1, 2, 3, "alice"]));
    assert_eq!(out["m"], json!({"a": 1, "b": 3}));
    assert_eq!(out["t"], "3 times 2 yields 6");
}

#[test]
fn defaults_with_or() {
    let out = eval(
        "a: (( missing || \"dflt\" ))\nb: (( ~ // 2 ))\nfoo: (( ~~ ))\nbob: (( foo || ~~ ))\nalice: (( bob || \"default\" ))\n",
    );
    assert_eq!(out, json!({"a": "dflt", "b": 2, "alice": "default"}));
}

#[test]
fn lists_maps_ranges_and_slices() {
    let out = eval(
        "name: peter\nage: 23\nmap: (( { \"alice\" = {}, name = age } ))\nr: (( [ 1 .. -1 ] ))\nlist: [a, b, c]\ns: (( list.[1..2] ))\np: (( [{\"v\" = 1}, {\"v\" = 2}].[*].v ))\ne: (( [1, list...] ))\nscoped: (( ( \"alice\" = 25, \"bob\" = 26 ) alice + bob ))\n",
    );
    assert_eq!(out["map"], json!({"alice": {}, "peter": 23}));
    assert_eq!(out["r"], json!([1, 0, -1]));
    assert_eq!(out["s"], json!(["b", "c"]));
    assert_eq!(out["p"], json!([1, 2]));
    assert_eq!(out["e"], json!([1, "a", "b", "c"]));
    assert_eq!(out["scoped"], 51);
}

#[test]
fn inserts_into_maps_and_lists() {
    let out = eval(
        "foo:\n  a: 1\n  b: 2\nbar:\n  <<: (( foo ))\n  b: 3\nl1: [1, 2]\nl2:\n- 3\n- <<<: (( l1 ))\n- 4\n",
    );
    assert_eq!(out["bar"], json!({"a": 1, "b": 3}));
    assert_eq!(out["l2"], json!([3, 1, 2, 4]));
}

#[test]
fn merge_from_stubs() {
    let t = Template::from_yaml(
        "foo:\n  <<: (( merge ))\n  b: 3\n  c: 4\nplain: 1\nval: (( merge ))\nrep:\n  <<: (( merge replace ))\n  x: 1\nnone:\n  <<: (( merge none ))\n  value: notmerged\nopt: (( merge || \"fallback\" ))\n",
    )
    .unwrap();
    let stub = Template::from_yaml(
        "foo:\n  a: 1\n  b: 2\nplain: 2\nval: merged\nrep:\n  y: 2\nnone:\n  value: merged\n",
    )
    .unwrap();
    let out = Spiff::new().cascade(&t, &[stub], None).unwrap().document;
    assert_eq!(out["foo"], json!({"a": 1, "b": 2, "c": 4}));
    assert_eq!(out["plain"], 2);
    assert_eq!(out["val"], "merged");
    assert_eq!(out["rep"], json!({"y": 2}));
    assert_eq!(out["none"], json!({"value": "notmerged"}));
    assert_eq!(out["opt"], "fallback");
}

#[test]
fn markers_temporary_local_and_state() {
    let t = Template::from_yaml(
        "temp:\n  <<: (( &temporary ))\n  foo: bar\nvalue: (( temp.foo ))\ndata:\n  alice: (( &temporary ( \"x\" ) ))\n  foo: (( alice ))\nstate:\n  <<<: (( &state ))\n  version: 0.0.1\n",
    )
    .unwrap();
    let out = Spiff::new().cascade(&t, &[], None).unwrap();
    assert_eq!(
        out.document,
        json!({"value": "bar", "data": {"foo": "x"}, "state": {"version": "0.0.1"}})
    );
    assert_eq!(out.state, json!({"state": {"version": "0.0.1"}}));
    let stored = Template::from_yaml(&serde_json::to_string(&out.state).unwrap()).unwrap();
    let again = Template::from_yaml(
        "state:\n  <<<: (( &state ))\n  version: 0.0.2\nv: (( state.version ))\n",
    )
    .unwrap();
    let out = Spiff::new().cascade(&again, &[], Some(&stored)).unwrap();
    assert_eq!(
        out.document["v"], "0.0.1",
        "the stored state wins over the template"
    );
}

#[test]
fn templates_are_instantiated_where_used() {
    let out = eval(
        "foo:\n  bar:\n    <<: (( &template ))\n    alice: alice\n    bob: (( verb \" \" alice ))\nuse:\n  subst: (( *foo.bar ))\n  verb: loves\nverb: hates\nsingle: (( &temporary &template ( verb ) ))\nviaexpr: (( *single ))\n",
    );
    assert_eq!(
        out["use"]["subst"],
        json!({"alice": "alice", "bob": "loves alice"})
    );
    assert_eq!(out["viaexpr"], "hates");
    assert!(out.get("single").is_none());
}

#[test]
fn lambdas_scopes_defaults_varargs_currying() {
    let out = eval(
        "lvalue: (( &temporary( lambda |x,y|->x + y + offset ) ))\noffset: 0\nvalues:\n  offset: 3\n  value: (( .lvalue(1,2) ))\nfib: (( &temporary( lambda |x|-> x <= 0 ? 0 :x == 1 ? 1 :_(x - 2) + _( x - 1 ) ) ))\nf5: (( .fib(10) ))\nmult: (( &temporary( lambda |x,y=2|-> x * y ) ))\nm: (( .mult(3) ))\nva: (( &temporary( |a,b...|-> [a] b ) ))\nv: (( .va(1,2,3) ))\nmult2: (( &temporary( .mult*(5) ) ))\nc: (( .mult2(3) ))\nnamed: (( &temporary( |a,b=1,c=2|->{$a=a, $b=b, $c=c } ) ))\nn: (( .named(c=3, 2) ))\nj: (( &temporary( join*(\",\") ) ))\njoined: (( .j(\"a\", \"b\") ))\n",
    );
    assert_eq!(out["values"]["value"], 6);
    assert_eq!(out["f5"], 55);
    assert_eq!(out["m"], 6);
    assert_eq!(out["v"], json!([1, 2, 3]));
    assert_eq!(out["c"], 15);
    assert_eq!(out["n"], json!({"a": 2, "b": 1, "c": 3}));
    assert_eq!(out["joined"], "a,b");
}

#[test]
fn comprehensions_map_select_sum() {
    let out = eval(
        "port: 4711\nhosts: [alice, bob]\nmapped: (( map[hosts|x|->x \":\" port] ))\nlist:\n- name: alice\n  age: 25\n- name: bob\n  age: 24\nages: (( map[list|i,p|->i + 1 \". \" p.name \" is \" p.age ] ))\nold: (( select[list|v|->v.age > 24] ))\npersons: {alice: 27, bob: 26}\nolder: (( map{persons|x|->x + 1} ))\nkeys: (( map[persons|k,v|->k] ))\nsum: (( sum[[1,2,3]|0|s,x|->s + x] ))\n",
    );
    assert_eq!(out["mapped"], json!(["alice:4711", "bob:4711"]));
    assert_eq!(out["ages"], json!(["1. alice is 25", "2. bob is 24"]));
    assert_eq!(out["old"], json!([{"name": "alice", "age": 25}]));
    assert_eq!(out["older"], json!({"alice": 28, "bob": 27}));
    assert_eq!(out["keys"], json!(["alice", "bob"]));
    assert_eq!(out["sum"], 6);
}

#[test]
fn standard_functions() {
    let out = eval(
        "f: (( format(\"%s %d %05d %v\", \"alice\", 25, 7, true) ))\nj: (( join(\", \", [\"a\", \"b\"], \"c\") ))\ns: (( split(\",\", \"a,b,c\") ))\nt: (( trim(\"  x  \") ))\nl: (( length([1,2]) ))\nk: (( keys({\"b\" = 1, \"a\" = 2}) ))\nc: (( contains([1,2], 2) ))\nb: (( base64(\"hello\") ))\nd: (( base64_decode(\"aGVsbG8=\") ))\njs: (( asjson({\"b\" = 1, \"a\" = [true]}) ))\nya: (( asyaml({\"a\" = 1}) ))\np: (( parse(\"{\\\"a\\\":1}\") ))\ne: (( element([1,2,3], 1) ))\nu: (( uniq([1,2,1]) ))\nd1: (( defined(nothere) ))\nd2: (( defined(f) ))\nv: (( valid(~) ))\nr: (( require(f) ))\no: (( ociRefRepo(\"a/b:1\") \"@\" ociRefVersion(\"a/b:1\") ))\n",
    );
    assert_eq!(out["f"], "alice 25 00007 true");
    assert_eq!(out["j"], "a, b, c");
    assert_eq!(out["s"], json!(["a", "b", "c"]));
    assert_eq!(out["t"], "x");
    assert_eq!(out["l"], 2);
    assert_eq!(out["k"], json!(["a", "b"]));
    assert_eq!(out["c"], true);
    assert_eq!(out["b"], "aGVsbG8=");
    assert_eq!(out["d"], "hello");
    assert_eq!(out["js"], r#"{"a":[true],"b":1}"#);
    assert_eq!(out["ya"], "a: 1\n");
    assert_eq!(out["p"], json!({"a": 1}));
    assert_eq!(out["e"], 2);
    assert_eq!(out["u"], json!([1, 2]));
    assert_eq!(
        (out["d1"].clone(), out["d2"].clone(), out["v"].clone()),
        (json!(false), json!(true), json!(false))
    );
    assert_eq!(out["o"], "a/b@1");
    assert!(eval_err("x: (( error(\"bad %s\", \"thing\") ))").contains("bad thing"));
    assert!(eval_err("x: (( exec(\"ls\") ))").contains("not supported"));
}

#[test]
fn escapes_and_reparsed_strings() {
    let out = eval("a: ((! .field ))\nb: (( \"(( 1 + 1 ))\" ))\n");
    assert_eq!(out["a"], "(( .field ))");
    assert_eq!(out["b"], 2);
}

#[test]
fn values_context_and_text_templates() {
    let out = Spiff::new()
        .with_values(json!({"imports": {"v": "1"}, "input2": "b2"}))
        .evaluate_value(&json!("x: (( imports.v ))\ny: (( ___.input2 ))\nz: (( __ctx.OUTER[0].input2 ))\np: (( __ctx.PATHNAME ))\n"))
        .unwrap()
        .document;
    assert_eq!(out, json!({"x": "1", "y": "b2", "z": "b2", "p": "p"}));
}

#[test]
fn registered_functions_win_and_get_json() {
    let mut f = Functions::new();
    f.register("getResource", |args: &[Value]| {
        Ok(json!({"args": args.len(), "first": args[0]}))
    });
    f.register("length", |_: &[Value]| Ok(json!("mine")));
    let out = Spiff::new()
        .with_functions(f)
        .evaluate_text("r: (( getResource({\"a\" = 1}, \"name\", \"x\") ))\nl: (( length([1]) ))\n")
        .unwrap()
        .document;
    assert_eq!(out["r"], json!({"args": 3, "first": {"a": 1}}));
    assert_eq!(out["l"], "mine");
    let mut failing = Functions::new();
    failing.register("boom", |_: &[Value]| Err("no descriptor".to_string()));
    let err = Spiff::new()
        .with_functions(failing)
        .evaluate_text("x: (( boom() ))")
        .unwrap_err();
    assert!(err.to_string().contains("boom: no descriptor"), "{err}");
}

#[test]
fn errors_name_path_and_expression() {
    let err = eval_err("a:\n  list:\n  - x: (( nothere.value ))\n");
    assert!(err.contains("a.list.[0].x"), "{err}");
    assert!(err.contains("nothere.value"), "{err}");
    assert!(err.contains("not found"), "{err}");
    let cycle = eval_err("a: (( b ))\nb: (( a ))\n");
    assert!(cycle.contains("unresolved nodes"), "{cycle}");
    assert!(eval_err("a: (( 1 + ))").contains("parse error"));
}

#[test]
fn limits_stop_runaway_templates() {
    let tight = Limits {
        max_depth: 50,
        max_steps: 200_000,
        ..Limits::default()
    };
    let spiff = Spiff::new().with_limits(tight);
    let rec = spiff
        .evaluate_text("f: (( &temporary( lambda |x|->_(x + 1) ) ))\nv: (( .f(1) ))\n")
        .unwrap_err();
    assert!(matches!(rec, Error::Limit(_)), "{rec}");
    let fib = spiff
        .evaluate_text("fib: (( &temporary( lambda |x|-> x <= 1 ? x :_(x - 2) + _(x - 1) ) ))\nv: (( .fib(40) ))\n")
        .unwrap_err();
    assert!(matches!(fib, Error::Limit(_)), "{fib}");
    let big = Spiff::new()
        .evaluate_text("r: (( [1 .. 100000000] ))")
        .unwrap_err();
    assert!(matches!(big, Error::Limit(_)), "{big}");
    let mut doubling = String::from("s0: ((\"xxxxxxxxxxxxxxxx\"))\n");
    for i in 1..40 {
        doubling.push_str(&format!("s{i}: (( s{} s{} ))\n", i - 1, i - 1));
    }
    let strings = Spiff::new().evaluate_text(&doubling).unwrap_err();
    assert!(matches!(strings, Error::Limit(_)), "{strings}");
}

#[test]
fn list_and_string_helpers() {
    let out = eval(
        "c: (( compact([1, \"\", ~, 2]) ))\nr: (( reverse([1, 2]) ))\ns: (( sort([\"b\", \"a\"]) ))\nrp: (( replace(\"aXbX\", \"X\", \"-\") ))\nsub: (( substr(\"hello\", 1, 3) ))\ni: (( index([\"a\", \"b\"], \"b\") ))\nli: (( lastindex(\"abab\", \"ab\") ))\nmm: (( makemap(\"a\", 1) ))\nlm: (( list_to_map([{\"name\" = \"x\", \"v\" = 1}]) ))\nin: (( integer(\"42\") ))\nst: (( string(42) ))\n",
    );
    assert_eq!(out["c"], json!([1, 2]));
    assert_eq!(out["r"], json!([2, 1]));
    assert_eq!(out["s"], json!(["a", "b"]));
    assert_eq!(out["rp"], "a-b-");
    assert_eq!(out["sub"], "el");
    assert_eq!(out["i"], 1);
    assert_eq!(out["li"], 2);
    assert_eq!(out["mm"], json!({"a": 1}));
    assert_eq!(out["lm"], json!({"x": {"v": 1}}));
    assert_eq!(out["in"], 42);
    assert_eq!(out["st"], "42");
}

#[test]
fn output_maps_have_their_keys_sorted_as_spiff_writes_them() {
    let out = Spiff::new()
        .evaluate_text("zeta: 1\nalpha:\n  z: (( zeta ))\n  b: 2\nmid: 3\n")
        .unwrap();
    let keys: Vec<&String> = out.document.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["alpha", "mid", "zeta"]);
    let inner: Vec<&String> = out.document["alpha"].as_object().unwrap().keys().collect();
    assert_eq!(inner, ["b", "z"]);
}

#[test]
fn the_evaluation_path_names_list_elements_by_their_unique_name() {
    let out = eval(
        "items:\n- name: a\n  p: (( __ctx.PATHNAME ))\n- name: b\n  p: (( __ctx.PATH ))\ndup:\n- name: x\n  p: (( __ctx.PATHNAME ))\n- name: x\n",
    );
    assert_eq!(out["items"][0]["p"], "items.name:a.p");
    assert_eq!(out["items"][1]["p"], json!(["items", "name:b", "p"]));
    assert_eq!(
        out["dup"][0]["p"], "dup.[0].p",
        "names that repeat go by index"
    );
}

#[test]
fn string_interpolation_is_off_unless_enabled() {
    let text = "data: test\ns: \"this is a (( data ))\"\nn: \"a (( length(\\\"(( data ))\\\") data )) b\"\ne: \"kept ((! data )) as is\"\n";
    assert_eq!(
        eval(text),
        json!({"data": "test", "s": "this is a (( data ))", "n": "a (( length(\"(( data ))\") data )) b", "e": "kept ((! data )) as is"})
    );
    let on = |spiff: Spiff| spiff.evaluate_text(text).unwrap().document;
    let expected = json!({"data": "test", "s": "this is a test", "n": "a 10test b", "e": "kept (( data )) as is"});
    assert_eq!(on(Spiff::new().with_interpolation(true)), expected);
    assert_eq!(
        on(Spiff::new().with_features("control, interpolation")),
        expected
    );
    assert_eq!(
        on(Spiff::new().with_features("interpolation,nointerpolation"))["s"],
        "this is a (( data ))"
    );
}

#[test]
fn limit_errors_name_the_path_and_the_expression() {
    let tight = Limits {
        max_nodes: 1_000,
        ..Limits::default()
    };
    let err = Spiff::new()
        .with_limits(tight)
        .evaluate_text("a:\n  list:\n  - x: (( [1 .. 5000] ))\n")
        .unwrap_err();
    assert!(matches!(err, Error::Limit(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("a.list.[0].x: (( [1 .. 5000] )): "), "{text}");
    let looping = Spiff::new()
        .with_limits(Limits {
            max_steps: 5_000,
            ..Limits::default()
        })
        .evaluate_text("f: (( &temporary( lambda |x|->_(x + 1) ) ))\nv: (( .f(1) ))\n")
        .unwrap_err()
        .to_string();
    assert!(looping.contains("v: (( .f(1) )): "), "{looping}");
}

#[test]
fn semver_functions_as_spiff_documents_them() {
    let out = eval(
        "normalized: (( semver(\"v1.2-beta.1\") ))\nrelease: (( semverrelease(\"v1.2.3-beta.1\") ))\nnewrelease: (( semverrelease(\"1.2.3-beta.1\", \"1.2.1\") ))\nmajor: (( semvermajor(\"1.2.3-beta.1\") ))\nminor: (( semverminor(\"1.2.3-beta.1\") ))\npatch: (( semverpatch(\"1.2.3-beta.1\") ))\nincmajor: (( semverincmajor(\"1.2.3-beta.1\") ))\nincminor: (( semverincminor(\"v1.2.3-beta.1\") ))\nfinal: (( semverincpatch(\"1.2.3-beta.1\") ))\nnext: (( semverincpatch(final) ))\nprerelease: (( semverprerelease(\"1.2.3-beta.1\") ))\nnewpre: (( semverprerelease(\"1.2.3-beta.1\", \"beta.2\") ))\nmetadata: (( semvermetadata(\"1.2.3+demo\") ))\nnewmeta: (( semvermetadata(\"1.2.3-test\", \"demo\") ))\ncompare: (( semvercmp(\"1.2.3\", \"1.2.3-beta.1\") ))\nsorted: (( semversort(\"1.2.3\", \"1.2.1\", \"v1.10.0\") ))\nsortedlist: (( semversort([\"1.0.0\", \"1.0.0-rc.1\"]) ))\n",
    );
    assert_eq!(
        out,
        json!({
            "normalized": "1.2.0-beta.1", "release": "v1.2.3", "newrelease": "1.2.1-beta.1",
            "major": 1, "minor": 2, "patch": 3, "incmajor": "2.0.0", "incminor": "v1.3.0",
            "final": "1.2.3", "next": "1.2.4", "prerelease": "beta.1", "newpre": "1.2.3-beta.2",
            "metadata": "demo", "newmeta": "1.2.3-test+demo", "compare": 1,
            "sorted": ["1.2.1", "1.2.3", "v1.10.0"], "sortedlist": ["1.0.0-rc.1", "1.0.0"],
        })
    );
    assert!(
        eval_err("v: (( semver(\"not.a.version\") ))")
            .contains("semver: \"not.a.version\": Invalid Semantic Version")
    );
    assert!(eval_err("v: (( semvercmp(\"1.0.0\") ))").contains("semvercmp requires two arguments"));
    assert_eq!(
        eval(
            "m: (( semvermatch(\"1.2.3\", \"~1.2\") ))\nn: (( semvermatch(\"1.2.3\", \">=1.0\", \"<1.2\") ))\nv: (( semvermatch(\"1.2.3\") ))\n"
        ),
        json!({"m": true, "n": false, "v": true})
    );
    assert!(
        eval_err("m: (( semvermatch(\"1.2.3\", \"~> x.y\") ))")
            .contains("semvermatch: invalid constraint \"~> x.y\"[0]: improper constraint")
    );
}

/// Constructs the engine parses but does not implement fail with an error that names the
/// construct, the path and the expression, instead of silently having no effect.
#[test]
fn unimplemented_constructs_are_errors_naming_them() {
    let cases = [
        (
            "list:\n- <<: (( merge on key ))\n- key: a\n",
            "'merge on key' is not supported",
            "list.[0]",
            "merge on key",
        ),
        (
            "a:\n  b: (( merge on id ))\n",
            "'merge on id' is not supported",
            "a.b",
            "merge on id",
        ),
        (
            "a:\n  <<: (( &inject ))\n  x: 1\n",
            "marker '&inject' is not supported",
            "a.<<",
            "&inject",
        ),
        (
            "a:\n  v: (( &default (1) ))\n",
            "marker '&default' is not supported",
            "a.v",
            "&default (1)",
        ),
        (
            "a:\n  v: (( &temporary &dynamic (1) ))\n",
            "marker '&dynamic' is not supported",
            "a.v",
            "&temporary &dynamic (1)",
        ),
    ];
    for (yaml, message, path, expression) in cases {
        let err = eval_err(yaml);
        assert!(err.contains(message), "{yaml}: {err}");
        assert!(err.contains(path), "{yaml}: the path {path}: {err}");
        assert!(err.contains(expression), "{yaml}: the expression: {err}");
    }
}
