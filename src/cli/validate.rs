//! `planrun validate PLAN`.

use super::args::PlanArgs;
use super::exit;
use super::print::outln;
use crate::compile::{Graph, StepNode};
use crate::pipeline::StubMode;
use crate::plan::model::{DataMode, DataSet};

pub(super) async fn validate(a: PlanArgs) -> i32 {
    let proxy = match super::proxy_flag(a.proxy.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut opts = match a.files.options(&a.define, a.seed) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    opts.proxy = proxy;
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
            for set in &g.data {
                outln!("  {}", data_set_line(set, g));
            }
            exit::OK
        }
        Err(code) => code,
    }
}

/// What `validate` says of a data set: its rows and mode, and the groups whose users take its rows.
fn data_set_line(set: &DataSet, graph: &Graph) -> String {
    let mode = match set.mode {
        DataMode::Sequential => "sequential",
        DataMode::Random => "random",
        DataMode::Unique => "unique",
    };
    let mut readers: Vec<&str> = Vec::new();
    for group in set.read_by.iter().filter_map(|&i| graph.groups.get(i)) {
        let name = &*group.name;
        if !readers.contains(&name) {
            readers.push(name);
        }
    }
    let read_by = match readers.len() {
        0 => "read by no group (no step reads it)".to_string(),
        1 => format!("read by group {}", readers[0]),
        _ => format!("read by groups {}", readers.join(", ")),
    };
    let only = if set.groups.is_empty() { String::new() } else { format!(" (groups: {})", set.groups.join(", ")) };
    format!("data set `{}`: {} row(s), {mode}; {read_by}{only}", set.name, set.rows)
}
