//! The HTML report and the HTML comparison: one self-contained file each.
//!
//! No script runs and nothing is fetched: the style is inline, the charts are inline SVG ([`super::svg`]), and
//! the charts' data is embedded as JSON in `<script type="application/json" id="data">` for other tools (the
//! browser does not execute it). Opening the file offline shows everything.

use std::fmt::Write as _;

use serde::Serialize;

use super::analysis::ReportData;
use super::compare::{table_lines, Comparison, LabelComparison, Verdict};
use super::summary::COLUMNS;
use super::svg::{bar_chart, escape, line_chart, number, one_line, BarChart, LineChart, Series, PALETTE};
use super::timeline::{LabelSeries, MAX_LABEL_TIMELINES};
use crate::sink::stats::SummaryRow;

/// Distribution charts drawn at most; the data of every label is embedded all the same.
pub const MAX_CHARTED_LABELS: usize = 60;

const STYLE: &str = r#"
:root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--head:#f3f4f6}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);margin:0 auto;max-width:1280px;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}
h2{font-size:17px;margin:30px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:var(--muted);margin:0 0 10px}
nav a{margin-right:14px;color:#2563eb;text-decoration:none}
.wrap{overflow-x:auto}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:6px 0}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--head);font-weight:600}
.l{text-align:left;white-space:normal;min-width:10em;max-width:460px;overflow-wrap:anywhere}
tr.total td{font-weight:600;border-top:2px solid #9ca3af}
tr.sum td{font-weight:600}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:12px}
svg.chart{width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
svg .title{font-size:14px;font-weight:600;fill:#111827}
svg .tick,svg .legend{font-size:11px;fill:#4b5563}
svg .axis{font-size:12px;fill:#374151}
svg .grid{stroke:#eef0f3}
svg .axisline{stroke:#9ca3af}
.verdict{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600}
.slower{background:#fee2e2;color:#991b1b}
.faster{background:#dcfce7;color:#166534}
.same{background:#f3f4f6;color:#374151}
.msg{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap}
.note{color:var(--muted)}
footer{margin-top:36px;color:var(--muted);font-size:12px}
"#;

/// The report of one results file.
pub fn report_html(d: &ReportData) -> String {
    let s = &d.summary;
    let mut body = String::new();
    let _ = write!(body, "<h1>planrun report</h1><p class=\"meta\">{}</p>", report_meta(d));
    body.push_str(
        "<nav><a href=\"#summary\">Summary</a><a href=\"#distribution\">Distribution</a>\
         <a href=\"#percentiles\">Percentiles over time</a><a href=\"#throughput\">Throughput and errors</a>\
         <a href=\"#threads\">Active threads</a><a href=\"#labels-over-time\">Per label over time</a>\
         <a href=\"#codes\">Response codes</a>\
         <a href=\"#failures\">Failures</a></nav>",
    );
    body.push_str("<section id=\"summary\"><h2>Summary</h2>");
    body.push_str(&summary_table(&s.labels, &s.total));
    body.push_str(
        "<p class=\"note\">Times in ms; percentiles from HDR histograms (3 significant digits); throughput in \
         requests per second from the first start to the last end; KB = 1024 bytes. Transactions have their \
         own rows and are left out of TOTAL.</p></section>",
    );
    distribution_section(&mut body, d);
    timeline_sections(&mut body, d);
    labels_over_time_section(&mut body, d);
    codes_section(&mut body, &s.labels, &s.total);
    failures_section(&mut body, d);
    page("planrun report", &body, d)
}

fn report_meta(d: &ReportData) -> String {
    let s = &d.summary;
    let mut meta = format!(
        "{} ({}): {} samples, {} failed",
        escape(&d.source),
        escape(&d.source_format),
        s.total.samples,
        s.total.errors
    );
    if let (Some(start), Some(end)) = (s.start_ms, s.end_ms) {
        let _ = write!(
            meta,
            "; from {} to {} ({})",
            utc(start),
            utc(end),
            duration(end.saturating_sub(start) as f64 / 1000.0)
        );
    }
    let transactions: u64 = s.labels.iter().map(|r| r.transactions).sum();
    if transactions > 0 {
        let _ = write!(meta, "; {transactions} transaction samples besides");
    }
    meta
}

fn summary_table(rows: &[SummaryRow], total: &SummaryRow) -> String {
    let mut t = String::from("<div class=\"wrap\"><table><thead><tr>");
    for (i, c) in COLUMNS.iter().enumerate() {
        let _ = write!(t, "<th{}>{}</th>", if i == 0 { " class=\"l\"" } else { "" }, c.report_header());
    }
    t.push_str("</tr></thead><tbody>");
    for (row, class) in rows.iter().map(|r| (r, "")).chain([(total, " class=\"total\"")]) {
        let _ = write!(t, "<tr{class}>");
        for (i, c) in COLUMNS.iter().enumerate() {
            let _ = write!(t, "<td{}>{}</td>", if i == 0 { " class=\"l\"" } else { "" }, escape(&(c.cell)(row)));
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table></div>");
    t
}

fn distribution_section(body: &mut String, d: &ReportData) {
    body.push_str("<section id=\"distribution\"><h2>Response-time distribution</h2><div class=\"charts\">");
    for (i, dist) in d.distributions.iter().take(MAX_CHARTED_LABELS).enumerate() {
        let title = format!("{} ({} samples)", one_line(&dist.label, 50), dist.samples);
        body.push_str(&bar_chart(&BarChart {
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
        }));
    }
    body.push_str("</div>");
    if d.distributions.len() > MAX_CHARTED_LABELS {
        let _ = write!(
            body,
            "<p class=\"note\">{} more labels are not drawn; their data is in the embedded JSON.</p>",
            d.distributions.len() - MAX_CHARTED_LABELS
        );
    }
    body.push_str(
        "<p class=\"note\">Equal bins from the fastest sample to the 99.9th percentile; the slowest 0.1% are \
         counted in the last bar (≥).</p></section>",
    );
}

fn timeline_sections(body: &mut String, d: &ReportData) {
    let t = &d.timeline;
    let interval_s = t.interval_ms as f64 / 1000.0;
    let note = format!(
        "<p class=\"note\">Per {} interval from {}, by the samples' start times; transactions left out.</p>",
        duration(interval_s),
        if t.samples.is_empty() { "-".to_string() } else { utc(t.start_ms) }
    );
    let per_s = |v: &u64| Some(*v as f64 / interval_s);
    let x_label = time_axis(t.start_ms);
    body.push_str("<section id=\"percentiles\"><h2>Response-time percentiles over time</h2>");
    body.push_str(&percentile_chart(
        "Response time percentiles",
        &x_label,
        interval_s,
        [&t.p50_ms, &t.p90_ms, &t.p99_ms],
    ));
    body.push_str(&note);
    body.push_str("</section><section id=\"throughput\"><h2>Throughput and errors over time</h2>");
    body.push_str(&line_chart(&LineChart {
        title: "Throughput and errors",
        y_label: "samples per second",
        x_label: &x_label,
        interval_s,
        series: vec![
            Series { name: "requests/s", color: PALETTE[0], values: t.samples.iter().map(per_s).collect() },
            Series { name: "errors/s", color: PALETTE[3], values: t.errors.iter().map(per_s).collect() },
        ],
    }));
    body.push_str(&note);
    body.push_str("</section><section id=\"threads\"><h2>Active threads over time</h2>");
    if t.threads.iter().any(Option::is_some) {
        body.push_str(&line_chart(&LineChart {
            title: "Active threads",
            y_label: "threads",
            x_label: &x_label,
            interval_s,
            series: vec![Series {
                name: "threads (max)",
                color: PALETTE[2],
                values: t.threads.iter().map(|v| v.map(f64::from)).collect(),
            }],
        }));
        body.push_str(&note);
    } else {
        body.push_str("<p class=\"note\">The results do not record active threads (no allThreads column).</p>");
    }
    body.push_str("</section>");
}

/// Throughput, errors and p90 with one line per label, then each label's percentiles: a 50 ms label and a
/// 1 ms label mixed make the run's percentile lines meaningless.
fn labels_over_time_section(body: &mut String, d: &ReportData) {
    let t = &d.label_timelines;
    body.push_str("<section id=\"labels-over-time\"><h2>Per label over time</h2>");
    let all: Vec<&LabelSeries> = t.labels.iter().chain(&t.others).collect();
    if all.is_empty() {
        body.push_str("<p class=\"note\">No samples.</p></section>");
        return;
    }
    let interval_s = t.interval_ms as f64 / 1000.0;
    let since = utc(t.start_ms);
    let x_label = time_axis(t.start_ms);
    let per_s = |v: &u64| Some(*v as f64 / interval_s);
    let lines = |values: &dyn Fn(&LabelSeries) -> Vec<Option<f64>>| -> Vec<Series<'_>> {
        all.iter()
            .enumerate()
            .map(|(i, l)| Series { name: &l.label, color: PALETTE[i % PALETTE.len()], values: values(l) })
            .collect()
    };
    body.push_str("<div class=\"charts\">");
    for (title, y_label, series) in [
        ("Throughput per label", "samples per second", lines(&|l| l.samples.iter().map(per_s).collect())),
        ("Errors per label", "errors per second", lines(&|l| l.errors.iter().map(per_s).collect())),
        ("p90 per label", "response time (ms)", lines(&|l| l.p90_ms.clone())),
    ] {
        body.push_str(&line_chart(&LineChart { title, y_label, x_label: &x_label, interval_s, series }));
    }
    body.push_str("</div>");
    for l in &all {
        let _ = write!(body, "<details><summary>{}: percentiles over time</summary>", escape(&l.label));
        body.push_str(&percentile_chart(&l.label, &x_label, interval_s, [&l.p50_ms, &l.p90_ms, &l.p99_ms]));
        body.push_str("</details>");
    }
    let others = if t.others.is_some() {
        format!("; labels past the first {MAX_LABEL_TIMELINES} are drawn together as `other labels`")
    } else {
        String::new()
    };
    let _ = write!(
        body,
        "<p class=\"note\">Per {} interval from {}, by the samples' start times; transactions left out{others}.</p>\
         </section>",
        duration(interval_s),
        since
    );
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

fn codes_section(body: &mut String, rows: &[SummaryRow], total: &SummaryRow) {
    body.push_str(
        "<section id=\"codes\"><h2>Response codes</h2><div class=\"wrap\"><table><thead><tr><th class=\"l\">Label</th>\
         <th class=\"l\">Response code</th><th>Samples</th><th>% of label</th></tr></thead><tbody>",
    );
    for row in [total].into_iter().chain(rows) {
        let mut codes: Vec<(&String, &u64)> = row.response_codes.iter().collect();
        codes.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        for (code, &count) in codes {
            let shown = if code.is_empty() { "(empty)".to_string() } else { escape(code) };
            let _ = write!(
                body,
                "<tr{}><td class=\"l\">{}</td><td class=\"l\">{shown}</td><td>{count}</td><td>{:.2}%</td></tr>",
                if std::ptr::eq(row, total) { " class=\"sum\"" } else { "" },
                escape(&row.label),
                count as f64 * 100.0 / row.samples.max(1) as f64
            );
        }
    }
    body.push_str("</tbody></table></div></section>");
}

fn failures_section(body: &mut String, d: &ReportData) {
    let f = &d.failures;
    body.push_str("<section id=\"failures\"><h2>Top failure messages</h2>");
    if f.total == 0 {
        body.push_str("<p class=\"note\">No request failed.</p></section>");
        return;
    }
    body.push_str(
        "<div class=\"wrap\"><table><thead><tr><th class=\"l\">Label</th><th class=\"l\">Message</th>\
         <th>Failures</th><th>% of failures</th></tr></thead><tbody>",
    );
    for m in &f.top {
        let _ = write!(
            body,
            "<tr><td class=\"l\">{}</td><td class=\"l msg\">{}</td><td>{}</td><td>{:.2}%</td></tr>",
            escape(&m.label),
            escape(&m.message),
            m.count,
            m.count as f64 * 100.0 / f.total as f64
        );
    }
    if f.other > 0 {
        let _ = write!(
            body,
            "<tr><td class=\"l\"></td><td class=\"l\">(other messages)</td><td>{}</td><td>{:.2}%</td></tr>",
            f.other,
            f.other as f64 * 100.0 / f.total as f64
        );
    }
    body.push_str(
        "</tbody></table></div><p class=\"note\">The failure message, else the response message, of each failed \
         request (transactions left out).</p></section>",
    );
}

/// The comparison of two results.
pub fn compare_html(c: &Comparison) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>planrun comparison</h1><p class=\"meta\">A: {}<br>B: {}</p><p class=\"note\">Verdicts: {}.</p>",
        escape(&c.a),
        escape(&c.b),
        escape(&c.method)
    );
    body.push_str(
        "<section><h2>Overview</h2><div class=\"wrap\"><table><thead><tr><th class=\"l\">Label</th>\
         <th class=\"l\">Verdict</th><th>p50 A</th><th>p50 B</th><th>B/A</th><th>p95 A</th><th>p95 B</th><th>B/A</th>\
         <th>Error % A</th><th>Error % B</th></tr></thead><tbody>",
    );
    for row in &c.rows {
        let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.2}"));
        let _ = write!(
            body,
            "<tr{}><td class=\"l\"><a href=\"#label-{}\">{}</a></td><td class=\"l\">{}</td><td>{:.2}</td><td>{:.2}</td>\
             <td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td><td>{:.2}%</td><td>{:.2}%</td></tr>",
            if row.label == "TOTAL" { " class=\"total\"" } else { "" },
            anchor(&row.label),
            escape(&row.label),
            verdict_badge(row.verdict),
            row.a.p50_ms,
            row.b.p50_ms,
            ratio(row.ratios.p50),
            row.a.p95_ms,
            row.b.p95_ms,
            ratio(row.ratios.p95),
            row.a.error_pct,
            row.b.error_pct
        );
    }
    body.push_str("</tbody></table></div>");
    for (side, labels) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !labels.is_empty() {
            let list: Vec<String> = labels.iter().map(|l| escape(l)).collect();
            let _ = write!(body, "<p>Only in {side}: {}</p>", list.join(", "));
        }
    }
    body.push_str("</section>");
    for row in &c.rows {
        label_section(&mut body, row);
    }
    page("planrun comparison", &body, c)
}

fn label_section(body: &mut String, row: &LabelComparison) {
    let _ = write!(
        body,
        "<section id=\"label-{}\"><h2>{}</h2><p>{} {}</p><div class=\"charts\"><div class=\"wrap\"><table><thead>",
        anchor(&row.label),
        escape(&row.label),
        verdict_badge(row.verdict),
        escape(&row.reason)
    );
    for (i, line) in table_lines(row).iter().enumerate() {
        let cell = if i == 0 { "th" } else { "td" };
        let _ = write!(
            body,
            "<tr><{cell} class=\"l\">{}</{cell}><{cell}>{}</{cell}><{cell}>{}</{cell}><{cell}>{}</{cell}></tr>",
            escape(&line[0]),
            escape(&line[1]),
            escape(&line[2]),
            escape(&line[3])
        );
        if i == 0 {
            body.push_str("</thead><tbody>");
        }
    }
    body.push_str("</tbody></table>");
    if let Some(t) = &row.test {
        let _ = write!(
            body,
            "<p class=\"note\">Mann-Whitney U on {} vs {} samples: z = {:.2}, P(B slower than A) = {:.3}.</p>",
            t.n_a, t.n_b, t.z, t.prob_b_slower
        );
    }
    body.push_str("</div>");
    if let Some(o) = &row.overlay {
        let pct = |counts: &[u64], n: u64| counts.iter().map(|&c| Some(c as f64 * 100.0 / n.max(1) as f64)).collect();
        let (na, nb) = (row.a.samples, row.b.samples);
        let title = format!("{}: A and B", one_line(&row.label, 50));
        body.push_str(&bar_chart(&BarChart {
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
        }));
    }
    body.push_str("</div></section>");
}

fn verdict_badge(v: Verdict) -> String {
    let class = match v {
        Verdict::Slower => "slower",
        Verdict::Faster => "faster",
        _ => "same",
    };
    format!("<span class=\"verdict {class}\">{v}</span>")
}

/// An id for a label's section: its bytes in hex, so any label gives a valid, unique fragment.
fn anchor(label: &str) -> String {
    label.bytes().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The page around a body, with the data embedded as JSON.
fn page(title: &str, body: &str, data: &impl Serialize) -> String {
    // `<` escaped as \u003c: the JSON stays valid and cannot close the script element.
    let json = serde_json::to_string(data).expect("report data always serializes").replace('<', "\\u003c");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style>\
         </head><body>{body}<footer>Written by planrun {}. The charts' data is embedded in this file as JSON \
         (script#data).</footer>\n<script type=\"application/json\" id=\"data\">{json}</script>\n</body></html>\n",
        escape(title),
        env!("CARGO_PKG_VERSION")
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
