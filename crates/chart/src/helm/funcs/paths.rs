//! Sprig's path functions: `base`, `dir`, `clean`, `ext`, `isAbs` (Go's `path` package) and
//! their `os…` forms (Go's `path/filepath`, which on Linux, where Helm renders, follows the
//! same slash-separated rules).

use super::{FuncMap, args};
use crate::engine::value::Value;

/// Registers the path functions.
pub fn install(funcs: &mut FuncMap) {
    for (plain, os) in [("base", "osBase"), ("dir", "osDir"), ("clean", "osClean")] {
        let f: fn(&str) -> String = match plain {
            "base" => base,
            "dir" => dir,
            _ => clean,
        };
        for name in [plain, os] {
            funcs.add(name, move |a: &[Value]| {
                args::count(a, 1)?;
                Ok(Value::from(f(args::string(a, 0)?)))
            });
        }
    }
    for name in ["ext", "osExt"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 1)?;
            Ok(Value::from(ext(args::string(a, 0)?)))
        });
    }
    for name in ["isAbs", "osIsAbs"] {
        funcs.add(name, |a: &[Value]| {
            args::count(a, 1)?;
            Ok(Value::Bool(args::string(a, 0)?.starts_with('/')))
        });
    }
}

/// Go's `path.Clean`: the shortest equivalent path, by lexical processing alone.
pub fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Go's `path.Base`: the last element, trailing slashes ignored.
pub fn base(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".to_string();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Dir`: everything before the last element, cleaned.
pub fn dir(path: &str) -> String {
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    clean(&path[..cut])
}

/// Go's `path.Ext`: the suffix from the last dot of the last element.
pub fn ext(path: &str) -> String {
    for (i, c) in path.char_indices().rev() {
        match c {
            '/' => break,
            '.' => return path[i..].to_string(),
            _ => {}
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_follows_go_path_clean() {
        for (input, want) in [
            ("", "."),
            ("/foo/../foo/../bar", "/bar"),
            ("a//b/./c/..", "a/b"),
            ("../../a", "../../a"),
            ("/../a", "/a"),
            ("a/..", "."),
            ("/", "/"),
            ("a/../../b", "../b"),
        ] {
            assert_eq!(clean(input), want, "clean {input:?}");
        }
    }

    #[test]
    fn base_dir_and_ext_follow_go() {
        assert_eq!(base("foo/bar"), "bar");
        assert_eq!(base("foo/bar/"), "bar");
        assert_eq!(base("///"), "/");
        assert_eq!(base(""), ".");
        assert_eq!(dir("foo/bar/baz"), "foo/bar");
        assert_eq!(dir("baz"), ".");
        assert_eq!(dir("/baz"), "/");
        assert_eq!(ext("/foo/bar/baz.txt"), ".txt");
        assert_eq!(ext("/foo.d/bar"), "");
    }
}
