//! Validating a request step: method, URL, query, headers, the one body, assertions.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderName, CONNECTION, CONTENT_TYPE};

use super::decode::{Ctx, Fields, Names};
use super::model::{
    Assertion, Body, Check, Defaults, ExtractFrom, Extractor, HttpVersion, JsonExpect, JsonTpl, Part, RequestStep,
    StatusMatch, TextExpect,
};
use super::node::{Node, Value};
use super::{bounds, vocab};
use crate::diag::Diagnostic;
use crate::source::Span;
use crate::template::Tpl;

const KEY_HINT: &str = "names are written as they are sent; only values are templates (docs/plan.md, Templates)";
const CMP_HINT: &str = "assertion values are compared as written; to compare with a rendered value use `expr:`, e.g. expr: \"{{ username in response.body }}\"";
/// Validates `request:` (and the step's `assert:` and `extract:`) into a request step.
#[allow(clippy::too_many_arguments)]
pub fn request_step(
    cx: &mut Ctx,
    name: Arc<str>,
    step: &Node,
    node: &Node,
    asserts: Option<&Node>,
    extract: Option<&Node>,
    defaults: &Defaults,
    names: &Names,
) -> Option<RequestStep> {
    let f = cx.object(node, &vocab::REQUEST)?;
    let method = match f.get("method") {
        None => Some(http::Method::GET),
        Some(m) => method(cx, m),
    };
    let url = cx.require(&f, "url").and_then(|u| cx.template_node(u, "url", names));
    if let (Some(lit), Some(node)) = (url.as_ref().and_then(|u| u.literal()), f.get("url")) {
        if let Some(problem) = literal_url_problem(lit, defaults.base_url.is_some()) {
            cx.error(Diagnostic::new(node.span, problem.0).hint(problem.1));
        }
    }
    let query = f.get("query").map(|q| named_pairs(cx, q, "query", names)).unwrap_or(Some(Vec::new()));
    let own_headers = f.get("headers").map(|h| headers(cx, h, names)).unwrap_or(Some(Vec::new()));
    let body = body(cx, &f, names);
    let timeout = match f.get("timeout") {
        Some(t) => cx.duration(t, "timeout"),
        None => Some(defaults.timeout),
    };
    let follow_redirects = match f.get("follow_redirects") {
        Some(r) => cx.boolean(r, "follow_redirects"),
        None => Some(defaults.follow_redirects),
    };
    let http_version = match f.get("http_version") {
        Some(v) => http_version(cx, v),
        None => Some(defaults.http_version),
    };
    let asserts = match asserts {
        Some(a) => assertions(cx, a, names),
        None => Some(Vec::new()),
    };
    let extract = match extract {
        Some(e) => extractors(cx, e),
        None => Some(Vec::new()),
    };
    let (method, url, query, own_headers, body, timeout, asserts, extract) =
        (method?, url?, query?, own_headers?, body?, timeout?, asserts?, extract?);
    let (follow_redirects, http_version) = (follow_redirects?, http_version?);
    let keep_alive_node = f.get("keep_alive");
    let keep_alive = match keep_alive_node {
        Some(k) => cx.boolean(k, "keep_alive")?,
        None => defaults.keep_alive,
    };
    check_connection(cx, keep_alive, keep_alive_node, &own_headers, f.get("headers"));
    if let Some(ct) = own_headers.iter().find(|(k, _)| *k == CONTENT_TYPE) {
        check_content_type(cx, &f, &body, ct);
    }
    let mut headers: Vec<(HeaderName, Tpl)> =
        defaults.headers.iter().filter(|(k, _)| !own_headers.iter().any(|(o, _)| o == k)).cloned().collect();
    headers.extend(own_headers);
    connection_close(cx, keep_alive, keep_alive_node.is_some(), &mut headers);
    let keep_alive = !headers.iter().any(|(k, v)| *k == CONNECTION && v.literal().is_some_and(says_close));
    Some(RequestStep {
        name,
        span: step.span,
        method,
        url,
        query,
        headers,
        body,
        timeout,
        follow_redirects,
        http_version,
        asserts,
        extract,
        keep_alive,
    })
}

/// `http_version`: `1.1`, `2` (`2.0` too) or `auto`, as a number or a string.
pub fn http_version(cx: &mut Ctx, node: &Node) -> Option<HttpVersion> {
    let text = match &node.value {
        Value::Str(_) => cx.load_time_text(node, "http_version")?,
        _ => cx.string(node, "http_version")?,
    };
    match text.trim() {
        "1.1" => Some(HttpVersion::Http1),
        "2" | "2.0" => Some(HttpVersion::Http2),
        "auto" => Some(HttpVersion::Auto),
        other => {
            let hint = if other == "1" || other == "1.0" {
                "planrun speaks HTTP/1.1, not 1.0: write 1.1"
            } else {
                "auto follows what the server picks by ALPN over https"
            };
            cx.error(
                Diagnostic::new(node.span, format!("unknown HTTP version `{other}`"))
                    .expected("1.1, 2 or auto")
                    .hint(hint),
            );
            None
        }
    }
}

/// Whether a Connection header value has the `close` token.
fn says_close(value: &str) -> bool {
    value.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"))
}

/// Checks a Connection header written next to `keep_alive` (`written` when the key is written there, not
/// inherited): `keep_alive: false` sends `Connection: close` itself, so a Connection header that says anything
/// else (or is a template) contradicts it, and so does `Connection: close` next to a written `keep_alive: true`.
pub(super) fn check_connection(
    cx: &mut Ctx,
    keep_alive: bool,
    written: Option<&Node>,
    headers: &[(HeaderName, Tpl)],
    headers_node: Option<&Node>,
) {
    let Some((_, value)) = headers.iter().find(|(k, _)| *k == CONNECTION) else { return };
    let close = value.literal().is_some_and(says_close);
    let contradicts = if keep_alive { close && written.is_some() } else { !close };
    if !contradicts {
        return;
    }
    let span = headers_node
        .and_then(Node::as_map)
        .and_then(|m| m.iter().find(|(k, _)| k.name.eq_ignore_ascii_case("connection")))
        .map(|(k, _)| k.span)
        .or(written.map(|n| n.span));
    let Some(span) = span else { return };
    let message = if keep_alive {
        "`Connection: close` contradicts `keep_alive: true`".to_string()
    } else {
        format!("`Connection: {}` contradicts `keep_alive: false`, which sends `Connection: close`", value.source())
    };
    cx.error(Diagnostic::new(span, message).hint(
        "remove the Connection header: `keep_alive: false` sends `Connection: close`, `true` keeps the connection",
    ));
}

/// Makes the request's Connection header say what `keep_alive` says: `close` when false; when true and written
/// on the request, a `Connection: close` inherited from defaults.headers is dropped.
fn connection_close(cx: &mut Ctx, keep_alive: bool, written: bool, headers: &mut Vec<(HeaderName, Tpl)>) {
    let close = headers.iter().any(|(k, v)| *k == CONNECTION && v.literal().is_some_and(says_close));
    if keep_alive {
        if written && close {
            headers.retain(|(k, _)| *k != CONNECTION);
        }
    } else if !close {
        headers.retain(|(k, _)| *k != CONNECTION);
        headers.push((CONNECTION, super::validate::literal_tpl(cx, "close")));
    }
}

fn method(cx: &mut Ctx, node: &Node) -> Option<http::Method> {
    let text = cx.string(node, "method")?;
    let upper = text.to_ascii_uppercase();
    if vocab::METHODS.contains(&upper.as_str()) {
        return http::Method::from_bytes(upper.as_bytes()).ok();
    }
    let hint =
        crate::diag::did_you_mean(&upper, vocab::METHODS.iter().copied()).map(|m| format!("did you mean `{m}`?"));
    cx.error(
        Diagnostic::new(node.span, format!("unknown HTTP method `{text}`"))
            .expected(format!("one of: {}", vocab::METHODS.join(", ")))
            .maybe_hint(hint),
    );
    None
}

/// Request headers: names must be valid HTTP header names (parsed here, once).
pub fn headers(cx: &mut Ctx, node: &Node, names: &Names) -> Option<Vec<(HeaderName, Tpl)>> {
    let mut parsed = Vec::new();
    for (k, _) in node.as_map().unwrap_or_default() {
        match HeaderName::from_bytes(k.name.as_bytes()) {
            Ok(name) => parsed.push(name),
            Err(_) => cx.error(
                Diagnostic::new(k.span, format!("`{}` is not a valid header name", k.name))
                    .hint("header names are letters, digits and - (no spaces or colons)"),
            ),
        }
    }
    let pairs = pairs(cx, node, "headers", names)?;
    (parsed.len() == pairs.len())
        .then(|| parsed.into_iter().zip(pairs).map(|(name, (_, value))| (name, value)).collect())
}

/// A mapping of names to templates, in order (query, headers, form fields).
pub fn pairs(cx: &mut Ctx, node: &Node, what: &str, names: &Names) -> Option<Vec<(String, Tpl)>> {
    let Some(map) = node.as_map() else {
        cx.type_error(node, &format!("{what}: a mapping of names to values"));
        return None;
    };
    let mut out = Vec::new();
    let mut ok = true;
    for (k, v) in map {
        match cx.template_node(v, what, names) {
            Some(t) => out.push((k.name.clone(), t)),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// Query or form pairs, whose names are sent as written.
fn named_pairs(cx: &mut Ctx, node: &Node, what: &str, names: &Names) -> Option<Vec<(String, Tpl)>> {
    let literal_names = node
        .as_map()
        .map(|m| {
            m.iter().fold(true, |ok, (k, _)| cx.literal(k.span, &k.name, &format!("a {what} name"), KEY_HINT) && ok)
        })
        .unwrap_or(true);
    pairs(cx, node, what, names).filter(|_| literal_names)
}

fn body(cx: &mut Ctx, f: &Fields, names: &Names) -> Option<Body> {
    let given: Vec<&str> = vocab::REQUEST.alternatives().into_iter().filter(|k| f.get(k).is_some()).collect();
    if given.len() > 1 {
        let second = f.key(given[1]).map(|k| k.span).unwrap_or(f.node.span);
        cx.error(
            Diagnostic::new(
                second,
                format!("a request has one body, but this one has both `{}` and `{}`", given[0], given[1]),
            )
            .hint("keep one of form, multipart, json, body"),
        );
        return None;
    }
    if let (Some(ct), None) = (f.key("content_type"), f.get("body")) {
        cx.error(
            Diagnostic::new(ct.span, "`content_type` goes with `body`".to_string())
                .hint("form, multipart and json set their own Content-Type"),
        );
        return None;
    }
    let Some(kind) = given.first() else { return Some(Body::None) };
    let node = f.get(kind)?;
    match *kind {
        "form" => named_pairs(cx, node, "form", names).map(Body::Form),
        "multipart" => multipart(cx, node, names).map(Body::Multipart),
        "json" => json(cx, node, names).map(Body::Json),
        _ => {
            let body = cx.template_node(node, "body", names)?;
            let content_type = match f.get("content_type") {
                Some(ct) => Some(cx.string(ct, "content_type")?),
                None => None,
            };
            Some(Body::Raw { body, content_type })
        }
    }
}

fn multipart(cx: &mut Ctx, node: &Node, names: &Names) -> Option<Vec<Part>> {
    let Some(map) = node.as_map() else {
        cx.type_error(node, "multipart: a mapping of field names to values or { file, content_type }");
        return None;
    };
    let mut parts = Vec::new();
    let mut ok = true;
    for (k, v) in map {
        ok &= cx.literal(k.span, &k.name, "a multipart field name", KEY_HINT);
        let part = match &v.value {
            Value::Map(_) => file_part(cx, k.name.clone(), v),
            _ => cx.template_node(v, "multipart field", names).map(|value| Part::Text { name: k.name.clone(), value }),
        };
        match part {
            Some(p) => parts.push(p),
            None => ok = false,
        }
    }
    ok.then_some(parts)
}

fn file_part(cx: &mut Ctx, name: String, node: &Node) -> Option<Part> {
    let f = cx.object(node, &vocab::FILE_PART)?;
    let file_node = cx.require(&f, "file")?;
    let file = cx.string(file_node, "file")?;
    let path = cx.source.dir().join(&file);
    let read = crate::files::open_regular(&path).and_then(|mut f| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
    });
    let bytes = match read {
        Ok(b) => Bytes::from(b),
        Err(e) => {
            cx.error(
                Diagnostic::new(file_node.span, format!("cannot read file `{}`: {e}", path.display()))
                    .hint("paths are relative to the plan file"),
            );
            return None;
        }
    };
    let content_type = match f.get("content_type") {
        Some(c) => cx.string(c, "content_type")?,
        None => "application/octet-stream".to_string(),
    };
    let filename = match f.get("filename") {
        Some(n) => cx.string(n, "filename")?,
        None => std::path::Path::new(&file).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or(file),
    };
    Some(Part::File { name, filename, content_type, bytes })
}

fn json(cx: &mut Ctx, node: &Node, names: &Names) -> Option<JsonTpl> {
    Some(match &node.value {
        Value::Null => JsonTpl::Const(serde_json::Value::Null),
        Value::Bool(b) => JsonTpl::Const((*b).into()),
        Value::Int(i) => JsonTpl::Const((*i).into()),
        Value::Float(f) => JsonTpl::Const(serde_json::Number::from_f64(*f).map(Into::into).unwrap_or_default()),
        Value::Str(s) => {
            let t = s.trim();
            let single =
                t.starts_with("{{") && t.ends_with("}}") && t[2..].find("{{").is_none() && t.matches("}}").count() == 1;
            if single {
                let expr = &t[2..t.len() - 2];
                let tpl = cx.template(node, &format!("{{{{ ({expr}) | tojson }}}}"), names)?;
                JsonTpl::Expr(tpl)
            } else {
                JsonTpl::Str(cx.template(node, s, names)?)
            }
        }
        Value::Seq(items) => {
            let out: Vec<_> = items.iter().map(|i| json(cx, i, names)).collect();
            JsonTpl::Array(out.into_iter().collect::<Option<Vec<_>>>()?)
        }
        Value::Map(entries) => {
            let out: Vec<_> = entries
                .iter()
                .map(|(k, v)| {
                    let key = cx.literal(k.span, &k.name, "a json key", KEY_HINT);
                    json(cx, v, names).filter(|_| key).map(|j| (k.name.clone(), j))
                })
                .collect();
            JsonTpl::Object(out.into_iter().collect::<Option<Vec<_>>>()?)
        }
    })
}

fn check_content_type(cx: &mut Ctx, f: &Fields, body: &Body, header: &(HeaderName, Tpl)) {
    let Some(value) = header.1.literal() else { return };
    let v = value.to_ascii_lowercase();
    let (kind, ok, wanted) = match body {
        Body::Form(_) => {
            ("form", v.starts_with("application/x-www-form-urlencoded"), "application/x-www-form-urlencoded")
        }
        Body::Multipart(_) => ("multipart", v.starts_with("multipart/form-data"), "multipart/form-data"),
        Body::Json(_) => ("json", v.starts_with("application/json") || v.contains("+json"), "application/json"),
        Body::Raw { content_type: Some(ct), .. } => ("body", ct.eq_ignore_ascii_case(value), ct.as_str()),
        _ => return,
    };
    if !ok {
        let span = f
            .get("headers")
            .and_then(|h| h.as_map())
            .and_then(|m| m.iter().find(|(k, _)| k.name.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.span));
        cx.error(
            Diagnostic::new(
                span.unwrap_or(f.node.span),
                format!("Content-Type `{value}` contradicts the `{kind}` body, which is sent as {wanted}"),
            )
            .hint(format!("remove the Content-Type header: `{kind}` sets it; or use `body:` with `content_type:`")),
        );
    }
}

fn assertions(cx: &mut Ctx, node: &Node, names: &Names) -> Option<Vec<Assertion>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "assert: a list like [ { status: 200 } ]");
        return None;
    };
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        if cx.object(item, &vocab::ASSERTION).is_none() {
            ok = false;
            continue;
        }
        let Some((key, value)) = item.as_map().and_then(|m| m.first()) else {
            cx.error(
                Diagnostic::new(item.span, "an empty assertion")
                    .expected(format!("one of: {}", vocab::ASSERTION.names().join(", "))),
            );
            ok = false;
            continue;
        };
        if item.as_map().is_some_and(|m| m.len() > 1) {
            cx.error(
                Diagnostic::new(item.span, "one check per assertion").hint("write each check as its own list item"),
            );
            ok = false;
            continue;
        }
        let check = match key.name.as_str() {
            "status" => status(cx, value).map(Check::Status),
            "body_contains" => cx.literal_string(value, "body_contains", CMP_HINT).map(Check::BodyContains),
            "body_not_contains" => cx.literal_string(value, "body_not_contains", CMP_HINT).map(Check::BodyNotContains),
            "body_matches" => cx.regex(value, "body_matches").map(Check::BodyMatches),
            "max_ms" => match &value.value {
                Value::Str(_) => cx.duration(value, "max_ms").map(|d: Duration| Check::MaxMs(d.as_millis() as u64)),
                _ => cx.count(value, "max_ms", bounds::MAX_MS).map(Check::MaxMs),
            },
            "max_bytes" => cx.count(value, "max_bytes", bounds::ANY).map(Check::MaxBytes),
            "jsonpath" => json_check(cx, value),
            "header" => header_check(cx, value),
            "expr" => {
                let mut with_response = names.clone();
                with_response.insert("response".into());
                cx.template_node(value, "expr", &with_response).map(Check::Expr)
            }
            _ => None,
        };
        match check {
            Some(check) => out.push(Assertion { span: key.span, check }),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn status(cx: &mut Ctx, node: &Node) -> Option<Vec<StatusMatch>> {
    match &node.value {
        Value::Seq(items) => items.iter().map(|i| one_status(cx, i)).collect::<Vec<_>>().into_iter().collect(),
        _ => one_status(cx, node).map(|s| vec![s]),
    }
}

fn one_status(cx: &mut Ctx, node: &Node) -> Option<StatusMatch> {
    let bad = |cx: &mut Ctx, span: Span| {
        cx.error(
            Diagnostic::new(span, "not a status").expected("a code from 100 to 599 like 202, or a class like 2xx"),
        );
        None
    };
    match &node.value {
        Value::Int(i) if (100..600).contains(i) => Some(StatusMatch::Code(*i as u16)),
        Value::Str(s) if s.len() == 3 && s.ends_with("xx") => match s.as_bytes()[0] {
            c @ b'1'..=b'5' => Some(StatusMatch::Class(u16::from(c - b'0'))),
            _ => bad(cx, node.span),
        },
        Value::Str(s) => match s.parse::<u16>() {
            Ok(c) if (100..600).contains(&c) => Some(StatusMatch::Code(c)),
            _ => bad(cx, node.span),
        },
        _ => bad(cx, node.span),
    }
}

fn json_path(cx: &mut Ctx, node: &Node, what: &str) -> Option<(String, Box<serde_json_path::JsonPath>)> {
    let text = cx.string(node, what)?;
    match serde_json_path::JsonPath::parse(&text) {
        Ok(p) => Some((text, Box::new(p))),
        Err(e) => {
            // JMeter's JSONPath accepts `$.headers.Content-Type`; RFC 9535 wants such a name in brackets.
            let hint = match bracketed_names(&text).filter(|b| serde_json_path::JsonPath::parse(b).is_ok()) {
                Some(fixed) => format!("a name with `-` or other punctuation goes in brackets: `{fixed}`"),
                None => "JSONPath as in RFC 9535, e.g. $.items[0].id".to_string(),
            };
            cx.error(Diagnostic::new(node.span, format!("{what}: invalid JSONPath: {e}")).hint(hint));
            None
        }
    }
}

/// `path` with each dotted name that RFC 9535 does not allow after a dot (`.Content-Type`) written in brackets
/// (`['Content-Type']`); None when there is none.
fn bracketed_names(path: &str) -> Option<String> {
    let mut out = String::with_capacity(path.len() + 8);
    let mut changed = false;
    let mut rest = path;
    while let Some(dot) = rest.find('.') {
        out.push_str(&rest[..dot]);
        let after = &rest[dot + 1..];
        let end = after.find(['.', '[']).unwrap_or(after.len());
        let name = &after[..end];
        let plain = name.chars().all(|c| c.is_alphanumeric() || c == '_') || name == "*" || name.is_empty();
        if plain || name.contains('\'') {
            out.push('.');
            out.push_str(name);
        } else {
            out.push_str(&format!("['{name}']"));
            changed = true;
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

fn json_check(cx: &mut Ctx, node: &Node) -> Option<Check> {
    let f = cx.object(node, &vocab::JSONPATH_CHECK)?;
    let (text, path) = cx.require(&f, "path").and_then(|p| json_path(cx, p, "path"))?;
    let expect = if let Some(e) = f.get("equals") {
        if !literal_json(cx, e) {
            return None;
        }
        JsonExpect::Equals(json_constant(e))
    } else if let Some(e) = f.get("exists") {
        JsonExpect::Exists(cx.boolean(e, "exists")?)
    } else if let Some(m) = f.get("matches") {
        JsonExpect::Matches(cx.regex(m, "matches")?)
    } else {
        JsonExpect::Exists(true)
    };
    Some(Check::JsonPath { text, path, expect })
}

/// Refuses template syntax anywhere in a constant compared as written; false when refused.
fn literal_json(cx: &mut Ctx, node: &Node) -> bool {
    match &node.value {
        Value::Str(s) => cx.literal(node.span, s, "jsonpath `equals`", CMP_HINT),
        Value::Seq(items) => {
            // Every item is checked, so every offending one is reported.
            let mut ok = true;
            for i in items {
                ok &= literal_json(cx, i);
            }
            ok
        }
        Value::Map(entries) => entries.iter().fold(true, |ok, (k, v)| {
            let key = cx.literal(k.span, &k.name, "jsonpath `equals`", CMP_HINT);
            literal_json(cx, v) && key && ok
        }),
        _ => true,
    }
}

fn json_constant(node: &Node) -> serde_json::Value {
    match &node.value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => (*i).into(),
        Value::Float(f) => serde_json::Number::from_f64(*f).map(Into::into).unwrap_or_default(),
        Value::Str(s) => s.clone().into(),
        Value::Seq(items) => items.iter().map(json_constant).collect(),
        Value::Map(entries) => entries.iter().map(|(k, v)| (k.name.clone(), json_constant(v))).collect(),
    }
}

fn header_check(cx: &mut Ctx, node: &Node) -> Option<Check> {
    let f = cx.object(node, &vocab::HEADER_CHECK)?;
    let name = cx.require(&f, "name").and_then(|n| cx.string(n, "name"))?;
    let expect = if let Some(e) = f.get("equals") {
        TextExpect::Equals(cx.literal_string(e, "header `equals`", CMP_HINT)?)
    } else if let Some(m) = f.get("matches") {
        TextExpect::Matches(cx.regex(m, "matches")?)
    } else if let Some(e) = f.get("exists") {
        if cx.boolean(e, "exists")? {
            TextExpect::Exists
        } else {
            TextExpect::Absent
        }
    } else {
        TextExpect::Exists
    };
    Some(Check::Header { name, expect })
}

fn extractors(cx: &mut Ctx, node: &Node) -> Option<Vec<Extractor>> {
    let Some(map) = node.as_map() else {
        cx.type_error(node, "extract: a mapping of variable names to { regex | jsonpath | header | cookie }");
        return None;
    };
    let mut out = Vec::new();
    let mut ok = true;
    for (k, v) in map {
        match extractor(cx, k.name.as_str(), k.span, v) {
            Some(e) => out.push(e),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn extractor(cx: &mut Ctx, name: &str, span: Span, node: &Node) -> Option<Extractor> {
    let f = cx.object(node, &vocab::EXTRACTOR)?;
    let sources: Vec<&str> = vocab::EXTRACTOR.alternatives().into_iter().filter(|k| f.get(k).is_some()).collect();
    if sources.len() != 1 {
        cx.error(
            Diagnostic::new(
                node.span,
                format!("extractor `{name}` needs exactly one of {}", vocab::EXTRACTOR.alternatives().join(", ")),
            )
            .hint("e.g. { jsonpath: \"$.id\" }"),
        );
        return None;
    }
    let match_no =
        match f.get("match_no") {
            Some(m) => match &m.value {
                Value::Int(i) if *i >= -1 => Some(*i),
                _ => {
                    cx.error(Diagnostic::new(m.span, "match_no: a whole number").expected(
                        "1 for the first match (the default), n for the n-th, 0 for a random one, -1 for all",
                    ));
                    None
                }
            },
            None => Some(1),
        };
    let default = match f.get("default") {
        Some(d) => Some(cx.string(d, "default")?),
        None => None,
    };
    let from = match sources[0] {
        "regex" => {
            let regex = cx.regex(f.get("regex")?, "regex")?;
            let group = match f.get("group") {
                Some(g) => usize::try_from(cx.count(g, "group", bounds::ANY)?).unwrap_or(usize::MAX),
                None => usize::from(regex.captures_len() > 1),
            };
            if group >= regex.captures_len() {
                cx.error(Diagnostic::new(f.get("group")?.span, format!("the regex has no group {group}")));
                return None;
            }
            ExtractFrom::Regex { regex, group, match_no: match_no? }
        }
        "jsonpath" => {
            let (_, path) = json_path(cx, f.get("jsonpath")?, "jsonpath")?;
            ExtractFrom::JsonPath { path, match_no: match_no? }
        }
        "header" => ExtractFrom::Header(cx.string(f.get("header")?, "header")?),
        _ => ExtractFrom::Cookie(cx.string(f.get("cookie")?, "cookie")?),
    };
    Some(Extractor { name: Arc::from(name), span, from, default })
}

/// Why a literal URL cannot be sent, if it cannot: not http(s), or relative without a base URL.
fn literal_url_problem(url: &str, has_base: bool) -> Option<(String, String)> {
    if url.starts_with("http://") || url.starts_with("https://") {
        return None;
    }
    if let Some((scheme, _)) = url.split_once("://") {
        return Some((
            format!("`{scheme}://` URLs cannot be sent"),
            "planrun sends http:// and https:// requests".into(),
        ));
    }
    if !has_base {
        return Some((
            format!("`{url}` is relative and the plan has no defaults.base_url"),
            "add `defaults: { base_url: http://host:port }` or write the full URL".into(),
        ));
    }
    None
}
