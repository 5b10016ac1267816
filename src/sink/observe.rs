//! Observers: watch the samples as the drain loop takes them in (live progress, thresholds that abort).

use super::stats::Stats;
use super::SinkError;
use crate::sample::Sample;

/// Watches every batch of samples after the statistics took it in. Runs on the drain loop: keep it cheap.
pub trait Observer: Send {
    /// A batch arrived; `stats` already counts it.
    fn batch(&mut self, batch: &[Sample], stats: &Stats);
    /// Writing results failed; the run should stop.
    fn sink_failed(&mut self, error: &SinkError);
    /// The users are done; the outputs are still writing what they were given (a slow disk or reader).
    fn writing(&mut self) {}
    /// The run is over (called once, after the last batch and after the outputs finished).
    fn finish(&mut self, _stats: &Stats) {}
}
