//! One virtual user's HTTP engine: a keep-alive connection per origin (reopened when the server closes it),
//! plain or TLS, a cookie jar, redirects, and measurements of every phase from the socket itself.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cookie_store::CookieStore;
use http::header::{LOCATION, SET_COOKIE};
use rustls::ClientConfig;
use socket2::{Domain, Socket, Type};
use tokio::io::Interest;
use tokio::net::TcpStream;

use super::conn::{give_back, take_write_buf, Conn, Idle};
use super::counting::{Counting, WireStats};
use super::deadline::Deadline;
use super::encode::{encode, INLINE_BODY, INLINE_BODY_PLAIN};
use super::error::Failure;
use super::h2::{H2Conn, Retry};
use super::hop::{Counters, How, Record, Recorded, Recorder};
use super::outcome::ErrorKind;
use super::proxy::{self, Proxies, Proxy};
use super::request::{HttpVersion, WireRequest};
use super::response::Response;
use super::stream::Stream;
use super::tls::TlsSettings;
use super::tls::{self, TlsError};
use super::tls_stream::TlsStream;
use crate::http::target::{Origin, Target};

/// Redirects followed within one sample before it fails.
const MAX_REDIRECTS: usize = 10;

/// A response and every measurement of the exchange that produced it (also kept when it failed).
#[derive(Debug)]
pub struct Exchange {
    /// The response, or why there was none.
    pub result: Result<Response, Failure>,
    /// When the exchange started (the sample's timestamp); it ended `elapsed` later.
    pub start: Instant,
    /// Sample start to the first response byte (connect included).
    pub latency: Duration,
    /// Sample start to the last response byte.
    pub elapsed: Duration,
    /// Time spent opening connections, TLS handshakes included.
    pub connect: Duration,
    /// Wire bytes received (on an https connection: TLS records, the handshake's included).
    pub bytes: u64,
    /// Wire bytes sent (likewise).
    pub sent: u64,
    /// The URL of the last request sent, when redirects were followed (JMeter's URL column shows it).
    pub final_url: Option<String>,
    /// The HTTP version of the connection the last request went on; `None` when none was made.
    pub protocol: Option<http::Version>,
}

impl Exchange {
    fn counters(&self) -> Counters {
        (self.bytes, self.sent, self.connect)
    }
}

/// Where a client's TLS configuration comes from; resolved on its first https connection.
enum TlsSource {
    /// Default settings (verification against Mozilla's roots).
    Default,
    /// The run's configuration, shared by every user.
    Run(Arc<ClientConfig>),
    /// This user's copy of the run's configuration, with a TLS session cache of its own. The run's stays
    /// held, so the users that start later find it in [`tls::shared_tls_config`] instead of building another.
    Own {
        /// The run's configuration.
        _run: Arc<ClientConfig>,
        /// This user's copy.
        own: Arc<ClientConfig>,
    },
    /// The run's TLS settings cannot be used: every https request fails, saying why.
    Unusable(String),
}

/// Kept-alive connections a user holds to origins other than the one in use, as a JMeter thread keeps one
/// per host: a user that goes between an auth server and an API reuses both. The least recently used is
/// closed when a new origin would make more.
const PARKED_ORIGINS: usize = 3;

/// A connection idle for at least this long is polled for a close, or bytes no request asked for, before it is
/// used again.
const IDLE_LOOK: Duration = Duration::from_millis(1);

/// How long a user keeps the addresses a host name resolved to, so that a user opening a connection per request
/// does not ask the resolver (a hop to a blocking thread, a read of /etc/hosts at least) each time. Java keeps a
/// lookup 30 s by default, and JMeter with it.
const RESOLVED_FOR: Duration = Duration::from_secs(30);

/// The addresses of an origin's host, kept until `until`.
struct Resolved {
    origin: Arc<Origin>,
    addrs: Arc<[SocketAddr]>,
    until: Instant,
}

/// What a run's clients count about their connections, shared by all of them.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    out_of_step: AtomicU64,
}

impl ConnectionCounts {
    /// Kept-alive connections closed because the server sent bytes no request asked for: found on the
    /// connection while it sat idle (the request then went on a new connection), or after a response's end.
    pub fn out_of_step(&self) -> u64 {
        self.out_of_step.load(Ordering::Relaxed)
    }
}

/// The HTTP engine of one virtual user.
pub struct Client {
    /// [`IDLE_LOOK`] after the last exchange ended: a connection used before then is not polled (a comparison
    /// of instants costs less than the duration between them).
    look_after: Option<Instant>,
    /// Whether the next reuse polls the connection first (see [`Conn::idle_state`]).
    look: bool,
    /// The connection in use, or last used.
    conn: Option<Conn>,
    /// Idle connections to other origins, least recently used first.
    parked: Vec<Conn>,
    /// HTTP/2 connections, one per origin, least recently opened first.
    h2: Vec<H2Conn>,
    /// This user's TLS configuration offering only `http/1.1` and only `h2` by ALPN, made when a request asks.
    alpn: [Option<Arc<ClientConfig>>; 2],
    /// What the exchange under way records, when asked ([`How::record`]); kept from one to the next.
    record: Option<Box<Recorder>>,
    /// The recorder of an earlier exchange, kept for the next one that records.
    spare: Option<Box<Recorder>>,
    /// The counters of the connection in use or being opened, so a timeout can still count its bytes.
    live: Option<Arc<WireStats>>,
    jar: Option<CookieStore>,
    body_limit: usize,
    tls: TlsSource,
    timer: Deadline,
    /// Where out-of-step connections are counted, when the run counts them.
    counts: Option<Arc<ConnectionCounts>>,
    /// The run's proxies, when any request may go through one.
    proxies: Option<Arc<Proxies>>,
    /// The addresses of the hosts the user connected to last (one per origin it holds a connection to).
    resolved: Vec<Resolved>,
}

impl Client {
    /// A client with default TLS settings; `cookies` gives it a cookie jar of its own.
    pub fn new(cookies: bool, body_limit: usize) -> Self {
        Self {
            look_after: None,
            look: true,
            conn: None,
            parked: Vec::new(),
            h2: Vec::new(),
            alpn: [None, None],
            live: None,
            record: None,
            spare: None,
            jar: cookies.then(CookieStore::default),
            body_limit,
            tls: TlsSource::Default,
            timer: Deadline::default(),
            counts: None,
            proxies: None,
            resolved: Vec::new(),
        }
    }

    /// The same client, counting its connections into `counts`.
    pub fn counting(self, counts: Arc<ConnectionCounts>) -> Self {
        Self { counts: Some(counts), ..self }
    }

    /// The same client, sending its requests through `proxies` (each request to an origin they route).
    pub fn proxied(self, proxies: Arc<Proxies>) -> Self {
        Self { proxies: (!proxies.is_empty()).then_some(proxies), ..self }
    }

    /// Bytes of a response body kept at most (`max_body`).
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// Counts a connection found out of step.
    #[cold]
    fn out_of_step(&self) {
        if let Some(c) = &self.counts {
            c.out_of_step.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A client whose https connections use `tls`: the run's one configuration, from
    /// [`shared_tls_config`](super::shared_tls_config) or [`tls_config`](super::tls_config). When the run's
    /// settings could not be used, every https request is a failed sample that says why.
    pub fn with_tls(cookies: bool, body_limit: usize, tls: Result<Arc<ClientConfig>, TlsError>) -> Self {
        let tls = match tls {
            Ok(config) => TlsSource::Run(config),
            Err(e) => TlsSource::Unusable(format!("TLS settings cannot be used: {e}")),
        };
        Self { tls, ..Self::new(cookies, body_limit) }
    }

    /// The Cookie header value for a URL, from this user's jar.
    pub fn cookie_header(&self, target: &Target) -> Option<String> {
        let jar = self.jar.as_ref()?;
        jar.iter_unexpired().next()?;
        let url = target.parsed()?;
        let pairs: Vec<String> = jar.get_request_values(&url).map(|(k, v)| format!("{k}={v}")).collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }

    /// The value of a cookie the jar would send to `target`.
    pub fn cookie(&self, name: &str, target: &Target) -> Option<String> {
        let jar = self.jar.as_ref()?;
        let url = target.parsed()?;
        jar.get_request_values(&url).find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    /// Drops the connection: a panic may have left it mid-exchange.
    pub fn forget_connection(&mut self) {
        self.conn = None;
        self.record = None;
        self.parked.clear();
        self.h2.clear();
        self.live = None;
    }

    /// Sends a request (following redirects when `follow_redirects`) within `timeout`, measuring everything;
    /// `keep_body` keeps each body up to the client's `body_limit`.
    pub async fn execute(
        &mut self,
        original: &WireRequest,
        timeout: Duration,
        keep_body: bool,
        follow_redirects: bool,
    ) -> Exchange {
        let keep = if keep_body { self.body_limit } else { 0 };
        self.exchange(original, timeout, How { keep, follow_redirects, record: Record::Nothing, headers: true }).await
    }

    /// Sends a request within `timeout` as `how` says, measuring everything.
    pub async fn exchange(&mut self, original: &WireRequest, timeout: Duration, how: How) -> Exchange {
        let How { keep, follow_redirects, record: level, headers } = how;
        let record = level > Record::Nothing;
        let headers = headers || record;
        let keep = keep.min(self.body_limit);
        let start = Instant::now();
        let deadline = tokio::time::Instant::from_std(crate::clock::after(start, timeout));
        let mut ex = Exchange {
            // Always replaced before it is returned; a placeholder that allocates nothing.
            result: Err(Failure::new(ErrorKind::BadRequest, String::new())),
            start,
            latency: Duration::ZERO,
            elapsed: Duration::ZERO,
            connect: Duration::ZERO,
            bytes: 0,
            sent: 0,
            final_url: None,
            protocol: None,
        };
        // Kept out of `ex`: an exchange that records nothing stays as small to move as it was.
        if record {
            self.record = Some(match self.spare.take() {
                Some(mut r) => {
                    r.reset(level);
                    r
                }
                None => Box::new(Recorder::new(level)),
            });
        }
        // The request of a redirect; the original is only borrowed (its URL goes into the sample afterwards).
        // Boxed: redirects are rare, and this is held by every user while its request is in flight.
        let mut next: Option<Box<WireRequest>> = None;
        let mut first_byte: Option<Instant> = None;
        self.look = self.look_after.is_none_or(|t| start >= t);
        for hop in 0..=MAX_REDIRECTS {
            let req = next.as_deref().unwrap_or(original);
            if record {
                self.start_hop(&ex);
            }
            // When the connection being opened started, so a timeout still counts the time spent on it.
            let mut connecting: Option<Instant> = None;
            let mut timer = std::mem::take(&mut self.timer);
            let hop_result = {
                let work = pin!(self.one(req, (keep, headers), &mut ex, &mut connecting, &mut first_byte));
                timer.run(deadline, work).await
            };
            self.timer = timer;
            // The hop of a response is recorded here, by reference; a copy of the response is kept only when
            // it leads on (a redirect to follow): the last one becomes the exchange's result.
            if record {
                if let (Ok(Ok(())), Ok(resp)) = (&hop_result, &ex.result) {
                    let leads_on = follow_redirects && is_redirect(resp.status);
                    self.end_hop(start, ex.counters(), req, leads_on.then_some(resp));
                }
            }
            match hop_result {
                Err(_) => {
                    // The exchange was cut off mid-way: what crossed the wire is still on the counters.
                    self.conn = None;
                    self.h2.retain(|c| c.origin != req.target.origin);
                    if let Some(stats) = self.live.take() {
                        settle(&stats, &mut ex);
                    }
                    if let Some(t) = connecting {
                        ex.connect += t.elapsed();
                    }
                    let mut f = Failure::timeout(connecting.is_some(), timeout);
                    if let Some(p) = self.proxies.as_deref().and_then(|p| p.route(&req.target.origin)) {
                        f = through(f, p);
                    }
                    ex.result = Err(f);
                    if record {
                        self.end_hop(start, ex.counters(), req, None);
                    }
                    break;
                }
                Ok(Err(f)) => {
                    self.conn = None;
                    ex.result = Err(f);
                    if record {
                        self.end_hop(start, ex.counters(), req, None);
                    }
                    break;
                }
                Ok(Ok(())) => {}
            }
            // The hop's response, written in place by the connection.
            let Ok(resp) = &ex.result else { break };
            self.store_cookies(&req.target, &resp.headers);
            // Where a followed redirect points; looked up only then (a header lookup hashes the name).
            let location = (follow_redirects && is_redirect(resp.status))
                .then(|| resp.headers.map().get(LOCATION).and_then(|l| l.to_str().ok()).map(str::to_owned))
                .flatten();
            match location {
                Some(loc) if hop < MAX_REDIRECTS => match self.redirected(req, resp.status, &loc) {
                    Ok(redirect) => next = Some(Box::new(redirect)),
                    Err(f) => {
                        ex.result = Err(f);
                        break;
                    }
                },
                Some(_) => {
                    ex.result = Err(Failure::new(ErrorKind::Redirect, format!("More than {MAX_REDIRECTS} redirects")));
                    break;
                }
                None => {
                    if let Some(r) = self.record.as_deref_mut() {
                        r.result_is_last();
                    }
                    break;
                }
            }
        }
        ex.final_url = next.map(|r| r.target.url);
        let end = Instant::now();
        self.look_after = end.checked_add(IDLE_LOOK);
        ex.elapsed = end - start;
        ex.latency = first_byte.unwrap_or(end).saturating_duration_since(start);
        ex
    }

    async fn one(
        &mut self,
        req: &WireRequest,
        keep: (usize, bool),
        ex: &mut Exchange,
        connecting: &mut Option<Instant>,
        first_byte: &mut Option<Instant>,
    ) -> Result<(), Failure> {
        let origin = &req.target.origin;
        if self.speaks_h2(req) {
            // Boxed: its future would otherwise make every HTTP/1.1 request's larger.
            return Box::pin(self.one_h2(req, keep.0, ex, connecting, first_byte, None)).await;
        }
        // A connection taken out of the parked ones, or reached through a redirect, has sat idle: look.
        let look = self.switch_to(origin) || self.look;
        self.look = true;
        let idle = self.conn.as_mut().filter(|c| c.origin == *origin).map(|c| c.idle_state(look));
        if idle == Some(Idle::OutOfStep) {
            self.out_of_step();
        }
        let mut reused = idle == Some(Idle::Open);
        let via = self.proxies.as_deref().and_then(|p| p.route(origin)).cloned();
        let mut wire = take_write_buf();
        let inline_max = if origin.https { INLINE_BODY } else { INLINE_BODY_PLAIN };
        let inline = match encode(req, &mut wire, inline_max) {
            Ok(inline) => inline,
            Err(f) => {
                give_back(wire);
                return Err(f);
            }
        };
        if let Some(p) = via.as_deref().filter(|_| !origin.https) {
            let own = req.headers.iter().any(|(n, _)| n == http::header::PROXY_AUTHORIZATION);
            proxy::to_absolute_form(&mut wire, &req.target.host, p, own);
        }
        let mut attempt = 0;
        let mut handoff = None;
        let out = loop {
            attempt += 1;
            if !reused {
                let tls = match origin.https.then(|| self.tls_for(req.version)).transpose() {
                    Ok(tls) => tls,
                    Err(f) => break Err(f),
                };
                self.conn = None;
                let stats = WireStats::new();
                self.live = Some(stats.clone());
                let t = Instant::now();
                *connecting = Some(t);
                let known = self.known_addresses(origin, t);
                // Boxed: connecting is rarer than reusing and its future is large; inline, it would be copied
                // with every request.
                let opened = Box::pin(open(origin.clone(), known, tls, stats.clone(), via.as_deref(), false)).await;
                ex.connect += t.elapsed();
                *connecting = None;
                // The TLS handshake's bytes belong to the sample that opened the connection, as its time does.
                settle(&stats, ex);
                match opened {
                    Ok((opened, addrs)) => {
                        if let Some(addrs) = addrs {
                            self.remember(origin, addrs, t);
                        }
                        match opened {
                            Opened::H1(c) => self.conn = Some(c),
                            // ALPN chose HTTP/2.
                            Opened::H2(c) => {
                                handoff = Some(c);
                                break Ok(());
                            }
                        }
                    }
                    Err(f) => {
                        // The host may have moved: ask the resolver again next time.
                        self.resolved.retain(|r| r.origin != *origin);
                        break Err(f);
                    }
                }
            }
            let Some(conn) = self.conn.as_mut() else {
                break Err(Failure::new(ErrorKind::ConnectionReset, "Connection closed before the request was sent"));
            };
            conn.stats.reset();
            let result = conn.exchange(req, &wire, inline, keep, &mut ex.result).await;
            ex.protocol = Some(http::Version::HTTP_11);
            let (nothing_sent, response_began) = (conn.stats.written() == 0, conn.first_read);
            let (reusable, out_of_step) = (conn.reusable(), conn.out_of_step());
            settle(&conn.stats, ex);
            match result {
                // A kept-alive connection the server closed while it was idle, noticed only now (its FIN or
                // RST crossed the request): nothing of a response came, so send once more on a new one. Only
                // an idempotent request, or one of which no byte left: a POST the server may have acted on is
                // not resent (RFC 9110 9.2.2).
                Err(_)
                    if reused
                        && attempt == 1
                        && response_began.is_none()
                        && (req.method.is_idempotent() || nothing_sent) =>
                {
                    reused = false;
                    continue;
                }
                Err(f) => {
                    self.note_first_byte(response_began, first_byte);
                    break Err(f);
                }
                Ok(size) => {
                    if !reusable {
                        if out_of_step {
                            self.out_of_step();
                        }
                        self.conn = None;
                    }
                    self.note_first_byte(response_began, first_byte);
                    if let Some(r) = self.record.as_deref_mut() {
                        r.body_size = size;
                    }
                    break Ok(());
                }
            }
        };
        give_back(wire);
        if let Some(c) = handoff {
            let out = Box::pin(self.one_h2(req, keep.0, ex, connecting, first_byte, Some(c))).await;
            return match (out, via) {
                (Err(f), Some(p)) => Err(through(f, &p)),
                (out, _) => out,
            };
        }
        match (out, via) {
            (Err(f), Some(p)) => Err(through(f, &p)),
            (out, _) => out,
        }
    }

    /// Whether `req` goes over HTTP/2: it asks for it, or an HTTP/2 connection to its origin is open (ALPN
    /// chose `h2` for it) and usable.
    fn speaks_h2(&mut self, req: &WireRequest) -> bool {
        match req.version {
            HttpVersion::Http1 => false,
            HttpVersion::Http2 => true,
            HttpVersion::Auto if self.h2.is_empty() => false,
            HttpVersion::Auto => {
                let Some(i) = self.h2.iter().position(|c| c.origin == req.target.origin) else { return false };
                let look = std::mem::replace(&mut self.look, true);
                if self.h2[i].usable(look) {
                    // Looked at just now: not again in `one_h2`.
                    self.look = false;
                    return true;
                }
                self.h2.remove(i);
                false
            }
        }
    }

    /// Keeps an HTTP/2 connection; the oldest is closed when there would be more than a user keeps.
    fn keep_h2(&mut self, c: H2Conn) {
        self.h2.retain(|o| o.origin != c.origin);
        if self.h2.len() > PARKED_ORIGINS {
            self.h2.remove(0);
        }
        self.h2.push(c);
    }

    /// Sends a request over HTTP/2, on the user's connection to its origin or a new one (`fresh`, when it was
    /// just opened and ALPN chose `h2`). A request the server did not process (REFUSED_STREAM, or above a
    /// GOAWAY's last stream) is sent once more, as is an idempotent one whose reused connection ended before
    /// any of the response came.
    async fn one_h2(
        &mut self,
        req: &WireRequest,
        keep: usize,
        ex: &mut Exchange,
        connecting: &mut Option<Instant>,
        first_byte: &mut Option<Instant>,
        fresh: Option<Box<H2Conn>>,
    ) -> Result<(), Failure> {
        let origin = &req.target.origin;
        let mut reused = fresh.is_none();
        if let Some(c) = fresh {
            self.keep_h2(*c);
        }
        let mut look = std::mem::replace(&mut self.look, true);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let found = self.h2.iter().position(|c| c.origin == *origin);
            let i = match found {
                Some(i) if self.h2[i].usable(look) => i,
                found => {
                    if let Some(i) = found {
                        self.h2.remove(i);
                    }
                    reused = false;
                    let tls = match origin.https.then(|| self.tls_for(req.version)).transpose() {
                        Ok(tls) => tls,
                        Err(f) => return Err(f),
                    };
                    let stats = WireStats::new();
                    self.live = Some(stats.clone());
                    let t = Instant::now();
                    *connecting = Some(t);
                    // Through a proxy only in a CONNECT tunnel: cleartext HTTP/2 has no absolute form.
                    let via = self.proxies.as_deref().and_then(|p| p.route(origin)).cloned();
                    if let Some(p) = via.as_deref().filter(|_| !origin.https) {
                        return Err(Failure::new(
                            ErrorKind::ConnectFailed,
                            format!("HTTP/2 without TLS (h2c) cannot go through the proxy {}: use https or http_version: 1.1", p.shown()),
                        ));
                    }
                    let known = self.known_addresses(origin, t);
                    let opened = Box::pin(open(origin.clone(), known, tls, stats.clone(), via.as_deref(), true)).await;
                    ex.connect += t.elapsed();
                    *connecting = None;
                    settle(&stats, ex);
                    if let Ok((_, Some(addrs))) = &opened {
                        self.remember(origin, addrs.clone(), t);
                    }
                    match opened.map(|(o, _)| o) {
                        Ok(Opened::H2(c)) => self.keep_h2(*c),
                        Ok(Opened::H1(_)) => {
                            ex.protocol = Some(http::Version::HTTP_11);
                            return Err(Failure::new(
                                ErrorKind::Tls,
                                format!("{}:{} did not agree to HTTP/2 (ALPN)", origin.host, origin.port),
                            ));
                        }
                        // A server that speaks no protocol ALPN offered may refuse the handshake instead.
                        Err(f) if req.version == HttpVersion::Http2 && f.message.contains("NoApplicationProtocol") => {
                            let message =
                                format!("{}: the server did not agree to HTTP/2 (ALPN offered only h2)", f.message);
                            return Err(Failure::new(f.kind, message));
                        }
                        Err(f) => return Err(f),
                    }
                    self.h2.len() - 1
                }
            };
            look = true;
            let conn = &mut self.h2[i];
            conn.stats.reset();
            if !self.live.as_ref().is_some_and(|l| Arc::ptr_eq(l, &conn.stats)) {
                self.live = Some(conn.stats.clone());
            }
            let result = conn.exchange(req, keep, &mut ex.result).await;
            ex.protocol = Some(http::Version::HTTP_2);
            let (began, reusable) = (conn.first_read, conn.reusable());
            settle(&conn.stats, ex);
            match result {
                Ok(size) => {
                    if !reusable {
                        self.h2.remove(i);
                    }
                    self.note_first_byte(began, first_byte);
                    if let Some(r) = self.record.as_deref_mut() {
                        r.body_size = size;
                    }
                    return Ok(());
                }
                Err(f) => {
                    if !reusable || f.retry == Retry::IfNothingCame {
                        self.h2.remove(i);
                    }
                    let again = attempt == 1
                        && match f.retry {
                            Retry::Safe => true,
                            Retry::IfNothingCame => reused && began.is_none() && req.method.is_idempotent(),
                            Retry::Never => false,
                        };
                    if again {
                        continue;
                    }
                    self.note_first_byte(began, first_byte);
                    return Err(f.failure);
                }
            }
        }
    }

    /// This user's TLS configuration for a request: ALPN offers what its HTTP version allows.
    #[cold]
    fn tls_for(&mut self, version: HttpVersion) -> Result<Arc<ClientConfig>, Failure> {
        let own = self.tls_config()?;
        let (slot, protocol): (usize, &[u8]) = match version {
            HttpVersion::Auto => return Ok(own),
            HttpVersion::Http1 => (0, b"http/1.1"),
            HttpVersion::Http2 => (1, b"h2"),
        };
        let config = self.alpn[slot].get_or_insert_with(|| {
            let mut c = (*own).clone();
            c.alpn_protocols = vec![protocol.to_vec()];
            Arc::new(c)
        });
        Ok(config.clone())
    }

    /// The addresses of `origin`'s host when they are known at `now`: resolved less than [`RESOLVED_FOR`] ago,
    /// or an IP address.
    fn known_addresses(&mut self, origin: &Arc<Origin>, now: Instant) -> Option<Arc<[SocketAddr]>> {
        if let Some(r) = self.resolved.iter().find(|r| r.origin == *origin && now < r.until) {
            return Some(r.addrs.clone());
        }
        let ip = origin.host.parse::<IpAddr>().ok()?;
        let addrs: Arc<[SocketAddr]> = Arc::new([SocketAddr::new(ip, origin.port)]);
        self.remember(origin, addrs.clone(), now);
        Some(addrs)
    }

    /// Keeps the addresses `origin`'s host resolved to at `now`, for the user's next connections (forgetting
    /// those of the origin used longest ago when the user holds more than it keeps connections for).
    #[cold]
    fn remember(&mut self, origin: &Arc<Origin>, addrs: Arc<[SocketAddr]>, now: Instant) {
        self.resolved.retain(|r| r.origin != *origin);
        if self.resolved.len() > PARKED_ORIGINS {
            self.resolved.remove(0);
        }
        let until = now.checked_add(RESOLVED_FOR).unwrap_or(now);
        self.resolved.push(Resolved { origin: origin.clone(), addrs, until });
    }

    /// Notes when the response began (or the exchange ended, when nothing came).
    fn note_first_byte(&mut self, began: Option<Instant>, first_byte: &mut Option<Instant>) {
        let at = began.unwrap_or_else(Instant::now);
        first_byte.get_or_insert(at);
        if let Some(r) = self.record.as_deref_mut() {
            r.first_byte = Some(at);
        }
    }

    /// Makes the connection to `origin`, if the user holds one, the one in use; the one in use before is
    /// parked.
    /// True when it switched.
    fn switch_to(&mut self, origin: &Arc<Origin>) -> bool {
        if self.conn.as_ref().is_none_or(|c| c.origin == *origin) {
            return false;
        }
        let wanted = self.parked.iter().position(|c| c.origin == *origin).map(|i| self.parked.remove(i));
        if let Some(current) = std::mem::replace(&mut self.conn, wanted) {
            if self.parked.len() == PARKED_ORIGINS {
                self.parked.remove(0);
            }
            self.parked.push(current);
        }
        true
    }

    /// What the last exchange recorded, when [`How::record`] asked (empty otherwise): its requests and the
    /// size of its last response's body.
    pub fn recorded(&mut self) -> Recorded {
        let Some(mut r) = self.record.take() else { return Recorded::default() };
        let recorded = Recorded { hops: std::mem::take(&mut r.hops), body_size: r.body_size };
        self.spare = Some(r);
        recorded
    }

    /// A hop of a recorded exchange starts.
    #[cold]
    fn start_hop(&mut self, ex: &Exchange) {
        if let Some(r) = self.record.as_deref_mut() {
            r.start(ex.counters());
        }
    }

    /// The hop under way of a recorded exchange has ended, with the response it got, if any.
    #[cold]
    fn end_hop(&mut self, start: Instant, now: Counters, request: &WireRequest, response: Option<&Response>) {
        if let Some(r) = self.record.as_deref_mut() {
            r.end(start, now, request, response);
        }
    }

    #[cold]
    fn tls_config(&mut self) -> Result<Arc<ClientConfig>, Failure> {
        let resolved = match &self.tls {
            TlsSource::Own { own, .. } => return Ok(own.clone()),
            TlsSource::Unusable(why) => return Err(Failure::new(ErrorKind::Tls, why.clone())),
            TlsSource::Run(run) => TlsSource::Own { own: tls::for_one_user(run), _run: run.clone() },
            TlsSource::Default => match tls::shared_tls_config(&TlsSettings::default()) {
                Ok(run) => TlsSource::Own { own: tls::for_one_user(&run), _run: run },
                Err(e) => TlsSource::Unusable(format!("TLS settings cannot be used: {e}")),
            },
        };
        self.tls = resolved;
        self.tls_config()
    }
}

/// Adds the bytes on the counters to the exchange, once: the counters start again from 0.
fn settle(stats: &WireStats, ex: &mut Exchange) {
    let (read, written) = stats.take();
    ex.bytes += read;
    ex.sent += written;
}

impl Client {
    fn store_cookies(&mut self, target: &Target, headers: &super::Headers) {
        let Some(jar) = self.jar.as_mut() else { return };
        if !headers.sets_cookies() {
            return;
        }
        let Some(url) = target.parsed() else { return };
        for v in headers.map().get_all(SET_COOKIE) {
            if let Ok(s) = v.to_str() {
                let _ = jar.parse(s, &url);
            }
        }
    }

    #[cold]
    fn redirected(&self, req: &WireRequest, status: u16, location: &str) -> Result<WireRequest, Failure> {
        let invalid =
            |e: String| Failure::new(ErrorKind::Redirect, format!("Invalid redirect location `{location}`: {e}"));
        let base = req.target.parsed().ok_or_else(|| invalid("the request URL does not parse".into()))?;
        let url = base.join(location).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Failure::new(ErrorKind::Redirect, format!("Redirect to a non-HTTP URL `{url}` refused")));
        }
        let target = Target::absolute(url.to_string()).map_err(invalid)?;
        let to_get = status == 303 || (matches!(status, 301 | 302) && req.method == http::Method::POST);
        Ok(req.redirect(target, to_get, self.cookie_header_for_redirect()))
    }

    fn cookie_header_for_redirect(&self) -> impl Fn(&Target) -> Option<String> + '_ {
        move |u| self.cookie_header(u)
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// A failure on a connection through `proxy`, saying so (a failure of the proxy itself already does).
#[cold]
fn through(f: Failure, proxy: &Proxy) -> Failure {
    if f.message.starts_with("Proxy ") {
        return f;
    }
    let message = format!("{} (through the proxy {})", f.message, proxy.shown());
    Failure { message, ..f }
}

/// A connection just opened, speaking the version ALPN (or the request, over plain TCP) chose.
enum Opened {
    H1(Conn),
    H2(Box<H2Conn>),
}

/// Opens a connection: TCP (to the proxy when `via` names one, and through its tunnel for https; else to
/// `known` addresses, or to those the host resolves to, returned to be kept), then the TLS handshake when
/// `tls` is given; `stats` count it all. It speaks HTTP/2 when ALPN chose `h2`, or over plain TCP with `h2c`
/// (prior knowledge).
async fn open(
    origin: Arc<Origin>,
    known: Option<Arc<[SocketAddr]>>,
    tls: Option<Arc<ClientConfig>>,
    stats: Arc<WireStats>,
    via: Option<&Proxy>,
    h2c: bool,
) -> Result<(Opened, Option<Arc<[SocketAddr]>>), Failure> {
    let host = origin.host.as_str();
    let tls = match tls {
        Some(config) => {
            let name = tls::server_name(host)
                .ok_or_else(|| Failure::new(ErrorKind::Tls, format!("`{host}` is not a valid TLS server name")))?;
            Some((config, name))
        }
        None => None,
    };
    let (counted, resolved) = match via {
        // Boxed, as the handshakes below: a proxy's tunnel reads its reply into a buffer of its own, which
        // would make every plain connection's future too large for the allocator's cache.
        Some(p) => (Box::pin(proxy::open(p, &origin, stats.clone())).await?, None),
        None => {
            let (addrs, fresh) = match known {
                Some(addrs) => (addrs, false),
                None => (resolve(host, origin.port).await?, true),
            };
            let stream = connect_to(host, &addrs).await?;
            (Counting::new(stream, stats.clone()), fresh.then_some(addrs))
        }
    };
    let stream = match tls {
        None => Stream::Plain(counted),
        Some((config, name)) => {
            // Boxed: the handshake's future holds the TLS connection's state; inline, every plain connection
            // would allocate room for it.
            let tls =
                Box::pin(TlsStream::connect(config, name, counted)).await.map_err(|e| Failure::tls_handshake(&e))?;
            Stream::Tls(Box::new(tls))
        }
    };
    let h2 = match &stream {
        Stream::Tls(t) => t.alpn_protocol() == Some(b"h2"),
        Stream::Plain(_) => h2c,
    };
    if h2 {
        let c = Box::pin(H2Conn::handshake(origin, stream, stats)).await?;
        return Ok((Opened::H2(Box::new(c)), resolved));
    }
    Ok((Opened::H1(Conn::new(origin, stream, stats)), resolved))
}

/// The addresses `host` resolves to.
async fn resolve(host: &str, port: u16) -> Result<Arc<[SocketAddr]>, Failure> {
    match Box::pin(tokio::net::lookup_host((host, port))).await {
        Ok(a) => Ok(a.collect()),
        Err(e) => Err(Failure::new(ErrorKind::UnknownHost, format!("Unknown host {host}: {e}"))),
    }
}

/// A TCP connection to `host:port`, to the first of its addresses that takes it.
pub(super) async fn connect_tcp(host: &str, port: u16) -> Result<TcpStream, Failure> {
    let addrs = resolve(host, port).await?;
    connect_to(host, &addrs).await
}

/// A TCP connection to the first of `addrs` that takes it.
async fn connect_to(host: &str, addrs: &[SocketAddr]) -> Result<TcpStream, Failure> {
    let mut last = None;
    let mut stream = None;
    for &addr in addrs.iter() {
        match connect_one(addr).await {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let stream = match (stream, last) {
        (Some(s), _) => s,
        (None, Some(e)) => return Err(Failure::connect(&e)),
        (None, None) => return Err(Failure::new(ErrorKind::UnknownHost, format!("No address for {host}"))),
    };
    Ok(stream)
}

/// A TCP connection to `addr`, with Nagle's algorithm off. What `TcpStream::connect` does, less a system call
/// on every connection: the socket's pending error is asked for only when the readiness that ended the
/// connect says there is one (a refused connection), not after every connect.
async fn connect_one(addr: SocketAddr) -> io::Result<TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM.nonblocking(), None)?;
    let _ = socket.set_tcp_nodelay(true);
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let stream = TcpStream::from_std(socket.into())?;
    std::future::poll_fn(|cx| stream.poll_write_ready(cx)).await?;
    // A failed connect is also an error readiness (EPOLLERR): only then is the socket asked which error.
    if stream.try_io(Interest::ERROR, || Ok(())).is_ok() {
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(host: &str) -> Arc<Origin> {
        Arc::new(Origin { https: false, host: host.into(), port: 80 })
    }

    #[test]
    fn addresses_are_kept_for_a_while_per_origin() {
        let mut client = Client::new(false, 0);
        let now = Instant::now();
        let (named, ip) = (origin("example.test"), origin("127.0.0.1"));
        assert!(client.known_addresses(&named, now).is_none(), "a name is resolved the first time");
        let addrs: Arc<[SocketAddr]> = Arc::new(["10.0.0.1:80".parse().unwrap()]);
        client.remember(&named, addrs.clone(), now);
        assert_eq!(client.known_addresses(&named, now + Duration::from_secs(1)), Some(addrs));
        assert!(client.known_addresses(&named, now + RESOLVED_FOR).is_none(), "and again once it is old");
        let literal = client.known_addresses(&ip, now).expect("an IP address needs no resolver");
        assert_eq!(&*literal, &["127.0.0.1:80".parse::<SocketAddr>().unwrap()]);
        for i in 0..10 {
            client.remember(&origin(&format!("h{i}.test")), literal.clone(), now);
        }
        assert_eq!(client.resolved.len(), PARKED_ORIGINS + 1, "as many as the user keeps connections to");
    }
}
