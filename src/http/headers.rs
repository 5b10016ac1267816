//! A response's headers, kept as the head's bytes and made into an `http::HeaderMap` only when something
//! reads them: most samples need only the status, the framing and the Content-Type, which the one parse in
//! [`super::decode`] already found. Assertions, extractors, cookies, redirects and `--http-debug` ask.

use std::cell::OnceCell;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};

/// The headers of one response.
#[derive(Debug, Clone, Default)]
pub struct Headers {
    /// The final response's head as it came, status line included.
    raw: Bytes,
    /// Where the Content-Type value is in `raw`.
    content_type: Option<(u32, u32)>,
    /// Whether a Set-Cookie line is there.
    set_cookie: bool,
    /// Whether a Content-Encoding line is there: only then are the body's codings looked up.
    encoded: bool,
    /// Built on the first lookup.
    map: OnceCell<Box<HeaderMap>>,
}

impl Headers {
    /// The headers of the head `raw`, already parsed once: `content_type` is the value's place in it.
    pub(super) fn new(raw: Bytes, content_type: Option<(u32, u32)>, set_cookie: bool) -> Self {
        Self { raw, content_type, set_cookie, encoded: false, map: OnceCell::new() }
    }

    /// The same headers, `encoded` saying whether a Content-Encoding line is there.
    pub(super) fn encoded(self, encoded: bool) -> Self {
        Self { encoded, ..self }
    }

    /// Whether a Content-Encoding line is there (see [`super::content_coding`]).
    pub fn content_encoded(&self) -> bool {
        self.encoded
    }

    /// Headers that came as a map (HTTP/2's, HPACK-decoded by h2).
    pub(super) fn from_map(map: HeaderMap) -> Self {
        // One pass over the few names a response has costs less than hashing for each of the two.
        let (mut set_cookie, mut encoded) = (false, false);
        for name in map.keys() {
            set_cookie |= name == http::header::SET_COOKIE;
            encoded |= name == http::header::CONTENT_ENCODING;
        }
        Self { raw: Bytes::new(), content_type: None, set_cookie, encoded, map: OnceCell::from(Box::new(map)) }
    }

    /// The first Content-Type value, when it is visible ASCII (what `HeaderValue::to_str` accepts).
    pub fn content_type(&self) -> Option<&[u8]> {
        match self.content_type {
            Some((start, len)) => visible(&self.raw, start, len),
            None if self.raw.is_empty() => {
                let value = self.map.get()?.get(http::header::CONTENT_TYPE)?;
                value.to_str().is_ok().then(|| value.as_bytes())
            }
            None => None,
        }
    }

    /// Whether the response sets cookies.
    pub fn sets_cookies(&self) -> bool {
        self.set_cookie
    }

    /// Every header, as a map (built once, on the first call).
    pub fn map(&self) -> &HeaderMap {
        self.map.get_or_init(|| Box::new(build(&self.raw)))
    }

    /// The first value of a header.
    pub fn get(&self, name: &str) -> Option<&HeaderValue> {
        self.map().get(name)
    }

    /// Every header line, in order.
    pub fn iter(&self) -> http::header::Iter<'_, HeaderValue> {
        self.map().iter()
    }
}

/// The `len` bytes at `start` of `head`, when they are visible ASCII (what `HeaderValue::to_str` accepts).
/// They are a parsed header value, so tab, space, visible ASCII or obs-text: ASCII is enough to ask.
pub(super) fn visible(head: &[u8], start: u32, len: u32) -> Option<&[u8]> {
    let bytes = head.get(start as usize..(start as usize).checked_add(len as usize)?)?;
    bytes.is_ascii().then_some(bytes)
}

/// The map of a head that [`super::decode::parse_head`] accepted: every name and value was checked then,
/// so a line that does not convert cannot happen; it would be left out rather than fail the sample.
fn build(raw: &Bytes) -> HeaderMap {
    super::decode::with_httparse(raw, |parsed, res| {
        let mut map = HeaderMap::with_capacity(res.headers.len());
        if !matches!(parsed, Ok(httparse::Status::Complete(_))) {
            return map;
        }
        for h in res.headers.iter() {
            // httparse's value is a slice of `raw`: the map's values share it rather than copy it.
            let start = (h.value.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
            let end = start.checked_add(h.value.len()).filter(|&end| end <= raw.len() && start <= end);
            let value = match end {
                Some(end) => HeaderValue::from_maybe_shared(raw.slice(start..end)),
                None => HeaderValue::from_bytes(h.value),
            };
            if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(h.name.as_bytes()), value) {
                map.append(name, value);
            }
        }
        map
    })
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::super::decode::{parse_head, Parsed};
    use super::*;

    fn headers(head: &[u8]) -> Headers {
        match parse_head(head, &Method::GET) {
            Ok(Some(Parsed::Final(_, h))) => h.headers,
            other => panic!("not a final head: {other:?}"),
        }
    }

    #[test]
    fn the_map_built_later_has_every_line_in_order_and_the_first_pass_found_what_it_looks_for() {
        let h = headers(
            b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\ncontent-TYPE: text/html; charset=utf-8\r\nX-A: 1\r\n\
              set-cookie: b=2\r\nContent-Type: image/png\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(h.content_type(), Some(&b"text/html; charset=utf-8"[..]), "the first Content-Type, as hyper's get");
        assert!(h.sets_cookies());
        let cookies: Vec<_> = h.map().get_all("set-cookie").iter().map(|v| v.as_bytes().to_vec()).collect();
        assert_eq!(cookies, [b"a=1".to_vec(), b"b=2".to_vec()]);
        assert_eq!(h.get("x-a").map(HeaderValue::as_bytes), Some(&b"1"[..]));
        assert_eq!(h.iter().count(), 6);
    }

    #[test]
    fn a_head_of_more_lines_than_the_stack_holds_keeps_them_all() {
        let lines: String = (0..1000).map(|i| format!("X-{i}: v{i}\r\n")).collect();
        let h = headers(format!("HTTP/1.1 200 OK\r\n{lines}Set-Cookie: a=1\r\nContent-Length: 0\r\n\r\n").as_bytes());
        assert_eq!(h.iter().count(), 1002);
        assert_eq!(h.get("x-999").map(HeaderValue::as_bytes), Some(&b"v999"[..]));
        assert!(h.sets_cookies(), "a line past the first hundred is read by the first pass too");
    }

    #[test]
    fn a_content_type_that_is_not_text_is_none_and_no_cookie_line_is_no_cookies() {
        let h = headers("HTTP/1.1 200 OK\r\nContent-Type: tëxt\r\nContent-Length: 0\r\n\r\n".as_bytes());
        assert_eq!(h.content_type(), None);
        assert!(!h.sets_cookies());
        assert_eq!(h.get("content-type").map(HeaderValue::as_bytes), Some("tëxt".as_bytes()));
        assert!(Headers::default().map().is_empty());
    }
}
