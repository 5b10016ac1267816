//! The HTTP sampler: hyper's `client::conn`, one connection per virtual user, measured on the socket.

mod client;
mod counting;
mod error;

pub use client::{Client, Exchange, Response};
pub use error::Failure;
