//! The one record that flows from the virtual users to every sink.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use bytes::Bytes;

pub use crate::http::outcome::{DataType, ErrorKind};

/// What came back for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An HTTP response with its status code and reason phrase.
    Response {
        /// The status code.
        status: u16,
        /// The reason phrase (`Accepted`), possibly empty.
        reason: Cow<'static, str>,
    },
    /// No usable response.
    Error {
        /// What kind of failure.
        kind: ErrorKind,
        /// A specific message, e.g. `Read timed out after 2000 ms`.
        message: String,
    },
    /// A transaction (parent) sample.
    Transaction {
        /// Number of child samples.
        children: u32,
        /// Number of failed child samples.
        failed: u32,
    },
}

/// Which virtual user made a sample: JMeter's threadName is `<group> <group_no>-<vu>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadId {
    /// The thread group's name.
    pub group: Arc<str>,
    /// The group's number in the plan, from 1.
    pub group_no: u32,
    /// The virtual user's number in its group, from 1.
    pub vu: u32,
}

/// One sample: a request (or transaction) and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Start of the sample, in ms since the Unix epoch (JTL `timeStamp`).
    pub start_ms: u64,
    /// Just before sending to the last response byte, in µs (JTL `elapsed`, in ms there).
    pub elapsed_us: u64,
    /// Just before sending to the first response byte, in µs (JTL `Latency`).
    pub latency_us: u64,
    /// Time spent opening a connection for this sample, in µs; 0 on a reused connection (JTL `Connect`).
    pub connect_us: u64,
    /// Time excluded from `elapsed` (think times inside transactions), in µs (JTL `IdleTime`).
    pub idle_us: u64,
    /// The step's name.
    pub label: Arc<str>,
    /// The response, the transport error or the transaction's tally.
    pub outcome: Outcome,
    /// The virtual user that made it.
    pub thread: ThreadId,
    /// JMeter's dataType.
    pub data_type: DataType,
    /// False on transport errors, failed assertions and failed transactions.
    pub success: bool,
    /// The first failed assertion's message; `None` when no assertion failed (transport errors and error
    /// statuses say why in `outcome`, as JMeter's responseCode and responseMessage do).
    pub failure: Option<String>,
    /// Bytes received on the wire: status line, headers and body as transferred.
    pub bytes: u64,
    /// Bytes sent on the wire: request line, headers and body.
    pub sent_bytes: u64,
    /// Active threads in this sample's group when it finished.
    pub grp_threads: u32,
    /// Active threads in all groups when it finished.
    pub all_threads: u32,
    /// The full request URL; `None` for transactions (written as `null`).
    pub url: Option<SampleUrl>,
    /// The HTTP version the request went over (of its last hop); `None` when no connection was made, and for
    /// transactions.
    pub protocol: Option<http::Version>,
    /// What only some samples carry, when the run asks for it: redirect hops as sub-results, the exchange
    /// as `--http-debug` prints it, a failed response's body. `None` for nearly every sample.
    pub detail: Option<Box<Detail>>,
}

/// The rarely present parts of a sample (see [`Sample::detail`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detail {
    /// One sample per request of a followed redirect chain (JMeter 5's sub-results `label-0`, `label-1`,
    /// ...), written after the sample's own row; empty when there were none or they were not asked for.
    pub sub_results: Vec<Sample>,
    /// The exchange as text (request and response heads, perhaps bodies), secrets masked: `--http-debug`.
    pub debug: Option<String>,
    /// The body of a failed response, cut and masked: `--failed-bodies`, `--json-failed-bodies`.
    pub body: Option<KeptBody>,
    /// The data rows the sample's iteration took, with `debug` or `body`: each set's name and the row's
    /// number (1 is the file's first data row), in the order of the plan's sets.
    pub rows: Vec<(Arc<str>, u64)>,
    /// The size of the response body after its Content-Encoding was undone, when something read the body
    /// (a check, an extractor, `--failed-bodies`, `--http-debug`) and it decoded whole, or was cut at
    /// `max_body` (then the sample failed).
    pub decoded_bytes: Option<u64>,
}

/// A response body kept for the results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptBody {
    /// The first bytes of the body, secrets masked.
    pub bytes: Bytes,
    /// The whole body's size in bytes, as received (decoded from chunks), before it was cut.
    pub size: u64,
}

impl Sample {
    /// The JTL `responseCode` text.
    pub fn response_code(&self) -> String {
        match &self.outcome {
            Outcome::Response { status, .. } => status.to_string(),
            Outcome::Error { kind, .. } => format!("Non HTTP response code: {}", kind.as_str()),
            Outcome::Transaction { failed, .. } => {
                if *failed == 0 {
                    "200".into()
                } else {
                    String::new()
                }
            }
        }
    }

    /// The JTL `responseMessage` text.
    pub fn response_message(&self) -> String {
        match &self.outcome {
            Outcome::Response { reason, .. } => reason.to_string(),
            Outcome::Error { message, .. } => format!("Non HTTP response message: {message}"),
            Outcome::Transaction { children, failed } => {
                format!("Number of samples in transaction : {children}, number of failing samples : {failed}")
            }
        }
    }

    /// The error kind, when the request got no usable response.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        match &self.outcome {
            Outcome::Error { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The HTTP status, when there was a response.
    pub fn status(&self) -> Option<u16> {
        match &self.outcome {
            Outcome::Response { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The HTTP version the request went over, as the JSON lines write it: `HTTP/1.1`, `HTTP/2`.
    pub fn protocol_name(&self) -> Option<&'static str> {
        Some(match self.protocol? {
            http::Version::HTTP_2 => "HTTP/2",
            http::Version::HTTP_10 => "HTTP/1.0",
            _ => "HTTP/1.1",
        })
    }

    /// The sub-results written after this sample's row (followed redirects), if any.
    pub fn sub_results(&self) -> &[Sample] {
        self.detail.as_ref().map_or(&[], |d| &d.sub_results)
    }

    /// The end of the sample in ms since the epoch.
    pub fn end_ms(&self) -> u64 {
        self.start_ms + self.elapsed_us / 1000
    }
}

/// Bytes of a URL a sample keeps inside itself.
const INLINE_URL: usize = 62;

/// A sample's URL. One that fits (most do) is kept inside the sample, which travels to the sinks in one
/// piece: a buffer of its own would be written while its memory is cold, at the request, and read while
/// cold again, at the output.
#[derive(Clone)]
pub enum SampleUrl {
    /// Up to [`INLINE_URL`] bytes.
    Inline {
        /// Bytes used.
        len: u8,
        /// The URL's bytes, then zeros.
        bytes: [u8; INLINE_URL],
    },
    /// A longer one.
    Heap(String),
}

impl SampleUrl {
    /// Keeps `url` inline when it fits (its buffer is freed), else keeps the buffer.
    pub fn new(url: String) -> Self {
        Self::keeping_buffer(url).0
    }

    /// Keeps `url` inline when it fits and hands its buffer back, for the next request to render into; else
    /// keeps the buffer.
    pub fn keeping_buffer(url: String) -> (Self, Option<String>) {
        match Self::inline(&url) {
            Some(inline) => (inline, Some(url)),
            None => (SampleUrl::Heap(url), None),
        }
    }

    /// `url` kept inline, when it fits.
    fn inline(url: &str) -> Option<Self> {
        let len = u8::try_from(url.len()).ok().filter(|&l| usize::from(l) <= INLINE_URL)?;
        let mut bytes = [0; INLINE_URL];
        bytes[..url.len()].copy_from_slice(url.as_bytes());
        Some(SampleUrl::Inline { len, bytes })
    }

    /// The URL's bytes: what the JTL writer copies, without the UTF-8 check that [`SampleUrl::as_str`] makes
    /// of an inline URL (some 150 instructions for a 50-byte URL).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            SampleUrl::Inline { len, bytes } => &bytes[..usize::from(*len)],
            SampleUrl::Heap(url) => url.as_bytes(),
        }
    }

    /// The URL.
    pub fn as_str(&self) -> &str {
        match self {
            // Never fails: the bytes are a whole `str`'s.
            SampleUrl::Inline { .. } => std::str::from_utf8(self.as_bytes()).unwrap_or_default(),
            SampleUrl::Heap(url) => url,
        }
    }

    /// Changes the URL through `edit`.
    pub fn edit(&mut self, edit: impl FnOnce(&mut String)) {
        let mut url = match std::mem::replace(self, SampleUrl::Heap(String::new())) {
            SampleUrl::Heap(url) => url,
            inline => inline.as_str().to_owned(),
        };
        edit(&mut url);
        *self = Self::new(url);
    }
}

impl Deref for SampleUrl {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for SampleUrl {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SampleUrl {}

impl fmt::Debug for SampleUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SampleUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for SampleUrl {
    fn from(url: String) -> Self {
        Self::new(url)
    }
}

impl From<&str> for SampleUrl {
    fn from(url: &str) -> Self {
        Self::inline(url).unwrap_or_else(|| SampleUrl::Heap(url.to_owned()))
    }
}

#[cfg(test)]
mod url_tests {
    use super::*;

    #[test]
    fn a_url_is_kept_inline_up_to_its_room_and_reads_back_the_same_either_way() {
        for len in [0, 1, INLINE_URL - 1, INLINE_URL, INLINE_URL + 1, 300] {
            let text: String = "h\u{e9}/".chars().cycle().take(len).collect();
            let url = SampleUrl::new(text.clone());
            assert_eq!(url.as_str(), text);
            assert_eq!(url.as_bytes(), text.as_bytes());
            assert_eq!(matches!(url, SampleUrl::Inline { .. }), text.len() <= INLINE_URL, "{len}");
            assert_eq!(SampleUrl::from(text.as_str()), url);
        }
    }

    #[test]
    fn an_edit_moves_a_url_between_inline_and_heap() {
        let mut url = SampleUrl::from("http://x/?token=abc");
        url.edit(|u| u.push_str(&"y".repeat(INLINE_URL)));
        assert!(matches!(url, SampleUrl::Heap(_)));
        url.edit(|u| u.truncate(8));
        assert_eq!((url.as_str(), matches!(url, SampleUrl::Inline { .. })), ("http://x", true));
    }

    #[test]
    fn a_sample_stays_small() {
        assert!(std::mem::size_of::<Sample>() <= 256, "{}", std::mem::size_of::<Sample>());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::{DataType, Outcome, Sample, ThreadId};

    /// A successful request with round numbers; tests change what they need.
    pub(crate) fn sample(label: &str) -> Sample {
        Sample {
            start_ms: 1_764_547_200_123,
            elapsed_us: 4_999,
            latency_us: 4_100,
            connect_us: 1_500,
            idle_us: 0,
            label: label.into(),
            outcome: Outcome::Response { status: 202, reason: "Accepted".into() },
            thread: ThreadId { group: Arc::from("senders"), group_no: 1, vu: 17 },
            data_type: DataType::Text,
            success: true,
            failure: None,
            bytes: 213,
            sent_bytes: 187,
            grp_threads: 2,
            all_threads: 3,
            url: Some("http://127.0.0.1:13013/cgi-bin/sendsms?to=1&text=Hello+world".into()),
            protocol: Some(http::Version::HTTP_11),
            detail: None,
        }
    }
}
