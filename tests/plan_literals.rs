//! Strings planrun uses as written (names of query, form, multipart and json fields; values an assertion
//! compares) refuse template syntax: before, `query: {"vu{{ vu }}": x}` sent `vu%7B%7B+vu+%7D%7D=` silently.

use crate::common;

use common::{describe, planrun, stderr, TempDir};

fn validate(dir: &TempDir, request: &str, assert: &str) -> std::process::Output {
    let plan = format!(
        "name: literals\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      - name: r\n        \
         request: {request}\n        assert: {assert}\n"
    );
    let path = dir.write("plan.yaml", plan);
    planrun(dir.path(), ["validate", path.to_str().unwrap()])
}

#[test]
fn template_syntax_where_nothing_is_rendered_is_a_plan_error_at_its_place() {
    let dir = TempDir::new("plan_literals");
    let url = "url: \"http://127.0.0.1:1/\"";
    let cases = [
        (format!("{{ {url}, query: {{ \"vu{{{{ vu }}}}\": x }} }}"), "[]", "a query name is not a template"),
        (format!("{{ {url}, method: POST, form: {{ \"f{{{{ vu }}}}\": x }} }}"), "[]", "a form name is not a template"),
        (
            format!("{{ {url}, method: POST, multipart: {{ \"m{{{{ vu }}}}\": x }} }}"),
            "[]",
            "a multipart field name is not a template",
        ),
        (
            format!("{{ {url}, method: POST, json: {{ a: {{ \"k{{{{ vu }}}}\": 1 }} }} }}"),
            "[]",
            "a json key is not a template",
        ),
        (format!("{{ {url} }}"), "[{ body_contains: \"{{ username }}\" }]", "body_contains is not a template"),
        (
            format!("{{ {url} }}"),
            "[{ jsonpath: { path: $.a, equals: [\"{{ vu }}\"] } }]",
            "jsonpath `equals` is not a template",
        ),
        (
            format!("{{ {url} }}"),
            "[{ header: { name: X-A, equals: \"{{ vu }}\" } }]",
            "header `equals` is not a template",
        ),
    ];
    for (request, assert, message) in cases {
        let out = validate(&dir, &request, assert);
        assert_eq!(out.status.code(), Some(2), "{request} {assert}:\n{}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains(message), "{request} {assert}: expected `{message}`:\n{err}");
        let line = if assert == "[]" { "plan.yaml:8:" } else { "plan.yaml:9:" };
        assert!(err.contains(line), "the error points at its line ({line}):\n{err}");
    }
}

#[test]
fn rendered_values_and_plain_names_still_validate() {
    let dir = TempDir::new("plan_literals_ok");
    let request = "{ url: \"http://127.0.0.1:1/?a={{ vu }}\", method: POST, query: { q: \"{{ vu }}\" }, form: { f: \"{{ iteration }}\" } }";
    let out = validate(&dir, request, "[{ body_contains: \"plain text\" }, { expr: \"{{ 'x' in response.body }}\" }]");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}
