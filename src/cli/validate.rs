//! `planrun validate PLAN`.

use super::args::PlanArgs;
use super::exit;
use super::print::outln;
use crate::compile::StepNode;
use crate::pipeline::StubMode;
use crate::plan::PlanOptions;

pub(super) async fn validate(a: PlanArgs) -> i32 {
    let opts = PlanOptions { overrides: a.define, seed: a.seed, stub_url: None };
    match super::prepare::plan(&a.plan, opts, StubMode::CheckOnly).await {
        Ok(ready) => {
            let g = &ready.graph;
            let requests: usize = g.groups.iter().map(|g| StepNode::count_requests(&g.steps)).sum();
            let threads: u64 = g.groups.iter().map(|g| u64::from(g.threads)).sum();
            outln!(
                "{}: ok: plan `{}`, {} thread group(s), {} thread(s), {} request step(s)",
                a.plan.display(),
                g.name,
                g.groups.len(),
                threads,
                requests
            );
            exit::OK
        }
        Err(code) => code,
    }
}
