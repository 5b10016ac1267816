//! `planrun compare A B`: two results side by side, per label and TOTAL, with the ratio B/A of every figure and
//! a verdict per label from a statistical test of the two latency distributions.
//!
//! How a verdict is reached (docs/results.md says more):
//! 1. Each side keeps a uniform random sample of at most [`super::reservoir::CAPACITY`] elapsed times per label
//!    (reservoir sampling with a fixed seed, so the same files give the same verdict).
//! 2. A two-sided Mann-Whitney U test compares the two samples ([`mann_whitney`]).
//! 3. B is `slower` (or `faster`) only when p < [`ALPHA`] **and** the median (from the full histograms) moved
//!    up (or down) by more than [`MIN_MEDIAN_CHANGE_PCT`]: on large samples a test finds even a 0.1 % shift
//!    "significant", and such a shift is not what anyone means by slower.
//!
//! Otherwise the verdict is `no significant difference`, or `not tested` when a side has fewer than
//! [`MIN_SAMPLES`] samples or is a summary JSON (statistics only, no samples to test).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::distribution::Bins;
use super::mann_whitney::{mann_whitney, MannWhitney};
use super::reservoir::Reservoirs;
use super::results::{sniff, Format, ResultsError, ResultsReader};
use super::summary_json::SummaryFile;
use crate::metric::Metric;
use crate::sink::stats::{Stats, SummaryRow};

/// The significance level of the test.
pub const ALPHA: f64 = 0.01;

/// The least change of the median, in percent, that a verdict `faster` or `slower` needs.
pub const MIN_MEDIAN_CHANGE_PCT: f64 = 5.0;

/// The fewest samples a side needs for the test.
pub const MIN_SAMPLES: u64 = 10;

/// The method, as reports state it.
pub const METHOD: &str = "two-sided Mann-Whitney U test (normal approximation, tie- and continuity-corrected) on \
    up to 10,000 samples per label and side (reservoir sampling, fixed seed); faster or slower only when \
    p < 0.01 and the median moved by more than 5%";

/// One side of a comparison: its statistics, and when it was read from samples, their histograms and
/// reservoirs.
#[derive(Debug)]
pub struct Side {
    /// The file, as named.
    pub name: String,
    /// Per label and TOTAL.
    pub summary: SummaryFile,
    samples: Option<(Stats, Reservoirs)>,
    /// Where each label's row is in `summary.labels`.
    index: HashMap<String, usize>,
}

impl Side {
    /// Reads a JTL, JSON lines or summary JSON file.
    pub fn load(path: &Path) -> Result<Side, ResultsError> {
        let name = path.display().to_string();
        if sniff(path)? == Format::SummaryJson {
            let summary = SummaryFile::read(path)?;
            return Ok(Side::new(name, summary, None));
        }
        let mut reader = ResultsReader::open(path)?;
        let mut stats = Stats::with_resolution_us(reader.resolution_us());
        let mut reservoirs = Reservoirs::new();
        while let Some(r) = reader.next_record()? {
            stats.observe(&r.observation());
            reservoirs.offer(&r.label, r.elapsed_us, r.transaction);
        }
        let summary = SummaryFile::new(&stats);
        Ok(Side::new(name, summary, Some((stats, reservoirs))))
    }

    fn new(name: String, summary: SummaryFile, samples: Option<(Stats, Reservoirs)>) -> Self {
        let index = summary.labels.iter().enumerate().map(|(i, r)| (r.label.clone(), i)).collect();
        Side { name, summary, samples, index }
    }

    fn reservoir(&self, label: &str) -> Option<&[u64]> {
        let (_, reservoirs) = self.samples.as_ref()?;
        let r = if label == "TOTAL" { reservoirs.total() } else { reservoirs.label(label) };
        Some(r.map_or(&[], |r| r.values()))
    }

    fn histogram(&self, label: &str) -> Option<&Histogram<u64>> {
        let (stats, _) = self.samples.as_ref()?;
        if label == "TOTAL" {
            return Some(stats.total_histogram());
        }
        stats.histogram(label)
    }

    fn resolution_us(&self) -> u64 {
        self.samples.as_ref().map_or(1, |(stats, _)| stats.resolution_us())
    }

    fn row(&self, label: &str) -> Option<&SummaryRow> {
        if label == "TOTAL" {
            return Some(&self.summary.total);
        }
        self.index.get(label).map(|&i| &self.summary.labels[i])
    }
}

/// What the test says about B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// B is faster: significant, and the median dropped by more than 5 %.
    #[serde(rename = "faster")]
    Faster,
    /// B is slower: significant, and the median rose by more than 5 %.
    #[serde(rename = "slower")]
    Slower,
    /// Not significant, or the median moved 5 % or less.
    #[serde(rename = "no significant difference")]
    NoSignificantDifference,
    /// No test: too few samples, or a side with statistics only.
    #[serde(rename = "not tested")]
    NotTested,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::NotTested => "not tested",
        })
    }
}

/// B/A for each figure; `null` when A is 0 (infinite, or 0/0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratios {
    /// Samples.
    pub samples: Option<f64>,
    /// Error %.
    pub error_pct: Option<f64>,
    /// Minimum.
    pub min: Option<f64>,
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Maximum.
    pub max: Option<f64>,
    /// Throughput.
    pub throughput: Option<f64>,
}

/// Both distributions over shared bins, in percent of each side's samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overlay {
    /// Lower edge of the first bin, ms.
    pub lo_ms: f64,
    /// Bin width, ms.
    pub bin_ms: f64,
    /// A's samples per bin.
    pub a: Vec<u64>,
    /// B's samples per bin.
    pub b: Vec<u64>,
    /// A's samples beyond the last bin.
    pub a_overflow: u64,
    /// B's samples beyond the last bin.
    pub b_overflow: u64,
}

/// One label (or TOTAL) on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelComparison {
    /// The label, or `TOTAL`.
    pub label: String,
    /// A's figures.
    pub a: SummaryRow,
    /// B's figures.
    pub b: SummaryRow,
    /// B/A.
    pub ratios: Ratios,
    /// How far B's median is from A's, percent; `null` when A's is 0 and B's is not.
    pub median_change_pct: Option<f64>,
    /// The test, when both sides have samples.
    pub test: Option<MannWhitney>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in one line.
    pub reason: String,
    /// The two distributions, when both sides have samples.
    pub overlay: Option<Overlay>,
}

/// Two results compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// File A.
    pub a: String,
    /// File B.
    pub b: String,
    /// How verdicts are reached.
    pub method: String,
    /// Labels on both sides, in A's order, then TOTAL.
    pub rows: Vec<LabelComparison>,
    /// Labels only A has.
    pub only_in_a: Vec<String>,
    /// Labels only B has.
    pub only_in_b: Vec<String>,
}

/// The metrics `--fail-if-slower` can watch: the times and throughput (not error rate, samples or drops,
/// whose relative change says nothing about speed), in the order its help lists them.
pub const WATCHED: [Metric; 9] = [
    Metric::Min,
    Metric::Mean,
    Metric::P50,
    Metric::P90,
    Metric::P95,
    Metric::P99,
    Metric::P999,
    Metric::Max,
    Metric::Throughput,
];

/// Reads `--metric`: a name or alias of one of [`WATCHED`], in any case.
pub fn watched_metric(text: &str) -> Result<Metric, String> {
    match Metric::from_name(&text.to_ascii_lowercase()) {
        Some(m) if WATCHED.contains(&m) => Ok(m),
        _ => {
            let names: Vec<&str> = WATCHED.iter().map(|m| m.name()).collect();
            Err(format!("unknown metric `{text}`; one of: {}", names.join(", ")))
        }
    }
}

/// How much worse B is than A, percent (negative when better).
fn worse_pct(metric: Metric, a: f64, b: f64) -> f64 {
    let change = change_pct(a, b).unwrap_or(f64::INFINITY);
    if metric.higher_is_better() {
        -change
    } else {
        change
    }
}

/// A label whose metric got worse by more than allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// The label, or TOTAL.
    pub label: String,
    /// A's value.
    pub a: f64,
    /// B's value.
    pub b: f64,
    /// How much worse, percent (infinite when A's is 0).
    pub worse_pct: f64,
}

/// Compares two sides.
pub fn compare(a: &Side, b: &Side) -> Comparison {
    let labels_a: Vec<&str> = a.summary.labels.iter().map(|r| r.label.as_str()).collect();
    let labels_b: Vec<&str> = b.summary.labels.iter().map(|r| r.label.as_str()).collect();
    let both = labels_a.iter().filter(|l| b.index.contains_key(**l)).copied().chain(["TOTAL"]);
    let rows = both.filter_map(|label| Some(compare_label(label, a, a.row(label)?, b, b.row(label)?))).collect();
    Comparison {
        a: a.name.clone(),
        b: b.name.clone(),
        method: METHOD.to_string(),
        rows,
        only_in_a: labels_a.iter().filter(|l| !b.index.contains_key(**l)).map(|l| l.to_string()).collect(),
        only_in_b: labels_b.iter().filter(|l| !a.index.contains_key(**l)).map(|l| l.to_string()).collect(),
    }
}

fn compare_label(label: &str, a: &Side, ra: &SummaryRow, b: &Side, rb: &SummaryRow) -> LabelComparison {
    let ratio = |x: f64, y: f64| ratio(x, y);
    let ratios = Ratios {
        samples: ratio(ra.samples as f64, rb.samples as f64),
        error_pct: ratio(ra.error_pct, rb.error_pct),
        min: ratio(ra.min_ms, rb.min_ms),
        mean: ratio(ra.mean_ms, rb.mean_ms),
        p50: ratio(ra.p50_ms, rb.p50_ms),
        p90: ratio(ra.p90_ms, rb.p90_ms),
        p95: ratio(ra.p95_ms, rb.p95_ms),
        p99: ratio(ra.p99_ms, rb.p99_ms),
        max: ratio(ra.max_ms, rb.max_ms),
        throughput: ratio(ra.throughput, rb.throughput),
    };
    let test = match (a.reservoir(label), b.reservoir(label)) {
        (Some(x), Some(y)) => mann_whitney(x, y),
        _ => None,
    };
    let median_change = change_pct(ra.p50_ms, rb.p50_ms);
    let (verdict, reason) = decide(test.as_ref(), median_change, ra.samples.min(rb.samples));
    let overlay = match (a.histogram(label), b.histogram(label)) {
        (Some(ha), Some(hb)) => {
            let resolution = a.resolution_us().min(b.resolution_us());
            let bins = Bins::covering(&[ha, hb], resolution);
            let (da, db) = (bins.distribute(ha, resolution), bins.distribute(hb, resolution));
            Some(Overlay {
                lo_ms: bins.lo_us as f64 / 1000.0,
                bin_ms: bins.width_us as f64 / 1000.0,
                a: da.0,
                b: db.0,
                a_overflow: da.1,
                b_overflow: db.1,
            })
        }
        _ => None,
    };
    LabelComparison {
        label: label.to_string(),
        a: ra.clone(),
        b: rb.clone(),
        ratios,
        median_change_pct: median_change,
        test,
        verdict,
        reason,
        overlay,
    }
}

/// The verdict rule of the module's documentation.
fn decide(test: Option<&MannWhitney>, median_change: Option<f64>, fewest: u64) -> (Verdict, String) {
    let Some(t) = test else {
        return (Verdict::NotTested, "a side has statistics only (a summary JSON): no samples to test".into());
    };
    if fewest < MIN_SAMPLES {
        return (Verdict::NotTested, format!("fewer than {MIN_SAMPLES} samples on a side"));
    }
    let change = median_change.unwrap_or(f64::INFINITY);
    let p = p_text(t.p_value);
    let moved = format!("the median moved {}", format_change(median_change));
    if t.p_value >= ALPHA {
        return (Verdict::NoSignificantDifference, format!("{p}, not below {ALPHA}; {moved}"));
    }
    if change.abs() <= MIN_MEDIAN_CHANGE_PCT {
        let reason = format!("{p} < {ALPHA}, but {moved}, not more than {MIN_MEDIAN_CHANGE_PCT}%");
        return (Verdict::NoSignificantDifference, reason);
    }
    let verdict = if change > 0.0 { Verdict::Slower } else { Verdict::Faster };
    (verdict, format!("{p} < {ALPHA} and {moved}"))
}

/// B/A; `None` when A is 0.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| b / a)
}

/// (B - A) / A in percent; 0 when both are 0, `None` when only A is.
fn change_pct(a: f64, b: f64) -> Option<f64> {
    if a == 0.0 {
        return (b == 0.0).then_some(0.0);
    }
    Some((b - a) / a * 100.0)
}

fn format_change(change: Option<f64>) -> String {
    match change {
        Some(c) => format!("{c:+.1}%"),
        None => "up from 0".into(),
    }
}

/// `p = 0.123`, `p = 4.5e-6`, or `p < 1e-300` (beyond what a double holds).
fn p_text(p: f64) -> String {
    if p < 1e-300 {
        "p < 1e-300".into()
    } else if p < 0.001 {
        format!("p = {p:.1e}")
    } else {
        format!("p = {p:.3}")
    }
}

impl Comparison {
    /// Labels (and TOTAL) whose `metric` got worse by more than `max_pct` percent.
    pub fn regressions(&self, metric: Metric, max_pct: f64) -> Vec<Regression> {
        self.rows
            .iter()
            .filter_map(|row| {
                let (a, b) = (row.a.figure(metric)?, row.b.figure(metric)?);
                let worse_pct = worse_pct(metric, a, b);
                (worse_pct > max_pct).then(|| Regression { label: row.label.clone(), a, b, worse_pct })
            })
            .collect()
    }

    /// The comparison as text: per label, the verdict and a table of A, B and B/A.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "A: {}\nB: {}", self.a, self.b);
        let _ = writeln!(out, "Verdicts: {}.", self.method);
        for row in &self.rows {
            let _ = writeln!(out, "\n{}: {} ({})", row.label, row.verdict, row.reason);
            if let Some(t) = &row.test {
                let _ = writeln!(
                    out,
                    "  Mann-Whitney on {} vs {} samples: z = {:.2}, P(B slower than A) = {:.3}",
                    t.n_a, t.n_b, t.z, t.prob_b_slower
                );
            }
            let lines = table_lines(row);
            let widths = [0, 1, 2, 3].map(|c| lines.iter().map(|l| l[c].chars().count()).max().unwrap_or(0));
            for l in &lines {
                let _ = writeln!(
                    out,
                    "  {:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}",
                    l[0],
                    l[1],
                    l[2],
                    l[3],
                    w0 = widths[0],
                    w1 = widths[1],
                    w2 = widths[2],
                    w3 = widths[3]
                );
            }
        }
        if !self.only_in_a.is_empty() {
            let _ = writeln!(out, "\nOnly in A: {}", self.only_in_a.join(", "));
        }
        if !self.only_in_b.is_empty() {
            let _ = writeln!(out, "\nOnly in B: {}", self.only_in_b.join(", "));
        }
        out
    }
}

/// The rows of a label's table: figure, A, B, B/A; a header first.
pub fn table_lines(row: &LabelComparison) -> Vec<[String; 4]> {
    let ms = |v: f64| format!("{v:.2}");
    let (a, b, r) = (&row.a, &row.b, &row.ratios);
    let line = |name: &str, x: String, y: String, q: Option<f64>, xv: f64, yv: f64| {
        [name.to_string(), x, y, format_ratio(q, xv, yv)]
    };
    vec![
        ["".into(), "A".into(), "B".into(), "B/A".into()],
        line("samples", a.samples.to_string(), b.samples.to_string(), r.samples, a.samples as f64, b.samples as f64),
        line(
            "error %",
            format!("{:.2}%", a.error_pct),
            format!("{:.2}%", b.error_pct),
            r.error_pct,
            a.error_pct,
            b.error_pct,
        ),
        line("min ms", ms(a.min_ms), ms(b.min_ms), r.min, a.min_ms, b.min_ms),
        line("mean ms", ms(a.mean_ms), ms(b.mean_ms), r.mean, a.mean_ms, b.mean_ms),
        line("p50 ms", ms(a.p50_ms), ms(b.p50_ms), r.p50, a.p50_ms, b.p50_ms),
        line("p90 ms", ms(a.p90_ms), ms(b.p90_ms), r.p90, a.p90_ms, b.p90_ms),
        line("p95 ms", ms(a.p95_ms), ms(b.p95_ms), r.p95, a.p95_ms, b.p95_ms),
        line("p99 ms", ms(a.p99_ms), ms(b.p99_ms), r.p99, a.p99_ms, b.p99_ms),
        line("max ms", ms(a.max_ms), ms(b.max_ms), r.max, a.max_ms, b.max_ms),
        line(
            "throughput/s",
            format!("{:.1}", a.throughput),
            format!("{:.1}", b.throughput),
            r.throughput,
            a.throughput,
            b.throughput,
        ),
    ]
}

/// A ratio to 2 decimals; `-` for 0/0, `inf` for x/0.
fn format_ratio(ratio: Option<f64>, a: f64, b: f64) -> String {
    match ratio {
        Some(r) => format!("{r:.2}"),
        None if a == 0.0 && b == 0.0 => "-".into(),
        None => "inf".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(p_value: f64) -> MannWhitney {
        MannWhitney { n_a: 100, n_b: 100, u_b: 0.0, z: 0.0, p_value, prob_b_slower: 0.5 }
    }

    #[test]
    fn verdict_needs_significance_and_a_real_shift() {
        assert_eq!(decide(Some(&t(1e-9)), Some(100.0), 100).0, Verdict::Slower);
        assert_eq!(decide(Some(&t(1e-9)), Some(-50.0), 100).0, Verdict::Faster);
        assert_eq!(decide(Some(&t(1e-9)), None, 100).0, Verdict::Slower);
        let (v, why) = decide(Some(&t(1e-9)), Some(2.0), 100);
        assert_eq!(v, Verdict::NoSignificantDifference);
        assert_eq!(why, "p = 1.0e-9 < 0.01, but the median moved +2.0%, not more than 5%");
        assert_eq!(decide(Some(&t(0.2)), Some(80.0), 100).0, Verdict::NoSignificantDifference);
        assert_eq!(decide(Some(&t(1e-9)), Some(80.0), 5).0, Verdict::NotTested);
        assert_eq!(decide(None, Some(80.0), 100).0, Verdict::NotTested);
        assert_eq!((p_text(0.0), p_text(0.5)), ("p < 1e-300".into(), "p = 0.500".into()));
    }

    #[test]
    fn metrics_and_ratios() {
        assert_eq!(watched_metric("P99.9"), Ok(Metric::P999));
        assert_eq!(watched_metric("p999"), Ok(Metric::P999));
        assert_eq!(watched_metric("average"), Ok(Metric::Mean));
        assert!(watched_metric("p42").unwrap_err().contains("one of: min, mean"));
        assert!(watched_metric("error_rate").unwrap_err().contains("one of: min, mean"));
        assert_eq!(worse_pct(Metric::P95, 100.0, 120.0), 20.0);
        assert_eq!(worse_pct(Metric::Throughput, 100.0, 80.0), 20.0);
        assert_eq!(worse_pct(Metric::Throughput, 100.0, 120.0), -20.0);
        assert_eq!(worse_pct(Metric::P95, 0.0, 1.0), f64::INFINITY);
        assert_eq!(worse_pct(Metric::P95, 0.0, 0.0), 0.0);
        assert_eq!(
            (format_ratio(ratio(2.0, 4.0), 2.0, 4.0), format_ratio(None, 0.0, 0.0), format_ratio(None, 0.0, 1.0)),
            ("2.00".into(), "-".into(), "inf".into())
        );
    }
}
