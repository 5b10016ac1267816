//! Interrupts on real child processes: SIGTERM stops like Ctrl-C but exits 143; a second Ctrl-C exits at
//! once; SIGKILL leaves a JTL of complete rows missing only the last samples.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{describe, read_jtl, Server, TempDir};

fn start(dir: &TempDir, server: &Server, quiet: bool) -> Child {
    start_with(dir, server, quiet, "")
}

/// The run of [`start`], with `group` (YAML at the group's indentation) added to its group.
fn start_with(dir: &TempDir, server: &Server, quiet: bool, group: &str) -> Child {
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: signals\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 4\n    duration: 60s\n{group}    steps:\n      - name: s\n        request: {{ url: /delay/20 }}\n",
            server.url()
        ),
    );
    let mut args = vec!["run".to_string(), plan.display().to_string(), "-o".into(), "out.jtl".into()];
    if quiet {
        args.push("--quiet".into());
    }
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start planrun")
}

fn wait_for_requests(server: &Server, n: usize) {
    let started = Instant::now();
    while server.count() < n {
        assert!(started.elapsed() < Duration::from_secs(30), "the run never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill").args([sig, &child.id().to_string()]).status().expect("kill runs");
    assert!(ok.success());
}

#[test]
fn sigterm_flushes_prints_the_summary_and_exits_143() {
    let server = Server::start();
    let dir = TempDir::new("signals_term");
    let child = start(&dir, &server, true);
    wait_for_requests(&server, 20);
    signal(&child, "-TERM");
    let out = child.wait_with_output().expect("planrun exits");
    assert_eq!(out.status.code(), Some(143), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), server.count(), "requests in flight finished and were written");
    assert_eq!(common::summary_total(&common::stdout(&out)).0, jtl.rows.len() as u64, "the summary was printed");
}

#[test]
fn a_second_ctrl_c_exits_at_once_with_complete_rows() {
    let server = Server::start();
    let dir = TempDir::new("signals_twice");
    let child = start(&dir, &server, true);
    wait_for_requests(&server, 20);
    signal(&child, "-INT");
    signal(&child, "-INT");
    let out = child.wait_with_output().expect("planrun exits");
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let text = std::fs::read_to_string(dir.join("out.jtl")).expect("the JTL exists");
    assert!(text.ends_with('\n'), "only complete lines");
    assert!(text.lines().all(|l| l.split(',').count() == 17), "every line has 17 fields:\n{text}");
}

#[test]
fn after_sigkill_the_jtl_has_only_complete_rows_and_misses_only_the_last_samples() {
    let server = Server::start();
    let dir = TempDir::new("signals_kill");
    let mut child = start(&dir, &server, true);
    wait_for_requests(&server, 800);
    signal(&child, "-KILL");
    let _ = child.wait();
    let sent = server.count();
    let text = std::fs::read_to_string(dir.join("out.jtl")).expect("the JTL exists");
    assert!(text.ends_with('\n'), "a reader never sees half a line");
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert!(rows.iter().all(|l| l.split(',').count() == 17), "every row is complete");
    // 4 users sending 20 ms requests make at most ~200 samples a second: the rows miss at most two seconds'
    // worth, as a loaded machine may delay the writer.
    assert!(rows.len() + 400 >= sent, "{} rows written for {sent} requests", rows.len());
}

/// A user stopped in the middle of its think time must not send again: the wait that sees the stop is the
/// last thing it does.
#[test]
fn users_stopped_while_they_think_send_nothing_more() {
    let server = Server::start();
    let dir = TempDir::new("signals_think");
    let mut child = start_with(&dir, &server, true, "    think_time: 5s\n");
    wait_for_requests(&server, 4);
    // Past the 20 ms of the first requests, well within the 5 s think time that follows them, even on a
    // loaded machine.
    std::thread::sleep(Duration::from_millis(200));
    let before = server.count();
    signal(&child, "-TERM");
    let started = Instant::now();
    while child.try_wait().expect("wait for planrun").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the run went on after SIGTERM: {} requests, {before} before it", server.count());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("planrun exits");
    assert_eq!(out.status.code(), Some(143), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), server.count());
    assert!(server.count() <= before + 4, "at most the requests in flight: {} after {before}", server.count());
}
