//! The closed model: a fixed number of users started over a ramp-up, or a number that follows stages.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::active::stopped;
use super::deal::Deal;
use super::ramp::threads_at;
use super::vuser::{pauses, Boxed, Holding, InPlace, RunContext, VirtualUser};
use crate::plan::model::Stage;

/// How often a staged ramp adjusts its number of users.
const RAMP_TICK: Duration = Duration::from_millis(100);

/// `threads` users, started evenly over `ramp_up`, each looping until its loops or the deadline end; only
/// the users of `deal` run here, each at its place in the whole group's ramp-up. A user whose place is at or
/// after the deadline never starts (validation warns of it), so the group ends at its deadline.
pub async fn fixed(cx: RunContext, group: usize, deal: Deal, start: Instant, deadline: Option<Instant>) {
    let g = &cx.graph.groups[group];
    let loops = g.loops;
    let pauses = pauses(&g.think_time, &g.steps);
    let mut users = JoinSet::new();
    for vu in (1..=g.users_started()).filter(|vu| deal.owns_user(*vu)) {
        let at = crate::clock::after(start, g.start_offset(vu));
        let user = Box::new(VirtualUser::new(cx.clone(), group, vu, deadline));
        let stop = cx.stop.clone();
        if pauses {
            users.spawn(start_then_run::<Boxed>(user, at, loops, stop));
        } else {
            users.spawn(start_then_run::<InPlace>(user, at, loops, stop));
        }
    }
    drop(cx);
    while users.join_next().await.is_some() {}
}

/// A user's task: waits for its place in the ramp-up, then runs.
async fn start_then_run<H: Holding>(
    user: Box<VirtualUser>,
    at: Instant,
    loops: Option<u64>,
    mut stop: watch::Receiver<bool>,
) {
    // The wait ends before the user runs, so its timer is not part of what the user's task holds.
    let go = tokio::select! {
        _ = tokio::time::sleep_until(at.into()) => true,
        _ = stopped(&mut stop) => false,
    };
    if go {
        user.run_closed::<H>(loops).await;
    }
}

/// Users started and retired so that their number follows the stages (linear between targets); here runs
/// `deal`'s share of that number, its users numbered as they would be in the whole run.
pub async fn staged(
    cx: RunContext,
    group: usize,
    deal: Deal,
    stages: Vec<Stage>,
    start: Instant,
    deadline: Option<Instant>,
) {
    let loops = cx.graph.groups[group].loops;
    let pauses = pauses(&cx.graph.groups[group].think_time, &cx.graph.groups[group].steps);
    let total: Duration = stages.iter().map(|s| s.duration).sum();
    let mut users = JoinSet::new();
    // One retire switch per user number; a retired number is reused by the next user started.
    let mut slots: Vec<Option<watch::Sender<bool>>> = Vec::new();
    let mut stop = cx.stop.clone();
    loop {
        let t = start.elapsed();
        if t >= total || *stop.borrow() {
            break;
        }
        while users.try_join_next().is_some() {}
        for s in slots.iter_mut() {
            if s.as_ref().is_some_and(|tx| tx.is_closed()) {
                *s = None;
            }
        }
        let want = deal.users(threads_at(&stages, t).round() as u64) as usize;
        let running = slots.iter().filter(|s| s.as_ref().is_some_and(|tx| !*tx.borrow())).count();
        for _ in running..want {
            let free = slots.iter().position(Option::is_none).unwrap_or_else(|| {
                slots.push(None);
                slots.len() - 1
            });
            let (tx, rx) = watch::channel(false);
            slots[free] = Some(tx);
            let vu = deal.nth_user(free as u64);
            let user = Box::new(VirtualUser::new(cx.clone(), group, vu, deadline).with_retire(rx));
            if pauses {
                users.spawn(user.run_closed::<Boxed>(loops));
            } else {
                users.spawn(user.run_closed::<InPlace>(loops));
            }
        }
        for s in slots.iter().rev().flatten().filter(|tx| !*tx.borrow()).take(running.saturating_sub(want)) {
            let _ = s.send(true);
        }
        tokio::select! {
            _ = tokio::time::sleep(RAMP_TICK) => {}
            _ = stopped(&mut stop) => {}
        }
    }
    for s in slots.iter().flatten() {
        let _ = s.send(true);
    }
    drop(cx);
    while users.join_next().await.is_some() {}
}
