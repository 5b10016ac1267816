//! RFC 9112 framing cases for planrun's HTTP/1.1 engine (src/run/http/decode.rs), each read whole, at every
//! two-way split of its bytes, and one byte at a time, through the engine's own head loop and body decoder
//! (`read_response`, the engine without the socket). Every split must give the same outcome: status, body
//! length, error kind and message, and whether the connection may carry another request.

use crate::common;

use common::read_response::{read_response, Outcome};
use http::Method;
use planrun::http::limits::{MAX_CHUNK_EXTENSIONS, MAX_HEAD, MAX_TRAILERS};
use planrun::sample::ErrorKind;

/// What a case must come to.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A response: status, body length, reusable.
    Ok(u16, u64, bool),
    /// No usable response: the kind and the start of the message.
    Fail(ErrorKind, &'static str),
}

use Expect::{Fail, Ok as Got};

const CLOSED: &str = "Connection closed before the response was complete";
const INVALID: ErrorKind = ErrorKind::InvalidResponse;
const RESET: ErrorKind = ErrorKind::ConnectionReset;

fn cases() -> Vec<(&'static str, Method, Vec<u8>, Expect)> {
    let get = Method::GET;
    let c = |name, bytes: &str, expect| (name, get.clone(), bytes.as_bytes().to_vec(), expect);
    let mut v = vec![
        // Content-Length (RFC 9112 6.3 rule 5 and 6.2).
        c("length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", Got(200, 5, true)),
        c("length zero", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", Got(200, 0, true)),
        c("length list of equal values", "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello", Got(200, 5, true)),
        c(
            "length twice, equal",
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            Got(200, 5, true),
        ),
        c(
            "length twice, different",
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
            Fail(INVALID, "Invalid HTTP response: invalid content-length parsed"),
        ),
        c(
            "length list, different",
            "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello",
            Fail(INVALID, "Invalid HTTP response: invalid content-length parsed"),
        ),
        c("length with a sign", "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", Fail(INVALID, "Invalid HTTP response: invalid content-length")),
        c("length negative", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid content-length")),
        c("length in hex", "HTTP/1.1 200 OK\r\nContent-Length: 0x5\r\n\r\nhello", Fail(INVALID, "Invalid HTTP response: invalid content-length")),
        c("length with a space inside", "HTTP/1.1 200 OK\r\nContent-Length: 5 5\r\n\r\nhello", Fail(INVALID, "Invalid HTTP response: invalid content-length")),
        c("length empty", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid content-length")),
        c(
            "length beyond u64",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid content-length"),
        ),
        c("body shorter than its length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", Fail(RESET, CLOSED)),
        c("bytes after the body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloXYZ", Got(200, 5, false)),
        // Chunked (7.1).
        c("chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Got(200, 5, true)),
        c(
            "chunked, several, hex in both cases",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\nA\r\n0123456789\r\n1\r\nx\r\n0\r\n\r\n",
            Got(200, 21, true),
        ),
        c(
            "chunked, leading zeros and spaces after the size",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n005  \r\nhello\r\n0\r\n\r\n",
            Got(200, 5, true),
        ),
        c(
            "chunk extensions",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value;q=\"x\"\r\nhello\r\n0;last\r\n\r\n",
            Got(200, 5, true),
        ),
        c(
            "trailers",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\n",
            Got(200, 5, true),
        ),
        c(
            "a trailer that is not a header line",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nnot a header\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid trailer"),
        ),
        c(
            "chunk size missing",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk size line: missing size digit"),
        ),
        c(
            "chunk size not hex",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5g\r\nhello\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk size line: invalid size"),
        ),
        c(
            "chunk size beyond u64",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk size: overflow"),
        ),
        c(
            "a digit after spaces in the size line",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 5\r\nhello\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk size line: invalid linear white space"),
        ),
        c(
            "a bare LF in a chunk extension",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nhello\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk extension contains newline"),
        ),
        c(
            "chunk data longer than its size",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk body CR"),
        ),
        c(
            "size line ended by a bare LF",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: invalid chunk size line: invalid size"),
        ),
        c(
            "chunked, cut inside a chunk",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            Fail(RESET, CLOSED),
        ),
        c(
            "chunked, cut before the last chunk",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            Fail(RESET, CLOSED),
        ),
        c(
            "chunked, cut before the final CRLF",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n",
            Fail(RESET, CLOSED),
        ),
        // Transfer-Encoding with Content-Length (6.3 rule 3): chunked wins, the connection is not reused.
        c(
            "chunked and a length",
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Got(200, 5, false),
        ),
        c(
            "chunked and an invalid length",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Got(200, 5, false),
        ),
        c(
            "gzip, chunked",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Got(200, 5, true),
        ),
        // Transfer-Encoding whose last coding is not chunked (6.3 rule 4): read until the close.
        c("gzip only", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nuntil the close", Got(200, 15, false)),
        c(
            "chunked, then gzip",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Got(200, 15, false),
        ),
        c(
            "Transfer-Encoding in HTTP/1.0",
            "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: unexpected transfer-encoding parsed"),
        ),
        // No length at all (rule 8): until the close.
        c("HTTP/1.0 until the close", "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nsome body", Got(200, 9, false)),
        c("HTTP/1.1 until the close", "HTTP/1.1 200 OK\r\n\r\nsome body", Got(200, 9, false)),
        c(
            "HTTP/1.0 keep-alive with a length",
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
            Got(200, 2, true),
        ),
        c("HTTP/1.0 with a length", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", Got(200, 2, false)),
        // Connection (9.3, 9.6).
        c("Connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", Got(200, 2, false)),
        c(
            "Connection: keep-alive, Close",
            "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok",
            Got(200, 2, false),
        ),
        c(
            "close, then keep-alive on another line",
            "HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
            Got(200, 2, false),
        ),
        // Responses without a body (rule 1).
        c("204 with a length", "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", Got(204, 0, true)),
        c("304 chunked", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", Got(304, 0, true)),
        // Interim responses (15.2 of RFC 9110).
        c("100 then 200", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", Got(200, 2, true)),
        c(
            "103 with headers, 100, then 200",
            "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            Got(200, 0, true),
        ),
        c(
            "101 Switching Protocols",
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            Fail(INVALID, "Invalid HTTP response: 101 Switching Protocols: planrun does not switch protocols"),
        ),
        // Heads that do not parse.
        c("not HTTP", "HELLO\r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid HTTP version parsed")),
        c("HTTP/2 status line", "HTTP/2 200 OK\r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid HTTP version parsed")),
        c("letters in the status", "HTTP/1.1 2OO OK\r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid HTTP status-code parsed")),
        c("two-digit status", "HTTP/1.1 20 OK\r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid HTTP status-code parsed")),
        c("a header without a colon", "HTTP/1.1 200 OK\r\nBroken\r\n\r\n", Fail(INVALID, "Invalid HTTP response: invalid HTTP header parsed")),
        c(
            "a space before the colon",
            "HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nok",
            Fail(INVALID, "Invalid HTTP response: invalid HTTP header parsed"),
        ),
        c(
            "an obsolete folded header",
            "HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 2\r\n\r\nok",
            Fail(INVALID, "Invalid HTTP response: invalid HTTP header parsed"),
        ),
        c("bare LF line endings", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", Got(200, 2, true)),
        c("a reason beyond ASCII", "HTTP/1.1 200 Café\r\nContent-Length: 2\r\n\r\nok", Got(200, 2, true)),
        c("no reason", "HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok", Got(200, 2, true)),
        // Cut short.
        c("nothing", "", Fail(RESET, CLOSED)),
        c("half a head", "HTTP/1.1 200 OK\r\nContent-Len", Fail(RESET, CLOSED)),
    ];
    v.push((
        "HEAD with a length",
        Method::HEAD,
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n".to_vec(),
        Got(200, 0, true),
    ));
    v.push((
        "HEAD chunked",
        Method::HEAD,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
        Got(200, 0, true),
    ));
    v.push((
        "2xx to CONNECT",
        Method::CONNECT,
        b"HTTP/1.1 200 Connection Established\r\n\r\n".to_vec(),
        Fail(INVALID, "Invalid HTTP response: 2xx answer to CONNECT: planrun does not open tunnels"),
    ));
    v.push((
        "407 to CONNECT",
        Method::CONNECT,
        b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n".to_vec(),
        Got(407, 0, true),
    ));
    // Limits: header count, head size, chunk extensions, trailers.
    let many: String = (0..2000).map(|i| format!("X-{i}: v\r\n")).collect();
    let head = format!("HTTP/1.1 200 OK\r\n{many}Content-Length: 2\r\n\r\nok");
    v.push((
        "2,000 header lines (no count limit, as in JMeter and curl)",
        get.clone(),
        head.into_bytes(),
        Got(200, 2, true),
    ));
    let lines: String = "A: b\r\n".repeat(MAX_HEAD / 6 + 1);
    let head = format!("HTTP/1.1 200 OK\r\n{lines}Content-Length: 0\r\n\r\n");
    v.push((
        "short header lines beyond the head's limit",
        get.clone(),
        head.into_bytes(),
        Fail(INVALID, "Invalid HTTP response: message head is too large"),
    ));
    let hundred: String = (0..99).map(|i| format!("X-{i}: v\r\n")).collect();
    let head = format!("HTTP/1.1 200 OK\r\n{hundred}Content-Length: 0\r\n\r\n");
    v.push(("100 header lines", get.clone(), head.into_bytes(), Got(200, 0, true)));
    let big = format!("HTTP/1.1 200 OK\r\nX-Big: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(MAX_HEAD));
    v.push((
        "a head beyond the limit",
        get.clone(),
        big.into_bytes(),
        Fail(INVALID, "Invalid HTTP response: message head is too large"),
    ));
    let large = format!("HTTP/1.1 200 OK\r\nX-Big: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(MAX_HEAD / 2));
    v.push(("a head of 32 KiB", get.clone(), large.into_bytes(), Got(200, 0, true)));
    let ext = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;{}\r\nx\r\n0\r\n\r\n",
        "e".repeat(MAX_CHUNK_EXTENSIONS as usize)
    );
    v.push((
        "chunk extensions beyond the limit",
        get.clone(),
        ext.into_bytes(),
        Fail(INVALID, "Invalid HTTP response: chunk extensions over limit"),
    ));
    let trailers =
        format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: {}\r\n\r\n", "t".repeat(MAX_TRAILERS));
    v.push((
        "trailers beyond the limit",
        get.clone(),
        trailers.into_bytes(),
        Fail(INVALID, "Invalid HTTP response: chunk trailers bytes over limit"),
    ));
    let lines: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
    let trailers = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n{lines}\r\n");
    v.push((
        "101 trailer lines",
        get,
        trailers.into_bytes(),
        Fail(INVALID, "Invalid HTTP response: chunk trailers count overflow"),
    ));
    v
}

/// The parts of an outcome a case states.
fn check(name: &str, split: &str, out: &Outcome, expect: Expect) {
    match expect {
        Got(status, body, reusable) => {
            assert!(out.failure.is_none(), "{name} ({split}): failed: {out:?}");
            assert_eq!(
                (out.status, out.body, out.reusable),
                (Some(status), body, reusable),
                "{name} ({split}): {out:?}"
            );
        }
        Fail(kind, message) => {
            let f = out.failure.as_ref().unwrap_or_else(|| panic!("{name} ({split}): no failure: {out:?}"));
            assert_eq!(f.kind, kind, "{name} ({split}): {f:?}");
            assert!(
                f.message.starts_with(message),
                "{name} ({split}): `{}` does not start with `{message}`",
                f.message
            );
            assert!(!out.reusable, "{name} ({split}): a failed exchange leaves no connection to reuse");
        }
    }
}

#[test]
fn every_case_gives_its_outcome_whole_at_every_split_and_byte_by_byte() {
    let mut splits = 0;
    for (name, method, bytes, expect) in cases() {
        let whole = read_response(&method, &[&bytes]);
        check(name, "whole", &whole, expect);
        // Large cases are split at every point near their edges and every 997th byte in between.
        let points: Vec<usize> = if bytes.len() <= 4096 {
            (0..=bytes.len()).collect()
        } else {
            (0..=bytes.len()).filter(|&i| i < 512 || i + 512 > bytes.len() || i % 997 == 0).collect()
        };
        for i in points {
            let (a, b) = bytes.split_at(i);
            let out = read_response(&method, &[a, b]);
            assert_eq!(out, whole, "{name}: split at {i} differs from the whole");
            splits += 1;
        }
        if bytes.len() <= 4096 {
            let singles: Vec<&[u8]> = bytes.chunks(1).collect();
            assert_eq!(read_response(&method, &singles), whole, "{name}: byte by byte differs from the whole");
        }
    }
    assert!(splits > 10_000, "{splits} splits read");
}

#[test]
fn a_sized_body_consumes_exactly_its_length_and_reports_what_follows() {
    let bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\n";
    let out = read_response(&Method::GET, &[bytes]);
    assert_eq!(out.consumed, 43, "{out:?}");
    assert!(!out.reusable, "unasked-for bytes after a response: the connection is not reused");
}
