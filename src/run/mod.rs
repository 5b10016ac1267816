//! Running a compiled graph: the scheduler starts virtual users, each sends requests through its own
//! connection and puts one [`Sample`](crate::sample::Sample) per request on a bounded channel to the sinks.

mod check;
mod execute;
pub mod http;
mod scheduler;
mod vuser;
pub mod wire;

pub use execute::{execute, RunResult};
pub use scheduler::Active;
pub use vuser::user_scope;
