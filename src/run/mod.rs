//! Running a compiled graph: the scheduler starts virtual users, each sends requests through its own
//! connection and puts one [`Sample`](crate::sample::Sample) per request on a bounded channel to the sinks.

mod check;
pub mod http;
mod run;
mod scheduler;
mod vuser;
pub mod wire;

pub use run::{execute, RunResult};
pub use scheduler::Active;
pub use vuser::user_scope;
