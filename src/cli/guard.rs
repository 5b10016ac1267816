//! Stops a run early: when a threshold marked `abort_on_fail` fails, or when results cannot be written.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::exit::{self, StopCode};
use super::print::errln;
use crate::compile::Graph;
use crate::plan::model::Threshold;
use crate::report::thresholds::evaluate_run;
use crate::run::Active;
use crate::sample::Sample;
use crate::sink::stats::Stats;
use crate::sink::{Observer, SinkError};

/// How often aborting thresholds are checked while the run goes on.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// The observer that stops the run.
pub(super) struct Guard {
    thresholds: Vec<Threshold>,
    started: Instant,
    last: Instant,
    stop: Arc<watch::Sender<bool>>,
    aborted: StopCode,
    /// The run's counters, for `dropped` thresholds.
    counters: Option<(Arc<Active>, Arc<Graph>)>,
}

impl Guard {
    /// A guard over the aborting thresholds of a plan.
    pub fn new(thresholds: &[Threshold], stop: Arc<watch::Sender<bool>>, aborted: StopCode) -> Self {
        let now = Instant::now();
        Self {
            thresholds: thresholds.iter().filter(|t| t.abort_on_fail).cloned().collect(),
            started: now,
            last: now,
            stop,
            aborted,
            counters: None,
        }
    }

    /// Judges `dropped` thresholds on the run's counters of dropped iterations.
    pub fn counting(self, active: Arc<Active>, graph: Arc<Graph>) -> Self {
        Self { counters: Some((active, graph)), ..self }
    }

    fn abort(&self, code: i32, why: &str) {
        if self.aborted.set_first(code) {
            errln!("\nplanrun: {why}; stopping the run");
            let _ = self.stop.send(true);
        }
    }
}

impl Observer for Guard {
    fn batch(&mut self, _batch: &[Sample], stats: &Stats) {
        if self.thresholds.is_empty() || self.last.elapsed() < CHECK_EVERY {
            return;
        }
        self.last = Instant::now();
        let elapsed = self.started.elapsed();
        let due: Vec<Threshold> = self.thresholds.iter().filter(|t| elapsed >= t.delay).cloned().collect();
        if due.is_empty() {
            return;
        }
        let summary = stats.summary();
        let dropped = self.counters.as_ref().map(|(active, graph)| active.dropped_iterations(graph));
        if let Some(v) =
            evaluate_run(&due, &summary, dropped.as_ref()).into_iter().find(|v| !v.passed && v.measured.is_some())
        {
            let label = v.threshold.label.as_deref().unwrap_or("TOTAL");
            self.abort(exit::THRESHOLD_FAILED, &format!("threshold `{}` on {label} failed", v.threshold.text));
        }
    }

    fn sink_failed(&mut self, error: &SinkError) {
        self.abort(exit::ABORTED, &format!("cannot write results ({error})"));
    }
}
