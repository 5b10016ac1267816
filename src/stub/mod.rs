//! The stub target: a small configurable HTTP server for demos and tests.
//!
//! A stub file ([`load`]) lists [`Route`]s, each with a status, body, latency and error rate; [`start`] serves it
//! over HTTP/1.1 keep-alive and returns a [`StubHandle`]. `workers: N` serves at most N requests at a time, the
//! rest queue, like a blocking server with N threads; `workers: 0` serves every request at once (at most
//! [`MAX_WORKERS`]). Latencies are durations in planrun's one grammar ([`crate::duration`]: `250ms`, `1.5s`,
//! `20ns`), at most [`crate::duration::MAX`], 365 days.

mod config;
mod duration;
mod error;
mod http_serde;
mod latency;
mod responder;
mod route;
mod server;

#[cfg(test)]
mod tests;

pub use config::load;
pub use error::StubError;
pub use server::{start, StubHandle};
