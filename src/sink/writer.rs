//! One thread per output. It takes whole batches from the drain over a short bounded queue and writes them,
//! so an output that blocks (a FIFO whose reader stopped, a slow disk) blocks that thread only: the drain
//! waits for room on the runtime, where waiting costs nothing, and the users behind it wait between requests.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};

use super::{Landed, Sink, SinkError};
use crate::sample::Sample;

/// A batch of samples, shared by every output's thread.
pub(super) type Batch = Arc<Vec<Sample>>;

/// Batches queued for an output's thread; when they are all waiting, the drain waits.
const QUEUE: usize = 8;

/// Hands batch buffers back to the drain, which empties and reuses them: whoever drops a batch last sends
/// it. The samples are freed on the runtime, where they were made, so the allocator reuses their memory
/// there as it did before the writers had threads.
#[derive(Clone)]
pub(super) struct Recycle(std::sync::mpsc::Sender<Vec<Sample>>);

impl Recycle {
    /// A recycler and the pool it fills.
    pub fn new() -> (Recycle, std::sync::mpsc::Receiver<Vec<Sample>>) {
        let (tx, rx) = std::sync::mpsc::channel();
        (Recycle(tx), rx)
    }

    /// Drops this reference to `batch`; the last one sends the buffer back.
    pub fn give(&self, batch: Batch) {
        if let Some(buffer) = Arc::into_inner(batch) {
            let _ = self.0.send(buffer);
        }
    }
}

/// What the drain and an output's thread both see.
pub(super) struct Shared {
    /// The output's name (its path).
    pub name: String,
    /// Samples written whole.
    pub landed: Arc<Landed>,
    failure: Mutex<Option<SinkError>>,
    failed: AtomicBool,
}

impl Shared {
    fn fail(&self, error: SinkError) {
        let mut failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        if failure.is_none() {
            *failure = Some(error);
            self.failed.store(true, Ordering::Release);
        }
    }

    /// The output's error, taken out.
    pub fn take_failure(&self) -> Option<SinkError> {
        self.failure.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The drain's end of an output's thread.
pub(super) struct Writer {
    tx: Option<mpsc::Sender<Batch>>,
    /// Batches taken after the run was told to hurry while this output was behind; handed over as room
    /// appears, never waited for.
    backlog: VecDeque<Batch>,
    shared: Arc<Shared>,
    done: Option<oneshot::Receiver<()>>,
    failure_seen: bool,
}

impl Writer {
    /// Starts the thread that writes `sink`.
    pub fn spawn(sink: Box<dyn Sink>, recycle: Recycle) -> Writer {
        let (landed, counts_itself) = match sink.landed() {
            Some(landed) => (landed, true),
            None => (Arc::default(), false),
        };
        let shared = Arc::new(Shared {
            name: sink.name().to_string(),
            landed,
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
        });
        let (tx, rx) = mpsc::channel(QUEUE);
        let (done_tx, done) = oneshot::channel();
        let on_thread = shared.clone();
        let spawned = std::thread::Builder::new().name("planrun-writer".into()).spawn(move || {
            let shared = on_thread;
            if catch_unwind(AssertUnwindSafe(|| write_all(sink, rx, &shared, counts_itself, &recycle))).is_err() {
                let source = std::io::Error::other("the writer stopped on an internal error");
                shared.fail(SinkError::Io { path: shared.name.clone(), source });
            }
            let _ = done_tx.send(());
        });
        if let Err(source) = spawned {
            shared.fail(SinkError::Io { path: shared.name.clone(), source });
        }
        Writer { tx: Some(tx), backlog: VecDeque::new(), shared, done: Some(done), failure_seen: false }
    }

    /// What the drain keeps of the writer once it is closing.
    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Hands `batch` over, waiting for room. Cancel-safe: when the future is dropped before it is ready, the
    /// batch was not handed over.
    pub async fn send(&mut self, batch: &Batch) {
        if !self.backlog.is_empty() {
            return self.queue(batch);
        }
        let Some(tx) = &self.tx else { return };
        let closed = match tx.reserve().await {
            Ok(permit) => {
                permit.send(batch.clone());
                false
            }
            // The thread is gone: it failed, and says why in `shared`.
            Err(_) => true,
        };
        if closed {
            self.tx = None;
        }
    }

    /// Hands `batch` over if there is room, else keeps it, in order, for later: never waits.
    pub fn queue(&mut self, batch: &Batch) {
        if self.tx.is_some() {
            self.backlog.push_back(batch.clone());
            self.pump();
        }
    }

    /// Hands over what the backlog holds, as far as there is room.
    fn pump(&mut self) {
        let Some(tx) = &self.tx else { return self.backlog.clear() };
        while let Some(batch) = self.backlog.pop_front() {
            match tx.try_send(batch) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(batch)) => return self.backlog.push_front(batch),
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    self.tx = None;
                    return self.backlog.clear();
                }
            }
        }
    }

    /// Calls `tell` with the output's error the first time one is seen.
    pub fn on_failure(&mut self, tell: impl FnOnce(&SinkError)) {
        if self.failure_seen || !self.shared.failed.load(Ordering::Acquire) {
            return;
        }
        self.failure_seen = true;
        if let Some(error) = self.shared.failure.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            tell(error);
        }
    }

    /// Hands over the backlog, ends the queue and waits until the thread has written and finished the output.
    pub async fn close(mut self) {
        while let Some(batch) = self.backlog.pop_front() {
            let Some(tx) = &self.tx else { break };
            if tx.send(batch).await.is_err() {
                break;
            }
        }
        drop(self.tx.take());
        if let Some(done) = self.done.take() {
            // Err: the thread ended without saying so (it could not start); either way it is over.
            let _ = done.await;
        }
    }
}

/// The thread: writes every batch until the queue ends, the output fails, or the run gives up on it.
fn write_all(
    mut sink: Box<dyn Sink>,
    mut rx: mpsc::Receiver<Batch>,
    shared: &Shared,
    counts_itself: bool,
    recycle: &Recycle,
) {
    while let Some(batch) = rx.blocking_recv() {
        if shared.landed.is_abandoned() {
            return;
        }
        let written = sink.write(&batch);
        let samples = batch.len() as u64;
        recycle.give(batch);
        match written {
            Ok(()) if !counts_itself => shared.landed.add(samples),
            Ok(()) => {}
            Err(_) if shared.landed.is_abandoned() => return,
            Err(e) => {
                shared.fail(e);
                // Syncs what was kept; the first error is the one reported.
                let _ = sink.finish();
                return;
            }
        }
    }
    if let Err(e) = sink.finish() {
        shared.fail(e);
    }
}
