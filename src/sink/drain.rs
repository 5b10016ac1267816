//! The drain loop: the one owner of the sample channel. It feeds the statistics and the observers, and hands
//! each batch to every output's writer thread.
//!
//! When an output falls behind, its queue fills and the drain waits for room, the sample channel fills, and
//! the users wait in `emit`, between two requests: results are never dropped to keep pace, and no request's
//! time includes the wait. When the run is told to hurry (a signal), the drain stops waiting: it keeps taking
//! samples into the statistics, so every user can finish, keeps what an output cannot take yet, and once the
//! users are done waits for the outputs while they write: one that writes nothing for [`GRACE`] is given up on,
//! and what it lacks is counted.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::Receiver;
use tokio::sync::watch;
use tokio::time::Instant;

use super::stats::Stats;
use super::writer::{Recycle, Shared, Writer};
use super::{Observer, Sink, SinkError};
use crate::sample::Sample;

/// Most samples taken from the channel at once.
const BATCH: usize = 1024;

/// How long the drain lets a batch gather before the writers get it, unless it fills first. Waking a
/// writer for every few samples costs a task switch per handful of rows.
const GATHER: Duration = Duration::from_millis(4);

/// While a batch gathers, the drain empties the channel into it again as soon as the users that were ready
/// have run, and after this long when its last pass found nothing (so an idle run does not spin). Samples
/// that sat in the channel for all of [`GATHER`] spread over blocks whose memory had gone cold by the time
/// the users wrote the next samples there; taken at once, they cycle through a block or two that stay in
/// the cache.
const TICK: Duration = Duration::from_millis(1);

/// Once the users are done after a hurry, how long an output may write nothing before the run stops
/// waiting for it.
pub const GRACE: Duration = Duration::from_secs(1);

/// After a hurry, the longest the run waits for outputs that are still writing, beyond the first [`GRACE`].
const MAX_GRACE: Duration = Duration::from_secs(10);

/// At the end of a run, after how long the observers hear that results are still being written.
const NOTICE: Duration = Duration::from_secs(1);

/// Where drained samples go: the statistics, the observers, and the outputs.
pub struct SinkSet {
    /// Statistics of every sample, for the summary.
    pub stats: Stats,
    /// The result files (JTL, JSON lines), each written by a thread of its own.
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

/// What an output got.
#[derive(Debug)]
pub struct OutputReport {
    /// The output's name (its path).
    pub name: String,
    /// Why writing it failed, if it did.
    pub error: Option<SinkError>,
    /// Samples the drain took in.
    pub samples: u64,
    /// Samples written whole to this output.
    pub written: u64,
    /// The run stopped waiting for this output (a hurry, then [`GRACE`] passed).
    pub abandoned: bool,
}

impl OutputReport {
    /// Samples this output lacks.
    pub fn unwritten(&self) -> u64 {
        self.samples.saturating_sub(self.written)
    }
}

/// What the drain hands back at the end.
pub struct Drained {
    /// Statistics of every sample taken in, written or not.
    pub stats: Stats,
    /// Each output's outcome, in the order of [`SinkSet::outputs`].
    pub outputs: Vec<OutputReport>,
}

/// Receives samples until every sender is gone, then waits for the outputs; run it as a task. `hurry`
/// turning true (a signal) means: stop waiting for slow outputs (see the module).
///
/// An output whose write fails is cut back to its last whole record and written no more (the observers hear
/// of it); the other outputs keep taking every sample.
pub async fn drain(mut rx: Receiver<Sample>, set: SinkSet, mut hurry: watch::Receiver<bool>) -> Drained {
    let SinkSet { mut stats, outputs, mut observers } = set;
    let (recycle, pool) = Recycle::new();
    let mut writers: Vec<Writer> = outputs.into_iter().map(|o| Writer::spawn(o, recycle.clone())).collect();
    let mut hurried = *hurry.borrow();
    let mut received = 0u64;
    let mut open = true;
    while open {
        let mut buf = pool.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        crate::url_pool::reclaim(&mut buf);
        // Waits for the batch's first sample; after it, takes only what is there.
        let mut began = None;
        loop {
            let before = buf.len();
            if (before == 0 || !rx.is_empty() || rx.is_closed()) && rx.recv_many(&mut buf, BATCH - before).await == 0 {
                open = false;
                break;
            }
            let began = *began.get_or_insert_with(Instant::now);
            if buf.len() >= BATCH || began.elapsed() >= GATHER {
                break;
            }
            if buf.len() > before {
                // Samples keep coming: take them again once the users that are ready have run.
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep(TICK).await;
            }
        }
        let taken = buf.len();
        if taken == 0 {
            break;
        }
        received += taken as u64;
        for s in &buf {
            stats.record(s);
        }
        for o in &mut observers {
            o.batch(&buf, &stats);
        }
        let batch = Arc::new(buf);
        for w in &mut writers {
            if !hurried {
                tokio::select! {
                    () = w.send(&batch) => continue,
                    () = hurried_now(&mut hurry) => hurried = true,
                }
            }
            w.queue(&batch);
        }
        recycle.give(batch);
        for w in &mut writers {
            w.on_failure(|e| observers.iter_mut().for_each(|o| o.sink_failed(e)));
        }
    }
    let outputs = close(writers, hurry, hurried, &mut observers, received).await;
    for o in &mut observers {
        o.finish(&stats);
    }
    Drained { stats, outputs }
}

/// Resolves when `hurry` turns true; never when its sender is gone first.
async fn hurried_now(hurry: &mut watch::Receiver<bool>) {
    if hurry.wait_for(|h| *h).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Closes every writer at once, waiting for all of them; after a hurry, for [`GRACE`] at most.
async fn close(
    writers: Vec<Writer>,
    mut hurry: watch::Receiver<bool>,
    hurried: bool,
    observers: &mut [Box<dyn Observer>],
    received: u64,
) -> Vec<OutputReport> {
    let mut closing: Vec<(Arc<Shared>, tokio::task::JoinHandle<()>)> =
        writers.into_iter().map(|w| (w.shared(), tokio::spawn(w.close()))).collect();
    let mut deadline = hurried.then(|| Instant::now() + GRACE);
    let notice = Instant::now() + NOTICE;
    let mut told = false;
    let landed: Vec<Arc<Shared>> = closing.iter().map(|(shared, _)| shared.clone()).collect();
    let mut progress = written(&landed);
    let mut extended = Duration::ZERO;
    'wait: for (_, task) in &mut closing {
        loop {
            let tell_at = if told { None } else { Some(notice) };
            tokio::select! {
                _ = &mut *task => break,
                () = sleep_until(deadline) => {
                    // An output still writing is given more time, up to MAX_GRACE: only one that has written
                    // nothing for GRACE is given up on (a busy machine can make a healthy one slow).
                    let now = written(&landed);
                    if now == progress || extended >= MAX_GRACE {
                        break 'wait;
                    }
                    progress = now;
                    extended += GRACE;
                    deadline = Some(Instant::now() + GRACE);
                }
                () = sleep_until(tell_at), if deadline.is_none() => {
                    told = true;
                    observers.iter_mut().for_each(|o| o.writing());
                }
                () = hurried_now(&mut hurry), if deadline.is_none() => deadline = Some(Instant::now() + GRACE),
            }
        }
    }
    closing
        .into_iter()
        .map(|(shared, task)| {
            let abandoned = !task.is_finished();
            if abandoned {
                shared.landed.abandon();
                task.abort();
            }
            OutputReport {
                name: shared.name.clone(),
                error: shared.take_failure(),
                samples: received,
                written: shared.landed.records().min(received),
                abandoned,
            }
        })
        .collect()
}

/// Records written so far by all the outputs being closed.
fn written(outputs: &[Arc<Shared>]) -> u64 {
    outputs.iter().map(|shared| shared.landed.records()).sum()
}

/// Sleeps until `at`; forever when there is none.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};
    use std::sync::Mutex;

    use tokio::sync::mpsc;

    use super::*;
    use crate::sample::tests::sample;
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

    impl Shared {
        fn rows(&self) -> usize {
            self.0.lock().unwrap().iter().filter(|&&b| b == b'\n').count() - 1
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
        fn name(&self) -> &str {
            "failing"
        }
    }

    /// Blocks in its first write until the test lets it go.
    struct Stalled(std::sync::mpsc::Receiver<()>);

    impl Sink for Stalled {
        fn write(&mut self, _: &[Sample]) -> Result<(), SinkError> {
            let _ = self.0.recv();
            Ok(())
        }
        fn finish(&mut self) -> Result<(), SinkError> {
            Ok(())
        }
    }

    /// Takes `delay` over every batch, and keeps count.
    struct Slow(Duration, Arc<std::sync::atomic::AtomicUsize>);

    impl Sink for Slow {
        fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError> {
            std::thread::sleep(self.0);
            self.1.fetch_add(batch.len(), std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }
        fn finish(&mut self) -> Result<(), SinkError> {
            Ok(())
        }
    }

    const SAMPLES: usize = 10_000;

    /// Sends SAMPLES samples from another task through a small channel, as the virtual users do.
    async fn run(outputs: Vec<Box<dyn Sink>>, hurry: watch::Receiver<bool>) -> Drained {
        let (tx, rx) = mpsc::channel(64);
        let drained = tokio::spawn(drain(rx, SinkSet::new(outputs), hurry));
        for i in 0..SAMPLES {
            tx.send(Sample { start_ms: i as u64, ..sample("step") }).await.unwrap();
        }
        drop(tx);
        drained.await.unwrap()
    }

    fn never() -> watch::Receiver<bool> {
        watch::channel(false).1
    }

    #[tokio::test]
    async fn every_sample_reaches_every_output() {
        let memory = Shared::default();
        let path = std::env::temp_dir().join(format!("planrun-drain-{}/results.jtl", std::process::id()));
        let outputs: Vec<Box<dyn Sink>> =
            vec![Box::new(JtlSink::new(memory.clone(), "memory").unwrap()), Box::new(JtlSink::create(&path).unwrap())];
        let drained = run(outputs, never()).await;
        assert_eq!(drained.stats.summary().total.samples, SAMPLES as u64);
        for out in &drained.outputs {
            assert!(out.error.is_none() && !out.abandoned, "{out:?}");
            assert_eq!((out.samples, out.written), (SAMPLES as u64, SAMPLES as u64));
        }
        let text = String::from_utf8(memory.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), SAMPLES + 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[tokio::test]
    async fn a_failed_output_stops_alone() {
        let memory = Shared::default();
        let outputs: Vec<Box<dyn Sink>> =
            vec![Box::new(Failing(0)), Box::new(JtlSink::new(memory.clone(), "memory").unwrap())];
        let drained = run(outputs, never()).await;
        assert_eq!(drained.stats.summary().total.samples, SAMPLES as u64);
        let failing = &drained.outputs[0];
        assert!(matches!(&failing.error, Some(SinkError::Io { path, .. }) if path == "failing"), "{failing:?}");
        assert!(failing.written > 0 && failing.unwritten() > 0, "{failing:?}");
        assert_eq!(memory.rows(), SAMPLES, "the other output has every row");
        assert_eq!(drained.outputs[1].unwritten(), 0);
    }

    #[tokio::test]
    async fn after_a_hurry_a_stalled_output_is_given_up_and_counted() {
        let (_release, held) = std::sync::mpsc::channel();
        let memory = Shared::default();
        let outputs: Vec<Box<dyn Sink>> =
            vec![Box::new(Stalled(held)), Box::new(JtlSink::new(memory.clone(), "memory").unwrap())];
        let (hurry_tx, hurry) = watch::channel(false);
        let (tx, rx) = mpsc::channel(64);
        let drained = tokio::spawn(drain(rx, SinkSet::new(outputs), hurry));
        // The stalled output holds its queue, then the drain, then the channel: sends stop going through.
        let mut sent = 0;
        while tokio::time::timeout(Duration::from_millis(200), tx.send(sample("step"))).await.is_ok() {
            sent += 1;
        }
        hurry_tx.send(true).unwrap();
        // The drain takes samples again, though the output still stalls.
        for _ in 0..100 {
            tx.send(sample("step")).await.unwrap();
        }
        drop(tx);
        let drained = drained.await.unwrap();
        let total = sent + 100;
        assert_eq!(drained.stats.summary().total.samples, total);
        let stalled = &drained.outputs[0];
        assert!(stalled.abandoned && stalled.error.is_none(), "{stalled:?}");
        assert_eq!(stalled.unwritten(), total);
        assert_eq!(memory.rows() as u64, total, "the healthy output has every row");
        assert!(!drained.outputs[1].abandoned);
    }

    #[tokio::test]
    async fn after_a_hurry_an_output_that_is_still_writing_is_waited_for() {
        let rows = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (hurry_tx, hurry) = watch::channel(false);
        hurry_tx.send(true).unwrap();
        let (tx, rx) = mpsc::channel(64);
        let slow = Slow(GRACE * 2 / 5, rows.clone());
        let drained = tokio::spawn(drain(rx, SinkSet::new(vec![Box::new(slow)]), hurry));
        // Batches apart, so the output takes longer than GRACE in all, but writes something well within it.
        for _ in 0..6 {
            tx.send(sample("step")).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(tx);
        let drained = drained.await.unwrap();
        assert!(!drained.outputs[0].abandoned, "{:?}", drained.outputs[0]);
        assert_eq!((drained.outputs[0].unwritten(), rows.load(std::sync::atomic::Ordering::SeqCst)), (0, 6));
    }

    #[tokio::test]
    async fn a_hurry_while_waiting_for_a_stalled_output_at_the_end_gives_it_up() {
        let (_release, held) = std::sync::mpsc::channel();
        let (hurry_tx, hurry) = watch::channel(false);
        let (tx, rx) = mpsc::channel(64);
        let drained = tokio::spawn(drain(rx, SinkSet::new(vec![Box::new(Stalled(held))]), hurry));
        for _ in 0..10 {
            tx.send(sample("step")).await.unwrap();
        }
        drop(tx);
        // The users are done; the drain waits for the output, as long as it takes, until told to hurry.
        tokio::time::sleep(GRACE * 2).await;
        assert!(!drained.is_finished());
        hurry_tx.send(true).unwrap();
        let drained = drained.await.unwrap();
        assert!(drained.outputs[0].abandoned);
        assert_eq!(drained.outputs[0].unwritten(), 10);
    }
}
