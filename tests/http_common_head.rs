//! The one-pass reader of the usual response head (`common_head`) against httparse, which it stands in front
//! of: whenever it reads a head, httparse reads the same bytes as a complete head of the same length, with the
//! same version, status code, reason and header lines in the same order. It may decline any head (httparse
//! then decides), but it must not decline the heads servers usually send, or it saves nothing.

use planrun::http::common_head;
use proptest::prelude::*;

/// What the reader made of `buf`, checked against httparse; whether the reader took the head.
fn agrees(buf: &[u8]) -> bool {
    let mut lines = Vec::new();
    let Some((len, status)) = common_head::parse(buf, |n, v| lines.push((n.to_vec(), v.to_vec()))) else {
        return false;
    };
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut res = httparse::Response::new(&mut headers);
    let shown = String::from_utf8_lossy(buf);
    assert_eq!(res.parse(buf), Ok(httparse::Status::Complete(len)), "{shown:?}");
    assert_eq!(res.version, Some(status.minor), "{shown:?}");
    assert_eq!(res.code, Some(status.code), "{shown:?}");
    assert_eq!(res.reason.map(str::as_bytes), Some(status.reason), "{shown:?}");
    let theirs: Vec<_> = res.headers.iter().map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec())).collect();
    assert_eq!(lines, theirs, "{shown:?}");
    true
}

const USUAL: &[u8] = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Tue, 01 Dec 2026 23:10:00 GMT\r\n\
    Content-Type: application/octet-stream\r\nContent-Length: 2\r\nX-Odd:  \tv\t a l \t\r\nX-None:\r\n\
    Connection: keep-alive\r\n\r\nok";

#[test]
fn every_byte_value_at_every_place_of_a_usual_head_reads_as_httparse_reads_it() {
    assert!(agrees(USUAL), "the usual head is read in one pass");
    let mut taken = 0;
    for at in 0..USUAL.len() {
        for byte in 0..=255u8 {
            let mut head = USUAL.to_vec();
            head[at] = byte;
            taken += usize::from(agrees(&head));
        }
    }
    assert!(taken > USUAL.len() * 128, "most single-byte changes still make a usual head: {taken}");
}

#[test]
fn every_prefix_and_every_inserted_or_removed_byte_reads_as_httparse_reads_it() {
    for end in 0..USUAL.len() - 2 {
        assert!(!agrees(&USUAL[..end]), "an incomplete head is left to httparse ({end} bytes)");
    }
    for at in 0..USUAL.len() {
        let mut removed = USUAL.to_vec();
        removed.remove(at);
        agrees(&removed);
        for byte in [b'\r', b'\n', b' ', b'\t', b':', 0, 0x7f, 0x80, 0xff, b'a'] {
            let mut inserted = USUAL.to_vec();
            inserted.insert(at, byte);
            agrees(&inserted);
        }
    }
}

#[test]
fn one_hundred_lines_are_read_and_the_hundred_and_first_is_left_to_httparse() {
    let head = |n: usize| format!("HTTP/1.1 200 OK\r\n{}\r\n", "A: b\r\n".repeat(n));
    assert!(agrees(head(100).as_bytes()));
    assert!(!agrees(head(101).as_bytes()));
}

/// Bytes that tend to matter to a head's grammar, and some that do not.
fn head_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => prop::sample::select(b"aZ09-_ ~!/.,;=\"".to_vec()),
        2 => prop::sample::select(b"\r\n\t :".to_vec()),
        1 => any::<u8>(),
    ]
}

fn status_line() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec!["HTTP/1.1", "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/1.", ""]),
        prop::sample::select(vec![" ", "  ", "", "\t"]),
        prop_oneof![(0u16..1000).prop_map(|c| format!("{c:03}")), Just("20".to_string()), Just("2x0".to_string())],
        prop_oneof![
            3 => Just(" OK".as_bytes().to_vec()),
            1 => Just(Vec::new()),
            2 => proptest::collection::vec(head_byte(), 0..12).prop_map(|r| [b" ".to_vec(), r].concat()),
        ],
        prop::sample::select(vec!["\r\n", "\r\n", "\n", "\r", ""]),
    )
        .prop_map(|(v, sp, code, reason, end)| {
            [v.as_bytes(), sp.as_bytes(), code.as_bytes(), &reason, end.as_bytes()].concat()
        })
}

fn header_line() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![
            3 => "[A-Za-z][A-Za-z0-9-]{0,16}".prop_map(String::into_bytes),
            1 => proptest::collection::vec(head_byte(), 0..8),
        ],
        prop::sample::select(vec![": ", ":", ":\t ", " :", "", ":  "]),
        proptest::collection::vec(head_byte(), 0..40),
        prop::sample::select(vec!["\r\n", "\r\n", "\r\n", "\n", "\r", " \r\n", "\t\r\n"]),
    )
        .prop_map(|(name, sep, value, end)| [&name[..], sep.as_bytes(), &value, end.as_bytes()].concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    #[test]
    fn generated_heads_read_as_httparse_reads_them(
        lead in prop::sample::select(vec!["", "", "", "\r\n", "\n"]),
        status in status_line(),
        lines in proptest::collection::vec(header_line(), 0..8),
        end in prop::sample::select(vec!["\r\n", "\r\n", "\n", "", "\r", " \r\n"]),
        body in proptest::collection::vec(any::<u8>(), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let head = [lead.as_bytes(), &status, &lines.concat(), end.as_bytes(), &body].concat();
        agrees(&head);
        agrees(&head[..cut.index(head.len() + 1)]);
    }

    #[test]
    fn usual_heads_are_read_in_one_pass(
        minor in 0u8..2,
        code in 100u16..1000,
        reason in "[ -~]{0,20}",
        lines in proptest::collection::vec(("[A-Za-z][A-Za-z0-9-]{0,16}", "[ -~]{0,60}"), 0..12),
    ) {
        let head = format!(
            "HTTP/1.{minor} {code} {reason}\r\n{}\r\n",
            lines.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect::<String>()
        );
        prop_assert!(agrees(head.as_bytes()), "{head:?}");
    }
}
