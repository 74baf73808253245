//! Sprig's `urlParse` and `urlJoin`: Go's `net/url` parsing and printing of the parts Sprig
//! exposes (scheme, userinfo, host, path, query, opaque, fragment), with Go's escaping rules
//! and error messages.

use super::{FuncError, FuncMap, FuncResult, args};
use crate::engine::value::format::quote;
use crate::engine::value::{Map, Value};

/// Registers the URL functions.
pub fn install(funcs: &mut FuncMap) {
    funcs.add("urlParse", |a: &[Value]| {
        args::count(a, 1)?;
        let url = parse(args::string(a, 0)?)
            .map_err(|e| FuncError::failed(format!("unable to parse url: {e}")))?;
        Ok(url.to_dict())
    });
    funcs.add("urlJoin", url_join);
}

/// Which part of a URL a byte is escaped for (Go's `encoding` modes).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    UserPassword,
    Fragment,
}

/// The parsed parts of a URL, as Go's `url.URL` holds them (unescaped).
#[derive(Default)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    raw_query: String,
    force_query: bool,
    fragment: String,
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Mode::Host
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => {
            return match mode {
                Mode::Path => c == b'?',
                Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
                Mode::Fragment => false,
                Mode::Host => true,
            };
        }
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

/// Go's `url.escape`.
fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Go's `url.unescape`: `%XX` sequences decoded; a bad sequence or a host character that
/// needs escaping is Go's error.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
            let Some(hex) = hex else {
                let end = (i + 3).min(bytes.len());
                return Err(format!(
                    "invalid URL escape {}",
                    quote(&String::from_utf8_lossy(&bytes[i..end]))
                ));
            };
            let value = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or("00"), 16)
                .unwrap_or_default();
            if mode == Mode::Host && value < 0x80 && &s[i..i + 3] != "%25" {
                return Err(format!("invalid URL escape {}", quote(&s[i..i + 3])));
            }
            out.push(value);
            i += 3;
            continue;
        }
        if mode == Mode::Host && c < 0x80 && should_escape(c, mode) {
            return Err(format!(
                "invalid character {} in host name",
                quote(&s[i..i + 1])
            ));
        }
        out.push(c);
        i += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Go's `url.Parse`; errors read `parse "URL": REASON`.
fn parse(raw: &str) -> Result<Url, String> {
    let (rest, fragment) = match raw.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (raw, None),
    };
    let wrap = |reason: String| format!("parse {}: {reason}", quote(rest));
    let mut url = parse_without_fragment(rest).map_err(wrap)?;
    if let Some(fragment) = fragment {
        url.fragment = unescape(fragment, Mode::Fragment)
            .map_err(|reason| format!("parse {}: {reason}", quote(raw)))?;
    }
    Ok(url)
}

fn parse_without_fragment(raw: &str) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".to_string();
        return Ok(url);
    }
    let (scheme, mut rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".to_string());
        }
    }
    if (!url.scheme.is_empty() || !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        parse_authority(&mut url, authority)?;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    Ok(url)
}

/// Go's `getScheme`: letters, then letters, digits, `+`, `-` or `.`, up to a colon.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_string()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
    }
}

fn parse_authority(url: &mut Url, authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    url.host = parse_host(host)?;
    let Some(userinfo) = userinfo else {
        return Ok(());
    };
    let valid = userinfo
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c));
    if !valid {
        return Err("net/url: invalid userinfo".to_string());
    }
    url.user = Some(match userinfo.split_once(':') {
        None => (unescape(userinfo, Mode::UserPassword)?, None),
        Some((name, password)) => (
            unescape(name, Mode::UserPassword)?,
            Some(unescape(password, Mode::UserPassword)?),
        ),
    });
    Ok(())
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err("missing ']' in host".to_string());
        };
        let port = &host[close + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", quote(port)));
        }
        return unescape(host, Mode::Host);
    }
    if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", quote(port)));
        }
    }
    unescape(host, Mode::Host)
}

impl Url {
    /// Go's `URL.Hostname`: the host without port and IPv6 brackets.
    fn hostname(&self) -> &str {
        let mut host = self.host.as_str();
        if let Some(colon) = host.rfind(':')
            && valid_optional_port(&host[colon..])
        {
            host = &host[..colon];
        }
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
    }

    /// Go's `Userinfo.String`.
    fn userinfo(&self) -> String {
        match &self.user {
            None => String::new(),
            Some((name, password)) => {
                let mut s = escape(name, Mode::UserPassword);
                if let Some(password) = password {
                    s.push(':');
                    s.push_str(&escape(password, Mode::UserPassword));
                }
                s
            }
        }
    }

    fn to_dict(&self) -> Value {
        let dict = Map::new();
        dict.insert("scheme", Value::from(self.scheme.as_str()));
        dict.insert("host", Value::from(self.host.as_str()));
        dict.insert("hostname", Value::from(self.hostname()));
        dict.insert("path", Value::from(self.path.as_str()));
        dict.insert("query", Value::from(self.raw_query.as_str()));
        dict.insert("opaque", Value::from(self.opaque.as_str()));
        dict.insert("fragment", Value::from(self.fragment.as_str()));
        dict.insert("userinfo", Value::from(self.userinfo()));
        Value::Map(dict)
    }

    /// Go's `URL.String`.
    fn to_go_string(&self) -> String {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        if !self.opaque.is_empty() {
            out.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    out.push_str("//");
                }
                if self.user.is_some() {
                    out.push_str(&self.userinfo());
                    out.push('@');
                }
                out.push_str(&escape(&self.host, Mode::Host));
            }
            let path = if self.path == "*" {
                "*".to_string()
            } else {
                escape(&self.path, Mode::Path)
            };
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            if out.is_empty() && path.split('/').next().unwrap_or("").contains(':') {
                out.push_str("./");
            }
            out.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            out.push_str(&escape(&self.fragment, Mode::Fragment));
        }
        out
    }
}

/// Sprig's `dictGetStr`: a missing key is `""`, a value that is not a string Go's panic.
fn dict_str(dict: &Map, key: &str) -> Result<String, FuncError> {
    match dict.get(key) {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(Value::Nil) => Err(FuncError::failed(
            "runtime error: invalid memory address or nil pointer dereference",
        )),
        Some(other) => Err(FuncError::failed(format!(
            "unable to parse {key} key, must be of type string, but {} found",
            other.type_name()
        ))),
    }
}

fn url_join(a: &[Value]) -> FuncResult {
    args::count(a, 1)?;
    let empty = Map::new();
    let dict = match &a[0] {
        Value::Nil => &empty,
        _ => args::map(a, 0)?,
    };
    let mut url = Url {
        scheme: dict_str(dict, "scheme")?,
        host: dict_str(dict, "host")?,
        path: dict_str(dict, "path")?,
        raw_query: dict_str(dict, "query")?,
        opaque: dict_str(dict, "opaque")?,
        fragment: dict_str(dict, "fragment")?,
        ..Url::default()
    };
    let userinfo = dict_str(dict, "userinfo")?;
    if !userinfo.is_empty() {
        let carrier = parse(&format!("proto://{userinfo}@host"))
            .map_err(|e| FuncError::failed(format!("unable to parse userinfo in dict: {e}")))?;
        url.user = carrier.user;
    }
    Ok(Value::from(url.to_go_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_splits_like_net_url() {
        let url = parse("proto://user:passwor%20d@host:80/pa%20th?key=val%20ue#frag").unwrap();
        assert_eq!(url.scheme, "proto");
        assert_eq!(url.userinfo(), "user:passwor%20d");
        assert_eq!(url.host, "host:80");
        assert_eq!(url.hostname(), "host");
        assert_eq!(url.path, "/pa th");
        assert_eq!(url.raw_query, "key=val%20ue");
        assert_eq!(url.fragment, "frag");
        let opaque = parse("mailto:someone@example.com").unwrap();
        assert_eq!(opaque.opaque, "someone@example.com");
        assert_eq!(parse("something").unwrap().path, "something");
    }

    #[test]
    fn parse_errors_read_as_go() {
        assert_eq!(
            parse("://x").err().unwrap(),
            "parse \"://x\": missing protocol scheme"
        );
        assert_eq!(
            parse("http://host:8x/").err().unwrap(),
            "parse \"http://host:8x/\": invalid port \":8x\" after host"
        );
        assert_eq!(
            parse("a%zzb").err().unwrap(),
            "parse \"a%zzb\": invalid URL escape \"%zz\""
        );
    }

    #[test]
    fn url_string_escapes_each_part() {
        let url = Url {
            scheme: "proto".into(),
            host: "host:80".into(),
            path: "/pa th".into(),
            raw_query: "key=val%20ue".into(),
            fragment: "a b".into(),
            ..Url::default()
        };
        assert_eq!(
            url.to_go_string(),
            "proto://host:80/pa%20th?key=val%20ue#a%20b"
        );
        let relative = Url {
            path: "a:b".into(),
            ..Url::default()
        };
        assert_eq!(relative.to_go_string(), "./a:b");
    }
}
