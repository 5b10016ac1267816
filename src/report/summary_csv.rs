//! The summary CSV (`--summary-csv FILE`): the per-label table as JMeter's Aggregate Report writes it with
//! "Save Table Data" (JMeter 5.6's `StatGraphVisualizer` formats and `CSVSaveService.saveCSVStats`), for the
//! spreadsheet most people build from a JTL.
//!
//! Times are whole ms, cut as JMeter cuts them (`(long)` of the mean); `Error %` as `#0.000%`, `Throughput`
//! (samples per second) as `#.00000` (no `0` before the point: `.50000`), the KB/sec columns (KB = 1024 bytes)
//! as `#0.00`, with a `.` whatever the locale. The rows are the labels in order of first appearance, then
//! `TOTAL`: all requests, transactions left out as in planrun's summary (JMeter counts them in its TOTAL).

use std::fmt::Write as _;

use crate::sink::stats::{Summary, SummaryRow};

/// The header, exactly as JMeter writes it (with its default percentiles 90, 95 and 99).
pub const HEADER: &str = "Label,# Samples,Average,Median,90% Line,95% Line,99% Line,Min,Max,Error %,Throughput,\
Received KB/sec,Sent KB/sec";

/// The file's text: the header, a row per label, then TOTAL; lines end with `\n`.
pub fn summary_csv(summary: &Summary) -> String {
    let mut out = String::with_capacity(128 * (summary.rows.len() + 2));
    out.push_str(HEADER);
    out.push('\n');
    for row in summary.rows.iter().chain([&summary.total]) {
        write_row(&mut out, row);
    }
    out
}

fn write_row(out: &mut String, row: &SummaryRow) {
    // Whole ms, cut towards zero as Java's (long) cast; the times are never negative.
    let ms = |v: f64| v.max(0.0).floor() as u64;
    let error_ratio = if row.samples == 0 { 0.0 } else { row.errors as f64 / row.samples as f64 };
    out.push_str(&quote(&row.label));
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        ",{},{},{},{},{},{},{},{},{:.3}%,{},{:.2},{:.2}",
        row.samples,
        ms(row.mean_ms),
        ms(row.p50_ms),
        ms(row.p90_ms),
        ms(row.p95_ms),
        ms(row.p99_ms),
        ms(row.min_ms),
        ms(row.max_ms),
        error_ratio * 100.0,
        no_leading_zero(format!("{:.5}", row.throughput)),
        row.received_kb_s,
        row.sent_kb_s,
    );
    out.push('\n');
}

/// Java's `#.00000`: an integer part of 0 is not written.
fn no_leading_zero(text: String) -> String {
    match text.strip_prefix("0.") {
        Some(fraction) => format!(".{fraction}"),
        None => text,
    }
}

/// A field quoted when it holds a comma, a quote or a line break, quotes doubled. (JMeter quotes only for a
/// comma or a quote, which leaves a label with a line break a broken row.)
fn quote(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::stats::Stats;
    use crate::sink::stats::{Observation, ResponseCode};

    fn observe(stats: &mut Stats, label: &str, start_ms: u64, elapsed_ms: u64, success: bool) {
        stats.observe(&Observation {
            label,
            start_ms,
            elapsed_us: elapsed_ms * 1000,
            success,
            transaction: false,
            code: ResponseCode::Status(if success { 200 } else { 500 }),
            bytes: 1024,
            sent_bytes: 512,
        });
    }

    #[test]
    fn rows_as_jmeter_saves_the_aggregate_report() {
        let mut stats = Stats::with_resolution_us(1000);
        // `a`: 10, 20, 30, 41 ms, one failed, from 0 to 2 s; `b, "x"`: one sample of 5 ms.
        for (i, elapsed) in [10, 20, 30, 41].into_iter().enumerate() {
            observe(&mut stats, "a", 1_000_000 + i as u64 * 500, elapsed, i != 3);
        }
        observe(&mut stats, "b, \"x\"", 1_000_000, 5, true);
        let text = summary_csv(&stats.summary());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        // a: mean 25.25 -> 25; median 20; 4 samples in 1.541 s; 4 KiB and 2 KiB in that time.
        assert_eq!(lines[1], "a,4,25,20,41,41,41,10,41,25.000%,2.59572,2.60,1.30");
        assert_eq!(lines[2], "\"b, \"\"x\"\"\",1,5,5,5,5,5,5,5,0.000%,200.00000,200.00,100.00");
        assert_eq!(lines[3], "TOTAL,5,21,20,41,41,41,5,41,20.000%,3.24465,3.24,1.62");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn an_empty_run_has_a_total_row_and_small_rates_no_leading_zero() {
        let text = summary_csv(&Stats::new().summary());
        assert_eq!(text, format!("{HEADER}\nTOTAL,0,0,0,0,0,0,0,0,0.000%,.00000,0.00,0.00\n"));
        assert_eq!(no_leading_zero("0.50000".into()), ".50000");
        assert_eq!(no_leading_zero("10.50000".into()), "10.50000");
    }
}
