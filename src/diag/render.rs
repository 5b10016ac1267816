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
        let indent: String =
            text.chars().take(col.saturating_sub(1) as usize).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        let carets = "^".repeat(d.span.len.max(1) as usize);
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
