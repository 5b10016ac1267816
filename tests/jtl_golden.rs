//! The JTL of a deterministic run equals a checked-in golden file once the volatile columns are masked, and
//! every JTL is strict RFC 4180 CSV with JMeter's 17 columns, whatever its text fields hold.
//!
//! To rewrite the golden file after a deliberate change:
//! `PLANRUN_UPDATE_GOLDEN=1 cargo test --test integration jtl_golden`, then check it by hand against
//! ../shared/jtl.md.

use crate::common;

use std::path::PathBuf;

use common::{rfc4180, run_ok, Server, TempDir, JTL_HEADER};

const PLAN: &str = r#"
name: golden
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: readers
    threads: 1
    loops: 2
    steps:
      - name: home
        request:
          url: /ok
          query: { it: "{{ iteration }}" }
      - name: send sms
        request:
          method: POST
          url: /accepted
          form: { to: "+70000000000", text: "hi {{ vu }}/{{ iteration }}" }
        assert:
          - status: 202
          - body_contains: "Accepted for delivery"
      - name: check, "quoted"
        request: { url: /ok }
        assert:
          - body_contains: 'a, "b"'
"#;

/// Columns whose values change from run to run.
const VOLATILE: [&str; 4] = ["timeStamp", "elapsed", "Latency", "Connect"];

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("golden").join("simple.jtl")
}

/// Masks the volatile columns and the server's port, keeping every field's quoting as written. sentBytes holds
/// the Host header, whose port is usually 5 digits: it is adjusted to what a 5-digit port would give.
fn mask(text: &str, port: u16) -> String {
    let records = rfc4180(text);
    let header: Vec<&str> = records[0].iter().map(|(f, _)| f.as_str()).collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let port_text = port.to_string();
    let mut out = String::new();
    for (i, record) in records.iter().enumerate() {
        let fields: Vec<String> = record
            .iter()
            .enumerate()
            .map(|(c, (value, quoted))| {
                let mut v = value.clone();
                if i > 0 {
                    if VOLATILE.iter().any(|n| col(n) == c) {
                        v = format!("<{}>", header[c]);
                    } else if c == col("URL") {
                        v = v.replace(&format!(":{port_text}/"), ":<PORT>/");
                    } else if c == col("sentBytes") {
                        let n: i64 = v.parse().unwrap();
                        v = (n + 5 - port_text.len() as i64).to_string();
                    }
                }
                if *quoted {
                    format!("\"{}\"", v.replace('"', "\"\""))
                } else {
                    v
                }
            })
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

#[test]
fn a_deterministic_run_matches_the_golden_jtl() {
    let server = Server::start();
    let dir = TempDir::new("jtl_golden");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let (_, jtl) = run_ok(&dir, &plan, &["--seed", "1"]);
    let masked = mask(&jtl.text, server.port());
    let path = golden_path();
    if std::env::var_os("PLANRUN_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &masked).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert_eq!(masked, golden, "the JTL differs from {}", path.display());
}

#[test]
fn every_row_is_rfc4180_with_17_columns_even_with_commas_and_quotes() {
    let server = Server::start();
    let dir = TempDir::new("jtl_rfc4180");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert!(!jtl.text.starts_with('\u{feff}'), "no BOM");
    assert!(!jtl.text.contains('\r'), "records end with \\n, and no field here holds CR");

    let records = rfc4180(&jtl.text);
    assert_eq!(records.len(), 1 + 6);
    let header: Vec<&str> = records[0].iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(header.join(","), JTL_HEADER);
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record.len(), 17, "record {i} has {} fields: {record:?}", record.len());
        for (field, quoted) in record {
            let needs = field.contains([',', '"', '\r', '\n']);
            assert_eq!(*quoted, needs, "record {i}: field {field:?} quoted={quoted}, as JMeter quotes: {needs}");
        }
    }

    // The csv crate reads the same fields.
    for row in jtl.labelled("check, \"quoted\"") {
        assert_eq!(row["success"], "false");
        let msg = &row["failureMessage"];
        assert!(msg.contains("body expected to contain") && msg.contains("a, ") && msg.contains("\"b"), "{msg:?}");
    }
    assert_eq!(jtl.labelled("check, \"quoted\"").len(), 2);
    let tricky = records.iter().filter(|r| r[2].0 == "check, \"quoted\"").count();
    assert_eq!(tricky, 2, "the label with a comma and quotes is one field");
}

/// jtl.md: failureMessage is "the first failed assertion's message, else empty" (what JMeter 5 writes). A sample
/// that failed without a failed assertion (an error status nobody asserted, a refused connection) has an empty
/// failureMessage; its reason is in responseCode and responseMessage.
#[test]
fn failure_message_is_empty_without_a_failed_assertion() {
    let server = Server::start();
    let dir = TempDir::new("jtl_failure_message");
    let plan = format!(
        r#"
name: no-assertions
defaults:
  base_url: "{}"
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: missing
        request: {{ url: /status/404 }}
      - name: refused
        request: {{ url: "{}/ok" }}
"#,
        server.url(),
        common::refused_url()
    );
    let plan = dir.write("plan.yaml", plan);
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    let missing = jtl.one("missing");
    assert_eq!((missing["responseCode"].as_str(), missing["success"].as_str()), ("404", "false"));
    let refused = jtl.one("refused");
    assert_eq!(refused["responseCode"], "Non HTTP response code: ConnectionRefused");
    assert_eq!(refused["success"], "false");
    assert_eq!(
        (missing["failureMessage"].as_str(), refused["failureMessage"].as_str()),
        ("", ""),
        "no assertion failed, so failureMessage is empty:\n{}",
        jtl.text
    );
}
