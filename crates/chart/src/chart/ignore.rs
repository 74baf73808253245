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
    negate: bool,
    must_dir: bool,
    kind: RuleKind,
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
        let path: Vec<char> = path.chars().collect();
        let base_start = path.iter().rposition(|&c| c == '/').map_or(0, |i| i + 1);
        let base = &path[base_start..];
        for rule in &self.rules {
            let hit = rule.matches(&path, base);
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
