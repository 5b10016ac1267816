//! The same scenario run by JMeter (whichever is installed: Debian's 2.13 in CI) and by planrun against one
//! recording loopback server, compared on the wire (what the server received, on how many connections) and
//! in the JTL, column by column. Where planrun differs from JMeter by design, the test asserts planrun's
//! documented value (docs/results.md, "Where the JTL differs from JMeter's"), and says why in a comment.
//!
//! The scenario (tests/fixtures/jmeter/side_by_side.jmx and side_by_side.yaml): two threads, each running
//! [`STEPS`] once, alternating between two ports of the server.
//!
//! Without java, javac or JMeter the tests say why and pass, unless PLANRUN_REQUIRE_JMETER=1 (set by .ci/run)
//! makes that a failure. JMeter's JVM takes seconds to start, so both tools run once, for every test here.

use crate::common;
use crate::jmeter;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{describe, now_ms, planrun, read_jtl, Jtl, TempDir, JTL_HEADER};
use jmeter::recorder::{response, Hit, Recorder};

/// Which of the server's two ports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Host {
    A,
    B,
}

/// One step, as each thread runs it (in this order), and the server's answer to its last request.
struct Step {
    label: &'static str,
    host: Host,
    /// Method and target of each request it sends (a followed redirect sends two).
    requests: &'static [(&'static str, &'static str)],
    /// The body of its first request.
    body: &'static str,
    code: u16,
    /// The reason phrase the server sends.
    reason: &'static str,
    content_type: Option<&'static str>,
    response_body: &'static str,
    success: bool,
}

const STEPS: &[Step] = &[
    Step {
        label: "query",
        host: Host::A,
        requests: &[("GET", "/search?q=red+shoes&page=2")],
        body: "",
        code: 200,
        reason: "OK",
        content_type: Some("text/html; charset=utf-8"),
        response_body: "<p>results</p>",
        success: true,
    },
    Step {
        label: "form",
        host: Host::B,
        requests: &[("POST", "/login")],
        body: "user=tester&password=s3cret+%26+more",
        code: 200,
        reason: "OK",
        content_type: Some("text/plain; charset=utf-8"),
        response_body: "welcome",
        success: true,
    },
    Step {
        label: "json",
        host: Host::A,
        requests: &[("POST", "/api/orders")],
        body: r#"{"sku":"A-1","qty":2}"#,
        code: 201,
        reason: "Created",
        content_type: Some("application/json"),
        response_body: r#"{"id":1}"#,
        success: true,
    },
    Step {
        label: "redirect",
        host: Host::B,
        requests: &[("GET", "/old"), ("GET", "/new")],
        body: "",
        code: 200,
        reason: "OK",
        content_type: Some("text/plain"),
        response_body: "new",
        success: true,
    },
    Step {
        label: "missing",
        host: Host::A,
        requests: &[("GET", "/missing")],
        body: "",
        code: 404,
        reason: "Not Found",
        content_type: Some("text/plain"),
        response_body: "no such page",
        success: false,
    },
    Step {
        label: "assert-fails",
        host: Host::B,
        requests: &[("GET", "/text")],
        body: "",
        code: 200,
        reason: "OK",
        content_type: Some("text/plain"),
        response_body: "hello",
        success: false,
    },
    Step {
        label: "custom-reason",
        host: Host::A,
        requests: &[("GET", "/custom")],
        body: "",
        code: 200,
        reason: "Fine, thanks",
        content_type: Some("text/plain"),
        response_body: "custom",
        success: true,
    },
    Step {
        label: "no-type",
        host: Host::B,
        requests: &[("GET", "/raw")],
        body: "",
        code: 200,
        reason: "OK",
        content_type: None,
        response_body: "raw bytes",
        success: true,
    },
    Step {
        label: "utf8-reason",
        host: Host::A,
        requests: &[("GET", "/cafe")],
        body: "",
        code: 200,
        reason: "Café au lait",
        content_type: Some("text/plain"),
        response_body: "cafe",
        success: true,
    },
];

/// The threads of both plans, as the JTL names them; the `X-Thread` header carries the number.
const THREADS: [&str; 2] = ["g 1-1", "g 1-2"];

/// What the server answers: the step's response, or a 302 to /new for /old.
fn answer(_method: &str, path: &str) -> Vec<u8> {
    if path == "/old" {
        return response(302, "Found", None, &[("Location", "/new")], "");
    }
    match STEPS.iter().find(|s| path_of(s.requests[s.requests.len() - 1].1) == path) {
        Some(s) => response(s.code, s.reason, s.content_type, &[], s.response_body),
        None => response(500, "Internal Server Error", Some("text/plain"), &[], "not in the scenario"),
    }
}

fn path_of(target: &str) -> &str {
    target.split('?').next().unwrap_or(target)
}

/// The JTL header of JMeter 2.13 with every CSV column switched on (jmeter::launch's properties).
const JMETER_2_13_HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,\
failureMessage,bytes,grpThreads,allThreads,URL,Filename,Latency,Encoding,SampleCount,ErrorCount,Hostname,IdleTime,Connect";

/// One tool's run: its JTL and what the server received from it.
struct Side {
    jtl: Jtl,
    hits: Vec<Hit>,
    /// Wall clock just before the tool started and just after it ended, ms since the epoch.
    started_ms: u64,
    ended_ms: u64,
}

struct SideBySide {
    jmeter_version: String,
    jmeter_log: String,
    jmeter: Side,
    planrun: Side,
    /// planrun's `connect_us` by (threadName, label), from its JSON lines.
    planrun_connect_us: HashMap<(String, String), u64>,
    ports: [u16; 2],
    /// The plan line of the failing assertion, which planrun's failureMessage names.
    assert_line: usize,
}

enum Outcome {
    Ran(Box<SideBySide>),
    Skipped(String),
    Failed(String),
}

/// Both runs, done once for every test of this file; None (after saying why) when JMeter cannot run here.
fn side_by_side() -> Option<&'static SideBySide> {
    static RUN: OnceLock<Outcome> = OnceLock::new();
    let outcome = RUN.get_or_init(|| match std::panic::catch_unwind(run_both) {
        Ok(outcome) => outcome,
        Err(panic) => Outcome::Failed(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the side-by-side run panicked".into()),
        ),
    });
    match outcome {
        Outcome::Ran(run) => Some(run),
        Outcome::Skipped(why) => {
            common::skip("JMeter", "PLANRUN_REQUIRE_JMETER", why);
            None
        }
        Outcome::Failed(message) => panic!("{message}"),
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmeter").join(name)
}

fn run_both() -> Outcome {
    let jmeter = match jmeter::launch::find() {
        Ok(j) => j,
        Err(why) if std::env::var("PLANRUN_REQUIRE_JMETER").as_deref() == Ok("1") => {
            return Outcome::Failed(format!("PLANRUN_REQUIRE_JMETER=1, but JMeter cannot run here: {why}"))
        }
        Err(why) => return Outcome::Skipped(why),
    };
    let server = Recorder::start(answer);
    let [a, b] = server.ports;
    let dir = TempDir::new("jmeter_side_by_side");

    let started_ms = now_ms();
    let jm = jmeter.run(
        dir.path(),
        &fixture("side_by_side.jmx"),
        &dir.join("jmeter.jtl"),
        &[("portA", a.to_string()), ("portB", b.to_string())],
    );
    let jmeter_side =
        Side { jtl: read_jtl(&dir.join("jmeter.jtl")), hits: server.take(), started_ms, ended_ms: now_ms() };

    let plan = fixture("side_by_side.yaml");
    let (jtl, jsonl) = (dir.join("planrun.jtl"), dir.join("planrun.jsonl"));
    let started_ms = now_ms();
    let out = planrun(
        dir.path(),
        [
            "run".as_ref(),
            plan.as_os_str(),
            "-D".as_ref(),
            format!("port_a={a}").as_ref(),
            "-D".as_ref(),
            format!("port_b={b}").as_ref(),
            "-o".as_ref(),
            jtl.as_os_str(),
            "--json".as_ref(),
            jsonl.as_os_str(),
            "--quiet".as_ref(),
        ],
    );
    let ended_ms = now_ms();
    assert_eq!(out.status.code(), Some(0), "planrun failed:\n{}", describe(&out));
    let planrun_side = Side { jtl: read_jtl(&jtl), hits: server.take(), started_ms, ended_ms };

    let planrun_connect_us = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let key = (v["thread_name"].as_str().unwrap().to_string(), v["label"].as_str().unwrap().to_string());
            (key, v["connect_us"].as_u64().unwrap())
        })
        .collect();
    let assert_line = std::fs::read_to_string(&plan)
        .unwrap()
        .lines()
        .position(|l| l.contains("body_contains: NOT, THERE"))
        .expect("the assertion in the plan")
        + 1;
    Outcome::Ran(Box::new(SideBySide {
        jmeter_version: jm.version,
        jmeter_log: jm.log,
        jmeter: jmeter_side,
        planrun: planrun_side,
        planrun_connect_us,
        ports: server.ports,
        assert_line,
    }))
}

impl SideBySide {
    fn port(&self, host: Host) -> u16 {
        self.ports[host as usize]
    }

    fn is_2_13(&self) -> bool {
        self.jmeter_version.starts_with("2.13")
    }

    fn sides(&self) -> [(&'static str, &Side); 2] {
        [("JMeter", &self.jmeter), ("planrun", &self.planrun)]
    }
}

/// A side's requests by thread (the `X-Thread` header), each thread's in arrival order.
fn by_thread(hits: &[Hit]) -> BTreeMap<String, Vec<&Hit>> {
    let mut threads: BTreeMap<String, Vec<&Hit>> = BTreeMap::new();
    for hit in hits {
        let thread = hit.header("X-Thread").unwrap_or_else(|| panic!("a request without X-Thread: {hit:?}"));
        threads.entry(format!("g 1-{thread}")).or_default().push(hit);
    }
    threads
}

/// Each thread's requests, step by step: the requests of `STEPS[i]` are `[i]`.
fn per_step<'a>(thread: &[&'a Hit]) -> Vec<Vec<&'a Hit>> {
    let mut rest = thread;
    let steps = STEPS
        .iter()
        .map(|s| {
            assert!(rest.len() >= s.requests.len(), "too few requests for step {}: {thread:#?}", s.label);
            let (these, after) = rest.split_at(s.requests.len());
            rest = after;
            these.to_vec()
        })
        .collect();
    assert!(rest.is_empty(), "requests beyond the scenario: {rest:#?}");
    steps
}

/// A JTL row, by column name.
type Row = HashMap<String, String>;

/// A JTL's rows of the scenario's steps by (threadName, label); other rows (JMeter 5's sub-results) apart.
fn rows(jtl: &Jtl) -> (HashMap<(String, String), &Row>, Vec<&Row>) {
    let mut main = HashMap::new();
    let mut others = Vec::new();
    for row in &jtl.rows {
        if STEPS.iter().any(|s| s.label == row["label"]) {
            let key = (row["threadName"].clone(), row["label"].clone());
            assert!(main.insert(key.clone(), row).is_none(), "two rows for {key:?}:\n{}", jtl.text);
        } else {
            others.push(row);
        }
    }
    (main, others)
}

#[test]
fn both_send_the_same_requests_with_the_headers_that_matter() {
    let Some(run) = side_by_side() else { return };
    let mut sent = Vec::new();
    for (tool, side) in run.sides() {
        let threads = by_thread(&side.hits);
        assert_eq!(threads.keys().collect::<Vec<_>>(), THREADS, "{tool}'s threads");
        for (thread, hits) in &threads {
            for (step, hits) in STEPS.iter().zip(per_step(hits)) {
                let port = run.port(step.host);
                for (i, (hit, (method, target))) in hits.iter().zip(step.requests).enumerate() {
                    let what = format!("{tool}, {thread}, {} request {i}: {hit:#?}", step.label);
                    let body = if i == 0 { step.body } else { "" };
                    assert_eq!(
                        (hit.port, hit.method.as_str(), hit.target.as_str()),
                        (port, *method, *target),
                        "{what}"
                    );
                    assert_eq!(String::from_utf8_lossy(&hit.body), body, "{what}");
                    assert_eq!(hit.header("Host"), Some(format!("127.0.0.1:{port}").as_str()), "{what}");
                    let length = (!body.is_empty()).then(|| body.len().to_string());
                    assert_eq!(hit.header("Content-Length"), length.as_deref(), "{what}");
                    let content_type = match step.label {
                        "form" => Some("application/x-www-form-urlencoded"),
                        "json" => Some("application/json"),
                        _ => None,
                    };
                    assert_eq!(hit.header("Content-Type"), content_type, "{what}");
                    let trace = (step.label == "json").then_some("abc-123");
                    assert_eq!(hit.header("X-Trace"), trace, "{what}");
                }
            }
        }
        let requests: Vec<String> = threads
            .iter()
            .flat_map(|(t, hits)| {
                hits.iter().map(move |h| format!("{t}: {} {} {} {:?}", h.port, h.method, h.target, h.body))
            })
            .collect();
        sent.push(requests);
    }
    assert_eq!(sent[0], sent[1], "each thread's requests, JMeter's then planrun's");

    // Where the two differ by design: the User-Agent says who sends (planrun's default header, docs/plan.md),
    // and JMeter's HttpClient 4 says `Connection: keep-alive`, which HTTP/1.1 means without saying it: both
    // keep their connections (the next test).
    for hit in &run.jmeter.hits {
        let ua = hit.header("User-Agent").unwrap_or_default();
        assert!(ua.starts_with("Apache-HttpClient/"), "JMeter's User-Agent: {hit:#?}");
        assert_eq!(hit.header("Connection"), Some("keep-alive"), "{hit:#?}");
    }
    for hit in &run.planrun.hits {
        assert_eq!(hit.header("User-Agent"), Some("planrun"), "{hit:#?}");
        let mut names: Vec<&str> = hit.headers.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        let mut expected = vec!["Host", "User-Agent", "X-Thread"];
        if !hit.body.is_empty() {
            expected.extend(["Content-Length", "Content-Type"]);
        }
        if hit.header("X-Trace").is_some() {
            expected.push("X-Trace");
        }
        expected.sort_unstable();
        assert_eq!(names, expected, "planrun sends only these headers: {hit:#?}");
    }
}

#[test]
fn each_thread_keeps_one_connection_per_host_in_both() {
    let Some(run) = side_by_side() else { return };
    for (tool, side) in run.sides() {
        let mut conns: BTreeMap<(String, u16), BTreeSet<u64>> = BTreeMap::new();
        for (thread, hits) in by_thread(&side.hits) {
            for hit in hits {
                conns.entry((thread.clone(), hit.port)).or_default().insert(hit.conn);
            }
        }
        assert_eq!(conns.len(), THREADS.len() * 2, "{tool}: {conns:?}");
        for (key, ids) in &conns {
            assert_eq!(ids.len(), 1, "{tool}: {key:?} used connections {ids:?}");
        }
        let all: BTreeSet<u64> = conns.values().flatten().copied().collect();
        assert_eq!(all.len(), THREADS.len() * 2, "{tool}: threads do not share connections: {conns:?}");
    }
}

#[test]
fn rows_count_what_the_server_received() {
    let Some(run) = side_by_side() else { return };
    let requests_per_thread: usize = STEPS.iter().map(|s| s.requests.len()).sum();
    let hops: usize = STEPS.iter().map(|s| s.requests.len() - 1).sum();
    for (tool, side) in run.sides() {
        let (main, others) = rows(&side.jtl);
        assert_eq!(side.hits.len(), requests_per_thread * THREADS.len(), "{tool}'s requests");
        // A followed redirect is one row for its two requests, in both.
        let log = if tool == "JMeter" { run.jmeter_log.as_str() } else { "" };
        assert_eq!(main.len(), side.hits.len() - hops * THREADS.len(), "{tool}'s rows:\n{}\n{log}", side.jtl.text);
        if tool == "planrun" || run.is_2_13() {
            assert!(others.is_empty(), "{tool} wrote sub-result rows:\n{}", side.jtl.text);
        } else {
            // JMeter 5 writes a followed redirect's requests as sub-results after it: redirect-0, redirect-1.
            let mut labels: Vec<&str> = others.iter().map(|r| r["label"].as_str()).collect();
            labels.sort_unstable();
            assert_eq!(labels, ["redirect-0", "redirect-0", "redirect-1", "redirect-1"], "{}", side.jtl.text);
        }
    }
}

#[test]
fn planrun_counts_connect_time_only_where_a_connection_was_opened() {
    let Some(run) = side_by_side() else { return };
    for thread in THREADS {
        for step in STEPS {
            let opened = matches!(step.label, "query" | "form");
            let connect_us = run.planrun_connect_us[&(thread.to_string(), step.label.to_string())];
            assert_eq!(connect_us > 0, opened, "{thread} {}: connect_us {connect_us}", step.label);
        }
    }
}

#[test]
fn the_jtl_columns_compare_as_documented() {
    let Some(run) = side_by_side() else { return };
    let (jm_header, pr_header) = (&run.jmeter.jtl.header, &run.planrun.jtl.header);
    assert_eq!(pr_header.join(","), JTL_HEADER);
    if run.is_2_13() {
        assert_eq!(jm_header.join(","), JMETER_2_13_HEADER, "JMeter {}", run.jmeter_version);
    }
    // The columns both write come in the same order.
    let shared = |of: &[String], with: &[String]| of.iter().filter(|c| with.contains(c)).cloned().collect::<Vec<_>>();
    assert_eq!(shared(jm_header, pr_header), shared(pr_header, jm_header));

    let (jm_rows, _) = rows(&run.jmeter.jtl);
    let (pr_rows, _) = rows(&run.planrun.jtl);
    let mut columns: Vec<&String> = pr_header.iter().collect();
    columns.extend(jm_header.iter().filter(|c| !pr_header.contains(c)));
    for column in columns {
        for thread in THREADS {
            for (i, step) in STEPS.iter().enumerate() {
                let key = (thread.to_string(), step.label.to_string());
                let (jm, pr) = (jm_rows[&key], pr_rows[&key]);
                let at = Cell { run, column, thread, step, index: i, jm, pr };
                at.compare();
            }
        }
    }
}

/// One column of one step's row, in both JTLs.
struct Cell<'a> {
    run: &'a SideBySide,
    column: &'a str,
    thread: &'a str,
    step: &'a Step,
    /// The step's place in [`STEPS`].
    index: usize,
    jm: &'a Row,
    pr: &'a Row,
}

impl Cell<'_> {
    fn jm(&self) -> Option<&str> {
        self.jm.get(self.column).map(String::as_str)
    }

    fn pr(&self) -> Option<&str> {
        self.pr.get(self.column).map(String::as_str)
    }

    fn what(&self) -> String {
        format!(
            "column {}, {} {} (JMeter {})\nJMeter:  {:?}\nplanrun: {:?}\n--- JMeter's JTL ---\n{}\n--- planrun's JTL ---\n{}",
            self.column,
            self.thread,
            self.step.label,
            self.run.jmeter_version,
            self.jm(),
            self.pr(),
            self.run.jmeter.jtl.text,
            self.run.planrun.jtl.text
        )
    }

    /// Both write `expected`.
    fn both(&self, expected: &str) {
        assert_eq!((self.jm(), self.pr()), (Some(expected), Some(expected)), "{}", self.what());
    }

    /// Only JMeter writes this column; planrun has no such column.
    fn jmeter_only(&self, expected: &str) {
        assert_eq!((self.jm(), self.pr()), (Some(expected), None), "{}", self.what());
    }

    fn num(row: &Row, column: &str) -> u64 {
        row[column].parse().unwrap_or_else(|_| panic!("{column} is not a number in {row:?}"))
    }

    fn compare(&self) {
        let step = self.step;
        let port = self.run.port(step.host);
        match self.column {
            "label" => self.both(step.label),
            "threadName" => self.both(self.thread),
            "responseCode" => self.both(&step.code.to_string()),
            "success" => self.both(&step.success.to_string()),
            // text/bin from the Content-Type; empty when the response has none, in both.
            "dataType" => self.both(if step.content_type.is_some() { "text" } else { "" }),
            // The last URL of a followed redirect, in both (JMeter 2.13 and 5).
            "URL" => self.both(&format!("http://127.0.0.1:{port}{}", step.requests[step.requests.len() - 1].1)),
            // Status line, headers and body of every response of the sample, as the server wrote them.
            "bytes" => {
                let bytes: usize = step.requests.iter().map(|(m, t)| answer(m, path_of(t)).len()).sum();
                self.both(&bytes.to_string())
            }
            "IdleTime" => self.both("0"),
            // A reason phrase beyond ASCII: both read the status line's bytes as ISO-8859-1, so the UTF-8 `é`
            // becomes `Ã©`.
            "responseMessage" if step.label == "utf8-reason" => self.both("CafÃ© au lait"),
            "responseMessage" => self.both(step.reason),
            "failureMessage" if step.label == "assert-fails" => {
                // planrun's own words, naming the plan line; the text as it is, CSV quoting only.
                assert_eq!(self.jm(), Some("Test failed: text expected to contain /NOT, THERE/"), "{}", self.what());
                let planrun = format!(
                    "Assertion failed (line {}): body expected to contain \"NOT, THERE\"",
                    self.run.assert_line
                );
                assert_eq!(self.pr(), Some(planrun.as_str()), "{}", self.what());
            }
            // A 404 fails without a message in both: the code says it.
            "failureMessage" => self.both(""),
            "timeStamp" => self.timestamps(),
            "elapsed" | "Latency" | "Connect" => self.timings(),
            "grpThreads" | "allThreads" => {
                // Active threads when the sample ended: timing-dependent, one group of two.
                for row in [self.jm, self.pr] {
                    let (grp, all) = (Self::num(row, "grpThreads"), Self::num(row, "allThreads"));
                    assert!(1 <= grp && grp <= all && all <= 2, "{}", self.what());
                }
            }
            "sentBytes" => {
                // planrun counts what it put on the wire, every request of the sample: what the server read.
                let per_thread = by_thread(&self.run.planrun.hits);
                let hits = &per_step(&per_thread[self.thread])[self.index];
                let wire: u64 = hits.iter().map(|h| h.wire_len).sum();
                assert_eq!(self.pr(), Some(wire.to_string().as_str()), "{}", self.what());
                // JMeter 2.13 has no such column (JMeter 3.1 added it); JMeter 5's counts its own headers.
                if let Some(sent) = self.jm() {
                    assert!(sent.parse::<u64>().is_ok_and(|n| n > 0), "{}", self.what());
                }
            }
            // The columns planrun does not write (JMeter 5 does not either by default); docs/results.md says
            // what each holds and why planrun leaves it out.
            "Filename" => self.jmeter_only(""),
            "SampleCount" => self.jmeter_only("1"),
            "ErrorCount" => self.jmeter_only(if step.success { "0" } else { "1" }),
            "Encoding" if self.run.is_2_13() => {
                // The response's charset, else HTTP's default, ISO-8859-1 (also for application/json).
                let charset = step.content_type.and_then(|ct| ct.split_once("charset=")).map(|(_, c)| c);
                self.jmeter_only(charset.unwrap_or("ISO-8859-1"))
            }
            "Encoding" | "Hostname" => {
                assert!(self.jm().is_some_and(|v| !v.is_empty()) && self.pr().is_none(), "{}", self.what())
            }
            other => panic!("column {other} is not compared: add it here and to docs/results.md"),
        }
    }

    /// Start times inside the tool's run, each thread's samples one after the other.
    fn timestamps(&self) {
        for (row, side, rows) in
            [(self.jm, &self.run.jmeter, &self.run.jmeter.jtl), (self.pr, &self.run.planrun, &self.run.planrun.jtl)]
        {
            let (start, elapsed) = (Self::num(row, "timeStamp"), Self::num(row, "elapsed"));
            assert!(side.started_ms <= start && start + elapsed <= side.ended_ms, "{}", self.what());
            if let Some(next) = STEPS.get(self.index + 1) {
                let next =
                    rows.rows.iter().find(|r| r["threadName"] == self.thread && r["label"] == next.label).unwrap();
                // Whole ms on both sides of the sum: the next start may be a ms before this end as written.
                assert!(Self::num(next, "timeStamp") + 1 >= start + elapsed, "{}", self.what());
            }
        }
    }

    /// Connect within Latency within elapsed; Connect 0 where the sample reused its thread's connection to
    /// the host (every step but the first on each host).
    fn timings(&self) {
        let reused = !matches!(self.step.label, "query" | "form");
        for row in [self.jm, self.pr] {
            let (elapsed, latency, connect) =
                (Self::num(row, "elapsed"), Self::num(row, "Latency"), Self::num(row, "Connect"));
            assert!(connect <= latency && latency <= elapsed, "{}", self.what());
            if reused {
                assert_eq!(connect, 0, "{}", self.what());
            }
        }
    }
}
