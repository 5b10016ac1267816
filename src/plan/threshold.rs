//! `thresholds:` pass/fail criteria on the run's statistics, parsed and checked at load time.

use std::sync::Arc;
use std::time::Duration;

use super::decode::Ctx;
use super::model::{Op, Threshold};
use super::node::{Node, Value};
use crate::diag::{did_you_mean, Diagnostic};
use crate::duration;
use crate::metric::{Metric, Unit};

/// Validates `thresholds:`: a mapping from a label (or `total`) to a list of checks; each check is a
/// string like `p95 < 500ms` or `{ check: "...", abort_on_fail: true, delay: 10s }`.
pub fn thresholds(cx: &mut Ctx, node: &Node) -> Option<Vec<Threshold>> {
    let Some(map) = node.as_map() else {
        cx.type_error(node, "thresholds: a mapping of labels (or `total`) to lists of checks like \"p95 < 500ms\"");
        return None;
    };
    let mut out = Vec::new();
    let mut ok = true;
    for (k, v) in map {
        let label = (k.name != "total").then(|| Arc::from(k.name.as_str()));
        let items: Vec<&Node> = match &v.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![v],
        };
        for item in items {
            match one(cx, label.clone(), item) {
                Some(t) => out.push(t),
                None => ok = false,
            }
        }
    }
    ok.then_some(out)
}

fn one(cx: &mut Ctx, label: Option<Arc<str>>, node: &Node) -> Option<Threshold> {
    let (check_node, abort_on_fail, delay) = match &node.value {
        Value::Map(_) => {
            let f = cx.object(node, &super::vocab::THRESHOLD)?;
            let check = cx.require(&f, "check")?;
            let abort = match f.get("abort_on_fail") {
                Some(a) => cx.boolean(a, "abort_on_fail")?,
                None => false,
            };
            let delay = match f.get("delay") {
                Some(d) => cx.duration(d, "delay")?,
                None => Duration::ZERO,
            };
            (check, abort, delay)
        }
        _ => (node, false, Duration::ZERO),
    };
    let text = cx.string(check_node, "threshold")?;
    match parse(&text) {
        Ok((Metric::Dropped | Metric::DroppedRate, ..)) if label.is_some() => {
            cx.error(
                Diagnostic::new(
                    check_node.span,
                    format!("threshold `{text}`: dropped iterations are the run's, not a label's"),
                )
                .hint("put it under `total`"),
            );
            None
        }
        Ok((metric, op, value)) => {
            Some(Threshold { label, metric, op, value, text, span: check_node.span, abort_on_fail, delay })
        }
        Err((msg, hint)) => {
            cx.error(
                Diagnostic::new(check_node.span, format!("threshold `{text}`: {msg}"))
                    .expected("METRIC OP VALUE, like p95 < 500ms, error_rate < 1%, throughput > 100/s")
                    .maybe_hint(hint),
            );
            None
        }
    }
}

/// Parses `p95 < 500ms` into (metric, operator, value in the metric's unit: ms, fraction, per second, count).
pub fn parse(text: &str) -> Result<(Metric, Op, f64), (String, Option<String>)> {
    let ops = [("<=", Op::Le), (">=", Op::Ge), ("==", Op::Eq), ("<", Op::Lt), (">", Op::Gt)];
    let Some((at, sym, op)) = ops.iter().find_map(|(s, op)| text.find(s).map(|i| (i, *s, *op))) else {
        return Err(("no comparison".into(), Some("use one of <, <=, >, >=, ==".into())));
    };
    let name = text[..at].trim();
    let value = text[at + sym.len()..].trim();
    let metric = match Metric::from_name(name) {
        Some(Metric::Dropped) if value.ends_with('%') => Metric::DroppedRate,
        Some(metric) => metric,
        None => {
            let hint = did_you_mean(name, Metric::names()).map(|m| format!("did you mean `{m}`?"));
            let names: Vec<&str> = Metric::names().collect();
            return Err((format!("unknown metric `{name}`"), hint.or(Some(format!("metrics: {}", names.join(", "))))));
        }
    };
    let number = match metric.unit() {
        Unit::Fraction => match value.strip_suffix('%') {
            Some(n) => n.trim().parse::<f64>().map(|n| n / 100.0).map_err(|_| ()),
            None => Err(()),
        }
        .map_err(|_| (format!("`{value}` is not a percentage"), Some("write it like 1%".into())))?,
        Unit::PerSecond => {
            let n = value.strip_suffix("/s").unwrap_or(value).trim();
            n.parse::<f64>().map_err(|_| (format!("`{value}` is not a rate"), Some("write it like 100/s".into())))?
        }
        Unit::Count => value
            .parse::<f64>()
            .map_err(|_| (format!("`{value}` is not a count"), Some("write it like 1000".into())))?,
        Unit::Ms => duration::parse(value).map(|d| d.as_secs_f64() * 1000.0).map_err(|e| {
            let hint = match e {
                duration::DurationError::TooLong(_) => e.hint(),
                _ => "times need a unit, like 500ms or 1s".into(),
            };
            (e.to_string(), Some(hint))
        })?,
    };
    Ok((metric, op, number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_metrics_operators_and_units() {
        assert_eq!(parse("p95 < 500ms"), Ok((Metric::P95, Op::Lt, 500.0)));
        assert_eq!(parse("p99<=1s"), Ok((Metric::P99, Op::Le, 1000.0)));
        assert_eq!(parse("p999 < 2s"), Ok((Metric::P999, Op::Lt, 2000.0)));
        assert_eq!(parse("average <= 1s"), Ok((Metric::Mean, Op::Le, 1000.0)));
        assert_eq!(parse("error_rate < 1%"), Ok((Metric::ErrorRate, Op::Lt, 0.01)));
        assert_eq!(parse("throughput > 100/s"), Ok((Metric::Throughput, Op::Gt, 100.0)));
        assert!(parse("p95 < 500").is_err());
        assert!(parse("p96 < 1s").unwrap_err().1.unwrap().contains("p95") || parse("p96 < 1s").is_err());
        assert!(parse("latency 5").is_err());
        assert_eq!(parse("dropped < 1%"), Ok((Metric::DroppedRate, Op::Lt, 0.01)));
        assert_eq!(parse("dropped == 0"), Ok((Metric::Dropped, Op::Eq, 0.0)));
    }
}
