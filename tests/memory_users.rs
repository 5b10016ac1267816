//! A virtual user lets go of its per-request buffers while it thinks (so 10,000 thinking users hold only
//! what they must): what it does after a pause is unchanged. Every test counts the requests the server
//! read against the rows written.

use crate::common;

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
    // A 3 KiB head, larger than the 2 KiB head buffer users once held, before and after each pause: read
    // whole in the thread's scratch buffer, an extracted header and an `expr:` assertion see all of it.
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

#[test]
fn a_panic_in_the_request_of_a_user_that_thinks_is_a_failed_sample_and_the_user_goes_on() {
    // A user that pauses holds its request's future boxed (src/run/vuser/holding.rs): a panic in it is
    // caught as in the future kept in place (tests/internal_errors.rs).
    let server = Server::start();
    let dir = TempDir::new("memory_think_panic");
    let plan = format!(
        "name: panics\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 4\n    loops: 3\n    \
         think_time: 5ms\n    steps:\n      - name: r\n        request: {{ url: \"/ok?p={{{{ test_panic(iteration == 2) }}}}\" }}\n",
        server.url()
    );
    let plan = dir.write("plan.yaml", plan);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"])
        .current_dir(dir.path())
        .env("PLANRUN_TEST_PANIC", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run planrun");
    assert_eq!(out.status.code(), Some(4), "{}", common::describe(&out));
    let rows = read_jtl(&dir.join("out.jtl")).rows;
    assert_eq!(rows.len(), 12);
    let internal: Vec<_> = rows.iter().filter(|r| r["success"] != "true").collect();
    assert_eq!(internal.len(), 4, "{rows:?}");
    for row in &internal {
        assert_eq!(row["responseCode"], "Non HTTP response code: Internal", "{row:?}");
        assert!(row["responseMessage"].contains("planrun bug"), "{row:?}");
    }
    assert_eq!(server.count(), 8, "the panicking requests were never sent; the others were");
    assert!(!common::stderr(&out).contains("panicked at"), "{}", common::stderr(&out));
}
