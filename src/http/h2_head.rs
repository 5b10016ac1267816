//! A request's head as the HTTP/2 engine sends it, for showing it (dry-run): the pseudo-header fields the h2
//! crate makes from the request's URL (RFC 9113 8.3.1), in its order, then the header fields as it is given
//! them (lowercase names, without those of an HTTP/1.1 connection, the values of a repeated name together).
//! On the wire these go HPACK-compressed in a HEADERS frame, and the body in DATA frames.

use http::{HeaderValue, Method};

use super::error::Failure;
use super::request::WireRequest;

/// The fields of `req`'s HEADERS frame, pseudo-header fields first, or why it cannot be sent.
pub fn h2_head(req: &WireRequest) -> Result<Vec<(String, HeaderValue)>, Failure> {
    let request = super::h2::build(req, &mut None)?;
    let uri = request.uri();
    let mut pseudo = vec![(":method", request.method().as_str().to_string())];
    // As h2's `Pseudo::request`: CONNECT has no scheme or path; an empty path is `*` for OPTIONS, else `/`.
    if request.method() != Method::CONNECT {
        let path = match uri.path_and_query().map_or("", |p| p.as_str()) {
            "" if request.method() == Method::OPTIONS => "*",
            "" => "/",
            p => p,
        };
        pseudo.extend(uri.scheme_str().map(|s| (":scheme", s.to_string())));
        pseudo.extend(uri.authority().map(|a| (":authority", a.as_str().to_string())));
        pseudo.push((":path", path.to_string()));
    } else {
        pseudo.extend(uri.authority().map(|a| (":authority", a.as_str().to_string())));
    }
    let mut fields: Vec<(String, HeaderValue)> = pseudo
        .into_iter()
        .map(|(n, v)| (n.to_string(), HeaderValue::try_from(v).unwrap_or(HeaderValue::from_static(""))))
        .collect();
    fields.extend(request.headers().iter().map(|(n, v)| (n.as_str().to_string(), v.clone())));
    Ok(fields)
}
