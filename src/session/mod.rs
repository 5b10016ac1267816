//! One run of a plan with its outputs, composed: the plan prepared (its stub started), every output claimed
//! and opened before anything is sent, the open files checked, the dashboard and the live outputs started,
//! the load run with its observers (the guard that stops it early, the live outputs, the dashboard, the
//! caller's), then the thresholds judged and the summary files and the report written. [`run`] does what
//! `planrun run` does without printing: it says what happens through a [`Listener`], and hands back a
//! [`RunReport`]; the command line prints both.

mod guard;
mod live;
pub mod outputs;
pub mod placement;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tokio::sync::watch;

pub use guard::EarlyStop;
pub use outputs::{Judged, SummaryFiles, SummaryPaths, UnreadableTimestamps, Written};
pub use placement::{Placement, PlacementSpec};

use crate::compile::Graph;
use crate::dashboard::{Dashboard, DashboardCounts, DashboardError};
use crate::diag::Warnings;
use crate::limits::TooFewFiles;
use crate::live::{Delivery, OutputSpec};
use crate::pipeline::{prepare, PrepareError, StubMode};
use crate::plan::PlanOptions;
use crate::report::dropped::DroppedIterations;
use crate::report::spreadsheet::TooManyRows;
use crate::report::summary_json::Connections;
use crate::report::thresholds::{evaluate_run, Verdict};
use crate::run::{Active, RunOptions, RunResult, StartError};
use crate::sink::timestamp::TimestampFormat;
use crate::sink::{Observer, SinkError, SinkSet};

/// A run to make: the plan and everything asked of the run besides it.
#[derive(Debug, Default)]
pub struct RunSpec {
    /// The plan file.
    pub plan: PathBuf,
    /// Properties and seed for the plan.
    pub plan_options: PlanOptions,
    /// The JTL; `results/<plan name>-<UTC yyyymmdd-HHMMSS>.jtl` when `None`.
    pub results: Option<PathBuf>,
    /// JSON lines, one object per sample.
    pub json: Option<PathBuf>,
    /// Add each failed response's body to its JSON line.
    pub json_failed_bodies: bool,
    /// A directory to write each failed response's body to.
    pub failed_bodies: Option<PathBuf>,
    /// The end-of-run statistics as JSON.
    pub summary_json: Option<PathBuf>,
    /// The per-label table as CSV.
    pub summary_csv: Option<PathBuf>,
    /// A directory for the HTML report, read back from the JTL at the end.
    pub report: Option<PathBuf>,
    /// Add the rows to the JTL and JSON lines files that exist instead of replacing them.
    pub append: bool,
    /// The JTL's timeStamp.
    pub timestamp_format: TimestampFormat,
    /// Where and when the users run.
    pub placement: PlacementSpec,
    /// Live outputs besides the plan's.
    pub live: Vec<OutputSpec>,
    /// One point per sample to every InfluxDB output too.
    pub live_raw: bool,
    /// Serve the dashboard on this address.
    pub dashboard: Option<SocketAddr>,
    /// The run's extras (sub-results, `--http-debug`, failed bodies kept); their placement and counters are
    /// set from the rest.
    pub options: RunOptions,
    /// The thresholds' verdicts as JUnit XML.
    pub junit: Option<PathBuf>,
    /// The summary and the thresholds' verdicts as Markdown.
    pub summary_md: Option<PathBuf>,
}

impl RunSpec {
    /// A run of `plan` with the defaults: a JTL in `results/`, nothing else.
    pub fn new(plan: impl Into<PathBuf>) -> Self {
        Self { plan: plan.into(), ..Self::default() }
    }
}

/// Asks a run to stop: shared with whatever may stop it (signals, the run's own guard).
#[derive(Debug, Clone)]
pub struct Stop {
    stop: Arc<watch::Sender<bool>>,
    hurry: Arc<watch::Sender<bool>>,
}

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    /// Nothing asked yet.
    pub fn new() -> Self {
        Self { stop: Arc::new(watch::channel(false).0), hurry: Arc::new(watch::channel(false).0) }
    }

    /// No new requests; those in flight finish and every output writes what it was given.
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }

    /// Stops, and the outputs are waited for no longer than a grace period once the users are done.
    pub fn hurry(&self) {
        let _ = self.stop.send(true);
        let _ = self.hurry.send(true);
    }
}

/// Hears what a run has to say as it goes, and adds observers of its samples.
pub trait Listener: Send + Sync {
    /// Something happened; the events come in the order they happen.
    fn event(&self, event: Event<'_>);

    /// Observers of the samples, added after the run's own just before the load starts.
    fn observers(&self, _start: &Start<'_>) -> Vec<Box<dyn Observer>> {
        Vec::new()
    }
}

/// A listener that hears nothing and adds nothing.
pub struct Silent;

impl Listener for Silent {
    fn event(&self, _event: Event<'_>) {}
}

/// The run about to start, once its outputs are open.
pub struct Start<'a> {
    /// The plan, compiled.
    pub graph: &'a Arc<Graph>,
    /// Where and when the users run.
    pub placement: &'a Placement,
    /// The plan's stub's address, when it serves the plan in this process.
    pub stub: Option<String>,
    /// The JTL.
    pub results: &'a Path,
    /// The run's options, its placement set.
    pub options: &'a RunOptions,
}

/// What a run says as it goes.
#[non_exhaustive]
pub enum Event<'a> {
    /// The plan's warnings; it runs anyway.
    PlanWarnings(&'a Warnings),
    /// The JTL's timeStamp cannot be read back by planrun's readers; the run goes on.
    UnreadableTimestamps(&'a UnreadableTimestamps),
    /// A results file holds `bytes` already: replaced, or added to with `append`.
    Existing {
        /// The file.
        path: &'a Path,
        /// Its length.
        bytes: u64,
        /// The run adds to it.
        append: bool,
    },
    /// Every output is open; the dashboard and the live outputs start next.
    Starting(&'a Start<'a>),
    /// The dashboard listens on this address.
    Dashboard(&'a str),
    /// A live output's database could not be reached or checked; the run goes on.
    LiveWarning(&'a str),
    /// The live outputs started.
    LiveStarted(&'a [OutputSpec]),
    /// The run stops itself.
    Stopping(&'a EarlyStop),
    /// The live outputs are done: what each delivered.
    Delivered(&'a [Delivery]),
    /// The dashboard stopped serving.
    DashboardClosed(&'a DashboardCounts),
    /// The load is over and judged; the summary files and the report are written next.
    Ran(&'a RunReport),
}

/// Why a run did not go through: nothing was sent, or the run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan cannot run.
    #[error(transparent)]
    Plan(#[from] PrepareError),
    /// A report with a results path that is not a regular file.
    #[error("--report reads the JTL back, so -o must be a regular file; {} is not", .0.display())]
    ResultsNotAFile(PathBuf),
    /// A report with a timeStamp format the report cannot read back.
    #[error("--report reads the JTL back, and {0}")]
    Unreadable(UnreadableTimestamps),
    /// An output could not be opened.
    #[error("{0} (nothing was sent)")]
    Output(#[from] SinkError),
    /// The dashboard could not listen.
    #[error("{0} (nothing was sent)")]
    Dashboard(#[from] DashboardError),
    /// A live output could not start.
    #[error("{0} (nothing was sent)")]
    Live(String),
    /// The run needs more open files than the machine allows.
    #[error(transparent)]
    OpenFiles(#[from] TooFewFiles),
    /// The run could not start (a data set, a runtime).
    #[error(transparent)]
    Start(#[from] StartError),
}

/// A run that went through.
pub struct RunReport {
    /// The plan, compiled.
    pub graph: Arc<Graph>,
    /// Where and when the users ran.
    pub placement: Placement,
    /// The JTL.
    pub results: PathBuf,
    /// The statistics, the outputs' states, why the run stopped early.
    pub result: RunResult,
    /// The thresholds judged (none for a segment that ran nothing: they are judged on merged results).
    pub verdicts: Vec<Verdict>,
    /// Open-model iterations dropped.
    pub dropped: DroppedIterations,
    /// The summary files and the report (empty until they are written).
    pub written: Written,
    /// The JTL holds more rows than a spreadsheet does.
    pub too_many_rows: Option<TooManyRows>,
    /// Why the run stopped itself, when it did.
    pub early_stop: Option<EarlyStop>,
}

impl RunReport {
    /// An output, the summary files or the report could not be written.
    pub fn results_lost(&self) -> bool {
        !self.written.errors.is_empty() || self.result.outputs.iter().any(|o| o.error.is_some())
    }

    /// planrun failed inside some samples (caught panics, each a failed `Internal` sample).
    pub fn internal_errors(&self) -> bool {
        self.result.stats.summary().internal_errors() > 0
    }

    /// A threshold failed.
    pub fn threshold_failed(&self) -> bool {
        self.verdicts.iter().any(|v| !v.passed)
    }
}

/// Runs the plan of `spec` with its outputs until it ends or `stop` says so; `listener` hears what happens.
/// Each output stays claimed for the rest of the process: another run in the same process writes files of
/// its own.
pub async fn run(spec: RunSpec, stop: Stop, listener: Arc<dyn Listener>) -> Result<RunReport, RunError> {
    let mut warnings = Warnings::default();
    let ready = prepare(&spec.plan, spec.plan_options, StubMode::Start, &mut warnings).await;
    if !warnings.is_empty() {
        listener.event(Event::PlanWarnings(&warnings));
    }
    let ready = ready?;
    let graph = ready.graph.clone();
    let jtl_path = spec.results.unwrap_or_else(|| outputs::default_results_path(&graph.name));
    if spec.report.is_some() && std::fs::metadata(&jtl_path).is_ok_and(|m| !m.is_file()) {
        return Err(RunError::ResultsNotAFile(jtl_path));
    }
    match outputs::check_timestamp_format(&spec.timestamp_format) {
        Err(e) if spec.report.is_some() => return Err(RunError::Unreadable(e)),
        Err(e) => listener.event(Event::UnreadableTimestamps(&e)),
        Ok(()) => {}
    }
    // Every output is claimed, then opened, before anything is sent: one that cannot be written stops the
    // run here, and one that is refused stops it before any is truncated.
    let results: Vec<&Path> = [Some(jtl_path.as_path()), spec.json.as_deref()].into_iter().flatten().collect();
    let paths = SummaryPaths {
        summary_json: spec.summary_json.as_deref(),
        summary_csv: spec.summary_csv.as_deref(),
        report_dir: spec.report.as_deref(),
        junit: spec.junit.as_deref(),
        summary_md: spec.summary_md.as_deref(),
    };
    let (claimed, after) = SummaryFiles::claim_and_open(&results, paths)?;
    for (path, had) in results.iter().zip(&claimed) {
        if let Some(bytes @ 1..) = had {
            listener.event(Event::Existing { path, bytes: *bytes, append: spec.append });
        }
    }
    let results = outputs::open_results(
        &jtl_path,
        spec.json.as_deref(),
        spec.json_failed_bodies,
        spec.failed_bodies.as_deref(),
        &spec.timestamp_format,
        spec.append,
    )?;
    let placement = Placement::resolve(&spec.placement, &graph, ready.stub.is_some());
    let active = Arc::new(Active::new(graph.groups.len()));
    let segment = (!placement.segment.is_whole()).then_some(placement.segment);
    let peak = placement.share.users + placement.share.setup_users;
    // The in-process stub holds the other end of every connection.
    let sockets = if ready.stub.is_some() { peak * 2 } else { peak };
    crate::limits::ensure_open_files(sockets)?;
    let mut options = spec.options;
    placement.apply(&mut options);
    options.active = Some(active.clone());
    let start = Start {
        graph: &graph,
        placement: &placement,
        stub: ready.stub.as_ref().map(|s| s.url()),
        results: &jtl_path,
        options: &options,
    };
    listener.event(Event::Starting(&start));
    let specs = live::specs(&spec.live, spec.live_raw, &graph);
    let dashboard = match spec.dashboard {
        Some(addr) => {
            let d = Dashboard::start(addr, &graph.name).await?;
            listener.event(Event::Dashboard(&d.url()));
            Some(d)
        }
        None => None,
    };
    let watchers = dashboard.iter().map(Dashboard::watcher).collect();
    let live = match live::start(&specs, &graph, segment, active.clone(), watchers).await.map_err(RunError::Live)? {
        Some((live, warnings)) => {
            for w in &warnings {
                listener.event(Event::LiveWarning(w));
            }
            listener.event(Event::LiveStarted(&specs));
            Some(live)
        }
        None => None,
    };
    let early_stop = Arc::new(OnceLock::new());
    let mut sinks = SinkSet::new(results);
    let guard = guard::Guard::new(graph.clone(), active.clone(), stop.clone(), early_stop.clone(), listener.clone());
    sinks.observers.push(Box::new(guard));
    if let Some(live) = &live {
        sinks.observers.push(Box::new(live.observer()));
    }
    if let Some(d) = &dashboard {
        sinks.observers.push(Box::new(d.observer(graph.thresholds.clone())));
    }
    sinks.observers.extend(listener.observers(&start));
    let (stop_rx, hurry_rx) = (stop.stop.subscribe(), stop.hurry.subscribe());
    let result = crate::run::execute_with(Arc::clone(&graph), sinks, stop_rx, hurry_rx, options).await?;
    if let Some(stub) = ready.stub {
        stub.shutdown().await;
    }
    if let Some(live) = live {
        listener.event(Event::Delivered(&live::finish(live).await));
    }
    if let Some(d) = dashboard {
        let report = if jtl_path.is_file() { outputs::report_html_of(&jtl_path) } else { None };
        listener.event(Event::DashboardClosed(&d.finish(report).await));
    }
    let dropped = active.dropped_iterations(&graph);
    // A segment that ran nothing has nothing to judge: its thresholds are judged on the merged results.
    let thresholds = if placement.share.is_empty() { &[][..] } else { &graph.thresholds[..] };
    let verdicts = evaluate_run(thresholds, &result.stats.summary(), Some(&dropped));
    let mut report = RunReport {
        graph: graph.clone(),
        placement,
        results: jtl_path,
        result,
        verdicts,
        dropped,
        written: Written::default(),
        too_many_rows: None,
        early_stop: early_stop.get().cloned(),
    };
    listener.event(Event::Ran(&report));
    // Only a plan with open-model groups can drop iterations: the others' summary JSON has no such field.
    let dropped = (!report.dropped.groups.is_empty()).then(|| report.dropped.clone());
    let connections = Connections { out_of_step: report.result.out_of_step };
    let plan_file = spec.plan.display().to_string();
    let judged = judged(&report, &plan_file);
    report.written = outputs::after_run(&report.result.stats, &report.results, after, (dropped, connections), &judged);
    if let Some(jtl) = report.result.outputs.first().filter(|_| report.results.is_file()) {
        report.too_many_rows = TooManyRows::check(&jtl.name, jtl.written);
    }
    Ok(report)
}

/// What the JUnit XML and the Markdown summary of a run say besides its statistics.
fn judged<'a>(report: &'a RunReport, plan_file: &'a str) -> Judged<'a> {
    let (graph, result) = (&report.graph, &report.result);
    let samples = result.stats.summary().total.samples;
    let mut notes = vec![format!(
        "{samples} samples in {:.1} s; results in {}",
        result.wall.as_secs_f64(),
        report.results.display()
    )];
    if let Some(why) = &report.early_stop {
        notes.push(format!("The run stopped early: {why}"));
    } else if result.interrupted {
        notes.push("The run was interrupted".into());
    }
    let internal = result.stats.summary().internal_errors();
    if internal > 0 {
        notes.push(format!("Internal errors: {internal} (planrun failed inside these samples)"));
    }
    let mut properties = vec![
        ("plan".to_string(), plan_file.to_string()),
        ("results".to_string(), report.results.display().to_string()),
        ("seed".to_string(), graph.seed.to_string()),
    ];
    if !report.placement.segment.is_whole() {
        properties.push(("segment".to_string(), report.placement.segment.to_string()));
    }
    Judged {
        name: &graph.name,
        plan_file,
        verdicts: &report.verdicts,
        time_s: result.wall.as_secs_f64(),
        properties,
        notes,
    }
}
