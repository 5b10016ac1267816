//! `planrun report` against files whose statistics are known exactly, against JTL files JMeter wrote
//! (tests/fixtures/jtl, see SOURCES.md there), and against two million rows; `planrun run --summary-json
//! --report`, checked against schemas/summary.schema.json. Every report's embedded chart data must add up to
//! its summary.

use crate::common;
use common::read_json;

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{describe, planrun, stderr, stdout, TempDir};
use serde_json::Value;

const HEADER: &str = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,\
failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect";

/// A whole second, so the constructed samples fall in known 1 s intervals.
const T0: u64 = 1_700_000_000_000;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jtl").join(name)
}

/// One JTL row of a constructed file.
struct Row<'a> {
    start: u64,
    elapsed: u64,
    label: &'a str,
    code: &'a str,
    message: &'a str,
    success: bool,
    failure: &'a str,
    bytes: u64,
    sent: u64,
}

fn write_jtl(path: &Path, rows: &[Row<'_>]) {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_path(path).unwrap();
    w.write_record(HEADER.split(',')).unwrap();
    for r in rows {
        let (start, elapsed, bytes, sent) =
            (r.start.to_string(), r.elapsed.to_string(), r.bytes.to_string(), r.sent.to_string());
        let success = if r.success { "true" } else { "false" };
        let fields = [
            start.as_str(),
            &elapsed,
            r.label,
            r.code,
            r.message,
            "users 1-1",
            "text",
            success,
            r.failure,
            &bytes,
            &sent,
            "5",
            "5",
            "http://127.0.0.1/x",
            &elapsed,
            "0",
            "0",
        ];
        w.write_record(fields).unwrap();
    }
    w.flush().unwrap();
}

/// `alpha`: elapsed 1..=100 ms, started every 20 ms from T0, every 10th failed (500, a quoted message with a
/// comma), 1 KiB received and 512 B sent each. `beta-ü`: elapsed 101..=200 ms, started every 20 ms from
/// T0 + 10, every 10th a read timeout, 2 KiB received and 256 B sent.
fn constructed() -> Vec<Row<'static>> {
    let mut rows = Vec::new();
    for i in 1..=100u64 {
        let ok = i % 10 != 0;
        rows.push(Row {
            start: T0 + (i - 1) * 20,
            elapsed: i,
            label: "alpha",
            code: if ok { "200" } else { "500" },
            message: if ok { "OK" } else { "Internal Server Error" },
            success: ok,
            failure: if ok { "" } else { "Test failed: code expected \"200\", got 500" },
            bytes: 1024,
            sent: 512,
        });
        rows.push(Row {
            start: T0 + 10 + (i - 1) * 20,
            elapsed: 100 + i,
            label: "beta-ü",
            code: if ok { "200" } else { "Non HTTP response code: java.net.SocketTimeoutException" },
            message: if ok { "OK" } else { "Non HTTP response message: Read timed out" },
            success: ok,
            failure: "",
            bytes: 2048,
            sent: 256,
        });
    }
    rows
}

/// The JSON in `<script type="application/json" id="data">`.
fn embedded_data(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"data\">";
    let start = html.find(open).expect("an embedded data block") + open.len();
    let end = start + html[start..].find("</script>").expect("the data block ends");
    serde_json::from_str(&html[start..end]).expect("the data block is JSON")
}

/// Nothing to fetch: no script or style sheet from elsewhere, no URL in `src=` or `href=`.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for attr in ["src=", "href="] {
        for (i, _) in lower.match_indices(attr) {
            let value = lower[i + attr.len()..].trim_start_matches(['"', '\'', ' ']);
            assert!(
                !(value.starts_with("http://") || value.starts_with("https://") || value.starts_with("//")),
                "external URL in {attr}: {}",
                &html[i..(i + 80).min(html.len())]
            );
        }
    }
    for bad in ["<link", "@import", "url(", "<script src", "<iframe", "<img"] {
        assert!(!lower.contains(bad), "the report has {bad}");
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    // The only script is the data block, which browsers do not run.
    assert_eq!(lower.matches("<script").count(), 1);
}

fn sum(v: &Value) -> u64 {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().expect("a count")).sum()
}

/// The charts' data adds up to the summary: every label's distribution holds its samples, the timeline holds
/// TOTAL's samples and errors, the failure table holds TOTAL's errors.
fn assert_charts_match_summary(data: &Value) {
    let summary = &data["summary"];
    let labels = summary["labels"].as_array().unwrap();
    let dists = data["distributions"].as_array().unwrap();
    assert_eq!(labels.len(), dists.len());
    for (row, dist) in labels.iter().zip(dists) {
        assert_eq!(row["label"], dist["label"]);
        assert_eq!(sum(&dist["counts"]) + dist["overflow"].as_u64().unwrap(), row["samples"].as_u64().unwrap());
        assert_eq!(dist["samples"], row["samples"]);
    }
    let total = &summary["total"];
    // Per label over time: one axis for all, each label's samples and errors (transactions left out, as in
    // TOTAL; labels past the first 16 together).
    let per_label = &data["label_timelines"];
    let series: Vec<&Value> = per_label["labels"]
        .as_array()
        .unwrap()
        .iter()
        .chain(per_label["others"].as_object().map(|_| &per_label["others"]))
        .collect();
    let points = series.first().map_or(0, |s| s["samples"].as_array().unwrap().len());
    let mut in_series = 0;
    for s in &series {
        assert_eq!(s["samples"].as_array().unwrap().len(), points, "one axis for every label");
        in_series += sum(&s["samples"]);
        if let Some(row) = labels.iter().find(|r| r["label"] == s["label"]) {
            assert_eq!(sum(&s["samples"]), row["samples"].as_u64().unwrap(), "{} over time", s["label"]);
            assert_eq!(sum(&s["errors"]), row["errors"].as_u64().unwrap(), "{} errors over time", s["label"]);
        }
    }
    assert_eq!(in_series, total["samples"].as_u64().unwrap(), "per-label timelines hold TOTAL's samples");
    assert_eq!(sum(&data["timeline"]["samples"]), total["samples"].as_u64().unwrap(), "timeline samples");
    assert_eq!(sum(&data["timeline"]["errors"]), total["errors"].as_u64().unwrap(), "timeline errors");
    let failures = &data["failures"];
    assert_eq!(failures["total"], total["errors"]);
    let listed: u64 = failures["top"].as_array().unwrap().iter().map(|f| f["count"].as_u64().unwrap()).sum();
    assert_eq!(listed + failures["other"].as_u64().unwrap(), total["errors"].as_u64().unwrap());
    let codes: u64 = total["response_codes"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(codes, total["samples"].as_u64().unwrap());
}

/// Runs `planrun report FILE -o DIR --summary-json DIR.json` expecting success; returns stdout, the embedded
/// data and the summary JSON.
fn report(dir: &TempDir, file: &Path, name: &str) -> (String, Value, Value) {
    let out_dir = dir.join(name);
    let json = dir.join(&format!("{name}.json"));
    let args = [OsStr::new("report"), file.as_os_str(), OsStr::new("-o"), out_dir.as_os_str()];
    let out = planrun(dir.path(), args.into_iter().chain([OsStr::new("--summary-json"), json.as_os_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let html = std::fs::read_to_string(out_dir.join("index.html")).expect("index.html");
    assert_self_contained(&html);
    assert!(html.contains("<section id=\"labels-over-time\"><h2>Per label over time</h2>"), "per-label charts");
    let data = embedded_data(&html);
    assert_charts_match_summary(&data);
    let summary = read_json(&json);
    assert_eq!(data["summary"], summary, "the report's summary is the summary JSON");
    assert_eq!(read_json(&out_dir.join("summary.json")), summary);
    (stdout(&out), data, summary)
}

/// The cells of the summary table line that starts with `label`.
fn table_line(stdout: &str, label: &str) -> Vec<String> {
    let line = stdout.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} line:\n{stdout}"));
    line.split_whitespace().map(str::to_string).collect()
}

fn close(got: &Value, want: f64) {
    let got = got.as_f64().unwrap_or_else(|| panic!("not a number: {got}"));
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, want {want}");
}

#[test]
fn constructed_jtl_gives_exact_statistics_and_matching_charts() {
    let dir = TempDir::new("report-constructed");
    let file = dir.join("known.jtl");
    write_jtl(&file, &constructed());
    let (table, data, summary) = report(&dir, &file, "known");

    let cells = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        table_line(&table, "alpha"),
        cells(&[
            "alpha", "100", "50.50", "1.00", "100.00", "28.87", "50.00", "90.00", "95.00", "99.00", "10.00%", "48.1",
            "48.08", "24.04"
        ])
    );
    assert_eq!(
        table_line(&table, "beta-ü"),
        cells(&[
            "beta-ü", "100", "150.50", "101.00", "200.00", "28.87", "150.00", "190.00", "195.00", "199.00", "10.00%",
            "45.9", "91.74", "11.47"
        ])
    );
    assert_eq!(
        table_line(&table, "TOTAL"),
        cells(&[
            "TOTAL", "200", "100.50", "1.00", "200.00", "57.73", "100.00", "180.00", "190.00", "198.00", "10.00%",
            "91.3", "136.99", "34.25"
        ])
    );

    let alpha = &summary["labels"][0];
    let total = &summary["total"];
    assert_eq!((alpha["samples"].as_u64(), alpha["errors"].as_u64()), (Some(100), Some(10)));
    for (key, want) in [("mean_ms", 50.5), ("min_ms", 1.0), ("max_ms", 100.0), ("p50_ms", 50.0), ("p90_ms", 90.0)] {
        close(&alpha[key], want);
    }
    for (key, want) in [("p95_ms", 95.0), ("p99_ms", 99.0), ("p999_ms", 100.0), ("error_pct", 10.0)] {
        close(&alpha[key], want);
    }
    close(&alpha["stddev_ms"], (9999.0f64 / 12.0).sqrt());
    close(&alpha["throughput"], 100.0 / 2.08);
    close(&alpha["received_kb_s"], 100.0 / 2.08);
    close(&alpha["sent_kb_s"], 50.0 / 2.08);
    close(&total["throughput"], 200.0 / 2.19);
    close(&total["stddev_ms"], (39999.0f64 / 12.0).sqrt());
    assert_eq!(alpha["response_codes"], serde_json::json!({"200": 90, "500": 10}));
    assert_eq!(
        summary["labels"][1]["response_codes"],
        serde_json::json!({"200": 90, "Non HTTP response code: java.net.SocketTimeoutException": 10})
    );
    assert_eq!((summary["start_ms"].as_u64(), summary["end_ms"].as_u64()), (Some(T0), Some(T0 + 2190)));

    // Distributions: bins of 2 ms; every bin holds exactly the samples in it.
    let alpha_dist = &data["distributions"][0];
    assert_eq!((alpha_dist["lo_ms"].as_f64(), alpha_dist["bin_ms"].as_f64()), (Some(0.0), Some(2.0)));
    let mut want = vec![2u64; 51];
    (want[0], want[50]) = (1, 1);
    assert_eq!(alpha_dist["counts"], serde_json::json!(want));
    let beta_dist = &data["distributions"][1];
    assert_eq!((beta_dist["lo_ms"].as_f64(), beta_dist["counts"].clone()), (Some(100.0), serde_json::json!(want)));

    // Timeline: two seconds of 100 samples, 10 failed each; percentiles of {1..50, 101..150} and
    // {51..100, 151..200}.
    let t = &data["timeline"];
    assert_eq!((t["start_ms"].as_u64(), t["interval_ms"].as_u64()), (Some(T0), Some(1000)));
    assert_eq!(t["samples"], serde_json::json!([100, 100]));
    assert_eq!(t["errors"], serde_json::json!([10, 10]));
    assert_eq!(t["p50_ms"], serde_json::json!([50.0, 100.0]));
    assert_eq!(t["p90_ms"], serde_json::json!([140.0, 190.0]));
    assert_eq!(t["p99_ms"], serde_json::json!([149.0, 199.0]));
    assert_eq!(t["threads"], serde_json::json!([5, 5]));

    // Failures: the failure message, else the response message.
    assert_eq!(
        data["failures"]["top"],
        serde_json::json!([
            {"label": "alpha", "message": "Test failed: code expected \"200\", got 500", "count": 10},
            {"label": "beta-ü", "message": "Non HTTP response message: Read timed out", "count": 10}
        ])
    );
}

/// A label, its samples and its errors.
type LabelCount = (&'static str, u64, u64);

#[test]
fn jmeter_written_files_read_with_the_right_counts() {
    let dir = TempDir::new("report-corpus");
    let cases: [(&str, u64, &[LabelCount], u64); 4] = [
        ("apache-jmeter__HTMLReportTestFile.csv", 255, &[("JR-OK", 252, 0), ("JR-KO", 3, 3)], 3),
        ("blazemeter-taurus__tabs.jtl", 4, &[("http://localhost:8080", 4, 0)], 0),
        ("jenkinsci-performance-plugin__filewithtransactions.csv", 210, &[("HP-0", 37, 0), ("HP", 37, 0), ("Scenario", 33, 0)], 0),
        (
            "jenkinsci-performance-plugin__multiLineCSV.jtl",
            2,
            &[
                ("Preparation: Login", 1, 0),
                (
                    "no such element: Unable to locate element: {\"method\":\"id\",\"selector\":\"reviewBAD\"}\n                  Session ID: 89a1a36b52e184afb01963257d8739e8\n                  *** Element info: {Using=id, value=reviewBAD}",
                    1,
                    1,
                ),
            ],
            1,
        ),
    ];
    for (i, (file, total_samples, labels, total_errors)) in cases.into_iter().enumerate() {
        let (_, data, summary) = report(&dir, &fixture(file), &format!("c{i}"));
        assert_eq!(summary["total"]["samples"].as_u64(), Some(total_samples), "{file}");
        assert_eq!(summary["total"]["errors"].as_u64(), Some(total_errors), "{file}");
        for (label, samples, errors) in labels {
            let row = summary["labels"].as_array().unwrap().iter().find(|r| r["label"] == *label);
            let row = row.unwrap_or_else(|| panic!("{file}: no label {label:?}"));
            assert_eq!(
                (row["samples"].as_u64(), row["errors"].as_u64()),
                (Some(*samples), Some(*errors)),
                "{file} {label}"
            );
        }
        assert!(!data["timeline"]["samples"].as_array().unwrap().is_empty());
    }
    // The transactions file: 313 rows in 9 labels, the 103 transaction rows stay out of TOTAL.
    let summary = read_json(&dir.join("c2.json"));
    let rows: u64 = summary["labels"].as_array().unwrap().iter().map(|r| r["samples"].as_u64().unwrap()).sum();
    let transactions: u64 =
        summary["labels"].as_array().unwrap().iter().map(|r| r["transactions"].as_u64().unwrap()).sum();
    assert_eq!((rows, transactions, summary["labels"].as_array().unwrap().len()), (313, 103, 9));
    // Whole-ms percentiles, as JMeter's own data has them.
    close(&summary["labels"][0]["p50_ms"], 998.0);
}

#[test]
fn a_file_without_response_codes_is_refused_naming_the_columns() {
    let dir = TempDir::new("report-false");
    let file = fixture("apache-jmeter__HTMLReportFalseTestFile.csv");
    let refused = dir.join("r");
    let out = planrun(dir.path(), [OsStr::new("report"), file.as_os_str(), OsStr::new("-o"), refused.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("HTMLReportFalseTestFile.csv"), "{err}");
    assert!(err.contains("lacks the required columns responseCode, responseMessage"), "{err}");
    assert!(!dir.join("r").exists(), "nothing is written for a refused file");

    for (name, text, expected) in [
        ("empty.jtl", "", "empty file"),
        ("headerless.jtl", "1700000000000,5,x,200,OK,t 1-1,text,true,,1,1,1,1\n", "not a JTL header"),
        (
            "bad.jtl",
            "timeStamp,elapsed,label,responseCode,responseMessage,success\n1,2,x,200,OK,maybe\n",
            "bad.jtl:2: success `maybe`",
        ),
    ] {
        let path = dir.write(name, text);
        let out = planrun(dir.path(), [OsStr::new("report"), path.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        assert!(stderr(&out).contains(expected), "{name}: {}", describe(&out));
    }
    // A field megabytes long is quoted in the error by its start only.
    let huge = format!(
        "timeStamp,elapsed,label,responseCode,responseMessage,success\n{},2,x,200,OK,true\n",
        "9x".repeat(1 << 20)
    );
    let path = dir.write("huge.jtl", &huge);
    let out = planrun(dir.path(), [OsStr::new("report"), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.len() < 500 && err.contains(&format!("huge.jtl:2: timeStamp `{}...` is neither", "9x".repeat(30))),
        "{err}"
    );
    let missing = planrun(dir.path(), ["report", "no-such-file.jtl"]);
    assert_eq!(missing.status.code(), Some(2), "{}", describe(&missing));
    assert!(stderr(&missing).contains("cannot read no-such-file.jtl"), "{}", describe(&missing));
}

#[test]
fn json_lines_tabs_and_the_default_directory() {
    let dir = TempDir::new("report-jsonl");
    dir.write(
        "run.jsonl",
        "{\"timestamp\":1700000000000,\"elapsed\":4,\"elapsed_us\":4321,\"label\":\"a\",\"response_code\":\"202\",\
         \"response_message\":\"Accepted\",\"success\":true,\"failure_message\":null,\"bytes\":10,\"sent_bytes\":5,\
         \"all_threads\":1}\n\
         {\"timestamp\":1700000000100,\"elapsed\":1,\"elapsed_us\":1500,\"label\":\"a\",\"response_code\":\
         \"Non HTTP response code: ConnectionRefused\",\"response_message\":\"Non HTTP response message: refused\",\
         \"success\":false,\"failure_message\":\"Connection refused\",\"bytes\":0,\"sent_bytes\":0,\"all_threads\":1}\n",
    );
    let out = planrun(dir.path(), ["report", "run.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // µs precision from elapsed_us; the report goes next to the file by default.
    let summary = read_json(&dir.join("run-report/summary.json"));
    close(&summary["total"]["mean_ms"], 2.9105);
    close(&summary["total"]["p50_ms"], 1.5);
    let html = std::fs::read_to_string(dir.join("run-report/index.html")).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<section id=\"labels-over-time\"><h2>Per label over time</h2>"), "per-label charts");
    let data = embedded_data(&html);
    assert_charts_match_summary(&data);
    assert_eq!(data["failures"]["top"][0]["message"], "Connection refused");
}

#[test]
#[ignore = "scale test: .ci/run runs it (cargo test -- --ignored)"]
fn two_million_rows_stream_through() {
    const ROWS: u64 = 2_000_000;
    let dir = TempDir::new("report-millions");
    let path = dir.join("big.jtl");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
    writeln!(w, "{HEADER}").unwrap();
    for i in 0..ROWS {
        let ok = i % 50 != 0;
        let (code, message, success, failure) =
            if ok { ("200", "OK", "true", "") } else { ("500", "Server Error", "false", "Test failed: code") };
        writeln!(
            w,
            "{},{},l{},{code},{message},g 1-{},text,{success},{failure},{},100,20,20,http://x/y,{},0,0",
            T0 + i / 10,
            i % 997,
            i % 3,
            i % 20 + 1,
            i % 5000,
            i % 997
        )
        .unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let (table, data, summary) = report(&dir, &path, "big");
    assert_eq!(table_line(&table, "TOTAL")[1], ROWS.to_string());
    let counts: Vec<u64> =
        summary["labels"].as_array().unwrap().iter().map(|r| r["samples"].as_u64().unwrap()).collect();
    assert_eq!(counts, [666_667, 666_667, 666_666]);
    assert_eq!(summary["total"]["errors"].as_u64(), Some(ROWS / 50));
    assert_eq!(data["timeline"]["samples"].as_array().unwrap().len(), 200, "200 s of samples, 1 s intervals");
}

/// A crawl recorded with each URL as its label: 20,000 labels of one sample each. A histogram per label
/// took about 100 KiB (its counts reach the largest time), so the file needed 2 GiB to summarize and
/// `compare` twice that.
#[test]
fn many_labels_of_few_samples_are_summarized_in_little_memory() {
    const LABELS: u64 = 20_000;
    let dir = TempDir::new("report-many-labels");
    let path = dir.join("crawl.jtl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(w, "{HEADER}").unwrap();
    for i in 0..LABELS {
        let elapsed = 1 + i * 7919 % 5000;
        writeln!(w, "{},{elapsed},GET /item/{i},200,OK,g 1-1,text,true,,100,50,1,1,http://x/item/{i},1,0,0", T0 + i)
            .unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let json = dir.join("crawl.json");
    let (out, report_kb) = common::run_measured(
        dir.path(),
        &[OsStr::new("report"), path.as_os_str(), OsStr::new("--summary-json"), json.as_os_str()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let summary = read_json(&json);
    let labels = summary["labels"].as_array().unwrap();
    assert_eq!(labels.len() as u64, LABELS);
    let last = &labels[LABELS as usize - 1];
    let want = (1 + (LABELS - 1) * 7919 % 5000) as f64;
    for key in ["p50_ms", "p99_ms", "max_ms", "mean_ms"] {
        assert_eq!(last[key].as_f64(), Some(want), "{key} of a label's one sample: {last}");
    }
    assert_eq!(summary["total"]["samples"].as_u64(), Some(LABELS));
    let (out, compare_kb) =
        common::run_measured(dir.path(), &[OsStr::new("compare"), path.as_os_str(), path.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout(&out).contains("GET /item/19999"), "{}", describe(&out));
    // About 130 MiB each in a debug build; a histogram per label made them 2 and 4 GiB.
    for (what, kb) in [("report", report_kb), ("compare", compare_kb)] {
        assert!(kb > 0 && kb < 400 << 10, "{what} of {LABELS} labels peaked at {} MiB", kb >> 10);
    }
}

/// Response codes that carry a unique id (a garbled or hand-made file): the first 100 texts a label has are
/// counted each, the rest together, instead of one entry per row in memory, the summary and the page.
#[test]
fn response_code_texts_past_a_hundred_are_counted_together() {
    const ROWS: u64 = 1000;
    let dir = TempDir::new("report-many-codes");
    let path = dir.join("codes.jtl");
    let mut text = format!("{HEADER}\n");
    for i in 0..ROWS {
        let code = if i % 2 == 0 { "200".to_string() } else { format!("refused #{i}") };
        text += &format!("{},5,get,{code},x,g 1-1,text,{},,1,1,1,1,http://x/,1,0,0\n", T0 + i, i % 2 == 0);
    }
    std::fs::write(&path, text).unwrap();
    let (_, data, summary) = report(&dir, &path, "codes");
    let codes = summary["labels"][0]["response_codes"].as_object().unwrap();
    assert_eq!(codes.len(), 102, "200, 100 texts, and the others: {codes:?}");
    assert_eq!(codes["200"], ROWS / 2);
    assert_eq!(codes["refused #1"], 1);
    assert_eq!(codes["(other codes)"], ROWS / 2 - 100);
    assert_eq!(summary["total"]["response_codes"], summary["labels"][0]["response_codes"]);
    assert_eq!(data["summary"], summary);
}

// ---------------------------------------------------------------------------------------------------------
// planrun run --summary-json --report, and the schema
// ---------------------------------------------------------------------------------------------------------

/// Checks `value` against `schema`, supporting the keywords schemas/summary.schema.json uses; any other
/// keyword fails the test, so the schema cannot say more than this checks.
fn validate(schema: &Value, root: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    const KNOWN: [&str; 13] = [
        "$schema",
        "title",
        "description",
        "type",
        "additionalProperties",
        "required",
        "properties",
        "const",
        "minimum",
        "maximum",
        "items",
        "$ref",
        "$defs",
    ];
    let schema = schema.as_object().expect("a schema is an object");
    for key in schema.keys() {
        assert!(KNOWN.contains(&key.as_str()), "the test's validator does not know the keyword {key}");
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = r.strip_prefix("#/").expect("a local $ref").split('/').fold(root, |v, k| &v[k]);
        validate(target, root, value, path, errors);
    }
    if let Some(c) = schema.get("const") {
        if value != c {
            errors.push(format!("{path}: {value} is not {c}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => panic!("bad type keyword"),
        };
        let fits = |t: &str| match t {
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "string" => value.is_string(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            other => panic!("unknown type {other}"),
        };
        if !types.iter().any(|t| fits(t)) {
            errors.push(format!("{path}: {value} is not of type {t}"));
        }
    }
    if let (Some(min), Some(v)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64()) {
        if v < min {
            errors.push(format!("{path}: {v} < {min}"));
        }
    }
    if let (Some(max), Some(v)) = (schema.get("maximum").and_then(Value::as_f64), value.as_f64()) {
        if v > max {
            errors.push(format!("{path}: {v} > {max}"));
        }
    }
    if let Value::Object(map) = value {
        for key in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !map.contains_key(key.as_str().unwrap()) {
                errors.push(format!("{path}: missing {key}"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, v) in map {
            match (properties.and_then(|p| p.get(key)), schema.get("additionalProperties")) {
                (Some(sub), _) => validate(sub, root, v, &format!("{path}.{key}"), errors),
                (None, Some(Value::Bool(false))) => errors.push(format!("{path}: unexpected key {key}")),
                (None, Some(sub @ Value::Object(_))) => validate(sub, root, v, &format!("{path}.{key}"), errors),
                (None, _) => {}
            }
        }
    }
    if let (Value::Array(items), Some(sub)) = (value, schema.get("items")) {
        for (i, v) in items.iter().enumerate() {
            validate(sub, root, v, &format!("{path}[{i}]"), errors);
        }
    }
}

fn schema_errors(value: &Value) -> Vec<String> {
    let schema = read_json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/summary.schema.json"));
    let mut errors = Vec::new();
    validate(&schema, &schema, value, "$", &mut errors);
    errors
}

#[test]
fn a_run_writes_the_summary_json_and_the_report() {
    let dir = TempDir::new("report-run");
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("plans/sms.yaml");
    let args = [
        "run",
        plan.to_str().unwrap(),
        "-D",
        "threads=5",
        "-D",
        "loops=2",
        "-o",
        "out.jtl",
        "--json",
        "out.jsonl",
        "--summary-json",
        "summary.json",
        "--report",
        "report",
        "--quiet",
    ];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let summary = read_json(&dir.join("summary.json"));
    assert_eq!(schema_errors(&summary), Vec::<String>::new());
    assert_eq!(summary["total"]["samples"].as_u64(), Some(20));
    let labels: Vec<&str> =
        summary["labels"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["sendsms", "dispatch-form"]);

    // The validator is not a yes-man.
    let mut broken = summary.clone();
    broken["total"].as_object_mut().unwrap().remove("p99_ms");
    broken["labels"][0]["samples"] = Value::from(-1);
    broken["extra"] = Value::from(1);
    assert_eq!(schema_errors(&broken).len(), 3, "{:?}", schema_errors(&broken));

    // The run's report is `planrun report` of its JTL.
    let html = std::fs::read_to_string(dir.join("report/index.html")).expect("the run's report");
    assert_self_contained(&html);
    assert!(html.contains("<section id=\"labels-over-time\"><h2>Per label over time</h2>"), "per-label charts");
    let data = embedded_data(&html);
    assert_charts_match_summary(&data);
    let (_, _, from_jtl) = report(&dir, &dir.join("out.jtl"), "again");
    assert_eq!(data["summary"], from_jtl);
    assert_eq!(schema_errors(&from_jtl), Vec::<String>::new());
    // Counts agree with the run's own statistics; times within the JTL's whole ms.
    for (run_row, jtl_row) in summary["labels"].as_array().unwrap().iter().zip(from_jtl["labels"].as_array().unwrap()) {
        for key in ["label", "samples", "errors", "response_codes"] {
            assert_eq!(run_row[key], jtl_row[key], "{key}");
        }
        let (a, b) = (run_row["p50_ms"].as_f64().unwrap(), jtl_row["p50_ms"].as_f64().unwrap());
        assert!((a - b).abs() <= 1.0, "p50 {a} vs {b}");
    }
    // The JSON lines carry µs: reading them back gives the run's summary exactly, less what only a run counts.
    let (_, _, from_jsonl) = report(&dir, &dir.join("out.jsonl"), "jsonl");
    let mut statistics = summary.clone();
    assert_eq!(
        statistics.as_object_mut().unwrap().remove("connections"),
        Some(serde_json::json!({ "out_of_step": 0 }))
    );
    assert_eq!(from_jsonl, statistics);
}

/// Terminal columns: the test's wide characters (kana and CJK ideographs) take two, the rest one.
fn columns(line: &str) -> usize {
    let wide = |c: char| ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c);
    line.chars().map(|c| if wide(c) { 2 } else { 1 }).sum()
}

/// The lines of the summary table: from the header to TOTAL.
fn table_lines(stdout: &str) -> Vec<&str> {
    let lines: Vec<&str> = stdout.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("Label")).unwrap_or_else(|| panic!("no table:\n{stdout}"));
    let end = lines.iter().position(|l| l.starts_with("TOTAL")).unwrap_or_else(|| panic!("no TOTAL:\n{stdout}"));
    lines[start..=end].to_vec()
}

#[test]
fn the_summary_table_aligns_wide_labels_in_terminal_columns() {
    let dir = TempDir::new("report-wide-labels");
    let long = "送信".repeat(30);
    let labels = ["发送短信", "ログイン", "home", "two\nlines", long.as_str()];
    let rows: Vec<Row<'_>> = (0..50u64)
        .map(|i| Row {
            start: T0 + i * 10,
            elapsed: 5 + i % 7,
            label: labels[i as usize % labels.len()],
            code: "200",
            message: "OK",
            success: true,
            failure: "",
            bytes: 100,
            sent: 50,
        })
        .collect();
    let file = dir.join("wide.jtl");
    write_jtl(&file, &rows);
    let report = planrun(dir.path(), [OsStr::new("report"), file.as_os_str()]);
    assert_eq!(report.status.code(), Some(0), "{}", describe(&report));
    let merge = planrun(dir.path(), [OsStr::new("merge"), file.as_os_str(), OsStr::new("-o"), OsStr::new("m.jtl")]);
    assert_eq!(merge.status.code(), Some(0), "{}", describe(&merge));
    for out in [&report, &merge] {
        let text = stdout(out);
        let lines = table_lines(&text);
        // Header, rule, five labels, rule, TOTAL: a label with a line break is still one row.
        assert_eq!(lines.len(), 9, "{text}");
        let width = columns(lines[0]);
        for line in &lines {
            assert_eq!(columns(line), width, "every row as wide as the header:\n{text}");
        }
        // The numbers are right-aligned: a row as wide as the header has them under their headers.
        assert!(text.contains("two\\nlines"), "{text}");
        let cut = lines.iter().find(|l| l.starts_with("送信")).unwrap();
        let label_columns = columns(&cut[..cut.find('…').unwrap() + '…'.len_utf8()]);
        assert!((39..=40).contains(&label_columns), "cut to at most 40 columns, whole characters: {cut}");
    }
}

/// The cells of the summary table line that starts with `label`, cells being apart by two spaces or more (a
/// cell like `< 1` has one).
fn spaced_cells(stdout: &str, label: &str) -> Vec<String> {
    let line = stdout.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label} line:\n{stdout}"));
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect()
}

#[test]
fn times_below_a_jtls_whole_milliseconds_say_so() {
    let dir = TempDir::new("report-resolution");
    // `fast` answers in under a millisecond: its JTL rows say 0 (cut to whole ms), its JSON lines 0.4 ms.
    let rows: Vec<Row<'_>> = (0..20u64)
        .map(|i| Row {
            start: T0 + i * 10,
            elapsed: if i < 2 { 3 } else { 0 },
            label: if i % 2 == 0 { "fast" } else { "zero" },
            code: "200",
            message: "OK",
            success: true,
            failure: "",
            bytes: 100,
            sent: 50,
        })
        .map(|r| if r.label == "zero" { Row { elapsed: 0, ..r } } else { r })
        .collect();
    let file = dir.join("fast.jtl");
    write_jtl(&file, &rows);
    let json: String = rows
        .iter()
        .map(|r| {
            let us = if r.elapsed > 0 { r.elapsed * 1000 + 200 } else { 400 };
            format!(
                "{{\"timestamp\":{},\"elapsed\":{},\"elapsed_us\":{us},\"label\":\"{}\",\"response_code\":\"200\",\
                 \"success\":true}}\n",
                r.start, r.elapsed, r.label
            )
        })
        .collect();
    let jsonl = dir.write("fast.jsonl", json);
    let (table, _, summary) = report(&dir, &file, "jtl");
    let cells = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Mean 0.30 of cut times is a mean of whole ms; the minimum and median are known only to be under 1 ms,
    // and every time of `zero` is.
    assert_eq!(
        spaced_cells(&table, "fast")[..10],
        cells(&["fast", "10", "0.30", "< 1", "3.00", "0.90", "< 1", "< 1", "3.00", "3.00"])[..]
    );
    assert_eq!(
        spaced_cells(&table, "zero")[..10],
        cells(&["zero", "10", "< 1", "< 1", "< 1", "0.00", "< 1", "< 1", "< 1", "< 1"])[..]
    );
    assert_eq!(summary["labels"][0]["resolution_ms"].as_f64(), Some(1.0));
    assert_eq!(summary["labels"][0]["min_ms"].as_f64(), Some(0.0), "the JSON keeps the number");
    // The JSON lines of the same samples have µs.
    let (table, _, summary) = report(&dir, &jsonl, "jsonl");
    assert_eq!(spaced_cells(&table, "zero")[..5], cells(&["zero", "10", "0.40", "0.40", "0.40"])[..]);
    assert_eq!(summary["labels"][0]["resolution_ms"].as_f64(), Some(0.001));
    // merge prints the same table as report.
    let merge = planrun(dir.path(), [OsStr::new("merge"), file.as_os_str(), OsStr::new("-o"), OsStr::new("m.jtl")]);
    assert_eq!(merge.status.code(), Some(0), "{}", describe(&merge));
    assert_eq!(spaced_cells(&stdout(&merge), "zero")[3], "< 1");
}
