//! String interpolation (spiff's alpha feature `interpolation`): `text (( expr )) text` in a
//! string value is the expression `"text " ( expr ) " text"`. Off unless the caller enables
//! it, as in spiff, where Landscaper never enables it itself (only `SPIFF_FEATURES` does).
//! A port of spiff's `yaml/interpolation.go`, so that partial, escaped and quoted brackets
//! come out the same.

/// The dynaml expression an interpolated string stands for, or `None` when the string holds
/// no (complete, unescaped) `(( ))` part.
pub(crate) fn expression(s: &str) -> Option<String> {
    match convert(s, false) {
        Converted::Expression(e) => Some(e),
        Converted::Text(_) => None,
    }
}

/// The string with its escaped parts `((! x ))` written as `(( x ))`, for the output.
pub(crate) fn unescape(s: &str) -> Option<String> {
    match convert(s, true) {
        Converted::Text(t) if t != s => Some(t),
        _ => None,
    }
}

enum Converted {
    Text(String),
    Expression(String),
}

/// What the scan has collected so far: literal text, the expression being read, and the
/// expression built from the parts already closed.
#[derive(Default)]
struct Parts {
    text: String,
    expr: String,
    result: String,
}

fn convert(s: &str, unescape: bool) -> Converted {
    let mut parts = Parts::default();
    let (mut mask, mut quote, mut start) = (false, false, false);
    let (mut open, mut level) = (0usize, 0usize);
    let mut found = false;
    for c in s.chars() {
        if start && quote {
            match c {
                '"' => {
                    if !mask {
                        quote = false;
                    }
                    mask = false;
                }
                '\\' => mask = !mask,
                _ => mask = false,
            }
            parts.expr.push(c);
        } else if start {
            match c {
                '(' => level += 1,
                ')' if level > 0 => level -= 1,
                ')' => {
                    open += 1;
                    if open == 2 {
                        start = false;
                        open = 0;
                        found = parts.add(false, unescape) || found;
                    }
                }
                '"' => quote = true,
                _ => {}
            }
            if start {
                parts.expr.push(c);
            }
            if c != ')' {
                open = 0;
            }
        } else {
            if c == '(' {
                open += 1;
            } else if open >= 2 {
                start = true;
                parts.text.truncate(parts.text.len() - 2);
                parts.expr = c.to_string();
                open = 0;
            }
            if !start {
                parts.text.push(c);
                if c != '(' {
                    open = 0;
                }
            }
        }
    }
    if start {
        let rest = std::mem::take(&mut parts.expr);
        parts.text.push_str("((");
        parts.text.push_str(&rest);
    }
    found = parts.add(true, unescape) || found;
    if found {
        Converted::Expression(parts.result)
    } else {
        Converted::Text(parts.text)
    }
}

impl Parts {
    /// Closes an expression part (spiff's `addExpr`): the text before it becomes a string
    /// literal of the result, the expression a parenthesized operand; escaped parts stay text.
    fn add(&mut self, last: bool, unescape: bool) -> bool {
        if let Some(escaped) = self.expr.strip_prefix('!') {
            let kept = if unescape { escaped } else { &self.expr };
            self.text = format!("{}(({kept})", self.text);
            self.expr.clear();
        }
        if self.expr.is_empty() && (self.result.is_empty() || !last) {
            return false;
        }
        if !self.text.is_empty() {
            if !self.result.is_empty() {
                self.result.push(' ');
            }
            self.result
                .push_str(&serde_json::Value::String(std::mem::take(&mut self.text)).to_string());
        }
        if !self.expr.is_empty() {
            let inner = &self.expr[..self.expr.len() - 1];
            let operand = format!("( {} )", inner.trim());
            if !self.result.is_empty() {
                self.result.push(' ');
            }
            self.result.push_str(&operand);
        }
        self.expr.clear();
        self.text.clear();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// spiff's `StringToExpression`: the string as it is, or `(( expression ))`.
    fn converted(s: &str) -> String {
        match expression(s) {
            Some(e) => format!("(( {e} ))"),
            None => s.to_string(),
        }
    }

    #[test]
    fn plain_and_partial_brackets_stay_text() {
        for s in [
            "test",
            "test(",
            "test((",
            "((test)",
            "xx((test)",
            "xx((tes\"t))",
        ] {
            assert_eq!(converted(s), s);
        }
    }

    #[test]
    fn expressions_become_concatenations() {
        let cases = [
            ("(( a + b ))", "(( ( a + b ) ))"),
            (
                "start (( a + b )) end",
                "(( \"start \" ( a + b ) \" end\" ))",
            ),
            ("start (( a + b ))", "(( \"start \" ( a + b ) ))"),
            ("(( a + b )) end", "(( ( a + b ) \" end\" ))"),
            (" (( a + b )) ", "(( \" \" ( a + b ) \" \" ))"),
            (
                "start (( a )) middle (( b )) end",
                "(( \"start \" ( a ) \" middle \" ( b ) \" end\" ))",
            ),
            (
                "a start ((( a ))) end",
                "(( \"a start (\" ( a ) \") end\" ))",
            ),
            (
                "a start (( ( b ( a )) )) end",
                "(( \"a start \" ( ( b ( a )) ) \" end\" ))",
            ),
            (
                "b start (( \"))\" b )) end",
                "(( \"b start \" ( \"))\" b ) \" end\" ))",
            ),
            (
                "c start (( \"a(( x ))\" b )) end",
                "(( \"c start \" ( \"a(( x ))\" b ) \" end\" ))",
            ),
            (
                "a start \\(( a )) end",
                "(( \"a start \\\\\" ( a ) \" end\" ))",
            ),
            ("b start (\\( a )) end", "b start (\\( a )) end"),
            (
                "a start (( a \\))) end",
                "(( \"a start \" ( a \\ ) \") end\" ))",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(converted(input), expected, "{input}");
        }
    }

    #[test]
    fn escaped_parts_stay_text_and_are_unescaped_for_the_output() {
        assert_eq!(
            converted("a start ((! a \\))) end"),
            "a start ((! a \\))) end"
        );
        assert_eq!(unescape("a ((! b )) c").as_deref(), Some("a (( b )) c"));
        assert_eq!(unescape("no brackets"), None);
    }
}
