//! Instants a plan's durations away, computed without overflow.
//!
//! Plans cannot write a duration above [`crate::duration::MAX`], so `now + d` always fits; these helpers
//! keep it so for any duration, saturating instead of panicking.

use std::time::{Duration, Instant};

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
}
