//! planrun's HTTP/1.1 engine against hyper's `client::conn` (the engine planrun used before, configured as it
//! was), on thousands of generated response byte streams: valid, malformed, truncated, and split into reads
//! at random. Both read the same bytes (hyper through an in-memory stream, planrun through
//! `decode::read_response`, its own head loop and body decoder without the socket); their outcomes (status,
//! body length, error kind, whether the connection may be reused) must be equal, or differ in one of the ways
//! docs/faults.md lists ("The engine against hyper's"), each named here with its reason.

use crate::common;

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use common::read_response::{read_response, Outcome};
use http::Method;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use planrun::sample::ErrorKind;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A stream that, once the request is written, yields given reads, then ends (or, with `hang`, never says
/// anything more).
struct Script {
    reads: Vec<Vec<u8>>,
    at: usize,
    offset: usize,
    hang: bool,
    written: bool,
    reader: Option<Waker>,
}

impl AsyncRead for Script {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if !self.written {
            self.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        while self.at < self.reads.len() && self.offset == self.reads[self.at].len() {
            self.at += 1;
            self.offset = 0;
        }
        if self.at == self.reads.len() {
            return if self.hang { Poll::Pending } else { Poll::Ready(Ok(())) };
        }
        let (at, offset) = (self.at, self.offset);
        let n = buf.remaining().min(self.reads[at].len() - offset);
        buf.put_slice(&self.reads[at][offset..offset + n]);
        self.offset += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Script {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.written = true;
        if let Some(w) = self.reader.take() {
            w.wake();
        }
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// What one engine made of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    status: Option<u16>,
    body: Option<u64>,
    kind: Option<ErrorKind>,
    reusable: bool,
}

impl From<&Outcome> for Seen {
    fn from(o: &Outcome) -> Self {
        Seen {
            status: o.status,
            body: o.failure.is_none().then_some(o.body),
            kind: o.failure.as_ref().map(|f| f.kind),
            reusable: o.reusable,
        }
    }
}

/// hyper's error as the engine before mapped it: a parse error an invalid response, anything else (a body
/// that ends early, a chunk that does not decode) a reset.
fn hyper_kind(e: &hyper::Error) -> ErrorKind {
    if e.is_parse() || e.is_parse_status() || e.is_parse_too_large() {
        ErrorKind::InvalidResponse
    } else {
        ErrorKind::ConnectionReset
    }
}

/// Reads one response with hyper, configured as planrun configured it; `hang` keeps the stream open after
/// the bytes (to see whether hyper would reuse the connection) instead of ending it.
async fn hyper_reads(method: &Method, reads: &[Vec<u8>], hang: bool) -> Seen {
    let io = TokioIo::new(Script { reads: reads.to_vec(), at: 0, offset: 0, hang, written: false, reader: None });
    let mut seen = Seen { status: None, body: None, kind: None, reusable: false };
    let Ok((mut sender, conn)) = http1::Builder::new()
        .title_case_headers(true)
        .writev(false)
        .read_buf_exact_size(Some(1024))
        .handshake(io)
        .await
    else {
        unreachable!("the handshake of an in-memory stream does not fail")
    };
    let conn = tokio::spawn(conn);
    let req = http::Request::builder().method(method.clone()).uri("/").header("host", "x").body(Empty::<Bytes>::new());
    let Ok(req) = req else { unreachable!("a valid request") };
    let work = async {
        let resp = sender.send_request(req).await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                seen.kind = Some(hyper_kind(&e));
                return;
            }
        };
        seen.status = Some(resp.status().as_u16());
        let mut body = resp.into_body();
        let mut size = 0u64;
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(f) => size += f.data_ref().map_or(0, |d| d.len() as u64),
                Err(e) => {
                    seen.kind = Some(hyper_kind(&e));
                    return;
                }
            }
        }
        seen.body = Some(size);
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
        seen.reusable = sender.is_ready() && !conn.is_finished();
    };
    // Time is paused: with nothing left to read, the timeout fires at once.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), work).await;
    seen
}

/// A generated response: a stream of bytes and the method it answers.
fn generate(rng: &mut ChaCha8Rng) -> (Method, Vec<u8>) {
    let method = if rng.random_ratio(1, 10) { Method::HEAD } else { Method::GET };
    let mut out = Vec::new();
    if rng.random_ratio(1, 10) {
        out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let version = if rng.random_ratio(1, 6) { "HTTP/1.0" } else { "HTTP/1.1" };
    let status = *pick(rng, &[200, 200, 200, 201, 204, 304, 404, 503, 302]);
    out.extend_from_slice(format!("{version} {status} Reason\r\n").as_bytes());
    let body: Vec<u8> = (0..rng.random_range(0..300)).map(|_| rng.random_range(b'a'..=b'z')).collect();
    let framing = rng.random_range(0..10);
    let mut headers: Vec<String> = Vec::new();
    for i in 0..rng.random_range(0..4) {
        headers.push(format!("X-Extra-{i}: {}", "v".repeat(rng.random_range(0..40))));
    }
    if rng.random_ratio(1, 5) {
        headers.push(format!("Connection: {}", pick(rng, &["close", "keep-alive", "Keep-Alive, close", "upgrade"])));
    }
    let encoded = match framing {
        0..=3 => {
            headers.push(format!("Content-Length: {}", body.len()));
            body.clone()
        }
        4..=6 => {
            headers
                .push(format!("Transfer-Encoding: {}", pick(rng, &["chunked", "chunked", "gzip, chunked", "Chunked"])));
            chunked(rng, &body)
        }
        7 => {
            headers.push(format!("Transfer-Encoding: {}", pick(rng, &["gzip", "chunked, gzip", "identity"])));
            body.clone()
        }
        8 => {
            // Odd lengths: conflicting, listed, signed, spaced.
            let n = body.len();
            let v = pick(
                rng,
                &[format!("{n}, {n}"), format!("{n}, {}", n + 1), format!("+{n}"), format!(" {n} "), "x".into()],
            )
            .clone();
            headers.push(format!("Content-Length: {v}"));
            if rng.random_bool(0.5) {
                headers.push("Transfer-Encoding: chunked".to_string());
                chunked(rng, &body)
            } else {
                body.clone()
            }
        }
        _ => body.clone(),
    };
    for h in headers {
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&encoded);
    mutate(rng, &mut out);
    (method, out)
}

fn chunked(rng: &mut ChaCha8Rng, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let n = rng.random_range(1..=rest.len().min(100));
        let (now, later) = rest.split_at(n);
        let ext = if rng.random_ratio(1, 8) { ";ext=1" } else { "" };
        out.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
        out.extend_from_slice(now);
        out.extend_from_slice(b"\r\n");
        rest = later;
    }
    out.extend_from_slice(b"0\r\n");
    if rng.random_ratio(1, 6) {
        out.extend_from_slice(b"X-Trailer: yes\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Sometimes breaks the stream: cut short, a byte changed, inserted or removed, bytes appended.
fn mutate(rng: &mut ChaCha8Rng, out: &mut Vec<u8>) {
    if out.is_empty() {
        return;
    }
    match rng.random_range(0..10) {
        0 => out.truncate(rng.random_range(0..out.len())),
        1 => {
            let i = rng.random_range(0..out.len());
            out[i] = *pick(rng, &[b'\r', b'\n', b' ', b':', b'0', b'z', 0, 0xff]);
        }
        2 => {
            let i = rng.random_range(0..=out.len());
            out.insert(i, *pick(rng, b"\r\n :0z\t"));
        }
        3 => {
            let i = rng.random_range(0..out.len());
            out.remove(i);
        }
        4 => out.extend_from_slice(b"HTTP/1.1 200 OK\r\n"),
        _ => {}
    }
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, from: &'a [T]) -> &'a T {
    &from[rng.random_range(0..from.len())]
}

/// Random reads of the stream.
fn split(rng: &mut ChaCha8Rng, bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut reads = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = if rng.random_ratio(1, 3) { rest.len() } else { rng.random_range(1..=rest.len()) };
        let (now, later) = rest.split_at(n);
        reads.push(now.to_vec());
        rest = later;
    }
    reads
}

/// Why the two engines may differ on a stream; `None` when the difference is not a listed one.
fn listed_difference(bytes: &[u8], method: &Method, planrun: &Seen, hyper: &Seen) -> Option<&'static str> {
    let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
    // A broken chunk: hyper reported an I/O error (a reset); planrun says the response is invalid.
    if planrun.kind == Some(ErrorKind::InvalidResponse)
        && hyper.kind == Some(ErrorKind::ConnectionReset)
        && planrun.status.is_some()
        && planrun.status == hyper.status
    {
        return Some("a chunk or trailer that does not decode is an invalid response, not a reset");
    }
    // RFC 9112 6.3: Transfer-Encoding with Content-Length may be smuggling: the connection is not reused.
    if text.contains("transfer-encoding") && text.contains("content-length") && hyper.reusable && !planrun.reusable {
        let (mut h, mut p) = (hyper.clone(), planrun.clone());
        h.reusable = false;
        p.reusable = false;
        if h == p {
            return Some("Transfer-Encoding with Content-Length: the connection is closed after the response");
        }
    }
    // A head that turns invalid in a read that does not complete it: hyper parsed again only once a blank line
    // came, so a head that never ends was a close; planrun parses what came and says it is invalid.
    if planrun.kind == Some(ErrorKind::InvalidResponse)
        && hyper.kind == Some(ErrorKind::ConnectionReset)
        && planrun.status.is_none()
        && hyper.status.is_none()
    {
        return Some("a malformed head that never ends is an invalid response, not a close");
    }
    // hyper as planrun configured it read heads through a 1 KiB buffer: a longer one was refused.
    if bytes.len() >= 1024 && hyper.kind == Some(ErrorKind::InvalidResponse) && hyper.status.is_none() {
        return Some("heads of 1 KiB and more are read (up to 64 KiB), where hyper's 1 KiB buffer refused them");
    }
    let _ = method;
    None
}

#[test]
fn planrun_reads_generated_responses_as_hyper_does_or_as_docs_faults_md_says() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build();
    let Ok(rt) = rt else { unreachable!("a runtime") };
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let (mut same, mut listed, mut unlisted) = (0, std::collections::BTreeMap::new(), Vec::new());
    for case in 0..5000 {
        let (method, bytes) = generate(&mut rng);
        let reads = split(&mut rng, &bytes);
        let views: Vec<&[u8]> = reads.iter().map(Vec::as_slice).collect();
        let ours = Seen::from(&read_response(&method, &views));
        let mut theirs = rt.block_on(hyper_reads(&method, &reads, false));
        // hyper sees the end of the stream as the server closing the idle connection: ask again without it.
        if theirs.kind.is_none() {
            theirs.reusable = rt.block_on(hyper_reads(&method, &reads, true)).reusable;
        }
        if ours == theirs {
            same += 1;
        } else if let Some(why) = listed_difference(&bytes, &method, &ours, &theirs) {
            *listed.entry(why).or_insert(0) += 1;
        } else {
            unlisted.push(format!(
                "case {case} {method}: planrun {ours:?}, hyper {theirs:?}\n  {:?}",
                String::from_utf8_lossy(&bytes)
            ));
        }
    }
    eprintln!("same outcome: {same}; listed differences: {listed:#?}; unlisted: {}", unlisted.len());
    assert!(
        unlisted.is_empty(),
        "{} unlisted differences:\n{}",
        unlisted.len(),
        unlisted[..unlisted.len().min(15)].join("\n")
    );
    assert!(same > 4000, "most streams read the same: {same}");
}

/// The head-size row of docs/faults.md's table: hyper, configured as planrun configured it, refused a head of
/// more than its 1 KiB read buffer; the engine reads it.
#[test]
fn a_head_beyond_1_kib_was_refused_by_hyper_and_is_read_now() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build();
    let Ok(rt) = rt else { unreachable!("a runtime") };
    let head = format!("HTTP/1.1 200 OK\r\nSet-Cookie: s={}\r\nContent-Length: 2\r\n\r\nok", "c".repeat(1500));
    let reads = vec![head.clone().into_bytes()];
    let theirs = rt.block_on(hyper_reads(&Method::GET, &reads, false));
    assert_eq!((theirs.status, theirs.kind), (None, Some(ErrorKind::InvalidResponse)), "{theirs:?}");
    let ours = Seen::from(&read_response(&Method::GET, &[head.as_bytes()]));
    assert_eq!((ours.status, ours.body, ours.kind), (Some(200), Some(2), None), "{ours:?}");
}

/// The 101 row of docs/faults.md's table: hyper handed a 101 over as the response; the engine fails it.
#[test]
fn a_101_was_a_response_for_hyper_and_is_refused_now() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build();
    let Ok(rt) = rt else { unreachable!("a runtime") };
    let bytes = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".to_vec();
    let theirs = rt.block_on(hyper_reads(&Method::GET, std::slice::from_ref(&bytes), false));
    assert_eq!(theirs.status, Some(101), "{theirs:?}");
    let ours = Seen::from(&read_response(&Method::GET, &[&bytes]));
    assert_eq!((ours.status, ours.kind), (None, Some(ErrorKind::InvalidResponse)), "{ours:?}");
}
