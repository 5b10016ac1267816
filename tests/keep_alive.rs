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
