//! `--failed-bodies DIR` and `--json-failed-bodies`: the bodies of failed responses kept (64 KiB each,
//! secrets masked) as files named by sample and in the JSON lines; nothing for the samples that passed.

use crate::common;
use crate::json_schema;

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

#[test]
fn bodies_past_the_cap_are_counted_not_kept() {
    let server = Server::start();
    let dir = TempDir::new("failed_bodies_cap");
    // 2 users x 2 loops x 2 failed steps: 8 failed samples, 3 bodies kept.
    let plan = dir.write("plan.yaml", plan(&server.url()));
    let args =
        ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--failed-bodies", "bodies", "--failed-bodies-max", "3"];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(server.count(), 12);
    assert_eq!(jtl.rows.len(), 12);
    assert_eq!(jtl.rows.iter().filter(|r| r["success"] == "false").count(), 8);
    let files = std::fs::read_dir(dir.join("bodies")).unwrap().count();
    assert_eq!(files, 3, "the first 3 bodies");
    let err = common::stderr(&out);
    let said =
        "planrun: --failed-bodies: 5 more failed responses' bodies not kept: past the first 3 (--failed-bodies-max)\n";
    assert!(err.contains(said), "{err}");
}

#[test]
fn failed_samples_name_the_data_rows_they_used() {
    let server = Server::start();
    let dir = TempDir::new("failed_bodies_rows");
    dir.write("recipients.csv", "phone,name\n3001,Ann\n3002,Bob\n3003,Cid\n3004,Dee\n");
    let text = format!(
        r#"name: rows
defaults:
  base_url: "{}"
  cookies: false
data:
  recipients:
    file: recipients.csv
thread_groups:
  - name: g
    threads: 2
    loops: 3
    steps:
      - name: echo
        request:
          url: /echo-cookie
          headers: {{ Cookie: "p={{{{ recipients.phone }}}}" }}
        assert: [ {{ body_contains: nothing }} ]
"#,
        server.url()
    );
    let plan = dir.write("plan.yaml", text);
    let args = ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--failed-bodies", "bodies", "--http-debug", "--quiet"];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(server.count(), 6);
    assert_eq!(read_jtl(&dir.join("out.jtl")).rows.len(), 6);

    // Six rows from one cursor over four: rows 1 to 4, then 1 and 2 again.
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(dir.join("bodies")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let row: u64 = name
            .strip_suffix(".body")
            .and_then(|n| n.rsplit_once("-recipients."))
            .and_then(|(_, r)| r.parse().ok())
            .unwrap_or_else(|| panic!("{name} names the set and the row"));
        let body = std::fs::read_to_string(dir.join("bodies").join(&name)).unwrap();
        assert_eq!(body, format!("p=300{row}"), "{name} holds the body of row {row}");
        rows.push(row);
    }
    rows.sort();
    assert_eq!(rows, [1, 1, 2, 2, 3, 4]);

    let err = common::stderr(&out);
    let shown: Vec<&str> = err.split("--- http-debug: ").skip(1).collect();
    assert_eq!(shown.len(), 6, "{err}");
    for text in shown {
        let row = text.split("\nData: recipients row ").nth(1).and_then(|r| r.split('\n').next());
        let row = row.unwrap_or_else(|| panic!("the exchange names its data row: {text}"));
        assert!(text.contains(&format!("\nCookie: p=300{row}\n")), "row {row}: {text}");
    }
}
