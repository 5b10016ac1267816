//! A request head as it goes on the wire: request line, the request's headers in their order (names
//! title-cased, as planrun has always sent them), and Content-Length when the body needs one.

use http::header::CONTENT_LENGTH;

use super::error::Failure;
use crate::run::wire::WireRequest;
use crate::sample::ErrorKind;

/// Bodies up to this size go in the same write as the head.
pub const INLINE_BODY: usize = 16 * 1024;

/// Writes `req`'s head (and its body, when it is at most [`INLINE_BODY`] bytes) into `out`; returns whether
/// the body was included. A byte that would end a line or the head early (CR, LF, NUL) refuses the request;
/// the types of [`WireRequest`] already refuse them in header values, methods and names, and the URL's are
/// percent-encoded when it is rendered, so this is the last guard, not the first.
pub fn encode(req: &WireRequest, out: &mut Vec<u8>) -> Result<bool, Failure> {
    out.clear();
    let target = request_target(req.target.path_and_query())?;
    let method = req.method.as_str();
    if !method.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Failure::new(ErrorKind::BadRequest, format!("invalid method `{method}`")));
    }
    out.reserve(64 + target.len() + req.headers.len() * 32 + req.body.len().min(INLINE_BODY));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let mut has_length = false;
    for (name, value) in &req.headers {
        let value = value.as_bytes();
        if value.iter().any(|&b| matches!(b, b'\r' | b'\n' | 0)) {
            return Err(Failure::new(
                ErrorKind::BadRequest,
                format!("header {name}: a line break or NUL in its value"),
            ));
        }
        has_length |= name == CONTENT_LENGTH;
        title_case(name.as_str(), out);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    if !has_length && !req.body.is_empty() {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(itoa::Buffer::new().format(req.body.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    let inline = req.body.len() <= INLINE_BODY;
    if inline {
        out.extend_from_slice(&req.body);
    }
    Ok(inline)
}

/// The longest request target sent.
const MAX_TARGET: usize = u16::MAX as usize - 1;

/// The origin-form target: the path and query, without a fragment (never sent); only visible ASCII.
fn request_target(path_and_query: &str) -> Result<&str, Failure> {
    let target = path_and_query.split('#').next().unwrap_or("/");
    let target = if target.is_empty() { "/" } else { target };
    let invalid = |why: &str| Failure::new(ErrorKind::BadRequest, format!("invalid request target `{target}`: {why}"));
    // The limit and the wording of the `http` crate's URI parser, which planrun used before.
    if target.len() > MAX_TARGET {
        return Err(invalid("uri too long"));
    }
    if !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid("invalid uri character"));
    }
    Ok(target)
}

/// `content-type` -> `Content-Type`.
fn title_case(name: &str, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(name.as_bytes());
    let mut upper = true;
    for b in out.iter_mut().skip(start) {
        if upper {
            b.make_ascii_uppercase();
        }
        upper = *b == b'-';
    }
}
