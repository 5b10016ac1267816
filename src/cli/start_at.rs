//! `--start-at TIME`: the instant every segment of a run starts at.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The farthest ahead a start may be: further is taken for a mistake (seconds given as milliseconds, a
/// wrong date).
const MAX_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// Parses RFC 3339 (`2026-12-01T16:00:00Z`, `...+01:00`) or Unix milliseconds; refuses an instant more
/// than 24 hours ahead.
pub(crate) fn parse(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    let at = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let ms: u64 = text.parse().map_err(|_| format!("`{text}` milliseconds are too many"))?;
        UNIX_EPOCH.checked_add(Duration::from_millis(ms)).ok_or_else(|| format!("`{text}` is too far ahead"))?
    } else {
        let t = chrono::DateTime::parse_from_rfc3339(text)
            .map_err(|e| format!("`{text}` is neither RFC 3339 (2026-12-01T16:00:00Z) nor Unix milliseconds ({e})"))?;
        SystemTime::from(t.with_timezone(&chrono::Utc))
    };
    if let Ok(ahead) = at.duration_since(SystemTime::now()) {
        if ahead > MAX_AHEAD {
            let hours = ahead.as_secs() / 3600;
            return Err(format!(
                "`{text}` is {hours} hours ahead; a start more than 24 hours away is taken for a mistake \
                 (Unix time is in milliseconds)"
            ));
        }
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rfc3339_and_unix_milliseconds() {
        let at = parse("2026-12-01T16:00:00Z").unwrap();
        assert_eq!(at.duration_since(UNIX_EPOCH).unwrap().as_millis(), 1_796_140_800_000);
        assert_eq!(parse("2026-12-01T17:00:00+01:00").unwrap(), at);
        assert_eq!(parse("1796140800000").unwrap(), at);
    }

    #[test]
    fn refuses_garbage_and_the_far_future() {
        for bad in ["", "soon", "-5", "2026-13-01T00:00:00Z", "99999999999999999999999"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let far = SystemTime::now() + Duration::from_secs(25 * 3600);
        let ms = far.duration_since(UNIX_EPOCH).unwrap().as_millis().to_string();
        assert!(parse(&ms).unwrap_err().contains("24 hours"));
    }
}
