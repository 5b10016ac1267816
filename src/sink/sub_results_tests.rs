//! The JTL and JSON lines sinks with sub-results: written after their sample, and counted with it.

use std::sync::Arc;

use super::jsonl::JsonlSink;
use super::jtl::JtlSink;
use super::Sink;
use crate::sample::tests::sample;
use crate::sample::{Detail, Sample};

fn with_hops() -> Sample {
    let sub =
        |i: u64| Sample { label: Arc::from(format!("chain-{i}")), start_ms: 1_764_547_200_123 + i, ..sample("x") };
    Sample {
        detail: Some(Box::new(Detail { sub_results: vec![sub(0), sub(1)], ..Detail::default() })),
        ..sample("chain")
    }
}

#[test]
fn a_jtl_row_is_followed_by_its_sub_results_and_they_land_as_one_sample() {
    let mut sink = JtlSink::new(Vec::new(), "memory").unwrap();
    let landed = sink.landed().unwrap();
    sink.write(&[with_hops(), sample("plain")]).unwrap();
    assert_eq!(landed.records(), 2, "two samples, whatever their rows");
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    let labels: Vec<&str> = text.lines().skip(1).map(|l| l.split(',').nth(2).unwrap()).collect();
    assert_eq!(labels, ["chain", "chain-0", "chain-1", "plain"]);
}

#[test]
fn a_json_line_nests_its_sub_results() {
    let mut sink = JsonlSink::new(Vec::new(), "memory").unwrap();
    sink.write(&[with_hops(), sample("plain")]).unwrap();
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let subs: Vec<&str> =
        lines[0]["sub_results"].as_array().unwrap().iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(subs, ["chain-0", "chain-1"]);
    assert!(lines[0]["sub_results"][0].get("sub_results").is_none());
    assert!(lines[1].get("sub_results").is_none());
}
