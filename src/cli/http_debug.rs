//! `--http-debug`: prints the exchanges the users wrote into their samples, on stderr, from a thread of its
//! own. Above the live progress line (which is redrawn below them), never mixed into it; never on stdout.
//! When stderr cannot keep up, exchanges are dropped and counted rather than slowing the run.
//!
//! [`LeftOut`] says at the end how many failed samples were past `--http-debug-max` and
//! `--failed-bodies-max`.

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::print::{err, errln};
use crate::run::{Cap, RunOptions};
use crate::sample::Sample;
use crate::sink::stats::Stats;
use crate::sink::{Observer, SinkError};

/// Exchanges waiting to be printed; more are dropped.
const QUEUE: usize = 4096;

/// At the end of the run, how long the printer may take to print what waits.
const FINISH: Duration = Duration::from_secs(2);

/// The observer that hands exchanges to the printing thread.
pub(super) struct DebugPrinter {
    tx: Option<SyncSender<String>>,
    thread: Option<JoinHandle<()>>,
    dropped: u64,
}

impl DebugPrinter {
    /// Prints above `bar` when there is one.
    pub fn new(bar: Option<ProgressBar>) -> Self {
        let (tx, rx) = sync_channel::<String>(QUEUE);
        let thread = std::thread::Builder::new()
            .name("http-debug".into())
            .spawn(move || {
                for text in rx {
                    match &bar {
                        Some(bar) => bar.suspend(|| err!("{text}")),
                        None => err!("{text}"),
                    }
                }
            })
            .ok();
        Self { tx: thread.is_some().then_some(tx), thread, dropped: 0 }
    }
}

impl Observer for DebugPrinter {
    fn batch(&mut self, batch: &[Sample], _stats: &Stats) {
        let Some(tx) = &self.tx else { return };
        for text in batch.iter().filter_map(|s| s.detail.as_ref()?.debug.as_ref()) {
            if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = tx.try_send(text.clone()) {
                self.dropped += 1;
            }
        }
    }

    fn sink_failed(&mut self, _error: &SinkError) {}

    fn finish(&mut self, _stats: &Stats) {
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let until = Instant::now() + FINISH;
            while !thread.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        if self.dropped > 0 {
            errln!("planrun: --http-debug: {} exchange(s) not printed: stderr could not keep up", self.dropped);
        }
    }
}

/// The observer that says, when the run ends, how many failed samples were not printed past
/// `--http-debug-max` and whose bodies were not kept past `--failed-bodies-max`. Its counts are final by
/// then: a sample is counted before it is handed to the sinks.
pub(super) struct LeftOut {
    debug: Option<Arc<Cap>>,
    /// The bodies' cap and the option that asked for them.
    bodies: Option<(Arc<Cap>, &'static str)>,
}

impl LeftOut {
    /// The caps of `options`; `files` when the bodies go to files (`--failed-bodies`), not only to the JSON
    /// lines.
    pub fn of(options: &RunOptions, files: bool) -> Self {
        let flag = if files { "--failed-bodies" } else { "--json-failed-bodies" };
        Self {
            debug: options.http_debug.as_ref().map(|d| d.cap.clone()),
            bodies: options.failed_bodies.then(|| (options.bodies_cap.clone(), flag)),
        }
    }
}

impl Observer for LeftOut {
    fn batch(&mut self, _batch: &[Sample], _stats: &Stats) {}

    fn sink_failed(&mut self, _error: &SinkError) {}

    fn finish(&mut self, _stats: &Stats) {
        if let Some(cap) = self.debug.as_ref().filter(|c| c.left_out() > 0) {
            errln!(
                "planrun: --http-debug: {} more failed sample(s) not printed: past the first {} (--http-debug-max)",
                cap.left_out(),
                cap.max()
            );
        }
        if let Some((cap, flag)) = self.bodies.as_ref().filter(|(c, _)| c.left_out() > 0) {
            errln!(
                "planrun: {flag}: {} more failed responses' bodies not kept: past the first {} (--failed-bodies-max)",
                cap.left_out(),
                cap.max()
            );
        }
    }
}
