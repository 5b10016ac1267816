//! Every line `--json` writes, for every kind of sample (a response, a failed assertion, a transport
//! error, a transaction), is valid against the checked-in schemas/sample.schema.json.

use crate::common;
use crate::json_schema;

use common::{planrun, refused_url, Server, TempDir};

#[test]
fn every_json_line_matches_the_sample_schema() {
    let server = Server::start();
    let dir = TempDir::new("sample_schema");
    let plan = dir.write(
        "plan.yaml",
        format!(
            r#"
name: lines
thread_groups:
  - name: g
    threads: 2
    loops: 2
    steps:
      - transaction: both
        steps:
          - name: ok
            request: {{ url: "{base}/ok" }}
          - name: failed-assertion
            request: {{ url: "{base}/status/503" }}
            assert:
              - status: 200
      - name: refused
        request: {{ url: "{refused}/x", timeout: 1s }}
"#,
            base = server.url(),
            refused = refused_url()
        ),
    );
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--json", "out.jsonl", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/sample.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = json_schema::Validator::new(&schema);
    let text = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON object")).collect();
    assert_eq!(lines.len(), 2 * 2 * 4, "three requests and a transaction per iteration");
    for line in &lines {
        let errors = validator.errors(line);
        assert!(errors.is_empty(), "{line}\n{}", errors.join("\n"));
    }
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["error_kind"].as_str()).collect();
    assert!(kinds.iter().all(|k| *k == "ConnectionRefused") && kinds.len() == 4, "{kinds:?}");
    assert!(lines.iter().any(|l| l["url"].is_null() && l["label"] == "both"), "a transaction line");
}
