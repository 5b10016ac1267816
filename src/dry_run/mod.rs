//! Dry-run rendering: the first requests of each group, byte for byte, without sending them.
//!
//! Each request is rendered for the group's first virtual user, with the first row of every data set, and
//! with a placeholder for each value a run would capture from a response or take from a `foreach` list. A
//! request that cannot render even so is a plan problem: it is named, with the expression and its plan
//! line.

mod diagnose;
mod placeholder;

use std::io::{self, Write};
use std::sync::Arc;

use crate::compile::{Graph, RequestNode, StepNode};
use crate::diag::Diagnostics;
use crate::http::{HttpVersion, WireRequest};
use crate::mask::Masks;
use crate::plan::model::{DataMode, DataScope, OnEof};
use crate::run::data_rows::{DataError, DataSources};
use crate::run::{user_masks, user_scope, wire};
use crate::source::Source;
use crate::template::Scope;
use placeholder::Placeholders;

const CAPTURED: &str = "captured at run time";
const ITEM: &str = "an item of the foreach list at run time";

/// Why the requests could not be shown at all.
#[derive(Debug, thiserror::Error)]
pub enum DryRunError {
    /// A data set could not be opened.
    #[error(transparent)]
    Data(#[from] DataError),
    /// Writing the requests failed.
    #[error("cannot write the requests: {0}")]
    Write(#[from] io::Error),
}

/// Writes the first `count` requests of each group of `graph` to `out`, as they would go on the wire.
/// Returns the plan problems found: requests that cannot render whatever a run captures, each placed in
/// `source` (the plan's text, when it could be read).
pub fn write_requests(
    graph: &Graph,
    count: usize,
    source: Option<&Source>,
    out: &mut dyn Write,
) -> Result<Diagnostics, DryRunError> {
    let data = first_rows(graph)?;
    let mut problems = Diagnostics::default();
    writeln!(out, "# plan `{}`, seed {}", graph.name, graph.seed)?;
    for set in &graph.data {
        writeln!(out, "# data set `{}`: every request shows its first row ({})", set.name, set.file.display())?;
    }
    let captured = captured_names(graph);
    if !captured.is_empty() {
        writeln!(out, "# values captured from responses are shown as <name: {CAPTURED}>")?;
    }
    for group in 0..graph.groups.len() {
        FirstUser::new(graph, group, &data, &captured).write_requests(count, source, out, &mut problems)?;
    }
    Ok(problems)
}

/// A group's first virtual user, as the dry run renders its requests.
struct FirstUser<'g> {
    graph: &'g Graph,
    group: usize,
    requests: Vec<&'g RequestNode>,
    scope: Arc<Scope>,
    masks: Masks,
    book: Arc<Placeholders>,
    /// The names placeholders stand in for: captured values and `foreach` items.
    stand_ins: Vec<Arc<str>>,
}

impl<'g> FirstUser<'g> {
    fn new(graph: &'g Graph, group: usize, data: &DataSources, captured: &[Arc<str>]) -> Self {
        let steps = &graph.groups[group].steps;
        let scope = user_scope(graph, group, 1);
        let masks = user_masks(graph, &scope);
        let book = Arc::new(Placeholders::default());
        let _ = data.advance(&mut data.user(group), &scope);
        // A variable of the same name holds the value until the capture: it is shown as it is.
        for name in captured.iter().filter(|n| scope.var(n).is_none()) {
            scope.set_var(name.clone(), book.value(name.to_string(), CAPTURED));
        }
        let items = foreach_items(graph, steps, &scope, &book);
        let stand_ins = captured.iter().chain(&items).cloned().collect();
        FirstUser { graph, group, requests: requests_of(steps), scope, masks, book, stand_ins }
    }

    /// Writes the user's first `count` requests, going through its steps as often as that takes.
    fn write_requests(
        &self,
        count: usize,
        source: Option<&Source>,
        out: &mut dyn Write,
        problems: &mut Diagnostics,
    ) -> io::Result<()> {
        let name = &self.graph.groups[self.group].name;
        let number = Graph::group_number(self.group);
        let mut shown = 0;
        let mut iteration = 0;
        while shown < count && !self.requests.is_empty() {
            iteration += 1;
            self.scope.set_iteration(iteration);
            for node in self.requests.iter().take(count - shown) {
                shown += 1;
                writeln!(out, "\n### {name} {number}-1, iteration {iteration}: {}", node.step.name)?;
                self.write_request(node, source, out, problems)?;
            }
        }
        Ok(())
    }

    /// Writes one request, or why it cannot be shown; a request no run could send is a plan problem.
    fn write_request(
        &self,
        node: &RequestNode,
        source: Option<&Source>,
        out: &mut dyn Write,
        problems: &mut Diagnostics,
    ) -> io::Result<()> {
        let error = match rendered(self.graph, node, &self.scope).and_then(|w| shown(&w, &self.masks).map(|s| (w, s))) {
            Ok((w, (version, shown))) => {
                if let Some(p) = self.graph.defaults.proxies.route(&w.target.origin) {
                    let auth = if p.authorization().is_some() { ", with Proxy-Authorization: ***" } else { "" };
                    match (w.target.origin.https, w.version) {
                        (false, HttpVersion::Http2) => writeln!(
                            out,
                            "(the proxy {} cannot carry cleartext HTTP/2 (h2c): a run fails this request; use https \
                             or http_version: 1.1)",
                            p.shown()
                        )?,
                        (https, _) => {
                            let how = if https { "in a CONNECT tunnel" } else { "in absolute form" };
                            writeln!(out, "(through the proxy {}, {how}{auth})", p.shown())?;
                        }
                    }
                }
                if let Some(v) = version {
                    writeln!(out, "{v}")?;
                }
                out.write_all(&self.book.show(&shown))?;
                if !w.body.is_empty() {
                    writeln!(out)?;
                }
                return Ok(());
            }
            Err(e) => e,
        };
        let mut f = diagnose::diagnose(self.graph, node, &self.scope, &error, &self.stand_ins);
        let shown = self.book.show(self.masks.mask(&f.message).as_bytes());
        f.message = String::from_utf8_lossy(&shown).into_owned();
        if let (Some(name), Some(e)) = (&f.waits_for, &f.expression) {
            return writeln!(out, "(cannot show before run time: `{e}` needs `{name}`: {})", f.message);
        }
        writeln!(out, "(cannot render: {})", f.message)?;
        if let Some(source) = source {
            problems.push(diagnose::problem(source, node, &f));
        }
        Ok(())
    }
}

/// The request as a run renders it, with the check the HTTP client makes before sending.
fn rendered(graph: &Graph, node: &RequestNode, scope: &Arc<Scope>) -> Result<WireRequest, wire::RenderError> {
    let w = wire::render(graph, node, scope, |_| None)?;
    match http::Uri::try_from(w.target.path_and_query()) {
        Ok(_) => Ok(w),
        Err(e) => Err(wire::RenderError(format!("invalid request target `{}`: {e}", w.target.path_and_query()))),
    }
}

const H2C: &str =
    "(HTTP/2, cleartext with prior knowledge (h2c): the fields of the HEADERS frame, HPACK-compressed on \
                   the wire, then the body in DATA frames)";
const H2_TLS: &str =
    "(HTTP/2 over TLS, ALPN offering only h2: the fields of the HEADERS frame, HPACK-compressed on the \
                      wire, then the body in DATA frames)";
const BY_ALPN: &str = "(HTTP/1.1 as shown, or HTTP/2 when the server picks h2 by ALPN: a run speaks what each server \
                       picks; `http_version: 2` shows the HTTP/2 form)";

/// The request's bytes as they go on the wire in its HTTP version, and the line that says which version when
/// it is not plain HTTP/1.1.
fn shown(w: &WireRequest, masks: &Masks) -> Result<(Option<&'static str>, Vec<u8>), wire::RenderError> {
    Ok(match (w.version, w.target.origin.https) {
        (HttpVersion::Http2, false) => (Some(H2C), wire::masked_h2(w, masks)?),
        (HttpVersion::Http2, true) => (Some(H2_TLS), wire::masked_h2(w, masks)?),
        (HttpVersion::Auto, true) => (Some(BY_ALPN), wire::masked(w, masks)),
        _ => (None, wire::masked(w, masks)),
    })
}

/// The plan's data sets, each opened to be read from its first row whatever its mode: a dry run shows every
/// request with the first row of each set.
fn first_rows(graph: &Graph) -> Result<DataSources, DataError> {
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
