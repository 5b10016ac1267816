//! A HAR's entries read into requests: which are kept, their headers without what a client sets itself,
//! their bodies; texts held as pieces so that recorded values can be replaced by templates.

use std::collections::BTreeMap;

use serde_json::Value;

use super::HarOptions;
use crate::import::error::Warning;
use crate::import::functions::escape_text;
use crate::import::requests::{Origins, Secrets};
use crate::import::yaml::{Item, MapB, Y};
use crate::import::ImportError;

/// A piece of a recorded text: as recorded, or a template put in its place.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Lit(String),
    Tpl(String),
}

/// A recorded text (a URL, a header value, a body), some of it replaced by templates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Text(pub Vec<Piece>);

impl Text {
    pub fn lit(s: &str) -> Text {
        Text(vec![Piece::Lit(s.to_string())])
    }

    /// Replaces every recorded `value` by `template`; how many were replaced.
    pub fn replace(&mut self, value: &str, template: &str) -> usize {
        if value.is_empty() {
            return 0;
        }
        let mut n = 0;
        let mut out = Vec::new();
        for p in self.0.drain(..) {
            match p {
                Piece::Lit(s) if s.contains(value) => {
                    let mut parts = s.split(value).peekable();
                    while let Some(part) = parts.next() {
                        if !part.is_empty() {
                            out.push(Piece::Lit(part.to_string()));
                        }
                        if parts.peek().is_some() {
                            out.push(Piece::Tpl(template.to_string()));
                            n += 1;
                        }
                    }
                }
                other => out.push(other),
            }
        }
        self.0 = out;
        n
    }

    pub fn contains(&self, value: &str) -> bool {
        self.0.iter().any(|p| matches!(p, Piece::Lit(s) if s.contains(value)))
    }

    /// The text as a template.
    pub fn render(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => escape_text(s),
                Piece::Tpl(t) => t.clone(),
            })
            .collect()
    }
}

/// A request body.
#[derive(Debug, Clone)]
pub enum Body {
    /// The bytes as recorded, with their Content-Type.
    Text { text: Text, mime: String },
    /// Form fields recorded as params only.
    Form(Vec<(String, Text)>),
    /// Multipart fields recorded as params only (files are left out with a warning).
    Multipart(Vec<(String, Text)>),
}

/// The response, as far as the recording kept it.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub headers: Vec<(String, String)>,
    pub mime: String,
    pub text: Option<String>,
}

/// One kept entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its number in the HAR, from 1.
    pub number: usize,
    pub method: String,
    pub origin: String,
    pub rest: Text,
    pub headers: Vec<(String, Text)>,
    pub body: Option<Body>,
    pub page: Option<String>,
    pub started_ms: Option<i64>,
    pub time_ms: i64,
    pub response: Response,
    pub comments: Vec<String>,
}

/// What was read.
pub struct Read {
    pub entries: Vec<Entry>,
    /// Page id to title.
    pub pages: BTreeMap<String, String>,
    pub creator: Option<String>,
    /// Why entries were left out, and how many.
    pub left_out: Vec<(String, usize)>,
}

/// Headers a client writes itself, and those planrun takes elsewhere (Cookie).
const CLIENT_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "proxy-connection",
    "http2-settings",
    "cookie",
];

const STATIC_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "svg", "ico", "webp", "avif", "bmp", "woff", "woff2", "ttf", "otf", "eot", "css",
    "js", "mjs", "map", "mp4", "webm", "mp3", "ogg", "wav",
];

const ANALYTICS_HOSTS: &[&str] = &[
    "google-analytics.com",
    "analytics.google.com",
    "googletagmanager.com",
    "doubleclick.net",
    "googlesyndication.com",
    "googleadservices.com",
    "facebook.net",
    "hotjar.com",
    "segment.io",
    "segment.com",
    "mixpanel.com",
    "nr-data.net",
    "newrelic.com",
    "clarity.ms",
    "bat.bing.com",
    "sentry.io",
    "amplitude.com",
    "fullstory.com",
    "scorecardresearch.com",
];

/// Which entries are kept.
pub struct Filters {
    include_hosts: Vec<String>,
    exclude: Vec<regex::Regex>,
    keep_static: bool,
}

impl Filters {
    pub fn new(o: &HarOptions) -> Result<Filters, String> {
        let exclude = o
            .exclude
            .iter()
            .map(|p| regex::Regex::new(p).map_err(|e| format!("--exclude `{p}` is not a regular expression: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(Filters {
            include_hosts: o.include_hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
            exclude,
            keep_static: o.keep_static,
        })
    }

    /// Why an entry is left out, if it is.
    fn left_out(&self, url: &str, host: &str, path: &str, response_mime: &str) -> Option<&'static str> {
        if !self.include_hosts.is_empty() && !self.include_hosts.iter().any(|h| h == host) {
            return Some("to other hosts (--include-host)");
        }
        if self.exclude.iter().any(|r| r.is_match(url)) {
            return Some("matching --exclude");
        }
        if self.keep_static {
            return None;
        }
        if ANALYTICS_HOSTS.iter().any(|a| host == *a || host.ends_with(&format!(".{a}"))) {
            return Some("to analytics hosts");
        }
        let ext = path.rsplit('/').next().and_then(|f| f.rsplit_once('.')).map(|(_, e)| e.to_ascii_lowercase());
        let mime = response_mime.to_ascii_lowercase();
        let static_mime =
            ["image/", "font/", "text/css", "javascript", "video/", "audio/"].iter().any(|m| mime.contains(m));
        if static_mime || ext.is_some_and(|e| STATIC_EXTENSIONS.contains(&e.as_str())) {
            return Some("static assets (images, fonts, styles, scripts)");
        }
        None
    }
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .map(|a| a.iter().map(|h| (s(h, "name").to_string(), s(h, "value").to_string())).collect())
        .unwrap_or_default()
}

fn not_har(message: &str) -> ImportError {
    ImportError::Har { line: 1, column: 1, message: format!("not a HAR file: {message}") }
}

/// The entries of `doc` that are kept, in order.
pub fn read(doc: &Value, filters: &Filters, warnings: &mut Vec<Warning>) -> Result<Read, ImportError> {
    let log = doc.get("log").ok_or_else(|| not_har("no `log` object at the top"))?;
    let list = log.get("entries").and_then(Value::as_array).ok_or_else(|| not_har("`log.entries` is not a list"))?;
    let pages = log
        .get("pages")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .map(|pg| {
                    let id = s(pg, "id").to_string();
                    let title = s(pg, "title");
                    (id.clone(), if title.trim().is_empty() { id } else { title.to_string() })
                })
                .collect()
        })
        .unwrap_or_default();
    let creator = log.get("creator").map(|c| format!("{} {}", s(c, "name"), s(c, "version")).trim().to_string());
    let mut entries = Vec::new();
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    for (i, e) in list.iter().enumerate() {
        let number = i + 1;
        let req = e.get("request").ok_or_else(|| not_har(&format!("entry {number} has no `request`")))?;
        let url = s(req, "url");
        let Some((origin, rest)) = crate::import::requests::split_url(url) else {
            *left.entry("not http or https (data:, ws:, blob:...)".into()).or_insert(0) += 1;
            continue;
        };
        let host =
            url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase)).unwrap_or_default();
        let resp = e.get("response").cloned().unwrap_or(Value::Null);
        let content = resp.get("content").cloned().unwrap_or(Value::Null);
        let mime = s(&content, "mimeType").to_string();
        let path = rest.split('?').next().unwrap_or("");
        if let Some(why) = filters.left_out(url, &host, path, &mime) {
            *left.entry(why.into()).or_insert(0) += 1;
            continue;
        }
        let method = s(req, "method").to_ascii_uppercase();
        if !crate::plan::vocab::METHODS.contains(&method.as_str()) {
            warnings.push(Warning {
                path: format!("entry {number}"),
                message: format!("method `{method}` is not one planrun sends: left out"),
                line: 0,
            });
            continue;
        }
        let mut comments = Vec::new();
        let headers: Vec<(String, Text)> = pairs(req.get("headers").unwrap_or(&Value::Null))
            .into_iter()
            .filter(|(n, _)| !n.starts_with(':') && !CLIENT_HEADERS.contains(&n.to_ascii_lowercase().as_str()))
            .map(|(n, v)| (n, Text::lit(&v)))
            .collect();
        let mut headers = headers;
        // Cookies the recording's responses set are the user's jar's; the others were there before it.
        let sent_cookie = pairs(req.get("headers").unwrap_or(&Value::Null))
            .into_iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("cookie"))
            .map(|(_, v)| v)
            .collect::<Vec<_>>()
            .join("; ");
        if !sent_cookie.is_empty() {
            let set_before: Vec<String> = entries.iter().flat_map(|p: &Entry| set_cookie_names(&p.response)).collect();
            let kept: Vec<&str> = sent_cookie
                .split(';')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .filter(|c| !set_before.iter().any(|n| c.split('=').next() == Some(n.as_str())))
                .collect();
            if !kept.is_empty() {
                headers.push(("Cookie".into(), Text::lit(&kept.join("; "))));
            }
        }
        let body = body(req, number, warnings, &mut comments);
        let text = match (s(&content, "encoding"), content.get("text").and_then(Value::as_str)) {
            ("base64", Some(b)) => {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD.decode(b).ok().and_then(|d| String::from_utf8(d).ok())
            }
            (_, t) => t.map(str::to_string),
        };
        let started_ms =
            chrono::DateTime::parse_from_rfc3339(s(e, "startedDateTime")).ok().map(|d| d.timestamp_millis());
        let time_ms =
            e.get("time").and_then(Value::as_f64).filter(|t| t.is_finite() && *t >= 0.0 && *t < 1e12).unwrap_or(0.0);
        entries.push(Entry {
            number,
            method,
            origin,
            rest: Text::lit(&rest),
            headers,
            body,
            page: e.get("pageref").and_then(Value::as_str).map(str::to_string),
            started_ms,
            time_ms: time_ms.round() as i64,
            response: Response { headers: pairs(resp.get("headers").unwrap_or(&Value::Null)), mime, text },
            comments,
        });
    }
    Ok(Read { entries, pages, creator, left_out: left.into_iter().collect() })
}

fn set_cookie_names(r: &Response) -> Vec<String> {
    r.headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
        .flat_map(|(_, v)| v.lines().map(|l| l.split('=').next().unwrap_or("").trim().to_string()).collect::<Vec<_>>())
        .filter(|n| !n.is_empty())
        .collect()
}

fn body(req: &Value, number: usize, warnings: &mut Vec<Warning>, comments: &mut Vec<String>) -> Option<Body> {
    let pd = req.get("postData")?;
    let mime = s(pd, "mimeType").to_string();
    if let Some(text) = pd.get("text").and_then(Value::as_str) {
        return Some(Body::Text { text: Text::lit(text), mime });
    }
    let params = pd.get("params").and_then(Value::as_array)?;
    let mut fields = Vec::new();
    for p in params {
        if p.get("fileName").and_then(Value::as_str).is_some() {
            let message = format!("the uploaded file of field `{}` is not in the recording: left out", s(p, "name"));
            comments.push(format!("planrun import: {message}"));
            warnings.push(Warning { path: format!("entry {number}"), message, line: 0 });
            continue;
        }
        fields.push((s(p, "name").to_string(), Text::lit(s(p, "value"))));
    }
    if mime.to_ascii_lowercase().starts_with("multipart/") {
        Some(Body::Multipart(fields))
    } else {
        Some(Body::Form(fields))
    }
}

/// Authorization headers, cookies the recording did not set, and password fields become secret properties.
pub fn secrets(entries: &mut [Entry], secrets: &mut Secrets) {
    let password = regex::Regex::new(r"(?i)^(pass|passwd|password|pwd|passphrase|secret)$").expect("a valid regex");
    let json_password =
        regex::Regex::new(r#""(?i:pass|passwd|password|pwd|passphrase|secret)"\s*:\s*"((?:[^"\\]|\\.)*)""#)
            .expect("a valid regex");
    for e in entries.iter_mut() {
        for (name, value) in e.headers.iter_mut() {
            let base = match name.to_ascii_lowercase().as_str() {
                "authorization" => "authorization",
                "cookie" => "cookie",
                "x-api-key" | "api-key" => "api_key",
                _ => continue,
            };
            if let [Piece::Lit(v)] = value.0.as_slice() {
                let v = v.clone();
                let r = secrets.reference(base, &v);
                value.replace(&v, &r);
            }
        }
        match &mut e.body {
            Some(Body::Text { text, mime }) => {
                let m = mime.to_ascii_lowercase();
                let literal: String =
                    text.0.iter().filter_map(|p| if let Piece::Lit(s) = p { Some(s.as_str()) } else { None }).collect();
                if m.starts_with("application/x-www-form-urlencoded") {
                    for pair in literal.split('&') {
                        if let Some((n, v)) = pair.split_once('=') {
                            let decoded = url::form_urlencoded::parse(n.as_bytes()).next().map(|(k, _)| k.into_owned());
                            let dn = decoded.unwrap_or_else(|| n.to_string());
                            if password.is_match(&dn) && !v.is_empty() {
                                let r = secrets.reference("password", v);
                                text.replace(&format!("{n}={v}"), &format!("{}={r}", escape_text(n)));
                            }
                        }
                    }
                } else if m.contains("json") {
                    let values: Vec<String> = json_password
                        .captures_iter(&literal)
                        .filter_map(|c| Some(c.get(1)?.as_str().to_string()))
                        .collect();
                    for v in values.into_iter().filter(|v| !v.is_empty()) {
                        let r = secrets.reference("password", &v);
                        text.replace(&format!("\"{v}\""), &format!("\"{r}\""));
                    }
                }
            }
            Some(Body::Form(fields)) | Some(Body::Multipart(fields)) => {
                for (n, v) in fields.iter_mut() {
                    if password.is_match(n) {
                        if let [Piece::Lit(val)] = v.0.as_slice() {
                            let val = val.clone();
                            let r = secrets.reference("password", &val);
                            v.replace(&val, &r);
                        }
                    }
                }
            }
            None => {}
        }
    }
}

/// The request step of an entry, with the extractors its response feeds.
pub fn step(e: &Entry, origins: &Origins, extract: Option<&Vec<(String, Y)>>) -> Item {
    let mut req = MapB::default();
    if e.method != "GET" {
        req.put("method", Y::s(e.method.clone()));
    }
    req.put("url", Y::s(origins.url_template(&e.origin, &e.rest.render())));
    let mut content_type = None;
    let mut h = MapB::default();
    for (n, v) in &e.headers {
        if n.eq_ignore_ascii_case("content-type") {
            content_type = Some(v.render());
            continue;
        }
        h.put(n.clone(), Y::s(v.render()));
    }
    if !h.0.is_empty() {
        req.put("headers", h.done());
    }
    match &e.body {
        Some(Body::Text { text, mime }) => {
            req.put("body", Y::s(text.render()));
            let ct = content_type.unwrap_or_else(|| escape_text(mime));
            if !ct.is_empty() {
                req.put("content_type", Y::s(ct));
            }
        }
        Some(Body::Form(fields)) => {
            let mut f = MapB::default();
            for (n, v) in fields {
                f.put(n.clone(), Y::s(v.render()));
            }
            req.put("form", f.done());
        }
        Some(Body::Multipart(fields)) => {
            let mut f = MapB::default();
            for (n, v) in fields {
                f.put(n.clone(), Y::s(v.render()));
            }
            req.put("multipart", f.done());
        }
        None => {}
    }
    let mut step = MapB::default();
    let path = e.rest.0.iter().map(|p| match p {
        Piece::Lit(s) => s.clone(),
        Piece::Tpl(_) => "*".into(),
    });
    let path: String = path.collect();
    step.put("name", Y::s(format!("{} {}", e.method, path.split('?').next().unwrap_or("/"))));
    step.put("request", req.done());
    if let Some(x) = extract {
        let mut m = MapB::default();
        for (name, how) in x {
            m.put(name.clone(), how.clone());
        }
        step.put("extract", m.done());
    }
    Item { value: Some(step.done()), comments: e.comments.clone() }
}
