//! Exit codes: the contract in design.md.

/// The run completed and every threshold held.
pub const OK: i32 = 0;
/// A threshold failed.
pub const THRESHOLD_FAILED: i32 = 1;
/// The plan or the command line is wrong; nothing was sent.
pub const BAD_INPUT: i32 = 2;
/// The run could not start or was aborted (results could not be written, the stub could not listen).
pub const ABORTED: i32 = 3;
/// The run completed, but planrun failed inside some samples (a bug, caught: each is a failed sample
/// with responseCode `Non HTTP response code: Internal`). Results are complete; thresholds were not judged
/// on them alone.
pub const INTERNAL_ERROR: i32 = 4;
/// Interrupted by Ctrl-C (SIGINT); results flushed, summary printed.
pub const INTERRUPTED: i32 = 130;
/// Stopped by SIGTERM; results flushed, summary printed.
pub const TERMINATED: i32 = 143;
