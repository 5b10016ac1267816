//! The plan format described once: every object of a plan (the plan, `defaults`, a thread group, a step, a
//! request...) as a static table of its keys, each with its type, default, allowed words and a one-line
//! description.
//!
//! The validator's "unknown key ... expected one of" lists and their did-you-mean hints, `planrun schema`
//! (`schema.rs`) and the key tables of docs/plan.md (checked by `vocab::docs`'s test) are all read from these
//! tables, so a key added here is known to all of them, and a key missing here is known to none. The parser
//! (`validate.rs`, `steps.rs`, `request.rs`...) reads a key's value by its name; a name it asks for that the
//! table lacks is caught by the tests that run every example plan.

mod objects;
mod steps;

#[cfg(test)]
mod docs;

use std::ops::RangeInclusive;

pub use objects::*;
pub use steps::*;

/// One key of an object.
#[derive(Debug)]
pub struct Key {
    /// The key as written in a plan.
    pub name: &'static str,
    /// What its value is.
    pub ty: Ty,
    /// Whether it must be given, and what holds without it.
    pub need: Need,
    /// What it does, in one line (the schema's description, the docs' "what").
    pub doc: &'static str,
    /// Example values, as a JSON array; empty for none.
    pub examples: &'static str,
    /// One of the object's alternatives, of which a mapping gives at most one (a request's bodies) or exactly
    /// one (an extractor's sources, an output's databases).
    pub alternative: bool,
}

/// Whether a key must be given, and what holds when it is not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Need {
    /// Nothing happens without it.
    Optional,
    /// A mapping without it is refused.
    Required,
    /// Without it the value is this one: a JSON value (`10`, `true`), or a string (`10s`, `GET`).
    Default(&'static str),
    /// Without it, this happens (a default that depends on other keys); said in words.
    Otherwise(&'static str),
    /// Required in the case said in words ("for a closed group without stages"), optional otherwise.
    RequiredWhen(&'static str),
}

/// The type of a key's value.
#[derive(Debug)]
pub enum Ty {
    /// Text: a string, or a number or boolean read as its text; most are templates.
    Text,
    /// `true` or `false` (or a template rendered to one at load time).
    Bool,
    /// A duration with a unit, like `250ms`.
    Duration,
    /// A whole number in this range.
    Count(RangeInclusive<u64>),
    /// An arrival rate: `200/s`, `600/m`, `10/h`, or a number per second.
    Rate,
    /// A pause: a duration, `{ uniform: [min, max] }` or `{ gaussian: { mean, stddev } }`.
    Think,
    /// One of these words.
    Word(&'static [&'static str]),
    /// Any YAML value.
    Any,
    /// A mapping with the keys of this object.
    Object(&'static Object),
    /// A shape of its own (a list, a map, a pattern), described by `schema.rs`.
    Shape(Shape),
}

/// The values whose shape is their own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// `properties:`: names to values or `{ value, secret }`.
    Properties,
    /// `variables:`: names to templates or `{ value, secret }`.
    Variables,
    /// `data:`: names to data sets.
    DataSets,
    /// A list of thread groups.
    Groups,
    /// `thresholds:`: labels to checks.
    Thresholds,
    /// `outputs:`: a list of outputs.
    Outputs,
    /// A mapping of names to templates, in the order written; its values described by the text.
    Pairs(&'static str),
    /// A list of stages.
    Stages,
    /// A list of steps.
    Steps,
    /// An HTTP method.
    Method,
    /// `multipart:`: names to text fields or file parts.
    Multipart,
    /// `assert:`: a list of checks.
    Assertions,
    /// `extract:`: names to extractors.
    Extractors,
    /// `random:`: a list of branches.
    Branches,
    /// A status code, class, or a list of them.
    Status,
    /// Milliseconds or a duration.
    MaxMs,
    /// 1, n, 0 or -1.
    MatchNo,
    /// One ASCII character.
    Delimiter,
    /// A list of column names.
    Columns,
    /// A list of thread group names.
    GroupNames,
    /// One `{{ expression }}` whose value is a list.
    List,
    /// A threshold's check, `METRIC OP VALUE`.
    Check,
    /// An output's URL.
    Url,
    /// Two durations, `[min, max]`.
    Between,
    /// A list of content codings (`compression:`).
    Codings,
    /// An HTTP version: `1.1`, `2` or `auto`.
    HttpVersion,
}

impl Shape {
    /// The type's name in docs/plan.md.
    #[cfg_attr(not(test), allow(dead_code))] // read by the docs test
    pub fn docs(self) -> &'static str {
        match self {
            Shape::Properties => "mapping: name to value",
            Shape::Variables => "mapping: name to template",
            Shape::DataSets => "mapping: name to data set",
            Shape::Groups => "list of thread groups",
            Shape::Thresholds => "mapping: label to checks",
            Shape::Outputs => "list of outputs",
            Shape::Pairs(_) => "mapping: name to template",
            Shape::Stages => "list of stages",
            Shape::Steps => "list of steps",
            Shape::Method => "HTTP method",
            Shape::Multipart => "mapping: name to text or file part",
            Shape::Assertions => "list of assertions",
            Shape::Extractors => "mapping: variable to extractor",
            Shape::Branches => "list of branches",
            Shape::Status => "status code, class or list",
            Shape::MaxMs => "milliseconds or duration",
            Shape::MatchNo => "whole number from -1",
            Shape::Delimiter => "one character",
            Shape::Columns => "list of names",
            Shape::GroupNames => "list of group names",
            Shape::List => "one {{ expression }}",
            Shape::Check => "METRIC OP VALUE",
            Shape::Url => "URL",
            Shape::Between => "[min, max] durations",
            Shape::Codings => "list of content codings",
            Shape::HttpVersion => "1.1, 2 or auto",
        }
    }
}

/// An object of the plan: a mapping and the keys it may hold.
#[derive(Debug)]
pub struct Object {
    /// Its name in docs/plan.md's markers (`<!-- keys: ID -->`).
    #[cfg_attr(not(test), allow(dead_code))] // read by the docs test
    pub id: &'static str,
    /// What the validator's messages call it ("unknown key `x` in data set").
    pub what: &'static str,
    /// What it is, in one line.
    pub doc: &'static str,
    /// An example, as a JSON array of values; empty for none.
    pub examples: &'static str,
    /// Its keys, in the order the docs and the schema list them.
    pub keys: &'static [Key],
}

impl Object {
    /// The names of its keys, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.keys.iter().map(|k| k.name).collect()
    }

    /// The key named `name`. Panics when the object has none: a name the code asks for is written in the code,
    /// so a miss is a bug caught by the first test that builds the schema or validates a plan.
    pub fn key(&self, name: &str) -> &'static Key {
        let key = self.keys.iter().find(|k| k.name == name);
        key.unwrap_or_else(|| panic!("the {} has no key `{name}` in the plan vocabulary", self.what))
    }

    /// The words `name` allows (empty when it is not a word).
    pub fn words(&self, name: &str) -> &'static [&'static str] {
        match self.key(name).ty {
            Ty::Word(words) => words,
            _ => &[],
        }
    }

    /// The names of the keys that must be given.
    pub fn required(&self) -> Vec<&'static str> {
        self.keys.iter().filter(|k| k.need == Need::Required).map(|k| k.name).collect()
    }

    /// The names of its alternatives (see [`Key::alternative`]).
    pub fn alternatives(&self) -> Vec<&'static str> {
        self.keys.iter().filter(|k| k.alternative).map(|k| k.name).collect()
    }
}

/// A key, optional, without examples: the start of every table entry.
const fn key(name: &'static str, ty: Ty, doc: &'static str) -> Key {
    Key { name, ty, need: Need::Optional, doc, examples: "", alternative: false }
}

impl Key {
    const fn required(self) -> Self {
        Key { need: Need::Required, ..self }
    }

    const fn default(self, value: &'static str) -> Self {
        Key { need: Need::Default(value), ..self }
    }

    const fn otherwise(self, what: &'static str) -> Self {
        Key { need: Need::Otherwise(what), ..self }
    }

    const fn required_when(self, case: &'static str) -> Self {
        Key { need: Need::RequiredWhen(case), ..self }
    }

    const fn examples(self, json: &'static str) -> Self {
        Key { examples: json, ..self }
    }

    const fn alternative(self) -> Self {
        Key { alternative: true, ..self }
    }
}

/// Every object, for the docs and the tests.
#[cfg_attr(not(test), allow(dead_code))]
pub fn all() -> Vec<&'static Object> {
    let mut out =
        vec![&PLAN, &DEFAULTS, &TLS, &SECRET, &DATA_SET, &GROUP, &STAGE, &THINK, &GAUSSIAN, &THRESHOLD, &OUTPUT];
    out.extend(STEP_SHAPES);
    out.extend([&BRANCH, &REQUEST, &FILE_PART, &ASSERTION, &JSONPATH_CHECK, &HEADER_CHECK, &EXTRACTOR]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_described_in_one_line() {
        for o in all() {
            let mut names = o.names();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), o.keys.len(), "a key of the {} is listed twice", o.what);
            for k in o.keys {
                assert!(!k.doc.is_empty() && !k.doc.contains('\n'), "{}.{}: one line of description", o.id, k.name);
                assert!(k.doc.ends_with('.'), "{}.{}: a description is a sentence", o.id, k.name);
                if !k.examples.is_empty() {
                    let parsed: serde_json::Value = serde_json::from_str(k.examples).expect("examples are JSON");
                    assert!(parsed.is_array(), "{}.{}: examples are a JSON array", o.id, k.name);
                }
            }
        }
    }

    /// The defaults the parser applies are the ones the vocabulary states.
    #[test]
    fn defaults_are_the_parsers() {
        let default = |o: &Object, name: &str| match o.key(name).need {
            Need::Default(v) => v,
            other => panic!("{}.{name} has no default: {other:?}", o.what),
        };
        let timeout = crate::duration::parse(default(&DEFAULTS, "timeout")).expect("a duration");
        assert_eq!(timeout, super::super::validate::DEFAULT_TIMEOUT);
        assert_eq!(default(&DEFAULTS, "max_body"), super::super::validate::DEFAULT_MAX_BODY.to_string());
        assert_eq!(default(&GROUP, "max_threads"), super::super::load::DEFAULT_MAX_THREADS.to_string());
        assert_eq!(default(&DATA_SET, "mode"), MODES[0]);
        assert_eq!(default(&DATA_SET, "scope"), SCOPES[0]);
    }

    /// An output's databases are the kinds `--out KIND=URL` takes, each one planrun can stream to.
    #[test]
    fn output_kinds_are_the_live_outputs() {
        assert_eq!(OUTPUT.alternatives(), crate::plan::output_spec::KINDS);
        for kind in OUTPUT.alternatives() {
            assert!(crate::plan::output_spec::OutputKind::named(kind).is_some(), "`{kind}` is no output kind");
        }
    }

    #[test]
    fn step_keys_are_the_shapes_keys() {
        let mut all: Vec<&str> = STEP_SHAPES.iter().flat_map(|s| s.names()).collect();
        all.sort();
        all.dedup();
        let mut listed = step_keys();
        listed.sort();
        assert_eq!(all, listed);
    }
}
