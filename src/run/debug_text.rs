//! An exchange as `--http-debug` shows it, in k6's layout: `Request:`, then for each followed redirect
//! `RedirectResponse:` and `RedirectRequest:`, then `Response:` (or why there was none). Heads always;
//! bodies with `full`, cut at [`DEBUG_BODY_LIMIT`]. Secrets are masked everywhere, and `Authorization`
//! values are shown as `***` whatever they hold, as `dry-run` shows them. Control characters (C0, DEL and
//! C1, such as an 8-bit CSI) are written escaped (`\u{9b}`) wherever they are, heads and bodies alike, so
//! that what a server sends cannot drive the terminal.

use std::fmt::Write as _;
use std::sync::Arc;

use http::header::{AUTHORIZATION, PROXY_AUTHORIZATION};
use http::HeaderName;

use super::options::DEBUG_BODY_LIMIT;
use crate::http::request::{title_case, WireRequest};
use crate::http::{Hop, Response};
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
            request(&mut out, if i == 0 { "Request:" } else { "RedirectRequest:" }, req, full, masks);
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

fn request(out: &mut Vec<u8>, title: &str, req: &WireRequest, full: bool, masks: &Masks) {
    let mut head = format!("{title}\n{} {} HTTP/1.1\n", req.method, req.target.path_and_query());
    header_lines(&mut head, req.lines().map(|(n, v)| (n, v.as_bytes())));
    push_text(out, &head, masks);
    if full && !req.body.is_empty() {
        body(out, &req.body, req.body.len() as u64, masks);
    }
    out.push(b'\n');
}

/// A response's head, and with `full` its body; `reason` is its reason phrase, `size` its body's size.
fn response(out: &mut Vec<u8>, title: &str, (resp, reason, size): (&Response, &str, u64), full: bool, masks: &Masks) {
    let mut head = format!("{title}\n{:?} {} {reason}\n", resp.version, resp.status);
    header_lines(&mut head, resp.headers.iter().map(|(n, v)| (n, v.as_bytes())));
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

fn header_lines<'a>(head: &mut String, headers: impl Iterator<Item = (&'a HeaderName, &'a [u8])>) {
    for (name, value) in headers {
        let value = if *name == AUTHORIZATION || *name == PROXY_AUTHORIZATION {
            "***".into()
        } else {
            String::from_utf8_lossy(value)
        };
        let _ = writeln!(head, "{}: {value}", title_case(name.as_str()));
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
