//! Ramps: how many threads a closed group wants at a time, and when an open group's arrivals are due.

use std::time::Duration;

use crate::plan::model::Stage;

/// Threads wanted `t` into a ramp that starts from 0 and moves linearly to each stage's target.
pub fn threads_at(stages: &[Stage], t: Duration) -> f64 {
    Stage::value_at(0.0, stages, t)
}

/// When arrivals are due for a rate that starts at `initial` per second and moves linearly to each
/// stage's target: arrival k (from 1) is due when the integral of the rate reaches k.
#[derive(Debug, Clone)]
pub struct Arrivals {
    stages: Vec<(f64, f64, f64)>,
    next: u64,
}

impl Arrivals {
    /// The schedule of a rate ramp.
    pub fn new(initial: f64, stages: &[Stage]) -> Self {
        let mut from = initial;
        let mut out = Vec::with_capacity(stages.len());
        for s in stages {
            out.push((from, s.target, s.duration.as_secs_f64()));
            from = s.target;
        }
        Self { stages: out, next: 1 }
    }

    /// The offset from the start of arrival `k` (from 1), if it falls within the stages.
    pub fn offset_of(&self, k: u64) -> Option<Duration> {
        let mut remaining = k as f64;
        let mut start = 0.0;
        for &(a, b, len) in &self.stages {
            let count = (a + b) / 2.0 * len;
            if remaining <= count + 1e-9 && count > 0.0 {
                let slope = (b - a) / len;
                let t = if slope.abs() < 1e-12 {
                    remaining / a
                } else {
                    (-a + (a * a + 2.0 * slope * remaining).max(0.0).sqrt()) / slope
                };
                return Duration::try_from_secs_f64(start + t.clamp(0.0, len)).ok();
            }
            remaining -= count;
            start += len;
        }
        None
    }
}

impl Arrivals {
    /// How long the schedule lasts: its stages end to end.
    pub fn duration(&self) -> Duration {
        Duration::try_from_secs_f64(self.stages.iter().map(|s| s.2).sum()).unwrap_or(Duration::MAX)
    }

    /// How many arrivals are due by `t` from the start (all of them once `t` is past the last stage): the
    /// integral of the rate, so a dispatcher that fell behind learns in one step how many it missed.
    pub fn count_by(&self, t: Duration) -> u64 {
        let t = t.as_secs_f64();
        let mut due = 0.0;
        let mut start = 0.0;
        for &(a, b, len) in &self.stages {
            if t < start + len {
                let into = t - start;
                due += a * into + (b - a) / (2.0 * len) * into * into;
                break;
            }
            due += (a + b) / 2.0 * len;
            start += len;
        }
        // `as` saturates: an absurd rate gives u64::MAX, not a wrapped count.
        (due + 1e-9).floor() as u64
    }
}

impl Iterator for Arrivals {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let at = self.offset_of(self.next)?;
        self.next += 1;
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(secs: u64, target: f64) -> Stage {
        Stage { duration: Duration::from_secs(secs), target }
    }

    #[test]
    fn constant_rate_is_evenly_spaced_and_exact_in_count() {
        let a: Vec<_> = Arrivals::new(200.0, &[stage(1, 200.0)]).collect();
        assert_eq!(a.len(), 200);
        assert_eq!(a[0], Duration::from_millis(5));
        assert_eq!(a[199], Duration::from_secs(1));
    }

    #[test]
    fn ramping_rate_integrates() {
        // 0 -> 100/s over 10 s: 500 arrivals, the first half of them in the last ~30% of the time.
        let a: Vec<_> = Arrivals::new(0.0, &[stage(10, 100.0)]).collect();
        assert_eq!(a.len(), 500);
        let half = a[249].as_secs_f64();
        assert!((half - 10.0 * 0.5f64.sqrt()).abs() < 0.01, "{half}");
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_zero_rate_stage_has_no_arrivals() {
        let a: Vec<_> = Arrivals::new(10.0, &[stage(1, 10.0), stage(1, 0.0), stage(1, 0.0), stage(1, 10.0)]).collect();
        assert_eq!(a.len(), 20);
        assert!(a.iter().all(|t| t.as_secs_f64() <= 2.0 || t.as_secs_f64() >= 3.0));
    }

    #[test]
    fn count_by_agrees_with_the_schedule() {
        let a = Arrivals::new(0.0, &[stage(10, 100.0), stage(5, 100.0)]);
        let times: Vec<_> = a.clone().collect();
        assert_eq!(a.count_by(Duration::from_secs(60)), times.len() as u64);
        for (i, t) in times.iter().enumerate().step_by(37) {
            assert_eq!(a.count_by(*t + Duration::from_nanos(10)), i as u64 + 1, "arrival {} at {t:?}", i + 1);
        }
        assert_eq!(a.count_by(Duration::ZERO), 0);
    }

    #[test]
    fn an_absurd_rate_counts_without_overflow() {
        let a = Arrivals::new(1e300, &[stage(1, 1e300)]);
        assert_eq!(a.count_by(Duration::from_millis(1)), u64::MAX);
        assert!(a.offset_of(1).is_some());
    }

    #[test]
    fn threads_follow_the_stages() {
        let s = [stage(10, 50.0), stage(10, 50.0), stage(5, 0.0)];
        assert_eq!(threads_at(&s, Duration::ZERO), 0.0);
        assert_eq!(threads_at(&s, Duration::from_secs(5)), 25.0);
        assert_eq!(threads_at(&s, Duration::from_secs(15)), 50.0);
        assert_eq!(threads_at(&s, Duration::from_millis(22_500)), 25.0);
        assert_eq!(threads_at(&s, Duration::from_secs(30)), 0.0);
    }
}
