//! watch: a stream of ADDED/MODIFIED/DELETED events from a resourceVersion, with
//! selectors, bookmarks, timeouts and 410 Gone for revisions outside the window.

use super::metadata;
use super::negotiate::{MetaVersion, Output};
use super::options::parse_rv_param;
use super::render::object_json;
use super::{Ctx, Filter};
use crate::resources::ResourceDef;
use crate::server::reply::{EventStream, Reply};
use crate::status::{ApiError, Cause};
use crate::store::{Event, EventType, Stored};
use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::{Instant, Sleep};

/// kube-apiserver's default watch length when the client gives no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// How often a watch that allows bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
/// A bookmark is also sent this long before the watch times out.
const BOOKMARK_BEFORE_END: Duration = Duration::from_secs(2);

/// GET with `watch=1`.
pub async fn watch(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let req = ctx.req;
    if matches!(req.param("sendInitialEvents"), Some("true" | "1")) {
        return Err(ApiError::invalid_options(
            "ListOptions",
            vec![Cause::new(
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
                "sendInitialEvents",
            )],
        ));
    }
    let rv = match req.param("resourceVersion").filter(|s| !s.is_empty()) {
        Some(text) => Some(parse_rv_param(text)?),
        None => None,
    };
    let filter = Filter::from_request(req, &ctx.res)?;
    ctx.accept.check_stream()?;
    let form = Form::of(ctx.accept.output);
    let timeout = req
        .param("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let bookmarks = matches!(req.param("allowWatchBookmarks"), Some("true" | "1"));
    let ns = ctx.path.namespace.clone();
    let store = &ctx.cluster.store;
    let (initial, past, live, seen_rv) = match rv {
        None | Some(0) => {
            let (items, at, live) = store.snapshot_and_subscribe(ctx.key(), ns.as_deref());
            (items, Vec::new(), live, at)
        }
        Some(rv) => match store.watch_from(ctx.key(), rv) {
            Ok((past, live)) => (Vec::new(), past, live, rv),
            Err(too_old) => {
                let status = ApiError::expired(format!(
                    "too old resource version: {rv} ({})",
                    too_old.oldest
                ))
                .to_status();
                let error = line("ERROR", &Bytes::from(status.to_string()));
                return Ok(Reply::Stream(EventStream::new(futures::stream::once(
                    async move { error },
                ))));
            }
        },
    };
    let now = Instant::now();
    let end = now + timeout;
    let w = Watcher {
        res: ctx.res.clone(),
        form,
        ns,
        filter,
        bookmarks,
        seen_rv,
        initial: initial.into_iter(),
        past: past.into_iter(),
        live,
        ended: false,
        epoch: ctx.cluster.faults.watch_epoch(),
        end,
        deadline: Box::pin(tokio::time::sleep_until(end)),
        next_bookmark: Box::pin(tokio::time::sleep_until(next_bookmark(now, end))),
        frame: Frame::default(),
    };
    Ok(Reply::Stream(EventStream::new(futures::stream::unfold(
        w,
        |mut w| async move { w.next_frame().await.map(|frame| (frame, w)) },
    ))))
}

fn line(kind: &str, object: &Bytes) -> Bytes {
    crate::store::watch_line(kind, object)
}

/// When the next bookmark is due: regularly, and once shortly before the watch ends.
fn next_bookmark(now: Instant, end: Instant) -> Instant {
    let before_end = end.checked_sub(BOOKMARK_BEFORE_END).unwrap_or(now);
    let regular = now + BOOKMARK_EVERY;
    if before_end > now {
        regular.min(before_end)
    } else {
        regular.min(end)
    }
}

/// How a watch's events carry their objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// As the resource serves them (also for `as=Table`, which the testbed does not stream).
    Object,
    /// Reduced to `PartialObjectMetadata`, bookmarks too.
    Metadata(MetaVersion),
    /// `as=PartialObjectMetadataList`: kube-apiserver cannot turn an event's object into a
    /// list, falls back to the object, which the metadata encoder cannot write either, and
    /// ends the stream. So the watch ends, without a line, at its first event.
    Unencodable,
}

impl Form {
    fn of(output: Output) -> Self {
        match output {
            Output::Object | Output::Table => Self::Object,
            Output::Metadata(version) => Self::Metadata(version),
            Output::MetadataList(_) => Self::Unencodable,
        }
    }
}

/// One watch stream: the body of the response, polled by the connection that sends it. No
/// task and no channel stand between the store's broadcast and the connection, so a change
/// wakes each watching connection once.
struct Watcher {
    res: Arc<ResourceDef>,
    form: Form,
    ns: Option<String>,
    filter: Filter,
    bookmarks: bool,
    /// The newest revision this watcher has seen (bookmarks report it).
    seen_rv: u64,
    /// The objects of a watch without a revision, sent as ADDED first.
    initial: std::vec::IntoIter<Arc<Stored>>,
    /// Retained changes after the requested revision, sent before live ones.
    past: std::vec::IntoIter<Arc<Event>>,
    live: broadcast::Receiver<Arc<Event>>,
    /// Set when the watch must end once the gathered lines are sent (it fell behind the
    /// broadcast buffer, or the store is gone).
    ended: bool,
    /// Changes when every watch must end (a simulated restart).
    epoch: tokio::sync::watch::Receiver<u64>,
    end: Instant,
    /// Both timers live as long as the watch: made anew for each frame, every change would
    /// register and cancel two timers per watcher.
    deadline: Pin<Box<Sleep>>,
    next_bookmark: Pin<Box<Sleep>>,
    /// Lines gathered for the next frame.
    frame: Frame,
}

impl Watcher {
    /// The next piece of the body: the waiting lines, or a bookmark; `None` ends the watch
    /// (timeout, simulated restart, or the watcher fell behind and must re-watch from its
    /// last revision like after any dropped watch).
    async fn next_frame(&mut self) -> Option<Bytes> {
        if self.ended {
            return None;
        }
        if let Some(frame) = self.replay() {
            return Some(frame);
        }
        if self.ended {
            return None;
        }
        loop {
            tokio::select! {
                ev = self.live.recv() => match ev {
                    Ok(ev) => {
                        self.deliver(&ev);
                        self.take_waiting();
                        if let Some(frame) = self.frame.take() {
                            return Some(frame);
                        }
                        if self.ended {
                            return None;
                        }
                    }
                    Err(_) => return None,
                },
                _ = &mut self.next_bookmark, if self.bookmarks => {
                    let reset = next_bookmark(Instant::now(), self.end);
                    self.next_bookmark.as_mut().reset(reset);
                    return self.bookmark();
                }
                _ = &mut self.deadline => return None,
                _ = self.epoch.changed() => return None,
            }
        }
    }

    /// The initial objects and retained changes still to send, up to one frame.
    fn replay(&mut self) -> Option<Bytes> {
        while !self.frame.is_full() && !self.ended {
            if let Some(obj) = self.initial.next() {
                if self.filter.matches(&obj) {
                    self.push_object(EventType::Added.as_str(), &obj);
                }
            } else if let Some(ev) = self.past.next() {
                self.deliver(&ev);
            } else {
                break;
            }
        }
        self.frame.take()
    }

    /// Gathers the changes already waiting in the broadcast, up to one frame.
    fn take_waiting(&mut self) {
        while !self.frame.is_full() && !self.ended {
            match self.live.try_recv() {
                Ok(ev) => self.deliver(&ev),
                Err(broadcast::error::TryRecvError::Empty) => return,
                Err(_) => {
                    self.ended = true;
                    return;
                }
            }
        }
    }

    fn in_scope(&self, obj: &Stored) -> bool {
        self.ns.as_deref().is_none_or(|ns| obj.namespace == ns)
    }

    /// Adds what one change means to this watcher to the frame.
    fn deliver(&mut self, ev: &Event) {
        // Retained and live changes overlap when a watch starts: each is sent once.
        if ev.rv() <= self.seen_rv {
            return;
        }
        self.seen_rv = ev.rv();
        if *ev.storage_key != *self.res.storage_key || !self.in_scope(&ev.object) {
            return;
        }
        let now = self.filter.matches(&ev.object);
        let before = ev.prev.as_ref().is_some_and(|p| self.filter.matches(p));
        match ev.kind {
            EventType::Added if now => self.push_as_is(ev),
            EventType::Deleted if before || now => self.push_as_is(ev),
            EventType::Modified => match (before, now) {
                (true, true) => self.push_as_is(ev),
                (false, true) => self.push_object("ADDED", &ev.object),
                // An object that stops matching leaves with its old state at the new revision.
                (true, false) => {
                    if let Some(prev) = &ev.prev {
                        self.push_object("DELETED", &prev.with_rv(ev.rv()));
                    }
                }
                (false, false) => {}
            },
            _ => {}
        }
    }

    /// Adds the change with its own type, sharing the encoded line when no conversion is due.
    fn push_as_is(&mut self, ev: &Event) {
        if self.form == Form::Object && !super::render::converts(&self.res, &ev.object) {
            self.frame.push(ev.watch_line());
        } else {
            self.push_object(ev.kind.as_str(), &ev.object);
        }
    }

    fn push_object(&mut self, kind: &str, obj: &Stored) {
        match self.form {
            Form::Object => self.frame.push(&line(kind, &object_json(&self.res, obj))),
            Form::Metadata(version) => self
                .frame
                .push(&line(kind, &metadata::object(obj, version))),
            Form::Unencodable => self.ended = true,
        }
    }

    /// A bookmark line, or `None` when the watch ends instead (see [`Form::Unencodable`]).
    fn bookmark(&self) -> Option<Bytes> {
        let object = match self.form {
            Form::Object => Bytes::from(
                json!({
                    "kind": self.res.kind,
                    "apiVersion": self.res.api_version(),
                    "metadata": {"resourceVersion": self.seen_rv.to_string(), "creationTimestamp": Value::Null}
                })
                .to_string(),
            ),
            Form::Metadata(version) => metadata::bookmark(self.seen_rv, version),
            Form::Unencodable => return None,
        };
        Some(line("BOOKMARK", &object))
    }
}

/// The most bytes of watch lines joined into one frame.
const MAX_FRAME: usize = 64 * 1024;

/// Watch lines gathered for one frame of the response body.
#[derive(Default)]
struct Frame {
    /// The first line, kept as it is while it is the only one.
    first: Option<Bytes>,
    /// Several lines joined. Frames are split off the front of this buffer, which is
    /// reused once the connection has written them: a frame costs no allocation of its own.
    joined: BytesMut,
    len: usize,
}

impl Frame {
    /// Adds a line shared with other watchers: it is cloned only while it is the frame's
    /// only line, since each clone and drop is an atomic count every watcher's thread touches.
    fn push(&mut self, line: &Bytes) {
        self.len += line.len();
        match self.first.take() {
            None if self.joined.is_empty() => self.first = Some(line.clone()),
            first => {
                if let Some(first) = first {
                    self.append(&first);
                }
                self.append(line);
            }
        }
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.joined.capacity() - self.joined.len() < bytes.len() {
            // Reclaims the whole buffer when every frame split off it has been written.
            self.joined.reserve(bytes.len().max(2 * MAX_FRAME));
        }
        self.joined.extend_from_slice(bytes);
    }

    fn is_full(&self) -> bool {
        self.len >= MAX_FRAME
    }

    /// The gathered lines as one piece, emptying the frame: a single line is passed on as
    /// it is (usually shared by every watcher), several as one piece, so that a frame costs
    /// one TLS record and one write instead of one per line.
    fn take(&mut self) -> Option<Bytes> {
        self.len = 0;
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        (!self.joined.is_empty()).then(|| self.joined.split().freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_pass_one_line_as_is_and_join_several() {
        let mut frame = Frame::default();
        assert!(frame.take().is_none());
        let shared = Bytes::from_static(b"a\n");
        frame.push(&shared);
        let one = frame.take().unwrap();
        assert_eq!(one.as_ptr(), shared.as_ptr(), "a single line is not copied");
        frame.push(&Bytes::from_static(b"a\n"));
        frame.push(&Bytes::from_static(b"b\n"));
        assert!(!frame.is_full());
        assert_eq!(frame.take().unwrap(), &b"a\nb\n"[..]);
        assert!(frame.take().is_none());
        frame.push(&Bytes::from(vec![b'x'; MAX_FRAME]));
        assert!(frame.is_full());
    }

    #[test]
    fn joined_frames_are_cut_from_one_buffer_reused_once_written() {
        let mut frame = Frame::default();
        let first = joined(&mut frame, b"1\n");
        let start = first.as_ptr();
        let mut end = start.wrapping_add(first.len());
        drop(first);
        loop {
            let piece = joined(&mut frame, b"2\n");
            assert_eq!(piece, &b"2\n2\n"[..]);
            if piece.as_ptr() != end {
                assert_eq!(piece.as_ptr(), start, "the written buffer is reused");
                break;
            }
            end = end.wrapping_add(piece.len());
        }
    }

    /// `line` twice, joined in `frame`.
    fn joined(frame: &mut Frame, line: &'static [u8]) -> Bytes {
        frame.push(&Bytes::from_static(line));
        frame.push(&Bytes::from_static(line));
        frame.take().expect("two lines")
    }
}
