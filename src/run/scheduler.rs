//! The scheduler: runs every thread group of the graph with its load model, side by side.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{watch, Barrier};
use tokio::task::JoinSet;

use super::http::ConnectionCounts;
use super::vuser::RunContext;
use super::{closed, open};
use crate::plan::model::{Load, Phase};
use crate::segment::Segment;

/// Which of a group's users (or an open group's workers) run here. The main groups' users are numbered
/// across the groups in plan order, so a group's users 1..=threads are the run's items `base..base+threads`;
/// item `g` runs in the segment that [owns](Segment::owns) it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deal {
    pub segment: Segment,
    pub base: u64,
}

impl Deal {
    /// Whether user `vu` (from 1) runs here.
    pub fn owns_user(&self, vu: u32) -> bool {
        self.segment.owns(self.base + u64::from(vu) - 1)
    }

    /// How many of users 1..=n run here.
    pub fn users(&self, n: u64) -> u64 {
        self.segment.share(self.base, n)
    }

    /// The number of the `j`-th (from 0) user that runs here.
    pub fn nth_user(&self, j: u64) -> u32 {
        u32::try_from(self.segment.nth_from(self.base, j) - self.base + 1).unwrap_or(u32::MAX)
    }
}

/// Active virtual users, per group and in all (JTL grpThreads / allThreads).
#[derive(Debug, Default)]
pub struct Active {
    /// Per group, in plan order.
    pub groups: Vec<AtomicU32>,
    /// In all groups.
    pub all: AtomicU32,
    /// Open-model iterations that could not start because every thread of their pool was busy, per group,
    /// counted as they are dropped.
    pub dropped: Vec<AtomicU64>,
    /// Open-model arrivals due so far, started or dropped, per group.
    pub arrivals: Vec<AtomicU64>,
    /// Samples whose user had to wait because the channel to the sinks was full (back-pressure).
    pub waited: AtomicU64,
    /// What the users' HTTP clients count about their connections.
    pub connections: Arc<ConnectionCounts>,
}

impl Active {
    /// Counters for `n` groups.
    pub fn new(n: usize) -> Self {
        Self {
            groups: (0..n).map(|_| AtomicU32::new(0)).collect(),
            all: AtomicU32::new(0),
            dropped: (0..n).map(|_| AtomicU64::new(0)).collect(),
            arrivals: (0..n).map(|_| AtomicU64::new(0)).collect(),
            waited: AtomicU64::new(0),
            connections: Arc::default(),
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
/// by side, each to its end (or until the run is stopped; teardown groups run even then). Only the first
/// segment runs setup and teardown groups. When the run is spread over several runtimes, each runs this
/// with its own segment and `phases` holds every runtime at the end of each phase until all are there.
pub async fn schedule(cx: RunContext, phases: Option<Arc<Barrier>>) {
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
        if let Some(all) = &phases {
            all.wait().await;
        }
    }
}

async fn run_phase(cx: RunContext, phase: Phase) {
    let segment = match phase {
        Phase::Main => cx.segment,
        Phase::Setup | Phase::Teardown if cx.segment.is_first() => Segment::WHOLE,
        Phase::Setup | Phase::Teardown => return,
    };
    let start = Instant::now();
    let mut groups = JoinSet::new();
    let mut base = 0u64;
    for (gi, g) in cx.graph.groups.iter().enumerate().filter(|(_, g)| g.phase == phase) {
        let cx = cx.clone();
        let deal = Deal { segment, base };
        base += u64::from(g.threads);
        let deadline = g.duration.map(|d| super::clock::after(start, d));
        match &g.load {
            Load::Closed => groups.spawn(closed::fixed(cx, gi, deal, start, deadline)),
            Load::ClosedStages(stages) => groups.spawn(closed::staged(cx, gi, deal, stages.clone(), start, deadline)),
            Load::Open { initial_rate, stages } => {
                groups.spawn(open::open(cx, gi, deal, *initial_rate, stages.clone(), start))
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
