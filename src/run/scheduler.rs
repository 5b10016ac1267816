//! The closed-model scheduler: each group's virtual users start evenly over its ramp-up and run until
//! their loops are done, the group's duration is over, or the run is stopped.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::vuser::VirtualUser;
use crate::compile::Graph;
use crate::sample::Sample;

/// Active virtual users, per group and in all (JTL grpThreads / allThreads).
#[derive(Debug, Default)]
pub struct Active {
    /// Per group, in plan order.
    pub groups: Vec<AtomicU32>,
    /// In all groups.
    pub all: AtomicU32,
}

impl Active {
    /// Counters for `n` groups.
    pub fn new(n: usize) -> Self {
        Self { groups: (0..n).map(|_| AtomicU32::new(0)).collect(), all: AtomicU32::new(0) }
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

/// Runs every group of the graph to its end; samples go to `tx`.
pub async fn schedule(graph: Arc<Graph>, tx: mpsc::Sender<Sample>, stop: watch::Receiver<bool>, active: Arc<Active>) {
    let start = Instant::now();
    let mut users = JoinSet::new();
    for (gi, g) in graph.groups.iter().enumerate() {
        let deadline = g.duration.map(|d| start + d);
        for vu in 1..=g.threads {
            let offset = g.ramp_up.mul_f64(f64::from(vu - 1) / f64::from(g.threads));
            let user = VirtualUser {
                graph: graph.clone(),
                group: gi,
                vu,
                tx: tx.clone(),
                stop: stop.clone(),
                active: active.clone(),
                deadline,
            };
            let mut stop = stop.clone();
            users.spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep_until((start + offset).into()) => user.run().await,
                    _ = stopped(&mut stop) => {}
                }
            });
        }
    }
    drop(tx);
    while users.join_next().await.is_some() {}
}

/// Resolves once the run is told to stop (or the stopper is gone).
pub(super) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
