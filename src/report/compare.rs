//! `planrun compare A B`: two results side by side, per label and TOTAL, with the ratio B/A of every figure and
//! a verdict per label from a statistical test of the two latency distributions.
//!
//! How a verdict is reached (docs/results.md says more):
//! 1. Each side keeps a uniform random sample of at most [`super::reservoir::CAPACITY`] elapsed times per label
//!    (reservoir sampling with a fixed seed, so the same files give the same verdict).
//! 2. A two-sided Mann-Whitney U test compares the two samples ([`mann_whitney`]).
//! 3. B is `slower` (or `faster`) only when p < [`ALPHA`] **and** the median (from the full histograms) moved
//!    up (or down) by more than [`MIN_MEDIAN_CHANGE_PCT`]: on large samples a test finds even a 0.1 % shift
//!    "significant", and such a shift is not what anyone means by slower. The move must be more than that
//!    whatever the medians were within the resolution of their files ([`Medians`]): a JTL's times are cut to
//!    whole ms, so its medians 0 and 1 ms may be 0.9 and 1.0 ms, and are no change at that resolution.
//!
//! Otherwise the verdict is `no significant difference`, or `not tested` when a side has fewer than
//! [`MIN_SAMPLES`] samples or is a summary JSON (statistics only, no samples to test).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::distribution::Bins;
use super::mann_whitney::{mann_whitney, MannWhitney};
use super::reservoir::Reservoirs;
use super::results::{sniff, Format, ResultsError, ResultsReader};
use super::summary::time_text;
use super::summary_json::SummaryFile;
use crate::diag::width::{one_line, pad_end, pad_start, truncate, width};
use crate::metric::Metric;
use crate::sink::latencies::Latencies;
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
    p < 0.01 and the median moved by more than 5%, at the resolution of the times (a JTL's are whole ms)";

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

    fn latencies(&self, label: &str) -> Option<&Latencies> {
        let (stats, _) = self.samples.as_ref()?;
        if label == "TOTAL" {
            return Some(stats.total_latencies());
        }
        stats.label_latencies(label)
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
    /// Slower, faster or no change, from the test and the median's move at the data's resolution.
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

/// A label whose metric got worse by more than allowed, as read; `counted` when it did at the resolution of
/// the times too.
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
    /// How much worse at the least, given the resolution of the times (a time metric of a JTL: whole ms);
    /// `worse_pct` for throughput.
    pub least_worse_pct: f64,
    /// Whether it got worse by more than allowed at the resolution too: what `--fail-if-slower` fails on.
    pub counted: bool,
    /// The resolution that kept it from counting, when it did: "the 1 ms resolution of both sides' times".
    pub resolution: String,
    /// A's and B's values as the table shows them (`< 1` for a time under the resolution).
    pub shown: (String, String),
}

/// `12.5% worse`, or `infinitely worse` from 0.
pub fn worse_text(pct: f64) -> String {
    if pct.is_infinite() {
        "infinitely worse".into()
    } else {
        format!("{pct:.1}% worse")
    }
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
    let medians = Medians::of(ra, rb);
    let median_change = medians.change_pct();
    let (verdict, reason) = decide(test.as_ref(), &medians, ra.samples.min(rb.samples));
    let overlay = match (a.latencies(label), b.latencies(label)) {
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

/// Two figures of the same kind (medians, or another time) and the resolution of each side's times: a figure
/// `t` of a side with resolution `r` stands for a time in [t, t + r) (a JTL's times are cut to whole ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Medians {
    /// A's figure, ms.
    pub a_ms: f64,
    /// B's figure, ms.
    pub b_ms: f64,
    /// The resolution of A's times, ms.
    pub a_resolution_ms: f64,
    /// The resolution of B's times, ms.
    pub b_resolution_ms: f64,
}

impl Medians {
    /// The medians of two rows.
    pub fn of(a: &SummaryRow, b: &SummaryRow) -> Self {
        Self::figures(a, b, a.p50_ms, b.p50_ms)
    }

    /// Two figures of two rows, with the rows' resolutions.
    fn figures(a: &SummaryRow, b: &SummaryRow, a_ms: f64, b_ms: f64) -> Self {
        Medians { a_ms, b_ms, a_resolution_ms: a.resolution_ms, b_resolution_ms: b.resolution_ms }
    }

    /// (B - A) / A in percent, as read; `None` when only A is 0.
    pub fn change_pct(&self) -> Option<f64> {
        change_pct(self.a_ms, self.b_ms)
    }

    /// The smallest change, in percent and with its sign, that the times behind the two figures can have
    /// made; 0 when they may be equal (the figures are no further apart than the resolution).
    pub fn least_change_pct(&self) -> f64 {
        let (a, b) = (self.a_ms, self.b_ms);
        if b > a {
            // B's time is at least b; A's below a + r: the least rise is from just below a + r to b.
            let base = a + self.a_resolution_ms;
            let rise = b - base;
            if rise <= 0.0 || base <= 0.0 {
                return 0.0;
            }
            rise / base * 100.0
        } else if b < a {
            // A's time is at least a; B's below b + r: the least drop is from a to just below b + r.
            let drop = a - (b + self.b_resolution_ms);
            if drop <= 0.0 {
                return 0.0;
            }
            -drop / a * 100.0
        } else {
            0.0
        }
    }

    /// Whether the resolution of the times, not the figures, decides: a change above `pct` as read, but not
    /// above it at the resolution.
    fn resolution_decides(&self, pct: f64) -> bool {
        self.change_pct().unwrap_or(f64::INFINITY).abs() > pct && self.least_change_pct().abs() <= pct
    }

    /// `< 1 -> 1.00 ms`: the two figures as the table shows them.
    fn figures_text(&self) -> String {
        let (a, b) = (time_text(self.a_ms, self.a_resolution_ms), time_text(self.b_ms, self.b_resolution_ms));
        format!("{a} -> {b} ms")
    }

    /// "the 1 ms resolution of A's times", for the coarser side (the one that limits the answer).
    fn resolution_text(&self) -> String {
        let (a, b) = (self.a_resolution_ms, self.b_resolution_ms);
        let whose = if a == b {
            "both sides'"
        } else if a > b {
            "A's"
        } else {
            "B's"
        };
        format!("the {} ms resolution of {whose} times", a.max(b))
    }
}

/// The verdict rule of the module's documentation.
fn decide(test: Option<&MannWhitney>, medians: &Medians, fewest: u64) -> (Verdict, String) {
    let Some(t) = test else {
        return (Verdict::NotTested, "a side has statistics only (a summary JSON): no samples to test".into());
    };
    if fewest < MIN_SAMPLES {
        return (Verdict::NotTested, format!("fewer than {MIN_SAMPLES} samples on a side"));
    }
    let change = medians.change_pct().unwrap_or(f64::INFINITY);
    let least = medians.least_change_pct();
    let p = p_text(t.p_value);
    let moved = format!("the median moved {}", format_change(medians.change_pct()));
    if change != 0.0 && least == 0.0 {
        let reason = format!(
            "{p}; {moved} ({}), within {}: no change at this resolution",
            medians.figures_text(),
            medians.resolution_text()
        );
        return (Verdict::NoSignificantDifference, reason);
    }
    if t.p_value >= ALPHA {
        return (Verdict::NoSignificantDifference, format!("{p}, not below {ALPHA}; {moved}"));
    }
    if medians.resolution_decides(MIN_MEDIAN_CHANGE_PCT) {
        let reason = format!(
            "{p} < {ALPHA}, but {moved} ({}), at {} as little as {}, not more than {MIN_MEDIAN_CHANGE_PCT}%",
            medians.figures_text(),
            medians.resolution_text(),
            format_change(Some(least))
        );
        return (Verdict::NoSignificantDifference, reason);
    }
    if least.abs() <= MIN_MEDIAN_CHANGE_PCT {
        let reason = format!("{p} < {ALPHA}, but {moved}, not more than {MIN_MEDIAN_CHANGE_PCT}%");
        return (Verdict::NoSignificantDifference, reason);
    }
    let verdict = if least > 0.0 { Verdict::Slower } else { Verdict::Faster };
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
    /// Labels (and TOTAL) whose `metric` got worse by more than `max_pct` percent as read; those that did at
    /// the resolution of the times too are `counted`.
    pub fn regressions(&self, metric: Metric, max_pct: f64) -> Vec<Regression> {
        self.rows
            .iter()
            .filter_map(|row| {
                let (a, b) = (row.a.figure(metric)?, row.b.figure(metric)?);
                let worse_pct = worse_pct(metric, a, b);
                if worse_pct <= max_pct {
                    return None;
                }
                let figures = Medians::figures(&row.a, &row.b, a, b);
                let time = metric.unit() == crate::metric::Unit::Ms;
                let least_worse_pct = if time { figures.least_change_pct() } else { worse_pct };
                let show = |v: f64, r: f64| if time { time_text(v, r) } else { format!("{v:.2}") };
                let shown = (show(a, row.a.resolution_ms), show(b, row.b.resolution_ms));
                Some(Regression {
                    label: row.label.clone(),
                    a,
                    b,
                    worse_pct,
                    least_worse_pct,
                    counted: least_worse_pct > max_pct,
                    resolution: figures.resolution_text(),
                    shown,
                })
            })
            .collect()
    }

    /// The comparison as text: per label, the verdict and a table of A, B and B/A.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "A: {}\nB: {}", self.a, self.b);
        let _ = writeln!(out, "Verdicts: {}.", self.method);
        for row in &self.rows {
            let _ = writeln!(out, "\n{}: {} ({})", shown_label(&row.label), row.verdict, row.reason);
            if let Some(t) = &row.test {
                let _ = writeln!(
                    out,
                    "  Mann-Whitney on {} vs {} samples: z = {:.2}, P(B slower than A) = {:.3}",
                    t.n_a, t.n_b, t.z, t.prob_b_slower
                );
            }
            let lines = table_lines(row);
            let widths = [0, 1, 2, 3].map(|c| lines.iter().map(|l| width(&l[c])).max().unwrap_or(0));
            for l in &lines {
                let _ = writeln!(
                    out,
                    "  {}  {}  {}  {}",
                    pad_end(&l[0], widths[0]),
                    pad_start(&l[1], widths[1]),
                    pad_start(&l[2], widths[2]),
                    pad_start(&l[3], widths[3]),
                );
            }
        }
        for (side, labels) in [("A", &self.only_in_a), ("B", &self.only_in_b)] {
            if !labels.is_empty() {
                let _ = writeln!(out, "\nOnly in {side}: {}", shown_labels(labels));
            }
        }
        out
    }
}

/// The widest a label is shown in the text comparison, in terminal columns (the JSON and HTML keep it whole).
const LABEL_COLUMNS: usize = 120;
/// How many labels a line of labels found on one side only names.
const LISTED: usize = 20;

fn shown_label(label: &str) -> String {
    truncate(&one_line(label), LABEL_COLUMNS).into_owned()
}

/// `labels`, each as [`shown_label`] shows it, the first [`LISTED`] of them and how many more.
fn shown_labels(labels: &[String]) -> String {
    let mut text = labels.iter().take(LISTED).map(|l| shown_label(l)).collect::<Vec<_>>().join(", ");
    if labels.len() > LISTED {
        let _ = write!(text, " and {} more", labels.len() - LISTED);
    }
    text
}

/// The rows of a label's table: figure, A, B, B/A; a header first. A time below the resolution of its side
/// shows as `< 1` (see [`time_text`]), and its ratio as `-`: it is not known.
pub fn table_lines(row: &LabelComparison) -> Vec<[String; 4]> {
    let (a, b, r) = (&row.a, &row.b, &row.ratios);
    let line = |name: &str, x: String, y: String, q: Option<f64>, xv: f64, yv: f64| {
        [name.to_string(), x, y, format_ratio(q, xv, yv)]
    };
    let time = |name: &str, x: f64, y: f64, q: Option<f64>| {
        let (tx, ty) = (time_text(x, a.resolution_ms), time_text(y, b.resolution_ms));
        let ratio = if tx.starts_with('<') || ty.starts_with('<') { "-".into() } else { format_ratio(q, x, y) };
        [name.to_string(), tx, ty, ratio]
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
        time("min ms", a.min_ms, b.min_ms, r.min),
        time("mean ms", a.mean_ms, b.mean_ms, r.mean),
        time("p50 ms", a.p50_ms, b.p50_ms, r.p50),
        time("p90 ms", a.p90_ms, b.p90_ms, r.p90),
        time("p95 ms", a.p95_ms, b.p95_ms, r.p95),
        time("p99 ms", a.p99_ms, b.p99_ms, r.p99),
        time("max ms", a.max_ms, b.max_ms, r.max),
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

    /// Medians of µs times.
    fn us(a_ms: f64, b_ms: f64) -> Medians {
        Medians { a_ms, b_ms, a_resolution_ms: 0.001, b_resolution_ms: 0.001 }
    }

    /// Medians of whole-ms times (JTL).
    fn whole_ms(a_ms: f64, b_ms: f64) -> Medians {
        Medians { a_ms, b_ms, a_resolution_ms: 1.0, b_resolution_ms: 1.0 }
    }

    #[test]
    fn verdict_needs_significance_and_a_real_shift() {
        assert_eq!(decide(Some(&t(1e-9)), &us(10.0, 20.0), 100).0, Verdict::Slower);
        assert_eq!(decide(Some(&t(1e-9)), &us(10.0, 5.0), 100).0, Verdict::Faster);
        assert_eq!(decide(Some(&t(1e-9)), &us(0.0, 0.5), 100).0, Verdict::Slower);
        let (v, why) = decide(Some(&t(1e-9)), &us(100.0, 102.0), 100);
        assert_eq!(v, Verdict::NoSignificantDifference);
        assert_eq!(why, "p = 1.0e-9 < 0.01, but the median moved +2.0%, not more than 5%");
        assert_eq!(decide(Some(&t(0.2)), &us(10.0, 18.0), 100).0, Verdict::NoSignificantDifference);
        assert_eq!(decide(Some(&t(1e-9)), &us(10.0, 18.0), 5).0, Verdict::NotTested);
        assert_eq!(decide(None, &us(10.0, 18.0), 100).0, Verdict::NotTested);
        assert_eq!((p_text(0.0), p_text(0.5)), ("p < 1e-300".into(), "p = 0.500".into()));
    }

    #[test]
    fn a_change_within_the_resolution_is_no_verdict() {
        for (a, b) in [(0.0, 1.0), (1.0, 0.0), (1.0, 2.0), (10.0, 11.0)] {
            let (v, why) = decide(Some(&t(1e-9)), &whole_ms(a, b), 100);
            assert_eq!(v, Verdict::NoSignificantDifference, "{a} -> {b}: {why}");
            assert!(
                why.ends_with("within the 1 ms resolution of both sides' times: no change at this resolution"),
                "{why}"
            );
        }
        // 10 -> 11.5 ms: +15% as read, but B's 11.5 (µs) may come from A's 10.999 (whole ms): +4.6%.
        let mixed = Medians { a_ms: 10.0, b_ms: 11.5, a_resolution_ms: 1.0, b_resolution_ms: 0.001 };
        let (v, why) = decide(Some(&t(1e-9)), &mixed, 100);
        assert_eq!(v, Verdict::NoSignificantDifference);
        assert_eq!(
            why,
            "p = 1.0e-9 < 0.01, but the median moved +15.0% (10.00 -> 11.50 ms), at the 1 ms resolution of A's times as \
             little as +4.5%, not more than 5%"
        );
        // 0 -> 3 ms: at least from just under 1 ms to 3 ms, +200%; 12 -> 10 ms: at least from 12 to under 11.
        assert_eq!(decide(Some(&t(1e-9)), &whole_ms(0.0, 3.0), 100).0, Verdict::Slower);
        assert_eq!(whole_ms(0.0, 3.0).least_change_pct(), 200.0);
        assert_eq!(decide(Some(&t(1e-9)), &whole_ms(12.0, 10.0), 100).0, Verdict::Faster);
        assert!((whole_ms(12.0, 10.0).least_change_pct() + 100.0 / 12.0).abs() < 1e-9);
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
