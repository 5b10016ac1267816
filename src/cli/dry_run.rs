//! `planrun dry-run PLAN -n N`: the first requests of each group, byte for byte, without sending them. A
//! request that cannot render whatever a run captures is a plan problem: named at its plan line, exit 2.

use super::args::DryRunArgs;
use super::exit;
use super::print::{err, errln, Lossy};
use crate::diag::render;
use crate::dry_run::write_requests;
use crate::pipeline::StubMode;
use crate::source::Source;

pub(super) async fn dry_run(a: DryRunArgs) -> i32 {
    let path = a.plan.plan.clone();
    let proxy = match super::proxy_flag(a.plan.proxy.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut opts = match a.plan.files.options(&a.plan.define, a.plan.seed) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    opts.proxy = proxy;
    let ready = match super::prepare::plan(&path, opts, StubMode::Start).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    let source = crate::files::read_plan_text(&path).map(|text| Source::new(&path, text)).ok();
    let problems = match write_requests(&ready.graph, a.count, source.as_ref(), &mut Lossy(std::io::stdout().lock())) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return exit::ABORTED;
        }
    };
    if problems.is_empty() {
        return exit::OK;
    }
    match &source {
        Some(source) => err!("{}", render(source, &problems.sorted())),
        None => errln!("error: some requests cannot be rendered"),
    }
    exit::BAD_INPUT
}
