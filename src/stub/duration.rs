//! Durations as written in stub files: `250ms`, `10s`, `5m`, `1h30m`.

use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// The units a duration may use, longest suffix first so `ms` is not read as `m`.
const UNITS: [(&str, u64); 6] = [
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
];

/// Parses a duration made of whole numbers each followed by a unit (`h`, `m`, `s`, `ms`, `us`, `ns`).
///
/// A bare number is refused: nobody can tell whether `250` meant milliseconds or seconds.
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; write it like 250ms, 10s, 5m or 1h30m".to_string());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("duration `{text}` has no unit; did you mean {text}ms or {text}s?"));
    }
    let mut rest = text;
    let mut nanos: u64 = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("invalid duration `{text}`: expected a whole number at `{rest}`"));
        }
        let number: u64 = rest[..digits].parse().map_err(|_| format!("duration `{text}` is too long"))?;
        rest = &rest[digits..];
        let Some((unit, scale)) = UNITS.iter().find(|(unit, _)| rest.starts_with(unit)) else {
            return Err(format!("invalid duration `{text}`: expected a unit (h, m, s, ms, us, ns) after {number}"));
        };
        rest = &rest[unit.len()..];
        nanos = number
            .checked_mul(*scale)
            .and_then(|part| nanos.checked_add(part))
            .ok_or_else(|| format!("duration `{text}` is too long"))?;
    }
    Ok(Duration::from_nanos(nanos))
}

/// Deserializes a duration string with [`parse`], so a bad duration is an error at its place in the file.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse(&text).map_err(serde::de::Error::custom)
}

/// A duration read from a stub file; exists so sequences like `uniform: [1ms, 5ms]` can be deserialized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StubDuration(pub(crate) Duration);

impl<'de> Deserialize<'de> for StubDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer).map(StubDuration)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_units() {
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("15us"), Ok(Duration::from_micros(15)));
        assert_eq!(parse("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(parse("0ms"), Ok(Duration::ZERO));
    }

    #[test]
    fn parses_compound_durations() {
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("1m30s500ms"), Ok(Duration::from_millis(90_500)));
        assert_eq!(parse(" 5s "), Ok(Duration::from_secs(5)));
    }

    #[test]
    fn refuses_a_bare_number_and_names_the_units() {
        let err = parse("250").unwrap_err();
        assert!(err.contains("no unit"), "{err}");
        assert!(err.contains("250ms"), "{err}");
    }

    #[test]
    fn refuses_malformed_durations() {
        for bad in ["", "ms", "5x", "1.5s", "-3s", "5 s", "10s5", "99999999999999999999s", "999999999h"] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
