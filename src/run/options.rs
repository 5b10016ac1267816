//! How a run is placed (its segment, its cores, its start instant) and what it records beyond the samples'
//! own columns, each asked for on the command line: JMeter 5's redirect sub-results, `--http-debug`, failed
//! responses' bodies. The extras are off by default, and then no request keeps a body or a record it would
//! not keep anyway.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use crate::http::Record;
use crate::mask::Masks;
use crate::segment::Segment;

/// How much of a body `--http-debug=full` shows.
pub const DEBUG_BODY_LIMIT: usize = 2 * 1024;

/// How much of a failed response's body is kept for the results (`--failed-bodies`, `--json-failed-bodies`).
pub const KEPT_BODY_LIMIT: usize = 64 * 1024;

/// How many failed exchanges `--http-debug` prints, unless `--http-debug-max` says otherwise.
pub const DEBUG_MAX: u64 = 100;

/// How many failed responses' bodies are kept, unless `--failed-bodies-max` says otherwise.
pub const BODIES_MAX: u64 = 1000;

/// The placement and extras of a run.
#[derive(Debug, Default)]
pub struct RunOptions {
    /// The part of the plan this process runs (`--segment I/N`); the whole plan by default.
    pub segment: Segment,
    /// Runtimes (one thread each) the users are spread over; 0 and 1 both run them on the caller's runtime.
    pub cores: u64,
    /// Send nothing before this instant (`--start-at`).
    pub start_at: Option<SystemTime>,
    /// Write the requests of a followed redirect as JMeter 5's sub-results (`label-0`, `label-1`, ...).
    pub sub_results: bool,
    /// Show exchanges as text (`--http-debug`).
    pub http_debug: Option<HttpDebug>,
    /// Keep the first [`KEPT_BODY_LIMIT`] bytes of each failed response's body.
    pub failed_bodies: bool,
    /// How many failed responses' bodies are kept; those past it are counted.
    pub bodies_cap: Arc<Cap>,
    /// The counters of active users and dropped iterations to use, when the caller watches them too (the
    /// live outputs); one for every group of the graph, else the run makes its own.
    pub active: Option<std::sync::Arc<super::Active>>,
}

/// Which exchanges `--http-debug` shows, and how much of them.
#[derive(Debug, Default)]
pub struct HttpDebug {
    /// Bodies too (cut at [`DEBUG_BODY_LIMIT`]), not only the heads.
    pub full: bool,
    /// Every failed sample.
    pub failed: bool,
    /// The first this many requests of the run, failed or not.
    pub first: u64,
    /// Requests of the first `first` already claimed.
    taken: AtomicU64,
    /// How many failed samples are shown (beyond the first `first` requests); those past it are counted.
    pub cap: Arc<Cap>,
}

impl HttpDebug {
    /// Shows failed samples (`failed`), at most `max` of them, and the first `first` requests; `full` adds
    /// the bodies.
    pub fn new(full: bool, failed: bool, first: u64, max: u64) -> Self {
        Self { full, failed, first, taken: AtomicU64::new(0), cap: Arc::new(Cap::new(max)) }
    }

    /// Whether failed samples may still be shown.
    fn shows_failed(&self) -> bool {
        self.failed && !self.cap.full()
    }

    /// Whether the request about to be sent is one of the run's first `first`.
    fn claim(&self) -> bool {
        self.taken.load(Ordering::Relaxed) < self.first && self.taken.fetch_add(1, Ordering::Relaxed) < self.first
    }
}

/// At most `max` of something the run writes for each failed sample, and a count of those left out past them.
#[derive(Debug)]
pub struct Cap {
    max: u64,
    taken: AtomicU64,
    left_out: AtomicU64,
}

impl Cap {
    /// At most `max`.
    pub fn new(max: u64) -> Self {
        Self { max, taken: AtomicU64::new(0), left_out: AtomicU64::new(0) }
    }

    /// The most there may be.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Takes one of the `max`: false, and counted as left out, when they are all taken.
    pub fn claim(&self) -> bool {
        if !self.full() && self.taken.fetch_add(1, Ordering::Relaxed) < self.max {
            return true;
        }
        self.left_out.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// True when every one of the `max` is taken.
    pub fn full(&self) -> bool {
        self.taken.load(Ordering::Relaxed) >= self.max
    }

    /// How many were left out.
    pub fn left_out(&self) -> u64 {
        self.left_out.load(Ordering::Relaxed)
    }
}

impl Default for Cap {
    fn default() -> Self {
        Self::new(BODIES_MAX)
    }
}

/// What one request records, decided before it is sent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wants {
    /// Bytes of each response body to keep besides what the step's assertions need.
    pub keep: usize,
    /// What the exchange records.
    pub record: Record,
    /// Show this exchange whatever its outcome (one of the first N).
    pub show: bool,
    /// Anything at all: when false, the sample gets no detail.
    pub any: bool,
}

impl RunOptions {
    /// True when nothing beyond the columns is recorded.
    pub fn is_off(&self) -> bool {
        !self.sub_results && self.http_debug.is_none() && !self.failed_bodies
    }

    /// What the next request of a user with these `masks` records. Bodies are kept [`Masks::reach`] bytes
    /// longer than they are shown, so that a cut cannot leave a piece of a secret unmasked.
    #[inline]
    pub fn wants(&self, masks: &Masks) -> Wants {
        if self.is_off() {
            return Wants::default();
        }
        let reach = masks.reach();
        let show = self.http_debug.as_ref().is_some_and(HttpDebug::claim);
        // Past their caps, failed samples keep nothing more for them.
        let debug = self.http_debug.as_ref().filter(|d| show || d.shows_failed());
        let bodies = self.failed_bodies && !self.bodies_cap.full();
        let mut keep = 0;
        if debug.is_some_and(|d| d.full) {
            keep = DEBUG_BODY_LIMIT + reach;
        }
        if bodies {
            keep = keep.max(KEPT_BODY_LIMIT + reach);
        }
        let record = if debug.is_some() {
            Record::Requests
        } else if self.sub_results {
            Record::Hops
        } else if bodies {
            Record::Sizes
        } else {
            Record::Nothing
        };
        Wants { keep, record, show, any: true }
    }
}
