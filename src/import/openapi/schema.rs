//! Values for parameters and bodies from their examples or, failing those, from their schemas: random values
//! that fit (planrun's template functions), `$ref`s followed within the document, recursion cut off.

use serde_json::Value;

use crate::import::functions::escape_text;
use crate::import::yaml::Y;

/// How deep a value is built: a recursive schema stops here (and at its second visit of the same `$ref`).
const MAX_DEPTH: usize = 12;
/// How many `$ref`s to `$ref`s are followed before giving up.
const MAX_HOPS: usize = 64;
/// The longest random string written for a `minLength`.
const MAX_STRING: u64 = 4096;

/// A value to send.
#[derive(Debug, Clone)]
pub enum V {
    /// A literal from the document (an example, a default, a single enum value).
    Json(Value),
    /// A template expression (without braces) that gives a value of the schema's type.
    Expr(String),
    /// A template text (a string with literal and random parts).
    Text(String),
    /// An object built from properties.
    Obj(Vec<(String, V)>),
    /// An array built from `items`.
    Arr(Vec<V>),
}

impl V {
    /// As a value of a `json:` body: literal strings escaped, expressions keeping their type.
    pub fn to_y(&self) -> Y {
        match self {
            V::Json(v) => json_y(v),
            V::Expr(e) => Y::s(format!("{{{{ {e} }}}}")),
            V::Text(t) => Y::s(t.clone()),
            V::Obj(entries) => Y::Map(
                entries
                    .iter()
                    .map(|(k, v)| crate::import::yaml::Entry { key: k.clone(), value: v.to_y(), comments: Vec::new() })
                    .collect(),
            ),
            V::Arr(items) => Y::Seq(
                items
                    .iter()
                    .map(|v| crate::import::yaml::Item { value: Some(v.to_y()), comments: Vec::new() })
                    .collect(),
            ),
        }
    }

    /// As the template of a parameter (simple or form style, not exploded: arrays joined by commas); in a
    /// path, literal text is percent-encoded.
    pub fn to_param(&self, in_path: bool) -> String {
        match self {
            V::Json(Value::String(s)) => escape_text(&if in_path { pct(s) } else { s.clone() }),
            V::Json(Value::Array(a)) => {
                a.iter().map(|v| V::Json(v.clone()).to_param(in_path)).collect::<Vec<_>>().join(",")
            }
            V::Json(Value::Object(m)) => m
                .iter()
                .flat_map(|(k, v)| [V::Json(Value::String(k.clone())), V::Json(v.clone())])
                .map(|v| v.to_param(in_path))
                .collect::<Vec<_>>()
                .join(","),
            V::Json(Value::Null) => String::new(),
            V::Json(v) => v.to_string(),
            V::Expr(e) if in_path && e.starts_with("random_choice") => {
                format!("{{{{ {e} | urlencode | replace('/', '%2F') }}}}")
            }
            V::Expr(e) => format!("{{{{ {e} }}}}"),
            V::Text(t) => t.clone(),
            V::Arr(items) => items.iter().map(|v| v.to_param(in_path)).collect::<Vec<_>>().join(","),
            V::Obj(entries) => {
                entries.iter().flat_map(|(k, v)| [escape_text(k), v.to_param(in_path)]).collect::<Vec<_>>().join(",")
            }
        }
    }
}

fn json_y(v: &Value) -> Y {
    match v {
        Value::Null => Y::Raw("null".into()),
        Value::Bool(b) => Y::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Y::Int(i),
            None => Y::Raw(n.to_string()),
        },
        Value::String(s) => Y::s(escape_text(s)),
        Value::Array(a) => Y::Seq(
            a.iter().map(|v| crate::import::yaml::Item { value: Some(json_y(v)), comments: Vec::new() }).collect(),
        ),
        Value::Object(m) => Y::Map(
            m.iter()
                .map(|(k, v)| crate::import::yaml::Entry { key: k.clone(), value: json_y(v), comments: Vec::new() })
                .collect(),
        ),
    }
}

/// Percent-encodes what a path segment may not hold as it is.
fn pct(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A `$ref` that could not be followed.
#[derive(Debug, Clone, PartialEq)]
pub enum RefTrouble {
    /// To another file or URL: not read.
    External(String),
    /// Within the document, to nothing.
    Missing(String),
    /// `$ref`s that lead back to themselves.
    Cycle(String),
}

/// The value a local `$ref` (`#/components/schemas/Pet`) points at.
pub fn lookup<'a>(doc: &'a Value, r: &str) -> Option<&'a Value> {
    let fragment = r.strip_prefix('#')?;
    doc.pointer(fragment).or_else(|| doc.pointer(&percent_decode(fragment)))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `v` with its `$ref`s followed (a chain of them too).
pub fn deref<'a>(doc: &'a Value, v: &'a Value) -> Result<&'a Value, RefTrouble> {
    let mut v = v;
    let mut seen: Vec<&str> = Vec::new();
    while let Some(r) = v.get("$ref").and_then(Value::as_str) {
        if !r.starts_with('#') {
            return Err(RefTrouble::External(r.to_string()));
        }
        if seen.contains(&r) || seen.len() > MAX_HOPS {
            return Err(RefTrouble::Cycle(r.to_string()));
        }
        seen.push(r);
        v = lookup(doc, r).ok_or_else(|| RefTrouble::Missing(r.to_string()))?;
    }
    Ok(v)
}

/// Every `$ref` of the document checked: each local one leads somewhere, and no chain of them loops.
pub fn check_refs(doc: &Value) -> Result<(), RefTrouble> {
    let mut stack: Vec<&Value> = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if m.get("$ref").is_some_and(Value::is_string) {
                    match deref(doc, v) {
                        Ok(_) | Err(RefTrouble::External(_)) => {}
                        Err(e) => return Err(e),
                    }
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    Ok(())
}

/// Builds values, remembering the `$ref`s it could not follow and the notes for a person.
pub struct Gen<'a> {
    pub doc: &'a Value,
    /// `$ref`s to other files met.
    pub external: Vec<String>,
    /// What the values do not follow (a pattern), for the step's comment.
    pub notes: Vec<String>,
    stack: Vec<String>,
}

impl<'a> Gen<'a> {
    pub fn new(doc: &'a Value) -> Gen<'a> {
        Gen { doc, external: Vec::new(), notes: Vec::new(), stack: Vec::new() }
    }

    /// The first example of `examples` (a map of Example Objects, maybe `$ref`s), as given.
    pub fn first_example(&mut self, examples: Option<&Value>) -> Option<V> {
        let Some(Value::Object(m)) = examples else { return None };
        for ex in m.values() {
            match deref(self.doc, ex) {
                Ok(ex) => {
                    if let Some(v) = ex.get("value") {
                        return Some(V::Json(v.clone()));
                    }
                }
                Err(RefTrouble::External(r)) => self.external.push(r),
                Err(_) => {}
            }
        }
        None
    }

    /// A value for `schema`, `what` naming it in notes; None where nothing can be built (a recursion cut off).
    pub fn value(&mut self, schema: &Value, what: &str) -> Option<V> {
        self.build(schema, what, 0)
    }

    fn build(&mut self, schema: &Value, what: &str, depth: usize) -> Option<V> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            if !r.starts_with('#') {
                self.external.push(r.to_string());
                return None;
            }
            if self.stack.iter().any(|s| s == r) {
                return None;
            }
            let target = lookup(self.doc, r)?;
            self.stack.push(r.to_string());
            let out = self.build(target, what, depth + 1);
            self.stack.pop();
            return out;
        }
        let Value::Object(s) = schema else {
            // `true` (anything) in 3.1, or a broken schema.
            return Some(V::Json(Value::Null));
        };
        if let Some(e) = s.get("example") {
            return Some(V::Json(e.clone()));
        }
        if let Some(Value::Array(a)) = s.get("examples") {
            if let Some(e) = a.first() {
                return Some(V::Json(e.clone()));
            }
        }
        for k in ["const", "default"] {
            if let Some(e) = s.get(k) {
                return Some(V::Json(e.clone()));
            }
        }
        if let Some(Value::Array(options)) = s.get("enum") {
            let options: Vec<&Value> = options.iter().filter(|v| !v.is_null()).collect();
            match options.len() {
                0 => {}
                1 => return Some(V::Json(options[0].clone())),
                _ => {
                    let items: Vec<String> = options
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => crate::import::functions::quote(s),
                            other => escape_text(&other.to_string()),
                        })
                        .collect();
                    return Some(V::Expr(format!("random_choice([{}])", items.join(", "))));
                }
            }
        }
        if let Some(Value::Array(parts)) = s.get("allOf") {
            let mut merged: Vec<(String, V)> = Vec::new();
            let mut other = None;
            for p in parts {
                match self.build(p, what, depth + 1) {
                    Some(V::Obj(entries)) => {
                        for (k, v) in entries {
                            merged.retain(|(m, _)| *m != k);
                            merged.push((k, v));
                        }
                    }
                    Some(v) => other = Some(v),
                    None => {}
                }
            }
            // allOf may sit beside properties of its own.
            if let Some(V::Obj(own)) = s.get("properties").and_then(|_| self.object(s, what, depth)) {
                for (k, v) in own {
                    merged.retain(|(m, _)| *m != k);
                    merged.push((k, v));
                }
            }
            return if merged.is_empty() { other } else { Some(V::Obj(merged)) };
        }
        for k in ["oneOf", "anyOf"] {
            if let Some(Value::Array(parts)) = s.get(k) {
                if let Some(v) = parts.iter().find_map(|p| self.build(p, what, depth + 1)) {
                    return Some(v);
                }
            }
        }
        let ty = match s.get("type") {
            Some(Value::String(t)) => Some(t.as_str()),
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
            _ => None,
        };
        let ty = ty.or_else(|| {
            if s.contains_key("properties") || s.contains_key("additionalProperties") {
                Some("object")
            } else if s.contains_key("items") {
                Some("array")
            } else {
                None
            }
        });
        match ty {
            Some("object") => self.object(s, what, depth),
            Some("array") => {
                let Some(items) = s.get("items") else { return Some(V::Arr(Vec::new())) };
                let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(1).clamp(1, 10);
                let n = match s.get("maxItems").and_then(Value::as_u64) {
                    Some(max) => min.min(max),
                    None => min,
                };
                let mut out = Vec::new();
                for _ in 0..n {
                    match self.build(items, what, depth + 1) {
                        Some(v) => out.push(v),
                        None => break,
                    }
                }
                Some(V::Arr(out))
            }
            Some("integer") => Some(V::Expr(integer(s))),
            Some("number") => Some(V::Expr(number(s))),
            Some("boolean") => Some(V::Expr("random_choice([true, false])".into())),
            Some("string") => Some(self.string(s, what)),
            Some("null") => Some(V::Json(Value::Null)),
            _ => Some(V::Json(Value::Null)),
        }
    }

    fn object(&mut self, s: &serde_json::Map<String, Value>, what: &str, depth: usize) -> Option<V> {
        let mut out = Vec::new();
        if let Some(Value::Object(props)) = s.get("properties") {
            for (name, p) in props {
                // Read-only properties are the server's to set.
                let read_only =
                    deref(self.doc, p).ok().and_then(|p| p.get("readOnly")).and_then(Value::as_bool).unwrap_or(false);
                if read_only {
                    continue;
                }
                if let Some(v) = self.build(p, &format!("{what}.{name}"), depth + 1) {
                    out.push((name.clone(), v));
                }
            }
        }
        Some(V::Obj(out))
    }

    fn string(&mut self, s: &serde_json::Map<String, Value>, what: &str) -> V {
        let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
        let max = s.get("maxLength").and_then(Value::as_u64);
        if max == Some(0) {
            return V::Json(Value::String(String::new()));
        }
        let n = 8u64.max(min).min(max.unwrap_or(u64::MAX)).min(MAX_STRING);
        let format = s.get("format").and_then(Value::as_str).unwrap_or("");
        let v = match format {
            "uuid" => V::Expr("uuid()".into()),
            "date" => V::Expr("timestamp('%Y-%m-%d')".into()),
            "date-time" => V::Expr("timestamp('%Y-%m-%dT%H:%M:%SZ')".into()),
            "time" => V::Expr("timestamp('%H:%M:%SZ')".into()),
            "email" => V::Text("user{{ random_string(8) }}@example.com".into()),
            "uri" | "url" | "iri" => V::Text("https://example.com/{{ random_string(8) }}".into()),
            "hostname" => V::Text("host{{ random_string(8) | lower }}.example.com".into()),
            "ipv4" => V::Text("192.0.2.{{ random_int(1, 254) }}".into()),
            "ipv6" => V::Text("2001:db8::{{ random_int(1, 9999) }}".into()),
            "byte" => V::Expr(format!("random_string({n}) | base64")),
            _ => V::Expr(format!("random_string({n})")),
        };
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            self.notes.push(format!("`{what}` must match {p}: the random value does not follow the pattern"));
        }
        v
    }
}

fn bound(s: &serde_json::Map<String, Value>, key: &str, exclusive: &str) -> Option<(f64, bool)> {
    // 3.1: exclusiveMinimum is the bound itself; 3.0: a flag beside minimum.
    if let Some(x) = s.get(exclusive).and_then(Value::as_f64) {
        return Some((x, true));
    }
    let flag = s.get(exclusive).and_then(Value::as_bool).unwrap_or(false);
    s.get(key).and_then(Value::as_f64).map(|x| (x, flag))
}

fn integer(s: &serde_json::Map<String, Value>) -> String {
    const LIMIT: f64 = 9.0e15;
    let lo = bound(s, "minimum", "exclusiveMinimum")
        .map(|(x, ex)| if ex { x.floor() + 1.0 } else { x.ceil() })
        .map(|x| x.clamp(-LIMIT, LIMIT));
    let hi = bound(s, "maximum", "exclusiveMaximum")
        .map(|(x, ex)| if ex { x.ceil() - 1.0 } else { x.floor() })
        .map(|x| x.clamp(-LIMIT, LIMIT));
    let (lo, hi) = match (lo, hi) {
        (Some(lo), Some(hi)) => (lo, hi.max(lo)),
        (Some(lo), None) => (lo, lo + 999.0),
        (None, Some(hi)) => ((hi - 999.0).max(1.0f64.min(hi)), hi),
        (None, None) => (1.0, 1000.0),
    };
    format!("random_int({}, {})", lo as i64, hi as i64)
}

fn number(s: &serde_json::Map<String, Value>) -> String {
    // Two decimals are written: an exclusive bound moves in by one hundredth.
    let lo = bound(s, "minimum", "exclusiveMinimum").map(|(x, ex)| if ex { x + 0.01 } else { x });
    let hi = bound(s, "maximum", "exclusiveMaximum").map(|(x, ex)| if ex { x - 0.01 } else { x });
    let (lo, hi) = (lo.filter(|x| x.is_finite()), hi.filter(|x| x.is_finite()));
    let (lo, hi) = match (lo, hi) {
        (Some(lo), Some(hi)) if hi > lo => (lo, hi),
        (Some(lo), _) => (lo, lo + 100.0),
        (None, Some(hi)) => (hi - 100.0, hi),
        (None, None) => (0.0, 100.0),
    };
    format!("random_float({lo:?}, {hi:?}) | round(2)")
}
