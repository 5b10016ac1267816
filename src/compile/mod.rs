//! The execution graph: a validated plan compiled once into the immutable form virtual users run.

pub mod target;

use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, HOST};

use crate::mask::Masks;
use crate::plan::model::{
    Assertion, Check, DataSet, Defaults, ExtractFrom, Load, Phase, Plan, Secrets, Step, Think, ThreadGroup, Threshold,
};
use crate::template::{Shared, Templates, Tpl};
use target::Base;

/// Everything a run needs, shared by every virtual user.
#[derive(Debug)]
pub struct Graph {
    /// The plan's name.
    pub name: String,
    /// The run's seed.
    pub seed: u64,
    /// True when the seed was drawn at random (the run prints it).
    pub seed_drawn: bool,
    /// The compiled templates.
    pub templates: Templates,
    /// Properties and the stub's address.
    pub shared: Arc<Shared>,
    /// Per-user variables, rendered in order when a virtual user starts.
    pub variables: Vec<(Arc<str>, Tpl)>,
    /// CSV data sets.
    pub data: Vec<DataSet>,
    /// Pass/fail criteria.
    pub thresholds: Vec<Threshold>,
    /// Live outputs the run streams its figures to (the plan's `outputs:`).
    pub outputs: Vec<crate::live::OutputSpec>,
    /// What is masked in dry-run output and results.
    pub secrets: Secrets,
    /// The secret properties' masks, made once: every user's when the plan has no secret variables.
    pub masks: Masks,
    /// Request settings every step inherits.
    pub defaults: Defaults,
    /// The base URL, parsed.
    pub base: Option<Base>,
    /// The thread groups.
    pub groups: Vec<GroupGraph>,
}

/// One thread group, compiled.
#[derive(Debug)]
pub struct GroupGraph {
    /// The group's name.
    pub name: Arc<str>,
    /// Its number in the plan, from 1.
    pub number: u32,
    /// How the group makes load.
    pub load: Load,
    /// Virtual users (closed), the most at once (closed stages) or the pool size (open).
    pub threads: u32,
    /// When the group runs.
    pub phase: Phase,
    /// Start the users evenly over this time.
    pub ramp_up: Duration,
    /// Iterations per user, if bounded.
    pub loops: Option<u64>,
    /// Run time of the group, if bounded.
    pub duration: Option<Duration>,
    /// Pause after each request.
    pub think_time: Think,
    /// The steps of one iteration.
    pub steps: Vec<StepNode>,
}

/// A step, compiled.
#[derive(Debug)]
pub enum StepNode {
    /// A request.
    Request(Box<RequestNode>),
    /// A pause.
    Think(Think),
    /// A parent sample over its steps.
    Transaction {
        /// The label.
        name: Arc<str>,
        /// The steps.
        steps: Vec<StepNode>,
    },
    /// Steps run when the condition renders true.
    If {
        /// The condition.
        cond: Tpl,
        /// When true.
        then: Vec<StepNode>,
        /// When false.
        otherwise: Vec<StepNode>,
    },
    /// Steps run `count` times.
    Loop {
        /// How many times.
        count: u64,
        /// The steps.
        steps: Vec<StepNode>,
    },
    /// Steps run while the condition renders true, at most `max` times.
    While {
        /// The condition.
        cond: Tpl,
        /// The bound.
        max: u64,
        /// The steps.
        steps: Vec<StepNode>,
    },
    /// Steps run per item of a list.
    ForEach {
        /// Renders the list as JSON.
        list: Tpl,
        /// The item's variable.
        var: Arc<str>,
        /// The steps.
        steps: Vec<StepNode>,
    },
    /// Steps run once per user; `id` tells the blocks apart.
    Once {
        /// Unique within the graph.
        id: usize,
        /// The steps.
        steps: Vec<StepNode>,
    },
    /// One branch by weight: `(cumulative weight, steps)`, the last weight being the total.
    Random(Vec<(u32, Vec<StepNode>)>),
}

impl StepNode {
    /// How many request steps `steps` holds, those inside blocks included (each written once, however
    /// often it runs).
    pub fn count_requests(steps: &[StepNode]) -> usize {
        steps
            .iter()
            .map(|s| match s {
                StepNode::Request(_) => 1,
                StepNode::Think(_) => 0,
                StepNode::Transaction { steps, .. }
                | StepNode::Loop { steps, .. }
                | StepNode::While { steps, .. }
                | StepNode::ForEach { steps, .. }
                | StepNode::Once { steps, .. } => Self::count_requests(steps),
                StepNode::If { then, otherwise, .. } => Self::count_requests(then) + Self::count_requests(otherwise),
                StepNode::Random(branches) => branches.iter().map(|(_, b)| Self::count_requests(b)).sum(),
            })
            .sum()
    }
}

/// A request step, compiled.
#[derive(Debug)]
pub struct RequestNode {
    /// The validated step.
    pub step: crate::plan::model::RequestStep,
    /// The query's names, form-encoded once.
    pub query_keys: Vec<String>,
    /// Headers with their names parsed once (Host and Content-Length are computed, never taken from here).
    pub headers: Vec<HeaderNode>,
    /// True when an assertion or extractor reads the body, so it must be kept (otherwise it is only counted).
    pub needs_body: bool,
    /// A raw body's `content_type`, made into a header value once (`None` when there is none or it is not
    /// a valid header value; the request then fails saying so).
    pub content_type: Option<HeaderValue>,
    /// The step's line in the plan, named in assertion failures.
    pub line: u32,
}

/// A request header: its name, and its value as a template, or already made when it is fixed text.
#[derive(Debug, Clone)]
pub struct HeaderNode {
    /// The name.
    pub name: HeaderName,
    /// The value's template.
    pub value: Tpl,
    /// The value itself when the template is plain text that is a valid header value (most are, like
    /// the default User-Agent): sent as it is, without rendering.
    pub fixed: Option<HeaderValue>,
}

/// A plan whose parts cannot run.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// A header name is not valid HTTP.
    #[error("step `{step}`: `{name}` is not a valid header name")]
    HeaderName {
        /// The step.
        step: String,
        /// The name.
        name: String,
    },
}

/// Compiles a validated plan into an execution graph.
pub fn compile(plan: Plan) -> Result<Graph, CompileError> {
    let base = plan.defaults.base_url.as_deref().and_then(|u| Base::parse(u).ok());
    let templates = plan.templates;
    let groups = plan
        .groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| group(g, i as u32 + 1, &mut StepCx { once_ids: 0 }))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Graph {
        name: plan.name,
        seed: plan.seed,
        seed_drawn: plan.seed_drawn,
        templates,
        shared: plan.shared,
        variables: plan.variables,
        data: plan.data,
        thresholds: plan.thresholds,
        outputs: plan.outputs,
        masks: Masks::new(plan.secrets.values.iter().map(String::as_str)),
        secrets: plan.secrets,
        defaults: plan.defaults,
        base,
        groups,
    })
}

fn group(g: ThreadGroup, number: u32, cx: &mut StepCx) -> Result<GroupGraph, CompileError> {
    let steps = steps(g.steps, cx)?;
    Ok(GroupGraph {
        phase: g.phase,
        name: g.name,
        number,
        load: g.load,
        threads: g.threads,
        ramp_up: g.ramp_up,
        loops: g.loops,
        duration: g.duration,
        think_time: g.think_time,
        steps,
    })
}

struct StepCx {
    once_ids: usize,
}

fn steps(steps: Vec<Step>, cx: &mut StepCx) -> Result<Vec<StepNode>, CompileError> {
    steps.into_iter().map(|s| step(s, cx)).collect()
}

fn step(s: Step, cx: &mut StepCx) -> Result<StepNode, CompileError> {
    Ok(match s {
        Step::Think(t) => StepNode::Think(t),
        Step::Transaction { name, steps: inner } => StepNode::Transaction { name, steps: steps(inner, cx)? },
        Step::If { cond, then, otherwise } => {
            StepNode::If { cond, then: steps(then, cx)?, otherwise: steps(otherwise, cx)? }
        }
        Step::Loop { count, steps: inner } => StepNode::Loop { count, steps: steps(inner, cx)? },
        Step::While { cond, max, steps: inner } => StepNode::While { cond, max, steps: steps(inner, cx)? },
        Step::ForEach { list, var, steps: inner } => StepNode::ForEach { list, var, steps: steps(inner, cx)? },
        Step::Once(inner) => {
            cx.once_ids += 1;
            StepNode::Once { id: cx.once_ids, steps: steps(inner, cx)? }
        }
        Step::Random(branches) => {
            let mut total = 0u32;
            let mut out = Vec::with_capacity(branches.len());
            for (weight, inner) in branches {
                total = total.saturating_add(weight);
                out.push((total, steps(inner, cx)?));
            }
            StepNode::Random(out)
        }
        Step::Request(mut r) => {
            let headers = std::mem::take(&mut r.headers)
                .into_iter()
                .filter(|(k, _)| !is_framing(k))
                .map(|(k, v)| match HeaderName::from_bytes(k.as_bytes()) {
                    Ok(name) => {
                        let fixed = v.literal().and_then(|t| HeaderValue::from_str(t).ok());
                        Ok(HeaderNode { name, value: v, fixed })
                    }
                    Err(_) => Err(CompileError::HeaderName { step: r.name.to_string(), name: k }),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let needs_body = r.asserts.iter().any(|a: &Assertion| {
                matches!(
                    a.check,
                    Check::BodyContains(_)
                        | Check::BodyNotContains(_)
                        | Check::BodyMatches(_)
                        | Check::JsonPath { .. }
                        | Check::Expr(_)
                )
            }) || r
                .extract
                .iter()
                .any(|e| matches!(e.from, ExtractFrom::Regex { .. } | ExtractFrom::JsonPath { .. }));
            let line = r.span.line;
            let query_keys =
                r.query.iter().map(|(k, _)| url::form_urlencoded::byte_serialize(k.as_bytes()).collect()).collect();
            let content_type = match &r.body {
                crate::plan::model::Body::Raw { content_type: Some(ct), .. } => HeaderValue::from_str(ct).ok(),
                _ => None,
            };
            StepNode::Request(Box::new(RequestNode { step: *r, query_keys, headers, needs_body, content_type, line }))
        }
    })
}

/// Host and Content-Length are computed from the URL and the body, never taken from the plan.
pub fn is_framing(name: &str) -> bool {
    name.eq_ignore_ascii_case(HOST.as_str()) || name.eq_ignore_ascii_case(CONTENT_LENGTH.as_str())
}
