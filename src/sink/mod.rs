//! Sinks: where samples go. One drain loop owns the channel, feeds the statistics and the observers on the
//! runtime, and hands each batch to one writer thread per output, so a slow or stalled output never blocks
//! the runtime that times the requests.

pub(crate) mod bodies;
mod drain;
pub(crate) mod file;
pub(crate) mod jsonl;
pub mod jtl;
pub mod latencies;
mod observe;
pub mod stats;
#[cfg(test)]
mod sub_results_tests;
pub(crate) mod timestamp;
mod writer;

pub use drain::{drain, Drained, OutputReport, SinkSet, GRACE};
pub use file::{hold_writes, Landed, WholeFile};
pub use observe::Observer;

use std::sync::Arc;

use crate::sample::Sample;

/// A failure to write results.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// Writing to a results file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A destination for samples. Each output is driven by a thread of its own, with batches in arrival order.
pub trait Sink: Send {
    /// Takes a batch of samples.
    fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError>;
    /// Flushes everything; called once at the end (also after an interrupt).
    fn finish(&mut self) -> Result<(), SinkError>;
    /// What names the output in messages (a file's path).
    fn name(&self) -> &str {
        "results"
    }
    /// The count of samples already whole in the output, which the sink raises as they land, also part way
    /// through a `write`; it also tells the sink when the run gave up on it. `None` (the default): the writer
    /// counts whole batches when `write` returns.
    fn landed(&self) -> Option<Arc<Landed>> {
        None
    }
}
