//! Thread groups: `ThreadGroup`, `SetupThreadGroup`, `PostThreadGroup`, and plugin groups approximated.

use super::kinds::{kind, Kind};
use super::{steps, Cx, Scope};
use crate::import::tree::Element;
use crate::import::yaml::{Item, MapB, Y};

/// The most loops planrun runs; stands for JMeter's "infinite".
pub(super) const FOREVER: i64 = 1_000_000_000;

/// One thread group as a list item (no value when it has nothing to send), with `pending` comments above it.
pub(super) fn group<'e>(
    cx: &mut Cx,
    el: &'e Element,
    plan: &Scope<'e>,
    plan_children: &[Element],
    pending: Vec<String>,
) -> Item {
    let p = &el.props;
    let mut comments = pending;
    let mut g = MapB::default();
    let name = if el.name.trim().is_empty() { "Thread Group".to_string() } else { el.name.clone() };
    g.put("name", Y::s(name.clone()));
    let plugin = !matches!(el.short_class(), "ThreadGroup" | "SetupThreadGroup" | "PostThreadGroup");
    if plugin {
        comments.push(
            cx.warn(
                plan,
                el,
                "a plugin thread group: approximated as a closed group of its thread count, looping as its loop \
             controller says; write its schedule as `stages`"
                    .into(),
            ),
        );
    }
    let threads = p.opt("ThreadGroup.num_threads").unwrap_or("1");
    let (t, mut c) = count(cx, plan, el, threads, "threads", 1);
    comments.append(&mut c);
    g.put("threads", t);
    if let Some(ramp) = p.opt("ThreadGroup.ramp_time").filter(|r| *r != "0") {
        let (r, mut c) = seconds(cx, plan, el, ramp, "ramp-up");
        comments.append(&mut c);
        if let Some(r) = r {
            g.put("ramp_up", r);
        }
    }
    let main = p.element("ThreadGroup.main_controller");
    let loops = main.map(|m| m.text("LoopController.loops").trim().to_string()).unwrap_or_else(|| "1".into());
    let scheduler = p.flag("ThreadGroup.scheduler", false);
    let duration = p.opt("ThreadGroup.duration").filter(|_| scheduler);
    let mut bounded = false;
    if let Some(d) = duration {
        let (d, mut c) = seconds(cx, plan, el, d, "duration");
        comments.append(&mut c);
        if let Some(d) = d {
            g.put("duration", d);
            bounded = true;
        }
    }
    if scheduler {
        if let Some(delay) = p.opt("ThreadGroup.delay").filter(|d| *d != "0") {
            comments.push(cx.warn(
                plan,
                el,
                format!("a startup delay of {delay} s is not converted: the group starts at once"),
            ));
        }
    }
    if loops == "-1" || loops.is_empty() {
        if !bounded {
            comments.push(cx.warn(
                plan,
                el,
                format!("loops forever in JMeter; here {FOREVER} loops (stop it with Ctrl-C, or set `duration`)"),
            ));
            g.put("loops", Y::Int(FOREVER));
        }
    } else {
        let (l, mut c) = count(cx, plan, el, &loops, "loop count", 1);
        comments.append(&mut c);
        g.put("loops", l);
    }
    match p.text("ThreadGroup.on_sample_error") {
        "" | "continue" => {}
        other => comments.push(cx.warn(
            plan,
            el,
            format!("on sample error `{other}` is not converted: planrun goes on after a failed sample"),
        )),
    }
    let mut scope = plan.clone();
    scope.path.push(name);
    let items = steps(cx, &el.children, &scope);
    if !items.iter().any(|i| i.value.is_some()) {
        comments.extend(items.into_iter().flat_map(|i| i.comments));
        comments.push(cx.warn(plan, el, "sends no HTTP request planrun can convert: the group is left out".into()));
        return Item { value: None, comments };
    }
    let items = with_counters(cx, plan_children, &el.children, items);
    g.put("steps", Y::Seq(items));
    Item { value: Some(g.done()), comments }
}

/// The group's steps inside one `foreach` per shared counter of the plan and of the group, so that each
/// counter is read once at the start of every iteration, as JMeter sets it.
fn with_counters(cx: &Cx, above: &[Element], own: &[Element], mut items: Vec<Item>) -> Vec<Item> {
    let counters: Vec<(&Element, &super::IterationCounter)> = above
        .iter()
        .chain(own)
        .filter(|c| c.enabled && kind(c) == Kind::Counter)
        .filter_map(|c| cx.counters.iter().find(|k| k.line == c.line).map(|k| (c, k)))
        .collect();
    for (el, counter) in counters.into_iter().rev() {
        let mut m = MapB::default();
        m.put("foreach", Y::s(format!("{{{{ [{}] }}}}", counter.expr)));
        m.put("as", Y::s(counter.ident.clone()));
        m.put("steps", Y::Seq(items));
        let comment = format!(
            "planrun import: {}: JMeter sets `{}` once at the start of each iteration",
            super::kinds::label(el),
            counter.ident
        );
        items = vec![Item { value: Some(m.done()), comments: vec![comment] }];
    }
    items
}

/// A count: the number when written as one, a load-time template when it reads properties, else `fallback`
/// with a warning.
pub(super) fn count(cx: &mut Cx, scope: &Scope, el: &Element, s: &str, what: &str, fallback: i64) -> (Y, Vec<String>) {
    if let Ok(n) = s.trim().parse::<i64>() {
        if n >= 1 {
            return (Y::Int(n), Vec::new());
        }
    }
    match cx.load_value(s.trim()) {
        Some(t) if crate::import::functions::has_refs(s) => (Y::s(t), Vec::new()),
        _ => {
            let c =
                cx.warn(scope, el, format!("{what} `{s}` is not a number known when the plan loads; {fallback} used"));
            (Y::Int(fallback), vec![c])
        }
    }
}

/// A number of seconds as a duration (`30s`), or a load-time template of one.
pub(super) fn seconds(cx: &mut Cx, scope: &Scope, el: &Element, s: &str, what: &str) -> (Option<Y>, Vec<String>) {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return (Some(Y::s(format!("{n}s"))), Vec::new());
    }
    match cx.load_value(s) {
        Some(t) if crate::import::functions::has_refs(s) => (Some(Y::s(format!("{t}s"))), Vec::new()),
        _ => {
            let c = cx.warn(
                scope,
                el,
                format!("{what} `{s}` is not a number of seconds known when the plan loads; left out"),
            );
            (None, vec![c])
        }
    }
}
