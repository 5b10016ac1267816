//! The schema of steps: requests (bodies, assertions, extractors), pauses, and the blocks of `BLOCKS`.

use serde_json::{json, Value};

use super::super::bounds;
use super::super::request::{ASSERT_KEYS, BODY_KINDS, EXTRACT_KEYS, METHODS, REQUEST_KEYS};
use super::super::steps::{BLOCKS, STEP_KEYS};
use super::values::{count, duration, one_status, prop, text, think};
use super::{has_any, known, object, pairs, Merged};

/// A multipart file part's keys, written inline in `request::file_part`.
pub(super) const FILE_PART_KEYS: &[&str] = &["file", "content_type", "filename"];
/// A jsonpath assertion's keys, written inline in `request::json_check`.
pub(super) const JSONPATH_KEYS: &[&str] = &["path", "equals", "exists", "matches"];
/// A header assertion's keys, written inline in `request::header_check`.
pub(super) const HEADER_CHECK_KEYS: &[&str] = &["name", "equals", "matches", "exists"];
/// The keys of `EXTRACT_KEYS` that say where an extractor looks; exactly one is given.
pub(super) const EXTRACT_SOURCES: &[&str] = &["regex", "jsonpath", "header", "cookie"];
/// A `random:` branch's keys, written inline in `steps::random`.
pub(super) const BRANCH_KEYS: &[&str] = &["weight", "steps"];
/// The key of a pause step.
pub(super) const THINK: &str = "think";

/// A list of steps, at least one.
pub(super) fn list(description: &str) -> Value {
    prop(description, Value::Null, json!({ "type": "array", "minItems": 1, "items": { "$ref": "#/definitions/step" } }))
}

/// A step: a request, a pause, or one of the blocks; each shape allows only its own keys.
pub(super) fn step() -> Value {
    let in_blocks: Vec<&str> = BLOCKS.iter().flat_map(|(_, keys)| keys.iter().copied()).collect();
    let request_keys: Vec<&str> = STEP_KEYS.iter().copied().filter(|k| *k != THINK && !in_blocks.contains(k)).collect();
    let mut shapes = vec![
        prop(
            "A request step: `name` (the label in results) and `request`, with optional `assert` and `extract`.",
            json!([{ "name": "home", "request": { "url": "/" }, "assert": [{ "status": 200 }] }]),
            object(&request_keys, &["name", "request"], request_step_key),
        ),
        prop(
            "A pause: `think` with a duration, { uniform: [min, max] } or { gaussian: { mean, stddev } }.",
            json!([{ "think": "200ms" }]),
            object(&known(STEP_KEYS, &[THINK]), &[THINK], |key| (key == THINK).then(think_key)),
        ),
    ];
    for (kind, keys) in BLOCKS {
        shapes.push(block(kind, keys));
    }
    prop("One step of an iteration.", Value::Null, json!({ "oneOf": shapes }))
}

fn think_key() -> Value {
    prop("Pause this long; the group's think_time does not apply to pauses.", json!(["200ms"]), think())
}

fn request_step_key(key: &str) -> Option<Value> {
    Some(match key {
        "name" => prop(
            "The step's label in results (JTL `label`), and the key of its thresholds.",
            json!(["sendsms"]),
            text(),
        ),
        "request" => prop(
            "The HTTP request: method, url, query, headers, and at most one body (form, multipart, json, or body).",
            json!([{ "method": "POST", "url": "/dispatch", "form": { "to": "{{ random_digits(11) }}" } }]),
            request(),
        ),
        "assert" => prop(
            "Checks on the response; a failed one marks the sample failed with a message naming it.",
            json!([[{ "status": 202 }, { "body_contains": "Accepted" }, { "max_ms": 2000 }]]),
            json!({ "type": "array", "items": assertion() }),
        ),
        "extract" => prop(
            "Values captured from the response into the virtual user's variables, read as {{ NAME }} by later steps.",
            json!([{ "token": { "jsonpath": "$.token" }, "id": { "regex": "id=(\\d+)" } }]),
            json!({ "type": "object", "additionalProperties": extractor() }),
        ),
        _ => return None,
    })
}

/// A block step of `BLOCKS`: its head key, `steps` where it has them, and the keys that go with it.
fn block(kind: &str, keys: &[&str]) -> Value {
    let (description, example, needs) = match kind {
        "transaction" => (
            "A transaction: a parent sample, labelled by its name, over its steps (like JMeter's Transaction \
                Controller).",
            json!({
                "transaction": "checkout",
                "steps": [{ "name": "pay", "request": { "method": "POST", "url": "/pay" } }]
            }),
            &["steps"][..],
        ),
        "if" => (
            "Run `steps` when the condition renders true, else the `else` steps.",
            json!({ "if": "{{ token }}", "steps": [{ "name": "orders", "request": { "url": "/orders" } }] }),
            &["steps"][..],
        ),
        "loop" => (
            "Run `steps` a fixed number of times.",
            json!({ "loop": 3, "steps": [{ "name": "page", "request": { "url": "/page" } }] }),
            &["steps"][..],
        ),
        "while" => (
            "Run `steps` while the condition renders true, at most `max` times.",
            json!({
                "while": "{{ status != 'done' }}",
                "max": 10,
                "steps": [{ "name": "poll", "request": { "url": "/job" } }]
            }),
            &["steps", "max"][..],
        ),
        "foreach" => (
            "Run `steps` once per item of a list, the item in the variable named by `as`.",
            json!({
                "foreach": "{{ order_ids }}",
                "as": "order",
                "steps": [{ "name": "order", "request": { "url": "/orders/{{ order }}" } }]
            }),
            &["steps", "as"][..],
        ),
        "once" => (
            "Steps each virtual user runs only the first time it reaches them (like JMeter's Once Only Controller).",
            json!({ "once": [{ "name": "login", "request": { "method": "POST", "url": "/login" } }] }),
            &[][..],
        ),
        "random" => (
            "One branch chosen at random by weight on every pass.",
            json!({
                "random": [
                    { "weight": 3, "steps": [{ "name": "browse", "request": { "url": "/" } }] },
                    { "steps": [{ "name": "buy", "request": { "url": "/buy" } }] }
                ]
            }),
            &[][..],
        ),
        other => panic!("the plan schema does not describe the block `{other}`"),
    };
    let required: Vec<&str> = std::iter::once(kind).chain(needs.iter().copied()).collect();
    prop(description, json!([example]), object(keys, &required, |key| block_key(kind, key)))
}

fn block_key(kind: &str, key: &str) -> Option<Value> {
    Some(match (kind, key) {
        (_, "steps") => list("The block's steps."),
        ("transaction", "transaction") => prop("The transaction's label in results.", json!(["checkout"]), text()),
        ("if", "if") => prop(
            "A condition template; true unless it renders empty, false, 0, none, [] or {}.",
            json!(["{{ token }}", "{{ iteration % 10 == 0 }}"]),
            text(),
        ),
        ("if", "else") => list("Steps run when the condition is false."),
        ("loop", "loop") => prop("How many times to run the steps (at least 1).", json!([3]), count(bounds::LOOPS)),
        ("while", "while") => prop(
            "A condition template, rendered before each pass; true unless empty, false, 0, none, [] or {}.",
            json!(["{{ status != 'done' }}"]),
            text(),
        ),
        ("while", "max") => {
            prop("The most times the steps run (a bound is required).", json!([100]), count(bounds::LOOPS))
        }
        ("foreach", "foreach") => prop(
            "The list: one {{ expression }} whose value keeps its type, like {{ order_ids }} or {{ ['a', 'b'] }}.",
            json!(["{{ order_ids }}", "{{ ['a', 'b'] }}"]),
            json!({ "type": "string", "pattern": r"^\s*\{\{(?:[^{]|\{[^{])*\}\}\s*$" }),
        ),
        ("foreach", "as") => prop("The variable that holds the current item.", json!(["order"]), text()),
        ("once", "once") => list("Steps run only the first time the virtual user reaches them."),
        ("random", "random") => prop(
            "The branches: each { weight, steps }; a branch with weight 3 is chosen three times as often as one with \
                1.",
            Value::Null,
            json!({ "type": "array", "minItems": 1, "items": branch() }),
        ),
        _ => return None,
    })
}

fn branch() -> Value {
    let branch = object(BRANCH_KEYS, &["steps"], |key| {
        Some(match key {
            "weight" => prop(
                "The branch's weight (at least 1); default 1.",
                json!([3]),
                json!({ "default": 1 }).merged(count(bounds::WEIGHT)),
            ),
            "steps" => list("The branch's steps."),
            _ => return None,
        })
    });
    prop("A branch of `random`.", Value::Null, branch)
}

fn request() -> Value {
    let mut request = object(REQUEST_KEYS, &["url"], request_key);
    let mut deps = serde_json::Map::new();
    for kind in BODY_KINDS {
        let others: Vec<&str> = BODY_KINDS.iter().copied().filter(|k| k != kind).collect();
        deps.insert(kind.to_string(), json!({ "not": has_any(REQUEST_KEYS, &others) }));
    }
    deps.insert("content_type".into(), json!(known(REQUEST_KEYS, &["body"])));
    request["dependencies"] = Value::Object(deps);
    request
}

fn method() -> Value {
    let any_case: Vec<String> = METHODS
        .iter()
        .map(|m| m.chars().map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())).collect())
        .collect();
    json!({
        "type": "string",
        "default": "GET",
        "anyOf": [{ "enum": METHODS }, { "pattern": format!("^(?:{})$", any_case.join("|")) }]
    })
}

fn request_key(key: &str) -> Option<Value> {
    Some(match key {
        "method" => prop(
            &format!("The HTTP method, in any case: {}; default GET.", METHODS.join(", ")),
            json!(["POST"]),
            method(),
        ),
        "url" => prop(
            "The URL, a template: absolute (http:// or https://) or relative to defaults.base_url.",
            json!(["/cgi-bin/sendsms", "/api/orders/{{ order }}", "https://example.test/health"]),
            text(),
        ),
        "query" => prop(
            "Query parameters appended to the URL, percent-encoded, in the order written.",
            json!([{ "to": "+7{{ random_digits(10) }}", "text": "{{ random_string(40) }}" }]),
            pairs("A query parameter's value, a template."),
        ),
        "headers" => prop(
            "Request headers; they replace defaults.headers of the same name (in any case).",
            json!([{ "Authorization": "Bearer {{ token }}" }]),
            pairs("A header value, a template."),
        ),
        "form" => prop(
            "Body: fields sent as application/x-www-form-urlencoded, percent-encoded, in the order written.",
            json!([{ "to": "{{ random_digits(11) }}", "text": "hi {{ vu }}" }]),
            pairs("A form field's value, a template."),
        ),
        "multipart" => prop(
            "Body: multipart/form-data parts in the order written: text fields, or files { file, content_type, \
                filename }.",
            json!([{ "note": "hello", "photo": { "file": "data/photo.jpg", "content_type": "image/jpeg" } }]),
            json!({ "type": "object", "additionalProperties": { "anyOf": [text(), file_part()] } }),
        ),
        "json" => prop(
            "Body: any YAML value sent as application/json; a string that is exactly one {{ expr }} keeps the value's \
                type.",
            json!([{ "user": "buyer{{ vu }}", "qty": "{{ random_int(1, 5) }}", "tags": ["a", "b"] }]),
            json!({}),
        ),
        "body" => prop(
            "Body: these bytes as written (a template), with content_type as its Content-Type if given.",
            json!(["<ping id=\"{{ uuid() }}\"/>"]),
            text(),
        ),
        "content_type" => prop("The Content-Type of `body` (only with `body`).", json!(["text/xml"]), text()),
        "timeout" => prop("This request's timeout, instead of defaults.timeout.", json!(["30s"]), duration()),
        "follow_redirects" => prop(
            "Follow 3xx redirects for this request, instead of defaults.follow_redirects.",
            json!([false]),
            json!({ "type": "boolean" }),
        ),
        _ => return None,
    })
}

fn file_part() -> Value {
    let part = object(FILE_PART_KEYS, &["file"], |key| {
        Some(match key {
            "file" => {
                prop("The file, relative to the plan; read once at load time.", json!(["data/photo.jpg"]), text())
            }
            "content_type" => prop(
                "The part's Content-Type; default application/octet-stream.",
                json!(["image/jpeg"]),
                json!({ "default": "application/octet-stream" }).merged(text()),
            ),
            "filename" => {
                prop("The file name sent in the part header; default the file's own name.", json!(["me.jpg"]), text())
            }
            _ => return None,
        })
    });
    prop("A file part.", Value::Null, part)
}

fn assertion() -> Value {
    let mut one = object(ASSERT_KEYS, &[], assert_key);
    one["minProperties"] = json!(1);
    one["maxProperties"] = json!(1);
    prop("One check, written as a mapping with one key.", json!([{ "status": 200 }, { "body_contains": "ok" }]), one)
}

fn assert_key(key: &str) -> Option<Value> {
    Some(match key {
        "status" => prop(
            "The status is this code, class (2xx) or one of a list of them.",
            json!([202, "2xx", [200, 202]]),
            json!({ "anyOf": [one_status(), { "type": "array", "items": one_status() }] }),
        ),
        "body_contains" => {
            prop("The body contains this text (not a template).", json!(["Accepted for delivery"]), text())
        }
        "body_not_contains" => prop("The body does not contain this text.", json!(["error"]), text()),
        "body_matches" => prop(
            "The body matches this regular expression (Rust regex syntax).",
            json!(["id=\\d+", "(?i)accepted"]),
            text(),
        ),
        "max_ms" => prop(
            "The sample took at most this long: milliseconds, or a duration.",
            json!([2000, "2s"]),
            json!({ "anyOf": [{ "type": "integer", "minimum": 0, "maximum": bounds::MAX_MS.end() }, duration()] }),
        ),
        "max_bytes" => prop("The response is at most this many bytes.", json!([100000]), count(bounds::ANY)),
        "jsonpath" => prop(
            "A JSONPath query (RFC 9535) on the body: its first node equals a value, matches a regex, or exists (the \
                default).",
            json!([{ "path": "$.status", "equals": "shipped" }, { "path": "$.id", "exists": true }]),
            json_check(),
        ),
        "header" => prop(
            "A response header (name in any case) equals a text, matches a regex, or exists (the default).",
            json!([{ "name": "Content-Type", "matches": "json" }]),
            header_check(),
        ),
        "expr" => prop(
            "A template that must render true; it reads response.status, response.headers, response.body and \
                response.json.",
            json!(["{{ response.status == 200 and response.json.items | length > 0 }}"]),
            text(),
        ),
        _ => return None,
    })
}

fn json_check() -> Value {
    object(JSONPATH_KEYS, &["path"], |key| {
        Some(match key {
            "path" => prop("The JSONPath query, like $.items[0].id.", json!(["$.status"]), text()),
            "equals" => prop("The first node equals this value (any YAML value).", json!(["shipped", 3]), json!({})),
            "exists" => prop(
                "true: the query finds something; false: it finds nothing.",
                json!([true, false]),
                json!({ "type": "boolean" }),
            ),
            "matches" => {
                prop("The first node, as text, matches this regular expression.", json!(["shipped|pending"]), text())
            }
            _ => return None,
        })
    })
}

fn header_check() -> Value {
    object(HEADER_CHECK_KEYS, &["name"], |key| {
        Some(match key {
            "name" => prop("The header's name, in any case.", json!(["Content-Type"]), text()),
            "equals" => prop("The header's value is exactly this.", json!(["application/json"]), text()),
            "matches" => prop("The header's value matches this regular expression.", json!(["json"]), text()),
            "exists" => prop(
                "true: the header is present (the check made when neither equals nor matches is given); false: it is absent.",
                json!([true, false]),
                json!({ "type": "boolean" }),
            ),
            _ => return None,
        })
    })
}

fn extractor() -> Value {
    let sources: Vec<Value> = known(EXTRACT_KEYS, EXTRACT_SOURCES).iter().map(|k| json!({ "required": [k] })).collect();
    let mut e = prop(
        "Where the value comes from: exactly one of regex, jsonpath, header, cookie.",
        json!([{ "jsonpath": "$.token" }]),
        object(EXTRACT_KEYS, &[], extract_key),
    );
    e["oneOf"] = json!(sources);
    e
}

fn extract_key(key: &str) -> Option<Value> {
    let match_no = "Which match: 1 the first (default), n the n-th, 0 a random one, -1 all of them as a list.";
    Some(match key {
        "regex" => prop(
            "A regular expression on the body; the value is its capture group (the first group, or the whole match \
                without groups).",
            json!(["id=(\\d+)"]),
            text(),
        ),
        "group" => prop(
            "With regex: the capture group to take (0 the whole match); default 1 when the regex has groups.",
            json!([2]),
            count(bounds::ANY),
        ),
        "match_no" => prop(match_no, json!([1, -1, 0]), json!({ "type": "integer", "minimum": -1, "default": 1 })),
        "jsonpath" => prop(
            "A JSONPath query (RFC 9535) on the body; the node keeps its JSON type (a string, number, list or object).",
            json!(["$.token", "$.orders[*].id"]),
            text(),
        ),
        "header" => prop("A response header, by name in any case.", json!(["Location"]), text()),
        "cookie" => {
            prop("A cookie from the virtual user's jar, after the response was stored.", json!(["SESSIONID"]), text())
        }
        "default" => {
            prop("The value when nothing matched; without one, no match fails the sample.", json!(["none"]), text())
        }
        _ => return None,
    })
}
