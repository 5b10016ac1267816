//! A virtual user lets go of its per-request buffers while it thinks (so 10,000 thinking users hold only
//! what they must): what it does after a pause is unchanged. Every test counts the requests the server
//! read against the rows written.

mod common;

use common::{planrun, read_jtl, RawServer, Server, TempDir};

fn run_ok(dir: &TempDir, plan: &str) -> Vec<std::collections::HashMap<String, String>> {
    let plan = dir.write("plan.yaml", plan);
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    read_jtl(&dir.join("out.jtl")).rows
}

#[test]
fn users_that_think_between_requests_keep_their_connection_and_every_request_succeeds() {
    let server = Server::start();
    let dir = TempDir::new("memory_think");
    let plan = format!(
        "name: think\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 3\n    loops: 4\n    \
         think_time: 20ms\n    steps:\n      - name: big\n        request: {{ url: /chunked/5000 }}\n        \
         assert:\n          - body_contains: abcdefghij\n      - name: small\n        request: {{ url: /ok }}\n        \
         assert:\n          - body_contains: ok\n",
        server.url()
    );
    let rows = run_ok(&dir, &plan);
    assert_eq!(rows.len(), 24);
    let failed: Vec<_> = rows.iter().filter(|r| r["success"] != "true").collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(server.count(), rows.len());
    assert_eq!(server.connections(), 3, "a pause lets go of buffers, not of the kept-alive connection");
}

#[test]
fn a_head_larger_than_the_head_buffer_after_a_pause_is_read_whole() {
    // The first response of each pair grows the head buffer past its 2 KiB; the pause then frees it, and
    // the next response (of the same size) is read into a buffer made afresh.
    let pad = "p".repeat(3000);
    let response = format!("HTTP/1.1 200 OK\r\nX-Pad: {pad}\r\nContent-Length: 2\r\n\r\nok");
    let server = RawServer::start(Box::leak(response.into_bytes().into_boxed_slice()), u64::MAX);
    let dir = TempDir::new("memory_big_head");
    let plan = format!(
        "name: head\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 2\n    loops: 3\n    \
         steps:\n      - name: r\n        request: {{ url: /x }}\n        extract:\n          pad: {{ header: X-Pad }}\n        \
         assert:\n          - status: 200\n      - think: 10ms\n      - name: again\n        request: {{ url: \"/y\" }}\n        \
         assert:\n          - expr: \"{{{{ response.headers['x-pad'] | length == 3000 }}}}\"\n",
        server.url()
    );
    let rows = run_ok(&dir, &plan);
    assert_eq!(rows.len(), 12);
    let failed: Vec<_> = rows.iter().filter(|r| r["success"] != "true").collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(server.requests(), 12);
}
