//! A request rendered for the wire: what dry-run prints and what the HTTP engine sends, byte for byte.

use std::sync::Arc;

use crate::compile::{Graph, RequestNode};
use crate::http::request::{title_case, WireRequest};
use crate::http::target::Target;
use crate::mask::Masks;
use crate::plan::model::{Body, Part};
use crate::template::{form_safe, JsonError, Scope, TemplateError};
use bytes::{BufMut, Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, COOKIE};
use http::Method;
use rand::Rng;

/// Rendering a request failed: a template error or an unusable URL or header.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct RenderError(pub String);

impl From<TemplateError> for RenderError {
    fn from(e: TemplateError) -> Self {
        RenderError(format!("template error: {}", e.message))
    }
}

/// Renders a request step for one virtual user. `cookie` is the Cookie header from the user's jar.
pub fn render(
    graph: &Graph,
    node: &RequestNode,
    scope: &Arc<Scope>,
    cookie: impl FnOnce(&Target) -> Option<String>,
) -> Result<WireRequest, RenderError> {
    render_reusing(graph, node, scope, cookie, &mut SpareHeaders::default())
}

/// The header list and URL buffer of a user's last request, kept for its next one (see [`render_reusing`]).
#[derive(Debug, Default)]
pub(crate) struct SpareHeaders {
    list: Vec<(HeaderName, HeaderValue)>,
    /// The address of the node whose request filled `list`, when all of that node's headers are fixed: they
    /// are still at the front, as its next request would have them.
    fixed_of: Option<usize>,
    /// The last request's URL buffer, once its sample has copied the URL: the next request renders its URL
    /// there, in memory this user wrote a moment ago, and nothing is allocated or freed.
    url: Option<String>,
}

impl SpareHeaders {
    /// Keeps the header list of a request that `render_reusing` made for `node`.
    pub(crate) fn keep(&mut self, node: &RequestNode, list: Vec<(HeaderName, HeaderValue)>) {
        self.list = list;
        self.fixed_of = node.headers_fixed.then_some(address(node));
    }

    /// Keeps a URL buffer for the next request (emptied; one grown past the usual size is freed).
    pub(crate) fn keep_url(&mut self, mut url: String) {
        if url.capacity() <= URL_CAPACITY {
            url.clear();
            self.url = Some(url);
        }
    }
}

fn address(node: &RequestNode) -> usize {
    std::ptr::from_ref(node) as usize
}

/// [`render`], the header list built in the one `spare` holds: a user hands back the list of its last
/// request, so that its next one allocates none (an allocation and its free were about 140 instructions), and
/// the next request of the same step, when its headers are all fixed (a default User-Agent), finds them there
/// already instead of cloning them again (and dropping the old ones).
pub(crate) fn render_reusing(
    graph: &Graph,
    node: &RequestNode,
    scope: &Arc<Scope>,
    cookie: impl FnOnce(&Target) -> Option<String>,
    spare: &mut SpareHeaders,
) -> Result<WireRequest, RenderError> {
    let mut headers = std::mem::take(&mut spare.list);
    let fixed_in_place = spare.fixed_of.take() == Some(address(node)) && headers.len() >= node.headers.len();
    if fixed_in_place {
        headers.truncate(node.headers.len());
    } else {
        headers.clear();
    }
    let t = &graph.templates;
    let step = &node.step;
    let r = |tpl| t.render(tpl, scope).map_err(RenderError::from);
    let into = |tpl, out: &mut String| t.render_into(tpl, scope, out).map_err(RenderError::from);
    // One buffer for the whole URL, the base's prefix first: a relative URL (nearly every one) is rendered
    // where it stays; an absolute one has the prefix taken off again.
    let mut url = spare.url.take().unwrap_or_else(|| crate::url_pool::url_buffer(URL_CAPACITY));
    url.push_str(graph.base.as_ref().map_or("", |b| b.prefix()));
    let from = url.len();
    into(&step.url, &mut url)?;
    escape_illegal(&mut url, from);
    // The query is form-encoded: only the URL before it may hold a scheme's `://`.
    let scheme_within = url.len() - from;
    if !step.query.is_empty() {
        url.push(if url.get(from..).unwrap_or_default().contains('?') { '&' } else { '?' });
        for (i, ((_, value), key)) in step.query.iter().zip(&node.query_keys).enumerate() {
            if i > 0 {
                url.push('&');
            }
            url.push_str(key);
            url.push('=');
            let mark = url.len();
            let safe = t.render_form_into(value, scope, &mut url).map_err(RenderError::from)?;
            if !safe && !url.as_bytes()[mark..].iter().all(|&b| form_safe(b)) {
                let raw = url.split_off(mark);
                url.extend(url::form_urlencoded::byte_serialize(raw.as_bytes()));
            }
        }
    }
    let target = Target::resolve_after_prefix(graph.base.as_ref(), url, from, scheme_within).map_err(RenderError)?;
    if !node.headers.is_empty() {
        headers.reserve(node.headers.len() + 3);
    }
    for h in node.headers.iter().filter(|_| !fixed_in_place) {
        let value = match &h.fixed {
            Some(v) => v.clone(),
            None => HeaderValue::try_from(r(&h.value)?)
                .map_err(|_| RenderError(format!("header {}: invalid value", h.name)))?,
        };
        headers.push((h.name.clone(), value));
    }
    if let Some(c) = cookie(&target) {
        headers.push((COOKIE, HeaderValue::try_from(c).map_err(|_| RenderError("invalid cookie".into()))?));
    }
    // Most requests have no body: they do not pay for the call that makes one.
    let (body, content_type) = match &step.body {
        Body::None => (Bytes::new(), None),
        _ => body(graph, node, scope)?,
    };
    if let Some(ct) = content_type {
        if !headers.iter().any(|(n, _)| n == CONTENT_TYPE) {
            headers.push((CONTENT_TYPE, ct.map_err(|()| RenderError("invalid content type".into()))?));
        }
    }
    if !body.is_empty() || matches!(step.method, Method::POST | Method::PUT | Method::PATCH) {
        headers.push((CONTENT_LENGTH, HeaderValue::from(body.len())));
    }
    Ok(WireRequest { method: step.method.clone(), target, headers, body, version: step.http_version })
}

/// Room for most URLs, so that building one allocates once.
const URL_CAPACITY: usize = 192;

/// Percent-encodes the bytes no URL may hold as they are (controls, space, `"<>\\^`{|}`, bytes beyond ASCII),
/// as browsers and JMeter (through `java.net.URI`) do: a data value `a b` rendered into a path goes as `a%20b`
/// instead of failing the request. `%`, `?`, `#` and the other delimiters are left, as the plan wrote them.
/// Only the bytes from `from` on are looked at (the base's prefix before them is the plan's, as it is).
#[inline]
fn escape_illegal(url: &mut String, from: usize) {
    if url.get(from..).is_some_and(|rendered| rendered.bytes().any(illegal_in_url)) {
        escape_from(url, from);
    }
}

#[inline(never)]
fn escape_from(url: &mut String, from: usize) {
    let Some(rendered) = url.get(from..) else { return };
    let mut escaped = String::with_capacity(url.len() + 16);
    escaped.push_str(url.get(..from).unwrap_or_default());
    for b in rendered.bytes() {
        if illegal_in_url(b) {
            escaped.push('%');
            escaped.push(char::from(HEX[usize::from(b >> 4)]));
            escaped.push(char::from(HEX[usize::from(b & 15)]));
        } else {
            escaped.push(char::from(b));
        }
    }
    *url = escaped;
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn illegal_in_url(b: u8) -> bool {
    b <= b' ' || b >= 0x7f || matches!(b, b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}')
}

/// The body and the Content-Type it implies (`Err` when the plan's content type is not a valid header value).
type BodyAndType = (Bytes, Option<Result<HeaderValue, ()>>);

fn body(graph: &Graph, node: &RequestNode, scope: &Arc<Scope>) -> Result<BodyAndType, RenderError> {
    let body = &node.step.body;
    let t = &graph.templates;
    let r = |tpl| t.render(tpl, scope).map_err(RenderError::from);
    Ok(match body {
        Body::None => (Bytes::new(), None),
        Body::Form(fields) => {
            let mut ser = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in fields {
                ser.append_pair(k, &r(v)?);
            }
            (Bytes::from(ser.finish()), Some(Ok(HeaderValue::from_static("application/x-www-form-urlencoded"))))
        }
        Body::Multipart(parts) => {
            let boundary = scope.with_rng(|rng| {
                let tail: String = (0..24)
                    .map(|_| char::from(b"0123456789abcdefghijklmnopqrstuvwxyz"[rng.random_range(0..36)]))
                    .collect();
                format!("planrun-{tail}")
            });
            let mut out = BytesMut::new();
            for part in parts {
                out.put_slice(format!("--{boundary}\r\n").as_bytes());
                match part {
                    Part::Text { name, value } => {
                        out.put_slice(
                            format!("Content-Disposition: form-data; name=\"{}\"\r\n\r\n", quote(name)).as_bytes(),
                        );
                        out.put_slice(r(value)?.as_bytes());
                    }
                    Part::File { name, filename, content_type, bytes } => {
                        let head = format!(
                            "Content-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\nContent-Type: {content_type}\r\n\r\n",
                            quote(name),
                            quote(filename)
                        );
                        out.put_slice(head.as_bytes());
                        out.put_slice(bytes);
                    }
                }
                out.put_slice(b"\r\n");
            }
            out.put_slice(format!("--{boundary}--\r\n").as_bytes());
            let content_type = HeaderValue::try_from(format!("multipart/form-data; boundary={boundary}"));
            (out.freeze(), Some(content_type.map_err(|_| ())))
        }
        Body::Json(_) => {
            let json = node.json.as_ref().ok_or_else(|| RenderError("the JSON body was not compiled".into()))?;
            let text = t.render_json(json, scope).map_err(|e| match e {
                JsonError::Template(e) => RenderError::from(e),
                JsonError::Value(e) => RenderError(format!("json value: {e}")),
            })?;
            (Bytes::from(text), Some(Ok(HeaderValue::from_static("application/json"))))
        }
        Body::Raw { body, content_type } => {
            let value = content_type.as_ref().map(|_| node.content_type.clone().ok_or(()));
            (Bytes::from(r(body)?), value)
        }
    })
}

fn quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A request as dry-run shows it: head and body, with Authorization values and `masks` as `***`.
pub fn masked(request: &WireRequest, masks: &Masks) -> Vec<u8> {
    let mut head = String::with_capacity(256);
    head.push_str(&format!("{} {} HTTP/1.1\r\n", request.method, request.target.path_and_query()));
    for (n, v) in request.lines() {
        let value = if *n == http::header::AUTHORIZATION || *n == http::header::PROXY_AUTHORIZATION {
            "***".into()
        } else {
            String::from_utf8_lossy(v.as_bytes()).into_owned()
        };
        head.push_str(&format!("{}: {value}\r\n", title_case(n.as_str())));
    }
    head.push_str("\r\n");
    let mut out = masks.mask(&head).into_owned().into_bytes();
    out.extend_from_slice(&masks.mask_bytes(&request.body));
    out
}

/// A request as dry-run shows it over HTTP/2: the fields of its HEADERS frame as the engine gives them to
/// HPACK (pseudo-header fields first, lowercase names, one a line), a blank line and the body, with
/// Authorization values and `masks` as `***`.
pub fn masked_h2(request: &WireRequest, masks: &Masks) -> Result<Vec<u8>, RenderError> {
    let mut head = h2_fields(request)?;
    head.push('\n');
    let mut out = masks.mask(&head).into_owned().into_bytes();
    out.extend_from_slice(&masks.mask_bytes(&request.body));
    Ok(out)
}

/// The fields of `request`'s HEADERS frame, `name: value` a line (pseudo-header fields first, lowercase
/// names), Authorization values as `***`, not yet masked: [`masked_h2`]'s head, and `--http-debug`'s.
pub(crate) fn h2_fields(request: &WireRequest) -> Result<String, RenderError> {
    let fields = crate::http::h2_head(request).map_err(|f| RenderError(f.message))?;
    let mut head = String::with_capacity(256);
    for (n, v) in &fields {
        let value = if n == http::header::AUTHORIZATION.as_str() || n == http::header::PROXY_AUTHORIZATION.as_str() {
            "***".into()
        } else {
            String::from_utf8_lossy(v.as_bytes())
        };
        head.push_str(&format!("{n}: {value}\n"));
    }
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::{escape_illegal, form_safe};

    #[test]
    fn illegal_url_bytes_are_percent_encoded_and_the_rest_kept() {
        let mut url = "http://h:1/k/a b/Café?q=\"x\"&r=%41#f".to_string();
        escape_illegal(&mut url, 0);
        assert_eq!(url, "http://h:1/k/a%20b/Caf%C3%A9?q=%22x%22&r=%41#f");
        let mut after = "http://h/a b|/x y".to_string();
        escape_illegal(&mut after, 13);
        assert_eq!(after, "http://h/a b|/x%20y", "the prefix before `from` is left as it is");
        assert!(http::Uri::try_from(url.as_str()).is_ok());
        for b in 0..=127u8 {
            let mut one = format!("/{}", char::from(b));
            escape_illegal(&mut one, 0);
            assert!(http::Uri::try_from(one.as_str()).is_ok(), "byte {b}: {one}");
        }
    }

    #[test]
    fn form_safe_bytes_are_the_ones_form_encoding_keeps() {
        for b in 0..=127u8 {
            let encoded: String = url::form_urlencoded::byte_serialize(&[b]).collect();
            assert_eq!(form_safe(b), encoded.as_bytes() == [b], "byte {b}");
        }
        assert!((128..=255u8).all(|b| !form_safe(b)));
    }
}
