//! Template errors: Go's exact one-line messages, plus the source line with a marker for people.

use std::fmt;
use std::sync::Arc;

/// Where in a template file an error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file (Go's `ParseName`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 0-based byte column, as Go prints it (`None` for parse errors, which name a line only).
    pub column: Option<usize>,
    /// The text of that line.
    pub source_line: String,
}

impl Location {
    /// The location of byte `pos` in `text`.
    pub fn at(file: &str, text: &str, pos: usize) -> Location {
        let pos = pos.min(text.len());
        let before = &text[..pos];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        Location {
            file: file.to_string(),
            line: 1 + before.bytes().filter(|b| *b == b'\n').count(),
            column: Some(pos - line_start),
            source_line: text[line_start..line_end].to_string(),
        }
    }
}

/// What failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The template text does not parse.
    Parse,
    /// Executing a template failed at an action.
    Exec,
    /// A failure outside any action (e.g. rendering a template that does not exist).
    Other,
}

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    message: String,
    location: Option<Location>,
    template: Option<String>,
    context: Option<String>,
    detail: String,
    cause: Option<Error>,
}

/// A parse or execution error. `Display` prints Go's (and so Helm's) one-line message;
/// [`Error::render`] adds the offending source line with a marker.
#[derive(Clone, Debug)]
pub struct Error(Arc<Inner>);

impl Error {
    /// A parse error: `template: FILE:LINE: MESSAGE`.
    pub fn parse(file: &str, line: usize, message: String) -> Error {
        Error(Arc::new(Inner {
            kind: ErrorKind::Parse,
            message: format!("template: {file}:{line}: {message}"),
            location: Some(Location {
                file: file.to_string(),
                line,
                column: None,
                source_line: String::new(),
            }),
            template: None,
            context: None,
            detail: message,
            cause: None,
        }))
    }

    /// An execution error at an action:
    /// `template: FILE:LINE:COL: executing "NAME" at <CONTEXT>: DETAIL`.
    pub fn exec(
        location: Location,
        template: &str,
        context: String,
        detail: String,
        cause: Option<Error>,
    ) -> Error {
        let column = location.column.unwrap_or(0);
        let message = format!(
            "template: {}:{}:{column}: executing {} at <{context}>: {detail}",
            location.file,
            location.line,
            crate::value::format::quote(template)
        );
        Error(Arc::new(Inner {
            kind: ErrorKind::Exec,
            message,
            location: Some(location),
            template: Some(template.to_string()),
            context: Some(context),
            detail,
            cause,
        }))
    }

    /// An error outside any action, with Go's message as given.
    pub fn other(message: String) -> Error {
        Error(Arc::new(Inner {
            kind: ErrorKind::Other,
            detail: message.clone(),
            message,
            location: None,
            template: None,
            context: None,
            cause: None,
        }))
    }

    /// The same error with a different one-line message (Helm rewraps errors of `tpl`).
    pub fn wrap(message: String, cause: Error) -> Error {
        Error(Arc::new(Inner {
            kind: ErrorKind::Other,
            detail: message.clone(),
            message,
            location: None,
            template: None,
            context: None,
            cause: Some(cause),
        }))
    }

    /// What failed.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Where it failed, if known.
    pub fn location(&self) -> Option<&Location> {
        self.0.location.as_ref()
    }

    /// The template that was executing (`executing "NAME"`).
    pub fn template(&self) -> Option<&str> {
        self.0.template.as_deref()
    }

    /// The failing action as Go prints it (`<.Values.foo>` without the brackets).
    pub fn context(&self) -> Option<&str> {
        self.0.context.as_deref()
    }

    /// The message after the location and context (for a nested failure this includes the
    /// nested error's message, as in Go).
    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    /// The nested template error this one wraps (`include`, `tpl`), if any.
    pub fn cause(&self) -> Option<&Error> {
        self.0.cause.as_ref()
    }

    /// The innermost error of the chain.
    pub fn root_cause(&self) -> &Error {
        let mut error = self;
        while let Some(cause) = error.cause() {
            error = cause;
        }
        error
    }

    /// A report for people: the one-line message, then the line of the innermost failure
    /// with a marker under the failing action.
    pub fn render(&self) -> String {
        let mut out = self.0.message.clone();
        let innermost = self.root_cause();
        if let Some(location) = innermost.location()
            && !location.source_line.is_empty()
        {
            let number = location.line.to_string();
            out.push_str(&format!(
                "\n  --> {}:{}\n{number} | {}\n",
                location.file, location.line, location.source_line
            ));
            if let Some(column) = location.column {
                let indent = " ".repeat(number.len());
                let prefix: String = location
                    .source_line
                    .get(..column)
                    .unwrap_or("")
                    .chars()
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                out.push_str(&format!("{indent} | {prefix}^"));
            }
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {}
