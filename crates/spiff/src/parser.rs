//! The dynaml parser: a recursive descent over spiff's PEG grammar (dynaml.peg), with the
//! same operator levels and the same whitespace rules (binary operators need blanks on both
//! sides, so `a-b` is a name and `a -1` a concatenation).

use std::rc::Rc;

use crate::ast::{
    Arg, BinOp, Expr, LambdaDef, LambdaOrExpr, MappingKind, Marker, MergeSpec, Param, Qualifier,
    Step,
};

/// How deeply expressions may nest before the parser gives up (keeps the stack bounded).
const MAX_NESTING: usize = 200;

/// Parses the text between `((` and `))`.
pub(crate) fn parse(src: &str) -> Result<Expr, String> {
    let mut p = Parser {
        src: src.chars().collect(),
        pos: 0,
        depth: 0,
        furthest: 0,
    };
    let expr = p.dynaml();
    match expr {
        Some(e) if p.pos == p.src.len() => Ok(e),
        _ => {
            if p.depth_exceeded() {
                return Err(format!("expression nests deeper than {MAX_NESTING} levels"));
            }
            let at = p.furthest.max(p.pos).min(p.src.len());
            let rest: String = p.src[at..].iter().take(20).collect();
            Err(format!(
                "parse error near column {}: unexpected {}",
                at + 1,
                if rest.is_empty() {
                    "end of expression".to_string()
                } else {
                    format!("{rest:?}")
                }
            ))
        }
    }
}

struct Parser {
    src: Vec<char>,
    pos: usize,
    depth: usize,
    furthest: usize,
}

fn is_key_start(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

impl Parser {
    fn depth_exceeded(&self) -> bool {
        self.depth > MAX_NESTING
    }

    fn peek(&self) -> Option<char> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<char> {
        self.src.get(self.pos + off).copied()
    }

    fn looking_at(&self, s: &str) -> bool {
        (self.pos..)
            .zip(s.chars())
            .all(|(i, c)| self.src.get(i) == Some(&c))
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.looking_at(s) {
            self.pos += s.chars().count();
            self.furthest = self.furthest.max(self.pos);
            true
        } else {
            false
        }
    }

    /// A keyword: the word not followed by a name character.
    fn eat_word(&mut self, w: &str) -> bool {
        if self.looking_at(w) {
            let after = self.src.get(self.pos + w.len()).copied();
            if after.is_none_or(|c| !is_key_char(c)) {
                self.pos += w.len();
                return true;
            }
        }
        false
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    fn req_ws(&mut self) -> bool {
        let start = self.pos;
        self.ws();
        self.pos > start
    }

    /// Runs `f`, restoring the position when it fails.
    fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let start = self.pos;
        let r = f(self);
        if r.is_none() {
            self.pos = start;
        }
        r
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return None;
        }
        let r = stacker::maybe_grow(32 * 1024, 1024 * 1024, || f(self));
        self.depth -= 1;
        r
    }

    fn dynaml(&mut self) -> Option<Expr> {
        let start = self.pos;
        self.ws();
        if self.eat_word("prefer") && self.req_ws() {
            let e = self.expression()?;
            return Some(Expr::Prefer(Box::new(e)));
        }
        self.pos = start;
        if let Some(m) = self.attempt(Self::marked) {
            if self.pos == self.src.len() {
                return Some(m);
            }
            self.pos = start;
        }
        let e = self.expression()?;
        Some(e)
    }

    fn marker(&mut self) -> Option<Marker> {
        if !self.eat("&") {
            return None;
        }
        for (w, m) in [
            ("template", Marker::Template),
            ("temporary", Marker::Temporary),
            ("local", Marker::Local),
            ("inject", Marker::Inject),
            ("state", Marker::State),
            ("default", Marker::Default),
            ("dynamic", Marker::Dynamic),
        ] {
            if self.eat(w) {
                return Some(m);
            }
        }
        None
    }

    fn marked(&mut self) -> Option<Expr> {
        self.ws();
        let mut markers = vec![self.marker()?];
        loop {
            let save = self.pos;
            if self.req_ws()
                && let Some(m) = self.marker()
            {
                markers.push(m);
                continue;
            }
            self.pos = save;
            break;
        }
        self.ws();
        let expr = if self.peek() == Some('(') {
            Some(Box::new(self.grouped()?))
        } else {
            None
        };
        self.ws();
        Some(Expr::Marked { markers, expr })
    }

    /// Expression <- ( Scoped / LambdaExpr / Level7 ) ws
    fn expression(&mut self) -> Option<Expr> {
        self.nested(|p| {
            let e = if let Some(e) = p.attempt(Self::scoped) {
                e
            } else if let Some(l) = p.attempt(Self::lambda_expr) {
                Expr::Lambda(l)
            } else {
                p.level7()?
            };
            p.ws();
            Some(e)
        })
    }

    fn scoped(&mut self) -> Option<Expr> {
        self.ws();
        if !self.eat("(") {
            return None;
        }
        self.ws();
        let assignments = if self.peek() == Some(')') {
            Vec::new()
        } else {
            self.assignments()?
        };
        if !self.eat(")") {
            return None;
        }
        self.ws();
        let e = self.expression()?;
        Some(Expr::Scoped(assignments, Box::new(e)))
    }

    fn assignments(&mut self) -> Option<Vec<(Expr, Expr)>> {
        let mut out = Vec::new();
        loop {
            let k = self.expression()?;
            if !self.eat("=") {
                return None;
            }
            let v = self.expression()?;
            out.push((k, v));
            if !self.eat(",") {
                return Some(out);
            }
        }
    }

    fn lambda_expr(&mut self) -> Option<Rc<LambdaDef>> {
        self.ws();
        let start = self.pos;
        if !self.eat("|") {
            return None;
        }
        self.ws();
        let mut params = Vec::new();
        let mut varargs = false;
        if self.peek() != Some('|') {
            loop {
                self.ws();
                let name = self.name()?;
                self.ws();
                let default = if self.eat("=") {
                    Some(self.expression()?)
                } else {
                    None
                };
                if params.iter().any(|p: &Param| p.default.is_some()) && default.is_none() {
                    return None;
                }
                params.push(Param { name, default });
                if self.eat("...") {
                    self.ws();
                    varargs = true;
                    break;
                }
                if !self.eat(",") {
                    break;
                }
            }
        }
        if !self.eat("|") {
            return None;
        }
        self.ws();
        if !self.eat("->") {
            return None;
        }
        let body = self.expression()?;
        let source: String = self.src[start..self.pos].iter().collect();
        Some(Rc::new(LambdaDef {
            params,
            varargs,
            body,
            source: source.trim_end().to_string(),
        }))
    }

    fn name(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(is_key_start) {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.src[start..self.pos].iter().collect())
    }

    fn level7(&mut self) -> Option<Expr> {
        self.ws();
        let mut e = self.level6()?;
        loop {
            let save = self.pos;
            if self.req_ws() {
                let valid = if self.eat("||") {
                    Some(false)
                } else if self.eat("//") {
                    Some(true)
                } else {
                    None
                };
                if let Some(valid) = valid
                    && self.req_ws()
                    && let Some(b) = self.level6()
                {
                    e = Expr::Or {
                        a: Box::new(e),
                        b: Box::new(b),
                        valid,
                    };
                    continue;
                }
            }
            self.pos = save;
            return Some(e);
        }
    }

    fn level6(&mut self) -> Option<Expr> {
        let c = self.level5()?;
        let save = self.pos;
        self.ws();
        if self.eat("?")
            && let Some(a) = self.expression()
            && self.eat(":")
            && let Some(b) = self.expression()
        {
            return Some(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        self.pos = save;
        Some(c)
    }

    fn level5(&mut self) -> Option<Expr> {
        let mut e = self.level4()?;
        loop {
            let save = self.pos;
            if self.req_ws()
                && let Some(b) = self.level4()
            {
                e = Expr::Concat(Box::new(e), Box::new(b));
                continue;
            }
            self.pos = save;
            return Some(e);
        }
    }

    fn binary_level(
        &mut self,
        ops: &[(&str, BinOp)],
        next: fn(&mut Self) -> Option<Expr>,
    ) -> Option<Expr> {
        let mut e = next(self)?;
        'outer: loop {
            let save = self.pos;
            if self.req_ws() {
                for (sym, op) in ops {
                    let before = self.pos;
                    if self.eat(sym)
                        && self.req_ws()
                        && let Some(b) = next(self)
                    {
                        e = Expr::Binary(*op, Box::new(e), Box::new(b));
                        continue 'outer;
                    }
                    self.pos = before;
                }
            }
            self.pos = save;
            return Some(e);
        }
    }

    fn level4(&mut self) -> Option<Expr> {
        self.binary_level(
            &[("-or", BinOp::LogOr), ("-and", BinOp::LogAnd)],
            Self::level3,
        )
    }

    fn level3(&mut self) -> Option<Expr> {
        self.binary_level(
            &[
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                (">", BinOp::Gt),
                ("<", BinOp::Lt),
            ],
            Self::level2,
        )
    }

    fn level2(&mut self) -> Option<Expr> {
        self.binary_level(&[("+", BinOp::Add), ("-", BinOp::Sub)], Self::level1)
    }

    fn level1(&mut self) -> Option<Expr> {
        self.binary_level(
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Mod)],
            Self::level0,
        )
    }

    fn level0(&mut self) -> Option<Expr> {
        self.nested(|p| {
            if let Some(ip) = p.attempt(Self::ip) {
                return Some(Expr::Str(ip));
            }
            if p.peek() == Some('"') {
                return p.string().map(Expr::Str);
            }
            if let Some(n) = p.attempt(Self::number) {
                return Some(n);
            }
            if p.eat_word("true") {
                return Some(Expr::Bool(true));
            }
            if p.eat_word("false") {
                return Some(Expr::Bool(false));
            }
            if p.eat("~~") {
                return Some(Expr::Undefined);
            }
            if p.eat_word("nil") || p.eat("~") {
                return Some(Expr::Nil);
            }
            if p.eat("$") {
                return p.name().map(Expr::Str);
            }
            if p.eat("!") {
                p.ws();
                return p.level0().map(|e| Expr::Not(Box::new(e)));
            }
            if p.eat("*") {
                return p.level0().map(|e| Expr::Substitution(Box::new(e)));
            }
            if let Some(m) = p.attempt(Self::merge) {
                return Some(m);
            }
            if p.eat_word("auto") {
                return Some(Expr::Auto);
            }
            if let Some(l) = p.attempt(Self::lambda) {
                return Some(l);
            }
            p.chained()
        })
    }

    fn ip(&mut self) -> Option<String> {
        let start = self.pos;
        for i in 0..4 {
            if i > 0 && !self.eat(".") {
                return None;
            }
            let s = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == s {
                return None;
            }
        }
        Some(self.src[start..self.pos].iter().collect())
    }

    fn digits(&mut self, underscores: bool) -> bool {
        let start = self.pos;
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return false;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || (underscores && c == '_'))
        {
            self.pos += 1;
        }
        self.pos > start
    }

    fn number(&mut self) -> Option<Expr> {
        let start = self.pos;
        self.eat("-");
        if !self.digits(true) {
            return None;
        }
        let mut float = false;
        if self.peek() == Some('.') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
            self.digits(false);
            float = true;
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let save = self.pos;
            self.pos += 1;
            self.eat("-");
            if self.digits(false) {
                float = true;
            } else {
                self.pos = save;
            }
        }
        if self.looking_at("::") || self.peek().is_some_and(is_key_char) {
            return None;
        }
        let text: String = self.src[start..self.pos]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        if float {
            text.parse().ok().map(Expr::Float)
        } else {
            text.parse().ok().map(Expr::Int)
        }
    }

    fn string(&mut self) -> Option<String> {
        if !self.eat("\"") {
            return None;
        }
        let mut out = String::new();
        loop {
            let c = self.peek()?;
            self.pos += 1;
            match c {
                '"' => return Some(out),
                '\\' => {
                    let e = self.peek()?;
                    self.pos += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        '/' => out.push('/'),
                        '\\' => out.push('\\'),
                        '"' => out.push('"'),
                        'u' => {
                            let hex: String =
                                self.src.get(self.pos..self.pos + 4)?.iter().collect();
                            self.pos += 4;
                            let code = u32::from_str_radix(&hex, 16).ok()?;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn merge(&mut self) -> Option<Expr> {
        if !self.eat_word("merge") || self.peek() == Some('(') {
            return None;
        }
        let mut spec = MergeSpec {
            replace: false,
            required: false,
            on: None,
            redirect: None,
        };
        loop {
            let save = self.pos;
            if !self.req_ws() {
                break;
            }
            if self.eat_word("replace") {
                spec.replace = true;
            } else if self.eat_word("required") {
                spec.required = true;
            } else if self.eat_word("on") && self.req_ws() {
                match self.name() {
                    Some(n) => spec.on = Some(n),
                    None => {
                        self.pos = save;
                        break;
                    }
                }
            } else if spec.redirect.is_none() && !spec.required {
                if self.eat_word("none") {
                    spec.redirect = Some(Vec::new());
                } else if let Some(Expr::Ref {
                    absolute: false,
                    path,
                }) = self.attempt(Self::reference)
                {
                    spec.redirect = Some(path);
                } else {
                    self.pos = save;
                    break;
                }
            } else {
                self.pos = save;
                break;
            }
        }
        Some(Expr::Merge(spec))
    }

    fn lambda(&mut self) -> Option<Expr> {
        if !self.eat_word("lambda") {
            return None;
        }
        if let Some(l) = self.attempt(Self::lambda_expr) {
            return Some(Expr::Lambda(l));
        }
        if !self.req_ws() {
            return None;
        }
        let e = self.expression()?;
        Some(Expr::LambdaRef(Box::new(e)))
    }

    fn lambda_or_expr(&mut self) -> Option<LambdaOrExpr> {
        if let Some(l) = self.attempt(Self::lambda_expr) {
            return Some(LambdaOrExpr::Lambda(l));
        }
        self.ws();
        if !self.eat("|") {
            return None;
        }
        Some(LambdaOrExpr::Expr(self.expression()?))
    }

    fn chained(&mut self) -> Option<Expr> {
        let head = self.chain_head()?;
        let quals = self.qualifiers();
        if quals.is_empty() {
            Some(head)
        } else {
            Some(Expr::Qualified(Box::new(head), quals))
        }
    }

    fn chain_head(&mut self) -> Option<Expr> {
        for (kw, kind, to_map) in [
            ("map{", MappingKind::Map, true),
            ("map[", MappingKind::Map, false),
            ("filter[", MappingKind::Select, false),
            ("filter{", MappingKind::Select, true),
            ("select{", MappingKind::Select, true),
            ("select[", MappingKind::Select, false),
        ] {
            if self.eat(kw) {
                let source = self.level7()?;
                let func = self.lambda_or_expr()?;
                if !self.eat(if to_map { "}" } else { "]" }) {
                    return None;
                }
                return Some(Expr::Mapping {
                    kind,
                    to_map,
                    source: Box::new(source),
                    func: Box::new(func),
                });
            }
        }
        if self.eat("catch[") {
            let expr = self.level7()?;
            let func = self.lambda_or_expr()?;
            if !self.eat("]") {
                return None;
            }
            return Some(Expr::Catch {
                expr: Box::new(expr),
                func: Box::new(func),
            });
        }
        if self.eat("sum[") {
            let source = self.level7()?;
            if !self.eat("|") {
                return None;
            }
            let initial = self.level7()?;
            let func = self.lambda_or_expr()?;
            if !self.eat("]") {
                return None;
            }
            return Some(Expr::Sum {
                source: Box::new(source),
                initial: Box::new(initial),
                func: Box::new(func),
            });
        }
        match self.peek()? {
            '[' => {
                if let Some(l) = self.attempt(Self::list) {
                    return Some(l);
                }
                self.range()
            }
            '{' => self.map_literal(),
            '(' => self.grouped(),
            '.' if self.peek_at(1) == Some('[') => {
                self.pos += 1;
                let idx = self.indices()?;
                Some(Expr::TopIndex(idx))
            }
            _ => self.reference(),
        }
    }

    fn list(&mut self) -> Option<Expr> {
        if !self.eat("[") {
            return None;
        }
        self.ws();
        if self.eat("]") {
            return Some(Expr::List(Vec::new()));
        }
        let items = self.expression_list()?;
        if !self.eat("]") {
            return None;
        }
        Some(Expr::List(items))
    }

    fn expression_list(&mut self) -> Option<Vec<Arg>> {
        let mut items = Vec::new();
        loop {
            let expr = self.expression()?;
            let expand = self.eat("...");
            if expand {
                self.ws();
            }
            items.push(Arg {
                name: None,
                expr,
                expand,
            });
            if !self.eat(",") {
                return Some(items);
            }
        }
    }

    fn range(&mut self) -> Option<Expr> {
        if !self.eat("[") {
            return None;
        }
        let from = self.attempt(Self::expression);
        self.ws();
        if !self.eat("..") {
            return None;
        }
        let to = self.attempt(Self::expression);
        if !self.eat("]") {
            return None;
        }
        Some(Expr::Range(from.map(Box::new), to.map(Box::new)))
    }

    fn map_literal(&mut self) -> Option<Expr> {
        if !self.eat("{") {
            return None;
        }
        self.ws();
        if self.eat("}") {
            return Some(Expr::Map(Vec::new()));
        }
        let a = self.assignments()?;
        if !self.eat("}") {
            return None;
        }
        Some(Expr::Map(a))
    }

    fn grouped(&mut self) -> Option<Expr> {
        if !self.eat("(") {
            return None;
        }
        let e = self.expression()?;
        if !self.eat(")") {
            return None;
        }
        Some(Expr::Grouped(Box::new(e)))
    }

    fn key(&mut self) -> Option<String> {
        let start = self.pos;
        if !self.peek().is_some_and(is_key_start) {
            return None;
        }
        while self.peek().is_some_and(is_key_char) {
            self.pos += 1;
        }
        if self.peek() == Some(':') && self.peek_at(1).is_some_and(is_key_start) {
            self.pos += 1;
            while self.peek().is_some_and(is_key_char) {
                self.pos += 1;
            }
        }
        Some(self.src[start..self.pos].iter().collect())
    }

    fn literal_index(&mut self) -> Option<i64> {
        self.attempt(|p| {
            if !p.eat("[") {
                return None;
            }
            let start = p.pos;
            p.eat("-");
            if !p.digits(false) {
                return None;
            }
            let text: String = p.src[start..p.pos].iter().collect();
            if !p.eat("]") {
                return None;
            }
            text.parse().ok()
        })
    }

    fn reference(&mut self) -> Option<Expr> {
        let absolute = self.eat(".");
        let first = self.key()?;
        let mut path = vec![Step::Key(first)];
        loop {
            if self.peek() == Some('.')
                && self.peek_at(1).is_some_and(is_key_start)
                && !self.looking_at("..")
            {
                self.pos += 1;
                path.push(Step::Key(self.key()?));
                continue;
            }
            let save = self.pos;
            self.eat(".");
            if let Some(i) = self.literal_index() {
                path.push(Step::Index(i));
                continue;
            }
            self.pos = save;
            break;
        }
        Some(Expr::Ref { absolute, path })
    }

    fn indices(&mut self) -> Option<Vec<Arg>> {
        if !self.eat("[") {
            return None;
        }
        self.ws();
        let items = self.expression_list()?;
        if !self.eat("]") {
            return None;
        }
        Some(items)
    }

    fn slice(&mut self) -> Option<(Option<Expr>, Option<Expr>)> {
        match self.range()? {
            Expr::Range(a, b) => Some((a.map(|e| *e), b.map(|e| *e))),
            _ => None,
        }
    }

    fn qualifiers(&mut self) -> Vec<Qualifier> {
        let mut out = Vec::new();
        while let Some(q) = self.attempt(Self::qualifier) {
            let projection = matches!(q, Qualifier::Projection(..));
            out.push(q);
            if projection {
                break;
            }
        }
        out
    }

    fn qualifier(&mut self) -> Option<Qualifier> {
        match self.peek()? {
            '(' => self.call_args().map(Qualifier::Call),
            '*' if self.peek_at(1) == Some('(') => {
                self.pos += 1;
                self.call_args().map(Qualifier::Curry)
            }
            '.' if self.peek_at(1).is_some_and(is_key_start) => {
                self.pos += 1;
                self.key().map(|k| Qualifier::Field(Step::Key(k)))
            }
            '.' | '[' => {
                self.eat(".");
                if self.peek() != Some('[') {
                    return None;
                }
                if self.eat("[*]") {
                    let rest = self.qualifiers();
                    return Some(Qualifier::Projection(None, rest));
                }
                if let Some(i) = self.literal_index() {
                    return Some(Qualifier::Field(Step::Index(i)));
                }
                if let Some(idx) = self.attempt(Self::indices) {
                    return Some(Qualifier::Index(idx));
                }
                let s = self.slice()?;
                let rest = self.qualifiers();
                if rest.is_empty() {
                    Some(Qualifier::Slice(s.0, s.1))
                } else {
                    Some(Qualifier::Projection(Some(s), rest))
                }
            }
            _ => None,
        }
    }

    fn call_args(&mut self) -> Option<Vec<Arg>> {
        if !self.eat("(") {
            return None;
        }
        self.ws();
        if self.eat(")") {
            return Some(Vec::new());
        }
        let mut args = Vec::new();
        loop {
            let named = self.attempt(|p| {
                p.ws();
                let n = p.name()?;
                p.ws();
                if !p.eat("=") || p.peek() == Some('=') {
                    return None;
                }
                p.ws();
                let e = p.expression()?;
                Some(Arg {
                    name: Some(n),
                    expr: e,
                    expand: false,
                })
            });
            let arg = match named {
                Some(a) => a,
                None => {
                    let expr = self.expression()?;
                    let expand = self.eat("...");
                    if expand {
                        self.ws();
                    }
                    Arg {
                        name: None,
                        expr,
                        expand,
                    }
                }
            };
            args.push(arg);
            if !self.eat(",") {
                break;
            }
        }
        if !self.eat(")") {
            return None;
        }
        Some(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Expr {
        parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn operators_need_blanks() {
        assert!(matches!(ok(" a-b "), Expr::Ref { .. }));
        assert!(matches!(ok(" a - b "), Expr::Binary(BinOp::Sub, ..)));
        assert!(matches!(ok(" a -1 "), Expr::Concat(..)));
        assert!(matches!(ok("1 + 2 * 3"), Expr::Binary(BinOp::Add, ..)));
    }

    #[test]
    fn forms_parse() {
        for s in [
            r#" "my-custom-image:" imports.version "#,
            " &temporary( getResource(cd, \"name\", \"x\") ) ",
            " &state ",
            " &temporary ",
            r#" map[components.components|c|->{"name"=c.component.name}] "#,
            " __ctx.OUTER[0].blueprint ",
            " tmp[0] \":\" tmp[1] ",
            " lambda |x,y=2|-> x * y ",
            " .mult(3) ",
            " x <= 0 ? 0 :x == 1 ? 1 :_(x - 2) + _( x - 1 ) ",
            " sum[list|0|s,x|->s + x] ",
            " ( \"alice\" = 25, \"bob\" = 26 ) alice + bob ",
            " [ 1 .. -1 ] ",
            " list.[1..2] ",
            " merge replace foo.bar ",
            " .func(c=3, 2) ",
            " join*(\",\") ",
            " *foo.bar ",
            " a || b // c ",
            " list.[*].name ",
            " [1, list...] ",
            " !defined(a) -and b > 1 ",
        ] {
            ok(s);
        }
    }

    #[test]
    fn errors_name_the_column() {
        let e = parse(" a + ").unwrap_err();
        assert!(e.contains("parse error"), "{e}");
        let deep = format!("{}1{}", "(".repeat(1000), ")".repeat(1000));
        assert!(parse(&deep).unwrap_err().contains("nests deeper"));
    }
}
