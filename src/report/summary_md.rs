//! The summary and the verdicts as Markdown (`--summary-md FILE`): for GitHub's `$GITHUB_STEP_SUMMARY`, a
//! merge request comment, a chat message. GitHub Flavored Markdown tables; every text that comes from a plan
//! or a results file (labels, checks, paths) is escaped, so a label cannot open a link, a code span, a table
//! cell or an HTML tag.

use std::fmt::Write as _;

use super::compare::{worse_text, Comparison};
use super::summary::COLUMNS;
use super::thresholds::{limit_text, measured_text, Verdict};
use crate::diag::width::one_line;
use crate::metric::Metric;
use crate::sink::stats::{Summary, SummaryRow};

/// A run's (or a merge's) summary: a heading, the thresholds' verdicts, the per-label table and `notes` (one
/// line each: samples, time, results file).
pub fn run_md(title: &str, summary: &Summary, verdicts: &[Verdict], plan_file: &str, notes: &[String]) -> String {
    let mut out = format!("### planrun: {}\n\n", md(title));
    if !verdicts.is_empty() {
        let failed = verdicts.iter().filter(|v| !v.passed).count();
        if failed == 0 {
            let _ = writeln!(out, "**✅ Thresholds: all {} held**\n", verdicts.len());
        } else {
            let _ = writeln!(out, "**❌ Thresholds: {failed} of {} failed**\n", verdicts.len());
        }
        out.push_str("| Result | Label | Threshold | Measured | Limit | Plan line |\n");
        out.push_str("| --- | --- | --- | ---: | ---: | --- |\n");
        for v in verdicts {
            let t = &v.threshold;
            let mark = if v.passed { "✅ PASS" } else { "❌ **FAIL**" };
            let at = format!("{plan_file}:{}:{}", t.span.line, t.span.col);
            let _ = writeln!(
                out,
                "| {mark} | {} | {} | {} | {} | {} |",
                md(t.label.as_deref().unwrap_or("TOTAL")),
                md(&t.text),
                md(&measured_text(v)),
                md(&limit_text(t)),
                md(&at)
            );
        }
        out.push('\n');
    }
    summary_table(&mut out, summary);
    for note in notes {
        let _ = writeln!(out, "\n{}", md(note));
    }
    out
}

/// The per-label table with the columns of the text summary, TOTAL last and in bold.
fn summary_table(out: &mut String, summary: &Summary) {
    let columns: Vec<_> = COLUMNS.iter().filter(|c| c.in_table).collect();
    let headers: Vec<&str> = columns.iter().map(|c| c.header).collect();
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let aligns: Vec<&str> = (0..columns.len()).map(|i| if i == 0 { "---" } else { "---:" }).collect();
    let _ = writeln!(out, "| {} |", aligns.join(" | "));
    let row = |out: &mut String, r: &SummaryRow, bold: bool| {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                let cell = md(&(c.cell)(r));
                if bold {
                    format!("**{cell}**")
                } else {
                    cell
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    };
    for r in &summary.rows {
        row(out, r, false);
    }
    row(out, &summary.total, true);
}

/// A comparison: per label (and TOTAL) the verdict, `metric` on both sides and B/A; with `--fail-if-slower`
/// (`fail_if_slower`: the metric and PCT) whether each label held it; labels on one side only after.
pub fn compare_md(comparison: &Comparison, metric: Metric, fail_if_slower: Option<f64>) -> String {
    let mut out = String::from("### planrun compare\n\n");
    let _ = writeln!(out, "A: {}  \nB: {}\n", md(&comparison.a), md(&comparison.b));
    let regressions = fail_if_slower.map(|pct| comparison.regressions(metric, pct)).unwrap_or_default();
    let tripped: Vec<&str> = regressions.iter().filter(|r| r.counted).map(|r| r.label.as_str()).collect();
    if let Some(pct) = fail_if_slower {
        let name = metric.name();
        if tripped.is_empty() {
            let _ = writeln!(out, "**✅ No label's {name} got worse by more than {pct}%**\n");
        } else {
            let _ = writeln!(out, "**❌ {} label(s) got worse in {name} by more than {pct}%**\n", tripped.len());
        }
    }
    let check = if fail_if_slower.is_some() { " Check |" } else { "" };
    let _ = writeln!(out, "| Label | Verdict | {0} A | {0} B | B/A |{check}", metric.name());
    let _ = writeln!(out, "| --- | --- | ---: | ---: | ---: |{}", if check.is_empty() { "" } else { " --- |" });
    for row in &comparison.rows {
        let (a, b) = (row.a.figure(metric), row.b.figure(metric));
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| metric.show(v));
        let ratio = match (a, b) {
            (Some(a), Some(b)) => (a != 0.0).then(|| b / a).map_or_else(|| "-".to_string(), |r| format!("{r:.2}")),
            _ => "-".into(),
        };
        let verdict = if row.verdict == super::compare::Verdict::Slower {
            format!("**{}**", row.verdict)
        } else {
            row.verdict.to_string()
        };
        let _ = write!(out, "| {} | {verdict} | {} | {} | {} |", md(&row.label), md(&show(a)), md(&show(b)), ratio);
        if fail_if_slower.is_some() {
            match regressions.iter().find(|r| r.label == row.label) {
                Some(r) if r.counted => {
                    let _ = write!(out, " ❌ **{}** |", worse_text(r.worse_pct));
                }
                _ => out.push_str(" ✅ |"),
            }
        }
        out.push('\n');
    }
    for (side, labels) in [("A", &comparison.only_in_a), ("B", &comparison.only_in_b)] {
        if !labels.is_empty() {
            let names: Vec<String> = labels.iter().map(|l| md(l)).collect();
            let _ = writeln!(out, "\nOnly in {side}: {}", names.join(", "));
        }
    }
    out
}

/// Text in a table cell or a paragraph, as it reads: on one line, with every character that Markdown (or
/// GitHub's extensions: mentions, references, emoji, math) would read as syntax escaped with a backslash.
pub fn md(text: &str) -> String {
    let text = one_line(text);
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_ascii_punctuation() && !matches!(c, '.' | ',' | '-' | '/' | '%' | '=' | '+' | '?' | ';' | '\'' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_markdown_would_read_as_syntax() {
        assert_eq!(
            md("a|b <i>*x*</i> [l](u) `c` @me #1 $x$ :smile: &amp;"),
            r"a\|b \<i\>\*x\*\</i\> \[l\]\(u\) \`c\` \@me \#1 \$x\$ \:smile\: \&amp;"
        );
        assert_eq!(md("two\nlines"), r"two\\nlines");
        assert_eq!(md("p95 0.5ms, 12%"), "p95 0.5ms, 12%");
    }
}
