//! `keep_alive`: kept-alive connections by default (one per user), or a new connection for every request, sent
//! with `Connection: close`, counted on the server's side.

use crate::common;

use std::collections::HashSet;

use common::{run_ok, Server, TempDir};

/// Three users, four loops of `/ok` then `/accepted`; `@DEFAULTS@` and `@SECOND@` are extra keys of
/// `defaults` and of the second request.
const PLAN: &str = r#"
name: keep-alive
defaults:
  base_url: "@BASE@"
  @DEFAULTS@
thread_groups:
  - name: users
    threads: 3
    loops: 4
    steps:
      - name: first
        request:
          url: /ok
      - name: second
        request:
          url: /accepted
          @SECOND@
"#;

/// Runs PLAN with the keys given against a fresh server; checks that the server saw one request per JTL row,
/// every one a success, and returns the server.
fn run(name: &str, defaults: &str, second: &str) -> Server {
    let server = Server::start();
    let dir = TempDir::new(name);
    let text = PLAN.replace("@BASE@", &server.url()).replace("@DEFAULTS@", defaults).replace("@SECOND@", second);
    let plan = dir.write("plan.yaml", text);
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 24, "3 users x 4 loops x 2 requests:\n{}", jtl.text);
    assert_eq!(server.count(), jtl.rows.len(), "one request on the server per row");
    assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
    server
}

/// The connections each request came on, in the server's order.
fn connections_of(server: &Server, path: &str) -> Vec<u64> {
    server.requests().iter().filter(|r| r.path() == path).map(|r| r.conn).collect()
}

#[test]
fn by_default_each_user_keeps_one_connection() {
    let server = run("keep_alive_default", "", "");
    assert_eq!(server.connections(), 3, "one connection per user");
    assert!(server.requests().iter().all(|r| r.header("connection").is_none()), "no Connection header is sent");
}

#[test]
fn keep_alive_false_in_defaults_opens_a_connection_per_request() {
    let server = run("keep_alive_off", "keep_alive: false", "");
    assert_eq!(server.connections(), 24, "one connection per request");
    let conns: HashSet<u64> = server.requests().iter().map(|r| r.conn).collect();
    assert_eq!(conns.len(), 24, "no connection carried two requests");
    for r in server.requests() {
        assert_eq!(r.header("connection"), Some("close"), "{r:?}");
    }
}

#[test]
fn keep_alive_false_on_one_request_closes_after_that_request_only() {
    // Each loop: `first` opens a connection (the last one was closed), `second` reuses it and asks to close.
    let server = run("keep_alive_request", "", "keep_alive: false");
    assert_eq!(server.connections(), 12, "one connection per user and loop");
    assert_eq!(connections_of(&server, "/ok").len(), 12);
    let firsts: HashSet<u64> = connections_of(&server, "/ok").into_iter().collect();
    let seconds: HashSet<u64> = connections_of(&server, "/accepted").into_iter().collect();
    assert_eq!(firsts, seconds, "each `second` went on the connection its `first` opened");
    for r in server.requests() {
        let expected = if r.path() == "/accepted" { Some("close") } else { None };
        assert_eq!(r.header("connection"), expected, "{r:?}");
    }
}

#[test]
fn keep_alive_true_on_a_request_overrides_defaults() {
    // Only `second` keeps its connection; the next loop's `first` goes on it and closes it. A user opens two
    // connections in its first loop, one in each loop after.
    let server = run("keep_alive_override", "keep_alive: false", "keep_alive: true");
    assert_eq!(server.connections(), 3 * 5, "five connections per user");
    for r in server.requests() {
        let expected = if r.path() == "/ok" { Some("close") } else { None };
        assert_eq!(r.header("connection"), expected, "{r:?}");
    }
}

/// `keep_alive: false` with a plan of `users` users and `loops` loops of one GET to `base`.
fn closing_plan(base: &str, users: u32, loops: u32) -> String {
    format!(
        "name: closing\ndefaults:\n  base_url: \"{base}\"\n  keep_alive: false\n  timeout: 5s\nthread_groups:\n  \
         - name: users\n    threads: {users}\n    loops: {loops}\n    steps:\n      - name: get\n        \
         request: {{ url: /ok }}\n"
    )
}

#[test]
fn keep_alive_false_to_a_refused_port_fails_each_request_with_connection_refused() {
    let dir = TempDir::new("keep_alive_off_refused");
    let plan = dir.write("plan.yaml", closing_plan(&common::refused_url(), 2, 3));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 6, "one failed row per request:\n{}", jtl.text);
    for row in &jtl.rows {
        assert_eq!(row["success"], "false", "{row:?}");
        assert_eq!(row["responseCode"], "Non HTTP response code: ConnectionRefused", "{row:?}");
        assert_eq!(row["sentBytes"], "0", "nothing was sent: {row:?}");
    }
}

/// Over IPv6 loopback (`[::1]`), as over IPv4: a new connection for each request, each answered.
#[test]
fn keep_alive_false_over_ipv6_opens_a_connection_per_request() {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
        common::skip("IPv6 loopback", "PLANRUN_REQUIRE_IPV6", "no [::1] on this machine");
        return;
    };
    let port = listener.local_addr().unwrap().port();
    let (conns, requests) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (c, r) = (conns.clone(), requests.clone());
    // Answers every connection's one request and closes it; never joined (it waits in accept at the end).
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            c.fetch_add(1, Ordering::SeqCst);
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            if seen.windows(4).any(|w| w == b"\r\n\r\n") {
                r.fetch_add(1, Ordering::SeqCst);
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
            }
        }
    });
    let dir = TempDir::new("keep_alive_off_ipv6");
    let plan = dir.write("plan.yaml", closing_plan(&format!("http://[::1]:{port}"), 2, 3));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 6, "{}", jtl.text);
    assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
    assert_eq!(requests.load(Ordering::SeqCst), 6, "one request on the server per row");
    assert_eq!(conns.load(Ordering::SeqCst), 6, "one connection per request");
}
