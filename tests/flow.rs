//! Real-world plan features through the binary: extractors, assertions on JSON, headers and expressions,
//! transactions, flow-control blocks, setup/teardown groups and thresholds.

use crate::common;

use common::{num, planrun, run_ok, Server, TempDir};

/// A stub answering JSON for a login, written next to the plan.
const STUB: &str = r#"
routes:
  - method: POST
    path: /login
    status: 200
    headers: { Content-Type: application/json, Set-Cookie: "SESSIONID=abc; Path=/" }
    body: '{"token": "tok-42", "ids": [1, 2, 3], "user": {"name": "tester"}}'
workers: 0
"#;

fn plan(dir: &TempDir, server: &Server, groups: &str, extra: &str) -> std::path::PathBuf {
    dir.write("stub.yaml", STUB);
    let text = format!(
        "name: flow\nstub: stub.yaml\nproperties:\n  rec: \"{}\"\ndefaults:\n  base_url: \"{{{{ stub.url }}}}\"\n{extra}\nthread_groups:\n{groups}",
        server.url()
    );
    dir.write("plan.yaml", text)
}

#[test]
fn extracted_values_reach_the_next_requests() {
    let server = Server::start();
    let dir = TempDir::new("flow_extract");
    let groups = r#"
  - name: g
    threads: 2
    loops: 1
    steps:
      - name: login
        request: { method: POST, url: /login, json: { u: "{{ vu }}" } }
        extract:
          token: { jsonpath: "$.token" }
          ids: { jsonpath: "$.ids[*]", match_no: -1 }
          session: { cookie: SESSIONID }
          ctype: { header: Content-Type }
          digits: { regex: "tok-(\\d+)" }
      - foreach: "{{ ids }}"
        as: id
        steps:
          - name: item
            request:
              url: "{{ props.rec }}/ok"
              query: { t: "{{ token }}", id: "{{ id }}", s: "{{ session }}", c: "{{ ctype }}", d: "{{ digits }}" }
"#;
    let (_, jtl) = run_ok(&dir, &plan(&dir, &server, groups, ""), &[]);
    assert_eq!(jtl.labelled("item").len(), 6, "3 items for each of 2 users:\n{}", jtl.text);
    let mut ids: Vec<String> = server.requests().iter().map(|r| r.query()["id"].clone()).collect();
    ids.sort();
    assert_eq!(ids, ["1", "1", "2", "2", "3", "3"]);
    for r in server.requests() {
        let q = r.query();
        assert_eq!(q["t"], "tok-42");
        assert_eq!(q["s"], "abc");
        assert_eq!(q["c"], "application/json");
        assert_eq!(q["d"], "42");
    }
}

#[test]
fn a_required_extraction_that_finds_nothing_fails_the_sample_and_a_default_does_not() {
    let server = Server::start();
    let dir = TempDir::new("flow_extract_fail");
    let groups = r#"
  - name: g
    threads: 1
    steps:
      - name: required
        request: { method: POST, url: /login }
        extract:
          nope: { jsonpath: "$.missing" }
      - name: defaulted
        request: { method: POST, url: /login }
        extract:
          maybe: { regex: "absent=(\\w+)", default: "none" }
      - name: uses
        request: { url: "{{ props.rec }}/ok", query: { m: "{{ maybe }}" } }
"#;
    let (_, jtl) = run_ok(&dir, &plan(&dir, &server, groups, ""), &[]);
    let required = jtl.one("required");
    assert_eq!(required["success"], "false");
    assert!(required["failureMessage"].contains("Extraction failed"), "{required:?}");
    assert!(required["failureMessage"].contains("`nope`"), "{required:?}");
    assert_eq!(jtl.one("defaulted")["success"], "true");
    assert_eq!(server.requests()[0].query()["m"], "none");
}

#[test]
fn json_header_and_expression_assertions_pass_and_fail() {
    let server = Server::start();
    let dir = TempDir::new("flow_asserts");
    let groups = r#"
  - name: g
    threads: 1
    steps:
      - name: good
        request: { method: POST, url: /login }
        assert:
          - jsonpath: { path: "$.user.name", equals: tester }
          - jsonpath: { path: "$.ids[2]", equals: 3 }
          - jsonpath: { path: "$.token", matches: "^tok-" }
          - jsonpath: { path: "$.nothing", exists: false }
          - header: { name: Content-Type, equals: application/json }
          - header: { name: X-Missing, exists: false }
          - expr: "{{ response.status == 200 and response.json.ids | length == 3 }}"
      - name: bad-json
        request: { method: POST, url: /login }
        assert:
          - jsonpath: { path: "$.user.name", equals: admin }
      - name: bad-header
        request: { method: POST, url: /login }
        assert:
          - header: { name: X-Missing }
      - name: bad-absent
        request: { method: POST, url: /login }
        assert:
          - header: { name: Content-Type, exists: false }
      - name: bad-expr
        request: { method: POST, url: /login }
        assert:
          - expr: "{{ response.status == 201 }}"
"#;
    let (_, jtl) = run_ok(&dir, &plan(&dir, &server, groups, ""), &[]);
    assert_eq!(jtl.one("good")["success"], "true", "{:?}", jtl.one("good"));
    let msg = |l: &str| jtl.one(l)["failureMessage"].clone();
    assert!(msg("bad-json").contains(r#"jsonpath $.user.name expected "admin", got "tester""#), "{}", msg("bad-json"));
    assert!(msg("bad-header").contains("header X-Missing expected"), "{}", msg("bad-header"));
    assert!(msg("bad-expr").contains("is false"), "{}", msg("bad-expr"));
    assert!(msg("bad-absent").contains("header Content-Type expected to be absent"), "{}", msg("bad-absent"));
    for l in ["bad-json", "bad-header", "bad-expr"] {
        assert_eq!(jtl.one(l)["success"], "false");
        assert!(msg(l).contains("(line "), "{}", msg(l));
    }
}

#[test]
fn a_transaction_is_a_parent_sample_written_after_its_children() {
    let server = Server::start();
    let dir = TempDir::new("flow_tx");
    let groups = r#"
  - name: g
    threads: 1
    loops: 2
    steps:
      - transaction: buy
        steps:
          - name: one
            request: { url: "{{ props.rec }}/ok" }
          - think: 60ms
          - name: two
            request: { url: "{{ props.rec }}/status/503" }
"#;
    let (_, jtl) = run_ok(&dir, &plan(&dir, &server, groups, ""), &[]);
    let tx = jtl.labelled("buy");
    assert_eq!(tx.len(), 2);
    let lines: Vec<&str> = jtl.text.lines().skip(1).collect();
    assert!(lines[2].contains(",buy,") && lines[5].contains(",buy,"), "written after children:\n{}", jtl.text);
    for (i, t) in tx.iter().enumerate() {
        let children: Vec<_> = jtl.rows.iter().filter(|r| r["label"] != "buy").skip(i * 2).take(2).collect();
        assert_eq!(t["URL"], "null");
        assert_eq!(t["dataType"], "");
        assert_eq!(t["success"], "false", "a child failed");
        assert_eq!(t["responseCode"], "");
        assert_eq!(t["responseMessage"], "Number of samples in transaction : 2, number of failing samples : 1");
        assert_eq!(num(t, "bytes"), children.iter().map(|c| num(c, "bytes")).sum::<u64>());
        assert_eq!(num(t, "sentBytes"), children.iter().map(|c| num(c, "sentBytes")).sum::<u64>());
        assert!(num(t, "IdleTime") >= 60, "the pause is idle time: {t:?}");
        assert!(num(t, "timeStamp") <= num(children[0], "timeStamp"));
        assert!(num(t, "elapsed") >= num(children[0], "elapsed") + num(children[1], "elapsed"));
    }
}

#[test]
fn blocks_run_their_steps_as_many_times_as_they_say() {
    let server = Server::start();
    let dir = TempDir::new("flow_blocks");
    let groups = r#"
  - name: g
    threads: 2
    loops: 3
    steps:
      - once:
          - name: once
            request: { url: "{{ props.rec }}/ok?b=once" }
      - loop: 2
        steps:
          - name: looped
            request: { url: "{{ props.rec }}/ok?b=loop" }
      - if: "{{ iteration == 2 }}"
        steps:
          - name: second
            request: { url: "{{ props.rec }}/ok?b=if" }
        else:
          - name: other
            request: { url: "{{ props.rec }}/ok?b=else" }
      - while: "{{ true }}"
        max: 2
        steps:
          - name: bounded
            request: { url: "{{ props.rec }}/ok?b=while" }
      - random:
          - { weight: 3, steps: [ { name: heads, request: { url: "{{ props.rec }}/ok?b=heads" } } ] }
          - { weight: 1, steps: [ { name: tails, request: { url: "{{ props.rec }}/ok?b=tails" } } ] }
"#;
    let (_, jtl) = run_ok(&dir, &plan(&dir, &server, groups, ""), &["--seed", "5"]);
    let n = |l: &str| jtl.labelled(l).len();
    assert_eq!(n("once"), 2, "once per user");
    assert_eq!(n("looped"), 12);
    assert_eq!(n("second"), 2);
    assert_eq!(n("other"), 4);
    assert_eq!(n("bounded"), 12, "the while loop stops at its bound");
    assert_eq!(n("heads") + n("tails"), 6);
    assert!(n("heads") > 0 || n("tails") > 0);
}

#[test]
fn setup_runs_before_and_teardown_after_the_main_groups() {
    let server = Server::start();
    let dir = TempDir::new("flow_phases");
    let groups = r#"
  - name: main
    threads: 3
    loops: 2
    steps:
      - name: work
        request: { url: "{{ props.rec }}/delay/20" }
setup:
  - name: before
    threads: 1
    steps:
      - name: prepare
        request: { url: "{{ props.rec }}/delay/30" }
teardown:
  - name: after
    threads: 1
    steps:
      - name: clean
        request: { url: "{{ props.rec }}/ok" }
"#;
    let (_, jtl) = run_ok(&dir, &plan(&dir, &server, groups, ""), &[]);
    let end = |r: &std::collections::HashMap<String, String>| num(r, "timeStamp") + num(r, "elapsed");
    let prepare = jtl.one("prepare");
    let clean = jtl.one("clean");
    for w in jtl.labelled("work") {
        assert!(num(w, "timeStamp") >= end(prepare), "main after setup");
        assert!(num(clean, "timeStamp") >= end(w), "teardown after main");
    }
}

#[test]
fn a_failed_threshold_exits_1_and_says_which_with_the_measured_value() {
    let server = Server::start();
    let dir = TempDir::new("flow_thresholds");
    let groups = r#"
  - name: g
    threads: 2
    loops: 2
    steps:
      - name: slow
        request: { url: "{{ props.rec }}/delay/120" }
"#;
    let extra = "thresholds:\n  total: [\"error_rate < 1%\"]\n  slow: [\"p95 < 50ms\", \"samples >= 4\"]\n";
    let plan = plan(&dir, &server, groups, extra);
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    let stdout = common::stdout(&out);
    assert!(stdout.contains("FAIL  slow: p95 < 50ms  (measured 1"), "{stdout}");
    assert!(stdout.contains("PASS  TOTAL: error_rate < 1%"), "{stdout}");
    assert!(stdout.contains("PASS  slow: samples >= 4"), "{stdout}");
    assert!(stdout.contains("plan.yaml:"), "names where the threshold is written: {stdout}");

    let passing = plan_with_threshold(&dir, &server, "p95 < 5s");
    let out = planrun(dir.path(), ["run", passing.to_str().unwrap(), "-o", "out2.jtl", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
}

fn plan_with_threshold(dir: &TempDir, server: &Server, check: &str) -> std::path::PathBuf {
    let text = format!(
        "name: t\nthresholds:\n  total: [\"{check}\"]\nthread_groups:\n  - name: g\n    threads: 1\n    steps:\n      - name: s\n        request: {{ url: \"{}/ok\" }}\n",
        server.url()
    );
    dir.write("pass.yaml", text)
}

#[test]
fn an_aborting_threshold_stops_the_run_early() {
    let server = Server::start();
    let dir = TempDir::new("flow_abort");
    let text = format!(
        "name: abort\nthresholds:\n  total:\n    - {{ check: \"p50 < 10ms\", abort_on_fail: true }}\nthread_groups:\n  - name: g\n    threads: 2\n    duration: 20s\n    steps:\n      - name: s\n        request: {{ url: \"{}/delay/50\" }}\n",
        server.url()
    );
    let plan = dir.write("abort.yaml", text);
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    assert!(common::stderr(&out).contains("threshold `p50 < 10ms` on TOTAL failed"), "{}", common::describe(&out));
    // Stopped after about a second, not after 20 s: far fewer than 20 s worth of 50 ms requests.
    assert!(server.count() < 2 * 20 * 20 / 2, "{} requests", server.count());
}
