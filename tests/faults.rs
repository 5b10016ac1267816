//! Targets that fail: every attempted request is one failed row with a stable error kind and a specific
//! message; the run still completes (exit 0) and the summary counts every sample as an error.

use crate::common;

use std::time::Duration;

use common::late::{self, Late, LateServer};
use common::{num, refused_url, run_ok, summary_total, Fault, FaultServer, Jtl, Server, TempDir, GARBAGE};
use serde_json::Value;

const THREADS: usize = 2;
const LOOPS: usize = 2;
const STEPS: usize = 2;
const SAMPLES: usize = THREADS * LOOPS * STEPS;

fn plan(base: &str, path: &str, timeout: &str) -> String {
    format!(
        r#"
name: faults
defaults:
  base_url: "{base}"
  timeout: {timeout}
thread_groups:
  - name: g
    threads: {THREADS}
    loops: {LOOPS}
    steps:
      - name: first
        request: {{ url: "{path}" }}
      - name: second
        request: {{ method: POST, url: "{path}", form: {{ a: "1" }} }}
"#
    )
}

/// Runs the plan; checks the row count, that every row failed and that the summary agrees.
fn run_failing(test: &str, base: &str, path: &str, timeout: &str) -> Jtl {
    let dir = TempDir::new(test);
    let plan = dir.write("plan.yaml", plan(base, path, timeout));
    let (out, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), SAMPLES, "one row per attempted request:\n{}", jtl.text);
    for row in &jtl.rows {
        assert_eq!(row["success"], "false", "{row:?}");
        assert!(row["URL"].starts_with(base), "{row:?}");
        assert!(num(row, "Latency") <= num(row, "elapsed"), "{row:?}");
    }
    let mut threads: Vec<&str> = jtl.rows.iter().map(|r| r["threadName"].as_str()).collect();
    threads.sort();
    assert_eq!(threads, ["g 1-1", "g 1-1", "g 1-1", "g 1-1", "g 1-2", "g 1-2", "g 1-2", "g 1-2"]);
    let (samples, errors) = summary_total(&common::stdout(&out));
    assert_eq!(samples, SAMPLES as u64, "summary TOTAL samples");
    assert_eq!(errors, "100.00%");
    jtl
}

/// The rows account for every byte that crossed the wire, each counted once.
fn assert_wire_bytes(jtl: &Jtl, server_read: u64, server_written: u64) {
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    assert_eq!(sent, server_read, "sum of sentBytes = bytes the server read:\n{}", jtl.text);
    assert_eq!(got, server_written, "sum of bytes = bytes the server wrote:\n{}", jtl.text);
}

fn assert_transport_error(jtl: &Jtl, kind: &str, message: &str) {
    for row in &jtl.rows {
        assert_eq!(row["responseCode"], format!("Non HTTP response code: {kind}"), "{row:?}");
        let m = &row["responseMessage"];
        assert!(m.starts_with("Non HTTP response message: "), "{row:?}");
        assert!(m.contains(message), "responseMessage {m:?} does not say {message:?}");
        assert_eq!(row["dataType"], "", "no response, no dataType: {row:?}");
    }
}

#[test]
fn a_refused_port_gives_connection_refused_rows() {
    let base = refused_url();
    let jtl = run_failing("faults_refused", &base, "/ok", "2s");
    assert_transport_error(&jtl, "ConnectionRefused", "Connection refused");
    for row in &jtl.rows {
        assert_eq!(row["bytes"], "0", "nothing received: {row:?}");
        assert_eq!(row["sentBytes"], "0", "nothing sent: {row:?}");
    }
}

#[test]
fn a_stalled_server_gives_read_timeouts_after_the_timeout() {
    let server = FaultServer::start(Fault::Stall);
    let jtl = run_failing("faults_stall", &server.url(), "/ok", "300ms");
    assert_transport_error(&jtl, "ReadTimeout", "Read timed out after 300 ms");
    for row in &jtl.rows {
        assert!(num(row, "elapsed") >= 300, "a timeout of 300 ms ends no sooner: {row:?}");
        assert!(num(row, "sentBytes") > 0, "the request was sent: {row:?}");
        assert_eq!(row["bytes"], "0", "{row:?}");
    }
    assert_eq!(server.heads(), SAMPLES as u64, "each sample sent its request once");
    assert_wire_bytes(&jtl, server.bytes_read(), 0);
}

#[test]
fn a_server_answering_garbage_gives_invalid_response() {
    let server = FaultServer::start(Fault::Garbage);
    let jtl = run_failing("faults_garbage", &server.url(), "/ok", "5s");
    assert_transport_error(&jtl, "InvalidResponse", "Invalid HTTP response");
    for row in &jtl.rows {
        assert!(num(row, "sentBytes") > 0, "{row:?}");
    }
    assert_eq!(server.heads(), SAMPLES as u64, "each sample sent its request once");
    assert_eq!(server.bytes_written(), (GARBAGE.len() * SAMPLES) as u64);
}

#[test]
fn a_reset_connection_gives_connection_reset() {
    let server = FaultServer::start(Fault::Reset);
    let jtl = run_failing("faults_reset", &server.url(), "/ok", "5s");
    assert_transport_error(&jtl, "ConnectionReset", "Connection reset by peer");
    assert_eq!(server.heads(), SAMPLES as u64, "each sample sent its request once");
}

#[test]
fn a_connection_closed_before_the_response_gives_connection_reset() {
    let server = FaultServer::start(Fault::Close);
    let jtl = run_failing("faults_close", &server.url(), "/ok", "5s");
    assert_transport_error(&jtl, "ConnectionReset", "closed before the response was complete");
    assert_eq!(server.heads(), SAMPLES as u64, "each sample sent its request once");
}

#[test]
fn a_5xx_route_gives_failed_status_rows() {
    let server = Server::start();
    let jtl = run_failing("faults_5xx", &server.url(), "/status/500", "5s");
    for row in &jtl.rows {
        assert_eq!(row["responseCode"], "500", "{row:?}");
        assert_eq!(row["responseMessage"], "Internal Server Error");
        assert_eq!(row["dataType"], "", "the server sends no Content-Type: JMeter writes none");
        assert!(num(row, "bytes") > 0);
    }
    assert_eq!(server.count(), SAMPLES);
    assert_wire_bytes(&jtl, server.bytes_read(), server.bytes_written());
}

#[test]
fn a_response_slower_than_the_timeout_is_a_read_timeout() {
    // The timeout covers the whole request: a response slower than it is a ReadTimeout, not a late success.
    let server = Server::start();
    let jtl = run_failing("faults_slow", &server.url(), "/delay/400", "150ms");
    assert_transport_error(&jtl, "ReadTimeout", "Read timed out after 150 ms");
    for row in &jtl.rows {
        assert!(num(row, "elapsed") >= 150, "{row:?}");
    }
    assert_eq!(server.count(), SAMPLES, "each sample sent its request once");
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    assert_eq!(sent, server.bytes_read(), "sum of sentBytes = bytes the server read");
}

/// bytes and sentBytes of a sample whose connection failed after the request went out (reset, closed,
/// garbage answer) are what crossed the wire, once: the server read each request once and wrote only
/// `HELLO\r\n\r\n` (or nothing).
#[test]
fn failed_exchanges_count_their_wire_bytes_once() {
    let mut problems = Vec::new();
    for fault in [Fault::Reset, Fault::Close, Fault::Garbage] {
        let server = FaultServer::start(fault);
        let jtl = run_failing(&format!("faults_bytes_{fault:?}"), &server.url(), "/ok", "5s");
        assert_eq!(server.heads(), SAMPLES as u64, "{fault:?}: each sample sent its request once");
        let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
        let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
        if sent != server.bytes_read() {
            problems.push(format!("{fault:?}: sum of sentBytes {sent}, but the server read {}", server.bytes_read()));
        }
        if got != server.bytes_written() {
            problems.push(format!("{fault:?}: sum of bytes {got}, but the server wrote {}", server.bytes_written()));
        }
    }
    assert!(problems.is_empty(), "wire bytes miscounted:\n{}", problems.join("\n"));
}

/// RFC 9110 9.2.2: a client SHOULD NOT automatically retry a request with a non-idempotent method. A POST the
/// server read on a kept-alive connection and then dropped without answering is a failed sample
/// (ConnectionReset), not silently sent again on a new connection and reported as a success.
#[test]
fn a_post_dropped_on_a_kept_alive_connection_is_not_sent_again() {
    let server = FaultServer::start(Fault::AnswerOnceThenClose);
    let dir = TempDir::new("faults_no_retry");
    let plan = format!(
        r#"
name: no-retry
defaults:
  base_url: "{}"
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: first
        request: {{ method: POST, url: /orders, form: {{ n: "1" }} }}
      - name: second
        request: {{ method: POST, url: /orders, form: {{ n: "2" }} }}
"#,
        server.url()
    );
    let plan = dir.write("plan.yaml", plan);
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 2);
    assert_eq!(jtl.one("first")["success"], "true", "{}", jtl.text);
    assert_eq!(server.heads(), 2, "the server read {} requests for 2 samples:\n{}", server.heads(), jtl.text);
    let second = jtl.one("second");
    assert_eq!(second["success"], "false", "{second:?}");
    assert_eq!(second["responseCode"], "Non HTTP response code: ConnectionReset", "{second:?}");
}

#[test]
fn a_request_timeout_wins_over_the_default() {
    let server = Server::start();
    let dir = TempDir::new("faults_step_timeout");
    let plan = format!(
        r#"
name: step-timeout
defaults:
  base_url: "{}"
  timeout: 10s
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: slow
        request: {{ url: /delay/500, timeout: 200ms }}
      - name: patient
        request: {{ url: /delay/100 }}
"#,
        server.url()
    );
    let plan = dir.write("plan.yaml", plan);
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    let slow = jtl.one("slow");
    assert_eq!(slow["responseCode"], "Non HTTP response code: ReadTimeout", "{slow:?}");
    assert_eq!(slow["responseMessage"], "Non HTTP response message: Read timed out after 200 ms");
    assert!(num(slow, "elapsed") >= 200);
    let patient = jtl.one("patient");
    assert_eq!((patient["responseCode"].as_str(), patient["success"].as_str()), ("200", "true"), "{patient:?}");
}

/// Runs a plan of one GET against a [`LateServer`] with `--summary-json`: the rows, stdout and the summary JSON.
fn run_out_of_step(test: &str, server: &LateServer, threads: u32, loops: u32, think: &str) -> (Jtl, String, Value) {
    let dir = TempDir::new(test);
    let plan = format!(
        r#"
name: out-of-step
defaults:
  base_url: "{}"
  timeout: 5s
thread_groups:
  - name: g
    threads: {threads}
    loops: {loops}
    think_time: {think}
    steps:
      - name: get
        request: {{ url: /x }}
"#,
        server.url()
    );
    let plan = dir.write("plan.yaml", plan);
    let summary = dir.join("summary.json");
    let (out, jtl) = run_ok(&dir, &plan, &["--summary-json", summary.to_str().unwrap()]);
    assert_eq!(jtl.rows.len() as u64, server.requests(), "one row per request the server read:\n{}", jtl.text);
    assert_eq!(jtl.rows.len() as u32, threads * loops, "{}", jtl.text);
    for row in &jtl.rows {
        let answer = (row["responseCode"].as_str(), row["responseMessage"].as_str(), row["success"].as_str());
        assert_eq!(answer, ("200", "OK", "true"), "each row has its own answer, not the unasked one: {row:?}");
    }
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    assert_eq!(sent, server.bytes_read(), "sum of sentBytes = bytes the server read");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    (jtl, common::stdout(&out), summary)
}

/// A response the server sends while the connection sits idle (here 10 ms after each answer, the user
/// waiting 300 ms before its next request) is no answer to the next request: the connection is out of step,
/// so the request goes on a new connection and the run counts it, in the summary and the summary JSON. The
/// unasked bytes are in no row: they were never read as part of a sample.
#[test]
fn a_response_nobody_asked_for_on_an_idle_connection_is_not_the_next_answer() {
    let server = LateServer::start(Late::After(Duration::from_millis(10)));
    let (jtl, stdout, summary) = run_out_of_step("faults_late_idle", &server, 2, 4, "300ms");
    assert_eq!(server.connections(), 8, "every request after a user's first went on a new connection");
    assert!(stdout.contains("Out-of-step connections: 6 ("), "{stdout}");
    assert_eq!(summary["connections"]["out_of_step"], 6, "{summary:#}");
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    assert_eq!(got, 8 * late::ANSWER.len() as u64, "each row counts its answer:\n{}", jtl.text);
}

/// Bytes right after a response's end, read with it, close the connection after that response: they are
/// counted as out of step too, and in the row that read them (they crossed the wire during its read).
#[test]
fn bytes_after_a_response_close_its_connection_and_are_counted() {
    let server = LateServer::start(Late::Glued);
    let (jtl, stdout, summary) = run_out_of_step("faults_late_glued", &server, 2, 3, "0ms");
    assert_eq!(server.connections(), 6, "no connection carried a second request");
    assert!(stdout.contains("Out-of-step connections: 6 ("), "{stdout}");
    assert_eq!(summary["connections"]["out_of_step"], 6, "{summary:#}");
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    assert_eq!(got, server.bytes_written(), "sum of bytes = bytes the server wrote:\n{}", jtl.text);
}

/// A server in step: nothing counted, and the summary says nothing of it.
#[test]
fn a_server_in_step_has_no_out_of_step_connections() {
    let server = Server::start();
    let dir = TempDir::new("faults_in_step");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: p\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 2\n    loops: 3\n    \
             think_time: 5ms\n    steps:\n      - name: get\n        request: {{ url: /ok }}\n",
            server.url()
        ),
    );
    let summary = dir.join("summary.json");
    let (out, jtl) = run_ok(&dir, &plan, &["--summary-json", summary.to_str().unwrap()]);
    assert_eq!(jtl.rows.len(), server.count());
    assert_eq!(server.connections(), 2, "one kept-alive connection per user");
    assert!(!common::stdout(&out).contains("Out-of-step"), "{}", common::stdout(&out));
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(summary["connections"]["out_of_step"], 0, "{summary:#}");
}
