//! Live outputs against the real databases (Debian's InfluxDB 1.6 and Prometheus 2.42, started per test on
//! loopback ports): the totals the databases hold equal the JTL's, errors and labels arrive, points arrive
//! while the run goes on, an unreachable database costs a warning, and dropped iterations are counted and
//! judged. Skipped, saying why, when a server is not installed, unless PLANRUN_REQUIRE_LIVE=1.

use crate::common;
use crate::live_db;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{describe, planrun, read_jtl, run_guarded, stderr, Jtl, Server, TempDir};
use serde_json::Value;

/// Three users, two labels (one always failing with 500), spread over about two seconds.
fn plan(base: &str, extra: &str) -> String {
    format!(
        "name: live-check\ndefaults:\n  base_url: {base}\n{extra}thread_groups:\n  - name: users\n    threads: 3\n    \
         loops: 20\n    steps:\n      - name: home\n        request: {{ url: /ok }}\n      - name: broken\n        \
         request: {{ url: /status/500 }}\n      - think: 100ms\n"
    )
}

/// Rows per label, and failed rows, of a JTL.
fn per_label(jtl: &Jtl) -> (BTreeMap<String, u64>, u64) {
    let mut rows = BTreeMap::new();
    for r in &jtl.rows {
        *rows.entry(r["label"].clone()).or_default() += 1;
    }
    (rows, jtl.rows.iter().filter(|r| r["success"] == "false").count() as u64)
}

/// The first value of each series of an InfluxQL answer, by the series' `transaction` tag (or "").
fn influx_values(answer: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for series in answer["results"][0]["series"].as_array().into_iter().flatten() {
        let tag = series["tags"]["transaction"].as_str().unwrap_or("").to_string();
        out.insert(tag, series["values"][0][1].as_f64().expect("a number"));
    }
    out
}

fn influx_one(db: &live_db::Process, q: &str) -> f64 {
    influx_values(&live_db::influxql(db, "planrun", q)).get("").copied().unwrap_or(0.0)
}

/// Whether process `pid` is still running (not yet exited; a zombie is not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn influxdb_holds_the_jtl_totals_per_label_with_errors_and_raw_points() {
    let dir = TempDir::new("live-influx");
    let Some(influx) = live_db::influxdb(&dir.join("influx").tap_mkdir()) else { return };
    let server = Server::start();
    let plan_path = dir.write("plan.yaml", plan(&server.url(), ""));
    let jtl_path = dir.join("out.jtl");
    let out_arg = format!("influxdb={}/planrun", influx.url());
    let args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        plan_path.as_os_str(),
        OsStr::new("-o"),
        jtl_path.as_os_str(),
        OsStr::new("--out"),
        OsStr::new(&out_arg),
        OsStr::new("--out-raw"),
    ];
    // While the run goes on, points already arrive (looked for every 200 ms).
    let mut seen_during_run = false;
    let mut last_look = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planrun"));
    cmd.args(&args).current_dir(dir.path());
    let out = run_guarded(&mut cmd, Duration::from_secs(120), "planrun", |pid| {
        if seen_during_run || last_look.elapsed() < Duration::from_millis(200) {
            return;
        }
        last_look = Instant::now();
        let so_far = influx_one(&influx, "SELECT sum(\"count\") FROM jmeter WHERE transaction = 'all'");
        seen_during_run = so_far > 0.0 && running(pid);
    });
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = read_jtl(&jtl_path);
    let (rows, failed) = per_label(&jtl);
    assert_eq!(jtl.rows.len(), 120);
    assert_eq!(server.count(), jtl.rows.len(), "the server saw every request once");
    assert!(seen_during_run, "no point reached InfluxDB before the run ended:\n{}", describe(&out));

    let q = "SELECT sum(\"count\") FROM jmeter WHERE statut = 'all' AND transaction <> 'all' GROUP BY transaction";
    let sums = influx_values(&live_db::influxql(&influx, "planrun", q));
    let want: BTreeMap<String, f64> = rows.iter().map(|(k, v)| (k.clone(), *v as f64)).collect();
    assert_eq!(sums, want, "per-label counts in InfluxDB");
    let all = "SELECT sum(\"count\") FROM jmeter WHERE transaction = 'all'";
    assert_eq!(influx_one(&influx, all), jtl.rows.len() as f64);
    let errors = "SELECT sum(countError) FROM jmeter WHERE transaction = 'all'";
    assert_eq!(influx_one(&influx, errors), failed as f64);
    let ko = "SELECT sum(\"count\") FROM jmeter WHERE statut = 'ko' AND transaction = 'broken'";
    assert_eq!(influx_one(&influx, ko), failed as f64);
    let codes = "SELECT sum(\"count\") FROM jmeter WHERE \"responseCode\" = '500'";
    assert_eq!(influx_one(&influx, codes), failed as f64, "the error points name the code");
    let raw = "SELECT count(\"duration\") FROM jmeter GROUP BY transaction";
    assert_eq!(influx_values(&live_db::influxql(&influx, "planrun", raw)), want, "one raw point per sample");
    let users = influx_one(&influx, "SELECT max(maxAT) FROM jmeter WHERE transaction = 'internal'");
    assert!((1.0..=3.0).contains(&users), "active users {users}");
    for q in live_db::dashboard_queries("influxdb", "live-check") {
        let a = live_db::influxql(&influx, "planrun", &q);
        assert!(a["results"][0]["series"].as_array().is_some_and(|s| !s.is_empty()), "the dashboard's `{q}`: {a}");
    }
    let text = stderr(&out);
    assert!(
        text.contains("covering 120 of 120 samples") && !text.contains("lost"),
        "the end of the run says what was delivered:\n{text}"
    );
}

#[test]
fn prometheus_from_the_plans_outputs_holds_the_jtl_totals() {
    let dir = TempDir::new("live-prometheus");
    let Some(prom) = live_db::prometheus(&dir.join("prom").tap_mkdir()) else { return };
    let server = Server::start();
    let outputs =
        "properties:\n  prom: http://127.0.0.1:1\noutputs:\n  - prometheus: \"{{ props.prom }}/api/v1/write\"\n";
    let plan_path = dir.write("plan.yaml", plan(&server.url(), outputs));
    let define = format!("prom={}", prom.url());
    let (out, jtl) = common::run_ok(&dir, &plan_path, &["-D", &define]);
    let (rows, failed) = per_label(&jtl);
    assert_eq!(server.count(), jtl.rows.len());

    let q = "max by (transaction) (max_over_time(planrun_requests_total{application=\"live-check\"}[1h]))";
    let mut got = BTreeMap::new();
    for r in live_db::promql(&prom, q) {
        let label = r["metric"]["transaction"].as_str().unwrap_or("").to_string();
        got.insert(label, r["value"][1].as_str().and_then(|v| v.parse::<f64>().ok()).unwrap_or(-1.0) as u64);
    }
    let mut want = rows.clone();
    want.insert("all".into(), jtl.rows.len() as u64);
    assert_eq!(got, want, "per-label counters in Prometheus:\n{}", describe(&out));
    let errors = live_db::promql(&prom, "max_over_time(planrun_errors_total{transaction=\"broken\"}[1h])");
    assert_eq!(errors[0]["value"][1].as_str(), Some(failed.to_string().as_str()));
    let p95 = live_db::promql(&prom, "count(planrun_response_time_seconds{quantile=\"0.95\"})");
    assert!(!p95.is_empty(), "percentile gauges arrive");
    for q in live_db::dashboard_queries("prometheus", "live-check") {
        assert!(!live_db::promql(&prom, &q).is_empty(), "the dashboard's `{q}` finds data");
    }
    assert!(stderr(&out).contains("covering 120 of 120 samples"), "{}", stderr(&out));
}

#[test]
fn an_unreachable_database_is_a_warning_and_the_run_is_whole() {
    let dir = TempDir::new("live-unreachable");
    let server = Server::start();
    let plan_path = dir.write("plan.yaml", plan(&server.url(), ""));
    let out_arg = format!("influxdb={}/planrun", common::refused_url());
    let (out, jtl) = common::run_ok(&dir, &plan_path, &["--out", &out_arg]);
    assert_eq!(jtl.rows.len(), 120);
    assert_eq!(server.count(), 120);
    let text = stderr(&out);
    assert!(text.contains("warning: influxdb http://127.0.0.1:") && text.contains("the run goes on"), "{text}");
    assert!(text.contains("0 points delivered") && text.contains("points lost"), "{text}");
}

/// One user for 100 arrivals a second, each taking 50 ms: most arrivals are dropped.
const OPEN: &str =
    "  - name: arrivals\n    arrival_rate: 100/s\n    duration: 1s\n    max_threads: 1\n    steps:\n      \
                    - name: slow\n        request: { url: /delay/50 }\n";

#[test]
fn dropped_iterations_are_in_the_summary_json_and_judged_by_a_threshold() {
    let dir = TempDir::new("live-dropped");
    let server = Server::start();
    let text = format!(
        "name: drops\ndefaults:\n  base_url: {}\nthresholds:\n  total: [\"dropped < 1%\", \"dropped >= 1\"]\nthread_groups:\n{OPEN}",
        server.url()
    );
    let plan_path = dir.write("plan.yaml", text);
    let (jtl, summary) = (dir.join("out.jtl"), dir.join("summary.json"));
    let out = planrun(
        dir.path(),
        [
            OsStr::new("run"),
            plan_path.as_os_str(),
            OsStr::new("-o"),
            jtl.as_os_str(),
            OsStr::new("--summary-json"),
            summary.as_os_str(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "`dropped < 1%` fails:\n{}", describe(&out));
    let rows = read_jtl(&jtl).rows.len() as u64;
    assert_eq!(server.count() as u64, rows);
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    let d = &json["dropped_iterations"];
    let (dropped, arrivals) = (d["dropped"].as_u64().unwrap(), d["arrivals"].as_u64().unwrap());
    assert!(dropped > 0, "{json}");
    assert_eq!(arrivals, dropped + rows, "every arrival started (one row) or was dropped: {json}");
    assert_eq!(d["groups"][0]["group"], "arrivals");
    let stdout = common::stdout(&out);
    assert!(stdout.contains("FAIL  TOTAL: dropped < 1%") && stdout.contains("PASS  TOTAL: dropped >= 1"), "{stdout}");
}

#[test]
fn a_dropped_threshold_on_a_label_and_a_bad_output_are_plan_errors() {
    let dir = TempDir::new("live-plan-errors");
    let text = format!(
        "name: drops\ndefaults:\n  base_url: http://127.0.0.1:1\nthresholds:\n  slow: [\"dropped < 1%\"]\n\
         outputs:\n  - influx: http://127.0.0.1:8086/db\n  - prometheus: http://h/w\n    raw: true\n  - \"graphite=http://h\"\n\
         thread_groups:\n{OPEN}"
    );
    let plan_path = dir.write("plan.yaml", text);
    let out = planrun(dir.path(), [OsStr::new("validate"), plan_path.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let text = stderr(&out);
    for expected in [
        "dropped iterations are the run's, not a label's",
        "unknown key `influx` in output",
        "did you mean `influxdb`?",
        "raw: one point per sample is InfluxDB's",
        "unknown output kind `graphite`",
        "plan.yaml:5:",
    ] {
        assert!(text.contains(expected), "`{expected}` in:\n{text}");
    }
    let cli = planrun(dir.path(), ["run", "x.yaml", "--out", "influxdb=http://h:8086/"]);
    assert_eq!(cli.status.code(), Some(2));
    assert!(stderr(&cli).contains("name the database"), "{}", describe(&cli));
}

/// `dir.join(..)` made into a directory.
trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for std::path::PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).expect("create a server's directory");
        self
    }
}
