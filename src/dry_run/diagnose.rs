//! Why a request did not render: which of its templates failed, what it says, and whether it reads a value
//! the dry run can only stand in for (then it may well render at run time), or not (then no run can send it).

use std::sync::Arc;

use crate::compile::{Graph, RequestNode};
use crate::diag::Diagnostic;
use crate::plan::model::{Body, JsonTpl, Part};
use crate::run::wire::RenderError;
use crate::source::{Source, Span};
use crate::template::{Scope, Tpl};

/// A request that did not render.
pub(super) struct Failure {
    /// The template that failed, as written in the plan, when one did.
    pub expression: Option<String>,
    /// What went wrong.
    pub message: String,
    /// A captured or `foreach` value the failed template reads: with the real value it may render.
    pub waits_for: Option<String>,
}

/// Finds the template of `node` that fails in `scope` (the URL when the failure is the URL's).
pub(super) fn diagnose(
    graph: &Graph,
    node: &RequestNode,
    scope: &Arc<Scope>,
    error: &RenderError,
    placeholders: &[Arc<str>],
) -> Failure {
    let waits_for = |tpl: &Tpl| {
        graph.templates.attributes_read(tpl).iter().find_map(|path| {
            let name = path.split('.').next().unwrap_or(path);
            placeholders.iter().find(|p| &***p == name).map(|p| p.to_string())
        })
    };
    for tpl in templates(node) {
        if tpl.literal().is_some() {
            continue;
        }
        if let Err(e) = graph.templates.render(tpl, scope) {
            return Failure {
                expression: Some(written(tpl)),
                message: format!("template error: {}", e.message),
                waits_for: waits_for(tpl),
            };
        }
    }
    let url = &node.step.url;
    let about_url = ["URL", "base_url", "request target"].iter().any(|w| error.0.contains(w));
    Failure {
        expression: about_url.then(|| written(url)),
        message: error.0.clone(),
        waits_for: if about_url { waits_for(url) } else { None },
    }
}

/// The problem, at the failed expression in the plan when it can be found there (searched from the step's
/// line down), else at the step.
pub(super) fn problem(source: &Source, node: &RequestNode, f: &Failure) -> Diagnostic {
    let step = &node.step;
    let at = f.expression.as_deref().and_then(|e| find(source, step.span.line, e)).unwrap_or(step.span);
    let message = match &f.expression {
        Some(e) => format!("request `{}` cannot be rendered: `{e}`: {}", step.name, f.message),
        None => format!("request `{}` cannot be rendered: {}", step.name, f.message),
    };
    Diagnostic::new(at, message).hint(
        "this fails with the first virtual user's values, the first row of each data set and placeholders for \
         captured values: a run would record the request as a failed sample and send nothing",
    )
}

/// The request's templates, in the order they are rendered.
fn templates(node: &RequestNode) -> Vec<&Tpl> {
    let s = &node.step;
    let mut out = vec![&s.url];
    out.extend(s.query.iter().map(|(_, t)| t));
    out.extend(node.headers.iter().filter(|h| h.fixed.is_none()).map(|h| &h.value));
    match &s.body {
        Body::None => {}
        Body::Form(fields) => out.extend(fields.iter().map(|(_, t)| t)),
        Body::Multipart(parts) => out.extend(parts.iter().filter_map(|p| match p {
            Part::Text { value, .. } => Some(value),
            Part::File { .. } => None,
        })),
        Body::Json(j) => json(j, &mut out),
        Body::Raw { body, .. } => out.push(body),
    }
    out
}

fn json<'a>(j: &'a JsonTpl, out: &mut Vec<&'a Tpl>) {
    match j {
        JsonTpl::Const(_) => {}
        JsonTpl::Str(t) | JsonTpl::Expr(t) => out.push(t),
        JsonTpl::Array(items) => items.iter().for_each(|i| json(i, out)),
        JsonTpl::Object(entries) => entries.iter().for_each(|(_, v)| json(v, out)),
    }
}

/// A template as the plan has it: a JSON leaf `"{{ x }}"` is compiled as `{{ (x) | tojson }}`.
fn written(tpl: &Tpl) -> String {
    let s = tpl.source();
    match s.strip_prefix("{{ (").and_then(|r| r.strip_suffix(") | tojson }}")) {
        Some(inner) => format!("{{{{ {inner} }}}}"),
        None => s.to_string(),
    }
}

/// The first place at or below `line` where `expression`'s first line is written.
fn find(source: &Source, line: u32, expression: &str) -> Option<Span> {
    let first = expression.lines().next().filter(|l| !l.trim().is_empty())?;
    (line..).map_while(|n| source.line(n).map(|text| (n, text))).find_map(|(n, text)| {
        let at = text.find(first)?;
        let col = text[..at].chars().count() as u32 + 1;
        Some(Span::new(n, col, first.chars().count() as u32))
    })
}
