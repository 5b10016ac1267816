//! One label's elapsed times: the values themselves while they are few, an HDR histogram once they are many.
//!
//! A histogram of 3 significant digits takes 30 to 115 KiB however few samples it holds (its counts reach
//! the largest value), and reading a figure from it walks those counts, so a results file of 100,000
//! labels with a sample or two each needed 10 GiB and half a minute to summarize. Up to [`FEW`] values are
//! kept sorted, and every figure is read from them as the histogram of the same values would give it: the
//! same buckets (the bucket of a value depends only on the histogram's precision), the same counts.

use std::sync::OnceLock;

use hdrhistogram::Histogram;

/// Values kept before they move into a histogram: 2 KiB, a tenth of the smallest histogram of µs times.
const FEW: usize = 256;

/// Elapsed times in µs.
#[derive(Debug, Clone)]
pub enum Latencies {
    /// Every value so far, in ascending order: each figure is then read without sorting.
    Few(Vec<u64>),
    /// Every value so far, in a histogram of 3 significant digits.
    Many(Histogram<u64>),
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::Few(Vec::new())
    }
}

impl Latencies {
    /// Adds one value.
    pub fn record(&mut self, us: u64) {
        match self {
            Latencies::Many(h) => put(h, us),
            Latencies::Few(values) if values.len() < FEW => values.insert(values.partition_point(|&v| v <= us), us),
            Latencies::Few(values) => {
                let mut h = histogram_of(values);
                put(&mut h, us);
                *self = Latencies::Many(h);
            }
        }
    }

    /// The histogram of every value so far, for tests to compare with.
    #[cfg(test)]
    pub fn histogram(&self) -> Histogram<u64> {
        match self {
            Latencies::Few(values) => histogram_of(values),
            Latencies::Many(h) => h.clone(),
        }
    }

    /// How many values were recorded.
    pub fn len(&self) -> u64 {
        match self {
            Latencies::Few(values) => values.len() as u64,
            Latencies::Many(h) => h.len(),
        }
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Histogram::value_at_quantile`]: the top of the bucket holding the value of that rank (its bottom
    /// for the quantile 0), 0 when empty.
    pub fn value_at_quantile(&self, quantile: f64) -> u64 {
        let [value] = self.values_at_quantiles([quantile]);
        value
    }

    /// [`Self::value_at_quantile`] of each quantile, the values sorted once.
    pub fn values_at_quantiles<const N: usize>(&self, quantiles: [f64; N]) -> [u64; N] {
        let values = match self {
            Latencies::Many(h) => return quantiles.map(|q| h.value_at_quantile(q)),
            Latencies::Few(values) if values.is_empty() => return [0; N],
            Latencies::Few(values) => values,
        };
        let n = values.len();
        quantiles.map(|quantile| {
            // The histogram's rank: the count that reaches the quantile, at least the first value.
            let rank = ((quantile.min(1.0) * n as f64).ceil() as usize).clamp(1, n);
            let value = values[rank - 1];
            if quantile == 0.0 {
                lowest_equivalent(value)
            } else {
                bucket_top(value)
            }
        })
    }

    /// [`Histogram::iter_recorded`]: each bucket that holds values, lowest first, as the top of its range
    /// and its count.
    pub fn recorded(&self) -> Box<dyn Iterator<Item = (u64, u64)> + '_> {
        match self {
            Latencies::Many(h) => Box::new(h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value()))),
            Latencies::Few(values) => {
                let mut buckets: Vec<(u64, u64)> = Vec::new();
                for &v in values {
                    let top = bucket_top(v);
                    match buckets.last_mut() {
                        Some((last, count)) if *last == top => *count += 1,
                        _ => buckets.push((top, 1)),
                    }
                }
                Box::new(buckets.into_iter())
            }
        }
    }
}

/// [`Histogram::lowest_equivalent`] of the histograms here: the bottom of the bucket `value` falls in.
pub fn lowest_equivalent(value: u64) -> u64 {
    shape().lowest_equivalent(value)
}

/// [`Histogram::highest_equivalent`] of the histograms here: the top of the bucket `value` falls in.
pub fn highest_equivalent(value: u64) -> u64 {
    shape().highest_equivalent(value)
}

/// The top of `value`'s bucket as the histogram reports it: from the bucket's bottom (which differs from
/// [`highest_equivalent`] of `value` itself only at `u64::MAX`).
fn bucket_top(value: u64) -> u64 {
    highest_equivalent(lowest_equivalent(value))
}

/// An empty histogram of the precision used here: where a value's bucket lies depends on nothing else.
fn shape() -> &'static Histogram<u64> {
    static SHAPE: OnceLock<Histogram<u64>> = OnceLock::new();
    SHAPE.get_or_init(|| Histogram::new(3).expect("3 significant digits are supported"))
}

fn histogram_of(values: &[u64]) -> Histogram<u64> {
    let mut h = Histogram::new(3).expect("3 significant digits are supported");
    for &us in values {
        put(&mut h, us);
    }
    h
}

fn put(h: &mut Histogram<u64>, us: u64) {
    if h.record(us).is_err() {
        // Only when the histogram cannot grow further (beyond usize); keep the sample, clamped.
        h.saturating_record(us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_values_give_the_histogram_that_recording_them_gives() {
        let values: Vec<u64> = (0..2 * FEW as u64).map(|i| (i * 7919) % 5_000_000 + 1).collect();
        for n in [0, 1, FEW - 1, FEW, FEW + 1, 2 * FEW] {
            let mut kept = Latencies::default();
            let mut direct = Histogram::<u64>::new(3).unwrap();
            for &v in &values[..n] {
                kept.record(v);
                direct.record(v).unwrap();
            }
            assert_eq!(matches!(kept, Latencies::Many(_)), n > FEW, "{n} values");
            assert_eq!(kept.len(), n as u64);
            assert_eq!(kept.histogram(), direct, "{n} values");
            assert_same_figures(&kept, &direct);
        }
    }

    /// Every figure the statistics and the charts read, from the kept values and from their histogram.
    fn assert_same_figures(kept: &Latencies, h: &Histogram<u64>) {
        let quantiles = [-1.0, 0.0, 0.001, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0, 2.0];
        for q in quantiles {
            assert_eq!(kept.value_at_quantile(q), h.value_at_quantile(q), "quantile {q} of {} values", h.len());
        }
        assert_eq!(kept.values_at_quantiles(quantiles), quantiles.map(|q| h.value_at_quantile(q)));
        let buckets: Vec<(u64, u64)> = h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect();
        assert_eq!(kept.recorded().collect::<Vec<_>>(), buckets);
        for v in [0, 1, 999, 1000, 2047, 2048, 2049, 123_456, 5_000_000, u64::MAX / 2] {
            assert_eq!(lowest_equivalent(v), h.lowest_equivalent(v));
            assert_eq!(highest_equivalent(v), h.highest_equivalent(v));
        }
    }

    #[test]
    fn repeated_and_neighbouring_values_share_buckets_as_in_the_histogram() {
        // Whole milliseconds in µs (a JTL), with repeats, zeros, and values a bucket apart above 2 s.
        let values = [0, 0, 1000, 1000, 1000, 2_048_000, 2_049_000, 2_050_000, 4_000_000, 4_001_000, 7, 3];
        for n in 0..=values.len() {
            let mut kept = Latencies::default();
            let mut direct = Histogram::<u64>::new(3).unwrap();
            for &v in &values[..n] {
                kept.record(v);
                direct.record(v).unwrap();
            }
            assert_same_figures(&kept, &direct);
        }
    }

    #[test]
    fn a_value_beyond_any_histogram_is_kept_clamped() {
        let mut kept = Latencies::default();
        kept.record(u64::MAX);
        assert_eq!(kept.histogram().len(), 1);
        assert_same_figures(&kept, &kept.histogram());
    }
}
