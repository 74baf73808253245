//! Turns the YAML 1.2 event stream of `yaml-rust2` into a node tree: aliases expanded (with a
//! budget against "billion laughs" documents), nesting bounded, positions kept for errors.
//! Only the first document counts, as with go-yaml's `Unmarshal`.

use std::borrow::Cow;
use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use super::block_end;
use super::error::{Stage, YamlError};
use super::repair;

/// Deepest nesting of collections accepted; deeper input is an error, not a stack overflow.
pub const MAX_DEPTH: usize = 200;

/// Most nodes alias expansion may add before the document is refused.
const ALIAS_BUDGET: usize = 1_000_000;

/// A position in the source, 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    /// Line number, starting at 1.
    pub line: usize,
    /// Column number, starting at 1.
    pub column: usize,
}

impl From<Marker> for Mark {
    fn from(m: Marker) -> Self {
        Mark {
            line: m.line(),
            column: m.col() + 1,
        }
    }
}

/// A composed YAML node before type resolution.
#[derive(Debug, Clone)]
pub enum Node {
    /// A scalar with its text, whether it was plain, and its full tag if any.
    Scalar {
        /// The scalar's text after unescaping and folding.
        value: String,
        /// True for plain (unquoted, non-block) scalars, the only ones resolved implicitly.
        plain: bool,
        /// The full tag (`tag:yaml.org,2002:str`, `!foo`), if one was written.
        tag: Option<String>,
        /// Where the scalar starts.
        mark: Mark,
    },
    /// A sequence.
    Seq(Vec<Node>, Mark),
    /// A mapping, entries in source order.
    Map(Vec<(Node, Node)>, Mark),
}

impl Node {
    /// Where the node starts.
    pub fn mark(&self) -> Mark {
        match self {
            Node::Scalar { mark, .. } | Node::Seq(_, mark) | Node::Map(_, mark) => *mark,
        }
    }

    fn size(&self) -> usize {
        match self {
            Node::Scalar { .. } => 1,
            Node::Seq(items, _) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Node::Map(entries, _) => {
                1 + entries
                    .iter()
                    .map(|(k, v)| k.size() + v.size())
                    .sum::<usize>()
            }
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        anchor: usize,
        mark: Mark,
        height: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        anchor: usize,
        mark: Mark,
        height: usize,
    },
}

struct Anchored {
    node: Node,
    height: usize,
    size: usize,
}

struct Composer {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    root: Option<Node>,
    alias_budget: usize,
}

/// Composes the first document of `src`; `None` when the stream holds no document.
pub fn compose_first(src: &str) -> Result<Option<Node>, YamlError> {
    // libyaml skips a byte order mark at the start of a stream.
    let src = src.strip_prefix('\u{FEFF}').unwrap_or(src);
    // YAML 1.1 makes NEL a line break and libyaml reads it as LF everywhere; yaml-rust2
    // (YAML 1.2) would keep it as text. Replacing it keeps character positions.
    let mut text = if src.contains('\u{85}') {
        Cow::Owned(src.replace('\u{85}', "\n"))
    } else {
        Cow::Borrowed(src)
    };
    if let Some(mark) = first_unreadable(&text) {
        return Err(YamlError::at(
            Stage::Syntax,
            mark,
            "control characters are not allowed",
        ));
    }
    for _ in 0..MAX_REPAIRS {
        match compose_text(&text) {
            Ok(root) => return Ok(root),
            Err(Failure::Yaml(e)) => return Err(e),
            Err(Failure::Repairable { fix, at, error }) => match fix(&text, at) {
                Some(fixed) => text = Cow::Owned(fixed),
                None => return Err(error),
            },
        }
    }
    compose_text(&text).map_err(Failure::into_error)
}

/// Where the first character libyaml's reader refuses is.
fn first_unreadable(text: &str) -> Option<Mark> {
    // Printable ASCII and line breaks are the common case: skip them a byte at a time and
    // count lines and columns only for the rare refused character.
    let bad = text
        .bytes()
        .position(|b| !(b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\n' | b'\r')))
        .and_then(|from| {
            text[from..]
                .char_indices()
                .find(|(_, c)| !is_readable(*c))
                .map(|(i, _)| from + i)
        })?;
    let before = &text[..bad];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(Mark {
        line: 1 + before.bytes().filter(|b| *b == b'\n').count(),
        column: 1 + before[line_start..].chars().count(),
    })
}

/// libyaml's reader refuses C0 and C1 controls (but tab, LF, CR and NEL), DEL, U+FFFE/FFFF.
fn is_readable(c: char) -> bool {
    let v = c as u32;
    matches!(v, 0x09 | 0x0A | 0x0D | 0x85)
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || (0xE000..=0xFFFD).contains(&v)
        || v >= 0x10000
}

/// Most rewrites (see [`repair`]) tried on one document.
const MAX_REPAIRS: usize = 1000;

/// A rewrite of the text around a character index, or `None` when it does not apply.
type Fix = fn(&str, usize) -> Option<String>;

/// Why composing stopped.
enum Failure {
    /// A real error.
    Yaml(YamlError),
    /// yaml-rust2 refused something libyaml accepts; `fix` rewrites the text around
    /// character `at` so that both read it alike, or gives up.
    Repairable {
        fix: Fix,
        at: usize,
        error: YamlError,
    },
}

impl Failure {
    fn into_error(self) -> YamlError {
        match self {
            Failure::Yaml(e) | Failure::Repairable { error: e, .. } => e,
        }
    }
}

impl From<YamlError> for Failure {
    fn from(e: YamlError) -> Self {
        Failure::Yaml(e)
    }
}

fn compose_text(src: &str) -> Result<Option<Node>, Failure> {
    let source = block_end::Source::new(src);
    let mut parser = Parser::new_from_str(src);
    let mut c = Composer {
        stack: Vec::new(),
        anchors: HashMap::new(),
        root: None,
        alias_budget: ALIAS_BUDGET,
    };
    loop {
        let (event, marker) = parser.next_token().map_err(|e| {
            let error = scan_error(src, &e);
            let fix: Option<Fix> = match e.info() {
                i if i.contains("invalid indentation in quoted scalar") => {
                    Some(repair::reindent_quoted)
                }
                i if i.contains("':' must be followed by a valid YAML whitespace") => {
                    Some(repair::untab_value)
                }
                _ => None,
            };
            match fix {
                Some(fix) => Failure::Repairable {
                    fix,
                    at: e.marker().index(),
                    error,
                },
                None => Failure::Yaml(error),
            }
        })?;
        let mark = Mark::from(marker);
        match event {
            Event::StreamEnd => return Ok(c.root),
            Event::DocumentEnd if c.root.is_some() => return Ok(c.root),
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => {}
            Event::Alias(id) => c.alias(id, mark)?,
            Event::Scalar(value, style, anchor, tag) => {
                let value = match style {
                    TScalarStyle::Literal | TScalarStyle::Folded => {
                        block_end::libyaml_value(&source, value, marker.line(), marker.col())
                    }
                    _ => value,
                };
                let node = Node::Scalar {
                    value,
                    plain: style == TScalarStyle::Plain,
                    tag: tag.map(full_tag),
                    mark,
                };
                c.finish(node, anchor, 0)?;
            }
            Event::SequenceStart(anchor, _) => c.open(
                Frame::Seq {
                    items: Vec::new(),
                    anchor,
                    mark,
                    height: 1,
                },
                mark,
            )?,
            Event::MappingStart(anchor, _) => c.open(
                Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    anchor,
                    mark,
                    height: 1,
                },
                mark,
            )?,
            Event::SequenceEnd | Event::MappingEnd => c.close()?,
        }
    }
}

fn scan_error(src: &str, e: &ScanError) -> YamlError {
    if e.info().contains("unknown anchor") {
        // go-yaml names the anchor and gives no line.
        let name: String = src
            .chars()
            .skip(e.marker().index())
            .skip_while(|c| *c != '*')
            .skip(1)
            .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
            .collect();
        return YamlError::at(
            Stage::Syntax,
            (*e.marker()).into(),
            &format!("unknown anchor '{name}' referenced"),
        );
    }
    YamlError::syntax((*e.marker()).into(), e.info())
}

fn full_tag(tag: Tag) -> String {
    format!("{}{}", tag.handle, tag.suffix)
}

impl Composer {
    fn open(&mut self, frame: Frame, mark: Mark) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError::at(
                Stage::Syntax,
                mark,
                &format!("exceeded max depth of {MAX_DEPTH}"),
            ));
        }
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self) -> Result<(), YamlError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        let (node, anchor, height) = match frame {
            Frame::Seq {
                items,
                anchor,
                mark,
                height,
            } => (Node::Seq(items, mark), anchor, height),
            Frame::Map {
                entries,
                anchor,
                mark,
                height,
                ..
            } => (Node::Map(entries, mark), anchor, height),
        };
        self.finish(node, anchor, height)
    }

    fn alias(&mut self, id: usize, mark: Mark) -> Result<(), YamlError> {
        let Some(anchored) = self.anchors.get(&id) else {
            return Err(YamlError::at(
                Stage::Syntax,
                mark,
                "unknown anchor referenced",
            ));
        };
        if anchored.size > self.alias_budget {
            return Err(YamlError::at(
                Stage::Syntax,
                mark,
                "document contains excessive aliasing",
            ));
        }
        if self.stack.len() + anchored.height > MAX_DEPTH {
            return Err(YamlError::at(
                Stage::Syntax,
                mark,
                &format!("exceeded max depth of {MAX_DEPTH}"),
            ));
        }
        self.alias_budget -= anchored.size;
        let node = anchored.node.clone();
        let height = anchored.height;
        self.finish(node, 0, height)
    }

    /// Places a completed node into its parent (or as the root) and records its anchor.
    fn finish(&mut self, node: Node, anchor: usize, height: usize) -> Result<(), YamlError> {
        if anchor != 0 {
            let size = node.size();
            self.anchors.insert(
                anchor,
                Anchored {
                    node: node.clone(),
                    height,
                    size,
                },
            );
        }
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq {
                items,
                height: parent,
                ..
            }) => {
                *parent = (*parent).max(height + 1);
                items.push(node);
            }
            Some(Frame::Map {
                entries,
                key,
                height: parent,
                ..
            }) => {
                *parent = (*parent).max(height + 1);
                match key.take() {
                    None => *key = Some(node),
                    Some(k) => entries.push((k, node)),
                }
            }
        }
        Ok(())
    }
}
