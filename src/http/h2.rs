//! HTTP/2 on a virtual user's connection, with the `h2` crate (hyper's framing, HPACK and flow control). The
//! connection is driven in the user's own task, as the HTTP/1.1 one is: while a request is under way its
//! frames are read and written by the same poll that waits for the response; between requests nothing runs,
//! and what came meanwhile (a GOAWAY, a PING, new SETTINGS) is read when the connection is next looked at. A
//! user sends one request at a time, so a connection carries one stream at a time.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use h2::client::{Connection, SendRequest};
use h2::Reason;
use http::header::{CONNECTION, HOST, TE, TRANSFER_ENCODING, UPGRADE};
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderMap, HeaderName, HeaderValue, Request};

use super::counting::WireStats;
use super::error::Failure;
use super::headers::Headers;
use super::outcome::{data_type, ErrorKind};
use super::request::WireRequest;
use super::response::Response;
use super::stream::Stream;
use crate::http::target::Origin;

/// Bytes of response headers (HPACK-decoded, as HTTP/2 counts them) a response may have: the HTTP/1.1 head's
/// limit.
const MAX_HEADER_LIST: u32 = super::limits::MAX_HEAD as u32;

/// The length from which `http::Uri` refuses a URL.
const MAX_URI: usize = u16::MAX as usize - 1;

/// An HTTP/2 connection to an origin.
pub struct H2Conn {
    /// Where it goes.
    pub origin: Arc<Origin>,
    send: SendRequest<Bytes>,
    conn: Connection<Stream, Bytes>,
    /// Its wire counters.
    pub stats: Arc<WireStats>,
    /// Set once the connection's future has ended: it carries no more streams.
    ended: bool,
    /// When the last exchange's response headers came.
    pub first_read: Option<Instant>,
    /// The last request's Host and its `:authority`.
    authority: Option<(HeaderValue, Authority)>,
}

impl std::fmt::Debug for H2Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H2Conn").field("origin", &self.origin).field("ended", &self.ended).finish()
    }
}

/// Whether a request that failed may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The server said it did not process the request (RST_STREAM REFUSED_STREAM, or a GOAWAY whose last
    /// stream is below it): any method may be sent again (RFC 9113 8.7).
    Safe,
    /// The connection ended before any of the response came: as on HTTP/1.1, an idempotent request (or one of
    /// which nothing was sent) is sent again on a new connection when this one had been used before.
    IfNothingCame,
    /// Not sent again.
    Never,
}

/// A failed HTTP/2 exchange: why, and whether sending again is safe.
#[derive(Debug)]
pub struct H2Failure {
    /// The sample's failure.
    pub failure: Failure,
    /// Whether a retry is safe.
    pub retry: Retry,
}

impl H2Conn {
    /// Starts HTTP/2 on an opened stream: the client preface and SETTINGS are sent; the server's come with the
    /// first exchange.
    pub async fn handshake(origin: Arc<Origin>, io: Stream, stats: Arc<WireStats>) -> Result<Self, Failure> {
        let (send, conn) = h2::client::Builder::new()
            .enable_push(false)
            .max_header_list_size(MAX_HEADER_LIST)
            .handshake(io)
            .await
            .map_err(|e| h2_failure(&e).failure)?;
        Ok(Self { origin, send, conn, stats, ended: false, first_read: None, authority: None })
    }

    /// Whether the connection can take another request. With `look`, what the server sent while it sat idle
    /// is read now, without waiting (a GOAWAY or a close ends it); without, a connection used a moment ago is
    /// taken as it is.
    pub fn usable(&mut self, look: bool) -> bool {
        if self.ended {
            return false;
        }
        if !look {
            return true;
        }
        let mut cx = Context::from_waker(Waker::noop());
        if Pin::new(&mut self.conn).poll(&mut cx).is_ready() {
            self.ended = true;
            return false;
        }
        matches!(self.send.poll_ready(&mut cx), Poll::Ready(Ok(())))
    }

    /// Whether the connection may carry another request after the last exchange.
    pub fn reusable(&self) -> bool {
        !self.ended
    }

    /// Sends `req` on a new stream and reads its response into `into`, keeping up to `keep` bytes of the body;
    /// returns the body's whole size.
    pub async fn exchange(
        &mut self,
        req: &WireRequest,
        keep: usize,
        into: &mut Result<Response, Failure>,
    ) -> Result<u64, H2Failure> {
        self.first_read = None;
        let request = build(req, &mut self.authority).map_err(|f| H2Failure { failure: f, retry: Retry::Never })?;
        let Self { send, conn, ended, first_read, .. } = self;
        let conn = &mut *conn;
        // Ready to open a stream (the server's SETTINGS may limit how many are open at once).
        drive(conn, ended, |cx| send.poll_ready(cx)).await?;
        let (response, mut body_out) = send.send_request(request, req.body.is_empty()).map_err(|e| h2_failure(&e))?;
        if !req.body.is_empty() {
            let mut rest = req.body.clone();
            body_out.reserve_capacity(rest.len());
            while !rest.is_empty() {
                let room = drive(conn, ended, |cx| match body_out.poll_capacity(cx) {
                    Poll::Ready(Some(r)) => Poll::Ready(r.map(Some)),
                    Poll::Ready(None) => Poll::Ready(Ok(None)),
                    Poll::Pending => Poll::Pending,
                })
                .await?;
                // The stream takes no more (reset, or refused by a GOAWAY): its response, or its error, says why.
                let Some(room) = room else { break };
                if room == 0 {
                    continue;
                }
                let chunk = rest.split_to(room.min(rest.len()));
                body_out.send_data(chunk, rest.is_empty()).map_err(|e| h2_failure(&e))?;
            }
        }
        let mut response = response;
        let head =
            drive(conn, ended, |cx| Pin::new(&mut response).poll(cx)).await.map_err(|f| after_goaway(send, f))?;
        let at = Instant::now();
        *first_read = Some(at);
        let (parts, mut body_in) = head.into_parts();
        let mut kept = (keep > 0).then(BytesMut::new);
        let mut size = 0u64;
        loop {
            let data = drive(conn, ended, |cx| match body_in.poll_data(cx) {
                Poll::Ready(Some(r)) => Poll::Ready(r.map(Some)),
                Poll::Ready(None) => Poll::Ready(Ok(None)),
                Poll::Pending => Poll::Pending,
            })
            .await
            .map_err(|f| H2Failure { retry: Retry::Never, ..f })?;
            let Some(data) = data else { break };
            size += data.len() as u64;
            // Flow control: the window is opened again as soon as the bytes are read.
            let _ = body_in.flow_control().release_capacity(data.len());
            if let Some(k) = kept.as_mut() {
                let room = keep.saturating_sub(k.len());
                k.extend_from_slice(&data[..data.len().min(room)]);
            }
        }
        // The WINDOW_UPDATEs and the stream's end go out now, not with the next request.
        let mut cx = Context::from_waker(Waker::noop());
        if !*ended && Pin::new(&mut *conn).poll(&mut cx).is_ready() {
            *ended = true;
        }
        let status = parts.status.as_u16();
        let reason = parts.status.canonical_reason().unwrap_or("").into();
        let headers = Headers::from_map(parts.headers);
        let data_type = data_type(headers.content_type());
        let body = kept.map(BytesMut::freeze);
        *into = Ok(Response { status, reason, data_type, body, headers, version: http::Version::HTTP_2 });
        Ok(size)
    }
}

/// Polls `f`, driving the connection when it waits: the connection's frames are read and written by the same
/// poll, and `f` is polled again after it. When the connection has ended and `f` still waits, the exchange
/// fails (nothing more can come).
///
/// `f` is polled with a waker that does nothing: only the connection's poll, in this same task, changes what
/// `f` sees, and `f` is polled after each. So a stream's readiness never wakes the task a second time for
/// what the connection's own poll already handled, and a ready `f` (the frames it waits for were read
/// together with the ones before) costs no poll of the connection.
async fn drive<T>(
    conn: &mut Connection<Stream, Bytes>,
    ended: &mut bool,
    mut f: impl FnMut(&mut Context<'_>) -> Poll<Result<T, h2::Error>>,
) -> Result<T, H2Failure> {
    let mut conn_error: Option<h2::Error> = None;
    poll_fn(|cx| {
        let mut quiet = Context::from_waker(Waker::noop());
        if let Poll::Ready(r) = f(&mut quiet) {
            return Poll::Ready(r.map_err(|e| h2_failure(&e)));
        }
        if !*ended {
            if let Poll::Ready(r) = Pin::new(&mut *conn).poll(cx) {
                *ended = true;
                conn_error = r.err();
            }
        }
        match f(&mut quiet) {
            Poll::Ready(r) => Poll::Ready(r.map_err(|e| h2_failure(&e))),
            // The connection's own error, not the stream's: a GOAWAY there does not say the stream was not
            // processed.
            Poll::Pending if *ended => Poll::Ready(Err(match conn_error.take().map(|e| h2_failure(&e)) {
                Some(f) if f.retry != Retry::Safe => f,
                Some(f) => H2Failure { retry: Retry::IfNothingCame, ..f },
                None => H2Failure { failure: Failure::closed(), retry: Retry::IfNothingCame },
            })),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// `f`, saying so when the connection ended after a GOAWAY that did not refuse the stream: the server may have
/// processed the request (RFC 9113 6.8), so only a request that may be sent twice is sent again.
#[cold]
fn after_goaway(send: &mut SendRequest<Bytes>, f: H2Failure) -> H2Failure {
    if f.retry != Retry::IfNothingCame {
        return f;
    }
    let mut cx = Context::from_waker(Waker::noop());
    match send.poll_ready(&mut cx) {
        Poll::Ready(Err(e)) if e.is_go_away() && e.is_remote() => {
            let reason = e.reason().unwrap_or(Reason::NO_ERROR);
            let message = format!(
                "HTTP/2 connection closed by the server (GOAWAY {reason:?}) before the response came; the GOAWAY \
                 counts the request among those it may have processed"
            );
            H2Failure { failure: Failure::new(ErrorKind::ConnectionReset, message), retry: f.retry }
        }
        _ => f,
    }
}

/// What an h2 error means for the sample.
#[cold]
fn h2_failure(e: &h2::Error) -> H2Failure {
    let reason = e.reason().unwrap_or(Reason::NO_ERROR);
    let (kind, message, retry) = if let Some(io) = e.get_io() {
        let failure = match io.kind() {
            io::ErrorKind::BrokenPipe | io::ErrorKind::UnexpectedEof => Failure::closed(),
            _ => Failure::io(io),
        };
        return H2Failure { failure, retry: Retry::IfNothingCame };
    } else if e.is_reset() && e.is_remote() && reason == Reason::REFUSED_STREAM {
        (
            ErrorKind::ConnectionReset,
            "HTTP/2 stream refused by the server (RST_STREAM REFUSED_STREAM)".into(),
            Retry::Safe,
        )
    } else if e.is_reset() && e.is_remote() {
        (ErrorKind::ConnectionReset, format!("HTTP/2 stream reset by the server (RST_STREAM {reason:?})"), Retry::Never)
    } else if e.is_go_away() && e.is_remote() {
        // Only the streams above the GOAWAY's last stream (not processed) get the GOAWAY itself, and a request
        // made after it came; the others go on, or end with the connection.
        let message =
            format!("HTTP/2 connection closed by the server (GOAWAY {reason:?}) before it processed the request");
        (ErrorKind::ConnectionReset, message, Retry::Safe)
    } else {
        (ErrorKind::InvalidResponse, format!("HTTP/2 error: {e}"), Retry::Never)
    };
    H2Failure { failure: Failure::new(kind, message), retry }
}

/// The request as h2 sends it: pseudo-headers from the URL (`:authority` is the Host the HTTP/1.1 engine would
/// send), then the request's headers but those HTTP/2 forbids (RFC 9113 8.2.2). `authority` keeps the last
/// Host parsed, which every request on the connection has in common but a few.
pub(super) fn build(
    req: &WireRequest,
    authority: &mut Option<(HeaderValue, Authority)>,
) -> Result<Request<()>, Failure> {
    let uri = match uri_of(req, authority) {
        Some(uri) => uri,
        None => http::Uri::try_from(req.target.url.as_str()).map_err(|e| {
            Failure::new(ErrorKind::BadRequest, format!("URL `{}` cannot be sent: {e}", req.target.url))
        })?,
    };
    let mut headers = HeaderMap::with_capacity(req.headers.len());
    for (name, value) in &req.headers {
        if forbidden(name) && !(*name == TE && value.as_bytes().eq_ignore_ascii_case(b"trailers")) {
            continue;
        }
        headers.append(name.clone(), value.clone());
    }
    let mut request = Request::new(());
    *request.method_mut() = req.method.clone();
    *request.uri_mut() = uri;
    *request.version_mut() = http::Version::HTTP_2;
    *request.headers_mut() = headers;
    Ok(request)
}

/// The URL as a `Uri` from its parts as the target already split them (scheme, the Host's authority, then
/// only the path and query parsed), what parsing the whole URL gives; `None` where that would not be certain
/// (a URL as long as a `Uri` may not be, a part that does not parse), which the whole parse then decides.
fn uri_of(req: &WireRequest, authority: &mut Option<(HeaderValue, Authority)>) -> Option<http::Uri> {
    let target = &req.target;
    if target.url.len() >= MAX_URI {
        return None;
    }
    let authority = match authority {
        Some((host, a)) if *host == target.host => a.clone(),
        _ => {
            let a = Authority::try_from(target.host.as_bytes()).ok()?;
            *authority = Some((target.host.clone(), a.clone()));
            a
        }
    };
    let mut parts = http::uri::Parts::default();
    parts.scheme = Some(if target.origin.https { Scheme::HTTPS } else { Scheme::HTTP });
    parts.authority = Some(authority);
    parts.path_and_query = Some(PathAndQuery::try_from(target.path_and_query()).ok()?);
    http::Uri::from_parts(parts).ok()
}

/// Headers that are HTTP/1.1's connection's own, which HTTP/2 does not carry.
fn forbidden(name: &HeaderName) -> bool {
    *name == HOST
        || *name == CONNECTION
        || *name == TRANSFER_ENCODING
        || *name == UPGRADE
        || *name == TE
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::request::HttpVersion;
    use crate::http::target::{Base, Target};

    fn request(target: Target) -> WireRequest {
        WireRequest {
            method: http::Method::GET,
            target,
            headers: Vec::new(),
            body: Bytes::new(),
            version: HttpVersion::Http2,
        }
    }

    /// What the whole URL parsed into a `Uri` gives, and the failure's message, or the `Uri` h2 is given.
    fn sent(req: &WireRequest, authority: &mut Option<(HeaderValue, Authority)>) -> Result<String, String> {
        build(req, authority).map(|r| r.uri().to_string()).map_err(|f| f.message)
    }

    #[test]
    fn the_uri_from_the_targets_parts_is_the_whole_urls() {
        let base = Base::parse("http://127.0.0.1:8080/api").unwrap();
        let long = format!("/{}", "a".repeat(usize::from(u16::MAX)));
        let relative = ["/u?id=1&x=%20", "", "?q=1", "#frag", "/p#f", "/a b", "/\u{e9}", "/x?y={z}", "/%zz", &long];
        let absolute = ["https://[::1]:8443/p?q", "http://h", "http://h:80?x", "https://h/a\"b", "http://h/%7e"];
        let mut cached = None;
        let targets = relative.iter().map(|raw| Target::resolve(Some(&base), raw.to_string()));
        for target in targets.chain(absolute.iter().map(|url| Target::absolute(url.to_string()))) {
            let req = request(target.unwrap());
            let whole = http::Uri::try_from(req.target.url.as_str())
                .map(|u| u.to_string())
                .map_err(|e| format!("URL `{}` cannot be sent: {e}", req.target.url));
            // Once with the authority parsed, once with the one kept from the request before.
            assert_eq!(sent(&req, &mut None), whole, "{}", req.target.url);
            assert_eq!(sent(&req, &mut cached), whole, "{}", req.target.url);
        }
    }
}
