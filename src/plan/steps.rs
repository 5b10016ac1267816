//! Steps: requests, pauses, and the blocks that group them (transaction, if, loop, while, foreach,
//! once, random).

use std::sync::Arc;

use super::decode::{Ctx, Fields, Names};
use super::model::{Defaults, Step};
use super::node::{Node, Value};
use super::request::request_step;
use super::think::think;
use super::{bounds, vocab};
use crate::diag::Diagnostic;

/// "blocks are transaction, if, ...": the heads of the block steps.
fn blocks_hint() -> String {
    let heads: Vec<&str> = vocab::blocks().iter().map(|b| vocab::head(b)).collect();
    format!("blocks are {}", heads.join(", "))
}

/// A list of steps.
pub fn steps(cx: &mut Ctx, node: &Node, defaults: &Defaults, names: &Names) -> Option<Vec<Step>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "steps: a list of steps");
        return None;
    };
    if items.is_empty() {
        cx.error(Diagnostic::new(node.span, "no steps").hint("add a step with `name` and `request`"));
        return None;
    }
    let steps: Vec<_> = items.iter().map(|s| step(cx, s, defaults, names)).collect();
    steps.into_iter().collect()
}

fn step(cx: &mut Ctx, node: &Node, defaults: &Defaults, names: &Names) -> Option<Step> {
    let f = cx.fields(node, "step", &vocab::step_keys())?;
    if let Some(shape) = vocab::blocks().iter().find(|b| f.get(vocab::head(b)).is_some()) {
        let (kind, allowed) = (vocab::head(shape), shape.names());
        if let Some((k, _)) = node.as_map()?.iter().find(|(k, _)| !allowed.contains(&k.name.as_str())) {
            cx.error(
                Diagnostic::new(k.span, format!("`{}` does not go in a `{kind}` step", k.name))
                    .expected(format!("only {}", allowed.join(", "))),
            );
            return None;
        }
        return block(cx, kind, &f, defaults, names);
    }
    if let Some(t) = f.get("think") {
        if let Some(k) = node.as_map()?.iter().map(|(k, _)| k).find(|k| k.name != "think") {
            cx.error(
                Diagnostic::new(k.span, format!("a `think` step has no `{}`", k.name))
                    .hint("write the pause as its own step: `- think: 200ms`"),
            );
            return None;
        }
        return think(cx, t).map(Step::Think);
    }
    if let Some(k) = f.key("steps").or_else(|| f.key("else")).or_else(|| f.key("max")).or_else(|| f.key("as")) {
        cx.error(Diagnostic::new(k.span, format!("`{}` belongs to a block step", k.name)).hint(blocks_hint()));
        return None;
    }
    if f.get("request").is_none() {
        if f.get("name").is_some() {
            cx.require(&f, "request");
        } else {
            cx.error(
                Diagnostic::new(node.span, "a step needs `name` and `request`, `think`, or a block")
                    .hint(blocks_hint()),
            );
        }
        return None;
    }
    let name = cx.require(&f, "name").and_then(|n| cx.string(n, "name"));
    let request = f.get("request")?;
    let label = Arc::from(name.clone().unwrap_or_default().as_str());
    let step = request_step(cx, label, node, request, f.get("assert"), f.get("extract"), defaults, names);
    name?;
    step.map(|s| Step::Request(Box::new(s)))
}

fn block(cx: &mut Ctx, kind: &str, f: &Fields, defaults: &Defaults, names: &Names) -> Option<Step> {
    let head = f.get(kind)?;
    match kind {
        "once" => {
            cx.once_blocks += 1;
            let id = cx.once_blocks;
            Some(Step::Once { id, steps: steps(cx, head, defaults, names)? })
        }
        "random" => random(cx, head, defaults, names),
        _ => {
            let body = cx.require(f, "steps").and_then(|s| steps(cx, s, defaults, names));
            let step = match kind {
                "transaction" => {
                    let name = cx.string(head, "transaction")?;
                    Step::Transaction { name: Arc::from(name.as_str()), steps: body? }
                }
                "if" => {
                    let cond = cx.template_node(head, "if", names);
                    let otherwise = match f.get("else") {
                        Some(e) => steps(cx, e, defaults, names),
                        None => Some(Vec::new()),
                    };
                    Step::If { cond: cond?, then: body?, otherwise: otherwise? }
                }
                "loop" => Step::Loop { count: cx.count(head, "loop", bounds::LOOPS)?, steps: body? },
                "while" => {
                    let cond = cx.template_node(head, "while", names);
                    let max = match f.get("max") {
                        Some(m) => cx.count(m, "max", bounds::LOOPS),
                        None => {
                            cx.error(
                                Diagnostic::new(head.span, "a `while` loop needs a bound")
                                    .hint("add `max: 100` (the most times the steps run)"),
                            );
                            None
                        }
                    };
                    Step::While { cond: cond?, max: max?, steps: body? }
                }
                _ => {
                    let text = cx.string(head, "foreach")?;
                    let list = list_template(cx, head, &text, names);
                    let var = match f.get("as") {
                        Some(a) => cx.string(a, "as"),
                        None => {
                            cx.error(
                                Diagnostic::new(head.span, "a `foreach` needs `as`")
                                    .hint("add `as: item` and read `{{ item }}` in its steps"),
                            );
                            None
                        }
                    };
                    Step::ForEach { list: list?, var: Arc::from(var?.as_str()), steps: body? }
                }
            };
            Some(step)
        }
    }
}

/// `foreach: "{{ expr }}"` renders its value as JSON so the list keeps its items' types.
fn list_template(cx: &mut Ctx, node: &Node, text: &str, names: &Names) -> Option<super::super::template::Tpl> {
    let t = text.trim();
    match t.strip_prefix("{{").and_then(|r| r.strip_suffix("}}")) {
        Some(expr) if !expr.contains("{{") => cx.template(node, &format!("{{{{ ({expr}) | tojson }}}}"), names),
        _ => {
            cx.error(
                Diagnostic::new(node.span, "foreach takes one expression, like \"{{ ['a', 'b'] }}\"")
                    .hint("write the list as a single {{ expression }}"),
            );
            None
        }
    }
}

fn random(cx: &mut Ctx, node: &Node, defaults: &Defaults, names: &Names) -> Option<Step> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "random: a list of { weight, steps }");
        return None;
    };
    if items.is_empty() {
        cx.error(Diagnostic::new(node.span, "random has no branches"));
        return None;
    }
    let mut branches = Vec::new();
    for item in items {
        let f = cx.object(item, &vocab::BRANCH)?;
        let weight = match f.get("weight") {
            Some(w) => cx.count(w, "weight", bounds::WEIGHT),
            None => Some(1),
        };
        let body = cx.require(&f, "steps").and_then(|s| steps(cx, s, defaults, names));
        branches.push((u32::try_from(weight?).unwrap_or(u32::MAX), body?));
    }
    // Each branch keeps the sum of the weights up to its own, so a draw below the total picks it in one pass.
    let mut total = 0u32;
    for (weight, _) in &mut branches {
        let Some(sum) = total.checked_add(*weight) else {
            cx.error(
                Diagnostic::new(node.span, format!("the weights of `random` add up to more than {}", u32::MAX))
                    .hint("weights are relative: divide them all by the same number"),
            );
            return None;
        };
        total = sum;
        *weight = sum;
    }
    Some(Step::Random(branches))
}

/// Names that steps bind: extractors' variables and foreach's `as`, anywhere in the plan.
pub fn bound_names(node: &Node, out: &mut Names) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                match (k.name.as_str(), &v.value) {
                    ("extract", Value::Map(vars)) => out.extend(vars.iter().map(|(n, _)| n.name.clone())),
                    ("as", Value::Str(s)) => {
                        out.insert(s.clone());
                    }
                    _ => {}
                }
                bound_names(v, out);
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| bound_names(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlanFile, PlanOptions};
    use crate::plan::model::{Plan, Step};
    use crate::source::Source;

    fn validated(text: &str) -> Plan {
        let file = PlanFile::parse(Source::new("p.yaml", text)).unwrap_or_else(|e| panic!("{e:?}"));
        file.validate(&PlanOptions::default()).unwrap_or_else(|e| panic!("{e:?}"))
    }

    const PLAN: &str = r#"name: p
defaults: { base_url: "http://127.0.0.1:9" }
setup:
  - name: s
    threads: 1
    steps:
      - once:
          - name: a
            request: { url: /a }
thread_groups:
  - name: g
    threads: 1
    steps:
      - once:
          - once:
              - name: b
                request: { url: /b }
      - random:
          - weight: 3
            steps:
              - once:
                  - name: c
                    request: { url: /c }
          - steps: [ { name: d, request: { url: /d } } ]
          - weight: 6
            steps: [ { think: 1ms } ]
"#;

    #[test]
    fn once_blocks_are_numbered_from_1_in_plan_order_parents_first() {
        let plan = validated(PLAN);
        let mut ids = Vec::new();
        for g in &plan.groups {
            Step::walk(&g.steps, &mut |s| ids.extend(if let Step::Once { id, .. } = s { Some(*id) } else { None }));
        }
        assert_eq!(ids, [1, 2, 3, 4]);
    }

    #[test]
    fn random_branches_hold_cumulative_weights() {
        let plan = validated(PLAN);
        let mut weights = Vec::new();
        for g in &plan.groups {
            Step::walk(&g.steps, &mut |s| {
                if let Step::Random(branches) = s {
                    weights.extend(branches.iter().map(|(w, _)| *w));
                }
            });
        }
        assert_eq!(weights, [3, 4, 10]);
        assert_eq!(Step::count_requests(&plan.groups[1].steps), 3);
    }
}
