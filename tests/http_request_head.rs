//! The request head planrun writes: no byte a template renders can end a header line or the head early
//! (CR, LF, NUL), and the head is what the plan says, headers in its order.

mod common;

use common::{num, run_ok, Server, TempDir};

fn plan(url: &str, steps: &str) -> String {
    format!(
        "name: head\ndefaults: {{ base_url: \"{url}\" }}\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n{steps}"
    )
}

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
    let plan = dir.write("plan.yaml", plan(&server.url(), steps));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
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
    let plan = dir.write("plan.yaml", plan(&server.url(), steps));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 1);
    let got = server.requests();
    assert_eq!(got.len(), 1, "{}", jtl.text);
    assert_eq!(got[0].target, "/ok%0D%0AX-Injected:%201");
    assert!(got[0].header("x-injected").is_none());
}
