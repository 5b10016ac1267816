//! The objects of steps: the step shapes (a request, a pause, the blocks), `random`'s branches, requests,
//! file parts, assertions and extractors.

use super::super::bounds;
use super::{key, Object, Shape, Ty};

/// A request step.
pub static REQUEST_STEP: Object = Object {
    id: "request_step",
    what: "a request",
    doc: "A request step: `name` (the label in results) and `request`, with optional `assert` and `extract`.",
    examples: r#"[{ "name": "home", "request": { "url": "/" }, "assert": [{ "status": 200 }] }]"#,
    keys: &[
        key("name", Ty::Text, "The step's label in results (JTL `label`), and the key of its thresholds.")
            .required()
            .examples(r#"["sendsms"]"#),
        key(
            "request",
            Ty::Object(&REQUEST),
            "The HTTP request: method, url, query, headers, and at most one body (form, multipart, json, or body).",
        )
        .required()
        .examples(r#"[{ "method": "POST", "url": "/dispatch", "form": { "to": "{{ random_digits(11) }}" } }]"#),
        key(
            "assert",
            Ty::Shape(Shape::Assertions),
            "Checks on the response; a failed one marks the sample failed with a message naming it.",
        )
        .examples(r#"[[{ "status": 202 }, { "body_contains": "Accepted" }, { "max_ms": 2000 }]]"#),
        key(
            "extract",
            Ty::Shape(Shape::Extractors),
            "Values captured from the response into the virtual user's variables, read as {{ NAME }} by later steps.",
        )
        .examples(r#"[{ "token": { "jsonpath": "$.token" }, "id": { "regex": "id=(\\d+)" } }]"#),
    ],
};

/// A pause step.
pub static THINK_STEP: Object = Object {
    id: "think_step",
    what: "a pause",
    doc: "A pause: `think` with a duration, { uniform: [min, max] } or { gaussian: { mean, stddev } }.",
    examples: r#"[{ "think": "200ms" }]"#,
    keys: &[key("think", Ty::Think, "Pause this long; the group's think_time does not apply to pauses.")
        .required()
        .examples(r#"["200ms"]"#)],
};

/// `transaction:`.
pub static TRANSACTION: Object = Object {
    id: "transaction",
    what: "a transaction",
    doc: "A transaction: a parent sample, labelled by its name, over its steps (like JMeter's Transaction \
        Controller).",
    examples: r#"[{ "transaction": "checkout", "steps": [{ "name": "pay", "request": { "method": "POST", "url": "/pay" } }] }]"#,
    keys: &[
        key("transaction", Ty::Text, "The transaction's label in results.").required().examples(r#"["checkout"]"#),
        key("steps", Ty::Shape(Shape::Steps), "The block's steps.").required(),
    ],
};

/// `if:`.
pub static IF: Object = Object {
    id: "if",
    what: "a condition",
    doc: "Run `steps` when the condition renders true, else the `else` steps.",
    examples: r#"[{ "if": "{{ token }}", "steps": [{ "name": "orders", "request": { "url": "/orders" } }] }]"#,
    keys: &[
        key("if", Ty::Text, "A condition template; true unless it renders empty, false, 0, none, [] or {}.")
            .required()
            .examples(r#"["{{ token }}", "{{ iteration % 10 == 0 }}"]"#),
        key("steps", Ty::Shape(Shape::Steps), "The block's steps.").required(),
        key("else", Ty::Shape(Shape::Steps), "Steps run when the condition is false."),
    ],
};

/// `loop:`.
pub static LOOP: Object = Object {
    id: "loop",
    what: "a counted loop",
    doc: "Run `steps` a fixed number of times.",
    examples: r#"[{ "loop": 3, "steps": [{ "name": "page", "request": { "url": "/page" } }] }]"#,
    keys: &[
        key("loop", Ty::Count(bounds::LOOPS), "How many times to run the steps.").required().examples("[3]"),
        key("steps", Ty::Shape(Shape::Steps), "The block's steps.").required(),
    ],
};

/// `while:`.
pub static WHILE: Object = Object {
    id: "while",
    what: "a conditional loop",
    doc: "Run `steps` while the condition renders true, at most `max` times.",
    examples: r#"[{ "while": "{{ status != 'done' }}", "max": 10, "steps": [{ "name": "poll", "request": { "url": "/job" } }] }]"#,
    keys: &[
        key(
            "while",
            Ty::Text,
            "A condition template, rendered before each pass; true unless empty, false, 0, none, [] or {}.",
        )
        .required()
        .examples(r#"["{{ status != 'done' }}"]"#),
        key("max", Ty::Count(bounds::LOOPS), "The most times the steps run (a bound is required).")
            .required()
            .examples("[100]"),
        key("steps", Ty::Shape(Shape::Steps), "The block's steps.").required(),
    ],
};

/// `foreach:`.
pub static FOREACH: Object = Object {
    id: "foreach",
    what: "a loop over a list",
    doc: "Run `steps` once per item of a list, the item in the variable named by `as`.",
    examples: r#"[{ "foreach": "{{ order_ids }}", "as": "order", "steps": [{ "name": "order", "request": { "url": "/orders/{{ order }}" } }] }]"#,
    keys: &[
        key(
            "foreach",
            Ty::Shape(Shape::List),
            "The list: one {{ expression }} whose value keeps its type, like {{ order_ids }} or {{ ['a', 'b'] }}.",
        )
        .required()
        .examples(r#"["{{ order_ids }}", "{{ ['a', 'b'] }}"]"#),
        key("as", Ty::Text, "The variable that holds the current item.").required().examples(r#"["order"]"#),
        key("steps", Ty::Shape(Shape::Steps), "The block's steps.").required(),
    ],
};

/// `once:`.
pub static ONCE: Object = Object {
    id: "once",
    what: "once per user",
    doc: "Steps each virtual user runs only the first time it reaches them (like JMeter's Once Only Controller).",
    examples: r#"[{ "once": [{ "name": "login", "request": { "method": "POST", "url": "/login" } }] }]"#,
    keys: &[
        key("once", Ty::Shape(Shape::Steps), "Steps run only the first time the virtual user reaches them.").required()
    ],
};

/// `random:`.
pub static RANDOM: Object = Object {
    id: "random",
    what: "a random branch",
    doc: "One branch chosen at random by weight on every pass.",
    examples: r#"[{ "random": [{ "weight": 3, "steps": [{ "name": "browse", "request": { "url": "/" } }] }, { "steps": [{ "name": "buy", "request": { "url": "/buy" } }] }] }]"#,
    keys: &[key(
        "random",
        Ty::Shape(Shape::Branches),
        "The branches: each { weight, steps }; a branch with weight 3 is chosen three times as often as one with 1.",
    )
    .required()],
};

/// The shapes a step takes; a block's first key names it. A step is a request unless it has `think` or the
/// head of a block.
pub static STEP_SHAPES: [&Object; 9] =
    [&REQUEST_STEP, &THINK_STEP, &TRANSACTION, &IF, &LOOP, &WHILE, &FOREACH, &ONCE, &RANDOM];

/// The blocks: the step shapes after the request and the pause.
pub fn blocks() -> &'static [&'static Object] {
    &STEP_SHAPES[2..]
}

/// The head key of a step shape (`name` for a request, `think`, `transaction`, `if`...).
pub fn head(shape: &Object) -> &'static str {
    shape.keys.first().map_or("", |k| k.name)
}

/// Every key a step may have, in the order of the shapes.
pub fn step_keys() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for name in STEP_SHAPES.iter().flat_map(|s| s.names()) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// A branch of `random`.
pub static BRANCH: Object = Object {
    id: "branch",
    what: "random branch",
    doc: "A branch of `random`.",
    examples: "",
    keys: &[
        key("weight", Ty::Count(bounds::WEIGHT), "The branch's weight.").default("1").examples("[3]"),
        key("steps", Ty::Shape(Shape::Steps), "The branch's steps.").required(),
    ],
};

/// The HTTP methods, as `request.rs` sends them.
pub const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

/// `request:`.
pub static REQUEST: Object = Object {
    id: "request",
    what: "request",
    doc: "An HTTP request.",
    examples: "",
    keys: &[
        key(
            "method",
            Ty::Shape(Shape::Method),
            "The HTTP method, in any case: GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS.",
        )
        .default("GET")
        .examples(r#"["POST"]"#),
        key(
            "url",
            Ty::Text,
            "The URL, a template: absolute (http:// or https://) or relative to defaults.base_url; bytes no URL may \
                hold are percent-encoded once rendered (`a b` goes as `a%20b`), `%`, `?`, `&`, `#` and `/` are sent \
                as written.",
        )
        .required()
        .examples(r#"["/cgi-bin/sendsms", "/api/orders/{{ order }}", "https://example.test/health"]"#),
        key(
            "query",
            Ty::Shape(Shape::Pairs("A query parameter's value, a template.")),
            "Query parameters appended to the URL, percent-encoded, in the order written.",
        )
        .examples(r#"[{ "to": "+7{{ random_digits(10) }}", "text": "{{ random_string(40) }}" }]"#),
        key(
            "headers",
            Ty::Shape(Shape::Pairs("A header value, a template.")),
            "Request headers; they replace defaults.headers of the same name (in any case).",
        )
        .otherwise("defaults.headers")
        .examples(r#"[{ "Authorization": "Bearer {{ token }}" }]"#),
        key(
            "form",
            Ty::Shape(Shape::Pairs("A form field's value, a template.")),
            "Body: fields sent as application/x-www-form-urlencoded, percent-encoded, in the order written.",
        )
        .alternative()
        .examples(r#"[{ "to": "{{ random_digits(11) }}", "text": "hi {{ vu }}" }]"#),
        key(
            "multipart",
            Ty::Shape(Shape::Multipart),
            "Body: multipart/form-data parts in the order written: text fields, or files { file, content_type, \
                filename }.",
        )
        .alternative()
        .examples(r#"[{ "note": "hello", "photo": { "file": "data/photo.jpg", "content_type": "image/jpeg" } }]"#),
        key(
            "json",
            Ty::Any,
            "Body: any YAML value sent as application/json; a string that is exactly one {{ expr }} keeps the value's \
                type.",
        )
        .alternative()
        .examples(r#"[{ "user": "buyer{{ vu }}", "qty": "{{ random_int(1, 5) }}", "tags": ["a", "b"] }]"#),
        key(
            "body",
            Ty::Text,
            "Body: these bytes as written (a template), with content_type as its Content-Type if given.",
        )
        .alternative()
        .examples(r#"["<ping id=\"{{ uuid() }}\"/>"]"#),
        key("content_type", Ty::Text, "The Content-Type of `body` (only with `body`).").examples(r#"["text/xml"]"#),
        key("timeout", Ty::Duration, "This request's timeout, instead of defaults.timeout.")
            .otherwise("defaults.timeout")
            .examples(r#"["30s"]"#),
        key(
            "follow_redirects",
            Ty::Bool,
            "Follow 3xx redirects for this request, instead of defaults.follow_redirects; its `URL` column is then \
                the last URL.",
        )
        .otherwise("defaults.follow_redirects")
        .examples("[false]"),
        key(
            "http_version",
            Ty::Shape(Shape::HttpVersion),
            "This request's HTTP version, instead of defaults.http_version.",
        )
        .otherwise("defaults.http_version")
        .examples(r#"["2", "1.1"]"#),
        key(
            "keep_alive",
            Ty::Bool,
            "Send this request on a kept-alive connection, instead of defaults.keep_alive; false sends it with \
                `Connection: close` on a new connection.",
        )
        .otherwise("defaults.keep_alive")
        .examples("[false]"),
    ],
};

/// A file part of `multipart:`.
pub static FILE_PART: Object = Object {
    id: "file_part",
    what: "multipart file part",
    doc: "A file part.",
    examples: "",
    keys: &[
        key(
            "file",
            Ty::Text,
            "The file, relative to the plan, a regular file (not a FIFO or a device); read once at load time.",
        )
        .required()
        .examples(r#"["data/photo.jpg"]"#),
        key("content_type", Ty::Text, "The part's Content-Type.")
            .default("application/octet-stream")
            .examples(r#"["image/jpeg"]"#),
        key("filename", Ty::Text, "The file name sent in the part header.")
            .otherwise("the file's own name")
            .examples(r#"["me.jpg"]"#),
    ],
};

/// One check of `assert:`, a mapping with one key.
pub static ASSERTION: Object = Object {
    id: "assertion",
    what: "assertion",
    doc: "One check, written as a mapping with one key.",
    examples: r#"[{ "status": 200 }, { "body_contains": "ok" }]"#,
    keys: &[
        key("status", Ty::Shape(Shape::Status), "The status is this code, class (2xx) or one of a list of them.")
            .alternative()
            .examples(r#"[202, "2xx", [200, 202]]"#),
        key("body_contains", Ty::Text, "The body contains this text (not a template).")
            .alternative()
            .examples(r#"["Accepted for delivery"]"#),
        key("body_not_contains", Ty::Text, "The body does not contain this text.")
            .alternative()
            .examples(r#"["error"]"#),
        key("body_matches", Ty::Text, "The body matches this regular expression (Rust regex syntax).")
            .alternative()
            .examples(r#"["id=\\d+", "(?i)accepted"]"#),
        key("max_ms", Ty::Shape(Shape::MaxMs), "The sample took at most this long: milliseconds, or a duration.")
            .alternative()
            .examples(r#"[2000, "2s"]"#),
        key("max_bytes", Ty::Count(bounds::ANY), "The response is at most this many bytes.")
            .alternative()
            .examples("[100000]"),
        key(
            "jsonpath",
            Ty::Object(&JSONPATH_CHECK),
            "A JSONPath query (RFC 9535) on the body: its first node equals a value, matches a regex, or exists (the \
                default).",
        )
        .alternative()
        .examples(r#"[{ "path": "$.status", "equals": "shipped" }, { "path": "$.id", "exists": true }]"#),
        key(
            "header",
            Ty::Object(&HEADER_CHECK),
            "A response header (name in any case) equals a text, matches a regex, or exists (the default).",
        )
        .alternative()
        .examples(r#"[{ "name": "Content-Type", "matches": "json" }]"#),
        key(
            "expr",
            Ty::Text,
            "A template that must render true; it reads response.status, response.headers, response.body and \
                response.json.",
        )
        .alternative()
        .examples(r#"["{{ response.status == 200 and response.json.items | length > 0 }}"]"#),
    ],
};

/// `jsonpath:` of an assertion.
pub static JSONPATH_CHECK: Object = Object {
    id: "jsonpath_check",
    what: "jsonpath assertion",
    doc: "A JSONPath check.",
    examples: "",
    keys: &[
        key("path", Ty::Text, "The JSONPath query, like $.items[0].id.").required().examples(r#"["$.status"]"#),
        key("equals", Ty::Any, "The first node equals this value (any YAML value).").examples(r#"["shipped", 3]"#),
        key("exists", Ty::Bool, "true: the query finds something; false: it finds nothing.")
            .otherwise("true, when neither equals nor matches is given")
            .examples("[true, false]"),
        key("matches", Ty::Text, "The first node, as text, matches this regular expression.")
            .examples(r#"["shipped|pending"]"#),
    ],
};

/// `header:` of an assertion.
pub static HEADER_CHECK: Object = Object {
    id: "header_check",
    what: "header assertion",
    doc: "A response header check.",
    examples: "",
    keys: &[
        key("name", Ty::Text, "The header's name, in any case.").required().examples(r#"["Content-Type"]"#),
        key("equals", Ty::Text, "The header's value is exactly this.").examples(r#"["application/json"]"#),
        key("matches", Ty::Text, "The header's value matches this regular expression.").examples(r#"["json"]"#),
        key("exists", Ty::Bool, "true: the header is present; false: it is absent.")
            .otherwise("true, when neither equals nor matches is given")
            .examples("[true, false]"),
    ],
};

/// One of `extract:`.
pub static EXTRACTOR: Object = Object {
    id: "extractor",
    what: "extractor",
    doc: "Where the value comes from: exactly one of regex, jsonpath, header, cookie.",
    examples: r#"[{ "jsonpath": "$.token" }]"#,
    keys: &[
        key(
            "regex",
            Ty::Text,
            "A regular expression on the body; the value is its capture group (the first group, or the whole match \
                without groups).",
        )
        .alternative()
        .examples(r#"["id=(\\d+)"]"#),
        key("group", Ty::Count(bounds::ANY), "With regex: the capture group to take (0 the whole match).")
            .otherwise("1 when the regex has groups, else 0")
            .examples("[2]"),
        key(
            "match_no",
            Ty::Shape(Shape::MatchNo),
            "Which match of regex or jsonpath: 1 the first, n the n-th, 0 a random one, -1 all of them as a list.",
        )
        .default("1")
        .examples("[1, -1, 0]"),
        key(
            "jsonpath",
            Ty::Text,
            "A JSONPath query (RFC 9535) on the body; the node keeps its JSON type (a string, number, list or object).",
        )
        .alternative()
        .examples(r#"["$.token", "$.orders[*].id"]"#),
        key("header", Ty::Text, "A response header, by name in any case.").alternative().examples(r#"["Location"]"#),
        key("cookie", Ty::Text, "A cookie from the virtual user's jar, after the response was stored.")
            .alternative()
            .examples(r#"["SESSIONID"]"#),
        key("default", Ty::Text, "The value when nothing matched; without one, no match fails the sample.")
            .examples(r#"["none"]"#),
    ],
};
