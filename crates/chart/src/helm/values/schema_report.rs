//! Helm v4's report of what a values schema rejects: the error tree its validator
//! (santhosh-tekuri/jsonschema v6) builds, rebuilt from the `jsonschema` crate's flat errors,
//! worded as v6 words it in English.
//!
//! v6 gives each subschema evaluation one result: nothing, its one error, or "validation
//! failed" holding several; `allOf`, `anyOf`, `oneOf` and `propertyNames` errors hold the
//! results of their subschemas. Helm prints the tree one error per line, nested errors
//! indented, below the root.

use std::collections::HashMap;

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value as Json;

use crate::engine::value::format::quote as go_quote;
use crate::formats::gofloat::format_g;

/// One error of the tree.
#[derive(Debug)]
struct Node {
    /// The instance location, a JSON pointer (`/a/0`).
    at: String,
    message: String,
    causes: Vec<Node>,
    /// Whether this is what a `$ref` gave: v6 wraps it, so it is not spread at the top.
    via_reference: bool,
}

impl Node {
    fn new(at: impl Into<String>, message: impl Into<String>) -> Node {
        Node {
            at: at.into(),
            message: message.into(),
            causes: Vec::new(),
            via_reference: false,
        }
    }

    fn with_causes(self, causes: Vec<Node>) -> Node {
        Node { causes, ..self }
    }
}

/// The report lines (`- at 'PATH': MESSAGE`, nested ones indented) for the errors of one
/// validation of the whole values against `schema`.
pub(super) fn report(errors: &[ValidationError<'_>], schema: &Json) -> String {
    let mut root = Eval::default();
    for e in errors {
        root.insert(e, 0, schema);
    }
    // Helm prints the root's own result as the list below its headline.
    let mut top = match root.result() {
        Some(node) if node.message == GROUP && !node.via_reference => node.causes,
        Some(node) => vec![node],
        None => Vec::new(),
    };
    // v6 reports properties in Go's map order, which differs from run to run; these are in
    // path order.
    top.sort_by(|a, b| a.at.cmp(&b.at));
    let mut out = String::new();
    for node in &top {
        render(node, 0, &mut out);
    }
    out
}

fn render(node: &Node, depth: usize, out: &mut String) {
    out.push_str(&"  ".repeat(depth));
    out.push_str(&format!("- at {}: {}\n", quote(&node.at), node.message));
    for cause in &node.causes {
        render(cause, depth + 1, out);
    }
}

/// v6's message for a subschema that failed in more than one way.
const GROUP: &str = "validation failed";

/// One subschema applied at one instance location: its errors and its subschemas', in the
/// order found.
#[derive(Default)]
struct Eval {
    at: String,
    entries: Vec<Entry>,
    /// Where each `Sub`, `AllOf` and `PropertyName` entry is, by its key: there is one per
    /// member or item, so they are found by hash rather than by search.
    index: HashMap<String, usize>,
    /// A failed `type`, `const`, `enum` or `format` (in v6's order of checking them), which
    /// v6 reports alone: it checks nothing else of the subschema then.
    exclusive: Option<(u8, Node)>,
}

enum Entry {
    Leaf(Node),
    /// The `required` error of this evaluation, whose properties are reported together.
    Required(Vec<String>),
    /// A property present (`dependencies`, `dependentRequired`) and the ones it requires that
    /// are missing.
    Dependency(String, Vec<String>),
    /// A subschema applied at one location, and whether `$ref` led to it.
    Sub(Eval, bool),
    /// `allOf` and its failing branches, by index.
    AllOf(Vec<(String, Eval)>),
    /// A property name that `propertyNames` rejects, and how.
    PropertyName(String, Eval),
}

impl Eval {
    fn at(at: String) -> Eval {
        Eval {
            at,
            ..Eval::default()
        }
    }

    /// The evaluation's result: nothing, its one error, or a group of them.
    fn result(self) -> Option<Node> {
        if let Some((_, node)) = self.exclusive {
            return Some(node);
        }
        let at = self.at;
        let mut nodes: Vec<Node> = self
            .entries
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Leaf(node) => Some(node),
                Entry::Required(missing) => Some(Node::new(&at, required_message(&missing))),
                Entry::Dependency(trigger, missing) => {
                    let missing: Vec<String> = missing.iter().map(|m| quote(m)).collect();
                    let message = format!(
                        "properties {} required, if {} exists",
                        missing.join(", "),
                        quote(&trigger)
                    );
                    Some(Node::new(&at, message))
                }
                Entry::Sub(eval, reference) => eval.result().map(|node| Node {
                    via_reference: reference || node.via_reference,
                    ..node
                }),
                // Its errors are its causes, not a group of them.
                Entry::PropertyName(name, eval) => eval.result().map(|result| {
                    let causes = if result.message == GROUP {
                        result.causes
                    } else {
                        vec![result]
                    };
                    Node::new("", format!("invalid propertyName {}", quote(&name)))
                        .with_causes(causes)
                }),
                Entry::AllOf(branches) => Some(
                    Node::new(&at, "'allOf' failed").with_causes(
                        branches
                            .into_iter()
                            .filter_map(|(_, b)| b.result())
                            .collect(),
                    ),
                ),
            })
            .collect();
        match nodes.len() {
            0 => None,
            1 => nodes.pop(),
            _ => Some(Node::new(at, GROUP).with_causes(nodes)),
        }
    }

    /// Files `e` under the subschemas its evaluation path passes through, from segment
    /// `from` on (the segments before lead to this evaluation).
    fn insert(&mut self, e: &ValidationError<'_>, from: usize, schema: &Json) {
        let path: Vec<&str> = segments(e.evaluation_path().as_str());
        let instance: Vec<&str> = segments(e.instance_path().as_str());
        let depth = segments(&self.at).len();
        self.insert_at(e, &path, from, &instance, depth, schema);
    }

    fn insert_at(
        &mut self,
        e: &ValidationError<'_>,
        path: &[&str],
        i: usize,
        instance: &[&str],
        depth: usize,
        schema: &Json,
    ) {
        let Some(step) = step(path, i) else {
            self.add_leaf(e, path, schema);
            return;
        };
        let depth = depth + usize::from(step.into_instance);
        let at = pointer(&instance[..depth.min(instance.len())]);
        // A subschema applies once per member or item: each application is its own.
        let key = format!("{}@{at}", path[..step.next].join("/"));
        if step.all_of {
            let all_of_key = path[..i + 1].join("/");
            let branch = path[i + 1].to_string();
            let index = self.entry(all_of_key, || Entry::AllOf(Vec::new()));
            let Entry::AllOf(branches) = &mut self.entries[index] else {
                return;
            };
            let position = match branches.iter().position(|(k, _)| *k == branch) {
                Some(position) => position,
                None => {
                    branches.push((branch, Eval::at(at)));
                    branches.len() - 1
                }
            };
            branches[position]
                .1
                .insert_at(e, path, step.next, instance, depth, schema);
            return;
        }
        let index = self.entry(key, || Entry::Sub(Eval::at(at), step.reference));
        if let Entry::Sub(eval, _) = &mut self.entries[index] {
            eval.insert_at(e, path, step.next, instance, depth, schema);
        }
    }

    /// The index of the entry under `key`, made with `make` if there is none yet.
    fn entry(&mut self, key: String, make: impl FnOnce() -> Entry) -> usize {
        if let Some(&index) = self.index.get(&key) {
            return index;
        }
        self.entries.push(make());
        self.index.insert(key, self.entries.len() - 1);
        self.entries.len() - 1
    }

    fn add_leaf(&mut self, e: &ValidationError<'_>, path: &[&str], schema: &Json) {
        if let ValidationErrorKind::Required { property } = e.kind() {
            let property = property.as_str().unwrap_or_default().to_string();
            if matches!(path.last(), Some(&("dependencies" | "dependentRequired"))) {
                self.add_dependency(e, property, schema);
                return;
            }
            match self.entries.iter_mut().find_map(|entry| match entry {
                Entry::Required(missing) => Some(missing),
                _ => None,
            }) {
                Some(missing) => missing.push(property),
                None => self.entries.push(Entry::Required(vec![property])),
            }
            return;
        }
        // v6 checks each unevaluated member against the `false` schema.
        if let ValidationErrorKind::UnevaluatedProperties { unexpected }
        | ValidationErrorKind::UnevaluatedItems { unexpected } = e.kind()
        {
            for member in unexpected {
                let at = format!("{}/{}", self.at, escape(member));
                self.entries
                    .push(Entry::Leaf(Node::new(at, "false schema")));
            }
            return;
        }
        // v6 validates a property name as an instance of its own, at the root.
        if let ValidationErrorKind::PropertyNames { error } = e.kind() {
            let name = error.instance().as_str().unwrap_or_default().to_string();
            let index = self.entry(format!("propertyName {name}"), || {
                Entry::PropertyName(name, Eval::default())
            });
            if let Entry::PropertyName(_, eval) = &mut self.entries[index] {
                eval.add_leaf(error, &[], schema);
            }
            return;
        }
        let rank = match e.kind() {
            ValidationErrorKind::Type { .. } => Some(0),
            ValidationErrorKind::Constant { .. } => Some(1),
            ValidationErrorKind::Enum { .. } => Some(2),
            ValidationErrorKind::Format { .. } => Some(3),
            _ => None,
        };
        let node = leaf(e, &self.at, path, schema);
        match rank {
            Some(rank) if self.exclusive.as_ref().is_none_or(|(r, _)| rank < *r) => {
                self.exclusive = Some((rank, node));
            }
            Some(_) => {}
            None => self.entries.push(Entry::Leaf(node)),
        }
    }

    /// A property that `dependencies` (or `dependentRequired`) requires: v6 reports, per
    /// property present, the ones it misses.
    fn add_dependency(&mut self, e: &ValidationError<'_>, missing: String, schema: &Json) {
        let object = e.instance();
        let trigger = schema
            .pointer(e.schema_path().as_str())
            .and_then(Json::as_object)
            .and_then(|deps| {
                deps.iter().find(|(name, required)| {
                    object.get(name.as_str()).is_some()
                        && required
                            .as_array()
                            .is_some_and(|r| r.iter().any(|p| p.as_str() == Some(&missing)))
                        && !self.entries.iter().any(|entry| {
                            matches!(entry, Entry::Dependency(t, listed)
                                if t == *name && listed.contains(&missing))
                        })
                })
            })
            .map(|(name, _)| name.clone());
        let Some(trigger) = trigger else {
            self.entries.push(Entry::Required(vec![missing]));
            return;
        };
        match self.entries.iter_mut().find_map(|entry| match entry {
            Entry::Dependency(t, listed) if *t == trigger => Some(listed),
            _ => None,
        }) {
            Some(listed) => listed.push(missing),
            None => self.entries.push(Entry::Dependency(trigger, vec![missing])),
        }
    }
}

/// How a subschema keyword in an evaluation path leads on.
struct Step {
    /// The segment after the keyword (and its name or index, if it takes one).
    next: usize,
    /// Whether the subschema applies to a member or item of the instance.
    into_instance: bool,
    /// Whether this is an `allOf` branch.
    all_of: bool,
    /// Whether this is a `$ref` (or `$dynamicRef`, `$recursiveRef`).
    reference: bool,
}

/// The subschema step at segment `i` of `path`, or `None` when segment `i` is the keyword
/// that failed.
fn step(path: &[&str], i: usize) -> Option<Step> {
    let keyword = *path.get(i)?;
    if i + 1 >= path.len() {
        return None;
    }
    let named = |into_instance| Step {
        next: i + 2,
        into_instance,
        all_of: false,
        reference: false,
    };
    let plain = |into_instance| Step {
        next: i + 1,
        into_instance,
        all_of: false,
        reference: false,
    };
    Some(match keyword {
        "properties" | "patternProperties" | "prefixItems" => named(true),
        "items" if path[i + 1].parse::<usize>().is_ok() => named(true),
        "items"
        | "additionalItems"
        | "unevaluatedItems"
        | "additionalProperties"
        | "unevaluatedProperties"
        | "contains" => plain(true),
        "dependencies" | "dependentSchemas" | "anyOf" | "oneOf" => named(false),
        "allOf" if i + 2 < path.len() => Step {
            all_of: true,
            ..named(false)
        },
        "$ref" | "$dynamicRef" | "$recursiveRef" => Step {
            reference: true,
            ..plain(false)
        },
        "not" | "if" | "then" | "else" | "propertyNames" => plain(false),
        _ => return None,
    })
}

/// The node of an error that is not filed under a subschema.
fn leaf(e: &ValidationError<'_>, at: &str, path: &[&str], schema: &Json) -> Node {
    let branches = |context: &[Vec<ValidationError<'_>>]| -> Vec<Node> {
        context
            .iter()
            .filter_map(|branch| {
                let mut eval = Eval::at(at.to_string());
                for error in branch {
                    eval.insert(error, path.len() + 1, schema);
                }
                eval.result()
            })
            .collect()
    };
    match e.kind() {
        ValidationErrorKind::AnyOf { context } => {
            Node::new(at, "'anyOf' failed").with_causes(branches(context))
        }
        ValidationErrorKind::OneOfNotValid { context } => {
            Node::new(at, "'oneOf' failed, none matched").with_causes(branches(context))
        }
        ValidationErrorKind::OneOfMultipleValid { context } => {
            let valid: Vec<String> = context
                .iter()
                .enumerate()
                .filter(|(_, errors)| errors.is_empty())
                .map(|(index, _)| index.to_string())
                .take(2)
                .collect();
            Node::new(
                at,
                format!("'oneOf' failed, subschemas {} matched", valid.join(", ")),
            )
        }
        _ => Node::new(at, message(e)),
    }
}

/// v6's English message for a failed keyword that holds no other errors.
fn message(e: &ValidationError<'_>) -> String {
    let got = e.instance();
    let got = got.as_ref();
    match e.kind() {
        ValidationErrorKind::Required { property } => {
            required_message(&[property.as_str().unwrap_or_default().to_string()])
        }
        ValidationErrorKind::Type { kind } => {
            let want = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("got {}, want {want}", json_type(got))
        }
        ValidationErrorKind::Minimum { limit } => limit_message("minimum", got, limit),
        ValidationErrorKind::Maximum { limit } => limit_message("maximum", got, limit),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            limit_message("exclusiveMinimum", got, limit)
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            limit_message("exclusiveMaximum", got, limit)
        }
        ValidationErrorKind::MultipleOf { multiple_of } => format!(
            "multipleOf: got {}, want {}",
            localized_float(got.as_f64().unwrap_or_default()),
            localized_float(*multiple_of)
        ),
        ValidationErrorKind::MinLength { limit } => count_message("minLength", chars(got), *limit),
        ValidationErrorKind::MaxLength { limit } => count_message("maxLength", chars(got), *limit),
        ValidationErrorKind::MinItems { limit } => count_message("minItems", items(got), *limit),
        ValidationErrorKind::MaxItems { limit } => count_message("maxItems", items(got), *limit),
        ValidationErrorKind::MinProperties { limit } => {
            count_message("minProperties", properties(got), *limit)
        }
        ValidationErrorKind::MaxProperties { limit } => {
            count_message("maxProperties", properties(got), *limit)
        }
        ValidationErrorKind::Enum { options } => {
            let options = options.as_array().map(Vec::as_slice).unwrap_or_default();
            if options.iter().any(|o| o.is_array() || o.is_object()) {
                "'enum' failed".to_string()
            } else if let [only] = options {
                format!("value must be {}", display(only))
            } else {
                let options: Vec<String> = options.iter().map(display).collect();
                format!("value must be one of {}", options.join(", "))
            }
        }
        ValidationErrorKind::Constant { expected_value } => {
            if expected_value.is_array() || expected_value.is_object() {
                "'const' failed".to_string()
            } else {
                format!("value must be {}", display(expected_value))
            }
        }
        ValidationErrorKind::Pattern { pattern } => format!(
            "{} does not match pattern {}",
            quote(got.as_str().unwrap_or_default()),
            quote(pattern)
        ),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|n| quote(n)).collect();
            format!("additional properties {} not allowed", names.join(", "))
        }
        ValidationErrorKind::AdditionalItems { limit } => format!(
            "last {} additionalItem(s) not allowed",
            items(got).saturating_sub(*limit as u64)
        ),
        ValidationErrorKind::UniqueItems => match equal_items(got) {
            Some((first, second)) => format!("items at {first} and {second} are equal"),
            None => "items are not unique".to_string(),
        },
        ValidationErrorKind::Not { .. } => "'not' failed".to_string(),
        ValidationErrorKind::Contains => "no items match contains schema".to_string(),
        ValidationErrorKind::FalseSchema => "false schema".to_string(),
        // v6 adds the format checker's reason, which these checks do not give.
        ValidationErrorKind::Format { format } => {
            let reason = match (format.as_str(), got.as_str()) {
                ("uuid", Some(text)) => uuid_problem(text),
                _ => None,
            };
            match reason {
                Some(reason) => format!("{} is not valid {format}: {reason}", display(got)),
                None => format!("{} is not valid {format}", display(got)),
            }
        }
        _ => e.to_string(),
    }
}

fn required_message(missing: &[String]) -> String {
    let names: Vec<String> = missing.iter().map(|m| quote(m)).collect();
    match names.as_slice() {
        [one] => format!("missing property {one}"),
        _ => format!("missing properties {}", names.join(", ")),
    }
}

fn limit_message(keyword: &str, got: &Json, limit: &Json) -> String {
    format!(
        "{keyword}: got {}, want {}",
        localized_float(got.as_f64().unwrap_or_default()),
        localized_float(limit.as_f64().unwrap_or_default())
    )
}

fn count_message(keyword: &str, got: u64, want: u64) -> String {
    format!(
        "{keyword}: got {}, want {}",
        grouped(&got.to_string()),
        grouped(&want.to_string())
    )
}

fn chars(v: &Json) -> u64 {
    v.as_str().map_or(0, |s| s.chars().count() as u64)
}

fn items(v: &Json) -> u64 {
    v.as_array().map_or(0, |a| a.len() as u64)
}

fn properties(v: &Json) -> u64 {
    v.as_object().map_or(0, |o| o.len() as u64)
}

/// The first two items that are equal as JSON values (numbers by value), as v6 finds them:
/// the first item equal to an earlier one, and the first such earlier one.
fn equal_items(v: &Json) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (index, item) in v.as_array()?.iter().enumerate() {
        if let Some(first) = seen.insert(canonical(item), index) {
            return Some((first, index));
        }
    }
    None
}

/// A text that two JSON values share exactly when they are equal (numbers by value, object
/// members in any order).
fn canonical(v: &Json) -> String {
    match v {
        // `+ 0.0` makes -0 and 0 one key.
        Json::Number(n) => format!("n{}", n.as_f64().unwrap_or_default() + 0.0),
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        Json::Object(members) => {
            let mut members: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{}:{}", Json::String(k.clone()), canonical(v)))
                .collect();
            members.sort();
            format!("{{{}}}", members.join(","))
        }
        other => other.to_string(),
    }
}

/// Why `text` is not a `uuid` for santhosh-tekuri/jsonschema: five groups of 8, 4, 4, 4 and
/// 12 hex digits (lengths in bytes, as Go counts them).
pub(super) fn uuid_problem(text: &str) -> Option<String> {
    let groups: Vec<&str> = text.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    if groups.len() != lengths.len() {
        return Some(format!("must have {} elements", lengths.len()));
    }
    for (index, (group, length)) in groups.iter().zip(lengths).enumerate() {
        if group.len() != length {
            return Some(format!(
                "element {} must be {length} characters long",
                index + 1
            ));
        }
        if let Some(c) = group.chars().find(|c| !c.is_ascii_hexdigit()) {
            return Some(format!(
                "non-hex character {}",
                crate::engine::value::format::quote_rune(c, false)
            ));
        }
    }
    None
}

/// The JSON type name v6 gives a value: every number is a `number`.
fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// v6's `display`: strings quoted, other primitives as Go's `%v` prints them.
fn display(v: &Json) -> String {
    match v {
        Json::String(s) => quote(s),
        Json::Number(n) => n
            .as_i64()
            .map(|i| i.to_string())
            .unwrap_or_else(|| format_g(n.as_f64().unwrap_or_default(), false)),
        Json::Null => "<nil>".to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Array(_) | Json::Object(_) => "value".to_string(),
    }
}

/// v6's `quote`: Go's `%q` in single quotes, `'` escaped and `"` not.
fn quote(s: &str) -> String {
    // As v6 does it: the replacements run over the closing quote too, so a text ending in a
    // backslash keeps it single.
    let replaced = go_quote(s).replace("\\\"", "\"").replace('\'', "\\'");
    format!("'{}'", &replaced[1..replaced.len() - 1])
}

/// A float as golang.org/x/text's English printer prints `%v`: digits grouped by threes,
/// and numbers Go would print with an exponent as `1.5×10⁰⁶`.
fn localized_float(f: f64) -> String {
    let text = format_g(f, false);
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = match exponent.as_bytes().first() {
                Some(b'-') => ("⁻", &exponent[1..]),
                Some(b'+') => ("", &exponent[1..]),
                _ => ("", exponent),
            };
            let digits = format!("{digits:0>2}");
            let superscript: String = digits
                .chars()
                .map(|c| match c {
                    '0' => '⁰',
                    '1' => '¹',
                    '2' => '²',
                    '3' => '³',
                    '4' => '⁴',
                    '5' => '⁵',
                    '6' => '⁶',
                    '7' => '⁷',
                    '8' => '⁸',
                    _ => '⁹',
                })
                .collect();
            format!("{mantissa}×10{sign}{superscript}")
        }
        None => grouped(&text),
    }
}

/// `digits` (an optionally signed decimal) with its integer part grouped by threes.
fn grouped(digits: &str) -> String {
    let (sign, rest) = match digits.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", digits),
    };
    let (integer, fraction) = match rest.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (rest, None),
    };
    let mut out = String::from(sign);
    for (index, c) in integer.chars().enumerate() {
        if index > 0 && (integer.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(fraction) = fraction {
        out.push('.');
        out.push_str(fraction);
    }
    out
}

/// The segments of a JSON pointer, as escaped in it (an empty member name is a segment).
fn segments(pointer: &str) -> Vec<&str> {
    pointer.split('/').skip(1).collect()
}

/// A member name as a JSON pointer segment.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn pointer(segments: &[&str]) -> String {
    segments.iter().map(|s| format!("/{s}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_the_english_printer_prints_them() {
        let cases = [
            (70000.0, "70,000"),
            (-70000.0, "-70,000"),
            (65535.5, "65,535.5"),
            (100000.25, "100,000.25"),
            (123456.0, "123,456"),
            (1234567.5, "1.2345675×10⁰⁶"),
            (1e6, "1×10⁰⁶"),
            (1e21, "1×10²¹"),
            (1e100, "1×10¹⁰⁰"),
            (0.000001, "1×10⁻⁰⁶"),
            (-0.00001, "-1×10⁻⁰⁵"),
            (0.0001, "0.0001"),
            (0.5, "0.5"),
            (0.0, "0"),
        ];
        for (f, want) in cases {
            assert_eq!(localized_float(f), want, "{f}");
        }
        assert_eq!(grouped("1044"), "1,044");
        assert_eq!(grouped("100"), "100");
    }

    #[test]
    fn quotes_escape_single_quotes_but_not_double_ones() {
        assert_eq!(quote("A'b"), r"'A\'b'");
        assert_eq!(quote("say \"hi\"\n"), r#"'say "hi"\n'"#);
        assert_eq!(quote("a\\"), r"'a\'");
    }

    #[test]
    fn equal_items_are_found_by_value_first_duplicate_first() {
        let items = serde_json::json!([1, {"a": [1, 2]}, 3, {"a": [1, 2.0]}, 1]);
        assert_eq!(equal_items(&items), Some((1, 3)));
        assert_eq!(equal_items(&serde_json::json!([0, -0.0])), Some((0, 1)));
        assert_eq!(equal_items(&serde_json::json!([1, "1", [1]])), None);
    }
}
