//! Driving a connection in the virtual user's own task, without the task waking itself.
//!
//! While the user waits for a response it polls two things: what it waits for (hyper's response or body
//! channel) and the connection. Progress on one wakes the other: sending queues the request and wakes the
//! connection, the connection hands over the response and wakes the waiter. Both are in the same task, so
//! each of those wakes would only schedule the task again, to poll the whole chain of futures once more
//! for nothing (two extra task polls a request). Here both are polled with a waker that, while they are
//! being polled, only notes the wake, and the two are polled again at once; wakes from outside (the socket,
//! a timer) go to the task as usual.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Rounds of polling within one poll of the task, at most; a future that wakes itself every time (a
/// spent cooperative budget does) then gets a real wake-up instead of spinning.
const MAX_ROUNDS: usize = 8;

/// The waker the work and the connection are polled with.
#[derive(Debug, Default)]
pub struct Wakes {
    task: Mutex<Option<Waker>>,
    polling: AtomicBool,
    woken: AtomicBool,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.polling.load(SeqCst) {
            self.woken.store(true, SeqCst);
        } else if let Some(task) = self.task.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            task.wake_by_ref();
        }
    }
}

/// A connection's waker, made once per connection.
#[derive(Debug)]
pub struct Driver {
    wakes: Arc<Wakes>,
    waker: Waker,
}

impl Default for Driver {
    fn default() -> Self {
        let wakes = Arc::new(Wakes::default());
        Self { waker: Waker::from(wakes.clone()), wakes }
    }
}

impl Driver {
    /// Runs `f`, which starts work that [`drive`](Self::drive) polls next (hyper queues a request for the
    /// connection when it is sent): the wakes it causes are for that next poll, not for the task.
    pub fn quietly<R>(&self, f: impl FnOnce() -> R) -> R {
        self.wakes.polling.store(true, SeqCst);
        let out = f();
        self.wakes.polling.store(false, SeqCst);
        out
    }

    /// Polls `work` and `conn` until `work` is done; `conn` is set to `None` when it ends (its errors reach
    /// `work` through hyper's channels).
    pub async fn drive<F: Future, C: Future + Unpin>(&self, conn: &mut Option<C>, mut work: Pin<&mut F>) -> F::Output {
        poll_fn(|cx| {
            {
                let mut task = self.wakes.task.lock().unwrap_or_else(|e| e.into_inner());
                if !task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                    *task = Some(cx.waker().clone());
                }
            }
            let mut inner = Context::from_waker(&self.waker);
            self.wakes.polling.store(true, SeqCst);
            for _ in 0..MAX_ROUNDS {
                self.wakes.woken.store(false, SeqCst);
                if let Poll::Ready(out) = work.as_mut().poll(&mut inner) {
                    self.wakes.polling.store(false, SeqCst);
                    return Poll::Ready(out);
                }
                if let Some(c) = conn.as_mut() {
                    if Pin::new(c).poll(&mut inner).is_ready() {
                        *conn = None;
                        continue;
                    }
                }
                if self.wakes.woken.load(SeqCst) {
                    continue;
                }
                self.wakes.polling.store(false, SeqCst);
                // A wake that came after the check above and before polling ended must not be lost.
                if !self.wakes.woken.load(SeqCst) {
                    return Poll::Pending;
                }
                self.wakes.polling.store(true, SeqCst);
            }
            self.wakes.polling.store(false, SeqCst);
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::time::Duration;

    use tokio::sync::{mpsc, oneshot};

    use super::*;

    /// A stand-in for hyper's connection: serves one request from a channel, answering through a oneshot.
    async fn server(mut rx: mpsc::UnboundedReceiver<(u32, oneshot::Sender<u32>)>, delay: Duration) {
        while let Some((n, reply)) = rx.recv().await {
            tokio::time::sleep(delay).await;
            let _ = reply.send(n * 2);
        }
    }

    #[tokio::test]
    async fn work_that_needs_the_connection_completes() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut conn = Some(Box::pin(server(rx, Duration::ZERO)));
        let driver = Driver::default();
        for n in 0..100 {
            let (reply, answer) = oneshot::channel();
            tx.send((n, reply)).unwrap();
            assert_eq!(driver.drive(&mut conn, pin!(answer)).await, Ok(n * 2));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn wakes_from_outside_reach_the_task() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut conn = Some(Box::pin(server(rx, Duration::from_millis(50))));
        let driver = Driver::default();
        let (reply, answer) = oneshot::channel();
        tx.send((21, reply)).unwrap();
        assert_eq!(driver.drive(&mut conn, pin!(answer)).await, Ok(42));
    }

    #[tokio::test]
    async fn a_connection_that_ends_is_dropped_and_the_work_sees_it() {
        let (tx, rx) = mpsc::unbounded_channel::<(u32, oneshot::Sender<u32>)>();
        drop(tx);
        let mut conn = Some(Box::pin(server(rx, Duration::ZERO)));
        let (_reply, answer) = oneshot::channel::<u32>();
        let driver = Driver::default();
        let out = tokio::time::timeout(Duration::from_millis(100), driver.drive(&mut conn, pin!(answer))).await;
        assert!(out.is_err(), "the work is still pending");
        assert!(conn.is_none());
    }

    #[tokio::test]
    async fn work_that_always_wakes_itself_yields_to_the_runtime() {
        let mut conn: Option<Pin<Box<std::future::Pending<()>>>> = None;
        let driver = Driver::default();
        let mut polls = 0;
        let work = pin!(poll_fn(|cx| {
            polls += 1;
            if polls > 3 * MAX_ROUNDS {
                return Poll::Ready(polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        assert_eq!(driver.drive(&mut conn, work).await, 3 * MAX_ROUNDS + 1);
    }
}
