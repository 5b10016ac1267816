//! Ctrl-C and SIGTERM: the first asks the run to stop and flush; a second exits at once.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use tokio::sync::watch;

use super::exit;

/// Which signal stopped the run (0 = none).
#[derive(Debug, Default, Clone)]
pub(super) struct Stopped(Arc<AtomicI32>);

impl Stopped {
    /// The exit code of the signal that stopped the run, if any.
    pub fn code(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            c => Some(c),
        }
    }
}

/// Listens for SIGINT and SIGTERM; the first sets `stop`, a second exits the process (rows already
/// written are complete lines: the JTL sink flushes whole batches).
pub(super) fn install(stop: Arc<watch::Sender<bool>>) -> Stopped {
    let stopped = Stopped::default();
    let flag = stopped.0.clone();
    tokio::spawn(async move {
        let mut signals = Signals::new();
        loop {
            let code = signals.next().await;
            if flag.swap(code, Ordering::Relaxed) != 0 {
                eprintln!("\nplanrun: stopping now");
                std::process::exit(code);
            }
            eprintln!("\nplanrun: stopping: no new requests; waiting for those in flight (again to quit at once)");
            let _ = stop.send(true);
        }
    });
    stopped
}

/// SIGINT and SIGTERM, registered once for the whole run.
struct Signals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let streams = signal(SignalKind::interrupt()).ok().zip(signal(SignalKind::terminate()).ok());
            Self { streams }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The exit code of the next signal.
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            let Some((int, term)) = self.streams.as_mut() else { return std::future::pending().await };
            tokio::select! {
                _ = int.recv() => exit::INTERRUPTED,
                _ = term.recv() => exit::TERMINATED,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            exit::INTERRUPTED
        }
    }
}
