//! A validator for the part of JSON Schema draft-07 that `schemas/plan.schema.json` uses.
//!
//! The `jsonschema` crate would add about 75 s to a debug build of the tests on a 2-core machine (and it
//! turns on serde_json's `float_roundtrip`, so the tests' serde_json differs from the binary's). The schema
//! uses few keywords; this checks each as draft-07 defines it, and panics on a keyword it does not know,
//! so the schema cannot come to rely on one that nothing checks.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

/// Keywords that only describe: they never make a value invalid.
const ANNOTATIONS: &[&str] = &["$schema", "title", "description", "examples", "default", "definitions"];

/// A schema, ready to check values against.
pub struct Validator<'s> {
    root: &'s Value,
    regexes: RefCell<HashMap<String, Regex>>,
}

impl<'s> Validator<'s> {
    /// A validator for `root`, whose `$ref`s point into it.
    pub fn new(root: &'s Value) -> Self {
        Self { root, regexes: RefCell::default() }
    }

    /// Every reason `value` is not valid, each with its JSON pointer; empty when it is valid.
    pub fn errors(&self, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.check(self.root, value, "", &mut out);
        out
    }

    fn check(&self, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
        let Value::Object(keywords) = schema else {
            match schema {
                Value::Bool(true) => {}
                Value::Bool(false) => out.push(format!("{at}: nothing is allowed here")),
                other => panic!("a schema is an object or a boolean, not {other}"),
            }
            return;
        };
        for (k, arg) in keywords {
            if ANNOTATIONS.contains(&k.as_str()) {
                continue;
            }
            self.keyword(k, arg, schema, v, at, out);
        }
    }

    fn valid(&self, schema: &Value, v: &Value, at: &str) -> Result<(), Vec<String>> {
        let mut out = Vec::new();
        self.check(schema, v, at, &mut out);
        if out.is_empty() {
            Ok(())
        } else {
            Err(out)
        }
    }

    fn keyword(&self, k: &str, arg: &Value, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
        match k {
            "$ref" => self.check(self.resolve(arg), v, at, out),
            "type" => {
                let types: Vec<&str> = match arg {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    other => panic!("type: {other}"),
                };
                if !types.iter().any(|t| is_type(v, t)) {
                    out.push(format!("{at}: {} is not of type {}", kind(v), types.join(" or ")));
                }
            }
            "enum" => {
                if !arg.as_array().expect("enum is a list").contains(v) {
                    out.push(format!("{at}: {v} is not one of {arg}"));
                }
            }
            "const" if arg != v => out.push(format!("{at}: {v} is not {arg}")),
            "const" => {}
            "pattern" => {
                if let Some(s) = v.as_str() {
                    if !self.regex(arg.as_str().expect("pattern is a string")).is_match(s) {
                        out.push(format!("{at}: {s:?} does not match {arg}"));
                    }
                }
            }
            "minimum" | "maximum" => {
                if let (Some(n), Some(bound)) = (v.as_f64(), arg.as_f64()) {
                    if (k == "minimum" && n < bound) || (k == "maximum" && n > bound) {
                        out.push(format!("{at}: {n} is beyond the {k} {bound}"));
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" => self.combination(k, arg, v, at, out),
            "not" => {
                if self.valid(arg, v, at).is_ok() {
                    out.push(format!("{at}: matches a schema it must not ({arg})"));
                }
            }
            "if" => {
                let branch = if self.valid(arg, v, at).is_ok() { "then" } else { "else" };
                if let Some(s) = schema.get(branch) {
                    self.check(s, v, at, out);
                }
            }
            "then" | "else" => {}
            _ => match v {
                Value::Object(m) => self.object_keyword(k, arg, schema, m, at, out),
                Value::Array(items) => self.array_keyword(k, arg, items, at, out),
                _ => assert_known(k),
            },
        }
    }

    fn combination(&self, k: &str, arg: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
        let results: Vec<Result<(), Vec<String>>> =
            arg.as_array().expect("a list of schemas").iter().map(|s| self.valid(s, v, at)).collect();
        let passed = results.iter().filter(|r| r.is_ok()).count();
        let ok = match k {
            "anyOf" => passed > 0,
            "oneOf" => passed == 1,
            _ => passed == results.len(),
        };
        if !ok {
            let why: Vec<String> = results.into_iter().filter_map(Result::err).flatten().collect();
            out.push(format!(
                "{at}: {k} failed ({passed} of {} matched): {}",
                arg.as_array().map_or(0, Vec::len),
                why.join("; ")
            ));
        }
    }

    fn object_keyword(
        &self,
        k: &str,
        arg: &Value,
        schema: &Value,
        m: &serde_json::Map<String, Value>,
        at: &str,
        out: &mut Vec<String>,
    ) {
        match k {
            "properties" => {
                for (name, s) in arg.as_object().expect("properties is a mapping") {
                    if let Some(v) = m.get(name) {
                        self.check(s, v, &format!("{at}/{name}"), out);
                    }
                }
            }
            "additionalProperties" => {
                let declared = schema.get("properties").and_then(Value::as_object);
                for (name, v) in m {
                    if declared.is_some_and(|d| d.contains_key(name)) {
                        continue;
                    }
                    match arg {
                        Value::Bool(false) => out.push(format!("{at}: `{name}` is not allowed here")),
                        s => self.check(s, v, &format!("{at}/{name}"), out),
                    }
                }
            }
            "required" => {
                for name in arg.as_array().expect("required is a list").iter().filter_map(Value::as_str) {
                    if !m.contains_key(name) {
                        out.push(format!("{at}: `{name}` is required"));
                    }
                }
            }
            "propertyNames" => {
                for name in m.keys() {
                    self.check(arg, &Value::String(name.clone()), &format!("{at}/{name} (the name)"), out);
                }
            }
            "minProperties" | "maxProperties" => {
                let n = arg.as_u64().expect("a count") as usize;
                if (k == "minProperties" && m.len() < n) || (k == "maxProperties" && m.len() > n) {
                    out.push(format!("{at}: {} keys is beyond the {k} {n}", m.len()));
                }
            }
            "dependencies" => {
                for (name, dep) in arg.as_object().expect("dependencies is a mapping") {
                    if !m.contains_key(name) {
                        continue;
                    }
                    match dep {
                        Value::Array(names) => {
                            for other in names.iter().filter_map(Value::as_str) {
                                if !m.contains_key(other) {
                                    out.push(format!("{at}: `{name}` needs `{other}`"));
                                }
                            }
                        }
                        s => {
                            if let Err(why) = self.valid(s, &Value::Object(m.clone()), at) {
                                out.push(format!("{at}: `{name}` rules out this mapping: {}", why.join("; ")));
                            }
                        }
                    }
                }
            }
            other => assert_known(other),
        }
    }

    fn array_keyword(&self, k: &str, arg: &Value, items: &[Value], at: &str, out: &mut Vec<String>) {
        match k {
            "items" => {
                assert!(arg.is_object() || arg.is_boolean(), "items as a list of schemas is not implemented");
                for (i, item) in items.iter().enumerate() {
                    self.check(arg, item, &format!("{at}/{i}"), out);
                }
            }
            "minItems" | "maxItems" => {
                let n = arg.as_u64().expect("a count") as usize;
                if (k == "minItems" && items.len() < n) || (k == "maxItems" && items.len() > n) {
                    out.push(format!("{at}: {} items is beyond the {k} {n}", items.len()));
                }
            }
            "uniqueItems" => {
                let repeated = items.iter().enumerate().any(|(i, a)| items[..i].contains(a));
                if arg == &Value::Bool(true) && repeated {
                    out.push(format!("{at}: items repeat"));
                }
            }
            other => assert_known(other),
        }
    }

    fn resolve(&self, reference: &Value) -> &'s Value {
        let r = reference.as_str().expect("$ref is a string");
        let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("only local references are implemented: {r}"));
        self.root.pointer(pointer).unwrap_or_else(|| panic!("$ref {r} points at nothing"))
    }

    fn regex(&self, pattern: &str) -> Regex {
        let mut cache = self.regexes.borrow_mut();
        let re = cache.entry(pattern.to_string()).or_insert_with(|| {
            Regex::new(pattern).unwrap_or_else(|e| panic!("pattern {pattern:?} does not compile: {e}"))
        });
        re.clone()
    }
}

/// Keywords that apply to objects or arrays only, and so pass values of other types.
fn assert_known(k: &str) {
    const OBJECT_OR_ARRAY: &[&str] = &[
        "properties",
        "additionalProperties",
        "required",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependencies",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
    ];
    assert!(OBJECT_OR_ARRAY.contains(&k), "the test validator does not implement the keyword `{k}`");
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => panic!("unknown type {other}"),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
