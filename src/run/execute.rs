//! One run, end to end: scheduler and sinks joined by a bounded channel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::data::{DataError, DataSources};
use super::options::RunOptions;
use super::scheduler::{schedule, Active};
use super::vuser::RunContext;
use crate::compile::Graph;
use crate::sink::stats::Stats;
use crate::sink::{drain, OutputReport, SinkSet};

/// Samples in flight between the virtual users and the sinks; when full, users wait (back-pressure).
const CHANNEL_CAPACITY: usize = 16 * 1024;

/// What a finished run hands back.
pub struct RunResult {
    /// Statistics of every sample (written to the outputs or not).
    pub stats: Stats,
    /// What each output got, in the order of [`SinkSet::outputs`]: its error, the samples it lacks.
    pub outputs: Vec<OutputReport>,
    /// True when the run was stopped before its end.
    pub interrupted: bool,
    /// How long the run took.
    pub wall: Duration,
    /// Open-model iterations dropped because every thread was busy, per group.
    pub dropped: Vec<u64>,
    /// Why a data set stopped the run, when one did (`on_eof: stop_run`, or a read error).
    pub data_stop: Option<String>,
    /// Samples whose user waited for the sinks to catch up (back-pressure).
    pub waited: u64,
}

/// A run that could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A data set could not be opened.
    #[error(transparent)]
    Data(#[from] DataError),
}

/// Runs the graph until every group ends or `stop` turns true, writing every sample to `sinks`. `hurry`
/// turning true (a signal) also stops waiting for slow outputs: once the users are done, they get
/// [`GRACE`](crate::sink::GRACE) to finish, and what they could not write is counted, not waited for.
pub async fn execute(
    graph: Arc<Graph>,
    sinks: SinkSet,
    stop: watch::Receiver<bool>,
    hurry: watch::Receiver<bool>,
) -> Result<RunResult, StartError> {
    execute_with(graph, sinks, stop, hurry, RunOptions::default()).await
}

/// [`execute`], recording what `options` asks for beyond the samples' columns.
pub async fn execute_with(
    graph: Arc<Graph>,
    sinks: SinkSet,
    stop: watch::Receiver<bool>,
    hurry: watch::Receiver<bool>,
    options: RunOptions,
) -> Result<RunResult, StartError> {
    let started = Instant::now();
    let data = Arc::new(DataSources::open(&graph.data)?);
    // The users watch `halt`: the caller's stop, or a data set that ran out with `on_eof: stop_run`.
    let (halt_tx, halt) = watch::channel(false);
    let halt_tx = Arc::new(halt_tx);
    let forward = {
        let (mut stop, halt_tx) = (stop.clone(), halt_tx.clone());
        tokio::spawn(async move {
            if stop.wait_for(|s| *s).await.is_ok() {
                let _ = halt_tx.send(true);
            }
        })
    };
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let drain = tokio::spawn(drain(rx, sinks, hurry));
    let active = Arc::new(Active::new(graph.groups.len()));
    let data_end = Arc::new(std::sync::OnceLock::new());
    let cx = RunContext {
        graph,
        tx,
        stop: halt,
        halt: halt_tx,
        active: active.clone(),
        data: data.clone(),
        data_end: data_end.clone(),
        options: Arc::new(options),
    };
    schedule(cx).await;
    forward.abort();
    let drained = match drain.await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    let interrupted = *stop.borrow();
    let dropped = active.dropped.iter().map(|d| d.load(std::sync::atomic::Ordering::Relaxed)).collect();
    let data_stop = data.failure().or_else(|| data_end.get().cloned());
    let waited = active.waited.load(std::sync::atomic::Ordering::Relaxed);
    let wall = started.elapsed();
    Ok(RunResult { stats: drained.stats, outputs: drained.outputs, interrupted, wall, dropped, data_stop, waited })
}
