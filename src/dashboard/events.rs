//! The dashboard's events: one history that every page reads at its own pace, as server-sent events
//! (`event: NAME`, `data: JSON`).
//!
//! A page holds no queue of its own, only its place in the history, so a page that reads slowly costs no
//! memory. A page that falls behind, with more than [`PENDING_LIMIT`] of the events published since it
//! connected not yet taken, is closed and counted: its connection is shut, whatever hyper still holds for it.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use serde_json::Value;
use tokio::sync::Notify;

/// Events published since a page connected that it may leave untaken; one more and it is closed. The run
/// publishes about two a second (the second, the thresholds so far), so this is 8 to 16 s without reading.
pub(super) const PENDING_LIMIT: u64 = 16;

/// Every event kept and the pages reading them.
pub(super) struct Hub {
    inner: Mutex<Inner>,
    /// Per-second events kept; the others (plan, thresholds, summary, end) are few.
    keep: usize,
}

struct Inner {
    /// The events kept, each with its number; numbers only grow.
    events: VecDeque<(u64, Bytes)>,
    /// The number of the next event.
    next: u64,
    /// Per-second events among `events`.
    seconds: usize,
    /// The pages reading now, by id.
    pages: HashMap<u64, Page>,
    /// The id of the next page.
    next_page: u64,
    /// No more events will come.
    closed: bool,
    counts: PageCounts,
}

/// A page reading the events.
struct Page {
    /// The number of the next event it takes.
    cursor: u64,
    /// The number of the first event published after it connected: the ones before are its history.
    joined: u64,
    /// Its stream, waiting for an event.
    waker: Option<Waker>,
    /// Shuts its connection.
    kick: Arc<Notify>,
}

/// What became of the pages that asked for the events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageCounts {
    /// Pages that got the events.
    pub served: u64,
    /// Pages closed because they fell behind.
    pub dropped: u64,
}

impl Hub {
    pub fn new(keep: usize) -> Self {
        let inner = Inner {
            events: VecDeque::new(),
            next: 0,
            seconds: 0,
            pages: HashMap::new(),
            next_page: 0,
            closed: false,
            counts: PageCounts::default(),
        };
        Hub { inner: Mutex::new(inner), keep }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps the event and wakes every page; a page too far behind is closed.
    pub fn publish(&self, name: &str, data: &Value) {
        let event = Bytes::from(format!("event: {name}\ndata: {data}\n\n"));
        let mut inner = self.lock();
        if name == "second" {
            inner.seconds += 1;
            if inner.seconds > self.keep {
                // The oldest second goes; the first event (the plan) stays.
                if let Some(i) = inner.events.iter().position(|(_, e)| e.starts_with(b"event: second\n")) {
                    inner.events.remove(i);
                    inner.seconds -= 1;
                }
            }
        }
        let number = inner.next;
        inner.next += 1;
        inner.events.push_back((number, event));
        let next = inner.next;
        let behind: Vec<u64> = inner
            .pages
            .iter()
            .filter(|(_, p)| next - p.cursor.max(p.joined) > PENDING_LIMIT)
            .map(|(&id, _)| id)
            .collect();
        for id in behind {
            if let Some(page) = inner.pages.remove(&id) {
                page.kick.notify_one();
                inner.counts.dropped += 1;
            }
        }
        for page in inner.pages.values_mut() {
            if let Some(waker) = page.waker.take() {
                waker.wake();
            }
        }
    }

    /// A new page: every event kept, then the ones to come (none after [`close`](Self::close)). `kick` is
    /// notified when the page falls behind.
    pub fn subscribe(self: &Arc<Self>, kick: Arc<Notify>) -> EventStream {
        let mut inner = self.lock();
        let id = inner.next_page;
        inner.next_page += 1;
        let joined = inner.next;
        inner.pages.insert(id, Page { cursor: 0, joined, waker: None, kick });
        inner.counts.served += 1;
        EventStream { hub: self.clone(), id }
    }

    /// No more events: every page's stream ends once it has taken them all.
    pub fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        for page in inner.pages.values_mut() {
            if let Some(waker) = page.waker.take() {
                waker.wake();
            }
        }
    }

    /// The pages served and dropped so far.
    pub fn counts(&self) -> PageCounts {
        self.lock().counts
    }

    /// The page's next event; `None` at the end (or once it was dropped), `Pending` while there is none yet.
    fn next_for(&self, id: u64, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let mut inner = self.lock();
        let Inner { events, pages, closed, .. } = &mut *inner;
        let Some(page) = pages.get_mut(&id) else {
            return Poll::Ready(None);
        };
        let at = events.partition_point(|(n, _)| *n < page.cursor);
        if let Some((n, event)) = events.get(at) {
            page.cursor = n + 1;
            return Poll::Ready(Some(event.clone()));
        }
        if *closed {
            pages.remove(&id);
            return Poll::Ready(None);
        }
        page.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn leave(&self, id: u64) {
        self.lock().pages.remove(&id);
    }
}

/// One page's events, as a response body that ends when the hub closes.
pub(super) struct EventStream {
    hub: Arc<Hub>,
    id: u64,
}

impl Body for EventStream {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.hub.next_for(self.id, cx).map(|e| e.map(|bytes| Ok(Frame::data(bytes))))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        self.hub.leave(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;

    async fn next(page: &mut EventStream) -> Option<String> {
        poll_fn(|cx| page.hub.next_for(page.id, cx)).await.map(|e| String::from_utf8(e.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_late_page_gets_everything_and_old_seconds_go() {
        let hub = Arc::new(Hub::new(2));
        hub.publish("plan", &serde_json::json!({"name": "p"}));
        for s in 0..4 {
            hub.publish("second", &serde_json::json!({ "at_s": s }));
        }
        hub.close();
        let mut page = hub.subscribe(Arc::new(Notify::new()));
        let mut got = Vec::new();
        while let Some(e) = next(&mut page).await {
            got.push(e);
        }
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("event: plan\n"));
        assert!(got[1].contains("\"at_s\":2") && got[2].contains("\"at_s\":3"), "{got:?}");
    }

    #[tokio::test]
    async fn a_page_that_does_not_read_is_dropped_after_the_limit_and_its_history_does_not_count() {
        let hub = Arc::new(Hub::new(3600));
        for s in 0..100 {
            hub.publish("second", &serde_json::json!({ "at_s": s }));
        }
        let kick = Arc::new(Notify::new());
        let mut reader = hub.subscribe(Arc::new(Notify::new()));
        let idle = hub.subscribe(kick.clone());
        for s in 0..PENDING_LIMIT {
            hub.publish("second", &serde_json::json!({ "at_s": 100 + s }));
        }
        assert_eq!(hub.counts(), PageCounts { served: 2, dropped: 0 }, "100 events of history are not behind");
        for _ in 0..100 + PENDING_LIMIT {
            next(&mut reader).await.unwrap();
        }
        hub.publish("second", &serde_json::json!({ "at_s": 200 }));
        assert_eq!(hub.counts(), PageCounts { served: 2, dropped: 1 });
        kick.notified().await;
        next(&mut reader).await.unwrap();
        drop(idle);
        hub.close();
        assert_eq!(next(&mut reader).await, None);
    }
}
