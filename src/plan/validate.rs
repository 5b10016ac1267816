//! Validation: the node tree of a plan becomes a [`Plan`], or every problem found, sorted by position.

use std::sync::Arc;
use std::time::Duration;

use minijinja::value::Value as JValue;

use super::decode::{Ctx, Names};
use super::model::{Defaults, HttpVersion, Phase, Plan, Secrets, Step, Think, ThreadGroup, Threshold, TlsSettings};
use super::node::{Node, Value};
use super::steps::steps;
use super::think::think;
use super::{bounds, load, vocab, PlanOptions};
use crate::diag::{did_you_mean, Diagnostic, Diagnostics};
use crate::source::{Source, Span};
use crate::template::{Scope, Shared, Templates, Tpl};
use std::path::PathBuf;

/// Response bytes kept for assertions and extractors by default; the rest is counted and discarded.
pub(super) const DEFAULT_MAX_BODY: u64 = 10 << 20;
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Validates a parsed plan.
/// A threshold on a label that no step has would pass or fail on nothing: a plan error, with did-you-mean.
fn thresholds_on_known_labels(cx: &mut Ctx, thresholds: &[Threshold], groups: &[ThreadGroup]) {
    let mut labels: Vec<&str> = Vec::new();
    for g in groups {
        Step::walk(&g.steps, &mut |s| labels.extend(s.label().map(|l| &**l)));
    }
    for t in thresholds {
        let Some(label) = t.label.as_deref() else { continue };
        if labels.contains(&label) {
            continue;
        }
        let hint = match did_you_mean(label, labels.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => "a threshold's label is a request's or a transaction's `name`".to_string(),
        };
        cx.error(Diagnostic::new(t.span, format!("threshold on `{label}`, which no step has")).hint(hint));
    }
}

pub fn validate(source: &Source, root: &Node, opts: &PlanOptions) -> Result<Plan, Diagnostics> {
    let mut seed_drawn = opts.seed.is_none() && plan_seed(root).is_none();
    let mut seed = opts.seed.or_else(|| plan_seed(root)).unwrap_or_else(rand::random);
    let stub = match &opts.stub_url {
        Some(url) => map_value([("url".to_string(), JValue::from(url.as_str()))]),
        None => JValue::UNDEFINED,
    };
    let shared = Arc::new(Shared { props: JValue::from(()), stub: stub.clone() });
    let mut cx = Ctx {
        source,
        diags: Diagnostics::default(),
        templates: Templates::new(),
        load_scope: Scope::load_time(shared, seed),
        columns: Default::default(),
        once_blocks: 0,
        reads: Default::default(),
        group_reads: Vec::new(),
    };
    super::duplicates::check(root, &mut cx.diags);
    let Some(f) = cx.object(root, &vocab::PLAN) else {
        return Err(cx.diags);
    };
    let name = cx.require(&f, "name").and_then(|n| cx.string(n, "name"));
    let description = f.get("description").and_then(|d| cx.string(d, "description"));
    let mut secrets = Vec::new();
    let props = properties(&mut cx, f.get("properties"), opts, &stub, seed, &mut secrets);
    // Every `props.NAME` a template reads is checked like a data set's column: declared, or given with -D.
    let prop_names = props.try_iter().map(|keys| keys.filter_map(|k| k.as_str().map(Arc::from)).collect());
    cx.columns.insert("props".to_string(), prop_names.unwrap_or_default());
    let shared = Arc::new(Shared { props, stub });
    cx.load_scope = Scope::load_time(shared.clone(), seed);
    // A seed may be a template over the properties (`seed: "{{ props.seed }}"`): rendered once they are.
    if let Some(s) = f.get("seed") {
        if let (Some(v), None) = (cx.count(s, "seed", bounds::ANY), opts.seed) {
            seed = v;
            seed_drawn = false;
        }
    }

    let mut names: Names = ["vu", "iteration", "group", "props"].iter().map(|s| s.to_string()).collect();
    if opts.stub_url.is_some() {
        names.insert("stub".into());
    }
    let defaults = defaults(&mut cx, f.get("defaults"), &names, &mut secrets);
    let mut secret_variables = Vec::new();
    let variables = variables(&mut cx, f.get("variables"), &mut names, &mut secret_variables);
    let data = match f.get("data") {
        Some(d) => super::data_sets::validate(&mut cx, d),
        None => Some(Vec::new()),
    };
    for set in data.iter().flatten() {
        names.insert(set.name.to_string());
        // A set whose file could not be read has no columns: nothing to check against.
        if !set.columns.is_empty() {
            cx.columns.insert(set.name.to_string(), set.columns.clone());
        }
    }
    super::steps::bound_names(root, &mut names);
    let thresholds = match f.get("thresholds") {
        Some(t) => super::threshold::thresholds(&mut cx, t),
        None => Some(Vec::new()),
    };
    let outputs = match f.get("outputs") {
        Some(o) => super::outputs::outputs(&mut cx, o),
        None => Some(Vec::new()),
    };
    let groups = match (cx.require(&f, "thread_groups"), &defaults) {
        (Some(_), Some(d)) => {
            let mut all = Some(Vec::new());
            for (key, phase) in [("setup", Phase::Setup), ("thread_groups", Phase::Main), ("teardown", Phase::Teardown)]
            {
                let Some(node) = f.get(key) else { continue };
                match (thread_groups(&mut cx, node, d, &names, phase), all.as_mut()) {
                    (Some(gs), Some(all)) => all.extend(gs),
                    _ => all = None,
                }
            }
            all
        }
        _ => None,
    };
    if let (Some(thresholds), Some(groups)) = (&thresholds, &groups) {
        thresholds_on_known_labels(&mut cx, thresholds, groups);
    }
    let mut data = data;
    if let (Some(node), Some(sets), Some(groups)) = (f.get("data"), data.as_mut(), &groups) {
        super::data_sets::readers(&mut cx, node, sets, groups);
    }
    if let (Some(variables), Some(groups)) = (&variables, &groups) {
        super::secret::check_variables(&mut cx, variables, &secret_variables, &shared, seed, groups);
    }
    if !cx.diags.is_empty() {
        return Err(super::secret::mask(cx.diags.sorted(), &secrets));
    }
    let (Some(name), Some(defaults), Some(variables), Some(data), Some(thresholds), Some(groups), Some(outputs)) =
        (name, defaults, variables, data, thresholds, groups, outputs)
    else {
        return Err(super::secret::mask(cx.diags.sorted(), &secrets));
    };
    Ok(Plan {
        name,
        description,
        seed,
        seed_drawn,
        templates: cx.templates,
        shared,
        defaults,
        variables,
        data,
        thresholds,
        outputs,
        secrets: Secrets { values: secrets, variables: secret_variables.into_iter().map(|(name, _)| name).collect() },
        groups,
    })
}

/// The plan's `stub:` (`node`), rendered like every load-time value: in the scope of the properties (with `-D`
/// overrides), where templates, filters and functions work as anywhere else. It is rendered before the stub
/// starts, so it cannot read `stub` itself, and properties that read `stub.url` see the placeholder that
/// `validate` uses.
pub(super) fn stub_text(
    source: &Source,
    root: &Node,
    node: &Node,
    overrides: &[(String, String)],
) -> Result<String, Diagnostics> {
    let seed = plan_seed(root).unwrap_or(0);
    let stub = map_value([("url".to_string(), JValue::from(STUB_PLACEHOLDER))]);
    let mut cx = Ctx {
        source,
        diags: Diagnostics::default(),
        templates: Templates::new(),
        load_scope: Scope::load_time(Arc::new(Shared::default()), seed),
        columns: Default::default(),
        once_blocks: 0,
        reads: Default::default(),
        group_reads: Vec::new(),
    };
    let opts = PlanOptions { overrides: overrides.to_vec(), ..PlanOptions::default() };
    let properties = root.as_map().and_then(|m| m.iter().find(|(k, _)| k.name == "properties")).map(|(_, v)| v);
    let props = self::properties(&mut cx, properties, &opts, &stub, seed, &mut Vec::new());
    cx.load_scope = Scope::load_time(Arc::new(Shared { props, stub: JValue::UNDEFINED }), seed);
    let names: Names = ["props".to_string()].into_iter().collect();
    let text = cx.string(node, "stub").and_then(|text| {
        let tpl = cx.template(node, &text, &names)?;
        match cx.templates.render(&tpl, &cx.load_scope) {
            Ok(s) => Some(s),
            Err(e) => {
                cx.error(Diagnostic::new(node.span, format!("cannot render stub: {}", e.message)));
                None
            }
        }
    });
    // Problems of properties that `stub` does not need are left for `validate` to report with the rest.
    text.ok_or_else(|| cx.diags.sorted())
}

/// `stub.url` while a plan is only checked (and while `stub:` itself is rendered): no stub is listening.
const STUB_PLACEHOLDER: &str = "http://127.0.0.1:0";

fn plan_seed(root: &Node) -> Option<u64> {
    root.as_map()?.iter().find(|(k, _)| k.name == "seed").and_then(|(_, v)| match v.value {
        Value::Int(i) if i >= 0 => Some(i as u64),
        _ => None,
    })
}

/// Renders properties in order, each seeing the ones before it; `-D` values replace them.
/// `{ value: X, secret: true }` or a plain value: the value node and whether it is secret.
fn secret_wrapper<'n>(cx: &mut Ctx, node: &'n Node) -> Option<(&'n Node, bool)> {
    let is_wrapper = node.as_map().is_some_and(|m| m.iter().any(|(k, _)| k.name == "secret" || k.name == "value"));
    if !is_wrapper {
        return Some((node, false));
    }
    let f = cx.object(node, &vocab::SECRET)?;
    let value = cx.require(&f, "value")?;
    let secret = match f.get("secret") {
        Some(s) => cx.boolean(s, "secret")?,
        None => false,
    };
    Some((value, secret))
}

fn properties(
    cx: &mut Ctx,
    node: Option<&Node>,
    opts: &PlanOptions,
    stub: &JValue,
    seed: u64,
    secrets: &mut Vec<String>,
) -> JValue {
    let mut props: Vec<(String, JValue)> = Vec::new();
    let entries = match node {
        Some(n) => match n.as_map() {
            Some(m) => m.to_vec(),
            None => {
                cx.type_error(n, "properties: a mapping of names to values");
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    for (k, v) in &entries {
        let Some((v, secret)) = secret_wrapper(cx, v) else { continue };
        if let Some((at, (_, over))) = opts.overrides.iter().enumerate().rev().find(|(_, (n, _))| n == &k.name) {
            if secret {
                let how =
                    if at < opts.from_files { "set by a property file to a value" } else { "set with -D to a value" };
                super::secret::check_property(cx, k.span, &k.name, over, how);
                secrets.push(over.clone());
            }
            props.push((k.name.clone(), override_value(over)));
            continue;
        }
        let so_far = Shared { props: map_value(props.iter().cloned()), stub: stub.clone() };
        cx.load_scope = Scope::load_time(Arc::new(so_far), seed);
        let value = match &v.value {
            Value::Int(i) => JValue::from(*i),
            Value::Float(f) => JValue::from(*f),
            Value::Bool(b) => JValue::from(*b),
            Value::Str(_) => match cx.load_time_text(v, "property") {
                Some(s) => JValue::from(s),
                None => continue,
            },
            _ => {
                cx.type_error(v, "a property: a string, number or boolean");
                continue;
            }
        };
        if secret {
            let text = value.to_string();
            super::secret::check_property(cx, v.span, &k.name, &text, "is");
            secrets.push(text);
        }
        props.push((k.name.clone(), value));
    }
    // A name the plan does not declare: the last value given wins, as for a declared one.
    let declared = props.len();
    for (n, v) in &opts.overrides {
        if let Some(slot) = props[declared..].iter_mut().find(|(p, _)| p == n) {
            slot.1 = override_value(v);
        } else if !props[..declared].iter().any(|(p, _)| p == n) {
            props.push((n.clone(), override_value(v)));
        }
    }
    map_value(props)
}

fn override_value(text: &str) -> JValue {
    match text.parse::<i64>() {
        Ok(i) => JValue::from(i),
        Err(_) => JValue::from(text),
    }
}

fn defaults(cx: &mut Ctx, node: Option<&Node>, names: &Names, secrets: &mut Vec<String>) -> Option<Defaults> {
    let mut d = Defaults {
        base_url: None,
        timeout: DEFAULT_TIMEOUT,
        headers: vec![(http::header::USER_AGENT, literal_tpl(cx, "planrun"))],
        follow_redirects: true,
        cookies: true,
        max_body: DEFAULT_MAX_BODY,
        tls: TlsSettings::default(),
        proxy: None,
        proxies: Default::default(),
        http_version: HttpVersion::Auto,
        keep_alive: true,
    };
    let Some(node) = node else { return Some(d) };
    let f = cx.object(node, &vocab::DEFAULTS)?;
    if let Some(b) = f.get("base_url") {
        d.base_url = cx.load_time_text(b, "base_url");
        if let Some(url) = &d.base_url {
            if url::Url::parse(url).map(|u| !matches!(u.scheme(), "http" | "https")).unwrap_or(true) {
                cx.error(
                    Diagnostic::new(b.span, format!("base_url `{url}` is not an http:// or https:// URL"))
                        .hint("e.g. http://127.0.0.1:13013"),
                );
            }
        }
    }
    if let Some(t) = f.get("timeout") {
        d.timeout = cx.duration(t, "timeout").unwrap_or(d.timeout);
    }
    let mut own = Vec::new();
    if let Some(h) = f.get("headers") {
        own = super::request::headers(cx, h, names).unwrap_or_default();
        d.headers.retain(|(k, _)| !own.iter().any(|(o, _)| o == k));
        d.headers.extend(own.iter().cloned());
    }
    if let Some(r) = f.get("follow_redirects") {
        d.follow_redirects = cx.boolean(r, "follow_redirects").unwrap_or(true);
    }
    if let Some(c) = f.get("cookies") {
        d.cookies = cx.boolean(c, "cookies").unwrap_or(true);
    }
    if let Some(m) = f.get("max_body") {
        d.max_body = cx.count(m, "max_body", bounds::BODY).unwrap_or(DEFAULT_MAX_BODY);
    }
    if let Some(t) = f.get("tls") {
        d.tls = tls(cx, t).unwrap_or_default();
    }
    if let Some(p) = f.get("proxy") {
        d.proxy = proxy(cx, p, secrets);
    }
    // After `headers`: an Accept-Encoding header written there is sent as written.
    if let Some(value) = f.get("compression").and_then(|c| super::compression::compression(cx, c)) {
        let accept = http::header::ACCEPT_ENCODING;
        if !value.is_empty() && !d.headers.iter().any(|(k, _)| *k == accept) {
            d.headers.push((accept, literal_tpl(cx, &value)));
        }
    }
    if let Some(v) = f.get("http_version") {
        d.http_version = super::request::http_version(cx, v).unwrap_or_default();
    }
    if let Some(k) = f.get("keep_alive") {
        d.keep_alive = cx.boolean(k, "keep_alive").unwrap_or(true);
        super::request::check_connection(cx, d.keep_alive, Some(k), &own, f.get("headers"));
    }
    Some(d)
}

fn tls(cx: &mut Ctx, node: &Node) -> Option<TlsSettings> {
    let f = cx.object(node, &vocab::TLS)?;
    let mut t = TlsSettings::default();
    if let Some(i) = f.get("insecure") {
        t.insecure = cx.boolean(i, "insecure")?;
    }
    let file = |cx: &mut Ctx, key: &str| -> Option<Option<PathBuf>> {
        let Some(n) = f.get(key) else { return Some(None) };
        let name = cx.string(n, key)?;
        let path = cx.source.dir().join(&name);
        if let Some(why) = crate::files::why_unreadable(&path) {
            cx.error(
                Diagnostic::new(n.span, format!("{key}: file `{}` {why}", path.display()))
                    .hint("paths are relative to the plan file"),
            );
            return None;
        }
        Some(Some(path))
    };
    t.ca = file(cx, "ca")?;
    t.client_cert = file(cx, "client_cert")?;
    t.client_key = file(cx, "client_key")?;
    if t.client_cert.is_some() != t.client_key.is_some() {
        cx.error(Diagnostic::new(node.span, "client_cert and client_key go together").hint("give both, or neither"));
        return None;
    }
    Some(t)
}

/// `defaults.proxy`: `none`, or an http:// proxy URL (rendered at load time, so it may read a secret
/// property). The URL is never quoted back, and its credentials are secrets (masked in the plan's errors
/// too, whose excerpt shows the line).
fn proxy(cx: &mut Ctx, node: &Node, secrets: &mut Vec<String>) -> Option<crate::http::ProxyChoice> {
    let text = cx.load_time_text(node, "proxy")?;
    if let Ok(url) = url::Url::parse(text.trim()) {
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        let (user, password) = (decode(url.username()), url.password().map(decode).unwrap_or_default());
        let long = |s: &String| s.chars().count() >= crate::mask::MIN_SECRET_LEN;
        secrets.extend([format!("{user}:{password}"), password].into_iter().filter(long));
    }
    match crate::http::ProxyChoice::parse(&text) {
        Ok(choice) => Some(choice),
        Err(why) => {
            cx.error(
                Diagnostic::new(node.span, format!("proxy: {why}"))
                    .expected("an http:// proxy URL, or `none`")
                    .hint("e.g. http://127.0.0.1:3128 or http://user:password@proxy.example:8080"),
            );
            None
        }
    }
}

pub(super) fn literal_tpl(cx: &mut Ctx, text: &str) -> Tpl {
    cx.templates.add(text).map(|(t, _)| t).expect("a literal always compiles")
}

fn variables(
    cx: &mut Ctx,
    node: Option<&Node>,
    names: &mut Names,
    secret: &mut Vec<(Arc<str>, Span)>,
) -> Option<Vec<(Arc<str>, Tpl)>> {
    let Some(node) = node else { return Some(Vec::new()) };
    let Some(map) = node.as_map() else {
        cx.type_error(node, "variables: a mapping of names to values");
        return None;
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let Some((v, is_secret)) = secret_wrapper(cx, v) else { continue };
        if is_secret {
            secret.push((Arc::from(k.name.as_str()), v.span));
        }
        // `names` holds the variables before this one only: it is added after.
        if let Some(t) = cx.template_node(v, "variable", names) {
            out.push((Arc::from(k.name.as_str()), t));
        }
        names.insert(k.name.clone());
    }
    Some(out)
}

fn thread_groups(
    cx: &mut Ctx,
    node: &Node,
    defaults: &Defaults,
    names: &Names,
    phase: Phase,
) -> Option<Vec<ThreadGroup>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "thread_groups: a list of thread groups");
        return None;
    };
    if items.is_empty() {
        cx.error(Diagnostic::new(node.span, "no thread groups").hint("add at least one group with threads and steps"));
        return None;
    }
    let groups: Vec<_> = items.iter().map(|g| thread_group(cx, g, defaults, names, phase)).collect();
    groups.into_iter().collect()
}

fn thread_group(cx: &mut Ctx, node: &Node, defaults: &Defaults, names: &Names, phase: Phase) -> Option<ThreadGroup> {
    let f = cx.object(node, &vocab::GROUP)?;
    let name = cx.require(&f, "name").and_then(|n| cx.string(n, "name"));
    let shape = load::load(cx, &f);
    let ramp_up = f.get("ramp_up").map(|r| cx.duration(r, "ramp_up")).unwrap_or(Some(Duration::ZERO));
    let loops = f.get("loops").map(|l| cx.count(l, "loops", bounds::LOOPS));
    let duration = f.get("duration").map(|d| cx.duration(d, "duration"));
    let think_time = f.get("think_time").map(|t| think(cx, t)).unwrap_or(Some(Think::None));
    let outside = std::mem::take(&mut cx.reads);
    let steps = cx.require(&f, "steps").and_then(|s| steps(cx, s, defaults, names));
    let reads = std::mem::replace(&mut cx.reads, outside);
    cx.group_reads.push(reads);
    let (load, threads, stages_time) = shape?;
    let bounded = duration.is_some() || stages_time.is_some();
    let loops = match (loops, bounded) {
        (None, false) => Some(Some(1)),
        (l, _) => l.map_or(Some(None), |l| l.map(Some)),
    };
    let duration = match (duration, stages_time) {
        (Some(d), Some(s)) => Some(Some(d?.min(s))),
        (Some(d), None) => Some(Some(d?)),
        (None, s) => Some(s),
    };
    Some(ThreadGroup {
        name: Arc::from(name?.as_str()),
        phase,
        load,
        threads,
        ramp_up: ramp_up?,
        loops: loops?,
        duration: duration?,
        think_time: think_time?,
        steps: steps?,
    })
}

fn map_value(entries: impl IntoIterator<Item = (String, JValue)>) -> JValue {
    JValue::from(entries.into_iter().collect::<std::collections::BTreeMap<String, JValue>>())
}
