//! Result columns written as JMeter writes them, checked against raw servers that say unusual things.

use crate::common;

use common::{read_jtl, run_ok, RawServer, TempDir};
use std::collections::HashMap;

/// Answers every request with `response`, keeping the connection.
fn answering(response: &'static [u8]) -> RawServer {
    RawServer::start(response, u64::MAX)
}

fn one_request(dir: &TempDir, server: &RawServer) -> HashMap<String, String> {
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: p\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      - name: r\n        \
             request: {{ url: \"http://{}/x\" }}\n        assert: [{{ status: [200, 520] }}]\n",
            server.addr()
        ),
    );
    // The JSON lines too, for the tests that compare both.
    let json = dir.join("out.jsonl");
    let (_, jtl) = run_ok(dir, &plan, &["--json", json.to_str().unwrap()]);
    assert_eq!(jtl.rows.len() as u64, server.requests());
    read_jtl(&dir.join("out.jtl")).rows[0].clone()
}

#[test]
fn the_reason_phrase_is_the_one_the_server_sent() {
    let dir = TempDir::new("reason_phrase");
    let custom = answering(b"HTTP/1.1 200 Fine, thanks\r\nContent-Length: 2\r\n\r\nok");
    assert_eq!(one_request(&dir, &custom)["responseMessage"], "Fine, thanks");
    let origin = answering(b"HTTP/1.1 520 Origin Error\r\nContent-Length: 0\r\n\r\n");
    let row = one_request(&dir, &origin);
    assert_eq!((row["responseCode"].as_str(), row["responseMessage"].as_str()), ("520", "Origin Error"));
    let standard = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(one_request(&dir, &standard)["responseMessage"], "OK");
}

#[test]
fn a_followed_redirect_writes_the_last_url_and_a_request_may_refuse_to_follow() {
    let server = common::Server::start();
    let dir = TempDir::new("redirect_url");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: p\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    \
             steps:\n      - name: followed\n        request: {{ url: /redirect }}\n      - name: kept\n        \
             request: {{ url: /redirect, follow_redirects: false }}\n        assert: [{{ status: 302 }}]\n",
            server.url()
        ),
    );
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(server.count(), 3, "two hops, then one request not followed");
    let followed = jtl.one("followed");
    assert_eq!((followed["responseCode"].as_str(), followed["success"].as_str()), ("200", "true"));
    assert_eq!(followed["URL"], format!("{}/ok", server.url()), "JMeter writes the final URL");
    let kept = jtl.one("kept");
    assert_eq!((kept["responseCode"].as_str(), kept["success"].as_str()), ("302", "true"), "{kept:?}");
    assert_eq!(kept["URL"], format!("{}/redirect", server.url()));
}

/// A reason phrase with bytes beyond ASCII is read as JMeter's HttpClient 4 reads it, one ISO-8859-1
/// character per byte: `Café` sent in ISO-8859-1 reads `Café`, sent in UTF-8 `CafÃ©`, in the JTL and the JSON
/// lines alike. No byte is dropped: the characters' code points are the bytes the server sent.
#[test]
fn a_reason_phrase_beyond_ascii_keeps_every_byte_as_jmeter_reads_it() {
    let dir = TempDir::new("reason_phrase_latin1");
    let cases: [(&'static [u8], &str); 3] = [
        ("HTTP/1.1 200 Café au lait\r\nContent-Length: 2\r\n\r\nok".as_bytes(), "CafÃ© au lait"),
        (b"HTTP/1.1 200 Caf\xe9 au lait\r\nContent-Length: 2\r\n\r\nok", "Café au lait"),
        (b"HTTP/1.1 520 \x80\xff \"quoted\", too\r\nContent-Length: 2\r\n\r\nok", "\u{80}\u{ff} \"quoted\", too"),
    ];
    for (response, message) in cases {
        let row = one_request(&dir, &answering(response));
        assert_eq!(row["responseMessage"], message, "{row:?}");
        assert_eq!(row["success"], "true", "{row:?}");
        let text = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
        let line: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(line["response_message"], message, "{text}");
        let sent: Vec<u8> = message.chars().map(|c| u8::try_from(u32::from(c)).unwrap()).collect();
        let line_end = response.iter().position(|&b| b == b'\r').unwrap();
        assert_eq!(&response[13..line_end], &sent[..], "the server's bytes, one character each");
    }
}
