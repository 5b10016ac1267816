//! The shapes of scalar values: templates, durations, counts, rates, statuses.
//!
//! Each pattern is the regular expression form of a parser function (`duration::parse`, `Ctx::count`,
//! `load::parse_rate`, `threshold::parse`); the tests hold every pattern to its parser on a table of samples.

use serde_json::{json, Map, Value};

/// A string that holds template syntax; it is rendered before it is read (at load time for counts and
/// durations), so the schema cannot check what it renders to.
pub(super) const TEMPLATE: &str = r"\{[{%]";
/// One duration as `duration::parse` reads it: number-unit pairs, like `250ms` or `1h30m`.
pub(super) const DURATION: &str = r"(?:(?:\d+\.?\d*|\.\d+)(?:ns|ms|us|µs|s|m|h))+";
/// A whole number written as text, as `Ctx::count` reads it.
const WHOLE: &str = r"^\s*\+?\d+\s*$";
/// A whole number of at least 1 written as text.
const POSITIVE: &str = r"^\s*\+?0*[1-9]\d*\s*$";
/// A number as the threshold and rate parsers read it (a subset of what Rust's `f64` parser takes).
pub(super) const NUMBER: &str = r"(?:\d+\.?\d*|\.\d+)";
/// The units of an arrival rate after the `/`, as `load::parse_rate` reads them.
pub(super) const RATE_UNITS: &[&str] = &["s", "1s", "sec", "m", "1m", "min", "h", "1h"];

/// A schema object made of `description`, the entries of `schema`, then `examples` (none when null).
pub(super) fn prop(description: &str, examples: Value, schema: Value) -> Value {
    let mut out = Map::new();
    out.insert("description".into(), description.into());
    match schema {
        Value::Object(entries) => out.extend(entries),
        other => panic!("a schema is an object, not {other}"),
    }
    if !examples.is_null() {
        out.insert("examples".into(), examples);
    }
    Value::Object(out)
}

/// Text: a string, or a number or boolean read as its text (as `Ctx::string` reads scalars).
pub(super) fn text() -> Value {
    json!({ "type": ["string", "number", "boolean"] })
}

/// A duration with a unit, or a template rendered at load time.
pub(super) fn duration() -> Value {
    json!({
        "type": "string",
        "anyOf": [
            { "pattern": format!(r"^\s*{DURATION}\s*$") },
            { "pattern": TEMPLATE }
        ]
    })
}

/// A whole number in `range` (from 0 or 1), or text that renders to one at load time (the text's value is
/// checked by the parser, not the pattern).
pub(super) fn count(range: std::ops::RangeInclusive<u64>) -> Value {
    let (min, max) = (*range.start(), *range.end());
    let digits = match min {
        0 => WHOLE,
        1 => POSITIVE,
        other => panic!("no pattern for counts of at least {other}"),
    };
    let mut integer = json!({ "type": "integer", "minimum": min });
    // Above i64 a YAML number is not an integer any more: only a smaller maximum says something.
    if max < i64::MAX as u64 {
        integer["maximum"] = json!(max);
    }
    json!({
        "anyOf": [
            integer,
            { "type": "string", "pattern": digits },
            { "type": "string", "pattern": TEMPLATE }
        ]
    })
}

/// An arrival rate: a number per second, `200/s`, `600/m`, `10/h`, or a template rendered at load time.
pub(super) fn rate() -> Value {
    let units = RATE_UNITS.join("|");
    json!({
        "anyOf": [
            { "type": "number", "minimum": 0 },
            { "type": "string", "pattern": format!(r"^\s*{NUMBER}\s*(?:/\s*(?:{units})\s*)?$") },
            { "type": "string", "pattern": TEMPLATE }
        ]
    })
}

/// One accepted status: a code from 100 to 599 (a number or its text) or a class like `2xx`.
pub(super) fn one_status() -> Value {
    json!({
        "anyOf": [
            { "type": "integer", "minimum": 100, "maximum": 599 },
            { "type": "string", "pattern": r"^[1-5](?:xx|\d\d)$" }
        ]
    })
}
