//! Dropped iterations: open-model arrivals that found every thread of their group busy, for the summary
//! JSON (`dropped_iterations`) and the `dropped` threshold.

use serde::{Deserialize, Serialize};

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
    /// Dropped over arrivals; 0 when nothing arrived.
    pub fn rate(&self) -> f64 {
        if self.arrivals == 0 {
            0.0
        } else {
            self.dropped as f64 / self.arrivals as f64
        }
    }
}
