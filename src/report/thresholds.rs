//! Thresholds judged against a summary: which held, which failed, with the measured values.

use std::fmt::Write as _;

use super::dropped::DroppedIterations;
use crate::metric::Metric;
use crate::plan::model::{Op, Threshold};
use crate::sink::stats::Summary;

/// One threshold's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The threshold judged, with its text and plan line.
    pub threshold: Threshold,
    /// The measured value in the threshold's unit; `None` when its label has no samples.
    pub measured: Option<f64>,
    /// True when it held.
    pub passed: bool,
}

/// Judges every threshold; a `dropped` one is not measured (no run counted the drops).
pub fn evaluate(thresholds: &[Threshold], summary: &Summary) -> Vec<Verdict> {
    evaluate_run(thresholds, summary, None)
}

/// Judges every threshold, `dropped` ones against the run's dropped iterations.
pub fn evaluate_run(thresholds: &[Threshold], summary: &Summary, dropped: Option<&DroppedIterations>) -> Vec<Verdict> {
    thresholds
        .iter()
        .map(|t| {
            let row = match &t.label {
                None => Some(&summary.total),
                Some(l) => summary.rows.iter().find(|r| r.label == l.as_ref()),
            };
            let measured = match t.metric {
                Metric::Dropped => dropped.map(|d| d.dropped as f64),
                Metric::DroppedRate => dropped.map(DroppedIterations::rate),
                _ => row.filter(|r| r.samples > 0).and_then(|r| r.figure(t.metric)),
            };
            let passed = measured.is_some_and(|m| compare(m, t.op, t.value));
            Verdict { threshold: t.clone(), measured, passed }
        })
        .collect()
}

fn compare(measured: f64, op: Op, bound: f64) -> bool {
    match op {
        Op::Lt => measured < bound,
        Op::Le => measured <= bound,
        Op::Gt => measured > bound,
        Op::Ge => measured >= bound,
        Op::Eq => (measured - bound).abs() < 1e-9,
    }
}

/// What a verdict measured, as the summary shows it (`12.50ms`, `0.31%`, `no samples`).
pub fn measured_text(v: &Verdict) -> String {
    match v.measured {
        Some(m) => v.threshold.metric.show(m),
        None if matches!(v.threshold.metric, Metric::Dropped | Metric::DroppedRate) => "not counted here".into(),
        None => "no samples".into(),
    }
}

/// What a threshold allows, in its metric's unit as the summary shows it (`< 500.00ms`, `>= 100.0/s`).
pub fn limit_text(t: &Threshold) -> String {
    let op = match t.op {
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
        Op::Eq => "==",
    };
    format!("{op} {}", t.metric.show(t.value))
}

/// One line per threshold: PASS or FAIL, the label, the check, what was measured, and where it is written.
pub fn render(verdicts: &[Verdict], plan_file: &str) -> String {
    let mut out = String::from("Thresholds:\n");
    for v in verdicts {
        let t = &v.threshold;
        let label = t.label.as_deref().unwrap_or("TOTAL");
        let measured = measured_text(v);
        let mark = if v.passed { "PASS" } else { "FAIL" };
        let _ = writeln!(
            out,
            "  {mark}  {label}: {}  (measured {measured})  {plan_file}:{}:{}",
            t.text, t.span.line, t.span.col
        );
    }
    out
}
