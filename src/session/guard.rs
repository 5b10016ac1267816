//! Stops a run early: when a threshold marked `abort_on_fail` fails, or when results cannot be written.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::{Event, Listener, Stop};
use crate::compile::Graph;
use crate::plan::model::Threshold;
use crate::report::thresholds::evaluate_run;
use crate::run::Active;
use crate::sample::Sample;
use crate::sink::stats::Stats;
use crate::sink::{Observer, SinkError};

/// How often aborting thresholds are checked while the run goes on.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Why the run stopped itself before its end.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EarlyStop {
    /// A threshold marked `abort_on_fail` failed.
    #[error("threshold `{text}` on {label} failed")]
    Threshold {
        /// The threshold as written.
        text: String,
        /// Its label, `TOTAL` for the whole run.
        label: String,
    },
    /// An output could not be written.
    #[error("cannot write results ({0})")]
    Output(String),
}

/// The observer that stops the run.
pub(super) struct Guard {
    thresholds: Vec<Threshold>,
    started: Instant,
    last: Instant,
    stop: Stop,
    /// The first reason the run stopped itself.
    stopped: Arc<OnceLock<EarlyStop>>,
    listener: Arc<dyn Listener>,
    /// The run's counters, for `dropped` thresholds.
    counters: (Arc<Active>, Arc<Graph>),
}

impl Guard {
    /// A guard over the aborting thresholds of a plan, judging `dropped` ones on the run's counters.
    pub fn new(
        graph: Arc<Graph>,
        active: Arc<Active>,
        stop: Stop,
        stopped: Arc<OnceLock<EarlyStop>>,
        listener: Arc<dyn Listener>,
    ) -> Self {
        let now = Instant::now();
        Self {
            thresholds: graph.thresholds.iter().filter(|t| t.abort_on_fail).cloned().collect(),
            started: now,
            last: now,
            stop,
            stopped,
            listener,
            counters: (active, graph),
        }
    }

    fn abort(&self, why: EarlyStop) {
        if self.stopped.set(why.clone()).is_ok() {
            self.listener.event(Event::Stopping(&why));
            self.stop.stop();
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
        let (active, graph) = &self.counters;
        let dropped = active.dropped_iterations(graph);
        if let Some(v) =
            evaluate_run(&due, &summary, Some(&dropped)).into_iter().find(|v| !v.passed && v.measured.is_some())
        {
            let label = v.threshold.label.as_deref().unwrap_or("TOTAL").to_string();
            self.abort(EarlyStop::Threshold { text: v.threshold.text.clone(), label });
        }
    }

    fn sink_failed(&mut self, error: &SinkError) {
        self.abort(EarlyStop::Output(error.to_string()));
    }
}
