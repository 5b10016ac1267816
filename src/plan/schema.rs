//! The plan format as a JSON Schema (draft-07), for editors (yaml-language-server completes and explains
//! keys) and for checking plans outside planrun.
//!
//! Every object's `properties` are made from its table in [`vocab`](super::vocab): a key's description,
//! default and examples are the table's, and its shape comes from its type ([`shape`]). What the tables do
//! not say, the rules between keys (a request has at most one body, an open group needs `duration`...), is
//! added here, object by object ([`rules`]).
//!
//! A `$ref` never has siblings, which draft-07 ignores: properties are inlined, and the definitions (the
//! recursive step, the thread group, the threshold check) are referenced from `items` and `anyOf` only.

mod values;

use serde_json::{json, Map, Value};

use super::bounds;
use super::vocab::{self, Key, Need, Object, Shape, Ty};
use crate::metric::{Metric, Unit};
use values::{count, duration, one_status, prop, rate, text};

/// The JSON Schema (draft-07) of a plan file.
pub fn plan_schema() -> Value {
    let mut root = Map::new();
    root.insert("$schema".into(), "http://json-schema.org/draft-07/schema#".into());
    root.insert("title".into(), "planrun plan".into());
    let plan = prop(vocab::PLAN.doc, Value::Null, object(&vocab::PLAN));
    root.extend(plan.as_object().cloned().unwrap_or_default());
    root.insert(
        "definitions".into(),
        json!({ "thread_group": item(&vocab::GROUP), "step": step(), "threshold_check": threshold_check() }),
    );
    Value::Object(root)
}

/// An object whose properties are exactly the object's keys, in order, with its required keys and the rules
/// between them; no other key is allowed.
fn object(o: &'static Object) -> Value {
    let props: Map<String, Value> = o.keys.iter().map(|k| (k.name.to_string(), property(k))).collect();
    let mut out = json!({ "type": "object", "properties": props, "additionalProperties": false });
    let required = o.required();
    if !required.is_empty() {
        out["required"] = json!(required);
    }
    rules(o, &mut out);
    out
}

/// An object as a list item or a mapping's value: the object's own description and examples around it.
fn item(o: &'static Object) -> Value {
    let mut described = prop(o.doc, examples(o.examples), object(o));
    // A data set's rules sit beside its description (as `allOf`), not inside its properties.
    if std::ptr::eq(o, &vocab::DATA_SET) {
        data_set_rules(&mut described);
    }
    described
}

fn examples(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// A key's schema: its description (with its default in words), its default, its shape, its examples.
fn property(k: &Key) -> Value {
    let description = match k.need {
        Need::Default(v) => format!("{} Default: `{v}`.", k.doc),
        Need::Otherwise(what) => format!("{} Default: {what}.", k.doc),
        Need::RequiredWhen(case) => format!("{} Required {case}.", k.doc),
        Need::Optional | Need::Required => k.doc.to_string(),
    };
    let mut schema = Map::new();
    if let Need::Default(v) = k.need {
        schema.insert("default".into(), serde_json::from_str(v).unwrap_or_else(|_| Value::from(v)));
    }
    if let Value::Object(entries) = shape(&k.ty) {
        schema.extend(entries);
    }
    prop(&description, examples(k.examples), Value::Object(schema))
}

/// The schema of a type.
fn shape(ty: &Ty) -> Value {
    match ty {
        Ty::Text => text(),
        Ty::Bool => json!({ "type": "boolean" }),
        Ty::Duration => duration(),
        Ty::Count(range) => count(range.clone()),
        Ty::Rate => rate(),
        Ty::Think => json!({ "anyOf": [duration(), object(&vocab::THINK)] }),
        Ty::Word(words) => json!({ "enum": words }),
        Ty::Any => json!({}),
        Ty::Object(o) => object(o),
        Ty::Shape(s) => own_shape(*s),
    }
}

fn own_shape(s: Shape) -> Value {
    let list = |items: Value| json!({ "type": "array", "minItems": 1, "items": items });
    let map = |values: Value| json!({ "type": "object", "additionalProperties": values });
    match s {
        Shape::Properties => map(prop(
            "A property: a number, a boolean, or a string template that may read earlier properties, stub.url and \
                env(); or { value, secret }.",
            Value::Null,
            json!({ "anyOf": [text(), item(&vocab::SECRET)] }),
        )),
        Shape::Variables => map(prop(
            "A variable's value, a template; or { value, secret }.",
            Value::Null,
            json!({ "anyOf": [text(), item(&vocab::SECRET)] }),
        )),
        Shape::DataSets => data_sets(),
        Shape::Groups => list(json!({ "$ref": "#/definitions/thread_group" })),
        Shape::Thresholds => map(json!({
            "anyOf": [
                { "$ref": "#/definitions/threshold_check" },
                { "type": "array", "items": { "$ref": "#/definitions/threshold_check" } }
            ]
        })),
        Shape::Outputs => json!({ "type": "array", "items": output() }),
        Shape::Pairs(value) => map(prop(value, Value::Null, text())),
        Shape::Stages => list(item(&vocab::STAGE)),
        Shape::Steps => list(json!({ "$ref": "#/definitions/step" })),
        Shape::Method => method(),
        Shape::Multipart => map(json!({ "anyOf": [text(), item(&vocab::FILE_PART)] })),
        Shape::Assertions => json!({ "type": "array", "items": item(&vocab::ASSERTION) }),
        Shape::Extractors => map(item(&vocab::EXTRACTOR)),
        Shape::Branches => list(item(&vocab::BRANCH)),
        Shape::Status => json!({ "anyOf": [one_status(), { "type": "array", "items": one_status() }] }),
        Shape::MaxMs => {
            json!({ "anyOf": [{ "type": "integer", "minimum": 0, "maximum": bounds::MAX_MS.end() }, duration()] })
        }
        Shape::MatchNo => json!({ "type": "integer", "minimum": -1 }),
        Shape::HttpVersion => json!({ "enum": ["1.1", "2", "auto", 1.1, 2] }),
        Shape::Delimiter => {
            json!({ "type": "string", "pattern": r#"^(?:[\x00-\x09\x0B\x0C\x0E-\x21\x23-\x7F]|\\t)$"# })
        }
        Shape::Columns => json!({
            "type": "array",
            "minItems": 1,
            "uniqueItems": true,
            "items": { "type": ["string", "number", "boolean"], "pattern": r"\S" }
        }),
        Shape::GroupNames => json!({
            "type": "array",
            "minItems": 1,
            "uniqueItems": true,
            "items": { "type": ["string", "number", "boolean"] }
        }),
        Shape::List => json!({ "type": "string", "pattern": r"^\s*\{\{(?:[^{]|\{[^{])*\}\}\s*$" }),
        Shape::Check => json!({ "type": "string", "pattern": threshold_pattern() }),
        Shape::Url => json!({ "type": "string" }),
        Shape::Between => json!({ "type": "array", "items": duration(), "minItems": 2, "maxItems": 2 }),
        Shape::Codings => json!({
            "type": "array",
            "uniqueItems": true,
            "items": { "enum": crate::http::content_coding::CODINGS }
        }),
    }
}

/// `names`, each checked to be a key of `o`, for the rules between keys.
fn known(o: &Object, names: &[&'static str]) -> Vec<&'static str> {
    for name in names {
        o.key(name);
    }
    names.to_vec()
}

/// `{ "required": [key] }` for each key: the schemas of "has this key".
fn has_any(o: &Object, names: &[&'static str]) -> Value {
    json!({ "anyOf": known(o, names).iter().map(|k| json!({ "required": [k] })).collect::<Vec<_>>() })
}

/// The rules between an object's keys that its table does not say.
fn rules(o: &'static Object, out: &mut Value) {
    let is = |other: &Object| std::ptr::eq(o, other);
    if is(&vocab::TLS) {
        let [cert, key] = ["client_cert", "client_key"];
        out["dependencies"] = json!({ cert: known(o, &[key]), key: known(o, &[cert]) });
    } else if is(&vocab::GROUP) {
        out["anyOf"] = has_any(o, &["threads", "stages", "arrival_rate"])["anyOf"].clone();
        out["dependencies"] = json!({
            "arrival_rate": { "not": has_any(o, &["threads", "ramp_up"]) },
            "stages": { "not": has_any(o, &["threads", "ramp_up"]) },
            "max_threads": has_any(o, &["arrival_rate", "stages"]),
        });
        out["if"] = json!({ "required": known(o, &["arrival_rate"]), "not": { "required": known(o, &["stages"]) } });
        out["then"] = json!({ "required": known(o, &["duration"]) });
    } else if is(&vocab::REQUEST) {
        let bodies = o.alternatives();
        let mut deps = Map::new();
        for kind in &bodies {
            let others: Vec<&'static str> = bodies.iter().copied().filter(|k| k != kind).collect();
            deps.insert(kind.to_string(), json!({ "not": has_any(o, &others) }));
        }
        deps.insert("content_type".into(), json!(known(o, &["body"])));
        out["dependencies"] = Value::Object(deps);
    } else if is(&vocab::ASSERTION) {
        out["minProperties"] = json!(1);
        out["maxProperties"] = json!(1);
    } else if is(&vocab::EXTRACTOR) || is(&vocab::OUTPUT) {
        let sources: Vec<Value> = o.alternatives().iter().map(|k| json!({ "required": [k] })).collect();
        out["oneOf"] = json!(sources);
    } else if is(&vocab::THINK) {
        out["minProperties"] = json!(1);
    }
    if is(&vocab::OUTPUT) {
        out["dependencies"] = json!({ "raw": known(o, &["influxdb"]) });
    }
}

/// A step: a request, a pause, or one of the blocks; each shape allows only its own keys.
fn step() -> Value {
    let shapes: Vec<Value> = vocab::STEP_SHAPES.iter().map(|s| item(s)).collect();
    prop("One step of an iteration.", Value::Null, json!({ "oneOf": shapes }))
}

/// One of `outputs:`: `{ influxdb: URL, raw: BOOL }`, `{ prometheus: URL }`, or `KIND=URL`.
fn output() -> Value {
    let kinds = vocab::OUTPUT.alternatives().join("|");
    json!({
        "anyOf": [
            { "type": "string", "pattern": format!("^\\s*({kinds})\\s*=") },
            item(&vocab::OUTPUT)
        ]
    })
}

fn method() -> Value {
    let any_case: Vec<String> = vocab::METHODS
        .iter()
        .map(|m| m.chars().map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())).collect())
        .collect();
    json!({
        "type": "string",
        "anyOf": [{ "enum": vocab::METHODS }, { "pattern": format!("^(?:{})$", any_case.join("|")) }]
    })
}

fn data_sets() -> Value {
    let mut taken: Vec<String> = vocab::RESERVED.iter().map(|s| s.to_string()).collect();
    let mut functions = crate::template::Templates::new().function_names();
    functions.sort();
    taken.extend(functions);
    json!({
        "type": "object",
        "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "not": { "enum": taken } },
        "additionalProperties": item(&vocab::DATA_SET)
    })
}

/// The data set's settings that contradict each other, as `data_sets::combination` refuses them.
fn data_set_rules(set: &mut Value) {
    let word = |key: &str, w: &'static str| -> &'static str {
        assert!(vocab::DATA_SET.words(key).contains(&w), "`{w}` is not a word of `{key}`");
        w
    };
    let (unique, random) = (word("mode", "unique"), word("mode", "random"));
    let (per_thread, recycle) = (word("scope", "per_thread"), word("on_eof", "recycle"));
    set["allOf"] = json!([
        {
            "if": { "properties": { "mode": { "const": unique } }, "required": ["mode"] },
            "then": {
                "properties": { "scope": { "not": { "const": per_thread } }, "on_eof": { "not": { "const": recycle } } }
            }
        },
        {
            "if": { "properties": { "mode": { "const": random } }, "required": ["mode"] },
            "then": { "properties": { "on_eof": { "const": recycle } } }
        }
    ]);
}

/// `p95 < 500ms`, with every metric's names and aliases and the unit each one takes.
fn threshold_pattern() -> String {
    let op = "(?:<=|>=|==|<|>)";
    let num = values::NUMBER;
    let mut times = Vec::new();
    let mut others = Vec::new();
    for (word, metric) in Metric::words() {
        let name = word.replace('.', r"\.");
        match metric.unit() {
            Unit::Ms => times.push(name),
            Unit::Fraction => others.push(format!(r"{name}\s*{op}\s*{num}\s*%")),
            Unit::PerSecond => others.push(format!(r"{name}\s*{op}\s*{num}\s*(?:/s)?")),
            Unit::Count if metric == Metric::Dropped => others.push(format!(r"{name}\s*{op}\s*{num}\s*%?")),
            Unit::Count => others.push(format!(r"{name}\s*{op}\s*{num}")),
        }
    }
    let times = format!(r"(?:{})\s*{op}\s*{}", times.join("|"), values::DURATION);
    format!(r"^\s*(?:{times}|{})\s*$", others.join("|"))
}

/// A threshold: a check written alone, or the threshold object around it.
fn threshold_check() -> Value {
    let check = property(vocab::THRESHOLD.key("check"));
    prop(vocab::THRESHOLD.doc, Value::Null, json!({ "anyOf": [check, object(&vocab::THRESHOLD)] }))
}

#[cfg(test)]
mod tests;
