//! Postman's `{{variable}}` texts as planrun templates, and its URLs split into origin and the rest.

use serde_json::Value;

use super::Cx;
use crate::import::error::Warning;
use crate::import::functions::escape_text;
use crate::import::names::ident;
use crate::import::yaml::{Entry, MapB, Y};

/// One collection or environment variable.
struct Var {
    name: String,
    value: String,
    secret: bool,
    used: bool,
}

/// The variables requests may read, the environment's over the collection's.
#[derive(Default)]
pub struct Vars(Vec<Var>);

impl Vars {
    /// Adds `{ key, value, type, enabled }`; a later one of the same name replaces it.
    pub fn declare(&mut self, v: &Value, from_environment: bool) {
        let Some(name) = v.get("key").and_then(Value::as_str).filter(|k| !k.trim().is_empty()) else { return };
        if v.get("enabled").and_then(Value::as_bool) == Some(false)
            || v.get("disabled").and_then(Value::as_bool) == Some(true)
        {
            return;
        }
        let value = match v.get("value") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let secret = from_environment && v.get("type").and_then(Value::as_str) == Some("secret");
        self.0.retain(|x| x.name != name);
        self.0.push(Var { name: name.to_string(), value, secret, used: false });
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|v| v.name == name).map(|v| v.value.as_str())
    }

    /// `text` as a template: known variables read their property, Postman's dynamic variables planrun's
    /// functions; an unknown one is sent as written, with a warning.
    pub fn render(&mut self, text: &str, here: &str, warnings: &mut Vec<Warning>) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open + 2..].find("}}").map(|c| open + 2 + c) else { break };
            out.push_str(&escape_text(&rest[..open]));
            let name = rest[open + 2..close].trim();
            match self.0.iter_mut().find(|v| v.name == name) {
                Some(v) => {
                    v.used = true;
                    out.push_str(&format!("{{{{ props.{} }}}}", ident(name)));
                }
                None => match dynamic(name) {
                    Some(t) => out.push_str(t),
                    None => {
                        let message = format!("`{{{{{name}}}}}` is set by a script or nowhere: sent as written");
                        if !warnings.iter().any(|w| w.path == here && w.message == message) {
                            warnings.push(Warning { path: here.to_string(), message, line: 0 });
                        }
                        out.push_str(&escape_text(&rest[open..close + 2]));
                    }
                },
            }
            rest = &rest[close + 2..];
        }
        out.push_str(&escape_text(rest));
        out
    }

    /// The variables requests read, as properties in the order declared.
    pub fn properties(&self) -> Vec<Entry> {
        self.0
            .iter()
            .filter(|v| v.used)
            .map(|v| {
                let id = ident(&v.name);
                let value = if v.secret && v.value.chars().count() >= 4 {
                    let mut m = MapB::default();
                    m.put("value", Y::s(escape_text(&v.value)));
                    m.put("secret", Y::Bool(true));
                    m.done()
                } else {
                    Y::s(escape_text(&v.value))
                };
                let comments = if id == v.name { Vec::new() } else { vec![format!("Postman variable `{}`", v.name)] };
                Entry { key: id, value, comments }
            })
            .collect()
    }
}

/// Postman's dynamic variables that planrun's functions give.
fn dynamic(name: &str) -> Option<&'static str> {
    Some(match name {
        "$guid" | "$randomUUID" => "{{ uuid() }}",
        "$timestamp" => "{{ now_ms() // 1000 }}",
        "$isoTimestamp" => "{{ timestamp() }}",
        "$randomInt" => "{{ random_int(0, 1000) }}",
        "$randomAlphaNumeric" => "{{ random_string(1) }}",
        "$randomBoolean" => "{{ random_choice([true, false]) }}",
        _ => return None,
    })
}

/// The URL's origin (its scheme, host and port, with leading variables put in as their values) and the rest
/// as a template; an origin that is known only when the plan runs is empty, the whole URL then the template.
pub fn split_url(cx: &mut Cx, raw: &str, here: &str, comments: &mut Vec<String>) -> Option<(String, String)> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    // Leading variables (`{{baseUrl}}/users`) are put in as their values.
    let mut full = String::new();
    let mut rest = raw;
    while let Some(after) = rest.strip_prefix("{{") {
        let close = after.find("}}")?;
        let name = after[..close].trim();
        match cx.vars.value(name) {
            Some(v) => {
                full.push_str(v);
                rest = &after[close + 2..];
            }
            None => break,
        }
    }
    full.push_str(rest);
    let with_scheme =
        if full.contains("://") || full.starts_with("{{") { full.clone() } else { format!("http://{full}") };
    let after = with_scheme.split_once("://").map(|(_, r)| r).unwrap_or(&with_scheme);
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let authority = &after[..end];
    let scheme_and_authority_len = with_scheme.len() - after.len() + end;
    if with_scheme.starts_with("{{") || authority.contains("{{") {
        comments.push(
            cx.warn(here, format!("the host of `{raw}` is known only when the plan runs: base_url does not apply")),
        );
        let t = cx.vars.render(&with_scheme, here, &mut cx.warnings);
        return Some((String::new(), t));
    }
    let origin_url = url::Url::parse(&with_scheme[..scheme_and_authority_len]).ok()?;
    if !matches!(origin_url.scheme(), "http" | "https") || origin_url.host().is_none() {
        return None;
    }
    let origin = origin_url.origin().ascii_serialization();
    let mut path = with_scheme[scheme_and_authority_len..].to_string();
    if let Some(i) = path.find('#') {
        path.truncate(i);
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    Some((origin, cx.vars.render(&path, here, &mut cx.warnings)))
}
