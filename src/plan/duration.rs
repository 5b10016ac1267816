//! Durations as users write them: `250ms`, `10s`, `5m`, `1h30m`.

use std::time::Duration;

/// Parses a duration; the error says what is wrong.
pub fn parse(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if t.parse::<f64>().is_ok() {
        return Err(format!("`{t}` has no unit"));
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("`{t}` is not a duration"));
        }
        let number: f64 = rest[..digits].parse().map_err(|_| format!("`{t}` is not a duration"))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let secs = match &rest[..unit_len] {
            "ms" => number / 1000.0,
            "s" => number,
            "m" => number * 60.0,
            "h" => number * 3600.0,
            "us" | "µs" => number / 1_000_000.0,
            "" => return Err(format!("`{t}` has a number without a unit at the end")),
            u => return Err(format!("unknown unit `{u}` in `{t}`")),
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(secs);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::parse;
    use std::time::Duration;

    #[test]
    fn units() {
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse("10").unwrap_err().contains("no unit"));
        assert!(parse("10x").unwrap_err().contains("unknown unit"));
        assert!(parse("s").is_err());
    }
}
