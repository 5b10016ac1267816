//! A bounded run sends exactly threads x loops x steps requests and writes exactly one JTL row for each, with
//! JMeter's columns and values that agree with what the server saw.

use crate::common;

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
        assert_eq!(row["dataType"], "", "the server sends no Content-Type: JMeter writes none");
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

#[test]
fn the_summary_has_a_row_per_label() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_summary");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()).replace("threads: 3", "threads: 1"));
    let (out, _) = run_ok(&dir, &plan, &[]);
    let stdout = common::stdout(&out);
    for label in ["get-ok", "post-accepted"] {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(label))
            .unwrap_or_else(|| panic!("no summary row for {label}:\n{stdout}"));
        assert_eq!(line.split_whitespace().nth(1), Some("4"), "{label}: 4 samples in {line}");
    }
    assert_eq!(summary_total(&stdout).0, 8);
}

/// Per virtual user, the samples' start times in order.
fn starts_by_thread(jtl: &common::Jtl) -> HashMap<String, Vec<(u64, String)>> {
    let mut by: HashMap<String, Vec<(u64, String)>> = HashMap::new();
    for r in &jtl.rows {
        by.entry(r["threadName"].clone()).or_default().push((num(r, "timeStamp"), r["label"].clone()));
    }
    for v in by.values_mut() {
        v.sort();
    }
    by
}

#[test]
fn think_time_and_ramp_up_space_the_samples() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_think");
    let plan = r#"
name: think
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 2
    ramp_up: 300ms
    loops: 2
    think_time: 100ms
    steps:
      - name: a
        request: { url: /ok }
      - think: 150ms
      - name: b
        request: { url: /ok }
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()));
    let before = now_ms();
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 8);
    let by = starts_by_thread(&jtl);
    for (thread, starts) in &by {
        for pair in starts.windows(2) {
            let ((t0, l0), (t1, _)) = (&pair[0], &pair[1]);
            // After `a`: think_time 100 ms then the 150 ms think step; after `b`: think_time 100 ms.
            let pause = if l0 == "a" { 250 } else { 100 };
            assert!(t1 - t0 >= pause - 1, "{thread}: {t0} -> {t1} is less than the {pause} ms pause: {starts:?}");
        }
    }
    // Two threads over 300 ms of ramp-up: the second starts 150 ms into the run, which began after `before`.
    // (Not "150 ms after the first user's first sample": that one may start late on a busy machine.)
    let first2 = by["g 1-2"][0].0;
    assert!(first2 >= before + 150, "the second user started {} ms after the run", first2 as i64 - before as i64);
}

#[test]
fn a_duration_bound_group_ends_by_itself() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_duration");
    let plan = r#"
name: duration
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 2
    duration: 400ms
    think_time: 100ms
    steps:
      - name: a
        request: { url: /ok }
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()));
    let before = now_ms();
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert!(now_ms() - before >= 300, "the group ran for its duration");
    assert!(jtl.rows.len() >= 3, "the users looped until the duration was over:\n{}", jtl.text);
    assert_eq!(jtl.rows.len(), server.count(), "one row per request sent");
}

#[test]
fn relative_urls_join_the_base_path_and_absolute_urls_do_not() {
    let server = Server::start();
    let other = Server::start();
    let dir = TempDir::new("run_counts_urls");
    let plan = r#"
name: urls
defaults:
  base_url: "@BASE@/api/"
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: slash
        request: { url: /ok }
      - name: bare
        request: { url: "ok?x=1", query: { y: "a b" } }
      - name: absolute
        request: { url: "@OTHER@/accepted" }
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()).replace("@OTHER@", &other.url()));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    let targets: Vec<String> = server.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["/api/ok", "/api/ok?x=1&y=a+b"]);
    let others: Vec<String> = other.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(others, ["/accepted"]);
    assert_eq!(jtl.one("absolute")["URL"], format!("{}/accepted", other.url()));
    assert_eq!(jtl.one("bare")["URL"], format!("{}/api/ok?x=1&y=a+b", server.url()));
}

#[test]
fn two_groups_number_their_threads_and_count_active_threads() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_groups");
    let plan = r#"
name: groups
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: readers
    threads: 2
    loops: 2
    steps:
      - name: read
        request: { url: /delay/200 }
  - name: writers
    threads: 2
    loops: 1
    steps:
      - name: write
        request: { method: POST, url: /delay/200, body: "x" }
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 6);
    let mut names: Vec<&str> = jtl.rows.iter().map(|r| r["threadName"].as_str()).collect();
    names.sort();
    assert_eq!(names, ["readers 1-1", "readers 1-1", "readers 1-2", "readers 1-2", "writers 2-1", "writers 2-2"]);
    for row in &jtl.rows {
        let (grp, all) = (num(row, "grpThreads"), num(row, "allThreads"));
        assert!((1..=2).contains(&grp) && (grp..=4).contains(&all), "grpThreads {grp}, allThreads {all}: {row:?}");
        assert!(num(row, "elapsed") >= 200, "{row:?}");
    }
    // The first sample to finish finished while every user was still active.
    let first = &jtl.rows[0];
    assert_eq!((num(first, "grpThreads"), num(first, "allThreads")), (2, 4), "{}", jtl.text);
}

/// The summary's figures are those a JTL reader (JMeter's dashboard, Taurus) computes from the rows: samples,
/// error %, throughput and KB/s over [first start, last end], and min, mean, max within the millisecond the JTL
/// rounds them down to.
#[test]
fn the_summary_agrees_with_the_jtl() {
    let server = Server::start();
    let dir = TempDir::new("run_counts_summary_agrees");
    let plan = r#"
name: agree
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 2
    loops: 3
    steps:
      - name: slow
        request: { url: "/delay/{{ 20 * iteration }}" }
      - name: fast
        request: { url: /ok }
      - name: broken
        request: { url: /status/500 }
"#;
    let plan = dir.write("plan.yaml", plan.replace("@BASE@", &server.url()));
    let (out, jtl) = run_ok(&dir, &plan, &[]);
    let stdout = common::stdout(&out);
    for label in ["slow", "fast", "broken", "TOTAL"] {
        let rows: Vec<_> = if label == "TOTAL" { jtl.rows.iter().collect() } else { jtl.labelled(label) };
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(label))
            .unwrap_or_else(|| panic!("no summary row for {label}:\n{stdout}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.len(), 14, "{line}");
        let cell = |i: usize| cells[i].trim_end_matches('%').parse::<f64>().unwrap();

        let n = rows.len() as f64;
        assert_eq!(cell(1), n, "{label}: samples");
        let errors = rows.iter().filter(|r| r["success"] == "false").count() as f64;
        assert_eq!(cells[10], format!("{:.2}%", errors * 100.0 / n), "{label}: error %");

        let elapsed: Vec<f64> = rows.iter().map(|r| num(r, "elapsed") as f64).collect();
        let within = |summary: f64, jtl: f64, what: &str| {
            // The JTL floors to whole ms; the summary rounds µs to 2 decimals, so x.999 ms shows as x+1.00.
            assert!(summary >= jtl && summary <= jtl + 1.0, "{label}: {what} {summary} vs the JTL's {jtl}");
        };
        within(cell(3), elapsed.iter().cloned().fold(f64::MAX, f64::min), "min");
        within(cell(4), elapsed.iter().cloned().fold(0.0, f64::max), "max");
        within(cell(2) + 0.005, elapsed.iter().sum::<f64>() / n, "mean");
        assert!(cell(3) <= cell(6) && cell(6) <= cell(7) && cell(7) <= cell(8), "{label}: min <= p50 <= p90 <= p95");
        assert!(cell(8) <= cell(9) && cell(9) <= cell(4) + 0.01, "{label}: p95 <= p99 <= max");

        let first = rows.iter().map(|r| num(r, "timeStamp")).min().unwrap();
        let last = rows.iter().map(|r| num(r, "timeStamp") + num(r, "elapsed")).max().unwrap();
        let window = (last - first) as f64 / 1000.0;
        assert!(window > 0.0);
        let bytes: u64 = rows.iter().map(|r| num(r, "bytes")).sum();
        let sent: u64 = rows.iter().map(|r| num(r, "sentBytes")).sum();
        assert_eq!(cells[11], format!("{:.1}", n / window), "{label}: throughput");
        assert_eq!(cells[12], format!("{:.2}", bytes as f64 / 1024.0 / window), "{label}: received KB/s");
        assert_eq!(cells[13], format!("{:.2}", sent as f64 / 1024.0 / window), "{label}: sent KB/s");
    }
}
