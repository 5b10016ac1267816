//! HTTP samplers (`HTTPSamplerProxy`, the legacy `HTTPSampler`): URL, method, arguments, body, headers,
//! redirects and timeouts, with the HTTP Request Defaults and header managers of their scope.

use super::kinds::{kind, Kind};
use super::{checks, timers, Cx, Origin, Scope, ORIGIN_MARK};
use crate::import::functions::{has_refs, parse, quote, Seg, When};
use crate::import::tree::{Element, Props};
use crate::import::yaml::{Entry, Item, MapB, Y};
use crate::plan::vocab::METHODS;

/// The (name, value) pairs of a Header Manager, as written.
pub(super) fn headers_of(el: &Element) -> Vec<(String, String)> {
    el.props
        .elements("HeaderManager.headers")
        .into_iter()
        .map(|h| (h.text("Header.name").trim().to_string(), h.text("Header.value").to_string()))
        .filter(|(n, _)| !n.is_empty())
        .collect()
}

/// One argument of a sampler.
struct Arg {
    name: String,
    value: String,
    encode: bool,
    equals: bool,
}

fn args_of(p: &Props) -> Vec<Arg> {
    let Some(args) = p.element("HTTPsampler.Arguments") else { return Vec::new() };
    args.elements("Arguments.arguments")
        .into_iter()
        .map(|a| Arg {
            name: a.text("Argument.name").to_string(),
            value: a.text("Argument.value").to_string(),
            encode: a.flag("HTTPArgument.always_encode", false),
            equals: a.flag("HTTPArgument.use_equals", true),
        })
        .collect()
}

/// A sampler's field, else the innermost HTTP Request Defaults that sets it.
fn field<'a>(p: &'a Props, scope: &Scope<'a>, name: &str) -> &'a str {
    if let Some(v) = p.opt(name) {
        return v;
    }
    scope.defaults.iter().rev().find_map(|d| d.opt(name)).unwrap_or("")
}

/// The think steps of the timers in scope, then the request step.
pub(super) fn request<'e>(cx: &mut Cx, el: &'e Element, scope: &Scope<'e>) -> Vec<Item> {
    let p = &el.props;
    let mut comments: Vec<String> = Vec::new();
    let mut inner = scope.clone();
    inner.path.push(el.name.clone());
    // The sampler's own children: header managers, timers, assertions, extractors.
    let mut own_headers = Vec::new();
    let (mut own_timers, mut own_assertions, mut own_post) = (Vec::new(), Vec::new(), Vec::new());
    for child in &el.children {
        if !child.enabled {
            let c = cx.skip_disabled(&inner, child);
            if !c.is_empty() {
                comments.push(c);
            }
            continue;
        }
        match kind(child) {
            Kind::Header => own_headers.extend(headers_of(child)),
            Kind::Timer => own_timers.push(child),
            Kind::Assertion => own_assertions.push(child),
            Kind::Extractor => own_post.push(child),
            Kind::Cookies => comments.extend(cx.cookie_manager(&inner, child)),
            Kind::Defaults => inner.defaults.push(&child.props),
            Kind::Listener => cx.listeners += 1,
            Kind::Other(why) => comments.push(cx.warn(&inner, child, why)),
            _ => comments.push(cx.warn(&inner, child, "not converted under a sampler".into())),
        }
    }

    // `here` is where the sampler is (for what is said about it); `inner` is under it (for its children).
    let mut here = scope.clone();
    here.defaults.clone_from(&inner.defaults);
    let mut out: Vec<Item> = Vec::new();
    for t in scope.timers.iter().chain(own_timers.iter()) {
        out.extend(timers::think(cx, t, &inner));
    }

    let label = if el.name.trim().is_empty() { "HTTP Request".to_string() } else { el.name.clone() };
    let mut req = MapB::default();
    // Method: plain text in planrun.
    let method_raw = p.opt("HTTPSampler.method").unwrap_or("GET");
    let method = match static_text(cx, method_raw).map(|m| m.trim().to_ascii_uppercase()) {
        Some(m) if METHODS.contains(&m.as_str()) => m,
        _ => {
            comments.push(cx.warn(
                &here,
                el,
                format!("method `{method_raw}` is not one planrun sends ({}); GET used", METHODS.join(", ")),
            ));
            "GET".into()
        }
    };
    if method != "GET" {
        req.put("method", Y::s(method.clone()));
    }

    // URL: origin (scheme, host, port) and path.
    let path_raw = field(p, &here, "HTTPSampler.path");
    let url = if path_raw.starts_with("http://") || path_raw.starts_with("https://") {
        let (t, mut c) = cx.text(&here, el, path_raw, When::Run);
        comments.append(&mut c);
        t
    } else {
        let (path_t, mut c) = cx.text(&here, el, path_raw, When::Run);
        comments.append(&mut c);
        // JMeter adds a `/` when the path, its variables replaced, does not start with one.
        let path_t = match starts_with_slash(cx, path_raw) {
            Some(true) => path_t,
            Some(false) => format!("/{path_t}"),
            None => {
                comments.push(cx.warn(
                    &here,
                    el,
                    format!(
                        "path `{path_raw}` starts with a value known only at run time; JMeter adds `/` only when \
                         that value does not start with one, planrun's URL always has it: check the path"
                    ),
                ));
                if path_t.starts_with('/') {
                    path_t
                } else {
                    format!("/{path_t}")
                }
            }
        };
        let origin = origin(cx, p, &here, el, &mut comments);
        format!("{ORIGIN_MARK}{origin}{ORIGIN_MARK}{path_t}")
    };

    // Arguments and body.
    let mut args = args_of(p);
    for d in inner.defaults.iter() {
        for a in args_of(d) {
            if !args.iter().any(|x| x.name == a.name) {
                args.push(a);
            }
        }
    }
    args.retain(|a| !(a.name.is_empty() && a.value.is_empty()));
    let files: Vec<(String, String, String)> = p
        .element("HTTPsampler.Files")
        .map(|f| f.elements("HTTPFileArgs.files"))
        .unwrap_or_default()
        .into_iter()
        .map(|f| {
            (f.text("File.path").to_string(), f.text("File.paramname").to_string(), f.text("File.mimetype").to_string())
        })
        .filter(|(path, _, _)| !path.trim().is_empty())
        .collect();
    let raw_body = p.flag("HTTPSampler.postBodyRaw", false);
    let multipart = p.flag("HTTPSampler.DO_MULTIPART_POST", false) || !files.is_empty();

    // Headers: outer managers first, inner ones replace a header of the same name.
    let mut headers: Vec<(String, String)> = Vec::new();
    for (k, v) in scope.headers.iter().cloned().chain(own_headers) {
        if let Some(slot) = headers.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&k)) {
            slot.1 = v;
        } else {
            headers.push((k, v));
        }
    }
    let content_type =
        headers.iter().position(|(n, _)| n.eq_ignore_ascii_case("content-type")).map(|i| headers.remove(i).1);

    let mut url = url;
    let query_method = matches!(method.as_str(), "GET" | "DELETE" | "OPTIONS");
    let mut body_key: Option<(&str, Y)> = None;
    let mut explicit_ct: Option<String> = None;
    if raw_body {
        let text: String = args.iter().map(|a| a.value.as_str()).collect();
        let (t, mut c) = cx.text(&here, el, &text, When::Run);
        comments.append(&mut c);
        body_key = Some(("body", Y::s(t)));
        if let Some(ct) = content_type.clone() {
            match static_text(cx, &ct) {
                Some(s) => explicit_ct = Some(s),
                None => headers.push(("Content-Type".into(), ct)),
            }
        }
    } else if multipart && !args.is_empty() || !files.is_empty() {
        let mut m = MapB::default();
        for a in &args {
            let (t, mut c) = cx.text(&here, el, &a.value, When::Run);
            comments.append(&mut c);
            if has_refs(&a.name) || m.0.iter().any(|e| e.key == a.name) {
                comments.push(cx.warn(
                    &here,
                    el,
                    format!("multipart field `{}`: a name read at run time or given twice is not converted", a.name),
                ));
                continue;
            }
            m.put(a.name.clone(), Y::s(t));
        }
        for (path, param, mime) in &files {
            let Some(path) = static_text(cx, path) else {
                comments.push(cx.warn(
                    &here,
                    el,
                    format!("file `{path}` is read at run time in JMeter; not converted"),
                ));
                continue;
            };
            let mut f = MapB::default();
            f.put("file", Y::s(path.clone()));
            if !mime.trim().is_empty() {
                f.put("content_type", Y::s(mime.trim()));
            }
            let key = if param.trim().is_empty() { "file".to_string() } else { param.trim().to_string() };
            m.put_commented(
                key,
                f.done(),
                vec!["relative to this plan's directory; it must exist when the plan loads".into()],
            );
        }
        if !m.0.is_empty() {
            body_key = Some(("multipart", m.done()));
        }
        if let Some(ct) = &content_type {
            if !ct.to_ascii_lowercase().starts_with("multipart/form-data") {
                comments.push(cx.warn(
                    &here,
                    el,
                    format!("Content-Type `{ct}` dropped: a multipart body sets its own"),
                ));
            }
        }
    } else if !args.is_empty() && query_method {
        query(cx, &here, el, &args, &mut url, &mut req, &mut comments);
        if let Some(ct) = content_type.clone() {
            headers.push(("Content-Type".into(), ct));
        }
    } else if !args.is_empty() && method != "HEAD" {
        body_key = Some(form(cx, &here, el, &args, &mut comments));
        if let Some(ct) = &content_type {
            if !ct.to_ascii_lowercase().starts_with("application/x-www-form-urlencoded") {
                comments.push(cx.warn(
                    &here,
                    el,
                    format!("Content-Type `{ct}` dropped: a form body is sent as application/x-www-form-urlencoded"),
                ));
            }
        }
    } else {
        if !args.is_empty() {
            comments.push(cx.warn(&here, el, "JMeter sends no parameters with HEAD; they are left out".into()));
        }
        if let Some(ct) = content_type.clone() {
            headers.push(("Content-Type".into(), ct));
        }
    }
    req.0.insert(if method != "GET" { 1 } else { 0 }, Entry { key: "url".into(), value: Y::s(url), comments: vec![] });
    if !headers.is_empty() {
        let mut h = MapB::default();
        for (k, v) in headers {
            if has_refs(&k) {
                comments.push(cx.warn(&here, el, format!("header name `{k}` is read at run time; not converted")));
                continue;
            }
            let (t, mut c) = cx.text(&here, el, &v, When::Run);
            comments.append(&mut c);
            h.put(k, Y::s(t));
        }
        if !h.0.is_empty() {
            req.put("headers", h.done());
        }
    }
    if let Some((k, v)) = body_key {
        req.put(k, v);
        if let Some(ct) = explicit_ct {
            req.put("content_type", Y::s(ct));
        }
    }
    let follow = p.flag("HTTPSampler.follow_redirects", false) || p.flag("HTTPSampler.auto_redirects", false);
    if !follow {
        req.put("follow_redirects", Y::Bool(false));
    }
    if let Some(t) = timeout(cx, p, &here, el, &mut comments) {
        req.put("timeout", t);
    }
    if !p.flag("HTTPSampler.use_keepalive", true) {
        req.put("keep_alive", Y::Bool(false));
    }
    if field(p, &here, "HTTPSampler.image_parser").trim().eq_ignore_ascii_case("true") {
        let from = if p.opt("HTTPSampler.image_parser").is_some() { "" } else { " (set in HTTP Request Defaults)" };
        comments.push(cx.warn(
            &here,
            el,
            format!("\"Retrieve All Embedded Resources\"{from} is dropped: only the page itself is requested, not its images, scripts and styles"),
        ));
    }
    let enc = field(p, &here, "HTTPSampler.contentEncoding");
    if !enc.is_empty() && !enc.eq_ignore_ascii_case("utf-8") && !enc.eq_ignore_ascii_case("utf8") {
        comments.push(cx.warn(&here, el, format!("content encoding `{enc}` is not converted: planrun sends UTF-8")));
    }

    let mut step = MapB::default();
    step.put("name", Y::s(label));
    step.put("request", req.done());
    let assertions: Vec<&Element> = scope.assertions.iter().copied().chain(own_assertions).collect();
    let (assert, mut c) = checks::assertions(cx, &inner, &assertions);
    comments.append(&mut c);
    if !assert.is_empty() {
        step.put("assert", Y::Seq(assert));
    }
    let post: Vec<&Element> = scope.post.iter().copied().chain(own_post).collect();
    let (extract, mut c) = checks::extractors(cx, &inner, &post);
    comments.append(&mut c);
    if !extract.is_empty() {
        step.put("extract", Y::Map(extract));
    }
    out.push(Item { value: Some(step.done()), comments });
    out
}

/// The text `s` stands for when it reads only User Defined Variables with plain values; None otherwise.
pub(super) fn static_text(cx: &Cx, s: &str) -> Option<String> {
    fn go(cx: &Cx, s: &str, depth: u32) -> Option<String> {
        let mut out = String::new();
        for seg in parse(s) {
            match seg {
                Seg::Lit(t) => out.push_str(&t),
                Seg::Var(n) if depth < 16 => out.push_str(&go(cx, cx.names.get(&n)?.udv_value.as_deref()?, depth + 1)?),
                _ => return None,
            }
        }
        Some(out)
    }
    go(cx, s, 0)
}

/// Whether the path `s` starts with `/` once its variables are replaced; None when that is known only at run time.
fn starts_with_slash(cx: &Cx, s: &str) -> Option<bool> {
    for seg in parse(s) {
        let text = match seg {
            Seg::Lit(t) => t,
            Seg::Var(n) => static_text(cx, &format!("${{{n}}}"))?,
            Seg::Func { raw, .. } => static_text(cx, &raw)?,
        };
        if let Some(c) = text.chars().next() {
            return Some(c == '/');
        }
    }
    Some(false)
}

/// The origin of a request without a host.
pub(super) const RELATIVE: usize = usize::MAX;

/// The origin index of a sampler's scheme, host and port (defaults applied).
fn origin(cx: &mut Cx, p: &Props, scope: &Scope, el: &Element, comments: &mut Vec<String>) -> usize {
    let proto = field(p, scope, "HTTPSampler.protocol");
    let proto = if proto.is_empty() { "http" } else { proto };
    let domain = field(p, scope, "HTTPSampler.domain");
    let port = field(p, scope, "HTTPSampler.port");
    let default_port = match proto.to_ascii_lowercase().as_str() {
        "https" => "443",
        _ => "80",
    };
    let mut jm = String::new();
    if !domain.is_empty() {
        jm = format!("{proto}://{domain}");
        if !port.is_empty() && port != default_port {
            jm.push(':');
            jm.push_str(port);
        }
    }
    if jm.is_empty() {
        // No host anywhere: JMeter could not send it either; relative to base_url here.
        return RELATIVE;
    }
    let load = cx.load_value(&jm);
    let run = {
        let (t, mut c) = cx.text(scope, el, &jm, When::Run);
        comments.append(&mut c);
        t
    };
    let key = load.clone().unwrap_or_else(|| run.clone());
    if let Some(i) = cx.origins.iter().position(|o| o.load.as_ref().unwrap_or(&o.run) == &key) {
        cx.origins[i].count += 1;
        return i;
    }
    cx.origins.push(Origin { load, run, count: 1 });
    cx.origins.len() - 1
}

/// Whether form-encoding `s` gives `s` back.
fn form_safe(s: &str) -> bool {
    s.chars().all(|c| c.is_ascii_alphanumeric() || "*-._".contains(c))
}

/// GET-like arguments: a `query` map when planrun's form encoding sends what JMeter sends, else written
/// into the URL.
fn query(
    cx: &mut Cx,
    scope: &Scope,
    el: &Element,
    args: &[Arg],
    url: &mut String,
    req: &mut MapB,
    comments: &mut Vec<String>,
) {
    let names_ok = args.iter().all(|a| !a.name.is_empty() && !has_refs(&a.name))
        && args.iter().enumerate().all(|(i, a)| !args[..i].iter().any(|b| b.name == a.name));
    // JMeter sends an argument that is not "encoded" as written; planrun's `query` encodes every value.
    let as_map = names_ok
        && args.iter().all(|a| a.equals || !a.value.is_empty())
        && args.iter().all(|a| a.encode || (form_safe(&a.name) && literal_parts_safe(&a.value)));
    if as_map {
        let mut q = MapB::default();
        for a in args {
            let (t, mut c) = cx.text(scope, el, &a.value, When::Run);
            comments.append(&mut c);
            q.put(a.name.clone(), Y::s(t));
        }
        req.put("query", q.done());
        return;
    }
    let mut parts = Vec::new();
    for a in args {
        let name = encoded(cx, scope, el, &a.name, a.encode, comments);
        let value = encoded(cx, scope, el, &a.value, a.encode, comments);
        parts.push(if !a.equals && a.value.is_empty() { name } else { format!("{name}={value}") });
    }
    url.push(if url.contains('?') { '&' } else { '?' });
    url.push_str(&parts.join("&"));
}

/// Whether the text parts of `s` are sent alike form-encoded or not.
fn literal_parts_safe(s: &str) -> bool {
    parse(s).iter().all(|seg| match seg {
        Seg::Lit(t) => form_safe(t),
        _ => true,
    })
}

/// An argument's name or value for the URL: percent-encoded when JMeter encodes it.
fn encoded(cx: &mut Cx, scope: &Scope, el: &Element, s: &str, encode: bool, comments: &mut Vec<String>) -> String {
    if !encode {
        let (t, mut c) = cx.text(scope, el, s, When::Run);
        comments.append(&mut c);
        return t;
    }
    if !has_refs(s) {
        return url::form_urlencoded::byte_serialize(s.as_bytes()).collect();
    }
    let (e, mut c) = cx.expr(scope, el, s, When::Run);
    comments.append(&mut c);
    format!("{{{{ {e} | urlencode }}}}")
}

/// POST-like arguments: a `form` map, or a `body` when names repeat or are read at run time.
fn form(cx: &mut Cx, scope: &Scope, el: &Element, args: &[Arg], comments: &mut Vec<String>) -> (&'static str, Y) {
    let names_ok = args.iter().all(|a| !a.name.is_empty() && !has_refs(&a.name))
        && args.iter().enumerate().all(|(i, a)| !args[..i].iter().any(|b| b.name == a.name));
    // JMeter decodes an argument that is not "encoded", its variables replaced, and encodes it again: the
    // text around the variables is decoded here (a variable's value is sent as it is).
    let value_of = |a: &Arg| if a.encode { a.value.clone() } else { decode_text(&a.value) };
    if names_ok {
        let mut f = MapB::default();
        for a in args {
            let (t, mut c) = cx.text(scope, el, &value_of(a), When::Run);
            comments.append(&mut c);
            f.put(a.name.clone(), Y::s(t));
        }
        return ("form", f.done());
    }
    let mut parts = Vec::new();
    for a in args {
        let name = if a.encode { a.name.clone() } else { decode_text(&a.name) };
        let n = encoded(cx, scope, el, &name, true, comments);
        let v = encoded(cx, scope, el, &value_of(a), true, comments);
        parts.push(format!("{n}={v}"));
    }
    comments.push(format!(
        "planrun import: {}: parameters given twice or named at run time are sent as a form-encoded body",
        super::kinds::label(el)
    ));
    let _ = quote;
    ("body", Y::s(parts.join("&")))
}

/// `s` with its text form-decoded and its `${...}` references kept; text that would decode into a reference
/// is kept as written.
fn decode_text(s: &str) -> String {
    parse(s)
        .into_iter()
        .map(|seg| match seg {
            Seg::Lit(t) => {
                let d = decode(&t);
                if d.contains("${") {
                    t
                } else {
                    d
                }
            }
            Seg::Var(n) => format!("${{{n}}}"),
            Seg::Func { raw, .. } => raw,
        })
        .collect()
}

fn decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}

/// `connect_timeout` + `response_timeout` (ms) as one whole-request timeout.
fn timeout(cx: &mut Cx, p: &Props, scope: &Scope, el: &Element, comments: &mut Vec<String>) -> Option<Y> {
    let connect = field(p, scope, "HTTPSampler.connect_timeout");
    let response = field(p, scope, "HTTPSampler.response_timeout");
    if connect.is_empty() && response.is_empty() {
        return None;
    }
    let ms = |s: &str| if s.is_empty() { Some(0) } else { s.trim().parse::<u64>().ok() };
    match (ms(connect), ms(response)) {
        (Some(c), Some(r)) if c + r > 0 => {
            comments.push(cx.warn(
                scope,
                el,
                format!("JMeter's connect ({connect} ms) and response ({response} ms) timeouts added up into one whole-request timeout"),
            ));
            Some(Y::s(format!("{}ms", c + r)))
        }
        (Some(_), Some(_)) => None,
        _ => {
            comments.push(cx.warn(scope, el, format!("timeouts `{connect}`/`{response}` are not numbers; left out")));
            None
        }
    }
}
