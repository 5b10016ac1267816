//! `schemas/plan.schema.json`: what `planrun schema` prints, checked in; the example plans validate against
//! it, bad plans do not, and on a table of plans the schema and the parser agree.

use crate::json_schema;

use std::path::{Path, PathBuf};
use std::process::Command;

use json_schema::Validator;
use planrun::plan::{PlanFile, PlanOptions};
use planrun::source::Source;
use serde_json::Value;

const CHECKED_IN: &str = "schemas/plan.schema.json";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join(CHECKED_IN)).expect("the checked-in schema");
    serde_json::from_str(&text).expect("the checked-in schema is JSON")
}

/// A plan's YAML as JSON, read with the scalar rules of planrun's own parser (YAML 1.2 booleans, numbers
/// with leading zeros or underscores kept as strings).
fn plan_json(text: &str) -> Value {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.underscored_numbers_as_strings = true;
    serde_saphyr::from_str_with_options(text, options).expect("the plan is YAML")
}

fn yaml_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .expect("a plan directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn schema_command_prints_the_checked_in_schema() {
    let out = Command::new(env!("CARGO_BIN_EXE_planrun")).arg("schema").output().expect("planrun runs");
    assert!(out.status.success(), "planrun schema failed: {}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).expect("the schema is UTF-8");
    let checked_in = std::fs::read_to_string(root().join(CHECKED_IN)).unwrap_or_default();
    assert!(
        printed == checked_in,
        "{CHECKED_IN} is not what `planrun schema` prints: regenerate it with `cargo run -- schema > {CHECKED_IN}`"
    );
}

#[test]
fn example_plans_validate() {
    let schema = schema();
    let validator = Validator::new(&schema);
    let plans: Vec<PathBuf> = [yaml_files("plans"), yaml_files("tests/plans/ok")].concat();
    assert!(plans.len() >= 5, "found only {plans:?}");
    for path in plans {
        let text = std::fs::read_to_string(&path).expect("a plan");
        let errors = validator.errors(&plan_json(&text));
        assert!(errors.is_empty(), "{} does not validate against {CHECKED_IN}:\n{}", path.display(), errors.join("\n"));
    }
}

#[test]
fn bad_plans_do_not_validate() {
    let schema = schema();
    let validator = Validator::new(&schema);
    // Each file of tests/plans/err, with a place the schema must name.
    let cases = [
        ("unknown_key", "/thread_groups/0: `treads` is not allowed"),
        ("wrong_type", "/defaults/follow_redirects"),
        ("bare_duration", "/defaults/timeout"),
        ("bad_status", "/thread_groups/0/steps/0/assert/0/status"),
        ("two_bodies", "/thread_groups/0/steps/0/request: `form` rules out"),
        ("missing_key", "`name` is required"),
        ("missing_name", ": `name` is required"),
        ("zero_threads", "/thread_groups/0/threads"),
        ("many_problems", "`rampup` is not allowed"),
    ];
    for (name, expected) in cases {
        let text = std::fs::read_to_string(root().join(format!("tests/plans/err/{name}.yaml"))).expect("a bad plan");
        let errors = validator.errors(&plan_json(&text));
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{name}.yaml: expected a problem with `{expected}`, found:\n{}",
            errors.join("\n")
        );
    }
}

/// A plan whose only group holds `group` (keys, ending in a comma) and `steps`.
fn plan(top: &str, group: &str, steps: &str) -> String {
    format!("name: t\n{top}\nthread_groups:\n  - {{ name: g, {group} steps: [ {steps} ] }}\n")
}

const GET: &str = "{ name: s, request: { url: 'http://127.0.0.1:1/' } }";

fn step(extra: &str) -> String {
    format!("{{ name: s, request: {{ url: 'http://127.0.0.1:1/' }}, {extra} }}")
}

fn request(extra: &str) -> String {
    format!("{{ name: s, request: {{ url: 'http://127.0.0.1:1/', {extra} }} }}")
}

/// Plans the parser and the schema must both accept (true) or both refuse (false). The data sets read
/// `users.csv`, written beside the plans.
fn table() -> Vec<(bool, String)> {
    let t1 = "threads: 1,";
    let users = "data: { users: { file: users.csv, ";
    vec![
        (true, plan("", t1, GET)),
        (true, plan("", t1, &request("method: post, json: { a: '{{ vu }}' }"))),
        (true, plan("", t1, &step("assert: [ { status: [200, '2xx'] }, { max_ms: 2s }, { max_ms: 50 } ]"))),
        (true, plan("", "threads: 2, ramp_up: 1s, loops: '{{ props.n }}', think_time: { uniform: [1ms, 2ms] },", GET)),
        (true, plan("", "threads: 1, duration: 1m, think_time: { gaussian: { mean: 1ms, stddev: 1ms } },", GET)),
        (true, plan("", "stages: [ { duration: 1s, target: 3 } ],", GET)),
        (true, plan("", "arrival_rate: 5/s, duration: 1s, max_threads: 3,", GET)),
        (true, plan("", "stages: [ { duration: 1s, target: 5/s } ], max_threads: 3,", GET)),
        (true, plan("", t1, &format!("{{ random: [ {{ weight: 2, steps: [ {GET} ] }}, {{ steps: [ {GET} ] }} ] }}"))),
        (true, plan("", t1, &format!("{{ while: '{{{{ vu }}}}', max: 2, steps: [ {GET} ] }}"))),
        (true, plan("", t1, &format!("{{ foreach: \"{{{{ [1, 2] }}}}\", as: x, steps: [ {GET} ] }}"))),
        (true, plan("", t1, &format!("{{ if: '{{{{ vu }}}}', steps: [ {GET} ], else: [ {{ think: 1ms }} ] }}"))),
        (
            true,
            plan("thresholds: { total: 'avg < 1s', s: [ 'p99.9 <= 2s', { check: 'max < 1s', delay: 1s } ] }", t1, GET),
        ),
        (true, plan("thresholds: { s: { check: 'error_rate < 1%', abort_on_fail: true } }", t1, GET)),
        (true, plan(&format!("{users}mode: random }} }}"), t1, GET)),
        (true, plan(&format!("{users}mode: unique, on_eof: stop_run }} }}"), t1, GET)),
        (true, plan(&format!("{users}mode: unique, groups: [g] }} }}"), t1, GET)),
        (true, plan("", t1, &step("extract: { id: { regex: 'id=(\\d+)', match_no: -1 }, c: { cookie: SID } }"))),
        (true, plan("", t1, &step("extract: { h: { header: Location, default: none }, j: { jsonpath: $.a } }"))),
        (true, plan("properties: { t: { value: abcd, secret: true } }", t1, GET)),
        (true, plan("variables: { v: { value: '{{ vu }}', secret: false } }", t1, GET)),
        (false, plan("", "treads: 1,", GET)),
        (false, plan("", t1, "{ think: 1s, name: pause }")),
        (false, plan("", t1, &request("form: { a: 1 }, json: { a: 1 }"))),
        (false, plan("", t1, &request("content_type: text/plain"))),
        (false, plan("", t1, &request("method: FETCH"))),
        (false, plan("", t1, &request("timeout: 10"))),
        (false, plan("", t1, &step("assert: [ { status: 200, max_ms: 10 } ]"))),
        (false, plan("", t1, &step("assert: [ { status: 6xx } ]"))),
        (false, plan("", t1, &step("extract: { id: { regex: 'a', jsonpath: $.a } }"))),
        (false, plan("", t1, &format!("{{ while: '{{{{ vu }}}}', steps: [ {GET} ] }}"))),
        (false, plan("", t1, &format!("{{ foreach: \"{{{{ [1] }}}}\", steps: [ {GET} ] }}"))),
        (false, plan("", t1, &format!("{{ loop: 0, steps: [ {GET} ] }}"))),
        (false, plan("", t1, &format!("{{ transaction: t, if: x, steps: [ {GET} ] }}"))),
        (false, plan("", "threads: 1, arrival_rate: 5/s, duration: 1s,", GET)),
        (false, plan("", "arrival_rate: 5/s,", GET)),
        (false, plan("", "threads: 1, max_threads: 5,", GET)),
        (false, plan("", "threads: 0,", GET)),
        (false, plan("", "", GET)),
        (false, plan("", t1, "")),
        (false, plan("thresholds: { total: [ 'p95 < 500' ] }", t1, GET)),
        (false, plan("thresholds: { total: [ 'latency < 1s' ] }", t1, GET)),
        (false, plan(&format!("{users}mode: unique, scope: per_thread }} }}"), t1, GET)),
        (false, plan(&format!("{users}mode: random, on_eof: stop_run }} }}"), t1, GET)),
        (false, plan(&format!("{users}mode: shuffled }} }}"), t1, GET)),
        (false, plan(&format!("{users}groups: [] }} }}"), t1, GET)),
        (false, plan(&format!("{users}groups: g }} }}"), t1, GET)),
        (false, plan("data: { vu: { file: users.csv } }", t1, GET)),
        (false, plan("defaults: { tls: { client_cert: users.csv } }", t1, GET)),
        (false, plan("properties: { t: { secret: true } }", t1, GET)),
        (false, plan("variables: { v: { value: x, secret: 'yes' } }", t1, GET)),
    ]
}

#[test]
fn schema_and_parser_agree() {
    let schema = schema();
    let validator = Validator::new(&schema);
    let dir = std::env::temp_dir().join(format!("planrun-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(dir.join("users.csv"), "name,phone\nann,1\nbob,2\n").expect("a data file");
    let opts = PlanOptions { overrides: vec![("n".into(), "2".into())], ..PlanOptions::default() };
    let mut disagreements = Vec::new();
    for (i, (expected, yaml)) in table().into_iter().enumerate() {
        let parsed = PlanFile::parse(Source::new(dir.join(format!("t{i}.yaml")), yaml.clone()));
        let parser_ok = parsed.and_then(|p| p.validate(&opts)).is_ok();
        let schema_errors = validator.errors(&plan_json(&yaml));
        if parser_ok != expected || schema_errors.is_empty() != expected {
            disagreements.push(format!(
                "#{i}: expected {}, parser {}, schema {:?}\n{yaml}",
                if expected { "valid" } else { "invalid" },
                if parser_ok { "valid" } else { "invalid" },
                schema_errors
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
}
