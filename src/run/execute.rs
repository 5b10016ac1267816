//! One run, end to end: scheduler and sinks joined by a bounded channel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::scheduler::{schedule, Active};
use super::vuser::RunContext;
use crate::compile::Graph;
use crate::sink::{drain, SinkError, SinkSet};

/// Samples in flight between the virtual users and the sinks; when full, users wait (back-pressure).
const CHANNEL_CAPACITY: usize = 16 * 1024;

/// What a finished run hands back.
pub struct RunResult {
    /// The sinks, with their statistics.
    pub sinks: SinkSet,
    /// The first error writing results, if any.
    pub sink_error: Option<SinkError>,
    /// True when the run was stopped before its end.
    pub interrupted: bool,
    /// How long the run took.
    pub wall: Duration,
    /// Open-model iterations dropped because every thread was busy, per group.
    pub dropped: Vec<u64>,
}

/// Runs the graph until every group ends or `stop` turns true, writing every sample to `sinks`.
pub async fn execute(graph: Arc<Graph>, sinks: SinkSet, stop: watch::Receiver<bool>) -> RunResult {
    let started = Instant::now();
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let drain = tokio::spawn(drain(rx, sinks));
    let active = Arc::new(Active::new(graph.groups.len()));
    schedule(RunContext { graph, tx, stop: stop.clone(), active: active.clone() }).await;
    let (sinks, result) = match drain.await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    let interrupted = *stop.borrow();
    let dropped = active.dropped.iter().map(|d| d.load(std::sync::atomic::Ordering::Relaxed)).collect();
    RunResult { sinks, sink_error: result.err(), interrupted, wall: started.elapsed(), dropped }
}
