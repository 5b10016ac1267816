//! The sampler's HTTP/1.1 engine: a keep-alive connection per origin and virtual user, plain or TLS (rustls),
//! driven in the user's own task and measured on the socket. The response parser is `httparse`, with a
//! one-pass reader for the usual head in front of it ([`common_head`]); framing, limits and connection reuse are
//! planrun's own ([`decode`]).

mod client;
#[doc(hidden)]
pub mod common_head;
mod conn;
pub mod content_coding;
mod counting;
mod deadline;
#[doc(hidden)]
pub mod decode;
mod encode;
mod error;
mod h2;
mod h2_head;
mod head_memo;
mod headers;
mod hop;
pub mod limits;
pub mod outcome;
mod proxy;
pub mod request;
mod response;
mod stream;
mod summary;
pub mod target;
mod tls;
mod tls_stream;

pub use client::{Client, ConnectionCounts, Exchange};
pub use error::Failure;
pub use h2_head::h2_head;
pub use headers::Headers;
pub use hop::{Hop, How, Record, Recorded};
pub use outcome::{DataType, ErrorKind};
pub use proxy::{NoProxy, Proxies, Proxy, ProxyChoice, ProxyError};
pub use request::{HttpVersion, WireRequest};
pub use response::Response;
pub use tls::{shared_tls_config, tls_config, TlsError, TlsSettings};
