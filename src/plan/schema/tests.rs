//! The schema against the vocabulary and the parser: every object of the vocabulary is in it, and its
//! patterns accept what the parser's functions accept.

use regex::Regex;
use serde_json::Value;

use super::*;
use crate::diag::Diagnostic;
use crate::plan::{PlanError, PlanFile, PlanOptions};
use crate::source::Source;

/// The schema at a JSON pointer.
fn at<'a>(schema: &'a Value, pointer: &str) -> &'a Value {
    schema.pointer(pointer).unwrap_or_else(|| panic!("the schema has nothing at {pointer}"))
}

/// The property names of the object schema at `pointer`, in order.
fn keys(schema: &Value, pointer: &str) -> Vec<String> {
    let props = at(schema, pointer)["properties"].as_object();
    props.unwrap_or_else(|| panic!("no properties at {pointer}")).keys().cloned().collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn every_object_of_the_vocabulary_is_in_the_schema() {
    let s = plan_schema();
    let mut props = Vec::new();
    every(&s, "properties", String::new(), &mut props);
    let lists: Vec<Vec<String>> =
        props.iter().filter_map(|(_, m)| m.as_object()).map(|m| m.keys().cloned().collect()).collect();
    for o in vocab::all() {
        let names = strings(&o.names());
        assert!(lists.contains(&names), "the schema has no object with the keys of the {}: {names:?}", o.what);
    }
    let request = "/definitions/step/oneOf/0/properties/request";
    assert_eq!(keys(&s, request), strings(&vocab::REQUEST.names()));
    assert_eq!(at(&s, &format!("{request}/properties/method/anyOf/0/enum")), &serde_json::json!(vocab::METHODS));
    let data = "/properties/data/additionalProperties/properties";
    for (key, words) in [("mode", &vocab::MODES[..]), ("scope", &vocab::SCOPES[..]), ("on_eof", &vocab::ON_EOF[..])] {
        assert_eq!(at(&s, &format!("{data}/{key}/enum")), &serde_json::json!(words), "data set `{key}`");
    }
}

/// The problems the parser finds in a plan.
fn problems(yaml: &str) -> Vec<Diagnostic> {
    let file = PlanFile::parse(Source::new("probe.yaml", yaml)).expect("the probe is YAML");
    match file.validate(&PlanOptions::default()) {
        Ok(_) => Vec::new(),
        Err(PlanError::Invalid { diags, .. }) => diags.items,
        Err(e) => panic!("{e}"),
    }
}

/// A plan with one group that has `group` among its keys and `step` as its one step.
fn plan(top: &str, group: &str, step: &str) -> String {
    format!("name: probe\n{top}\nthread_groups:\n  - {{ name: g, threads: 1, {group} steps: [ {step} ] }}\n")
}

const GET: &str = "{ name: s, request: { url: 'http://127.0.0.1:1/' } }";

#[test]
fn reserved_names_are_refused() {
    for name in vocab::RESERVED {
        let yaml = plan(&format!("data: {{ {name}: {{ file: none.csv }} }}"), "", GET);
        assert!(problems(&yaml).iter().any(|d| d.message.contains("already a name")), "`{name}` is reserved");
    }
}

/// A schema pattern, compiled with Rust's regex crate (the patterns use the syntax both it and ECMA 262 share).
fn pattern(schema: &Value, pointer: &str) -> Regex {
    let text = at(schema, pointer).as_str().unwrap_or_else(|| panic!("no pattern at {pointer}"));
    Regex::new(text).unwrap_or_else(|e| panic!("pattern at {pointer}: {e}"))
}

#[test]
fn duration_pattern_is_the_parsers() {
    let re = pattern(&plan_schema(), "/definitions/thread_group/properties/duration/anyOf/0/pattern");
    let samples = [
        "250ms", "10s", "5m", "1h30m", "1.5s", ".5s", "5.s", "10us", "3µs", " 10s ", "2h0m1s", "10", "10x", "s", "",
        "1h 30m", "1.5.3s", "-1s", "10 s", "1e3s", "ms", "1sm",
    ];
    for s in samples {
        assert_eq!(re.is_match(s), crate::plan::parse_duration(s).is_ok(), "duration `{s}`");
    }
}

#[test]
fn rate_pattern_is_the_parsers() {
    let re = pattern(&plan_schema(), "/definitions/thread_group/properties/arrival_rate/anyOf/1/pattern");
    let samples = [
        "200/s",
        "600/m",
        "10/h",
        "50",
        "0.5/s",
        " 5 / sec ",
        "1/1m",
        "2/min",
        "3/1h",
        "5/d",
        "fast",
        "-5/s",
        "/s",
        "5/",
    ];
    for s in samples {
        let parsed = crate::plan::load::parse_rate(s).is_ok_and(|r| r >= 0.0);
        assert_eq!(re.is_match(s), parsed, "rate `{s}`");
    }
}

#[test]
fn threshold_pattern_is_the_parsers() {
    let re = Regex::new(&threshold_pattern()).expect("the threshold pattern compiles");
    let mut samples: Vec<String> = [
        "p95 < 500ms",
        "p99<=1s",
        "error_rate < 1%",
        "error_rate < 0.5 %",
        "throughput > 100/s",
        "throughput > 100",
        "samples >= 1000",
        "p95 < 500",
        "p96 < 1s",
        "latency 5",
        "error_rate < 1",
        "samples > 10ms",
        "throughput > fast",
        "p95 = 1s",
        "mean == 2s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (metric, _) in crate::metric::Metric::words() {
        samples.extend(["1s", "1%", "10/s", "10"].iter().map(|v| format!("{metric} < {v}")));
    }
    for s in &samples {
        assert_eq!(re.is_match(s), crate::plan::threshold::parse(s).is_ok(), "threshold `{s}`");
    }
}

#[test]
fn count_and_status_patterns_are_the_parsers() {
    let s = plan_schema();
    let positive = pattern(&s, "/definitions/thread_group/properties/threads/anyOf/1/pattern");
    let whole = pattern(&s, "/definitions/step/oneOf/0/properties/assert/items/properties/max_bytes/anyOf/1/pattern");
    let status =
        pattern(&s, "/definitions/step/oneOf/0/properties/assert/items/properties/status/anyOf/0/anyOf/1/pattern");
    for text in ["1", "7", " 12 ", "+3", "0", "007", "-1", "1.5", "x", ""] {
        let threads = plan("", "", GET).replace("threads: 1", &format!("threads: '{text}'"));
        assert_eq!(positive.is_match(text), problems(&threads).is_empty(), "threads: '{text}'");
        let bytes = plan(
            "",
            "",
            &format!("{{ name: s, request: {{ url: 'http://127.0.0.1:1/' }}, assert: [ {{ max_bytes: '{text}' }} ] }}"),
        );
        assert_eq!(whole.is_match(text), problems(&bytes).is_empty(), "max_bytes: '{text}'");
    }
    for text in ["2xx", "5xx", "1xx", "6xx", "0xx", "202", "599", "600", "099", "abc", "2XX", " 202"] {
        let yaml = plan(
            "",
            "",
            &format!("{{ name: s, request: {{ url: 'http://127.0.0.1:1/' }}, assert: [ {{ status: '{text}' }} ] }}"),
        );
        assert_eq!(status.is_match(text), problems(&yaml).is_empty(), "status: '{text}'");
    }
}

/// Every value of `key` anywhere in the schema, with where it is.
fn every<'a>(v: &'a Value, key: &str, path: String, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(m) => {
            if let Some(found) = m.get(key) {
                out.push((path.clone(), found));
            }
            for (k, child) in m {
                match (k.as_str(), child) {
                    // Maps of names to schemas: a name there is not a keyword, even `properties`.
                    ("properties" | "definitions" | "dependencies", Value::Object(named)) => {
                        for (name, schema) in named {
                            every(schema, key, format!("{path}/{k}/{name}"), out);
                        }
                    }
                    _ => every(child, key, format!("{path}/{k}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                every(child, key, format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_property_is_described_and_refs_stand_alone() {
    let s = plan_schema();
    let mut props = Vec::new();
    every(&s, "properties", String::new(), &mut props);
    for (path, map) in props {
        // `properties` inside `if` conditions only constrain values; they describe nothing.
        if path.split('/').any(|segment| segment == "if" || segment == "then") {
            continue;
        }
        for (key, prop) in map.as_object().expect("properties is an object") {
            let description = prop["description"].as_str().unwrap_or_default();
            assert!(!description.is_empty(), "{path}/properties/{key} has no description");
            assert!(!description.contains('\n'), "{path}/properties/{key}: a description is one line");
        }
    }
    let mut refs = Vec::new();
    every(&s, "$ref", String::new(), &mut refs);
    assert!(!refs.is_empty());
    let parent = |path: &str| s.pointer(path).and_then(Value::as_object).map(|o| o.len());
    for (path, _) in refs {
        assert_eq!(parent(&path), Some(1), "draft-07 ignores the siblings of the $ref at {path}");
    }
}

#[test]
fn data_set_patterns_are_the_parsers() {
    let s = plan_schema();
    let name = pattern(&s, "/properties/data/propertyNames/pattern");
    for text in ["users", "_x", "a1", "A_B", "1a", "my-set", "a b", "é", ""] {
        let yaml = plan(&format!("data: {{ {}: {{ file: none.csv }} }}", serde_json::json!(text)), "", GET);
        let refused = problems(&yaml).iter().any(|d| d.message.contains("cannot be read in templates"));
        assert_eq!(name.is_match(text), !refused, "data set name {text:?}");
    }
    let delimiter = pattern(&s, "/properties/data/additionalProperties/properties/delimiter/pattern");
    for text in [",", ";", "|", " ", "\\t", "\t", "\"", "\n", "ab", "é", ""] {
        let yaml =
            plan(&format!("data: {{ users: {{ file: none.csv, delimiter: {} }} }}", serde_json::json!(text)), "", GET);
        let refused = problems(&yaml).iter().any(|d| d.message.contains("delimiter"));
        assert_eq!(delimiter.is_match(text), !refused, "delimiter {text:?}");
    }
}
