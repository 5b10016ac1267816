//! A small YAML writer for the converted plan: block style, comments before any entry or item, and every
//! string written so that YAML 1.2 reads back exactly that string.

use std::fmt::Write;

/// A YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Y {
    /// A string.
    Str(String),
    /// A whole number.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A mapping, in order.
    Map(Vec<Entry>),
    /// A sequence.
    Seq(Vec<Item>),
    /// A scalar written as it is: a number with a fraction, `null`.
    Raw(String),
}

/// One key of a mapping, with the comment lines written above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub value: Y,
    /// Comment lines (without `#`).
    pub comments: Vec<String>,
}

/// One item of a sequence, with the comment lines written above it; an item without a value is only
/// comments (left where an element was dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub value: Option<Y>,
    /// Comment lines (without `#`).
    pub comments: Vec<String>,
}

impl Y {
    /// A string value.
    pub fn s(s: impl Into<String>) -> Y {
        Y::Str(s.into())
    }
}

/// A mapping under construction.
#[derive(Debug, Default, Clone)]
pub struct MapB(pub Vec<Entry>);

impl MapB {
    /// Adds `key: value`.
    pub fn put(&mut self, key: impl Into<String>, value: Y) -> &mut Self {
        self.0.push(Entry { key: key.into(), value, comments: Vec::new() });
        self
    }

    /// Adds `key: value` with comment lines above it.
    pub fn put_commented(&mut self, key: impl Into<String>, value: Y, comments: Vec<String>) -> &mut Self {
        self.0.push(Entry { key: key.into(), value, comments });
        self
    }

    /// The mapping.
    pub fn done(self) -> Y {
        Y::Map(self.0)
    }
}

/// The document: `header` comment lines, then the top-level mapping.
pub fn document(header: &[String], root: &[Entry]) -> String {
    let mut out = String::new();
    for c in header {
        comment(&mut out, 0, c);
    }
    map(&mut out, root, 0);
    out
}

fn comment(out: &mut String, indent: usize, text: &str) {
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{:indent$}#", "");
        } else {
            let _ = writeln!(out, "{:indent$}# {line}", "");
        }
    }
}

fn map(out: &mut String, entries: &[Entry], indent: usize) {
    for e in entries {
        for c in &e.comments {
            comment(out, indent, c);
        }
        let _ = write!(out, "{:indent$}{}:", "", scalar(&e.key));
        value_after_key(out, &e.value, indent);
    }
}

fn value_after_key(out: &mut String, v: &Y, indent: usize) {
    match v {
        Y::Map(m) if m.is_empty() => out.push_str(" {}\n"),
        Y::Seq(s) if s.iter().all(|i| i.value.is_none()) => out.push_str(" []\n"),
        Y::Map(m) => {
            out.push('\n');
            map(out, m, indent + 2);
        }
        Y::Seq(s) => {
            out.push('\n');
            seq(out, s, indent + 2);
        }
        _ => {
            let _ = writeln!(out, " {}", inline(v));
        }
    }
}

fn seq(out: &mut String, items: &[Item], indent: usize) {
    for item in items {
        for c in &item.comments {
            comment(out, indent, c);
        }
        let Some(v) = &item.value else { continue };
        match v {
            Y::Map(m) if !m.is_empty() => {
                // The first entry goes on the dash's line; its comments go above the dash.
                for c in &m[0].comments {
                    comment(out, indent, c);
                }
                let _ = write!(out, "{:indent$}- {}:", "", scalar(&m[0].key));
                value_after_key(out, &m[0].value, indent + 2);
                map(out, &m[1..], indent + 2);
            }
            Y::Seq(s) if s.iter().any(|i| i.value.is_some()) => {
                let _ = writeln!(out, "{:indent$}-", "");
                seq(out, s, indent + 2);
            }
            Y::Map(_) => {
                let _ = writeln!(out, "{:indent$}- {{}}", "");
            }
            Y::Seq(_) => {
                let _ = writeln!(out, "{:indent$}- []", "");
            }
            _ => {
                let _ = writeln!(out, "{:indent$}- {}", "", inline(v));
            }
        }
    }
}

fn inline(v: &Y) -> String {
    match v {
        Y::Str(s) => scalar(s),
        Y::Int(i) => i.to_string(),
        Y::Bool(b) => b.to_string(),
        Y::Map(_) => "{}".into(),
        Y::Seq(_) => "[]".into(),
        Y::Raw(r) => r.clone(),
    }
}

/// `s` as a YAML scalar that reads back as the string `s`: plain when nothing in it means anything to YAML,
/// else double-quoted with JSON's escapes (which YAML's double quotes share).
pub fn scalar(s: &str) -> String {
    if plain_ok(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
    }
}

fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    if !(first.is_ascii_alphanumeric() || matches!(first, '_' | '/' | '.' | '$')) {
        return false;
    }
    if s.ends_with(' ') || s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || " _-./()+,=;@%&?*'$:<>!^|~".contains(c);
    if !s.chars().all(allowed) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(lower.as_str(), "true" | "false" | "null" | "~" | "yes" | "no" | "on" | "off" | "y" | "n") {
        return false;
    }
    // Anything a YAML reader (1.2, or 1.1) might take for a number, a date or a sexagesimal stays quoted.
    !number_like(&lower)
}

fn number_like(s: &str) -> bool {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^[-+]?(\.?[0-9][0-9_]*(\.[0-9_]*)?(e[-+]?[0-9]+)?|0x[0-9a-f_]+|0o[0-7_]+|0b[01_]+|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?|\.inf|\.nan|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*)$",
        )
        .expect("a valid regex")
    });
    RE.is_match(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_as_written() {
        for s in [
            "plain",
            "/path?a=1&b=2",
            "{{ props.base_url }}",
            "true",
            "10",
            "0701",
            "1.5",
            "a: b",
            "# x",
            "- x",
            "x #y",
            "",
            " lead",
            "trail ",
            "multi\nline",
            "quote\"s",
            "back\\slash",
            "tab\there",
            "*alias",
            "&anchor",
            "!tag",
            "%dir",
            "@at",
            "`tick",
            "[x]",
            "{x}",
            "é",
            "null",
            "~",
            "2024-01-01",
            "12:30",
            "0x1F",
            ".inf",
            "5s",
            "1e3",
            "1_000",
            "+1",
            "-1.5",
            "1.",
            ".5",
        ] {
            let doc = format!("k: {}\n", scalar(s));
            let back: std::collections::BTreeMap<String, String> =
                serde_saphyr::from_str(&doc).unwrap_or_else(|e| panic!("{doc}: {e}"));
            assert_eq!(back["k"], s, "{doc}");
        }
    }

    #[test]
    fn nested_blocks_with_comments() {
        let mut step = MapB::default();
        step.put("name", Y::s("home"))
            .put("request", MapB(vec![Entry { key: "url".into(), value: Y::s("/"), comments: vec![] }]).done());
        let steps = Y::Seq(vec![
            Item { value: None, comments: vec!["dropped".into()] },
            Item { value: Some(step.done()), comments: vec!["a step".into()] },
        ]);
        let doc = document(&["head".into()], &[Entry { key: "steps".into(), value: steps, comments: vec![] }]);
        assert_eq!(doc, "# head\nsteps:\n  # dropped\n  # a step\n  - name: home\n    request:\n      url: /\n");
    }
}
