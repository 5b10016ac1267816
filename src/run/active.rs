//! What every virtual user of a run shares with the rest of it: the counts of active users and dropped
//! iterations, and the signal to stop.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::watch;

use crate::compile::Graph;
use crate::http::ConnectionCounts;
use crate::plan::model::Load;
use crate::report::dropped::{DroppedIterations, GroupDropped};

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
    /// The dropped iterations so far of a run of `graph`, for the summary and the `dropped` threshold.
    pub fn dropped_iterations(&self, graph: &Graph) -> DroppedIterations {
        let mut all = DroppedIterations::default();
        for (i, g) in graph.groups.iter().enumerate() {
            let load = |v: &[std::sync::atomic::AtomicU64]| v.get(i).map_or(0, |a| a.load(Ordering::Relaxed));
            let (dropped, arrivals) = (load(&self.dropped), load(&self.arrivals));
            all.dropped += dropped;
            all.arrivals += arrivals;
            if matches!(g.load, Load::Open { .. }) {
                all.groups.push(GroupDropped { group: g.name.to_string(), dropped, arrivals });
            }
        }
        all
    }
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

/// Resolves once the run is told to stop (or the stopper is gone).
pub(super) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
