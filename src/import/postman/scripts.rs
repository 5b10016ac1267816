//! Test scripts: the common checks (the status, the body containing a text, a JSON value equal to a literal)
//! become assertions where that is exact; every other line is counted in a warning, as are pre-request
//! scripts.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::Cx;
use crate::import::yaml::{MapB, Y};

/// The lines of an event's script (`exec` is a list of lines, or one text).
pub fn lines(event: &Value) -> Vec<String> {
    match event.pointer("/script/exec") {
        Some(Value::Array(a)) => {
            a.iter().filter_map(Value::as_str).flat_map(|l| l.lines().map(str::to_string)).collect()
        }
        Some(Value::String(s)) => s.lines().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid regex"))
}

/// The assertions of the item's test script; what is not converted is warned about.
pub fn convert(cx: &mut Cx, item: &Value, here: &str, comments: &mut Vec<String>) -> Vec<Y> {
    static STATUS: OnceLock<Regex> = OnceLock::new();
    static BODY: OnceLock<Regex> = OnceLock::new();
    static ALIAS: OnceLock<Regex> = OnceLock::new();
    static EXPECT: OnceLock<Regex> = OnceLock::new();
    static STRUCTURE: OnceLock<Regex> = OnceLock::new();
    let status = re(
        &STATUS,
        r#"^(?:pm\.response\.to\.be\.(ok)|pm\.response\.to\.have\.status\((\d{3})\)|pm\.expect\(pm\.response\.code\)\.to\.(?:eql|equal|eq|be\.equal)\((\d{3})\)|tests\[[^\]]*\]\s*=\s*responseCode\.code\s*===?\s*(\d{3}))\s*;?$"#,
    );
    let body = re(
        &BODY,
        r#"^(?:tests\[[^\]]*\]\s*=\s*responseBody\.has\((?:"([^"\\]*)"|'([^'\\]*)')\)|pm\.expect\(pm\.response\.text\(\)\)\.to\.include\((?:"([^"\\]*)"|'([^'\\]*)')\))\s*;?$"#,
    );
    let alias =
        re(&ALIAS, r#"^(?:var|let|const)\s+(\w+)\s*=\s*(?:pm\.response\.json\(\)|JSON\.parse\(responseBody\))\s*;?$"#);
    let expect = re(
        &EXPECT,
        r#"^pm\.expect\(([A-Za-z_]\w*(?:\(\))?(?:\.json\(\))?)((?:\.[A-Za-z_]\w*|\[\d+\])*)\)\.to\.(?:eql|equal|eq|be\.equal)\((.+)\)\s*;?$"#,
    );
    let structure = re(&STRUCTURE, r#"^(?:pm\.test\(.*(?:function\s*\(\)|\(\)\s*=>)\s*\{|\}\)\s*;?|\}\s*;?|\{)$"#);
    let mut out = Vec::new();
    for e in item.get("event").and_then(Value::as_array).into_iter().flatten() {
        let code: Vec<String> = lines(e)
            .into_iter()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .collect();
        if code.is_empty() {
            continue;
        }
        if e.get("listen").and_then(Value::as_str) != Some("test") {
            comments.push(cx.warn(here, format!("its pre-request script ({} line(s)) is not converted", code.len())));
            continue;
        }
        let mut aliases: Vec<String> = Vec::new();
        let mut left: Vec<&str> = Vec::new();
        for line in &code {
            if structure.is_match(line) {
                continue;
            }
            if let Some(c) = status.captures(line) {
                // `to.be.ok` is a 200.
                let n = (2..=4).find_map(|i| c.get(i)).and_then(|m| m.as_str().parse::<i64>().ok()).unwrap_or(200);
                out.push(one("status", Y::Int(n)));
                continue;
            }
            if let Some(c) = body.captures(line) {
                let text = (1..=4).find_map(|i| c.get(i)).map(|m| m.as_str()).unwrap_or("");
                out.push(one("body_contains", Y::s(text)));
                continue;
            }
            if let Some(c) = alias.captures(line) {
                aliases.push(c[1].to_string());
                continue;
            }
            if let Some(c) = expect.captures(line) {
                let root = &c[1];
                let json_root = root == "pm.response.json()" || root == "pm" || aliases.iter().any(|a| a == root);
                if let (true, Some(value)) = (json_root, literal(&c[3])) {
                    let path = format!("${}", &c[2]);
                    let mut m = MapB::default();
                    m.put("path", Y::s(path));
                    m.put("equals", value);
                    out.push(one("jsonpath", m.done()));
                    continue;
                }
            }
            left.push(line);
        }
        if !left.is_empty() {
            comments.push(cx.warn(
                here,
                format!(
                    "{} line(s) of its test script are not converted (the first: `{}`)",
                    left.len(),
                    left[0].chars().take(80).collect::<String>()
                ),
            ));
        }
    }
    out
}

fn one(key: &str, value: Y) -> Y {
    let mut m = MapB::default();
    m.put(key, value);
    m.done()
}

/// A JavaScript literal that is exactly a YAML value: a whole number, a string, true or false.
fn literal(js: &str) -> Option<Y> {
    let t = js.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(Y::Int(n));
    }
    match t {
        "true" => return Some(Y::Bool(true)),
        "false" => return Some(Y::Bool(false)),
        _ => {}
    }
    let quoted = |q: char| t.len() >= 2 && t.starts_with(q) && t.ends_with(q) && !t[1..t.len() - 1].contains(['\\', q]);
    if quoted('"') || quoted('\'') {
        return Some(Y::s(&t[1..t.len() - 1]));
    }
    None
}
