//! Running a compiled graph: the scheduler starts virtual users per each group's load model; each user
//! sends requests through its own connection and puts one [`Sample`](crate::sample::Sample) per request
//! on a bounded channel to the sinks.

mod catch;
mod check;
mod clock;
mod closed;
pub mod data;
mod execute;
mod extract;
pub mod http;
mod open;
pub mod ramp;
mod scheduler;
mod vuser;
pub mod wire;

pub use execute::{execute, RunResult, StartError};
pub use scheduler::Active;
pub use vuser::{user_masks, user_scope};
