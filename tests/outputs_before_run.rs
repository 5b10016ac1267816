//! Every output is opened before the first request (issue 11, item 13): a `--summary-json`, `--summary-csv`
//! or `--report` in a place that cannot be written used to fail only after the whole load ran. Now the run
//! stops at once, exit 3 as for a JTL that cannot be created, naming the path and the operating system's
//! reason, and the server sees no request.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{describe, planrun, stderr, Server, TempDir};

const PLAN: &str = r#"
name: outputs
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: g
    threads: 2
    loops: 3
    steps:
      - name: home
        request: { url: /ok }
"#;

/// Runs the plan with `extra` options: nothing reaches the server, exit 3, the path and the reason named.
fn refused(dir: &TempDir, server: &Server, extra: &[&str], path: &Path, reason: &str) {
    let plan = dir.join("plan.yaml");
    let mut args = vec!["run", plan.to_str().unwrap(), "-o", "out.jtl", "-q"];
    args.extend(extra);
    let out = planrun(dir.path(), &args);
    assert_eq!(server.count(), 0, "{extra:?}: no request was sent: {}", describe(&out));
    assert_eq!(server.connections(), 0, "{extra:?}: not even a connection");
    assert_eq!(out.status.code(), Some(3), "{extra:?}: {}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("cannot write {}", path.display())), "{extra:?} names the path: {err}");
    assert!(err.contains(reason), "{extra:?} gives the reason `{reason}`: {err}");
    assert!(err.contains("nothing was sent"), "{extra:?}: {err}");
    assert!(out.stdout.is_empty(), "{extra:?}: no summary, there was no run: {}", describe(&out));
}

#[test]
fn an_output_that_cannot_be_written_stops_the_run_before_the_first_request() {
    let server = Server::start();
    let dir = TempDir::new("outputs-before-run");
    dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let blocker = dir.write("blocker", "a regular file");
    let under = |name: &str| blocker.join(name);

    // A path under a regular file: the directory cannot be made.
    let json = under("summary.json");
    refused(&dir, &server, &["--summary-json", json.to_str().unwrap()], &json, "is not a directory");
    let csv = under("sub/summary.csv");
    refused(&dir, &server, &["--summary-csv", csv.to_str().unwrap()], &csv, "Not a directory");
    let report = under("report");
    let index = report.join("index.html");
    refused(&dir, &server, &["--report", report.to_str().unwrap()], &index, "Not a directory");
    // The file itself is a directory.
    std::fs::create_dir(dir.join("a-dir")).unwrap();
    let a_dir = dir.join("a-dir");
    refused(&dir, &server, &["--summary-csv", a_dir.to_str().unwrap()], &a_dir, "Is a directory");
    // The outputs opened before already (the JTL, the JSON lines) say so the same way.
    let jsonl = under("out.jsonl");
    refused(&dir, &server, &["--json", jsonl.to_str().unwrap()], &jsonl, "is not a directory");
    assert_eq!(std::fs::read_to_string(&blocker).unwrap(), "a regular file", "nothing was written over it");

    // A read-only place: a read-only file system where one can be mounted (as root), else a directory this
    // user may not write to. (Root writes into any directory: then there is nothing to check here.)
    let read_only = dir.join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    let mounted = ReadOnlyMount::mount(&read_only);
    if mounted.is_none() {
        set_mode(&read_only, 0o555);
    }
    if std::fs::write(read_only.join("probe"), "x").is_err() {
        let path = read_only.join("summary.csv");
        let reason = if mounted.is_some() { "Read-only file system" } else { "Permission denied" };
        refused(&dir, &server, &["--summary-csv", path.to_str().unwrap()], &path, reason);
    }
    drop(mounted);
    set_mode(&read_only, 0o755);

    // Good paths run, and every output is written.
    let out = planrun(
        dir.path(),
        [
            "run",
            dir.join("plan.yaml").to_str().unwrap(),
            "-o",
            "out.jtl",
            "--summary-json",
            "new/dir/s.json",
            "--summary-csv",
            "new/dir/s.csv",
            "--report",
            "new/report",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(server.count(), 6);
    for file in ["new/dir/s.json", "new/dir/s.csv", "new/report/index.html", "new/report/summary.json"] {
        let len = std::fs::metadata(dir.join(file)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{file} written: {}", describe(&out));
    }
}

#[test]
fn report_opens_its_outputs_before_reading() {
    let dir = TempDir::new("outputs-before-report");
    let jtl = dir.write(
        "in.jtl",
        "timeStamp,elapsed,label,responseCode,responseMessage,success\n1700000000000,5,a,200,OK,true\n",
    );
    let blocker = dir.write("blocker", "a regular file");
    let json = blocker.join("s.json");
    let out =
        planrun(dir.path(), ["report", jtl.to_str().unwrap(), "-o", "rep", "--summary-json", json.to_str().unwrap()]);
    assert!(out.stdout.is_empty(), "the file was not read, no table: {}", describe(&out));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let err = stderr(&out);
    let why = format!("cannot write {}: {} is not a directory", json.display(), blocker.display());
    assert!(err.contains(&why), "{err}");
}

/// A read-only tmpfs mounted on a directory, unmounted on drop.
struct ReadOnlyMount(PathBuf);

impl ReadOnlyMount {
    fn mount(dir: &Path) -> Option<ReadOnlyMount> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| ReadOnlyMount(dir.to_path_buf()))
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}
