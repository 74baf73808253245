//! `.helmignore` rules with Helm's matching, quirks included: a rule without `/` looks at the
//! base name only, a rule ending in `/` applies to directories only, a leading `/` anchors at
//! the chart root, and a negated rule ignores everything it does *not* match.

use super::pattern;

/// The file name Helm reads rules from, at the top of a chart folder.
pub const HELMIGNORE: &str = ".helmignore";

#[derive(Debug, Clone)]
struct Rule {
    /// The pattern as characters, split once: every file of a chart is matched against it.
    glob: Vec<char>,
    /// The pattern's shape, when it is one matched without splitting names into characters.
    shape: Shape,
    negate: bool,
    must_dir: bool,
    kind: RuleKind,
}

/// Most rules are a name (`OWNERS`) or a star and a suffix (`*.bak`): matched on the text,
/// they spare splitting every path of a chart into characters for the general matcher, which
/// was 5,400 instructions per file of kube-prometheus-stack.
#[derive(Debug, Clone)]
enum Shape {
    /// No wildcard: the name itself.
    Literal(String),
    /// `*` then no wildcard: any name without `/` ending in this.
    Suffix(String),
    /// Anything else: [`pattern::matches_or_false`].
    Glob,
}

impl Shape {
    fn of(glob: &str) -> Shape {
        let plain = |text: &str| !text.contains(['*', '?', '[', '\\']);
        match glob.strip_prefix('*') {
            _ if plain(glob) => Shape::Literal(glob.to_string()),
            Some(suffix) if plain(suffix) => Shape::Suffix(suffix.to_string()),
            _ => Shape::Glob,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum RuleKind {
    Anchored,
    Path,
    BaseName,
}

/// A parsed `.helmignore`.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// Parses the text of a `.helmignore`; errors are Helm's (`double-star (**) syntax is not
    /// supported`, `syntax error in pattern`) with the line number.
    pub fn parse(text: &str) -> Result<Rules, String> {
        let mut rules = Rules::default();
        for (number, line) in text.lines().enumerate() {
            rules
                .add(line)
                .map_err(|e| format!("{HELMIGNORE}:{}: {e}", number + 1))?;
        }
        Ok(rules)
    }

    /// Adds Helm's default rule: dot files inside `templates/` are never templates.
    pub fn add_defaults(&mut self) {
        // The default rule is well formed, so this cannot fail.
        let _ = self.add("templates/.?*");
    }

    fn add(&mut self, line: &str) -> Result<(), String> {
        let mut rule = line.trim();
        if rule.is_empty() || rule.starts_with('#') {
            return Ok(());
        }
        if rule.contains("**") {
            return Err("double-star (**) syntax is not supported".to_string());
        }
        pattern::validate(rule).map_err(|e| e.to_string())?;
        let negate = rule.starts_with('!');
        if negate {
            rule = &rule[1..];
        }
        let must_dir = rule.ends_with('/');
        if must_dir {
            rule = &rule[..rule.len() - 1];
        }
        let (kind, glob) = if let Some(anchored) = rule.strip_prefix('/') {
            (RuleKind::Anchored, anchored)
        } else if rule.contains('/') {
            (RuleKind::Path, rule)
        } else {
            (RuleKind::BaseName, rule)
        };
        self.rules.push(Rule {
            glob: glob.chars().collect(),
            shape: Shape::of(glob),
            negate,
            must_dir,
            kind,
        });
        Ok(())
    }

    /// Whether the chart-relative `path` (with `/` separators) is ignored.
    pub fn ignore(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." || path == "./" {
            return false;
        }
        let base = path.rsplit('/').next().unwrap_or(path);
        // Split into characters once, and only for a rule that needs it.
        let mut chars: Option<(Vec<char>, usize)> = None;
        for rule in &self.rules {
            let subject = match rule.kind {
                RuleKind::Anchored | RuleKind::Path => path,
                RuleKind::BaseName => base,
            };
            let hit = match &rule.shape {
                Shape::Literal(name) => subject == name,
                Shape::Suffix(suffix) => subject
                    .strip_suffix(suffix.as_str())
                    .is_some_and(|head| !head.contains('/')),
                Shape::Glob => {
                    let (path, base_start) = chars.get_or_insert_with(|| {
                        let path: Vec<char> = path.chars().collect();
                        let base_start = path.iter().rposition(|&c| c == '/').map_or(0, |i| i + 1);
                        (path, base_start)
                    });
                    rule.matches(path, &path[*base_start..])
                }
            };
            if rule.negate {
                // Helm's negation: a file that fails a negated rule is ignored outright.
                if (rule.must_dir && !is_dir) || !hit {
                    return true;
                }
                continue;
            }
            if rule.must_dir && !is_dir {
                continue;
            }
            if hit {
                return true;
            }
        }
        false
    }
}

impl Rule {
    fn matches(&self, path: &[char], base: &[char]) -> bool {
        let subject = match self.kind {
            RuleKind::Anchored | RuleKind::Path => path,
            RuleKind::BaseName => base,
        };
        pattern::matches_or_false(&self.glob, subject)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_suffixes_match_as_the_general_matcher_does() {
        let text = "OWNERS\n*.bak\n*~\n.git/\nci/\n/top.txt\ndocs/*.md\n*/x\n!keep*\nkube-*.tgz\n";
        let mut rules = Rules::parse(text).unwrap();
        rules.add_defaults();
        let mut general = rules.clone();
        for rule in &mut general.rules {
            rule.shape = Shape::Glob;
        }
        assert!(matches!(rules.rules[0].shape, Shape::Literal(_)));
        assert!(matches!(rules.rules[1].shape, Shape::Suffix(_)));
        for path in [
            "OWNERS",
            "a/OWNERS",
            "OWNERS.md",
            "x.bak",
            "a/b/x.bak",
            "x.bak/y",
            "file~",
            ".git",
            "a/.git",
            "ci",
            "top.txt",
            "a/top.txt",
            "docs/a.md",
            "docs/a/b.md",
            "a/x",
            "a/b/x",
            "keep.yaml",
            "keepme",
            "kube-1.tgz",
            "templates/.hidden",
            "templates/x.yaml",
            "x",
        ] {
            for is_dir in [false, true] {
                assert_eq!(
                    rules.ignore(path, is_dir),
                    general.ignore(path, is_dir),
                    "{path} (directory: {is_dir})"
                );
            }
        }
    }

    #[test]
    fn base_name_rules_match_at_any_depth() {
        let rules = Rules::parse("*.bak\n# comment\n\n.git/\n").unwrap();
        assert!(rules.ignore("a/b/c.bak", false));
        assert!(rules.ignore(".git", true));
        assert!(!rules.ignore(".git", false));
        assert!(!rules.ignore("values.yaml", false));
    }

    #[test]
    fn path_and_anchored_rules_match_whole_paths() {
        let rules = Rules::parse("ci/*.yaml\n/hack\n").unwrap();
        assert!(rules.ignore("ci/a.yaml", false));
        assert!(!rules.ignore("x/ci/a.yaml", false));
        assert!(rules.ignore("hack", true));
    }

    #[test]
    fn defaults_hide_dot_files_in_templates() {
        let mut rules = Rules::default();
        rules.add_defaults();
        assert!(rules.ignore("templates/.swp", false));
        assert!(!rules.ignore("templates/a.yaml", false));
    }

    #[test]
    fn negated_rules_ignore_what_they_do_not_match() {
        let rules = Rules::parse("!keep.txt\n").unwrap();
        assert!(rules.ignore("other.txt", false));
        assert!(!rules.ignore("keep.txt", false));
    }

    #[test]
    fn bad_rules_are_reported_with_their_line() {
        assert_eq!(
            Rules::parse("ok\nfoo/**/bar\n").unwrap_err(),
            ".helmignore:2: double-star (**) syntax is not supported"
        );
        assert!(
            Rules::parse("[")
                .unwrap_err()
                .contains("syntax error in pattern")
        );
    }
}
