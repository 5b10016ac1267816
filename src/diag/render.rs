//! Renders diagnostics as `file:line:col`, the offending line, carets and a hint.

use std::borrow::Cow;
use std::fmt::Write;

use super::{Diagnostic, Diagnostics};
use crate::source::Source;

/// Renders every diagnostic against the source it is about, followed by a count.
pub fn render(source: &Source, diags: &Diagnostics) -> String {
    let mut out = String::new();
    for d in &diags.items {
        render_one(&mut out, source, d);
    }
    let n = diags.items.len();
    let _ = writeln!(out, "{}: {} problem{} found; nothing was sent", source.name(), n, if n == 1 { "" } else { "s" });
    out
}

fn render_one(out: &mut String, source: &Source, d: &Diagnostic) {
    let _ = writeln!(out, "error: {}", shorten_quoted(&d.message));
    let (line, col) = (d.span.line, d.span.col);
    if line == 0 {
        let _ = writeln!(out, "  --> {}", source.name());
    } else {
        let _ = writeln!(out, "  --> {}:{}:{}", source.name(), line, col);
    }
    if let Some(line_text) = source.line(line) {
        let num = line.to_string();
        let pad = " ".repeat(num.len());
        let (text, before, cut_start, cut_end) = window(line_text, col.saturating_sub(1) as usize);
        let (lead, tail) = (if cut_start { CUT } else { "" }, if cut_end { CUT } else { "" });
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{num} | {lead}{text}{tail}");
        // Under the line as a terminal shows it: a Chinese or Japanese character takes two columns.
        let mut indent = " ".repeat(lead.len());
        for c in text.chars().take(before) {
            match c {
                '\t' => indent.push('\t'),
                c => indent.extend(std::iter::repeat_n(' ', super::width::char_width(c))),
            }
        }
        let len = d.span.len.max(1) as usize;
        let under: usize = text
            .chars()
            .skip(before)
            .take(len)
            .map(|c| if c.is_control() { 1 } else { super::width::char_width(c) })
            .sum();
        // A span that goes on past the end of the line (a missing closing quote) is marked beyond it; past
        // the end of a cut line, it is not marked further.
        let beyond = if cut_end { 0 } else { len.saturating_sub(text.chars().skip(before).take(len).count()) };
        let carets = "^".repeat((under + beyond).max(1));
        match &d.expected {
            Some(e) => {
                let _ = writeln!(out, "{pad} | {indent}{carets} expected {}", shorten_quoted(e));
            }
            None => {
                let _ = writeln!(out, "{pad} | {indent}{carets}");
            }
        }
        if let Some(h) = &d.hint {
            let _ = writeln!(out, "{pad} = help: {}", shorten_quoted(h));
        }
    } else {
        if let Some(e) = &d.expected {
            let _ = writeln!(out, "   expected {}", shorten_quoted(e));
        }
        if let Some(h) = &d.hint {
            let _ = writeln!(out, "   = help: {}", shorten_quoted(h));
        }
    }
    out.push('\n');
}

/// The most of a source line an error shows, in characters: a longer line (a plan written on one line, a
/// pasted blob) is shown around the error's column, cut at either end with [`CUT`].
const SHOWN: usize = 120;
/// How many characters before the error's column a cut line keeps.
const LEAD: usize = 40;
/// Where a shown line was cut.
const CUT: &str = "...";

/// The part of `text` to show for an error `before` characters into it: that part, the characters before
/// the error within it, and whether it was cut at its start and at its end.
fn window(text: &str, before: usize) -> (&str, usize, bool, bool) {
    let n = text.chars().count();
    if n <= SHOWN {
        return (text, before, false, false);
    }
    let at = before.min(n);
    let start = at.saturating_sub(LEAD).min(n - SHOWN);
    let end = start + SHOWN;
    let byte = |i: usize| text.char_indices().nth(i).map_or(text.len(), |(b, _)| b);
    let (from, to) = (byte(start), byte(end));
    (&text[from..to], before - start, start > 0, end < n)
}

/// The most characters of a `quoted` piece of the plan a message shows: more than a line of a plan written
/// by hand, so a hint's `write ...` stays whole.
const QUOTED: usize = 200;

/// `text` with every backquoted piece longer than [`QUOTED`] characters cut to that many and [`CUT`]: a
/// message names a key or a value of the input, which may be a line long.
pub fn shorten_quoted(text: &str) -> Cow<'_, str> {
    let long = text.split('`').skip(1).step_by(2).any(|q| q.chars().nth(QUOTED).is_some());
    if !long {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut pieces = text.split('`').peekable();
    let mut quoted = false;
    while let Some(piece) = pieces.next() {
        // The last piece after an odd backquote has no closing one: not a quote.
        if quoted && pieces.peek().is_some() {
            out.push_str(&super::width::cut_chars(piece, QUOTED));
        } else {
            out.push_str(piece);
        }
        if pieces.peek().is_some() {
            out.push('`');
        }
        quoted = !quoted;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Diagnostic;
    use crate::source::Span;

    fn one(text: &str, col: u32, len: u32, message: &str) -> String {
        let source = Source::new("p.yaml", text);
        let mut diags = Diagnostics::default();
        diags.push(Diagnostic::new(Span::new(1, col, len), message).hint(message));
        render(&source, &diags)
    }

    /// The shown line and the carets under it.
    fn shown(out: &str) -> (&str, &str) {
        let lines: Vec<&str> = out.lines().collect();
        (lines[3].strip_prefix("1 | ").unwrap(), lines[4].strip_prefix("  | ").unwrap())
    }

    #[test]
    fn a_short_line_is_shown_whole() {
        let out = one("name: [x", 7, 1, "unclosed");
        assert_eq!(shown(&out), ("name: [x", "      ^"));
    }

    #[test]
    fn a_huge_line_is_shown_around_the_error_with_its_carets_in_place() {
        let line = format!("{}BAD{}", "a".repeat(3_000_000), "z".repeat(3_000_000));
        let out = one(&line, 3_000_001, 3_000_000, "wrong");
        assert!(out.len() < 1_000, "{} bytes", out.len());
        let (text, carets) = shown(&out);
        assert!(text.starts_with("...a") && text.ends_with("z..."), "{text}");
        let at = text.find("BAD").unwrap();
        assert_eq!(carets.find('^'), Some(at), "{text}\n{carets}");
        assert_eq!(carets.trim_end().len(), text.len() - CUT.len(), "marked up to the cut");
        // At the start and at the end of the line.
        let first = one(&line, 1, 1, "x");
        let (text, carets) = shown(&first);
        assert!(text.starts_with("aaa") && text.ends_with("..."));
        assert_eq!(carets, "^");
        let end = line.len() as u32 + 1;
        let last = one(&line, end, 1, "x");
        let (text, carets) = shown(&last);
        assert!(text.starts_with("...") && text.ends_with("zzz"));
        assert_eq!(carets.find('^'), Some(text.len()));
    }

    #[test]
    fn a_long_quoted_piece_of_the_plan_is_cut_in_messages_and_hints() {
        let key = "k".repeat(5_000);
        let out = one("x: 1", 1, 1, &format!("unknown key `{key}` in plan"));
        assert!(out.len() < 1_000, "{out}");
        assert!(out.contains(&format!("unknown key `{}...` in plan", "k".repeat(QUOTED))), "{out}");
        assert_eq!(shorten_quoted("unknown key `naem`"), "unknown key `naem`");
        let open = format!("a lone ` then {key}");
        assert_eq!(shorten_quoted(&open), open.as_str(), "no closing quote: not a quote");
    }
}
