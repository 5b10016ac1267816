//! Result columns written as JMeter writes them, checked against raw servers that say unusual things.

use crate::common;

use common::{read_jtl, run_ok, RawServer, TempDir};

/// Answers every request with `response`, keeping the connection.
fn answering(response: &'static [u8]) -> RawServer {
    RawServer::start(response, u64::MAX)
}

fn one_request(dir: &TempDir, server: &RawServer) -> std::collections::HashMap<String, String> {
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: p\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      - name: r\n        \
             request: {{ url: \"http://{}/x\" }}\n        assert: [{{ status: [200, 520] }}]\n",
            server.addr()
        ),
    );
    let (_, jtl) = run_ok(dir, &plan, &[]);
    assert_eq!(jtl.rows.len() as u64, server.requests());
    read_jtl(&dir.join("out.jtl")).rows[0].clone()
}

#[test]
fn the_reason_phrase_is_the_one_the_server_sent() {
    let dir = TempDir::new("reason_phrase");
    let custom = answering(b"HTTP/1.1 200 Fine, thanks\r\nContent-Length: 2\r\n\r\nok");
    assert_eq!(one_request(&dir, &custom)["responseMessage"], "Fine, thanks");
    // hyper's parser (httparse) drops a phrase with bytes beyond ASCII: written empty, not as `OK`.
    let cafe = answering("HTTP/1.1 200 Café au lait\r\nContent-Length: 2\r\n\r\nok".as_bytes());
    assert_eq!(one_request(&dir, &cafe)["responseMessage"], "");
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
