//! curl commands (`planrun import --curl '...'`, or a file of them as a browser's "Copy as cURL" and "Copy all
//! as cURL" write them) made into a plan: one request step per command, in order, with what each option
//! sends. Origins become properties (`base_url` for the most used one), credentials and cookies secret
//! properties; every option not converted is a warning.

mod options;
mod words;

use self::options::{Curl, Data, Part};
use self::words::Word;
use super::convert::{Converted, Options};
use super::error::Warning;
use super::functions::escape_text;
use super::requests::{Origins, Secrets};
use super::yaml::{Item, MapB, Y};
use super::ImportError;

/// Whether `text` reads as curl commands: its first word, past comments and blank lines, is `curl`.
pub fn looks_like_curl(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.split_whitespace().next().is_some_and(is_curl))
}

fn is_curl(word: &str) -> bool {
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
    name == "curl" || name.eq_ignore_ascii_case("curl.exe")
}

/// One converted command.
struct Step {
    origin: String,
    /// Path and query.
    rest: String,
    request: MapB,
    name: String,
    comments: Vec<String>,
}

/// Converts the curl commands of `text`.
pub fn import(text: &str, options: &Options) -> Result<Converted, ImportError> {
    let commands = words::commands(text)?;
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let mut steps = Vec::new();
    let mut secrets = Secrets::default();
    for (n, words) in commands.iter().enumerate() {
        let first = &words[0];
        let path = format!("curl command {}", n + 1);
        if !is_curl(&first.text) {
            warnings.push(Warning {
                path,
                message: format!("`{}` is not a curl command: skipped", first.text),
                line: first.line,
            });
            continue;
        }
        let curl = options::parse(&words[1..])?;
        let step = step(first, curl, &path, &mut secrets, &mut warnings, &mut notes)?;
        steps.push(step);
    }
    if steps.is_empty() {
        return Err(ImportError::Empty("no curl command in the text".into()));
    }
    Ok(Converted { yaml: plan(options, steps, secrets), warnings, disabled: Vec::new(), listeners: 0, notes })
}

fn step(
    first: &Word,
    c: Curl,
    path: &str,
    secrets: &mut Secrets,
    warnings: &mut Vec<Warning>,
    notes: &mut Vec<String>,
) -> Result<Step, ImportError> {
    let Some(raw_url) = c.url.clone() else {
        return Err(ImportError::Curl { line: first.line, column: first.column, message: "curl without a URL".into() });
    };
    let mut comments = Vec::new();
    let mut warn = |message: String, comments: &mut Vec<String>| {
        comments.push(format!("planrun import: {message}"));
        warnings.push(Warning { path: path.to_string(), message, line: first.line });
    };
    for w in &c.warnings {
        warn(w.clone(), &mut comments);
    }
    if !c.output_only.is_empty() {
        notes.push(format!(
            "{path} (line {}): {} only shape(s) curl's own output, not the request",
            first.line,
            c.output_only.join(" ")
        ));
    }
    // curl reads a URL without a scheme as http://; it never sends the fragment.
    let with_scheme = if raw_url.contains("://") { raw_url.clone() } else { format!("http://{raw_url}") };
    let Some((origin, mut rest)) = super::requests::split_url(&with_scheme) else {
        let scheme = with_scheme.split("://").next().unwrap_or("");
        let why = if matches!(scheme, "http" | "https") {
            "not a URL curl can send".to_string()
        } else {
            format!("planrun sends http and https, not {scheme}")
        };
        return Err(ImportError::Curl {
            line: first.line,
            column: first.column,
            message: format!("`{raw_url}`: {why}"),
        });
    };
    if !c.globoff && (rest.contains('[') || rest.contains('{')) {
        warn(
            "curl expands `[...]` and `{...}` in a URL into several requests (without -g); sent as written".into(),
            &mut comments,
        );
    }
    for q in &c.url_queries {
        rest.push(if rest.contains('?') { '&' } else { '?' });
        rest.push_str(q);
    }

    let mut req = MapB::default();
    let has_body = !c.data.is_empty() || !c.parts.is_empty();
    let method = match (&c.method, c.head, c.get, has_body) {
        (Some(m), ..) => m.to_ascii_uppercase(),
        (None, true, ..) => "HEAD".into(),
        (None, false, true, _) => "GET".into(),
        (None, false, false, true) => "POST".into(),
        _ => "GET".into(),
    };
    if !crate::plan::vocab::METHODS.contains(&method.as_str()) {
        return Err(ImportError::Curl {
            line: first.line,
            column: first.column,
            message: format!("method `{method}` is not one planrun sends ({})", crate::plan::vocab::METHODS.join(", ")),
        });
    }
    if method != "GET" {
        req.put("method", Y::s(method.clone()));
    }

    // The body, or with -G the query.
    let json = c.data.iter().any(|d| matches!(d, Data::Json(_)));
    let joined: String = {
        let mut s = String::new();
        for d in &c.data {
            match d {
                Data::Raw(t) => {
                    if !s.is_empty() {
                        s.push('&');
                    }
                    s.push_str(t);
                }
                Data::Json(t) => s.push_str(t),
            }
        }
        s
    };
    if c.get && !c.data.is_empty() {
        rest.push(if rest.contains('?') { '&' } else { '?' });
        rest.push_str(&joined);
    }
    req.put("url", Y::s(String::new())); // the URL, set once the origins are known
    let mut headers: Vec<(String, String)> = c.headers.clone();
    let content_type = take_header(&mut headers, "content-type");
    if c.compressed && !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("accept-encoding")) {
        headers.push(("Accept-Encoding".into(), "deflate, gzip, br, zstd".into()));
    }
    if json && !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("accept")) {
        headers.push(("Accept".into(), "application/json".into()));
    }
    if let Some(user) = &c.user {
        let name = secrets.name("credentials", user);
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
        headers.push(("Authorization".into(), format!("Basic {{{{ props.{name} | base64 }}}}")));
    }
    if let Some(token) = &c.bearer {
        let name = secrets.name("bearer_token", token);
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("authorization"));
        headers.push(("Authorization".into(), format!("Bearer {{{{ props.{name} }}}}")));
    }
    if let Some(cookie) = &c.cookie {
        headers.push(("Cookie".into(), cookie.clone()));
    }
    if !headers.is_empty() {
        let mut h = MapB::default();
        for (name, value) in headers {
            let v = if name.eq_ignore_ascii_case("authorization") && value.contains("{{ props.") {
                value
            } else if name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("cookie") {
                let base = if name.eq_ignore_ascii_case("cookie") { "cookie" } else { "authorization" };
                secrets.reference(base, &value)
            } else {
                escape_text(&value)
            };
            h.put(name, Y::s(v));
        }
        req.put("headers", h.done());
    }
    if !c.parts.is_empty() {
        if !c.data.is_empty() {
            warn("-F with -d: curl refuses to mix them; the -d data is left out".into(), &mut comments);
        }
        if content_type.is_some() {
            warn("a Content-Type header with -F is not converted: planrun writes multipart/form-data with its own boundary".into(), &mut comments);
        }
        let mut m = MapB::default();
        for p in &c.parts {
            match p {
                Part::Text { name, value } => {
                    m.put(name.clone(), Y::s(escape_text(value)));
                }
                Part::File { name, path, content_type, filename } => {
                    let mut f = MapB::default();
                    f.put("file", Y::s(path.clone()));
                    if let Some(t) = content_type {
                        f.put("content_type", Y::s(t.clone()));
                    }
                    if let Some(n) = filename {
                        f.put("filename", Y::s(n.clone()));
                    }
                    m.put(name.clone(), f.done());
                }
            }
        }
        req.put("multipart", m.done());
    } else if !c.data.is_empty() && !c.get {
        req.put("body", Y::s(escape_text(&joined)));
        let ct = content_type.unwrap_or_else(|| {
            if json {
                "application/json".into()
            } else {
                "application/x-www-form-urlencoded".into()
            }
        });
        req.put("content_type", Y::s(ct));
    } else if let Some(ct) = content_type {
        warn(
            format!("Content-Type `{ct}` without a body is not sent: planrun sends it only with a body"),
            &mut comments,
        );
    }
    if c.follow {
        req.put("follow_redirects", Y::Bool(true));
    }
    if let Some(s) = c.timeout_s {
        let ms = (s * 1000.0).round().max(1.0) as u64;
        req.put("timeout", Y::s(format!("{ms}ms")));
    }
    if c.insecure {
        warn("-k: certificates are not checked for this command; planrun's `defaults.tls.insecure` is set for every request".into(), &mut comments);
    }
    let label_path = rest.split('?').next().unwrap_or("/").to_string();
    Ok(Step { origin, rest, request: req, name: format!("{method} {label_path}"), comments })
}

fn take_header(headers: &mut Vec<(String, String)>, name: &str) -> Option<String> {
    let i = headers.iter().position(|(n, _)| n.eq_ignore_ascii_case(name))?;
    Some(headers.remove(i).1)
}

fn plan(options: &Options, steps: Vec<Step>, secrets: Secrets) -> String {
    let origins = Origins::of(steps.iter().map(|s| s.origin.as_str()));
    let insecure = steps.iter().any(|s| s.comments.iter().any(|c| c.contains("-k:")));
    let mut items = Vec::new();
    for s in steps {
        let url = origins.url(&s.origin, &s.rest);
        let mut req = s.request;
        for e in &mut req.0 {
            if e.key == "url" {
                e.value = Y::s(url.clone());
            }
        }
        let mut step = MapB::default();
        step.put("name", Y::s(s.name));
        step.put("request", req.done());
        items.push(Item { value: Some(step.done()), comments: s.comments });
    }
    let mut defaults = MapB::default();
    defaults.put("base_url", Y::s("{{ props.base_url }}"));
    defaults.put_commented(
        "follow_redirects",
        Y::Bool(false),
        vec!["curl follows no redirect without -L (a command with -L says so)".into()],
    );
    if insecure {
        let mut tls = MapB::default();
        tls.put("insecure", Y::Bool(true));
        defaults.put_commented("tls", tls.done(), vec!["curl -k".into()]);
    }
    let header = vec![
        format!("Converted by `planrun import` from {}.", options.source_name),
        "Check it with `planrun validate`; see the requests with `planrun dry-run`.".into(),
    ];
    let name = options.source_name.rsplit_once('.').map(|(s, _)| s).unwrap_or(&options.source_name);
    let name = if name.is_empty() { "curl" } else { name };
    super::requests::plan(header, name, origins.properties(&secrets, "curl command line"), defaults, "curl", items)
}
