//! Exit codes: the contract in README.md ("Commands") and docs/results.md.

/// The run completed and every threshold held.
pub const OK: i32 = 0;
/// A threshold failed.
pub const THRESHOLD_FAILED: i32 = 1;
/// The plan or the command line is wrong; nothing was sent.
pub const BAD_INPUT: i32 = 2;
/// The run could not start, or its results could not all be written (an output failed, the stub could not
/// listen, the summary JSON or report could not be written).
pub const ABORTED: i32 = 3;
/// The run completed, but planrun failed inside some samples (a bug, caught: each is a failed sample
/// with responseCode `Non HTTP response code: Internal`). Results are complete; thresholds were not judged
/// on them alone.
pub const INTERNAL_ERROR: i32 = 4;
/// Stopped by SIGHUP (the terminal closed), 128 + 1; results written, summary printed. Under `nohup`
/// SIGHUP stays ignored and the run goes on.
pub const HANGUP: i32 = 129;
/// Interrupted by Ctrl-C (SIGINT), 128 + 2; results written, summary printed.
pub const INTERRUPTED: i32 = 130;
/// Stopped by SIGTERM, 128 + 15; results written, summary printed.
pub const TERMINATED: i32 = 143;

/// The exit code of whatever stopped the run first (a signal, an aborting threshold, a failed output), shared
/// with the tasks that may stop it; none while nothing has.
#[derive(Debug, Clone, Default)]
pub(crate) struct StopCode(std::sync::Arc<std::sync::atomic::AtomicI32>);

impl StopCode {
    /// The code, once something stopped the run.
    pub(crate) fn code(&self) -> Option<i32> {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            0 => None,
            c => Some(c),
        }
    }

    /// Records `code` (not 0) unless a code is recorded already; true when this call recorded it.
    pub(crate) fn set_first(&self, code: i32) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.0.compare_exchange(0, code, Relaxed, Relaxed).is_ok()
    }
}
