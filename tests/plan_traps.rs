//! Small traps a new user fell into, each now a clear answer: booleans from `-D`, a JMeter-style JSONPath,
//! a threshold on a label no step has.

use crate::common;

use common::{describe, planrun, stderr, Server, TempDir};

#[test]
fn cookies_and_follow_redirects_come_from_properties_and_d() {
    let server = Server::start();
    let dir = TempDir::new("traps_booleans");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: booleans\nproperties:\n  follow: \"true\"\ndefaults:\n  base_url: \"{}\"\n  follow_redirects: \
             \"{{{{ props.follow }}}}\"\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      \
             - name: r\n        request: {{ url: /redirect }}\n",
            server.url()
        ),
    );
    let (_, jtl) = common::run_ok(&dir, &plan, &["-D", "follow=false"]);
    assert_eq!(jtl.one("r")["responseCode"], "302", "-D follow=false turned following off");
    assert_eq!(server.count(), 1);
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap(), "-D", "follow=maybe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("follow_redirects must be true or false, got `maybe`"), "{}", describe(&out));
}

fn validate_step(dir: &TempDir, top: &str, assert: &str) -> std::process::Output {
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: traps\n{top}thread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      - name: send\n        \
             request: {{ url: \"http://127.0.0.1:1/\" }}\n        assert: {assert}\n"
        ),
    );
    planrun(dir.path(), ["validate", plan.to_str().unwrap()])
}

#[test]
fn a_jmeter_style_jsonpath_gets_the_bracketed_form_as_its_hint() {
    let dir = TempDir::new("traps_jsonpath");
    let out = validate_step(&dir, "", "[{ jsonpath: { path: $.headers.Content-Type, equals: x } }]");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("`$.headers['Content-Type']`"), "{}", describe(&out));
}

#[test]
fn a_threshold_on_a_label_no_step_has_is_a_plan_error() {
    let dir = TempDir::new("traps_threshold");
    let out = validate_step(&dir, "thresholds:\n  sned: \"p95 < 1s\"\n", "[]");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("threshold on `sned`, which no step has"), "{err}");
    assert!(err.contains("did you mean `send`?"), "{err}");
    let out = validate_step(&dir, "thresholds:\n  send: \"p95 < 1s\"\n  total: \"p99 < 2s\"\n", "[]");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn validate_counts_the_requests_inside_blocks() {
    let dir = TempDir::new("traps_count");
    let plan = dir.write(
        "plan.yaml",
        "name: blocks\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      - name: a\n        \
         request: { url: \"http://127.0.0.1:1/\" }\n      - transaction: t\n        steps:\n          - name: b\n            \
         request: { url: \"http://127.0.0.1:1/\" }\n          - loop: 2\n            steps:\n              - name: c\n                \
         request: { url: \"http://127.0.0.1:1/\" }\n      - if: \"{{ vu == 1 }}\"\n        steps:\n          - name: d\n            \
         request: { url: \"http://127.0.0.1:1/\" }\n        else:\n          - name: e\n            request: { url: \"http://127.0.0.1:1/\" }\n",
    );
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(common::stdout(&out).contains("5 request step(s)"), "{}", describe(&out));
}
