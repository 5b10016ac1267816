//! The open model against a target that stalls for a second: iterations keep starting on schedule and
//! are timed from when they should have started, so the stall shows in p99 (as wrk2 shows it), while a
//! closed-model user, which waits for each answer before asking again, hides it (coordinated omission).

use crate::common;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use common::{planrun, TempDir};

/// A server that answers at once, except that everything arriving between 0.7 s and 1.7 s after the first
/// request is held until 1.7 s. (Timed from the first request, not from the server's start, so however long
/// a loaded machine takes to start the binary, the stall falls inside the run.)
fn stalling_server() -> (tokio::runtime::Runtime, SocketAddr) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let first: &'static OnceLock<Instant> = Box::leak(Box::new(OnceLock::new()));
    rt.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let service = service_fn(move |_req| async move {
                    let t = first.get_or_init(Instant::now).elapsed();
                    if t >= Duration::from_millis(700) && t < Duration::from_millis(1700) {
                        tokio::time::sleep(Duration::from_millis(1700) - t).await;
                    }
                    Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"ok"))))
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (rt, addr)
}

/// p99 in ms from the TOTAL line of the summary.
fn p99(stdout: &str) -> f64 {
    let line = stdout.lines().find(|l| l.starts_with("TOTAL")).unwrap_or_else(|| panic!("no TOTAL:\n{stdout}"));
    line.split_whitespace().nth(9).unwrap().parse().unwrap()
}

fn run(dir: &TempDir, name: &str, group: &str, addr: SocketAddr) -> String {
    let plan = dir.write(
        &format!("{name}.yaml"),
        format!("name: {name}\ndefaults: {{ base_url: \"http://{addr}\" }}\nthread_groups:\n{group}"),
    );
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", &format!("{name}.jtl"), "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    common::stdout(&out)
}

#[test]
fn a_one_second_stall_shows_in_the_open_models_p99() {
    let dir = TempDir::new("open_model_stall");
    let (_rt, addr) = stalling_server();
    let open = "  - name: arrivals\n    arrival_rate: 50/s\n    duration: 3s\n    max_threads: 100\n    steps:\n      - name: s\n        request: { url: /x }\n";
    let stdout = run(&dir, "open", open, addr);
    assert!(p99(&stdout) >= 800.0, "the stall must show in p99:\n{stdout}");
    assert!(!stdout.contains("Dropped iterations"), "100 threads are enough for 50/s:\n{stdout}");
    let rows = common::read_jtl(&dir.join("open.jtl")).rows.len();
    assert_eq!(rows, 150, "every arrival of 50/s over 3 s started");
}

#[test]
fn a_closed_user_hides_the_same_stall() {
    let dir = TempDir::new("open_model_closed");
    let (_rt, addr) = stalling_server();
    let closed =
        "  - name: user\n    threads: 1\n    duration: 3s\n    steps:\n      - name: s\n        request: { url: /x }\n";
    let stdout = run(&dir, "closed", closed, addr);
    assert!(p99(&stdout) < 800.0, "one slow sample among thousands does not reach p99:\n{stdout}");
}

#[test]
fn a_closed_group_with_stages_ramps_its_threads_up_and_down() {
    let server = common::Server::start();
    let dir = TempDir::new("closed_stages");
    let plan = dir.write(
        "stages.yaml",
        format!(
            "name: stages\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    stages:\n      - {{ duration: 1s, target: 4 }}\n      - {{ duration: 1s, target: 4 }}\n      - {{ duration: 500ms, target: 0 }}\n    steps:\n      - name: s\n        request: {{ url: /delay/50 }}\n",
            server.url()
        ),
    );
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "stages.jtl", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let jtl = common::read_jtl(&dir.join("stages.jtl"));
    let threads: Vec<u64> = jtl.rows.iter().map(|r| common::num(r, "grpThreads")).collect();
    assert_eq!(threads.iter().max(), Some(&4), "the ramp reaches its target of 4");
    assert!(threads.iter().any(|t| *t < 4), "and starts below it");
    let mut names: Vec<&str> = jtl.rows.iter().map(|r| r["threadName"].as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names, ["g 1-1", "g 1-2", "g 1-3", "g 1-4"]);
    assert_eq!(jtl.rows.len(), server.count());
}
