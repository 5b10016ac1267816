//! The command line: `planrun PLAN` is `planrun run PLAN`; validate; exit codes 2 (bad plan or arguments,
//! nothing sent) and 3 (the run could not start, nothing sent).

use crate::common;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use common::{describe, planrun, read_jtl, run_ok, stderr, stdout, Server, TempDir};

const PLAN: &str = r#"
name: cli
properties:
  threads: 2
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: "{{ props.threads }}"
    loops: 2
    steps:
      - name: get
        request:
          url: /ok
          query: { vu: "{{ vu }}", it: "{{ iteration }}", r: "{{ random_string(6) }}" }
      - name: post
        request:
          method: POST
          url: /accepted
          query: { vu: "{{ vu }}", it: "{{ iteration }}" }
          json: { id: "{{ uuid() }}" }
"#;

fn args<'a>(list: &'a [&'a OsStr]) -> impl Iterator<Item = &'a OsStr> {
    list.iter().copied()
}

/// The JTL rows without the columns that change from run to run, sorted.
fn stable_rows(path: &Path) -> Vec<Vec<(String, String)>> {
    let jtl = read_jtl(path);
    let mut rows: Vec<Vec<(String, String)>> = jtl
        .rows
        .into_iter()
        .map(|r| {
            let mut v: Vec<(String, String)> = r
                .into_iter()
                .filter(|(k, _)| {
                    !["timeStamp", "elapsed", "Latency", "Connect", "grpThreads", "allThreads"].contains(&k.as_str())
                })
                .collect();
            v.sort();
            v
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_bare_plan_argument_means_run() {
    let server = Server::start();
    let dir = TempDir::new("cli_bare");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let (a, b) = (dir.join("a.jtl"), dir.join("b.jtl"));

    let run = planrun(
        dir.path(),
        args(&["run".as_ref(), plan.as_os_str(), "-o".as_ref(), a.as_os_str(), "--seed".as_ref(), "4".as_ref()]),
    );
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let first: Vec<_> = server.requests();
    let bare =
        planrun(dir.path(), args(&[plan.as_os_str(), "-o".as_ref(), b.as_os_str(), "--seed".as_ref(), "4".as_ref()]));
    assert_eq!(bare.status.code(), Some(0), "{}", describe(&bare));
    let second: Vec<_> = server.requests().split_off(first.len());

    assert_eq!(first.len(), 8);
    let sorted = |v: Vec<common::Recorded>| {
        let mut v: Vec<(String, String, Vec<u8>)> = v.into_iter().map(|r| (r.method, r.target, r.body)).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(first), sorted(second), "`planrun PLAN` sent other requests than `planrun run PLAN`");
    assert_eq!(stable_rows(&a), stable_rows(&b));
    assert_eq!(stdout(&run).lines().count(), stdout(&bare).lines().count(), "both print the summary");
    assert!(stdout(&bare).lines().any(|l| l.starts_with("TOTAL")));
}

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

#[test]
fn validate_accepts_the_sms_plan() {
    let dir = TempDir::new("cli_validate_sms");
    let sms = repo_file("plans/sms.yaml");
    let out = planrun(dir.path(), args(&["validate".as_ref(), sms.as_os_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout(&out).contains("ok"), "{}", describe(&out));
}

#[test]
fn validate_sends_nothing() {
    let server = Server::start();
    let dir = TempDir::new("cli_validate_quiet");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let out = planrun(dir.path(), args(&["validate".as_ref(), plan.as_os_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = planrun(dir.path(), args(&["dry-run".as_ref(), plan.as_os_str(), "-n".as_ref(), "2".as_ref()]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(server.count(), 0);
    assert_eq!(server.connections(), 0);
}

#[test]
fn an_unknown_key_is_exit_2_with_its_position_and_nothing_is_sent() {
    let server = Server::start();
    let dir = TempDir::new("cli_unknown_key");
    let text = PLAN
        .replace("@BASE@", &server.url())
        .replace("          url: /ok\n", "          url: /ok\n          bogus_key: 1\n");
    let line = text.lines().position(|l| l.contains("bogus_key")).unwrap() + 1;
    let col = text.lines().nth(line - 1).unwrap().find("bogus_key").unwrap() + 1;
    let plan = dir.write("plan.yaml", &text);
    let position = format!("{}:{line}:{col}", plan.display());

    let jtl = dir.join("out.jtl");
    let with_output = [plan.as_os_str(), "-o".as_ref(), jtl.as_os_str()];
    let commands: [Vec<&OsStr>; 4] = [
        [&["run".as_ref()][..], &with_output].concat(),
        with_output.to_vec(),
        vec!["validate".as_ref(), plan.as_os_str()],
        vec!["dry-run".as_ref(), plan.as_os_str()],
    ];
    for command in &commands {
        let out = planrun(dir.path(), command.iter().copied());
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", describe(&out));
        assert!(stderr(&out).contains(&position), "{command:?}: stderr does not name {position}:\n{}", stderr(&out));
        assert!(stderr(&out).contains("bogus_key"), "{command:?}: the key is named");
        assert!(!jtl.exists(), "{command:?}: no results file for a plan that cannot run");
    }
    assert_eq!(server.count(), 0, "nothing was sent");
    assert_eq!(server.connections(), 0, "not even a connection");
}

#[test]
fn an_output_path_that_cannot_be_created_is_exit_3_before_sending() {
    let server = Server::start();
    let dir = TempDir::new("cli_bad_output");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let blocker = dir.write("blocker", "a regular file");
    let out_path = blocker.join("sub").join("out.jtl");
    let out = planrun(dir.path(), args(&["run".as_ref(), plan.as_os_str(), "-o".as_ref(), out_path.as_os_str()]));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(stderr(&out).contains("error"), "{}", describe(&out));
    assert_eq!(server.count(), 0, "nothing was sent");
    assert_eq!(server.connections(), 0);
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "a regular file");
}

#[test]
fn bad_arguments_are_exit_2() {
    let dir = TempDir::new("cli_bad_args");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", "http://127.0.0.1:9"));
    let missing = dir.join("missing.yaml");
    for list in [
        vec!["run".as_ref(), plan.as_os_str(), "--no-such-flag".as_ref()],
        vec!["run".as_ref(), plan.as_os_str(), "--seed".as_ref(), "minus-one".as_ref()],
        vec!["run".as_ref(), plan.as_os_str(), "-D".as_ref(), "no-equals".as_ref()],
        vec!["run".as_ref(), missing.as_os_str()],
    ] {
        let out = planrun(dir.path(), list.iter().copied());
        assert_eq!(out.status.code(), Some(2), "{list:?}: {}", describe(&out));
    }
}

#[test]
fn a_property_is_overridden_with_d() {
    let server = Server::start();
    let dir = TempDir::new("cli_define");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let (_, jtl) = run_ok(&dir, &plan, &["-D", "threads=3"]);
    assert_eq!(jtl.rows.len(), 3 * 2 * 2);
    assert_eq!(server.count(), 12);
    let threads: std::collections::HashSet<&str> = jtl.rows.iter().map(|r| r["threadName"].as_str()).collect();
    assert_eq!(threads.len(), 3);
}

#[test]
fn json_lines_hold_the_same_samples_as_the_jtl() {
    let server = Server::start();
    let dir = TempDir::new("cli_json");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let json = dir.join("out.jsonl");
    let (_, jtl) = run_ok(&dir, &plan, &["--json", json.to_str().unwrap()]);
    let text = std::fs::read_to_string(&json).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), jtl.rows.len());
    let key = |label: &str, url: &str, thread: &str| format!("{label}|{url}|{thread}");
    let by_key: HashMap<String, &HashMap<String, String>> =
        jtl.rows.iter().map(|r| (key(&r["label"], &r["URL"], &r["threadName"]), r)).collect();
    for obj in &lines {
        let k = key(obj["label"].as_str().unwrap(), obj["url"].as_str().unwrap(), obj["thread_name"].as_str().unwrap());
        let row = by_key.get(&k).unwrap_or_else(|| panic!("no JTL row for {obj}"));
        assert_eq!(obj["response_code"].as_str().unwrap(), row["responseCode"]);
        assert_eq!(obj["success"].as_bool().unwrap().to_string(), row["success"]);
        assert_eq!(obj["bytes"].as_u64().unwrap().to_string(), row["bytes"]);
        assert_eq!(obj["sent_bytes"].as_u64().unwrap().to_string(), row["sentBytes"]);
        assert_eq!(obj["timestamp"].as_u64().unwrap().to_string(), row["timeStamp"]);
        assert_eq!(obj["elapsed"].as_u64().unwrap().to_string(), row["elapsed"]);
        assert!(obj["error_kind"].is_null());
    }
}

#[test]
fn output_directories_are_created_and_the_default_path_is_under_results() {
    let server = Server::start();
    let dir = TempDir::new("cli_output_dirs");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let nested = dir.join("a").join("b").join("out.jtl");
    let out = planrun(dir.path(), args(&["run".as_ref(), plan.as_os_str(), "-o".as_ref(), nested.as_os_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(read_jtl(&nested).rows.len(), 8);

    // Without -o: results/<plan name>-<UTC yyyymmdd-HHMMSS>.jtl under the working directory (the temp dir here).
    let out = planrun(dir.path(), args(&["run".as_ref(), plan.as_os_str()]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("results")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(regex::Regex::new(r"^cli-\d{8}-\d{6}\.jtl$").unwrap().is_match(&name), "{name}");
    assert_eq!(read_jtl(&files[0]).rows.len(), 8);
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_run_flushes_the_results_and_exits_130() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let server = Server::start();
    let dir = TempDir::new("cli_ctrl_c");
    let plan =
        PLAN.replace("@BASE@", &server.url()).replace("loops: 2", "loops: 50").replace("url: /ok", "url: /delay/50");
    let plan = dir.write("plan.yaml", plan);
    let jtl = dir.join("out.jtl");
    let child = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args([OsStr::new("run"), plan.as_os_str(), OsStr::new("-o"), jtl.as_os_str()])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server.count() < 4 {
        assert!(started.elapsed() < Duration::from_secs(30), "the run never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));

    let rows = read_jtl(&jtl);
    assert!(rows.text.ends_with('\n'), "the JTL ends with a complete record");
    assert!(rows.rows.len() < 2 * 50 * 2, "the run stopped early: {} rows", rows.rows.len());
    assert_eq!(rows.rows.len(), server.count(), "requests in flight finished and were written");
    assert!(rows.rows.iter().all(|r| r["success"] == "true"), "no sample was cut off:\n{}", rows.text);
    assert_eq!(common::summary_total(&stdout(&out)).0, rows.rows.len() as u64, "the summary was printed");
}

#[test]
fn unusable_tls_files_are_refused_before_anything_is_sent() {
    let server = Server::start();
    let dir = TempDir::new("cli_bad_tls");
    dir.write("bad.pem", "not a pem\n");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: t\ndefaults: {{ base_url: \"{}\", tls: {{ ca: bad.pem }} }}\nthread_groups:\n  - name: g\n    threads: 1\n    steps:\n      - name: s\n        request: {{ url: /ok }}\n",
            server.url()
        ),
    );
    let out = planrun(dir.path(), [OsStr::new("run"), plan.as_os_str(), OsStr::new("-o"), OsStr::new("out.jtl")]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("tls.ca"), "{}", describe(&out));
    assert_eq!(server.count(), 0, "nothing was sent");
}

#[test]
fn a_mistyped_subcommand_is_named_with_the_one_it_resembles() {
    let dir = TempDir::new("cli_mistyped_subcommand");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", "http://127.0.0.1:9"));
    for (typed, meant) in
        [("valdiate", "validate"), ("Validate", "validate"), ("repotr", "report"), ("dryrun", "dry-run")]
    {
        let out = planrun(dir.path(), args(&[typed.as_ref(), plan.as_os_str()]));
        assert_eq!(out.status.code(), Some(2), "{typed}: {}", describe(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("error: unknown subcommand '{typed}'; did you mean '{meant}'?\n")),
            "{typed}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{err}");
    }
    // A file of that name is a plan to run, typo or not; a word like no subcommand is a plan path too.
    let server = Server::start();
    dir.write("valdiate", PLAN.replace("@BASE@", &server.url()));
    let out = planrun(dir.path(), ["valdiate", "-o", "x.jtl"]);
    assert_eq!(out.status.code(), Some(0), "the file named like a typo runs: {}", describe(&out));
    assert_eq!(read_jtl(&dir.join("x.jtl")).rows.len(), server.count());
    assert_eq!(server.count(), 8);
    let out = planrun(dir.path(), ["banana"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(!stderr(&out).contains("unknown subcommand"), "{}", describe(&out));
    assert!(stderr(&out).contains("banana"), "{}", describe(&out));
}
