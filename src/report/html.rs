//! The HTML report and the HTML comparison: one self-contained file each.
//!
//! No script runs and nothing is fetched: the style is inline, the charts are inline SVG ([`super::svg`]), and
//! the charts' data is embedded as JSON in `<script type="application/json" id="data">` for other tools (the
//! browser does not execute it). Opening the file offline shows everything.
//!
//! The pages are minijinja templates (report/templates/*.html) with HTML auto-escaping: every label, message
//! and file name is escaped there, once. The charts come from [`super::svg`], which escapes the text it draws,
//! and go in marked safe.

use std::fmt::Write as _;

use minijinja::{context, Environment, Value};
use serde::Serialize;

use super::analysis::ReportData;
use super::compare::{table_lines, Comparison, LabelComparison, Verdict};
use super::summary::COLUMNS;
use super::svg::{bar_chart, line_chart, number, one_line, BarChart, LineChart, Series, PALETTE};
use super::timeline::{LabelSeries, MAX_LABEL_TIMELINES};
use crate::sink::stats::SummaryRow;

/// Distribution charts drawn at most; the data of every label is embedded all the same.
pub const MAX_CHARTED_LABELS: usize = 60;

/// The report of one results file.
pub fn report_html(d: &ReportData) -> String {
    let s = &d.summary;
    let transactions: u64 = s.labels.iter().map(|r| r.transactions).sum();
    let span = s.start_ms.zip(s.end_ms).map(|(start, end)| {
        context! { from => utc(start), to => utc(end), duration => duration(end.saturating_sub(start) as f64 / 1000.0) }
    });
    let meta = context! {
        source => &d.source, format => &d.source_format, samples => s.total.samples, failed => s.total.errors,
        span, transactions,
    };
    let summary = context! {
        headers => COLUMNS.iter().map(|c| c.report_header()).collect::<Vec<_>>(),
        rows => s.labels.iter().chain([&s.total]).map(|r| COLUMNS.iter().map(|c| (c.cell)(r)).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
    };
    let page = context! {
        meta, summary,
        distribution => distribution(d),
        timeline => timeline(d),
        labels => labels_over_time(d),
        codes => codes(&s.labels, &s.total),
        failures => failures(d),
    };
    render("report.html", "planrun report", page, d)
}

/// The distribution charts, and how many labels are not drawn.
fn distribution(d: &ReportData) -> Value {
    let charts: Vec<Value> = d
        .distributions
        .iter()
        .take(MAX_CHARTED_LABELS)
        .enumerate()
        .map(|(i, dist)| {
            let title = format!("{} ({} samples)", one_line(&dist.label, 50), dist.samples);
            svg(bar_chart(&BarChart {
                title: &title,
                y_label: "samples",
                lo_ms: dist.lo_ms,
                bin_ms: dist.bin_ms,
                series: vec![Series {
                    name: &dist.label,
                    color: PALETTE[i % PALETTE.len()],
                    values: dist.counts.iter().map(|&c| Some(c as f64)).collect(),
                }],
                overflow: vec![dist.overflow as f64],
            }))
        })
        .collect();
    context! { charts, not_drawn => d.distributions.len().saturating_sub(MAX_CHARTED_LABELS) }
}

/// The run's percentiles, throughput and errors, and threads over time.
fn timeline(d: &ReportData) -> Value {
    let t = &d.timeline;
    let interval_s = t.interval_ms as f64 / 1000.0;
    let per_s = |v: &u64| Some(*v as f64 / interval_s);
    let x_label = time_axis(t.start_ms);
    let percentiles =
        percentile_chart("Response time percentiles", &x_label, interval_s, [&t.p50_ms, &t.p90_ms, &t.p99_ms]);
    let throughput = line_chart(&LineChart {
        title: "Throughput and errors",
        y_label: "samples per second",
        x_label: &x_label,
        interval_s,
        series: vec![
            Series { name: "requests/s", color: PALETTE[0], values: t.samples.iter().map(per_s).collect() },
            Series { name: "errors/s", color: PALETTE[3], values: t.errors.iter().map(per_s).collect() },
        ],
    });
    let threads = t.threads.iter().any(Option::is_some).then(|| {
        svg(line_chart(&LineChart {
            title: "Active threads",
            y_label: "threads",
            x_label: &x_label,
            interval_s,
            series: vec![Series {
                name: "threads (max)",
                color: PALETTE[2],
                values: t.threads.iter().map(|v| v.map(f64::from)).collect(),
            }],
        }))
    });
    context! {
        interval => duration(interval_s),
        since => if t.samples.is_empty() { "-".to_string() } else { utc(t.start_ms) },
        percentiles => svg(percentiles), throughput => svg(throughput), threads,
    }
}

/// Throughput, errors and p90 with one line per label, then each label's percentiles: a 50 ms label and a
/// 1 ms label mixed make the run's percentile lines meaningless. None without samples.
fn labels_over_time(d: &ReportData) -> Option<Value> {
    let t = &d.label_timelines;
    let all: Vec<&LabelSeries> = t.labels.iter().chain(&t.others).collect();
    if all.is_empty() {
        return None;
    }
    let interval_s = t.interval_ms as f64 / 1000.0;
    let x_label = time_axis(t.start_ms);
    let per_s = |v: &u64| Some(*v as f64 / interval_s);
    let lines = |values: &dyn Fn(&LabelSeries) -> Vec<Option<f64>>| -> Vec<Series<'_>> {
        all.iter()
            .enumerate()
            .map(|(i, l)| Series { name: &l.label, color: PALETTE[i % PALETTE.len()], values: values(l) })
            .collect()
    };
    let charts: Vec<Value> = [
        ("Throughput per label", "samples per second", lines(&|l| l.samples.iter().map(per_s).collect())),
        ("Errors per label", "errors per second", lines(&|l| l.errors.iter().map(per_s).collect())),
        ("p90 per label", "response time (ms)", lines(&|l| l.p90_ms.clone())),
    ]
    .into_iter()
    .map(|(title, y_label, series)| {
        svg(line_chart(&LineChart { title, y_label, x_label: &x_label, interval_s, series }))
    })
    .collect();
    let percentiles: Vec<Value> = all
        .iter()
        .map(|l| {
            let chart = percentile_chart(&l.label, &x_label, interval_s, [&l.p50_ms, &l.p90_ms, &l.p99_ms]);
            context! { label => &l.label, chart => svg(chart) }
        })
        .collect();
    Some(context! {
        charts, percentiles,
        interval => duration(interval_s),
        since => utc(t.start_ms),
        others => t.others.is_some(),
        max_labels => MAX_LABEL_TIMELINES,
    })
}

/// The x axis of a chart over time: `time since HH:MM:SS UTC`.
fn time_axis(start_ms: u64) -> String {
    let since = utc(start_ms);
    format!("time since {} UTC", since.get(11..19).map_or(since.as_str(), |hms| hms))
}

/// p50, p90 and p99 over time, one line each.
fn percentile_chart(title: &str, x_label: &str, interval_s: f64, [p50, p90, p99]: [&Vec<Option<f64>>; 3]) -> String {
    line_chart(&LineChart {
        title,
        y_label: "response time (ms)",
        x_label,
        interval_s,
        series: vec![
            Series { name: "p50", color: PALETTE[0], values: p50.clone() },
            Series { name: "p90", color: PALETTE[1], values: p90.clone() },
            Series { name: "p99", color: PALETTE[3], values: p99.clone() },
        ],
    })
}

/// Each label's response codes, TOTAL's first, the most frequent first.
fn codes(rows: &[SummaryRow], total: &SummaryRow) -> Vec<Value> {
    let mut out = Vec::new();
    for row in [total].into_iter().chain(rows) {
        let mut codes: Vec<(&String, &u64)> = row.response_codes.iter().collect();
        codes.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        for (code, &count) in codes {
            out.push(context! {
                total => std::ptr::eq(row, total),
                label => &row.label,
                code => if code.is_empty() { "(empty)" } else { code.as_str() },
                count,
                percent => format!("{:.2}", count as f64 * 100.0 / row.samples.max(1) as f64),
            });
        }
    }
    out
}

/// The top failure messages; none when no request failed.
fn failures(d: &ReportData) -> Option<Value> {
    let f = &d.failures;
    if f.total == 0 {
        return None;
    }
    let percent = |count: u64| format!("{:.2}", count as f64 * 100.0 / f.total as f64);
    let top: Vec<Value> = f
        .top
        .iter()
        .map(|m| context! { label => &m.label, message => &m.message, count => m.count, percent => percent(m.count) })
        .collect();
    let other = (f.other > 0).then(|| context! { count => f.other, percent => percent(f.other) });
    Some(context! { top, other })
}

/// The comparison of two results.
pub fn compare_html(c: &Comparison) -> String {
    let rows: Vec<Value> = c.rows.iter().map(label_comparison).collect();
    let only_in: Vec<Value> = [("A", &c.only_in_a), ("B", &c.only_in_b)]
        .into_iter()
        .filter(|(_, labels)| !labels.is_empty())
        .map(|(side, labels)| context! { side, labels })
        .collect();
    let page = context! { a => &c.a, b => &c.b, method => &c.method, rows, only_in };
    render("compare.html", "planrun comparison", page, c)
}

/// One label of a comparison: its overview row and its section.
fn label_comparison(row: &LabelComparison) -> Value {
    let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.2}"));
    let cells = [
        format!("{:.2}", row.a.p50_ms),
        format!("{:.2}", row.b.p50_ms),
        ratio(row.ratios.p50),
        format!("{:.2}", row.a.p95_ms),
        format!("{:.2}", row.b.p95_ms),
        ratio(row.ratios.p95),
        format!("{:.2}%", row.a.error_pct),
        format!("{:.2}%", row.b.error_pct),
    ];
    let test = row.test.map(|t| {
        context! { n_a => t.n_a, n_b => t.n_b, z => format!("{:.2}", t.z), prob_b_slower => format!("{:.3}", t.prob_b_slower) }
    });
    let overlay = row.overlay.as_ref().map(|o| {
        let pct = |counts: &[u64], n: u64| counts.iter().map(|&c| Some(c as f64 * 100.0 / n.max(1) as f64)).collect();
        let (na, nb) = (row.a.samples, row.b.samples);
        let title = format!("{}: A and B", one_line(&row.label, 50));
        svg(bar_chart(&BarChart {
            title: &title,
            y_label: "% of samples",
            lo_ms: o.lo_ms,
            bin_ms: o.bin_ms,
            series: vec![
                Series { name: "A", color: PALETTE[0], values: pct(&o.a, na) },
                Series { name: "B", color: PALETTE[1], values: pct(&o.b, nb) },
            ],
            overflow: vec![
                o.a_overflow as f64 * 100.0 / na.max(1) as f64,
                o.b_overflow as f64 * 100.0 / nb.max(1) as f64,
            ],
        }))
    });
    context! {
        total => row.label == "TOTAL",
        anchor => anchor(&row.label),
        label => &row.label,
        verdict => verdict_badge(row.verdict),
        cells,
        reason => &row.reason,
        table => table_lines(row),
        test,
        overlay,
    }
}

/// The class and text of a verdict's badge.
fn verdict_badge(v: Verdict) -> Value {
    let class = match v {
        Verdict::Slower => "slower",
        Verdict::Faster => "faster",
        _ => "same",
    };
    context! { class, text => v.to_string() }
}

/// An id for a label's section: its bytes in hex, so any label gives a valid, unique fragment.
fn anchor(label: &str) -> String {
    label.bytes().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// An SVG chart of report/svg.rs, which escapes the text it draws: marked safe so it is not escaped twice.
fn svg(chart: String) -> Value {
    Value::from_safe_string(chart)
}

/// Renders a page (auto-escaped HTML) with `data` embedded as JSON.
fn render(template: &str, title: &str, body: Value, data: &impl Serialize) -> String {
    // `<` escaped as \u003c: the JSON stays valid and cannot close the script element.
    let json = serde_json::to_string(data).unwrap_or_else(|_| "null".into()).replace('<', "\\u003c");
    let mut env = Environment::new();
    let templates = [
        ("page.html", include_str!("templates/page.html")),
        ("report.html", include_str!("templates/report.html")),
        ("compare.html", include_str!("templates/compare.html")),
    ];
    for (name, source) in templates {
        if let Err(e) = env.add_template(name, source) {
            return broken(&e);
        }
    }
    let page = context! { ..body, ..context! {
        title, version => env!("CARGO_PKG_VERSION"), json => Value::from_safe_string(json),
    } };
    match env.get_template(template).and_then(|t| t.render(page)) {
        // The template's last newline is dropped by minijinja.
        Ok(html) => html + "\n",
        Err(e) => broken(&e),
    }
}

/// What a page whose template failed says instead (a bug: the templates are built in and tested).
fn broken(e: &minijinja::Error) -> String {
    let mut text = e.to_string();
    text.retain(|c| c != '<' && c != '&');
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><body><p>planrun could not render this page: {text}</p></body></html>\n"
    )
}

/// An instant as `2025-01-31 12:00:00.123 UTC`.
fn utc(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(|| ms.to_string(), |t| t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string())
}

/// A duration as `850 ms`, `12.5 s`, `3 min 20 s`, `2 h 5 min`.
fn duration(s: f64) -> String {
    if s < 1.0 {
        format!("{} ms", number((s * 1000.0).round()))
    } else if s < 60.0 {
        format!("{} s", number((s * 10.0).round() / 10.0))
    } else if s < 3600.0 {
        format!("{} min {} s", (s / 60.0).floor(), (s % 60.0).round())
    } else {
        format!("{} h {} min", (s / 3600.0).floor(), (s % 3600.0 / 60.0).round())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_instants_anchors() {
        assert_eq!(
            (duration(0.85), duration(12.53), duration(200.0), duration(7500.0)),
            ("850 ms".into(), "12.5 s".into(), "3 min 20 s".into(), "2 h 5 min".into())
        );
        assert_eq!(utc(1_706_702_400_250), "2024-01-31 12:00:00.250 UTC");
        assert_eq!(anchor("a b"), "612062");
    }
}
