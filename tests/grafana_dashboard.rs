//! deploy/grafana/planrun.json: a Grafana dashboard with, for each live output, throughput, errors,
//! percentiles per label and active users, reading only what planrun writes (docs/outputs.md). Its queries
//! also run against the real databases in tests/live_outputs.rs.

use crate::live_db;

use std::collections::HashSet;

use serde_json::Value;

/// The fields of measurement `jmeter` planrun writes.
const INFLUX_FIELDS: &[&str] = &[
    "count",
    "countError",
    "avg",
    "min",
    "max",
    "hit",
    "sb",
    "rb",
    "pct50.0",
    "pct90.0",
    "pct95.0",
    "pct99.0",
    "minAT",
    "maxAT",
    "meanAT",
    "dropped",
    "droppedTotal",
    "duration",
    "ttfb",
    "connectTime",
];

/// The Prometheus metrics planrun writes.
const PROMETHEUS_METRICS: &[&str] = &[
    "planrun_requests_total",
    "planrun_errors_total",
    "planrun_received_bytes_total",
    "planrun_sent_bytes_total",
    "planrun_response_time_seconds",
    "planrun_response_time_mean_seconds",
    "planrun_response_time_min_seconds",
    "planrun_response_time_max_seconds",
    "planrun_active_users",
    "planrun_dropped_iterations_total",
];

/// `"name"` inside a function call's parentheses: the fields an InfluxQL select reads.
fn influx_fields(q: &str) -> Vec<String> {
    q.split("(\"").skip(1).filter_map(|rest| rest.split_once("\")").map(|(f, _)| f.to_string())).collect()
}

fn prometheus_metrics(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = q;
    while let Some(at) = rest.find("planrun_") {
        let name: String = rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        rest = &rest[at + name.len()..];
        out.push(name);
    }
    out
}

#[test]
fn each_output_has_throughput_errors_percentiles_and_users_from_what_planrun_writes() {
    let d = live_db::dashboard();
    assert_eq!(d["title"], "planrun");
    assert!(d["uid"].as_str().is_some_and(|u| !u.is_empty()));
    let vars: Vec<&Value> = d["templating"]["list"].as_array().expect("templating variables").iter().collect();
    for kind in ["influxdb", "prometheus"] {
        assert!(
            vars.iter().any(|v| v["name"] == kind && v["type"] == "datasource" && v["query"] == kind),
            "a data source variable for {kind}"
        );
    }
    assert!(vars.iter().any(|v| v["name"] == "application"), "the plan is chosen by `application`");

    let panels = d["panels"].as_array().expect("panels");
    let mut ids = HashSet::new();
    let mut cells: Vec<(u64, u64, u64, u64, String)> = Vec::new();
    let mut titles: Vec<(String, String)> = Vec::new();
    for p in panels {
        let title = p["title"].as_str().expect("a panel title").to_string();
        assert!(ids.insert(p["id"].as_u64().expect("a numeric id")), "panel ids are unique: {title}");
        let g = &p["gridPos"];
        let cell = |k: &str| g[k].as_u64().unwrap_or_else(|| panic!("{title}: gridPos.{k}"));
        let (x, y, w, h) = (cell("x"), cell("y"), cell("w"), cell("h"));
        assert!(x + w <= 24 && w > 0 && h > 0, "{title}: inside the 24-column grid");
        for (ox, oy, ow, oh, other) in &cells {
            let apart = x + w <= *ox || *ox + ow <= x || y + h <= *oy || *oy + oh <= y;
            assert!(apart, "{title} overlaps {other}");
        }
        cells.push((x, y, w, h, title.clone()));
        if p["type"] == "row" {
            continue;
        }
        assert_eq!(p["type"], "timeseries", "{title}");
        let kind = p["datasource"]["type"].as_str().expect("a panel's data source").to_string();
        assert_eq!(p["datasource"]["uid"], format!("${{{kind}}}"), "{title}: the data source comes from its variable");
        let targets = p["targets"].as_array().filter(|t| !t.is_empty()).unwrap_or_else(|| panic!("{title}: targets"));
        for t in targets {
            assert_eq!(t["datasource"]["type"], kind.as_str(), "{title}: targets read the panel's data source");
            match kind.as_str() {
                "influxdb" => {
                    let q = t["query"].as_str().expect("an InfluxQL query");
                    assert!(q.contains("FROM \"jmeter\"") && q.contains("$timeFilter") && q.contains("$application"));
                    let fields = influx_fields(q);
                    assert!(!fields.is_empty(), "{q}");
                    for f in fields {
                        assert!(INFLUX_FIELDS.contains(&f.as_str()), "{title}: planrun writes no field `{f}`");
                    }
                }
                "prometheus" => {
                    let q = t["expr"].as_str().expect("a PromQL expression");
                    assert!(q.contains("$application"), "{q}");
                    let metrics = prometheus_metrics(q);
                    assert!(!metrics.is_empty(), "{q}");
                    for m in metrics {
                        assert!(PROMETHEUS_METRICS.contains(&m.as_str()), "{title}: planrun writes no metric `{m}`");
                    }
                }
                other => panic!("{title}: unexpected data source {other}"),
            }
        }
        titles.push((kind, title));
    }
    for kind in ["influxdb", "prometheus"] {
        for want in ["Throughput per label", "Errors per label", "Percentiles per label", "Active users"] {
            assert!(titles.iter().any(|(k, t)| k == kind && t.starts_with(want)), "{kind}: a `{want}` panel");
        }
    }
}
