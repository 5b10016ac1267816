//! The execution graph: a validated plan compiled once into the form virtual users run.
//!
//! The plan is kept as it is (its settings, groups, data sets and thresholds are the run's); compiling makes
//! only what execution needs on top: each group's steps as [`StepNode`]s (a request's header values made
//! once when they are fixed text, its query names encoded once, whether its body must be kept; a random
//! block's cumulative weights; an id per `once` block), the base URL split once, and the masks of the secret
//! properties. It cannot fail: everything it reads was checked by validation (header names were parsed
//! there, once).

pub mod target;

use std::ops::Deref;
use std::sync::Arc;

use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, HOST};

use crate::mask::Masks;
use crate::plan::model::{Assertion, Body, Check, ExtractFrom, Plan, RequestStep, Step, Think};
use crate::template::Tpl;
use target::Base;

/// Everything a run needs, shared by every virtual user: the plan, its steps compiled. It reads as the plan
/// (`graph.groups`, `graph.defaults`...).
#[derive(Debug)]
pub struct Graph {
    /// The validated plan, each group's steps compiled.
    pub plan: Plan<StepNode>,
    /// The secret properties' masks, made once: every user's when the plan has no secret variables.
    pub masks: Masks,
    /// The base URL, split once.
    pub base: Option<Base>,
}

impl Deref for Graph {
    type Target = Plan<StepNode>;

    fn deref(&self) -> &Plan<StepNode> {
        &self.plan
    }
}

impl Graph {
    /// The number of the group at `index` of `groups`, from 1, as thread names show it.
    pub fn group_number(index: usize) -> u32 {
        u32::try_from(index + 1).unwrap_or(u32::MAX)
    }
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

/// Compiles a validated plan into an execution graph.
pub fn compile(plan: Plan) -> Graph {
    let base = plan.defaults.base_url.as_deref().and_then(|u| Base::parse(u).ok());
    let masks = Masks::new(plan.secrets.values.iter().map(String::as_str));
    let mut cx = StepCx { once_ids: 0 };
    let plan = plan.map_steps(|steps| compile_steps(steps, &mut cx));
    Graph { plan, masks, base }
}

struct StepCx {
    once_ids: usize,
}

fn compile_steps(steps: Vec<Step>, cx: &mut StepCx) -> Vec<StepNode> {
    steps.into_iter().map(|s| step(s, cx)).collect()
}

fn step(s: Step, cx: &mut StepCx) -> StepNode {
    match s {
        Step::Think(t) => StepNode::Think(t),
        Step::Transaction { name, steps } => StepNode::Transaction { name, steps: compile_steps(steps, cx) },
        Step::If { cond, then, otherwise } => {
            StepNode::If { cond, then: compile_steps(then, cx), otherwise: compile_steps(otherwise, cx) }
        }
        Step::Loop { count, steps } => StepNode::Loop { count, steps: compile_steps(steps, cx) },
        Step::While { cond, max, steps } => StepNode::While { cond, max, steps: compile_steps(steps, cx) },
        Step::ForEach { list, var, steps } => StepNode::ForEach { list, var, steps: compile_steps(steps, cx) },
        Step::Once(steps) => {
            cx.once_ids += 1;
            StepNode::Once { id: cx.once_ids, steps: compile_steps(steps, cx) }
        }
        Step::Random(branches) => {
            let mut total = 0u32;
            let mut out = Vec::with_capacity(branches.len());
            for (weight, steps) in branches {
                total = total.saturating_add(weight);
                out.push((total, compile_steps(steps, cx)));
            }
            StepNode::Random(out)
        }
        Step::Request(r) => StepNode::Request(Box::new(request(*r))),
    }
}

fn request(mut r: RequestStep) -> RequestNode {
    let headers = std::mem::take(&mut r.headers)
        .into_iter()
        .filter(|(name, _)| !is_framing(name))
        .map(|(name, value)| {
            let fixed = value.literal().and_then(|t| HeaderValue::from_str(t).ok());
            HeaderNode { name, value, fixed }
        })
        .collect();
    let needs_body =
        r.asserts.iter().any(|a: &Assertion| {
            matches!(
                a.check,
                Check::BodyContains(_)
                    | Check::BodyNotContains(_)
                    | Check::BodyMatches(_)
                    | Check::JsonPath { .. }
                    | Check::Expr(_)
            )
        }) || r.extract.iter().any(|e| matches!(e.from, ExtractFrom::Regex { .. } | ExtractFrom::JsonPath { .. }));
    let line = r.span.line;
    let query_keys =
        r.query.iter().map(|(k, _)| url::form_urlencoded::byte_serialize(k.as_bytes()).collect()).collect();
    let content_type = match &r.body {
        Body::Raw { content_type: Some(ct), .. } => HeaderValue::from_str(ct).ok(),
        _ => None,
    };
    RequestNode { step: r, query_keys, headers, needs_body, content_type, line }
}

/// Host and Content-Length are computed from the URL and the body, never taken from the plan.
fn is_framing(name: &HeaderName) -> bool {
    name == HOST || name == CONTENT_LENGTH
}
