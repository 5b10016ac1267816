//! The scheduler: runs every thread group of the graph with its load model, side by side.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{watch, Barrier};
use tokio::task::JoinSet;

use super::deal::Deal;
use super::vuser::RunContext;
use super::{closed, open};
use crate::plan::model::{Load, Phase};
use crate::segment::Segment;

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
        let deadline = g.duration.map(|d| crate::clock::after(start, d));
        match g.load_as_run() {
            Load::Closed => groups.spawn(closed::fixed(cx, gi, deal, start, deadline)),
            Load::ClosedStages(stages) => groups.spawn(closed::staged(cx, gi, deal, stages, start, deadline)),
            Load::Open { initial_rate, stages } => groups.spawn(open::open(cx, gi, deal, initial_rate, stages, start)),
        };
    }
    drop(cx);
    while groups.join_next().await.is_some() {}
}
