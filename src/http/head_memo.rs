//! The last final response head parsed on a thread, kept with what the parse found, so that the next head made
//! of the same bytes is recognised by one comparison instead of parsed again.
//!
//! A server answering one endpoint sends the same head again and again: the same status line and the same
//! header lines, the `Date` value changing once a second. The parse ([`super::decode`]) is a function of the
//! head's bytes and of whether the request was HEAD or CONNECT, nothing else; so when the bytes at the start
//! of a read equal the remembered head, its summary is the parse's answer, exactly. Any other head is parsed,
//! and becomes the remembered one.
//!
//! A miss costs the comparison and the copy of the new head. A server whose heads always differ (a request id
//! in each) would pay that on every response for nothing, so after [`PATIENCE`] misses in a row the memo stands
//! aside for a number of heads that doubles with each further miss, up to [`MAX_ASIDE`].

use std::cell::RefCell;

use http::Method;

use super::summary::Summary;

/// Heads longer than this are parsed every time: comparing and copying them would cost more than they save.
const MAX_REMEMBERED: usize = 1024;

/// Misses in a row before the memo stands aside.
const PATIENCE: u32 = 4;

/// The most heads the memo stands aside for at a time.
const MAX_ASIDE: u32 = 256;

/// What in the request the parse of a head depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A response to HEAD has no body, whatever its head says.
    Head,
    /// A 2xx response to CONNECT is a tunnel, refused.
    Connect,
    /// Any other method.
    Other,
}

impl Kind {
    pub(super) fn of(method: &Method) -> Kind {
        if *method == Method::HEAD {
            Kind::Head
        } else if *method == Method::CONNECT {
            Kind::Connect
        } else {
            Kind::Other
        }
    }
}

/// What the memo says of a head.
pub(super) enum Recalled {
    /// The remembered head: its summary.
    Same(Summary),
    /// Another head: parse it and [`remember`] it.
    Other,
    /// The memo stands aside: parse the head, do not remember it.
    Aside,
}

struct Memo {
    /// The head's bytes, status line to the empty line.
    head: Vec<u8>,
    kind: Kind,
    summary: Summary,
}

#[derive(Default)]
struct Last {
    memo: Option<Memo>,
    /// Misses since the last hit.
    misses: u32,
    /// Heads left to stand aside for.
    aside: u32,
}

thread_local! {
    static LAST: RefCell<Last> = RefCell::new(Last::default());
}

/// Whether the head at the start of `buf` is the remembered one, for a request of the same kind.
pub(super) fn recall(buf: &[u8], kind: Kind) -> Recalled {
    LAST.with(|last| {
        let Ok(mut last) = last.try_borrow_mut() else { return Recalled::Aside };
        if last.aside > 0 {
            last.aside -= 1;
            return Recalled::Aside;
        }
        if let Some(memo) = &last.memo {
            if memo.kind == kind && buf.get(..memo.head.len()) == Some(memo.head.as_slice()) {
                let summary = memo.summary.clone();
                last.misses = 0;
                return Recalled::Same(summary);
            }
        }
        last.misses = last.misses.saturating_add(1);
        if last.misses > PATIENCE {
            last.aside = 1u32.checked_shl(last.misses - PATIENCE).unwrap_or(MAX_ASIDE).min(MAX_ASIDE);
        }
        Recalled::Other
    })
}

/// Remembers `summary`, the parse of the head at the start of `buf` for a request of this kind.
pub(super) fn remember(buf: &[u8], kind: Kind, summary: &Summary) {
    let Some(head) = buf.get(..summary.len()).filter(|h| h.len() <= MAX_REMEMBERED) else { return };
    LAST.with(|last| {
        let Ok(mut last) = last.try_borrow_mut() else { return };
        match last.memo.as_mut() {
            Some(memo) => {
                memo.head.clear();
                memo.head.extend_from_slice(head);
                memo.kind = kind;
                memo.summary = summary.clone();
            }
            None => last.memo = Some(Memo { head: head.to_vec(), kind, summary: summary.clone() }),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::decode::{parse_head_keeping, Framing, Parsed};

    fn parse(buf: &[u8], method: &Method, headers: bool) -> (usize, u16, Framing, bool) {
        match parse_head_keeping(buf, method, headers) {
            Ok(Some(Parsed::Final(len, head))) => (len, head.status, head.framing, head.headers.get("x-a").is_some()),
            other => panic!("{other:?}"),
        }
    }

    const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 2\r\n\r\n";

    #[test]
    fn a_head_of_the_same_bytes_is_recalled_for_a_request_of_the_same_kind_only() {
        let body = [HEAD, b"ok"].concat();
        assert_eq!(parse(&body, &Method::GET, false), (HEAD.len(), 200, Framing::Length(2), false));
        assert!(matches!(recall(&body, Kind::Other), Recalled::Same(_)));
        assert!(matches!(recall(&body, Kind::Head), Recalled::Other));
        assert!(matches!(recall(&HEAD[..HEAD.len() - 1], Kind::Other), Recalled::Other), "a head not yet whole");
        // Recalled, the headers are still copied when asked for.
        assert_eq!(parse(&body, &Method::POST, true), (HEAD.len(), 200, Framing::Length(2), true));
        assert_eq!(parse(HEAD, &Method::HEAD, false), (HEAD.len(), 200, Framing::Empty, false));
        let other = b"HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(parse(other, &Method::GET, false), (other.len(), 200, Framing::Length(3), false));
        assert!(matches!(recall(HEAD, Kind::Other), Recalled::Other), "the last head parsed is the one remembered");
    }

    #[test]
    fn errors_interim_heads_and_long_heads_are_not_remembered() {
        let remembered = || matches!(recall(HEAD, Kind::Other), Recalled::Same(_));
        parse(HEAD, &Method::GET, false);
        assert!(remembered());
        assert!(parse_head_keeping(b"HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\n", &Method::GET, false).is_err());
        assert!(remembered());
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
        assert!(matches!(parse_head_keeping(interim, &Method::GET, false), Ok(Some(Parsed::Interim(_)))));
        assert!(remembered());
        let long = format!("HTTP/1.1 200 OK\r\nX-Long: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(MAX_REMEMBERED));
        assert_eq!(parse(long.as_bytes(), &Method::GET, false).2, Framing::Empty);
        assert!(remembered());
    }

    #[test]
    fn after_misses_in_a_row_the_memo_stands_aside_for_longer_each_time_and_a_hit_ends_that() {
        let heads: Vec<String> =
            (0..2000).map(|i| format!("HTTP/1.1 200 OK\r\nX-Id: {i}\r\nContent-Length: 0\r\n\r\n")).collect();
        let mut compared = 0;
        for (i, head) in heads.iter().enumerate() {
            match recall(head.as_bytes(), Kind::Other) {
                Recalled::Same(_) => panic!("head {i} is new"),
                Recalled::Other => compared += 1,
                Recalled::Aside => {}
            }
            assert_eq!(parse(head.as_bytes(), &Method::GET, false).2, Framing::Empty);
        }
        assert!(compared < 20, "{compared} of 2000 heads compared");
        // The same head again and again: once the memo looks again, it remembers it and hits from then on.
        let same = heads[0].as_bytes();
        let mut hits = 0;
        for _ in 0..2 * MAX_ASIDE {
            parse(same, &Method::GET, false);
            hits += usize::from(matches!(recall(same, Kind::Other), Recalled::Same(_)));
        }
        assert!(hits > MAX_ASIDE as usize / 2, "{hits}");
    }
}
