//! Dropped iterations: open-model arrivals that found every thread of their group busy, for the summary
//! JSON (`dropped_iterations`) and the `dropped` threshold.

use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use crate::compile::Graph;
use crate::plan::model::Load;
use crate::run::Active;

/// The run's dropped iterations, in all and per open-model group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedIterations {
    /// Iterations dropped.
    pub dropped: u64,
    /// Arrivals due, started or dropped.
    pub arrivals: u64,
    /// Each open-model group, in plan order.
    pub groups: Vec<GroupDropped>,
}

/// One open-model group's dropped iterations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDropped {
    /// The group's name.
    pub group: String,
    /// Iterations dropped.
    pub dropped: u64,
    /// Arrivals due, started or dropped.
    pub arrivals: u64,
}

impl DroppedIterations {
    /// The counts so far of a run of `graph`.
    pub fn of(active: &Active, graph: &Graph) -> Self {
        let mut all = DroppedIterations::default();
        for (i, g) in graph.groups.iter().enumerate() {
            let load = |v: &[std::sync::atomic::AtomicU64]| v.get(i).map_or(0, |a| a.load(Ordering::Relaxed));
            let (dropped, arrivals) = (load(&active.dropped), load(&active.arrivals));
            all.dropped += dropped;
            all.arrivals += arrivals;
            if matches!(g.load, Load::Open { .. }) {
                all.groups.push(GroupDropped { group: g.name.to_string(), dropped, arrivals });
            }
        }
        all
    }

    /// Dropped over arrivals; 0 when nothing arrived.
    pub fn rate(&self) -> f64 {
        if self.arrivals == 0 {
            0.0
        } else {
            self.dropped as f64 / self.arrivals as f64
        }
    }
}
