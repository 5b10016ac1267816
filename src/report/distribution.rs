//! Response-time distributions as the bins of a histogram chart, counted from the HDR histograms of the
//! statistics (so every sample the summary counts is in exactly one bin).

use serde::{Deserialize, Serialize};

use crate::sink::latencies::{self, Latencies};

/// About this many bins per chart.
pub const TARGET_BINS: u64 = 50;

/// One label's distribution: equal bins from the fastest sample to the 99.9th percentile, and the slowest
/// 0.1 % beyond (so one outlier does not squash the chart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// The label (or `TOTAL`).
    pub label: String,
    /// Samples counted: the sum of `counts` and `overflow`.
    pub samples: u64,
    /// Lower edge of the first bin, ms.
    pub lo_ms: f64,
    /// Width of every bin, ms; bin i holds elapsed times in [lo + i·width, lo + (i+1)·width).
    pub bin_ms: f64,
    /// Samples per bin.
    pub counts: Vec<u64>,
    /// Samples at or above the end of the last bin.
    pub overflow: u64,
}

/// Equal bins: `count` of `width_us` from `lo_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bins {
    /// Lower edge of the first bin, µs.
    pub lo_us: u64,
    /// Width, µs: 1, 2 or 5 times a power of ten, and a multiple of the samples' resolution.
    pub width_us: u64,
    /// Number of bins.
    pub count: usize,
}

impl Bins {
    /// About [`TARGET_BINS`] bins from the smallest value of any histogram to the largest 99.9th percentile.
    pub fn covering(hists: &[&Latencies], resolution_us: u64) -> Bins {
        let r = resolution_us.max(1);
        let recorded = hists.iter().filter(|h| !h.is_empty());
        let lo = recorded.clone().filter_map(|h| h.recorded().next().map(|(top, _)| value(top, r))).min();
        let hi = recorded.map(|h| value(h.value_at_quantile(0.999), r)).max();
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Bins { lo_us: 0, width_us: r, count: 1 };
        };
        let width = nice_width((hi.saturating_sub(lo)) as f64 / TARGET_BINS as f64, r);
        let lo = lo / width * width;
        Bins { lo_us: lo, width_us: width, count: ((hi - lo) / width + 1) as usize }
    }

    /// Samples of `h` per bin, and those beyond the last.
    pub fn distribute(&self, h: &Latencies, resolution_us: u64) -> (Vec<u64>, u64) {
        let mut counts = vec![0; self.count];
        let mut overflow = 0;
        for (top, count) in h.recorded() {
            let x = value(top, resolution_us.max(1));
            let i = x.saturating_sub(self.lo_us) / self.width_us;
            match usize::try_from(i).ok().and_then(|i| counts.get_mut(i)) {
                Some(c) => *c += count,
                None => overflow += count,
            }
        }
        (counts, overflow)
    }

    /// The distribution of `h` over these bins.
    pub fn distribution(&self, label: &str, h: &Latencies, resolution_us: u64) -> Distribution {
        let (counts, overflow) = self.distribute(h, resolution_us);
        Distribution {
            label: label.to_string(),
            samples: h.len(),
            lo_ms: self.lo_us as f64 / 1000.0,
            bin_ms: self.width_us as f64 / 1000.0,
            counts,
            overflow,
        }
    }
}

/// One label's distribution over bins of its own.
pub fn distribution(label: &str, h: &Latencies, resolution_us: u64) -> Distribution {
    Bins::covering(&[h], resolution_us).distribution(label, h, resolution_us)
}

/// The sample value a histogram bucket stands for: the first multiple of the resolution in the bucket (exact
/// when the bucket is narrower than the resolution, as for whole-ms samples below about 1 s), else its low end.
fn value(v: u64, r: u64) -> u64 {
    let low = latencies::lowest_equivalent(v);
    let snapped = low.div_ceil(r) * r;
    if snapped <= latencies::highest_equivalent(v) {
        snapped
    } else {
        low
    }
}

/// The smallest of 1, 2, 5 × 10^k that is at least `raw` and `min`.
fn nice_width(raw: f64, min: u64) -> u64 {
    let mut decade = 1u64;
    loop {
        for m in [1, 2, 5] {
            let w = decade * m;
            if w as f64 >= raw && w >= min {
                return w;
            }
        }
        decade = decade.saturating_mul(10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values_ms: impl IntoIterator<Item = u64>) -> Latencies {
        let mut h = Latencies::default();
        for v in values_ms {
            h.record(v * 1000);
        }
        h
    }

    #[test]
    fn whole_ms_samples_land_in_their_bins() {
        let h = hist(1..=100);
        let d = distribution("a", &h, 1000);
        assert_eq!((d.lo_ms, d.bin_ms, d.counts.len(), d.overflow, d.samples), (0.0, 2.0, 51, 0, 100));
        assert_eq!(d.counts[0], 1);
        assert!(d.counts[1..50].iter().all(|&c| c == 2), "{:?}", d.counts);
        assert_eq!(d.counts[50], 1);
    }

    #[test]
    fn the_slowest_tenth_of_a_percent_overflows() {
        let h = hist((0..2000).map(|i| 100 + i % 50).chain([60_000, 61_000]));
        let d = distribution("a", &h, 1000);
        assert_eq!((d.lo_ms, d.bin_ms, d.overflow), (100.0, 1.0, 2));
        assert_eq!(d.counts.iter().sum::<u64>(), 2000);
    }

    #[test]
    fn shared_bins_and_edge_cases() {
        let (a, b) = (hist([10, 20]), hist([40]));
        let bins = Bins::covering(&[&a, &b], 1000);
        assert_eq!(bins, Bins { lo_us: 10_000, width_us: 1000, count: 31 });
        assert_eq!(bins.distribute(&b, 1000).0[30], 1);
        let empty = distribution("e", &Latencies::default(), 1);
        assert_eq!((empty.counts, empty.overflow, empty.samples), (vec![0], 0, 0));
        let zeros = distribution("z", &hist([0, 0]), 1000);
        assert_eq!((zeros.counts, zeros.bin_ms), (vec![2], 1.0));
        assert_eq!(nice_width(3.0, 1), 5);
        assert_eq!(nice_width(0.0, 1000), 1000);
        assert_eq!(nice_width(1980.0, 1000), 2000);
    }
}
