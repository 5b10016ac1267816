//! `--segment I/N`, `--cores N` and `--start-at`: a plan split into segments (or spread over cores) sends
//! exactly what one run sends, counted on the server and in the results.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{describe, now_ms, planrun, read_jtl, stderr, Recorded, Server, TempDir};

const ROWS: &str = "phone\n+1001\n+1002\n+1003\n+1004\n+1005\n+1006\n+1007\n";

/// Two closed groups (10 and 3 users, 3 loops each) whose every request carries seeded random data (in the
/// URL, a header and the body) and, in headers of their own, a shared data row and a counter value.
fn plan(dir: &TempDir, base: &str) -> std::path::PathBuf {
    dir.write("rows.csv", ROWS);
    dir.write(
        "plan.yaml",
        format!(
            r#"
name: segments
seed: 7
defaults:
  base_url: "{base}"
data:
  people:
    file: rows.csv
variables:
  token: "{{{{ random_string(12) }}}}"
thread_groups:
  - name: senders
    threads: 10
    ramp_up: 200ms
    loops: 3
    steps:
      - name: send
        request:
          method: POST
          url: "/send/{{{{ vu }}}}/{{{{ iteration }}}}"
          headers: {{ X-Token: "{{{{ token }}}}", X-Row: "{{{{ people.phone }}}}", X-N: "{{{{ counter('n') }}}}" }}
          json: {{ text: "{{{{ random_string(20) }}}}", code: "{{{{ random_int(1, 1000000) }}}}" }}
  - name: readers
    threads: 3
    loops: 3
    steps:
      - name: read
        request:
          url: "/read/{{{{ vu }}}}"
          query: {{ r: "{{{{ random_digits(6) }}}}" }}
          headers: {{ X-Row: "{{{{ people.phone }}}}", X-N: "{{{{ counter('n') }}}}" }}
"#
        ),
    )
}

/// What identifies a request on the wire: method, target, headers, body; but for the shared row and the
/// counter value, which go to whichever user asks first (in one run as across segments), so that only
/// their multisets compare ([`taken`]).
fn wire(r: &Recorded) -> String {
    let mut headers: Vec<String> =
        r.headers.iter().filter(|(k, _)| k != "x-row" && k != "x-n").map(|(k, v)| format!("{k}: {v}")).collect();
    headers.sort();
    format!("{} {}\n{}\n{}", r.method, r.target, headers.join("\n"), String::from_utf8_lossy(&r.body))
}

fn multiset(requests: &[Recorded]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in requests {
        *m.entry(wire(r)).or_insert(0) += 1;
    }
    m
}

/// The shared rows and counter values the requests took, sorted.
fn taken(requests: &[Recorded]) -> (Vec<String>, Vec<u64>) {
    let mut rows: Vec<String> = requests.iter().map(|r| r.header("x-row").unwrap().to_string()).collect();
    let mut n: Vec<u64> = requests.iter().map(|r| r.header("x-n").unwrap().parse().unwrap()).collect();
    rows.sort();
    n.sort();
    (rows, n)
}

/// A plan named `name` against `base` with these groups (YAML under `thread_groups:`, and any top-level keys
/// after them).
fn small_plan(dir: &TempDir, base: &str, groups: &str) -> std::path::PathBuf {
    dir.write("plan.yaml", format!("name: small\ndefaults: {{ base_url: \"{base}\" }}\nthread_groups:\n{groups}"))
}

/// One user sending one `GET /x`.
const ONE_GET: &str = "  - name: g\n    threads: 1\n    steps:\n      - name: get\n        request: { url: /x }\n";

fn run(dir: &TempDir, plan: &Path, jtl: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", plan.to_str().unwrap(), "-o", jtl, "--quiet"];
    args.extend(extra);
    let out = planrun(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    out
}

fn thread_names(path: &Path) -> BTreeSet<String> {
    read_jtl(path).rows.iter().map(|r| r["threadName"].clone()).collect()
}

#[test]
fn four_segments_send_byte_for_byte_what_one_run_sends() {
    let whole_server = Server::start();
    let split_server = Server::start();
    let dir = TempDir::new("segments-bytes");
    // The same host for both servers, so that the Host header compares: each run gets its own plan file.
    let whole_plan = plan(&dir, &whole_server.url());
    let whole_plan = {
        let text = std::fs::read_to_string(&whole_plan).unwrap();
        dir.write("whole.yaml", text)
    };
    run(&dir, &whole_plan, "whole.jtl", &["--cores", "1"]);
    let split_plan = plan(&dir, &split_server.url());
    let mut rows = 0;
    let mut users = Vec::new();
    for i in 0..4 {
        let jtl = format!("s{i}.jtl");
        run(&dir, &split_plan, &jtl, &["--segment", &format!("{i}/4")]);
        let names = thread_names(&dir.join(&jtl));
        users.push(names.iter().filter(|n| n.starts_with("senders")).count());
        rows += read_jtl(&dir.join(&jtl)).rows.len();
    }

    let whole = whole_server.requests();
    let split = split_server.requests();
    assert_eq!(whole.len(), 39, "10 x 3 + 3 x 3");
    assert_eq!(read_jtl(&dir.join("whole.jtl")).rows.len(), whole.len());
    assert_eq!(split.len(), whole.len(), "the segments together send what one run sends");
    assert_eq!(rows, split.len(), "the server's count equals the segments' rows");
    assert_eq!(users, [3, 3, 2, 2], "10 senders dealt over 4 segments");
    let normalize = |m: BTreeMap<String, usize>, from: &str| -> BTreeMap<String, usize> {
        m.into_iter().map(|(k, v)| (k.replace(from, "HOST"), v)).collect()
    };
    let whole_host = whole_server.url().trim_start_matches("http://").to_string();
    let split_host = split_server.url().trim_start_matches("http://").to_string();
    let (a, b) = (normalize(multiset(&whole), &whole_host), normalize(multiset(&split), &split_host));
    let only_whole: Vec<_> = a.iter().filter(|(k, v)| b.get(*k) != Some(v)).map(|(k, _)| k).collect();
    assert!(only_whole.is_empty(), "requests one run sent that the segments did not:\n{only_whole:#?}");
    assert_eq!(a, b);
    // Every user takes a row and a counter value per request: the segments took exactly the whole run's.
    let (whole_rows, whole_n) = taken(&whole);
    assert_eq!(whole_n, (1..=39).collect::<Vec<u64>>());
    assert_eq!(taken(&split), (whole_rows, whole_n), "no row or counter value twice across segments");

    // Merged, the segments' results count as one run's, and the plan's verdict is judged on them.
    let segments: Vec<String> = (0..4).map(|i| format!("s{i}.jtl")).collect();
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(segments.iter().map(String::as_str));
    args.extend(["-o", "all.jtl", "--summary-json", "all.json", "--plan", split_plan.to_str().unwrap()]);
    let out = planrun(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("all.json")).unwrap()).unwrap();
    assert_eq!(summary["total"]["samples"].as_u64(), Some(39));
    let mut merged = read_jtl(&dir.join("all.jtl")).rows;
    let mut one = read_jtl(&dir.join("whole.jtl")).rows;
    let key = |r: &std::collections::HashMap<String, String>| (r["label"].clone(), r["threadName"].clone());
    merged.sort_by_key(key);
    one.sort_by_key(key);
    assert_eq!(merged.iter().map(key).collect::<Vec<_>>(), one.iter().map(key).collect::<Vec<_>>());
}

#[test]
fn more_segments_than_users_leaves_one_with_nothing_to_do() {
    let server = Server::start();
    let dir = TempDir::new("segments-empty");
    let groups =
        "  - name: g\n    threads: 2\n    loops: 2\n    steps:\n      - name: get\n        request: { url: /x }\n";
    let plan = small_plan(&dir, &server.url(), groups);
    let out = run(&dir, &plan, "s3.jtl", &["--segment", "3/4"]);
    assert!(stderr(&out).contains("segment 3/4 has nothing to run"), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("s3.jtl"));
    assert!(jtl.rows.is_empty() && !jtl.header.is_empty(), "a JTL with its header only");
    assert_eq!(server.count(), 0);
    run(&dir, &plan, "s1.jtl", &["--segment", "1/4"]);
    assert_eq!(server.count(), 2);
    assert_eq!(read_jtl(&dir.join("s1.jtl")).rows.len(), 2);
    assert_eq!(thread_names(&dir.join("s1.jtl")), BTreeSet::from(["g 1-2".to_string()]));
}

#[test]
fn setup_and_teardown_groups_run_in_segment_zero_only() {
    let server = Server::start();
    let dir = TempDir::new("segments-setup");
    let groups = "  - name: g\n    threads: 4\n    steps:\n      - name: get\n        request: { url: /main }\n\
                  setup:\n  - name: before\n    threads: 1\n    steps:\n      - name: create\n        request: { url: /setup }\n\
                  teardown:\n  - name: after\n    threads: 1\n    steps:\n      - name: delete\n        request: { url: /teardown }\n";
    let plan = small_plan(&dir, &server.url(), groups);
    for i in 0..3 {
        run(&dir, &plan, &format!("s{i}.jtl"), &["--segment", &format!("{i}/3")]);
    }
    let paths: Vec<String> = server.requests().iter().map(|r| r.path().to_string()).collect();
    let count = |p: &str| paths.iter().filter(|x| *x == p).count();
    assert_eq!((count("/setup"), count("/main"), count("/teardown")), (1, 4, 1), "{paths:?}");
    let labels: Vec<String> = read_jtl(&dir.join("s0.jtl")).rows.iter().map(|r| r["label"].clone()).collect();
    assert!(labels.contains(&"create".to_string()) && labels.contains(&"delete".to_string()), "{labels:?}");
}

#[test]
fn open_arrivals_are_dealt_out_and_every_one_runs_once() {
    let server = Server::start();
    let dir = TempDir::new("segments-open");
    let groups =
        "  - name: arrivals\n    arrival_rate: 60\n    duration: 500ms\n    max_threads: 5\n    steps:\n      \
                  - name: get\n        request: { url: /a }\n";
    let plan = small_plan(&dir, &server.url(), groups);
    run(&dir, &plan, "whole.jtl", &[]);
    let whole = server.count();
    assert_eq!(whole, 30, "60/s for 0.5 s");
    let mut rows = 0;
    let mut workers = BTreeSet::new();
    for i in 0..3 {
        let jtl = format!("s{i}.jtl");
        run(&dir, &plan, &jtl, &["--segment", &format!("{i}/3")]);
        rows += read_jtl(&dir.join(&jtl)).rows.len();
        let names = thread_names(&dir.join(&jtl));
        assert!(workers.is_disjoint(&names), "a worker number in two segments: {names:?}");
        workers.extend(names);
    }
    assert_eq!(server.count() - whole, 30, "the segments' arrivals are the whole schedule's");
    assert_eq!(rows, 30);
    assert!(workers.len() <= 5, "max_threads is divided, not multiplied: {workers:?}");
}

#[test]
fn cores_spread_users_over_runtimes_into_one_result_stream() {
    let server = Server::start();
    let dir = TempDir::new("segments-cores");
    let plan = plan(&dir, &server.url());
    run(&dir, &plan, "one.jtl", &["--cores", "1"]);
    let one = server.requests();
    run(&dir, &plan, "two.jtl", &["--cores", "2", "--json", "two.jsonl"]);
    let all = server.requests();
    let two = &all[one.len()..];
    assert_eq!(two.len(), 39);
    let jtl = read_jtl(&dir.join("two.jtl"));
    assert_eq!(jtl.rows.len(), two.len(), "one JTL with every core's samples");
    assert_eq!(std::fs::read_to_string(dir.join("two.jsonl")).unwrap().lines().count(), two.len());
    assert_eq!(thread_names(&dir.join("two.jtl")).len(), 13, "every user once");
    let all_threads: u64 = jtl.rows.iter().map(|r| r["allThreads"].parse::<u64>().unwrap()).max().unwrap();
    assert!(all_threads <= 13, "allThreads counts the users of every core together: {all_threads}");
    assert_eq!(multiset(&one), multiset(two), "two cores send what one core sends");
    assert_eq!(taken(&one), taken(two));
}

#[test]
fn start_at_waits_for_the_instant_and_a_past_one_warns() {
    let server = Server::start();
    let dir = TempDir::new("segments-start-at");
    let plan = small_plan(&dir, &server.url(), ONE_GET);
    let at = now_ms() + 1500;
    run(&dir, &plan, "later.jtl", &["--start-at", &at.to_string()]);
    let first: u64 = read_jtl(&dir.join("later.jtl")).rows[0]["timeStamp"].parse().unwrap();
    assert!(first >= at, "the first sample ({first}) starts at or after --start-at ({at})");

    let past = chrono::DateTime::from_timestamp_millis((now_ms() - 60_000) as i64).unwrap().to_rfc3339();
    let out = run(&dir, &plan, "past.jtl", &["--start-at", &past]);
    assert!(stderr(&out).contains("warning: --start-at is"), "{}", describe(&out));
    assert_eq!(server.count(), 2);
}

#[test]
fn bad_placements_are_refused_before_anything_is_sent() {
    let server = Server::start();
    let dir = TempDir::new("segments-bad");
    let plan = small_plan(&dir, &server.url(), ONE_GET);
    let tomorrow = (now_ms() + 25 * 3600 * 1000).to_string();
    let cases: [(&[&str], &str); 7] = [
        (&["--segment", "4/4"], "segments are numbered from 0 to 3"),
        (&["--segment", "0/0"], "at least 1 segment"),
        (&["--segment", "x/3"], "is not I/N"),
        (&["--segment=-1/3"], "is not I/N"),
        (&["--cores", "0"], "--cores"),
        (&["--start-at", &tomorrow], "24 hours"),
        (&["--start-at", "noon"], "RFC 3339"),
    ];
    for (args, says) in cases {
        let mut all = vec!["run", plan.to_str().unwrap(), "-o", "bad.jtl"];
        all.extend(args);
        let out = planrun(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        assert!(stderr(&out).contains(says), "{args:?} should say {says:?}: {}", describe(&out));
    }
    assert_eq!(server.count(), 0);
}
