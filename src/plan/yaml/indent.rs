//! Indentation mistakes and missing `:`s. The parser stops where the structure stops making sense, which is
//! often the line after the mistake: a line indented past the key above it continues that key's value, so
//! the parser complains only at the `:` of the next key.

use super::scan::Line;
use super::Cx;
use crate::diag::Diagnostic;
use crate::source::Span;

const NESTING: &str =
    "YAML nests by indentation: keys of one mapping start in the same column, and so do the `-` of one list";

/// The explanation of an indentation error or a missing `:`, when the parser's message is one of those.
pub(super) fn explain(cx: &Cx, raw: &str) -> Option<Diagnostic> {
    let n = cx.at.line;
    let line = cx.s.line(n)?;
    if raw.contains("mapping values are not allowed") {
        return value_with_colon(cx, n, line).or_else(|| continued(cx, n, line));
    }
    if raw.contains("did not find expected key") || raw.contains("did not find expected '-'") {
        return misaligned(cx, n, line);
    }
    if raw.contains("expected ':'") {
        return missing_colon(cx, n, cx.at.col);
    }
    if raw.contains("block sequence entries are not allowed") {
        return list_after_key(cx, n, line);
    }
    None
}

/// `key: - a` on one line: a block list starts on the line after its key.
fn list_after_key(cx: &Cx, n: u32, line: &Line) -> Option<Diagnostic> {
    let (_, key) = line.key.clone()?;
    let item = cx.from(n, cx.at.col);
    let inline = item.trim_start_matches(['-', ' ']);
    Some(
        Diagnostic::new(Span::new(n, cx.at.col, 1), format!("a list item cannot follow `{key}:` on its line"))
            .expected("the items on the lines below, or `[a, b]`")
            .hint(format!(
                "end the line at `{key}:` and put `{item}` on the next line, indented past `{key}`; or write `{key}: [{inline}]`"
            )),
    )
}

/// A list item where the mapping above expects a key: `description: a` then `- b` in the same column.
fn item_in_mapping(n: u32, dash: u32, above_n: u32, key: &str) -> Diagnostic {
    Diagnostic::new(
        Span::new(n, dash, 1),
        format!("a list item among the keys of a mapping (`{key}` on line {above_n})"),
    )
    .expected("a key")
    .hint("a list is the value of a key: write `key:` and the `- ` items indented below it")
}

/// `key: a: b` on one line: a value with `: ` in it.
fn value_with_colon(cx: &Cx, n: u32, line: &Line) -> Option<Diagnostic> {
    let value = line.value.filter(|v| *v < cx.at.col)?;
    let (_, key) = line.key.as_ref()?;
    let text = cx.from(n, value);
    let q = if text.contains('"') { '\'' } else { '"' };
    Some(
        Diagnostic::new(
            Span::new(n, value, text.chars().count().max(1) as u32),
            format!("the value of `{key}` holds `: `"),
        )
        .expected("a quoted string")
        .hint(format!("a value with `: ` in it must be quoted: `{}{q}{text}{q}`", cx.before(n, value))),
    )
}

/// A key whose line continues the value of the line above: that line has no `:` (so it is a text that runs
/// on), or this line is indented past the key above it.
fn continued(cx: &Cx, n: u32, line: &Line) -> Option<Diagnostic> {
    let (above_n, above) = cx.s.content_above(n)?;
    let Some((key_col, key)) = &above.key else {
        // `- name g` above: a text, not `key: value`; this line continues it.
        let start = above.dash.map_or(above.content?, |d| {
            let after = cx.text(above_n).chars().skip(d as usize).position(|c| c != ' ');
            d + 1 + after.unwrap_or(0) as u32
        });
        return missing_colon(cx, above_n, start);
    };
    let (col, name) = line.key.clone().or_else(|| line.content.map(|c| (c, cx.from(n, c))))?;
    if col <= *key_col {
        return None;
    }
    Some(
        Diagnostic::new(
            Span::new(n, col, name.chars().count().max(1) as u32),
            format!(
                "`{name}` is indented more than `{key}` on line {above_n}, so YAML reads it as the rest of `{key}`'s value"
            ),
        )
        .expected(format!("a key at column {key_col}, like `{key}`"))
        .hint(format!("move `{name}` to column {key_col}; {NESTING}")),
    )
}

/// A key or a list item in a column that matches nothing above it.
fn misaligned(cx: &Cx, n: u32, line: &Line) -> Option<Diagnostic> {
    let (above_n, above) = cx.s.content_above(n)?;
    if let (Some(dash), Some(above_dash)) = (line.dash, above.dash) {
        if dash != above_dash {
            return Some(
                Diagnostic::new(
                    Span::new(n, dash, 1),
                    format!(
                        "this list item's `-` is in column {dash}, the one on line {above_n} in column {above_dash}"
                    ),
                )
                .expected(format!("`-` in column {above_dash}"))
                .hint(format!("move the `-` to column {above_dash}, under the one above; {NESTING}")),
            );
        }
    }
    let (col, name) = line.key.clone().or_else(|| line.content.map(|c| (c, cx.from(n, c))))?;
    let (key_col, key) = above.key.as_ref()?;
    if let (Some(dash), None, true) = (line.dash, line.key.as_ref(), above.dash.is_none()) {
        if dash <= *key_col {
            return Some(item_in_mapping(n, dash, above_n, key));
        }
    }
    if *key_col == col {
        return None;
    }
    let mut d = Diagnostic::new(
        Span::new(n, col, name.chars().count().max(1) as u32),
        format!("`{name}` is in column {col}, but `{key}` on line {above_n} is in column {key_col}"),
    )
    .expected(format!("a key at column {key_col}, like `{key}`"));
    // A key less indented than the one above may also belong to the mapping further out, whose key is the
    // first one left of it above: name that one too, unless a list's `-` stands in between (the key would
    // then end the list item, which is seldom meant).
    let outer = (1..above_n)
        .rev()
        .filter_map(|i| cx.s.line(i).map(|l| (i, l)))
        .find(|(_, l)| l.content.is_some_and(|c| c < col));
    let dash_between = |from: u32| (from..n).filter_map(|i| cx.s.line(i)).any(|l| l.dash.is_some_and(|d| d <= col));
    let also = match outer {
        Some((i, l)) if col < *key_col && !dash_between(i) => match &l.key {
            Some((c, k)) => format!(", or to column {c} to go with `{k}` on line {i}"),
            None => String::new(),
        },
        _ => String::new(),
    };
    d = d.hint(format!("move `{name}` to column {key_col} to go with `{key}`{also}; {NESTING}"));
    Some(d)
}

/// `steps` or `threads:1` at `col` of line `n`: a key without its `:`, or without the space after it.
fn missing_colon(cx: &Cx, n: u32, col: u32) -> Option<Diagnostic> {
    let text = cx.from(n, col);
    let word: String = text.chars().take_while(|c| !c.is_whitespace()).collect();
    if word.is_empty() {
        return None;
    }
    let span = Span::new(n, col, word.chars().count() as u32);
    let before = cx.before(n, col);
    if let Some((k, v)) = word.split_once(':').filter(|(k, v)| !k.is_empty() && !v.is_empty()) {
        return Some(
            Diagnostic::new(span, format!("`{word}` has no space after its `:`"))
                .expected("`key: value`")
                .hint(format!("write `{before}{k}: {v}`")),
        );
    }
    let rest = text[word.len()..].trim_start();
    let fixed = if rest.is_empty() { format!("{before}{word}:") } else { format!("{before}{word}: {rest}") };
    Some(
        Diagnostic::new(span, format!("`{word}` has no `:` after it"))
            .expected("`key: value`, or `key:` with the value on the lines below")
            .hint(format!("write `{fixed}`")),
    )
}
