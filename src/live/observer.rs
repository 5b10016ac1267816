//! The live outputs' side of the run: an observer on the drain that counts each batch into the second under
//! way (and copies it for the raw outputs), and a ticker thread that closes each second as the clock passes
//! it and offers it to every output's queue.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::aggregate::Aggregator;
use super::raw::RawSample;
use super::sender::{Item, Queue};
use crate::run::Active;
use crate::sample::Sample;
use crate::sink::stats::Stats;
use crate::sink::{Observer, SinkError};

/// Something that wants each closed second besides the outputs' queues (the dashboard).
pub trait SecondWatcher: Send + Sync {
    /// A second closed; must not block.
    fn second(&self, second: &Arc<super::Second>);
}

/// What the observer and the ticker share.
pub(super) struct Shared {
    pub aggregator: Mutex<Aggregator>,
    pub queues: Vec<Arc<Queue>>,
    pub watchers: Vec<Arc<dyn SecondWatcher>>,
    pub active: Arc<Active>,
}

impl Shared {
    fn now(&self) -> (u32, u64) {
        let dropped = self.active.dropped.iter().map(|d| d.load(Ordering::Relaxed)).sum();
        (self.active.all.load(Ordering::Relaxed), dropped)
    }

    fn aggregator(&self) -> std::sync::MutexGuard<'_, Aggregator> {
        self.aggregator.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Offers the closed seconds to every queue.
    fn send_closed(&self) {
        let closed = self.aggregator().take();
        for second in closed {
            let second = Arc::new(second);
            for q in &self.queues {
                q.offer(Item::Second(second.clone()));
            }
            for w in &self.watchers {
                w.second(&second);
            }
        }
    }

    /// The clock passed a second.
    pub fn tick(&self) {
        let (active, dropped) = self.now();
        self.aggregator().tick(unix_seconds(), active, dropped);
        self.send_closed();
    }

    /// The run is over: the second under way closes now.
    pub fn close(&self) {
        let (active, dropped) = self.now();
        self.aggregator().close_all(active, dropped);
        self.send_closed();
    }
}

/// Seconds since the Unix epoch.
pub(super) fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Until just after the next second starts.
fn to_next_second() -> Duration {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Duration::from_nanos(1_000_000_000 - u64::from(now.subsec_nanos())) + Duration::from_millis(5)
}

/// The ticker: closes each second as it passes, until told to stop (or its stopper is gone), then closes
/// the last one.
pub(super) fn ticker(shared: Arc<Shared>, stop: Receiver<()>) {
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(to_next_second()) {
        shared.tick();
    }
    shared.close();
}

/// Watches the drain for the live outputs.
pub struct LiveObserver {
    pub(super) shared: Arc<Shared>,
}

impl Observer for LiveObserver {
    fn batch(&mut self, batch: &[Sample], _stats: &Stats) {
        let (active, dropped) = self.shared.now();
        self.shared.aggregator().record(batch, unix_seconds(), active, dropped);
        let mut raw = self.shared.queues.iter().filter(|q| q.raw).peekable();
        if raw.peek().is_some() {
            let copy = Arc::new(batch.iter().map(RawSample::of).collect::<Vec<_>>());
            for q in raw {
                q.offer(Item::Raw(copy.clone()));
            }
        }
    }

    fn sink_failed(&mut self, _error: &SinkError) {}
}
