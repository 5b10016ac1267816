//! Spreadsheet-ready results: `run --timestamp-format` (JMeter's
//! `timestamp_format`) and what planrun's readers make of such a JTL; `--summary-csv` (JMeter's Aggregate
//! Report columns) from `run` and `report`; the warning for a JTL longer than a sheet.

use crate::common;
use common::{json_lines, read_json};

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use chrono::TimeZone;
use common::{describe, num, planrun, read_jtl, stderr, Jtl, Server, TempDir};
use serde_json::Value;

/// Two labels on two users; `fail` answers 500 on every other iteration.
const PLAN: &str = r#"
name: sheets
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 2
    loops: 4
    steps:
      - name: home
        request: { url: /ok }
      - name: "fail, sometimes"
        request: { url: "/status/{{ 500 if iteration is even else 200 }}" }
"#;

/// Requests the plan sends.
const REQUESTS: usize = 2 * 4 * 2;

/// A POSIX TZ rule: 5 h 30 min east of UTC, no daylight saving, no tz database needed.
const TZ: &str = "XST-5:30";

fn plan(dir: &TempDir, server: &Server) -> PathBuf {
    dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()))
}

/// Runs the binary in `dir` with `TZ` set; fails the test if it hangs.
fn planrun_tz<S: AsRef<OsStr>>(dir: &Path, tz: &str, args: &[S]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_planrun"));
    common::run_guarded(cmd.args(args).env("TZ", tz).current_dir(dir), Duration::from_secs(180), "planrun", |_| {})
}

// ---------------------------------------------------------------------------------------------------------
// --timestamp-format
// ---------------------------------------------------------------------------------------------------------

#[test]
fn a_timestamp_format_writes_local_dates_that_report_and_compare_read_back() {
    let server = Server::start();
    let dir = TempDir::new("sheets-timestamp");
    let plan = plan(&dir, &server);
    let run = planrun_tz(
        dir.path(),
        TZ,
        &[
            "run",
            plan.to_str().unwrap(),
            "-o",
            "out.jtl",
            "--json",
            "out.jsonl",
            "--timestamp-format",
            "yyyy-MM-dd HH:mm:ss.SSS",
            "--report",
            "run-report",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let jtl = read_jtl(&dir.join("out.jtl"));
    let lines = json_lines(&dir.join("out.jsonl"));
    assert_eq!(server.count(), REQUESTS);
    assert_eq!((jtl.rows.len(), lines.len()), (REQUESTS, REQUESTS), "a row and a line per request");
    // Both outputs get the samples in the same order: each row's date is its line's ms, at +05:30.
    let zone = chrono::FixedOffset::east_opt(5 * 3600 + 30 * 60).unwrap();
    for (row, line) in jtl.rows.iter().zip(&lines) {
        let ms = line["timestamp"].as_i64().unwrap();
        let expected = zone.timestamp_millis_opt(ms).unwrap().format("%Y-%m-%d %H:%M:%S%.3f").to_string();
        assert_eq!(row["timeStamp"], expected, "{row:?}");
    }
    // The report read back from the JTL (by `run --report` and by `report`, in the same zone) has the instants
    // the JSON lines have.
    let first = lines.iter().map(|l| l["timestamp"].as_u64().unwrap()).min().unwrap();
    let run_report = read_json(&dir.join("run-report/summary.json"));
    assert_eq!(run_report["start_ms"].as_u64(), Some(first), "run --report read the dates back");
    let report = planrun_tz(dir.path(), TZ, &["report", "out.jtl", "-o", "rep", "--summary-json", "rep.json"]);
    assert_eq!(report.status.code(), Some(0), "{}", describe(&report));
    let from_jtl = read_json(&dir.join("rep.json"));
    assert_eq!(from_jtl["start_ms"].as_u64(), Some(first));
    assert_eq!(from_jtl["total"]["samples"].as_u64(), Some(REQUESTS as u64));
    let compare = planrun_tz(dir.path(), TZ, &["compare", "out.jsonl", "out.jtl"]);
    assert_eq!(compare.status.code(), Some(0), "{}", describe(&compare));
}

#[test]
fn a_pattern_planrun_cannot_read_back_is_refused_with_report_and_named_by_report() {
    let server = Server::start();
    let dir = TempDir::new("sheets-timestamp-unreadable");
    let plan = plan(&dir, &server);
    let plan = plan.to_str().unwrap();
    let pattern = "dd.MM.yyyy HH:mm:ss";

    // --report reads the JTL back: refused before anything is sent.
    let out = planrun(dir.path(), ["run", plan, "-o", "a.jtl", "--timestamp-format", pattern, "--report", "r"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains(&format!("`{pattern}`")), "names the pattern: {}", describe(&out));
    assert_eq!(server.count(), 0, "nothing was sent");

    // A pattern that is not SimpleDateFormat's, or that JMeter would write differently, is refused too.
    for (bad, named) in [("YYYY-MM-dd HH:mm:ss", "`Y`"), ("yyyy-MM-ddTHH:mm:ss", "`T`"), ("none", "none")] {
        let out = planrun(dir.path(), ["run", plan, "-o", "b.jtl", "--timestamp-format", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", describe(&out));
        assert!(stderr(&out).contains(named), "{bad}: {}", describe(&out));
    }
    assert_eq!(server.count(), 0, "nothing was sent");

    // Without --report the run warns, writes the dates as asked, and `report` names the column and the value.
    let out = planrun(dir.path(), ["run", plan, "-o", "c.jtl", "--timestamp-format", pattern]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stderr(&out).contains("warning: planrun report and compare cannot read back"), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("c.jtl"));
    assert_eq!(jtl.rows.len(), server.count());
    let stamp = &jtl.rows[0]["timeStamp"];
    assert!(chrono::NaiveDateTime::parse_from_str(stamp, "%d.%m.%Y %H:%M:%S").is_ok(), "{stamp}");
    for command in [&["report", "c.jtl"][..], &["compare", "c.jtl", "c.jtl"][..]] {
        let out = planrun(dir.path(), command);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains("c.jtl:2: timeStamp"), "{command:?} names the file, line and column: {err}");
        assert!(err.contains(&format!("`{stamp}`")), "{command:?} shows the value: {err}");
        assert!(err.contains("yyyy-MM-dd HH:mm:ss.SSS"), "{command:?} says which dates it reads: {err}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// --summary-csv
// ---------------------------------------------------------------------------------------------------------

const CSV_HEADER: &str = "Label,# Samples,Average,Median,90% Line,95% Line,99% Line,Min,Max,Error %,Throughput,\
Received KB/sec,Sent KB/sec";

/// The CSV's records by label: the label and the other fields.
fn summary_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(text.lines().next(), Some(CSV_HEADER), "{text}");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<Vec<String>> = reader.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
    (rows.iter().map(|r| r[0].clone()).collect(), rows)
}

/// JMeter's `#0.000%`, `#.00000` and `#0.00`.
fn jmeter_pct(ratio: f64) -> String {
    format!("{:.3}%", ratio * 100.0)
}

fn jmeter_rate(rate: f64) -> String {
    let text = format!("{rate:.5}");
    text.strip_prefix('0').map_or(text.clone(), str::to_string)
}

/// Checks a CSV row against the summary JSON row of the same statistics.
fn row_matches_summary(row: &[String], s: &Value) {
    let label = s["label"].as_str().unwrap();
    let whole = |key: &str| (s[key].as_f64().unwrap().floor() as u64).to_string();
    let samples = s["samples"].as_u64().unwrap();
    let errors = s["errors"].as_u64().unwrap();
    let expected = [
        label.to_string(),
        samples.to_string(),
        whole("mean_ms"),
        whole("p50_ms"),
        whole("p90_ms"),
        whole("p95_ms"),
        whole("p99_ms"),
        whole("min_ms"),
        whole("max_ms"),
        jmeter_pct(errors as f64 / samples as f64),
        jmeter_rate(s["throughput"].as_f64().unwrap()),
        format!("{:.2}", s["received_kb_s"].as_f64().unwrap()),
        format!("{:.2}", s["sent_kb_s"].as_f64().unwrap()),
    ];
    assert_eq!(row, expected, "{label}");
}

/// What a row of the report's CSV must say, computed from the JTL's rows of that label (all rows for TOTAL).
fn row_matches_jtl(row: &[String], jtl: &Jtl, label: Option<&str>) {
    let rows: Vec<_> = jtl.rows.iter().filter(|r| label.is_none_or(|l| r["label"] == l)).collect();
    let n = rows.len() as u64;
    let elapsed: Vec<u64> = rows.iter().map(|r| num(r, "elapsed")).collect();
    let start = rows.iter().map(|r| num(r, "timeStamp")).min().unwrap();
    let end = rows.iter().map(|r| num(r, "timeStamp") + num(r, "elapsed")).max().unwrap();
    let window_s = (end - start) as f64 / 1000.0;
    let errors = rows.iter().filter(|r| r["success"] == "false").count() as f64;
    let bytes: u64 = rows.iter().map(|r| num(r, "bytes")).sum();
    let sent: u64 = rows.iter().map(|r| num(r, "sentBytes")).sum();
    assert_eq!(row[1], n.to_string());
    assert_eq!(row[2], (elapsed.iter().sum::<u64>() / n).to_string(), "Average: the mean cut to whole ms");
    assert_eq!(row[7], elapsed.iter().min().unwrap().to_string());
    assert_eq!(row[8], elapsed.iter().max().unwrap().to_string());
    assert_eq!(row[9], jmeter_pct(errors / n as f64));
    assert_eq!(row[10], jmeter_rate(n as f64 / window_s), "samples per second from first start to last end");
    assert_eq!(row[11], format!("{:.2}", bytes as f64 / 1024.0 / window_s), "KB = 1024 bytes");
    assert_eq!(row[12], format!("{:.2}", sent as f64 / 1024.0 / window_s));
}

#[test]
fn summary_csv_has_jmeters_aggregate_report_columns_from_run_and_from_report() {
    let server = Server::start();
    let dir = TempDir::new("sheets-summary-csv");
    let plan = plan(&dir, &server);
    let out = planrun(
        dir.path(),
        ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--summary-csv", "run.csv", "--summary-json", "run.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!((jtl.rows.len(), server.count()), (REQUESTS, REQUESTS));

    // The run's CSV: its own statistics, as the summary JSON has them, in JMeter's number formats.
    let (labels, rows) = summary_csv(&dir.join("run.csv"));
    assert_eq!(labels, ["home", "fail, sometimes", "TOTAL"], "labels in order of first appearance, then TOTAL");
    let json = read_json(&dir.join("run.json"));
    row_matches_summary(&rows[0], &json["labels"][0]);
    row_matches_summary(&rows[1], &json["labels"][1]);
    row_matches_summary(&rows[2], &json["total"]);
    assert_eq!(rows[1][9], "50.000%", "half of `fail, sometimes` failed");
    assert_eq!(rows[2][9], "25.000%");

    // `planrun report` writes the same table from the JTL, and its figures are the JTL's.
    let report = planrun(dir.path(), ["report", "out.jtl", "-o", "rep", "--summary-csv", "rep.csv"]);
    assert_eq!(report.status.code(), Some(0), "{}", describe(&report));
    let (labels, rows) = summary_csv(&dir.join("rep.csv"));
    assert_eq!(labels, ["home", "fail, sometimes", "TOTAL"]);
    row_matches_jtl(&rows[0], &jtl, Some("home"));
    row_matches_jtl(&rows[1], &jtl, Some("fail, sometimes"));
    row_matches_jtl(&rows[2], &jtl, None);
    let summary = read_json(&dir.join("rep/summary.json"));
    row_matches_summary(&rows[2], &summary["total"]);
    let raw = std::fs::read_to_string(dir.join("rep.csv")).unwrap();
    assert!(raw.contains("\n\"fail, sometimes\","), "a label with a comma is quoted:\n{raw}");
}

// ---------------------------------------------------------------------------------------------------------
// a JTL longer than a sheet
// ---------------------------------------------------------------------------------------------------------

#[test]
#[ignore = "scale test: .ci/run runs it (cargo test -- --ignored)"]
fn report_says_when_a_jtl_has_more_rows_than_a_sheet_holds() {
    // A sheet holds 1,048,576 rows: the header and 1,048,575 samples fit, one more does not.
    const FIT: u64 = 1_048_575;
    let dir = TempDir::new("sheets-rows");
    let path = dir.join("big.jtl");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
    writeln!(w, "timeStamp,elapsed,label,responseCode,responseMessage,success").unwrap();
    for i in 0..FIT {
        writeln!(w, "{},{},a,200,OK,true", 1_700_000_000_000 + i / 100, i % 7).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let out = planrun(dir.path(), ["report", "big.jtl", "-o", "r1"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(!stderr(&out).contains("warning"), "1048575 rows and the header fit: {}", describe(&out));

    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"1700000099999,3,a,200,OK,true\n")
        .unwrap();
    let out = planrun(dir.path(), ["report", "big.jtl", "-o", "r2"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("warning: big.jtl has 1048576 sample rows"), "{err}");
    assert!(err.contains("more than the 1048576 rows a LibreOffice or Excel sheet holds"), "{err}");
    assert!(err.contains("leaves out the last 1;") && err.contains("--summary-csv FILE"), "{err}");
}
