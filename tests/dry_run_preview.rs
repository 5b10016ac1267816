//! `planrun dry-run` shows requests that read data sets (with each set's first row, said so in the output)
//! and captured values (as visible placeholders), and exits 2 when a request cannot be rendered at all,
//! naming the request, the expression and its plan line. Nothing is sent.

use crate::common;

use common::{describe, planrun, stderr, stdout, Server, TempDir};

fn dry_run(dir: &TempDir, plan: &std::path::Path, n: &str) -> std::process::Output {
    planrun(dir.path(), ["dry-run", plan.to_str().unwrap(), "-n", n])
}

#[test]
fn requests_reading_a_data_set_show_its_first_row() {
    let server = Server::start();
    let dir = TempDir::new("dry_run_data");
    dir.write("users.csv", "username,phone\nalice,+100\nbob,+200\n");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: data\ndefaults: {{ base_url: \"{}\" }}\ndata:\n  users: {{ file: users.csv, mode: random }}\n\
             thread_groups:\n  - name: g\n    threads: 2\n    loops: 2\n    steps:\n      - name: send\n        \
             request:\n          method: POST\n          url: \"/u/{{{{ users.username }}}}\"\n          form: {{ to: \
             \"{{{{ users.phone }}}}\" }}\n",
            server.url()
        ),
    );
    let out = dry_run(&dir, &plan, "2");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let shown = stdout(&out);
    assert!(shown.contains("# data set `users`: every request shows its first row"), "{shown}");
    assert_eq!(shown.matches("POST /u/alice HTTP/1.1").count(), 2, "both requests, first row:\n{shown}");
    assert_eq!(shown.matches("to=%2B100").count(), 2, "{shown}");
    assert!(!shown.contains("cannot render"), "{shown}");
    assert_eq!(server.count(), 0, "dry-run sends nothing");
}

#[test]
fn the_example_data_driven_plan_renders() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = planrun(root, ["dry-run", "plans/data-driven.yaml", "-n", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let shown = stdout(&out);
    assert!(shown.contains("&to=%2B79165550100&text=hello+Alice HTTP/1.1"), "{shown}");
}

#[test]
fn captured_values_are_shown_as_placeholders() {
    let server = Server::start();
    let dir = TempDir::new("dry_run_captured");
    let plan = dir.write(
        "plan.yaml",
        format!(
            r#"name: captured
defaults: {{ base_url: "{}" }}
thread_groups:
  - name: g
    threads: 1
    steps:
      - name: login
        request: {{ method: POST, url: /login }}
        extract:
          token: {{ jsonpath: "$.token" }}
          user: {{ jsonpath: "$.user" }}
          ids: {{ jsonpath: "$.ids", match_no: -1 }}
      - name: profile
        request:
          url: "/users/{{{{ user.id }}}}"
          query: {{ t: "{{{{ token }}}}" }}
          headers: {{ X-Token: "{{{{ token }}}}" }}
          json: {{ token: "{{{{ token }}}}", note: "for {{{{ user.name }}}}" }}
      - foreach: "{{{{ ids }}}}"
        as: id
        steps:
          - name: item
            request: {{ url: "/items/{{{{ id }}}}" }}
      - foreach: "{{{{ ['a1', 'c'] }}}}"
        as: known
        steps:
          - name: known
            request: {{ url: "/known/{{{{ known }}}}" }}
"#,
            server.url()
        ),
    );
    let out = dry_run(&dir, &plan, "4");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let shown = stdout(&out);
    for want in [
        "# values captured from responses are shown as <name: captured at run time>",
        "GET /users/<user.id: captured at run time>?t=<token: captured at run time> HTTP/1.1",
        "X-Token: <token: captured at run time>",
        r#"{"token":"<token: captured at run time>","note":"for <user.name: captured at run time>"}"#,
        "GET /items/<id: an item of the foreach list at run time> HTTP/1.1",
        "GET /known/a1 HTTP/1.1",
    ] {
        assert!(shown.contains(want), "dry-run shows {want:?}:\n{shown}");
    }
    assert!(!shown.contains("cannot render"), "{shown}");
    assert_eq!(server.count(), 0, "dry-run sends nothing");
}

#[test]
fn a_captured_value_the_dry_run_cannot_compute_with_is_not_a_plan_error() {
    let dir = TempDir::new("dry_run_captured_filter");
    let plan = dir.write(
        "plan.yaml",
        "name: c\ndefaults: { base_url: \"http://127.0.0.1:1\" }\nthread_groups:\n  - name: g\n    threads: 1\n    \
         steps:\n      - name: a\n        request: { url: /a }\n        extract: { n: { header: X-N } }\n      - name: \
         b\n        request: { url: \"/b/{{ n | int + 1 }}\" }\n",
    );
    let out = dry_run(&dir, &plan, "2");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        stdout(&out).contains("(cannot show before run time: `/b/{{ n | int + 1 }}` needs `n`:"),
        "{}",
        describe(&out)
    );
}

#[test]
fn a_request_that_cannot_render_exits_2_naming_request_expression_and_line() {
    let dir = TempDir::new("dry_run_unrenderable");
    let plan = dir.write(
        "plan.yaml",
        "name: broken\ndefaults: { base_url: \"http://127.0.0.1:1\" }\nthread_groups:\n  - name: g\n    threads: 1\n    \
         steps:\n      - name: fine\n        request: { url: /ok }\n      - name: divide\n        request:\n          \
         url: /d\n          query: { n: \"{{ 10 // (vu - 1) }}\" }\n",
    );
    let out = dry_run(&dir, &plan, "2");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let shown = stdout(&out);
    assert!(shown.contains("GET /ok HTTP/1.1"), "the other requests are still shown:\n{shown}");
    assert!(shown.contains("(cannot render: template error:"), "{shown}");
    let err = stderr(&out);
    assert!(
        err.starts_with("error: request `divide` cannot be rendered: `{{ 10 // (vu - 1) }}`: template error:"),
        "{err}"
    );
    assert!(err.contains("plan.yaml:12:24\n"), "the expression's line and column:\n{err}");
    assert!(err.ends_with("plan.yaml: 1 problem found; nothing was sent\n"), "reported once:\n{err}");
}

#[test]
fn a_space_rendered_into_a_path_is_percent_encoded_as_a_run_sends_it() {
    let dir = TempDir::new("dry_run_space");
    let plan = dir.write(
        "plan.yaml",
        "name: t\ndefaults: { base_url: \"http://127.0.0.1:1\" }\nthread_groups:\n  - name: g\n    threads: 1\n    \
         steps:\n      - name: spaced\n        request: { url: \"/k/{{ 'a b' }}\" }\n",
    );
    let out = dry_run(&dir, &plan, "1");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout(&out).contains("GET /k/a%20b HTTP/1.1"), "{}", describe(&out));
}

#[test]
fn a_request_target_the_client_would_refuse_is_a_plan_error_too() {
    // A target longer than the 65,534 bytes the HTTP client takes: a run fails it before sending.
    let dir = TempDir::new("dry_run_target");
    let long = "a".repeat(70_000);
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: t\ndefaults: {{ base_url: \"http://127.0.0.1:1\" }}\nvariables: {{ long: {long} }}\n\
             thread_groups:\n  - name: g\n    threads: 1\n    \
             steps:\n      - name: huge\n        request: {{ url: \"/k/{{{{ long }}}}\" }}\n"
        ),
    );
    let out = dry_run(&dir, &plan, "1");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stdout(&out).contains("(cannot render: invalid request target `/k/aaa"), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: request `huge` cannot be rendered: `/k/{{ long }}`: invalid request target"),
        "{err}"
    );
    assert!(err.contains("plan.yaml:9:26\n"), "{err}");
}
