//! The open model: iterations start on a schedule of arrivals, whatever the target's speed. A pool of
//! at most `max_threads` users runs them; an arrival that finds every user busy is dropped and counted.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::active::{stopped, Active};
use super::deal::Deal;
use super::ramp::Arrivals;
use super::vuser::{pauses, Boxed, Holding, InPlace, RunContext, VirtualUser};
use crate::plan::model::Stage;
use crate::segment::Segment;

/// What a dispatch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Dispatched {
    /// Iterations started.
    pub started: u64,
    /// Arrivals dropped because every worker was busy.
    pub dropped: u64,
}

/// Which of a group's arrivals start here, for a segment that has `deal`'s share of the group's pool. The
/// arrivals are dealt round-robin among the segments that have at least one worker, so the union of the
/// segments' schedules is the whole run's and no segment gets arrivals it has no worker for.
fn arrivals_here(deal: Deal, max: u32) -> Option<Segment> {
    if deal.users(u64::from(max)) == 0 {
        return None;
    }
    let count = deal.segment.count();
    let among = count.min(u64::from(max));
    // This segment's first worker is the pool's `rank`-th (from 0); the segments with workers rank 0..among.
    let rank = u64::from(deal.nth_user(0)) - 1;
    Segment::new(rank, among).ok()
}

/// Runs an open-model group: `deal`'s part of its pool, and the arrivals dealt to it.
pub async fn open(
    cx: RunContext,
    group: usize,
    deal: Deal,
    initial: f64,
    stages: Vec<Stage>,
    start: std::time::Instant,
) {
    let pool = cx.graph.groups[group].threads;
    let Some(here) = arrivals_here(deal, pool) else {
        return;
    };
    let max = u32::try_from(deal.users(u64::from(pool))).unwrap_or(u32::MAX);
    let active = cx.active.clone();
    let stop = cx.stop.clone();
    let make = {
        let cx = cx.clone();
        // An iteration that started on schedule runs to its end: the schedule, not a deadline, bounds the group.
        move |made: u32| VirtualUser::new(cx.clone(), group, deal.nth_user(u64::from(made) - 1), None)
    };
    let g = &cx.graph.groups[group];
    let pauses = pauses(&g.think_time, &g.steps);
    drop(cx);
    let arrivals = Arrivals::new(initial, &stages);
    let (at, tally) = (Instant::from_std(start), (active.clone(), group));
    if pauses {
        let run = move |user, intended| iteration::<Boxed>(user, intended, active.clone(), group);
        dispatch(arrivals, here, at, max, stop, make, run, tally).await;
    } else {
        let run = move |user, intended| iteration::<InPlace>(user, intended, active.clone(), group);
        dispatch(arrivals, here, at, max, stop, make, run, tally).await;
    }
}

/// One arrival's iteration on a worker of the pool, which is handed back for the next arrival.
async fn iteration<H: Holding>(
    mut user: VirtualUser,
    intended: Instant,
    active: Arc<Active>,
    group: usize,
) -> VirtualUser {
    active.start(group);
    let graph = user.graph();
    user.iterate_caught::<H>(&graph, Some(intended.into_std())).await;
    active.finish(group);
    user
}

/// Starts `run(worker, intended)` for each arrival of `here` (arrival `k`, from 1, is item `k - 1`) on an
/// idle worker (made by `make`, at most `max`), or counts the arrival as dropped when every worker is busy.
/// Each time it wakes it takes every arrival due by then, so a rate the machine cannot keep up with costs
/// drops, not time: the schedule still ends at its end. Arrivals and drops are also counted on the
/// `tally`'s group as they happen, for the live outputs and the thresholds.
#[allow(clippy::too_many_arguments)]
pub async fn dispatch<W, F, Fut>(
    arrivals: Arrivals,
    here: Segment,
    start: Instant,
    max: u32,
    mut stop: watch::Receiver<bool>,
    mut make: impl FnMut(u32) -> W,
    run: F,
    tally: (Arc<Active>, usize),
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
    loop {
        next = here.nth_from(next - 1, 0) + 1;
        let Some(offset) = arrivals.offset_of(next) else {
            break;
        };
        let intended = crate::clock::after_tokio(start, offset);
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
                let dropped = here.share(k - 1, due - k + 1);
                out.dropped = out.dropped.saturating_add(dropped);
                tally.0.dropped[tally.1].fetch_add(dropped, Ordering::Relaxed);
                tally.0.arrivals[tally.1].fetch_add(dropped, Ordering::Relaxed);
                break;
            };
            out.started += 1;
            tally.0.arrivals[tally.1].fetch_add(1, Ordering::Relaxed);
            let idle = idle.clone();
            let fut = run(worker, arrivals.offset_of(k).map_or(intended, |o| crate::clock::after_tokio(start, o)));
            running.spawn(async move {
                let w = fut.await;
                idle.lock().unwrap_or_else(|e| e.into_inner()).push(w);
            });
            // The next arrival of this segment's: item `k` is arrival `k + 1`.
            k = here.nth_from(k, 0) + 1;
        }
        next = due.saturating_add(1);
    }
    // The group lasts its schedule even when its arrivals end sooner (a last stage at rate 0, or a rate so
    // high that the count saturated).
    if !*stop.borrow() {
        tokio::select! {
            _ = tokio::time::sleep_until(crate::clock::after_tokio(start, arrivals.duration())) => {}
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

    fn tally() -> (Arc<Active>, usize) {
        (Arc::new(Active::new(1)), 0)
    }

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
        let done =
            dispatch(Arrivals::new(100.0, &[stage(1000, 100.0)]), Segment::WHOLE, t0, 10, stop, |n| n, run, tally())
                .await;
        assert_eq!(done, Dispatched { started: 100, dropped: 0 });
        let starts = starts.lock().unwrap();
        assert_eq!(starts[0], Duration::from_millis(10));
        assert_eq!(starts[99], Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn segments_share_out_the_schedule_exactly() {
        let t0 = Instant::now();
        let intended_times = |here: Segment| {
            let (tx, stop) = watch::channel(false);
            let seen: Arc<Mutex<Vec<Duration>>> = Arc::default();
            let run = {
                let seen = seen.clone();
                move |w: u32, intended: Instant| {
                    seen.lock().unwrap().push(intended - t0);
                    async move { w }
                }
            };
            let schedule = Arrivals::new(10.0, &[stage(1000, 50.0)]);
            (dispatch(schedule, here, t0, 100, stop, |n| n, run, tally()), seen, tx)
        };
        let (whole, seen, _tx) = intended_times(Segment::WHOLE);
        let whole_done = whole.await;
        let mut expected = seen.lock().unwrap().clone();
        let mut union = Vec::new();
        let mut started = 0;
        for i in 0..3 {
            let (part, seen, _tx) = intended_times(Segment::new(i, 3).unwrap());
            started += part.await.started;
            union.extend(seen.lock().unwrap().iter().copied());
        }
        expected.sort();
        union.sort();
        assert!(whole_done.started > 20, "{whole_done:?}");
        assert_eq!(started, whole_done.started);
        assert_eq!(union, expected);
    }

    #[tokio::test(start_paused = true)]
    async fn busy_pool_drops_and_counts_arrivals() {
        let (_tx, stop) = watch::channel(false);
        let tally = tally();
        // 100/s for 1 s, 2 workers, each iteration takes 95 ms: a worker frees every ~50 ms, so about
        // one arrival in five starts and the rest are dropped, never queued.
        let run = |w: u32, _| async move {
            tokio::time::sleep(Duration::from_millis(95)).await;
            w
        };
        let done = dispatch(
            Arrivals::new(100.0, &[stage(1000, 100.0)]),
            Segment::WHOLE,
            Instant::now(),
            2,
            stop,
            |n| n,
            run,
            tally.clone(),
        )
        .await;
        assert_eq!(done.started + done.dropped, 100);
        assert_eq!(done.started, 20);
        assert_eq!(tally.0.dropped[0].load(Ordering::Relaxed), done.dropped, "counted as they happen");
        assert_eq!(tally.0.arrivals[0].load(Ordering::Relaxed), 100);
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
        let done =
            dispatch(Arrivals::new(10.0, &[stage(10_000, 10.0)]), Segment::WHOLE, t0, 1, stop, |n| n, run, tally())
                .await;
        assert_eq!(done.started, 5);
    }
}
