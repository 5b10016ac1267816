//! The plan as written: a YAML tree where every node keeps its line and column.
//!
//! serde-saphyr parses the YAML and gives each node its location through `Spanned`; the tree keeps
//! the plan's shape untouched so that validation can report every problem, not only the first.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::diag::Diagnostic;
use crate::source::Span;

/// A YAML node with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the node starts.
    pub span: Span,
    /// What it holds.
    pub value: Value,
}

/// The value of a node.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `~` or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number with a fraction.
    Float(f64),
    /// Any string, quoted or plain.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, in the order written.
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// Where the key is.
    pub span: Span,
    /// The key as text.
    pub name: String,
}

impl Value {
    /// A word for the kind of value, for "expected X, found Y" messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "nothing",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "a number",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

impl Node {
    /// The entries when this node is a mapping.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The node's scalar as text (strings, numbers and booleans), for values that are read as text.
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

fn span_of<T>(s: &Spanned<T>) -> Span {
    Span::new(s.referenced.line() as u32, s.referenced.column() as u32, 1)
}

/// Parses YAML text into a node tree, or the YAML syntax error explained, at the mistake's position.
pub fn parse(text: &str) -> Result<Node, Diagnostic> {
    if text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        let msg = "the plan is empty: it needs at least `name` and `thread_groups`";
        return Err(Diagnostic::new(Span::new(1, 1, 1), msg));
    }
    let spanned: Spanned<Value> = serde_saphyr::from_str_with_options(text, options()).map_err(|e| {
        let span = e.location().map(|l| Span::new(l.line() as u32, l.column() as u32, 1)).unwrap_or_default();
        let msg = e.to_string();
        let first = msg.lines().next().unwrap_or("invalid YAML").trim();
        // serde-saphyr prefixes "error: line L column C: "; the position is shown separately.
        let first = match first.find(": ") {
            Some(i) if first.starts_with("error: line") => &first[i + 2..],
            _ => first.trim_start_matches("error: "),
        };
        super::yaml::syntax_error(text, span, first)
    })?;
    let mut root = node_from(spanned);
    let lines: Vec<&str> = text.lines().collect();
    cover_quotes(&mut root, &lines);
    Ok(root)
}

/// A quoted string's span starts at its opening quote: underline the quotes too.
fn cover_quotes(node: &mut Node, lines: &[&str]) {
    match &mut node.value {
        Value::Str(s) if !s.contains('\n') => {
            let at = lines
                .get(node.span.line.saturating_sub(1) as usize)
                .and_then(|l| l.chars().nth(node.span.col.saturating_sub(1) as usize));
            if matches!(at, Some('"') | Some('\'')) {
                node.span.len = s.chars().count() as u32 + 2;
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|n| cover_quotes(n, lines)),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, n)| cover_quotes(n, lines)),
        _ => {}
    }
}

/// YAML 1.2 scalars: `no`, `on`, `y` stay strings (the "Norway problem"), and so do numbers written with
/// leading zeros or underscores (`0701`), which in a load test are phone numbers and ids, not integers.
fn options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.strict_booleans = true;
    o.leading_zero_numbers_as_strings = true;
    o.underscored_numbers_as_strings = true;
    // Repeated keys reach the tree, so validation can say which key is given twice and where.
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    o
}

fn node_from(s: Spanned<Value>) -> Node {
    let span = span_of(&s);
    let len = match &s.value {
        Value::Str(t) if !t.contains('\n') => t.chars().count().max(1) as u32,
        Value::Int(i) => i.to_string().len() as u32,
        Value::Bool(b) => b.to_string().len() as u32,
        Value::Float(f) => f.to_string().len() as u32,
        _ => 1,
    };
    Node { span: span.with_len(len), value: s.value }
}

struct SpannedNode(Node);

impl<'de> Deserialize<'de> for SpannedNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Spanned::<Value>::deserialize(d).map(|s| SpannedNode(node_from(s)))
    }
}

struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Str(s) => Ok(KeyText(s)),
            Value::Int(i) => Ok(KeyText(i.to_string())),
            Value::Bool(b) => Ok(KeyText(b.to_string())),
            Value::Float(f) => Ok(KeyText(f.to_string())),
            Value::Null => Ok(KeyText("~".into())),
            _ => Err(de::Error::custom("a mapping key must be a plain word")),
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        i64::try_from(v).map(Value::Int).or(Ok(Value::Float(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(SpannedNode(n)) = seq.next_element()? {
            items.push(n);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<Spanned<KeyText>>()? {
            let span = span_of(&k);
            let name = k.value.0;
            let SpannedNode(v) = map.next_value()?;
            entries.push((Key { span: span.with_len(name.chars().count().max(1) as u32), name }, v));
        }
        Ok(Value::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let n = parse("name: x\nthread_groups:\n  - threads: 10\n    ramp_up: \"5s\"\n").unwrap();
        let m = n.as_map().unwrap();
        assert_eq!(m[0].0.name, "name");
        assert_eq!((m[0].0.span.line, m[0].0.span.col), (1, 1));
        assert_eq!((m[0].1.span.line, m[0].1.span.col), (1, 7));
        let Value::Seq(groups) = &m[1].1.value else { panic!() };
        let g = groups[0].as_map().unwrap();
        assert_eq!((g[0].0.span.line, g[0].0.span.col), (3, 5));
        assert_eq!(g[0].1.value, Value::Int(10));
        assert_eq!((g[1].1.span.line, g[1].1.span.col), (4, 14));
        assert_eq!(g[1].1.value, Value::Str("5s".into()));
    }

    #[test]
    fn yaml_1_1_booleans_and_leading_zeros_stay_strings() {
        let n = parse("n: no\ny: [on, off, yes, true, 0701, 42]\n").unwrap();
        let m = n.as_map().unwrap();
        assert_eq!(m[0].0.name, "n");
        assert_eq!(m[0].1.value, Value::Str("no".into()));
        let Value::Seq(items) = &m[1].1.value else { panic!() };
        let values: Vec<_> = items.iter().map(|i| i.value.clone()).collect();
        let s = |t: &str| Value::Str(t.into());
        assert_eq!(values, [s("on"), s("off"), s("yes"), Value::Bool(true), s("0701"), Value::Int(42)]);
    }

    #[test]
    fn syntax_error_has_position() {
        let d = parse("a: [1, 2\nb: c\n").unwrap_err();
        assert_eq!((d.span.line, d.span.col), (1, 4), "{d:?}");
    }
}
