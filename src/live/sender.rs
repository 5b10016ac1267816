//! Each output's bounded queue and its sender: a thread of its own (with its own small runtime) that
//! batches what the queue holds, posts it, retries with back-off, and counts what it delivered, what the
//! queue had no room for and what it gave up on. Nothing here ever waits on the run, nor the run on it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;
use tokio::sync::mpsc;

use super::aggregate::Second;
use super::post::{Answer, Poster};
use super::raw::RawSample;
use super::{influx, remote_write};
use crate::plan::output_spec::{Endpoint, OutputKind};

/// Points (InfluxDB lines, Prometheus samples) a queue holds at most; past that, new ones are dropped.
pub const QUEUE_POINTS: u64 = 100_000;

/// A batch is sent once its oldest point waited this long...
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// ...or once it holds this many points.
const BATCH_POINTS: u64 = 5_000;

/// Tries of one batch before it is given up...
const ATTEMPTS: u32 = 5;

/// ...and once the run is over: the rest of the grace is for the batches still queued.
const ATTEMPTS_CLOSING: u32 = 2;

/// The first wait before a retry; each next one doubles, up to [`BACKOFF_MAX`].
const BACKOFF: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(4);

/// What goes through a queue.
#[derive(Debug, Clone)]
pub enum Item {
    /// A closed second.
    Second(Arc<Second>),
    /// Samples for the raw points.
    Raw(Arc<Vec<RawSample>>),
}

/// What an output did, counted as it goes.
#[derive(Debug, Default)]
pub struct Counts {
    /// Points the database accepted.
    pub delivered: AtomicU64,
    /// Accepted requests.
    pub requests: AtomicU64,
    /// Requests sent again after a failure.
    pub retries: AtomicU64,
    /// Points the queue had no room for.
    pub dropped: AtomicU64,
    /// Points given up on: refused, or the database unreachable through every try.
    pub failed: AtomicU64,
    /// Samples counted in the seconds handed to the output.
    pub samples_offered: AtomicU64,
    /// Samples counted in the seconds the database accepted.
    pub samples_delivered: AtomicU64,
    /// The last failure, for the report.
    pub last_error: Mutex<Option<String>>,
}

/// The sending end of an output's queue.
pub struct Queue {
    tx: Mutex<Option<mpsc::UnboundedSender<(Item, u64)>>>,
    queued: Arc<AtomicU64>,
    /// The output's counts.
    pub counts: Arc<Counts>,
    /// Wants the raw points.
    pub raw: bool,
    kind: OutputKind,
}

impl Queue {
    /// Queues an item, or drops and counts it when the queue is full or closed; never waits.
    pub fn offer(&self, item: Item) {
        let points = self.points(&item);
        if let Item::Second(s) = &item {
            self.counts.samples_offered.fetch_add(s.samples(), Ordering::Relaxed);
        }
        let room = self.queued.fetch_add(points, Ordering::Relaxed) + points <= QUEUE_POINTS;
        let sent = room
            && self.tx.lock().ok().and_then(|tx| tx.as_ref().map(|tx| tx.send((item, points)).is_ok())) == Some(true);
        if !sent {
            self.queued.fetch_sub(points, Ordering::Relaxed);
            self.counts.dropped.fetch_add(points, Ordering::Relaxed);
        }
    }

    /// Points an item makes in this output.
    fn points(&self, item: &Item) -> u64 {
        match (item, self.kind) {
            (Item::Raw(r), _) => r.len() as u64,
            (Item::Second(s), OutputKind::Influxdb) => {
                let labels: u64 =
                    s.labels.iter().map(|l| [&l.all, &l.ok, &l.ko].iter().filter(|f| f.count > 0).count() as u64).sum();
                labels + u64::from(s.total.all.count > 0) + s.errors.len() as u64 + 1
            }
            (Item::Second(s), OutputKind::Prometheus) => {
                s.labels.iter().chain([&s.total]).map(|l| if l.all.count > 0 { 11 } else { 4 }).sum::<u64>() + 2
            }
        }
    }

    /// No more items: the sender sends what it holds and ends.
    pub fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
    }
}

/// How the sender turns items into a request body.
pub struct Encoding {
    /// InfluxDB's common tags.
    pub tags: influx::Tags,
    /// Prometheus's common labels.
    pub labels: remote_write::Common,
}

/// A sender thread's handle.
pub struct Sender {
    pub queue: Arc<Queue>,
    /// Set when the run is over: retries stop at this instant.
    pub deadline: Arc<OnceLock<Instant>>,
    /// The thread; it says on `done` when it ends.
    pub done: std::sync::mpsc::Receiver<()>,
}

/// Starts the sender of `endpoint`: its queue and its thread; an error when no thread or runtime can be had.
pub fn spawn(endpoint: Endpoint, raw: bool, encoding: Encoding) -> Result<Sender, std::io::Error> {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicU64::new(0));
    let counts = Arc::new(Counts::default());
    let queue = Arc::new(Queue {
        tx: Mutex::new(Some(tx)),
        queued: queued.clone(),
        counts: counts.clone(),
        raw,
        kind: endpoint.kind,
    });
    let deadline = Arc::new(OnceLock::new());
    let (done_tx, done) = std::sync::mpsc::channel();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let state = State { endpoint, encoding, counts, queued, deadline: deadline.clone(), seq: 0 };
    std::thread::Builder::new().name("planrun-output".into()).spawn(move || {
        runtime.block_on(state.run(rx));
        let _ = done_tx.send(());
    })?;
    Ok(Sender { queue, deadline, done })
}

struct State {
    endpoint: Endpoint,
    encoding: Encoding,
    counts: Arc<Counts>,
    queued: Arc<AtomicU64>,
    deadline: Arc<OnceLock<Instant>>,
    seq: u64,
}

/// Points encoded and not yet sent.
#[derive(Default)]
struct Batch {
    text: String,
    proto: Vec<u8>,
    points: u64,
    samples: u64,
    since: Option<tokio::time::Instant>,
}

impl State {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<(Item, u64)>) {
        let mut poster = Poster::new(&self.endpoint);
        let mut batch = Batch::default();
        loop {
            let flush_at = batch.since.map(|t| t + FLUSH_EVERY);
            let next = tokio::select! {
                item = rx.recv() => item,
                () = sleep_until(flush_at) => {
                    self.flush(&mut poster, &mut batch).await;
                    continue;
                }
            };
            let Some((item, points)) = next else { break };
            self.queued.fetch_sub(points, Ordering::Relaxed);
            self.encode(&mut batch, &item);
            batch.since.get_or_insert_with(tokio::time::Instant::now);
            if batch.points >= BATCH_POINTS {
                self.flush(&mut poster, &mut batch).await;
            }
        }
        self.flush(&mut poster, &mut batch).await;
    }

    fn encode(&mut self, batch: &mut Batch, item: &Item) {
        match (item, self.endpoint.kind) {
            (Item::Second(s), OutputKind::Influxdb) => {
                batch.points += influx::second(&mut batch.text, &self.encoding.tags, s);
                batch.samples += s.samples();
            }
            (Item::Second(s), OutputKind::Prometheus) => {
                batch.points += remote_write::second(&mut batch.proto, &self.encoding.labels, s);
                batch.samples += s.samples();
            }
            (Item::Raw(samples), OutputKind::Influxdb) => {
                for s in samples.iter() {
                    influx::raw(&mut batch.text, &self.encoding.tags, s, self.seq);
                    self.seq += 1;
                }
                batch.points += samples.len() as u64;
            }
            (Item::Raw(_), OutputKind::Prometheus) => {}
        }
    }

    /// Sends the batch, retrying with back-off, and counts the outcome.
    async fn flush(&mut self, poster: &mut Poster, batch: &mut Batch) {
        let b = std::mem::take(batch);
        if b.points == 0 {
            return;
        }
        let (body, content_type, headers): (Bytes, _, &[_]) = match self.endpoint.kind {
            OutputKind::Influxdb => (Bytes::from(b.text), "text/plain; charset=utf-8", &[]),
            OutputKind::Prometheus => match remote_write::body(&b.proto) {
                Ok(body) => (
                    Bytes::from(body),
                    "application/x-protobuf",
                    &[("content-encoding", "snappy"), ("x-prometheus-remote-write-version", "0.1.0")],
                ),
                Err(e) => {
                    self.failed(b.points, format!("cannot compress: {e}"));
                    return;
                }
            },
        };
        let mut wait = BACKOFF;
        for attempt in 1..=ATTEMPTS {
            let answer = poster.send(Method::POST, &self.endpoint.write_url, content_type, headers, body.clone()).await;
            let Some(problem) = answer.problem() else {
                self.counts.delivered.fetch_add(b.points, Ordering::Relaxed);
                self.counts.requests.fetch_add(1, Ordering::Relaxed);
                self.counts.samples_delivered.fetch_add(b.samples, Ordering::Relaxed);
                return;
            };
            let retry = !matches!(answer, Answer::Refused { retry: false, .. });
            let (attempts, past) = match self.deadline.get() {
                Some(d) => (ATTEMPTS_CLOSING, Instant::now() + wait > *d),
                None => (ATTEMPTS, false),
            };
            if !retry || attempt >= attempts || past {
                self.failed(b.points, problem);
                return;
            }
            self.counts.retries.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(BACKOFF_MAX);
        }
    }

    fn failed(&self, points: u64, why: String) {
        self.counts.failed.fetch_add(points, Ordering::Relaxed);
        if let Ok(mut last) = self.counts.last_error.lock() {
            *last = Some(why);
        }
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;
    use crate::live::aggregate::Aggregator;
    use crate::sample::tests::sample;

    /// A server on 127.0.0.1 that answers each request with the next of `statuses`; returns its URL and
    /// how many requests it read.
    fn server(statuses: &'static [u16]) -> (String, std::thread::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/planrun", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let mut served = 0;
            for status in statuses {
                let Ok((mut conn, _)) = listener.accept() else { break };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
                let length = text.split("content-length: ").nth(1).and_then(|r| r.split("\r\n").next()?.parse().ok());
                let mut body = vec![0u8; length.unwrap_or(0)];
                let _ = conn.read_exact(&mut body);
                let _ = write!(conn, "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                served += 1;
            }
            served
        });
        (url, handle)
    }

    fn a_second() -> Item {
        let mut agg = Aggregator::new(1);
        agg.record(&[sample("a"), sample("b")], 1, 1, 0);
        agg.close_all(1, 0);
        Item::Second(Arc::new(agg.take().remove(0)))
    }

    fn encoding() -> Encoding {
        Encoding { tags: influx::Tags::new("p", &[]), labels: remote_write::Common::new("p", &[]) }
    }

    fn finish(s: &Sender) {
        let _ = s.deadline.set(Instant::now() + Duration::from_secs(5));
        s.queue.close();
        s.done.recv_timeout(Duration::from_secs(30)).expect("the sender ends");
    }

    #[test]
    fn a_failed_request_is_sent_again_and_delivered() {
        let (url, served) = server(&[503, 204]);
        let endpoint = crate::live::OutputSpec::parse(&format!("influxdb={url}")).unwrap().endpoint().unwrap();
        let s = spawn(endpoint, false, encoding()).unwrap();
        s.queue.offer(a_second());
        // Sent when the queue closes: 503, then, after a back-off, the one try left once the run is over.
        finish(&s);
        let c = &s.queue.counts;
        assert_eq!(served.join().unwrap(), 2);
        assert_eq!(c.retries.load(Ordering::Relaxed), 1);
        assert_eq!((c.requests.load(Ordering::Relaxed), c.failed.load(Ordering::Relaxed)), (1, 0));
        assert_eq!(c.samples_delivered.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_refusal_is_not_sent_again_and_is_counted_lost() {
        let (url, served) = server(&[400]);
        let endpoint = crate::live::OutputSpec::parse(&format!("influxdb={url}")).unwrap().endpoint().unwrap();
        let s = spawn(endpoint, false, encoding()).unwrap();
        s.queue.offer(a_second());
        finish(&s);
        assert_eq!(served.join().unwrap(), 1);
        let c = &s.queue.counts;
        assert!(c.failed.load(Ordering::Relaxed) > 0 && c.delivered.load(Ordering::Relaxed) == 0);
        assert!(c.last_error.lock().unwrap().as_deref().is_some_and(|e| e.starts_with("HTTP 400")));
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_waiting() {
        let (tx, _held) = mpsc::unbounded_channel();
        let queue = Queue {
            tx: Mutex::new(Some(tx)),
            queued: Arc::default(),
            counts: Arc::default(),
            raw: true,
            kind: OutputKind::Influxdb,
        };
        let batch = Arc::new(vec![RawSample::of(&sample("a")); 10_000]);
        for _ in 0..(QUEUE_POINTS / 10_000 + 3) {
            queue.offer(Item::Raw(batch.clone()));
        }
        assert_eq!(queue.queued.load(Ordering::Relaxed), QUEUE_POINTS);
        assert_eq!(queue.counts.dropped.load(Ordering::Relaxed), 30_000);
        queue.close();
        queue.offer(Item::Raw(batch));
        assert_eq!(queue.counts.dropped.load(Ordering::Relaxed), 40_000, "a closed queue drops too");
    }
}
