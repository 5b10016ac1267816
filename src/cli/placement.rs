//! `--segment`, `--cores` and `--start-at` resolved for one run, and what the run says about them.

use std::time::SystemTime;

use super::args::PlacementArgs;
use super::print::errln;
use crate::compile::Graph;
use crate::run::{share, RunOptions, Share};
use crate::segment::Segment;

fn available_cores() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// Where and when this process's users run.
pub(super) struct Placement {
    pub segment: Segment,
    pub cores: u64,
    pub start_at: Option<SystemTime>,
    /// What the segment runs.
    pub share: Share,
}

impl Placement {
    /// Every core by default, less one when the embedded stub serves the plan: it answers on the main
    /// runtime, and users on its core would slow it and be measured against it.
    pub fn resolve(args: &PlacementArgs, graph: &Graph, stub: bool) -> Self {
        let segment = args.segment.unwrap_or_default();
        let available = available_cores();
        let cores = args.cores.unwrap_or(if stub { available.saturating_sub(1).max(1) } else { available });
        Self { segment, cores, start_at: args.start_at, share: share(graph, segment) }
    }

    /// Puts the placement into the run's options.
    pub fn apply(&self, options: &mut RunOptions) {
        options.segment = self.segment;
        options.cores = self.cores;
        options.start_at = self.start_at;
    }

    /// Says what this segment runs and when it starts (stderr; the warning even with --quiet).
    pub fn announce(&self, quiet: bool, stub: bool) {
        if !quiet {
            if !self.segment.is_whole() {
                let setup = if self.share.setup_users > 0 { "; it runs the setup and teardown groups" } else { "" };
                errln!(
                    "planrun: segment {}: {} of the plan's {} users{setup}",
                    self.segment,
                    self.share.users,
                    self.share.of
                );
            }
            let stub_core = match (stub, self.cores < available_cores()) {
                (false, _) => "",
                (true, true) => ", the embedded stub on the main thread",
                (true, false) => ", sharing them with the embedded stub",
            };
            errln!("planrun: users on {} core(s){stub_core}", self.cores);
        }
        if self.share.is_empty() {
            errln!(
                "planrun: segment {} has nothing to run: the plan's {} users are dealt round-robin to segments \
                 0-{}, and setup and teardown groups run in segment 0",
                self.segment,
                self.share.of,
                self.share.of.min(self.segment.count()).saturating_sub(1)
            );
        }
        if let Some(at) = self.start_at {
            match at.duration_since(SystemTime::now()) {
                Ok(ahead) if !quiet => errln!("planrun: starting in {:.1}s (--start-at)", ahead.as_secs_f64()),
                Ok(_) => {}
                Err(late) => {
                    errln!("warning: --start-at is {:.1}s in the past; starting now", late.duration().as_secs_f64())
                }
            }
        }
    }
}
