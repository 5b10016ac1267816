//! `planrun import` of Postman collections: every collection of tests/fixtures/postman (newman's sample and
//! postman-to-k6's examples, v2.0 and v2.1) converts, matches its snapshot and validates; run by newman
//! (Postman's own command-line runner) and, imported, by planrun against one recording server, the requests
//! are the same in the same order; variables, environments, auth and test scripts are converted as said;
//! bad input is exit 2 with its line and column.
//!
//! Without newman the comparison says why and passes, unless PLANRUN_REQUIRE_NEWMAN=1 (set by .ci/run).

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::import_corpus::{self, converts_matches_its_snapshot_and_validates, multipart_parts};
use common::{describe, planrun, stderr, stdout, Recorded, Server, TempDir};
use serde_json::Value;

fn collections() -> Vec<PathBuf> {
    import_corpus::corpus("postman", |p| p.extension().is_some_and(|e| e == "json"))
}

#[test]
fn every_collection_converts_matches_its_snapshot_and_validates() {
    converts_matches_its_snapshot_and_validates(&collections(), |f| f.with_extension("yaml"));
}

/// Every request's URL pointed at `local` (`http://127.0.0.1:PORT`), in place.
fn localize(v: &mut Value, local: &str) {
    let port = local.rsplit(':').next().unwrap_or("80").to_string();
    let re_point = |raw: &str| -> String {
        let with_scheme = if raw.contains("://") { raw.to_string() } else { format!("http://{raw}") };
        let after = with_scheme.split_once("://").map(|(_, r)| r).unwrap_or("");
        let rest = after.find(['/', '?']).map(|i| &after[i..]).unwrap_or("/");
        format!("{local}{rest}")
    };
    match v {
        Value::Object(m) => {
            if let Some(req) = m.get_mut("request") {
                match req {
                    Value::String(u) => *u = re_point(u),
                    Value::Object(r) => match r.get_mut("url") {
                        Some(Value::String(u)) => *u = re_point(u),
                        Some(Value::Object(u)) => {
                            if let Some(Value::String(raw)) = u.get_mut("raw") {
                                *raw = re_point(raw);
                            }
                            u.insert("protocol".into(), "http".into());
                            u.insert("host".into(), serde_json::json!(["127", "0", "0", "1"]));
                            u.insert("port".into(), Value::String(port.clone()));
                        }
                        _ => {}
                    },
                    _ => {}
                }
            }
            for (k, child) in m.iter_mut() {
                if k != "request" && k != "response" {
                    localize(child, local);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| localize(c, local)),
        _ => {}
    }
}

/// The header names the collection sets on its requests, lower case.
fn header_names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(hs)) = m.get("header") {
                for h in hs {
                    if let Some(k) = h.get("key").and_then(Value::as_str) {
                        out.push(k.to_ascii_lowercase());
                    }
                }
            }
            // A saved response's request holds what Postman itself added (Postman-Token...).
            m.iter().filter(|(k, _)| *k != "response").for_each(|(_, c)| header_names(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| header_names(c, out)),
        _ => {}
    }
}

fn newman() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NEWMAN") {
        return Some(PathBuf::from(p));
    }
    Command::new("newman")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| PathBuf::from("newman"))
}

#[test]
fn an_imported_collection_sends_what_newman_sends() {
    let Some(newman) = newman() else {
        return common::skip("newman", "PLANRUN_REQUIRE_NEWMAN", "`newman` is not on PATH (npm install -g newman)");
    };
    let mut differences = Vec::new();
    for c in collections() {
        let stem = c.file_stem().and_then(|s| s.to_str()).expect("a name").to_string();
        let dir = TempDir::new("import-postman-send");
        let server = Server::start();
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&c).unwrap()).unwrap();
        localize(&mut doc, &server.url());
        let mut names = Vec::new();
        header_names(&doc, &mut names);
        names.retain(|n| !["content-length", "host", "connection", "content-type"].contains(&n.as_str()));
        names.sort();
        names.dedup();
        let file = dir.write("collection.json", doc.to_string());
        let run = Command::new(&newman)
            .args([
                "run",
                file.to_str().unwrap(),
                "--timeout-request",
                "10000",
                "--timeout",
                "60000",
                "--reporters",
                "cli",
            ])
            .current_dir(dir.path())
            .output()
            .expect("newman");
        let by_newman = server.requests();
        assert!(!by_newman.is_empty(), "{stem}: newman sent nothing: {}", describe(&run));

        let plan = dir.join("plan.yaml");
        let out = planrun(dir.path(), ["import", file.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{stem}: {}", describe(&out));
        let run = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
        assert!(matches!(run.status.code(), Some(0 | 1)), "{stem}: {}", describe(&run));
        let all = server.requests();
        let by_planrun = &all[by_newman.len()..];
        if by_newman.len() != by_planrun.len() {
            differences.push(format!(
                "{stem}: newman sent {}, planrun {}:\n  {:?}\n  {:?}",
                by_newman.len(),
                by_planrun.len(),
                by_newman.iter().map(|r| format!("{} {}", r.method, r.target)).collect::<Vec<_>>(),
                by_planrun.iter().map(|r| format!("{} {}", r.method, r.target)).collect::<Vec<_>>()
            ));
            continue;
        }
        for (a, b) in by_newman.iter().zip(by_planrun) {
            let at = format!("{stem}: {} {}", a.method, a.target);
            if (&a.method, &a.target) != (&b.method, &b.target) {
                differences.push(format!("{at} against {} {}", b.method, b.target));
                continue;
            }
            let ct = a.header("content-type").unwrap_or_default();
            if ct.starts_with("multipart/") {
                if multipart_parts(a) != multipart_parts(b) {
                    differences.push(format!("{at}: parts {:?} against {:?}", multipart_parts(a), multipart_parts(b)));
                }
            } else if ct.starts_with("application/x-www-form-urlencoded") {
                let form = |r: &Recorded| url::form_urlencoded::parse(&r.body).into_owned().collect::<Vec<_>>();
                if form(a) != form(b) {
                    differences.push(format!("{at}: form {:?} against {:?}", form(a), form(b)));
                }
            } else if a.body != b.body {
                differences.push(format!(
                    "{at}: body {:?} against {:?}",
                    String::from_utf8_lossy(&a.body),
                    String::from_utf8_lossy(&b.body)
                ));
            }
            if !a.body.is_empty()
                && a.header("content-type").map(|c| c.split(';').next())
                    != b.header("content-type").map(|c| c.split(';').next())
            {
                differences.push(format!(
                    "{at}: content-type {:?} against {:?}",
                    a.header("content-type"),
                    b.header("content-type")
                ));
            }
            for n in names.iter().map(String::as_str).chain(["authorization"]) {
                // Digest and OAuth 1 auth, which newman signs and planrun does not convert (it warns).
                let signed = a.headers_named(n).iter().any(|v| v.starts_with("Digest ") || v.starts_with("OAuth "));
                if n == "authorization" && signed {
                    continue;
                }
                if a.headers_named(n) != b.headers_named(n) {
                    differences.push(format!("{at}: {n} {:?} against {:?}", a.headers_named(n), b.headers_named(n)));
                }
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn variables_environments_auth_and_test_scripts_are_converted() {
    let dir = TempDir::new("import-postman-vars");
    let collection = r#"{
  "info": { "name": "shop", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
  "variable": [ { "key": "baseUrl", "value": "https://shop.example/v1" }, { "key": "sku", "value": "A-1" } ],
  "auth": { "type": "bearer", "bearer": [ { "key": "token", "value": "{{token}}", "type": "string" } ] },
  "item": [
    { "name": "orders", "item": [
      { "name": "create", "request": { "method": "POST", "url": "{{baseUrl}}/orders?sku={{sku}}",
        "header": [ { "key": "X-Request-Id", "value": "{{$guid}}" }, { "key": "X-Off", "value": "1", "disabled": true } ],
        "body": { "mode": "raw", "raw": "{\"sku\": \"{{sku}}\", \"note\": \"{{unset}}\"}", "options": { "raw": { "language": "json" } } } },
        "event": [ { "listen": "test", "script": { "exec": [
          "pm.test(\"created\", function () {", "    pm.response.to.have.status(201);", "});",
          "var jsonData = pm.response.json();", "pm.expect(jsonData.order.sku).to.eql(\"A-1\");",
          "pm.environment.set(\"id\", jsonData.id);" ] } } ] }
    ] },
    { "name": "open", "request": { "method": "GET", "url": "{{baseUrl}}/health", "auth": { "type": "noauth" } } }
  ]
}"#;
    let env = r#"{ "name": "staging", "values": [
  { "key": "token", "value": "t0k3n-staging", "type": "secret", "enabled": true },
  { "key": "sku", "value": "B-2", "enabled": true } ] }"#;
    let c = dir.write("shop.postman_collection.json", collection);
    let e = dir.write("staging.postman_environment.json", env);
    let out = planrun(dir.path(), ["import", c.to_str().unwrap(), "--postman-env", e.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let (yaml, err) = (stdout(&out), stderr(&out));
    // The leading {{baseUrl}} is the base URL; the environment's sku wins; the secret stays one.
    assert!(
        yaml.contains("base_url: https://shop.example\n") && yaml.contains("url: \"/v1/orders?sku={{ props.sku }}\""),
        "{yaml}"
    );
    assert!(yaml.contains("sku: B-2") && yaml.contains("value: t0k3n-staging\n    secret: true"), "{yaml}");
    assert!(
        yaml.contains("Authorization: \"Bearer {{ props.token }}\"") && yaml.contains("X-Request-Id: \"{{ uuid() }}\""),
        "{yaml}"
    );
    assert!(!yaml.contains("X-Off"), "a disabled header is not sent: {yaml}");
    assert!(yaml.contains("- transaction: orders"), "{yaml}");
    assert!(
        yaml.contains("- status: 201") && yaml.contains("path: $.order.sku") && yaml.contains("equals: A-1"),
        "{yaml}"
    );
    assert!(err.contains("`{{unset}}` is set by a script or nowhere: sent as written"), "{err}");
    assert!(err.contains("1 line(s) of its test script are not converted (the first: `pm.environment.set"), "{err}");
    // `noauth` stops the collection's auth.
    let health = yaml.find("name: open").expect("the second request");
    assert!(!yaml[health..].contains("Authorization"), "{yaml}");
    // --strict refuses what has warnings.
    let out = planrun(dir.path(), ["import", c.to_str().unwrap(), "--strict"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn bad_collections_are_exit_2_with_line_and_column() {
    let dir = TempDir::new("import-postman-bad");
    let schema = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json";
    for (name, text, expected) in [
        ("cut.json", format!("{{\"info\": {{\"schema\": \"{schema}\"}}, \"item\": ["), "1:"),
        ("v1.json", format!("{{\"info\": {{\"schema\": \"{schema}\"}}, \"requests\": []}}"), "no `item` list"),
        ("empty.json", format!("{{\"info\": {{\"schema\": \"{schema}\"}}, \"item\": []}}"), "nothing to convert"),
        (
            "deep.json",
            format!(
                "{{\"info\": {{\"schema\": \"{schema}\"}}, \"item\": {}{}}}",
                "[{\"item\": ".repeat(100),
                "[]}]".repeat(100)
            ),
            "recursion limit exceeded",
        ),
    ] {
        let file = dir.write(name, text);
        let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", describe(&out));
        assert!(stderr(&out).contains(expected), "{name}: {}", describe(&out));
        assert!(!stderr(&out).contains("panicked") && out.stdout.is_empty(), "{name}");
    }
    let c = dir.write(
        "ok.json",
        format!(
            "{{\"info\": {{\"schema\": \"{schema}\"}}, \"item\": [{{\"name\": \"a\", \"request\": \"http://x/\"}}]}}"
        ),
    );
    let e = dir.write("env.json", "{\"values\": [");
    let out = planrun(dir.path(), ["import", c.to_str().unwrap(), "--postman-env", e.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("not a Postman environment"), "{}", describe(&out));
}
