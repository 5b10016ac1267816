//! Where results go when the place is hostile: a FIFO whose reader stops, devices (`/dev/null`,
//! `/dev/stdout`, `/dev/full`), a full disk, stdout and stderr pipes closed by their reader, SIGHUP, a
//! second planrun writing the same file.
//! Each test counts requests on the server and rows in the files.

use crate::common;
use common::json_lines;

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use common::{describe, planrun, read_jtl, stderr, stdout, summary_total, Server, TempDir};

/// Longer than any of these runs takes when it works: a guard against hangs, not a speed check.
const HANG_GUARD: Duration = Duration::from_secs(40);

/// The timeout of every fast request: a success can never have taken longer.
const TIMEOUT_MS: u64 = 1000;

/// The smallest pipe buffer Linux allows: a FIFO whose reader stops fills after a few rows.
const PIPE_SIZE: i32 = 4096;

/// A plan against `server`: `fast` users hammering `/ok` (1 s timeout), and one user whose requests time
/// out after 200 ms (`/delay/1500`). `bound` ends the fast group (`loops: N` or `duration: 60s`); the slow one
/// runs for 60 s with `duration: 60s`, else 3 loops.
fn plan(dir: &TempDir, server: &Server, fast: u32, bound: &str) -> PathBuf {
    let slow = if bound.starts_with("duration") { bound } else { "loops: 3" };
    dir.write(
        "plan.yaml",
        format!(
            "name: outputs
defaults: {{ base_url: \"{url}\", timeout: {TIMEOUT_MS}ms }}
thread_groups:
  - name: fast
    threads: {fast}
    {bound}
    steps:
      - name: ok
        request: {{ url: /ok }}
  - name: slow
    threads: 1
    {slow}
    steps:
      - name: slow
        request: {{ url: /delay/1500, timeout: 200ms }}
",
            url = server.url()
        ),
    )
}

/// Starts planrun with stdout and stderr captured by threads (read back with [`finish`]).
struct Running {
    child: Child,
    out: std::thread::JoinHandle<Vec<u8>>,
    err: std::thread::JoinHandle<Vec<u8>>,
}

fn start(dir: &Path, args: &[&str]) -> Running {
    let mut command = Command::new(env!("CARGO_BIN_EXE_planrun"));
    // planrun keeps SIGHUP ignored when it starts ignored (`nohup`), as the tests may be run: these need the
    // terminal's default.
    sys::hangup_by_default(&mut command);
    let mut child = command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start planrun");
    let mut o = child.stdout.take().unwrap();
    let mut e = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = o.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = e.read_to_end(&mut v);
        v
    });
    Running { child, out, err }
}

/// Waits for the child, killing it and failing the test after `guard`.
fn wait(child: &mut Child, guard: Duration, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("wait for planrun") {
            return s;
        }
        if started.elapsed() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!("planrun did not end within {guard:?} {what}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn finish(mut r: Running, guard: Duration, what: &str) -> Output {
    let status = wait(&mut r.child, guard, what);
    Output { status, stdout: r.out.join().unwrap(), stderr: r.err.join().unwrap() }
}

#[allow(unsafe_code)] // two libc calls on a PID and a descriptor we own
mod sys {
    use std::os::fd::AsRawFd;

    /// Sends `sig` to the process.
    pub fn kill(pid: u32, sig: i32) {
        let pid = i32::try_from(pid).expect("a PID fits i32");
        // SAFETY: kill(2) takes plain integers.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
    }

    /// Starts `command` with SIGHUP's default action, whatever this process inherited.
    pub fn hangup_by_default(command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        // SAFETY: signal(2) is async-signal-safe, so it may run between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                Ok(())
            });
        }
    }

    /// Shrinks a pipe's buffer (F_SETPIPE_SZ).
    pub fn set_pipe_size(fifo: &std::fs::File, size: i32) {
        // SAFETY: fcntl(2) on a descriptor the File keeps open.
        let got = unsafe { libc::fcntl(fifo.as_raw_fd(), libc::F_SETPIPE_SZ, size) };
        assert!(got >= size, "F_SETPIPE_SZ failed: {}", std::io::Error::last_os_error());
    }

    /// Makes a FIFO.
    pub fn mkfifo(path: &std::path::Path) {
        let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
        assert!(status.success(), "mkfifo {}", path.display());
    }
}

/// A FIFO at `path` with its read end open (so a writer can open it) and a 4 KiB buffer; nothing reads yet.
fn fifo(path: &Path) -> File {
    sys::mkfifo(path);
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .expect("open the FIFO's read end");
    sys::set_pipe_size(&reader, PIPE_SIZE);
    reader
}

/// Reads the FIFO until every writer closed it (call after planrun ended, or from a thread).
fn read_all(mut reader: File) -> String {
    let mut text = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => panic!("read the FIFO: {e}"),
        }
    }
    String::from_utf8(text).expect("UTF-8 rows")
}

/// Complete rows in a JTL text (a torn last line does not count); the header excluded.
fn whole_rows(text: &str) -> usize {
    text.split_inclusive('\n').filter(|l| l.ends_with('\n')).count().saturating_sub(1)
}

/// Waits until the server counted far more requests than a 4 KiB pipe holds rows, and its count stopped
/// moving for half a second: the users are held back.
fn wait_until_stalled(server: &Server) {
    let started = Instant::now();
    let mut last = (server.count(), Instant::now());
    loop {
        assert!(started.elapsed() < HANG_GUARD, "the run never stalled");
        std::thread::sleep(Duration::from_millis(20));
        let now = server.count();
        if now != last.0 {
            last = (now, Instant::now());
        } else if now > 1000 && last.1.elapsed() > Duration::from_millis(500) {
            return;
        }
    }
}

/// Every `ok` sample succeeded within its timeout; every `slow` one is a read timeout after at least 200 ms.
fn timing_is_true(lines: &[serde_json::Value]) {
    for l in lines {
        let elapsed = l["elapsed_us"].as_u64().expect("elapsed_us");
        match l["label"].as_str() {
            Some("ok") => {
                assert_eq!(l["success"], true, "{l}");
                assert!(elapsed < TIMEOUT_MS * 1000, "a success slower than its timeout: {l}");
            }
            Some("slow") => {
                assert_eq!(l["error_kind"], "ReadTimeout", "{l}");
                assert!(elapsed >= 200_000, "timed out before its timeout: {l}");
            }
            other => panic!("unexpected label {other:?}"),
        }
    }
}

/// `planrun: N of M samples could not be written to PATH` on stderr: N.
fn unwritten(stderr: &str, path: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("could not be written to") && l.contains(path))
        .unwrap_or_else(|| panic!("no line says what could not be written to {path}:\n{stderr}"));
    let n = line.trim_start_matches("planrun: ").split_whitespace().next().unwrap();
    n.parse().unwrap_or_else(|_| panic!("no count in: {line}"))
}

#[test]
fn a_stopped_fifo_reader_holds_users_back_between_requests_and_ctrl_c_still_ends_the_run() {
    let server = Server::start();
    let dir = TempDir::new("outputs_stopped_fifo");
    let plan = plan(&dir, &server, 4, "duration: 60s");
    let reader = fifo(&dir.join("out.jtl"));
    let json = dir.join("out.jsonl");
    let run = start(dir.path(), &["run", plan.to_str().unwrap(), "-o", "out.jtl", "--json", json.to_str().unwrap()]);
    wait_until_stalled(&server);
    sys::kill(run.child.id(), libc::SIGINT);
    let out = finish(run, HANG_GUARD, "after Ctrl-C with the JTL reader stopped");
    let served = server.count();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let jtl = read_all(reader);
    let missing = unwritten(&stderr(&out), "out.jtl");
    assert_eq!(
        whole_rows(&jtl) as u64 + missing,
        served as u64,
        "rows written + rows reported unwritten\n{}",
        describe(&out)
    );
    assert!(missing > 0, "the FIFO cannot have taken every row");
    assert_eq!(summary_total(&stdout(&out)).0, served as u64, "the summary counts every request");
    let lines = json_lines(&json);
    assert_eq!(lines.len(), served, "the JSON lines on a healthy disk keep every sample");
    timing_is_true(&lines);
}

#[test]
fn a_slow_fifo_reader_slows_the_run_without_falsifying_latencies() {
    let server = Server::start();
    let dir = TempDir::new("outputs_slow_fifo");
    let plan = plan(&dir, &server, 4, "loops: 150");
    let reader = fifo(&dir.join("out.jtl"));
    let json = dir.join("out.jsonl");
    let run = start(dir.path(), &["run", plan.to_str().unwrap(), "-o", "out.jtl", "--json", json.to_str().unwrap()]);
    // The reader stops for longer than the requests' timeout, then reads everything.
    let drained = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2 * TIMEOUT_MS));
        read_all(reader)
    });
    let out = finish(run, HANG_GUARD, "with a slow JTL reader");
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = drained.join().unwrap();
    let served = server.count();
    assert_eq!(served, 4 * 150 + 3, "every planned request was sent");
    assert!(jtl.ends_with('\n'));
    assert_eq!(whole_rows(&jtl), served, "every row reached the FIFO");
    let lines = json_lines(&json);
    assert_eq!(lines.len(), served);
    timing_is_true(&lines);
}

#[test]
fn devices_and_pipes_are_outputs_like_files() {
    let server = Server::start();
    let dir = TempDir::new("outputs_devices");
    let plan = plan(&dir, &server, 2, "loops: 20");
    let args = ["run", plan.to_str().unwrap(), "-o", "/dev/null", "--json", "/dev/null", "--summary-json", "/dev/null"];
    let out = planrun(dir.path(), args);
    assert_eq!(out.status.code(), Some(0), "/dev/null: {}", describe(&out));
    // The test's stdout pipe, through /dev/stdout, with the summary after the rows (one output at a time:
    // two writers of one pipe may interleave their writes).
    // `-` is standard output too, not a file named `-`.
    for args in [
        &["-o", "/dev/stdout"][..],
        &["-o", "out.jtl", "--json", "/dev/stdout"],
        &["-o", "-"],
        &["-o", "o.jtl", "--json", "-"],
    ] {
        let before = server.count();
        let out = planrun(dir.path(), [&["run", plan.to_str().unwrap(), "-q"][..], args].concat());
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        let served = server.count() - before;
        let text = stdout(&out);
        let rows = text.lines().filter(|l| l.contains(",ok,") || l.contains(",slow,") || l.starts_with("{")).count();
        assert_eq!(rows, served, "{args:?}: a row per request:\n{text}");
        assert!(!dir.join("-").exists(), "{args:?}: no file named -");
    }
    // Stdout redirected to a file (`> cap.txt`), named as /dev/stdout or through a link: the rows go through
    // the open stdout, at its offset, so the summary printed after them does not write over them.
    std::os::unix::fs::symlink("/proc/self/fd/1", dir.join("o")).unwrap();
    for output in ["/dev/stdout", "o"] {
        let before = server.count();
        let captured = dir.join("cap.txt");
        let status = Command::new(env!("CARGO_BIN_EXE_planrun"))
            .args(["run", plan.to_str().unwrap(), "-q", "-o", output])
            .current_dir(dir.path())
            .stdout(File::create(&captured).unwrap())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{output}");
        let served = server.count() - before;
        let text = std::fs::read_to_string(&captured).unwrap();
        assert!(text.starts_with("timeStamp,"), "{output}: the header first:\n{text}");
        let rows = text.lines().filter(|l| l.contains(",ok,") || l.contains(",slow,")).count();
        assert_eq!(rows, served, "{output}: a row per request:\n{text}");
        assert_eq!(summary_total(&text).0, served as u64, "{output}: then the summary:\n{text}");
        assert!(std::fs::symlink_metadata(dir.join("o")).unwrap().file_type().is_symlink());
    }
}

/// How a standard stream of the child is set up.
#[derive(Clone, Copy, Debug)]
enum Stream {
    /// A pipe whose reader is gone before anything is written (`| true`).
    Closed,
    /// A pipe that is read to its end.
    Read,
}

/// Runs planrun with stdout and stderr as given; returns its exit status and what was read.
fn run_with(dir: &Path, args: &[&str], out: Stream, err: Stream) -> (ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start planrun");
    let keep = |s: Stream, pipe: Box<dyn Read + Send>| match s {
        Stream::Closed => {
            drop(pipe);
            None
        }
        Stream::Read => Some(std::thread::spawn(move || {
            let mut pipe = pipe;
            let mut v = Vec::new();
            let _ = pipe.read_to_end(&mut v);
            v
        })),
    };
    let o = keep(out, Box::new(child.stdout.take().unwrap()));
    let e = keep(err, Box::new(child.stderr.take().unwrap()));
    let status = wait(&mut child, HANG_GUARD, &format!("{args:?}"));
    let mut read = String::new();
    for t in [o, e].into_iter().flatten() {
        read.push_str(&String::from_utf8_lossy(&t.join().unwrap()));
    }
    (status, read)
}

#[test]
fn closed_stdout_and_stderr_pipes_are_no_panic_and_the_results_are_whole() {
    let server = Server::start();
    let dir = TempDir::new("outputs_broken_pipes");
    let plan = plan(&dir, &server, 2, "loops: 30");
    let plan = plan.to_str().unwrap();
    let bad = dir.write("bad.yaml", "name: bad\nbogus_key: 1\n");
    let bad = bad.to_str().unwrap();
    for (out, err) in [(Stream::Closed, Stream::Read), (Stream::Read, Stream::Closed), (Stream::Closed, Stream::Closed)]
    {
        let before = server.count();
        let (status, text) = run_with(dir.path(), &["run", plan, "-o", "out.jtl"], out, err);
        assert_eq!(status.code(), Some(0), "run, stdout {out:?}, stderr {err:?}: {status:?}\n{text}");
        let jtl = read_jtl(&dir.join("out.jtl"));
        assert_eq!(jtl.rows.len(), server.count() - before, "run, stdout {out:?}, stderr {err:?}: rows");
        let commands: [(&[&str], i32); 7] = [
            (&["report", "out.jtl", "-o", "report"], 0),
            (&["compare", "out.jtl", "out.jtl"], 0),
            (&["validate", plan], 0),
            (&["validate", bad], 2),
            (&["dry-run", plan], 0),
            (&["dry-run", bad], 2),
            (&["schema"], 0),
        ];
        for (args, code) in commands {
            let (status, text) = run_with(dir.path(), args, out, err);
            assert_eq!(status.code(), Some(code), "{args:?}, stdout {out:?}, stderr {err:?}: {status:?}\n{text}");
        }
        let index = std::fs::read_to_string(dir.join("report/index.html")).expect("the report was written");
        assert!(index.trim_end().ends_with("</html>"), "a whole report");
    }
}

/// A tmpfs of 64 KiB mounted for the test, or `None` where mounting is not allowed (not root, a container).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_cuts_its_output_to_whole_lines_and_the_other_output_keeps_every_sample() {
    let server = Server::start();
    let dir = TempDir::new("outputs_full_disk");
    let plan = plan(&dir, &server, 4, "loops: 300");
    // JSON lines on a 64 KiB disk that fills up; where no disk can be mounted, /dev/full (ENOSPC at once).
    let disk = SmallDisk::mount(&dir.join("small"));
    let json = match &disk {
        Some(d) => d.0.join("out.jsonl"),
        None => PathBuf::from("/dev/full"),
    };
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--json", json.to_str().unwrap()]);
    let served = server.count();
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), served, "the JTL on the healthy disk has a row per request\n{}", describe(&out));
    let err = stderr(&out);
    let json_name = json.display().to_string();
    assert!(err.contains(&format!("cannot write {json_name}")), "names the output that failed:\n{err}");
    if disk.is_some() {
        let lines = json_lines(&json);
        assert!(!lines.is_empty() && lines.len() < served, "{} lines for {served} requests", lines.len());
        assert_eq!(unwritten(&err, &json_name), (served - lines.len()) as u64, "the rows it lacks:\n{err}");
        let report = planrun(dir.path(), ["report", json.to_str().unwrap(), "-o", "report"]);
        assert_eq!(report.status.code(), Some(0), "report reads what was written: {}", describe(&report));
    } else {
        assert_eq!(unwritten(&err, &json_name), served as u64, "the rows it lacks:\n{err}");
    }
}

#[test]
fn sighup_stops_flushes_prints_the_summary_and_exits_129() {
    let server = Server::start();
    let dir = TempDir::new("outputs_sighup");
    let plan = plan(&dir, &server, 4, "duration: 60s");
    let run = start(dir.path(), &["run", plan.to_str().unwrap(), "-o", "out.jtl", "-q"]);
    let started = Instant::now();
    while server.count() < 50 {
        assert!(started.elapsed() < HANG_GUARD, "the run never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
    sys::kill(run.child.id(), libc::SIGHUP);
    let out = finish(run, HANG_GUARD, "after SIGHUP");
    assert_eq!(out.status.code(), Some(129), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), server.count(), "every request has its row");
    assert_eq!(summary_total(&stdout(&out)).0, jtl.rows.len() as u64, "the summary was printed");
}

#[test]
fn a_second_writer_of_a_running_output_is_refused_and_sends_nothing() {
    let server = Server::start();
    let dir = TempDir::new("outputs_locked");
    let plan = plan(&dir, &server, 2, "duration: 60s");
    // The second runs aim at a server of their own: it must see nothing.
    let other = Server::start();
    let other_dir = TempDir::new("outputs_locked_other");
    let other_plan = self::plan(&other_dir, &other, 1, "loops: 5");
    let other_plan = other_plan.to_str().unwrap();
    dir.write("done.jtl", "timeStamp,elapsed,label,responseCode,responseMessage,success\n1000,5,a,200,OK,true\n");
    let outputs = ["-o", "out.jtl", "--json", "out.jsonl", "--summary-json", "s.json"];
    let run = start(dir.path(), &[&["run", plan.to_str().unwrap(), "-q"][..], &outputs].concat());
    let started = Instant::now();
    while server.count() < 50 {
        assert!(started.elapsed() < HANG_GUARD, "the run never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
    let cases: &[&[&str]] = &[
        &["run", other_plan, "-q", "-o", "out.jtl"],
        &["run", other_plan, "-q", "-o", "x.jtl", "--json", "out.jsonl"],
        &["run", other_plan, "-q", "-o", "y.jtl", "--summary-json", "s.json"],
        &["merge", "done.jtl", "-o", "out.jtl"],
        &["report", "done.jtl", "-o", "rep", "--summary-csv", "out.jsonl"],
    ];
    for args in cases {
        let before = std::fs::metadata(dir.join("out.jtl")).unwrap().len();
        let out = planrun(dir.path(), *args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains("another process is writing it"), "{args:?}: {err}");
        if args[0] == "run" {
            assert!(err.contains("(nothing was sent)"), "{args:?}: {err}");
        }
        assert!(std::fs::metadata(dir.join("out.jtl")).unwrap().len() >= before, "{args:?}: not truncated");
    }
    assert_eq!(other.count(), 0, "the refused runs sent nothing");
    for never in ["x.jtl", "y.jtl", "rep"] {
        assert!(!dir.join(never).exists(), "{never}: nothing was written");
    }
    sys::kill(run.child.id(), libc::SIGINT);
    let out = finish(run, HANG_GUARD, "after Ctrl-C");
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    let served = server.count();
    assert_eq!(read_jtl(&dir.join("out.jtl")).rows.len(), served, "every request has its row, none torn");
    assert_eq!(json_lines(&dir.join("out.jsonl")).len(), served);
    // Once it ended, the file is free.
    let out = planrun(dir.path(), ["merge", "done.jtl", "-o", "out.jtl"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}
