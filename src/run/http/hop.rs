//! The requests of one exchange, one by one: recorded only when a run asks for them (JMeter 5's redirect
//! sub-results, `--http-debug`), so a plain request pays nothing for them.

use std::time::{Duration, Instant};

use super::client::{Exchange, Response};
use crate::run::wire::WireRequest;

/// How one request is to be made.
#[derive(Debug, Clone, Copy)]
pub struct How {
    /// How many bytes of each response body to keep (0: the body is only read and counted).
    pub keep: usize,
    /// Follow redirects within the sample.
    pub follow_redirects: bool,
    /// Record every request of the exchange in [`Exchange::hops`].
    pub hops: bool,
}

/// One request of an exchange (the first, or one a redirect led to) and its own measurements.
#[derive(Debug)]
pub struct Hop {
    /// The request as it was sent.
    pub request: WireRequest,
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
    /// The response it got when that is not the exchange's own result: a redirect that was followed, or
    /// refused (then the exchange failed). `None`: the exchange's result is this hop's outcome.
    pub response: Option<Response>,
}

/// The counters of an exchange when a hop started, to tell that hop's share.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mark {
    at: Instant,
    bytes: u64,
    sent: u64,
    connect: Duration,
}

impl Mark {
    /// The exchange's counters now.
    pub(super) fn now(ex: &Exchange) -> Self {
        Mark { at: Instant::now(), bytes: ex.bytes, sent: ex.sent, connect: ex.connect }
    }

    /// The hop that started at this mark and has just ended; `first_byte` is when its response began.
    pub(super) fn hop(
        self,
        start: Instant,
        ex: &Exchange,
        request: &WireRequest,
        first_byte: Option<Instant>,
        response: Option<Response>,
    ) -> Hop {
        let end = Instant::now();
        Hop {
            request: request.clone(),
            offset: self.at.saturating_duration_since(start),
            elapsed: end.saturating_duration_since(self.at),
            latency: first_byte.unwrap_or(end).saturating_duration_since(self.at),
            connect: ex.connect.saturating_sub(self.connect),
            bytes: ex.bytes.saturating_sub(self.bytes),
            sent: ex.sent.saturating_sub(self.sent),
            response,
        }
    }
}
