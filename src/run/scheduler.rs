//! The scheduler: runs every thread group of the graph with its load model, side by side.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::vuser::RunContext;
use super::{closed, open};
use crate::plan::model::{Load, Phase};

/// Active virtual users, per group and in all (JTL grpThreads / allThreads).
#[derive(Debug, Default)]
pub struct Active {
    /// Per group, in plan order.
    pub groups: Vec<AtomicU32>,
    /// In all groups.
    pub all: AtomicU32,
    /// Open-model iterations that could not start because every thread of their pool was busy, per group.
    pub dropped: Vec<AtomicU64>,
    /// Samples whose user had to wait because the channel to the sinks was full (back-pressure).
    pub waited: AtomicU64,
}

impl Active {
    /// Counters for `n` groups.
    pub fn new(n: usize) -> Self {
        Self {
            groups: (0..n).map(|_| AtomicU32::new(0)).collect(),
            all: AtomicU32::new(0),
            dropped: (0..n).map(|_| AtomicU64::new(0)).collect(),
            waited: AtomicU64::new(0),
        }
    }

    pub(super) fn start(&self, group: usize) {
        self.groups[group].fetch_add(1, Ordering::Relaxed);
        self.all.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn finish(&self, group: usize) {
        self.groups[group].fetch_sub(1, Ordering::Relaxed);
        self.all.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs the setup groups, then the main groups, then the teardown groups; the groups of a phase run side
/// by side, each to its end (or until the run is stopped; teardown groups run even then).
pub async fn schedule(cx: RunContext) {
    for phase in [Phase::Setup, Phase::Main, Phase::Teardown] {
        let mut cx = cx.clone();
        if phase == Phase::Teardown {
            // Teardown cleans up after whatever ran, so a stopped run still gets it.
            let (_keep, never) = watch::channel(false);
            cx.stop = never;
            run_phase(cx, phase).await;
            drop(_keep);
        } else {
            run_phase(cx, phase).await;
        }
    }
}

async fn run_phase(cx: RunContext, phase: Phase) {
    let start = Instant::now();
    let mut groups = JoinSet::new();
    for (gi, g) in cx.graph.groups.iter().enumerate().filter(|(_, g)| g.phase == phase) {
        let cx = cx.clone();
        let deadline = g.duration.map(|d| super::clock::after(start, d));
        match &g.load {
            Load::Closed => groups.spawn(closed::fixed(cx, gi, start, deadline)),
            Load::ClosedStages(stages) => groups.spawn(closed::staged(cx, gi, stages.clone(), start, deadline)),
            Load::Open { initial_rate, stages } => {
                groups.spawn(open::open(cx, gi, *initial_rate, stages.clone(), start))
            }
        };
    }
    drop(cx);
    while groups.join_next().await.is_some() {}
}

/// Resolves once the run is told to stop (or the stopper is gone).
pub(super) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
