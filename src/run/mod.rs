//! Running a compiled graph: the scheduler starts virtual users per each group's load model; each user
//! sends requests through its own connection and puts one [`Sample`](crate::sample::Sample) per request
//! on a bounded channel to the sinks.

mod active;
mod catch;
mod check;
mod closed;
mod coding;
pub mod data_rows;
mod deal;
mod debug_text;
mod detail;
mod execute;
mod extract;
mod open;
mod options;
pub(crate) mod ramp;
mod scheduler;
mod share;
mod vuser;
pub mod wire;

pub use active::Active;
pub use execute::{execute, execute_with, RunResult, StartError, MAX_CORES};
pub use options::{Cap, HttpDebug, RunOptions, BODIES_MAX, DEBUG_BODY_LIMIT, DEBUG_MAX, KEPT_BODY_LIMIT};
pub use share::{share, Share};
pub use vuser::{user_masks, user_scope};
