//! `planrun dry-run PLAN -n N`: the first requests of each group, byte for byte, without sending them.

use std::io::Write;

use super::args::DryRunArgs;
use super::exit;
use crate::compile::StepNode;
use crate::pipeline::StubMode;
use crate::plan::LoadOptions;
use crate::run::{user_masks, user_scope, wire};

pub(super) async fn dry_run(a: DryRunArgs) -> i32 {
    let opts = LoadOptions { overrides: a.plan.define, seed: a.plan.seed, stub_url: None };
    let loaded = match super::load::plan(&a.plan.plan, opts, StubMode::Start).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    let graph = &loaded.graph;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "# plan `{}`, seed {}", graph.name, graph.seed);
    for (gi, group) in graph.groups.iter().enumerate() {
        let scope = user_scope(graph, gi, 1);
        let masks = user_masks(graph, &scope);
        let requests = requests_of(&group.steps);
        if requests.is_empty() {
            continue;
        }
        let mut shown = 0;
        let mut iteration = 0;
        while shown < a.count {
            iteration += 1;
            scope.set_iteration(iteration);
            for node in &requests {
                if shown == a.count {
                    break;
                }
                shown += 1;
                let _ =
                    writeln!(out, "\n### {} {}-1, iteration {iteration}: {}", group.name, group.number, node.step.name);
                match wire::render(graph, node, &scope, |_| None) {
                    Ok(w) => {
                        let _ = out.write_all(&w.masked(&masks));
                        if !w.body.is_empty() {
                            let _ = writeln!(out);
                        }
                    }
                    Err(e) => {
                        let _ = writeln!(out, "(cannot render: {})", masks.mask(&e.to_string()));
                    }
                }
            }
        }
    }
    exit::OK
}

/// Every request of a group's steps, depth first, blocks' bodies included (each branch of an `if` and a
/// `random` too): dry-run shows what each request looks like, not which branch a run would take.
fn requests_of(steps: &[StepNode]) -> Vec<&crate::compile::RequestNode> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            StepNode::Request(r) => out.push(r.as_ref()),
            StepNode::Think(_) => {}
            StepNode::Transaction { steps, .. }
            | StepNode::Loop { steps, .. }
            | StepNode::While { steps, .. }
            | StepNode::ForEach { steps, .. }
            | StepNode::Once { steps, .. } => out.extend(requests_of(steps)),
            StepNode::If { then, otherwise, .. } => {
                out.extend(requests_of(then));
                out.extend(requests_of(otherwise));
            }
            StepNode::Random(branches) => branches.iter().for_each(|(_, b)| out.extend(requests_of(b))),
        }
    }
    out
}
