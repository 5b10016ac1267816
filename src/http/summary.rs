//! A final response head as parsed, before its headers are copied: what the parse hands over and what the
//! head memo keeps of a head it has seen.

use std::borrow::Cow;

use http::Version;

use super::outcome::DataType;

/// How a response's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (HEAD, 204, 304, `Content-Length: 0`).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// Chunked.
    Chunked,
    /// Until the server closes the connection.
    Close,
}

/// A final head as parsed, with where its Content-Type is: everything [`Head`](super::decode::Head) holds
/// but the headers' copy.
#[derive(Debug, Clone)]
pub(super) struct Summary {
    pub(super) len: usize,
    pub(super) status: u16,
    pub(super) reason: Cow<'static, str>,
    pub(super) version: Version,
    pub(super) framing: Framing,
    pub(super) keep_alive: bool,
    pub(super) data_type: DataType,
    pub(super) content_type: Option<(u32, u32)>,
    pub(super) set_cookie: bool,
    /// Whether a Content-Encoding line is there.
    pub(super) encoded: bool,
}

impl Summary {
    /// The head's length in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}
