//! `data:`: CSV data sets, checked at load time (file, columns, ragged rows) without keeping their rows.
//!
//! Each file is read once, streaming, by [`crate::csv_scan::scan`]: the rows are counted and every one is
//! checked to have as many fields as the header (or `columns:`), so a bad file is refused before anything is
//! sent, with the file's own line number. What the scan found about where the rows are is kept in the
//! [`DataSet`] for the run. Only regular files are read: a FIFO, a device or a directory is refused before
//! anything is read from it.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use super::decode::Ctx;
use super::model::{DataMode, DataScope, DataSet, OnEof, ThreadGroup};
use super::node::{Node, Value};
use super::vocab;
use crate::csv_scan::{self, Scan, ScanError};
use crate::diag::{did_you_mean, Diagnostic};
use crate::files::{NotAFile, MAX_ROW_TEXT};
use crate::source::Span;

/// The values of the words of `mode:`, `scope:` and `on_eof:` (vocab's `MODES`, `SCOPES`, `ON_EOF`), in order.
const MODES: [DataMode; 3] = [DataMode::Sequential, DataMode::Random, DataMode::Unique];
const SCOPES: [DataScope; 2] = [DataScope::Shared, DataScope::PerThread];
const ON_EOF: [OnEof; 3] = [OnEof::Recycle, OnEof::StopThread, OnEof::StopRun];

/// Validates the `data:` mapping: every set's keys and values, and its file, scanned once.
///
/// A set with problems (each one recorded) is still returned under its name, with defaults for the rest,
/// so that the templates reading it are not reported as using an unknown name too; the plan is refused
/// anyway, since a problem was recorded. `None` only when `data:` is not a mapping.
pub fn validate(cx: &mut Ctx, node: &Node) -> Option<Vec<DataSet>> {
    let Some(entries) = node.as_map() else {
        cx.type_error(node, "data: a mapping of data set names to { file, ... }");
        return None;
    };
    let mut sets = Vec::new();
    let mut seen = HashSet::new();
    for (key, value) in entries {
        let named = set_name(cx, &key.name, key.span);
        // Reported by `duplicates::check`; the second is still checked, for its own problems.
        if !seen.insert(key.name.as_str()) {
            data_set(cx, &key.name, value);
            continue;
        }
        match data_set(cx, &key.name, value) {
            Some(set) => sets.push(set),
            None if named => sets.push(placeholder(&key.name)),
            None => {}
        }
    }
    Some(sets)
}

/// A set that failed validation, kept for its name only.
fn placeholder(name: &str) -> DataSet {
    DataSet {
        name: Arc::from(name),
        file: Default::default(),
        delimiter: b',',
        columns: Vec::new(),
        has_header: true,
        mode: DataMode::Sequential,
        scope: DataScope::Shared,
        on_eof: OnEof::Recycle,
        rows: 0,
        len: 0,
        first_row: 0,
        starts: None,
        groups: Vec::new(),
        read_by: Vec::new(),
    }
}

/// Checks that a set's name can be read in a template and means nothing else there.
fn set_name(cx: &mut Ctx, name: &str, span: Span) -> bool {
    let mut chars = name.chars();
    let word = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !word {
        let fixed: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        cx.error(
            Diagnostic::new(span, format!("data set name `{name}` cannot be read in templates"))
                .hint(format!("use letters, digits and `_`, starting with a letter, e.g. `{fixed}`")),
        );
        return false;
    }
    if vocab::RESERVED.contains(&name) || cx.templates.function_names().iter().any(|f| f == name) {
        cx.error(
            Diagnostic::new(span, format!("data set name `{name}` is already a name in templates"))
                .hint("give the data set another name"),
        );
        return false;
    }
    true
}

/// One data set: its keys, their combinations, and its file.
fn data_set(cx: &mut Ctx, name: &str, node: &Node) -> Option<DataSet> {
    let f = cx.object(node, &vocab::DATA_SET)?;
    let file_node = cx.require(&f, "file");
    let written = file_node.and_then(|n| cx.load_time_text(n, "file"));
    let delimiter = f.get("delimiter").map_or(Some(b','), |d| delimiter(cx, d));
    let columns = f.get("columns").map(|c| columns(cx, c));
    let mode = f.get("mode").map_or(Some(DataMode::Sequential), |m| choice(cx, m, "mode", vocab::MODES, MODES));
    let scope = f.get("scope").map_or(Some(DataScope::Shared), |s| choice(cx, s, "scope", vocab::SCOPES, SCOPES));
    let on_eof = f.get("on_eof").map(|e| choice(cx, e, "on_eof", vocab::ON_EOF, ON_EOF));
    let groups = f.get("groups").map_or(Some(Vec::new()), |g| group_names(cx, g));
    // The file is checked whatever the other keys hold, so one pass reports the problems of both.
    let columns = columns.map_or(Some(None), |c| c.map(Some));
    let scanned = match (file_node, &written, delimiter, &columns) {
        (Some(at), Some(written), Some(delimiter), Some(columns)) => {
            let path = cx.source.dir().join(written);
            let random = mode == Some(DataMode::Random);
            check_file(cx, at, written, &path, delimiter, columns.as_deref(), random).map(|scan| (path, scan))
        }
        _ => None,
    };
    let (mode, scope, groups) = (mode?, scope?, groups?);
    let on_eof = match on_eof {
        Some(e) => e?,
        None if mode == DataMode::Unique => OnEof::StopThread,
        None => OnEof::Recycle,
    };
    if !combination(cx, &f, mode, scope, on_eof) {
        return None;
    }
    let ((path, scan), delimiter, columns) = (scanned?, delimiter?, columns?);
    let has_header = columns.is_none();
    let columns = match columns {
        Some(c) => c.into_iter().map(|(name, _)| name).collect(),
        None => scan.header.map(|(names, _)| names.iter().map(|n| Arc::from(n.as_str())).collect()).unwrap_or_default(),
    };
    // Unique rows are handed out once across the run, so they have one cursor whatever `scope` says.
    let scope = if mode == DataMode::Unique { DataScope::Shared } else { scope };
    Some(DataSet {
        name: Arc::from(name),
        file: path,
        delimiter,
        columns,
        has_header,
        mode,
        scope,
        on_eof,
        rows: scan.rows,
        len: scan.len,
        first_row: scan.first_row,
        starts: scan.starts,
        groups: groups.into_iter().map(|(name, _)| name).collect(),
        // Known once the groups are read: see `readers`.
        read_by: Vec::new(),
    })
}

/// Refuses the settings that contradict each other, at the value that was written; true when none do.
fn combination(cx: &mut Ctx, f: &super::decode::Fields, mode: DataMode, scope: DataScope, on_eof: OnEof) -> bool {
    let mut ok = true;
    if mode == DataMode::Unique && scope == DataScope::PerThread {
        if let Some(s) = f.get("scope") {
            cx.error(Diagnostic::new(s.span, "`scope: per_thread` cannot be used with `mode: unique`").hint(
                "unique hands each row out once in the whole run, so its cursor is always shared; \
                         remove `scope`, or use `mode: sequential` to give each thread the whole file",
            ));
            ok = false;
        }
    }
    if mode == DataMode::Unique && on_eof == OnEof::Recycle {
        if let Some(e) = f.get("on_eof") {
            cx.error(
                Diagnostic::new(e.span, "`on_eof: recycle` cannot be used with `mode: unique`")
                    .expected("stop_thread (the default) or stop_run")
                    .hint("unique hands each row out once; use `mode: sequential` to go round the file again"),
            );
            ok = false;
        }
    }
    if mode == DataMode::Random && on_eof != OnEof::Recycle {
        if let Some(e) = f.get("on_eof") {
            cx.error(Diagnostic::new(e.span, "`on_eof` has no effect with `mode: random`").hint(
                "random draws rows with repetition and never runs out; remove `on_eof`, \
                         or use `mode: unique` to hand each row out once",
            ));
            ok = false;
        }
    }
    ok
}

/// One of a fixed set of words, with "did you mean" and the list of allowed ones.
/// `words` and `values` have one length, so a word added to the vocabulary without its value does not build.
fn choice<T: Copy, const N: usize>(
    cx: &mut Ctx,
    node: &Node,
    what: &str,
    words: [&str; N],
    values: [T; N],
) -> Option<T> {
    let text = cx.string(node, what)?;
    if let Some((_, v)) = words.iter().zip(values).find(|(word, _)| **word == text) {
        return Some(v);
    }
    let hint = did_you_mean(&text, words.iter().copied()).map(|s| format!("did you mean `{s}`?"));
    cx.error(
        Diagnostic::new(node.span, format!("unknown {what} `{text}`"))
            .expected(format!("one of: {}", words.join(", ")))
            .maybe_hint(hint),
    );
    None
}

/// One ASCII character; `\t` written out (two characters) is a tab too, as YAML plain scalars cannot hold one.
fn delimiter(cx: &mut Ctx, node: &Node) -> Option<u8> {
    let text = cx.string(node, "delimiter")?;
    let byte = match text.as_bytes() {
        [b] if b.is_ascii() => Some(*b),
        b"\\t" => Some(b'\t'),
        _ => None,
    };
    match byte {
        Some(b'"' | b'\n' | b'\r') | None => {
            let shown = text.escape_debug();
            cx.error(
                Diagnostic::new(node.span, format!("delimiter must be one ASCII character, got `{shown}`"))
                    .expected("one character, like \",\", \";\", \"|\" or \"\\t\"")
                    .hint("the delimiter separates fields; it cannot be a quote or a line break"),
            );
            None
        }
        Some(b) => Some(b),
    }
}

/// `columns:`: a list of distinct names, each with where it is written.
fn columns(cx: &mut Ctx, node: &Node) -> Option<Vec<(Arc<str>, Span)>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "columns: a list of column names, e.g. [phone, name]");
        return None;
    };
    if items.is_empty() {
        cx.error(Diagnostic::new(node.span, "columns: the list is empty").hint("name every column of the file"));
        return None;
    }
    let mut out: Vec<(Arc<str>, Span)> = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(name) = cx.string(item, "column name") else {
            ok = false;
            continue;
        };
        if name.trim().is_empty() {
            cx.error(Diagnostic::new(item.span, "a column name is empty"));
            ok = false;
        } else if out.iter().any(|(n, _)| **n == *name) {
            cx.error(
                Diagnostic::new(item.span, format!("column `{name}` is named twice"))
                    .hint("each column needs its own name"),
            );
            ok = false;
        }
        out.push((Arc::from(name.as_str()), item.span));
    }
    ok.then_some(out)
}

/// `groups:`: a list of distinct thread group names, each with where it is written (checked against the
/// groups once they are read, in [`readers`]).
fn group_names(cx: &mut Ctx, node: &Node) -> Option<Vec<(Arc<str>, Span)>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "groups: a list of thread group names, e.g. [buyers]");
        return None;
    };
    if items.is_empty() {
        cx.error(
            Diagnostic::new(node.span, "groups: the list is empty")
                .hint("name the groups that read the set, or remove `groups` to let any group read it"),
        );
        return None;
    }
    let mut out: Vec<(Arc<str>, Span)> = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(name) = cx.string(item, "group name") else {
            ok = false;
            continue;
        };
        if out.iter().any(|(n, _)| **n == *name) {
            cx.error(Diagnostic::new(item.span, format!("group `{name}` is named twice")));
            ok = false;
        }
        out.push((Arc::from(name.as_str()), item.span));
    }
    ok.then_some(out)
}

/// Which groups read each set, decided from the names their steps' templates read (`cx.group_reads`, one
/// map a group, in the order of `groups`): a group reads a set when a template of one of its steps names it,
/// whether or not that step runs in a given iteration. Checks `groups:` too: every name it lists is a group's,
/// and a group it does not list does not read the set.
pub fn readers(cx: &mut Ctx, node: &Node, sets: &mut [DataSet], groups: &[ThreadGroup]) {
    let reads = std::mem::take(&mut cx.group_reads);
    if reads.len() != groups.len() {
        return;
    }
    for set in sets.iter_mut() {
        set.read_by = reads.iter().enumerate().filter(|(_, r)| r.contains_key(&*set.name)).map(|(i, _)| i).collect();
        if set.groups.is_empty() {
            continue;
        }
        let written = node
            .as_map()
            .and_then(|m| m.iter().find(|(k, _)| *k.name == *set.name))
            .and_then(|(_, v)| v.as_map()?.iter().find(|(k, _)| k.name == "groups").map(|(_, g)| g));
        let spans: Vec<Span> = match written.map(|g| &g.value) {
            Some(Value::Seq(items)) => items.iter().map(|i| i.span).collect(),
            _ => Vec::new(),
        };
        for (i, name) in set.groups.iter().enumerate() {
            if groups.iter().any(|g| g.name == *name) {
                continue;
            }
            let span = spans.get(i).copied().or(written.map(|g| g.span)).unwrap_or_default();
            let hint = match did_you_mean(name, groups.iter().map(|g| &*g.name)) {
                Some(near) => format!("did you mean `{near}`?"),
                None => {
                    let all: Vec<&str> = groups.iter().map(|g| &*g.name).collect();
                    format!("the plan's groups: {}", all.join(", "))
                }
            };
            cx.error(
                Diagnostic::new(
                    span,
                    format!("data set `{}` names group `{name}`, which the plan does not have", set.name),
                )
                .hint(hint),
            );
        }
        for &g in &set.read_by {
            let group = &groups[g];
            if set.groups.contains(&group.name) {
                continue;
            }
            let listed: Vec<&str> = set.groups.iter().map(|n| &**n).collect();
            let at = reads[g].get(&*set.name).copied().unwrap_or_default();
            cx.error(
                Diagnostic::new(
                    at,
                    format!(
                        "group `{}` reads data set `{}`, which is for {} only",
                        group.name,
                        set.name,
                        listed.join(", ")
                    ),
                )
                .hint(format!("add `{}` to the set's `groups:`, or read another set in this group", group.name)),
            );
        }
    }
}

/// Scans the file once (header, row count, field counts, UTF-8, and with `random` every row's offset);
/// problems point at `file:`.
fn check_file(
    cx: &mut Ctx,
    at: &Node,
    written: &str,
    path: &Path,
    delimiter: u8,
    columns: Option<&[(Arc<str>, Span)]>,
    random: bool,
) -> Option<Scan> {
    let names: Option<Vec<Arc<str>>> = columns.map(|c| c.iter().map(|(n, _)| n.clone()).collect());
    let scan = match csv_scan::scan(path, delimiter, names.as_deref(), random) {
        Ok(scan) => scan,
        Err(ScanError::Io(e)) if e.get_ref().is_some_and(|inner| inner.is::<NotAFile>()) => {
            let what = e.get_ref().and_then(|inner| inner.downcast_ref::<NotAFile>()).map_or("not a file", |n| n.what);
            cx.error(
                Diagnostic::new(at.span, format!("data file `{}` is {what}", path.display()))
                    .expected("a regular file")
                    .hint("a pipe or a device could block forever or never end; copy the data to a file"),
            );
            return None;
        }
        Err(e) => {
            cx.error(
                Diagnostic::new(at.span, format!("cannot read data file `{}`: {e}", path.display()))
                    .hint("paths are relative to the plan file"),
            );
            return None;
        }
    };
    let mut ok = true;
    // A header with a problem still gives the field count, so the rows were checked too.
    if let Some((names, line)) = &scan.header {
        ok &= header_names(cx, at, written, names, *line);
    }
    if let Some(line) = scan.repeats_columns {
        cx.error(Diagnostic::new(at.span, format!("{written}:{line}: the first row repeats `columns:`")).hint(
            "with `columns:` the file has no header row: remove the header row, \
                         or remove `columns:` to read the names from it",
        ));
        ok = false;
    }
    if let Some(line) = scan.too_long {
        cx.error(
            Diagnostic::new(at.span, format!("{written}:{line}: row is longer than the limit of {MAX_ROW_TEXT}"))
                .hint("a row (its line, or the lines of a quoted field) takes at most 1 MiB of the file"),
        );
        return None;
    }
    if let Some(line) = scan.bad_utf8 {
        cx.error(
            Diagnostic::new(at.span, format!("{written}:{line}: row is not valid UTF-8"))
                .hint("save the file as UTF-8"),
        );
        ok = false;
    }
    if let Some((line, found)) = scan.first_ragged {
        let want = scan.fields.unwrap_or_default();
        let names: Vec<&str> = match (&scan.header, columns) {
            (_, Some(c)) => c.iter().map(|(n, _)| &**n).collect(),
            (Some((h, _)), None) => h.iter().map(String::as_str).collect(),
            (None, None) => Vec::new(),
        };
        let names = if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) };
        let source = if columns.is_some() { "`columns:` names" } else { "the header row names" };
        let more = match scan.ragged - 1 {
            0 => String::new(),
            1 => "; 1 more row has the wrong number of fields too".to_string(),
            n => format!("; {n} more rows have the wrong number of fields too"),
        };
        let quote = if found > want { "; a field that contains the delimiter must be quoted" } else { "" };
        cx.error(
            Diagnostic::new(at.span, format!("{written}:{line}: row has {found} fields, expected {want}"))
                .hint(format!("{source} {want} columns{names}{more}{quote}")),
        );
        ok = false;
    }
    if scan.rows == 0 {
        let (message, hint) = match scan.header {
            None => (format!("data file `{written}` is empty"), "add a header row and at least one row of data"),
            Some(_) => (format!("data file `{written}` has a header row but no data"), "add at least one row of data"),
        };
        let hint = if columns.is_some() { "add at least one row of data" } else { hint };
        cx.error(Diagnostic::new(at.span, message).hint(hint));
        ok = false;
    }
    ok.then_some(scan)
}

/// Checks the header row's names (trimmed: templates read them as `set.name`): distinct and non-empty.
fn header_names(cx: &mut Ctx, at: &Node, written: &str, names: &[String], line: u64) -> bool {
    let mut ok = true;
    if let Some(i) = names.iter().position(String::is_empty) {
        cx.error(
            Diagnostic::new(at.span, format!("{written}:{line}: column {} of the header row has no name", i + 1))
                .hint("name every column in the header row, or give `columns:` when the file has no header"),
        );
        ok = false;
    }
    let mut seen = HashSet::new();
    if let Some(dup) = names.iter().find(|n| !n.is_empty() && !seen.insert(n.as_str())) {
        cx.error(
            Diagnostic::new(at.span, format!("{written}:{line}: column `{dup}` appears twice in the header row"))
                .hint("each column needs its own name"),
        );
        ok = false;
    }
    ok
}
