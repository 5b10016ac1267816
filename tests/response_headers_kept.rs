//! A response's headers are copied out of the read buffer only when something reads them (a header
//! assertion or extractor, an `expr:` assertion, `--http-debug`), a Set-Cookie line is there or the status
//! is 3xx. Whatever a plan asks of the headers must see them whole, in steps next to ones that ask nothing,
//! and the cookie jar, redirects and the dataType column must work without being asked. Every test counts
//! the server's requests against the rows.

use crate::common;

use common::{run_ok, RawServer, Server, TempDir};

fn rows(dir: &TempDir, plan: String) -> Vec<std::collections::HashMap<String, String>> {
    run_ok(dir, &dir.write("plan.yaml", plan), &["--quiet"]).1.rows
}

#[test]
fn steps_that_read_headers_see_them_and_steps_that_do_not_still_get_cookies_and_redirects() {
    let server = Server::start();
    let dir = TempDir::new("headers_kept");
    let plan = format!(
        r#"name: headers
defaults: {{ base_url: "{}" }}
thread_groups:
  - name: g
    threads: 2
    loops: 3
    steps:
      - name: login
        request: {{ url: /set-cookie }}
        assert:
          - status: 200
      - name: plain
        request: {{ url: /ok }}
        assert:
          - body_contains: ok
      - name: echo
        request: {{ url: /echo-cookie }}
        assert:
          - body_contains: session=abc123
      - name: moved
        request: {{ url: /redirect }}
        assert:
          - status: 200
          - body_contains: ok
      - name: dated
        request: {{ url: /ok }}
        extract:
          date: {{ header: Date }}
        assert:
          - header: {{ name: date, matches: "GMT$" }}
          - expr: "{{{{ response.headers['date'] is endingwith 'GMT' }}}}"
      - name: again
        request: {{ url: "/ok?date={{{{ date | urlencode }}}}" }}
"#,
        server.url()
    );
    let rows = rows(&dir, plan);
    assert_eq!(rows.len(), 2 * 3 * 6);
    let failed: Vec<_> = rows.iter().filter(|r| r["success"] != "true").collect();
    assert!(failed.is_empty(), "{failed:?}");
    // The redirect was followed (its Location read without being asked for): two requests, one row.
    assert_eq!(server.count(), rows.len() + 2 * 3);
    let extracted: Vec<_> = server.requests().iter().filter_map(|r| r.query().get("date").cloned()).collect();
    assert_eq!(extracted.len(), 6);
    assert!(extracted.iter().all(|d| d.ends_with("GMT")), "{extracted:?}");
}

#[test]
fn the_data_type_comes_from_the_head_whether_its_headers_are_kept_or_not() {
    let server = RawServer::start(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nX-Token: abc\r\nContent-Length: 2\r\n\r\n{}",
        u64::MAX,
    );
    let dir = TempDir::new("headers_data_type");
    let plan = format!(
        r#"name: types
defaults: {{ base_url: "{}" }}
thread_groups:
  - name: g
    threads: 2
    loops: 2
    steps:
      - name: plain
        request: {{ url: /a }}
      - name: token
        request: {{ url: /b }}
        assert:
          - header: {{ name: X-Token, equals: abc }}
      - name: wrong
        request: {{ url: /c }}
        assert:
          - header: {{ name: x-token, equals: zzz }}
"#,
        server.url()
    );
    let rows = rows(&dir, plan);
    assert_eq!(rows.len(), 2 * 2 * 3);
    assert_eq!(server.requests(), rows.len() as u64);
    assert!(rows.iter().all(|r| r["dataType"] == "text"), "{rows:?}");
    for r in &rows {
        match r["label"].as_str() {
            "wrong" => assert!(r["success"] == "false" && r["failureMessage"].contains("abc"), "{r:?}"),
            _ => assert_eq!(r["success"], "true", "{r:?}"),
        }
    }
}

/// A head made of the same bytes as the one before is not parsed again (src/run/http/head_memo.rs): what it is
/// depends on the request too. Here GET and HEAD get the same head (hyper sends HEAD's Content-Length), and
/// heads that differ only in their length alternate, on one kept-alive connection a user.
#[test]
fn the_same_head_for_another_method_or_a_head_one_byte_off_is_read_for_what_it_is() {
    let server = Server::start();
    let dir = TempDir::new("headers_same_head");
    let plan = format!(
        r#"name: same-head
defaults: {{ base_url: "{}" }}
thread_groups:
  - name: g
    threads: 2
    loops: 4
    steps:
      - name: get
        request: {{ url: /ok }}
        assert:
          - body_contains: ok
      - name: head
        request: {{ method: HEAD, url: /ok }}
      - name: longer
        request: {{ url: /status/200 }}
        assert:
          - body_contains: status 200
      - name: again
        request: {{ url: /ok }}
        assert:
          - body_contains: ok
"#,
        server.url()
    );
    let rows = rows(&dir, plan);
    assert_eq!(rows.len(), 2 * 4 * 4);
    assert_eq!(server.count(), rows.len());
    assert!(rows.iter().all(|r| r["success"] == "true" && r["responseCode"] == "200"), "{rows:?}");
    assert_eq!(server.connections(), 2, "every response left its connection usable");
    let bytes = |label: &str| -> Vec<u64> {
        rows.iter().filter(|r| r["label"] == label).map(|r| r["bytes"].parse().unwrap()).collect()
    };
    for ((get, head), longer) in bytes("get").iter().zip(bytes("head")).zip(bytes("longer")) {
        assert_eq!(head + 2, *get, "HEAD's response has no body");
        assert_eq!(longer, get + 8 + 1, "a body of 10 bytes, not 2 (and a length of two digits)");
    }
}
