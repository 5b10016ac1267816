//! An exchange as `--http-debug` shows it, in k6's layout: `Request:`, then for each followed redirect
//! `RedirectResponse:` and `RedirectRequest:`, then `Response:` (or why there was none). Heads always, in the
//! HTTP version each request went over: HTTP/1.1's request line and header lines, or the fields of HTTP/2's
//! HEADERS frames (pseudo-header fields first, names in lower case, as `dry-run` shows them); bodies with
//! `full`, cut at [`DEBUG_BODY_LIMIT`]. Secrets are masked everywhere, and `Authorization`
//! values are shown as `***` whatever they hold, as `dry-run` shows them. Control characters (C0, DEL and
//! C1, such as an 8-bit CSI) are written escaped (`\u{9b}`) wherever they are, heads and bodies alike, so
//! that what a server sends cannot drive the terminal.

use std::fmt::Write as _;
use std::sync::Arc;

use http::header::{AUTHORIZATION, PROXY_AUTHORIZATION};
use http::{HeaderName, Version};

use super::options::DEBUG_BODY_LIMIT;
use crate::http::request::{title_case, WireRequest};
use crate::http::{Hop, HttpVersion, Response};
use crate::mask::Masks;
use crate::sample::{Outcome, Sample};

/// The text for `sample`, whose requests are `hops` and whose last response (when the exchange ended with
/// one) is `last`, with its body's size; `rows` are the data rows its iteration took.
pub(super) fn render(
    sample: &Sample,
    hops: &[Hop],
    last: (Option<&Response>, u64),
    rows: &[(Arc<str>, u64)],
    full: bool,
    masks: &Masks,
) -> String {
    let mut out = Vec::with_capacity(1024);
    let verdict = match (&sample.outcome, sample.success) {
        (Outcome::Response { status, reason }, true) => format!("{status} {reason}"),
        (_, _) if sample.failure.is_some() => format!("failed: {}", sample.failure.as_deref().unwrap_or_default()),
        (Outcome::Response { status, reason }, false) => format!("failed: {status} {reason}"),
        (Outcome::Error { kind, message }, _) => format!("failed: {}: {message}", kind.as_str()),
        (Outcome::Transaction { .. }, _) => String::new(),
    };
    let thread = format!("{} {}-{}", sample.thread.group, sample.thread.group_no, sample.thread.vu);
    // The first line names the sample as the JTL row does (label, threadName), so the two can be matched.
    let mut head = format!("--- http-debug: `{}` ({thread}) {verdict}\n", sample.label);
    if !rows.is_empty() {
        let taken: Vec<String> = rows.iter().map(|(set, row)| format!("{set} row {row}")).collect();
        let _ = writeln!(head, "Data: {}", taken.join(", "));
    }
    push_text(&mut out, &head, masks);
    if hops.is_empty() {
        out.extend_from_slice(b"(no request was sent)\n\n");
    }
    for (i, hop) in hops.iter().enumerate() {
        let followed = i + 1 < hops.len();
        if let Some(req) = &hop.request {
            // A redirect's response says the version of its hop; the last hop's is the sample's.
            let got = hop.response.as_ref().or(last.0.filter(|_| !followed)).map(|r| r.version);
            let h2 = over_h2(req, got.or(sample.protocol));
            request(&mut out, if i == 0 { "Request:" } else { "RedirectRequest:" }, (req, h2), full, masks);
        }
        match (&hop.response, followed) {
            (Some(resp), true) => {
                response(&mut out, "RedirectResponse:", (resp, &resp.reason, hop.body_size), full, masks);
            }
            (Some(resp), false) => {
                response(&mut out, "Response:", (resp, &resp.reason, hop.body_size), full, masks);
                if let Outcome::Error { kind, message } = &sample.outcome {
                    line(&mut out, &format!("Not followed: {}: {message}", kind.as_str()), masks);
                }
            }
            (None, _) => match (last.0, &sample.outcome) {
                // The sample holds this response's reason phrase.
                (Some(resp), Outcome::Response { reason, .. }) => {
                    response(&mut out, "Response:", (resp, reason, last.1), full, masks);
                }
                (None, Outcome::Error { kind, message }) => {
                    line(&mut out, &format!("No response: {}: {message}", kind.as_str()), masks);
                }
                _ => {}
            },
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn line(out: &mut Vec<u8>, text: &str, masks: &Masks) {
    push_text(out, text, masks);
    out.extend_from_slice(b"\n\n");
}

/// `text` with its secrets masked, each control character but a line break or a tab written escaped.
fn push_text(out: &mut Vec<u8>, text: &str, masks: &Masks) {
    for c in masks.mask(text).chars() {
        push_char(out, c);
    }
}

/// `c`, or its escape (`\u{9b}`) when it is a control character other than a line break or a tab: a
/// terminal must not take what a server sent (an escape sequence) as its own.
fn push_char(out: &mut Vec<u8>, c: char) {
    match c {
        '\n' | '\t' => out.push(c as u8),
        c if c.is_control() => {
            let _ = write!(Bytes(out), "{}", c.escape_unicode());
        }
        c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
    }
}

/// Whether `req` went over HTTP/2, its connection's version being `protocol` (`None`: none was made). A
/// request that asks for one version goes over it or not at all; one left to ALPN goes over what the
/// server picked.
fn over_h2(req: &WireRequest, protocol: Option<Version>) -> bool {
    match req.version {
        HttpVersion::Http1 => false,
        HttpVersion::Http2 => true,
        HttpVersion::Auto => protocol == Some(Version::HTTP_2),
    }
}

const H2C: &str = "(HTTP/2, cleartext (h2c): the fields of the HEADERS frame, then the body in DATA frames)";
const H2_TLS: &str = "(HTTP/2 over TLS: the fields of the HEADERS frame, then the body in DATA frames)";
const H2_RESPONSE: &str = "(HTTP/2: the fields of the HEADERS frame)";

/// A request's head, as HTTP/2 sent it when `h2`, and with `full` its body.
fn request(out: &mut Vec<u8>, title: &str, (req, h2): (&WireRequest, bool), full: bool, masks: &Masks) {
    let mut head = format!("{title}\n");
    if h2 {
        head.push_str(if req.target.origin.https { H2_TLS } else { H2C });
        head.push('\n');
        match super::wire::h2_fields(req) {
            Ok(fields) => head.push_str(&fields),
            Err(e) => {
                let _ = writeln!(head, "(not sent: {e})");
            }
        }
    } else {
        let _ = writeln!(head, "{} {} HTTP/1.1", req.method, req.target.path_and_query());
        header_lines(&mut head, req.lines().map(|(n, v)| (n, v.as_bytes())), true);
    }
    push_text(out, &head, masks);
    if full && !req.body.is_empty() {
        body(out, &req.body, req.body.len() as u64, masks);
    }
    out.push(b'\n');
}

/// A response's head, and with `full` its body; `reason` is its reason phrase, `size` its body's size.
fn response(out: &mut Vec<u8>, title: &str, (resp, reason, size): (&Response, &str, u64), full: bool, masks: &Masks) {
    let h1 = resp.version != Version::HTTP_2;
    let mut head = if h1 {
        format!("{title}\n{:?} {} {reason}\n", resp.version, resp.status)
    } else {
        // HTTP/2 has no status line and no reason phrase: the status is a pseudo-header field.
        format!("{title}\n{H2_RESPONSE}\n:status: {}\n", resp.status)
    };
    header_lines(&mut head, resp.headers.iter().map(|(n, v)| (n, v.as_bytes())), h1);
    push_text(out, &head, masks);
    if full {
        match &resp.body {
            Some(b) if !b.is_empty() => body(out, b, size, masks),
            Some(_) => {}
            None => out.extend_from_slice(b"\n(body not kept)\n"),
        }
    }
    out.push(b'\n');
}

/// A line per header, names title-cased (`titled`, HTTP/1.1's) or in lower case as HTTP/2 carries them.
fn header_lines<'a>(head: &mut String, headers: impl Iterator<Item = (&'a HeaderName, &'a [u8])>, titled: bool) {
    for (name, value) in headers {
        let value = if *name == AUTHORIZATION || *name == PROXY_AUTHORIZATION {
            "***".into()
        } else {
            String::from_utf8_lossy(value)
        };
        let name = if titled { title_case(name.as_str()) } else { name.as_str().into() };
        let _ = writeln!(head, "{name}: {value}");
    }
}

/// A blank line and the body's first bytes, masked; text as it is, anything else summed up.
fn body(out: &mut Vec<u8>, kept: &[u8], size: u64, masks: &Masks) {
    let (shown, more) = crate::mask::masked_prefix(kept, size, DEBUG_BODY_LIMIT, masks);
    out.push(b'\n');
    match text(&shown) {
        Some(t) => {
            // A terminal must not take the body's control characters (escape sequences) as its own.
            for c in t.chars().filter(|c| *c != '\r') {
                push_char(out, c);
            }
            if !t.ends_with('\n') {
                out.push(b'\n');
            }
        }
        None => {
            let _ = writeln!(Bytes(out), "({} bytes that are not UTF-8 text)", shown.len());
        }
    }
    if more > 0 {
        let _ = writeln!(Bytes(out), "... ({more} more bytes)");
    }
}

/// `bytes` as text when they are UTF-8, allowing a character cut at the end.
fn text(bytes: &[u8]) -> Option<&str> {
    match std::str::from_utf8(bytes) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// `write!` into a byte buffer.
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
