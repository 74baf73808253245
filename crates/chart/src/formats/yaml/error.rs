//! Errors of YAML reading, worded like the ones Helm prints through sigs.k8s.io/yaml.

use std::fmt;

use super::compose::Mark;

/// Which step of Helm's YAML → JSON → Go pipeline failed; it decides the message prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The YAML itself is malformed or cannot be typed (`yaml: line N: …`).
    Syntax,
    /// The typed YAML cannot become JSON (NaN, unsupported keys).
    ToJson,
    /// The JSON does not fit the requested Go type (a list where a map is needed).
    Unmarshal,
    /// A values file cannot be cut into documents (a `---` line followed by other text).
    Documents,
}

/// A YAML reading error with its position and, once known, its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// The file being read, when the caller named one.
    pub file: Option<String>,
    /// Where the problem was found (line and column from 1), when known.
    pub mark: Option<Mark>,
    /// Which step failed.
    pub stage: Stage,
    /// The problem as go-yaml words it, without position or prefix.
    pub reason: String,
    /// The line go-yaml names in its message (it differs from `mark`: parser errors name
    /// the line before, and nothing is named on the first line).
    pub go_line: Option<usize>,
}

impl YamlError {
    /// An error at a known position that go-yaml reports without a line (decoding errors).
    pub fn at(stage: Stage, mark: Mark, reason: &str) -> YamlError {
        YamlError {
            file: None,
            mark: Some(mark),
            stage,
            reason: reason.to_owned(),
            go_line: None,
        }
    }

    /// An error with no position (whole-document problems).
    pub fn whole(stage: Stage, reason: String) -> YamlError {
        YamlError {
            file: None,
            mark: None,
            stage,
            reason,
            go_line: None,
        }
    }

    /// A syntax error from the YAML scanner or parser, reworded and numbered as libyaml's
    /// error would be in go-yaml v2.
    pub fn syntax(mark: Mark, info: &str) -> YamlError {
        let (reason, parser_error) = go_problem(info);
        // go-yaml prints the 0-based line of a parser problem and the 1-based line of a
        // scanner problem, and omits the line when the problem is on the first line.
        let go_line = if mark.line > 1 {
            Some(if parser_error {
                mark.line - 1
            } else {
                mark.line
            })
        } else {
            None
        };
        YamlError {
            file: None,
            mark: Some(mark),
            stage: Stage::Syntax,
            reason,
            go_line,
        }
    }

    /// The same error, naming the file it came from.
    pub fn in_file(mut self, file: &str) -> YamlError {
        self.file = Some(file.to_owned());
        self
    }

    /// The same error, its position moved down by `lines` (for a document cut out of a file).
    pub fn shifted(mut self, lines: usize) -> YamlError {
        if let Some(m) = &mut self.mark {
            m.line += lines;
        }
        self
    }

    /// The text sigs.k8s.io/yaml would return, without file or column: what Helm's
    /// `fromYaml` stores under `Error`.
    pub fn helm_message(&self) -> String {
        match self.stage {
            Stage::Syntax => match self.go_line {
                Some(line) => format!(
                    "error converting YAML to JSON: yaml: line {line}: {}",
                    self.reason
                ),
                None => format!("error converting YAML to JSON: yaml: {}", self.reason),
            },
            Stage::ToJson => format!("error converting YAML to JSON: {}", self.reason),
            Stage::Unmarshal => format!(
                "error unmarshaling JSON: while decoding JSON: {}",
                self.reason
            ),
            Stage::Documents => self.reason.clone(),
        }
    }

    /// The text Helm's `LoadValues` returns for this error in a values file.
    pub fn values_file_message(&self) -> String {
        match self.stage {
            Stage::Documents => format!("error reading yaml document: {}", self.reason),
            _ => format!("cannot unmarshal yaml document: {}", self.helm_message()),
        }
    }
}

/// libyaml's wording of a yaml-rust2 problem, and whether libyaml raises it in the parser
/// (as opposed to the scanner).
fn go_problem(info: &str) -> (String, bool) {
    // libyaml keeps "while parsing a block mapping" as context; go-yaml prints only the problem.
    let problem = match info.split_once(", ") {
        Some((context, rest)) if context.starts_with("while ") => rest,
        _ => info,
    };
    let problem = match problem {
        p if p.starts_with("unexpected character") || p.starts_with("tabs disallowed") => {
            "found character that cannot start any token"
        }
        p if p.starts_with("invalid trailing content after") => "did not find expected key",
        p if p.starts_with("expected ',' or ']'") => "did not find expected ',' or ']'",
        p if p.starts_with("expected ',' or '}'") => "did not find expected ',' or '}'",
        // A plain line in a block mapping: libyaml was scanning a simple key and found no `:`.
        "simple key expected" | "simple key expect ':'" => "could not find expected ':'",
        // libyaml's own spelling.
        "did not find expected hexadecimal number" => "did not find expected hexdecimal number",
        p => p,
    };
    (
        problem.to_owned(),
        problem.starts_with("did not find expected"),
    )
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        match (self.stage, self.mark) {
            (Stage::Syntax, Some(m)) => write!(
                f,
                "error converting YAML to JSON: yaml: line {}, column {}: {}",
                m.line, m.column, self.reason
            ),
            (_, Some(m)) => write!(
                f,
                "{} (line {}, column {})",
                self.helm_message(),
                m.line,
                m.column
            ),
            (_, None) => f.write_str(&self.helm_message()),
        }
    }
}

impl std::error::Error for YamlError {}
