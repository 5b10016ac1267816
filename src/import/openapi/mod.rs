//! OpenAPI 3.0 and 3.1 documents (JSON or YAML) made into a plan: one request step per operation, in the
//! document's order, named by its operationId; parameters and JSON bodies from the examples or, failing
//! those, random values that fit the schemas ([`schema`]); the lowest 2xx response as a status assertion;
//! security schemes as secret properties with a placeholder value.

mod schema;

use serde_json::Value;

use self::schema::{deref, Gen, RefTrouble, V};
use super::convert::{Converted, Options};
use super::error::Warning;
use super::requests::{Origins, Secrets};
use super::yaml::{Item, MapB, Y};
use super::ImportError;

/// Which operations to convert (all when both are empty; else those named or tagged).
#[derive(Debug, Clone, Default)]
pub struct OpenApiOptions {
    pub operations: Vec<String>,
    pub tags: Vec<String>,
}

/// Whether `text` reads as an OpenAPI (or Swagger) document: a top-level `openapi` or `swagger` key.
pub fn looks_like_openapi(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') {
        // Only the top level's keys count: a HAR may hold an OpenAPI document in a response.
        type Top = std::collections::HashMap<String, serde::de::IgnoredAny>;
        return match serde_json::from_str::<Top>(t) {
            Ok(top) => top.contains_key("openapi") || top.contains_key("swagger"),
            Err(_) => (t.contains("\"openapi\"") || t.contains("\"swagger\"")) && !t.contains("\"log\""),
        };
    }
    t.lines().any(|l| ["openapi:", "swagger:", "\"openapi\":", "'openapi':"].iter().any(|k| l.starts_with(k)))
}

const METHODS: &[&str] = &["get", "put", "post", "delete", "options", "head", "patch", "trace"];

fn err(text: &str, needle: Option<&str>, message: String) -> ImportError {
    let (line, column) = needle.and_then(|n| position(text, n)).unwrap_or((0, 0));
    ImportError::OpenApi { line, column, message }
}

/// Line and column (from 1) of the first `needle` in `text`.
fn position(text: &str, needle: &str) -> Option<(u32, u32)> {
    let at = text.find(needle)?;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some((u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX)))
}

/// Reads the document as JSON (when it starts with `{`) or YAML.
fn read(text: &str) -> Result<Value, ImportError> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| ImportError::OpenApi {
            line: u32::try_from(e.line()).unwrap_or(u32::MAX),
            column: u32::try_from(e.column()).unwrap_or(u32::MAX),
            message: format!("not an OpenAPI document (JSON): {e}"),
        });
    }
    let mut o = serde_saphyr::Options::default();
    o.strict_booleans = true;
    serde_saphyr::from_str_with_options::<Value>(text, o).map_err(|e| {
        let e = e.without_snippet();
        let (line, column) = e
            .location()
            .map(|l| (u32::try_from(l.line()).unwrap_or(u32::MAX), u32::try_from(l.column()).unwrap_or(u32::MAX)))
            .unwrap_or((0, 0));
        let msg = e.to_string();
        let first = msg.lines().next().unwrap_or("invalid YAML").trim();
        let first = match first.find(": ") {
            Some(i) if first.starts_with("error: line") => &first[i + 2..],
            _ => first.trim_start_matches("error: "),
        };
        ImportError::OpenApi { line, column, message: format!("not an OpenAPI document (YAML): {first}") }
    })
}

/// JSON pointer escaping of one reference token.
fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Converts the OpenAPI document in `text`.
pub fn import(text: &str, options: &Options, pick: &OpenApiOptions) -> Result<Converted, ImportError> {
    let text = text.trim_start_matches('\u{feff}');
    let doc = read(text)?;
    if !doc.is_object() {
        return Err(err(text, None, "not an OpenAPI document: the top level is not a mapping".into()));
    }
    if let Some(v) = doc.get("swagger") {
        let v = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
        return Err(err(
            text,
            Some("swagger"),
            format!(
                "Swagger {v} (OpenAPI 2.0): planrun import reads OpenAPI 3.0 and 3.1; convert the document first \
                 (swagger2openapi, or the Swagger Editor's \"Convert to OpenAPI 3\")"
            ),
        ));
    }
    let version = match doc.get("openapi") {
        Some(Value::String(v)) => v.clone(),
        Some(v) => v.to_string(),
        None => {
            return Err(err(text, None, "not an OpenAPI document: no top-level `openapi` key".into()));
        }
    };
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        return Err(err(text, Some("openapi"), format!("OpenAPI {version}: planrun import reads OpenAPI 3.0 and 3.1")));
    }
    schema::check_refs(&doc).map_err(|t| match t {
        RefTrouble::Missing(r) => err(text, Some(&r), format!("`$ref: {r}` points at nothing in the document")),
        RefTrouble::Cycle(r) => err(text, Some(&r), format!("`$ref: {r}` leads back to itself")),
        RefTrouble::External(r) => err(text, Some(&r), format!("`$ref: {r}` is in another file")),
    })?;

    let mut warnings: Vec<Warning> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut secrets = Secrets::default();
    let (base_url, server_comment) = server(&doc);

    let mut ops: Vec<Op> = Vec::new();
    if let Some(Value::Object(paths)) = doc.get("paths") {
        for (path, item) in paths {
            let here = format!("#/paths/{}", token(path));
            let item = match deref(&doc, item) {
                Ok(i) => i,
                Err(t) => {
                    warnings.push(Warning { path: here, message: trouble(&t), line: 0 });
                    continue;
                }
            };
            for m in METHODS {
                if let Some(op) = item.get(*m).filter(|o| o.is_object()) {
                    ops.push(Op {
                        path: path.clone(),
                        method: m.to_ascii_uppercase(),
                        item,
                        op,
                        at: format!("{here}/{m}"),
                    });
                }
            }
        }
    }
    let total = ops.len();
    for id in &pick.operations {
        if !ops.iter().any(|o| o.op.get("operationId").and_then(Value::as_str) == Some(id.as_str())) {
            let ids: Vec<&str> = ops.iter().filter_map(|o| o.op.get("operationId").and_then(Value::as_str)).collect();
            return Err(ImportError::Empty(format!(
                "no operation `{id}` in the document (its operations: {})",
                ids.join(", ")
            )));
        }
    }
    for tag in &pick.tags {
        if !ops.iter().any(|o| tags(o.op).contains(&tag.as_str())) {
            return Err(ImportError::Empty(format!("no operation is tagged `{tag}`")));
        }
    }
    if !pick.operations.is_empty() || !pick.tags.is_empty() {
        ops.retain(|o| {
            o.op.get("operationId").and_then(Value::as_str).is_some_and(|id| pick.operations.iter().any(|p| p == id))
                || tags(o.op).iter().any(|t| pick.tags.iter().any(|p| p == t))
        });
        notes.push(format!("{} of the document's {total} operations picked with --operation/--tag", ops.len()));
    }
    if let Some(Value::Object(hooks)) = doc.get("webhooks") {
        notes.push(format!("{} webhook(s) left out: they are requests the API sends, not requests to it", hooks.len()));
    }
    if ops.is_empty() {
        return Err(ImportError::Empty(if notes.is_empty() {
            "the document has no operation under `paths`".into()
        } else {
            format!("the document has no operation under `paths` ({})", notes.join("; "))
        }));
    }

    let mut steps: Vec<Item> = Vec::new();
    for o in &ops {
        if o.method == "TRACE" {
            warnings.push(Warning {
                path: o.at.clone(),
                message: "TRACE is not a method planrun sends; left out".into(),
                line: 0,
            });
            continue;
        }
        let before = warnings.len();
        let mut item = step(&doc, o, &mut secrets, &mut warnings);
        item.comments.extend(warnings[before..].iter().map(|w| w.message.clone()));
        steps.push(item);
    }

    if steps.is_empty() {
        return Err(ImportError::Empty("no operation planrun can send is left (see the warnings)".into()));
    }
    let mut defaults = MapB::default();
    defaults.put("base_url", Y::s("{{ props.base_url }}"));
    let title = doc.pointer("/info/title").and_then(Value::as_str).filter(|t| !t.trim().is_empty());
    let name = title.map(str::to_string).unwrap_or_else(|| {
        options.source_name.rsplit_once('.').map(|(s, _)| s.to_string()).unwrap_or(options.source_name.clone())
    });
    let mut header = vec![
        format!("Converted by `planrun import` from {} (OpenAPI {version}).", options.source_name),
        "A starting point: the values are the document's examples, else random values that fit the schemas.".into(),
        "Check it with `planrun validate`; see the requests with `planrun dry-run`.".into(),
    ];
    if let Some(c) = server_comment {
        header.push(c);
    }
    header.extend(notes.iter().map(|n| format!("{n}.")));
    let origins = Origins { main: base_url, others: Vec::new() };
    let yaml = super::requests::plan(
        header,
        &name,
        origins.properties(&secrets, "OpenAPI security schemes, a placeholder"),
        defaults,
        "operations",
        steps,
    );
    Ok(Converted { yaml, warnings, disabled: Vec::new(), listeners: 0, notes })
}

struct Op<'a> {
    path: String,
    method: String,
    item: &'a Value,
    op: &'a Value,
    /// Its JSON pointer.
    at: String,
}

fn tags(op: &Value) -> Vec<&str> {
    op.get("tags").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn trouble(t: &RefTrouble) -> String {
    match t {
        RefTrouble::External(r) => format!("`$ref: {r}` is in another file, which planrun import does not read"),
        RefTrouble::Missing(r) => format!("`$ref: {r}` points at nothing"),
        RefTrouble::Cycle(r) => format!("`$ref: {r}` leads back to itself"),
    }
}

/// The first server's URL with its variables' defaults, and a comment when it was not a whole URL.
fn server(doc: &Value) -> (String, Option<String>) {
    let Some(s) = doc.pointer("/servers/0") else {
        return ("http://localhost".into(), Some("The document names no server: base_url is http://localhost.".into()));
    };
    let mut url = s.get("url").and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(Value::Object(vars)) = s.get("variables") {
        for (name, var) in vars {
            let value = match var.get("default") {
                Some(Value::String(d)) => d.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            url = url.replace(&format!("{{{name}}}"), &value);
        }
    }
    let url = url.trim_end_matches('/').to_string();
    if url.starts_with("http://") || url.starts_with("https://") {
        (url, None)
    } else if let Some(rest) = url.strip_prefix("//") {
        (format!("https://{rest}"), None)
    } else {
        let path = if url.is_empty() || url.starts_with('/') { url.clone() } else { format!("/{url}") };
        (
            format!("http://localhost{path}"),
            Some(format!(
                "The server's URL `{url}` is relative to where the document is served: base_url is on localhost."
            )),
        )
    }
}

/// The parameters of an operation: the path item's, replaced by the operation's of the same name and place.
fn parameters<'a>(doc: &'a Value, o: &Op<'a>, warnings: &mut Vec<Warning>) -> Vec<&'a Value> {
    let mut out: Vec<&Value> = Vec::new();
    for list in [o.item.get("parameters"), o.op.get("parameters")] {
        let Some(Value::Array(list)) = list else { continue };
        for p in list {
            match deref(doc, p) {
                Ok(p) => {
                    let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
                    out.retain(|q| key(q) != key(p));
                    out.push(p);
                }
                Err(t) => warnings.push(Warning { path: o.at.clone(), message: trouble(&t), line: 0 }),
            }
        }
    }
    out
}

fn step(doc: &Value, o: &Op, secrets: &mut Secrets, warnings: &mut Vec<Warning>) -> Item {
    let mut g = Gen::new(doc);
    let mut comments: Vec<String> = Vec::new();
    let id = o.op.get("operationId").and_then(Value::as_str);
    let label = format!("{} {}", o.method, o.path);
    let summary = o.op.get("summary").and_then(Value::as_str).map(|s| s.trim().replace('\n', " "));
    comments.push(match (id, &summary) {
        (Some(id), Some(s)) => format!("{id}: {s}"),
        (Some(id), None) => id.to_string(),
        (None, Some(s)) => format!("{label}: {s}"),
        (None, None) => label.clone(),
    });
    let warn = |warnings: &mut Vec<Warning>, message: String| {
        warnings.push(Warning { path: o.at.clone(), message, line: 0 });
    };

    let mut url = o.path.clone();
    let mut query = MapB::default();
    let mut headers = MapB::default();
    for p in parameters(doc, o, warnings) {
        let name = p.get("name").and_then(Value::as_str).unwrap_or("");
        let place = p.get("in").and_then(Value::as_str).unwrap_or("");
        let required = place == "path" || p.get("required").and_then(Value::as_bool).unwrap_or(false);
        if place == "cookie" {
            warn(warnings, format!("cookie parameter `{name}` not converted: send it in a Cookie header"));
            continue;
        }
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        let fit = match place {
            "path" => !name.is_empty(),
            // planrun sends query names as written, never as templates.
            "query" => !name.is_empty() && !["{{", "{%", "{#"].iter().any(|t| name.contains(t)),
            "header" => !name.is_empty() && name.chars().all(token),
            _ => {
                warn(warnings, format!("parameter `{name}` in `{place}`: not a place OpenAPI defines; left out"));
                continue;
            }
        };
        if !fit {
            warn(warnings, format!("{place} parameter `{name}`: not a name planrun can send; left out"));
            continue;
        }
        if !required {
            comments.push(format!("optional {place} parameter `{name}` left out"));
            continue;
        }
        let value = param_value(&mut g, p, name).unwrap_or(V::Expr("random_string(8)".into()));
        match place {
            "path" => url = url.replace(&format!("{{{name}}}"), &value.to_param(true)),
            "query" => {
                query.put(name, Y::s(value.to_param(false)));
            }
            "header" => {
                if ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str()) {
                    // The spec says these are ignored as parameters.
                    continue;
                }
                headers.put(name, Y::s(value.to_param(false)));
            }
            _ => {}
        }
    }
    if let Some(left) = url.split('{').nth(1).and_then(|r| r.split_once('}')).map(|(n, _)| n.to_string()) {
        if !left.is_empty() && !left.starts_with('{') {
            warn(
                warnings,
                format!("path parameter `{left}` is not declared: `{{{left}}}` is sent as written; fill it in"),
            );
        }
    }
    security(doc, o, secrets, &mut headers, &mut query, &mut comments, warnings);

    let mut body: Option<(&'static str, Y)> = None;
    if let Some(rb) = o.op.get("requestBody") {
        match deref(doc, rb) {
            Ok(rb) => {
                let content = rb.get("content").and_then(Value::as_object);
                let media = |want: &dyn Fn(&str) -> bool| {
                    content.and_then(|c| c.iter().find(|(k, _)| want(&k.to_ascii_lowercase())))
                };
                let json = media(&|k: &str| {
                    let k = k.split(';').next().unwrap_or("").trim();
                    k == "application/json" || k.ends_with("+json") || k == "*/*"
                });
                let form = media(&|k: &str| k.starts_with("application/x-www-form-urlencoded"));
                if let Some((_, m)) = json {
                    let v = media_value(&mut g, m).unwrap_or(V::Obj(Vec::new()));
                    body = Some(("json", v.to_y()));
                } else if let Some((_, m)) = form {
                    let mut f = MapB::default();
                    match media_value(&mut g, m) {
                        Some(V::Obj(fields)) => {
                            for (k, v) in fields {
                                f.put(k, Y::s(v.to_param(false)));
                            }
                        }
                        Some(V::Json(Value::Object(fields))) => {
                            for (k, v) in fields {
                                f.put(k, Y::s(V::Json(v).to_param(false)));
                            }
                        }
                        _ => {}
                    }
                    body = Some(("form", f.done()));
                } else if let Some(c) = content.filter(|c| !c.is_empty()) {
                    let kinds: Vec<&str> = c.keys().map(String::as_str).collect();
                    warn(
                        warnings,
                        format!("request body of {} not converted (only JSON and form bodies are)", kinds.join(", ")),
                    );
                }
            }
            Err(t) => warn(warnings, trouble(&t)),
        }
    }
    if o.op.get("callbacks").and_then(Value::as_object).is_some_and(|c| !c.is_empty()) {
        warn(warnings, "callbacks not converted: they are requests the API sends".into());
    }
    if o.op.get("servers").and_then(Value::as_array).is_some_and(|s| !s.is_empty()) {
        warn(warnings, "the operation's own servers not used: it goes to base_url".into());
    }
    for r in std::mem::take(&mut g.external) {
        warn(
            warnings,
            format!("`$ref: {r}` is in another file, which planrun import does not read; its value left out"),
        );
    }
    comments.append(&mut g.notes);

    let mut req = MapB::default();
    if o.method != "GET" {
        req.put("method", Y::s(o.method.clone()));
    }
    req.put("url", Y::s(url));
    if !query.0.is_empty() {
        req.put("query", query.done());
    }
    if !headers.0.is_empty() {
        req.put("headers", headers.done());
    }
    if let Some((k, v)) = body {
        req.put(k, v);
    }
    let mut step = MapB::default();
    step.put("name", Y::s(id.unwrap_or(&label)));
    step.put("request", req.done());
    if let Some(status) = expected_status(doc, o.op) {
        let mut a = MapB::default();
        a.put("status", Y::Seq(vec![Item { value: Some(status), comments: Vec::new() }]));
        step.put("assert", Y::Seq(vec![Item { value: Some(a.done()), comments: Vec::new() }]));
    }
    Item { value: Some(step.done()), comments }
}

/// A parameter's value: its example, its first example, else from its schema (or its content's).
fn param_value(g: &mut Gen, p: &Value, name: &str) -> Option<V> {
    if let Some(e) = p.get("example") {
        return Some(V::Json(e.clone()));
    }
    if let Some(v) = g.first_example(p.get("examples")) {
        return Some(v);
    }
    if let Some(s) = p.get("schema") {
        return g.value(s, name);
    }
    if let Some(Value::Object(c)) = p.get("content") {
        if let Some(m) = c.values().next() {
            return media_value(g, m);
        }
    }
    None
}

fn media_value(g: &mut Gen, m: &Value) -> Option<V> {
    if let Some(e) = m.get("example") {
        return Some(V::Json(e.clone()));
    }
    if let Some(v) = g.first_example(m.get("examples")) {
        return Some(v);
    }
    m.get("schema").and_then(|s| g.value(s, "body"))
}

/// The lowest 2xx response code (a number), or `2xx` when only the range is given.
fn expected_status(doc: &Value, op: &Value) -> Option<Y> {
    let responses = deref(doc, op.get("responses")?).ok()?.as_object()?;
    let lowest = responses.keys().filter_map(|k| k.parse::<u16>().ok()).filter(|c| (200..300).contains(c)).min();
    match lowest {
        Some(c) => Some(Y::Int(i64::from(c))),
        None => responses.keys().any(|k| k.eq_ignore_ascii_case("2xx")).then(|| Y::s("2xx")),
    }
}

/// The operation's security (or the document's): the first requirement's schemes as headers or query
/// parameters holding secret properties.
fn security(
    doc: &Value,
    o: &Op,
    secrets: &mut Secrets,
    headers: &mut MapB,
    query: &mut MapB,
    comments: &mut Vec<String>,
    warnings: &mut Vec<Warning>,
) {
    let Some(Value::Array(reqs)) = o.op.get("security").or_else(|| doc.get("security")) else { return };
    let Some(Value::Object(first)) = reqs.first() else { return };
    if reqs.len() > 1 {
        comments.push(format!("security: the first of {} alternatives", reqs.len()));
    }
    for name in first.keys() {
        let scheme = doc.pointer(&format!("/components/securitySchemes/{}", token(name))).map(|s| deref(doc, s));
        let Some(Ok(scheme)) = scheme else {
            warnings.push(Warning {
                path: o.at.clone(),
                message: format!("security scheme `{name}` is not under components.securitySchemes; left out"),
                line: 0,
            });
            continue;
        };
        let base = super::names::ident(name);
        let kind = scheme.get("type").and_then(Value::as_str).unwrap_or("");
        let http = scheme.get("scheme").and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
        match (kind, http.as_str()) {
            ("apiKey", _) => {
                let key = scheme.get("name").and_then(Value::as_str).unwrap_or("X-API-Key");
                let value = secrets.reference(&base, &format!("{base}-placeholder"));
                match scheme.get("in").and_then(Value::as_str) {
                    Some("header") => {
                        headers.put(key, Y::s(value));
                    }
                    Some("query") => {
                        query.put(key, Y::s(value));
                    }
                    _ => warnings.push(Warning {
                        path: o.at.clone(),
                        message: format!("API key `{name}` in a cookie not converted: send it in a Cookie header"),
                        line: 0,
                    }),
                }
            }
            ("http", "basic") => {
                let value = secrets.name(&base, &format!("user:{base}-placeholder"));
                headers.put("Authorization", Y::s(format!("Basic {{{{ props.{value} | base64 }}}}")));
            }
            ("http", "bearer") | ("oauth2", _) | ("openIdConnect", _) => {
                let value = secrets.reference(&base, &format!("{base}-placeholder"));
                headers.put("Authorization", Y::s(format!("Bearer {value}")));
            }
            _ => warnings.push(Warning {
                path: o.at.clone(),
                message: format!("security scheme `{name}` ({kind} {http}) not converted"),
                line: 0,
            }),
        }
    }
}
