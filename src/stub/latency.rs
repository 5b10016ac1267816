//! How long a stub route waits before it answers: fixed, uniform, or lognormal from a median and a p99.

use std::time::Duration;

use rand::Rng;
use rand_distr::{Distribution, LogNormal};
use serde::Deserialize;

use super::duration::StubDuration;

/// The z-score of the 99th percentile of the standard normal distribution.
const Z_P99: f64 = 2.3263;

/// A cap on one lognormal draw: the tail is unbounded, and a `Duration` built from an absurd draw would overflow.
const MAX_DRAW: Duration = Duration::from_secs(3600);

/// The delay a route adds before answering, as written in the stub file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawLatency")]
pub enum Latency {
    /// Always this long: `{ fixed: 5ms }`.
    Fixed(Duration),
    /// Uniformly between two bounds, both included: `{ uniform: [1ms, 5ms] }`.
    Uniform {
        /// The shortest delay.
        min: Duration,
        /// The longest delay.
        max: Duration,
    },
    /// Lognormal, the shape of real service times: `{ median: 20ms, p99: 150ms }`.
    LogNormal {
        /// Half of the delays are shorter than this.
        median: Duration,
        /// 99% of the delays are shorter than this.
        p99: Duration,
    },
}

/// The latency mapping as written, before its shape is checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLatency {
    fixed: Option<StubDuration>,
    uniform: Option<[StubDuration; 2]>,
    median: Option<StubDuration>,
    p99: Option<StubDuration>,
}

impl TryFrom<RawLatency> for Latency {
    type Error = String;

    fn try_from(raw: RawLatency) -> Result<Self, String> {
        let lognormal = raw.median.is_some() || raw.p99.is_some();
        let shapes = usize::from(raw.fixed.is_some()) + usize::from(raw.uniform.is_some()) + usize::from(lognormal);
        if shapes != 1 {
            return Err("latency takes exactly one of `fixed: 5ms`, `uniform: [1ms, 5ms]` or \
                        `median: 20ms` with `p99: 150ms`"
                .to_string());
        }
        if let Some(StubDuration(fixed)) = raw.fixed {
            return Ok(Latency::Fixed(fixed));
        }
        if let Some([StubDuration(min), StubDuration(max)]) = raw.uniform {
            if min > max {
                return Err(format!(
                    "uniform latency goes from {min:?} down to {max:?}; write the smaller bound first"
                ));
            }
            return Ok(Latency::Uniform { min, max });
        }
        match (raw.median, raw.p99) {
            (Some(StubDuration(median)), Some(StubDuration(p99))) => {
                if median.is_zero() {
                    return Err("a lognormal latency needs a median above zero; use `fixed: 0ms` for none".to_string());
                }
                if p99 < median {
                    return Err(format!("latency p99 {p99:?} is below its median {median:?}"));
                }
                Ok(Latency::LogNormal { median, p99 })
            }
            (Some(_), None) => Err("latency `median` needs a `p99` too".to_string()),
            _ => Err("latency `p99` needs a `median` too".to_string()),
        }
    }
}

/// A [`Latency`] made ready to draw from, built once when the server starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sampler {
    /// No delay at all.
    None,
    /// Always the same delay.
    Fixed(Duration),
    /// Uniform in nanoseconds, both bounds included.
    Uniform(u64, u64),
    /// Lognormal in seconds.
    LogNormal(LogNormal<f64>),
}

impl Sampler {
    /// Prepares to draw delays from `latency`; `None` means the route answers at once.
    pub(crate) fn new(latency: Option<&Latency>) -> Self {
        match latency {
            None => Sampler::None,
            Some(Latency::Fixed(d)) => Sampler::Fixed(*d),
            Some(Latency::Uniform { min, max }) => Sampler::Uniform(nanos(*min), nanos(*max)),
            Some(Latency::LogNormal { median, p99 }) => {
                let mu = median.as_secs_f64().ln();
                let sigma = (p99.as_secs_f64().ln() - mu) / Z_P99;
                // Validation guarantees median > 0 and p99 >= median, so sigma is finite and not negative.
                LogNormal::new(mu, sigma).map_or(Sampler::Fixed(*median), Sampler::LogNormal)
            }
        }
    }

    /// Draws one delay.
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        match self {
            Sampler::None => Duration::ZERO,
            Sampler::Fixed(d) => *d,
            Sampler::Uniform(lo, hi) => Duration::from_nanos(rng.random_range(*lo..=*hi)),
            Sampler::LogNormal(dist) => {
                let secs = dist.sample(rng);
                Duration::try_from_secs_f64(secs).map_or(MAX_DRAW, |d| d.min(MAX_DRAW))
            }
        }
    }
}

/// Nanoseconds of `d`, saturated: durations in stub files are far below 584 years.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn uniform_stays_within_its_bounds() {
        let sampler = Sampler::new(Some(&Latency::Uniform { min: ms(1), max: ms(5) }));
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let d = sampler.sample(&mut rng);
            assert!(d >= ms(1) && d <= ms(5), "{d:?}");
        }
    }

    #[test]
    fn lognormal_hits_its_median_and_p99() {
        let sampler = Sampler::new(Some(&Latency::LogNormal { median: ms(20), p99: ms(150) }));
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let mut draws: Vec<Duration> = (0..100_000).map(|_| sampler.sample(&mut rng)).collect();
        draws.sort();
        let median = draws[draws.len() / 2].as_secs_f64() * 1000.0;
        let p99 = draws[draws.len() * 99 / 100].as_secs_f64() * 1000.0;
        assert!((median - 20.0).abs() < 1.0, "median {median}ms");
        assert!((p99 - 150.0).abs() < 10.0, "p99 {p99}ms");
    }

    #[test]
    fn equal_median_and_p99_is_constant() {
        let sampler = Sampler::new(Some(&Latency::LogNormal { median: ms(10), p99: ms(10) }));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let d = sampler.sample(&mut rng);
        assert!(d.abs_diff(ms(10)) < Duration::from_micros(1), "{d:?}");
    }
}
