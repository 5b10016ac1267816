//! The end-of-run summary as a plain-text table.

use crate::diag::width::{one_line, pad_end, pad_start, truncate, width};
use crate::sink::stats::{Summary, SummaryRow};

/// Labels wider than this many terminal columns are cut, ending in an ellipsis.
const MAX_LABEL: usize = 40;

/// Times are shown in ms with 2 decimals: this is the finest step they show.
const SHOWN_STEP_MS: f64 = 0.01;

/// A column of the summary, in the text table and the HTML report alike.
pub struct Column {
    /// Its header in the text table.
    pub header: &'static str,
    /// Its header in the HTML report, where it differs.
    pub report_header: Option<&'static str>,
    /// Whether the text table shows it (the report shows every column).
    pub in_table: bool,
    /// The cell of a row (the label in full).
    pub cell: fn(&SummaryRow) -> String,
}

/// Every column of the summary, in order (the text table leaves out Errors and p99.9).
pub const COLUMNS: [Column; 16] = [
    column("Label", |r| r.label.clone()),
    column("Samples", |r| r.samples.to_string()),
    column("Mean", |r| time(r, r.mean_ms)),
    column("Min", |r| time(r, r.min_ms)),
    column("Max", |r| time(r, r.max_ms)),
    column("StdDev", |r| format!("{:.2}", r.stddev_ms)),
    column("p50", |r| time(r, r.p50_ms)),
    column("p90", |r| time(r, r.p90_ms)),
    column("p95", |r| time(r, r.p95_ms)),
    column("p99", |r| time(r, r.p99_ms)),
    Column { in_table: false, ..column("p99.9", |r| time(r, r.p999_ms)) },
    Column { in_table: false, ..column("Errors", |r| r.errors.to_string()) },
    column("Error %", |r| format!("{:.2}%", r.error_pct)),
    Column { report_header: Some("Throughput/s"), ..column("Throughput", |r| format!("{:.1}", r.throughput)) },
    column("Recv KB/s", |r| format!("{:.2}", r.received_kb_s)),
    column("Sent KB/s", |r| format!("{:.2}", r.sent_kb_s)),
];

impl Column {
    /// Its header in the HTML report.
    pub fn report_header(&self) -> &'static str {
        self.report_header.unwrap_or(self.header)
    }
}

const fn column(header: &'static str, cell: fn(&SummaryRow) -> String) -> Column {
    Column { header, report_header: None, in_table: true, cell }
}

/// A time figure of a row (none when it has no samples).
fn time(row: &SummaryRow, ms: f64) -> String {
    if row.samples == 0 {
        return format!("{ms:.2}");
    }
    time_text(ms, row.resolution_ms)
}

/// A time in ms with 2 decimals; `< 1` (or `< 0.01`) when all that is known of it is that it lies below the
/// resolution of the samples (1 ms for a JTL, whose times are cut to whole ms) or below what 2 decimals show.
/// A figure `t` read from samples of resolution `r` stands for a time in [t, t + r).
pub fn time_text(ms: f64, resolution_ms: f64) -> String {
    let step = resolution_ms.max(SHOWN_STEP_MS);
    if ms + resolution_ms <= step + 1e-9 {
        format!("< {step}")
    } else {
        format!("{ms:.2}")
    }
}

/// An aligned table: one row per label, then TOTAL. Times in ms with 2 decimals, throughput in requests per
/// second, KB = 1024 bytes. The label column is left-aligned, numbers right-aligned, in terminal columns (a
/// Chinese or Japanese character is two wide); a label's line ends and control characters show as escapes.
pub fn render_table(summary: &Summary) -> String {
    let headers: Vec<&str> = COLUMNS.iter().filter(|c| c.in_table).map(|c| c.header).collect();
    let cells: Vec<Vec<String>> = summary.rows.iter().chain([&summary.total]).map(cells).collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| cells.iter().map(|row| width(&row[c])).chain([headers[c].len()]).max().unwrap_or(0))
        .collect();
    let rule = "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1));
    let mut out = String::new();
    line(&mut out, headers.iter().copied(), &widths);
    out.push_str(&rule);
    out.push('\n');
    for (i, row) in cells.iter().enumerate() {
        if i + 1 == cells.len() && i > 0 {
            out.push_str(&rule);
            out.push('\n');
        }
        line(&mut out, row.iter().map(String::as_str), &widths);
    }
    out
}

fn cells(row: &SummaryRow) -> Vec<String> {
    let mut cells: Vec<String> = COLUMNS.iter().filter(|c| c.in_table).map(|c| (c.cell)(row)).collect();
    if let Some(label) = cells.first_mut() {
        *label = truncate(&one_line(label), MAX_LABEL).into_owned();
    }
    cells
}

/// Appends one line: the first cell left-aligned, the others right-aligned, two spaces apart.
fn line<'a>(out: &mut String, cells: impl Iterator<Item = &'a str>, widths: &[usize]) {
    let mut text = String::new();
    for (c, (cell, &width)) in cells.zip(widths).enumerate() {
        if c == 0 {
            text.push_str(&pad_end(cell, width));
        } else {
            text.push_str("  ");
            text.push_str(&pad_start(cell, width));
        }
    }
    out.push_str(text.trim_end());
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn row(label: &str, samples: u64, mean_ms: f64) -> SummaryRow {
        SummaryRow {
            label: label.into(),
            samples,
            transactions: 0,
            errors: 1,
            error_pct: 100.0 / samples as f64,
            mean_ms,
            min_ms: 0.25,
            max_ms: 1234.5,
            stddev_ms: 3.0449,
            p50_ms: 1.0,
            p90_ms: 2.0,
            p95_ms: 3.0,
            p99_ms: 4.0,
            p999_ms: 5.0,
            throughput: 123.456,
            received_kb_s: 1.5,
            sent_kb_s: 0.75,
            response_codes: BTreeMap::new(),
            resolution_ms: 0.001,
        }
    }

    #[test]
    fn renders_an_aligned_table() {
        let summary = Summary {
            rows: vec![row("sendsms", 3, 12.345), row(&"x".repeat(45), 1000, 0.5)],
            total: row("TOTAL", 1003, 0.54),
        };
        let table = render_table(&summary);
        let expected = "\
Label                                     Samples   Mean   Min      Max  StdDev   p50   p90   p95   p99  Error %  Throughput  Recv KB/s  Sent KB/s
--------------------------------------------------------------------------------------------------------------------------------------------------
sendsms                                         3  12.35  0.25  1234.50    3.04  1.00  2.00  3.00  4.00   33.33%       123.5       1.50       0.75
xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…     1000   0.50  0.25  1234.50    3.04  1.00  2.00  3.00  4.00    0.10%       123.5       1.50       0.75
--------------------------------------------------------------------------------------------------------------------------------------------------
TOTAL                                        1003   0.54  0.25  1234.50    3.04  1.00  2.00  3.00  4.00    0.10%       123.5       1.50       0.75
";
        assert_eq!(table, expected);
    }

    #[test]
    fn an_empty_run_has_only_total() {
        let table = render_table(&Summary { rows: vec![], total: row("TOTAL", 1, 0.0) });
        assert_eq!(table.lines().count(), 3);
        assert!(table.lines().nth(2).unwrap().starts_with("TOTAL"));
    }

    #[test]
    fn times_below_the_resolution_say_so() {
        assert_eq!(
            (time_text(0.0, 1.0), time_text(1.0, 1.0), time_text(0.4, 1.0)),
            ("< 1".into(), "1.00".into(), "0.40".into())
        );
        assert_eq!((time_text(0.004, 0.001), time_text(0.0095, 0.001)), ("< 0.01".into(), "0.01".into()));
        let jtl = SummaryRow { min_ms: 0.0, p50_ms: 0.0, resolution_ms: 1.0, ..row("a", 2, 0.5) };
        let cells = cells(&jtl);
        assert_eq!((cells[2].as_str(), cells[3].as_str(), cells[6].as_str()), ("0.50", "< 1", "< 1"));
    }
}
