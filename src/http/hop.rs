//! The requests of one exchange, one by one: recorded only when a run asks for them (JMeter 5's redirect
//! sub-results, `--http-debug`), so a plain request pays nothing for them.

use std::time::{Duration, Instant};

use super::request::WireRequest;
use super::response::Response;

/// How one request is to be made.
#[derive(Debug, Clone, Copy)]
pub struct How {
    /// How many bytes of each response body to keep (0: the body is only read and counted).
    pub keep: usize,
    /// Follow redirects within the sample.
    pub follow_redirects: bool,
    /// Keep each response's headers for [`Response::headers`](super::Response::headers): something reads
    /// them (an assertion, an extractor, `--http-debug`). Without it they come back empty, and their bytes
    /// are not copied out of the read buffer; the cookie jar and redirects get them all the same, and
    /// recorded exchanges keep them.
    pub headers: bool,
    /// What [`Client::recorded`](super::Client::recorded) hands back afterwards.
    pub record: Record,
}

/// How much of an exchange is recorded; each level records what the ones before it do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Record {
    /// Nothing.
    #[default]
    Nothing,
    /// The size of each response's body.
    Sizes,
    /// Each request's URL and measurements, and each response ([`Hop`]).
    Hops,
    /// Each request as it was sent, too ([`Hop::request`]).
    Requests,
}

/// What an exchange recorded (see [`How::record`]).
#[derive(Debug, Default)]
pub struct Recorded {
    /// Every request, with [`Record::Hops`].
    pub hops: Vec<Hop>,
    /// The size of the last response's body, as received (decoded from chunks).
    pub body_size: u64,
}

/// One request of an exchange (the first, or one a redirect led to) and its own measurements.
#[derive(Debug)]
pub struct Hop {
    /// Its URL.
    pub url: String,
    /// The request as it was sent, with [`Record::Requests`].
    pub request: Option<WireRequest>,
    /// When it started, from the start of the exchange.
    pub offset: Duration,
    /// Its start to its last response byte (or its failure).
    pub elapsed: Duration,
    /// Its start to its first response byte (`elapsed` when none came).
    pub latency: Duration,
    /// Time spent opening a connection for it.
    pub connect: Duration,
    /// Wire bytes received for it.
    pub bytes: u64,
    /// Wire bytes sent for it.
    pub sent: u64,
    /// The size of its response's body, as received (0 without a response).
    pub body_size: u64,
    /// The response it got when that is not the exchange's own result: a redirect that was followed, or
    /// refused (then the exchange failed). `None`: the exchange's result is this hop's outcome.
    pub response: Option<Response>,
}

/// An exchange's counters: bytes received and sent, time spent connecting.
pub(super) type Counters = (u64, u64, Duration);

/// What an exchange records as it goes. Boxed in the client, and there only while an exchange asked for it:
/// one that records nothing carries nothing more than before.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    /// What is recorded.
    level: Record,
    /// The hops so far.
    pub hops: Vec<Hop>,
    /// When the hop under way started, and the exchange's counters then.
    mark: Option<(Instant, Counters)>,
    /// When the response of the hop under way began.
    pub first_byte: Option<Instant>,
    /// The size of the body of the hop under way, or the last one.
    pub body_size: u64,
}

impl Recorder {
    /// A recorder of what `level` says.
    pub(super) fn new(level: Record) -> Self {
        Self { level, ..Self::default() }
    }

    /// Ready for another exchange, recording what `level` says.
    pub(super) fn reset(&mut self, level: Record) {
        self.level = level;
        self.hops.clear();
        self.mark = None;
        self.first_byte = None;
        self.body_size = 0;
    }

    /// A hop starts; `now` are the exchange's counters.
    pub(super) fn start(&mut self, now: Counters) {
        self.mark = (self.level >= Record::Hops).then(|| (Instant::now(), now));
        self.first_byte = None;
        self.body_size = 0;
    }

    /// The last hop's response is the exchange's result: it is not kept twice.
    pub(super) fn result_is_last(&mut self) {
        if let Some(hop) = self.hops.last_mut() {
            hop.response = None;
        }
    }

    /// The hop under way has ended: records it (when hops are recorded), with a copy of its response.
    /// `start` is when the exchange started, `now` its counters.
    pub(super) fn end(&mut self, start: Instant, now: Counters, request: &WireRequest, response: Option<&Response>) {
        let Some((at, (bytes, sent, connect))) = self.mark.take() else { return };
        // A first request that leads nowhere is the whole exchange: its hop adds nothing but for the text of
        // `--http-debug` (sub-results are written only after a redirect).
        if self.hops.is_empty() && response.is_none() && self.level < Record::Requests {
            return;
        }
        let end = Instant::now();
        self.hops.push(Hop {
            url: request.target.url.clone(),
            request: (self.level >= Record::Requests).then(|| request.clone()),
            offset: at.saturating_duration_since(start),
            elapsed: end.saturating_duration_since(at),
            latency: self.first_byte.unwrap_or(end).saturating_duration_since(at),
            connect: now.2.saturating_sub(connect),
            bytes: now.0.saturating_sub(bytes),
            sent: now.1.saturating_sub(sent),
            body_size: self.body_size,
            response: response.cloned(),
        });
    }
}
