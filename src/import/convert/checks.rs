//! Assertions (`assert`) and extractors (`extract`) of a request, from the elements in its scope.

use super::{Cx, Scope};
use crate::import::functions::{has_refs, quote, When};
use crate::import::tree::Element;
use crate::import::yaml::{Entry, Item, MapB, Y};

const MATCH: i64 = 1;
const CONTAINS: i64 = 2;
const NOT: i64 = 4;
const EQUALS: i64 = 8;
const SUBSTRING: i64 = 16;
const OR: i64 = 32;

fn one(key: &str, v: Y) -> Item {
    let mut m = MapB::default();
    m.put(key, v);
    Item { value: Some(m.done()), comments: Vec::new() }
}

fn regex_ok(r: &str) -> bool {
    regex::Regex::new(r).is_ok()
}

/// The `assert` list, and comments for what was not converted.
pub(super) fn assertions(cx: &mut Cx, scope: &Scope, els: &[&Element]) -> (Vec<Item>, Vec<String>) {
    let mut out = Vec::new();
    let mut comments = Vec::new();
    let mut has_status = false;
    let mut any_status = false;
    for el in els {
        let p = &el.props;
        match el.short_class() {
            "ResponseAssertion" => {
                let field = p.text("Assertion.test_field");
                let ty: i64 = p.text("Assertion.test_type").trim().parse().unwrap_or(SUBSTRING);
                let strings: Vec<String> = p.texts("Asserion.test_strings").into_iter().map(str::to_string).collect();
                if p.flag("Assertion.assume_success", false) {
                    any_status = true;
                }
                let r = match field {
                    "Assertion.response_data" | "" => body(cx, scope, el, ty, &strings, &mut comments),
                    "Assertion.response_code" => {
                        has_status = true;
                        status(cx, scope, el, ty, &strings, &mut comments)
                    }
                    other => {
                        comments.push(cx.warn(scope, el, format!("testing `{other}` is not converted: planrun checks the body, the status code and headers")));
                        Vec::new()
                    }
                };
                out.extend(r);
            }
            "DurationAssertion" => match p.text("DurationAssertion.duration").trim().parse::<i64>() {
                Ok(ms) if ms > 0 => out.push(one("max_ms", Y::Int(ms))),
                _ => {
                    comments.push(cx.warn(scope, el, "the duration is not a whole number of ms; not converted".into()))
                }
            },
            "SizeAssertion" => {
                let size = p.text("SizeAssertion.size").trim().parse::<i64>();
                let op = p.text("SizeAssertion.operator").trim();
                match (size, op) {
                    (Ok(n), "6") if n >= 0 => out.push(one("max_bytes", Y::Int(n))),
                    (Ok(n), "4") if n >= 1 => out.push(one("max_bytes", Y::Int(n - 1))),
                    _ => comments.push(cx.warn(
                        scope,
                        el,
                        "only `<=` and `<` size checks are converted (to max_bytes)".into(),
                    )),
                }
            }
            "JSONPathAssertion" => {
                if let Some(i) = json_assertion(cx, scope, el, &mut comments) {
                    out.push(i);
                }
            }
            _ => {}
        }
    }
    if any_status && !has_status {
        let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"]
            .iter()
            .map(|c| Item { value: Some(Y::s(*c)), comments: vec![] })
            .collect();
        let mut i = one("status", Y::Seq(classes));
        i.comments.push("JMeter's \"Ignore Status\": any status passes".into());
        out.insert(0, i);
    }
    (out, comments)
}

fn body(
    cx: &mut Cx,
    scope: &Scope,
    el: &Element,
    ty: i64,
    strings: &[String],
    comments: &mut Vec<String>,
) -> Vec<Item> {
    let not = ty & NOT != 0;
    let or = ty & OR != 0 && strings.len() > 1;
    let mut out = Vec::new();
    let mut exprs = Vec::new();
    for s in strings {
        if ty & (SUBSTRING | EQUALS) != 0 {
            let (e, mut c) = cx.expr(scope, el, s, When::Run);
            comments.append(&mut c);
            let cmp = if ty & EQUALS != 0 {
                format!("response.body {} {e}", if not { "!=" } else { "==" })
            } else {
                format!("{e} {}in response.body", if not { "not " } else { "" })
            };
            if or || has_refs(s) || ty & EQUALS != 0 {
                exprs.push(cmp);
            } else {
                out.push(one(if not { "body_not_contains" } else { "body_contains" }, Y::s(s.clone())));
            }
        } else if ty & (CONTAINS | MATCH) != 0 {
            let re = if ty & MATCH != 0 { format!("\\A(?:{s})\\z") } else { s.clone() };
            if not || or || has_refs(s) || !regex_ok(&re) {
                comments.push(cx.warn(
                    scope,
                    el,
                    format!("the pattern `{s}` is not converted: planrun matches one plain regular expression (Rust syntax) per check, without NOT or OR"),
                ));
                continue;
            }
            out.push(one("body_matches", Y::s(re)));
        }
    }
    if !exprs.is_empty() {
        let joined = exprs.join(if or { " or " } else { " and " });
        out.push(one("expr", Y::s(format!("{{{{ {joined} }}}}"))));
    }
    out
}

/// A status-code pattern as a status check value: `200`, or `2xx` for `2\d\d`, `2..`, `2[0-9][0-9]`.
fn status_value(s: &str) -> Option<Y> {
    let s = s.trim();
    if s.len() == 3 && s.chars().all(|c| c.is_ascii_digit()) {
        return s.parse().ok().map(Y::Int);
    }
    let first = s.chars().next().filter(|c| ('1'..='5').contains(c))?;
    let rest = &s[1..];
    matches!(rest, "\\d\\d" | ".." | "[0-9][0-9]" | "\\d{2}" | "[0-9]{2}" | "xx").then(|| Y::s(format!("{first}xx")))
}

fn status(
    cx: &mut Cx,
    scope: &Scope,
    el: &Element,
    ty: i64,
    strings: &[String],
    comments: &mut Vec<String>,
) -> Vec<Item> {
    let values: Option<Vec<Y>> = strings.iter().map(|s| status_value(s)).collect();
    let Some(values) = values.filter(|v| !v.is_empty()) else {
        comments.push(cx.warn(
            scope,
            el,
            format!("status patterns {strings:?} are not converted: planrun checks codes (200) and classes (2xx)"),
        ));
        return Vec::new();
    };
    if ty & NOT != 0 {
        let parts: Vec<String> = values
            .iter()
            .map(|v| match v {
                Y::Int(n) => format!("response.status != {n}"),
                Y::Str(c) => format!("(response.status // 100) != {}", &c[..1]),
                _ => "true".into(),
            })
            .collect();
        let joiner = if ty & OR != 0 { " or " } else { " and " };
        return vec![one("expr", Y::s(format!("{{{{ {} }}}}", parts.join(joiner))))];
    }
    if ty & OR != 0 || values.len() == 1 {
        let v = if values.len() == 1 {
            values.into_iter().next().unwrap_or(Y::Int(200))
        } else {
            Y::Seq(values.into_iter().map(|v| Item { value: Some(v), comments: vec![] }).collect())
        };
        return vec![one("status", v)];
    }
    values.into_iter().map(|v| one("status", v)).collect()
}

fn json_path(p: &str) -> String {
    let p = p.trim();
    if p.starts_with('$') {
        p.to_string()
    } else {
        format!("$.{p}")
    }
}

fn json_path_ok(p: &str) -> bool {
    serde_json_path::JsonPath::parse(p).is_ok()
}

fn json_assertion(cx: &mut Cx, scope: &Scope, el: &Element, comments: &mut Vec<String>) -> Option<Item> {
    let p = &el.props;
    let path = json_path(p.text("JSON_PATH"));
    if !json_path_ok(&path) || has_refs(&path) {
        comments.push(cx.warn(
            scope,
            el,
            format!("JSONPath `{path}` is not one planrun reads (RFC 9535); not converted"),
        ));
        return None;
    }
    let validate = p.flag("JSONVALIDATION", false);
    let invert = p.flag("INVERT", false);
    let mut m = MapB::default();
    m.put("path", Y::s(path.clone()));
    if !validate {
        if invert {
            m.put("exists", Y::Bool(false));
        }
        let mut i = one("jsonpath", m.done());
        i.comments.clear();
        return Some(i);
    }
    let expected = p.text("EXPECTED_VALUE").to_string();
    if invert || p.flag("EXPECT_NULL", false) || has_refs(&expected) {
        comments.push(cx.warn(
            scope,
            el,
            "a JSON assertion that is inverted, expects null or reads variables is not converted".into(),
        ));
        return None;
    }
    if p.flag("ISREGEX", true) {
        if !regex_ok(&expected) {
            comments.push(cx.warn(
                scope,
                el,
                format!("the pattern `{expected}` is not a Rust regular expression; not converted"),
            ));
            return None;
        }
        m.put("matches", Y::s(expected));
    } else {
        let v = match expected.trim() {
            "true" => Y::Bool(true),
            "false" => Y::Bool(false),
            t => t.parse::<i64>().map(Y::Int).unwrap_or(Y::s(expected.clone())),
        };
        m.put("equals", v);
    }
    Some(one("jsonpath", m.done()))
}

/// The `extract` map, and comments for what was not converted.
pub(super) fn extractors(cx: &mut Cx, scope: &Scope, els: &[&Element]) -> (Vec<Entry>, Vec<String>) {
    let mut out: Vec<Entry> = Vec::new();
    let mut comments = Vec::new();
    let put = |out: &mut Vec<Entry>, name: String, m: MapB| {
        out.retain(|e| e.key != name);
        out.push(Entry { key: name, value: m.done(), comments: Vec::new() });
    };
    for el in els {
        let p = &el.props;
        match el.short_class() {
            "RegexExtractor" | "BoundaryExtractor" => {
                let boundary = el.short_class() == "BoundaryExtractor";
                let pre = if boundary { "BoundaryExtractor" } else { "RegexExtractor" };
                let Some(var) = p.opt(&format!("{pre}.refname")) else { continue };
                let name = cx.names.variable(var);
                let source = p.text(&format!("{pre}.useHeaders"));
                if !matches!(source, "" | "false") {
                    comments.push(cx.warn(scope, el, format!("extracting from `{source}` is not converted: planrun extracts from the body, headers by name, and cookies")));
                    continue;
                }
                let (re, group) = if boundary {
                    let (l, r) = (p.text("BoundaryExtractor.lboundary"), p.text("BoundaryExtractor.rboundary"));
                    (format!("(?s){}(.*?){}", regex::escape(l), regex::escape(r)), 1)
                } else {
                    let t = p.text("RegexExtractor.template").trim();
                    let g = t.strip_prefix('$').and_then(|t| t.strip_suffix('$')).and_then(|n| n.parse::<i64>().ok());
                    let g = match g {
                        Some(g) => g,
                        None => {
                            comments.push(cx.warn(
                                scope,
                                el,
                                format!("template `{t}` is not one group (`$1$`); group 1 used"),
                            ));
                            1
                        }
                    };
                    (p.text("RegexExtractor.regex").to_string(), g)
                };
                if has_refs(&re) || !regex_ok(&re) {
                    comments.push(cx.warn(
                        scope,
                        el,
                        format!("regular expression `{re}` reads variables or is not Rust syntax; not converted"),
                    ));
                    continue;
                }
                let mut m = MapB::default();
                m.put("regex", Y::s(re));
                if !boundary {
                    m.put("group", Y::Int(group));
                }
                let mn = p.text(&format!("{pre}.match_number")).trim();
                match mn.parse::<i64>() {
                    Ok(1) => {}
                    Ok(n) if n >= -1 => {
                        m.put("match_no", Y::Int(n));
                    }
                    _ if mn.is_empty() => {}
                    _ => comments.push(cx.warn(
                        scope,
                        el,
                        format!("match number `{mn}` is not a number; the first match is taken"),
                    )),
                }
                default(cx, scope, el, &mut m, p.text(&format!("{pre}.default")), &mut comments);
                put(&mut out, name, m);
            }
            "JSONPostProcessor" | "JSONPathExtractor" => {
                let plugin = el.short_class() == "JSONPathExtractor";
                let (refs, paths, matches, defaults) = if plugin {
                    (
                        p.text("VAR").to_string(),
                        p.text("JSONPATH").to_string(),
                        "1".to_string(),
                        p.text("DEFAULT").to_string(),
                    )
                } else {
                    (
                        p.text("JSONPostProcessor.referenceNames").to_string(),
                        p.text("JSONPostProcessor.jsonPathExprs").to_string(),
                        p.text("JSONPostProcessor.match_numbers").to_string(),
                        p.text("JSONPostProcessor.defaultValues").to_string(),
                    )
                };
                let paths: Vec<&str> = paths.split(';').collect();
                let matches: Vec<&str> = matches.split(';').collect();
                let defaults: Vec<&str> = defaults.split(';').collect();
                for (i, var) in refs.split(';').enumerate() {
                    let var = var.trim();
                    if var.is_empty() {
                        continue;
                    }
                    let name = cx.names.variable(var);
                    let path = json_path(paths.get(i).copied().unwrap_or(""));
                    if has_refs(&path) || !json_path_ok(&path) {
                        comments.push(cx.warn(
                            scope,
                            el,
                            format!("JSONPath `{path}` is not one planrun reads (RFC 9535); `{var}` not converted"),
                        ));
                        continue;
                    }
                    let mut m = MapB::default();
                    m.put("jsonpath", Y::s(path));
                    let mn: i64 = matches.get(i).and_then(|m| m.trim().parse().ok()).unwrap_or(0);
                    if mn != 1 && mn >= -1 {
                        m.put("match_no", Y::Int(mn));
                    }
                    default(cx, scope, el, &mut m, defaults.get(i).copied().unwrap_or(""), &mut comments);
                    put(&mut out, name, m);
                }
            }
            _ => {}
        }
    }
    (out, comments)
}

/// JMeter never fails a sample for an extractor that finds nothing: it sets the default (empty when none).
fn default(cx: &mut Cx, scope: &Scope, el: &Element, m: &mut MapB, d: &str, comments: &mut Vec<String>) {
    if has_refs(d) {
        comments.push(cx.warn(scope, el, format!("default `{d}` reads variables; kept as written")));
    }
    let _ = quote;
    m.put("default", Y::s(d.to_string()));
}
