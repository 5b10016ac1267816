//! The live progress line on stderr: elapsed / planned, active threads, requests/s, error %, p95 over the
//! last interval. A redrawn line on a terminal, a plain line every 10 s otherwise (CI logs).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::print::errln;
use crate::compile::{Graph, StepNode};
use crate::sample::{Outcome, Sample};
use crate::sink::stats::Stats;
use crate::sink::{Observer, SinkError};

const TTY_TICK: Duration = Duration::from_secs(1);
const LOG_TICK: Duration = Duration::from_secs(10);

/// What the run is expected to do, to show how far along it is.
enum Planned {
    Time(Duration),
    Requests(u64),
    Unknown,
}

/// The progress observer.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
    tick: Duration,
    started: Instant,
    last: Instant,
    planned: Planned,
    window_count: u64,
    window_errors: u64,
    window: Histogram<u64>,
    threads: u32,
}

impl Progress {
    /// A progress line for a run of `graph` of which this process runs `users` per group, from `start`.
    pub fn new(graph: &Graph, users: &[u64], start: Option<std::time::SystemTime>) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = tty.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar
        });
        let now = Instant::now();
        let wait = start.and_then(|at| at.duration_since(std::time::SystemTime::now()).ok()).unwrap_or_default();
        Self {
            bar,
            tick: if tty { TTY_TICK } else { LOG_TICK },
            started: now + wait,
            last: now + wait,
            planned: planned(graph, users),
            window_count: 0,
            window_errors: 0,
            window: Histogram::new_with_bounds(1, 3_600_000_000, 2).expect("valid histogram bounds"),
            threads: 0,
        }
    }

    /// The live line, when stderr is a terminal: other output goes above it through it.
    pub fn bar(&self) -> Option<ProgressBar> {
        self.bar.clone()
    }

    fn line(&self, stats: &Stats, secs: f64) -> String {
        let elapsed = self.started.elapsed();
        let done = stats.total_latencies().len();
        let progress = match self.planned {
            Planned::Time(t) => format!("{:.0}s / {:.0}s", elapsed.as_secs_f64(), t.as_secs_f64()),
            Planned::Requests(n) => format!("{done} / {n} requests, {:.0}s", elapsed.as_secs_f64()),
            Planned::Unknown => format!("{done} requests, {:.0}s", elapsed.as_secs_f64()),
        };
        let rate = self.window_count as f64 / secs.max(1e-3);
        let errors =
            if self.window_count == 0 { 0.0 } else { self.window_errors as f64 * 100.0 / self.window_count as f64 };
        let p95 = self.window.value_at_quantile(0.95) as f64 / 1000.0;
        format!("{progress} | {} threads | {rate:.1} req/s | errors {errors:.2}% | p95 {p95:.1} ms", self.threads)
    }
}

fn planned(graph: &Graph, users: &[u64]) -> Planned {
    if let Some(longest) =
        graph.groups.iter().map(|g| g.duration).collect::<Option<Vec<_>>>().and_then(|d| d.into_iter().max())
    {
        return Planned::Time(longest);
    }
    let flat = |steps: &[StepNode]| steps.iter().all(|s| matches!(s, StepNode::Request(_) | StepNode::Think(_)));
    let mut total = 0u64;
    for (g, users) in graph.groups.iter().zip(users) {
        let (Some(loops), true) = (g.loops, flat(&g.steps)) else { return Planned::Unknown };
        let requests = g.steps.iter().filter(|s| matches!(s, StepNode::Request(_))).count() as u64;
        total = total.saturating_add(users.saturating_mul(loops).saturating_mul(requests));
    }
    Planned::Requests(total)
}

impl Observer for Progress {
    fn batch(&mut self, batch: &[Sample], stats: &Stats) {
        for s in batch.iter().filter(|s| !matches!(s.outcome, Outcome::Transaction { .. })) {
            self.window_count += 1;
            self.window_errors += u64::from(!s.success);
            let _ = self.window.record(s.elapsed_us.max(1));
            self.threads = s.all_threads;
        }
        let since = self.last.elapsed();
        if since < self.tick {
            return;
        }
        let line = self.line(stats, since.as_secs_f64());
        match &self.bar {
            Some(bar) => bar.set_message(line),
            None => errln!("planrun: {line}"),
        }
        self.last = Instant::now();
        self.window_count = 0;
        self.window_errors = 0;
        self.window.reset();
    }

    fn sink_failed(&mut self, _error: &SinkError) {}

    fn writing(&mut self) {
        match &self.bar {
            Some(bar) => bar.set_message("writing results..."),
            None => errln!("planrun: writing results..."),
        }
    }

    fn finish(&mut self, _stats: &Stats) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
