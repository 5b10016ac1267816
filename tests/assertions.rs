//! Assertions: passing ones leave the sample successful, a failing one fails it with a message naming the
//! check; failed samples are not a failed run.

use crate::common;

use common::{num, run_ok, summary_total, Server, TempDir};

const PLAN: &str = r#"
name: asserts
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: status-pass
        request: { url: /ok }
        assert:
          - status: 200
      - name: status-fail
        request: { url: /status/503 }
        assert:
          - status: 202
      - name: status-list-pass
        request: { url: /accepted }
        assert:
          - status: [200, 202]
          - status: "2xx"
      - name: status-list-fail
        request: { url: /status/404 }
        assert:
          - status: [200, "2xx"]
      - name: contains-pass
        request: { url: /accepted }
        assert:
          - body_contains: "Accepted for delivery"
      - name: contains-fail
        request: { url: /ok }
        assert:
          - body_contains: "Accepted"
      - name: not-contains-pass
        request: { url: /accepted }
        assert:
          - body_not_contains: "Rejected"
      - name: not-contains-fail
        request: { url: /accepted }
        assert:
          - body_not_contains: "Accepted"
      - name: matches-pass
        request: { url: /accepted }
        assert:
          - body_matches: "^\\d: Accepted"
      - name: matches-fail
        request: { url: /ok }
        assert:
          - body_matches: "^\\d+$"
      - name: max-ms-pass
        request: { url: /ok }
        assert:
          - max_ms: 30000
      - name: max-ms-fail
        request: { url: /delay/300 }
        assert:
          - max_ms: 100
      - name: max-ms-duration-fail
        request: { url: /delay/300 }
        assert:
          - max_ms: 100ms
      - name: max-bytes-pass
        request: { url: /ok }
        assert:
          - max_bytes: 100000
      - name: max-bytes-fail
        request: { url: /ok }
        assert:
          - max_bytes: 10
      - name: first-failure-wins
        request: { url: /ok }
        assert:
          - status: 200
          - body_contains: "first"
          - body_contains: "second"
      - name: no-status-assertion-503
        request: { url: /status/503 }
      - name: no-status-assertion-404-with-body-check
        request: { url: /status/404 }
        assert:
          - body_contains: "status"
      - name: status-accepts-503
        request: { url: /status/503 }
        assert:
          - status: 503
"#;

/// The 1-based line of the `nth` (from 0) occurrence of `needle` in the plan.
fn line_of(plan: &str, needle: &str, nth: usize) -> usize {
    plan.lines().enumerate().filter(|(_, l)| l.contains(needle)).nth(nth).map(|(i, _)| i + 1).unwrap()
}

#[test]
fn assertions_pass_and_fail_with_messages_naming_the_check() {
    let server = Server::start();
    let dir = TempDir::new("assertions");
    let text = PLAN.replace("@BASE@", &server.url());
    let plan = dir.write("plan.yaml", &text);
    let (out, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 19, "{}", jtl.text);
    assert_eq!(server.count(), 19);

    for label in [
        "status-pass",
        "status-list-pass",
        "contains-pass",
        "not-contains-pass",
        "matches-pass",
        "max-ms-pass",
        "max-bytes-pass",
        "status-accepts-503",
    ] {
        let row = jtl.one(label);
        assert_eq!(row["success"], "true", "{label}: {row:?}");
        assert_eq!(row["failureMessage"], "", "{label}");
    }

    let failing: [(&str, &str, String); 9] = [
        ("status-fail", "status expected 202, got 503", format!("(line {})", line_of(&text, "- status: 202", 0))),
        ("status-list-fail", "status expected one of 200, 2xx, got 404", String::new()),
        ("contains-fail", r#"body expected to contain "Accepted""#, String::new()),
        ("not-contains-fail", r#"body expected not to contain "Accepted""#, String::new()),
        ("matches-fail", r"body expected to match /^\d+$/", String::new()),
        ("max-ms-fail", "expected at most 100 ms", format!("(line {})", line_of(&text, "- max_ms: 100", 0))),
        ("max-ms-duration-fail", "expected at most 100 ms", String::new()),
        ("max-bytes-fail", "expected at most 10", String::new()),
        ("first-failure-wins", r#"body expected to contain "first""#, String::new()),
    ];
    for (label, problem, line) in &failing {
        let row = jtl.one(label);
        assert_eq!(row["success"], "false", "{label}: {row:?}");
        let msg = &row["failureMessage"];
        assert!(msg.contains(problem), "{label}: failureMessage {msg:?} does not say {problem:?}");
        assert!(msg.contains(line.as_str()), "{label}: failureMessage {msg:?} does not name {line}");
    }
    assert!(!jtl.one("first-failure-wins")["failureMessage"].contains("second"), "only the first failure is named");

    // A failed assertion does not change what came back.
    assert_eq!(jtl.one("status-fail")["responseCode"], "503");
    assert_eq!(jtl.one("status-fail")["responseMessage"], "Service Unavailable");
    assert_eq!(jtl.one("contains-fail")["responseCode"], "200");

    // max_ms measures the sample: 300 ms of server delay is at least 300 ms of elapsed.
    for label in ["max-ms-fail", "max-ms-duration-fail"] {
        let row = jtl.one(label);
        let elapsed = num(row, "elapsed");
        assert!(elapsed >= 300, "{label}: elapsed {elapsed} < the server's 300 ms delay");
        assert!(num(row, "Latency") >= 300, "{label}: the head came after the delay");
        assert!(row["failureMessage"].contains(&format!("response took {elapsed} ms")), "{row:?}");
    }
    // max_bytes measures the response as received: "was N bytes" where N is the bytes column.
    let row = jtl.one("max-bytes-fail");
    assert!(row["failureMessage"].contains(&format!("response was {} bytes", row["bytes"])), "{row:?}");

    // An error status fails the sample even without a status assertion.
    for label in ["no-status-assertion-503", "no-status-assertion-404-with-body-check"] {
        let row = jtl.one(label);
        assert_eq!(row["success"], "false", "{label}: {row:?}");
    }

    // Failed samples are counted, but do not fail the run (exit 0 was checked by run_ok).
    let (samples, errors) = summary_total(&common::stdout(&out));
    assert_eq!(samples, 19);
    let failed = jtl.rows.iter().filter(|r| r["success"] == "false").count();
    assert_eq!(failed, 11);
    assert_eq!(errors, format!("{:.2}%", failed as f64 * 100.0 / 19.0));
}
