//! The load model of a thread group: closed (`threads`, optionally ramped by `stages`) or open
//! (`arrival_rate`, optionally ramped by `stages`, with a pool of at most `max_threads` users).

use std::time::Duration;

use super::bounds;
use super::decode::{Ctx, Fields};
use super::model::{Load, Plan, Stage, ThreadGroup};
use super::node::{Node, Value};
use crate::diag::{Diagnostic, Warning, Warnings};

/// Threads in an open group's pool when `max_threads` is not given.
pub const DEFAULT_MAX_THREADS: u64 = 100;

/// The group's load model, its thread count and, with stages, their total duration.
pub fn load(cx: &mut Ctx, f: &Fields) -> Option<(Load, u32, Option<Duration>)> {
    let open = f.get("arrival_rate").is_some()
        || f.get("stages").and_then(stage_targets).is_some_and(|t| t.iter().any(|n| is_rate(n)));
    if open {
        return open_load(cx, f);
    }
    if let Some(k) = f.key("max_threads") {
        cx.error(
            Diagnostic::new(k.span, "`max_threads` belongs to open-model groups")
                .hint("add `arrival_rate: 100/s`, or use `threads` for a closed group"),
        );
        return None;
    }
    match f.get("stages") {
        Some(stages_node) => {
            if let Some(k) = f.key("threads").or_else(|| f.key("ramp_up")) {
                cx.error(
                    Diagnostic::new(k.span, format!("`{}` and `stages` both set the number of threads", k.name))
                        .hint("with stages, each stage's target is the thread count to reach"),
                );
                return None;
            }
            let stages = stages(cx, stages_node, false)?;
            let max = stages.iter().map(|s| s.target).fold(0.0, f64::max).ceil() as u64;
            if max < 1 {
                cx.error(Diagnostic::new(stages_node.span, "no stage has a thread").hint("give a stage a target >= 1"));
                return None;
            }
            let total = stages.iter().map(|s| s.duration).sum();
            Some((Load::ClosedStages(stages), clamp_threads(max), Some(total)))
        }
        None => {
            let threads = cx.require(f, "threads").and_then(|t| cx.count(t, "threads", bounds::THREADS))?;
            Some((Load::Closed, clamp_threads(threads), None))
        }
    }
}

fn open_load(cx: &mut Ctx, f: &Fields) -> Option<(Load, u32, Option<Duration>)> {
    for k in ["threads", "ramp_up"] {
        if let Some(key) = f.key(k) {
            cx.error(
                Diagnostic::new(
                    key.span,
                    format!("`{k}` belongs to closed-model groups; this one has an arrival rate"),
                )
                .hint("open-model groups size their pool with `max_threads`"),
            );
            return None;
        }
    }
    let initial = match f.get("arrival_rate") {
        Some(r) => rate(cx, r)?,
        None => 0.0,
    };
    let max = match f.get("max_threads") {
        Some(m) => cx.count(m, "max_threads", bounds::THREADS)?,
        None => DEFAULT_MAX_THREADS,
    };
    let stages = match f.get("stages") {
        Some(s) => stages(cx, s, true)?,
        None => {
            let Some(d) = f.get("duration") else {
                cx.error(
                    Diagnostic::new(f.node.span, "an open-model group needs `duration` (or `stages`)")
                        .hint("add e.g. `duration: 60s`"),
                );
                return None;
            };
            vec![Stage { duration: cx.duration(d, "duration")?, target: initial }]
        }
    };
    let total = stages.iter().map(|s| s.duration).sum();
    Some((Load::Open { initial_rate: initial, stages }, clamp_threads(max), Some(total)))
}

/// What the groups' load will not do as written: a `duration` that ends a group before its ramp-up (or
/// stages) is over leaves users that never start, or a rate never reached. The group runs as far as its
/// duration; these say how far that is.
pub fn warnings(plan: &Plan) -> Warnings {
    let mut out = Warnings::default();
    for g in &plan.groups {
        if let Some(w) = cut_short(g) {
            out.push(w);
        }
    }
    out
}

fn cut_short<S>(g: &ThreadGroup<S>) -> Option<Warning> {
    let d = g.duration?;
    let name = &g.name;
    match &g.load {
        Load::Closed => {
            let started = g.users_started();
            if started >= g.threads {
                return None;
            }
            let last = g.start_offset(g.threads);
            Some(
                Warning::new(format!(
                    "group `{name}`: its duration ({d:?}) ends it before its ramp_up ({:?}) is over: only {started} \
                     of its {} users start",
                    g.ramp_up, g.threads
                ))
                .hint(format!(
                    "the last user starts {last:?} in; make the duration longer than that, or ramp_up shorter"
                )),
            )
        }
        Load::ClosedStages(stages) => {
            let (wanted, reached) = peaks(0.0, stages, g);
            let (wanted, reached) = (wanted.round(), reached.round());
            (reached < wanted).then(|| {
                Warning::new(format!(
                    "group `{name}`: its duration ({d:?}) ends it before its stages ({:?}) are over: it reaches \
                     {reached} of the {wanted} users they name",
                    Stage::total(stages)
                ))
                .hint("make the duration as long as the stages, or leave it out: stages end the group")
            })
        }
        Load::Open { initial_rate, stages } => {
            let (wanted, reached) = peaks(*initial_rate, stages, g);
            (reached < wanted).then(|| {
                Warning::new(format!(
                    "group `{name}`: its duration ({d:?}) ends it before its stages ({:?}) are over: its rate \
                     reaches {}/s of the {}/s they name",
                    Stage::total(stages),
                    (reached * 1000.0).round() / 1000.0,
                    wanted
                ))
                .hint("make the duration as long as the stages, or leave it out: stages end the group")
            })
        }
    }
}

/// The highest value the stages name, and the highest the group reaches as it runs.
fn peaks<S>(from: f64, stages: &[Stage], g: &ThreadGroup<S>) -> (f64, f64) {
    let run = match g.load_as_run() {
        Load::ClosedStages(s) | Load::Open { stages: s, .. } => Stage::peak(from, &s),
        Load::Closed => 0.0,
    };
    (Stage::peak(from, stages), run)
}

/// A thread count, already within [`bounds::THREADS`].
fn clamp_threads(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn stage_targets(node: &Node) -> Option<Vec<&Node>> {
    let Value::Seq(items) = &node.value else { return None };
    Some(items.iter().filter_map(|i| i.as_map()?.iter().find(|(k, _)| k.name == "target").map(|(_, v)| v)).collect())
}

fn is_rate(node: &Node) -> bool {
    matches!(&node.value, Value::Str(s) if s.contains('/'))
}

fn stages(cx: &mut Ctx, node: &Node, open: bool) -> Option<Vec<Stage>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "stages: a list of { duration, target }");
        return None;
    };
    if items.is_empty() {
        cx.error(Diagnostic::new(node.span, "no stages").hint("add e.g. `- { duration: 30s, target: 50 }`"));
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(f) = cx.object(item, &super::vocab::STAGE) else {
            ok = false;
            continue;
        };
        let duration = cx.require(&f, "duration").and_then(|d| cx.duration(d, "duration"));
        let target = cx.require(&f, "target").and_then(|t| {
            if open {
                rate(cx, t)
            } else {
                cx.count(t, "target", bounds::STAGE_TARGET).map(|n| n as f64)
            }
        });
        match (duration, target) {
            (Some(duration), Some(target)) => out.push(Stage { duration, target }),
            _ => ok = false,
        }
    }
    let total = out.iter().try_fold(Duration::ZERO, |sum, s| sum.checked_add(s.duration));
    if ok && total.is_none_or(|t| t > crate::duration::MAX) {
        let limit = crate::duration::MAX_TEXT;
        cx.error(
            Diagnostic::new(node.span, format!("the stages add up to more than the limit of {limit}"))
                .hint(format!("a group runs for at most {limit}")),
        );
        return None;
    }
    ok.then_some(out)
}

/// An arrival rate: `200/s`, `600/m`, `10/h`, or a number meaning per second.
fn rate(cx: &mut Ctx, node: &Node) -> Option<f64> {
    let parsed = match &node.value {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        Value::Str(_) => {
            let text = cx.load_time_text(node, "arrival rate")?;
            parse_rate(&text)
        }
        _ => Err("not a rate".to_string()),
    };
    match parsed {
        Ok(r) if r.is_finite() && r >= 0.0 => Some(r),
        Ok(r) => {
            let problem = if r.is_finite() { "a rate cannot be negative" } else { "a rate must be a finite number" };
            cx.error(Diagnostic::new(node.span, problem).expected("a rate like 200/s"));
            None
        }
        Err(e) => {
            cx.error(
                Diagnostic::new(node.span, format!("arrival rate: {e}"))
                    .expected("a rate like 200/s, 600/m or 10/h")
                    .hint("write the count of iterations per unit of time"),
            );
            None
        }
    }
}

/// Parses `200/s`, `600/m`, `10/h`, or a plain number (per second).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (n, per) = match t.split_once('/') {
        Some((n, unit)) => {
            let per = match unit.trim() {
                "s" | "1s" | "sec" => 1.0,
                "m" | "1m" | "min" => 60.0,
                "h" | "1h" => 3600.0,
                u => return Err(format!("unknown unit `/{u}` in `{t}`")),
            };
            (n.trim(), per)
        }
        None => (t, 1.0),
    };
    n.parse::<f64>().map(|n| n / per).map_err(|_| format!("`{t}` is not a rate"))
}

#[cfg(test)]
mod tests {
    use super::parse_rate;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("200/s"), Ok(200.0));
        assert_eq!(parse_rate("600/m"), Ok(10.0));
        assert_eq!(parse_rate("7200/h"), Ok(2.0));
        assert_eq!(parse_rate("50"), Ok(50.0));
        assert!(parse_rate("5/d").is_err());
        assert!(parse_rate("fast").is_err());
    }
}
