//! Inputs that can be merged: one format, and for JTL one header line (the same columns in the same order,
//! with the same delimiter), because rows are copied as they are.

use super::error::MergeError;
use super::input::Head;
use crate::report::results::Format;

/// Checks that `other` can be merged with `first`.
pub fn check(first_name: &str, first: &Head, other_name: &str, other: &Head) -> Result<(), MergeError> {
    let mismatch = |what: String| Err(MergeError::Header { other: other_name.to_string(), what });
    match (first.format, other.format) {
        (Format::Jtl { delimiter: a }, Format::Jtl { delimiter: b }) if a != b => {
            return mismatch(format!(
                "its columns are separated by {}, those of {first_name} by {}",
                delimiter_name(b),
                delimiter_name(a)
            ));
        }
        (Format::Jtl { .. }, Format::Jtl { .. }) | (Format::JsonLines, Format::JsonLines) => {}
        (a, b) => {
            return Err(MergeError::MixedFormats {
                first: first_name.to_string(),
                first_format: a.name(),
                other: other_name.to_string(),
                other_format: b.name(),
            })
        }
    }
    let (Some(a), Some(b)) = (&first.header, &other.header) else { return Ok(()) };
    if a.columns == b.columns {
        return Ok(());
    }
    let missing: Vec<&str> = a.columns.iter().filter(|c| !b.columns.contains(c)).map(String::as_str).collect();
    let extra: Vec<&str> = b.columns.iter().filter(|c| !a.columns.contains(c)).map(String::as_str).collect();
    let what = match (missing.is_empty(), extra.is_empty()) {
        (true, true) => format!(
            "it has the columns of {first_name} in another order: {} where {first_name} has {}",
            b.columns.join(","),
            a.columns.join(",")
        ),
        (false, true) => format!("it lacks the column(s) {} that {first_name} has", missing.join(", ")),
        (true, false) => format!("it has the column(s) {} that {first_name} lacks", extra.join(", ")),
        (false, false) => format!(
            "it has the column(s) {} that {first_name} lacks, and lacks {} that it has",
            extra.join(", "),
            missing.join(", ")
        ),
    };
    mismatch(what)
}

fn delimiter_name(d: u8) -> String {
    match d {
        b',' => "commas".into(),
        b'\t' => "tabs".into(),
        b';' => "semicolons".into(),
        other => format!("`{}`", char::from(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::input::Header;

    fn jtl(delimiter: u8, columns: &str) -> Head {
        let columns: Vec<String> = columns.split(',').map(str::to_string).collect();
        Head { format: Format::Jtl { delimiter }, header: Some(Header { bytes: Vec::new(), columns }) }
    }

    fn message(a: &Head, b: &Head) -> String {
        check("a.jtl", a, "b.jtl", b).unwrap_err().to_string()
    }

    #[test]
    fn what_differs_is_said() {
        let base = jtl(b',', "timeStamp,elapsed,label");
        assert!(check("a.jtl", &base, "b.jtl", &jtl(b',', "timeStamp,elapsed,label")).is_ok());
        assert_eq!(
            message(&base, &jtl(b'\t', "timeStamp,elapsed,label")),
            "b.jtl: its columns are separated by tabs, those of a.jtl by commas (rows are copied as they are, so \
             every JTL must have the same header line)"
        );
        assert!(message(&base, &jtl(b',', "elapsed,timeStamp,label")).contains("in another order"));
        assert!(message(&base, &jtl(b',', "timeStamp,elapsed")).contains("lacks the column(s) label that a.jtl has"));
        assert!(message(&base, &jtl(b',', "timeStamp,elapsed,label,URL")).contains("has the column(s) URL"));
        let json = Head { format: Format::JsonLines, header: None };
        assert_eq!(
            message(&base, &json),
            "b.jtl is JSON lines but a.jtl is JTL: merge files of one format (all JTL, or all JSON lines)"
        );
    }
}
