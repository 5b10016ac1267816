//! The dashboard's events: kept for pages that connect later, and pushed to the pages connected now, as
//! server-sent events (`event: NAME`, `data: JSON`).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use serde_json::Value;
use tokio::sync::mpsc;

/// Every event so far and the connected pages.
pub(super) struct Hub {
    inner: Mutex<Inner>,
    /// Per-second events kept; the others (plan, thresholds, summary, end) are few.
    keep: usize,
}

struct Inner {
    events: VecDeque<Bytes>,
    seconds: usize,
    pages: Vec<mpsc::UnboundedSender<Bytes>>,
    closed: bool,
}

impl Hub {
    pub fn new(keep: usize) -> Self {
        Hub { inner: Mutex::new(Inner { events: VecDeque::new(), seconds: 0, pages: Vec::new(), closed: false }), keep }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps the event and sends it to every page; a page that went away is forgotten.
    pub fn publish(&self, name: &str, data: &Value) {
        let event = Bytes::from(format!("event: {name}\ndata: {data}\n\n"));
        let mut inner = self.lock();
        if name == "second" {
            inner.seconds += 1;
            if inner.seconds > self.keep {
                // The oldest second goes; the first event (the plan) stays.
                if let Some(i) = inner.events.iter().position(|e| e.starts_with(b"event: second\n")) {
                    inner.events.remove(i);
                    inner.seconds -= 1;
                }
            }
        }
        inner.events.push_back(event.clone());
        inner.pages.retain(|p| p.send(event.clone()).is_ok());
    }

    /// A new page: every event so far, then the ones to come (none after [`close`](Self::close)).
    pub fn subscribe(&self) -> EventStream {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut inner = self.lock();
        for e in &inner.events {
            let _ = tx.send(e.clone());
        }
        if !inner.closed {
            inner.pages.push(tx);
        }
        EventStream(rx)
    }

    /// No more events: every page's stream ends once it has what it was sent.
    pub fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.pages.clear();
    }
}

/// One page's events, as a response body that ends when the hub closes.
pub(super) struct EventStream(mpsc::UnboundedReceiver<Bytes>);

impl Body for EventStream {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|e| e.map(|bytes| Ok(Frame::data(bytes))))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_late_page_gets_everything_and_old_seconds_go() {
        let hub = Hub::new(2);
        hub.publish("plan", &serde_json::json!({"name": "p"}));
        for s in 0..4 {
            hub.publish("second", &serde_json::json!({ "at_s": s }));
        }
        hub.close();
        let mut page = hub.subscribe();
        let mut got = Vec::new();
        while let Some(e) = page.0.recv().await {
            got.push(String::from_utf8(e.to_vec()).unwrap());
        }
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("event: plan\n"));
        assert!(got[1].contains("\"at_s\":2") && got[2].contains("\"at_s\":3"), "{got:?}");
    }
}
