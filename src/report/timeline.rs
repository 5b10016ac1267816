//! Figures per interval of a run: samples, errors, response-time percentiles, active threads.
//!
//! Intervals start at 1 s and are aligned to multiples of the interval since the Unix epoch. When a run spans
//! more than [`MAX_POINTS`] intervals the interval doubles and neighbours merge, so memory and the number of
//! chart points stay bounded however long the run. Samples are placed by their start time (`timeStamp`), in
//! any order. Percentiles come from a small HDR histogram per interval (2 significant digits: within 1 %).
//! [`LabelTimelines`] keeps the same figures per label, for the first [`MAX_LABEL_TIMELINES`] labels.

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// At most this many intervals between the first and the last sample.
pub const MAX_POINTS: u64 = 2000;

/// The interval before any coarsening.
const FIRST_INTERVAL_MS: u64 = 1000;

/// Per-interval figures, built one sample at a time.
#[derive(Debug)]
pub struct Timeline {
    interval_ms: u64,
    max_points: u64,
    resolution_us: u64,
    /// By interval number: start time / interval.
    buckets: BTreeMap<u64, Bucket>,
}

#[derive(Debug, Clone)]
struct Bucket {
    samples: u64,
    errors: u64,
    elapsed_us: Histogram<u32>,
    threads: Option<u32>,
}

impl Bucket {
    fn new() -> Self {
        Bucket {
            samples: 0,
            errors: 0,
            elapsed_us: Histogram::new(2).expect("2 significant digits are supported"),
            threads: None,
        }
    }

    fn merge(&mut self, other: Bucket) {
        self.samples += other.samples;
        self.errors += other.errors;
        // Adding fails only when a count would overflow u32; such a bucket keeps what it had.
        let _ = self.elapsed_us.add(&other.elapsed_us);
        self.threads = self.threads.max(other.threads);
    }
}

/// The timeline as chart data: one entry per interval from the first to the last, empty ones included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineData {
    /// Start of the first interval, ms since the Unix epoch.
    pub start_ms: u64,
    /// Length of every interval, ms.
    pub interval_ms: u64,
    /// Samples started in each interval.
    pub samples: Vec<u64>,
    /// Failed samples among them.
    pub errors: Vec<u64>,
    /// Median elapsed time, ms (`null` when the interval is empty).
    pub p50_ms: Vec<Option<f64>>,
    /// 90th percentile, ms.
    pub p90_ms: Vec<Option<f64>>,
    /// 99th percentile, ms.
    pub p99_ms: Vec<Option<f64>>,
    /// The most active threads (JTL `allThreads`) seen in the interval, `null` when not recorded.
    pub threads: Vec<Option<u32>>,
}

/// One timeline's figures per interval.
#[derive(Debug, Default)]
struct Series {
    samples: Vec<u64>,
    errors: Vec<u64>,
    p50_ms: Vec<Option<f64>>,
    p90_ms: Vec<Option<f64>>,
    p99_ms: Vec<Option<f64>>,
    threads: Vec<Option<u32>>,
}

/// Labels that get a timeline of their own, in the order first seen; the rest are counted together.
pub const MAX_LABEL_TIMELINES: usize = 16;

/// Intervals of each label's timeline: coarser than the run's, so 16 of them stay small.
const LABEL_POINTS: u64 = 500;

/// Per-interval figures per label (transactions left out, as in the run's timeline).
#[derive(Debug)]
pub struct LabelTimelines {
    labels: Vec<(String, Timeline)>,
    index: HashMap<String, usize>,
    /// Every label past the first [`MAX_LABEL_TIMELINES`].
    others: Option<Timeline>,
    resolution_us: u64,
}

/// Per-label chart data, every label on the same intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelTimelineData {
    /// Start of the first interval, ms since the Unix epoch.
    pub start_ms: u64,
    /// Length of every interval, ms.
    pub interval_ms: u64,
    /// The first labels seen, each with its figures.
    pub labels: Vec<LabelSeries>,
    /// The other labels together, when there were more than [`MAX_LABEL_TIMELINES`].
    pub others: Option<LabelSeries>,
}

/// One label's figures per interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSeries {
    /// The label (`other labels` for the rest).
    pub label: String,
    /// Samples started in each interval.
    pub samples: Vec<u64>,
    /// Failed samples among them.
    pub errors: Vec<u64>,
    /// Median elapsed time, ms.
    pub p50_ms: Vec<Option<f64>>,
    /// 90th percentile, ms.
    pub p90_ms: Vec<Option<f64>>,
    /// 99th percentile, ms.
    pub p99_ms: Vec<Option<f64>>,
}

impl LabelTimelines {
    /// No label yet; samples' elapsed times are multiples of `resolution_us`.
    pub fn new(resolution_us: u64) -> Self {
        Self { labels: Vec::new(), index: HashMap::new(), others: None, resolution_us }
    }

    /// Adds one sample of `label`.
    pub fn record(&mut self, label: &str, start_ms: u64, elapsed_us: u64, success: bool) {
        let own = match self.index.get(label) {
            Some(i) => Some(*i),
            None if self.labels.len() < MAX_LABEL_TIMELINES => {
                self.index.insert(label.to_string(), self.labels.len());
                self.labels.push((label.to_string(), Timeline::with_limits(LABEL_POINTS, self.resolution_us)));
                Some(self.labels.len() - 1)
            }
            None => None,
        };
        let timeline = match own.and_then(|i| self.labels.get_mut(i)) {
            Some((_, t)) => t,
            None => self.others.get_or_insert_with(|| Timeline::with_limits(LABEL_POINTS, self.resolution_us)),
        };
        timeline.record(start_ms, elapsed_us, success, None);
    }

    /// The chart data: every label on the coarsest interval any of them reached, from the earliest sample.
    pub fn data(&self) -> LabelTimelineData {
        let all = || self.labels.iter().map(|(_, t)| t).chain(self.others.as_ref());
        let interval_ms = all().map(Timeline::interval_ms).max().unwrap_or(FIRST_INTERVAL_MS);
        let coarse: Vec<BTreeMap<u64, Bucket>> = all().map(|t| t.coarsened(interval_ms)).collect();
        let first = coarse.iter().filter_map(|b| b.first_key_value().map(|(k, _)| *k)).min();
        let last = coarse.iter().filter_map(|b| b.last_key_value().map(|(k, _)| *k)).max();
        let (Some(first), Some(last)) = (first, last) else {
            return LabelTimelineData { interval_ms, ..LabelTimelineData::default() };
        };
        let names = self.labels.iter().map(|(l, _)| l.as_str()).chain(self.others.as_ref().map(|_| "other labels"));
        let mut series = all().zip(&coarse).zip(names).map(|((t, buckets), label)| {
            let s = t.series(buckets, first, last - first + 1);
            LabelSeries {
                label: label.to_string(),
                samples: s.samples,
                errors: s.errors,
                p50_ms: s.p50_ms,
                p90_ms: s.p90_ms,
                p99_ms: s.p99_ms,
            }
        });
        let labels = series.by_ref().take(self.labels.len()).collect();
        LabelTimelineData { start_ms: first * interval_ms, interval_ms, labels, others: series.next() }
    }
}

impl Default for Timeline {
    fn default() -> Self {
        Self::new()
    }
}

impl Timeline {
    /// An empty timeline of 1 s intervals, at most [`MAX_POINTS`] of them.
    pub fn new() -> Self {
        Self::with_limits(MAX_POINTS, 1)
    }

    /// An empty timeline of at most `max_points` intervals (at least 2), of samples whose elapsed times are
    /// multiples of `resolution_us` (see [`crate::sink::stats::Stats::with_resolution_us`]).
    pub fn with_limits(max_points: u64, resolution_us: u64) -> Self {
        Timeline {
            interval_ms: FIRST_INTERVAL_MS,
            max_points: max_points.max(2),
            resolution_us: resolution_us.max(1),
            buckets: BTreeMap::new(),
        }
    }

    /// The current interval, ms.
    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// Adds one sample.
    pub fn record(&mut self, start_ms: u64, elapsed_us: u64, success: bool, all_threads: Option<u32>) {
        let key = start_ms / self.interval_ms;
        let bucket = self.buckets.entry(key).or_insert_with(Bucket::new);
        bucket.samples += 1;
        bucket.errors += u64::from(!success);
        if bucket.elapsed_us.record(elapsed_us).is_err() {
            // Only when the histogram cannot grow further; keep the sample, clamped (`saturating_record` alone
            // would clamp to the current range instead of growing it).
            bucket.elapsed_us.saturating_record(elapsed_us);
        }
        if all_threads.is_some() {
            bucket.threads = bucket.threads.max(all_threads);
        }
        while self.span() > self.max_points {
            self.coarsen();
        }
    }

    /// Intervals from the first to the last non-empty one.
    fn span(&self) -> u64 {
        match (self.buckets.first_key_value(), self.buckets.last_key_value()) {
            (Some((first, _)), Some((last, _))) => last - first + 1,
            _ => 0,
        }
    }

    /// Doubles the interval: intervals 2k and 2k+1 become k.
    fn coarsen(&mut self) {
        self.interval_ms *= 2;
        let old = std::mem::take(&mut self.buckets);
        for (key, bucket) in old {
            match self.buckets.entry(key / 2) {
                std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(bucket),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(bucket);
                }
            }
        }
    }

    /// The chart data.
    pub fn data(&self) -> TimelineData {
        let first = self.buckets.first_key_value().map_or(0, |(k, _)| *k);
        let series = self.series(&self.buckets, first, self.span());
        TimelineData {
            start_ms: first * self.interval_ms,
            interval_ms: self.interval_ms,
            samples: series.samples,
            errors: series.errors,
            p50_ms: series.p50_ms,
            p90_ms: series.p90_ms,
            p99_ms: series.p99_ms,
            threads: series.threads,
        }
    }

    /// The figures of intervals `first..first + len` of `buckets`.
    fn series(&self, buckets: &BTreeMap<u64, Bucket>, first: u64, len: u64) -> Series {
        let mut out = Series::default();
        let empty = Bucket::new();
        for key in first..first + len {
            let b = buckets.get(&key).unwrap_or(&empty);
            out.samples.push(b.samples);
            out.errors.push(b.errors);
            let pct = |q| (b.samples > 0).then(|| self.percentile_ms(&b.elapsed_us, q));
            out.p50_ms.push(pct(0.5));
            out.p90_ms.push(pct(0.9));
            out.p99_ms.push(pct(0.99));
            out.threads.push(b.threads);
        }
        out
    }

    /// The buckets merged into intervals of `interval_ms` (a multiple of this timeline's, both powers of two
    /// times the first interval).
    fn coarsened(&self, interval_ms: u64) -> BTreeMap<u64, Bucket> {
        let factor = (interval_ms / self.interval_ms).max(1);
        let mut out: BTreeMap<u64, Bucket> = BTreeMap::new();
        for (key, bucket) in &self.buckets {
            match out.entry(key / factor) {
                std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(bucket.clone()),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(bucket.clone());
                }
            }
        }
        out
    }

    fn percentile_ms(&self, h: &Histogram<u32>, q: f64) -> f64 {
        let top = h.value_at_quantile(q);
        let r = self.resolution_us;
        let snapped = h.lowest_equivalent(top).div_ceil(r) * r;
        let value = if r > 1 && snapped <= top { snapped } else { top };
        value.min(h.max()) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_second_with_gaps() {
        let mut t = Timeline::with_limits(100, 1000);
        for (start, elapsed_ms, ok) in [(10_500, 10, true), (10_900, 30, false), (12_000, 20, true), (10_000, 20, true)]
        {
            t.record(start, elapsed_ms * 1000, ok, Some(3));
        }
        let d = t.data();
        assert_eq!((d.start_ms, d.interval_ms), (10_000, 1000));
        assert_eq!(d.samples, [3, 0, 1]);
        assert_eq!(d.errors, [1, 0, 0]);
        assert_eq!(d.p50_ms, [Some(20.0), None, Some(20.0)]);
        assert_eq!(d.p99_ms, [Some(30.0), None, Some(20.0)]);
        assert_eq!(d.threads, [Some(3), None, Some(3)]);
    }

    #[test]
    fn labels_share_one_axis_and_the_rest_are_counted_together() {
        let mut t = LabelTimelines::new(1000);
        // "slow" starts later and lasts long enough to coarsen; "fast" has one sample at the very start.
        t.record("fast", 1_000, 1_000, true);
        for s in 0..600u64 {
            t.record("slow", 5_000 + s * 1000, 50_000, s % 3 != 0);
        }
        for n in 0..MAX_LABEL_TIMELINES + 2 {
            t.record(&format!("l{n}"), 2_000, 1_000, false);
        }
        let d = t.data();
        assert_eq!(d.interval_ms, 2000, "slow's 600 s coarsened to 2 s intervals, and everyone follows");
        assert_eq!(d.start_ms, 0);
        assert_eq!(d.labels.len(), MAX_LABEL_TIMELINES);
        let len = d.labels[0].samples.len();
        assert!(d.labels.iter().all(|l| l.samples.len() == len), "one axis for all");
        let slow = d.labels.iter().find(|l| l.label == "slow").unwrap();
        assert_eq!(slow.samples.iter().sum::<u64>(), 600);
        assert_eq!(slow.errors.iter().sum::<u64>(), 200);
        assert_eq!(d.labels[0].label, "fast");
        assert_eq!(d.labels[0].p50_ms[0], Some(1.0));
        let others = d.others.expect("labels past the first 16");
        assert_eq!((others.label.as_str(), others.samples.iter().sum::<u64>()), ("other labels", 4));
    }

    #[test]
    fn long_runs_coarsen_and_keep_every_sample() {
        let mut t = Timeline::with_limits(10, 1);
        for s in 0..100u64 {
            t.record(5_000 + s * 1000, 1000, s % 2 == 0, Some(s as u32));
        }
        let d = t.data();
        assert!(d.samples.len() <= 10, "{} points", d.samples.len());
        assert_eq!(d.interval_ms, 16_000);
        assert_eq!(d.samples.iter().sum::<u64>(), 100);
        assert_eq!(d.errors.iter().sum::<u64>(), 50);
        assert_eq!(d.threads.last(), Some(&Some(99)));
        assert_eq!(d.start_ms % d.interval_ms, 0);
    }
}
