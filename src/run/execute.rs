//! One run, end to end: scheduler and sinks joined by a bounded channel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio::sync::{mpsc, watch, Barrier};

use super::active::Active;
use super::data_rows::{DataError, DataSources};
use super::options::RunOptions;
use super::scheduler::schedule;
use super::vuser::RunContext;
use crate::compile::Graph;
use crate::segment::{Segment, Turns};
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

/// The most runtimes a run spreads its users over (`--cores`).
pub const MAX_CORES: u64 = 1024;

/// A run that could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A data set could not be opened.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A runtime for the users could not be made.
    #[error("cannot start a runtime for {cores} cores: {source}")]
    Runtime {
        /// How many were asked for.
        cores: u64,
        /// Why not.
        source: std::io::Error,
    },
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
    let cores = options.cores.clamp(1, MAX_CORES);
    // The segment of each core, decided before any runtime starts; a segment too fine to split again runs
    // on one core.
    let parts: Vec<Segment> =
        (0..cores).map(|c| options.segment.split(c, cores)).collect::<Result<_, _>>().unwrap_or_default();
    let runtimes = if parts.len() > 1 { user_runtimes(parts)? } else { Vec::new() };
    let turns = Turns::new(options.segment, super::share(&graph, options.segment).of);
    let data = Arc::new(DataSources::open_segment(&graph.data, turns)?);
    graph.templates.deal_counters(turns);
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
    let active = match options.active.clone() {
        Some(a) if a.groups.len() == graph.groups.len() => a,
        _ => Arc::new(Active::new(graph.groups.len())),
    };
    let data_end = Arc::new(std::sync::OnceLock::new());
    let start_at = options.start_at;
    let cx = RunContext {
        graph,
        tx,
        stop: halt,
        halt: halt_tx,
        active: active.clone(),
        data: data.clone(),
        data_end: data_end.clone(),
        segment: options.segment,
        options: Arc::new(options),
    };
    if let Some(at) = start_at {
        wait_for(at, cx.stop.clone()).await;
    }
    let started = Instant::now();
    if runtimes.is_empty() {
        schedule(cx, None).await;
    } else {
        spread(cx, runtimes).await?;
    }
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

/// One single-threaded runtime per core, with its segment, made before anything is sent.
fn user_runtimes(parts: Vec<Segment>) -> Result<Vec<(Segment, Runtime)>, StartError> {
    let cores = parts.len() as u64;
    parts
        .into_iter()
        .map(|part| Ok((part, tokio::runtime::Builder::new_current_thread().enable_all().build()?)))
        .collect::<Result<_, std::io::Error>>()
        .map_err(|source| StartError::Runtime { cores, source })
}

/// Runs the users on `runtimes`, each on a thread of its own with its segment; the phases (setup, main,
/// teardown) start together on every runtime. Plain threads, not tokio's blocking pool: the pool's cap
/// (512) would leave runtimes past it queued while the others wait for them at the phase barrier. Every
/// thread is started before any user: a thread that cannot start stops the run before anything is sent.
async fn spread(cx: RunContext, runtimes: Vec<(Segment, Runtime)>) -> Result<(), StartError> {
    let cores = runtimes.len() as u64;
    let phases = Arc::new(Barrier::new(runtimes.len()));
    let mut threads = Vec::with_capacity(runtimes.len());
    for (i, (segment, runtime)) in runtimes.into_iter().enumerate() {
        let (go, work) = std::sync::mpsc::channel::<RunContext>();
        let (done_tx, done) = tokio::sync::oneshot::channel::<()>();
        let phases = phases.clone();
        let thread = std::thread::Builder::new().name(format!("planrun-users-{i}")).spawn(move || {
            if let Ok(cx) = work.recv() {
                runtime.block_on(schedule(cx, Some(phases)));
            }
            let _ = done_tx.send(());
        });
        let thread = thread.map_err(|source| StartError::Runtime { cores, source })?;
        threads.push((thread, go, segment, done));
    }
    for (_, go, segment, _) in &threads {
        let _ = go.send(RunContext { segment: *segment, ..cx.clone() });
    }
    drop(cx);
    for (thread, _, _, done) in threads {
        // Err: the thread ended without saying so, which only a panic does; join hands the panic over.
        let _ = done.await;
        if let Err(panic) = thread.join() {
            std::panic::resume_unwind(panic);
        }
    }
    Ok(())
}

/// Waits until `at` (wall clock), or until the run is stopped.
async fn wait_for(at: std::time::SystemTime, mut stop: watch::Receiver<bool>) {
    let Ok(ahead) = at.duration_since(std::time::SystemTime::now()) else {
        return;
    };
    tokio::select! {
        _ = tokio::time::sleep(ahead) => {}
        _ = stop.wait_for(|s| *s) => {}
    }
}
