//! More targets that fail, beyond tests/faults.rs: a body shorter than its Content-Length, a malformed status
//! line, a connect that never completes, a huge body beyond `max_body`, and a server that answers everything
//! with 503 under 50 concurrent users. Each is a row per attempted request with the exact code and message
//! docs/faults.md promises, and the bytes that crossed the wire.

use crate::common;

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{num, read_request, run_ok, summary_total, Jtl, Server, TempDir};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

/// A raw TCP target: reads one request per connection, writes `answer` and closes (FIN).
struct RawServer {
    rt: Option<Runtime>,
    addr: SocketAddr,
    heads: Arc<AtomicU64>,
    read: Arc<AtomicU64>,
    written: Arc<AtomicU64>,
}

impl RawServer {
    fn start(answer: &'static [u8]) -> RawServer {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let (heads, read, written) = (Arc::default(), Arc::default(), Arc::default());
        let (h, r, w): (Arc<AtomicU64>, Arc<AtomicU64>, Arc<AtomicU64>) =
            (Arc::clone(&heads), Arc::clone(&read), Arc::clone(&written));
        rt.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { continue };
                let (h, r, w) = (h.clone(), r.clone(), w.clone());
                tokio::spawn(async move {
                    let Some(n) = read_request(&mut stream).await else { return };
                    r.fetch_add(n, Ordering::SeqCst);
                    h.fetch_add(1, Ordering::SeqCst);
                    if stream.write_all(answer).await.is_ok() {
                        w.fetch_add(answer.len() as u64, Ordering::SeqCst);
                    }
                    let _ = stream.shutdown().await;
                });
            }
        });
        RawServer { rt: Some(rt), addr, heads, read, written }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// A plan of `threads` users each sending `loops` GETs to `path`; `extra_defaults` are lines under
/// `defaults:` (the timeout is 5 s unless they set one).
fn plan(base: &str, path: &str, threads: u32, loops: u32, extra_defaults: &str, asserts: &str) -> String {
    let extra_defaults = if extra_defaults.contains("timeout:") {
        extra_defaults.to_string()
    } else {
        format!("  timeout: 5s\n{extra_defaults}")
    };
    format!(
        r#"
name: failing-targets
defaults:
  base_url: "{base}"
{extra_defaults}
thread_groups:
  - name: g
    threads: {threads}
    loops: {loops}
    steps:
      - name: get
        request: {{ url: "{path}" }}
{asserts}
"#
    )
}

fn run(test: &str, plan_text: String) -> Jtl {
    let dir = TempDir::new(test);
    let plan = dir.write("plan.yaml", plan_text);
    run_ok(&dir, &plan, &[]).1
}

fn assert_rows(jtl: &Jtl, code: &str, message: &str) {
    for row in &jtl.rows {
        assert_eq!(row["success"], "false", "{row:?}");
        assert_eq!(row["responseCode"], code, "{row:?}");
        assert_eq!(row["responseMessage"], message, "{row:?}");
    }
}

const SHORT_BODY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789";

#[test]
fn a_body_shorter_than_its_content_length_is_a_reset_with_the_bytes_that_came() {
    let server = RawServer::start(SHORT_BODY);
    let jtl = run("failing_short", plan(&server.url(), "/short", 2, 2, "", ""));
    assert_eq!(jtl.rows.len(), 4, "{}", jtl.text);
    assert_rows(
        &jtl,
        "Non HTTP response code: ConnectionReset",
        "Non HTTP response message: Connection closed before the response was complete",
    );
    for row in &jtl.rows {
        assert_eq!(num(row, "bytes"), SHORT_BODY.len() as u64, "the head and the 10 bytes that came: {row:?}");
        assert_eq!(row["dataType"], "", "{row:?}");
    }
    assert_eq!(server.heads.load(Ordering::SeqCst), 4, "each sample sent its request once");
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    assert_eq!(sent, server.read.load(Ordering::SeqCst));
    assert_eq!(server.written.load(Ordering::SeqCst), 4 * SHORT_BODY.len() as u64);
}

/// A URL whose path cannot go on the request line (longer than the 65,534 bytes the client takes; a space
/// is percent-encoded since, see tests/url_escaping.rs) is a failed sample for every attempt, and the user goes
/// on; nothing is sent. (It used to end the user's task without a sample.)
#[test]
fn a_url_that_cannot_be_a_request_target_is_a_bad_request_row() {
    let server = RawServer::start(BAD_STATUS);
    let path = format!("/{}", "a".repeat(70_000));
    let jtl = run("failing_target", plan(&server.url(), &path, 2, 3, "", ""));
    assert_eq!(jtl.rows.len(), 6, "{}", jtl.text);
    for row in &jtl.rows {
        assert_eq!(row["success"], "false");
        assert_eq!(row["responseCode"], "Non HTTP response code: BadRequest");
        let message = &row["responseMessage"];
        assert!(message.starts_with("Non HTTP response message: invalid request target `/aaa"), "{message:.200}");
        assert!(message.ends_with("`: uri too long"), "{}", &message[message.len().saturating_sub(200)..]);
        assert_eq!((num(row, "bytes"), num(row, "sentBytes")), (0, 0));
    }
    assert_eq!(server.heads.load(Ordering::SeqCst), 0, "nothing was sent");
}

const BAD_STATUS: &[u8] = b"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok";

#[test]
fn a_malformed_status_line_is_an_invalid_response() {
    let server = RawServer::start(BAD_STATUS);
    let jtl = run("failing_status", plan(&server.url(), "/", 1, 3, "", ""));
    assert_eq!(jtl.rows.len(), 3, "{}", jtl.text);
    assert_rows(
        &jtl,
        "Non HTTP response code: InvalidResponse",
        "Non HTTP response message: Invalid HTTP response: invalid HTTP status-code parsed",
    );
    for row in &jtl.rows {
        assert_eq!(num(row, "bytes"), BAD_STATUS.len() as u64, "what came is counted: {row:?}");
    }
}

/// A listener with a backlog of one, its queue filled by connections nobody accepts: the kernel drops the
/// next SYNs, so a connect neither succeeds nor is refused: it times out. On loopback, no other address.
#[test]
fn a_connect_that_never_completes_is_a_connect_timeout() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let socket = rt.block_on(async { tokio::net::TcpSocket::new_v4() }).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let _listener = rt.block_on(async { socket.listen(0) }).unwrap();
    // Fill the accept queue; a connect that does not complete quickly shows it is full.
    let mut fillers = Vec::new();
    for _ in 0..8 {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(s) => fillers.push(s),
            Err(_) => break,
        }
    }
    let jtl = run("failing_connect", plan(&format!("http://{addr}"), "/", 1, 2, "  timeout: 300ms", ""));
    assert_eq!(jtl.rows.len(), 2, "{}", jtl.text);
    assert_rows(
        &jtl,
        "Non HTTP response code: ConnectTimeout",
        "Non HTTP response message: Connect timed out after 300 ms",
    );
    for row in &jtl.rows {
        assert!(num(row, "Connect") >= 300 && num(row, "elapsed") >= 300, "{row:?}");
        assert_eq!((num(row, "bytes"), num(row, "sentBytes")), (0, 0), "nothing crossed: {row:?}");
    }
    drop(fillers);
}

/// 50 MB, sent chunked: read in full and counted, only `max_body` of it kept for the assertion, and not held
/// in memory on the way.
#[test]
fn a_body_beyond_max_body_is_counted_in_full_and_checked_on_what_was_kept() {
    const SIZE: u64 = 50 * 1024 * 1024;
    let server = Server::start();
    let asserts = "        assert:\n          - body_contains: abcdef\n          - status: 200";
    let dir = TempDir::new("failing_huge");
    let plan =
        dir.write("plan.yaml", plan(&server.url(), &format!("/chunked/{SIZE}"), 1, 1, "  max_body: 1024", asserts));
    let jtl_path = dir.join("out.jtl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args([OsStr::new("run"), plan.as_os_str(), OsStr::new("-o"), jtl_path.as_os_str(), OsStr::new("--quiet")])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start planrun");
    // The child's own high-water mark, read while it runs (a child's rusage would also count the memory of
    // this test process, which holds the 50 MB it serves, from before the child's exec).
    let started = Instant::now();
    let mut peak_kb = 0;
    let status = loop {
        if let Some(kb) = common::vm_hwm_kb(child.id()) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "planrun did not finish");
        std::thread::sleep(Duration::from_millis(2));
    };
    assert_eq!(status.code(), Some(0));
    let jtl = common::read_jtl(&jtl_path);
    let row = jtl.one("get");
    assert_eq!((row["responseCode"].as_str(), row["success"].as_str()), ("200", "true"), "{row:?}");
    let bytes = num(row, "bytes");
    assert!(bytes > SIZE && bytes < SIZE + SIZE / 100, "{bytes} bytes for a body of {SIZE}: {row:?}");
    assert_eq!(bytes, server.bytes_written(), "every byte the server wrote");
    // About 35 MB in a debug build whatever the body's size; holding the body would add 50 MB.
    assert!(peak_kb > 0 && peak_kb * 1024 < SIZE, "planrun's peak RSS was {} MB for a 50 MB body", peak_kb >> 10);
}

#[test]
fn every_request_answered_503_under_50_users_is_one_failed_row() {
    const THREADS: usize = 50;
    const LOOPS: usize = 4;
    let server = Server::start();
    let dir = TempDir::new("failing_503");
    let plan = dir.write("plan.yaml", plan(&server.url(), "/status/503", THREADS as u32, LOOPS as u32, "", ""));
    let (out, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), THREADS * LOOPS, "exactly threads x loops rows");
    assert_eq!(server.count(), THREADS * LOOPS, "exactly threads x loops requests");
    for row in &jtl.rows {
        assert_eq!(row["success"], "false", "{row:?}");
        assert_eq!(row["responseCode"], "503", "{row:?}");
        assert_eq!(row["responseMessage"], "Service Unavailable", "{row:?}");
        assert_eq!(row["failureMessage"], "", "no assertion failed: the status says why: {row:?}");
    }
    let mut users: Vec<&str> = jtl.rows.iter().map(|r| r["threadName"].as_str()).collect();
    users.sort();
    users.dedup();
    assert_eq!(users.len(), THREADS, "every user sent its requests");
    assert_eq!(summary_total(&common::stdout(&out)), (jtl.rows.len() as u64, "100.00%".to_string()));
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    assert_eq!((got, sent), (server.bytes_written(), server.bytes_read()), "wire bytes, each counted once");
}
