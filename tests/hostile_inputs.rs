//! Hostile inputs through the real binary: durations, counts and template arguments beyond what planrun can
//! hold, data files that are not files or have rows too long to hold, a plan with 100,000 problems, and a
//! `stub:` path that reads itself. Each one is a plan error (exit 2, every problem at its file:line:col) or a
//! failed sample, never a panic (exit 101) or a hang.

use crate::common;

use std::path::PathBuf;
use std::process::Output;

use common::{describe, planrun, read_jtl, stderr, Server, TempDir};

/// A plan with one thread group of one thread; `group` adds keys to the group, `steps` are its steps.
fn plan(top: &str, group: &str, steps: &str) -> String {
    format!("name: hostile\n{top}thread_groups:\n  - name: g\n    threads: 1\n{group}    steps:\n{steps}")
}

const GET: &str = "      - name: a\n        request: { url: \"http://127.0.0.1:1/\" }\n";

fn validate(dir: &TempDir, text: &str) -> (PathBuf, Output) {
    let path = dir.write("plan.yaml", text);
    let out = planrun(dir.path(), ["validate", "plan.yaml"]);
    (path, out)
}

/// Exit 2, no panic, and an error that contains `message` at a `plan.yaml:LINE:COL` where `token` is written.
fn assert_plan_error(out: &Output, plan: &str, token: &str, message: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{token}: {}", describe(out));
    assert!(!err.contains("panicked"), "{token}: {err}");
    let blocks: Vec<&str> = err.split("\nerror: ").collect();
    let found = blocks.iter().any(|block| {
        let Some(at) = block.lines().find_map(|l| l.trim_start().strip_prefix("--> plan.yaml:")) else {
            return false;
        };
        let mut parts = at.split(':').map(|n| n.parse::<usize>().unwrap_or(0));
        let (line, col) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        let written = plan.lines().nth(line.wrapping_sub(1)).map(|l| l.chars().skip(col.wrapping_sub(1)).collect());
        let points = written.is_some_and(|w: String| w.trim_start_matches(['"', '\'']).starts_with(token));
        points && block.contains(message)
    });
    assert!(found, "expected `{message}` at `{token}`:\n{plan}\n{err}");
}

#[test]
fn durations_beyond_the_limit_are_plan_errors_at_their_place() {
    let dir = TempDir::new("hostile_durations");
    let think = |t: &str| format!("      - think: {t}\n");
    let cases: Vec<(String, &str, &str)> = vec![
        (plan("", "    duration: 100000000000000000000h\n", GET), "100000000000000000000h", "365 days"),
        (plan("", "    duration: 15000000000000000000s\n", GET), "15000000000000000000s", "365 days"),
        (plan("", "    loops: 1\n    duration: 8760h1ns\n", GET), "8760h1ns", "365 days"),
        (plan("defaults: { timeout: 1e20s }\n", "", GET), "1e20s", "unknown unit `e`"),
        (plan("defaults: { timeout: 9000h }\n", "", GET), "9000h", "365 days"),
        (plan("", "    ramp_up: 99999999999999999999999ms\n", GET), "99999999999999999999999ms", "365 days"),
        (plan("", "    think_time: 1000000000000h\n", GET), "1000000000000h", "365 days"),
        (plan("", "    think_time: { uniform: [1ms, 9000h] }\n", GET), "9000h", "365 days"),
        (plan("", "    think_time: { gaussian: { mean: 1ms, stddev: 9e9h } }\n", GET), "9e9h", "unknown unit"),
        (
            plan("", "    think_time: { gaussian: { mean: 9999999999h, stddev: 1ms } }\n", GET),
            "9999999999h",
            "365 days",
        ),
        (plan("", "", &format!("{GET}{}", think("18446744073709551616s"))), "18446744073709551616s", "365 days"),
        (plan("", "", &format!("{GET}{}", think("{ uniform: [1ns, 1e400s] }"))), "1e400s", "unknown unit"),
        (plan("", "", &GET.replace("/\" }", "/\", timeout: 5e5h }")), "5e5h", "unknown unit"),
        (
            plan("thresholds: { total: [\"p95 < 1e20s\"] }\n", "", GET),
            "p95 < 1e20s",
            "threshold `p95 < 1e20s`: unknown unit `e`",
        ),
        (
            plan("thresholds: { total: [\"p99 < 1e19s1e19s\"] }\n", "", GET),
            "p99 < 1e19s1e19s",
            "threshold `p99 < 1e19s1e19s`",
        ),
        (
            plan("thresholds: { total: [\"mean < 100000000000000000000h\"] }\n", "", GET),
            "mean < 100000000000000000000h",
            "365 days",
        ),
        (plan("thresholds: { total: [{ check: \"max < 1s\", delay: 8761h }] }\n", "", GET), "8761h", "365 days"),
    ];
    for (text, token, message) in &cases {
        let (_, out) = validate(&dir, text);
        assert_plan_error(&out, text, token, message);
    }
}

#[test]
fn stages_are_bounded_one_by_one_and_in_total() {
    let dir = TempDir::new("hostile_stages");
    let staged =
        |stages: &str| format!("name: s\nthread_groups:\n  - name: g\n    stages: {stages}\n    steps:\n{GET}");
    let one = staged("[ { duration: 1e30h, target: 1 } ]");
    let (_, out) = validate(&dir, &one);
    assert_plan_error(&out, &one, "1e30h", "unknown unit");
    let one = staged("[ { duration: 10000h, target: 1 } ]");
    let (_, out) = validate(&dir, &one);
    assert_plan_error(&out, &one, "10000h", "365 days");
    let total = staged("[ { duration: 5000h, target: 1 }, { duration: 5000h, target: 0 } ]");
    let (_, out) = validate(&dir, &total);
    assert_plan_error(&out, &total, "[ { duration: 5000h", "stages add up to more than the limit of 365 days");
    let open = "name: s\nthread_groups:\n  - name: g\n    stages: [ { duration: 9000h, target: 5/s } ]\n    steps:\n";
    let open = format!("{open}{GET}");
    let (_, out) = validate(&dir, &open);
    assert_plan_error(&out, &open, "9000h", "365 days");
}

/// `duration: 15000000000000000000s` validated, and `run` then panicked adding it to the clock.
#[test]
fn run_refuses_a_duration_the_clock_cannot_hold_and_sends_nothing() {
    let server = Server::start();
    let dir = TempDir::new("hostile_run_duration");
    let text = plan(
        "",
        "    duration: 15000000000000000000s\n",
        &format!("      - name: a\n        request: {{ url: \"{}/ok\" }}\n", server.url()),
    );
    dir.write("plan.yaml", &text);
    let out = planrun(dir.path(), ["run", "plan.yaml", "-o", "out.jtl"]);
    assert_plan_error(&out, &text, "15000000000000000000s", "365 days");
    assert_eq!(server.count(), 0, "nothing was sent");
}

/// The longest duration a plan may write, as a group's duration and a request's timeout: the run's deadlines
/// are that far away, and the run ends when its loops do.
#[test]
fn the_longest_durations_run() {
    let server = Server::start();
    let dir = TempDir::new("hostile_longest");
    let steps = format!(
        "      - name: a\n        request: {{ url: \"{}/ok\", timeout: 8760h }}\n      - think: 1ns\n",
        server.url()
    );
    let text =
        plan("defaults: { timeout: 525600m }\n", "    loops: 3\n    duration: 8760h\n    ramp_up: 8760h\n", &steps);
    dir.write("plan.yaml", &text);
    let out = planrun(dir.path(), ["run", "plan.yaml", "-o", "out.jtl"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), 3, "{}", jtl.text);
    assert_eq!(server.count(), 3, "one request per row");
    assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
}

#[test]
fn counts_out_of_range_are_plan_errors_not_cut_to_fit() {
    let dir = TempDir::new("hostile_counts");
    let block = |b: &str| format!("{GET}      - {b}\n        steps: [ {{ think: 1ms }} ]\n");
    let cases: Vec<(String, &str, &str)> = vec![
        (plan("", "", GET).replace("threads: 1", "threads: 10000000000"), "10000000000", "threads must be at most 1000000, got 10000000000"),
        (plan("", "", GET).replace("threads: 1", "threads: 1000001"), "1000001", "threads must be at most 1000000"),
        (plan("", "", GET).replace("threads: 1", "threads: 18446744073709551616"), "18446744073709551616", "threads must be at most 1000000, got a number above"),
        (plan("", "", GET).replace("threads: 1", "threads: \"{{ 10 ** 30 }}\""), "{{ 10 ** 30 }}", "threads must be at most 1000000"),
        (plan("", "", GET).replace("threads: 1", "threads: \"99999999999999999999999999999999999999999\""), "99999999999999999999999999999999999999999", "threads must be at most"),
        (plan("", "    loops: 10000000001\n", GET), "10000000001", "loops must be at most 1000000000"),
        (plan("", "", &block("loop: 1000000000000")), "1000000000000", "loop must be at most 1000000000"),
        (plan("", "", &block("while: \"{{ true }}\"\n        max: 4294967296")), "4294967296", "max must be at most 1000000000"),
        (plan("defaults: { max_body: 99999999999 }\n", "", GET), "99999999999", "max_body must be at most 1073741824"),
        (
            plan("", "", &GET.replace("}\n", "}\n        assert: [ { max_ms: 99999999999999 } ]\n")),
            "99999999999999",
            "max_ms must be at most 31536000000",
        ),
        (
            plan("", "", &format!("{GET}      - random:\n          - {{ weight: 1000001, steps: [ {{ think: 1ms }} ] }}\n")),
            "1000001",
            "weight must be at most 1000000",
        ),
        (
            "name: o\nthread_groups:\n  - name: g\n    arrival_rate: 1/s\n    duration: 1s\n    max_threads: 4294967296\n    steps:\n".to_string() + GET,
            "4294967296",
            "max_threads must be at most 1000000",
        ),
        (
            "name: c\nthread_groups:\n  - name: g\n    stages: [ { duration: 1s, target: 5000000 } ]\n    steps:\n".to_string() + GET,
            "5000000",
            "target must be at most 1000000",
        ),
    ];
    for (text, token, message) in &cases {
        let (_, out) = validate(&dir, text);
        assert_plan_error(&out, text, token, message);
    }
    // The weights of one `random` add up to more than its counter holds.
    let branches: String = (0..4296).map(|_| "          - { weight: 1000000, steps: [ { think: 1ms } ] }\n").collect();
    let text = plan("", "", &format!("{GET}      - random:\n{branches}"));
    let (_, out) = validate(&dir, &text);
    assert_plan_error(&out, &text, "- { weight", "weights of `random` add up to more than 4294967295");
}

#[test]
fn counts_at_their_limits_validate() {
    let dir = TempDir::new("hostile_counts_ok");
    let text = plan(
        "defaults: { max_body: 1073741824 }\n",
        "    loops: 1000000000\n",
        &format!("{GET}      - loop: 1000000000\n        steps: [ {{ think: 1ns }} ]\n      - random:\n          - {{ weight: 1000000, steps: [ {{ think: 1ns }} ] }}\n"),
    )
    .replace("threads: 1", "threads: 1000000");
    let (_, out) = validate(&dir, &text);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(common::stdout(&out).contains("1000000 thread(s)"), "{}", describe(&out));
}

/// Template functions over numbers they cannot use fail their sample with the reason; nothing is sent for
/// them, every iteration still writes its rows, and the run completes.
#[test]
fn template_functions_over_hostile_numbers_fail_the_sample_not_the_user() {
    let server = Server::start();
    let dir = TempDir::new("hostile_templates");
    let calls = [
        "random_float(-1e308, 1e308)",
        "random_float(0, 1e308 * 10)",
        "random_float(0, 1e308 + 1e308)",
        "random_int(9223372036854775807, -9223372036854775808)",
        "random_digits(10000000000000000000)",
        "random_string(1048577)",
        "random_choice([])",
        "env('A=B')",
        "timestamp('%Q')",
    ];
    let mut steps = String::new();
    for (i, call) in calls.iter().enumerate() {
        steps.push_str(&format!(
            "      - name: bad{i}\n        request: {{ url: \"{}/ok?v={{{{ {call} }}}}\" }}\n",
            server.url()
        ));
    }
    steps.push_str(&format!(
        "      - name: good\n        request: {{ url: \"{}/ok?v={{{{ random_int(-9223372036854775808, 9223372036854775807) }}}}\" }}\n",
        server.url()
    ));
    dir.write("plan.yaml", plan("", "    loops: 2\n", &steps));
    let out = planrun(dir.path(), ["run", "plan.yaml", "-o", "out.jtl"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), 2 * (calls.len() + 1), "every step of both iterations has its row:\n{}", jtl.text);
    for (i, call) in calls.iter().enumerate() {
        let function = call.split('(').next().unwrap_or_default();
        for row in jtl.labelled(&format!("bad{i}")) {
            assert_eq!(row["success"], "false", "{call}: {row:?}");
            assert!(row["responseMessage"].contains(function), "{call}: {row:?}");
        }
    }
    assert!(jtl.labelled("good").iter().all(|r| r["success"] == "true"), "{}", jtl.text);
    assert_eq!(server.count(), 2, "only the good step sent requests");
}

#[test]
fn stub_files_read_durations_like_plans_and_bound_them() {
    let dir = TempDir::new("hostile_stub");
    dir.write("ok.yaml", "routes:\n  - path: /x\n    latency: { uniform: [0.5ms, 1.5ms] }\n  - path: /y\n    latency: { fixed: 250ns }\n");
    let text = plan("stub: ok.yaml\n", "", GET);
    let (_, out) = validate(&dir, &text);
    assert_eq!(out.status.code(), Some(0), "fractions and ns are durations in stubs too: {}", describe(&out));
    for (bad, message) in [
        ("routes:\n  - path: /x\n    latency: { fixed: 100000000000000000000h }\n", "365 days"),
        ("routes:\n  - path: /x\n    latency: { median: 1ms, p99: 18446744073709551616s }\n", "365 days"),
        ("routes:\n  - path: /x\n    latency: { uniform: [1ms, 1e20s] }\n", "unknown unit `e`"),
        ("workers: 10000000000000000000\nroutes: []\n", "above the limit of 1000000"),
    ] {
        dir.write("bad.yaml", bad);
        let out = planrun(dir.path(), ["stub", "bad.yaml", "--listen", "127.0.0.1:0"]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains("bad.yaml:") && err.contains(message) && !err.contains("panicked"), "{bad}: {err}");
        let (_, out) = validate(&dir, &plan("stub: bad.yaml\n", "", GET));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", describe(&out));
        assert!(stderr(&out).contains(message), "{bad}: {}", describe(&out));
    }
}

/// `stub:` was substituted by hand: a property reading itself looped forever, and filters rendered as nothing.
#[test]
fn a_stub_path_that_reads_itself_is_a_plan_error_not_a_hang() {
    let dir = TempDir::new("hostile_stub_self");
    let text = plan("stub: \"{{ props.s }}\"\nproperties:\n  s: \"{{ props.s }}\"\n", "", GET);
    let (_, out) = validate(&dir, &text);
    assert_plan_error(&out, &text, "{{ props.s }}", "cannot render stub: undefined value");
    let out = planrun(dir.path(), ["validate", "plan.yaml", "-D", "s={{ props.s }}"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("stub file `{{ props.s }}` not found"), "an override is text: {}", describe(&out));
}

#[test]
fn a_stub_path_renders_filters_and_functions_like_every_load_time_value() {
    let dir = TempDir::new("hostile_stub_filters");
    std::fs::create_dir_all(dir.join("stubs")).expect("a stubs dir");
    dir.write("stubs/kannel.yaml", "routes:\n  - path: /x\n");
    let top =
        "stub: \"{{ props.dir | lower }}/{{ props.name ~ '.yaml' }}\"\nproperties:\n  dir: STUBS\n  name: kannel\n";
    let (_, out) = validate(&dir, &plan(top, "", GET));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = planrun(dir.path(), ["validate", "plan.yaml", "-D", "name=nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("stub file `stubs/nope.yaml` not found"), "{}", describe(&out));
}

/// A plan reading `file` as a data set, its requests reading a column of it.
fn data_plan(file: &str) -> String {
    plan(
        &format!("data:\n  rows: {{ file: \"{file}\" }}\n"),
        "",
        "      - name: a\n        request: { url: \"http://127.0.0.1:1/?p={{ rows.phone }}\" }\n",
    )
}

/// Makes a FIFO with mkfifo(1); nothing ever writes to it.
fn fifo(dir: &TempDir, name: &str) -> PathBuf {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
    path
}

#[test]
fn a_data_file_that_is_not_a_regular_file_is_a_plan_error_not_a_hang() {
    let dir = TempDir::new("hostile_data_kinds");
    fifo(&dir, "pipe.csv");
    std::fs::create_dir_all(dir.join("folder.csv")).expect("a directory");
    let mut cases = vec![("pipe.csv", "is a FIFO (named pipe)"), ("folder.csv", "is a directory")];
    if std::path::Path::new("/dev/zero").exists() {
        cases.push(("/dev/zero", "is a character device"));
    }
    for (file, message) in cases {
        let text = data_plan(file);
        let (_, out) = validate(&dir, &text);
        assert_plan_error(&out, &text, file, message);
        let out = planrun(dir.path(), ["run", "plan.yaml", "-o", "out.jtl"]);
        assert_plan_error(&out, &text, file, message);
    }
    // A multipart part is read whole when the plan loads: the same rule.
    let text = plan("", "", "      - name: a\n        request:\n          url: \"http://127.0.0.1:1/\"\n          multipart: { f: { file: pipe.csv } }\n");
    let (_, out) = validate(&dir, &text);
    assert_plan_error(&out, &text, "pipe.csv", "is a FIFO (named pipe), not a regular file");
}

/// A row is read up to 1 MiB of the file: one row past it is refused at its line; one at it is read.
#[test]
fn a_data_row_longer_than_the_limit_is_a_plan_error_naming_file_and_line() {
    let dir = TempDir::new("hostile_data_rows");
    const MAX_ROW: usize = 1 << 20;
    // Row 4 takes MAX_ROW + 1 bytes of the file with its line break; row 3 exactly MAX_ROW.
    let at_limit = format!("2,{}\n", "y".repeat(MAX_ROW - 3));
    let over = format!("3,{}\n", "x".repeat(MAX_ROW - 2));
    assert_eq!((at_limit.len(), over.len()), (MAX_ROW, MAX_ROW + 1));
    dir.write("long.csv", format!("phone,name\n1,a\n{at_limit}{over}4,d\n"));
    let text = data_plan("long.csv");
    let (_, out) = validate(&dir, &text);
    assert_plan_error(&out, &text, "long.csv", "long.csv:4: row is longer than the limit of 1 MiB (1048576 bytes)");

    dir.write("ok.csv", format!("phone,name\n1,a\n{at_limit}"));
    let (_, out) = validate(&dir, &data_plan("ok.csv"));
    assert_eq!(out.status.code(), Some(0), "a row at the limit is read: {}", describe(&out));

    // One line and no line break, several times the limit: the reader stops at the limit, not at the end.
    dir.write("one-line.csv", format!("phone\n{}", "9".repeat(3 * MAX_ROW)));
    let text = data_plan("one-line.csv");
    let (_, out) = validate(&dir, &text);
    assert_plan_error(&out, &text, "one-line.csv", "one-line.csv:2: row is longer than the limit of 1 MiB");
}

/// Rendering every problem of a plan took time quadratic in their number (each one's line was found by
/// scanning the file from its start): 100,000 problems are all reported, within the test guard's minute.
#[test]
#[ignore = "scale test: .ci/run runs it (cargo test -- --ignored)"]
fn a_plan_with_100k_problems_reports_every_one() {
    let dir = TempDir::new("hostile_100k");
    const N: usize = 100_000;
    let keys: String = (0..N).map(|i| format!("    zz{i}: 1\n")).collect();
    let text = plan("", &keys, GET);
    let (_, out) = validate(&dir, &text);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out).chars().take(2000).collect::<String>());
    let err = stderr(&out);
    assert_eq!(err.lines().filter(|l| l.starts_with("error: unknown key `zz")).count(), N);
    assert_eq!(err.lines().filter(|l| l.trim_start().starts_with("--> plan.yaml:")).count(), N);
    let last = format!("--> plan.yaml:{}:5", N + 4);
    assert!(err.contains(&last), "the last problem is at its own line: {last}");
    assert!(
        err.ends_with(&format!("plan.yaml: {N} problems found; nothing was sent\n")),
        "{}",
        &err[err.len() - 200..]
    );
}

/// Each variable sees the ones before it: the set of names was copied for every variable, and every unknown
/// name was compared with all of them, so thousands of variables with as many typos took minutes.
#[test]
#[ignore = "scale test: .ci/run runs it (cargo test -- --ignored)"]
fn many_variables_with_as_many_unknown_names_report_in_linear_time() {
    let dir = TempDir::new("hostile_variables");
    const N: usize = 20_000;
    let variables: String = (0..N).map(|i| format!("  v{i}: \"{{{{ nope{i} }}}}\"\n")).collect();
    let text = plan(&format!("variables:\n{variables}"), "", GET);
    let (_, out) = validate(&dir, &text);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out).chars().take(2000).collect::<String>());
    let err = stderr(&out);
    assert_eq!(err.lines().filter(|l| l.starts_with("error: unknown name `nope")).count(), N);
    assert!(err.contains("= help: names available here: group, iteration, props, vu\n"), "the first ones list names");
    assert!(err.contains("it is none of the 1001 names that can be read here"), "past 1000 names, no list");
}

#[test]
fn an_endless_plan_or_stub_file_is_refused_at_a_size_limit() {
    let dir = TempDir::new("endless_plan");
    let out = planrun(dir.path(), ["validate", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("larger than the limit of 16 MiB"), "{}", describe(&out));
    let plan = dir.write("plan.yaml", plan("stub: /dev/zero\n", "    loops: 1\n", GET));
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr(&out).contains("stub file `/dev/zero` is a character device, not a regular file"),
        "{}",
        describe(&out)
    );
}
