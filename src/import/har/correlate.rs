//! Correlation: a value that a recorded response gave (a string in a JSON body, a hidden form field, a token
//! header) and that a later request sent becomes an extractor on that response and a template in the later
//! requests. A value some request sent before that response is not proven to come from it and stays as
//! recorded.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::entries::{Body, Entry, Text};
use crate::import::yaml::{MapB, Y};

/// The shortest value correlated: shorter ones (ids like `12`, words) would match by chance.
const MIN_LEN: usize = 8;

/// A value a response holds, and how to extract it.
struct Found {
    value: String,
    /// A name for the variable.
    name: String,
    how: Y,
}

/// Extractors to add, by entry index; templates are put into the later entries' texts.
pub fn correlate(entries: &mut [Entry], notes: &mut Vec<String>) -> HashMap<usize, Vec<(String, Y)>> {
    let mut out: HashMap<usize, Vec<(String, Y)>> = HashMap::new();
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    let mut done: Vec<String> = Vec::new();
    for i in 0..entries.len() {
        let mut found = candidates(&entries[i]);
        // Longer values first, so that a value inside another is not cut out of it.
        found.sort_by_key(|f| std::cmp::Reverse(f.value.len()));
        for f in found {
            if done.contains(&f.value) {
                continue;
            }
            // Sent before this response came: not proven to come from it.
            if entries[..=i].iter().any(|e| sends(e, &f.value)) {
                continue;
            }
            if !entries[i + 1..].iter().any(|e| sends(e, &f.value)) {
                continue;
            }
            let n = taken.entry(f.name.clone()).or_insert(0);
            *n += 1;
            let var = if *n == 1 { f.name.clone() } else { format!("{}_{}", f.name, n) };
            let template = format!("{{{{ {var} }}}}");
            let source = entries[i].number;
            let mut users = Vec::new();
            for e in entries[i + 1..].iter_mut() {
                if replace(e, &f.value, &template) > 0 {
                    users.push(e.number);
                    e.comments.push(format!(
                        "planrun import: `{var}` was `{}` in the recording: extracted from the response of entry {}",
                        shorten(&f.value),
                        source
                    ));
                }
            }
            entries[i].comments.push(format!(
                "planrun import: `{var}` comes from this response and is sent by entr{} {}",
                if users.len() == 1 { "y" } else { "ies" },
                users.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ));
            notes.push(format!(
                "`{var}` extracted from entry {} and sent by {} later request(s)",
                entries[i].number,
                users.len()
            ));
            out.entry(i).or_default().push((var, f.how));
            done.push(f.value);
        }
    }
    out
}

fn shorten(v: &str) -> String {
    if v.chars().count() > 24 {
        format!("{}...", v.chars().take(20).collect::<String>())
    } else {
        v.to_string()
    }
}

fn texts(e: &mut Entry) -> Vec<&mut Text> {
    let mut t: Vec<&mut Text> = vec![&mut e.rest];
    t.extend(e.headers.iter_mut().map(|(_, v)| v));
    match &mut e.body {
        Some(Body::Text { text, .. }) => t.push(text),
        Some(Body::Form(f)) | Some(Body::Multipart(f)) => t.extend(f.iter_mut().map(|(_, v)| v)),
        None => {}
    }
    t
}

fn sends(e: &Entry, value: &str) -> bool {
    let body: Vec<&Text> = match &e.body {
        Some(Body::Text { text, .. }) => vec![text],
        Some(Body::Form(f)) | Some(Body::Multipart(f)) => f.iter().map(|(_, v)| v).collect(),
        None => Vec::new(),
    };
    std::iter::once(&e.rest).chain(e.headers.iter().map(|(_, v)| v)).chain(body).any(|t| t.contains(value))
}

fn replace(e: &mut Entry, value: &str, template: &str) -> usize {
    texts(e).into_iter().map(|t| t.replace(value, template)).sum()
}

/// The values of `e`'s response worth correlating.
fn candidates(e: &Entry) -> Vec<Found> {
    let mut out = Vec::new();
    let r = &e.response;
    for (name, value) in &r.headers {
        let n = name.to_ascii_lowercase();
        if (n.contains("token") || n.contains("csrf") || n.contains("xsrf")) && value.len() >= MIN_LEN {
            out.push(Found { value: value.clone(), name: crate::import::names::ident(&n), how: one("header", name) });
        }
    }
    let Some(text) = &r.text else { return out };
    let mime = r.mime.to_ascii_lowercase();
    if mime.contains("json") {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            walk(&v, "$".into(), None, &mut out);
        }
    } else if mime.contains("html") {
        hidden_inputs(text, &mut out);
    }
    out
}

fn one(key: &str, value: &str) -> Y {
    let mut m = MapB::default();
    m.put(key, Y::s(value));
    m.done()
}

fn walk(v: &Value, path: String, key: Option<&str>, out: &mut Vec<Found>) {
    match v {
        Value::String(s) if s.len() >= MIN_LEN && !s.contains(char::is_whitespace) => out.push(Found {
            value: s.clone(),
            name: crate::import::names::ident(key.unwrap_or("value")),
            how: one("jsonpath", &path),
        }),
        Value::Object(m) => {
            for (k, child) in m {
                let p = if !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !k.starts_with(|c: char| c.is_ascii_digit())
                {
                    format!("{path}.{k}")
                } else {
                    format!("{path}['{}']", k.replace('\\', "\\\\").replace('\'', "\\'"))
                };
                walk(child, p, Some(k), out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate().take(1000) {
                walk(child, format!("{path}[{i}]"), key, out);
            }
        }
        _ => {}
    }
}

/// `<input type="hidden" name="N" value="V">`: a regex on the tag as written, its value the group.
fn hidden_inputs(html: &str, out: &mut Vec<Found>) {
    let tag = regex::Regex::new(r#"(?is)<input\b[^>]*>"#).expect("a valid regex");
    let attr = |t: &str, a: &str| -> Option<String> {
        let re = regex::Regex::new(&format!(r#"(?i)\b{a}\s*=\s*"([^"]*)""#)).ok()?;
        Some(re.captures(t)?.get(1)?.as_str().to_string())
    };
    for m in tag.find_iter(html) {
        let t = m.as_str();
        if !attr(t, "type").is_some_and(|ty| ty.eq_ignore_ascii_case("hidden")) {
            continue;
        }
        let (Some(name), Some(value)) = (attr(t, "name"), attr(t, "value")) else { continue };
        if value.len() < MIN_LEN {
            continue;
        }
        let Some(at) = t.find(&format!("\"{value}\"")) else { continue };
        let pattern = format!("{}\"([^\"]*)\"{}", regex::escape(&t[..at]), regex::escape(&t[at + value.len() + 2..]));
        out.push(Found { value, name: crate::import::names::ident(&name), how: one("regex", &pattern) });
    }
}
