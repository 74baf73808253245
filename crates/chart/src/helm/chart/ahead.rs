//! Template files parsed on a helper thread while the rest of their chart is read and its
//! values parsed: reading a chart folder is mostly the kernel's work, on one core, and parsing
//! the templates is the largest part of rendering them. A render takes the parsed files
//! instead of parsing them again.
//!
//! The helper parses every template file it is offered, also those of subcharts that the
//! values may disable, those a render must parse before it executes first ([`Queue`]); what a
//! render does not take is dropped with the chart. A file that does not parse is left for the
//! render, which reports the error as it always has.
//!
//! The first values schema such a load reads in a process also starts the building of its
//! meta-schema's validator on a thread of its own (`values::prepare_meta_schema`).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use bytes::Bytes;
use memchr::memmem::Finder;

use super::{same_bytes, source_text};
use crate::engine::{Engine, ParsedTemplate};

/// The parsed files by the address of their data, with the data itself: holding it keeps the
/// address from being reused by another file. Empty files, whose data holds no memory, are
/// not parsed ahead.
type Table = HashMap<usize, (Bytes, ParsedTemplate)>;

fn address(data: &Bytes) -> usize {
    data.as_ptr() as usize
}

/// A template file offered to the helper: its name in the chart folder and its contents.
type Offer = (String, Bytes);

/// Hands template files to the helper thread as they are read.
pub(crate) struct AheadParser {
    sender: Option<Sender<Offer>>,
    worker: Option<JoinHandle<Table>>,
    stop: Arc<AtomicBool>,
}

impl AheadParser {
    /// Starts the helper thread, unless the machine has one core (nothing would run beside
    /// the reading) or the thread cannot be started (the render then parses everything).
    pub(crate) fn start() -> AheadParser {
        let cores = crate::parallel::cores();
        if cores < 2 {
            return AheadParser::off();
        }
        let (sender, receiver) = channel::<Offer>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let worker = std::thread::Builder::new()
            .name("parse-ahead".into())
            .spawn(move || {
                let engine = Engine::new(crate::helm::funcs::helm_funcs());
                let mut table = Table::new();
                let mut queue = Queue::new(receiver);
                while let Some(data) = queue.next() {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Some(parsed) = engine.parse_apart(source_text(&data)) {
                        table.insert(address(&data), (data, parsed));
                    }
                }
                table
            })
            .ok();
        AheadParser {
            sender: worker.as_ref().map(|_| sender),
            worker,
            stop,
        }
    }

    /// A parser that takes no files (for a subchart archive: only the chart being loaded keeps
    /// its parsed files).
    pub(crate) fn off() -> AheadParser {
        AheadParser {
            sender: None,
            worker: None,
            stop: Arc::default(),
        }
    }

    /// Offers a file of the chart folder, named from the folder on, when the helper runs:
    /// template files of the chart and of its subchart folders are parsed, a values schema has
    /// its meta-schema's validator built (once per process), the others are ignored.
    pub(crate) fn offer(&self, name: &str, data: &Bytes) {
        let Some(sender) = &self.sender else { return };
        if data.is_empty() {
            return;
        }
        match super::load::own_path(name) {
            Some(path) if path.starts_with("templates/") => {
                // A helper that has stopped only means the render parses this file itself.
                let _ = sender.send((name.to_string(), data.clone()));
            }
            Some("values.schema.json") => crate::helm::values::prepare_meta_schema(data.clone()),
            _ => {}
        }
    }

    /// Ends the offers; the helper finishes the files it has.
    pub(crate) fn finish(mut self) -> ParsedAhead {
        self.sender = None;
        ParsedAhead(self.worker.take().map(|worker| {
            Arc::new(Mutex::new(Ahead {
                worker: Some(worker),
                stop: self.stop.clone(),
                table: Table::new(),
            }))
        }))
    }
}

impl Drop for AheadParser {
    /// A load that failed leaves the files not yet begun.
    fn drop(&mut self) {
        if self.worker.is_some() {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// The offered files in the order the helper parses them. Those that a render must parse
/// before anything executes (partials, files that may define templates) come first; those it
/// can parse late, beside the execution ([`can_be_late`]), are parsed when no other
/// file is waiting. When a render stops the helper, what it has left is then mostly files
/// the render parses late, not files it must parse before it can begin.
struct Queue {
    offers: Receiver<Offer>,
    /// Whether more files may be offered.
    open: bool,
    /// Files that can be parsed late, in the order they were offered.
    can_wait: VecDeque<Bytes>,
}

impl Queue {
    fn new(offers: Receiver<Offer>) -> Queue {
        Queue {
            offers,
            open: true,
            can_wait: VecDeque::new(),
        }
    }

    /// The next file to parse; `None` once every offered file has been taken.
    fn next(&mut self) -> Option<Bytes> {
        while self.open {
            let offered = match self.offers.try_recv() {
                Ok(offered) => offered,
                Err(TryRecvError::Empty) if !self.can_wait.is_empty() => break,
                Err(TryRecvError::Empty) => match self.offers.recv() {
                    Ok(offered) => offered,
                    Err(_) => {
                        self.open = false;
                        break;
                    }
                },
                Err(TryRecvError::Disconnected) => {
                    self.open = false;
                    break;
                }
            };
            let (name, data) = offered;
            if !can_be_late(&name, &data) {
                return Some(data);
            }
            self.can_wait.push_back(data);
        }
        self.can_wait.pop_front()
    }
}

struct Ahead {
    /// The helper, until its table has been collected.
    worker: Option<JoinHandle<Table>>,
    /// Tells the helper to leave the files it has not begun.
    stop: Arc<AtomicBool>,
    table: Table,
}

/// The template files of a loaded chart that were parsed while it loaded (shared by the
/// chart's clones; the first render takes them).
#[derive(Clone, Default)]
pub struct ParsedAhead(Option<Arc<Mutex<Ahead>>>);

impl ParsedAhead {
    /// Takes the parses of the template files whose contents are `files`, where the helper
    /// parsed them, and drops the others (those of disabled subcharts): a render takes at once
    /// all it will take, and a chart kept for later renders should not keep parse trees. The
    /// helper is stopped after the file it is parsing: the render parses those left, on all
    /// cores or beside its execution (`render::late`), sooner than the helper would alone.
    pub(crate) fn take_all(&self, files: &[&Bytes]) -> Vec<Option<ParsedTemplate>> {
        let Some(mut ahead) = self.finished(true) else {
            return Vec::new();
        };
        let mut table = std::mem::take(&mut ahead.table);
        files
            .iter()
            .map(|data| match table.get(&address(data)) {
                Some((held, _)) if same_bytes(held, data) => {
                    table.remove(&address(data)).map(|(_, parsed)| parsed)
                }
                _ => None,
            })
            .collect()
    }

    /// How many parsed files no render has taken, once the helper has parsed every file.
    #[cfg(test)]
    pub(crate) fn untaken(&self) -> usize {
        self.finished(false).map_or(0, |ahead| ahead.table.len())
    }

    /// The table, once the helper has finished with it (`stop`: early, after its current file).
    fn finished(&self, stop: bool) -> Option<MutexGuard<'_, Ahead>> {
        let mut ahead = self
            .0
            .as_ref()?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(worker) = ahead.worker.take() {
            ahead.stop.store(stop, Ordering::Relaxed);
            // A helper that panicked parsed nothing usable: the render parses every file.
            ahead.table = worker.join().unwrap_or_default();
        }
        Some(ahead)
    }
}

impl Drop for Ahead {
    /// A chart dropped before its render leaves the files the helper has not begun.
    fn drop(&mut self) {
        if self.worker.is_some() {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

impl fmt::Debug for ParsedAhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "ParsedAhead(..)"
        } else {
            "ParsedAhead(none)"
        })
    }
}

/// Whether the file `name` with `text` may be parsed after templates have executed: it is not
/// a partial (`_helpers.tpl`), and it defines no template but itself. Any text that mentions
/// `define` or `block` counts as defining, in a comment or a string too.
pub fn can_be_late(name: &str, text: &[u8]) -> bool {
    // Built once: building a searcher costs more than a search of most template files.
    static WORDS: LazyLock<[Finder<'static>; 2]> =
        LazyLock::new(|| [Finder::new("define"), Finder::new("block")]);
    let base = name.rsplit('/').next().unwrap_or(name);
    !base.starts_with('_') && WORDS.iter().all(|word| word.find(text).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_a_render_must_parse_first_are_parsed_before_those_it_can_parse_late() {
        let (sender, receiver) = channel::<Offer>();
        let offers = [
            ("c/templates/a.yaml", "a: {{ .x }}"),
            ("c/templates/_helpers.tpl", "{{ define \"h\" }}{{ end }}"),
            ("c/templates/b.yaml", "b: {{ .x }}"),
            ("c/templates/c.yaml", "{{ define \"c\" }}{{ end }}c: 1"),
        ];
        for (name, text) in offers {
            sender
                .send((name.to_string(), Bytes::from_static(text.as_bytes())))
                .unwrap();
        }
        drop(sender);
        let mut queue = Queue::new(receiver);
        let order: Vec<Bytes> = std::iter::from_fn(|| queue.next()).collect();
        let expected: Vec<&[u8]> = [1, 3, 0, 2].map(|i| offers[i].1.as_bytes()).to_vec();
        assert_eq!(order, expected);
    }

    #[test]
    fn a_file_that_can_wait_is_parsed_while_no_other_is_offered() {
        let (sender, receiver) = channel::<Offer>();
        sender
            .send(("c/templates/a.yaml".into(), Bytes::from_static(b"a")))
            .unwrap();
        let mut queue = Queue::new(receiver);
        // The sender is still open: the queue does not wait for more offers first.
        assert_eq!(queue.next().as_deref(), Some(&b"a"[..]));
        drop(sender);
        assert_eq!(queue.next(), None);
    }
}
