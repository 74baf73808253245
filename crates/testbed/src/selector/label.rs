//! Label selectors: the query-string syntax (`a=b,c in (d),!e`) and `metav1.LabelSelector` objects.

use serde_json::{Map, Value};

use super::SelectorError;
use super::validation::{label_value_errors, qualified_name_errors};

/// The operator of one requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `key=value` or `key==value`.
    Equals,
    /// `key!=value`; also matches objects without the label.
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)`; also matches objects without the label.
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>N` (integer comparison).
    GreaterThan,
    /// `key<N` (integer comparison).
    LessThan,
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// How the label is compared.
    pub operator: Operator,
    /// The values, sorted and without duplicates.
    pub values: Vec<String>,
}

impl Requirement {
    /// Builds a requirement after the checks of apimachinery's `NewRequirement`.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Self, SelectorError> {
        let mut errs = Vec::new();
        let key_errs = qualified_name_errors(key);
        if !key_errs.is_empty() {
            errs.push(format!(
                "key: Invalid value: {}: {}",
                go_quote(key),
                key_errs.join("; ")
            ));
        }
        let shape_error = match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                Some("for 'in', 'notin' operators, values set can't be empty")
            }
            Operator::Equals | Operator::NotEquals if values.len() != 1 => {
                Some("exact-match compatibility requires one single value")
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                Some("values set must be empty for exists and does not exist")
            }
            Operator::GreaterThan | Operator::LessThan if values.len() != 1 => {
                Some("for 'Gt', 'Lt' operators, exactly one value is required")
            }
            _ => None,
        };
        if let Some(msg) = shape_error {
            errs.push(format!(
                "values: Invalid value: {}: {msg}",
                go_string_slice(&values)
            ));
        }
        if matches!(operator, Operator::GreaterThan | Operator::LessThan) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(format!(
                        "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                        go_quote(v)
                    ));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let value_errs = label_value_errors(v);
            if !value_errs.is_empty() {
                errs.push(format!(
                    "values[{i}][{key}]: Invalid value: {}: {}",
                    go_quote(v),
                    value_errs.join("; ")
                ));
            }
        }
        match errs.len() {
            0 => Ok(Self {
                key: key.to_string(),
                operator,
                values,
            }),
            1 => Err(SelectorError::new(errs.remove(0))),
            _ => Err(SelectorError::new(format!("[{}]", errs.join(", ")))),
        }
    }

    /// Whether a label set satisfies this requirement.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.get(&self.key).and_then(Value::as_str);
        let contains = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::Equals | Operator::In => value.is_some_and(contains),
            Operator::NotEquals | Operator::NotIn => !value.is_some_and(contains),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), Some(want)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// A parsed label selector: all requirements must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    /// A `nil` LabelSelector object selects nothing, unlike an empty one.
    nothing: bool,
}

impl LabelSelector {
    /// Parses the `labelSelector` query parameter syntax.
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        let mut requirements = Parser::new(selector).parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    /// Converts a `metav1.LabelSelector` object; `null` selects nothing and `{}` everything.
    pub fn from_object(selector: &Value) -> Result<Self, SelectorError> {
        let obj = match selector {
            Value::Null => {
                return Ok(Self {
                    requirements: Vec::new(),
                    nothing: true,
                });
            }
            Value::Object(obj) => obj,
            other => {
                return Err(SelectorError::new(format!(
                    "label selector must be an object, got {other}"
                )));
            }
        };
        let mut requirements = Vec::new();
        if let Some(labels) = obj.get("matchLabels").and_then(Value::as_object) {
            for (key, value) in labels {
                let value = value.as_str().unwrap_or_default().to_string();
                requirements.push(Requirement::new(key, Operator::Equals, vec![value])?);
            }
        }
        if let Some(exprs) = obj.get("matchExpressions").and_then(Value::as_array) {
            for expr in exprs {
                requirements.push(expression_requirement(expr)?);
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self {
            requirements,
            nothing: false,
        })
    }

    #[cfg(test)]
    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether the selector matches every object.
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// Whether a label set satisfies every requirement.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    #[cfg(test)]
    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub fn matches_object(&self, object: &Value) -> bool {
        let empty = Map::new();
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.matches(labels)
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = &self.key;
        let values = self.values.join(",");
        match self.operator {
            Operator::Equals => write!(f, "{key}={values}"),
            Operator::NotEquals => write!(f, "{key}!={values}"),
            Operator::In => write!(f, "{key} in ({values})"),
            Operator::NotIn => write!(f, "{key} notin ({values})"),
            Operator::Exists => write!(f, "{key}"),
            Operator::DoesNotExist => write!(f, "!{key}"),
            Operator::GreaterThan => write!(f, "{key}>{values}"),
            Operator::LessThan => write!(f, "{key}<{values}"),
        }
    }
}

/// The canonical string form, as in a Scale's `status.selector`: `app=web,tier in (a,b)`.
impl std::fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.requirements.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

fn expression_requirement(expr: &Value) -> Result<Requirement, SelectorError> {
    let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
    let op = expr
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let operator = match op {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        _ => {
            return Err(SelectorError::new(format!(
                "{} is not a valid label selector operator",
                go_quote(op)
            )));
        }
    };
    let mut values: Vec<String> = expr
        .get("values")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    values.sort();
    values.dedup();
    Requirement::new(key, operator, values)
}

/// Quotes like Go's `%q` for the printable strings selectors contain.
pub(crate) fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Formats a string slice like Go's `%v` on `[]string` inside a `field.Invalid` value.
fn go_string_slice(values: &[String]) -> String {
    format!(
        "[]string{{{}}}",
        values
            .iter()
            .map(|v| go_quote(v))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Error,
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Splits the selector into tokens the way apimachinery's lexer does.
fn lex(input: &str) -> Vec<(Token, String)> {
    let chars: Vec<char> = input.chars().collect();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < chars.len() && is_space(chars[pos]) {
            pos += 1;
        }
        let Some(&c) = chars.get(pos) else {
            out.push((Token::End, String::new()));
            return out;
        };
        if is_special(c) {
            // The longest run of special characters that is still an operator wins.
            let mut buffer = String::new();
            let mut last: Option<(Token, String)> = None;
            while let Some(&c) = chars.get(pos) {
                if !is_special(c) {
                    break;
                }
                buffer.push(c);
                if let Some(tok) = keyword(&buffer) {
                    last = Some((tok, buffer.clone()));
                } else if last.is_some() {
                    break;
                }
                pos += 1;
            }
            match last {
                Some(item) => out.push(item),
                None => {
                    out.push((
                        Token::Error,
                        format!("error expected: keyword found '{buffer}'"),
                    ));
                    return out;
                }
            }
        } else {
            let start = pos;
            while pos < chars.len() && !is_special(chars[pos]) && !is_space(chars[pos]) {
                pos += 1;
            }
            let word: String = chars[start..pos].iter().collect();
            let tok = keyword(&word).unwrap_or(Token::Identifier);
            out.push((tok, word));
        }
    }
}

/// Whether `in` and `notin` count as plain identifiers (they do where values are expected).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Token, String)>,
    pos: usize,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

impl Parser {
    fn new(input: &str) -> Self {
        Self {
            items: lex(input),
            pos: 0,
        }
    }

    fn lookahead(&self, ctx: Context) -> (Token, String) {
        let (tok, lit) = self
            .items
            .get(self.pos)
            .cloned()
            .unwrap_or((Token::End, String::new()));
        match tok {
            Token::In | Token::NotIn if ctx == Context::Values => (Token::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn consume(&mut self, ctx: Context) -> (Token, String) {
        let item = self.lookahead(ctx);
        if self.pos < self.items.len() {
            self.pos += 1;
        }
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| {
                        SelectorError::new(format!("unable to parse requirement: {}", e.message))
                    })?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(SelectorError::new(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (key, inferred) = self.parse_key_and_infer_operator()?;
        if let Some(op) = inferred {
            return Requirement::new(&key, op, Vec::new());
        }
        let operator = self.parse_operator()?;
        let values = match operator {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, operator, values)
    }

    fn parse_key_and_infer_operator(
        &mut self,
    ) -> Result<(String, Option<Operator>), SelectorError> {
        let (mut tok, mut lit) = self.consume(Context::Values);
        let negated = tok == Token::DoesNotExist;
        if negated {
            (tok, lit) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(SelectorError::new(format!(
                "found '{lit}', expected: identifier"
            )));
        }
        let key_errs = qualified_name_errors(&lit);
        if !key_errs.is_empty() {
            return Err(SelectorError::new(format!(
                ": Invalid value: {}: {}",
                go_quote(&lit),
                key_errs.join("; ")
            )));
        }
        let (next, _) = self.lookahead(Context::Values);
        let ends = next == Token::End || next == Token::Comma;
        let op = match (negated, ends) {
            (true, _) => Some(Operator::DoesNotExist),
            (false, true) => Some(Operator::Exists),
            (false, false) => None,
        };
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<Operator, SelectorError> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals | Token::DoubleEquals => Operator::Equals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(SelectorError::new(format!(
                    "found '{lit}', expected: {BINARY_OPERATORS}"
                )));
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(SelectorError::new(format!("found '{lit}' expected: '('")));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let values = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Token::ClosedPar {
                    return Err(SelectorError::new(format!("found '{lit}', expected: ')'")));
                }
                Ok(values)
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(SelectorError::new(format!(
                "found '{lit}', expected: ',', ')' or identifier"
            ))),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, SelectorError> {
        let mut set = std::collections::BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set.into_iter().collect()),
                        _ => {
                            return Err(SelectorError::new(format!(
                                "found '{lit2}', expected: ',' or ')'"
                            )));
                        }
                    }
                }
                Token::Comma => {
                    // Empty entries around commas stand for the empty value.
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set.into_iter().collect());
                    }
                    if tok2 == Token::Comma {
                        self.consume(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => {
                    return Err(SelectorError::new(format!(
                        "found '{lit}', expected: ',', or identifier"
                    )));
                }
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::End || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(SelectorError::new(format!(
            "found '{lit}', expected: identifier"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn names_matching(selector: &str) -> Vec<&'static str> {
        // The objects of the crud-configmap scenario.
        let objects = [
            ("cm1", json!({"set": "sel", "app": "web", "env": "prod"})),
            (
                "cm-b",
                json!({"set": "sel", "app": "web", "env": "staging"}),
            ),
            ("cm-c", json!({"set": "sel", "env": "dev"})),
            ("cm-d", json!({"set": "sel"})),
        ];
        let sel = LabelSelector::parse(selector).expect("valid selector");
        objects
            .into_iter()
            .filter(|(_, l)| sel.matches(&labels(l.clone())))
            .map(|(n, _)| n)
            .collect()
    }

    #[test]
    fn operators_match_like_the_recorded_lists() {
        assert_eq!(names_matching("set=sel,env=prod"), ["cm1"]);
        assert_eq!(names_matching("set=sel,env==prod"), ["cm1"]);
        assert_eq!(
            names_matching("set=sel,env!=prod"),
            ["cm-b", "cm-c", "cm-d"]
        );
        assert_eq!(
            names_matching("set=sel,env in (prod,staging)"),
            ["cm1", "cm-b"]
        );
        assert_eq!(
            names_matching("set=sel,env notin (prod,staging)"),
            ["cm-c", "cm-d"]
        );
        assert_eq!(names_matching("set=sel,env"), ["cm1", "cm-b", "cm-c"]);
        assert_eq!(names_matching("set=sel,!env"), ["cm-d"]);
        assert_eq!(names_matching("app=web,env=staging"), ["cm-b"]);
        assert!(names_matching("env=prod,env=staging").is_empty());
        assert_eq!(names_matching("").len(), 4);
    }

    #[test]
    fn recorded_parse_errors_are_reproduced() {
        assert_eq!(
            LabelSelector::parse("env in prod").unwrap_err().message,
            "unable to parse requirement: found 'prod' expected: '('"
        );
        assert_eq!(
            LabelSelector::parse("env=a b").unwrap_err().message,
            "found 'b', expected: ',' or 'end of string'"
        );
    }

    #[test]
    fn other_parse_errors_follow_apimachinery() {
        let err = |s: &str| LabelSelector::parse(s).unwrap_err().message;
        assert_eq!(err("a,"), "found '', expected: identifier after ','");
        assert_eq!(
            err("=a"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            err("a in (x"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            err("!"),
            "unable to parse requirement: found '', expected: identifier"
        );
        assert_eq!(
            err("a=!"),
            "unable to parse requirement: found '!', expected: identifier"
        );
        assert!(err("a=b@c").starts_with("unable to parse requirement: values[0][a]: Invalid value: \"b@c\": a valid label must be"));
        assert!(err("a@b=c").starts_with(
            "unable to parse requirement: : Invalid value: \"a@b\": name part must consist"
        ));
        assert_eq!(
            err("a>x"),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
    }

    #[test]
    fn set_values_handle_empty_entries() {
        let sel = LabelSelector::parse("a in (,x)").unwrap();
        assert_eq!(sel.requirements()[0].values, vec!["", "x"]);
        let sel = LabelSelector::parse("a in ()").unwrap();
        assert_eq!(sel.requirements()[0].values, vec![""]);
        assert!(sel.matches(&labels(json!({"a": ""}))));
        let sel = LabelSelector::parse("a=").unwrap();
        assert!(sel.matches(&labels(json!({"a": ""}))));
        assert!(!sel.matches(&labels(json!({}))));
    }

    #[test]
    fn in_and_notin_are_values_after_an_operator() {
        let sel = LabelSelector::parse("a=in,b notin (notin)").unwrap();
        assert!(sel.matches(&labels(json!({"a": "in", "b": "x"}))));
        assert!(!sel.matches(&labels(json!({"a": "in", "b": "notin"}))));
    }

    #[test]
    fn greater_and_less_compare_integers() {
        let sel = LabelSelector::parse("n>5,m<3").unwrap();
        assert!(sel.matches(&labels(json!({"n": "6", "m": "2"}))));
        assert!(!sel.matches(&labels(json!({"n": "5", "m": "2"}))));
        assert!(!sel.matches(&labels(json!({"n": "x", "m": "2"}))));
        assert!(!sel.matches(&labels(json!({"m": "2"}))));
    }

    #[test]
    fn whitespace_and_special_runs_are_tokenised() {
        let sel = LabelSelector::parse("  a  ==  b , c!=d ").unwrap();
        assert_eq!(sel.requirements().len(), 2);
        assert_eq!(
            LabelSelector::parse("a=>b").unwrap_err().message,
            "unable to parse requirement: found '>', expected: identifier"
        );
        assert_eq!(
            LabelSelector::parse("a==!b").unwrap_err().message,
            "unable to parse requirement: found '!', expected: identifier"
        );
    }

    #[test]
    fn label_selector_objects_convert() {
        let sel = LabelSelector::from_object(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "legacy", "operator": "DoesNotExist"}
            ]
        }))
        .unwrap();
        assert!(sel.matches_object(&json!({"metadata": {"labels": {"app": "web", "tier": "b"}}})));
        assert!(!sel.matches_object(&json!({"metadata": {"labels": {"app": "web", "tier": "c"}}})));
        assert!(!sel.matches_object(
            &json!({"metadata": {"labels": {"app": "web", "tier": "a", "legacy": "1"}}})
        ));
        assert!(!sel.matches_object(&json!({"metadata": {}})));
    }

    #[test]
    fn random_selector_strings_never_panic() {
        let alphabet: Vec<char> = "ab=!(),<> inotéx/.-_\\".chars().collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..5000 {
            let mut text = String::new();
            for _ in 0..(state % 12) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            if let Ok(sel) = LabelSelector::parse(&text) {
                // Whatever parses prints back to an equivalent selector.
                assert_eq!(
                    LabelSelector::parse(&sel.to_string()).as_ref(),
                    Ok(&sel),
                    "{text:?}"
                );
            }
            let _ = super::super::FieldSelector::parse(&text);
        }
    }

    #[test]
    fn selectors_print_in_canonical_form() {
        let sel = LabelSelector::from_object(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["b", "a"]}, {"key": "x", "operator": "Exists"}]
        }))
        .unwrap();
        assert_eq!(sel.to_string(), "app=web,tier notin (a,b),x");
        let parsed = LabelSelector::parse("!z,b in (y,x),a==1,c!=2,n>3").unwrap();
        assert_eq!(parsed.to_string(), "a=1,b in (x,y),c!=2,n>3,!z");
        assert_eq!(LabelSelector::parse(&parsed.to_string()).unwrap(), parsed);
    }

    #[test]
    fn null_selects_nothing_and_empty_selects_everything() {
        let nothing = LabelSelector::from_object(&Value::Null).unwrap();
        assert!(!nothing.matches_object(&json!({"metadata": {}})));
        assert!(!nothing.is_everything());
        let all = LabelSelector::from_object(&json!({})).unwrap();
        assert!(all.matches_object(&json!({"metadata": {}})));
        assert!(all.is_everything());
    }

    #[test]
    fn bad_label_selector_objects_are_refused() {
        let err = LabelSelector::from_object(
            &json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
        )
        .unwrap_err();
        assert_eq!(err.message, "\"Gt\" is not a valid label selector operator");
        let err = LabelSelector::from_object(
            &json!({"matchExpressions": [{"key": "a", "operator": "In"}]}),
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
        );
        assert!(LabelSelector::from_object(&json!("a=b")).is_err());
    }
}
