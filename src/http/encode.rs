//! A request head as it goes on the wire: request line, the request's headers in their order (names
//! title-cased, as planrun has always sent them), and Content-Length when the body needs one.

use http::header::CONTENT_LENGTH;

use super::error::Failure;
use super::outcome::ErrorKind;
use super::request::WireRequest;

/// Over TLS, bodies up to this size are copied after the head, so that both go out in the same records.
pub const INLINE_BODY: usize = 16 * 1024;

/// Over plain TCP, bodies up to this size are copied after the head; a larger one goes out beside it in the
/// same vectored write instead (a 10 KB JSON body copied once more per request was 5% of its cost).
pub const INLINE_BODY_PLAIN: usize = 1024;

/// Writes `req`'s head (and its body, when it is at most `inline_max` bytes) into `out`; returns whether
/// the body was included. A byte that would end a line or the head early (CR, LF, NUL) refuses the request;
/// the types of [`WireRequest`] already refuse them in header values, methods and names, and the URL's are
/// percent-encoded when it is rendered, so this is the last guard, not the first.
pub fn encode(req: &WireRequest, out: &mut Vec<u8>, inline_max: usize) -> Result<bool, Failure> {
    out.clear();
    let target = request_target(req.target.path_and_query())?;
    let method = req.method.as_str();
    if !method.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Failure::new(ErrorKind::BadRequest, format!("invalid method `{method}`")));
    }
    out.reserve(64 + target.len() + req.headers.len() * 32 + req.body.len().min(inline_max));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let mut has_length = false;
    for (name, value) in req.lines() {
        let value = value.as_bytes();
        if breaks_line(value) {
            return Err(Failure::new(
                ErrorKind::BadRequest,
                format!("header {name}: a line break or NUL in its value"),
            ));
        }
        has_length |= name == CONTENT_LENGTH;
        match titled(name.as_str()) {
            Some(titled) => out.extend_from_slice(titled.as_bytes()),
            None => title_case(name.as_str(), out),
        }
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
    let inline = req.body.len() <= inline_max;
    if inline {
        out.extend_from_slice(&req.body);
    }
    Ok(inline)
}

/// The longest request target sent.
const MAX_TARGET: usize = u16::MAX as usize - 1;

/// The origin-form target: the path and query, without a fragment (never sent); only visible ASCII.
fn request_target(path_and_query: &str) -> Result<&str, Failure> {
    match plain_target(path_and_query.as_bytes()) {
        Some(end) => Ok(path_and_query.get(..end).unwrap_or("/")),
        None => checked_target(path_and_query),
    }
}

/// Where the target ends (at a `#` or the end), when it is the common case: not empty, not too long, every
/// byte before the end visible ASCII; `None` sends it to [`checked_target`], which says what is wrong. One
/// pass, eight bytes at a time, instead of a search for `#` and then a check.
fn plain_target(bytes: &[u8]) -> Option<usize> {
    let stops = |word: &[u8]| {
        let w = word_of(word);
        (invisible(w) | zero_byte(w ^ (ONES * u64::from(b'#')))) & HIGH != 0
    };
    // Whole words, then the last eight bytes (overlapping the words before them), so no byte is looked at
    // alone unless a word holds a `#` or a byte that may not be sent.
    let mut at = 0;
    let mut words = bytes.chunks_exact(8);
    if !words.by_ref().any(|word| {
        let stop = stops(word);
        at += usize::from(!stop) * 8;
        stop
    }) {
        let last = bytes.len().checked_sub(8).and_then(|from| bytes.get(from..));
        if last.is_some_and(|word| !stops(word)) && !bytes.is_empty() && bytes.len() <= MAX_TARGET {
            return Some(bytes.len());
        }
    }
    let end = match bytes.get(at..).unwrap_or_default().iter().position(|&b| !b.is_ascii_graphic() || b == b'#') {
        Some(i) if bytes.get(at + i) == Some(&b'#') => at + i,
        Some(_) => return None,
        None => bytes.len(),
    };
    (end > 0 && end <= MAX_TARGET).then_some(end)
}

/// [`request_target`] step by step, for a target that is empty, too long or holds a byte it may not.
#[cold]
fn checked_target(path_and_query: &str) -> Result<&str, Failure> {
    let target = match memchr::memchr(b'#', path_and_query.as_bytes()) {
        Some(at) => path_and_query.get(..at).unwrap_or("/"),
        None => path_and_query,
    };
    let target = if target.is_empty() { "/" } else { target };
    let invalid = |why: &str| Failure::new(ErrorKind::BadRequest, format!("invalid request target `{target}`: {why}"));
    // The limit and the wording of the `http` crate's URI parser, which planrun used before.
    if target.len() > MAX_TARGET {
        return Err(invalid("uri too long"));
    }
    if !all_graphic(target.as_bytes()) {
        return Err(invalid("invalid uri character"));
    }
    Ok(target)
}

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

fn word_of(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    u64::from_ne_bytes(w)
}

/// A word whose lanes have the high bit set where `w`'s byte is not visible ASCII (`!` to `~`). Some byte is
/// below 0x21 exactly when `below` has a high bit set, and above 0x7e exactly when `above` has (adding 1 takes
/// 0x7f to 0x80; bytes with the high bit already set are caught by `| w`). A borrow or carry across lanes can
/// only come from a byte that is already caught.
fn invisible(w: u64) -> u64 {
    let below = w.wrapping_sub(ONES * 0x21) & !w;
    let above = w.wrapping_add(ONES) | w;
    below | above
}

/// A word with the high bit set in some lane exactly when some byte of `w` is 0 (the classic test: a borrow
/// into a lane only comes from a zero byte below it, so "some" stays exact).
fn zero_byte(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGH
}

/// Whether `bytes` holds CR, LF or NUL; eight bytes at a time from eight on (a Host value is 14 or more). All
/// three are below 0x0e, and of the bytes a header value may hold only tab is: words with no byte that low
/// are cleared by one test.
fn breaks_line(bytes: &[u8]) -> bool {
    let breaks = |w: u64| {
        w.wrapping_sub(ONES * 0x0e) & !w & HIGH != 0
            && (zero_byte(w) | zero_byte(w ^ (ONES * u64::from(b'\r'))) | zero_byte(w ^ (ONES * u64::from(b'\n')))) != 0
    };
    let Some(last) = bytes.last_chunk::<8>() else {
        return breaks_line_bytewise(bytes);
    };
    // The last word overlaps the words before it when the length is not a multiple of eight.
    bytes.chunks_exact(8).any(|w| breaks(word_of(w))) || breaks(word_of(last))
}

/// [`breaks_line`] a byte at a time.
fn breaks_line_bytewise(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| matches!(b, b'\r' | b'\n' | 0))
}

/// Whether every byte is visible ASCII (`!` to `~`), eight at a time: a request target is checked on every
/// request, and byte by byte that was a fifth of encoding the head.
fn all_graphic(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        if invisible(word_of(word)) & HIGH != 0 {
            return false;
        }
    }
    words.remainder().iter().all(u8::is_ascii_graphic)
}

/// The title-cased form of the names nearly every request sends, written out: comparing a name with a few
/// known ones costs less than title-casing it byte by byte.
fn titled(name: &str) -> Option<&'static str> {
    Some(match name {
        "host" => "Host",
        "user-agent" => "User-Agent",
        "accept" => "Accept",
        "accept-encoding" => "Accept-Encoding",
        "accept-language" => "Accept-Language",
        "authorization" => "Authorization",
        "cache-control" => "Cache-Control",
        "connection" => "Connection",
        "content-length" => "Content-Length",
        "content-type" => "Content-Type",
        "cookie" => "Cookie",
        _ => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::super::request::WireRequest;
    use super::{all_graphic, breaks_line, breaks_line_bytewise, checked_target, encode, request_target};
    use crate::http::target::Target;
    use http::header::{HeaderValue, ACCEPT, HOST};

    #[test]
    fn host_is_the_targets_sent_first_and_once_whatever_the_list_holds() {
        let target = Target::absolute("http://example.test:8080/p?q=1".into()).unwrap();
        let mut out = Vec::new();
        for headers in [
            vec![(ACCEPT, HeaderValue::from_static("*/*"))],
            vec![(HOST, HeaderValue::from_static("elsewhere")), (ACCEPT, HeaderValue::from_static("*/*"))],
        ] {
            let req = WireRequest {
                method: http::Method::GET,
                target: target.clone(),
                headers,
                body: Default::default(),
                version: Default::default(),
            };
            encode(&req, &mut out, super::INLINE_BODY).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out),
                "GET /p?q=1 HTTP/1.1\r\nHost: example.test:8080\r\nAccept: */*\r\n\r\n"
            );
        }
    }

    #[test]
    fn the_one_pass_target_agrees_with_the_step_by_step_one() {
        let long = format!("/{}", "a".repeat(super::MAX_TARGET));
        let mut cases: Vec<String> = vec!["".into(), "#".into(), "#x".into(), "/".into(), "/#".into(), long];
        for len in 1..=20 {
            for at in 0..len {
                for byte in [b'#', b' ', 0, 0x7f, 0x80, 0xff, b'!', b'~', b'"', b'"' ^ 0x80] {
                    let mut input = vec![b'a'; len];
                    input[0] = b'/';
                    input[at] = byte;
                    cases.push(String::from_utf8_lossy(&input).into_owned());
                    // A second special byte after the first, where a fragment would hide it.
                    if at + 1 < len {
                        input[at + 1] = b' ';
                        cases.push(String::from_utf8_lossy(&input).into_owned());
                    }
                }
            }
        }
        for case in cases {
            let one = request_target(&case).map_err(|f| f.message);
            let step = checked_target(&case).map_err(|f| f.message);
            assert_eq!(one, step, "{case:?}");
        }
    }

    #[test]
    fn the_names_written_out_are_their_title_case() {
        for name in ["host", "user-agent", "accept", "accept-encoding", "accept-language", "authorization"]
            .into_iter()
            .chain(["cache-control", "connection", "content-length", "content-type", "cookie"])
        {
            let mut cased = Vec::new();
            super::title_case(name, &mut cased);
            assert_eq!(super::titled(name).map(str::as_bytes), Some(cased.as_slice()));
        }
        assert_eq!(super::titled("x-trace"), None);
    }

    #[test]
    fn the_word_at_a_time_check_agrees_with_the_byte_at_a_time_one() {
        let naive = |b: &[u8]| b.iter().all(u8::is_ascii_graphic);
        every_byte_everywhere(|input| assert_eq!(all_graphic(input), naive(input), "{input:?}"));
        assert!(all_graphic(b""));
    }

    #[test]
    fn the_word_at_a_time_line_break_test_answers_as_the_byte_at_a_time_one() {
        every_byte_everywhere(|value| assert_eq!(breaks_line(value), breaks_line_bytewise(value), "{value:?}"));
        assert!(!breaks_line(b"") && !breaks_line(b"127.0.0.1:8080\tx\x7f\xff"));
    }

    /// Calls `check` with every byte value at every place of inputs of 1 to 24 bytes (otherwise `a`), then
    /// with every pair of neighbours across a word's lanes, where a borrow or a carry could leak.
    fn every_byte_everywhere(check: impl Fn(&[u8])) {
        for len in 1..=24 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut input = vec![b'a'; len];
                    input[at] = byte;
                    check(&input);
                }
            }
        }
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                check(&[b'!', b'~', b'x', a, b, b'~', b'!', b'0', b'z']);
            }
        }
    }
}
