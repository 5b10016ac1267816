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
pub(super) fn install(stop: watch::Sender<bool>) -> Stopped {
    let stopped = Stopped::default();
    let flag = stopped.0.clone();
    tokio::spawn(async move {
        loop {
            let code = next_signal().await;
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

#[cfg(unix)]
async fn next_signal() -> i32 {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
        std::future::pending::<()>().await;
        unreachable!()
    };
    tokio::select! {
        _ = int.recv() => exit::INTERRUPTED,
        _ = term.recv() => exit::TERMINATED,
    }
}

#[cfg(not(unix))]
async fn next_signal() -> i32 {
    let _ = tokio::signal::ctrl_c().await;
    exit::INTERRUPTED
}
