//! What happens inside a virtual user, tried the hostile way: servers that close kept-alive connections
//! without saying so, open-model iterations that pause first, and arrival rates no machine can dispatch.
//! Every test counts the requests the server read against the rows written.

use crate::common;

use common::{num, planrun, read_jtl, RawServer, TempDir};

/// Answers `200 ok` and closes each connection 2 ms after its `close_after`-th response.
fn closing(close_after: u64) -> RawServer {
    RawServer::start(common::OK_RESPONSE, close_after)
}

fn closed_plan(url: &str, method: &str, users: u32, loops: u32, think: &str) -> String {
    format!(
        "name: closing\ndefaults: {{ base_url: \"{url}\" }}\nthread_groups:\n  - name: g\n    threads: {users}\n    \
         loops: {loops}\n    steps:\n      - name: r\n        request: {{ method: {method}, url: /x }}\n{think}"
    )
}

/// Rows and failed rows of a run that must exit 0.
fn run_counting(dir: &TempDir, plan: &str) -> (Vec<std::collections::HashMap<String, String>>, String) {
    let plan = dir.write("plan.yaml", plan);
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    (jtl.rows.clone(), jtl.text.clone())
}

#[test]
fn gets_on_a_server_that_closes_after_every_response_all_succeed() {
    let server = closing(1);
    let dir = TempDir::new("closing_every_get");
    let (rows, text) = run_counting(&dir, &closed_plan(&server.url(), "GET", 1, 100, ""));
    assert_eq!(rows.len(), 100);
    let failed: Vec<_> = rows.iter().filter(|r| r["success"] != "true").collect();
    assert!(failed.is_empty(), "{} of 100 failed, first: {:?}", failed.len(), failed.first());
    assert_eq!(server.requests(), 100, "{text}");
}

#[test]
fn gets_from_several_users_on_a_server_that_closes_after_every_third_response_all_succeed() {
    let server = closing(3);
    let dir = TempDir::new("closing_third_get");
    let (rows, text) = run_counting(&dir, &closed_plan(&server.url(), "GET", 3, 100, ""));
    assert_eq!(rows.len(), 300);
    let failed = rows.iter().filter(|r| r["success"] != "true").count();
    assert_eq!(failed, 0, "{text}");
    assert_eq!(server.requests(), 300);
}

#[test]
fn a_close_noticed_during_a_pause_opens_a_new_connection_even_for_posts() {
    // With a pause after each request the FIN has arrived before the next one: the connection is known
    // closed before anything is sent, so even a POST goes on a new connection and nothing fails.
    let server = closing(1);
    let dir = TempDir::new("closing_post_pause");
    let think = "    think_time: 20ms\n";
    let (rows, text) = run_counting(&dir, &closed_plan(&server.url(), "POST", 2, 20, think));
    assert_eq!(rows.len(), 40);
    assert_eq!(rows.iter().filter(|r| r["success"] != "true").count(), 0, "{text}");
    assert_eq!(server.requests(), 40);
}

#[test]
fn posts_on_a_closing_server_are_never_sent_twice() {
    // Without a pause the close may cross the next POST: that one fails rather than being resent, so the
    // server never reads more requests than there are rows, and every success is one request read.
    let server = closing(1);
    let dir = TempDir::new("closing_post");
    let (rows, _) = run_counting(&dir, &closed_plan(&server.url(), "POST", 1, 100, ""));
    assert_eq!(rows.len(), 100);
    let ok = rows.iter().filter(|r| r["success"] == "true").count() as u64;
    assert_eq!(server.requests(), ok, "each success is one request read, and nothing else was read");
    let failed: Vec<_> = rows.iter().filter(|r| r["success"] != "true").collect();
    assert!(!failed.is_empty(), "the server resets each connection under the next POST, which is not resent");
    for row in failed {
        assert_eq!(row["responseCode"], "Non HTTP response code: ConnectionReset", "{row:?}");
    }
}

#[test]
fn an_open_iteration_that_pauses_first_does_not_count_its_pause_as_response_time() {
    let server = closing(u64::MAX);
    let dir = TempDir::new("open_think_first");
    let plan = format!(
        "name: open-think\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    arrival_rate: 4/s\n    \
         duration: 1s\n    max_threads: 4\n    steps:\n      - think: 500ms\n      - name: first\n        \
         request: {{ url: /a }}\n      - name: second\n        request: {{ url: /b }}\n",
        server.url()
    );
    let (rows, text) = run_counting(&dir, &plan);
    assert_eq!(rows.len() as u64, server.requests());
    assert_eq!(rows.len(), 8, "{text}");
    for row in &rows {
        // The server answers at once; 500 ms of the plan's own pause must not be in any request's time.
        assert!(num(row, "elapsed") < 400, "{} took {} ms:\n{text}", row["label"], row["elapsed"]);
    }
}

#[test]
fn an_arrival_rate_no_machine_can_dispatch_ends_at_its_duration_with_drops_counted() {
    let server = closing(u64::MAX);
    let dir = TempDir::new("open_absurd_rate");
    for rate in ["1e15/s", "10000000/s"] {
        let plan = format!(
            "name: absurd\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    arrival_rate: {rate}\n    \
             duration: 1s\n    max_threads: 4\n    steps:\n      - name: r\n        request: {{ url: /a }}\n",
            server.url()
        );
        let before = server.requests();
        let plan = dir.write("plan.yaml", plan);
        // The hang guard of `planrun()` (60 s) fails the test if the schedule is walked arrival by arrival.
        let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
        assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
        let rows = read_jtl(&dir.join("out.jtl")).rows.len() as u64;
        assert!(rows > 0);
        assert_eq!(rows, server.requests() - before, "{rate}");
        let stdout = common::stdout(&out);
        let dropped: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("Dropped iterations: "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no dropped iterations reported for {rate}:\n{stdout}"));
        assert!(dropped > 1000, "{rate}: {dropped} dropped");
    }
}

#[test]
fn a_user_that_goes_between_two_hosts_keeps_one_connection_to_each() {
    let auth = common::Server::start();
    let api = common::Server::start();
    let dir = TempDir::new("two_origins");
    let plan = format!(
        "name: two-origins\nthread_groups:\n  - name: g\n    threads: 2\n    loops: 5\n    steps:\n      \
         - name: token\n        request: {{ url: \"{}/ok\" }}\n      - name: call\n        request: {{ url: \"{}/ok\" }}\n",
        auth.url(),
        api.url()
    );
    let (rows, text) = run_counting(&dir, &plan);
    assert_eq!(rows.len(), 20);
    assert_eq!((auth.count(), api.count()), (10, 10));
    assert!(rows.iter().all(|r| r["success"] == "true"), "{text}");
    // One connection per user and host, and Connect counted only on the request that opened it.
    assert_eq!((auth.connections(), api.connections()), (2, 2));
    let opened = rows.iter().filter(|r| r["Connect"] != "0").count();
    assert!(opened <= 4, "{opened} rows counted a connect:\n{text}");
}
