//! `-D name=value` for a property the plan neither declares nor reads: validate, dry-run and run each print
//! the same warning, with "did you mean", on stderr, and go on.

use crate::common;

use common::{describe, planrun, stderr, Server, TempDir};

fn plan(dir: &TempDir, base_url: &str) -> std::path::PathBuf {
    dir.write(
        "plan.yaml",
        format!(
            "name: warn\nproperties:\n  path: /a\n  threads: 1\ndefaults:\n  base_url: \"{base_url}\"\n\
             thread_groups:\n  - name: g\n    threads: \"{{{{ props.threads }}}}\"\n    loops: 1\n    steps:\n      \
             - name: get\n        request: {{ url: \"{{{{ props.path }}}}\" }}\n"
        ),
    )
}

const WARNING: &str = "warning: -D pth: the plan has no property `pth` and nothing reads `props.pth`; the value \
                       is not used\n  = help: did you mean `-D path=...`?\n";

#[test]
fn an_undeclared_property_is_warned_about_the_same_way_by_validate_dry_run_and_run() {
    let server = Server::start();
    let dir = TempDir::new("warn_unknown_property");
    let plan = plan(&dir, &server.url());
    let p = plan.to_str().unwrap();
    let validate = planrun(dir.path(), ["validate", p, "-D", "pth=/x"]);
    assert_eq!(validate.status.code(), Some(0), "{}", describe(&validate));
    assert_eq!(stderr(&validate), WARNING);
    let dry = planrun(dir.path(), ["dry-run", p, "-n", "1", "-D", "pth=/x"]);
    assert_eq!(dry.status.code(), Some(0), "{}", describe(&dry));
    assert_eq!(stderr(&dry), WARNING);
    assert_eq!(server.count(), 0, "dry-run sends nothing");
    let jtl = dir.join("out.jtl");
    let run = planrun(dir.path(), ["run", p, "--quiet", "-o", jtl.to_str().unwrap(), "-D", "pth=/x"]);
    assert_eq!(run.status.code(), Some(0), "the run goes on: {}", describe(&run));
    assert!(stderr(&run).starts_with(WARNING), "{}", describe(&run));
    let rows = common::read_jtl(&jtl);
    assert_eq!(rows.labelled("get").len(), 1);
    assert_eq!(server.count(), 1, "one request, to the declared path");
    assert_eq!(server.requests()[0].path(), "/a");
}

#[test]
fn the_value_of_a_misspelt_property_is_not_printed() {
    let dir = TempDir::new("warn_secret_value");
    let plan = plan(&dir, "http://127.0.0.1:1");
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap(), "-D", "pth=s3cret-value"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stderr(&out).contains("-D pth:"), "{}", describe(&out));
    assert!(!stderr(&out).contains("s3cret-value"), "{}", describe(&out));
}

#[test]
fn declared_or_read_properties_and_unrelated_names_get_no_did_you_mean_noise() {
    let dir = TempDir::new("warn_known_property");
    let plan = plan(&dir, "http://127.0.0.1:1{{ props.prefix }}");
    let p = plan.to_str().unwrap();
    // `path` is declared; `prefix` is not, but a template reads it, so it must come from -D.
    let out = planrun(dir.path(), ["validate", p, "-D", "path=/b", "-D", "prefix=/v1"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stderr(&out), "", "nothing to warn about");
    let out = planrun(dir.path(), ["validate", p, "-D", "prefix=/v1", "-D", "zzzzzz=1", "-D", "zzzzzz=2"]);
    assert_eq!(
        stderr(&out),
        "warning: -D zzzzzz: the plan has no property `zzzzzz` and nothing reads `props.zzzzzz`; the value is not \
         used\n  = help: the plan's properties: path, threads\n",
        "one warning per name, listing the properties when none is close"
    );
}

#[test]
fn warnings_are_printed_before_the_problems_of_an_invalid_plan() {
    let dir = TempDir::new("warn_invalid_plan");
    let plan = dir.write(
        "plan.yaml",
        "name: warn\nproperties:\n  path: /a\nthread_groups:\n  - name: g\n    threads: 0\n    steps: []\n",
    );
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap(), "-D", "pth=/x"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.starts_with("warning: -D pth:"), "{err}");
    assert!(err.contains("error: "), "{err}");
}

#[test]
fn a_property_read_but_neither_declared_nor_given_is_a_plan_error_before_anything_is_sent() {
    // Before, `{{ props.pth }}` with no such property passed validate and failed every request of the run.
    let server = Server::start();
    let dir = TempDir::new("undeclared_property_read");
    let url = format!("\"{}{{{{ props.pth }}}}\"", server.url());
    let body = format!(
        "name: p\nproperties: {{ path: /ok }}\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    \
         steps:\n      - name: get\n        request: {{ url: {url} }}\n"
    );
    let plan = dir.write("plan.yaml", body);
    let p = plan.to_str().unwrap();
    for command in ["validate", "run"] {
        let out = planrun(dir.path(), [command, p]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", describe(&out));
        let err = stderr(&out);
        assert!(
            err.contains("error: property `pth` is neither declared under `properties:` nor given with -D"),
            "{err}"
        );
        assert!(err.contains("plan.yaml:9:"), "{err}");
        assert!(err.contains("did you mean `props.path`?"), "{err}");
    }
    assert_eq!(server.count(), 0);
    // Given with -D, it is what the plan expects: no error and no warning.
    let jtl = dir.join("out.jtl");
    let out = planrun(dir.path(), ["run", p, "--quiet", "-o", jtl.to_str().unwrap(), "-D", "pth=/ok"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(!stderr(&out).contains("warning"), "{}", describe(&out));
    assert_eq!(server.count(), 1);
    assert_eq!(common::read_jtl(&jtl).rows.len(), 1);
}

/// One group of `shape` (its load keys) with a 400 ms duration, sending GET /ok to `base`.
fn cut_short_plan(dir: &TempDir, base: &str, shape: &str) -> std::path::PathBuf {
    let body = format!(
        "name: cut\ndefaults:\n  base_url: \"{base}\"\nthread_groups:\n  - name: g\n    {shape}\n    duration: 400ms\n    \
         think_time: 50ms\n    steps:\n      - name: get\n        request: {{ url: /ok }}\n"
    );
    dir.write("plan.yaml", body)
}

#[test]
fn a_duration_shorter_than_the_ramp_up_ends_the_group_and_warns_of_the_users_that_never_start() {
    let server = Server::start();
    let dir = TempDir::new("warn_duration_before_ramp_up");
    // Closed: four users over an hour; the 400 ms duration leaves the first one only. Without the warning,
    // validate announces four threads; without ending at the duration, the run would last 45 minutes (the
    // guard of `planrun` stops it after a minute).
    let plan = cut_short_plan(&dir, &server.url(), "threads: 4\n    ramp_up: 1h");
    let p = plan.to_str().unwrap();
    let warning = "warning: group `g`: its duration (400ms) ends it before its ramp_up (3600s) is over: only 1 of \
                   its 4 users start\n  = help: the last user starts 2700s in; make the duration longer than that, \
                   or ramp_up shorter\n";
    let validate = planrun(dir.path(), ["validate", p]);
    assert_eq!(validate.status.code(), Some(0), "{}", describe(&validate));
    assert_eq!(stderr(&validate), warning);
    let jtl = dir.join("closed.jtl");
    let run = planrun(dir.path(), ["run", p, "--quiet", "-o", jtl.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    assert!(stderr(&run).starts_with(warning), "{}", describe(&run));
    let rows = common::read_jtl(&jtl);
    assert!(!rows.rows.is_empty());
    assert!(rows.rows.iter().all(|r| r["threadName"] == "g 1-1" && r["allThreads"] == "1"), "{}", rows.text);
    assert_eq!(rows.rows.len(), server.count());

    // Staged and open: stages that last an hour end with the 400 ms duration too.
    let mut sent = server.count();
    for (i, (shape, expected)) in [
        (
            "stages:\n      - { duration: 1s, target: 10 }\n      - { duration: 1h, target: 10 }",
            Some("it reaches 4 of the 10 users they name"),
        ),
        ("arrival_rate: 20/s\n    stages:\n      - { duration: 1h, target: 20/s }", None),
    ]
    .into_iter()
    .enumerate()
    {
        let plan = cut_short_plan(&dir, &server.url(), shape);
        // A file of its own for each run: a second run to the same file would be warned that it replaces rows.
        let jtl = dir.join(&format!("staged-{i}.jtl"));
        let run = planrun(dir.path(), ["run", plan.to_str().unwrap(), "--quiet", "-o", jtl.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(0), "{shape}: {}", describe(&run));
        match expected {
            Some(text) => assert!(stderr(&run).contains(text), "{}", describe(&run)),
            None => assert!(!stderr(&run).contains("warning"), "the rate is reached: {}", describe(&run)),
        }
        let rows = common::read_jtl(&jtl).rows.len();
        assert!(rows > 0, "{shape}");
        assert_eq!(rows, server.count() - sent, "{shape}");
        sent = server.count();
    }
    // A rate ramp cut short is warned about too.
    let plan = cut_short_plan(&dir, &server.url(), "stages:\n      - { duration: 1s, target: 10/s }");
    let validate = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(validate.status.code(), Some(0), "{}", describe(&validate));
    assert!(stderr(&validate).contains("its rate reaches 4/s of the 10/s they name"), "{}", describe(&validate));
}
