//! Extractors: values captured from a response into the virtual user's variables.

use minijinja::Value;
use rand::Rng;

use super::check::Observed;
use crate::plan::model::{ExtractFrom, Extractor};
use crate::template::Scope;

/// Runs every extractor; the first one that finds nothing and has no default gives the failure message.
#[inline]
pub fn extract(
    extractors: &[Extractor],
    seen: &Observed,
    cookie: &dyn Fn(&str) -> Option<String>,
    scope: &Scope,
) -> Result<(), String> {
    // Most steps extract nothing: they do not pay for the call of the loop, which saves and restores every
    // register it may use.
    if extractors.is_empty() {
        return Ok(());
    }
    extract_each(extractors, seen, cookie, scope)
}

#[inline(never)]
fn extract_each(
    extractors: &[Extractor],
    seen: &Observed,
    cookie: &dyn Fn(&str) -> Option<String>,
    scope: &Scope,
) -> Result<(), String> {
    for e in extractors {
        let found = match &e.from {
            ExtractFrom::Regex { regex, group, match_no } => {
                let body = seen.body();
                let all: Vec<Value> =
                    regex.captures_iter(&body).filter_map(|c| c.get(*group).map(|m| Value::from(m.as_str()))).collect();
                pick(all, *match_no, scope)
            }
            ExtractFrom::JsonPath { path, match_no } => match seen.json() {
                Some(json) => {
                    let all: Vec<Value> = path.query(json).all().into_iter().map(json_value).collect();
                    pick(all, *match_no, scope)
                }
                None => None,
            },
            ExtractFrom::Header(name) => {
                seen.response.headers.get(name.as_str()).map(|v| Value::from(String::from_utf8_lossy(v.as_bytes())))
            }
            ExtractFrom::Cookie(name) => cookie(name).map(Value::from),
        };
        match (found, &e.default) {
            (Some(v), _) => scope.set_var(e.name.clone(), v),
            (None, Some(d)) => scope.set_var(e.name.clone(), Value::from(d.as_str())),
            (None, None) => {
                return Err(format!(
                    "Extraction failed (line {}): `{}`: {} found nothing",
                    e.span.line,
                    e.name,
                    what(&e.from)
                ))
            }
        }
    }
    Ok(())
}

fn json_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::String(s) => Value::from(s.as_str()),
        other => crate::template::to_value(other),
    }
}

/// The n-th match (1-based), a random one (0), or all of them as a list (-1).
fn pick(mut all: Vec<Value>, match_no: i64, scope: &Scope) -> Option<Value> {
    match match_no {
        -1 => (!all.is_empty()).then(|| Value::from(all)),
        0 if !all.is_empty() => {
            let i = scope.with_rng(|r| r.random_range(0..all.len()));
            Some(all.swap_remove(i))
        }
        n if n >= 1 && (n as usize) <= all.len() => Some(all.swap_remove(n as usize - 1)),
        _ => None,
    }
}

fn what(from: &ExtractFrom) -> String {
    match from {
        ExtractFrom::Regex { regex, .. } => format!("regex /{}/", regex.as_str()),
        ExtractFrom::JsonPath { .. } => "jsonpath".to_string(),
        ExtractFrom::Header(h) => format!("header {h}"),
        ExtractFrom::Cookie(c) => format!("cookie {c}"),
    }
}
