//! Bounded uniform samples of each label's elapsed times, for the statistical test of `planrun compare`.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Samples kept per label (and for TOTAL): enough for a Mann-Whitney U test to see a 5 % shift of the median
/// of any realistic latency distribution, small enough to rank in a few milliseconds.
pub const CAPACITY: usize = 10_000;

/// The fixed seed: the same file gives the same reservoirs, so a comparison is reproducible.
const SEED: u64 = 0x706c_616e_7275_6e00;

/// A uniform random sample of at most `capacity` values from a stream of unknown length (Vitter's
/// algorithm R): every value seen has the same chance to be kept.
#[derive(Debug, Clone)]
pub struct Reservoir {
    capacity: usize,
    seen: u64,
    values: Vec<u64>,
    rng: ChaCha8Rng,
}

impl Reservoir {
    /// An empty reservoir whose random choices are seeded from `seed`.
    pub fn new(capacity: usize, seed: u64) -> Self {
        Reservoir { capacity, seen: 0, values: Vec::new(), rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// Offers one value.
    pub fn offer(&mut self, value: u64) {
        self.seen += 1;
        if self.values.len() < self.capacity {
            self.values.push(value);
        } else {
            let j = self.rng.random_range(0..self.seen);
            if let Ok(j) = usize::try_from(j) {
                if j < self.capacity {
                    self.values[j] = value;
                }
            }
        }
    }

    /// The values kept, in no particular order.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    /// How many values were offered.
    #[cfg(test)]
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

/// One reservoir per label and one for TOTAL (transactions left out, as in the summary).
#[derive(Debug, Default)]
pub struct Reservoirs {
    index: HashMap<Box<str>, usize>,
    labels: Vec<Reservoir>,
    total: Option<Reservoir>,
}

impl Reservoirs {
    /// No reservoirs yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers an elapsed time (µs) to its label's reservoir and, unless it is a transaction's, to TOTAL's.
    pub fn offer(&mut self, label: &str, elapsed_us: u64, transaction: bool) {
        let i = match self.index.get(label) {
            Some(&i) => i,
            None => {
                // Each label's reservoir has its own generator, seeded from its name: what it keeps depends only
                // on that label's samples, not on how they interleave with others.
                self.labels.push(Reservoir::new(CAPACITY, SEED ^ fnv1a(label.as_bytes())));
                self.index.insert(label.into(), self.labels.len() - 1);
                self.labels.len() - 1
            }
        };
        self.labels[i].offer(elapsed_us);
        if !transaction {
            self.total.get_or_insert_with(|| Reservoir::new(CAPACITY, SEED)).offer(elapsed_us);
        }
    }

    /// The label's reservoir (`TOTAL` is [`Reservoirs::total`]).
    pub fn label(&self, label: &str) -> Option<&Reservoir> {
        self.index.get(label).map(|&i| &self.labels[i])
    }

    /// TOTAL's reservoir.
    pub fn total(&self) -> Option<&Reservoir> {
        self.total.as_ref()
    }
}

/// FNV-1a: a stable hash (std's may change between Rust releases, which would change the samples kept).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_until_full_then_a_uniform_sample() {
        let mut r = Reservoir::new(1000, 1);
        (0..500).for_each(|v| r.offer(v));
        assert_eq!(r.values().len(), 500);
        (500..100_000).for_each(|v| r.offer(v));
        assert_eq!((r.values().len(), r.seen()), (1000, 100_000));
        // A uniform sample of 0..100000 has a mean near 50000 (standard error about 913).
        let mean = r.values().iter().sum::<u64>() as f64 / 1000.0;
        assert!((mean - 50_000.0).abs() < 4_000.0, "mean {mean}");
    }

    #[test]
    fn reproducible_and_independent_of_other_labels() {
        let mut one = Reservoirs::new();
        let mut two = Reservoirs::new();
        for v in 0..30_000 {
            one.offer("a", v, false);
            two.offer("a", v, false);
            two.offer("b", v * 7, true);
        }
        assert_eq!(one.label("a").unwrap().values(), two.label("a").unwrap().values());
        assert_eq!(two.total().unwrap().seen(), 30_000);
        assert!(two.label("c").is_none());
    }
}
