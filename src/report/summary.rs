//! The end-of-run summary as a plain-text table.

use std::fmt::Write as _;

use crate::sink::stats::{Summary, SummaryRow};

/// Labels longer than this many characters are cut, ending in an ellipsis.
const MAX_LABEL: usize = 40;

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
    column("Mean", |r| ms(r.mean_ms)),
    column("Min", |r| ms(r.min_ms)),
    column("Max", |r| ms(r.max_ms)),
    column("StdDev", |r| ms(r.stddev_ms)),
    column("p50", |r| ms(r.p50_ms)),
    column("p90", |r| ms(r.p90_ms)),
    column("p95", |r| ms(r.p95_ms)),
    column("p99", |r| ms(r.p99_ms)),
    Column { in_table: false, ..column("p99.9", |r| ms(r.p999_ms)) },
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

/// A time in ms, with 2 decimals.
fn ms(v: f64) -> String {
    format!("{v:.2}")
}

/// An aligned table: one row per label, then TOTAL. Times in ms with 2 decimals, throughput in requests per
/// second, KB = 1024 bytes. The label column is left-aligned, numbers right-aligned.
pub fn render_table(summary: &Summary) -> String {
    let headers: Vec<&str> = COLUMNS.iter().filter(|c| c.in_table).map(|c| c.header).collect();
    let cells: Vec<Vec<String>> = summary.rows.iter().chain([&summary.total]).map(cells).collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| cells.iter().map(|row| row[c].chars().count()).chain([headers[c].len()]).max().unwrap_or(0))
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
        *label = truncate(label);
    }
    cells
}

/// Appends one line: the first cell left-aligned, the others right-aligned, two spaces apart.
fn line<'a>(out: &mut String, cells: impl Iterator<Item = &'a str>, widths: &[usize]) {
    let mut text = String::new();
    // Writing to a String cannot fail.
    for (c, (cell, &width)) in cells.zip(widths).enumerate() {
        let _ = if c == 0 { write!(text, "{cell:<width$}") } else { write!(text, "  {cell:>width$}") };
    }
    out.push_str(text.trim_end());
    out.push('\n');
}

fn truncate(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL {
        return label.to_string();
    }
    let mut cut: String = label.chars().take(MAX_LABEL - 1).collect();
    cut.push('…');
    cut
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
}
