//! The first pass: every variable the plan sets, so that each `${name}` can be read wherever it is used:
//! User Defined Variables (to `variables`), CSV Data Sets (to `data`), extractors, ForEach and counters.

use super::kinds::{kind, Kind};
use super::{Cx, Options, Scope};
use crate::import::functions::{escape_text, Fx, When};
use crate::import::tree::{Element, Props};
use crate::import::yaml::{Entry, MapB, Y};

pub(super) fn declare(cx: &mut Cx, plan: &Element, root: &str, options: &Options) {
    let scope = Scope { path: vec![root.to_string()], ..Scope::default() };
    // The Test Plan's own table of variables comes first, as JMeter sets it first.
    let mut udvs: Vec<(String, String)> = Vec::new();
    if let Some(args) = plan.props.element("TestPlan.user_defined_variables") {
        udvs.extend(arguments(args));
    }
    let mut csvs = Vec::new();
    walk(cx, &plan.children, &scope, &mut udvs, &mut csvs);
    let mut earlier: Vec<String> = Vec::new();
    for (name, value) in &udvs {
        let ident = cx.names.variable(name);
        if earlier.contains(&ident) {
            // Given twice: JMeter keeps the last value.
            cx.variables.retain(|e| e.key != ident);
            earlier.retain(|e| e != &ident);
        }
        cx.names.set_udv_value(name, value);
        let mut fx = Fx::new(&cx.names, &mut cx.props, When::Variables);
        fx.earlier = &earlier;
        let t = fx.template(value);
        let notes = std::mem::take(&mut fx.notes);
        let comments: Vec<String> = notes
            .into_iter()
            .map(|n| {
                cx.warn_at(&format!("{root} > User Defined Variables > {name}"), plan.line, n.clone());
                format!("planrun import: {n}")
            })
            .collect();
        let mut c = comments;
        if &ident != name {
            c.insert(0, format!("JMeter variable `{name}`"));
        }
        cx.variables.push(Entry { key: ident.clone(), value: Y::s(t), comments: c });
        earlier.push(ident);
    }
    // Data sets last: their file names may read the variables' values.
    for (path, el) in csvs {
        let scope = Scope { path, ..Scope::default() };
        csv(cx, el, &scope, options);
    }
}

/// The (name, value) pairs of an `Arguments` element.
pub(super) fn arguments(args: &Props) -> Vec<(String, String)> {
    args.elements("Arguments.arguments")
        .into_iter()
        .map(|a| (a.text("Argument.name").to_string(), a.text("Argument.value").to_string()))
        .filter(|(n, _)| !n.trim().is_empty())
        .collect()
}

fn walk<'e>(
    cx: &mut Cx,
    children: &'e [Element],
    scope: &Scope,
    udvs: &mut Vec<(String, String)>,
    csvs: &mut Vec<(Vec<String>, &'e Element)>,
) {
    for el in children.iter().filter(|c| c.enabled) {
        let p = &el.props;
        match kind(el) {
            Kind::Variables => udvs.extend(arguments(p)),
            Kind::Csv => {
                csvs.push((scope.path.clone(), el));
            }
            Kind::Counter => {
                if let Some(var) = p.opt("CounterConfig.name") {
                    let (expr, mut lost) = counter(p);
                    let per_user = p.flag("CounterConfig.per_user", false);
                    // In a thread group (or above it) JMeter sets the variable once per iteration of the group.
                    let at_iteration = scope.path.len() <= 2;
                    if at_iteration && !per_user {
                        // A shared counter's value is taken once per iteration by a `foreach` around the group's
                        // steps (see `groups::group`), so every use in the iteration reads the same value.
                        let ident = cx.names.variable(var);
                        cx.counters.push(super::IterationCounter { line: el.line, ident, expr });
                    } else {
                        if !at_iteration {
                            lost.push("it sits inside a controller, where JMeter advances it at each of that controller's iterations; here it advances once per iteration of the user".into());
                        }
                        if !per_user {
                            lost.push(format!(
                                "each use of ${{{var}}} takes the next value, where JMeter gives every use within one iteration the same one"
                            ));
                        }
                        cx.names.bind(var, expr, None);
                    }
                    if !lost.is_empty() {
                        cx.warn(scope, el, format!("counter `{var}`: {}", lost.join("; ")));
                    }
                }
            }
            Kind::Extractor => {
                for (var, all) in extracted(el) {
                    cx.names.variable(&var);
                    if all {
                        cx.lists.insert(var.clone());
                        let name = cx.names.variable(&var);
                        cx.names.bind(&format!("{var}_matchNr"), format!("({name} | length)"), None);
                    }
                }
            }
            Kind::Controller if el.short_class() == "ForeachController" => {
                if let Some(v) = p.opt("ForeachController.returnVal") {
                    cx.names.variable(v);
                }
            }
            _ => {}
        }
        let mut inner = scope.clone();
        inner.path.push(el.name.clone());
        walk(cx, &el.children, &inner, udvs, csvs);
    }
}

/// A Counter's value as a template expression, and what of it is not converted. JMeter sets the variable at
/// the start of each iteration: to `start`, then `start + incr` and so on, back to `start` past `end` (without
/// `end` it only grows); per user, or shared by every user (each iteration of any user takes the next value).
fn counter(p: &Props) -> (String, Vec<String>) {
    let name = crate::import::functions::quote(p.text("CounterConfig.name").trim());
    let per_user = p.flag("CounterConfig.per_user", false);
    let int = |prop: &str| -> Result<Option<i64>, ()> {
        let t = p.text(prop).trim();
        if t.is_empty() {
            Ok(None)
        } else {
            t.parse().map(Some).map_err(|_| ())
        }
    };
    // The k-th value, from 0: k counts the user's iterations, or the shared counter's turns.
    let (k, first) = if per_user {
        ("iteration - 1".to_string(), "iteration".to_string())
    } else {
        (format!("counter({name}) - 1"), format!("counter({name})"))
    };
    let mut lost: Vec<String> = Vec::new();
    let expr = match (int("CounterConfig.start"), int("CounterConfig.incr"), int("CounterConfig.end")) {
        (Ok(start), Ok(incr), Ok(end)) => {
            let (start, incr) = (start.unwrap_or(0), incr.unwrap_or(0));
            // How many values there are before it starts again; None when it never does.
            let count =
                end.filter(|&e| incr > 0 && e >= start).and_then(|e| (e - start).checked_div(incr)?.checked_add(1));
            if incr < 0 || (end.is_some() && count.is_none() && incr != 0) {
                lost.push(format!(
                    "its maximum {} is not converted with increment {incr}: the value never starts again",
                    end.unwrap_or_default()
                ));
            }
            let k = match count {
                Some(c) => format!("(({k}) % {c})"),
                None => format!("({k})"),
            };
            match (start, incr, count) {
                (_, 0, _) => start.to_string(),
                (1, 1, None) => first,
                (0, 1, _) => k,
                (s, 1, _) => format!("({s} + {k})"),
                (0, i, _) => format!("({k} * {i})"),
                (s, i, _) => format!("({s} + {k} * {i})"),
            }
        }
        _ => {
            lost.push(
                "its start, increment or maximum is read at run time: it counts from 1 by 1, without maximum".into(),
            );
            first
        }
    };
    let format = p.text("CounterConfig.format").trim();
    if !format.is_empty() {
        lost.push(format!("its number format `{format}` is not applied: the value is written plain"));
    }
    if per_user && p.flag("CounterConfig.reset_on_tg_iteration", false) {
        lost.push("\"reset counter on each thread group iteration\" is not converted".into());
    }
    (expr, lost)
}

/// The variables an extractor sets, and whether it sets them to every match (`-1`).
pub(super) fn extracted(el: &Element) -> Vec<(String, bool)> {
    let p = &el.props;
    let all = |m: &str| m.trim() == "-1";
    match el.short_class() {
        "RegexExtractor" => p
            .opt("RegexExtractor.refname")
            .map(|r| vec![(r.to_string(), all(p.text("RegexExtractor.match_number")))])
            .unwrap_or_default(),
        "BoundaryExtractor" => p
            .opt("BoundaryExtractor.refname")
            .map(|r| vec![(r.to_string(), all(p.text("BoundaryExtractor.match_number")))])
            .unwrap_or_default(),
        "JSONPostProcessor" => {
            let matches: Vec<&str> = p.text("JSONPostProcessor.match_numbers").split(';').collect();
            p.text("JSONPostProcessor.referenceNames")
                .split(';')
                .enumerate()
                .filter(|(_, r)| !r.trim().is_empty())
                .map(|(i, r)| (r.trim().to_string(), matches.get(i).is_some_and(|m| all(m))))
                .collect()
        }
        "JSONPathExtractor" => p.opt("VAR").map(|r| vec![(r.to_string(), false)]).unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn csv(cx: &mut Cx, el: &Element, scope: &Scope, options: &Options) {
    let p = &el.props;
    let Some(file) = p.opt("filename") else {
        cx.warn(scope, el, "no file name: not converted".into());
        return;
    };
    let delimiter = match p.text("delimiter") {
        "" => ",".to_string(),
        "\\t" | "\t" => "\\t".to_string(),
        d => d.to_string(),
    };
    let mut columns: Vec<String> =
        p.text("variableNames").split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
    let from_header = columns.is_empty();
    if from_header {
        columns = header_row(options, file, &delimiter).unwrap_or_default();
        if columns.is_empty() {
            cx.warn(
                scope,
                el,
                format!(
                    "no variable names, and `{file}` could not be read for its header row: its columns are unknown"
                ),
            );
        }
    }
    let set = cx.names.fresh(if el.name.trim().is_empty() { "csv" } else { &el.name });
    let mut cols = Vec::new();
    for c in &columns {
        let id = crate::import::names::ident(c);
        cx.names.bind(c, format!("{set}.{id}"), None);
        cols.push(id);
    }
    let mut m = MapB::default();
    let mut comments = Vec::new();
    let loaded = cx.load_value(file);
    let file_t = match loaded {
        Some(t) => t,
        None => {
            comments.push(cx.warn(
                scope,
                el,
                format!("the file name `{file}` reads a run-time variable; kept as written"),
            ));
            escape_text(file)
        }
    };
    m.put("file", Y::s(file_t));
    if delimiter != "," {
        m.put("delimiter", Y::s(delimiter));
    }
    if !from_header {
        if p.flag("ignoreFirstLine", false) {
            comments.push(cx.warn(
                scope,
                el,
                "ignoreFirstLine: the file's first row names the columns here; the names in variableNames are used in requests, so the header must match them".into(),
            ));
        } else {
            m.put(
                "columns",
                Y::Seq(
                    cols.iter()
                        .map(|c| crate::import::yaml::Item { value: Some(Y::s(c.clone())), comments: vec![] })
                        .collect(),
                ),
            );
        }
    }
    match p.text("shareMode") {
        "shareMode.thread" => {
            m.put("scope", Y::s("per_thread"));
        }
        "shareMode.group" => {
            comments.push(cx.warn(scope, el, "shared by its thread group in JMeter; shared by all groups here".into()))
        }
        _ => {}
    }
    let recycle = p.flag("recycle", true);
    let stop = p.flag("stopThread", false);
    if !recycle {
        m.put("on_eof", Y::s("stop_thread"));
        if !stop {
            comments.push(cx.warn(
                scope,
                el,
                "recycle off without stop thread: JMeter reads <EOF> at the end; here the user stops".into(),
            ));
        }
    }
    if !p.flag("quotedData", true) {
        // JMeter splits such lines at every delimiter; planrun reads quotes as CSV does. Same for plain files.
    }
    let mut c = vec![format!("CSV Data Set Config \"{}\": `{{{{ {set}.COLUMN }}}}` in requests", el.name)];
    c.extend(comments);
    cx.data.push(Entry { key: set, value: m.done(), comments: c });
}

/// The first row of a CSV file next to the .jmx, split at the delimiter.
fn header_row(options: &Options, file: &str, delimiter: &str) -> Option<Vec<String>> {
    if crate::import::functions::has_refs(file) {
        return None;
    }
    let dir = options.jmx_dir.as_ref()?;
    let path = dir.join(file);
    let f = crate::files::open_regular(&path).ok()?;
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(std::io::Read::take(f, 1 << 20)), &mut line).ok()?;
    let d = if delimiter == "\\t" { "\t" } else { delimiter };
    Some(line.trim_end_matches(['\r', '\n']).split(d).map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
}
