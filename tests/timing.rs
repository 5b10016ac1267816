//! Each timing figure against a server whose behaviour is known: a 50 ms answer shows in elapsed and
//! Latency; a connect held up by a full accept queue shows in Connect, and only on the sample that
//! opened the connection. (Lower bounds only: a loaded machine makes every figure longer, never shorter.)

use crate::common;

use std::io::{Read, Write};
use std::time::Duration;

use common::{num, run_ok, Server, TempDir};

fn one_group(base: &str, threads: u32, loops: u32, url: &str) -> String {
    format!(
        "name: timing\ndefaults: {{ base_url: \"{base}\", timeout: 10s }}\nthread_groups:\n  - name: g\n    threads: {threads}\n    loops: {loops}\n    steps:\n      - name: s\n        request: {{ url: {url} }}\n"
    )
}

#[test]
fn a_50_ms_answer_shows_in_elapsed_and_latency() {
    let server = Server::start();
    let dir = TempDir::new("timing_delay");
    let plan = dir.write("plan.yaml", one_group(&server.url(), 2, 20, "/delay/50"));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    for r in &jtl.rows {
        assert!(num(r, "elapsed") >= 50 && num(r, "Latency") >= 50, "{r:?}");
        assert!(num(r, "Latency") <= num(r, "elapsed"), "{r:?}");
    }
    let reused: Vec<_> = jtl.rows.iter().filter(|r| num(r, "Connect") == 0).collect();
    assert!(reused.len() >= 38, "only the two first samples open a connection");
}

#[test]
fn a_slow_connect_shows_in_connect_on_the_sample_that_opened_the_connection() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let socket = rt.block_on(async { tokio::net::TcpSocket::new_v4() }).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let listener = rt.block_on(async { socket.listen(0) }).unwrap().into_std().unwrap();
    listener.set_nonblocking(false).unwrap();
    // Fill the accept queue so the client's first SYN is dropped; it is sent again after about a second.
    let mut fillers = Vec::new();
    for _ in 0..8 {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(s) => fillers.push(s),
            Err(_) => break,
        }
    }
    let server = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(fillers);
        // Drain the fillers, then answer every request on the next connection with a fixed response.
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { return };
            let mut buf = [0u8; 4096];
            let mut served = 0;
            while let Ok(n @ 1..) = s.read(&mut buf) {
                if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                    served += 1;
                    if served == 3 {
                        return;
                    }
                }
            }
        }
    });
    let dir = TempDir::new("timing_connect");
    let plan = dir.write("plan.yaml", one_group(&format!("http://{addr}"), 1, 3, "/"));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    let _ = server.join();
    assert_eq!(jtl.rows.len(), 3, "{}", jtl.text);
    assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
    let first = &jtl.rows[0];
    assert!(num(first, "Connect") >= 500, "the retried SYN shows in Connect: {first:?}");
    assert!(num(first, "elapsed") >= num(first, "Connect"), "elapsed includes connect: {first:?}");
    assert!(num(first, "Latency") >= num(first, "Connect"), "Latency includes connect: {first:?}");
    for r in &jtl.rows[1..] {
        assert_eq!(num(r, "Connect"), 0, "a reused connection: {r:?}");
    }
}
