//! The head of a rendered document read without the full YAML reader, for documents written
//! in the plain block YAML that templates mostly render: block mappings and sequences with
//! plain-word or double-quoted keys, one-line scalars, `{}`, one-line flow sequences of
//! scalars, and block scalars (`|`, `>`).
//!
//! Reading every rendered document with the full reader (scanner, parser, node tree, typed
//! tree) was a quarter of the work of rendering a large chart, most of it on text that only
//! has to be valid: the head is a few keys near the top. This reading goes over a document
//! line by line, checks that it stays within that subset, and keeps only the entries the
//! head is made of; [`read_head`] then reads them as it reads a full tree. It gives up
//! (`None`) on anything else — flow mappings, anchors, aliases, tags, quoted or plain scalars
//! over several lines, tabs, text that is not printable ASCII, a head field given twice or
//! that is not a one-line scalar or a mapping — and on whatever it is unsure of, and the full
//! reader takes the document over. So it never accepts a document the full reader refuses,
//! nor reads another head: the tests compare the two on every document of the conformance
//! corpus and on mutations of them.

use super::head::{Head, HeadField, MetadataField, head_field, metadata_field, read_head};
use crate::formats::yaml::plain::{
    FlowItem, Key, MAX_NESTING, double_quoted, end_of_value, flow_sequence, is_dash, is_non_finite,
    is_printable_ascii, lines, plain_value, single_quoted, split_key,
};
use crate::formats::yaml::{Yaml, plain_scalar};

/// The head of `doc`, when the document is in the subset this module reads and the head is
/// valid; `None` leaves the document to the full reader.
pub(super) fn quick_head(doc: &str) -> Option<Head> {
    if !is_printable_ascii(doc) {
        return None;
    }
    let mut reader = Reader::default();
    for line in lines(doc) {
        reader.line(line)?;
    }
    reader.finish()
}

/// Which entries of a mapping the head is made of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// The document's top-level mapping: `kind`, `apiVersion`, `metadata`.
    Root,
    /// `metadata`: `name`, `annotations`.
    Metadata,
    /// `metadata.annotations`: every entry.
    Annotations,
    /// Anything else: nothing is kept.
    Other,
}

/// Where the value of one entry goes.
#[derive(Clone, Copy)]
enum Slot<'a> {
    /// Nowhere: it only has to be valid (and no NaN or infinity, which the head refuses).
    Ignore,
    /// A head field's scalar, kept under `key` in the mapping of `role`.
    Scalar(Role, &'a str),
    /// A head field's mapping (`metadata`, `annotations`), read with the role given, kept under
    /// `key` in the mapping of the first role.
    Mapping(Role, &'a str, Role),
}

/// A kept value: a scalar, or the (one) nested mapping of the next role.
enum Kept {
    Scalar(Yaml),
    Nested,
}

/// An open block collection.
#[derive(Clone, Copy)]
struct Level {
    sequence: bool,
    indent: usize,
    role: Role,
    /// A sequence at the indentation of the key it belongs to (`key:` then `- item`), which
    /// the next key at that indentation ends.
    at_key_indent: bool,
}

/// A key or dash whose value, if any, starts on a later line.
struct Pending<'a> {
    indent: usize,
    after_key: bool,
    slot: Slot<'a>,
}

/// An open block scalar.
struct BlockScalar {
    /// The indentation of the collection it is in; content lines are indented further.
    parent: usize,
    /// The indentation of its content, set by its first non-empty line.
    content: Option<usize>,
    /// The most spaces on an empty line before the content.
    leading_spaces: usize,
}

#[derive(Default)]
struct Reader<'a> {
    levels: Vec<Level>,
    started: bool,
    pending: Option<Pending<'a>>,
    block: Option<BlockScalar>,
    root: Vec<(&'a str, Kept)>,
    metadata: Vec<(&'a str, Kept)>,
    annotations: Vec<(&'a str, Kept)>,
}

impl<'a> Reader<'a> {
    fn line(&mut self, line: &'a str) -> Option<()> {
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[indent..];
        if let Some(block) = &mut self.block {
            if rest.is_empty() {
                if block.content.is_none() {
                    block.leading_spaces = block.leading_spaces.max(indent);
                }
                return Some(());
            }
            match block.content {
                Some(content) if indent >= content => return Some(()),
                None if indent > block.parent => {
                    // YAML refuses leading empty lines longer than the content's indentation.
                    if block.leading_spaces > indent {
                        return None;
                    }
                    block.content = Some(indent);
                    return Some(());
                }
                // A line between the parent's and the content's indentation.
                Some(_) if indent > block.parent => return None,
                None if block.leading_spaces > 0 => return None,
                _ => self.block = None,
            }
        }
        if rest.is_empty() || rest.starts_with('#') {
            return Some(());
        }
        if indent == 0
            && (rest.starts_with("---") || rest.starts_with("...") || rest.starts_with('%'))
        {
            return None;
        }
        let dash = is_dash(rest);
        if let Some(pending) = self.pending.take() {
            let nested = indent > pending.indent;
            // `key:` with `{}` or `[…]` on the next line, as `toYaml` of an empty map prints.
            if nested && rest.starts_with(['{', '[']) {
                return self.value(pending.indent, pending.slot, rest);
            }
            if nested || (indent == pending.indent && pending.after_key && dash) {
                let role = self.open(pending.slot, dash)?;
                self.push(Level {
                    sequence: dash,
                    indent,
                    role,
                    at_key_indent: !nested,
                })?;
                return self.entry(indent, rest, dash);
            }
            self.empty(pending.slot)?;
        }
        while let Some(top) = self.levels.last() {
            if top.indent > indent || (top.at_key_indent && top.indent == indent && !dash) {
                self.levels.pop();
            } else {
                break;
            }
        }
        match self.levels.last() {
            None if !self.started && !dash => {
                self.started = true;
                self.push(Level {
                    sequence: false,
                    indent,
                    role: Role::Root,
                    at_key_indent: false,
                })?;
            }
            Some(top) if top.indent == indent => {}
            _ => return None,
        }
        self.entry(indent, rest, dash)
    }

    fn push(&mut self, level: Level) -> Option<()> {
        if self.levels.len() >= MAX_NESTING {
            return None;
        }
        self.levels.push(level);
        Some(())
    }

    /// One entry of the innermost collection, which is at `indent`.
    fn entry(&mut self, indent: usize, rest: &'a str, dash: bool) -> Option<()> {
        let top = *self.levels.last()?;
        if !top.sequence {
            if dash {
                return None;
            }
            let (key, value) = split_key(rest)?;
            return self.key_value(indent, top.role, key, value);
        }
        if !dash {
            return None;
        }
        let content = rest[1..].trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            self.pending = Some(Pending {
                indent,
                after_key: false,
                slot: Slot::Ignore,
            });
            return Some(());
        }
        if is_dash(content) {
            return None;
        }
        if let Some((key, value)) = split_key(content) {
            // A mapping that starts on the dash's line (`- name: x`), its keys at this column.
            let column = indent + rest.len() - content.len();
            self.push(Level {
                sequence: false,
                indent: column,
                role: Role::Other,
                at_key_indent: false,
            })?;
            return self.key_value(column, Role::Other, key, value);
        }
        self.value(indent, Slot::Ignore, content)
    }

    fn key_value(&mut self, indent: usize, role: Role, key: Key<'a>, value: &'a str) -> Option<()> {
        let key = key.text()?;
        let slot = self.slot(role, key)?;
        if value.is_empty() || value.starts_with('#') {
            self.pending = Some(Pending {
                indent,
                after_key: true,
                slot,
            });
            return Some(());
        }
        self.value(indent, slot, value)
    }

    /// Where the value of `key` in a mapping of `role` goes. A head field given twice (or a
    /// key twice among the annotations) is left to the full reader, which knows which wins.
    fn slot(&self, role: Role, key: &'a str) -> Option<Slot<'a>> {
        match role {
            Role::Root => {
                let Some(field) = head_field(key) else {
                    return Some(Slot::Ignore);
                };
                if self.root.iter().any(|(k, _)| head_field(k) == Some(field)) {
                    return None;
                }
                Some(match field {
                    HeadField::Metadata => Slot::Mapping(Role::Root, key, Role::Metadata),
                    HeadField::Kind | HeadField::ApiVersion => Slot::Scalar(Role::Root, key),
                })
            }
            Role::Metadata => {
                let Some(field) = metadata_field(key) else {
                    return Some(Slot::Ignore);
                };
                if self
                    .metadata
                    .iter()
                    .any(|(k, _)| metadata_field(k) == Some(field))
                {
                    return None;
                }
                Some(match field {
                    MetadataField::Annotations => {
                        Slot::Mapping(Role::Metadata, key, Role::Annotations)
                    }
                    MetadataField::Name => Slot::Scalar(Role::Metadata, key),
                })
            }
            Role::Annotations => {
                if self.annotations.iter().any(|(k, _)| *k == key) {
                    return None;
                }
                Some(Slot::Scalar(Role::Annotations, key))
            }
            Role::Other => Some(Slot::Ignore),
        }
    }

    /// A value that starts on the line of its key or dash (`text`, not empty); `owner` is the
    /// indentation of the collection the entry is in.
    fn value(&mut self, owner: usize, slot: Slot<'a>, text: &'a str) -> Option<()> {
        match text.as_bytes()[0] {
            b'|' | b'>' => {
                let chomping = text[1..].trim_start_matches(['-', '+']);
                if text.len() - chomping.len() > 2 || !chomping.bytes().all(|b| b == b' ') {
                    return None;
                }
                if !matches!(slot, Slot::Ignore) {
                    return None;
                }
                self.block = Some(BlockScalar {
                    parent: owner,
                    content: None,
                    leading_spaces: 0,
                });
                Some(())
            }
            b'"' => {
                let (inner, after, escaped) = double_quoted(text)?;
                end_of_value(after)?;
                if escaped && !matches!(slot, Slot::Ignore) {
                    return None;
                }
                self.scalar(slot, || Yaml::String(inner.to_string()))
            }
            b'\'' => {
                let (inner, after) = single_quoted(text)?;
                end_of_value(after)?;
                self.scalar(slot, || Yaml::String(inner.replace("''", "'")))
            }
            b'[' => {
                let mut finite = true;
                let after = flow_sequence(text, &mut |item| {
                    if let FlowItem::Plain(plain) = item {
                        finite &= !is_non_finite(plain);
                    }
                })?;
                end_of_value(after)?;
                (finite && matches!(slot, Slot::Ignore)).then_some(())
            }
            b'{' => {
                end_of_value(text.strip_prefix("{}")?)?;
                match slot {
                    Slot::Ignore => Some(()),
                    Slot::Mapping(role, key, _) => self.keep(role, key, Kept::Nested),
                    Slot::Scalar(..) => None,
                }
            }
            _ => {
                let text = plain_value(text)?;
                if matches!(slot, Slot::Ignore) {
                    return (!is_non_finite(text)).then_some(());
                }
                self.scalar(slot, || plain_scalar(text))
            }
        }
    }

    /// Keeps a scalar value where `slot` says; a mapping's place takes only `null`.
    fn scalar(&mut self, slot: Slot<'a>, value: impl FnOnce() -> Yaml) -> Option<()> {
        match slot {
            Slot::Ignore => Some(()),
            Slot::Scalar(role, key) => {
                let value = value();
                self.keep(role, key, Kept::Scalar(value))
            }
            Slot::Mapping(role, key, _) => match value() {
                Yaml::Null => self.keep(role, key, Kept::Scalar(Yaml::Null)),
                _ => None,
            },
        }
    }

    /// A value left empty: `null`.
    fn empty(&mut self, slot: Slot<'a>) -> Option<()> {
        self.scalar(slot, || Yaml::Null)
    }

    /// A collection opening on the line after the key or dash whose value it is; the role it
    /// is read with.
    fn open(&mut self, slot: Slot<'a>, sequence: bool) -> Option<Role> {
        match slot {
            Slot::Ignore => Some(Role::Other),
            Slot::Mapping(role, key, nested) if !sequence => {
                self.keep(role, key, Kept::Nested)?;
                Some(nested)
            }
            _ => None,
        }
    }

    /// Keeps an entry of the mapping of `role` (at most one `metadata` and one `annotations`
    /// are kept, as [`Reader::slot`] refuses a head field given twice).
    fn keep(&mut self, role: Role, key: &'a str, value: Kept) -> Option<()> {
        match role {
            Role::Root => self.root.push((key, value)),
            Role::Metadata => self.metadata.push((key, value)),
            Role::Annotations => self.annotations.push((key, value)),
            Role::Other => return None,
        }
        Some(())
    }

    fn finish(mut self) -> Option<Head> {
        if let Some(pending) = self.pending.take() {
            self.empty(pending.slot)?;
        }
        if !self.started {
            return None;
        }
        let annotations = mapping(self.annotations, None);
        let metadata = mapping(self.metadata, Some(annotations));
        let root = mapping(self.root, Some(metadata));
        read_head(&root).ok()
    }
}

/// The kept entries as a YAML mapping, the nested one (if kept) in its place.
fn mapping(entries: Vec<(&str, Kept)>, mut nested: Option<Yaml>) -> Yaml {
    Yaml::Map(
        entries
            .into_iter()
            .map(|(key, value)| {
                let value = match value {
                    Kept::Scalar(y) => y,
                    Kept::Nested => nested.take().unwrap_or(Yaml::Map(Vec::new())),
                };
                (Yaml::String(key.to_string()), value)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::yaml;
    use crate::formats::yaml::corpus::{conformance_texts, is_rendered, mutants_read};

    /// The head as the full reader reads it.
    fn full_head(doc: &str) -> Result<Head, String> {
        yaml::parse_yaml(doc)
            .and_then(|y| read_head(&y))
            .map_err(|e| e.helm_message())
    }

    /// Fails when this reading accepts `doc` and the full reader refuses it or reads another
    /// head; whether it was accepted.
    fn agrees(doc: &str) -> bool {
        let Some(quick) = quick_head(doc) else {
            return false;
        };
        assert_eq!(Ok(quick), full_head(doc), "document:\n{doc}");
        true
    }

    fn hook(kind: &str, hook: Option<&str>) -> Head {
        Head {
            kind: kind.to_string(),
            hook: hook.map(str::to_string),
        }
    }

    #[test]
    fn plain_documents_are_read_here_with_the_full_readers_head() {
        for (doc, head) in [
            (
                "# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: x\ndata:\n  k: |\n    line one\n\n      indented\n  j: 'it''s'\n",
                hook("ConfigMap", None),
            ),
            (
                "kind: Job\nmetadata:\n  annotations:\n    \"helm.sh/hook\": x\n  \"9000\": a\n",
                hook("Job", Some("x")),
            ),
            (
                "kind: R\nrules:\n- apiGroups: [\"\", apps] # core\n  verbs: ['get', \"list\"]\ndata:\n    {}\n",
                hook("R", None),
            ),
            ("record: :node:sum\nkind: Q\n", hook("Q", None)),
            (
                "kind: \"Job\"\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: pre-install,post-install # c\n    helm.sh/hook-weight: \"5\"\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        args:\n        - --x=1\n        - -v\n        env: []\n      - name: b\n        resources: {}\n",
                hook("Job", Some("pre-install,post-install")),
            ),
            ("Kind: 1\n", hook("1", None)),
            ("kind: ~\nspec: 1\n", hook("", None)),
            ("kind: .inf\n", hook("+Inf", None)),
            ("metadata: ~\nkind: Pod\n", hook("Pod", None)),
            ("metadata: {}\n", hook("", None)),
            (
                "metadata:\n  annotations:\n    helm.sh/hook: 1\n",
                hook("", Some("1")),
            ),
            (
                "metadata:\n  annotations:\n    helm.sh/hook:\n",
                hook("", Some("")),
            ),
            ("metadata:\n  annotations: ~\n", hook("", None)),
            ("list:\n- a\n- b:\n  - c\nkind: S\n", hook("S", None)),
            ("a:\n  -\n    b: 1\n  -\nkind: S\n", hook("S", None)),
        ] {
            assert_eq!(quick_head(doc), Some(head), "{doc}");
            assert!(agrees(doc));
        }
    }

    #[test]
    fn anything_outside_the_subset_is_left_to_the_full_reader() {
        for doc in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: [1, [2]]\n",
            "a: [1, 2\n",
            "a: [1,]\n",
            "a: {b: 1}\n",
            "a: b\n  c\n",
            "a: \"b\n  c\"\n",
            "a:\tb\n",
            "a: é\n",
            "? a\n: b\n",
            "<<: {a: 1}\n",
            "\"a\\\"\": 1\n",
            "'a': 1\n",
            "1: a\n",
            "true: a\n",
            "a: b: c\n",
            "a: .nan\n",
            "a:\n  b: -.inf\n",
            "- a\n",
            "just text\n",
            "# only a comment\n",
            "a: |2\n   x\n",
            "a: |\n    x\n  y\n",
            "a: |\n      \n    x\n",
            "kind:\n  - Pod\n",
            "kind: |\n  Pod\n",
            "kind: a\nkind: b\n",
            "kind: ~\nKIND: Pod\n",
            "metadata: x\n",
            "metadata:\n  annotations: []\n",
            "a: \"\\x41\"\n",
            "a: @x\n",
            "a:\n- b\n c\n",
            "a: 1\n---\nb: 2\n",
        ] {
            assert_eq!(quick_head(doc), None, "{doc}");
        }
    }

    /// Every rendered document of the conformance corpus (real charts and Helm's goldens).
    fn corpus() -> Vec<String> {
        conformance_texts()
            .into_iter()
            .filter(|(path, text)| is_rendered(path) && !text.contains("\n---"))
            .map(|(_, text)| text)
            .collect()
    }

    #[test]
    fn the_corpus_reads_the_same_and_mostly_here() {
        let docs = corpus();
        let mut quick = 0;
        for doc in &docs {
            quick += usize::from(agrees(doc));
        }
        // The charts' documents are plain block YAML but for a few (flow lists, long quoted
        // strings): if this reading stopped covering them, it would be of no use.
        assert!(
            quick * 10 >= docs.len() * 9,
            "{quick} of {} documents read here",
            docs.len()
        );
    }

    #[test]
    fn mutated_documents_are_never_read_differently() {
        let docs = corpus();
        let small = docs.iter().filter(|doc| doc.len() <= 4096);
        let (accepted, tried) =
            mutants_read(small.map(String::as_str), 0x9E37_79B9_7F4A_7C15, agrees);
        // Most mutations keep a document valid (a changed letter, a repeated line), so many
        // are read here, and each was checked against the full reader.
        assert!(
            accepted * 4 >= tried,
            "{accepted} of {tried} mutants read here"
        );
    }
}
