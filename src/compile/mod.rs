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
use crate::plan::model::{Assertion, Body, Check, ExtractFrom, JsonTpl, Plan, RequestStep, Step};
use crate::template::{JsonBody, JsonBuilder, Tpl};

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
    /// A JSON body, compiled to its literal text and its leaves (`None` for the other bodies).
    pub json: Option<JsonBody>,
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
    let json = match &r.body {
        Body::Json(j) => {
            let mut body = JsonBuilder::new();
            json_into(j, &mut body);
            Some(body.finish())
        }
        _ => None,
    };
    RequestNode { step: r, query_keys, headers, headers_fixed, needs_body, needs_headers, content_type, line, json }
}

/// Writes a JSON body's tree as serde_json would serialize it, compact, keys in the plan's order.
fn json_into(j: &JsonTpl, out: &mut JsonBuilder) {
    match j {
        JsonTpl::Const(v) => out.raw(&v.to_string()),
        JsonTpl::Str(tpl) => out.string(tpl),
        JsonTpl::Expr(tpl) => out.value(tpl),
        JsonTpl::Array(items) => {
            out.raw("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.raw(",");
                }
                json_into(item, out);
            }
            out.raw("]");
        }
        JsonTpl::Object(entries) => {
            out.raw("{");
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.raw(",");
                }
                out.raw(&serde_json::Value::from(key.as_str()).to_string());
                out.raw(":");
                json_into(value, out);
            }
            out.raw("}");
        }
    }
}

/// Host and Content-Length are computed from the URL and the body, never taken from the plan.
fn is_framing(name: &HeaderName) -> bool {
    name == HOST || name == CONTENT_LENGTH
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use minijinja::Value;
    use proptest::prelude::*;

    use super::{json_into, JsonBuilder, JsonTpl};
    use crate::template::{JsonError, Scope, Shared, Templates};

    /// A JSON body as it was built before it was compiled: a `serde_json::Value` of the rendered leaves
    /// (a single expression through `tojson`, parsed back), serialized.
    fn reference(t: &Templates, j: &JsonTpl, scope: &Arc<Scope>) -> Result<serde_json::Value, String> {
        let r = |tpl| t.render(tpl, scope).map_err(|e| e.message);
        Ok(match j {
            JsonTpl::Const(v) => v.clone(),
            JsonTpl::Str(tpl) => serde_json::Value::String(r(tpl)?),
            JsonTpl::Expr(tpl) => serde_json::from_str(&r(tpl)?).map_err(|e| format!("json value: {e}"))?,
            JsonTpl::Array(items) => {
                serde_json::Value::Array(items.iter().map(|i| reference(t, i, scope)).collect::<Result<_, _>>()?)
            }
            JsonTpl::Object(entries) => {
                let mut map = serde_json::Map::new();
                for (k, v) in entries {
                    map.insert(k.clone(), reference(t, v, scope)?);
                }
                serde_json::Value::Object(map)
            }
        })
    }

    /// String leaves: text, fast forms, forms that give up half way (a none), the engine's, errors.
    const STRINGS: &[&str] = &[
        "plain",
        "a\"b\\c\n\u{1}é",
        "n{{ vu }}-{{ iteration }}",
        "{{ random_string(5) }}",
        "x{{ random_string(3, 'a\"<') }}y\t",
        "{{ random_digits(4) }}{{ uuid() }}",
        "{{ text }}",
        "{{ random_int(1, 9) }}{{ nothing }}{{ random_int(1, 9) }}",
        "{{ random_string(2) }}{{ number }}",
        "{{ 'x' ~ 'y' }}",
        "{{ random_string(4) | upper }}",
        "{{ missing }}",
    ];

    /// Single expressions (a leaf `"{{ e }}"`).
    const EXPRESSIONS: &[&str] = &[
        "random_int(-5, 5)",
        "random_int(1, 999999)",
        "random_string(4)",
        "random_string(3, 'a\"<>&')",
        "random_string(2, 'éü')",
        "random_digits(3)",
        "uuid()",
        "vu",
        "iteration",
        "group",
        "text",
        "number",
        "big",
        "nothing",
        "flag",
        "float",
        "list",
        "props",
        "props.x",
        "1 + 2",
        "random_float(0, 1)",
        "random_choice(['a', 'b', 'c'])",
        "[vu, 'x<y', none]",
        "'it''s'",
        "missing",
    ];

    #[derive(Debug, Clone)]
    enum Tree {
        Const(serde_json::Value),
        Str(usize),
        Expr(usize),
        Array(Vec<Tree>),
        Object(Vec<Tree>),
    }

    fn tree() -> impl Strategy<Value = Tree> {
        let leaf = prop_oneof![
            (0..STRINGS.len()).prop_map(Tree::Str),
            (0..EXPRESSIONS.len()).prop_map(Tree::Expr),
            prop_oneof![
                Just(serde_json::json!(null)),
                Just(serde_json::json!(true)),
                Just(serde_json::json!(-2.5)),
                Just(serde_json::json!(1e300)),
                Just(serde_json::json!("c\"\\")),
            ]
            .prop_map(Tree::Const),
        ];
        leaf.prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Tree::Array),
                prop::collection::vec(inner, 0..5).prop_map(Tree::Object),
            ]
        })
    }

    fn build(t: &mut Templates, tree: &Tree) -> JsonTpl {
        match tree {
            Tree::Const(v) => JsonTpl::Const(v.clone()),
            Tree::Str(i) => JsonTpl::Str(t.add(STRINGS[*i]).unwrap().0),
            Tree::Expr(i) => JsonTpl::Expr(t.add(&format!("{{{{ ({}) | tojson }}}}", EXPRESSIONS[*i])).unwrap().0),
            Tree::Array(items) => JsonTpl::Array(items.iter().map(|i| build(t, i)).collect()),
            Tree::Object(items) => {
                JsonTpl::Object(items.iter().enumerate().map(|(k, i)| (format!("k{k} \"é\"\n"), build(t, i))).collect())
            }
        }
    }

    fn scope(shared: &Arc<Shared>) -> Arc<Scope> {
        let s = Scope::for_vu(shared.clone(), 42, 1, Arc::from("g\"1"), 3);
        for (name, value) in [
            ("text", Value::from("a\"b\\c\n<&>é\u{7f}")),
            ("number", Value::from(-17)),
            ("big", Value::from(u64::MAX)),
            ("nothing", Value::from(())),
            ("flag", Value::from(true)),
            ("float", Value::from(1.0)),
            ("list", Value::from(vec![1, 2])),
        ] {
            s.set_var(Arc::from(name), value);
        }
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// A compiled JSON body writes the bytes of the body built as a value, and draws the generator
        /// the same: the same seed, the same bytes, request after request.
        #[test]
        fn a_compiled_json_body_writes_what_the_value_serializes_to(tree in tree()) {
            let mut t = Templates::new();
            let j = build(&mut t, &tree);
            let mut b = JsonBuilder::new();
            json_into(&j, &mut b);
            let body = b.finish();
            let shared = Arc::new(Shared { props: Value::from_iter([("x", "p\"")]), ..Shared::default() });
            let (fast, slow) = (scope(&shared), scope(&shared));
            for i in 1..=3 {
                fast.set_iteration(i);
                slow.set_iteration(i);
                let got = t.render_json(&body, &fast).map(|b| String::from_utf8(b).unwrap()).map_err(|e| match e {
                    JsonError::Template(e) => e.message,
                    JsonError::Value(e) => format!("json value: {e}"),
                });
                let want = reference(&t, &j, &slow).map(|v| serde_json::to_string(&v).unwrap());
                prop_assert_eq!(got, want);
            }
        }
    }
}
