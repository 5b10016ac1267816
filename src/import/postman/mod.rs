//! Postman collections (v2.0 and v2.1, with an environment file) made into a plan: one request step per
//! request, in order, folders as transactions; `{{var}}` as properties (the environment's over the
//! collection's), auth helpers as headers with secret values, the common test-script checks as assertions;
//! every script line that is not converted is a warning.

mod scripts;
mod text;

use serde_json::Value;

use self::text::Vars;
use super::convert::{Converted, Options};
use super::error::Warning;
use super::requests::{Origins, Secrets};
use super::yaml::{Item, MapB, Y};
use super::ImportError;

/// Whether `text` reads as a Postman collection.
pub fn looks_like_postman(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('{') && t.contains("\"info\"") && t.contains("schema.getpostman.com/json/collection")
}

fn err(message: impl Into<String>) -> ImportError {
    ImportError::Postman { line: 1, column: 1, message: message.into() }
}

fn parse(text: &str, what: &str) -> Result<Value, ImportError> {
    serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| ImportError::Postman {
        line: u32::try_from(e.line()).unwrap_or(u32::MAX),
        column: u32::try_from(e.column()).unwrap_or(u32::MAX),
        message: format!("not a Postman {what}: {e}"),
    })
}

/// One request, before its URL is set against the origins.
struct Request {
    origin: String,
    rest: String,
    item: MapB,
    comments: Vec<String>,
}

/// A step or a folder, in order.
enum Node {
    Request(Box<Request>),
    Folder { name: String, children: Vec<Node>, comments: Vec<String> },
}

struct Cx<'a> {
    vars: Vars,
    secrets: Secrets,
    warnings: Vec<Warning>,
    _env: Option<&'a Value>,
}

impl Cx<'_> {
    fn warn(&mut self, path: &str, message: String) -> String {
        let comment = format!("planrun import: {message}");
        self.warnings.push(Warning { path: path.to_string(), message, line: 0 });
        comment
    }
}

/// Converts the collection in `text`, with the environment in `env` (its text) if given.
pub fn import(text: &str, env: Option<&str>, options: &Options) -> Result<Converted, ImportError> {
    let doc = parse(text, "collection")?;
    let schema = doc.pointer("/info/schema").and_then(Value::as_str).unwrap_or("");
    if !schema.contains("/collection/v2") {
        return Err(err(if doc.get("requests").is_some() {
            "a Postman collection v1: export it again from Postman as v2.1".to_string()
        } else {
            format!("not a Postman collection v2.0 or v2.1 (info.schema is `{schema}`)")
        }));
    }
    let env = env.map(|e| parse(e, "environment")).transpose()?;
    let mut cx = Cx { vars: Vars::default(), secrets: Secrets::default(), warnings: Vec::new(), _env: env.as_ref() };
    // The collection's variables, then the environment's, which win.
    for v in doc.get("variable").or(doc.get("variables")).and_then(Value::as_array).into_iter().flatten() {
        cx.vars.declare(v, false);
    }
    if let Some(env) = &env {
        let values =
            env.get("values").and_then(Value::as_array).ok_or_else(|| err("the environment has no `values` list"))?;
        for v in values {
            cx.vars.declare(v, true);
        }
    }
    let collection_name = doc.pointer("/info/name").and_then(Value::as_str).unwrap_or("Postman collection").to_string();
    let mut header_notes = Vec::new();
    for e in doc.get("event").and_then(Value::as_array).into_iter().flatten() {
        if scripts::lines(e).iter().any(|l| !l.trim().is_empty() && !l.trim().starts_with("//")) {
            let which = e.get("listen").and_then(Value::as_str).unwrap_or("a");
            header_notes.push(cx.warn(&collection_name, format!("the collection's {which} script is not converted")));
        }
    }
    let items = doc.get("item").and_then(Value::as_array).ok_or_else(|| err("the collection has no `item` list"))?;
    let auth = doc.get("auth").cloned();
    let nodes = walk(&mut cx, items, &collection_name, auth.as_ref(), 0)?;
    let mut origins_seen = Vec::new();
    collect_origins(&nodes, &mut origins_seen);
    if nodes.is_empty() {
        return Err(ImportError::Empty("the collection holds no request planrun can send".into()));
    }
    let origins = Origins::of(origins_seen.iter().map(String::as_str));
    let steps = render(nodes, &origins);
    let mut defaults = MapB::default();
    defaults.put("base_url", Y::s("{{ props.base_url }}"));
    let mut header = vec![
        format!("Converted by `planrun import` from {}.", options.source_name),
        "Check it with `planrun validate`; see the requests with `planrun dry-run`.".into(),
    ];
    header.extend(header_notes);
    let mut props = match origins.properties(&cx.secrets, "collection") {
        Y::Map(m) => m,
        _ => Vec::new(),
    };
    // The collection's and environment's variables that requests read.
    let insert_at = props.len() - cx.secrets.0.len();
    let extra: Vec<_> = cx.vars.properties();
    for (i, e) in extra.into_iter().enumerate() {
        props.insert(insert_at + i, e);
    }
    let yaml = super::requests::plan(header, &collection_name, Y::Map(props), defaults, "collection", steps);
    Ok(Converted { yaml, warnings: cx.warnings, disabled: Vec::new(), listeners: 0, notes: Vec::new() })
}

fn collect_origins(nodes: &[Node], out: &mut Vec<String>) {
    for n in nodes {
        match n {
            Node::Request(r) if !r.origin.is_empty() => out.push(r.origin.clone()),
            Node::Request(_) => {}
            Node::Folder { children, .. } => collect_origins(children, out),
        }
    }
}

fn render(nodes: Vec<Node>, origins: &Origins) -> Vec<Item> {
    nodes
        .into_iter()
        .map(|n| match n {
            Node::Request(r) => {
                let r = *r;
                // `rest` is a template already.
                let url = origins.url_template(&r.origin, &r.rest);
                let mut item = r.item;
                for e in &mut item.0 {
                    if e.key == "request" {
                        if let Y::Map(m) = &mut e.value {
                            for k in m.iter_mut() {
                                if k.key == "url" {
                                    k.value = Y::s(url.clone());
                                }
                            }
                        }
                    }
                }
                Item { value: Some(item.done()), comments: r.comments }
            }
            Node::Folder { name, children, comments } => {
                let mut t = MapB::default();
                t.put("transaction", Y::s(name));
                t.put("steps", Y::Seq(render(children, origins)));
                Item { value: Some(t.done()), comments }
            }
        })
        .collect()
}

/// The deepest folders read: far beyond any real collection, and no stack overflow on a hostile one.
const MAX_DEPTH: usize = 64;

fn walk(
    cx: &mut Cx,
    items: &[Value],
    path: &str,
    auth: Option<&Value>,
    depth: usize,
) -> Result<Vec<Node>, ImportError> {
    if depth > MAX_DEPTH {
        return Err(err(format!("folders nested more than {MAX_DEPTH} deep")));
    }
    let mut out = Vec::new();
    for it in items {
        let name = it.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let here = format!("{path} > {name}");
        // An item's own auth, else its folder's; `noauth` stops the inheritance.
        let own_auth = it.get("auth").or_else(|| it.pointer("/request/auth")).filter(|a| !a.is_null());
        let auth_here = own_auth.or(auth);
        if let Some(children) = it.get("item").and_then(Value::as_array) {
            let mut comments = Vec::new();
            for e in it.get("event").and_then(Value::as_array).into_iter().flatten() {
                if scripts::lines(e).iter().any(|l| !l.trim().is_empty() && !l.trim().starts_with("//")) {
                    let which = e.get("listen").and_then(Value::as_str).unwrap_or("a");
                    comments.push(cx.warn(&here, format!("the folder's {which} script is not converted")));
                }
            }
            let children = walk(cx, children, &here, auth_here, depth + 1)?;
            if !children.is_empty() {
                out.push(Node::Folder { name, children, comments });
            }
            continue;
        }
        let Some(req) = it.get("request") else {
            cx.warn(&here, "an item with neither a request nor items: left out".into());
            continue;
        };
        if let Some(r) = request(cx, it, req, &here, &name, auth_here)? {
            out.push(Node::Request(Box::new(r)));
        }
    }
    Ok(out)
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn enabled(v: &Value) -> bool {
    !v.get("disabled").and_then(Value::as_bool).unwrap_or(false)
        && v.get("enabled").and_then(Value::as_bool).unwrap_or(true)
}

/// A key-value list (`header`, `query`, `urlencoded`, `formdata`, auth's v2.1 list), enabled entries only.
fn pairs(v: Option<&Value>) -> Vec<&Value> {
    v.and_then(Value::as_array).map(|a| a.iter().filter(|e| enabled(e)).collect()).unwrap_or_default()
}

fn request(
    cx: &mut Cx,
    item: &Value,
    req: &Value,
    here: &str,
    name: &str,
    auth: Option<&Value>,
) -> Result<Option<Request>, ImportError> {
    let mut comments = Vec::new();
    // v2.0 allows a request that is only its URL.
    let (method, url) = match req {
        Value::String(u) => ("GET".to_string(), Value::String(u.clone())),
        _ => (s(req, "method").to_ascii_uppercase(), req.get("url").cloned().unwrap_or(Value::Null)),
    };
    let method = if method.is_empty() { "GET".to_string() } else { method };
    if !crate::plan::vocab::METHODS.contains(&method.as_str()) {
        comments.push(cx.warn(here, format!("method `{method}` is not one planrun sends: left out")));
        return Ok(None);
    }
    let raw = url_text(&url);
    let Some((origin, rest)) = text::split_url(cx, &raw, here, &mut comments) else {
        cx.warn(here, format!("URL `{raw}` is not an http or https URL: left out"));
        return Ok(None);
    };
    let mut r = MapB::default();
    if method != "GET" {
        r.put("method", Y::s(method.clone()));
    }
    r.put("url", Y::s(String::new()));

    let mut headers: Vec<(String, String)> = Vec::new();
    for h in pairs(req.get("header")) {
        let k = s(h, "key").trim().to_string();
        if k.is_empty() {
            continue;
        }
        let v = s(h, "value");
        let value = if k.eq_ignore_ascii_case("authorization") || k.eq_ignore_ascii_case("cookie") {
            let base = if k.eq_ignore_ascii_case("cookie") { "cookie" } else { "authorization" };
            let rendered = cx.vars.render(v, here, &mut cx.warnings);
            if rendered.contains("{{") {
                rendered
            } else {
                cx.secrets.reference(base, v)
            }
        } else {
            cx.vars.render(v, here, &mut cx.warnings)
        };
        headers.push((k, value));
    }
    auth_header(cx, auth, here, &mut headers, &mut comments);
    let content_type =
        headers.iter().position(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|i| headers.remove(i).1);
    if !headers.is_empty() {
        let mut h = MapB::default();
        for (k, v) in headers {
            h.put(k, Y::s(v));
        }
        r.put("headers", h.done());
    }
    // Postman's runtime sends no body with GET or HEAD unless the item turns that off.
    let prune = matches!(method.as_str(), "GET" | "HEAD")
        && item.pointer("/protocolProfileBehavior/disableBodyPruning").and_then(Value::as_bool) != Some(true);
    if prune {
        if let Some(ct) = content_type {
            headers_content_type_dropped(cx, here, &ct, &mut comments);
        }
    } else {
        body(cx, req.get("body"), here, content_type, &mut r, &mut comments);
    }

    let mut step = MapB::default();
    step.put("name", Y::s(if name.trim().is_empty() { format!("{method} {rest}") } else { name.to_string() }));
    step.put("request", r.done());
    let checks = scripts::convert(cx, item, here, &mut comments);
    if !checks.is_empty() {
        step.put("assert", Y::Seq(checks.into_iter().map(|c| Item { value: Some(c), comments: Vec::new() }).collect()));
    }
    Ok(Some(Request { origin, rest, item: step, comments }))
}

/// The URL as Postman's runtime sends it: from its parts (host, port, path, query: a null value is the key
/// alone, an empty one `key=`), else its `raw` text; path variables (`/users/:id`) take their values.
fn url_text(url: &Value) -> String {
    match url {
        Value::String(u) => u.clone(),
        Value::Object(_) => {
            let join = |v: Option<&Value>, sep: &str| match v {
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|p| {
                        p.as_str()
                            .map(str::to_string)
                            .or_else(|| p.get("value").and_then(Value::as_str).map(str::to_string))
                    })
                    .collect::<Vec<_>>()
                    .join(sep),
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            let mut raw = if url.get("host").is_some() || url.get("path").is_some() {
                let protocol = s(url, "protocol");
                let port = match url.get("port") {
                    Some(Value::String(p)) if !p.is_empty() => format!(":{p}"),
                    Some(Value::Number(n)) => format!(":{n}"),
                    _ => String::new(),
                };
                let path = join(url.get("path"), "/");
                let mut raw = format!(
                    "{}{}{port}/{path}",
                    if protocol.is_empty() { String::new() } else { format!("{protocol}://") },
                    join(url.get("host"), ".")
                );
                let q: Vec<String> = pairs(url.get("query"))
                    .iter()
                    .map(|q| match q.get("value") {
                        None | Some(Value::Null) => s(q, "key").to_string(),
                        Some(v) => format!(
                            "{}={}",
                            s(q, "key"),
                            v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
                        ),
                    })
                    .collect();
                if !q.is_empty() {
                    raw.push('?');
                    raw.push_str(&q.join("&"));
                }
                raw
            } else {
                s(url, "raw").to_string()
            };
            for v in url.get("variable").and_then(Value::as_array).into_iter().flatten() {
                // v2.0 names a path variable by `id`, v2.1 by `key`.
                let k = [s(v, "key"), s(v, "id")].into_iter().find(|k| !k.is_empty()).unwrap_or("");
                if !k.is_empty() {
                    raw = replace_path_variable(&raw, k, s(v, "value"));
                }
            }
            raw
        }
        _ => String::new(),
    }
}

fn replace_path_variable(raw: &str, key: &str, value: &str) -> String {
    let (path, query) = match raw.find('?') {
        Some(i) => (&raw[..i], &raw[i..]),
        None => (raw, ""),
    };
    let replaced: Vec<String> =
        path.split('/').map(|seg| if seg == format!(":{key}") { value.to_string() } else { seg.to_string() }).collect();
    format!("{}{query}", replaced.join("/"))
}

fn auth_value<'a>(auth: &'a Value, kind: &str, key: &str) -> &'a str {
    match auth.get(kind) {
        // v2.1: a list of { key, value }.
        Some(Value::Array(a)) => {
            a.iter().find(|e| s(e, "key") == key).and_then(|e| e.get("value")).and_then(Value::as_str).unwrap_or("")
        }
        // v2.0: an object.
        Some(Value::Object(o)) => o.get(key).and_then(Value::as_str).unwrap_or(""),
        _ => "",
    }
}

fn auth_header(
    cx: &mut Cx,
    auth: Option<&Value>,
    here: &str,
    headers: &mut Vec<(String, String)>,
    comments: &mut Vec<String>,
) {
    let Some(auth) = auth else { return };
    let kind = s(auth, "type");
    let secret = |cx: &mut Cx, base: &str, v: &str| -> String {
        let rendered = cx.vars.render(v, here, &mut cx.warnings);
        if rendered.contains("{{") {
            rendered
        } else {
            cx.secrets.reference(base, v)
        }
    };
    match kind {
        "" | "noauth" => {}
        "basic" => {
            let (user, password) = (auth_value(auth, "basic", "username"), auth_value(auth, "basic", "password"));
            let credentials = format!("{user}:{password}");
            let name = cx.secrets.name("credentials", &credentials);
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
            headers.push(("Authorization".into(), format!("Basic {{{{ props.{name} | base64 }}}}")));
        }
        "bearer" => {
            let token = auth_value(auth, "bearer", "token").to_string();
            let v = secret(cx, "bearer_token", &token);
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
            headers.push(("Authorization".into(), format!("Bearer {v}")));
        }
        "apikey" => {
            let (key, value, place) = (
                auth_value(auth, "apikey", "key"),
                auth_value(auth, "apikey", "value"),
                auth_value(auth, "apikey", "in"),
            );
            if place == "query" {
                comments.push(cx.warn(here, "an API key sent in the query is not converted: add it to the URL".into()));
            } else {
                let v = secret(cx, "api_key", value);
                headers.push((if key.is_empty() { "X-API-Key".into() } else { key.to_string() }, v));
            }
        }
        other => comments.push(cx.warn(here, format!("`{other}` auth is not converted: set its header yourself"))),
    }
}

fn body(
    cx: &mut Cx,
    body: Option<&Value>,
    here: &str,
    content_type: Option<String>,
    r: &mut MapB,
    comments: &mut Vec<String>,
) {
    let Some(b) = body.filter(|b| !b.is_null()) else {
        if let Some(ct) = content_type {
            comments.push(cx.warn(here, format!("Content-Type `{ct}` without a body is not sent")));
        }
        return;
    };
    if b.get("disabled").and_then(Value::as_bool).unwrap_or(false) {
        return;
    }
    match s(b, "mode") {
        "raw" => {
            let raw = s(b, "raw");
            if raw.is_empty() {
                return;
            }
            r.put("body", Y::s(cx.vars.render(raw, here, &mut cx.warnings)));
            let language = b.pointer("/options/raw/language").and_then(Value::as_str).unwrap_or("");
            let ct = content_type.or_else(|| {
                match language {
                    "json" => Some("application/json"),
                    "xml" => Some("application/xml"),
                    "html" => Some("text/html"),
                    "javascript" => Some("application/javascript"),
                    _ => Some("text/plain"),
                }
                .map(str::to_string)
            });
            if let Some(ct) = ct {
                r.put("content_type", Y::s(ct));
            }
        }
        "urlencoded" => {
            let fields = pairs(b.get("urlencoded"));
            if fields.is_empty() {
                return;
            }
            let mut f = MapB::default();
            let mut seen = std::collections::HashSet::new();
            let mut twice = false;
            for p in &fields {
                twice |= !seen.insert(s(p, "key"));
            }
            if twice {
                let text: Vec<String> = fields
                    .iter()
                    .map(|p| format!("{}={}", form_encode(s(p, "key")), form_encode(s(p, "value"))))
                    .collect();
                r.put("body", Y::s(cx.vars.render(&text.join("&"), here, &mut cx.warnings)));
                r.put("content_type", Y::s("application/x-www-form-urlencoded"));
                return;
            }
            for p in fields {
                f.put(s(p, "key"), Y::s(cx.vars.render(s(p, "value"), here, &mut cx.warnings)));
            }
            r.put("form", f.done());
        }
        "formdata" => {
            let mut m = MapB::default();
            for p in pairs(b.get("formdata")) {
                let key = s(p, "key").to_string();
                if s(p, "type") == "file" {
                    let src = match p.get("src") {
                        Some(Value::String(src)) => src.clone(),
                        Some(Value::Array(a)) => a.first().and_then(Value::as_str).unwrap_or("").to_string(),
                        _ => String::new(),
                    };
                    if src.is_empty() {
                        comments.push(cx.warn(here, format!("file field `{key}` names no file: left out")));
                        continue;
                    }
                    let mut f = MapB::default();
                    f.put("file", Y::s(src));
                    if !s(p, "contentType").is_empty() {
                        f.put("content_type", Y::s(s(p, "contentType")));
                    }
                    m.put(key, f.done());
                } else {
                    m.put(key, Y::s(cx.vars.render(s(p, "value"), here, &mut cx.warnings)));
                }
            }
            if !m.0.is_empty() {
                r.put("multipart", m.done());
            }
        }
        "graphql" => {
            let query = b.pointer("/graphql/query").and_then(Value::as_str).unwrap_or("");
            let vars = b.pointer("/graphql/variables").and_then(Value::as_str).unwrap_or("");
            let vars: Value = serde_json::from_str(vars).unwrap_or(Value::Object(Default::default()));
            let body = serde_json::json!({ "query": query, "variables": vars });
            r.put("body", Y::s(cx.vars.render(&body.to_string(), here, &mut cx.warnings)));
            r.put("content_type", Y::s(content_type.unwrap_or_else(|| "application/json".into())));
        }
        "file" => comments.push(cx.warn(here, "a body read from a file is not converted".into())),
        // `"body": {}`: no body.
        "" => {}
        other => comments.push(cx.warn(here, format!("body mode `{other}` is not converted"))),
    }
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn headers_content_type_dropped(cx: &mut Cx, here: &str, ct: &str, comments: &mut Vec<String>) {
    comments.push(cx.warn(here, format!("Content-Type `{ct}` without a body is not sent")));
}
