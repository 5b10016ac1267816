//! The JTL `timeStamp` column's format: JMeter's `jmeter.save.saveservice.timestamp_format`.
//!
//! `ms` (the default) writes milliseconds since the epoch, which JMeter's tools read. Anything else is a
//! Java `SimpleDateFormat` pattern (`yyyy-MM-dd HH:mm:ss.SSS`), so a JMeter user's property value works as it
//! is; it is written in the local time zone (the `TZ` environment variable, else the system's), as JMeter
//! writes it in the JVM's. The letters planrun knows are those of dates and times of day; the others are
//! refused, naming the letter, rather than written differently from JMeter.

use std::fmt;
use std::str::FromStr;

use chrono::format::{Item, StrftimeItems};
use chrono::TimeZone;

/// How the JTL writes `timeStamp`.
#[derive(Clone, Default)]
pub enum TimestampFormat {
    /// Milliseconds since the Unix epoch (`ms`).
    #[default]
    Millis,
    /// A date in the local time zone, as the pattern says.
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// The pattern as chrono formatting items.
        items: Vec<Item<'static>>,
    },
}

impl fmt::Debug for TimestampFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pattern())
    }
}

/// A pattern planrun cannot write as JMeter would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Nothing to write.
    #[error("the timestamp format is empty: give `ms` or a pattern like `yyyy-MM-dd HH:mm:ss.SSS`")]
    Empty,
    /// JMeter's `none` leaves the column out; planrun's readers and JMeter's need it.
    #[error("`none` (no timeStamp column) is not supported: JMeter's report and planrun's need the column")]
    None,
    /// A quote that is not closed.
    #[error("unterminated quote in `{0}`: quote text as 'T', and write a quote itself as ''")]
    UnterminatedQuote(String),
    /// A pattern planrun could not turn into a format (a bug: every pattern that passes the letters is one).
    #[error("planrun cannot write timestamps as `{0}`")]
    Unwritable(String),
    /// A pattern letter planrun does not write.
    #[error("pattern letter `{letter}` in `{pattern}` is not supported{hint}")]
    Letter {
        pattern: String,
        letter: char,
        /// What to write instead.
        hint: String,
    },
}

impl TimestampFormat {
    /// Parses `ms` or a `SimpleDateFormat` pattern.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        if text.eq_ignore_ascii_case("ms") {
            return Ok(TimestampFormat::Millis);
        }
        if text.eq_ignore_ascii_case("none") {
            return Err(PatternError::None);
        }
        if text.is_empty() {
            return Err(PatternError::Empty);
        }
        let strftime = to_strftime(text)?;
        let items =
            StrftimeItems::new(&strftime).parse_to_owned().map_err(|_| PatternError::Unwritable(text.to_string()))?;
        Ok(TimestampFormat::Pattern { pattern: text.to_string(), items })
    }

    /// The pattern as given, `ms` for milliseconds.
    pub fn pattern(&self) -> &str {
        match self {
            TimestampFormat::Millis => "ms",
            TimestampFormat::Pattern { pattern, .. } => pattern,
        }
    }

    /// `ms` since the epoch as this format writes it (a time chrono cannot represent as its number).
    pub fn format(&self, ms: u64) -> String {
        let TimestampFormat::Pattern { items, .. } = self else {
            return ms.to_string();
        };
        match i64::try_from(ms).ok().and_then(|ms| chrono::Local.timestamp_millis_opt(ms).single()) {
            Some(t) => t.format_with_items(items.iter()).to_string(),
            None => ms.to_string(),
        }
    }
}

impl FromStr for TimestampFormat {
    type Err = PatternError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimestampFormat::parse(s)
    }
}

/// Translates a `SimpleDateFormat` pattern into a chrono strftime string.
fn to_strftime(pattern: &str) -> Result<String, PatternError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let literal = |out: &mut String, c: char| {
        if c == '%' {
            out.push_str("%%");
        } else {
            out.push(c);
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            // Quoted text up to the closing quote; '' inside is a quote.
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(PatternError::UnterminatedQuote(pattern.to_string())),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        out.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        literal(&mut out, c);
                        i += 1;
                    }
                }
            }
            continue;
        }
        if !c.is_ascii_alphabetic() {
            literal(&mut out, c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        i += run;
        let unsupported =
            |hint: &str| PatternError::Letter { pattern: pattern.to_string(), letter: c, hint: hint.to_string() };
        let num = |padded: &str, bare: &str| if run == 1 { bare.to_string() } else { padded.to_string() };
        let spec = match c {
            'y' if run == 2 => "%y".to_string(),
            'y' => "%Y".to_string(),
            'M' | 'L' => match run {
                1 => "%-m".to_string(),
                2 => "%m".to_string(),
                3 => "%b".to_string(),
                _ => "%B".to_string(),
            },
            'd' => num("%d", "%-d"),
            'H' => num("%H", "%-H"),
            'h' => num("%I", "%-I"),
            'm' => num("%M", "%-M"),
            's' => num("%S", "%-S"),
            'S' if run == 3 => "%3f".to_string(),
            'S' => return Err(unsupported(
                " other than as SSS (milliseconds, 3 digits): Java writes S and SS as a number of ms, not a fraction",
            )),
            'E' if run <= 3 => "%a".to_string(),
            'E' => "%A".to_string(),
            'a' => "%p".to_string(),
            'D' => match run {
                1 => "%-j".to_string(),
                _ => "%j".to_string(),
            },
            'Z' => "%z".to_string(),
            'X' => match run {
                1 => "%:::z".to_string(),
                2 => "%z".to_string(),
                _ => "%:z".to_string(),
            },
            'Y' => {
                return Err(unsupported(": Y is the week year, which differs from the year around New Year; use yyyy"))
            }
            'z' => return Err(unsupported(": write the offset with Z (+0100) or XXX (+01:00)")),
            _ => {
                return Err(unsupported(
                    " (planrun writes y M L d H h m s SSS E a D Z X and 'quoted text'; other letters must be quoted)",
                ))
            }
        };
        out.push_str(&spec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2024-01-31 09:05:07.045 UTC.
    const T: u64 = 1_706_691_907_045;

    fn utc(pattern: &str) -> String {
        let TimestampFormat::Pattern { items, .. } = TimestampFormat::parse(pattern).unwrap() else {
            panic!("{pattern} is a pattern");
        };
        let t = chrono::Utc.timestamp_millis_opt(T as i64).unwrap();
        t.format_with_items(items.iter()).to_string()
    }

    #[test]
    fn jmeter_patterns_write_as_simple_date_format_does() {
        assert_eq!(utc("yyyy-MM-dd HH:mm:ss.SSS"), "2024-01-31 09:05:07.045");
        assert_eq!(utc("yyyy/MM/dd HH:mm:ss.SSS"), "2024/01/31 09:05:07.045");
        assert_eq!(utc("yyyy-MM-dd'T'HH:mm:ss.SSSXXX"), "2024-01-31T09:05:07.045+00:00");
        assert_eq!(utc("yy-M-d H:m:s"), "24-1-31 9:5:7");
        assert_eq!(utc("EEE, d MMM yyyy hh:mm a Z"), "Wed, 31 Jan 2024 09:05 AM +0000");
        assert_eq!(utc("EEEE MMMM DDD"), "Wednesday January 031");
        assert_eq!(utc("'at' HH 'o''clock' 100%"), "at 09 o'clock 100%");
        assert_eq!(utc("''yyyy''"), "'2024'");
    }

    #[test]
    fn ms_is_the_default_and_unknown_letters_are_refused() {
        assert!(matches!(TimestampFormat::parse("ms"), Ok(TimestampFormat::Millis)));
        assert!(matches!(TimestampFormat::parse("MS"), Ok(TimestampFormat::Millis)));
        assert_eq!(TimestampFormat::default().format(T), T.to_string());
        assert_eq!(TimestampFormat::parse("none").unwrap_err(), PatternError::None);
        assert_eq!(TimestampFormat::parse("").unwrap_err(), PatternError::Empty);
        let err = TimestampFormat::parse("YYYY-MM-dd").unwrap_err().to_string();
        assert!(err.contains("`Y`") && err.contains("use yyyy"), "{err}");
        let err = TimestampFormat::parse("yyyy-MM-ddTHH:mm").unwrap_err().to_string();
        assert!(err.contains("`T`") && err.contains("quoted"), "{err}");
        let err = TimestampFormat::parse("HH:mm:ss.S").unwrap_err().to_string();
        assert!(err.contains("SSS"), "{err}");
        assert!(matches!(TimestampFormat::parse("yyyy 'T"), Err(PatternError::UnterminatedQuote(_))));
    }
}
