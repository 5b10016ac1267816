//! JUnit XML (`--junit FILE`): the verdicts of a run, a merge or a comparison as test results, for the CI
//! systems that show those (GitLab's test reports, Jenkins' JUnit plugin, GitHub through a reporting action).
//! One `<testsuite>` in a `<testsuites>`, in the shape Jenkins' xUnit plugin's `junit-10.xsd` describes; each
//! threshold (or each compared label) is a `<testcase>`, a failed one with a `<failure>` that says what was
//! measured, the limit and where the threshold is written; the summary table is the suite's `<system-out>`.
//!
//! Written by hand: a few elements and one escaping function are less than an XML writer's API.

use std::fmt::Write as _;

use super::compare::{worse_text, Comparison, Regression};
use super::thresholds::{limit_text, measured_text, Verdict};
use crate::metric::Metric;

/// A test suite: what one command judged.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    /// The suite's name: the plan's name, or what was compared.
    pub name: String,
    /// How long what was judged took, in seconds (the run's wall time, the merged rows' span).
    pub time_s: f64,
    /// When it was judged: ISO 8601 in UTC, without a zone (`2026-12-03T11:47:23`), as Ant writes it.
    pub timestamp: String,
    /// Facts about it (`plan`, `results`, `seed`), as `<property>` elements.
    pub properties: Vec<(String, String)>,
    /// The test cases, in the order they are written.
    pub cases: Vec<Case>,
    /// The suite's `<system-out>`: the summary as planrun prints it.
    pub system_out: String,
}

/// One test case: a threshold, or a compared label.
#[derive(Debug, Clone, Default)]
pub struct Case {
    /// Its class: the plan's name, or `compare`.
    pub classname: String,
    /// Its name: the label and the check.
    pub name: String,
    /// Why it failed, when it did.
    pub failure: Option<Failure>,
    /// Why it was not judged, when it was not.
    pub skipped: Option<String>,
    /// What it measured, for a case that held or was skipped too.
    pub system_out: String,
}

/// A failed case: a one-line message and the whole story.
#[derive(Debug, Clone)]
pub struct Failure {
    /// One line: what was measured against what was allowed.
    pub message: String,
    /// The failure's kind: `threshold` or `slower`.
    pub kind: &'static str,
    /// The lines under it: the check, the measured value, the limit, where it is written.
    pub text: String,
}

impl Suite {
    /// How many cases failed.
    pub fn failures(&self) -> usize {
        self.cases.iter().filter(|c| c.failure.is_some()).count()
    }

    /// How many cases were skipped.
    pub fn skipped(&self) -> usize {
        self.cases.iter().filter(|c| c.skipped.is_some()).count()
    }

    /// The XML document.
    pub fn to_xml(&self) -> String {
        let (tests, failures, skipped) = (self.cases.len(), self.failures(), self.skipped());
        let time = format!("{:.3}", self.time_s.max(0.0));
        let name = attr(&self.name);
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{time}\">"
        );
        let _ = writeln!(
            out,
            "  <testsuite name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
             skipped=\"{skipped}\" time=\"{time}\" timestamp=\"{}\">",
            attr(&self.timestamp)
        );
        if !self.properties.is_empty() {
            out.push_str("    <properties>\n");
            for (k, v) in &self.properties {
                let _ = writeln!(out, "      <property name=\"{}\" value=\"{}\"/>", attr(k), attr(v));
            }
            out.push_str("    </properties>\n");
        }
        for case in &self.cases {
            case.write(&mut out);
        }
        let _ = writeln!(out, "    <system-out>{}</system-out>", text(&self.system_out));
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}

impl Case {
    fn write(&self, out: &mut String) {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">",
            attr(&self.classname),
            attr(&self.name)
        );
        if let Some(f) = &self.failure {
            let _ = write!(
                out,
                "\n      <failure message=\"{}\" type=\"{}\">{}</failure>",
                attr(&f.message),
                f.kind,
                text(&f.text)
            );
        }
        if let Some(why) = &self.skipped {
            let _ = write!(out, "\n      <skipped message=\"{}\"/>", attr(why));
        }
        if !self.system_out.is_empty() {
            let _ = write!(out, "\n      <system-out>{}</system-out>", text(&self.system_out));
        }
        if self.failure.is_some() || self.skipped.is_some() || !self.system_out.is_empty() {
            out.push_str("\n    ");
        }
        out.push_str("</testcase>\n");
    }
}

/// One case per threshold, in the plan's order: `LABEL: check`, failed when it did not hold, with the
/// measured value, the limit and the plan line (`plan_file:line:col`).
pub fn threshold_cases(verdicts: &[Verdict], classname: &str, plan_file: &str) -> Vec<Case> {
    verdicts
        .iter()
        .map(|v| {
            let t = &v.threshold;
            let label = t.label.as_deref().unwrap_or("TOTAL");
            let name = format!("{label}: {}", t.text);
            let (measured, limit) = (measured_text(v), limit_text(t));
            let at = format!("{plan_file}:{}:{}", t.span.line, t.span.col);
            let facts = format!("measured: {measured}\nlimit: {} {limit}\nplan: {at}\n", t.metric.name());
            let failure = (!v.passed).then(|| Failure {
                message: format!("{label}: {} measured {measured}, limit {limit} ({at})", t.metric.name()),
                kind: "threshold",
                text: format!("threshold `{}` of {label} failed\n{facts}", t.text),
            });
            let system_out = if v.passed { facts } else { String::new() };
            Case { classname: classname.to_string(), name, failure, skipped: None, system_out }
        })
        .collect()
}

/// One case per label both sides have (and TOTAL), with the test's verdict as its output; with
/// `--fail-if-slower PCT` (`fail_if_slower`: the metric and PCT) each is that check, failed where it trips.
/// A label on one side only is a skipped case.
pub fn compare_cases(comparison: &Comparison, fail_if_slower: Option<(Metric, f64)>) -> Vec<Case> {
    let regressions: Vec<Regression> =
        fail_if_slower.map(|(metric, pct)| comparison.regressions(metric, pct)).unwrap_or_default();
    let check = fail_if_slower.map(|(metric, pct)| format!("{} at most {pct}% worse", metric.name()));
    let name = |label: &str| match &check {
        Some(check) => format!("{label}: {check}"),
        None => label.to_string(),
    };
    let mut cases: Vec<Case> = comparison
        .rows
        .iter()
        .map(|row| {
            let verdict = format!("{}: {} ({})\n", row.label, row.verdict, row.reason);
            let mut system_out = verdict.clone();
            let regression = regressions.iter().find(|r| r.label == row.label);
            let failure = match (regression, fail_if_slower) {
                (Some(r), Some((metric, pct))) if r.counted => Some(Failure {
                    message: format!(
                        "{}: {} got {} ({} -> {}), more than the {pct}% allowed",
                        r.label,
                        metric.name(),
                        worse_text(r.worse_pct),
                        r.shown.0,
                        r.shown.1
                    ),
                    kind: "slower",
                    text: verdict,
                }),
                (Some(r), Some((metric, pct))) => {
                    let _ = writeln!(
                        system_out,
                        "{} read {} ({} -> {}), but at {} as little as {}: not more than the {pct}% allowed",
                        metric.name(),
                        worse_text(r.worse_pct),
                        r.shown.0,
                        r.shown.1,
                        r.resolution,
                        worse_text(r.least_worse_pct.max(0.0))
                    );
                    None
                }
                _ => None,
            };
            if failure.is_some() {
                system_out.clear();
            }
            Case { classname: "compare".into(), name: name(&row.label), failure, skipped: None, system_out }
        })
        .collect();
    let one_side = [("A", &comparison.only_in_a), ("B", &comparison.only_in_b)];
    for (side, labels) in one_side {
        for label in labels {
            cases.push(Case {
                classname: "compare".into(),
                name: name(label),
                skipped: Some(format!("only in {side}: not compared")),
                ..Case::default()
            });
        }
    }
    cases
}

/// Text for an attribute value: markup escaped, and line ends and tabs as character references so that the
/// attribute's normalization keeps them.
fn attr(s: &str) -> String {
    escape(s, true)
}

/// Text for element content.
fn text(s: &str) -> String {
    escape(s, false)
}

/// Escapes XML's markup characters; a character XML 1.0 cannot hold at all (a control character other than
/// tab and line ends, U+FFFE, U+FFFF) becomes U+FFFD.
fn escape(s: &str, in_attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\n' if in_attr => out.push_str("&#10;"),
            '\t' if in_attr => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_characters_xml_cannot_hold() {
        assert_eq!(attr("a<b & \"c\" 'd'>\n\t\r"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;&#9;&#13;");
        assert_eq!(text("x\ny\tz\u{1}\u{ffff}]]>"), "x\ny\tz\u{fffd}\u{fffd}]]&gt;");
    }

    #[test]
    fn counts_failures_and_skips() {
        let failed = Case {
            failure: Some(Failure { message: "m".into(), kind: "threshold", text: "t".into() }),
            ..Case::default()
        };
        let skipped = Case { skipped: Some("why".into()), ..Case::default() };
        let suite = Suite { cases: vec![failed, skipped, Case::default()], ..Suite::default() };
        let xml = suite.to_xml();
        assert!(xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""), "{xml}");
        assert!(!xml.contains("<properties>"), "{xml}");
    }
}
