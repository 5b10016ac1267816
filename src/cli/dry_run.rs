//! `planrun dry-run PLAN -n N`: the first requests of each group, byte for byte, without sending them.
//!
//! Each request is rendered for the group's first virtual user, with the first row of every data set, and
//! with a placeholder for each value a run would capture from a response or take from a `foreach` list. A
//! request that cannot render even so is a plan problem: it is named, with the expression and its plan
//! line, and the command exits 2.

mod diagnose;
mod placeholder;

use std::io::Write;
use std::sync::Arc;

use super::args::DryRunArgs;
use super::exit;
use super::print::{err, errln};
use crate::compile::{Graph, RequestNode, StepNode};
use crate::diag::{render, Diagnostics};
use crate::pipeline::StubMode;
use crate::plan::model::{DataMode, DataScope, OnEof};
use crate::plan::PlanOptions;
use crate::run::data_sources::DataSources;
use crate::run::{user_masks, user_scope, wire};
use crate::source::Source;
use crate::template::Scope;
use placeholder::Placeholders;

const CAPTURED: &str = "captured at run time";
const ITEM: &str = "an item of the foreach list at run time";

pub(super) async fn dry_run(a: DryRunArgs) -> i32 {
    let path = a.plan.plan.clone();
    let opts = PlanOptions { overrides: a.plan.define, seed: a.plan.seed, stub_url: None };
    let ready = match super::prepare::plan(&path, opts, StubMode::Start).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    let graph = &ready.graph;
    let data = match first_rows(graph) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {e}");
            return exit::ABORTED;
        }
    };
    let source = crate::files::read_plan_text(&path).map(|text| Source::new(&path, text)).ok();
    let mut problems = Diagnostics::default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "# plan `{}`, seed {}", graph.name, graph.seed);
    for set in &graph.data {
        let _ = writeln!(out, "# data set `{}`: every request shows its first row ({})", set.name, set.file.display());
    }
    let captured = captured_names(graph);
    if !captured.is_empty() {
        let _ = writeln!(out, "# values captured from responses are shown as <name: {CAPTURED}>");
    }
    for (gi, group) in graph.groups.iter().enumerate() {
        let requests = requests_of(&group.steps);
        if requests.is_empty() {
            continue;
        }
        let scope = user_scope(graph, gi, 1);
        let masks = user_masks(graph, &scope);
        let book = Arc::new(Placeholders::default());
        let _ = data.advance(&mut data.user(gi), &scope);
        // A variable of the same name holds the value until the capture: it is shown as it is.
        for name in captured.iter().filter(|n| scope.var(n).is_none()) {
            scope.set_var(name.clone(), book.value(name.to_string(), CAPTURED));
        }
        let items = foreach_items(graph, &group.steps, &scope, &book);
        let stand_ins: Vec<Arc<str>> = captured.iter().chain(&items).cloned().collect();
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
                let _ = writeln!(
                    out,
                    "\n### {} {}-1, iteration {iteration}: {}",
                    group.name,
                    Graph::group_number(gi),
                    node.step.name
                );
                let error = match wire::render(graph, node, &scope, |_| None) {
                    // The check the HTTP client makes before sending (`run/http/client.rs`).
                    Ok(w) => match http::Uri::try_from(w.target.path_and_query()) {
                        Ok(_) => {
                            let _ = out.write_all(&book.show(&w.masked(&masks)));
                            if !w.body.is_empty() {
                                let _ = writeln!(out);
                            }
                            continue;
                        }
                        Err(e) => {
                            wire::RenderError(format!("invalid request target `{}`: {e}", w.target.path_and_query()))
                        }
                    },
                    Err(e) => e,
                };
                let mut f = diagnose::diagnose(graph, node, &scope, &error, &stand_ins);
                let shown = book.show(masks.mask(&f.message).as_bytes());
                f.message = String::from_utf8_lossy(&shown).into_owned();
                match (&f.waits_for, &f.expression) {
                    (Some(name), Some(e)) => {
                        let _ = writeln!(out, "(cannot show before run time: `{e}` needs `{name}`: {})", f.message);
                    }
                    _ => {
                        let _ = writeln!(out, "(cannot render: {})", f.message);
                        if let Some(source) = &source {
                            problems.push(diagnose::problem(source, node, &f));
                        }
                    }
                }
            }
        }
    }
    drop(out);
    if problems.is_empty() {
        return exit::OK;
    }
    match &source {
        Some(source) => err!("{}", render(source, &problems.sorted())),
        None => errln!("error: some requests cannot be rendered"),
    }
    exit::BAD_INPUT
}

/// The plan's data sets, each opened to be read from its first row whatever its mode: a dry run shows every
/// request with the first row of each set.
fn first_rows(graph: &Graph) -> Result<DataSources, crate::run::data_sources::DataError> {
    let sets: Vec<_> = graph
        .data
        .iter()
        .cloned()
        .map(|mut set| {
            (set.mode, set.scope, set.on_eof) = (DataMode::Sequential, DataScope::PerThread, OnEof::Recycle);
            set
        })
        .collect();
    DataSources::open(&sets)
}

/// The names `extract` captures into, anywhere in the plan.
fn captured_names(graph: &Graph) -> Vec<Arc<str>> {
    let mut names: Vec<Arc<str>> = Vec::new();
    for g in &graph.groups {
        for r in requests_of(&g.steps) {
            for e in &r.step.extract {
                if !names.contains(&e.name) {
                    names.push(e.name.clone());
                }
            }
        }
    }
    names
}

/// Sets each `foreach` variable of `steps` to the first item of its list when the list renders to one
/// without captured values, else to a placeholder; returns the names given placeholders.
fn foreach_items(graph: &Graph, steps: &[StepNode], scope: &Arc<Scope>, book: &Arc<Placeholders>) -> Vec<Arc<str>> {
    let mut stand_ins = Vec::new();
    for s in steps {
        match s {
            StepNode::ForEach { list, var, steps } => {
                let first = graph
                    .templates
                    .render(list, scope)
                    .ok()
                    .filter(|text| book.show(text.as_bytes()) == text.as_bytes())
                    .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                    .and_then(|v| v.as_array().and_then(|items| items.first().cloned()));
                match first {
                    Some(serde_json::Value::String(s)) => scope.set_var(var.clone(), s.as_str().into()),
                    Some(other) => scope.set_var(var.clone(), crate::template::to_value(&other)),
                    None => {
                        scope.set_var(var.clone(), book.value(var.to_string(), ITEM));
                        stand_ins.push(var.clone());
                    }
                }
                stand_ins.extend(foreach_items(graph, steps, scope, book));
            }
            StepNode::Transaction { steps, .. }
            | StepNode::Loop { steps, .. }
            | StepNode::While { steps, .. }
            | StepNode::Once { steps, .. } => stand_ins.extend(foreach_items(graph, steps, scope, book)),
            StepNode::If { then, otherwise, .. } => {
                stand_ins.extend(foreach_items(graph, then, scope, book));
                stand_ins.extend(foreach_items(graph, otherwise, scope, book));
            }
            StepNode::Random(branches) => {
                branches.iter().for_each(|(_, b)| stand_ins.extend(foreach_items(graph, b, scope, book)))
            }
            StepNode::Request(_) | StepNode::Think(_) => {}
        }
    }
    stand_ins
}

/// Every request of a group's steps, depth first, blocks' bodies included (each branch of an `if` and a
/// `random` too): dry-run shows what each request looks like, not which branch a run would take.
fn requests_of(steps: &[StepNode]) -> Vec<&RequestNode> {
    let mut out = Vec::new();
    StepNode::walk(steps, &mut |s| out.extend(if let StepNode::Request(r) = s { Some(r.as_ref()) } else { None }));
    out
}
