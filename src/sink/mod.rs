//! Sinks: where samples go. Each sink is fed batches by one drain loop that owns the channel.

mod drain;
pub mod jsonl;
pub mod jtl;
mod observe;
pub mod stats;

pub use drain::{drain, SinkSet};
pub use observe::Observer;

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

/// A destination for samples. Called from the drain loop only, with batches in arrival order.
pub trait Sink: Send {
    /// Takes a batch of samples.
    fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError>;
    /// Flushes everything; called once at the end (also after an interrupt).
    fn finish(&mut self) -> Result<(), SinkError>;
}
