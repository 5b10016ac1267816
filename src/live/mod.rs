//! Live outputs: the run's figures streamed, second by second, into time-series databases while it goes
//! on (InfluxDB 1.x line protocol, Prometheus remote write), as docs/outputs.md describes.
//!
//! An observer on the drain counts each batch into the second under way; a ticker thread closes each
//! second and offers it to every output's bounded queue; each output's own thread batches, posts and
//! retries. A full queue drops (and counts) rather than wait: the users and the JTL never wait for a
//! database, and one that cannot be reached costs a warning and a count, not the run.

mod aggregate;
mod influx;
mod observer;
mod post;
mod raw;
mod remote_write;
mod sender;

pub use crate::plan::output_spec::{Endpoint, OutputKind, OutputSpec, SpecError};
pub use aggregate::{Aggregator, LabelSecond, Second};
pub use observer::{LiveObserver, SecondWatcher};

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;

use crate::run::Active;
use post::{Answer, Poster};
use sender::{Encoding, Sender};

/// How long the outputs have, once the run is over, to send what they hold.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Longest the check of each database at start may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What the run's outputs are told about it.
#[derive(Debug, Clone)]
pub struct RunTags {
    /// The `application` tag: the plan's name.
    pub application: String,
    /// More tags on every point (`segment` in a segmented run).
    pub extra: Vec<(String, String)>,
}

/// What one output delivered, for the end of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `kind URL`, without credentials.
    pub name: String,
    /// Points (lines, samples) the database accepted.
    pub delivered: u64,
    /// Accepted requests.
    pub requests: u64,
    /// Requests sent again.
    pub retries: u64,
    /// Points the queue had no room for.
    pub dropped: u64,
    /// Points given up on (refused, or unreachable through every try).
    pub failed: u64,
    /// Samples counted in the seconds the database accepted.
    pub samples: u64,
    /// Samples counted in the seconds handed to this output.
    pub samples_offered: u64,
    /// The last failure.
    pub last_error: Option<String>,
    /// Still sending when the grace ran out: what it held is lost.
    pub unfinished: bool,
}

/// The live outputs of a run.
pub struct Live {
    shared: Arc<observer::Shared>,
    senders: Vec<(String, Sender)>,
    ticker: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Live {
    /// Checks each database (creating InfluxDB's database when it is missing), starts each output's sender
    /// and the ticker. Returns the outputs and a warning for each database that could not be reached or
    /// refused the check: the run goes on, and what they miss is counted.
    pub async fn start(
        specs: &[OutputSpec],
        tags: &RunTags,
        active: Arc<Active>,
        watchers: Vec<Arc<dyn SecondWatcher>>,
    ) -> Result<(Live, Vec<String>), SpecError> {
        let mut warnings = Vec::new();
        let mut senders = Vec::new();
        for spec in specs {
            let endpoint = spec.endpoint()?;
            if let Some(problem) = probe(&endpoint).await {
                warnings.push(format!(
                    "{}: {problem}; the run goes on, and what it cannot deliver is counted",
                    endpoint.name
                ));
            }
            let encoding = Encoding {
                tags: influx::Tags::new(&tags.application, &tags.extra),
                labels: remote_write::Common::new(&tags.application, &tags.extra),
            };
            let name = endpoint.name.clone();
            let sender = sender::spawn(endpoint, spec.raw && spec.kind == OutputKind::Influxdb, encoding)
                .map_err(|e| SpecError(format!("{name}: cannot start its sender: {e}")))?;
            senders.push((name, sender));
        }
        let shared = Arc::new(observer::Shared {
            aggregator: Mutex::new(Aggregator::new(observer::unix_seconds())),
            queues: senders.iter().map(|(_, s)| s.queue.clone()).collect(),
            watchers,
            active,
        });
        let (stop, stopped) = std::sync::mpsc::channel();
        let ticker = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("planrun-ticker".into())
                .spawn(move || observer::ticker(shared, stopped))
                .map_err(|e| SpecError(format!("cannot start the live outputs' ticker: {e}")))?
        };
        Ok((Live { shared, senders, ticker: Some((stop, ticker)) }, warnings))
    }

    /// The observer to add to the run's sinks.
    pub fn observer(&self) -> LiveObserver {
        LiveObserver { shared: self.shared.clone() }
    }

    /// The run is over: closes the last second, lets each output send what it holds for up to `grace`,
    /// and says what each delivered. Blocks the calling thread.
    pub fn finish(mut self, grace: Duration) -> Vec<Delivery> {
        if let Some((stop, ticker)) = self.ticker.take() {
            let _ = stop.send(());
            let _ = ticker.join();
        }
        let deadline = Instant::now() + grace;
        for (_, s) in &self.senders {
            let _ = s.deadline.set(deadline);
            s.queue.close();
        }
        self.senders
            .iter()
            .map(|(name, s)| {
                let unfinished = s.done.recv_timeout(deadline.saturating_duration_since(Instant::now())).is_err();
                let c = &s.queue.counts;
                let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                Delivery {
                    name: name.clone(),
                    delivered: n(&c.delivered),
                    requests: n(&c.requests),
                    retries: n(&c.retries),
                    dropped: n(&c.dropped),
                    failed: n(&c.failed),
                    samples: n(&c.samples_delivered),
                    samples_offered: n(&c.samples_offered),
                    last_error: c.last_error.lock().ok().and_then(|e| e.clone()),
                    unfinished,
                }
            })
            .collect()
    }
}

impl Drop for Live {
    /// A run that ends without [`Live::finish`] (it could not start) stops the threads all the same.
    fn drop(&mut self) {
        if let Some((stop, _)) = self.ticker.take() {
            let _ = stop.send(());
        }
        for (_, s) in &self.senders {
            s.queue.close();
        }
    }
}

/// Whether the database answers: InfluxDB is asked to create its database (a no-op when it exists);
/// for Prometheus a connection is opened. `None` when all is well.
async fn probe(endpoint: &Endpoint) -> Option<String> {
    let check = async {
        match (endpoint.kind, &endpoint.database) {
            (OutputKind::Influxdb, Some(db)) => {
                let q = format!("CREATE DATABASE \"{}\"", db.replace('\\', "\\\\").replace('"', "\\\""));
                let body: String = url::form_urlencoded::Serializer::new(String::new()).append_pair("q", &q).finish();
                let mut poster = Poster::new(endpoint);
                let url = endpoint.sibling("/query");
                let answer =
                    poster.send(Method::POST, &url, "application/x-www-form-urlencoded", &[], Bytes::from(body)).await;
                match answer {
                    Answer::Accepted => None,
                    other => other.problem().map(|p| format!("cannot create database `{db}` ({p})")),
                }
            }
            _ => {
                let url = url::Url::parse(&endpoint.write_url).ok()?;
                let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']').to_string();
                let port = url.port_or_known_default()?;
                match tokio::net::TcpStream::connect((host.as_str(), port)).await {
                    Ok(_) => None,
                    Err(e) => Some(format!("cannot connect to {host}:{port} ({e})")),
                }
            }
        }
    };
    match tokio::time::timeout(PROBE_TIMEOUT, check).await {
        Ok(problem) => problem,
        Err(_) => Some(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
    }
}
