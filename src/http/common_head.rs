//! The response head servers usually send, read in one pass: `HTTP/1.0` or `HTTP/1.1`, a three-digit status,
//! a reason, then `Name: value` lines, every line ending in CRLF. On the GET benchmark httparse's general
//! parser was an eighth of planrun's instructions a request; this pass reads the same head in about a
//! quarter of that, values eight bytes at a time.
//!
//! It accepts only a subset of what httparse accepts and reads it the same way (tests/http_common_head.rs
//! compares the two on generated heads). Anything else (bare LF line ends, leading empty lines, obs-text in
//! the reason, more than [`STACK_HEADERS`] lines, an error, a head not yet complete) returns `None`, and
//! httparse decides: the grammar planrun accepts and every error it reports stay httparse's.

use super::limits::STACK_HEADERS;

/// The status line of a head read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusLine<'a> {
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    /// The three digits, as a number (not yet checked to be a status code).
    pub code: u16,
    /// The reason phrase: tab, space and visible ASCII only.
    pub reason: &'a [u8],
}

/// Reads the complete head at the start of `buf`, calling `line` with each header's name and value (the
/// value without the spaces around it, a slice of `buf`); returns the head's length and its status line.
/// `None`: not a complete head of the common form; `line` may have been called for some lines by then.
pub fn parse<'a>(buf: &'a [u8], mut line: impl FnMut(&'a [u8], &'a [u8])) -> Option<(usize, StatusLine<'a>)> {
    let (start, _) = buf.split_first_chunk::<13>()?;
    let [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor @ (b'0' | b'1'), b' ', h @ b'0'..=b'9', t @ b'0'..=b'9', o @ b'0'..=b'9', b' '] =
        *start
    else {
        return None;
    };
    let code = u16::from(h - b'0') * 100 + u16::from(t - b'0') * 10 + u16::from(o - b'0');
    let reason_end = value_end(buf, start.len());
    let reason = buf.get(start.len()..reason_end).filter(|r| r.is_ascii())?;
    let status = StatusLine { minor: minor - b'0', code, reason };
    let mut at = crlf(buf, reason_end)?;
    let mut lines = 0;
    loop {
        if let Some(end) = crlf(buf, at) {
            return Some((end, status));
        }
        let name_end = name_end(buf, at);
        if name_end == at || buf.get(name_end) != Some(&b':') {
            return None;
        }
        let mut value_start = name_end + 1;
        while let Some(b' ' | b'\t') = buf.get(value_start) {
            value_start += 1;
        }
        let end = value_end(buf, value_start);
        let next = crlf(buf, end)?;
        lines += 1;
        if lines > STACK_HEADERS {
            return None;
        }
        let mut value = buf.get(value_start..end)?;
        while let [rest @ .., b' ' | b'\t'] = value {
            value = rest;
        }
        line(buf.get(at..name_end)?, value);
        at = next;
    }
}

/// Where the line that ends at `at` with CRLF goes on, if it does.
#[inline]
fn crlf(buf: &[u8], at: usize) -> Option<usize> {
    (buf.get(at..)?.first_chunk::<2>()? == b"\r\n").then_some(at + 2)
}

/// RFC 9110's tchar: the bytes of a header name.
const TOKEN: [bool; 256] = {
    let mut map = [false; 256];
    let mut b = 0;
    while b < 256 {
        map[b] = matches!(b as u8, b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'!' | b'#' | b'$' | b'%' | b'&'
            | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~');
        b += 1;
    }
    map
};

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGH: u64 = u64::from_le_bytes([0x80; 8]);

/// The end of the header name starting at `at`: the first byte that is not a tchar. (Eight bytes at a time,
/// as values are, cost more here: names are short.)
#[inline]
fn name_end(buf: &[u8], at: usize) -> usize {
    let rest = buf.get(at..).unwrap_or_default();
    at + rest.iter().position(|&b| !TOKEN[usize::from(b)]).unwrap_or(rest.len())
}

/// Whether a byte may be in a header value or a reason phrase: tab, space, visible ASCII, obs-text.
fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (b >= b' ' && b != 0x7f)
}

/// The end of the value starting at `at`: the first byte that [`is_value_byte`] refuses (CR, where the line
/// is well formed), or the end of `buf`. Eight bytes at a time while eight are left.
#[inline]
fn value_end(buf: &[u8], mut at: usize) -> usize {
    while let Some(word) = buf.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let w = u64::from_le_bytes(*word);
        // A lane's high bit is set in `control` when its byte is below 0x20, and in `del` when it is 0x7f. A
        // borrow can set a lane falsely only above a lane that is set rightly, so the lowest set lane is the
        // first byte to stop at.
        let control = w.wrapping_sub(ONES * 0x20) & !w;
        let x = w ^ (ONES * 0x7f);
        let del = x.wrapping_sub(ONES) & !x;
        let stop = (control | del) & HIGH;
        if stop == 0 {
            at += 8;
            continue;
        }
        at += (stop.trailing_zeros() / 8) as usize;
        if buf.get(at) != Some(&b'\t') {
            return at;
        }
        at += 1;
    }
    while let Some(&b) = buf.get(at) {
        if !is_value_byte(b) {
            break;
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_at_a_time_scan_stops_where_the_byte_at_a_time_one_does() {
        let naive = |b: &[u8]| b.iter().position(|&b| !is_value_byte(b)).unwrap_or(b.len());
        for len in 1..=24 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut input = vec![b'a'; len];
                    input[at] = byte;
                    assert_eq!(value_end(&input, 0), naive(&input), "{input:?}");
                }
            }
        }
        // Neighbours across a word's lanes, where a borrow could leak into the next lane.
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let input = [b' ', b'~', b'\t', a, b, 0x80, b'!', b'0', b'z', 0xff];
                assert_eq!(value_end(&input, 0), naive(&input), "{input:?}");
                assert_eq!(value_end(&input, 2), 2 + naive(&input[2..]), "{input:?}");
            }
        }
    }

    #[test]
    fn a_usual_head_is_read_here_and_an_unusual_one_is_left_to_httparse() {
        let head = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 01 Dec 2026 23:10:00 GMT\r\n\
                     Content-Type: text/plain \t\r\nContent-Length: 2\r\nX-Empty:\r\nConnection: keep-alive\r\n\r\nok";
        let mut lines = Vec::new();
        let (len, status) = parse(head, |n, v| lines.push((n, v))).expect("a usual head");
        assert_eq!(len, head.len() - 2);
        assert_eq!(status, StatusLine { minor: 1, code: 200, reason: b"OK" });
        assert_eq!(lines[2], (&b"Content-Type"[..], &b"text/plain"[..]));
        assert_eq!(lines[4], (&b"X-Empty"[..], &b""[..]));
        assert_eq!(lines.len(), 6);
        for unusual in [
            &b"HTTP/1.1 200 OK\nA: b\r\n\r\n"[..],
            b"\r\nHTTP/1.1 200 OK\r\n\r\n",
            b"HTTP/1.1 200\r\n\r\n",
            b"HTTP/1.1 200 \xe9t\xe9\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nA : b\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n b\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nA: b\r\n",
            b"HTTP/2.0 200 OK\r\n\r\n",
        ] {
            assert_eq!(parse(unusual, |_, _| {}), None, "{:?}", String::from_utf8_lossy(unusual));
        }
        let many = format!("HTTP/1.1 200 OK\r\n{}\r\n", "A: b\r\n".repeat(STACK_HEADERS + 1));
        assert_eq!(parse(many.as_bytes(), |_, _| {}), None);
    }
}
