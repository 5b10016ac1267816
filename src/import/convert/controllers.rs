//! Logic controllers as step blocks: Simple (inlined), Loop, Transaction, If, While, ForEach, Once Only,
//! Random, Throughput (percent, as a weighted `random`); the rest inlined or dropped with a warning.

use super::groups::{count, FOREVER};
use super::{element, steps, Cx, Scope};
use crate::import::functions::{parse, quote, Seg, When};
use crate::import::tree::Element;
use crate::import::yaml::{Item, MapB, Y};

/// The most passes of a While Controller: planrun wants a cap, JMeter has none.
const WHILE_MAX: i64 = 1_000_000;

pub(super) fn controller<'e>(cx: &mut Cx, el: &'e Element, scope: &Scope<'e>) -> Vec<Item> {
    let p = &el.props;
    let mut inner = scope.clone();
    inner.path.push(el.name.clone());
    let mut comments = Vec::new();
    let label = super::kinds::label(el);
    let block = |cx: &mut Cx, comments: &mut Vec<String>| -> Option<Vec<Item>> {
        let items = steps(cx, &el.children, &inner);
        if items.iter().any(|i| i.value.is_some()) {
            Some(items)
        } else {
            comments.extend(items.into_iter().flat_map(|i| i.comments));
            None
        }
    };
    let mut m = MapB::default();
    match el.short_class() {
        "GenericController" | "RecordingController" => return steps(cx, &el.children, &inner),
        "TransactionController" => {
            let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
            if p.flag("TransactionController.parent", false) {
                comments.push(format!(
                    "{label}: JMeter wrote only the parent sample; planrun writes the requests and the transaction"
                ));
            }
            m.put(
                "transaction",
                Y::s(if el.name.trim().is_empty() { "transaction".to_string() } else { el.name.clone() }),
            );
            m.put("steps", Y::Seq(items));
        }
        "LoopController" => {
            let loops = p.text("LoopController.loops").trim().to_string();
            let forever = loops == "-1" || (loops.is_empty() && p.flag("LoopController.continue_forever", false));
            let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
            let n = if forever {
                comments.push(cx.warn(scope, el, format!("loops forever in JMeter; {FOREVER} loops here")));
                Y::Int(FOREVER)
            } else {
                let (n, mut c) = count(cx, scope, el, &loops, "loop count", 1);
                comments.append(&mut c);
                n
            };
            m.put("loop", n);
            m.put("steps", Y::Seq(items));
        }
        "IfController" => {
            let cond = p.text("IfController.condition").trim().to_string();
            let use_expr = p.flag("IfController.useExpression", false);
            let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
            let t = match condition(cx, scope, el, &cond, if use_expr { Cond::Expression } else { Cond::JavaScript }) {
                Some(t) => t,
                None => {
                    comments.push(cx.warn(
                        scope,
                        el,
                        format!("condition `{cond}` is not converted; its steps always run"),
                    ));
                    "true".to_string()
                }
            };
            comments.push(format!("JMeter condition: {cond}"));
            m.put("if", Y::s(t));
            m.put("steps", Y::Seq(items));
        }
        "WhileController" => {
            let cond = p.text("WhileController.condition").trim().to_string();
            let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
            if cond.is_empty() || cond == "LAST" {
                comments.push(cx.warn(
                    scope,
                    el,
                    "a While Controller that loops until a sample fails is not converted; its steps run once".into(),
                ));
                let mut out = items;
                if let Some(first) = out.first_mut() {
                    let mut c = comments;
                    c.append(&mut first.comments);
                    first.comments = c;
                }
                return out;
            }
            let t = match condition(cx, scope, el, &cond, Cond::While) {
                Some(t) => t,
                None => {
                    comments.push(cx.warn(
                        scope,
                        el,
                        format!("condition `{cond}` is not converted; the loop runs {WHILE_MAX} times"),
                    ));
                    "true".to_string()
                }
            };
            comments.push(format!("JMeter condition: {cond} (JMeter sets no cap: `max` is planrun's)"));
            m.put("while", Y::s(t));
            m.put("max", Y::Int(WHILE_MAX));
            m.put("steps", Y::Seq(items));
        }
        "ForeachController" => {
            let input = p.text("ForeachController.inputVal").trim().to_string();
            let output = p.text("ForeachController.returnVal").trim().to_string();
            let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
            let list = if cx.lists.contains(&input) {
                let name = cx.names.variable(&input);
                format!("{{{{ {name} }}}}")
            } else {
                comments.push(cx.warn(
                    scope,
                    el,
                    format!("`{input}_1`, `{input}_2`... are not set by an extractor with match number -1 here; the loop runs over nothing"),
                ));
                "{{ [] }}".to_string()
            };
            if p.opt("ForeachController.startIndex").is_some() || p.opt("ForeachController.endIndex").is_some() {
                comments.push(cx.warn(
                    scope,
                    el,
                    "start and end indexes are not converted: every item is visited".into(),
                ));
            }
            let var = if output.is_empty() { "item".to_string() } else { cx.names.variable(&output) };
            m.put("foreach", Y::s(list));
            m.put("as", Y::s(var));
            m.put("steps", Y::Seq(items));
        }
        "OnceOnlyController" => {
            let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
            m.put("once", Y::Seq(items));
        }
        "RandomController" | "ThroughputController" => {
            let percent = el.short_class() == "ThroughputController";
            if percent && p.text("ThroughputController.style").trim() != "1" {
                comments.push(cx.warn(
                    scope,
                    el,
                    "a Throughput Controller counting executions is not converted; its steps always run".into(),
                ));
                return inline(steps(cx, &el.children, &inner), comments);
            }
            let mut branches = Vec::new();
            if percent {
                let pct: f64 = p.text("ThroughputController.percentThroughput").trim().parse().unwrap_or(100.0);
                let Some(items) = block(cx, &mut comments) else { return empty(cx, scope, el, comments) };
                let w = (pct.clamp(0.0, 100.0) * 10.0).round() as i64;
                if w >= 1000 {
                    return inline(items, comments);
                }
                if w <= 0 {
                    comments.push(format!("{label}: 0% of the passes run its steps; left out"));
                    return vec![Item { value: None, comments }];
                }
                let mut a = MapB::default();
                a.put("weight", Y::Int(w)).put("steps", Y::Seq(items));
                let mut b = MapB::default();
                let mut think = MapB::default();
                think.put("think", Y::s("0ms"));
                b.put("weight", Y::Int(1000 - w))
                    .put("steps", Y::Seq(vec![Item { value: Some(think.done()), comments: vec![] }]));
                branches.push(Item { value: Some(a.done()), comments: vec![format!("{pct}% of the passes")] });
                branches.push(Item { value: Some(b.done()), comments: vec!["the other passes: nothing".into()] });
            } else {
                let mut pending = Vec::new();
                for child in el.children.iter().filter(|c| c.enabled) {
                    let items = element(cx, child, &inner, &mut pending);
                    if items.iter().any(|i| i.value.is_some()) {
                        let mut b = MapB::default();
                        b.put("steps", Y::Seq(items));
                        branches.push(Item { value: Some(b.done()), comments: std::mem::take(&mut pending) });
                    }
                }
                comments.extend(pending);
                if branches.is_empty() {
                    return empty(cx, scope, el, comments);
                }
            }
            m.put("random", Y::Seq(branches));
        }
        "ModuleController" | "IncludeController" => {
            let c = cx.warn(scope, el, "not converted: copy the steps it refers to in place".into());
            return vec![Item { value: None, comments: vec![c] }];
        }
        other => {
            let why = match other {
                "RandomOrderController" => "runs its children in a random order in JMeter; in order here",
                "InterleaveControl" => "runs one child per pass in JMeter; all of them here",
                "SwitchController" => "picks one child in JMeter; all of them run here",
                "RunTime" => "bounds its children by time in JMeter; they run once here",
                "CriticalSectionController" => "planrun users share no lock; the steps run without one",
                _ => "not converted; its steps run in place",
            };
            comments.push(cx.warn(scope, el, why.into()));
            return inline(steps(cx, &el.children, &inner), comments);
        }
    }
    vec![Item { value: Some(m.done()), comments }]
}

fn inline(mut items: Vec<Item>, comments: Vec<String>) -> Vec<Item> {
    match items.first_mut() {
        Some(first) => {
            let mut c = comments;
            c.append(&mut first.comments);
            first.comments = c;
        }
        None => items.push(Item { value: None, comments }),
    }
    items
}

fn empty(cx: &mut Cx, scope: &Scope, el: &Element, mut comments: Vec<String>) -> Vec<Item> {
    comments.push(cx.warn(scope, el, "holds nothing planrun can send; left out".into()));
    vec![Item { value: None, comments }]
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    /// If Controller, "interpret condition as variable expression": true when it is `true` in any case.
    Expression,
    /// If Controller evaluating JavaScript.
    JavaScript,
    /// While Controller: goes on until it is `false`.
    While,
}

/// A condition as a template, for the forms with a clear equivalent: a literal, one variable or function,
/// `__jexl3`/`__groovy`/`__javaScript` of a comparison, or (JavaScript) a comparison.
fn condition(cx: &mut Cx, scope: &Scope, el: &Element, cond: &str, how: Cond) -> Option<String> {
    let segs = parse(cond);
    let truthy = |e: &str| match how {
        Cond::While => format!("{{{{ ({e} | string | trim | lower) != 'false' }}}}"),
        _ => format!("{{{{ ({e} | string | trim | lower) == 'true' }}}}"),
    };
    match segs.as_slice() {
        [] => None,
        [Seg::Lit(t)] if how != Cond::JavaScript || matches!(t.trim(), "true" | "false") => {
            let on = match how {
                Cond::While => !t.trim().eq_ignore_ascii_case("false"),
                _ => t.trim().eq_ignore_ascii_case("true"),
            };
            Some(if on { "true".into() } else { "false".into() })
        }
        [Seg::Func { name, args, raw }]
            if matches!(name.as_str(), "__jexl3" | "__jexl2" | "__groovy" | "__javaScript") =>
        {
            let inner = raw.strip_prefix(&format!("${{{name}(")).and_then(|r| r.strip_suffix(")}"))?;
            let _ = args;
            // The expression is the first argument; a second names a variable to set.
            let expr = split_first_arg(inner);
            comparison(cx, scope, el, expr.trim())
        }
        [single @ (Seg::Var(_) | Seg::Func { .. })] if how != Cond::JavaScript => {
            let raw = match single {
                Seg::Var(n) => format!("${{{n}}}"),
                Seg::Func { raw, .. } => raw.clone(),
                Seg::Lit(_) => return None,
            };
            let (e, _) = cx.expr(scope, el, &raw, When::Run);
            Some(truthy(&e))
        }
        [Seg::Var(n)] => {
            let (e, _) = cx.expr(scope, el, &format!("${{{n}}}"), When::Run);
            Some(truthy(&e))
        }
        _ if how == Cond::JavaScript => comparison(cx, scope, el, cond),
        _ => None,
    }
}

fn split_first_arg(s: &str) -> &str {
    let (mut depth, mut quote_char) = (0i32, None::<char>);
    for (i, c) in s.char_indices() {
        match (c, quote_char) {
            ('"' | '\'', None) => quote_char = Some(c),
            (q, Some(o)) if q == o => quote_char = None,
            ('(' | '{', None) => depth += 1,
            (')' | '}', None) => depth -= 1,
            (',', None) if depth == 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

/// `LEFT OP RIGHT` with OP one of `==`, `!=`, `===`, `!==`, `<`, `<=`, `>`, `>=`, each side a quoted
/// string, a number, `true`/`false` or a `${...}`.
fn comparison(cx: &mut Cx, scope: &Scope, el: &Element, s: &str) -> Option<String> {
    let ops = ["===", "!==", "==", "!=", "<=", ">=", "<", ">"];
    let (at, op) =
        ops.iter().filter_map(|op| find_op(s, op).map(|i| (i, *op))).min_by_key(|(i, o)| (*i, usize::MAX - o.len()))?;
    let (left, right) = (s[..at].trim(), s[at + op.len()..].trim());
    let numeric = matches!(op, "<" | "<=" | ">" | ">=");
    let l = side(cx, scope, el, left, numeric)?;
    let r = side(cx, scope, el, right, numeric)?;
    let op = match op {
        "===" => "==",
        "!==" => "!=",
        o => o,
    };
    Some(format!("{{{{ {l} {op} {r} }}}}"))
}

/// The index of `op` outside quotes.
fn find_op(s: &str, op: &str) -> Option<usize> {
    let mut q = None::<char>;
    for (i, c) in s.char_indices() {
        match (c, q) {
            ('"' | '\'', None) => q = Some(c),
            (x, Some(o)) if x == o => q = None,
            (_, None) if s[i..].starts_with(op) => return Some(i),
            _ => {}
        }
    }
    None
}

fn side(cx: &mut Cx, scope: &Scope, el: &Element, s: &str, numeric: bool) -> Option<String> {
    if s.is_empty() || s.contains("&&") || s.contains("||") {
        return None;
    }
    let quoted = (s.starts_with('"') && s.ends_with('"') || s.starts_with('\'') && s.ends_with('\'')) && s.len() >= 2;
    let (e, notes) = if quoted {
        cx.expr(scope, el, &s[1..s.len() - 1], When::Run)
    } else if s.parse::<f64>().is_ok() {
        return Some(if numeric { s.to_string() } else { quote(s) });
    } else if matches!(s, "true" | "false") {
        return Some(quote(s));
    } else if parse(s).iter().all(|seg| !matches!(seg, Seg::Lit(_))) {
        cx.expr(scope, el, s, When::Run)
    } else {
        return None;
    };
    let _ = notes;
    Some(if numeric { format!("({e} | float)") } else { format!("({e} | string)") })
}
