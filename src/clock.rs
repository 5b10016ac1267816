//! Instants a plan's durations away, computed without overflow, and the wall-clock time of an instant.
//!
//! Plans cannot write a duration above [`crate::duration::MAX`], so `now + d` always fits; these helpers
//! keep it so for any duration, saturating instead of panicking.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `at + d`, or, when that is past what the clock can hold, the farthest instant it can (within a factor of
/// two of `d`).
pub(crate) fn after(at: Instant, d: Duration) -> Instant {
    let mut d = d;
    loop {
        if let Some(t) = at.checked_add(d) {
            return t;
        }
        d /= 2;
    }
}

/// [`after`] for tokio's instants.
pub(crate) fn after_tokio(at: tokio::time::Instant, d: Duration) -> tokio::time::Instant {
    tokio::time::Instant::from_std(after(at.into_std(), d))
}

/// The wall clock (in nanoseconds since the Unix epoch) and the monotonic clock, read together once, the
/// first time a sample is timestamped.
static ANCHOR: OnceLock<(u64, Instant)> = OnceLock::new();

/// Milliseconds since the Unix epoch at `at`: the wall clock read at the anchor plus the monotonic time
/// since (JMeter's `useNanoTime`). A sample's timestamp costs no second clock read, and a wall clock stepped
/// during the run does not reorder the samples.
pub(crate) fn epoch_ms(at: Instant) -> u64 {
    let &(wall, anchor) = ANCHOR.get_or_init(|| {
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        (nanos(wall), Instant::now())
    });
    let ns = match at.checked_duration_since(anchor) {
        Some(since) => wall.saturating_add(nanos(since)),
        None => wall.saturating_sub(nanos(anchor - at)),
    };
    ns / 1_000_000
}

/// A duration in nanoseconds, saturating (at 584 years).
fn nanos(d: Duration) -> u64 {
    d.as_secs().saturating_mul(1_000_000_000).saturating_add(u64::from(d.subsec_nanos()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_and_saturates() {
        let now = Instant::now();
        assert_eq!(after(now, Duration::from_secs(5)), now + Duration::from_secs(5));
        let far = after(now, Duration::MAX);
        assert!(far > now + crate::duration::MAX, "saturates far in the future, without panicking");
        let t = tokio::time::Instant::from_std(now);
        assert_eq!(after_tokio(t, Duration::from_millis(3)), t + Duration::from_millis(3));
        assert!(after_tokio(t, Duration::MAX) > t);
    }

    #[test]
    fn an_instant_maps_to_the_wall_clock_in_milliseconds() {
        let wall = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        let (before, now, after) = (wall(SystemTime::now()), epoch_ms(Instant::now()), wall(SystemTime::now()));
        // Loose: the anchor may have been read long before, by another test, and the clocks slewed since.
        assert!((before.saturating_sub(100)..=after + 100).contains(&now), "{before} <= {now} <= {after}");
        let earlier = Instant::now().checked_sub(Duration::from_millis(250)).unwrap();
        let back = epoch_ms(earlier);
        assert!(back.abs_diff(now.saturating_sub(250)) <= 2, "{back} is 250 ms before {now}");
    }
}
