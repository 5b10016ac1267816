//! Where and when a run's users run (`--segment`, `--cores`, `--start-at`), resolved for one run.

use std::time::SystemTime;

use crate::compile::Graph;
use crate::run::{share, RunOptions, Share};
use crate::segment::Segment;

/// The cores this machine offers.
pub fn available_cores() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// Where and when a run is asked to run; each unset part has its default.
#[derive(Debug, Clone, Default)]
pub struct PlacementSpec {
    /// The part of the plan to run; the whole plan by default.
    pub segment: Option<Segment>,
    /// Runtimes (one thread each) to spread the users over; see [`Placement::resolve`] for the default.
    pub cores: Option<u64>,
    /// Send nothing before this instant.
    pub start_at: Option<SystemTime>,
}

/// Where and when this process's users run.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The part of the plan this process runs.
    pub segment: Segment,
    /// Runtimes (one thread each) the users are spread over.
    pub cores: u64,
    /// Nothing is sent before this instant.
    pub start_at: Option<SystemTime>,
    /// What the segment runs.
    pub share: Share,
}

impl Placement {
    /// Every core by default, less one when the embedded stub serves the plan: it answers on the main
    /// runtime, and users on its core would slow it and be measured against it.
    pub fn resolve(spec: &PlacementSpec, graph: &Graph, stub: bool) -> Self {
        let segment = spec.segment.unwrap_or_default();
        let available = available_cores();
        let cores = spec.cores.unwrap_or(if stub { available.saturating_sub(1).max(1) } else { available });
        Self { segment, cores, start_at: spec.start_at, share: share(graph, segment) }
    }

    /// Puts the placement into the run's options.
    pub fn apply(&self, options: &mut RunOptions) {
        options.segment = self.segment;
        options.cores = self.cores;
        options.start_at = self.start_at;
    }
}
