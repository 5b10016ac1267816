//! Ctrl-C, SIGTERM and SIGHUP: the first asks the run to stop, write its results (giving a stalled output
//! a grace period, no more) and print its summary; a second exits at once.

use std::time::Duration;

use super::exit::{self, StopCode};
use super::print::errln;
use crate::session::Stop;

/// How long a second signal waits for a write to a regular file under way, so no row is left half written.
const LAST_WRITE: Duration = Duration::from_millis(500);

/// Listens for SIGINT, SIGTERM and SIGHUP; the first stops the run in a hurry, a second exits the process
/// (rows already written are complete lines: each output writes whole batches, and the exit waits for a write
/// under way).
pub(super) fn install(stop: Stop) -> StopCode {
    let stopped = StopCode::default();
    let flag = stopped.clone();
    let mut signals = Signals::new();
    tokio::spawn(async move {
        loop {
            let code = signals.next().await;
            if !flag.set_first(code) {
                errln!("\nplanrun: stopping now");
                let _held = crate::sink::hold_writes(LAST_WRITE);
                std::process::exit(code);
            }
            errln!("\nplanrun: stopping: no new requests; waiting for those in flight (again to quit at once)");
            stop.hurry();
        }
    });
    stopped
}

/// Listens for SIGINT, SIGTERM and SIGHUP from now on (SIGHUP not under `nohup`); resolves to the exit code
/// of the first that comes.
pub(super) fn first() -> impl std::future::Future<Output = i32> {
    let mut signals = Signals::new();
    async move { signals.next().await }
}

/// The signals, registered once for the whole run.
struct Signals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
    /// None when SIGHUP was ignored when planrun started (`nohup`): it stays ignored.
    #[cfg(unix)]
    hangup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let streams = signal(SignalKind::interrupt()).ok().zip(signal(SignalKind::terminate()).ok());
            let hangup = if hangup_ignored() { None } else { signal(SignalKind::hangup()).ok() };
            Self { streams, hangup }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The exit code of the next signal.
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            let Some((int, term)) = self.streams.as_mut() else { return std::future::pending().await };
            let hangup = async {
                match self.hangup.as_mut() {
                    Some(h) => h.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = int.recv() => exit::INTERRUPTED,
                _ = term.recv() => exit::TERMINATED,
                _ = hangup => exit::HANGUP,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            exit::INTERRUPTED
        }
    }
}

/// True when this process started with SIGHUP ignored, as under `nohup`; read from the `SigIgn` mask of
/// /proc/self/status (where there is no such file, false).
#[cfg(unix)]
fn hangup_ignored() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).map(str::trim);
    // Bit n-1 stands for signal n; SIGHUP is 1.
    mask.and_then(|m| u64::from_str_radix(m, 16).ok()).is_some_and(|m| m & 1 == 1)
}
