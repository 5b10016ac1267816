//! Per-label statistics in HDR histograms, and the summary computed from them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::latencies::{self, Latencies};
use super::{Sink, SinkError};
use crate::metric::Metric;
use crate::sample::{ErrorKind, Outcome, Sample};

/// Running statistics of every label and of all requests together (TOTAL).
///
/// Memory does not grow with the number of samples: elapsed times go into auto-resizing HDR histograms (µs,
/// 3 significant digits; a label's first few times are kept as they are, see [`Latencies`]), everything else
/// into counters.
///
/// Transaction samples get their own label row but are left out of TOTAL: their children are already in it,
/// and counting both would count every request twice. (JMeter's aggregate report counts them in TOTAL.)
///
/// Result files read back by the reports feed the same statistics through [`Stats::observe`]; a
/// JTL holds whole milliseconds, so its statistics are built [`Stats::with_resolution_us`] 1000, which makes
/// the percentiles whole milliseconds too.
#[derive(Debug)]
pub struct Stats {
    index: HashMap<Arc<str>, usize>,
    /// In order of first appearance.
    labels: Vec<(Arc<str>, Tally)>,
    /// TOTAL once it is kept apart; see [`Stats::total`].
    total: Tally,
    /// False while every sample so far is a request of the first label: TOTAL is then that label's tally,
    /// and recording each sample twice would be work for nothing. The first sample that makes them differ
    /// (another label, a transaction) copies the label's tally into `total`, kept apart from then on.
    total_apart: bool,
    /// Every recorded elapsed time is a multiple of this many µs (1 for live samples).
    resolution_us: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            index: HashMap::new(),
            labels: Vec::new(),
            total: Tally::default(),
            total_apart: false,
            resolution_us: 1,
        }
    }
}

/// Labels looked for by address before the name is hashed.
const SCANNED_LABELS: usize = 32;

/// A sample as the statistics see it: borrowed, so a reader of result files need not build a [`Sample`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation<'a> {
    /// The sample's label.
    pub label: &'a str,
    /// Start of the sample, ms since the Unix epoch.
    pub start_ms: u64,
    /// Elapsed time, µs.
    pub elapsed_us: u64,
    /// Whether the sample passed.
    pub success: bool,
    /// A transaction (parent) sample: it gets its label's row but stays out of TOTAL.
    pub transaction: bool,
    /// The JTL `responseCode`.
    pub code: ResponseCode<'a>,
    /// Bytes received.
    pub bytes: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
}

impl<'a> Observation<'a> {
    /// The statistics' view of a sample.
    pub fn of(s: &'a Sample) -> Self {
        Observation {
            label: &s.label,
            start_ms: s.start_ms,
            elapsed_us: s.elapsed_us,
            success: s.success,
            transaction: matches!(s.outcome, Outcome::Transaction { .. }),
            code: ResponseCode::of(s),
            bytes: s.bytes,
            sent_bytes: s.sent_bytes,
        }
    }

    /// The end of the sample, ms since the epoch.
    fn end_ms(&self) -> u64 {
        self.start_ms + self.elapsed_us / 1000
    }
}

/// A response code as counted: kept without allocating, turned into its JTL text only for the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseCode<'a> {
    /// An HTTP status, written as its decimal number.
    Status(u16),
    /// One of planrun's transport errors (`Non HTTP response code: <kind>`).
    Error(ErrorKind),
    /// Any other text, as written (a failing transaction's empty code, another tool's error text).
    Text(&'a str),
}

impl ResponseCode<'static> {
    /// The code of a sample; its text is [`Sample::response_code`].
    pub fn of(s: &Sample) -> Self {
        match &s.outcome {
            Outcome::Response { status, .. } => ResponseCode::Status(*status),
            Outcome::Error { kind, .. } => ResponseCode::Error(*kind),
            Outcome::Transaction { failed: 0, .. } => ResponseCode::Status(200),
            Outcome::Transaction { .. } => ResponseCode::Text(""),
        }
    }
}

impl<'a> ResponseCode<'a> {
    /// The code written as `text`: a status when it is one written the usual way, else the text itself.
    pub fn parse(text: &'a str) -> Self {
        let canonical = !text.is_empty() && text.len() <= 5 && !text.starts_with('0');
        match text.parse::<u16>() {
            Ok(status) if canonical && text.bytes().all(|b| b.is_ascii_digit()) => ResponseCode::Status(status),
            _ => ResponseCode::Text(text),
        }
    }
}

/// The statistics of one label, or of TOTAL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// The resolution of the elapsed times behind these figures, ms: 1 for a JTL's whole (cut) milliseconds,
    /// 0.001 for a run's own statistics and JSON lines (µs). A time read as `t` was in [t, t + resolution).
    #[serde(default = "microsecond")]
    pub resolution_ms: f64,
}

/// The resolution of a summary that does not say (written before it was recorded): µs, a run's own.
fn microsecond() -> f64 {
    0.001
}

impl SummaryRow {
    /// A metric's value in its unit (ms, a fraction, per second, a count); `None` for the run's dropped
    /// iterations, which no row holds.
    pub fn figure(&self, metric: Metric) -> Option<f64> {
        Some(match metric {
            Metric::Mean => self.mean_ms,
            Metric::Min => self.min_ms,
            Metric::Max => self.max_ms,
            Metric::P50 => self.p50_ms,
            Metric::P90 => self.p90_ms,
            Metric::P95 => self.p95_ms,
            Metric::P99 => self.p99_ms,
            Metric::P999 => self.p999_ms,
            Metric::ErrorRate => self.error_pct / 100.0,
            Metric::Throughput => self.throughput,
            Metric::Samples => self.samples as f64,
            Metric::Dropped | Metric::DroppedRate => return None,
        })
    }
}

/// Every label's row in order of first appearance, then TOTAL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// One row per label, in order of first appearance.
    pub rows: Vec<SummaryRow>,
    /// All requests (transactions excluded).
    pub total: SummaryRow,
}

impl Summary {
    /// Samples that failed because planrun itself did (a panic caught inside a virtual user).
    pub fn internal_errors(&self) -> u64 {
        let code = format!("Non HTTP response code: {}", ErrorKind::Internal.as_str());
        self.total.response_codes.get(&code).copied().unwrap_or(0)
    }
}

/// A response code counted without allocating: statuses and transport errors; other texts are counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Code {
    Status(u16),
    Error(ErrorKind),
}

impl Code {
    fn text(self) -> String {
        match self {
            Code::Status(status) => status.to_string(),
            Code::Error(kind) => format!("Non HTTP response code: {}", kind.as_str()),
        }
    }
}

/// Distinct response code texts (neither a status nor a transport error) counted per label: a results file
/// whose codes carry a unique id would otherwise keep one entry per row. The rest are counted together as
/// [`OTHER_CODES`].
pub const MAX_TEXT_CODES: usize = 100;

/// The response code under which texts past [`MAX_TEXT_CODES`] are counted.
pub const OTHER_CODES: &str = "(other codes)";

#[derive(Debug, Clone)]
struct Tally {
    elapsed_us: Latencies,
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
    /// Few distinct codes in any run: a list searched in order beats hashing every sample.
    codes: Vec<(Code, u64)>,
    text_codes: HashMap<Box<str>, u64>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            elapsed_us: Latencies::default(),
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
            codes: Vec::new(),
            text_codes: HashMap::new(),
        }
    }
}

impl Tally {
    fn record(&mut self, s: &Observation<'_>) {
        let us = s.elapsed_us;
        self.elapsed_us.record(us);
        self.count += 1;
        self.transactions += u64::from(s.transaction);
        self.errors += u64::from(!s.success);
        self.sum_us += u128::from(us);
        self.sum_sq_us += u128::from(us) * u128::from(us);
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
        self.bytes += s.bytes;
        self.sent_bytes += s.sent_bytes;
        self.first_start_ms = self.first_start_ms.min(s.start_ms);
        self.last_end_ms = self.last_end_ms.max(s.end_ms());
        let code = match s.code {
            ResponseCode::Status(status) => Code::Status(status),
            ResponseCode::Error(kind) => Code::Error(kind),
            ResponseCode::Text(text) => {
                // Past the limit a text is counted under OTHER_CODES, unless it was seen before.
                let key = if self.text_codes.len() < MAX_TEXT_CODES || self.text_codes.contains_key(text) {
                    text
                } else {
                    OTHER_CODES
                };
                match self.text_codes.get_mut(key) {
                    Some(n) => *n += 1,
                    None => {
                        self.text_codes.insert(key.into(), 1);
                    }
                }
                return;
            }
        };
        match self.codes.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.codes.push((code, 1)),
        }
    }

    fn row(&self, label: &str, resolution_us: u64) -> SummaryRow {
        let n = self.count as f64;
        let per_n = |x: f64| if self.count == 0 { 0.0 } else { x / n };
        let mean_us = per_n(self.sum_us as f64);
        let variance = (per_n(self.sum_sq_us as f64) - mean_us * mean_us).max(0.0);
        let window_s = self.last_end_ms.saturating_sub(self.first_start_ms) as f64 / 1000.0;
        let rate = |x: f64| if window_s > 0.0 { x / window_s } else { 0.0 };
        // The histogram answers with the top of a bucket, which may lie above the largest sample. When every
        // sample is a multiple of the resolution, the sample in that bucket is its first such multiple.
        let [p50, p90, p95, p99, p999] = self.elapsed_us.values_at_quantiles([0.50, 0.90, 0.95, 0.99, 0.999]);
        let pct = |top: u64| {
            let snapped = latencies::lowest_equivalent(top).div_ceil(resolution_us) * resolution_us;
            let value = if resolution_us > 1 && snapped <= top { snapped } else { top };
            ms(value.min(self.max_us))
        };
        let mut response_codes = BTreeMap::new();
        for (code, count) in &self.codes {
            *response_codes.entry(code.text()).or_insert(0) += count;
        }
        for (text, count) in &self.text_codes {
            *response_codes.entry(text.to_string()).or_insert(0) += count;
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
            p50_ms: pct(p50),
            p90_ms: pct(p90),
            p95_ms: pct(p95),
            p99_ms: pct(p99),
            p999_ms: pct(p999),
            throughput: rate(n),
            received_kb_s: rate(self.bytes as f64 / 1024.0),
            sent_kb_s: rate(self.sent_bytes as f64 / 1024.0),
            response_codes,
            resolution_ms: ms(resolution_us),
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

    /// Empty statistics of samples whose elapsed times are all multiples of `resolution_us` (1000 for the
    /// whole milliseconds of a JTL): percentiles are then reported as such multiples, the exact sample values
    /// rather than the top of a histogram bucket (for samples below about 1 s, where buckets are narrower).
    pub fn with_resolution_us(resolution_us: u64) -> Self {
        Stats { resolution_us: resolution_us.max(1), ..Self::default() }
    }

    /// The resolution given to [`Stats::with_resolution_us`] (1 by default).
    pub fn resolution_us(&self) -> u64 {
        self.resolution_us
    }

    /// Adds one sample to its label and, unless it is a transaction, to TOTAL.
    pub fn record(&mut self, s: &Sample) {
        // A step's samples all share its name's allocation: found by address among the first labels, without
        // hashing the text; a plan of thousands of steps hashes the rest rather than scan them all.
        let i = match self.labels.iter().take(SCANNED_LABELS).position(|(label, _)| Arc::ptr_eq(label, &s.label)) {
            Some(i) => i,
            None => self.index_of(&s.label, || s.label.clone()),
        };
        self.record_at(i, &Observation::of(s));
    }

    /// Adds one observation to its label and, unless it is a transaction, to TOTAL.
    pub fn observe(&mut self, s: &Observation<'_>) {
        let i = self.index_of(s.label, || Arc::from(s.label));
        self.record_at(i, s);
    }

    /// The label's place in `labels`, added when it is new.
    fn index_of(&mut self, label: &str, owned: impl FnOnce() -> Arc<str>) -> usize {
        if let Some(&i) = self.index.get(label) {
            return i;
        }
        let label = owned();
        self.labels.push((label.clone(), Tally::default()));
        self.index.insert(label, self.labels.len() - 1);
        self.labels.len() - 1
    }

    fn record_at(&mut self, i: usize, s: &Observation<'_>) {
        if !self.total_apart && (i != 0 || s.transaction) {
            if let Some((_, first)) = self.labels.first() {
                self.total = first.clone();
            }
            self.total_apart = true;
        }
        self.labels[i].1.record(s);
        if self.total_apart && !s.transaction {
            self.total.record(s);
        }
    }

    /// TOTAL: every request, transactions left out.
    fn total(&self) -> &Tally {
        match self.labels.first() {
            Some((_, first)) if !self.total_apart => first,
            _ => &self.total,
        }
    }

    /// The figures so far; TOTAL's window runs from the first request's start to the last request's end.
    pub fn summary(&self) -> Summary {
        Summary {
            rows: self.labels.iter().map(|(label, tally)| tally.row(label, self.resolution_us)).collect(),
            total: self.total().row("TOTAL", self.resolution_us),
        }
    }

    /// Every label's elapsed times (µs, as in a histogram of 3 significant digits), in order of first appearance.
    pub fn latencies(&self) -> impl Iterator<Item = (&str, &Latencies)> {
        self.labels.iter().map(|(label, tally)| (&**label, &tally.elapsed_us))
    }

    /// The label's elapsed times (µs), when it has samples.
    pub fn label_latencies(&self, label: &str) -> Option<&Latencies> {
        self.index.get(label).map(|&i| &self.labels[i].1.elapsed_us)
    }

    /// TOTAL's elapsed times (µs).
    pub fn total_latencies(&self) -> &Latencies {
        &self.total().elapsed_us
    }

    /// TOTAL's window: the first request's start and the last request's end, ms since the epoch; `None`
    /// before the first request.
    pub fn window_ms(&self) -> Option<(u64, u64)> {
        let total = self.total();
        (total.count > 0).then_some((total.first_start_ms, total.last_end_ms))
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
    use crate::sample::tests::sample;

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

    /// A request's observation started at 0.
    fn observation<'a>(label: &'a str, elapsed_us: u64, success: bool, code: ResponseCode<'a>) -> Observation<'a> {
        Observation { label, start_ms: 0, elapsed_us, success, transaction: false, code, bytes: 0, sent_bytes: 0 }
    }

    #[test]
    fn response_code_texts_past_the_limit_are_counted_together() {
        let mut stats = Stats::with_resolution_us(1000);
        let texts: Vec<String> = (0..MAX_TEXT_CODES + 50).map(|i| format!("code {i}")).collect();
        for text in texts.iter().chain(&texts[..10]) {
            stats.observe(&observation("a", 1000, false, ResponseCode::parse(text)));
        }
        let row = stats.summary().total;
        assert_eq!(row.response_codes.len(), MAX_TEXT_CODES + 1);
        assert_eq!(row.response_codes["code 0"], 2, "a text seen before the limit is still counted on its own");
        assert_eq!(row.response_codes[OTHER_CODES], 50);
        assert_eq!(row.response_codes.values().sum::<u64>(), row.samples);
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

    #[test]
    fn observations_count_like_samples_and_texts_join_statuses() {
        let mut stats = Stats::new();
        let failed_tx =
            Sample { outcome: Outcome::Transaction { children: 1, failed: 1 }, success: false, ..sample("tx") };
        stats.write(&[sample("a"), failed_tx]).unwrap();
        let observed = |code, transaction| Observation {
            label: "a",
            start_ms: 1_764_547_200_123,
            elapsed_us: 4000,
            success: true,
            transaction,
            code,
            bytes: 0,
            sent_bytes: 0,
        };
        stats.observe(&observed(ResponseCode::parse("202"), false));
        stats.observe(&observed(ResponseCode::parse("Non HTTP response code: java.net.SocketException"), false));
        stats.observe(&Observation { label: "tx", ..observed(ResponseCode::parse(""), true) });
        let summary = stats.summary();
        assert_eq!(summary.rows[0].response_codes.get("202"), Some(&2));
        assert_eq!(summary.rows[0].response_codes.get("Non HTTP response code: java.net.SocketException"), Some(&1));
        assert_eq!(summary.rows[1].response_codes, BTreeMap::from([(String::new(), 2)]));
        assert_eq!((summary.total.samples, summary.rows[1].transactions), (3, 2));
        assert_eq!(ResponseCode::parse("0200"), ResponseCode::Text("0200"));
        assert_eq!(ResponseCode::parse("+200"), ResponseCode::Text("+200"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// TOTAL borrowed from the first label while they agree gives what a TOTAL recorded apart from the
        /// first sample gives, whatever the order of labels, transactions, codes and times.
        #[test]
        fn total_shared_with_the_first_label_equals_total_kept_apart(
            samples in proptest::collection::vec((0usize..3, proptest::bool::ANY, 1u64..5_000_000, 0u64..2000, 0u16..3), 0..40),
        ) {
            let mut shared = Stats::new();
            let mut apart = Stats { total_apart: true, ..Stats::new() };
            for (label, transaction, elapsed_us, start, code) in samples {
                let outcome = if transaction {
                    Outcome::Transaction { children: 2, failed: u32::from(code) }
                } else {
                    Outcome::Response { status: 200 + code, reason: "OK".into() }
                };
                let s = Sample {
                    start_ms: 1_000_000 + start,
                    elapsed_us,
                    success: code != 1,
                    outcome,
                    ..sample(["a", "b", "c"][label])
                };
                shared.record(&s);
                apart.record(&s);
                proptest::prop_assert_eq!(shared.window_ms(), apart.window_ms());
            }
            proptest::prop_assert_eq!(shared.summary(), apart.summary());
            proptest::prop_assert!(shared.total_latencies().histogram() == apart.total_latencies().histogram());
        }
    }

    #[test]
    fn whole_millisecond_resolution_gives_whole_millisecond_percentiles() {
        let mut stats = Stats::with_resolution_us(1000);
        for i in (1..=2000u64).rev() {
            stats.observe(&observation("ms", i * 1000, true, ResponseCode::Status(200)));
        }
        let row = stats.summary().total;
        assert_eq!(
            (row.p50_ms, row.p90_ms, row.p95_ms, row.p99_ms, row.p999_ms),
            (1000.0, 1800.0, 1900.0, 1980.0, 1998.0)
        );
    }
}
