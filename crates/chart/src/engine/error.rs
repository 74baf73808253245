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

#[derive(Clone, Debug)]
struct Inner {
    kind: ErrorKind,
    /// The message up to the nested error (the whole message when there is none).
    head: String,
    location: Option<Location>,
    template: Option<String>,
    context: Option<String>,
    /// This level's own failure text after `at <…>: ` (before any nested error).
    own_detail: String,
    /// Whether the failure wraps an error a function returned (Go's `error calling X: %w`
    /// with a plain error), which Helm cannot trace and prints as Go's message.
    wraps_function_error: bool,
    cause: Option<Error>,
}

impl Drop for Inner {
    /// Unlinks the cause chain iteratively: a chain thousands of includes deep would otherwise
    /// be dropped recursively and overflow the stack.
    fn drop(&mut self) {
        let mut next = self.cause.take();
        while let Some(error) = next {
            next = match Arc::try_unwrap(error.0) {
                Ok(mut inner) => inner.cause.take(),
                Err(_) => None,
            };
        }
    }
}

/// A parse or execution error. `Display` prints Go's (and so Helm's) one-line message;
/// [`Error::render`] adds the offending source line with a marker.
///
/// A nested error (from `include` or `tpl`) is kept as the cause and printed after this
/// level's text, so deep nesting costs memory in proportion to its depth, not its square.
#[derive(Clone, Debug)]
pub struct Error(Arc<Inner>);

impl Error {
    /// A parse error: `template: FILE:LINE: MESSAGE`.
    pub fn parse(file: &str, line: usize, message: String) -> Error {
        Error(Arc::new(Inner {
            kind: ErrorKind::Parse,
            head: format!("template: {file}:{line}: {message}"),
            location: Some(Location {
                file: file.to_string(),
                line,
                column: None,
                source_line: String::new(),
            }),
            template: None,
            context: None,
            own_detail: message,
            wraps_function_error: false,
            cause: None,
        }))
    }

    /// An execution error at an action:
    /// `template: FILE:LINE:COL: executing "NAME" at <CONTEXT>: DETAIL` where the detail is
    /// `own_detail` followed by the nested error, if any.
    pub fn exec(
        location: Location,
        template: &str,
        context: String,
        own_detail: String,
        cause: Option<Error>,
    ) -> Error {
        let column = location.column.unwrap_or(0);
        let head = format!(
            "template: {}:{}:{column}: executing {} at <{context}>: {own_detail}",
            location.file,
            location.line,
            crate::engine::value::format::quote(template)
        );
        Error(Arc::new(Inner {
            kind: ErrorKind::Exec,
            head,
            location: Some(location),
            template: Some(template.to_string()),
            context: Some(context),
            own_detail,
            wraps_function_error: false,
            cause,
        }))
    }

    /// The same execution error, marked as wrapping an error a template function returned.
    pub fn wrapping_function_error(self) -> Error {
        let mut inner = Arc::unwrap_or_clone(self.0);
        inner.wraps_function_error = true;
        Error(Arc::new(inner))
    }

    /// An error outside any action, with Go's message as given.
    pub fn other(message: String) -> Error {
        Error(Arc::new(Inner {
            kind: ErrorKind::Other,
            own_detail: message.clone(),
            head: message,
            location: None,
            template: None,
            context: None,
            wraps_function_error: false,
            cause: None,
        }))
    }

    /// An error whose message is `prefix` followed by `cause`'s (Helm wraps `tpl` errors so).
    pub fn wrap(prefix: String, cause: Error) -> Error {
        Error(Arc::new(Inner {
            kind: ErrorKind::Other,
            own_detail: prefix.clone(),
            head: prefix,
            location: None,
            template: None,
            context: None,
            wraps_function_error: false,
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

    /// This level's failure after the location and context, without the nested error's
    /// message (e.g. `error calling include: `).
    pub fn own_detail(&self) -> &str {
        &self.0.own_detail
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

    /// The message Helm v4.1.4 prints for this error: `parse error at (FILE:LINE): MESSAGE` for
    /// parse errors, `execution error at (FILE:LINE:COL): MESSAGE` when a `required` or `fail`
    /// message is inside, the multi-line [`Error::trace`] when every level is a template
    /// failure Helm can take apart, otherwise Go's one-line message (a function's own error,
    /// `tpl`'s wrapping, `include` recursion).
    pub fn helm_message(&self) -> String {
        match self.kind() {
            ErrorKind::Parse => {
                let message = self.to_string();
                let tokens: Vec<&str> = message.split(": ").collect();
                match (tokens.get(1), tokens.last()) {
                    (Some(location), Some(last)) if tokens.len() > 2 => {
                        format!("parse error at ({location}): {last}")
                    }
                    _ => message.clone(),
                }
            }
            ErrorKind::Exec => {
                let full = self.to_string();
                let location = full.split(": ").nth(1).unwrap_or("");
                match marked_message(&full) {
                    Some(message) => format!("execution error at ({location}): {message}"),
                    None if self.traceable() => self.trace(),
                    None => full.clone(),
                }
            }
            ErrorKind::Other => self.to_string(),
        }
    }

    /// How many errors the chain holds (this one and its nested causes).
    pub fn depth(&self) -> usize {
        std::iter::successors(Some(self), |e| e.cause()).count()
    }

    /// Whether Helm can show this chain as a trace: template failures all the way down,
    /// optionally ending in Go's "no template associated" error.
    fn traceable(&self) -> bool {
        std::iter::successors(Some(self), |e| e.cause()).all(|level| match level.kind() {
            ErrorKind::Exec => !level.0.wraps_function_error,
            ErrorKind::Other => {
                level.cause().is_none() && level.0.head.starts_with("template: no template ")
            }
            ErrorKind::Parse => false,
        })
    }

    /// A multi-line trace of nested template errors, as Helm v4 prints them: per template its
    /// location, the failing action, then the failure indented; innermost last.
    pub fn trace(&self) -> String {
        let mut lines = Vec::new();
        let mut current = Some(self);
        while let Some(error) = current {
            let own = error.own_detail().trim_end().to_string();
            match (error.kind(), error.location()) {
                (ErrorKind::Exec, Some(location)) => {
                    lines.push(format!(
                        "{}:{}:{}",
                        location.file,
                        location.line,
                        location.column.unwrap_or(0)
                    ));
                    lines.push(format!(
                        "  executing {} at <{}>:",
                        crate::engine::value::format::quote(error.template().unwrap_or("")),
                        error.context().unwrap_or("")
                    ));
                    lines.push(format!("    {own}"));
                }
                _ => lines.push(own),
            }
            current = error.cause();
        }
        lines.join("\n")
    }

    /// A report for people: the one-line message, then the line of the innermost failure
    /// with a marker under the failing action.
    pub fn render(&self) -> String {
        let mut out = self.to_string();
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
        let mut level = self;
        loop {
            f.write_str(&level.0.head)?;
            match level.cause() {
                Some(cause) => level = cause,
                None => return Ok(()),
            }
        }
    }
}

impl std::error::Error for Error {}

/// The mark a function puts before a message that [`Error::helm_message`] shows without the
/// template error around it (Helm's `required` and `fail` use it).
pub const MESSAGE_START: &str = "HELM_ERR_START";
/// The end mark of such a message.
pub const MESSAGE_END: &str = "HELM_ERR_END";

/// The text between the [`MESSAGE_START`] and [`MESSAGE_END`] marks, if present.
fn marked_message(message: &str) -> Option<&str> {
    let start = message.find(MESSAGE_START)? + MESSAGE_START.len();
    let end = message.rfind(MESSAGE_END)?;
    message.get(start..end)
}
