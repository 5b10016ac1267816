//! `--http-debug[=full]` and `--http-debug-first N`: the exchanges of failed samples (or of the first N
//! requests) on stderr, in k6's layout, secrets masked; never on stdout.

use crate::common;

use common::{describe, planrun, stderr, stdout, LoadRun, Ran, Server, TempDir};

const SECRET: &str = "Sup3rS3cretKey";

/// A plan whose property `key` is a secret, without cookies.
fn plan(base: &str, threads: u32, loops: u32, steps: &str) -> LoadRun {
    LoadRun::new("debug", base)
        .top(&format!("properties:\n  key: {{ value: {SECRET}, secret: true }}"))
        .defaults("  cookies: false")
        .users(threads, loops)
        .steps(steps)
}

const STEPS: &str = r#"      - name: ok
        request: { url: /ok }
      - name: fail
        request:
          url: /status/503
          query: { key: "{{ props.key }}" }
          headers: { X-Key: "{{ props.key }}", Authorization: "Basic dXNlcjpwYXNz" }
"#;

/// The exchanges printed on stderr, one text each.
fn exchanges(err: &str) -> Vec<String> {
    err.split("--- http-debug: ").skip(1).map(|b| b.split("\nplanrun: ").next().unwrap_or(b).to_string()).collect()
}

#[test]
fn failed_samples_are_printed_with_their_heads_and_secrets_masked() {
    let server = Server::start();
    let dir = TempDir::new("http_debug_heads");
    let Ran { out, jtl, .. } = plan(&server.url(), 2, 3, STEPS).run(&dir, &["--http-debug"]);
    assert_eq!(server.count(), 12);
    assert_eq!(jtl.rows.len(), 12);
    let failed = jtl.rows.iter().filter(|r| r["success"] == "false").count();
    assert_eq!(failed, 6);

    let err = stderr(&out);
    let shown = exchanges(&err);
    assert_eq!(shown.len(), failed, "one exchange per failed sample:\n{err}");
    for text in &shown {
        assert!(text.starts_with("`fail` (g 1-"), "{text}");
        assert!(text.contains(" failed: 503 Service Unavailable\n"), "{text}");
        assert!(text.contains("\nRequest:\nGET /status/503?key=*** HTTP/1.1\nHost: 127.0.0.1:"), "{text}");
        assert!(text.contains("\nX-Key: ***\n") && text.contains("\nAuthorization: ***\n"), "{text}");
        assert!(text.contains("\nResponse:\nHTTP/1.1 503 Service Unavailable\n"), "{text}");
        assert!(text.contains("\nContent-Length: 10\n"), "the response's headers: {text}");
        assert!(!text.contains("status 503"), "heads only, no body: {text}");
    }
    assert!(!err.contains(SECRET), "{err}");
    let out_text = stdout(&out);
    assert!(!out_text.contains("http-debug") && !out_text.contains("Request:"), "stdout: {out_text}");
}

#[test]
fn full_adds_the_bodies_cut_at_2_kib_and_masked() {
    let server = Server::start();
    let dir = TempDir::new("http_debug_full");
    let steps = r#"      - name: big
        request: { url: /chunked/5000 }
        assert: [ { status: 201 } ]
      - name: echo
        request:
          method: POST
          url: /echo-cookie
          headers: { Cookie: "k={{ props.key }}" }
          json: { key: "{{ props.key }}", n: 1 }
        assert: [ { body_contains: nothing } ]
"#;
    let Ran { out, jtl, .. } = plan(&server.url(), 1, 2, steps).run(&dir, &["--http-debug=full", "--quiet"]);
    assert_eq!(server.count(), 4);
    assert_eq!(jtl.rows.len(), 4);
    let err = stderr(&out);
    let shown = exchanges(&err);
    assert_eq!(shown.len(), 4, "every sample failed:\n{err}");
    let body: String = (0..2048).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    for text in shown.iter().filter(|t| t.starts_with("`big`")) {
        assert!(text.contains("failed: Assertion failed (line "), "{text}");
        assert!(text.contains("\nTransfer-Encoding: chunked\n"), "{text}");
        assert!(text.contains(&format!("\n\n{body}\n... (2952 more bytes)\n")), "2 KiB of the body: {text}");
    }
    for text in shown.iter().filter(|t| t.starts_with("`echo`")) {
        assert!(text.contains("\nCookie: k=***\n"), "{text}");
        assert!(text.contains("\n\n{\"key\":\"***\",\"n\":1}\n"), "the request's body: {text}");
        assert!(text.contains("\nResponse:\nHTTP/1.1 200 OK\n"), "{text}");
        assert!(text.contains("\n\nk=***\n"), "the response's body: {text}");
    }
    assert_eq!(shown.iter().filter(|t| t.starts_with("`echo`")).count(), 2);
    assert!(!err.contains(SECRET), "{err}");
}

#[test]
fn first_n_shows_the_first_requests_whatever_their_outcome() {
    let server = Server::start();
    let dir = TempDir::new("http_debug_first");
    let steps = "      - name: ok\n        request: { url: /ok }\n";
    let Ran { out, jtl, .. } = plan(&server.url(), 2, 5, steps).run(&dir, &["--http-debug-first", "3", "--quiet"]);
    assert_eq!(server.count(), 10);
    assert_eq!(jtl.rows.len(), 10);
    let shown = exchanges(&stderr(&out));
    assert_eq!(shown.len(), 3, "{}", stderr(&out));
    for text in &shown {
        assert!(text.starts_with("`ok` (g 1-") && text.contains(") 200 OK\nRequest:\nGET /ok HTTP/1.1\n"), "{text}");
    }
}

#[test]
fn a_transport_error_shows_the_request_and_why_no_response_came() {
    let dir = TempDir::new("http_debug_refused");
    let refused = common::refused_url();
    let steps = "      - name: refused\n        request: { url: /x, timeout: 2s }\n";
    let Ran { out, jtl, .. } = plan(&refused, 1, 2, steps).run(&dir, &["--http-debug", "--quiet"]);
    assert_eq!(jtl.rows.len(), 2);
    let shown = exchanges(&stderr(&out));
    assert_eq!(shown.len(), 2);
    for text in &shown {
        assert!(text.contains("failed: ConnectionRefused: Connection refused\nRequest:\nGET /x HTTP/1.1\n"), "{text}");
        assert!(text.contains("\nNo response: ConnectionRefused: Connection refused\n"), "{text}");
    }
}

#[test]
fn the_jtl_on_stdout_holds_no_exchange() {
    let server = Server::start();
    let dir = TempDir::new("http_debug_stdout");
    let plan = dir.write("plan.yaml", plan(&server.url(), 1, 2, STEPS).yaml());
    let args = ["run", plan.to_str().unwrap(), "-o", "/dev/stdout", "--http-debug=full", "--quiet"];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(server.count(), 4);
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(",g 1-1,")).collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(!text.contains("http-debug") && !text.contains("Request:") && !text.contains("status 503"), "{text}");
    assert_eq!(exchanges(&stderr(&out)).len(), 2);
}

/// A 500 whose reason phrase and header value hold C1 controls in UTF-8 (U+009B, an 8-bit CSI, and U+0085),
/// and a raw 0x9B byte (shown as U+FFFD).
const C1_RESPONSE: &[u8] =
    b"HTTP/1.1 500 Oops\xC2\x9B2J\r\nX-Evil: a\xC2\x9B31mred\xC2\x85\r\nX-Raw: b\x9Bc\r\nContent-Length: 2\r\n\r\nno";

#[test]
fn control_characters_in_heads_are_escaped() {
    let server = common::RawServer::start(C1_RESPONSE, u64::MAX);
    let dir = TempDir::new("http_debug_c1");
    let steps = "      - name: evil\n        request: { url: /x }\n";
    let Ran { out, jtl, .. } = plan(&server.url(), 1, 3, steps).run(&dir, &["--http-debug", "--quiet"]);
    assert_eq!(server.requests(), 3);
    assert_eq!(jtl.rows.len(), 3);
    let shown = exchanges(&stderr(&out));
    assert_eq!(shown.len(), 3, "{}", stderr(&out));
    for text in &shown {
        assert!(text.contains("\nX-Evil: a\\u{9b}31mred\\u{85}\n"), "the header value: {text}");
    }
    for c1 in 0x80..=0x9Fu32 {
        let raw = char::from_u32(c1).unwrap().to_string();
        assert!(!out.stderr.windows(2).any(|w| w == raw.as_bytes()), "U+{c1:04X} raw on stderr:\n{}", stderr(&out));
    }
    assert!(!out.stderr.contains(&0x1B), "no ESC either");
}

#[test]
fn failed_samples_past_the_cap_are_counted_not_printed() {
    let server = Server::start();
    let steps = "      - name: fail\n        request: { url: /status/500 }\n";
    for (loops, extra, shown, left_out, max) in
        [(12, &["--http-debug-max", "5"][..], 5, 7, 5), (103, &[][..], 100, 3, 100)]
    {
        let dir = TempDir::new("http_debug_cap");
        let before = server.count();
        let mut args = vec!["--http-debug", "--quiet"];
        args.extend(extra);
        let Ran { out, jtl, .. } = plan(&server.url(), 1, loops, steps).run(&dir, &args);
        assert_eq!(server.count() - before, loops as usize);
        assert_eq!(jtl.rows.len(), loops as usize);
        let err = stderr(&out);
        assert_eq!(exchanges(&err).len(), shown, "{err}");
        let said = format!(
            "planrun: --http-debug: {left_out} more failed sample(s) not printed: past the first {max} (--http-debug-max)\n"
        );
        assert!(err.contains(&said), "{err}");
    }
}
