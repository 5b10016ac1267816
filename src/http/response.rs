//! A response as the engine hands it over: status, reason, dataType, headers, the body when asked for.

use std::borrow::Cow;

use bytes::Bytes;

use super::headers::Headers;
use super::outcome::DataType;

/// What came back.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// The reason phrase the server sent (borrowed when it is the standard one for the status).
    pub reason: Cow<'static, str>,
    /// JMeter's dataType, from the Content-Type.
    pub data_type: DataType,
    /// The body, when it was asked for (capped at `body_limit`); its whole size is in [`Recorded`](super::Recorded).
    pub body: Option<Bytes>,
    /// Response headers.
    pub headers: Headers,
    /// The HTTP version of the status line.
    pub version: http::Version,
}
