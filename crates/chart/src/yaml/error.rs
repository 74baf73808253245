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
    /// The problem, without position or prefix.
    pub reason: String,
}

impl YamlError {
    /// An error at a known position.
    pub fn at(stage: Stage, mark: Mark, reason: &str) -> YamlError {
        YamlError {
            file: None,
            mark: Some(mark),
            stage,
            reason: reason.to_owned(),
        }
    }

    /// An error with no position (whole-document problems).
    pub fn whole(stage: Stage, reason: String) -> YamlError {
        YamlError {
            file: None,
            mark: None,
            stage,
            reason,
        }
    }

    /// The same error, naming the file it came from.
    pub fn in_file(mut self, file: &str) -> YamlError {
        self.file = Some(file.to_owned());
        self
    }

    /// The text sigs.k8s.io/yaml would return, without file or column: what Helm's
    /// `fromYaml` stores under `Error`.
    pub fn helm_message(&self) -> String {
        match self.stage {
            Stage::Syntax => match self.mark {
                Some(m) => format!(
                    "error converting YAML to JSON: yaml: line {}: {}",
                    m.line, self.reason
                ),
                None => format!("error converting YAML to JSON: yaml: {}", self.reason),
            },
            Stage::ToJson => format!("error converting YAML to JSON: {}", self.reason),
            Stage::Unmarshal => format!(
                "error unmarshaling JSON: while decoding JSON: {}",
                self.reason
            ),
        }
    }
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
