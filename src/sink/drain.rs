//! The drain loop: the one owner of the sample channel, feeding statistics and every output in batches.

use tokio::sync::mpsc::Receiver;

use super::stats::Stats;
use super::{Observer, Sink, SinkError};
use crate::sample::Sample;

/// Most samples taken from the channel at once.
const BATCH: usize = 1024;

/// After a small batch, how long the drain lets samples gather before it takes the next one. Waking for
/// every few samples costs the users' task switches and a write(2) per handful of rows; a few milliseconds
/// of samples waiting in the channel cost nothing (it holds thousands).
const GATHER: std::time::Duration = std::time::Duration::from_millis(4);

/// Where drained samples go: the statistics, and the result files.
pub struct SinkSet {
    /// Statistics of every sample, for the summary.
    pub stats: Stats,
    /// The result files (JTL, JSON lines), written in this order.
    pub outputs: Vec<Box<dyn Sink>>,
    /// Watchers of the samples (progress, thresholds).
    pub observers: Vec<Box<dyn Observer>>,
}

impl SinkSet {
    /// Fresh statistics and the given outputs.
    pub fn new(outputs: Vec<Box<dyn Sink>>) -> Self {
        SinkSet { stats: Stats::new(), outputs, observers: Vec::new() }
    }
}

/// Receives samples until every sender is gone, then finishes the outputs; run it as a task.
///
/// After the first output error no output is written again, but the channel is still drained into the
/// statistics, so virtual users never block on a full channel; that first error is returned at the end.
/// Outputs are finished (flushed) even then, so they keep every complete batch they took.
pub async fn drain(mut rx: Receiver<Sample>, mut set: SinkSet) -> (SinkSet, Result<(), SinkError>) {
    let mut buf = Vec::with_capacity(BATCH);
    let mut failed = None;
    loop {
        let taken = rx.recv_many(&mut buf, BATCH).await;
        if taken == 0 {
            break;
        }
        for s in &buf {
            set.stats.record(s);
        }
        if failed.is_none() {
            failed = set.outputs.iter_mut().find_map(|out| out.write(&buf).err());
            if let Some(e) = &failed {
                set.observers.iter_mut().for_each(|o| o.sink_failed(e));
            }
        }
        for o in &mut set.observers {
            o.batch(&buf, &set.stats);
        }
        buf.clear();
        if taken < BATCH / 4 {
            tokio::time::sleep(GATHER).await;
        }
    }
    for o in &mut set.observers {
        o.finish(&set.stats);
    }
    for out in &mut set.outputs {
        let finished = out.finish();
        if failed.is_none() {
            failed = finished.err();
        }
    }
    (set, failed.map_or(Ok(()), Err))
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

    use tokio::sync::mpsc;

    use super::*;
    use crate::sink::jtl::tests::sample;
    use crate::sink::jtl::JtlSink;

    /// A writer the test can read while the sink owns a handle to it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Fails on its second batch.
    struct Failing(u32);

    impl Sink for Failing {
        fn write(&mut self, _: &[Sample]) -> Result<(), SinkError> {
            self.0 += 1;
            match self.0 {
                1 => Ok(()),
                _ => Err(SinkError::Io { path: "failing".into(), source: io::Error::other("disk full") }),
            }
        }
        fn finish(&mut self) -> Result<(), SinkError> {
            Ok(())
        }
    }

    const SAMPLES: usize = 10_000;

    /// Sends SAMPLES samples from another task through a small channel, as the virtual users do.
    async fn run(outputs: Vec<Box<dyn Sink>>) -> (SinkSet, Result<(), SinkError>) {
        let (tx, rx) = mpsc::channel(64);
        let drained = tokio::spawn(drain(rx, SinkSet::new(outputs)));
        for i in 0..SAMPLES {
            tx.send(Sample { start_ms: i as u64, ..sample("step") }).await.unwrap();
        }
        drop(tx);
        drained.await.unwrap()
    }

    #[tokio::test]
    async fn every_sample_reaches_every_output() {
        let memory = Shared::default();
        let path = std::env::temp_dir().join(format!("planrun-drain-{}/results.jtl", std::process::id()));
        let outputs: Vec<Box<dyn Sink>> =
            vec![Box::new(JtlSink::new(memory.clone(), "memory").unwrap()), Box::new(JtlSink::create(&path).unwrap())];
        let (set, result) = run(outputs).await;
        result.unwrap();
        assert_eq!(set.stats.summary().total.samples, SAMPLES as u64);
        let text = String::from_utf8(memory.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), SAMPLES + 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[tokio::test]
    async fn an_output_error_stops_writing_but_not_draining() {
        let memory = Shared::default();
        let outputs: Vec<Box<dyn Sink>> =
            vec![Box::new(Failing(0)), Box::new(JtlSink::new(memory.clone(), "memory").unwrap())];
        let (set, result) = run(outputs).await;
        assert!(matches!(result, Err(SinkError::Io { path, .. }) if path == "failing"));
        assert_eq!(set.stats.summary().total.samples, SAMPLES as u64);
        let rows = memory.0.lock().unwrap().iter().filter(|&&b| b == b'\n').count() - 1;
        assert!(rows < SAMPLES, "the JTL stopped after the failing batch: {rows} rows");
    }
}
