//! The open model: iterations start on a schedule of arrivals, whatever the target's speed. A pool of
//! at most `max_threads` users runs them; an arrival that finds every user busy is dropped and counted.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::ramp::Arrivals;
use super::scheduler::stopped;
use super::vuser::{RunContext, VirtualUser};
use crate::plan::model::Stage;

/// What a dispatch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Dispatched {
    /// Iterations started.
    pub started: u64,
    /// Arrivals dropped because every worker was busy.
    pub dropped: u64,
}

/// Runs an open-model group.
pub async fn open(cx: RunContext, group: usize, initial: f64, stages: Vec<Stage>, start: std::time::Instant) {
    let max = cx.graph.groups[group].threads;
    let active = cx.active.clone();
    let stop = cx.stop.clone();
    let make = {
        let cx = cx.clone();
        // An iteration that started on schedule runs to its end: the schedule, not a deadline, bounds the group.
        move |vu: u32| VirtualUser::new(cx.clone(), group, vu, None)
    };
    let run = {
        let active = active.clone();
        move |mut user: VirtualUser, intended: Instant| {
            let active = active.clone();
            async move {
                active.start(group);
                user.iterate_caught(Some(intended.into_std())).await;
                active.finish(group);
                user
            }
        }
    };
    drop(cx);
    let done = dispatch(Arrivals::new(initial, &stages), Instant::from_std(start), max, stop, make, run).await;
    active.dropped[group].fetch_add(done.dropped, Ordering::Relaxed);
}

/// Starts `run(worker, intended)` for each arrival on an idle worker (made by `make`, at most `max`),
/// or counts the arrival as dropped when every worker is busy. Each time it wakes it takes every arrival
/// due by then, so a rate the machine cannot keep up with costs drops, not time: the schedule still ends
/// at its end.
pub async fn dispatch<W, F, Fut>(
    arrivals: Arrivals,
    start: Instant,
    max: u32,
    mut stop: watch::Receiver<bool>,
    mut make: impl FnMut(u32) -> W,
    run: F,
) -> Dispatched
where
    W: Send + 'static,
    F: Fn(W, Instant) -> Fut,
    Fut: Future<Output = W> + Send + 'static,
{
    let idle: Arc<Mutex<Vec<W>>> = Arc::default();
    let mut made = 0u32;
    let mut out = Dispatched::default();
    let mut running = JoinSet::new();
    let mut next = 1u64;
    while let Some(offset) = arrivals.offset_of(next) {
        let intended = super::clock::after_tokio(start, offset);
        if intended > Instant::now() {
            tokio::select! {
                _ = tokio::time::sleep_until(intended) => {}
                _ = stopped(&mut stop) => break,
            }
        } else if *stop.borrow() {
            break;
        } else {
            // Behind schedule: let the users run between rounds.
            tokio::task::consume_budget().await;
        }
        while running.try_join_next().is_some() {}
        let due = arrivals.count_by(Instant::now().saturating_duration_since(start)).max(next);
        let mut k = next;
        while k <= due {
            let worker = idle.lock().unwrap_or_else(|e| e.into_inner()).pop().or_else(|| {
                (made < max).then(|| {
                    made += 1;
                    make(made)
                })
            });
            let Some(worker) = worker else {
                out.dropped = out.dropped.saturating_add(due - k + 1);
                break;
            };
            out.started += 1;
            let idle = idle.clone();
            let fut = run(worker, arrivals.offset_of(k).map_or(intended, |o| super::clock::after_tokio(start, o)));
            running.spawn(async move {
                let w = fut.await;
                idle.lock().unwrap_or_else(|e| e.into_inner()).push(w);
            });
            k += 1;
        }
        next = due.saturating_add(1);
    }
    // The group lasts its schedule even when its arrivals end sooner (a last stage at rate 0, or a rate so
    // high that the count saturated).
    if !*stop.borrow() {
        tokio::select! {
            _ = tokio::time::sleep_until(super::clock::after_tokio(start, arrivals.duration())) => {}
            _ = stopped(&mut stop) => {}
        }
    }
    while running.join_next().await.is_some() {}
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stage(ms: u64, rate: f64) -> Stage {
        Stage { duration: Duration::from_millis(ms), target: rate }
    }

    #[tokio::test(start_paused = true)]
    async fn arrivals_start_on_schedule_when_workers_are_free() {
        let (_tx, stop) = watch::channel(false);
        let starts: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let t0 = Instant::now();
        let seen = starts.clone();
        let run = move |w: u32, intended: Instant| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(Instant::now() - t0);
                assert!(Instant::now() >= intended);
                tokio::time::sleep(Duration::from_millis(5)).await;
                w
            }
        };
        let done = dispatch(Arrivals::new(100.0, &[stage(1000, 100.0)]), t0, 10, stop, |n| n, run).await;
        assert_eq!(done, Dispatched { started: 100, dropped: 0 });
        let starts = starts.lock().unwrap();
        assert_eq!(starts[0], Duration::from_millis(10));
        assert_eq!(starts[99], Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn busy_pool_drops_and_counts_arrivals() {
        let (_tx, stop) = watch::channel(false);
        // 100/s for 1 s, 2 workers, each iteration takes 95 ms: a worker frees every ~50 ms, so about
        // one arrival in five starts and the rest are dropped, never queued.
        let run = |w: u32, _| async move {
            tokio::time::sleep(Duration::from_millis(95)).await;
            w
        };
        let done = dispatch(Arrivals::new(100.0, &[stage(1000, 100.0)]), Instant::now(), 2, stop, |n| n, run).await;
        assert_eq!(done.started + done.dropped, 100);
        assert_eq!(done.started, 20);
    }

    #[tokio::test(start_paused = true)]
    async fn stop_ends_the_schedule() {
        let (tx, stop) = watch::channel(false);
        let t0 = Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let _ = tx.send(true);
        });
        let run = |w: u32, _| async move { w };
        let done = dispatch(Arrivals::new(10.0, &[stage(10_000, 10.0)]), t0, 1, stop, |n| n, run).await;
        assert_eq!(done.started, 5);
    }
}
