//! Durations as users write them, in plans and stub files alike: `250ms`, `1.5s`, `1h30m`, `20ns`.
//!
//! One or more number-unit pairs that add up; a number is whole or has a fraction (`1.5`, `.5`, `5.`); the
//! units are `ns`, `us` (or `µs`), `ms`, `s`, `m` and `h`. The arithmetic is exact, in whole nanoseconds
//! (digits finer than a nanosecond are dropped), and checked: a duration above [`MAX`] is refused, so a
//! plan's durations can be added to any instant of a run, or to each other a few times, without overflow.

use std::time::Duration;

/// The longest duration planrun accepts anywhere: 365 days. Generous for soak tests, and far enough
/// from `Duration`'s and `Instant`'s limits that `now + d` and the sums of a plan's durations cannot overflow.
pub const MAX: Duration = Duration::from_secs(365 * 24 * 3600);

/// [`MAX`] as the error messages and the documentation write it.
pub const MAX_TEXT: &str = "365 days (8760h)";

const MAX_NANOS: u128 = MAX.as_nanos();

/// Fraction digits that can still change the result: a digit 21 places after the point is worth less
/// than a nanosecond even in hours.
const FRACTION_DIGITS: usize = 20;

/// Why a text is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing but spaces.
    #[error("empty duration")]
    Empty,
    /// A bare number: nobody can tell whether `250` meant milliseconds or seconds.
    #[error("`{0}` has no unit")]
    NoUnit(String),
    /// Something other than a number where a number must be.
    #[error("`{0}` is not a duration")]
    NotADuration(String),
    /// The text ends with a number.
    #[error("`{0}` has a number without a unit at the end")]
    MissingUnit(String),
    /// A unit planrun does not know.
    #[error("unknown unit `{unit}` in `{text}`")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The whole duration.
        text: String,
    },
    /// Above [`MAX`].
    #[error("`{0}` is longer than the limit of {MAX_TEXT}")]
    TooLong(String),
}

impl DurationError {
    /// How to write it instead.
    pub fn hint(&self) -> String {
        match self {
            DurationError::NoUnit(n) => format!("write `{0}s` for seconds or `{0}ms` for milliseconds", n.trim()),
            DurationError::TooLong(_) => format!("durations go up to {MAX_TEXT}"),
            _ => "units are ns, us, ms, s, m, h; e.g. 1h30m".to_string(),
        }
    }
}

/// Parses a duration, checked against [`MAX`]; never panics.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(DurationError::Empty);
    }
    if t.parse::<f64>().is_ok() {
        return Err(DurationError::NoUnit(t.to_string()));
    }
    let mut total: u128 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number = &rest[..digits];
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let Some((whole, fraction)) = split_number(number) else {
            return Err(DurationError::NotADuration(t.to_string()));
        };
        let nanos_per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(DurationError::MissingUnit(t.to_string())),
            u => return Err(DurationError::UnknownUnit { unit: u.to_string(), text: t.to_string() }),
        };
        total = nanos(whole, fraction, nanos_per_unit)
            .and_then(|part| total.checked_add(part))
            .filter(|n| *n <= MAX_NANOS)
            .ok_or_else(|| DurationError::TooLong(t.to_string()))?;
    }
    // At most MAX_NANOS, so both parts fit.
    Ok(Duration::new((total / 1_000_000_000) as u64, (total % 1_000_000_000) as u32))
}

/// The digits before and after the point of a number like `12`, `1.5`, `.5` or `5.`; `None` when it is not one.
fn split_number(number: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let ok = (!whole.is_empty() || !fraction.is_empty()) && !fraction.contains('.');
    ok.then_some((whole, fraction))
}

/// `whole.fraction` units in nanoseconds, truncated; `None` once it is certainly above [`MAX`].
fn nanos(whole: &str, fraction: &str, nanos_per_unit: u128) -> Option<u128> {
    let mut units: u128 = 0;
    for d in whole.bytes() {
        units = units * 10 + u128::from(d - b'0');
        if units > MAX_NANOS {
            return None;
        }
    }
    let kept = &fraction[..fraction.len().min(FRACTION_DIGITS)];
    let mut numerator: u128 = 0;
    for d in kept.bytes() {
        numerator = numerator * 10 + u128::from(d - b'0');
    }
    let part = numerator * nanos_per_unit / 10u128.pow(kept.len() as u32);
    units.checked_mul(nanos_per_unit)?.checked_add(part)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn units_and_sums() {
        let ok = |t: &str| parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(ok("250ms"), Duration::from_millis(250));
        assert_eq!(ok("10s"), Duration::from_secs(10));
        assert_eq!(ok("5m"), Duration::from_secs(300));
        assert_eq!(ok("2h"), Duration::from_secs(7200));
        assert_eq!(ok("15us"), Duration::from_micros(15));
        assert_eq!(ok("15µs"), Duration::from_micros(15));
        assert_eq!(ok("7ns"), Duration::from_nanos(7));
        assert_eq!(ok("0ms"), Duration::ZERO);
        assert_eq!(ok("1h30m"), Duration::from_secs(5400));
        assert_eq!(ok("1m30s500ms"), Duration::from_millis(90_500));
        assert_eq!(ok(" 5s "), Duration::from_secs(5));
    }

    #[test]
    fn fractions_are_exact() {
        let ok = |t: &str| parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok(".5s"), Duration::from_millis(500));
        assert_eq!(ok("5.s"), Duration::from_secs(5));
        assert_eq!(ok("0.1s"), Duration::from_millis(100));
        assert_eq!(ok("1.5ms"), Duration::from_micros(1500));
        assert_eq!(ok("0.5ns"), Duration::ZERO);
        assert_eq!(ok("0.0000000001h"), Duration::from_nanos(360));
        assert_eq!(ok("0.0000000000001h"), Duration::ZERO);
        assert_eq!(ok("0.000001h"), Duration::from_nanos(3_600_000));
        assert_eq!(ok("1.000000000000000000000000001s"), Duration::from_secs(1));
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        let err = |t: &str| parse(t).expect_err(t);
        assert_eq!(err(""), DurationError::Empty);
        assert_eq!(err("250"), DurationError::NoUnit("250".into()));
        assert_eq!(err("1.5"), DurationError::NoUnit("1.5".into()));
        assert_eq!(err("10x"), DurationError::UnknownUnit { unit: "x".into(), text: "10x".into() });
        assert_eq!(err("1d"), DurationError::UnknownUnit { unit: "d".into(), text: "1d".into() });
        assert_eq!(err("10s5"), DurationError::MissingUnit("10s5".into()));
        for bad in ["s", "ms", "-3s", "1.5.3s", ".s", "+5s", "1e3s", "5 s", "1h 30m", "s5"] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn the_limit_is_365_days_and_the_message_says_so() {
        assert_eq!(parse("8760h"), Ok(MAX));
        assert_eq!(parse("525600m"), Ok(MAX));
        assert_eq!(parse("8759h59m59s999999999ns"), Ok(MAX - Duration::from_nanos(1)));
        for long in [
            "8760h1ns",
            "8760.000001h",
            "100000000000000000000h",
            "15000000000000000000s",
            "1e20s",
            "99999999999999999999999999999999999999999999999999ns",
            "5000h5000h",
        ] {
            let e = parse(long).expect_err(long);
            if long != "1e20s" {
                assert_eq!(e, DurationError::TooLong(long.into()), "{long}");
                assert!(e.to_string().contains("365 days"), "{e}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused(text in "\\PC{0,40}") {
            if let Ok(d) = parse(&text) {
                prop_assert!(d <= MAX);
            }
        }

        #[test]
        fn number_unit_pairs_never_panic(
            pairs in prop::collection::vec(("[0-9]{0,30}(\\.[0-9]{0,30})?", "ns|us|µs|ms|s|m|h|x|"), 1..6)
        ) {
            let text: String = pairs.iter().map(|(n, u)| format!("{n}{u}")).collect();
            if let Ok(d) = parse(&text) {
                prop_assert!(d <= MAX);
            }
        }

        #[test]
        fn whole_numbers_agree_with_checked_arithmetic(n in any::<u64>(), unit in 0usize..6) {
            let (name, nanos) = [("ns", 1u128), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
                ("m", 60_000_000_000), ("h", 3_600_000_000_000)][unit];
            let want = u128::from(n) * nanos;
            match parse(&format!("{n}{name}")) {
                Ok(d) => prop_assert_eq!(d.as_nanos(), want),
                Err(e) => {
                    prop_assert!(want > MAX_NANOS);
                    prop_assert!(matches!(e, DurationError::TooLong(_)));
                }
            }
        }

        #[test]
        fn fractions_of_a_second_match_floats(ms in 0u32..1_000_000) {
            let text = format!("{}.{:03}s", ms / 1000, ms % 1000);
            prop_assert_eq!(parse(&text), Ok(Duration::from_millis(u64::from(ms))));
        }
    }
}
