//! Request timeouts with one timer per virtual user, re-armed only when it fires.
//!
//! Arming a timer for every request (`tokio::time::timeout`) registers and cancels a timer-wheel entry each
//! time. Here the user's timer is set to the deadline of the request that armed it and left alone; a later
//! request's deadline is never earlier (same timeout, later start), so the timer can only fire early, and
//! then it is moved to the current deadline. With a timeout of seconds and requests of milliseconds, that is
//! one re-arm per timeout period instead of one per request.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Poll, Waker};

use tokio::runtime::{Handle, Id};
use tokio::task;
use tokio::time::{Instant, Sleep};

/// The request ran past its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

/// A virtual user's request timer.
#[derive(Debug, Default)]
pub struct Deadline {
    /// The timer and the runtime it belongs to (a client used from another runtime gets a new one).
    timer: Option<(Pin<Box<Sleep>>, Id)>,
    /// The task that last ran a request here: while it is the one running, the runtime is the timer's own,
    /// and asking for the current runtime (an `Arc` cloned and dropped) is skipped.
    task: Option<task::Id>,
    /// The waker the timer last registered, while it is still registered.
    registered: Option<Waker>,
    /// The timer's deadline, kept here: reading it from the timer touches memory of its own each request.
    armed: Option<Instant>,
}

impl Deadline {
    /// Runs `work` until it completes or `deadline` passes. `work` is pinned by the caller, so this
    /// future holds a pointer to it rather than a second copy of it (request futures are kilobytes, and
    /// 10,000 users hold one each).
    pub async fn run<F: Future>(&mut self, deadline: Instant, mut work: Pin<&mut F>) -> Result<F::Output, Elapsed> {
        let task = task::try_id();
        if task.is_none() || task != self.task {
            let runtime = Handle::current().id();
            if self.timer.as_ref().is_some_and(|(_, id)| *id != runtime) {
                self.timer = None;
                self.registered = None;
                self.armed = None;
            }
            self.task = task;
        }
        let registered = &mut self.registered;
        let (timer, _) = self.timer.get_or_insert_with(|| {
            self.armed = Some(deadline);
            (Box::pin(tokio::time::sleep_until(deadline)), Handle::current().id())
        });
        if self.armed.is_none_or(|armed| armed > deadline) {
            // A step with a shorter timeout than the one that armed the timer.
            timer.as_mut().reset(deadline);
            self.armed = Some(deadline);
            *registered = None;
        }
        let armed = &mut self.armed;
        poll_fn(|cx| {
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Ok(out));
            }
            // A timer that has not fired and holds this task's waker already would only register it again:
            // skipping that poll is a tenth of a request's instructions on a fast server.
            if !timer.is_elapsed() && registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                return Poll::Pending;
            }
            loop {
                match timer.as_mut().poll(cx) {
                    Poll::Pending => {
                        *registered = Some(cx.waker().clone());
                        return Poll::Pending;
                    }
                    Poll::Ready(()) if timer.deadline() >= deadline => {
                        *registered = None;
                        return Poll::Ready(Err(Elapsed));
                    }
                    // Armed by an earlier request: move it to this one's deadline and wait again.
                    Poll::Ready(()) => {
                        timer.as_mut().reset(deadline);
                        *armed = Some(deadline);
                    }
                }
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::pin::pin;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn work_that_finishes_in_time_is_returned() {
        let mut d = Deadline::default();
        let deadline = Instant::now() + Duration::from_secs(1);
        let out = d
            .run(
                deadline,
                pin!(async {
                    tokio::time::sleep(Duration::from_millis(999)).await;
                    7
                }),
            )
            .await;
        assert_eq!(out, Ok(7));
    }

    #[tokio::test(start_paused = true)]
    async fn work_past_its_deadline_is_cut_off_at_the_deadline() {
        let mut d = Deadline::default();
        let start = Instant::now();
        let out = d.run(start + Duration::from_secs(1), pin!(std::future::pending::<()>())).await;
        assert_eq!(out, Err(Elapsed));
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_armed_earlier_does_not_cut_off_a_later_request() {
        let mut d = Deadline::default();
        let t0 = Instant::now();
        let first = d.run(t0 + Duration::from_secs(1), pin!(tokio::time::sleep(Duration::from_millis(600)))).await;
        assert_eq!(first, Ok(()));
        // The timer still points at t0 + 1 s; this request may run until t0 + 1.6 s.
        let second_deadline = Instant::now() + Duration::from_secs(1);
        let second = d.run(second_deadline, pin!(tokio::time::sleep(Duration::from_millis(900)))).await;
        assert_eq!(second, Ok(()));
        let third = d.run(Instant::now() + Duration::from_secs(1), pin!(std::future::pending::<()>())).await;
        assert_eq!(third, Err(Elapsed));
        assert_eq!(t0.elapsed(), Duration::from_millis(2500));
    }

    #[test]
    fn a_client_moved_to_another_runtime_gets_a_new_timer() {
        let mut d = Deadline::default();
        for _ in 0..2 {
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            let deadline = rt.block_on(async { Instant::now() + Duration::from_millis(20) });
            assert_eq!(rt.block_on(d.run(deadline, pin!(std::future::pending::<()>()))), Err(Elapsed));
        }
    }

    #[test]
    fn a_client_moved_to_a_task_of_another_runtime_gets_a_new_timer() {
        let mut d = Deadline::default();
        for _ in 0..2 {
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            let (out, back) = rt.block_on(async move {
                tokio::spawn(async move {
                    let out =
                        d.run(Instant::now() + Duration::from_millis(20), pin!(std::future::pending::<()>())).await;
                    (out, d)
                })
                .await
                .unwrap()
            });
            assert_eq!(out, Err(Elapsed));
            d = back;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_shorter_timeout_than_the_armed_one_is_kept() {
        let mut d = Deadline::default();
        let t0 = Instant::now();
        assert_eq!(d.run(t0 + Duration::from_secs(10), pin!(async {})).await, Ok(()));
        let out = d.run(t0 + Duration::from_millis(100), pin!(std::future::pending::<()>())).await;
        assert_eq!(out, Err(Elapsed));
        assert_eq!(t0.elapsed(), Duration::from_millis(100));
    }
}
