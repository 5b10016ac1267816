//! One metric vocabulary: thresholds and `compare --metric` take the same names and aliases (`avg`,
//! `average`, `median`, `p999`); compare refuses the metrics that say nothing about speed.

use crate::common;

use std::io::Write;
use std::path::Path;

use common::{describe, planrun, stderr, TempDir};

const PLAN: &str = "name: metrics
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: send
        request: { url: 'http://127.0.0.1:1/' }
thresholds:
";

#[test]
fn thresholds_take_every_name_and_alias() {
    let dir = TempDir::new("metric-thresholds");
    let checks = [
        "mean < 1s",
        "avg < 1s",
        "average < 1s",
        "min < 1s",
        "max < 1s",
        "p50 < 1s",
        "median < 1s",
        "p90 < 1s",
        "p95 < 1s",
        "p99 < 1s",
        "p99.9 < 1s",
        "p999 < 1s",
        "error_rate < 1%",
        "throughput > 1/s",
        "samples >= 1",
        "dropped == 0",
        "dropped < 1%",
    ];
    let list: String = checks.iter().map(|c| format!("    - \"{c}\"\n")).collect();
    let plan = dir.write("plan.yaml", format!("{PLAN}  total:\n{list}"));
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));

    let bad = dir.write("bad.yaml", format!("{PLAN}  total: [ \"p96 < 1s\" ]\n"));
    let out = planrun(dir.path(), ["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("unknown metric `p96`"), "{}", describe(&out));
}

fn write_jtl(path: &Path, elapsed: impl Iterator<Item = u64>) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(w, "timeStamp,elapsed,label,responseCode,responseMessage,success").unwrap();
    for (i, e) in elapsed.enumerate() {
        writeln!(w, "{},{e},send,200,OK,true", 1_700_000_000_000u64 + i as u64 * 10).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn compare_takes_the_aliases_and_refuses_what_is_not_speed() {
    let dir = TempDir::new("metric-compare");
    let (a, b) = (dir.join("a.jtl"), dir.join("b.jtl"));
    write_jtl(&a, 10..110);
    write_jtl(&b, (10..110).map(|e| e * 2));
    for metric in ["p999", "P99.9", "average", "avg", "median"] {
        let args = ["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--fail-if-slower", "50", "--metric", metric];
        let out = planrun(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "--metric {metric}: {}", describe(&out));
    }
    for metric in ["error_rate", "samples", "dropped", "p42"] {
        let args = ["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--fail-if-slower", "50", "--metric", metric];
        let out = planrun(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "--metric {metric}: {}", describe(&out));
        assert!(stderr(&out).contains("one of: min, mean, p50, p90, p95, p99, p99.9, max, throughput"));
    }
}
