//! The HTTP sampler: hyper's `client::conn`, a keep-alive connection per origin and virtual user, plain or TLS (rustls),
//! measured on the socket.

mod client;
mod counting;
mod deadline;
mod drive;
mod error;
mod hop;
mod stream;
mod tls;

pub use client::{Client, Exchange, Response};
pub use error::Failure;
pub use hop::{Hop, How, Record, Recorded};
pub use tls::{shared_tls_config, tls_config, TlsError};
