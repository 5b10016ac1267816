//! `planrun run PLAN` (and `planrun PLAN`): the run ([`crate::session`]) with what it says printed as it goes,
//! its summary at the end, and its exit code.

use std::sync::{Arc, OnceLock};

use super::args::RunArgs;
use super::exit::{self, StopCode};
use super::http_debug::{DebugPrinter, LeftOut};
use super::print::{err, errln, outln};
use super::progress::Progress;
use super::signals;
use crate::report::summary::render_table;
use crate::report::thresholds::render as render_thresholds;
use crate::run::RunResult;
use crate::session::{EarlyStop, Event, Listener, PlacementSpec, RunError, RunReport, RunSpec, Start, Stop};
use crate::sink::{Observer, GRACE};

pub(super) async fn run(a: RunArgs) -> i32 {
    let proxy = match super::proxy_flag(a.plan.proxy.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut plan_options = match a.plan.files.options(&a.plan.define, a.plan.seed) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    plan_options.proxy = proxy;
    let stop = Stop::new();
    let printer = Arc::new(Printer {
        quiet: a.quiet,
        plan: a.plan.plan.display().to_string(),
        failed_bodies: a.extras.failed_bodies.is_some(),
        stop: stop.clone(),
        stopped: OnceLock::new(),
    });
    match crate::session::run(spec(a, plan_options), stop, printer.clone()).await {
        Ok(report) => conclude(&report, printer.stopped.get(), printer.quiet),
        Err(e) => report_error(&e),
    }
}

/// The run the command line asks for.
fn spec(a: RunArgs, plan_options: crate::plan::PlanOptions) -> RunSpec {
    let options = a.extras.options();
    RunSpec {
        plan: a.plan.plan,
        plan_options,
        results: a.output,
        json: a.json,
        json_failed_bodies: a.extras.json_failed_bodies,
        failed_bodies: a.extras.failed_bodies,
        summary_json: a.summary.summary_json,
        summary_csv: a.summary.summary_csv,
        report: a.report.dir,
        append: a.append,
        timestamp_format: a.timestamp_format,
        placement: PlacementSpec {
            segment: a.placement.segment,
            cores: a.placement.cores,
            start_at: a.placement.start_at,
        },
        live: a.live.out,
        live_raw: a.live.out_raw,
        dashboard: a.dashboard,
        options,
        junit: a.ci.junit,
        summary_md: a.ci.summary_md,
    }
}

/// Prints why a run did not go through and returns its exit code.
fn report_error(e: &RunError) -> i32 {
    match e {
        RunError::Plan(e) => super::prepare::report_prepare_error(e),
        RunError::ResultsNotAFile(_) | RunError::Unreadable(_) => {
            errln!("error: {e}");
            exit::BAD_INPUT
        }
        RunError::Output(source) => {
            errln!("error: {e}");
            super::outputs::sink_exit_code(source)
        }
        RunError::Dashboard(_) | RunError::Live(_) | RunError::OpenFiles(_) | RunError::Start(_) => {
            errln!("error: {e}");
            exit::ABORTED
        }
    }
}

/// Prints what the run says as it goes; adds the terminal's observers and listens for signals once the run
/// is about to start.
struct Printer {
    quiet: bool,
    /// The plan file, as the thresholds name it.
    plan: String,
    failed_bodies: bool,
    stop: Stop,
    /// The exit code of the signal that stopped the run, once signals are listened for.
    stopped: OnceLock<StopCode>,
}

impl Listener for Printer {
    fn event(&self, event: Event<'_>) {
        let quiet = self.quiet;
        match event {
            Event::PlanWarnings(warnings) => err!("{warnings}"),
            Event::UnreadableTimestamps(e) => errln!("planrun: warning: {e}"),
            Event::Existing { path, bytes, append: false } => errln!(
                "planrun: warning: {} holds {bytes} bytes (an earlier run's results?): this run replaces them \
                 (--append adds to them)",
                path.display()
            ),
            Event::Existing { path, bytes, append: true } if !quiet => {
                errln!("planrun: adding to {} (it holds {bytes} bytes)", path.display())
            }
            Event::Starting(start) => starting(start, quiet),
            Event::Dashboard(url) => errln!("planrun: dashboard on {url}"),
            Event::LiveWarning(w) => errln!("planrun: warning: {w}"),
            Event::LiveStarted(specs) if !quiet => {
                for s in specs {
                    let raw = if s.raw { " (and one point per sample)" } else { "" };
                    errln!("planrun: live output -> {}{raw}", s.endpoint().map(|e| e.name).unwrap_or_default());
                }
            }
            Event::Stopping(why) => errln!("\nplanrun: {why}; stopping the run"),
            Event::Delivered(deliveries) => {
                for d in deliveries {
                    errln!("planrun: {}", super::live::line(d));
                }
            }
            Event::DashboardClosed(counts) if counts.dropped > 0 || counts.refused > 0 => errln!(
                "planrun: dashboard: {} pages served, {} closed for falling behind; {} connections refused (at most {} open)",
                counts.pages,
                counts.dropped,
                counts.refused,
                crate::dashboard::MAX_CONNECTIONS
            ),
            Event::Ran(report) => {
                print_summary(report, quiet);
                if !report.verdicts.is_empty() {
                    outln!("{}", render_thresholds(&report.verdicts, &self.plan));
                }
            }
            _ => {}
        }
    }

    fn observers(&self, start: &Start<'_>) -> Vec<Box<dyn Observer>> {
        let _ = self.stopped.set(signals::install(self.stop.clone()));
        let mut observers: Vec<Box<dyn Observer>> = Vec::new();
        let share = &start.placement.share;
        let progress = (!self.quiet).then(|| Progress::new(start.graph, &share.groups, start.placement.start_at));
        if start.options.http_debug.is_some() {
            observers.push(Box::new(DebugPrinter::new(progress.as_ref().and_then(Progress::bar))));
        }
        if let Some(progress) = progress {
            observers.push(Box::new(progress));
        }
        // After the progress line, which it clears first.
        observers.push(Box::new(LeftOut::of(start.options, self.failed_bodies)));
        observers
    }
}

/// What the run is about to do (stderr).
fn starting(start: &Start<'_>, quiet: bool) {
    let graph = start.graph;
    if !quiet {
        let threads = start.placement.share.users + start.placement.share.setup_users;
        errln!("planrun: plan `{}`: {} group(s), {threads} thread(s)", graph.name, graph.groups.len());
        if graph.seed_drawn {
            errln!("planrun: seed {} (replay with --seed {})", graph.seed, graph.seed);
        }
        if let Some(stub) = &start.stub {
            errln!("planrun: stub listening on {stub}");
        }
        errln!("planrun: results -> {}", start.results.display());
    }
    super::placement::announce(start.placement, quiet, start.stub.is_some());
}

/// Prints what the end of the run wrote and what was lost; the exit code.
fn conclude(report: &RunReport, stopped: Option<&StopCode>, quiet: bool) -> i32 {
    if let Some(page) = report.written.report.as_ref().filter(|_| !quiet) {
        errln!("planrun: report in {}", page.display());
    }
    for e in &report.written.errors {
        errln!("error: {e}");
    }
    if let Some(over) = &report.too_many_rows {
        errln!("planrun: warning: {over}");
    }
    report_outputs(&report.result);
    let outcome = Outcome {
        results_lost: report.results_lost(),
        signal: stopped.and_then(StopCode::code).filter(|_| report.result.interrupted),
        aborted: report.early_stop.as_ref().map(|why| match why {
            EarlyStop::Threshold { .. } => exit::THRESHOLD_FAILED,
            EarlyStop::Output(_) => exit::ABORTED,
        }),
        internal_errors: report.internal_errors(),
        threshold_failed: report.threshold_failed(),
    };
    outcome.code()
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

/// The summary table and what else the run has to say (with `quiet`, stderr holds only warnings and errors).
fn print_summary(report: &RunReport, quiet: bool) {
    let (graph, result) = (&report.graph, &report.result);
    let summary = result.stats.summary();
    outln!("{}", render_table(&summary));
    if !quiet {
        errln!(
            "planrun: {} samples in {:.1}s; results in {}",
            summary.total.samples,
            result.wall.as_secs_f64(),
            report.results.display()
        );
    }
    if graph.seed_drawn && !quiet {
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

/// Says which outputs failed or lack samples.
fn report_outputs(result: &RunResult) {
    for out in &result.outputs {
        if let Some(e) = &out.error {
            errln!("error: {e}");
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
}
