//! A panic inside a virtual user (a planrun bug) is a failed sample that says so, the user goes on, the
//! summary counts it, and the exit code is not 0. The panic comes from `test_panic(true)`, a template
//! function that debug builds register when `PLANRUN_TEST_PANIC` is set.

use crate::common;

use std::process::{Command, Stdio};

use common::{read_jtl, LoadRun, Server, TempDir};

/// Runs `planrun run PLAN -o out.jtl --quiet` with the test hook on; returns the exit code and stdout.
fn run_with_hook(dir: &TempDir, plan: &str) -> (Option<i32>, String, String) {
    let plan = dir.write("plan.yaml", plan);
    let out = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"])
        .current_dir(dir.path())
        .env("PLANRUN_TEST_PANIC", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run planrun");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_panic_while_making_a_request_is_a_failed_sample_and_the_user_goes_on() {
    let server = Server::start();
    let dir = TempDir::new("internal_request");
    let steps = "      - name: r\n        request: { url: \"/ok?p={{ test_panic(iteration == 3) }}\" }\n";
    let (code, stdout, stderr) =
        run_with_hook(&dir, &LoadRun::new("panics", &server.url()).users(10, 5).steps(steps).yaml());
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), 50, "{stdout}\n{stderr}");
    assert_eq!(server.count(), 40);
    let internal: Vec<_> = jtl.rows.iter().filter(|r| r["success"] == "false").collect();
    assert_eq!(internal.len(), 10);
    for row in internal {
        assert_eq!(row["responseCode"], "Non HTTP response code: Internal", "{row:?}");
        assert_eq!(row["label"], "r");
        assert!(row["responseMessage"].contains("test_panic(true)"), "{row:?}");
        assert!(row["responseMessage"].contains("planrun bug"), "{row:?}");
    }
    assert!(stdout.contains("Internal errors: 10"), "{stdout}");
    assert_eq!(code, Some(4), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked at"), "a caught panic is reported in its row, not on stderr:\n{stderr}");
}

#[test]
fn a_panic_between_requests_ends_the_iteration_with_a_failed_sample_and_the_next_one_runs() {
    let server = Server::start();
    let dir = TempDir::new("internal_iteration");
    let steps = "      - name: before\n        request: { url: /a }\n      - if: \"{{ test_panic(iteration == 2) }}\"\n        \
                 steps:\n          - name: never\n            request: { url: /never }\n      - name: after\n        \
                 request: { url: /b }\n";
    let (code, stdout, stderr) =
        run_with_hook(&dir, &LoadRun::new("panics", &server.url()).users(10, 5).steps(steps).yaml());
    let jtl = read_jtl(&dir.join("out.jtl"));
    // Per user: 5 x `before`, 4 x `after` (iteration 2 ends at the panic), 1 internal-error row.
    assert_eq!(jtl.labelled("before").len(), 50, "{stdout}\n{stderr}");
    assert_eq!(jtl.labelled("after").len(), 40);
    let internal = jtl.labelled("g");
    assert_eq!(internal.len(), 10, "{}", jtl.text);
    assert!(internal.iter().all(|r| r["responseCode"] == "Non HTTP response code: Internal"));
    assert_eq!(server.count(), 90);
    assert_eq!(jtl.rows.len(), 100);
    assert!(stdout.contains("Internal errors: 10"), "{stdout}");
    assert_eq!(code, Some(4));
}

#[test]
fn without_panics_the_hook_changes_nothing() {
    let server = Server::start();
    let dir = TempDir::new("internal_none");
    let steps = "      - name: r\n        request: { url: \"/ok?p={{ test_panic(false) }}\" }\n";
    let (code, stdout, _) =
        run_with_hook(&dir, &LoadRun::new("panics", &server.url()).users(10, 5).steps(steps).yaml());
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(read_jtl(&dir.join("out.jtl")).rows.len(), 50);
    assert_eq!(server.count(), 50);
    assert!(!stdout.contains("Internal errors"), "{stdout}");
}
