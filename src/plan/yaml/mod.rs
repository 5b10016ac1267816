//! YAML syntax errors in planrun's words: the parser's message (`mapping values are not allowed in this
//! context`) becomes what is wrong, at the line and column of the mistake (often the line above the one the
//! parser stopped at), what was expected there, and how to fix it.

mod indent;
mod scan;

use crate::diag::Diagnostic;
use crate::source::Span;
use scan::{scan, Scan};

/// The diagnostic for the YAML syntax error `raw` that the parser reported at `at` in `text`.
pub fn syntax_error(text: &str, at: Span, raw: &str) -> Diagnostic {
    let s = scan(text);
    let lines: Vec<&str> = text.lines().collect();
    let cx = Cx { s: &s, lines: &lines, at };
    let raw_lower = raw.to_ascii_lowercase();
    let found = unquoted_template(&cx)
        .or_else(|| {
            raw_lower
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "tab" || w == "tabs")
                .then(|| tab(&cx))
                .flatten()
        })
        .or_else(|| quote(&cx, &raw_lower))
        .or_else(|| bracket(&cx, &raw_lower))
        .or_else(|| indent::explain(&cx, &raw_lower));
    found.unwrap_or_else(|| Diagnostic::new(at, format!("invalid YAML: {raw}")))
}

/// What every explanation reads.
struct Cx<'a> {
    s: &'a Scan,
    lines: &'a [&'a str],
    /// Where the parser stopped.
    at: Span,
}

impl Cx<'_> {
    /// The text of line `n` (1-based).
    fn text(&self, n: u32) -> &str {
        n.checked_sub(1).and_then(|i| self.lines.get(i as usize)).copied().unwrap_or("")
    }

    /// Line `n` from column `col` on, without a trailing comment and spaces.
    fn from(&self, n: u32, col: u32) -> String {
        let rest: String = self.text(n).chars().skip(col.saturating_sub(1) as usize).collect();
        let rest = match rest.find(" #") {
            Some(i) => &rest[..i],
            None => rest.as_str(),
        };
        rest.trim_end().to_string()
    }

    /// Line `n` without its indentation, trailing comment and spaces: what a hint shows.
    fn shown(&self, n: u32) -> String {
        let first = self.text(n).chars().position(|c| c != ' ' && c != '\t').unwrap_or(0);
        self.from(n, first as u32 + 1)
    }

    /// Line `n` up to column `col`, without its indentation.
    fn before(&self, n: u32, col: u32) -> String {
        let text: String = self.text(n).chars().take(col.saturating_sub(1) as usize).collect();
        text.trim_start().to_string()
    }
}

/// `key: {{ expr }}`: YAML reads `{` as the start of a mapping, so the value must be quoted. The first one
/// in the file is the one the parser stopped at (it never gets past one).
fn unquoted_template(cx: &Cx) -> Option<Diagnostic> {
    let &(line, col, in_flow) =
        cx.s.templates.iter().find(|&&(l, c, _)| (l, c) <= (cx.at.line, cx.at.col) || cx.at.line == 0)?;
    let rest = cx.from(line, col);
    // The value runs to the end of the line, or inside `{ }` and `[ ]` to the next `,` or bracket after
    // the template's `}}`.
    let value = match (in_flow, rest.find("}}")) {
        (true, Some(end)) => {
            let tail = &rest[end + 2..];
            let stop = tail.find([',', '}', ']']).unwrap_or(tail.len());
            format!("{}{}", &rest[..end + 2], tail[..stop].trim_end())
        }
        _ => rest.clone(),
    };
    let q = if value.contains('"') { '\'' } else { '"' };
    let fixed = format!("{}{q}{value}{q}{}", cx.before(line, col), &rest[value.len()..]);
    Some(
        Diagnostic::new(
            Span::new(line, col, 2),
            "a value that starts with `{{` must be quoted: YAML reads `{` as the start of a mapping",
        )
        .expected("a quoted string")
        .hint(format!("write `{fixed}`")),
    )
}

/// A tab in the indentation: the first one from the line the parser stopped at (it often stops at the end
/// of the line before), else the first in the file.
fn tab(cx: &Cx) -> Option<Diagnostic> {
    let indent_tab = |n: u32| {
        let text = cx.text(n);
        let indent = text.chars().take_while(|c| *c == ' ' || *c == '\t').collect::<String>();
        indent.chars().position(|c| c == '\t').map(|p| p as u32 + 1)
    };
    let total = cx.lines.len() as u32;
    let line = (cx.at.line.max(1)..=total).chain(1..cx.at.line.max(1)).find(|n| indent_tab(*n).is_some())?;
    let col = indent_tab(line)?;
    Some(
        Diagnostic::new(Span::new(line, col, 1), "a tab in the indentation").expected("spaces").hint(
            "YAML indents with spaces only: replace the tab with spaces (most editors can insert spaces for Tab)",
        ),
    )
}

/// A quoted string left open, or text after its closing quote.
fn quote(cx: &Cx, raw: &str) -> Option<Diagnostic> {
    if raw.contains("unknown escape") {
        return escape(cx);
    }
    if raw.contains("unclosed quote") || raw.contains("multiline quoted scalar") {
        // The string the parser stopped in, else the first one never closed.
        let inside = |q: &&scan::Quoted| q.open <= (cx.at.line, cx.at.col) && q.close.is_none_or(|c| c.0 > q.open.0);
        let q = cx.s.quoted.iter().rev().find(inside).or_else(|| cx.s.quoted.iter().find(|q| q.close.is_none()))?;
        return Some(open_quote(cx, q.open, q.quote, q.close));
    }
    if !raw.contains("trailing content after") {
        return None;
    }
    // The string that closed last before the parser stopped.
    let q = cx.s.quoted.iter().rev().find(|q| q.close.is_some_and(|c| c <= (cx.at.line, cx.at.col)))?;
    let close = q.close?;
    if close.0 > q.open.0 {
        return Some(open_quote(cx, q.open, q.quote, Some(close)));
    }
    let inside = cx.from(q.open.0, q.open.1 + 1);
    Some(
        Diagnostic::new(Span::new(cx.at.line, cx.at.col, 1), "text after the closing quote")
            .expected("the end of the value")
            .hint(format!(
                "put the whole value inside the quotes: `{}{}{}{}`",
                cx.before(q.open.0, q.open.1),
                q.quote,
                inside.replacen(q.quote, "", 1),
                q.quote
            )),
    )
}

/// `"id=(\d+)"`: a backslash in double quotes starts an escape, and `\d` is none. Regular expressions hit this.
fn escape(cx: &Cx) -> Option<Diagnostic> {
    let (line, col) = (cx.at.line, cx.at.col);
    let rest: Vec<char> = cx.text(line).chars().skip(col as usize).collect();
    let mut i = 0;
    let mut bad = None;
    while i + 1 < rest.len() && rest[i] != '"' {
        if rest[i] == '\\' {
            if !"0abt\tnvfre \"/\\N_LPxuU".contains(rest[i + 1]) {
                bad = Some(i);
                break;
            }
            i += 1;
        }
        i += 1;
    }
    let at = col + 1 + bad? as u32;
    let seq: String = rest[bad?..bad? + 2].iter().collect();
    // The string's text, and what follows its closing quote on the line.
    let close = cx.s.quoted.iter().find(|q| q.open == (line, col)).and_then(|q| q.close).filter(|c| c.0 == line);
    let end = close.map_or(rest.len(), |c| (c.1 - col - 1) as usize);
    let inner: String = rest[..end.min(rest.len())].iter().collect();
    let after = close.map(|c| cx.from(line, c.1 + 1)).unwrap_or_default();
    let single = format!("'{}'{after}", inner.replace("\\\\", "\\").replace('\'', "''"));
    Some(
        Diagnostic::new(Span::new(line, at, 2), format!("`{seq}` is not an escape in a double-quoted string"))
            .expected("an escape such as \\n, \\t, \\\" or \\\\")
            .hint(format!(
                "in single quotes a backslash is just a backslash: `{}{single}`; or double it in double quotes",
                cx.before(line, col)
            )),
    )
}

/// A quoted string not closed on its line: it runs on to the next quote of its kind (`close`), or the end.
fn open_quote(cx: &Cx, open: (u32, u32), quote: char, close: Option<(u32, u32)>) -> Diagnostic {
    let message = match close {
        Some((line, _)) => format!(
            "the quoted string that starts here is not closed on its line: YAML reads on to the {quote} on line {line}"
        ),
        None => "the quoted string that starts here is never closed".to_string(),
    };
    Diagnostic::new(Span::new(open.0, open.1, 1), message)
        .expected(format!("a closing {quote} on this line"))
        .hint(format!("write `{}{quote}`", cx.shown(open.0)))
}

/// A `[` or `{` never closed (the parser stops somewhere below it), or closed by the other kind of bracket.
fn bracket(cx: &Cx, raw: &str) -> Option<Diagnostic> {
    let flow_error = raw.contains("flow mapping")
        || raw.contains("flow sequence")
        || raw.contains("bracket")
        || raw.contains("placement of ':'")
        || raw.contains("flow construct")
        || raw.contains("only valid inside a block");
    if !flow_error {
        return None;
    }
    if let (true, Some(((line, col, open), (close_line, close_col)))) = (raw.contains("mismatched"), cx.s.mismatched) {
        let (close, wrong) = if open == '[' { (']', '}') } else { ('}', ']') };
        return Some(
            Diagnostic::new(
                Span::new(line, col, 1),
                format!("this `{open}` is closed by the `{wrong}` at line {close_line}, column {close_col}"),
            )
            .expected(format!("a `{close}` to close it first"))
            .hint("close the inner bracket before the outer one: `[ { a: 1 } ]`, `{ a: [1, 2] }`"),
        );
    }
    if let Some(&(line, col, open)) = cx.s.unclosed.first() {
        let close = if open == '[' { ']' } else { '}' };
        let what = if open == '[' { "list" } else { "mapping" };
        let spaced = cx.text(line).chars().nth(col as usize) == Some(' ');
        return Some(
            Diagnostic::new(Span::new(line, col, 1), format!("this `{open}` is never closed"))
                .expected(format!("a `{close}` to end the {what}"))
                .hint(format!("write `{}{}{close}`", cx.shown(line), if spaced { " " } else { "" })),
        );
    }
    if raw.contains("expected ',' or '}'") || raw.contains("expected ',' or ']'") {
        let close = if raw.contains("'}'") { '}' } else { ']' };
        return Some(
            Diagnostic::new(cx.at, format!("expected `,` or `{close}` here"))
                .expected(format!("`,` between entries, or `{close}`"))
                .hint("separate the entries of `{ ... }` and `[ ... ]` with commas: `{ url: /a, method: GET }`"),
        );
    }
    None
}
