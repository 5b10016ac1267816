//! The execution graph: a validated plan compiled once into the form virtual users run.
//!
//! The plan is kept as it is (its settings, groups, data sets and thresholds are the run's, and so are its
//! steps, whose `once` ids and cumulative `random` weights validation made); compiling makes only what
//! execution needs on top: each request as a [`RequestNode`] (its header values made once when they are
//! fixed text, its query names encoded once, whether its body must be kept), the base URL split once, and
//! the masks of the secret properties. It cannot fail: everything it reads was checked by validation (header
//! names were parsed there, once).

use std::ops::Deref;

use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH, HOST};

use crate::http::target::Base;
use crate::mask::Masks;
use crate::plan::model::{Assertion, Body, Check, ExtractFrom, Plan, RequestStep, Step};
use crate::template::Tpl;

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

/// A step, compiled: the validated step with each request made into a [`RequestNode`].
pub type StepNode = Step<RequestNode>;

/// A request step, compiled.
#[derive(Debug)]
pub struct RequestNode {
    /// The validated step.
    pub step: crate::plan::model::RequestStep,
    /// The query's names, form-encoded once.
    pub query_keys: Vec<String>,
    /// Headers with their names parsed once (Host and Content-Length are computed, never taken from here).
    pub headers: Vec<HeaderNode>,
    /// True when every header of `headers` is fixed text: a request of this step sends them as they are, so
    /// a user's next request of it can keep them where the last one left them.
    pub headers_fixed: bool,
    /// True when an assertion or extractor reads the body, so it must be kept (otherwise it is only counted).
    pub needs_body: bool,
    /// True when an assertion or extractor reads the response's headers, so they must be kept.
    pub needs_headers: bool,
    /// A raw body's `content_type`, made into a header value once (`None` when there is none or it is not
    /// a valid header value; the request then fails saying so).
    pub content_type: Option<HeaderValue>,
    /// The step's line in the plan, named in assertion failures.
    pub line: u32,
}

/// A request header: its name, and its value as a template, or already made when it is fixed text.
#[derive(Debug, Clone)]
pub struct HeaderNode {
    /// The header's name, parsed once at validation.
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
    let plan = plan.map_steps(|steps| steps.into_iter().map(|s| s.map_requests(&mut request)).collect());
    Graph { plan, masks, base }
}

fn request(mut r: RequestStep) -> RequestNode {
    let headers: Vec<HeaderNode> = std::mem::take(&mut r.headers)
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
    let needs_headers = r.asserts.iter().any(|a: &Assertion| matches!(a.check, Check::Header { .. } | Check::Expr(_)))
        || r.extract.iter().any(|e| matches!(e.from, ExtractFrom::Header(_)));
    let line = r.span.line;
    let query_keys =
        r.query.iter().map(|(k, _)| url::form_urlencoded::byte_serialize(k.as_bytes()).collect()).collect();
    let content_type = match &r.body {
        Body::Raw { content_type: Some(ct), .. } => HeaderValue::from_str(ct).ok(),
        _ => None,
    };
    let headers_fixed = headers.iter().all(|h| h.fixed.is_some());
    RequestNode { step: r, query_keys, headers, headers_fixed, needs_body, needs_headers, content_type, line }
}

/// Host and Content-Length are computed from the URL and the body, never taken from the plan.
fn is_framing(name: &HeaderName) -> bool {
    name == HOST || name == CONTENT_LENGTH
}
