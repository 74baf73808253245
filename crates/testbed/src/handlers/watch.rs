//! watch: a stream of ADDED/MODIFIED/DELETED events from a resourceVersion, with
//! selectors, bookmarks, timeouts and 410 Gone for revisions outside the window.

use super::options::parse_rv_param;
use super::render::object_json;
use super::{Ctx, Filter};
use crate::resources::ResourceDef;
use crate::server::reply::Reply;
use crate::status::{ApiError, Cause};
use crate::store::{Event, EventType, Stored};
use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

/// kube-apiserver's default watch length when the client gives no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
/// How often a watch that allows bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
/// A bookmark is also sent this long before the watch times out.
const BOOKMARK_BEFORE_END: Duration = Duration::from_secs(2);

/// What one watch stream delivers.
struct Watcher {
    res: Arc<ResourceDef>,
    ns: Option<String>,
    filter: Filter,
    bookmarks: bool,
    tx: mpsc::Sender<Bytes>,
    /// The newest revision this watcher has seen (bookmarks report it).
    seen_rv: u64,
}

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
    let timeout = req
        .param("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let bookmarks = matches!(req.param("allowWatchBookmarks"), Some("true" | "1"));
    let ns = ctx.path.namespace.clone();
    let store = &ctx.cluster.store;
    let (tx, rx) = mpsc::channel(256);
    let mut w = Watcher {
        res: ctx.res.clone(),
        ns: ns.clone(),
        filter,
        bookmarks,
        tx,
        seen_rv: 0,
    };
    let (initial, past, live) = match rv {
        None | Some(0) => {
            let (items, at, live) = store.snapshot_and_subscribe(ctx.key(), ns.as_deref());
            w.seen_rv = at;
            (items, Vec::new(), live)
        }
        Some(rv) => match store.watch_from(ctx.key(), rv) {
            Ok((past, live)) => {
                w.seen_rv = rv;
                (Vec::new(), past, live)
            }
            Err(too_old) => {
                let status = ApiError::expired(format!(
                    "too old resource version: {rv} ({})",
                    too_old.oldest
                ))
                .to_status();
                let _ =
                    w.tx.try_send(line("ERROR", &Bytes::from(status.to_string())));
                return Ok(Reply::Stream(rx));
            }
        },
    };
    let epoch = ctx.cluster.faults.watch_epoch();
    tokio::spawn(async move {
        w.run(initial, past, live, timeout, epoch).await;
    });
    Ok(Reply::Stream(rx))
}

fn line(kind: &str, object: &Bytes) -> Bytes {
    crate::store::watch_line(kind, object)
}

impl Watcher {
    async fn run(
        &mut self,
        initial: Vec<Arc<Stored>>,
        past: Vec<Arc<Event>>,
        mut live: broadcast::Receiver<Arc<Event>>,
        timeout: Duration,
        mut epoch: tokio::sync::watch::Receiver<u64>,
    ) {
        for obj in initial.iter().filter(|o| self.filter.matches(o)) {
            if !self.send(EventType::Added.as_str(), obj).await {
                return;
            }
        }
        for ev in &past {
            if !self.deliver(ev).await {
                return;
            }
        }
        let end = Instant::now() + timeout;
        // Both timers live across iterations: made anew in the loop, each change would
        // register and cancel a timer for every watcher.
        let deadline = tokio::time::sleep_until(end);
        tokio::pin!(deadline);
        let next_bookmark = tokio::time::sleep_until(self.next_bookmark(Instant::now(), end));
        tokio::pin!(next_bookmark);
        epoch.mark_unchanged();
        loop {
            tokio::select! {
                ev = live.recv() => match ev {
                    Ok(ev) => {
                        if !self.deliver_with_waiting(ev, &mut live).await {
                            return;
                        }
                    }
                    // A watcher that fell behind ends; the client re-watches from its last
                    // revision like after any dropped watch.
                    Err(_) => return,
                },
                _ = &mut next_bookmark, if self.bookmarks => {
                    if !self.bookmark().await {
                        return;
                    }
                    next_bookmark.as_mut().reset(self.next_bookmark(Instant::now(), end));
                }
                _ = &mut deadline => return,
                _ = epoch.changed() => return,
                _ = self.tx.closed() => return,
            }
        }
    }

    /// Delivers `first` and the changes already waiting behind it, so a burst of writes costs
    /// one pass through the watch loop rather than one per change; false when the watch ends
    /// (client gone, or the watcher fell behind the broadcast buffer).
    async fn deliver_with_waiting(
        &mut self,
        first: Arc<Event>,
        live: &mut broadcast::Receiver<Arc<Event>>,
    ) -> bool {
        let mut next = first;
        loop {
            if next.rv() > self.seen_rv && !self.deliver(&next).await {
                return false;
            }
            next = match live.try_recv() {
                Ok(ev) => ev,
                Err(broadcast::error::TryRecvError::Empty) => return true,
                Err(_) => return false,
            };
        }
    }

    fn next_bookmark(&self, now: Instant, end: Instant) -> Instant {
        let before_end = end.checked_sub(BOOKMARK_BEFORE_END).unwrap_or(now);
        let regular = now + BOOKMARK_EVERY;
        if before_end > now {
            regular.min(before_end)
        } else {
            regular.min(end)
        }
    }

    fn in_scope(&self, obj: &Stored) -> bool {
        self.ns.as_deref().is_none_or(|ns| obj.namespace == ns)
    }

    /// Sends what one change means to this watcher; false when the client is gone.
    async fn deliver(&mut self, ev: &Event) -> bool {
        self.seen_rv = self.seen_rv.max(ev.rv());
        if *ev.storage_key != *self.res.storage_key || !self.in_scope(&ev.object) {
            return true;
        }
        let now = self.filter.matches(&ev.object);
        let before = ev.prev.as_ref().is_some_and(|p| self.filter.matches(p));
        match ev.kind {
            EventType::Added if now => self.send_as_is(ev).await,
            EventType::Deleted if before || now => self.send_as_is(ev).await,
            EventType::Modified => match (before, now) {
                (true, true) => self.send_as_is(ev).await,
                (false, true) => self.send("ADDED", &ev.object).await,
                // An object that stops matching leaves with its old state at the new revision.
                (true, false) => match &ev.prev {
                    Some(prev) => self.send("DELETED", &Arc::new(prev.with_rv(ev.rv()))).await,
                    None => true,
                },
                (false, false) => true,
            },
            _ => true,
        }
    }

    /// Sends the change with its own type, sharing the encoded line when no conversion is due.
    async fn send_as_is(&self, ev: &Event) -> bool {
        if super::render::converts(&self.res, &ev.object) {
            return self.send(ev.kind.as_str(), &ev.object).await;
        }
        self.tx.send(ev.watch_line().clone()).await.is_ok()
    }

    async fn send(&self, kind: &str, obj: &Arc<Stored>) -> bool {
        self.tx
            .send(line(kind, &object_json(&self.res, obj)))
            .await
            .is_ok()
    }

    async fn bookmark(&self) -> bool {
        let obj = json!({
            "kind": self.res.kind,
            "apiVersion": self.res.api_version(),
            "metadata": {"resourceVersion": self.seen_rv.to_string(), "creationTimestamp": Value::Null}
        });
        self.tx
            .send(line("BOOKMARK", &Bytes::from(obj.to_string())))
            .await
            .is_ok()
    }
}
