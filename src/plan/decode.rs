//! Reading the node tree into typed values while collecting every problem found.

use std::collections::HashSet;
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use super::node::{Key, Node, Value};
use crate::diag::{did_you_mean, Diagnostic, Diagnostics};
use crate::duration;
use crate::source::{Source, Span};
use crate::template::{Scope, Templates, Tpl};

/// The state of one validation: the file, the templates compiled so far, every problem found.
pub struct Ctx<'s> {
    /// The plan's source, for positions inside templates.
    pub source: &'s Source,
    /// Problems found.
    pub diags: Diagnostics,
    /// The run's template environment.
    pub templates: Templates,
    /// The scope for values rendered at load time (properties, counts, durations).
    pub load_scope: Arc<Scope>,
    /// Each data set's columns, so a template that reads `set.column` is checked against them; `props` holds
    /// the property names (declared or given with -D).
    pub columns: std::collections::HashMap<String, Vec<Arc<str>>>,
    /// How many `once` blocks have been read: the last one's id.
    pub once_blocks: usize,
    /// The names the templates read so far, each with where it is first read (a thread group's steps start
    /// with none).
    pub reads: std::collections::HashMap<String, Span>,
    /// The names each thread group's steps read, in the order the groups were read (see `reads`).
    pub group_reads: Vec<std::collections::HashMap<String, Span>>,
}

/// The entries of a mapping, already checked against the keys allowed there.
pub struct Fields<'n> {
    /// The mapping node.
    pub node: &'n Node,
    entries: &'n [(Key, Node)],
    what: &'static str,
    /// The keys allowed here: a key the parser asks for is one of them, or the parser and the vocabulary
    /// disagree (checked in debug builds, so every test that reads a plan checks it).
    allowed: Vec<&'static str>,
}

impl<'n> Fields<'n> {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        debug_assert!(
            self.allowed.contains(&key),
            "the parser reads `{key}`, which the vocabulary does not list in {}",
            self.what
        );
        self.entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v)
    }

    /// The key node of `key`, if present.
    pub fn key(&self, key: &str) -> Option<&'n Key> {
        debug_assert!(
            self.allowed.contains(&key),
            "the parser reads `{key}`, which the vocabulary does not list in {}",
            self.what
        );
        self.entries.iter().find(|(k, _)| k.name == key).map(|(k, _)| k)
    }
}

/// Names a template may read.
pub type Names = HashSet<String>;

impl<'s> Ctx<'s> {
    /// Records a problem.
    pub fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Checks that `node` is a mapping whose keys are all in `allowed`, reporting unknown and repeated keys.
    pub fn fields<'n>(&mut self, node: &'n Node, what: &'static str, allowed: &[&'static str]) -> Option<Fields<'n>> {
        let Value::Map(entries) = &node.value else {
            self.type_error(node, &format!("{what}: a mapping"));
            return None;
        };
        // A key given twice is reported for every mapping by `duplicates::check`.
        for (k, _) in entries {
            if !allowed.contains(&k.name.as_str()) {
                let hint = did_you_mean(&k.name, allowed.iter().copied()).map(|s| format!("did you mean `{s}`?"));
                self.error(
                    Diagnostic::new(k.span, format!("unknown key `{}` in {what}", k.name))
                        .expected(format!("one of: {}", allowed.join(", ")))
                        .maybe_hint(hint),
                );
            }
        }
        Some(Fields { node, entries, what, allowed: allowed.to_vec() })
    }

    /// Checks that `node` is a mapping with only the keys of `object` (see [`Ctx::fields`]).
    pub fn object<'n>(&mut self, node: &'n Node, object: &'static super::vocab::Object) -> Option<Fields<'n>> {
        self.fields(node, object.what, &object.names())
    }

    /// The value of a required key, or a "missing key" problem at the mapping.
    pub fn require<'n>(&mut self, f: &Fields<'n>, key: &str) -> Option<&'n Node> {
        let v = f.get(key);
        if v.is_none() {
            self.error(
                Diagnostic::new(f.node.span, format!("missing required key `{key}` in {}", f.what))
                    .hint(format!("add `{key}:` to this {}", f.what)),
            );
        }
        v
    }

    /// Reports a value of the wrong type.
    pub fn type_error(&mut self, node: &Node, expected: &str) {
        self.error(
            Diagnostic::new(node.span, format!("wrong type: found {}", node.value.kind()))
                .expected(expected.to_string()),
        );
    }

    /// Refuses template syntax in `text`, a string planrun uses as written (a key, a compared value): it would
    /// be sent or compared with its braces, silently. False when refused.
    pub fn literal(&mut self, span: crate::source::Span, text: &str, what: &str, hint: &str) -> bool {
        if !(text.contains("{{") || text.contains("{%")) {
            return true;
        }
        self.error(
            Diagnostic::new(
                span,
                format!("{what} is not a template: `{text}` would be used as written, braces and all"),
            )
            .hint(hint.to_string()),
        );
        false
    }

    /// A string used as written, never rendered: template syntax in it is refused (see [`Ctx::literal`]).
    pub fn literal_string(&mut self, node: &Node, what: &str, hint: &str) -> Option<String> {
        let s = self.string(node, what)?;
        self.literal(node.span, &s, what, hint).then_some(s)
    }

    /// A plain string (numbers and booleans are taken as their text).
    pub fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match node.scalar_text() {
            Some(s) => Some(s),
            None => {
                self.type_error(node, &format!("{what}: a string"));
                None
            }
        }
    }

    /// A boolean: `true`/`false`, or a string rendered at load time to one of them (`"{{ props.cookies }}"`,
    /// so `-D cookies=false` works).
    pub fn boolean(&mut self, node: &Node, what: &str) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            Value::Str(_) => {
                let text = self.load_time_text(node, what)?;
                match text.trim() {
                    "true" | "True" => Some(true),
                    "false" | "False" => Some(false),
                    other => {
                        self.error(
                            Diagnostic::new(node.span, format!("{what} must be true or false, got `{other}`"))
                                .expected("true or false"),
                        );
                        None
                    }
                }
            }
            _ => {
                self.type_error(node, &format!("{what}: true or false"));
                None
            }
        }
    }

    /// Renders a value written as a string template at load time (props, env); plain scalars pass through.
    pub fn load_time_text(&mut self, node: &Node, what: &str) -> Option<String> {
        let text = self.string(node, what)?;
        let tpl = self.template(node, &text, &load_time_names())?;
        match self.templates.render(&tpl, &self.load_scope) {
            Ok(s) => Some(s),
            Err(e) => {
                self.error(Diagnostic::new(node.span, format!("cannot render {what}: {}", e.message)));
                None
            }
        }
    }

    /// A whole number within `range`, written as a number or a template rendered at load time.
    pub fn count(&mut self, node: &Node, what: &str, range: RangeInclusive<u64>) -> Option<u64> {
        let (min, max) = (*range.start(), *range.end());
        let (n, shown): (i128, String) = match &node.value {
            Value::Int(i) => (i128::from(*i), i.to_string()),
            Value::Str(_) => {
                let text = self.load_time_text(node, what)?;
                let t = text.trim();
                match whole_number(t) {
                    Some(n) => (n, t.to_string()),
                    None => {
                        self.error(
                            Diagnostic::new(node.span, format!("{what} must be a whole number, got `{text}`"))
                                .expected("a whole number"),
                        );
                        return None;
                    }
                }
            }
            // YAML integers beyond i64 arrive as floats: out of range, not fractions.
            Value::Float(f) if f.fract() == 0.0 && f.abs() >= 9.0e18 => match *f > 0.0 {
                true => (i128::MAX, format!("a number above {}", i64::MAX)),
                false => (i128::MIN, format!("a number below {}", i64::MIN)),
            },
            Value::Float(f) => {
                self.error(
                    Diagnostic::new(node.span, format!("{what} must be a whole number, got {f}"))
                        .expected("a whole number"),
                );
                return None;
            }
            _ => {
                self.type_error(node, &format!("{what}: a whole number"));
                return None;
            }
        };
        if n < i128::from(min) {
            let msg = format!("{what} must be at least {min}, got {shown}");
            self.error(Diagnostic::new(node.span, msg).expected(format!("a whole number >= {min}")));
            return None;
        }
        if n > i128::from(max) {
            let msg = format!("{what} must be at most {max}, got {shown}");
            self.error(Diagnostic::new(node.span, msg).expected(format!("a whole number from {min} to {max}")));
            return None;
        }
        u64::try_from(n).ok()
    }

    /// A duration like `250ms` or `10s`, possibly a template rendered at load time.
    pub fn duration(&mut self, node: &Node, what: &str) -> Option<Duration> {
        match &node.value {
            Value::Int(n) => {
                self.error(
                    Diagnostic::new(node.span, format!("{what}: a bare number is not a duration"))
                        .expected("a duration with a unit, like 250ms, 10s, 5m")
                        .hint(format!("write `{n}s` for seconds or `{n}ms` for milliseconds")),
                );
                None
            }
            Value::Float(n) => {
                self.error(
                    Diagnostic::new(node.span, format!("{what}: a bare number is not a duration"))
                        .expected("a duration with a unit, like 250ms, 10s, 5m")
                        .hint(format!("write `{n}s` for seconds")),
                );
                None
            }
            Value::Str(_) => {
                let text = self.load_time_text(node, what)?;
                match duration::parse(&text) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        self.error(
                            Diagnostic::new(node.span, format!("{what}: {e}"))
                                .expected("a duration like 250ms, 10s, 5m")
                                .hint(e.hint()),
                        );
                        None
                    }
                }
            }
            _ => {
                self.type_error(node, &format!("{what}: a duration like 10s"));
                None
            }
        }
    }

    /// A regular expression, compiled now.
    pub fn regex(&mut self, node: &Node, what: &str) -> Option<Regex> {
        let text = self.string(node, what)?;
        match Regex::new(&text) {
            Ok(r) => Some(r),
            Err(e) => {
                let first =
                    e.to_string().lines().last().unwrap_or("invalid").trim().trim_start_matches("error: ").to_string();
                self.error(Diagnostic::new(node.span, format!("{what}: invalid regular expression: {first}")));
                None
            }
        }
    }

    /// A template read from a scalar node, checked for syntax and for the names it reads.
    pub fn template_node(&mut self, node: &Node, what: &str, names: &Names) -> Option<Tpl> {
        let text = self.string(node, what)?;
        self.template(node, &text, names)
    }

    /// Compiles `text` (the value of `node`) and checks every name and filter it uses.
    pub fn template(&mut self, node: &Node, text: &str, names: &Names) -> Option<Tpl> {
        match self.templates.add(text) {
            Ok((tpl, used)) => {
                let mut ok = true;
                let mut used: Vec<String> = used.into_iter().collect();
                used.sort();
                for name in used {
                    if names.contains(&name) {
                        if !self.reads.contains_key(&name) {
                            let at = text.find(name.as_str()).unwrap_or(0);
                            let span = self.span_in(node, text, at).with_len(name.chars().count() as u32);
                            self.reads.insert(name, span);
                        }
                    } else {
                        ok = false;
                        let hint = self.unknown_name_hint(&name, names);
                        let at = text.find(name.as_str()).unwrap_or(0);
                        let span = self.span_in(node, text, at).with_len(name.chars().count() as u32);
                        self.error(Diagnostic::new(span, format!("unknown name `{name}` in template")).hint(hint));
                    }
                }
                ok &= self.check_columns(node, text, &tpl);
                for (at, filter) in filters_used(text) {
                    if !self.templates.has_filter(&filter) {
                        ok = false;
                        let known = self.templates.filter_names();
                        let hint = did_you_mean(&filter, known.iter().map(String::as_str))
                            .map(|s| format!("did you mean `{s}`?"))
                            .unwrap_or_else(|| {
                                let own = self.templates.own_filter_names().join(", ");
                                format!("planrun's own filters: {own}; the others are minijinja's built-in ones")
                            });
                        let span = self.span_in(node, text, at).with_len(filter.chars().count() as u32);
                        self.error(Diagnostic::new(span, format!("unknown filter `{filter}` in template")).hint(hint));
                    }
                }
                ok.then_some(tpl)
            }
            Err(e) => {
                let at = e.range.as_ref().map(|r| r.start).unwrap_or(0);
                let span = self.span_in(node, text, at);
                let hint = "templates use minijinja syntax: {{ name }}, {{ f(x) }}, {{ x | filter }}";
                self.error(Diagnostic::new(span, e.message.clone()).hint(hint));
                None
            }
        }
    }

    /// Checks every `set.column` a template reads against the data set's columns; false on a miss.
    fn check_columns(&mut self, node: &Node, text: &str, tpl: &Tpl) -> bool {
        if self.columns.is_empty() {
            return true;
        }
        let mut ok = true;
        for path in self.templates.attributes_read(tpl) {
            let mut parts = path.split('.');
            let (Some(set), Some(column)) = (parts.next(), parts.next()) else { continue };
            let Some(columns) = self.columns.get(set) else { continue };
            if columns.iter().any(|c| &**c == column) {
                continue;
            }
            ok = false;
            let written = format!("{set}.{column}");
            let at = text.find(&written).unwrap_or(0);
            let span = self.span_in(node, text, at).with_len(written.chars().count() as u32);
            let near = did_you_mean(column, columns.iter().map(|c| &**c));
            let listed = columns.iter().map(|c| &**c).collect::<Vec<_>>().join(", ");
            let diagnostic = if set == "props" {
                let hint = match near {
                    Some(near) => format!("did you mean `props.{near}`?"),
                    None => format!("declare it under `properties:` with a default, or give `-D {column}=VALUE`"),
                };
                let message = format!("property `{column}` is neither declared under `properties:` nor given with -D");
                Diagnostic::new(span, message).hint(hint)
            } else {
                let hint = match near {
                    Some(near) => format!("did you mean `{set}.{near}`?"),
                    None => format!("its columns: {listed}"),
                };
                Diagnostic::new(span, format!("data set `{set}` has no column `{column}`")).hint(hint)
            };
            self.error(diagnostic);
        }
        ok
    }

    /// "Did you mean" for a name a template cannot read, or the names it can. Past [`MANY_NAMES`] (a plan
    /// with thousands of variables) neither is worked out: it would cost as much per problem as there are
    /// names, and a plan with as many problems would take quadratic time to report them.
    fn unknown_name_hint(&self, name: &str, names: &Names) -> String {
        if names.len() > MANY_NAMES {
            return format!("it is none of the {} names that can be read here", names.len());
        }
        let functions = self.templates.function_names();
        let known = names.iter().chain(&functions).map(String::as_str);
        did_you_mean(name, known).map(|s| format!("did you mean `{s}`?")).unwrap_or_else(|| names_hint(names))
    }

    /// The position of byte `at` of a scalar's text, counting the opening quote of a quoted scalar.
    fn span_in(&self, node: &Node, text: &str, at: usize) -> Span {
        let before = &text[..at.min(text.len())];
        if before.contains('\n') || node.span.line == 0 {
            return node.span.with_len(1);
        }
        let quoted = self
            .source
            .line(node.span.line)
            .and_then(|l| l.chars().nth(node.span.col.saturating_sub(1) as usize))
            .is_some_and(|c| c == '"' || c == '\'');
        node.span.shifted(before.chars().count() as u32 + u32::from(quoted)).with_len(1)
    }
}

/// A whole number written as text (`42`, `+7`, `-1`); digits too many for any range read as the farthest
/// number of their sign, so they are reported as out of range, not as "not a number".
fn whole_number(t: &str) -> Option<i128> {
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(t.parse::<i128>().unwrap_or(if t.starts_with('-') { i128::MIN } else { i128::MAX }))
}

/// Names readable at load time.
pub fn load_time_names() -> Names {
    ["props", "stub"].iter().map(|s| s.to_string()).collect()
}

/// Above this many names, an unknown name's hint neither suggests nor lists them.
const MANY_NAMES: usize = 1000;

/// The names a template can read, listed in a hint, the first 30 in order when there are more.
fn names_hint(names: &Names) -> String {
    const SHOWN: usize = 30;
    let mut v: Vec<&str> = names.iter().map(String::as_str).collect();
    let more = v.len().saturating_sub(SHOWN);
    if more > 0 {
        v.select_nth_unstable(SHOWN);
        v.truncate(SHOWN);
    }
    v.sort_unstable();
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("names available here: {}{more}", v.join(", "))
}

/// The filters a template applies (`| name`), with their byte offsets, outside string literals.
fn filters_used(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut in_block = false;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if !in_block {
            if c == b'{' && matches!(bytes.get(i + 1), Some(b'{') | Some(b'%')) {
                in_block = true;
                i += 2;
                continue;
            }
        } else if let Some(q) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else if c == b'"' || c == b'\'' {
            quote = Some(c);
        } else if (c == b'}' || c == b'%') && bytes.get(i + 1) == Some(&b'}') {
            in_block = false;
        } else if c == b'|' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] == b' ' {
                j += 1;
            }
            let start = j;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j > start {
                out.push((start, text[start..j].to_string()));
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::filters_used;
    use crate::template::Templates;

    #[test]
    fn filters_are_the_environments() {
        let t = Templates::new();
        let names = t.filter_names();
        for name in ["upper", "default", "urlencode", "tojson", "base64", "sha256"] {
            assert!(names.iter().any(|n| n == name), "`{name}` is not among {names:?}");
            assert!(t.has_filter(name), "`{name}` is not a filter");
        }
        assert!(!t.has_filter("uper"));
        assert_eq!(t.own_filter_names(), ["base64", "sha256"]);
    }

    #[test]
    fn finds_filters_outside_strings() {
        let f = filters_used("a|b {{ x | upper | urlencod }} {{ 'p|q' }}");
        let names: Vec<_> = f.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["upper", "urlencod"]);
    }
}
