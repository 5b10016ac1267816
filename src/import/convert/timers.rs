//! Timers, as `think` steps before each request in their scope (JMeter delays each sampler in a timer's
//! scope before it runs), and the Flow Control Action's pause.

use super::{Cx, Scope};
use crate::import::tree::Element;
use crate::import::yaml::{Item, MapB, Y};

/// The `think` step of a timer; none for a zero delay.
pub(super) fn think(cx: &mut Cx, t: &Element, scope: &Scope) -> Vec<Item> {
    let p = &t.props;
    let delay = p.text("ConstantTimer.delay").trim();
    let range = p.text("RandomTimer.range").trim();
    let (Some(d), r) = (ms(cx, delay), ms(cx, range)) else {
        let c = cx.warn(
            scope,
            t,
            format!("delay `{delay}` is not a number of ms known when the plan loads; not converted"),
        );
        return vec![Item { value: None, comments: vec![c] }];
    };
    let value = match t.short_class() {
        "ConstantTimer" => {
            if d == "0" {
                return Vec::new();
            }
            Y::s(format!("{d}ms"))
        }
        "UniformRandomTimer" => {
            let Some(r) = r else {
                let c = cx.warn(scope, t, format!("range `{range}` is not a number; not converted"));
                return vec![Item { value: None, comments: vec![c] }];
            };
            let hi = match (d.parse::<f64>(), r.parse::<f64>()) {
                (Ok(a), Ok(b)) => fmt_ms(a + b),
                _ => {
                    let c = cx.warn(scope, t, "a uniform timer read from properties is not converted".into());
                    return vec![Item { value: None, comments: vec![c] }];
                }
            };
            let mut m = MapB::default();
            m.put("uniform", Y::Seq(vec![item(Y::s(format!("{d}ms"))), item(Y::s(format!("{hi}ms")))]));
            m.done()
        }
        _ => {
            // GaussianRandomTimer: |N(0,1) * range + delay|: mean `delay`, deviation `range`.
            let Some(r) = r else {
                let c = cx.warn(scope, t, format!("deviation `{range}` is not a number; not converted"));
                return vec![Item { value: None, comments: vec![c] }];
            };
            let mut g = MapB::default();
            g.put("mean", Y::s(format!("{d}ms"))).put("stddev", Y::s(format!("{r}ms")));
            let mut m = MapB::default();
            m.put("gaussian", g.done());
            m.done()
        }
    };
    let mut step = MapB::default();
    step.put("think", value);
    vec![Item { value: Some(step.done()), comments: vec![super::kinds::label(t)] }]
}

fn item(v: Y) -> Item {
    Item { value: Some(v), comments: Vec::new() }
}

/// A number of ms (`100`, `100.0`), or a load-time template of one.
fn ms(cx: &mut Cx, s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("0".into());
    }
    if let Ok(v) = s.parse::<f64>() {
        return (v.is_finite() && v >= 0.0).then(|| fmt_ms(v));
    }
    cx.load_value(s).filter(|_| crate::import::functions::has_refs(s))
}

fn fmt_ms(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as u64)
    } else {
        format!("{v}")
    }
}

/// A Flow Control Action: a pause becomes the think steps of its timers and its own duration; other actions
/// are not converted.
pub(super) fn test_action(cx: &mut Cx, el: &Element, scope: &Scope) -> Vec<Item> {
    let p = &el.props;
    let action = p.text("ActionProcessor.action").trim();
    if action != "1" {
        let c = cx.warn(scope, el, format!("action {action} (stop, restart, go to next loop) is not converted"));
        return vec![Item { value: None, comments: vec![c] }];
    }
    let mut inner = scope.clone();
    inner.path.push(el.name.clone());
    let mut out = Vec::new();
    for t in scope
        .timers
        .iter()
        .copied()
        .chain(el.children.iter().filter(|c| c.enabled && super::kinds::kind(c) == super::kinds::Kind::Timer))
    {
        out.extend(think(cx, t, &inner));
    }
    let d = p.text("ActionProcessor.duration").trim();
    match ms(cx, d) {
        Some(d) if d == "0" => {}
        Some(d) => {
            let mut step = MapB::default();
            step.put("think", Y::s(format!("{d}ms")));
            out.push(Item { value: Some(step.done()), comments: vec![super::kinds::label(el)] });
        }
        None => {
            let c = cx.warn(scope, el, format!("pause `{d}` is not a number of ms; not converted"));
            out.push(Item { value: None, comments: vec![c] });
        }
    }
    out
}
