//! `--failed-bodies DIR` and `--json-failed-bodies`: the bodies of failed responses kept (64 KiB each,
//! secrets masked) as files named by sample and in the JSON lines; nothing for the samples that passed.

mod common;
mod json_schema;

use common::{describe, planrun, read_jtl, Server, TempDir};

const SECRET: &str = "Sup3rS3cretKey";

fn plan(base: &str) -> String {
    format!(
        r#"name: bodies
properties:
  key: {{ value: {SECRET}, secret: true }}
defaults:
  base_url: "{base}"
  cookies: false
thread_groups:
  - name: g
    threads: 2
    loops: 2
    steps:
      - name: ok
        request: {{ url: /ok }}
      - name: echo
        request:
          url: /echo-cookie
          headers: {{ Cookie: "k={{{{ props.key }}}}" }}
        assert: [ {{ body_contains: nothing }} ]
      - name: big
        request: {{ url: /chunked/100000 }}
        assert: [ {{ status: 201 }} ]
"#
    )
}

#[test]
fn failed_responses_bodies_are_kept_as_files_and_in_the_json_lines() {
    let server = Server::start();
    let dir = TempDir::new("failed_bodies");
    let plan = dir.write("plan.yaml", plan(&server.url()));
    let args = [
        "run",
        plan.to_str().unwrap(),
        "-o",
        "out.jtl",
        "--json",
        "out.jsonl",
        "--json-failed-bodies",
        "--failed-bodies",
        "bodies",
        "--quiet",
    ];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(server.count(), 12);
    assert_eq!(jtl.rows.len(), 12);
    let failed: Vec<_> = jtl.rows.iter().filter(|r| r["success"] == "false").collect();
    assert_eq!(failed.len(), 8);

    // One file per failed sample, named after its row.
    let mut files: Vec<String> =
        std::fs::read_dir(dir.join("bodies")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    let mut expected: Vec<String> = failed
        .iter()
        .map(|r| format!("{}-{}-{}.body", r["timeStamp"], r["threadName"].replace(' ', "_"), r["label"]))
        .collect();
    expected.sort();
    expected.dedup();
    assert_eq!(files.len(), 8, "{files:?}");
    for name in &expected {
        assert!(files.iter().any(|f| f == name), "{name} in {files:?}");
    }
    let pattern: Vec<u8> = (0..65536).map(|i| b'a' + (i % 26) as u8).collect();
    for f in &files {
        let body = std::fs::read(dir.join("bodies").join(f)).unwrap();
        if f.ends_with("-echo.body") || f.contains("-echo-") {
            assert_eq!(body, b"k=***", "{f}");
        } else {
            assert_eq!(body, pattern, "{f}: the first 64 KiB of the body");
        }
    }

    // The JSON lines of failed samples carry the body; the others do not.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/sample.schema.json"))).unwrap();
    let validator = json_schema::Validator::new(&schema);
    let text = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
    assert!(!text.contains(SECRET));
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 12);
    for line in &lines {
        assert!(validator.errors(line).is_empty(), "{line}\n{:?}", validator.errors(line));
        match line["label"].as_str().unwrap() {
            "ok" => assert!(line.get("response_body").is_none() && line.get("response_body_size").is_none()),
            "echo" => {
                assert_eq!(line["response_body"], "k=***");
                assert_eq!(line["response_body_size"], 2 + SECRET.len());
            }
            _ => {
                assert_eq!(line["response_body"].as_str().unwrap().as_bytes(), pattern);
                assert_eq!(line["response_body_size"], 100_000);
            }
        }
    }
}

#[test]
fn json_failed_bodies_needs_json_lines() {
    let server = Server::start();
    let dir = TempDir::new("failed_bodies_no_json");
    let plan = dir.write("plan.yaml", plan(&server.url()));
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--json-failed-bodies"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(common::stderr(&out).contains("--json <FILE>"), "it says what is missing: {}", describe(&out));
    assert_eq!(server.count(), 0);
}

#[test]
fn a_bodies_directory_that_cannot_be_made_stops_the_run_before_it_sends() {
    let server = Server::start();
    let dir = TempDir::new("failed_bodies_unwritable");
    let plan = dir.write("plan.yaml", plan(&server.url()));
    dir.write("taken", "a file, not a directory");
    let args = ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--failed-bodies", "taken/bodies"];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(common::stderr(&out).contains("taken/bodies"), "{}", describe(&out));
    assert_eq!(server.count(), 0);
}
