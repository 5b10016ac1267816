//! The request head planrun writes: no byte a template renders can end a header line or the head early
//! (CR, LF, NUL), and the head is what the plan says, headers in its order.

use crate::common;

use common::{num, LoadRun, Ran, Server, TempDir};

#[test]
fn a_line_break_rendered_into_a_header_fails_the_sample_and_sends_nothing() {
    let server = Server::start();
    let dir = TempDir::new("head_injection");
    let steps = r#"      - name: crlf
        request:
          url: /ok
          headers: { X-A: "{{ 'a\r\nX-Injected: 1' }}" }
      - name: lf
        request:
          url: /ok
          headers: { X-A: "{{ 'a\nX-Injected: 1' }}" }
      - name: nul
        request:
          url: /ok
          headers: { X-A: "{{ 'a\u0000b' }}" }
      - name: fine
        request:
          url: /ok
          headers: { X-A: "{{ 'a b' }}" }
"#;
    let Ran { jtl, .. } = LoadRun::new("head", &server.url()).steps(steps).run(&dir, &[]);
    for label in ["crlf", "lf", "nul"] {
        let row = jtl.one(label);
        assert_eq!(row["responseCode"], "Non HTTP response code: BadRequest", "{label}: {row:?}");
        assert!(row["responseMessage"].contains("header x-a: invalid value"), "{label}: {row:?}");
        assert_eq!((num(row, "bytes"), num(row, "sentBytes")), (0, 0), "{label}");
    }
    assert_eq!(jtl.one("fine")["success"], "true");
    let got = server.requests();
    assert_eq!(got.len(), 1, "only the request without a line break was sent: {got:?}");
    assert!(got.iter().all(|r| r.header("x-injected").is_none()));
    assert_eq!(got[0].header("x-a"), Some("a b"));
}

#[test]
fn a_line_break_rendered_into_the_url_is_percent_encoded_not_sent_raw() {
    let server = Server::start();
    let dir = TempDir::new("head_url_injection");
    let steps = r#"      - name: path
        request:
          url: "/ok{{ '\r\nX-Injected: 1' }}"
        assert: [ { status: 404 } ]
"#;
    let Ran { jtl, .. } = LoadRun::new("head", &server.url()).steps(steps).run(&dir, &[]);
    assert_eq!(jtl.rows.len(), 1);
    let got = server.requests();
    assert_eq!(got.len(), 1, "{}", jtl.text);
    assert_eq!(got[0].target, "/ok%0D%0AX-Injected:%201");
    assert!(got[0].header("x-injected").is_none());
}

#[test]
fn a_step_repeated_or_alternating_sends_each_header_once_with_its_own_values() {
    // A user keeps its last request's header list for the next one: a step whose headers are all fixed finds
    // them still there. What follows them (cookie, content type and length) must be made afresh each time.
    let server = Server::start();
    let dir = TempDir::new("head_reused_list");
    let post = r#"      - loop: 3
        steps:
          - name: post
            request:
              method: POST
              url: /ok
              headers: { X-Fixed: one }
              form: { n: "{{ counter('n') }}" }
"#;
    let others = r#"      - name: cookie
        request: { url: /set-cookie }
      - loop: 2
        steps:
          - name: templated
            request:
              url: /ok
              headers: { X-Fixed: two, X-Rendered: "r{{ counter('r') }}" }
"#;
    // Each iteration: three POSTs in a row, the cookie, two templated requests; the second iteration's POSTs
    // carry the cookie.
    let steps = format!("{post}{others}");
    let Ran { jtl, .. } = LoadRun::new("head", &server.url()).users(1, 2).steps(&steps).run(&dir, &[]);
    let got = server.requests();
    assert_eq!(got.len(), jtl.rows.len(), "the server's count equals the rows");
    assert_eq!(got.len(), 12);
    for (i, r) in got.iter().enumerate() {
        let step = ["post", "post", "post", "cookie", "templated", "templated"][i % 6];
        let cookie_sent = i > 3;
        assert_eq!(r.headers_named("user-agent"), vec!["planrun"], "request {i}: {r:?}");
        assert_eq!(r.headers_named("cookie"), if cookie_sent { vec!["session=abc123"] } else { vec![] }, "request {i}");
        match step {
            "post" => {
                assert_eq!(r.headers_named("x-fixed"), vec!["one"], "request {i}");
                assert_eq!(r.headers_named("content-length").len(), 1, "request {i}: {r:?}");
                assert_eq!(r.headers_named("content-type"), vec!["application/x-www-form-urlencoded"], "request {i}");
            }
            "cookie" => assert!(r.headers_named("x-fixed").is_empty() && r.headers_named("content-length").is_empty()),
            _ => {
                assert_eq!(r.headers_named("x-fixed"), vec!["two"], "request {i}");
                assert_eq!(r.headers_named("x-rendered").len(), 1, "request {i}");
                assert!(r.headers_named("content-type").is_empty(), "request {i}: {r:?}");
            }
        }
    }
}
