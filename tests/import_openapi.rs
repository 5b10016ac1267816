//! `planrun import` of OpenAPI 3.0 and 3.1 documents: every document of tests/fixtures/openapi (the OpenAPI
//! Initiative's examples, JSON and YAML, and planrun's own shop document) converts, matches its snapshot and
//! validates; run against a recording server, the imported plan sends one request per operation in the
//! document's order, with the method, the path with its parameters filled, the required query parameters and
//! a JSON body that fits the schema; bad input is exit 2 with its position, never a panic.

use crate::common;

use std::path::{Path, PathBuf};

use common::import_corpus::{self, converts_matches_its_snapshot_and_validates};
use common::{describe, planrun, read_jtl, stderr, stdout, Recorded, Server, TempDir};
use serde_json::Value;

fn fixtures() -> PathBuf {
    import_corpus::fixtures("openapi")
}

fn documents() -> Vec<PathBuf> {
    import_corpus::corpus("openapi", |p| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        p.extension().is_some_and(|e| e == "yaml" || e == "json")
            && !name.contains("webhook")
            && !name.starts_with("swagger2")
    })
}

fn read_document(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("a document");
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).expect("JSON")
    } else {
        serde_saphyr::from_str(&text).expect("YAML")
    }
}

#[test]
fn every_openapi_document_converts_matches_its_snapshot_and_validates() {
    let name = |f: &Path| f.file_name().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    converts_matches_its_snapshot_and_validates(&documents(), |f| {
        fixtures().join("plans").join(format!("{}.yaml", name(f)))
    });
}

const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch"];

/// `v` with its local `$ref` followed; one to another file is no schema.
fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    static NONE: Value = Value::Null;
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) if !r.starts_with('#') => &NONE,
        Some(r) => deref(doc, doc.pointer(&r[1..]).expect("the $ref leads somewhere")),
        None => v,
    }
}

/// The operations of a document in order: (method, path template, path item, operation).
fn operations(doc: &Value) -> Vec<(String, String, &Value, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for m in METHODS {
            if let Some(op) = item.get(*m) {
                out.push((m.to_ascii_uppercase(), path.clone(), item, op));
            }
        }
    }
    out
}

fn parameters<'a>(doc: &'a Value, item: &'a Value, op: &'a Value) -> Vec<&'a Value> {
    let mut out: Vec<&Value> = Vec::new();
    for list in [item.get("parameters"), op.get("parameters")] {
        for p in list.and_then(Value::as_array).into_iter().flatten() {
            let p = deref(doc, p);
            out.retain(|q| (&q["name"], &q["in"]) != (&p["name"], &p["in"]));
            out.push(p);
        }
    }
    out
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("hex"));
            i += 3;
        } else {
            out.push(if b[i] == b'+' { b' ' } else { b[i] });
            i += 1;
        }
    }
    String::from_utf8(out).expect("UTF-8")
}

fn query(target: &str) -> Vec<(String, String)> {
    let Some((_, q)) = target.split_once('?') else { return Vec::new() };
    q.split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Whether `value` fits `schema` (type, enum, bounds, lengths, formats), with its path for the message.
fn fits(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let schema = deref(doc, schema);
    if let Some(Value::Array(parts)) = schema.get("allOf") {
        for p in parts {
            fits(doc, p, value, at, errors);
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            errors.push(format!("{at}: {value} is not one of {e:?}"));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            errors.push(format!("{at}: {value} is not {c}"));
        }
    }
    let ty = match &schema["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or(""),
        _ => "",
    };
    let ok = match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "integer" => value.is_i64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        _ => true,
    };
    if !ok {
        errors.push(format!("{at}: {value} is not {ty}"));
        return;
    }
    if let Some(n) = value.as_f64() {
        let min = schema["minimum"].as_f64().or(schema["exclusiveMinimum"].as_f64());
        let max = schema["maximum"].as_f64().or(schema["exclusiveMaximum"].as_f64());
        if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) || schema["exclusiveMinimum"].as_f64() == Some(n) {
            errors.push(format!("{at}: {n} is out of its bounds"));
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|m| len < m)
            || schema["maxLength"].as_u64().is_some_and(|m| len > m)
        {
            errors.push(format!("{at}: `{s}` has a length out of its bounds"));
        }
        let format_ok = match schema["format"].as_str().unwrap_or("") {
            "uuid" => s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4,
            "date" => s.len() == 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-',
            "email" => s.contains('@'),
            _ => true,
        };
        if !format_ok {
            errors.push(format!("{at}: `{s}` is not a {}", schema["format"]));
        }
    }
    if let (Some(props), Some(obj)) = (schema.get("properties").and_then(Value::as_object), value.as_object()) {
        for (k, p) in props {
            let read_only = deref(doc, p)["readOnly"].as_bool().unwrap_or(false);
            match obj.get(k) {
                Some(v) if read_only => errors.push(format!("{at}.{k}: read-only, sent as {v}")),
                Some(v) => fits(doc, p, v, &format!("{at}.{k}"), errors),
                None => {}
            }
        }
        for r in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                errors.push(format!("{at}.{r}: required, not sent"));
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            fits(doc, items, v, &format!("{at}[{i}]"), errors);
        }
        if schema["minItems"].as_u64().is_some_and(|m| (arr.len() as u64) < m) {
            errors.push(format!("{at}: fewer than minItems"));
        }
    }
}

/// What a request the plan sent differs in from the operation it was made from.
fn check(doc: &Value, (method, path, item, op): &(String, String, &Value, &Value), got: &Recorded) -> Vec<String> {
    let mut errors = Vec::new();
    if &got.method != method {
        errors.push(format!("method {} for {method}", got.method));
    }
    let sent_path = got.target.split('?').next().unwrap_or("");
    let params = parameters(doc, item, op);
    // The path template with each parameter matched by one segment that is never a template left as is.
    let mut pattern = String::from("^");
    for (i, part) in path.split('{').enumerate() {
        let literal = if i == 0 { part } else { part.split_once('}').map(|(_, rest)| rest).unwrap_or(part) };
        if i > 0 {
            pattern.push_str("([^/{}]+)");
        }
        pattern.push_str(&regex::escape(literal));
    }
    pattern.push('$');
    match regex::Regex::new(&pattern).unwrap().captures(sent_path) {
        None => errors.push(format!("path {sent_path} does not fit {path}")),
        Some(c) => {
            let names: Vec<&str> =
                path.split('{').skip(1).map(|p| p.split_once('}').map(|(n, _)| n).unwrap_or(p)).collect();
            for (name, value) in names.iter().zip(c.iter().skip(1)) {
                let value = decode(value.unwrap().as_str());
                // A parameter the document does not declare is sent as written (and warned about).
                let Some(p) = params.iter().find(|p| p["name"] == *name && p["in"] == "path") else { continue };
                if let Some(e) = p.get("example").or(p["schema"].get("example")).or(p["schema"].get("default")) {
                    if e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string()) != value {
                        errors.push(format!("path parameter {name} = {value}, the example is {e}"));
                    }
                } else if let Some(schema) = p.get("schema") {
                    let typed = serde_json::from_str::<Value>(&value)
                        .ok()
                        .filter(|v| !v.is_string() && deref(doc, schema)["type"] != "string")
                        .unwrap_or(Value::String(value.clone()));
                    fits(doc, schema, &typed, &format!("path parameter {name}"), &mut errors);
                }
            }
        }
    }
    let q = query(&got.target);
    for p in params.iter().filter(|p| p["in"] == "query") {
        let name = p["name"].as_str().unwrap();
        let sent = q.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        match (p["required"].as_bool().unwrap_or(false), sent) {
            (true, None) => errors.push(format!("required query parameter {name} not sent")),
            (false, Some(v)) => errors.push(format!("optional query parameter {name} sent ({v})")),
            (true, Some(v)) => {
                if let Some(e) = p.get("example").or(p["schema"].get("example")).or(p["schema"].get("default")) {
                    if e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string()) != *v {
                        errors.push(format!("query parameter {name} = {v}, the example is {e}"));
                    }
                }
            }
            (false, None) => {}
        }
    }
    let content = op.get("requestBody").map(|b| deref(doc, b)).and_then(|b| b["content"].as_object());
    let json = content.and_then(|c| c.iter().find(|(k, _)| k.starts_with("application/json")).map(|(_, m)| m));
    match json {
        Some(media) => {
            if got.header("content-type") != Some("application/json") {
                errors.push(format!("content-type {:?}", got.header("content-type")));
            }
            match serde_json::from_slice::<Value>(&got.body) {
                Err(e) => errors.push(format!("the body is not JSON: {e}")),
                Ok(body) => {
                    if let Some(e) = media.get("example") {
                        if *e != body {
                            errors.push(format!("body {body}, the example is {e}"));
                        }
                    } else if let Some(schema) = media.get("schema") {
                        fits(doc, schema, &body, "body", &mut errors);
                    }
                }
            }
        }
        None if content.is_some_and(|c| c.contains_key("application/x-www-form-urlencoded")) => {
            if got.header("content-type") != Some("application/x-www-form-urlencoded") {
                errors.push(format!("content-type {:?}", got.header("content-type")));
            }
        }
        None => {
            if !got.body.is_empty() {
                errors.push(format!("a body: {}", String::from_utf8_lossy(&got.body)));
            }
        }
    }
    errors
}

#[test]
fn an_imported_document_sends_each_operation_with_its_parameters_and_body() {
    let mut differences = Vec::new();
    for path in documents() {
        let name = path.file_name().and_then(|s| s.to_str()).expect("a name").to_string();
        let doc = read_document(&path);
        let dir = TempDir::new("import-openapi-send");
        let plan = dir.join("plan.yaml");
        let out = planrun(dir.path(), ["import".as_ref(), path.as_os_str(), "-o".as_ref(), plan.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", describe(&out));
        let server = Server::start();
        let run = planrun(
            dir.path(),
            ["run", plan.to_str().unwrap(), "-D", &format!("base_url={}", server.url()), "-o", "out.jtl", "--quiet"],
        );
        assert!(matches!(run.status.code(), Some(0 | 1)), "{name}: {}", describe(&run));
        let got = server.requests();
        let rows = read_jtl(&dir.join("out.jtl")).rows;
        assert_eq!(rows.len(), server.count(), "{name}: JTL rows = the server's count");
        let ops = operations(&doc);
        assert_eq!(got.len(), ops.len(), "{name}: one request per operation: {got:?}");
        for (op, g) in ops.iter().zip(&got) {
            let d = check(&doc, op, g);
            if !d.is_empty() {
                differences.push(format!("{name} {} {}: {}", op.0, op.1, d.join("; ")));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn security_schemes_are_secret_properties_and_what_is_dropped_is_said() {
    let dir = TempDir::new("import-openapi-said");
    let shop = fixtures().join("planrun_shop.yaml");
    let out = planrun(dir.path(), ["import".as_ref(), shop.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let (yaml, err) = (stdout(&out), stderr(&out));
    assert!(yaml.contains("base_url: https://eu.shop.example/api/v2\n"), "{yaml}");
    for (prop, value) in [
        ("apiKey", "apiKey-placeholder"),
        ("basicAuth", "user:basicAuth-placeholder"),
        ("bearer", "bearer-placeholder"),
        ("queryKey", "queryKey-placeholder"),
    ] {
        assert!(yaml.contains(&format!("  {prop}:\n    value: {value}\n    secret: true\n")), "{prop}:\n{yaml}");
    }
    assert!(yaml.contains("X-API-Key: \"{{ props.apiKey }}\""), "{yaml}");
    assert!(yaml.contains("Authorization: \"Basic {{ props.basicAuth | base64 }}\""), "{yaml}");
    assert!(yaml.contains("Authorization: \"Bearer {{ props.bearer }}\""), "{yaml}");
    assert!(yaml.contains("key: \"{{ props.queryKey }}\""), "{yaml}");
    assert!(yaml.contains("      # getItem: One item of an order\n"), "{yaml}");
    assert!(yaml.contains("# optional query parameter `verbose` left out"), "{yaml}");
    assert!(yaml.contains("- status:\n              - 201\n"), "the lowest 2xx: {yaml}");
    assert!(
        err.contains(
            "warning: #/paths/~1orders~1{orderId}~1items~1{sku}/get: cookie parameter `session` not converted"
        ),
        "{err}"
    );
    assert!(
        err.contains("warning: #/paths/~1upload~1{folder}/post: request body of application/xml not converted"),
        "{err}"
    );
    assert!(err.contains("warning: #/paths/~1upload~1{folder}/post: path parameter `folder` is not declared"), "{err}");
    assert!(err.contains("warning: #/paths/~1orders/post: `$ref: common.yaml#/Avatar` is in another file"), "{err}");
    assert!(yaml.contains("      # `$ref: common.yaml#/Avatar` is in another file"), "{yaml}");
    let strict = planrun(dir.path(), ["import".as_ref(), shop.as_os_str(), "--strict".as_ref()]);
    assert_eq!(strict.status.code(), Some(2), "{}", describe(&strict));
    assert!(strict.stdout.is_empty());

    // The secrets reach the server: the placeholders, or what -D gives.
    let plan = dir.write("shop.plan.yaml", &yaml);
    let server = Server::start();
    let run = planrun(
        dir.path(),
        [
            "run",
            plan.to_str().unwrap(),
            "-D",
            &format!("base_url={}", server.url()),
            "-D",
            "bearer=t0ken-from-cli",
            "-o",
            "out.jtl",
            "--quiet",
        ],
    );
    assert!(matches!(run.status.code(), Some(0 | 1)), "{}", describe(&run));
    let got = server.requests();
    assert_eq!(got.len(), 5);
    assert_eq!(read_jtl(&dir.join("out.jtl")).rows.len(), server.count());
    assert_eq!(got[0].header("x-api-key"), Some("apiKey-placeholder"));
    assert_eq!(got[0].header("x-trace"), Some("trace-1"));
    assert!(
        got[0].target.contains("/items/red%20shirt?") || got[0].target.contains("/items/blue%2Fhat?"),
        "an enum value, encoded in the path: {}",
        got[0].target
    );
    // "user:basicAuth-placeholder" in base64.
    assert_eq!(got[1].header("authorization"), Some("Basic dXNlcjpiYXNpY0F1dGgtcGxhY2Vob2xkZXI="));
    assert_eq!(got[2].header("authorization"), Some("Bearer t0ken-from-cli"));
    assert_eq!(got[3].target, "/search?q=red+shirt&key=queryKey-placeholder");
}

#[test]
fn a_json_document_that_names_log_entries_is_read_as_openapi_not_har() {
    let dir = TempDir::new("import-openapi-not-har");
    let doc = r#"{"openapi": "3.0.3", "info": {"title": "logs", "version": "1"}, "paths": {"/log": {"get": {
        "operationId": "log", "parameters": [{"name": "entries", "in": "query", "required": true, "example": 5}],
        "responses": {"200": {"description": "the log"}}}}}}"#;
    let file = dir.write("logs.json", doc);
    let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout(&out).contains("url: /log\n          query:\n            entries: \"5\"\n"), "{}", describe(&out));
}

#[test]
fn operations_and_tags_pick_the_steps() {
    let dir = TempDir::new("import-openapi-pick");
    let shop = fixtures().join("planrun_shop.yaml");
    let names = |args: &[&str]| {
        let mut all = vec!["import", shop.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = planrun(dir.path(), &all);
        (
            out.status.code(),
            stdout(&out)
                .lines()
                .filter_map(|l| l.strip_prefix("      - name: "))
                .map(str::to_string)
                .collect::<Vec<_>>(),
            stderr(&out),
        )
    };
    let (code, steps, _) = names(&["--operation", "search", "--operation", "getItem"]);
    assert_eq!((code, steps), (Some(0), vec!["getItem".to_string(), "search".to_string()]));
    let (code, steps, _) = names(&["--tag", "catalogue"]);
    assert_eq!((code, steps), (Some(0), vec!["putCategory".to_string(), "search".to_string()]));
    let (code, steps, _) = names(&["--tag", "orders", "--operation", "upload"]);
    assert_eq!((code, steps.len()), (Some(0), 3));
    let (code, _, err) = names(&["--operation", "nope"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no operation `nope`") && err.contains("getItem, createOrder"), "{err}");
    let (code, _, err) = names(&["--tag", "nope"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no operation is tagged `nope`"), "{err}");
}

#[test]
fn bad_openapi_documents_are_exit_2_with_a_position() {
    let dir = TempDir::new("import-openapi-bad");
    let petstore = std::fs::read_to_string(fixtures().join("oas30_petstore.yaml")).unwrap();
    let expanded = std::fs::read_to_string(fixtures().join("oas30_petstore-expanded.json")).unwrap();
    let huge = format!(
        "openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\npaths:\n{}",
        (0..20_000)
            .map(|i| format!("  /p{i}:\n    get:\n      responses: {{'200': {{description: x}}}}\n"))
            .collect::<String>()
    );
    let cycle = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n        - $ref: '#/components/parameters/A'\n      responses: {}\ncomponents:\n  parameters:\n    A: {$ref: '#/components/parameters/B'}\n    B: {$ref: '#/components/parameters/A'}\n";
    let laughs = format!(
        "openapi: 3.0.0\ninfo: {{title: t, version: '1'}}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n{}paths: {{}}\n",
        (1..30)
            .map(|i| format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n",
                p = i - 1
            ))
            .collect::<String>()
    );
    let cases: Vec<(&str, String, &str)> = vec![
        ("plan.yaml", "name: x\nthread_groups: []\n".into(), "not an OpenAPI document: no top-level `openapi` key"),
        ("list.json", "[1, 2]".into(), "not an OpenAPI document"),
        (
            "swagger.json",
            std::fs::read_to_string(fixtures().join("swagger2_petstore-simple.json")).unwrap(),
            "2:4: Swagger 2.0 (OpenAPI 2.0): planrun import reads OpenAPI 3.0 and 3.1",
        ),
        (
            "v4.yaml",
            "openapi: 4.0.0\npaths: {}\n".into(),
            "1:1: OpenAPI 4.0.0: planrun import reads OpenAPI 3.0 and 3.1",
        ),
        ("cut.yaml", petstore[..petstore.len() / 2].to_string() + "\n      - [", "not an OpenAPI document (YAML)"),
        ("cut.json", expanded[..expanded.len() / 2].to_string(), "not an OpenAPI document (JSON)"),
        (
            "missing.yaml",
            petstore.replace("#/components/schemas/Pets'", "#/components/schemas/Petz'"),
            "36:24: `$ref: #/components/schemas/Petz` points at nothing in the document",
        ),
        ("cycle.yaml", cycle.into(), "leads back to itself"),
        ("laughs.yaml", laughs, "not an OpenAPI document (YAML)"),
        (
            "deep.json",
            format!("{{\"openapi\": \"3.0.0\", \"x\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000)),
            "not an OpenAPI document (JSON)",
        ),
        (
            "deep.yaml",
            format!("openapi: 3.0.0\nx: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
            "not an OpenAPI document (YAML)",
        ),
        (
            "webhooks.json",
            std::fs::read_to_string(fixtures().join("oas31_webhook-example.json")).unwrap(),
            "nothing to convert: the document has no operation under `paths` (1 webhook(s) left out",
        ),
    ];
    for (name, text, expected) in &cases {
        let file = dir.write(name, text);
        let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", describe(&out));
        assert!(stderr(&out).contains(expected), "{name}: {}", describe(&out));
        assert!(!stderr(&out).contains("panicked") && out.stdout.is_empty(), "{name}");
    }
    // Hostile but readable: what cannot be sent is warned about and left out; the plan validates.
    let hostile = dir.write("hostile.yaml", HOSTILE);
    let out = planrun(dir.path(), ["import", hostile.to_str().unwrap(), "-o", "hostile.plan.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    for w in
        ["query parameter `{{x}}`: not a name planrun can send", "header parameter ``: not a name planrun can send"]
    {
        assert!(stderr(&out).contains(w), "{w}: {}", describe(&out));
    }
    let v = planrun(dir.path(), ["validate", "hostile.plan.yaml"]);
    assert_eq!(v.status.code(), Some(0), "{}", describe(&v));
    // Large but well-formed: every operation converted.
    let file = dir.write("huge.yaml", &huge);
    let out = planrun(dir.path(), ["import", file.to_str().unwrap(), "-o", "huge.plan.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(dir.join("huge.plan.yaml")).unwrap().matches("request:").count(), 20_000);
    // Beyond what planrun reads.
    let file = dir.write("toolarge.yaml", format!("openapi: 3.0.0\n#{}\n", "x".repeat(65 << 20)));
    let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("planrun import reads plans of at most"), "{}", describe(&out));
}

/// Names and values that mean something to templates, schemas that contradict themselves, wrong types.
const HOSTILE: &str = r#"openapi: 3.0.3
info: {title: "{{ evil }}", version: 1}
servers: [{url: "http://h/{v}", variables: {v: {default: 7}}}]
paths:
  /a/{id}/{id}:
    parameters: 7
    get:
      parameters:
        - {name: id, in: path, schema: {type: integer, minimum: 1e308, maximum: -1e308}}
        - {name: q, in: query, required: true, schema: {type: string, minLength: 99999999999, enum: []}}
        - {name: "{{x}}", in: query, required: true, example: "{{ boom }}"}
        - {name: s, in: query, required: true, example: "{{ boom }}"}
        - {in: header, required: true}
        - 5
      requestBody: {content: {application/json: {examples: 3, schema: {type: [null], items: 4, properties: 9}}}}
      responses: {"299": {}, "200": {}, default: {}}
    post: 5
  /b:
    put:
      requestBody: {content: {application/json: {schema: {type: number, exclusiveMinimum: true, minimum: 5, maximum: 1}}}}
      responses: 4
  /c: []
"#;
