//! Every output is checked and opened before the first request: one in a place that cannot be written
//! stops the run at once (exit 3, the path and the operating system's reason named, no request sent); one
//! that is an input of the command (by name, hard or symbolic link) is refused (exit 2) before any output is
//! written, for run, report, compare and import alike; a run says when it replaces earlier results, and
//! `--append` adds to them instead.

use crate::common;

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

/// A plan that reads a data set and sends a file part: both are inputs of the run.
const PLAN_WITH_FILES: &str = r#"
name: inputs
defaults:
  base_url: "@BASE@"
data:
  users:
    file: users.csv
thread_groups:
  - name: g
    threads: 2
    loops: 3
    steps:
      - name: upload
        request:
          method: POST
          url: "/ok?u={{ users.name }}"
          multipart: { f: { file: part.txt } }
"#;

/// Runs planrun in `dir` and checks that it refused `output` as an input: exit 2, the output named, and the
/// listed files as they were.
fn refused_as_input(dir: &TempDir, args: &[&str], output: &str, kept: &[(&Path, &[u8])]) {
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("cannot write {output}: it is the input ")), "{args:?}: {err}");
    for (path, bytes) in kept {
        assert_eq!(&std::fs::read(path).unwrap()[..], *bytes, "{args:?}: {} untouched", path.display());
    }
}

#[test]
fn an_output_that_is_an_input_is_refused_before_anything_is_written() {
    let server = Server::start();
    let dir = TempDir::new("outputs-inputs");
    let plan_text = PLAN_WITH_FILES.replace("@BASE@", &server.url());
    let plan = dir.write("plan.yaml", &plan_text);
    let users = dir.write("users.csv", "name\nann\nbob\n");
    let part = dir.write("part.txt", "a file part");
    std::fs::hard_link(&users, dir.join("users-link.csv")).unwrap();
    std::os::unix::fs::symlink("part.txt", dir.join("part-link.txt")).unwrap();
    let earlier = dir.write("earlier.json", "an earlier summary");
    let kept: &[(&Path, &[u8])] = &[
        (&plan, plan_text.as_bytes()),
        (&users, b"name\nann\nbob\n"),
        (&part, b"a file part"),
        (&earlier, b"an earlier summary"),
    ];
    let plan_arg = plan.to_str().unwrap();
    // The plan, its data set and its file part, by their names, by a hard link and by a symbolic link: each
    // refused whichever output it is, before any output is truncated (the earlier summary named first stays).
    for (jtl, option, output) in [
        ("out.jtl", "--json", "users.csv"),
        ("plan.yaml", "--json", "out.jsonl"),
        ("out.jtl", "--summary-csv", "users-link.csv"),
        ("out.jtl", "--json", "part-link.txt"),
    ] {
        let args = ["run", plan_arg, "-q", "--summary-json", "earlier.json", "-o", jtl, option, output];
        let refused = if jtl == "plan.yaml" { jtl } else { output };
        refused_as_input(&dir, &args, refused, kept);
    }
    assert_eq!(server.count(), 0, "no request was sent");
    for new in ["out.jtl", "out.jsonl"] {
        assert!(!dir.join(new).exists(), "no output was created: {new}");
    }

    // report, compare and import read files too.
    let out = planrun(dir.path(), ["run", plan_arg, "-q", "-o", "a.jtl", "--summary-json", "a.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(server.count(), 6);
    let jtl = std::fs::read(dir.join("a.jtl")).unwrap();
    let summary = std::fs::read(dir.join("a.json")).unwrap();
    let results: &[(&Path, &[u8])] = &[(&dir.join("a.jtl"), &jtl), (&dir.join("a.json"), &summary)];
    refused_as_input(&dir, &["report", "a.jtl", "-o", "rep", "--summary-json", "a.jtl"], "a.jtl", results);
    // The report's folder holding its own input.
    std::fs::create_dir(dir.join("rep")).unwrap();
    let in_folder = dir.write("rep/index.html", &jtl);
    refused_as_input(&dir, &["report", "rep/index.html", "-o", "rep"], "rep/index.html", &[(&in_folder, &jtl)]);
    refused_as_input(&dir, &["compare", "a.json", "a.jtl", "--json", "a.json"], "a.json", results);
    refused_as_input(&dir, &["compare", "a.json", "a.jtl", "--html", "a.jtl"], "a.jtl", results);
    let jmx_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmx/shop.jmx");
    let jmx = dir.write("shop.jmx", std::fs::read(jmx_path).unwrap());
    let jmx_text = std::fs::read(&jmx).unwrap();
    refused_as_input(&dir, &["import", "shop.jmx", "-o", "shop.jmx"], "shop.jmx", &[(&jmx, &jmx_text)]);
}

#[test]
fn a_run_says_when_it_replaces_earlier_results() {
    let server = Server::start();
    let dir = TempDir::new("outputs-replaced");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let args = ["run", plan.to_str().unwrap(), "-q", "-o", "out.jtl", "--json", "out.jsonl"];
    let first = planrun(dir.path(), args);
    assert_eq!(first.status.code(), Some(0), "{}", describe(&first));
    assert!(!stderr(&first).contains("warning"), "new files replace nothing: {}", describe(&first));
    let (jtl_len, json_len) = (len(&dir.join("out.jtl")), len(&dir.join("out.jsonl")));
    let second = planrun(dir.path(), args);
    assert_eq!(second.status.code(), Some(0), "{}", describe(&second));
    let err = stderr(&second);
    for (name, bytes) in [("out.jtl", jtl_len), ("out.jsonl", json_len)] {
        let said = format!("planrun: warning: {name} holds {bytes} bytes (an earlier run's results?): this run replaces them (--append adds to them)");
        assert!(err.contains(&said), "even with -q: {said}\n{err}");
    }
    // Replaced, not appended to: the rows of the second run only.
    assert_eq!(server.count(), 12);
    let rows = std::fs::read_to_string(dir.join("out.jtl")).unwrap().lines().count() - 1;
    assert_eq!(rows, 6, "{}", describe(&second));
    assert_eq!(std::fs::read_to_string(dir.join("out.jsonl")).unwrap().lines().count(), 6);
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn append_adds_the_rows_of_a_run_after_those_of_the_last() {
    let server = Server::start();
    let dir = TempDir::new("outputs-append");
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let args = ["run", plan.to_str().unwrap(), "-q", "-o", "out.jtl", "--json", "out.jsonl", "--append"];
    for _ in 0..2 {
        let out = planrun(dir.path(), args);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        assert!(!stderr(&out).contains("warning"), "{}", describe(&out));
    }
    assert_eq!(server.count(), 12);
    let jtl = common::read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), 12, "one header, every row of both runs");
    assert_eq!(std::fs::read_to_string(dir.join("out.jsonl")).unwrap().lines().count(), 12);
    // A file whose header is not planrun's, or whose last row is cut: refused (exit 2), nothing sent.
    dir.write("other.jtl", "timeStamp,elapsed,label\n1000,5,a\n");
    dir.write("cut.jsonl", "{\"timestamp\":1}\n{\"times");
    for (option, file, why) in [
        ("-o", "other.jtl", "its first line is not the header this run writes"),
        ("--json", "cut.jsonl", "it ends inside a row"),
    ] {
        let before = std::fs::read(dir.join(file)).unwrap();
        let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-q", "--append", option, file]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        assert!(
            stderr(&out).contains(&format!("cannot write {file}: cannot add rows to it: {why}")),
            "{}",
            describe(&out)
        );
        assert_eq!(std::fs::read(dir.join(file)).unwrap(), before, "{file} as it was");
    }
    assert_eq!(server.count(), 12, "nothing was sent");
}
