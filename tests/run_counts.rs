//! A bounded run sends exactly threads x loops x steps requests and writes exactly one JTL row for each, with
//! JMeter's columns and values that agree with what the server saw.

mod common;

use std::collections::{HashMap, HashSet};

use common::{now_ms, num, run_ok, summary_total, Server, TempDir, JTL_HEADER};

const PLAN: &str = r#"
name: counts
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: users
    threads: 3
    loops: 4
    steps:
      - name: get-ok
        request:
          url: /ok
          query: { vu: "{{ vu }}", it: "{{ iteration }}", step: "1" }
      - name: post-accepted
        request:
          method: POST
          url: /accepted
          query: { vu: "{{ vu }}", it: "{{ iteration }}", step: "2" }
          form: { to: "{{ random_digits(11) }}", text: "hi {{ vu }}/{{ iteration }}" }
"#;

#[test]
fn three_threads_four_loops_two_steps_give_24_requests_and_24_rows() {
    let server = Server::start();
    let dir = TempDir::new("run_counts");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));

    let before = now_ms();
    let (out, jtl) = run_ok(&dir, &plan, &["--seed", "3"]);
    let after = now_ms();

    // The header is JMeter 5's, verbatim, and the file ends with a complete record.
    assert_eq!(jtl.text.lines().next(), Some(JTL_HEADER));
    assert_eq!(jtl.header.join(","), JTL_HEADER);
    assert!(jtl.text.ends_with('\n'));

    let received = server.requests();
    assert_eq!(received.len(), 24, "requests received");
    assert_eq!(jtl.rows.len(), 24, "JTL rows:\n{}", jtl.text);

    // Each (vu, iteration, step) was sent exactly once.
    let keys: HashSet<(String, String, String)> = received
        .iter()
        .map(|r| {
            let q = r.query();
            (q["vu"].clone(), q["it"].clone(), q["step"].clone())
        })
        .collect();
    assert_eq!(keys.len(), 24, "distinct (vu, iteration, step) received");

    // Each virtual user keeps one keep-alive connection.
    assert_eq!(server.connections(), 3, "connections opened");
    for vu in ["1", "2", "3"] {
        let conns: HashSet<u64> = received.iter().filter(|r| r.query()["vu"] == vu).map(|r| r.conn).collect();
        assert_eq!(conns.len(), 1, "vu {vu} used connections {conns:?}");
    }

    let by_target: HashMap<String, &common::Recorded> = received.iter().map(|r| (r.target.clone(), r)).collect();
    let mut threads = HashSet::new();
    for row in &jtl.rows {
        let url = &row["URL"];
        let prefix = server.url();
        assert!(url.starts_with(&prefix), "URL {url} is not on {prefix}");
        let target = &url[prefix.len()..];
        let rec = by_target.get(target).unwrap_or_else(|| panic!("row URL {url} was never received"));

        let q = rec.query();
        let (label, code, message, method) = if q["step"] == "1" {
            ("get-ok", "200", "OK", "GET")
        } else {
            ("post-accepted", "202", "Accepted", "POST")
        };
        assert_eq!(row["label"], label);
        assert_eq!(rec.method, method);
        assert_eq!(row["responseCode"], code, "{row:?}");
        assert_eq!(row["responseMessage"], message);
        assert_eq!(row["threadName"], format!("users 1-{}", q["vu"]), "threadName names the vu that sent it");
        assert_eq!(row["success"], "true", "{row:?}");
        assert_eq!(row["failureMessage"], "");
        assert_eq!(row["dataType"], "text");
        assert_eq!(row["IdleTime"], "0");
        threads.insert(row["threadName"].clone());

        assert!(num(row, "bytes") > 0, "bytes in {row:?}");
        assert_eq!(num(row, "sentBytes"), rec.raw_len(), "sentBytes = the request as received: {row:?} {rec:?}");
        let grp = num(row, "grpThreads");
        assert!((1..=3).contains(&grp), "grpThreads {grp}");
        assert_eq!(row["allThreads"], row["grpThreads"], "one group: all threads = group threads");

        let (elapsed, latency, connect) = (num(row, "elapsed"), num(row, "Latency"), num(row, "Connect"));
        assert!(latency <= elapsed, "Latency {latency} > elapsed {elapsed}");
        assert!(connect <= latency, "Connect {connect} > Latency {latency}");
        let ts = num(row, "timeStamp");
        assert!(ts >= before && ts + elapsed <= after, "sample [{ts}, +{elapsed}] outside the run [{before}, {after}]");
    }
    let expected: HashSet<String> = ["users 1-1", "users 1-2", "users 1-3"].iter().map(|s| s.to_string()).collect();
    assert_eq!(threads, expected);

    // Every byte crossed the wire: the rows account for all the server read and wrote.
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    assert_eq!(sent, server.bytes_read(), "sum of sentBytes = bytes the server read");
    assert_eq!(got, server.bytes_written(), "sum of bytes = bytes the server wrote");

    // Requests of the same shape count the same bytes (every vu and iteration number here is one digit).
    for label in ["get-ok", "post-accepted"] {
        let sizes: HashSet<u64> = jtl.labelled(label).iter().map(|r| num(r, "sentBytes")).collect();
        assert_eq!(sizes.len(), 1, "{label}: sentBytes {sizes:?}");
    }

    let (total, errors) = summary_total(&common::stdout(&out));
    assert_eq!(total, 24, "summary TOTAL samples");
    assert_eq!(errors, "0.00%");
}

#[test]
fn a_chunked_response_counts_its_wire_bytes() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_chunked");
    let plan = r#"
name: chunked
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 1
    loops: 2
    steps:
      - name: chunked
        request: { url: /chunked/5000 }
        assert:
          - body_matches: "^(abcdefghijklmnopqrstuvwxyz)+abcdefgh$"
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 2);
    for row in &jtl.rows {
        assert_eq!(row["success"], "true", "{row:?}");
        assert!(num(row, "bytes") > 5000, "bytes counts the body as transferred: {row:?}");
    }
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    assert_eq!(got, server.bytes_written(), "sum of bytes = bytes the server wrote, chunk framing included");
}

#[test]
fn a_server_that_closes_after_each_response_costs_no_sample() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_close");
    let plan = r#"
name: close
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 2
    loops: 5
    steps:
      - name: close
        request:
          url: /close
          query: { vu: "{{ vu }}", it: "{{ iteration }}" }
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 10, "{}", jtl.text);
    assert_eq!(server.count(), 10, "each sample is sent once");
    assert_eq!(server.connections(), 10, "a new connection for each request after `Connection: close`");
    for row in &jtl.rows {
        assert_eq!(row["success"], "true", "{row:?}");
        assert_eq!(row["responseCode"], "200");
    }
}
