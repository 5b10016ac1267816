//! Per-label statistics in HDR histograms, and the summary computed from them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::{Sink, SinkError};
use crate::sample::{ErrorKind, Outcome, Sample};

/// Running statistics of every label and of all requests together (TOTAL).
///
/// Memory does not grow with the number of samples: elapsed times go into auto-resizing HDR histograms (µs,
/// 3 significant digits), everything else into counters.
///
/// Transaction samples get their own label row but are left out of TOTAL: their children are already in it,
/// and counting both would count every request twice. (JMeter's aggregate report counts them in TOTAL.)
#[derive(Debug, Default)]
pub struct Stats {
    index: HashMap<Arc<str>, usize>,
    /// In order of first appearance.
    labels: Vec<(Arc<str>, Tally)>,
    total: Tally,
}

/// The statistics of one label, or of TOTAL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// The label, or `TOTAL`.
    pub label: String,
    /// Number of samples.
    pub samples: u64,
    /// How many of them were transactions.
    pub transactions: u64,
    /// Number of failed samples.
    pub errors: u64,
    /// Failed samples in percent of all samples.
    pub error_pct: f64,
    /// Mean elapsed time, ms.
    pub mean_ms: f64,
    /// Shortest elapsed time, ms.
    pub min_ms: f64,
    /// Longest elapsed time, ms.
    pub max_ms: f64,
    /// Population standard deviation of the elapsed time, ms.
    pub stddev_ms: f64,
    /// Median elapsed time, ms (from the histogram: within 0.1 %).
    pub p50_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p999_ms: f64,
    /// Samples per second between the first start and the last end; 0 when that window is empty.
    pub throughput: f64,
    /// Received KiB (1024 bytes) per second over the same window.
    pub received_kb_s: f64,
    /// Sent KiB (1024 bytes) per second over the same window.
    pub sent_kb_s: f64,
    /// Number of samples by JTL `responseCode` text (a failing transaction's is empty).
    pub response_codes: BTreeMap<String, u64>,
}

/// Every label's row in order of first appearance, then TOTAL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// One row per label, in order of first appearance.
    pub rows: Vec<SummaryRow>,
    /// All requests (transactions excluded).
    pub total: SummaryRow,
}

/// A response code kept without allocating; turned into its JTL text only for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Code {
    Status(u16),
    Error(ErrorKind),
    TransactionPassed,
    TransactionFailed,
}

impl Code {
    fn of(s: &Sample) -> Code {
        match &s.outcome {
            Outcome::Response { status, .. } => Code::Status(*status),
            Outcome::Error { kind, .. } => Code::Error(*kind),
            Outcome::Transaction { failed: 0, .. } => Code::TransactionPassed,
            Outcome::Transaction { .. } => Code::TransactionFailed,
        }
    }

    fn text(self) -> String {
        match self {
            Code::Status(status) => status.to_string(),
            Code::Error(kind) => format!("Non HTTP response code: {}", kind.as_str()),
            Code::TransactionPassed => "200".into(),
            Code::TransactionFailed => String::new(),
        }
    }
}

#[derive(Debug, Clone)]
struct Tally {
    elapsed_us: Histogram<u64>,
    count: u64,
    transactions: u64,
    errors: u64,
    sum_us: u128,
    sum_sq_us: u128,
    min_us: u64,
    max_us: u64,
    bytes: u64,
    sent_bytes: u64,
    first_start_ms: u64,
    last_end_ms: u64,
    codes: HashMap<Code, u64>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            elapsed_us: Histogram::new(3).expect("3 significant digits are supported"),
            count: 0,
            transactions: 0,
            errors: 0,
            sum_us: 0,
            sum_sq_us: 0,
            min_us: u64::MAX,
            max_us: 0,
            bytes: 0,
            sent_bytes: 0,
            first_start_ms: u64::MAX,
            last_end_ms: 0,
            codes: HashMap::new(),
        }
    }
}

impl Tally {
    fn record(&mut self, s: &Sample) {
        let us = s.elapsed_us;
        if self.elapsed_us.record(us).is_err() {
            // Only when the histogram cannot grow further (beyond usize); keep the sample, clamped.
            self.elapsed_us.saturating_record(us);
        }
        self.count += 1;
        self.transactions += u64::from(matches!(s.outcome, Outcome::Transaction { .. }));
        self.errors += u64::from(!s.success);
        self.sum_us += u128::from(us);
        self.sum_sq_us += u128::from(us) * u128::from(us);
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
        self.bytes += s.bytes;
        self.sent_bytes += s.sent_bytes;
        self.first_start_ms = self.first_start_ms.min(s.start_ms);
        self.last_end_ms = self.last_end_ms.max(s.end_ms());
        *self.codes.entry(Code::of(s)).or_insert(0) += 1;
    }

    fn row(&self, label: &str) -> SummaryRow {
        let n = self.count as f64;
        let per_n = |x: f64| if self.count == 0 { 0.0 } else { x / n };
        let mean_us = per_n(self.sum_us as f64);
        let variance = (per_n(self.sum_sq_us as f64) - mean_us * mean_us).max(0.0);
        let window_s = self.last_end_ms.saturating_sub(self.first_start_ms) as f64 / 1000.0;
        let rate = |x: f64| if window_s > 0.0 { x / window_s } else { 0.0 };
        // The histogram answers with the top of a bucket, which may lie above the largest sample.
        let pct = |q: f64| ms(self.elapsed_us.value_at_quantile(q).min(self.max_us));
        let mut response_codes = BTreeMap::new();
        for (code, count) in &self.codes {
            *response_codes.entry(code.text()).or_insert(0) += count;
        }
        SummaryRow {
            label: label.to_string(),
            samples: self.count,
            transactions: self.transactions,
            errors: self.errors,
            error_pct: per_n(self.errors as f64 * 100.0),
            mean_ms: mean_us / 1000.0,
            min_ms: if self.count == 0 { 0.0 } else { ms(self.min_us) },
            max_ms: ms(self.max_us),
            stddev_ms: variance.sqrt() / 1000.0,
            p50_ms: pct(0.50),
            p90_ms: pct(0.90),
            p95_ms: pct(0.95),
            p99_ms: pct(0.99),
            p999_ms: pct(0.999),
            throughput: rate(n),
            received_kb_s: rate(self.bytes as f64 / 1024.0),
            sent_kb_s: rate(self.sent_bytes as f64 / 1024.0),
            response_codes,
        }
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Stats {
    /// Empty statistics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample to its label and, unless it is a transaction, to TOTAL.
    pub fn record(&mut self, s: &Sample) {
        let i = match self.index.get(&*s.label) {
            Some(&i) => i,
            None => {
                self.labels.push((s.label.clone(), Tally::default()));
                self.index.insert(s.label.clone(), self.labels.len() - 1);
                self.labels.len() - 1
            }
        };
        self.labels[i].1.record(s);
        if !matches!(s.outcome, Outcome::Transaction { .. }) {
            self.total.record(s);
        }
    }

    /// The figures so far; TOTAL's window runs from the first request's start to the last request's end.
    pub fn summary(&self) -> Summary {
        Summary {
            rows: self.labels.iter().map(|(label, tally)| tally.row(label)).collect(),
            total: self.total.row("TOTAL"),
        }
    }
}

impl Sink for Stats {
    fn write(&mut self, batch: &[Sample]) -> Result<(), SinkError> {
        for s in batch {
            self.record(s);
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::jtl::tests::sample;

    fn close(got: f64, want: f64, tolerance: f64) {
        assert!((got - want).abs() <= tolerance, "got {got}, want {want} ± {tolerance}");
    }

    /// Elapsed 1..=100 ms, one started every 10 ms, every 10th failed, 1 KiB received and 512 B sent each.
    fn hundred() -> Vec<Sample> {
        (1..=100u64)
            .map(|i| Sample {
                start_ms: 1_000_000 + (i - 1) * 10,
                elapsed_us: i * 1000,
                success: i % 10 != 0,
                bytes: 1024,
                sent_bytes: 512,
                ..sample("get")
            })
            .collect()
    }

    #[test]
    fn known_values() {
        let mut stats = Stats::new();
        stats.write(&hundred()).unwrap();
        let row = stats.summary().total;
        assert_eq!((row.label.as_str(), row.samples, row.errors), ("TOTAL", 100, 10));
        close(row.error_pct, 10.0, 1e-9);
        close(row.mean_ms, 50.5, 1e-9);
        close(row.min_ms, 1.0, 1e-9);
        close(row.max_ms, 100.0, 1e-9);
        close(row.stddev_ms, 28.866, 0.001);
        close(row.p50_ms, 50.0, 0.05);
        close(row.p90_ms, 90.0, 0.09);
        close(row.p95_ms, 95.0, 0.1);
        close(row.p99_ms, 99.0, 0.1);
        close(row.p999_ms, 100.0, 1e-9);
        // First start 1_000_000, last end 1_000_990 + 100: 1.09 s.
        close(row.throughput, 100.0 / 1.09, 1e-9);
        close(row.received_kb_s, 100.0 / 1.09, 1e-9);
        close(row.sent_kb_s, 50.0 / 1.09, 1e-9);
        assert_eq!(row.response_codes, BTreeMap::from([("202".to_string(), 100)]));
    }

    #[test]
    fn rows_in_order_of_appearance_and_transactions_not_in_total() {
        let refused = Sample {
            outcome: Outcome::Error { kind: ErrorKind::ConnectionRefused, message: "refused".into() },
            success: false,
            ..sample("b")
        };
        let tx = Sample { outcome: Outcome::Transaction { children: 2, failed: 1 }, success: false, ..sample("tx") };
        let mut stats = Stats::new();
        stats.write(&[sample("b"), sample("a"), refused, tx]).unwrap();
        let summary = stats.summary();
        let labels: Vec<_> = summary.rows.iter().map(|r| (r.label.as_str(), r.samples, r.errors)).collect();
        assert_eq!(labels, [("b", 2, 1), ("a", 1, 0), ("tx", 1, 1)]);
        assert_eq!((summary.total.samples, summary.total.errors, summary.total.transactions), (3, 1, 0));
        assert_eq!(summary.rows[2].transactions, 1);
        assert_eq!(summary.rows[2].response_codes, BTreeMap::from([(String::new(), 1)]));
        let codes = &summary.total.response_codes;
        assert_eq!(codes.get("202"), Some(&2));
        assert_eq!(codes.get("Non HTTP response code: ConnectionRefused"), Some(&1));
    }

    #[test]
    fn empty_and_single_instant_are_zero_not_nan() {
        let empty = Stats::new().summary();
        assert!(empty.rows.is_empty());
        assert_eq!((empty.total.samples, empty.total.mean_ms, empty.total.throughput), (0, 0.0, 0.0));
        let mut stats = Stats::new();
        stats.record(&Sample { elapsed_us: 300, ..sample("fast") });
        let row = stats.summary().total;
        assert_eq!((row.mean_ms, row.stddev_ms, row.throughput, row.p99_ms), (0.3, 0.0, 0.0, 0.3));
    }
}
