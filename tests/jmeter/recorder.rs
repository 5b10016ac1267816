//! A loopback HTTP/1.1 server on two ports (two "hosts") that records every request as it came on the wire
//! (header names in their case and order, the body's bytes, the connection it came on) and answers each
//! with bytes the test chooses, written in one write: a reason phrase of its own, no Content-Type, anything
//! a framework's server would normalise.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// Requests answered over the recorder's life; beyond them a connection is closed unanswered, so a client
/// that loops cannot run away.
pub const MAX_REQUESTS: usize = 200;

/// The longest request head read; a longer one closes the connection.
const MAX_HEAD: usize = 64 * 1024;

/// What the server answers to `method` `path` (the target without its query): the whole response.
pub type Answer = fn(method: &str, path: &str) -> Vec<u8>;

/// One request as it came.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The port it came to.
    pub port: u16,
    /// Its connection, numbered from 1 in accept order over both ports.
    pub conn: u64,
    /// The method.
    pub method: String,
    /// Path and query, as in the request line.
    pub target: String,
    /// Headers as sent: names in their case, in their order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// Bytes on the wire: head (request line, headers, blank line) and body.
    pub wire_len: u64,
}

impl Hit {
    /// The first value of a header, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

struct Shared {
    hits: Mutex<Vec<Hit>>,
    answered: AtomicUsize,
    connections: AtomicU64,
    answer: Answer,
}

/// The server; stopped when dropped.
pub struct Recorder {
    rt: Option<Runtime>,
    /// Its two ports, both on 127.0.0.1.
    pub ports: [u16; 2],
    shared: Arc<Shared>,
}

impl Recorder {
    /// Listens on two free loopback ports.
    pub fn start(answer: Answer) -> Recorder {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let shared = Arc::new(Shared {
            hits: Mutex::new(Vec::new()),
            answered: AtomicUsize::new(0),
            connections: AtomicU64::new(0),
            answer,
        });
        let mut ports = [0; 2];
        for port in &mut ports {
            let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind a recorder port");
            *port = listener.local_addr().unwrap().port();
            let shared = shared.clone();
            rt.spawn(async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else { continue };
                    let conn = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
                    tokio::spawn(serve(stream, conn, shared.clone()));
                }
            });
        }
        Recorder { rt: Some(rt), ports, shared }
    }

    /// Every request recorded since the last call, in arrival order.
    pub fn take(&self) -> Vec<Hit> {
        std::mem::take(&mut *self.shared.hits.lock().unwrap())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn serve(mut stream: TcpStream, conn: u64, shared: Arc<Shared>) {
    let port = stream.local_addr().map(|a: SocketAddr| a.port()).unwrap_or(0);
    let mut buf = Vec::new();
    while let Some(hit) = read_request(&mut stream, &mut buf, port, conn).await {
        if shared.answered.fetch_add(1, Ordering::SeqCst) >= MAX_REQUESTS {
            return;
        }
        let path = hit.target.split('?').next().unwrap_or("").to_string();
        let response = (shared.answer)(&hit.method, &path);
        shared.hits.lock().unwrap().push(hit);
        if stream.write_all(&response).await.is_err() {
            return;
        }
    }
}

/// Reads one request (its body by Content-Length); `buf` keeps what came after it. None when the client
/// closed, or sent what this server does not read.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>, port: u16, conn: u64) -> Option<Hit> {
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).ok()?.to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, target) = (request_line.next()?.to_string(), request_line.next()?.to_string());
    let headers: Vec<(String, String)> =
        lines.map(|l| l.split_once(':').map(|(n, v)| (n.to_string(), v.trim().to_string()))).collect::<Option<_>>()?;
    if headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding")) {
        return None;
    }
    let body_len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(Some(0), |(_, v)| v.parse().ok())?;
    let total = head_end + 4 + body_len;
    while buf.len() < total {
        let n = stream.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end + 4..total].to_vec();
    buf.drain(..total);
    Some(Hit { port, conn, method, target, headers, body, wire_len: total as u64 })
}

/// A whole response: status line with `reason` as given, `Content-Type` when there is one, Content-Length.
pub fn response(status: u16, reason: &str, content_type: Option<&str>, extra: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 {status} {reason}\r\n");
    if let Some(ct) = content_type {
        r.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    for (n, v) in extra {
        r.push_str(&format!("{n}: {v}\r\n"));
    }
    r.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    r.into_bytes()
}
