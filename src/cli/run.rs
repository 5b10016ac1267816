//! `planrun run PLAN` (and `planrun PLAN`): run the load, stream results, print the summary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::watch;

use super::args::{ExtrasArgs, RunArgs};
use super::exit::StopCode;
use super::guard::Guard;
use super::http_debug::{DebugPrinter, LeftOut};
use super::placement::Placement;
use super::print::{errln, outln};
use super::progress::Progress;
use super::report::UnreadableTimestamps;
use super::{exit, signals};
use crate::compile::Graph;
use crate::dashboard::Dashboard;
use crate::dashboard::DashboardError;
use crate::limits::TooFewFiles;
use crate::pipeline::{PrepareError, StubMode};
use crate::plan::PlanOptions;
use crate::report::summary::render_table;
use crate::report::summary_json::Connections;
use crate::report::thresholds::{evaluate_run, render as render_thresholds};
use crate::run::{Active, RunResult, StartError};
use crate::sink::bodies::BodyFiles;
use crate::sink::jsonl::JsonlSink;
use crate::sink::jtl::JtlSink;
use crate::sink::timestamp::TimestampFormat;
use crate::sink::{Sink, SinkError, SinkSet, GRACE};

pub(super) async fn run(a: RunArgs) -> i32 {
    match run_plan(a).await {
        Ok(code) => code,
        Err(e) => e.report(),
    }
}

/// Why a run did not go through: nothing was sent, or the run could not start.
#[derive(Debug, thiserror::Error)]
enum RunError {
    /// The plan cannot run.
    #[error(transparent)]
    Plan(#[from] PrepareError),
    /// `--report` with a results path that is not a regular file.
    #[error("--report reads the JTL back, so -o must be a regular file; {} is not", .0.display())]
    ResultsNotAFile(PathBuf),
    /// `--report` with a timeStamp format the report cannot read back.
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

impl RunError {
    /// Prints the error and returns its exit code.
    fn report(&self) -> i32 {
        match self {
            Self::Plan(e) => super::prepare::report_prepare_error(e),
            Self::ResultsNotAFile(_) | Self::Unreadable(_) => {
                errln!("error: {self}");
                exit::BAD_INPUT
            }
            Self::Output(e) => {
                errln!("error: {self}");
                super::outputs::sink_exit_code(e)
            }
            Self::Dashboard(_) | Self::Live(_) | Self::OpenFiles(_) | Self::Start(_) => {
                errln!("error: {self}");
                exit::ABORTED
            }
        }
    }
}

/// Runs the plan; the exit code of a run that went through, or why it did not.
async fn run_plan(a: RunArgs) -> Result<i32, RunError> {
    let opts = PlanOptions { overrides: a.plan.define, seed: a.plan.seed, stub_url: None };
    let ready = super::prepare::plan_or_error(&a.plan.plan, opts, StubMode::Start).await?;
    let graph = ready.graph.clone();
    let jtl_path = a.output.unwrap_or_else(|| default_results_path(&graph.name));
    if a.report.is_some() && std::fs::metadata(&jtl_path).is_ok_and(|m| !m.is_file()) {
        return Err(RunError::ResultsNotAFile(jtl_path));
    }
    super::report::check_timestamp_format(&a.timestamp_format, a.report.is_some()).map_err(RunError::Unreadable)?;
    // Every output is claimed, then opened, before anything is sent: one that cannot be written stops the
    // run here, and one that is refused stops it before any is truncated.
    let report_files = a.report.as_deref().map(super::outputs::report_files);
    let side = [a.summary_json.as_deref(), a.summary_csv.as_deref()].into_iter().flatten();
    let results = [Some(jtl_path.as_path()), a.json.as_deref()];
    let claimed = super::outputs::claim_all(
        results.into_iter().flatten().chain(side).chain(report_files.iter().flatten().map(PathBuf::as_path)),
    )?;
    for (path, had) in results.iter().zip(&claimed) {
        match (path, had) {
            (Some(path), Some(bytes @ 1..)) if !a.append => errln!(
                "planrun: warning: {} holds {bytes} bytes (an earlier run's results?): this run replaces them \
                 (--append adds to them)",
                path.display()
            ),
            (Some(path), Some(bytes @ 1..)) if !a.quiet => {
                errln!("planrun: adding to {} (it holds {bytes} bytes)", path.display())
            }
            _ => {}
        }
    }
    let after = super::report::Outputs::open(a.summary_json.as_deref(), a.summary_csv.as_deref(), a.report.as_deref())?;
    let outputs = open_outputs(&jtl_path, a.json.as_deref(), &a.timestamp_format, &a.extras, a.append)?;
    let placement = Placement::resolve(&a.placement, &graph, ready.stub.is_some());
    let active = Arc::new(Active::new(graph.groups.len()));
    let segment = (!placement.segment.is_whole()).then_some(placement.segment);
    let peak = placement.share.users + placement.share.setup_users;
    // The in-process stub holds the other end of every connection.
    let sockets = if ready.stub.is_some() { peak * 2 } else { peak };
    crate::limits::ensure_open_files(sockets)?;
    if !a.quiet {
        let threads = peak;
        errln!("planrun: plan `{}`: {} group(s), {threads} thread(s)", graph.name, graph.groups.len());
        if graph.seed_drawn {
            errln!("planrun: seed {} (replay with --seed {})", graph.seed, graph.seed);
        }
        if let Some(stub) = &ready.stub {
            errln!("planrun: stub listening on {}", stub.url());
        }
        errln!("planrun: results -> {}", jtl_path.display());
    }
    placement.announce(a.quiet, ready.stub.is_some());
    let specs = super::live::specs(&a.live, &graph);
    let dashboard = match a.dashboard {
        Some(addr) => {
            let d = Dashboard::start(addr, &graph.name).await?;
            errln!("planrun: dashboard on {}", d.url());
            Some(d)
        }
        None => None,
    };
    let watchers = dashboard.iter().map(Dashboard::watcher).collect();
    let live =
        super::live::start(&specs, &graph, segment, active.clone(), a.quiet, watchers).await.map_err(RunError::Live)?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let stop_tx = Arc::new(stop_tx);
    let (hurry_tx, hurry_rx) = watch::channel(false);
    let stopped = signals::install(stop_tx.clone(), hurry_tx);
    let aborted = StopCode::default();
    let mut sinks = SinkSet::new(outputs);
    let guard = Guard::new(&graph.thresholds, stop_tx.clone(), aborted.clone()).counting(active.clone(), graph.clone());
    sinks.observers.push(Box::new(guard));
    if let Some(live) = &live {
        sinks.observers.push(Box::new(live.observer()));
    }
    if let Some(d) = &dashboard {
        sinks.observers.push(Box::new(d.observer(graph.thresholds.clone())));
    }
    let progress = (!a.quiet).then(|| Progress::new(&graph, &placement.share.groups, placement.start_at));
    let mut options = a.extras.options();
    placement.apply(&mut options);
    options.active = Some(active.clone());
    if options.http_debug.is_some() {
        sinks.observers.push(Box::new(DebugPrinter::new(progress.as_ref().and_then(Progress::bar))));
    }
    if let Some(progress) = progress {
        sinks.observers.push(Box::new(progress));
    }
    // After the progress line, which it clears first.
    sinks.observers.push(Box::new(LeftOut::of(&options, a.extras.failed_bodies.is_some())));
    let result = crate::run::execute_with(Arc::clone(&graph), sinks, stop_rx, hurry_rx, options).await?;
    if let Some(stub) = ready.stub {
        stub.shutdown().await;
    }
    if let Some(live) = live {
        super::live::finish(live).await;
    }
    if let Some(d) = dashboard {
        let report = if jtl_path.is_file() { super::report::report_html_of(&jtl_path) } else { None };
        let counts = d.finish(report).await;
        if counts.dropped > 0 || counts.refused > 0 {
            errln!(
                "planrun: dashboard: {} pages served, {} closed for falling behind; {} connections refused (at most {} open)",
                counts.pages,
                counts.dropped,
                counts.refused,
                crate::dashboard::MAX_CONNECTIONS
            );
        }
    }
    let dropped = active.dropped_iterations(&graph);
    print_summary(&graph, &result, &jtl_path);
    // A segment that ran nothing has nothing to judge: its thresholds are judged on the merged results.
    let thresholds = if placement.share.is_empty() { &[][..] } else { &graph.thresholds[..] };
    let verdicts = evaluate_run(thresholds, &result.stats.summary(), Some(&dropped));
    if !verdicts.is_empty() {
        outln!("{}", render_thresholds(&verdicts, &a.plan.plan.display().to_string()));
    }
    // Only a plan with open-model groups can drop iterations: the others' summary JSON has no such field.
    let dropped = (!dropped.groups.is_empty()).then_some(dropped);
    let connections = Connections { out_of_step: result.out_of_step };
    let after = super::report::after_run(&result.stats, &jtl_path, after, (dropped, connections));
    for e in &after {
        errln!("error: {e}");
    }
    if let Some(jtl) = result.outputs.first().filter(|_| jtl_path.is_file()) {
        super::report::warn_too_many_rows(&jtl.name, jtl.written);
    }
    let outcome = Outcome {
        results_lost: !after.is_empty() || report_outputs(&result),
        signal: stopped.code().filter(|_| result.interrupted),
        aborted: aborted.code(),
        internal_errors: result.stats.summary().internal_errors() > 0,
        threshold_failed: verdicts.iter().any(|v| !v.passed),
    };
    Ok(outcome.code())
}

/// How a run that went through ended, for its exit code.
struct Outcome {
    /// An output, the summary JSON or the report could not be written.
    results_lost: bool,
    /// The exit code of the signal that stopped the run.
    signal: Option<i32>,
    /// The exit code of an early stop by the run itself (an aborting threshold, a failed output).
    aborted: Option<i32>,
    /// planrun failed inside some samples (caught panics, each a failed `Internal` sample).
    internal_errors: bool,
    /// A threshold failed.
    threshold_failed: bool,
}

impl Outcome {
    /// The most telling code first: results lost (3), then the signal, the early stop, internal errors (4),
    /// the thresholds.
    fn code(&self) -> i32 {
        if self.results_lost {
            exit::ABORTED
        } else if let Some(code) = self.signal.or(self.aborted) {
            code
        } else if self.internal_errors {
            exit::INTERNAL_ERROR
        } else if self.threshold_failed {
            exit::THRESHOLD_FAILED
        } else {
            exit::OK
        }
    }
}

/// The JTL, and the JSON lines and failed bodies' directory when asked for; with `append`, the JTL and the
/// JSON lines keep what they hold.
fn open_outputs(
    jtl: &Path,
    json: Option<&Path>,
    time: &TimestampFormat,
    extras: &ExtrasArgs,
    append: bool,
) -> Result<Vec<Box<dyn Sink>>, SinkError> {
    let jtl = JtlSink::open(jtl, append)?.with_timestamp_format(time.clone());
    let mut outputs: Vec<Box<dyn Sink>> = vec![Box::new(jtl)];
    if let Some(json) = json {
        outputs.push(Box::new(JsonlSink::open(json, append)?.with_bodies(extras.json_failed_bodies)));
    }
    if let Some(dir) = &extras.failed_bodies {
        outputs.push(Box::new(BodyFiles::create(dir)?));
    }
    Ok(outputs)
}

/// The summary table and what else the run has to say.
fn print_summary(graph: &Graph, result: &RunResult, jtl_path: &Path) {
    let summary = result.stats.summary();
    outln!("{}", render_table(&summary));
    errln!(
        "planrun: {} samples in {:.1}s; results in {}",
        summary.total.samples,
        result.wall.as_secs_f64(),
        jtl_path.display()
    );
    if graph.seed_drawn {
        errln!("planrun: seed {}", graph.seed);
    }
    if result.waited > 0 {
        outln!(
            "Results writer fell behind: {} samples waited for it (their users paused between requests; no time measured includes the wait)",
            result.waited
        );
    }
    let internal = summary.internal_errors();
    if internal > 0 {
        outln!(
            "Internal errors: {internal} (planrun failed inside these samples: a bug, please report it with their \
             responseMessage; the run went on)"
        );
    }
    if result.out_of_step > 0 {
        outln!(
            "Out-of-step connections: {} (the server sent bytes no request asked for, a late or second response: \
             each such connection was closed, and an answer read on it before may have been an earlier request's; \
             see docs/faults.md)",
            result.out_of_step
        );
    }
    if let Some(why) = &result.data_stop {
        errln!("planrun: the run stopped early: {why}");
    }
    for (g, dropped) in graph.groups.iter().zip(&result.dropped).filter(|(_, d)| **d > 0) {
        outln!(
            "Dropped iterations: {dropped} in group `{}` (every one of its {} threads was busy; raise max_threads)",
            g.name,
            g.threads
        );
    }
}

/// Says which outputs failed or lack samples; true when one failed.
fn report_outputs(result: &RunResult) -> bool {
    let mut failed = false;
    for out in &result.outputs {
        if let Some(e) = &out.error {
            errln!("error: {e}");
            failed = true;
        }
        if out.unwritten() == 0 {
            continue;
        }
        let why = if out.abandoned {
            format!(" (the run stopped waiting for it after it wrote nothing for {} s)", GRACE.as_secs())
        } else {
            String::new()
        };
        errln!("planrun: {} of {} samples could not be written to {}{why}", out.unwritten(), out.samples, out.name);
    }
    failed
}

fn default_results_path(name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    PathBuf::from("results").join(format!("{safe}-{stamp}.jtl"))
}
