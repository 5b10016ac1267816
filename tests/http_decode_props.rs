//! Properties of planrun's HTTP/1.1 response decoder over generated responses (proptest): it never panics,
//! whatever the bytes and however they are split into reads, and never reads past a declared length: a
//! sized body hands over at most its Content-Length, and the response takes no byte beyond it.

use crate::common;

use common::read_response::read_response;
use http::Method;
use planrun::http::decode::Framing;
use proptest::prelude::*;

/// Splits `bytes` at the given points (taken modulo its length).
fn reads(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for p in points.into_iter().chain([bytes.len()]) {
        out.push(bytes[at..p].to_vec());
        at = p;
    }
    out
}

fn read(method: &Method, bytes: &[u8], cuts: &[usize]) -> common::read_response::Outcome {
    let reads = reads(bytes, cuts);
    let views: Vec<&[u8]> = reads.iter().map(Vec::as_slice).collect();
    read_response(method, &views)
}

fn head_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Content-Length: 5".to_string()),
        (0u64..400).prop_map(|n| format!("Content-Length: {n}")),
        Just("Transfer-Encoding: chunked".to_string()),
        Just("Transfer-Encoding: gzip".to_string()),
        Just("Connection: close".to_string()),
        "[A-Za-z-]{1,12}: [ -~]{0,20}",
        "[ -~]{1,30}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600),
                                   cuts in proptest::collection::vec(any::<usize>(), 0..6),
                                   head in any::<bool>()) {
        let method = if head { Method::HEAD } else { Method::GET };
        let out = read(&method, &bytes, &cuts);
        prop_assert!(out.body <= bytes.len() as u64);
        prop_assert!(out.consumed <= bytes.len() as u64);
    }

    #[test]
    fn generated_responses_never_panic_and_never_read_past_their_length(
        status in prop_oneof![Just(200u16), Just(204), Just(304), Just(100), Just(101), 100u16..1000],
        lines in proptest::collection::vec(head_line(), 0..6),
        body in proptest::collection::vec(any::<u8>(), 0..400),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let mut bytes = format!("HTTP/1.1 {status} X\r\n{}\r\n", lines.iter().map(|l| format!("{l}\r\n")).collect::<String>())
            .into_bytes();
        let head_len = bytes.len() as u64;
        bytes.extend_from_slice(&body);
        let out = read(&Method::GET, &bytes, &cuts);
        prop_assert!(out.body <= body.len() as u64, "{out:?}");
        if let Some(Framing::Length(n)) = out.framing {
            prop_assert!(out.body <= n, "a sized body hands over at most its length: {out:?}");
            if out.failure.is_none() {
                prop_assert_eq!(out.body, n);
                prop_assert_eq!(out.consumed, head_len + n, "no byte past the declared length is taken");
            }
        }
        // The same bytes read whole give the same outcome.
        prop_assert_eq!(read(&Method::GET, &bytes, &[]), out);
    }

    #[test]
    fn chunked_bodies_hand_over_exactly_their_chunks(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..80), 0..8),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        tail in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for c in &chunks {
            bytes.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
            bytes.extend_from_slice(c);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
        let complete = bytes.len() as u64;
        bytes.extend_from_slice(&tail);
        let out = read(&Method::GET, &bytes, &cuts);
        let total: usize = chunks.iter().map(Vec::len).sum();
        prop_assert!(out.failure.is_none(), "{out:?}");
        prop_assert_eq!(out.body, total as u64);
        prop_assert_eq!(out.consumed, complete);
        prop_assert_eq!(out.reusable, tail.is_empty());
    }
}
