//! The engine's request: method, target, headers and body, exactly as they go on the wire.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, HOST};
use http::Method;

use super::target::Target;

/// A request exactly as it goes on the wire.
#[derive(Debug, Clone)]
pub struct WireRequest {
    /// The method, sent as it is.
    pub method: Method,
    /// Where it goes: the full URL (query included), its origin and Host.
    pub target: Target,
    /// Every header but Host, in the order sent. Host goes first, from `target` ([`WireRequest::lines`]); a
    /// Host line here is not sent (the target's is), so a request with none allocates no list.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The body bytes.
    pub body: Bytes,
    /// The HTTP version to speak.
    pub version: HttpVersion,
}

/// Which HTTP version a request is sent with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpVersion {
    /// As ALPN agrees for https (HTTP/2 when the server picks `h2`, HTTP/1.1 otherwise), HTTP/1.1 for http.
    #[default]
    Auto,
    /// HTTP/1.1 only (ALPN offers only `http/1.1`).
    Http1,
    /// HTTP/2 only: ALPN offers only `h2` over https; cleartext HTTP/2 with prior knowledge (h2c) for http.
    Http2,
}

impl WireRequest {
    /// Every header line as sent: Host (the target's) first, then [`WireRequest::headers`] without Host.
    pub fn lines(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        std::iter::once((&HOST, &self.target.host))
            .chain(self.headers.iter().filter(|(n, _)| *n != HOST).map(|(n, v)| (n, v)))
    }
}

impl WireRequest {
    /// The request to send after a redirect to `target`; `to_get` drops the body (303, or POST after 301/302).
    /// Authorization headers are dropped when the redirect leaves the request's origin.
    pub fn redirect(&self, target: Target, to_get: bool, cookie: impl Fn(&Target) -> Option<String>) -> WireRequest {
        let same_origin = target.origin == self.target.origin;
        let mut headers: Vec<(HeaderName, HeaderValue)> = self
            .headers
            .iter()
            .filter(|(n, _)| *n != HOST && *n != COOKIE && !(to_get && (*n == CONTENT_TYPE || *n == CONTENT_LENGTH)))
            // Credentials are for the origin they were written for, not for wherever a redirect points.
            .filter(|(n, _)| {
                same_origin || (*n != http::header::AUTHORIZATION && *n != http::header::PROXY_AUTHORIZATION)
            })
            .cloned()
            .collect();
        if let Some(c) = cookie(&target).and_then(|c| HeaderValue::try_from(c).ok()) {
            headers.push((COOKIE, c));
        }
        let (method, body) =
            if to_get { (Method::GET, Bytes::new()) } else { (self.method.clone(), self.body.clone()) };
        WireRequest { method, target, headers, body, version: self.version }
    }
}

/// `content-type` -> `Content-Type`, as hyper writes header names with title-case enabled.
pub fn title_case(name: &str) -> String {
    let mut upper = true;
    name.chars()
        .map(|c| {
            let out = if upper { c.to_ascii_uppercase() } else { c };
            upper = c == '-';
            out
        })
        .collect()
}
