//! Go `encoding/json` decoding into `interface{}`: every number a float64, the last of
//! duplicate keys wins, syntax errors worded as Go's scanner words them.

use crate::formats::tree::{Data, Map};

use super::JsonError;

/// Deepest nesting accepted; deeper input is an error instead of a stack overflow.
pub const MAX_DEPTH: usize = 200;

/// Parses one JSON value, rejecting trailing text as Go's `Unmarshal` does.
pub fn parse(src: &str) -> Result<Data, JsonError> {
    let mut p = Parser {
        b: src.as_bytes(),
        src,
        i: 0,
        type_error: None,
    };
    p.skip_space();
    let value = p.value(0)?;
    p.skip_space();
    if p.i < p.b.len() {
        return Err(p.invalid("after top-level value"));
    }
    // Go checks the syntax of the whole input before it reports a value it cannot store.
    match p.type_error {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

/// Reads the first JSON value of `src` as Go's `json.Decoder.Decode` does and returns it
/// with the number of bytes consumed; text after the value is left alone.
pub fn parse_prefix(src: &str) -> Result<(Data, usize), JsonError> {
    let mut p = Parser {
        b: src.as_bytes(),
        src,
        i: 0,
        type_error: None,
    };
    p.skip_space();
    if p.i == p.b.len() {
        return Err(JsonError::at("EOF".to_owned(), p.i));
    }
    let value = p.value(0).map_err(|e| {
        // The streaming decoder reports a value cut short as io.ErrUnexpectedEOF.
        if e.message == "unexpected end of JSON input" {
            JsonError::at("unexpected EOF".to_owned(), src.len())
        } else {
            e
        }
    })?;
    match p.type_error {
        Some(e) => Err(e),
        None => Ok((value, p.i)),
    }
}

struct Parser<'a> {
    b: &'a [u8],
    src: &'a str,
    i: usize,
    type_error: Option<JsonError>,
}

/// Go's `quoteChar`: the offending byte as a quoted Go character literal.
fn quote_byte(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        b'\x07' => "'\\a'".to_owned(),
        b'\x08' => "'\\b'".to_owned(),
        b'\x0c' => "'\\f'".to_owned(),
        b'\n' => "'\\n'".to_owned(),
        b'\r' => "'\\r'".to_owned(),
        b'\t' => "'\\t'".to_owned(),
        b'\x0b' => "'\\v'".to_owned(),
        b'\\' => "'\\\\'".to_owned(),
        c if c < 0x20 || c == 0x7f => format!("'\\x{c:02x}'"),
        c if (0x80..0xa1).contains(&c) || c == 0xad => format!("'\\u{c:04x}'"),
        c => format!("'{}'", char::from(c)),
    }
}

impl Parser<'_> {
    fn eof(&self) -> JsonError {
        JsonError::at("unexpected end of JSON input".to_owned(), self.b.len())
    }

    fn invalid(&self, context: &str) -> JsonError {
        match self.b.get(self.i) {
            None => self.eof(),
            Some(&c) => JsonError::at(
                format!("invalid character {} {context}", quote_byte(c)),
                self.i,
            ),
        }
    }

    fn skip_space(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Data, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::at("exceeded max depth".to_owned(), self.i));
        }
        match self.b.get(self.i) {
            None => Err(self.eof()),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Data::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Data::Bool(true)),
            Some(b'f') => self.literal("false", Data::Bool(false)),
            Some(b'n') => self.literal("null", Data::Null),
            Some(_) => Err(self.invalid("looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &str, value: Data) -> Result<Data, JsonError> {
        for (k, expected) in word.bytes().enumerate() {
            match self.b.get(self.i) {
                None => return Err(self.eof()),
                Some(&c) if c == expected => self.i += 1,
                Some(_) => {
                    let context = format!(
                        "in literal {word} (expecting {})",
                        quote_byte(word.as_bytes()[k])
                    );
                    return Err(self.invalid(&context));
                }
            }
        }
        Ok(value)
    }

    fn object(&mut self, depth: usize) -> Result<Data, JsonError> {
        self.i += 1;
        let mut map = Map::default();
        self.skip_space();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Data::Map(map));
        }
        loop {
            self.skip_space();
            if self.b.get(self.i) != Some(&b'"') {
                return Err(self.invalid("looking for beginning of object key string"));
            }
            let key = self.string()?;
            self.skip_space();
            if self.b.get(self.i) != Some(&b':') {
                return Err(self.invalid("after object key"));
            }
            self.i += 1;
            self.skip_space();
            let value = self.value(depth + 1)?;
            map.insert(key, value);
            self.skip_space();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Data::Map(map));
                }
                _ => return Err(self.invalid("after object key:value pair")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Data, JsonError> {
        self.i += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Data::List(items));
        }
        loop {
            self.skip_space();
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Data::List(items));
                }
                _ => return Err(self.invalid("after array element")),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Data, JsonError> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        match self.b.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.invalid("in numeric literal")),
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.invalid("after decimal point in numeric literal"));
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.invalid("in exponent of numeric literal"));
            }
        }
        let text = &self.src[start..self.i];
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Data::Float(f)),
            _ => {
                if self.type_error.is_none() {
                    self.type_error = Some(JsonError::at(
                        format!(
                            "json: cannot unmarshal number {text} into Go value of type float64"
                        ),
                        start,
                    ));
                }
                Ok(Data::Null)
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0u32;
        for _ in 0..4 {
            match self.b.get(self.i).and_then(|c| char::from(*c).to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    self.i += 1;
                }
                None => return Err(self.invalid("in \\u hexadecimal character escape")),
            }
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let Some(&c) = self.b.get(self.i) else {
                return Err(self.eof());
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                c if c < 0x20 => return Err(self.invalid("in string literal")),
                _ => {
                    // Copy the whole UTF-8 sequence; the input is a &str so it is valid.
                    let rest = &self.src[self.i..];
                    let ch = rest.chars().next().unwrap_or('\u{FFFD}');
                    out.push(ch);
                    self.i += ch.len_utf8();
                }
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let Some(&c) = self.b.get(self.i) else {
            return Err(self.eof());
        };
        let simple = match c {
            b'"' => Some('"'),
            b'\\' => Some('\\'),
            b'/' => Some('/'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'n' => Some('\n'),
            b'r' => Some('\r'),
            b't' => Some('\t'),
            b'u' => None,
            _ => return Err(self.invalid("in string escape code")),
        };
        self.i += 1;
        if let Some(ch) = simple {
            out.push(ch);
            return Ok(());
        }
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first)
            && self.b.get(self.i) == Some(&b'\\')
            && self.b.get(self.i + 1) == Some(&b'u')
        {
            // A high surrogate pairs with a following low one; Go checks the pair first.
            let save = self.i;
            self.i += 2;
            let second = self.hex4()?;
            if (0xDC00..0xE000).contains(&second) {
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                return Ok(());
            }
            self.i = save;
        }
        out.push(char::from_u32(first).unwrap_or('\u{FFFD}'));
        Ok(())
    }
}
