//! The plan format as a JSON Schema (draft-07), for editors (yaml-language-server completes and explains
//! keys) and for checking plans outside planrun.
//!
//! The schema is built from the key lists the parser checks plans against (`PLAN_KEYS`, `GROUP_KEYS`,
//! `STEP_KEYS`, `BLOCKS`, `REQUEST_KEYS`, ...): every object's `properties` are made by iterating its list
//! and asking [`object`]'s `describe` for each key, which panics on a key it does not know. So a key added
//! to the parser without a description breaks `planrun schema` and every test that builds the schema. The
//! key lists the parser writes inline (think time, stages, jsonpath checks...) and those of `data.rs` are
//! copied here, and tests hold each copy to the parser by reading its "expected one of" diagnostics.
//!
//! A `$ref` never has siblings, which draft-07 ignores: properties are inlined, and the definitions (the
//! recursive step, the thread group, the threshold check) are referenced from `items` and `anyOf` only.

mod steps;
mod values;

use serde_json::{json, Map, Value};

use super::bounds;
use super::validate::{DEFAULTS_KEYS, DEFAULT_MAX_BODY, DEFAULT_TIMEOUT, GROUP_KEYS, PLAN_KEYS, TLS_KEYS};
use crate::metric::{Metric, Unit};
use values::{count, duration, prop, rate, text, think};

/// `think_time: { ... }` keys, written inline in `validate::think`.
const THINK_KEYS: &[&str] = &["uniform", "gaussian"];
/// `gaussian: { ... }` keys, written inline in `validate::think`.
const GAUSSIAN_KEYS: &[&str] = &["mean", "stddev"];
/// A stage's keys, written inline in `load::stages`.
const STAGE_KEYS: &[&str] = &["duration", "target"];
/// A threshold written as a mapping, written inline in `threshold::one`.
const THRESHOLD_KEYS: &[&str] = &["check", "abort_on_fail", "delay"];
/// `{ value, secret }` of a property or variable, written inline in `validate::secret_wrapper`.
const SECRET_KEYS: &[&str] = &["value", "secret"];
/// A data set's keys, as `data::SET_KEYS`.
const SET_KEYS: &[&str] = &["file", "delimiter", "columns", "mode", "scope", "on_eof"];
/// `mode:` words, as `data::MODES`.
const MODES: &[&str] = &["sequential", "random", "unique"];
/// `scope:` words, as `data::SCOPES`.
const SCOPES: &[&str] = &["shared", "per_thread"];
/// `on_eof:` words, as `data::ON_EOF`.
const ON_EOF: &[&str] = &["recycle", "stop_thread", "stop_run"];
/// Names a data set cannot take besides template functions, as `data::RESERVED`.
const RESERVED: &[&str] = &["vu", "iteration", "group", "props", "stub"];

/// The JSON Schema (draft-07) of a plan file.
pub fn plan_schema() -> Value {
    let mut root = Map::new();
    root.insert("$schema".into(), "http://json-schema.org/draft-07/schema#".into());
    root.insert("title".into(), "planrun plan".into());
    let plan = prop(
        "A planrun load-test plan. Most strings are minijinja templates ({{ ... }}); see docs/plan.md.",
        Value::Null,
        object(PLAN_KEYS, &["name", "thread_groups"], plan_key),
    );
    root.extend(plan.as_object().cloned().unwrap_or_default());
    root.insert(
        "definitions".into(),
        json!({ "thread_group": thread_group(), "step": steps::step(), "threshold_check": threshold_check() }),
    );
    Value::Object(root)
}

/// An object whose properties are exactly `keys`, in order, each described by `describe`; no other key
/// is allowed. Panics when `describe` does not know a key or `required` names one that is not in `keys`.
fn object(keys: &[&str], required: &[&str], describe: impl Fn(&str) -> Option<Value>) -> Value {
    let mut props = Map::new();
    for key in keys {
        let schema = describe(key).unwrap_or_else(|| panic!("the plan schema does not describe the key `{key}`"));
        props.insert(key.to_string(), schema);
    }
    let mut out = json!({ "type": "object", "properties": props, "additionalProperties": false });
    if !required.is_empty() {
        out["required"] = json!(known(keys, required));
    }
    out
}

/// `names`, each checked to be one of `keys`, for `required` lists and the constraints between keys.
fn known<'a>(keys: &[&str], names: &[&'a str]) -> Vec<&'a str> {
    for name in names {
        assert!(keys.contains(name), "`{name}` is not one of the keys {keys:?}");
    }
    names.to_vec()
}

/// `{ "required": [key] }` for each key: the schemas of "has this key".
fn has_any(keys: &[&str], names: &[&str]) -> Value {
    json!({ "anyOf": known(keys, names).iter().map(|k| json!({ "required": [k] })).collect::<Vec<_>>() })
}

/// A list of thread groups.
fn groups(description: &str) -> Value {
    prop(
        description,
        Value::Null,
        json!({ "type": "array", "minItems": 1, "items": { "$ref": "#/definitions/thread_group" } }),
    )
}

fn plan_key(key: &str) -> Option<Value> {
    Some(match key {
        "name" => prop(
            "The plan's name: it starts the default results file name, results/<name>-<UTC time>.jtl.",
            json!(["sms-dispatch"]),
            text(),
        ),
        "description" => {
            prop("What the plan is for, in a sentence.", json!(["200 senders hammer the SMS dispatcher"]), text())
        }
        "seed" => prop(
            "The run's random seed (--seed wins), or a template over the properties. Without one a seed is drawn and printed, so any run can be replayed.",
            json!([42]),
            count(bounds::ANY),
        ),
        "stub" => prop(
            "A stub target file, relative to the plan, served on a free loopback port for this run; its URL is {{ \
                stub.url }}. May read {{ props.NAME }}.",
            json!(["stubs/kannel.yaml", "{{ props.stub }}"]),
            text(),
        ),
        "properties" => prop(
            "Run-time knobs read as {{ props.NAME }}, rendered once at load time in order; -D NAME=VALUE replaces or \
                adds one.",
            json!([{ "base_url": "{{ stub.url }}", "threads": 200 }]),
            json!({
                "type": "object",
                "additionalProperties": prop(
                    "A property: a number, a boolean, or a string template that may read earlier properties, stub.url \
                        and env(); or { value, secret }.",
                    Value::Null,
                    json!({ "anyOf": [text(), secret("A property's value.", text())] }),
                )
            }),
        ),
        "defaults" => prop(
            "Settings every request inherits.",
            json!([{ "base_url": "{{ props.base_url }}", "timeout": "10s", "headers": { "User-Agent": "planrun" } }]),
            object(DEFAULTS_KEYS, &[], defaults_key),
        ),
        "variables" => prop(
            "Per-user variables, rendered in order when each virtual user starts (each may read the ones before it); \
                read as {{ NAME }}.",
            json!([{ "username": "tester", "password": "{{ env('KANNEL_PASSWORD', 'secret') }}" }]),
            json!({
                "type": "object",
                "additionalProperties": prop(
                    "A variable's value, a template; or { value, secret }.",
                    Value::Null,
                    json!({ "anyOf": [text(), secret("A variable's value, a template.", text())] }),
                )
            }),
        ),
        "data" => prop(
            "CSV data sets, read as {{ NAME.COLUMN }}: a virtual user takes the next row of each set at the start of \
                every iteration.",
            json!([{ "users": { "file": "data/users.csv" } }]),
            data_sets(),
        ),
        "setup" => groups(
            "Thread groups that run, side by side and to their end, before the main ones (e.g. to create \
            test data).",
        ),
        "thread_groups" => groups("The main load: thread groups that run side by side."),
        "teardown" => groups("Thread groups that run after the main ones, even when the run was stopped."),
        "thresholds" => prop(
            "Pass/fail criteria on the run's statistics, per label (a step's name or a transaction) or `total`; a \
                failed one makes the run exit 1.",
            json!([{
                "total": ["p95 < 500ms", "error_rate < 1%"],
                "checkout": [{ "check": "max < 5s", "abort_on_fail": true }]
            }]),
            json!({
                "type": "object",
                "additionalProperties": {
                    "anyOf": [
                        { "$ref": "#/definitions/threshold_check" },
                        { "type": "array", "items": { "$ref": "#/definitions/threshold_check" } }
                    ]
                }
            }),
        ),
        "outputs" => prop(
            "Live outputs: the run's figures streamed each second while it runs (see docs/outputs.md); \
                `--out KIND=URL` adds more.",
            json!([[{ "influxdb": "http://127.0.0.1:8086/planrun", "raw": false }, { "prometheus": "http://127.0.0.1:9090/api/v1/write" }]]),
            json!({ "type": "array", "items": output() }),
        ),
        _ => return None,
    })
}

/// One of `outputs:`: `{ influxdb: URL, raw: BOOL }`, `{ prometheus: URL }`, or `KIND=URL`.
fn output() -> Value {
    let url = |kind: &str| json!({ "type": "string", "description": format!("The {kind} URL (see docs/outputs.md).") });
    let raw =
        json!({ "type": "boolean", "default": false, "description": "Also one point per sample (JMeter's raw mode)." });
    json!({
        "anyOf": [
            { "type": "string", "pattern": "^\\s*(influxdb|prometheus)\\s*=" },
            { "type": "object", "additionalProperties": false, "required": ["influxdb"],
              "properties": { "influxdb": url("InfluxDB 1.x: http://HOST:8086/DATABASE"), "raw": raw } },
            { "type": "object", "additionalProperties": false, "required": ["prometheus"],
              "properties": { "prometheus": url("Prometheus remote write: http://HOST:9090/api/v1/write") } }
        ]
    })
}

fn defaults_key(key: &str) -> Option<Value> {
    let timeout = format!(
        "Whole-request timeout (connect, send, receive) unless a request sets its own; default {}s.",
        DEFAULT_TIMEOUT.as_secs()
    );
    let max_body = format!(
        "Response bytes kept for assertions and extractors; the rest is read and counted but not kept. Default {} ({} \
            MiB).",
        DEFAULT_MAX_BODY,
        DEFAULT_MAX_BODY >> 20
    );
    Some(match key {
        "base_url" => prop(
            "Prefix of relative request URLs: an http:// or https:// URL, rendered once at load time (it may read \
                props and stub.url).",
            json!(["http://127.0.0.1:13013", "{{ props.base_url }}"]),
            text(),
        ),
        "timeout" => prop(&timeout, json!(["10s", "1500ms"]), json!({ "default": "10s" }).merged(duration())),
        "headers" => prop(
            "Headers sent with every request (a request's header of the same name, in any case, wins); User-Agent: \
                planrun unless set.",
            json!([{ "User-Agent": "planrun", "Accept": "application/json" }]),
            pairs("A header value, a template."),
        ),
        "follow_redirects" => prop(
            "Follow 3xx redirects within one sample; default true.",
            json!([false]),
            json!({ "type": "boolean", "default": true }),
        ),
        "cookies" => prop(
            "Give each virtual user its own cookie jar; default true.",
            json!([false]),
            json!({ "type": "boolean", "default": true }),
        ),
        "max_body" => {
            prop(&max_body, json!([1_048_576]), json!({ "default": DEFAULT_MAX_BODY }).merged(count(bounds::BODY)))
        }
        "tls" => prop(
            "TLS settings for https targets; certificates are verified against Mozilla's root certificates (bundled) \
                and `ca`, unless insecure.",
            json!([{ "ca": "certs/ca.pem" }, { "insecure": true }]),
            tls(),
        ),
        _ => return None,
    })
}

fn tls() -> Value {
    let mut tls = object(TLS_KEYS, &[], |key| {
        Some(match key {
            "insecure" => prop(
                "Accept any certificate (for self-signed test targets); default false.",
                json!([true]),
                json!({ "type": "boolean", "default": false }),
            ),
            "ca" => prop(
                "A PEM file of extra trusted CA certificates, relative to the plan.",
                json!(["certs/ca.pem"]),
                text(),
            ),
            "client_cert" => prop(
                "A PEM client certificate chain for mutual TLS, relative to the plan; goes with client_key.",
                json!(["certs/client.pem"]),
                text(),
            ),
            "client_key" => prop(
                "The PEM private key of client_cert, relative to the plan; goes with client_cert.",
                json!(["certs/client.key"]),
                text(),
            ),
            _ => return None,
        })
    });
    let [cert, key] = ["client_cert", "client_key"];
    tls["dependencies"] = json!({ cert: known(TLS_KEYS, &[key]), key: known(TLS_KEYS, &[cert]) });
    tls
}

/// `{ value, secret }`: a value to mask in dry-run output and results.
fn secret(value: &str, schema: Value) -> Value {
    let wrapper = object(SECRET_KEYS, &["value"], |key| {
        Some(match key {
            "value" => prop(value, Value::Null, schema.clone()),
            "secret" => prop(
                "true: the value (at least 4 characters) is shown as *** in every encoding, in dry-run output, \
                 results and messages; default false.",
                json!([true]),
                json!({ "type": "boolean", "default": false }),
            ),
            _ => return None,
        })
    });
    prop("A value marked secret.", json!([{ "value": "{{ env('API_TOKEN') }}", "secret": true }]), wrapper)
}

/// A mapping of names to templates (query, headers, form fields), in the order written.
fn pairs(value: &str) -> Value {
    json!({ "type": "object", "additionalProperties": prop(value, Value::Null, text()) })
}

fn data_sets() -> Value {
    let mut taken: Vec<String> = RESERVED.iter().map(|s| s.to_string()).collect();
    let mut functions = crate::template::Templates::new().function_names();
    functions.sort();
    taken.extend(functions);
    let set = object(SET_KEYS, &["file"], |key| {
        Some(match key {
            "file" => prop(
                "The CSV file, relative to the plan (a template rendered at load time); read once at load time to \
                    check it.",
                json!(["data/users.csv", "{{ props.users_file }}"]),
                text(),
            ),
            "delimiter" => prop(
                "The field delimiter: one ASCII character, not a quote or line break; \\t for a tab. Default \",\".",
                json!([";", "|", "\\t"]),
                json!({
                    "type": "string",
                    "default": ",",
                    "pattern": r#"^(?:[\x00-\x09\x0B\x0C\x0E-\x21\x23-\x7F]|\\t)$"#
                }),
            ),
            "columns" => prop(
                "The column names when the file has no header row; without it the first row names the columns.",
                json!([["phone", "name"]]),
                json!({
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": true,
                    "items": { "type": ["string", "number", "boolean"], "pattern": r"\S" }
                }),
            ),
            "mode" => prop(
                "Which row comes next: in file order, a random one (with repetition), or each row once in the whole \
                    run. Default sequential.",
                json!(["random"]),
                json!({ "enum": MODES, "default": MODES[0] }),
            ),
            "scope" => prop(
                "Whether all virtual users share one cursor or each reads the file from its start (not with mode: \
                    unique). Default shared.",
                json!(["per_thread"]),
                json!({ "enum": SCOPES, "default": SCOPES[0] }),
            ),
            "on_eof" => prop(
                "At the end of the file: start again, stop the virtual user, or stop the run. Default recycle; \
                    stop_thread with mode: unique.",
                json!(["stop_thread"]),
                json!({ "enum": ON_EOF }),
            ),
            _ => return None,
        })
    });
    let word = |list: &[&'static str], w: &'static str| -> &'static str {
        assert!(list.contains(&w), "`{w}` is not one of {list:?}");
        w
    };
    let (unique, random) = (word(MODES, "unique"), word(MODES, "random"));
    let (per_thread, recycle) = (word(SCOPES, "per_thread"), word(ON_EOF, "recycle"));
    let mut set = prop("A CSV data set.", Value::Null, set);
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
    json!({
        "type": "object",
        "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "not": { "enum": taken } },
        "additionalProperties": set
    })
}

fn thread_group() -> Value {
    let mut group = prop(
        "A thread group: virtual users running the same steps, closed (threads, or stages of thread counts) or open \
            (arrival_rate, or stages of rates).",
        Value::Null,
        object(GROUP_KEYS, &["name", "steps"], group_key),
    );
    let k = GROUP_KEYS;
    group["anyOf"] = has_any(k, &["threads", "stages", "arrival_rate"])["anyOf"].clone();
    group["dependencies"] = json!({
        "arrival_rate": { "not": has_any(k, &["threads", "ramp_up"]) },
        "stages": { "not": has_any(k, &["threads", "ramp_up"]) },
        "max_threads": has_any(k, &["arrival_rate", "stages"]),
    });
    group["if"] = json!({ "required": known(k, &["arrival_rate"]), "not": { "required": known(k, &["stages"]) } });
    group["then"] = json!({ "required": known(k, &["duration"]) });
    group
}

fn group_key(key: &str) -> Option<Value> {
    Some(match key {
        "name" => {
            prop("The group's name, the prefix of threadName in results (`senders 1-17`).", json!(["senders"]), text())
        }
        "threads" => prop(
            "Closed model: the number of virtual users, each looping over the steps (at least 1).",
            json!([10, "{{ props.threads }}"]),
            count(bounds::THREADS),
        ),
        "ramp_up" => prop(
            "Closed model: the virtual users start evenly over this time; default 0s (all at once).",
            json!(["10s"]),
            json!({ "default": "0s" }).merged(duration()),
        ),
        "loops" => prop(
            "Iterations per virtual user; default 1 unless duration or stages bound the group; with duration, \
                whichever ends first.",
            json!([100, "{{ props.loops }}"]),
            count(bounds::LOOPS),
        ),
        "duration" => prop(
            "How long the group runs; iterations in flight finish. Required for an open group without stages.",
            json!(["60s", "5m"]),
            duration(),
        ),
        "think_time" => prop(
            "A pause after each request of the group: a duration, { uniform: [min, max] } or { gaussian: { mean, \
                stddev } }; default none.",
            json!(["200ms", { "uniform": ["100ms", "300ms"] }, { "gaussian": { "mean": "200ms", "stddev": "50ms" } }]),
            think(),
        ),
        "steps" => steps::list("What each iteration does, in order."),
        "arrival_rate" => prop(
            "Open model: iterations started per unit of time whatever the target's speed (200/s, 600/m, 10/h, or a \
                number per second).",
            json!(["50/s", "600/m", 20]),
            rate(),
        ),
        "stages" => prop(
            "A ramp: each stage moves linearly to its target over its duration; thread counts (closed) or rates like \
                40/s (open).",
            json!([
                [{ "duration": "30s", "target": 50 }, { "duration": "1m", "target": 50 }],
                [{ "duration": "1m", "target": "100/s" }]
            ]),
            json!({ "type": "array", "minItems": 1, "items": stage() }),
        ),
        "max_threads" => prop(
            "Open model: the most virtual users at once; arrivals beyond them are dropped and counted. Default 100.",
            json!([200]),
            json!({ "default": super::load::DEFAULT_MAX_THREADS }).merged(count(bounds::THREADS)),
        ),
        _ => return None,
    })
}

fn stage() -> Value {
    let stage = object(STAGE_KEYS, STAGE_KEYS, |key| {
        Some(match key {
            "duration" => prop("How long the stage lasts.", json!(["30s"]), duration()),
            "target" => prop(
                "Where the stage ends: a number of threads (closed), or a rate like 100/s (open; one rate makes the \
                    group open).",
                json!([50, "100/s"]),
                rate(),
            ),
            _ => return None,
        })
    });
    prop("One stage of a ramp.", json!([{ "duration": "30s", "target": 50 }]), stage)
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

fn threshold_check() -> Value {
    let check = || {
        prop(
            "METRIC OP VALUE: metrics mean, min, max, p50, p90, p95, p99, p99.9 (times, like 500ms), error_rate (1%), \
                throughput (100/s), samples, dropped (open-model iterations dropped under `total`: a count, or 1% of \
                the arrivals).",
            json!(["p95 < 500ms", "error_rate < 1%", "throughput > 100/s", "samples >= 1000", "dropped < 1%"]),
            json!({ "type": "string", "pattern": threshold_pattern() }),
        )
    };
    let long = object(THRESHOLD_KEYS, &["check"], |key| {
        Some(match key {
            "check" => check(),
            "abort_on_fail" => prop(
                "Stop the run as soon as the check fails (checked every second while running); default false.",
                json!([true]),
                json!({ "type": "boolean", "default": false }),
            ),
            "delay" => prop(
                "With abort_on_fail: start checking while running only after this time; default 0s.",
                json!(["10s"]),
                json!({ "default": "0s" }).merged(duration()),
            ),
            _ => return None,
        })
    });
    prop(
        "A threshold: a check like \"p95 < 500ms\", or { check, abort_on_fail, delay }.",
        Value::Null,
        json!({ "anyOf": [check(), long] }),
    )
}

/// Adds the entries of another schema object, for a default or constraint beside a shared shape.
trait Merged {
    fn merged(self, other: Value) -> Value;
}

impl Merged for Value {
    fn merged(mut self, other: Value) -> Value {
        if let (Some(a), Value::Object(b)) = (self.as_object_mut(), other) {
            a.extend(b);
        }
        self
    }
}

#[cfg(test)]
mod tests;
