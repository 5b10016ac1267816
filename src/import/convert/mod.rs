//! The conversion: the element tree in, the plan's YAML out, with a warning (and a comment at its place)
//! for every element converted only in part or not at all.

mod checks;
mod controllers;
mod declare;
mod groups;
mod kinds;
mod sampler;
mod timers;

use std::collections::HashSet;
use std::path::PathBuf;

use super::error::{ImportError, Warning};
use super::functions::{Fx, Property, When};
use super::names::Names;
use super::tree::{Element, Props};
use super::xml::Read;
use super::yaml::{self, Entry, Item, MapB, Y};
use kinds::{kind, label, Kind};

/// What the caller tells the converter.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The .jmx's file name, for the header comment.
    pub source_name: String,
    /// The .jmx's directory: CSV files without `variableNames` are read there for their header row.
    pub jmx_dir: Option<PathBuf>,
}

/// A converted plan.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The plan, as YAML.
    pub yaml: String,
    /// Every element converted in part or not at all.
    pub warnings: Vec<Warning>,
    /// Disabled elements skipped (their paths).
    pub disabled: Vec<String>,
    /// Listeners dropped.
    pub listeners: usize,
    /// What was skipped as JMeter skips it (the WorkBench), said on stderr and in the plan's header.
    pub notes: Vec<String>,
}

/// What the scope of a step list adds to every request in it: JMeter applies headers, defaults, timers,
/// assertions and post-processors to every sampler below the element they sit in.
#[derive(Clone, Default)]
struct Scope<'e> {
    path: Vec<String>,
    headers: Vec<(String, String)>,
    defaults: Vec<&'e Props>,
    timers: Vec<&'e Element>,
    assertions: Vec<&'e Element>,
    post: Vec<&'e Element>,
}

impl Scope<'_> {
    fn path_to(&self, el: &Element) -> String {
        let mut p = self.path.join(" > ");
        if !p.is_empty() {
            p.push_str(" > ");
        }
        p.push_str(&label(el));
        p
    }
}

/// An origin (scheme, host, port) requests go to.
struct Origin {
    /// Rendered when the plan loads: a property can hold it.
    load: Option<String>,
    /// Rendered per request.
    run: String,
    count: usize,
}

struct Cx {
    names: Names,
    props: Vec<Property>,
    warnings: Vec<Warning>,
    disabled: Vec<String>,
    listeners: usize,
    cookies: bool,
    origins: Vec<Origin>,
    /// JMeter variables an extractor fills with every match (`match_no: -1`), for ForEach.
    lists: HashSet<String>,
    variables: Vec<Entry>,
    data: Vec<Entry>,
    header_comments: Vec<String>,
    /// Shared counters in thread groups or above them.
    counters: Vec<IterationCounter>,
}

/// A shared counter read once per iteration of a thread group: the group's steps run inside
/// `foreach: "{{ [expr] }}"` as `ident`.
struct IterationCounter {
    /// The Counter element's line in the .jmx.
    line: u32,
    ident: String,
    expr: String,
}

/// Marks an origin's place at the start of a URL until the plan's base URL is chosen.
const ORIGIN_MARK: char = '\u{1}';

/// Converts the plan read from a .jmx.
pub fn convert(read: Read, options: &Options) -> Result<Converted, ImportError> {
    let plan = read.plan;
    let mut cx = Cx {
        names: Names::default(),
        props: Vec::new(),
        warnings: Vec::new(),
        disabled: Vec::new(),
        listeners: 0,
        cookies: false,
        origins: Vec::new(),
        lists: HashSet::new(),
        variables: Vec::new(),
        data: Vec::new(),
        header_comments: Vec::new(),
        counters: Vec::new(),
    };
    let root_name = if plan.name.trim().is_empty() { "Test Plan".to_string() } else { plan.name.clone() };
    if read.version.is_none() {
        cx.warn_at(&root_name, plan.line, "the file does not say which JMeter saved it; read as JMeter 5".into());
    }
    if plan.props.flag("TestPlan.serialize_threadgroups", false) {
        let c = cx.warn(
            &Scope::default(),
            &plan,
            "thread groups run one after the other in JMeter; side by side here".into(),
        );
        cx.header_comments.push(c);
    }
    declare::declare(&mut cx, &plan, &root_name, options);
    let scope = Scope { path: vec![root_name.clone()], ..Scope::default() };
    let mut defaults_headers: Vec<(String, String)> = Vec::new();
    let mut plan_scope = scope.clone();
    plan_level(&mut cx, &plan, &mut plan_scope, &mut defaults_headers);

    let (mut setup, mut main, mut teardown) = (Vec::new(), Vec::new(), Vec::new());
    let mut pending = Vec::new();
    for child in &plan.children {
        if !child.enabled {
            pending.push(cx.skip_disabled(&plan_scope, child));
            continue;
        }
        match kind(child) {
            Kind::ThreadGroup(phase) => {
                let item = groups::group(&mut cx, child, &plan_scope, &plan.children, std::mem::take(&mut pending));
                match phase {
                    kinds::Phase::Setup => setup.push(item),
                    kinds::Phase::Main => main.push(item),
                    kinds::Phase::Teardown => teardown.push(item),
                }
            }
            Kind::Listener => cx.listeners += 1,
            Kind::Header | Kind::Defaults | Kind::Cookies | Kind::Csv | Kind::Variables | Kind::Counter => {}
            Kind::Timer | Kind::Assertion | Kind::Extractor => {}
            _ => {
                let c = cx.warn(&plan_scope, child, "not converted: planrun has no equivalent at plan level".into());
                cx.header_comments.push(c);
            }
        }
    }
    cx.header_comments.extend(pending);
    let kept = |items: Vec<Item>| -> Vec<Item> {
        items.into_iter().filter(|i| i.value.is_some() || !i.comments.is_empty()).collect()
    };
    let (mut setup, mut main, mut teardown) = (kept(setup), kept(main), kept(teardown));
    if !main.iter().any(|i| i.value.is_some()) {
        let why = if setup.iter().chain(&teardown).any(|i| i.value.is_some()) {
            "the plan has no Thread Group that sends HTTP requests (only setUp/tearDown groups do); planrun needs one"
        } else {
            "no Thread Group in the plan sends an HTTP request planrun can convert"
        };
        let mut detail = why.to_string();
        for w in &cx.warnings {
            detail.push_str(&format!("\n  warning: {w}"));
        }
        return Err(ImportError::Empty(detail));
    }

    // The base URL: the origin most requests go to, as a property.
    let base = choose_base(&cx.origins);
    let base_value = base.and_then(|i| cx.origins[i].load.clone()).unwrap_or_else(|| {
        cx.header_comments.push(
            "No request names a host that is known when the plan loads: base_url is http://localhost; \
             set it with -D base_url=..."
                .into(),
        );
        "http://localhost".into()
    });
    for items in [&mut setup, &mut main, &mut teardown] {
        for item in items.iter_mut() {
            if let Some(v) = item.value.as_mut() {
                fix_origins(v, &cx.origins, base);
            }
        }
    }

    let mut root = MapB::default();
    root.put("name", Y::s(root_name.clone()));
    if let Some(d) = plan.props.opt("TestPlan.comments") {
        root.put("description", Y::s(d));
    }
    let mut props = MapB::default();
    for p in &cx.props {
        let value = match p.default.parse::<i64>() {
            Ok(n) if !p.default.starts_with('0') || p.default == "0" => Y::Int(n),
            _ => Y::s(super::functions::escape_text(&p.default)),
        };
        let comment = if p.ident == p.jmeter { vec![] } else { vec![format!("JMeter property `{}`", p.jmeter)] };
        props.put_commented(p.ident.clone(), value, comment);
    }
    props.put_commented(
        "base_url",
        Y::s(base_value),
        vec!["Where the requests go: planrun PLAN -D base_url=http://host:port".into()],
    );
    root.put("properties", props.done());
    let mut defaults = MapB::default();
    defaults.put("base_url", Y::s("{{ props.base_url }}"));
    if !defaults_headers.is_empty() {
        let mut h = MapB::default();
        for (k, v) in dedup_headers(defaults_headers) {
            h.put(k, Y::s(v));
        }
        defaults.put("headers", h.done());
    }
    if !cx.cookies {
        defaults.put_commented(
            "cookies",
            Y::Bool(false),
            vec!["The JMeter plan has no HTTP Cookie Manager, so JMeter kept no cookies".into()],
        );
    }
    root.put("defaults", defaults.done());
    if !cx.variables.is_empty() {
        root.put("variables", Y::Map(std::mem::take(&mut cx.variables)));
    }
    if !cx.data.is_empty() {
        root.put("data", Y::Map(std::mem::take(&mut cx.data)));
    }
    if setup.iter().any(|i| i.value.is_some()) {
        root.put("setup", Y::Seq(setup));
    }
    root.put("thread_groups", Y::Seq(main));
    if teardown.iter().any(|i| i.value.is_some()) {
        root.put("teardown", Y::Seq(teardown));
    }

    let mut header = vec![
        format!("Converted by `planrun import` from {}.", options.source_name),
        "Check it with `planrun validate`; see the requests with `planrun dry-run`.".into(),
    ];
    if let Some(v) = &read.version {
        header.push(format!("Saved by JMeter {v}."));
    }
    if cx.listeners > 0 {
        header.push(format!(
            "{} listener(s) dropped: planrun writes its own results (-o, --json, --report).",
            cx.listeners
        ));
    }
    let notes: Vec<String> = read
        .beside
        .iter()
        .map(|(name, n)| {
            let name = if name.trim().is_empty() { "WorkBench" } else { name.as_str() };
            format!("JMeter's WorkBench `{name}` skipped: its {n} element(s) are never run by JMeter either")
        })
        .collect();
    header.extend(notes.iter().map(|n| format!("{n}.")));
    header.extend(cx.header_comments.iter().cloned());
    let yaml = yaml::document(
        &header,
        &match root.done() {
            Y::Map(m) => m,
            _ => Vec::new(),
        },
    );
    Ok(Converted { yaml, warnings: cx.warnings, disabled: cx.disabled, listeners: cx.listeners, notes })
}

/// The Test Plan's own elements that apply everywhere: headers (to `defaults`), HTTP Request Defaults,
/// timers, assertions and post-processors (to every request).
fn plan_level<'e>(cx: &mut Cx, plan: &'e Element, scope: &mut Scope<'e>, headers: &mut Vec<(String, String)>) {
    for child in plan.children.iter().filter(|c| c.enabled) {
        match kind(child) {
            Kind::Header => {
                for (k, v) in sampler::headers_of(child) {
                    // A Content-Type goes to each request, where the body kind decides what becomes of it.
                    if k.eq_ignore_ascii_case("content-type") || super::functions::has_refs(&k) || !static_ok(cx, &v) {
                        scope.headers.push((k, v));
                    } else {
                        let mut fx = Fx::new(&cx.names, &mut cx.props, When::Run);
                        let t = fx.template(&v);
                        headers.push((k, t));
                    }
                }
            }
            Kind::Defaults => scope.defaults.push(&child.props),
            Kind::Cookies => {
                if let Some(c) = cx.cookie_manager(scope, child) {
                    cx.header_comments.push(c);
                }
            }
            Kind::Timer => scope.timers.push(child),
            Kind::Assertion => scope.assertions.push(child),
            Kind::Extractor => scope.post.push(child),
            _ => {}
        }
    }
}

/// Whether a default header's value reads only names every request can read (not captured values, which
/// `defaults` cannot see).
fn static_ok(cx: &Cx, v: &str) -> bool {
    super::functions::parse(v).iter().all(|s| match s {
        super::functions::Seg::Var(n) => cx.names.get(n).is_some_and(|b| b.udv_value.is_some()),
        _ => true,
    })
}

fn dedup_headers(headers: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (k, v) in headers {
        if let Some(slot) = out.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&k)) {
            slot.1 = v;
        } else {
            out.push((k, v));
        }
    }
    out
}

fn choose_base(origins: &[Origin]) -> Option<usize> {
    origins
        .iter()
        .enumerate()
        .filter(|(_, o)| o.load.is_some())
        .max_by_key(|(i, o)| (o.count, usize::MAX - i))
        .map(|(i, _)| i)
}

/// Replaces each origin mark in URLs: nothing for the base URL (the URL stays relative), else the origin.
fn fix_origins(v: &mut Y, origins: &[Origin], base: Option<usize>) {
    match v {
        Y::Str(s) if s.starts_with(ORIGIN_MARK) => {
            let rest = &s[ORIGIN_MARK.len_utf8()..];
            if let Some((idx, path)) = rest.split_once(ORIGIN_MARK) {
                let i: usize = idx.parse().unwrap_or(usize::MAX);
                let fixed = if Some(i) == base || i == sampler::RELATIVE {
                    path.to_string()
                } else {
                    format!("{}{path}", origins.get(i).map(|o| o.run.as_str()).unwrap_or(""))
                };
                *s = fixed;
            }
        }
        Y::Map(m) => m.iter_mut().for_each(|e| fix_origins(&mut e.value, origins, base)),
        Y::Seq(s) => s.iter_mut().filter_map(|i| i.value.as_mut()).for_each(|v| fix_origins(v, origins, base)),
        _ => {}
    }
}

impl Cx {
    /// Records a warning about `el` and returns the comment to leave at its place.
    fn warn(&mut self, scope: &Scope, el: &Element, message: String) -> String {
        let path = scope.path_to(el);
        let comment = format!("planrun import: {}: {message}", label(el));
        if !self.warnings.iter().any(|w| w.line == el.line && w.message == message) {
            self.warnings.push(Warning { path, message, line: el.line });
        }
        comment
    }

    /// An HTTP Cookie Manager: planrun keeps each user's cookies when the plan has one anywhere. What it
    /// cannot take (cookies defined in the manager, clearing them each iteration) is warned about; returns
    /// the comment to leave, if any.
    fn cookie_manager(&mut self, scope: &Scope, el: &Element) -> Option<String> {
        self.cookies = true;
        let mut lost = Vec::new();
        if !el.props.elements("CookieManager.cookies").is_empty() {
            lost.push("its user-defined cookies are not sent (set a Cookie header instead)");
        }
        if el.props.flag("CookieManager.clearEachIteration", false) {
            lost.push("clearEachIteration: planrun keeps a user's cookies across iterations");
        }
        (!lost.is_empty()).then(|| self.warn(scope, el, lost.join("; ")))
    }

    fn warn_at(&mut self, path: &str, line: u32, message: String) {
        self.warnings.push(Warning { path: path.to_string(), message, line });
    }

    /// Notes a disabled element and returns the comment to leave at its place.
    fn skip_disabled(&mut self, scope: &Scope, el: &Element) -> String {
        if kind(el) == Kind::Listener {
            return String::new();
        }
        self.disabled.push(scope.path_to(el));
        format!("disabled in JMeter, skipped: {}", label(el))
    }

    /// Converts `s` (used `when`), turning what could not be converted into warnings about `el`.
    fn text(&mut self, scope: &Scope, el: &Element, s: &str, when: When) -> (String, Vec<String>) {
        let mut fx = Fx::new(&self.names, &mut self.props, when);
        let t = fx.template(s);
        let notes = std::mem::take(&mut fx.notes);
        let comments = notes.into_iter().map(|n| self.warn(scope, el, n)).collect();
        (t, comments)
    }

    /// Like [`Cx::text`], for one expression.
    fn expr(&mut self, scope: &Scope, el: &Element, s: &str, when: When) -> (String, Vec<String>) {
        let mut fx = Fx::new(&self.names, &mut self.props, when);
        let t = fx.expr(s);
        let notes = std::mem::take(&mut fx.notes);
        let comments = notes.into_iter().map(|n| self.warn(scope, el, n)).collect();
        (t, comments)
    }

    /// `s` converted for use when the plan loads, or None (nothing is warned) when it reads a value known
    /// only while running.
    fn load_value(&mut self, s: &str) -> Option<String> {
        let mut fx = Fx::new(&self.names, &mut self.props, When::Load);
        let t = fx.template(s);
        fx.notes.is_empty().then_some(t)
    }
}

/// A list of steps from the children of a thread group or controller; comments left by dropped elements
/// come before the step that follows them.
fn steps<'e>(cx: &mut Cx, children: &'e [Element], outer: &Scope<'e>) -> Vec<Item> {
    let mut scope = outer.clone();
    for child in children.iter().filter(|c| c.enabled) {
        match kind(child) {
            Kind::Header => scope.headers.extend(sampler::headers_of(child)),
            Kind::Defaults => scope.defaults.push(&child.props),
            Kind::Timer => scope.timers.push(child),
            Kind::Assertion => scope.assertions.push(child),
            Kind::Extractor => scope.post.push(child),
            Kind::Cookies => {
                if let Some(c) = cx.cookie_manager(&scope, child) {
                    cx.header_comments.push(c);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for child in children {
        if !child.enabled {
            let c = cx.skip_disabled(&scope, child);
            if !c.is_empty() {
                pending.push(c);
            }
            continue;
        }
        let items = element(cx, child, &scope, &mut pending);
        for mut item in items {
            if !pending.is_empty() {
                let mut c = std::mem::take(&mut pending);
                c.append(&mut item.comments);
                item.comments = c;
            }
            out.push(item);
        }
    }
    if !pending.is_empty() {
        out.push(Item { value: None, comments: pending });
    }
    out
}

/// The steps one ordered element becomes (none for a scoped element, which [`steps`] applied already).
fn element<'e>(cx: &mut Cx, el: &'e Element, scope: &Scope<'e>, pending: &mut Vec<String>) -> Vec<Item> {
    match kind(el) {
        Kind::Http => sampler::request(cx, el, scope),
        Kind::Controller => controllers::controller(cx, el, scope),
        Kind::TestAction => timers::test_action(cx, el, scope),
        Kind::Listener => {
            cx.listeners += 1;
            Vec::new()
        }
        Kind::Header | Kind::Defaults | Kind::Timer | Kind::Assertion | Kind::Extractor | Kind::Cookies => Vec::new(),
        Kind::Csv | Kind::Variables | Kind::Counter => Vec::new(),
        Kind::ThreadGroup(_) => {
            pending.push(cx.warn(scope, el, "a thread group inside another element is not converted".into()));
            Vec::new()
        }
        Kind::Other(why) => {
            pending.push(cx.warn(scope, el, why));
            Vec::new()
        }
    }
}
