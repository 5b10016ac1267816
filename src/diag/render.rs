//! Renders diagnostics as `file:line:col`, the offending line, carets and a hint.

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
    let _ = writeln!(out, "error: {}", d.message);
    let (line, col) = (d.span.line, d.span.col);
    if line == 0 {
        let _ = writeln!(out, "  --> {}", source.name());
    } else {
        let _ = writeln!(out, "  --> {}:{}:{}", source.name(), line, col);
    }
    if let Some(text) = source.line(line) {
        let num = line.to_string();
        let pad = " ".repeat(num.len());
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{num} | {text}");
        // Under the line as a terminal shows it: a Chinese or Japanese character takes two columns.
        let before = col.saturating_sub(1) as usize;
        let mut indent = String::new();
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
        let beyond = len.saturating_sub(text.chars().skip(before).take(len).count());
        let carets = "^".repeat((under + beyond).max(1));
        match &d.expected {
            Some(e) => {
                let _ = writeln!(out, "{pad} | {indent}{carets} expected {e}");
            }
            None => {
                let _ = writeln!(out, "{pad} | {indent}{carets}");
            }
        }
        if let Some(h) = &d.hint {
            let _ = writeln!(out, "{pad} = help: {h}");
        }
    } else {
        if let Some(e) = &d.expected {
            let _ = writeln!(out, "   expected {e}");
        }
        if let Some(h) = &d.hint {
            let _ = writeln!(out, "   = help: {h}");
        }
    }
    out.push('\n');
}
