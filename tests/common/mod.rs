//! What the integration tests share: an in-process HTTP server that records every request it receives, raw
//! TCP servers that misbehave, a refused port, temporary directories, running the binary, reading the JTL.
//!
//! Every server listens on 127.0.0.1 port 0 and lives on a tokio runtime of its own (its worker threads run in
//! the background), so a test's main thread can run the `planrun` binary synchronously.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::ffi::OsStr;
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// The JTL header JMeter 5 writes, verbatim.
pub const JTL_HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,\
failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect";

/// The longest any single invocation of the binary may take before the test kills it and fails. A guard
/// against hangs only: no test asserts how fast anything is. Generous, as the scale tests' runs take tens of
/// seconds on a loaded 2-core machine.
const CHILD_GUARD: Duration = Duration::from_secs(180);

// ---------------------------------------------------------------------------------------------------------
// The recording HTTP server
// ---------------------------------------------------------------------------------------------------------

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Which connection it came on (numbered from 1 in accept order).
    pub conn: u64,
    /// The method.
    pub method: String,
    /// Path and query, as in the request line.
    pub target: String,
    /// Headers in the order received (names lowercase, as hyper gives them).
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every value of a header.
    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// The query parameters, decoded.
    pub fn query(&self) -> HashMap<String, String> {
        let q = self.target.split_once('?').map(|(_, q)| q).unwrap_or("");
        url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
    }

    /// The length of the request as it was on the wire: request line, headers, blank line, body
    /// (`Name: value\r\n` per header; the case of a name does not change its length).
    pub fn raw_len(&self) -> u64 {
        let line = self.method.len() + 1 + self.target.len() + 1 + "HTTP/1.1\r\n".len();
        let headers: usize = self.headers.iter().map(|(n, v)| n.len() + 2 + v.len() + 2).sum();
        (line + headers + 2 + self.body.len()) as u64
    }
}

#[derive(Default)]
struct State {
    requests: Mutex<Vec<Recorded>>,
    connections: AtomicU64,
    read: AtomicU64,
    written: AtomicU64,
}

/// A hyper HTTP/1 server that records every request and answers by path:
/// `/ok` 200 "ok"; `/status/NNN` that status; `/accepted` 202 "0: Accepted for delivery"; `/delay/MS` 200 "ok"
/// after MS ms; `/set-cookie` 200 with `Set-Cookie: session=abc123; Path=/`; `/echo-cookie` 200 with the Cookie
/// header as the body; `/redirect` 302 to /ok; `/redirect-to/PATH` 302 to /PATH; `/redirect-loop` 302 to
/// itself; `/chunked/N` a chunked body of N bytes; `/close` 200 with `Connection: close`; anything else 404.
pub struct Server {
    rt: Option<Runtime>,
    addr: SocketAddr,
    state: Arc<State>,
}

impl Server {
    /// Starts the server on 127.0.0.1, a free port.
    pub fn start() -> Server {
        let rt = runtime();
        let state = Arc::new(State::default());
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind the test server");
        let addr = listener.local_addr().expect("the test server's address");
        let st = state.clone();
        rt.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let conn = st.connections.fetch_add(1, Ordering::SeqCst) + 1;
                let st = st.clone();
                tokio::spawn(async move {
                    let io = TokioIo::new(Counted { inner: stream, state: st.clone() });
                    let service = service_fn(move |req| handle(req, conn, st.clone()));
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        Server { rt: Some(rt), addr, state }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// How many requests were received.
    pub fn count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Bytes read from all connections.
    pub fn bytes_read(&self) -> u64 {
        self.state.read.load(Ordering::SeqCst)
    }

    /// Bytes written to all connections.
    pub fn bytes_written(&self) -> u64 {
        self.state.written.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a tokio runtime")
}

type Body = BoxBody<Bytes, Infallible>;

fn full(text: impl Into<Bytes>) -> Body {
    Full::new(text.into()).boxed()
}

fn respond(status: u16, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::from_u16(status).expect("a valid status");
    r
}

/// A 302 to `location`.
fn found(location: &str) -> Response<Body> {
    let mut r = respond(302, full(""));
    r.headers_mut().insert("location", location.parse().expect("a valid Location"));
    r
}

async fn handle(req: Request<Incoming>, conn: u64, state: Arc<State>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    let target = parts.uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
    let headers = parts
        .headers
        .iter()
        .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let rec = Recorded { conn, method: parts.method.to_string(), target, headers, body };
    let cookie = rec.header("cookie").unwrap_or("").to_string();
    state.requests.lock().unwrap().push(rec);

    let path = parts.uri.path();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let resp = match segments.as_slice() {
        ["ok"] => respond(200, full("ok")),
        ["accepted"] => respond(202, full("0: Accepted for delivery")),
        ["status", code] => match code.parse::<u16>() {
            Ok(c) if (100..600).contains(&c) => respond(c, full(format!("status {c}"))),
            _ => respond(400, full("bad status")),
        },
        ["delay", ms] => {
            let ms: u64 = ms.parse().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            respond(200, full("ok"))
        }
        ["set-cookie"] => {
            let mut r = respond(200, full("cookie set"));
            r.headers_mut().insert("set-cookie", "session=abc123; Path=/".parse().unwrap());
            r
        }
        ["echo-cookie"] => respond(200, full(cookie)),
        ["redirect"] => found("/ok"),
        ["redirect-to", rest @ ..] => found(&format!("/{}", rest.join("/"))),
        ["redirect-loop"] => found("/redirect-loop"),
        ["chunked", n] => {
            let n: usize = n.parse().unwrap_or(0);
            let data: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let chunks = data.chunks(1000).map(Bytes::copy_from_slice).collect();
            respond(200, Chunks(chunks).boxed())
        }
        ["close"] => {
            let mut r = respond(200, full("closing"));
            r.headers_mut().insert("connection", "close".parse().unwrap());
            r
        }
        _ => respond(404, full("not found")),
    };
    Ok(resp)
}

/// A body of unknown length, so hyper sends it with `Transfer-Encoding: chunked`.
struct Chunks(VecDeque<Bytes>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
    }
}

/// The server's side of a connection, counting the bytes that cross it.
struct Counted {
    inner: TcpStream,
    state: Arc<State>,
}

impl AsyncRead for Counted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        self.state.read.fetch_add(n, Ordering::SeqCst);
        res
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &res {
            self.state.written.fetch_add(*n as u64, Ordering::SeqCst);
        }
        res
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

// ---------------------------------------------------------------------------------------------------------
// Misbehaving targets
// ---------------------------------------------------------------------------------------------------------

/// What a raw TCP target does once it has read a request head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Drops the connection with SO_LINGER 0: the client gets a RST.
    Reset,
    /// Closes the connection (FIN) without answering.
    Close,
    /// Answers `HELLO\r\n\r\n`, which is not HTTP, and closes.
    Garbage,
    /// Never answers; keeps the connection open until the client goes away.
    Stall,
    /// Answers the first request of a connection with a keep-alive `200 ok`, then reads the second and closes
    /// (FIN) without answering it: a server that drops a request in flight.
    AnswerOnceThenClose,
}

/// A raw TCP listener that misbehaves in one way; counts the request heads it read.
pub struct FaultServer {
    rt: Option<Runtime>,
    addr: SocketAddr,
    counts: Arc<FaultCounts>,
}

#[derive(Default)]
struct FaultCounts {
    heads: AtomicU64,
    read: AtomicU64,
    written: AtomicU64,
}

impl FaultServer {
    /// Starts a listener on 127.0.0.1, a free port.
    pub fn start(fault: Fault) -> FaultServer {
        let rt = runtime();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind the fault server");
        let addr = listener.local_addr().expect("the fault server's address");
        let counts = Arc::new(FaultCounts::default());
        let c = counts.clone();
        rt.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { continue };
                let c = c.clone();
                tokio::spawn(async move {
                    let Some(n) = read_request(&mut stream).await else { return };
                    c.read.fetch_add(n, Ordering::SeqCst);
                    c.heads.fetch_add(1, Ordering::SeqCst);
                    if fault == Fault::AnswerOnceThenClose {
                        if stream.write_all(OK_RESPONSE).await.is_err() {
                            return;
                        }
                        c.written.fetch_add(OK_RESPONSE.len() as u64, Ordering::SeqCst);
                        let Some(n) = read_request(&mut stream).await else { return };
                        c.read.fetch_add(n, Ordering::SeqCst);
                        c.heads.fetch_add(1, Ordering::SeqCst);
                    }
                    match fault {
                        Fault::Reset => {
                            let _ = stream.set_zero_linger();
                            drop(stream);
                        }
                        Fault::Close | Fault::AnswerOnceThenClose => drop(stream),
                        Fault::Garbage => {
                            if stream.write_all(GARBAGE).await.is_ok() {
                                c.written.fetch_add(GARBAGE.len() as u64, Ordering::SeqCst);
                            }
                            let _ = stream.shutdown().await;
                        }
                        Fault::Stall => {
                            let mut buf = [0u8; 1024];
                            while let Ok(n @ 1..) = stream.read(&mut buf).await {
                                c.read.fetch_add(n as u64, Ordering::SeqCst);
                            }
                        }
                    }
                });
            }
        });
        FaultServer { rt: Some(rt), addr, counts }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests read so far.
    pub fn heads(&self) -> u64 {
        self.counts.heads.load(Ordering::SeqCst)
    }

    /// Bytes read from all connections.
    pub fn bytes_read(&self) -> u64 {
        self.counts.read.load(Ordering::SeqCst)
    }

    /// Bytes written to all connections.
    pub fn bytes_written(&self) -> u64 {
        self.counts.written.load(Ordering::SeqCst)
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// A raw HTTP/1.1 server that answers every request it reads with the same bytes, and closes a connection 2 ms
/// after its `close_after`-th response (`u64::MAX`: never), no header having said so: a proxy at its
/// keep-alive limit. It counts the requests it read.
pub struct RawServer {
    _rt: Runtime,
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
}

impl RawServer {
    pub fn start(response: &'static [u8], close_after: u64) -> RawServer {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let counted = requests.clone();
        rt.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { continue };
                let counted = counted.clone();
                tokio::spawn(async move {
                    let mut answered = 0;
                    while answered < close_after {
                        if read_request(&mut stream).await.is_none() {
                            return;
                        }
                        counted.fetch_add(1, Ordering::SeqCst);
                        if stream.write_all(response).await.is_err() {
                            return;
                        }
                        answered += 1;
                    }
                    // Closed a moment after the response: the client's next request is then usually already
                    // here, unread, so the close is a reset (RST), not a FIN.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                });
            }
        });
        RawServer { _rt: rt, addr, requests }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many requests it read.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

/// What [`Fault::AnswerOnceThenClose`] answers first.
pub const OK_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// What [`Fault::Garbage`] answers.
pub const GARBAGE: &[u8] = b"HELLO\r\n\r\n";

/// Reads one request (head and Content-Length body); its length in bytes, or None when the client went away.
pub async fn read_request(stream: &mut TcpStream) -> Option<u64> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let mut want = None;
    loop {
        if want.is_none() {
            if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                let body: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                want = Some(end + 4 + body);
            }
        }
        if want.is_some_and(|w| seen.len() >= w) {
            return Some(seen.len() as u64);
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// A loopback URL nobody listens on: a port bound by a socket that never listens, kept for the whole test
/// process. (A port bound and released could be taken at once by another test's server running alongside,
/// which then answered the requests meant to be refused.)
pub fn refused_url() -> String {
    static HELD: std::sync::OnceLock<tokio::net::TcpSocket> = std::sync::OnceLock::new();
    let socket = HELD.get_or_init(|| {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind a port that is never listened on");
        socket
    });
    format!("http://127.0.0.1:{}", socket.local_addr().unwrap().port())
}

// ---------------------------------------------------------------------------------------------------------
// Files and the binary
// ---------------------------------------------------------------------------------------------------------

/// A fresh directory under the system's temp dir, named after the test and the process; removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates (or empties) `<tmp>/planrun-<name>-<pid>-<n>`, `n` counting the directories this process made
    /// (all the tests share one process, and two may pick the same name).
    pub fn new(name: &str) -> TempDir {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("planrun-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test's temp dir");
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes a file inside it and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, contents).expect("write a test file");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary with `args`, in `dir`, and returns what it did. Fails the test if it hangs.
pub fn planrun<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planrun"));
    // planrun reads proxies from the environment: a developer's HTTP_PROXY would take the tests' loopback
    // traffic elsewhere (tests/proxies.rs sets them itself).
    for var in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
        cmd.env_remove(var);
    }
    run_guarded(cmd.args(args).current_dir(dir), CHILD_GUARD, "planrun", |_| {})
}

/// Runs `cmd` to the end with stdin empty, stdout and stderr captured, calling `poll` with its PID every few
/// ms while it runs; fails the test if `what` runs longer than `guard` (a guard against hangs only).
pub fn run_guarded(cmd: &mut Command, guard: Duration, what: &str, mut poll: impl FnMut(u32)) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = pipe.read_to_end(&mut v);
            v
        })
    };
    let out_reader = drain(Box::new(child.stdout.take().unwrap()));
    let err_reader = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        poll(child.id());
        if let Some(s) = child.try_wait().unwrap_or_else(|e| panic!("wait for {what}: {e}")) {
            break s;
        }
        if started.elapsed() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {guard:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output { status, stdout: out_reader.join().unwrap(), stderr: err_reader.join().unwrap() }
}

/// Runs planrun with `args` in `dir` to the end, polling its peak resident memory (VmHWM); returns the
/// output and that peak, KiB. The guard is against a hang only: a debug build takes a while on a busy
/// 2-core machine.
pub fn run_measured(dir: &Path, args: &[&OsStr]) -> (Output, u64) {
    let mut peak_kb = 0;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planrun"));
    let out = run_guarded(cmd.args(args).current_dir(dir), Duration::from_secs(1200), "planrun", |pid| {
        if let Some(kb) = vm_hwm_kb(pid) {
            peak_kb = peak_kb.max(kb);
        }
    });
    (out, peak_kb)
}

/// VmHWM (peak resident set) of a running process, in KiB.
pub fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `planrun run PLAN -o DIR/out.jtl [extra...]`, expecting exit 0; returns the output and the JTL.
pub fn run_ok(dir: &TempDir, plan: &Path, extra: &[&str]) -> (Output, Jtl) {
    let jtl = dir.join("out.jtl");
    let mut args: Vec<&OsStr> = vec![OsStr::new("run"), plan.as_os_str(), OsStr::new("-o"), jtl.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    let out = planrun(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "planrun failed:\n{}", describe(&out));
    (out, read_jtl(&jtl))
}

/// The exit status, stdout and stderr, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

// ---------------------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------------------

/// A JTL file read back with the csv crate, rows by header name.
#[derive(Debug)]
pub struct Jtl {
    /// The file's text.
    pub text: String,
    /// The header's fields.
    pub header: Vec<String>,
    /// The rows, each a map from column name to value.
    pub rows: Vec<HashMap<String, String>>,
}

impl Jtl {
    /// Rows with this label.
    pub fn labelled(&self, label: &str) -> Vec<&HashMap<String, String>> {
        self.rows.iter().filter(|r| r["label"] == label).collect()
    }

    /// The one row with this label.
    pub fn one(&self, label: &str) -> &HashMap<String, String> {
        let rows = self.labelled(label);
        assert_eq!(rows.len(), 1, "expected exactly one row labelled {label:?}:\n{}", self.text);
        rows[0]
    }
}

/// Reads a JTL file; every record must have as many fields as the header.
pub fn read_jtl(path: &Path) -> Jtl {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().expect("a JTL header").iter().map(str::to_string).collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("unreadable JTL record: {e}\n{text}"));
            header.iter().cloned().zip(r.iter().map(str::to_string)).collect()
        })
        .collect();
    Jtl { text, header, rows }
}

/// A field as a number.
pub fn num(row: &HashMap<String, String>, column: &str) -> u64 {
    row[column].parse().unwrap_or_else(|_| panic!("{column} is not a number in {row:?}"))
}

/// The TOTAL line of the summary table on stdout: (samples, error percent text like `100.00%`).
pub fn summary_total(stdout: &str) -> (u64, String) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("TOTAL"))
        .unwrap_or_else(|| panic!("no TOTAL line in the summary:\n{stdout}"));
    let header = stdout.lines().find(|l| l.starts_with("Label")).expect("a summary header line");
    assert_eq!(header.split_whitespace().nth(1), Some("Samples"), "unexpected summary header: {header}");
    let cells: Vec<&str> = line.split_whitespace().collect();
    // The only cell ending in `%` is the error rate.
    let err = cells.iter().find(|c| c.ends_with('%')).map(|c| c.to_string()).expect("an error % cell");
    (cells[1].parse().unwrap_or_else(|_| panic!("TOTAL samples in: {line}")), err)
}

/// Parses CSV strictly by RFC 4180 (records end with `\n` here): a field is either raw, without `,` `"` CR LF,
/// or wrapped in `"` with inner `"` doubled. Returns every record's fields with whether each was quoted.
pub fn rfc4180(text: &str) -> Vec<Vec<(String, bool)>> {
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    while chars.peek().is_some() {
        let mut record = Vec::new();
        loop {
            let mut field = String::new();
            let quoted = chars.peek() == Some(&'"');
            if quoted {
                chars.next();
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => field.push(c),
                        None => panic!("unterminated quoted field in record {}", records.len() + 1),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' || c == '\n' {
                        break;
                    }
                    assert!(c != '"' && c != '\r', "a raw field holds {c:?} in record {}", records.len() + 1);
                    field.push(c);
                    chars.next();
                }
            }
            record.push((field, quoted));
            match chars.next() {
                Some(',') => continue,
                Some('\n') => break,
                None => panic!("record {} does not end with \\n", records.len() + 1),
                Some(c) => panic!("{c:?} after a quoted field in record {}", records.len() + 1),
            }
        }
        records.push(record);
    }
    records
}

/// Headless Chromium's path: `PLANRUN_CHROMIUM`, else the first of Debian's and others' names on PATH.
pub fn chromium() -> Option<String> {
    if let Ok(path) = std::env::var("PLANRUN_CHROMIUM") {
        return Some(path);
    }
    ["chromium", "chromium-browser", "google-chrome"].into_iter().find_map(|name| {
        let found = Command::new("which").arg(name).stdout(Stdio::piped()).output().ok()?;
        found.status.success().then(|| String::from_utf8_lossy(&found.stdout).trim().to_string())
    })
}

/// A server that sends responses nobody asked for.
pub mod late;
pub mod read_response;

// ---------------------------------------------------------------------------------------------------------
// Optional tools
// ---------------------------------------------------------------------------------------------------------

/// Says, in the same words for every optional tool (Chromium, JMeter, Slurm, InfluxDB, Prometheus,
/// kubernetes-validate), that the running test skips what needs `tool`, because `why`; or fails the test when
/// the environment variable `require` is `1` (as .ci/run sets it). Written past the harness's capture, so a
/// skip is seen even when the test passes.
pub fn skip(tool: &str, require: &str, why: &str) {
    if std::env::var(require).as_deref() == Ok("1") {
        panic!("{require}=1, but {tool} cannot run here: {why}");
    }
    let thread = std::thread::current();
    let test = thread.name().filter(|n| *n != "main").unwrap_or("a test");
    use std::io::Write;
    let _ =
        writeln!(std::io::stderr(), "SKIPPED {test}: {tool} cannot run here: {why} (set {require}=1 to fail instead)");
}

pub mod import_corpus;
mod load_run;
pub use load_run::{json_lines, read_json, LoadRun, Ran};
pub mod h2_raw;
pub mod h2_server;
