//! `planrun dry-run PLAN -n N`: the first requests of each group, byte for byte, without sending them.

use std::io::Write;

use super::args::DryRunArgs;
use super::exit;
use crate::compile::StepNode;
use crate::pipeline::{load, StubMode};
use crate::plan::LoadOptions;
use crate::run::{user_masks, user_scope, wire};

pub(super) async fn dry_run(a: DryRunArgs) -> i32 {
    let opts = LoadOptions { overrides: a.plan.define, seed: a.plan.seed, stub_url: None };
    let loaded = match load(&a.plan.plan, opts, StubMode::Start).await {
        Ok(l) => l,
        Err(e) => return super::run::report_load_error(&e),
    };
    let graph = &loaded.graph;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "# plan `{}`, seed {}", graph.name, graph.seed);
    for (gi, group) in graph.groups.iter().enumerate() {
        let scope = user_scope(graph, gi, 1);
        let masks = user_masks(graph, &scope);
        let requests = group.steps.iter().filter(|s| matches!(s, StepNode::Request(_))).count();
        if requests == 0 {
            continue;
        }
        let mut shown = 0;
        let mut iteration = 0;
        while shown < a.count {
            iteration += 1;
            scope.set_iteration(iteration);
            for step in &group.steps {
                let StepNode::Request(node) = step else { continue };
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
                        let _ = writeln!(out, "(cannot render: {e})");
                    }
                }
            }
        }
    }
    exit::OK
}
