//! HTTP/2 through the binary: cleartext with prior knowledge (`http_version: 2`) against an in-process server
//! on the h2 crate's server side, its hostile cases (RST_STREAM, REFUSED_STREAM, GOAWAY, SETTINGS limits, flow
//! control, a reset mid-stream), a GOAWAY whose last-stream id a request crosses (a raw server written frame
//! by frame), dry-run's and `--http-debug`'s HTTP/2 form, and HTTP/2 over TLS by ALPN against Debian's nginx
//! with a test CA.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::h2_raw::{GoAwayServer, LastStream, RawH2Counts};
use common::h2_server::{H2Counts, H2Server, H2Settings};
use common::{num, LoadRun, Ran, Server, TempDir};

fn get(path: &str) -> String {
    format!("      - name: get\n        request:\n          url: {path}\n")
}

/// A run of `users` x `loops` GETs of `path` with `defaults.http_version: 2`.
fn h2c_run(name: &str, server: &H2Server, path: &str, users: u32, loops: u32) -> Ran {
    let dir = TempDir::new(name);
    LoadRun::new(name, &server.url())
        .defaults("  http_version: 2")
        .users(users, loops)
        .steps(&get(path))
        .json()
        .run_any(&dir, &[])
}

fn protocols(ran: &Ran) -> Vec<String> {
    ran.json.iter().map(|j| j["protocol"].as_str().unwrap_or("null").to_string()).collect()
}

fn messages(ran: &Ran) -> Vec<String> {
    ran.jtl.rows.iter().map(|r| r["responseMessage"].clone()).collect()
}

#[test]
fn h2c_with_prior_knowledge_sends_every_request_over_http2_one_connection_per_user() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-ok", &server, "/ok", 2, 5);
    assert_eq!(ran.out.status.code(), Some(0), "{}", common::describe(&ran.out));
    assert_eq!(ran.jtl.rows.len(), 10);
    assert_eq!(server.get(|c: &H2Counts| &c.answered), 10, "rows = requests the server answered");
    assert_eq!(server.get(|c: &H2Counts| &c.connections), 2, "one connection per user");
    assert!(protocols(&ran).iter().all(|p| p == "HTTP/2"), "{:?}", protocols(&ran));
    for row in &ran.jtl.rows {
        assert_eq!((row["responseCode"].as_str(), row["responseMessage"].as_str()), ("200", "OK"));
        assert!(num(row, "bytes") > 0 && num(row, "sentBytes") > 0, "{row:?}");
    }
    // The JTL is the same file for both versions: the same columns.
    let h1 = Server::start();
    let dir = TempDir::new("h2c-ok-h1");
    let ran1 = LoadRun::new("h1", &h1.url()).steps(&get("/ok")).json().run(&dir, &[]);
    assert_eq!(ran1.jtl.header, ran.jtl.header);
    assert_eq!(protocols(&ran1), ["HTTP/1.1"]);
}

#[test]
fn a_request_may_force_http_1_1_under_a_default_of_http2() {
    let server = Server::start();
    let dir = TempDir::new("h2-force-1-1");
    let steps = "      - name: get\n        request:\n          url: /ok\n          http_version: 1.1\n";
    let ran = LoadRun::new("force", &server.url()).defaults("  http_version: 2").steps(steps).json().run(&dir, &[]);
    assert_eq!(ran.jtl.rows[0]["responseCode"], "200");
    assert_eq!(protocols(&ran), ["HTTP/1.1"]);
    assert_eq!(server.count(), 1);
}

#[test]
fn http2_to_a_server_that_speaks_only_http_1_1_is_a_failed_sample() {
    let server = Server::start();
    let dir = TempDir::new("h2c-to-h1");
    let ran = LoadRun::new("h2c-h1", &server.url()).defaults("  http_version: 2").steps(&get("/ok")).run_any(&dir, &[]);
    assert_eq!(ran.jtl.rows.len(), 1);
    assert_eq!(ran.jtl.rows[0]["success"], "false");
    assert!(ran.jtl.rows[0]["responseCode"].starts_with("Non HTTP response code"), "{:?}", ran.jtl.rows[0]);
}

#[test]
fn a_post_body_respects_the_servers_settings_and_flow_control() {
    // One stream at a time, the smallest frames, and a 1 KiB window: 100 KiB go out in window-sized pieces.
    let server = H2Server::with_settings(H2Settings {
        max_concurrent_streams: Some(1),
        initial_window_size: Some(1024),
        max_frame_size: Some(16_384),
    });
    let dir = TempDir::new("h2c-post");
    let steps = format!(
        "      - name: post\n        request:\n          method: POST\n          url: /echo-size\n          body: \"{}\"\n        \
         assert:\n          - body_contains: \"102400\"\n",
        "y".repeat(102_400)
    );
    let ran = LoadRun::new("post", &server.url())
        .defaults("  http_version: 2")
        .users(2, 3)
        .steps(&steps)
        .json()
        .run(&dir, &[]);
    assert_eq!(ran.jtl.rows.len(), 6);
    assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
    assert_eq!(server.get(|c: &H2Counts| &c.body_bytes), 6 * 102_400);
    assert_eq!(server.get(|c: &H2Counts| &c.answered), 6);
    assert!(ran.jtl.rows.iter().all(|r| num(r, "sentBytes") > 102_400));
}

#[test]
fn a_10_mb_body_arrives_whole_through_flow_control() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-10mb", &server, "/bytes/10485760", 1, 2);
    assert_eq!(ran.out.status.code(), Some(0), "{}", common::describe(&ran.out));
    assert_eq!(ran.jtl.rows.len(), 2);
    for row in &ran.jtl.rows {
        assert_eq!(row["success"], "true", "{row:?}");
        // The body plus its frames' headers and the response head, as counted on the socket.
        assert!((10_485_760..10_485_760 + 64 * 1024).contains(&num(row, "bytes")), "{row:?}");
    }
    assert_eq!(server.get(|c: &H2Counts| &c.answered), 2);
    assert_eq!(server.get(|c: &H2Counts| &c.connections), 1);
}

#[test]
fn rst_stream_is_a_failed_sample_that_names_it_and_the_connection_goes_on() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-reset", &server, "/reset", 1, 3);
    assert_eq!(ran.jtl.rows.len(), 3);
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 3, "not retried: the server may have acted on it");
    for row in &ran.jtl.rows {
        assert_eq!(row["success"], "false");
        assert_eq!(row["responseCode"], "Non HTTP response code: ConnectionReset");
        assert!(row["responseMessage"].contains("RST_STREAM INTERNAL_ERROR"), "{row:?}");
    }
    assert_eq!(server.get(|c: &H2Counts| &c.connections), 1, "a reset stream leaves the connection usable");
    assert!(protocols(&ran).iter().all(|p| p == "HTTP/2"));
}

#[test]
fn rst_stream_while_a_post_body_waits_for_window_is_a_failed_sample_not_a_hang() {
    // 100 KiB is more than the stream's first window (64 KiB): the reset comes while the rest waits for room.
    let server = H2Server::start();
    let dir = TempDir::new("h2c-reset-early");
    let steps = format!(
        "      - name: post\n        request:\n          method: POST\n          url: /reset-early\n          body: \"{}\"\n",
        "z".repeat(102_400)
    );
    let ran = LoadRun::new("reset-early", &server.url())
        .defaults("  http_version: 2")
        .users(1, 2)
        .steps(&steps)
        .run_any(&dir, &[]);
    assert_eq!(ran.jtl.rows.len(), 2);
    for row in &ran.jtl.rows {
        assert_eq!(row["success"], "false");
        assert!(row["responseMessage"].contains("RST_STREAM CANCEL"), "{row:?}");
    }
    assert_eq!(server.get(|c: &H2Counts| &c.streams_reset_early), 2, "not sent again");
}

#[test]
fn a_refused_stream_is_sent_again_as_the_server_did_not_process_it() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-refused", &server, "/refuse-first", 2, 3);
    assert_eq!(ran.jtl.rows.len(), 6);
    assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
    assert_eq!(server.get(|c: &H2Counts| &c.answered), 6, "rows = requests answered");
    // Each user's first stream was refused once, then sent again on the same connection.
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 8);
    assert_eq!(server.get(|c: &H2Counts| &c.connections), 2);
}

#[test]
fn a_graceful_goaway_moves_the_next_request_to_a_new_connection() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-goaway", &server, "/goaway-after", 1, 4);
    assert_eq!(ran.jtl.rows.len(), 4);
    assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
    assert_eq!(server.get(|c: &H2Counts| &c.answered), 4);
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 4);
    // A graceful GOAWAY still takes the streams that cross it (it names the last one only after a PING), so a
    // connection carries one or two requests.
    let connections = server.get(|c: &H2Counts| &c.connections);
    assert!((2..=4).contains(&connections), "{connections} connections");
}

#[test]
fn an_abrupt_goaway_without_a_response_is_a_failed_sample() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-goaway-abrupt", &server, "/goaway-abrupt", 1, 2);
    assert_eq!(ran.jtl.rows.len(), 2);
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 2, "the server took each stream: not sent again");
    for row in &ran.jtl.rows {
        assert_eq!(row["success"], "false");
        assert!(row["responseCode"].starts_with("Non HTTP response code: "), "{row:?}");
        assert!(
            row["responseMessage"].contains("GOAWAY INTERNAL_ERROR")
                || row["responseMessage"].contains("Connection closed before the response was complete"),
            "{row:?}"
        );
    }
}

#[test]
fn a_connection_reset_mid_body_is_a_failed_sample() {
    let server = H2Server::start();
    let ran = h2c_run("h2c-cut", &server, "/cut", 1, 2);
    assert_eq!(ran.jtl.rows.len(), 2);
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 2, "a response had begun: not sent again");
    for row in &ran.jtl.rows {
        assert_eq!(row["success"], "false");
        assert_eq!(row["responseCode"], "Non HTTP response code: ConnectionReset", "{row:?}");
    }
}

#[test]
fn http_version_takes_1_1_2_or_auto_and_says_where_it_is_wrong() {
    let dir = TempDir::new("h2-bad-version");
    let validate = |dir: &TempDir, version: &str| {
        let plan =
            LoadRun::new("v", "http://127.0.0.1:1").defaults(&format!("  http_version: {version}")).steps(&get("/ok"));
        let path = dir.write("plan.yaml", plan.yaml());
        common::planrun(dir.path(), ["validate", path.to_str().unwrap()])
    };
    let out = validate(&dir, "3");
    assert_eq!(out.status.code(), Some(2), "{}", common::describe(&out));
    let err = common::stderr(&out);
    assert!(err.contains("plan.yaml:4:17") && err.contains("unknown HTTP version `3`"), "{err}");
    assert!(err.contains("1.1, 2 or auto"), "{err}");
    for ok in ["1.1", "2", "\"2\"", "auto"] {
        let dir = TempDir::new("h2-good-version");
        let out = validate(&dir, ok);
        assert_eq!(out.status.code(), Some(0), "{ok}: {}", common::describe(&out));
    }
}

/// dry-run's output for one request over HTTP/2: the line that names the version, the fields (name, value)
/// up to the blank line, and the body.
fn dry_run_h2(out: &str, step: &str) -> (String, Vec<(String, String)>, String) {
    let at = out.find(&format!(": {step}\n")).unwrap_or_else(|| panic!("no step {step} in:\n{out}"));
    let text = &out[at + step.len() + 3..];
    let (version, rest) = text.split_once('\n').unwrap();
    let (head, rest) = rest.split_once("\n\n").unwrap();
    let body = rest.split("\n\n###").next().unwrap().trim_end_matches('\n').to_string();
    // A pseudo-header field's name starts with its `:`; the name ends at the first `: ` after that.
    let field = |l: &str| {
        let cut = l[1..].find(": ").unwrap() + 1;
        (l[..cut].to_string(), l[cut + 2..].to_string())
    };
    let fields = head.lines().map(field).collect();
    (version.to_string(), fields, body)
}

#[test]
fn dry_run_shows_an_http2_request_as_the_server_receives_it() {
    let server = H2Server::start();
    let steps = [
        "      - name: post\n        request:\n          method: POST\n          url: /echo-size?q=1\n",
        "          headers:\n            X-Trace: abc\n            Connection: keep-alive\n            Keep-Alive: 5\n",
        "          json: {a: 1, b: [x]}\n",
        "      - name: old\n        request:\n          url: /ok\n          http_version: 1.1\n",
    ]
    .concat();
    let plan = LoadRun::new("dry-h2", &server.url())
        .defaults("  http_version: 2\n  headers:\n    Accept: application/json\n    TE: trailers")
        .steps(&steps);
    let dir = TempDir::new("h2-dry-run");
    let path = dir.write("plan.yaml", plan.yaml());
    let out = common::planrun(dir.path(), ["dry-run", path.to_str().unwrap(), "-n", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let text = common::stdout(&out);
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 0, "dry-run sends nothing");
    let (version, fields, body) = dry_run_h2(&text, "post");
    assert!(version.contains("HTTP/2") && version.contains("h2c"), "{version}");
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..4], [":method", ":scheme", ":authority", ":path"], "{text}");
    assert!(!names.iter().any(|n| ["host", "connection", "keep-alive"].contains(n)), "{text}");
    assert!(names.iter().all(|n| *n == n.to_lowercase()), "{text}");
    // The HTTP/1.1 request of the same plan is shown as before.
    let old = &text[text.find(": old\n").unwrap()..];
    assert!(old.contains("\nGET /ok HTTP/1.1\r\nHost: 127.0.0.1:") && old.contains("\r\nTe: trailers\r\n"), "{old}");

    // What the server received, field by field, is what dry-run showed.
    // (The HTTP/1.1 request fails there: the server speaks only HTTP/2.)
    let ran = plan.json().run_any(&dir, &[]);
    assert_eq!(ran.jtl.rows[0]["success"], "true", "{:?}", messages(&ran));
    let heads = server.counts.heads.lock().unwrap();
    assert_eq!(heads.len(), 1, "the HTTP/1.1 request did not reach the HTTP/2 server");
    assert_eq!(heads[0].0, fields, "{text}");
    assert_eq!(String::from_utf8_lossy(&heads[0].1), body);
}

/// The exchanges `--http-debug` printed on stderr, by the label of their sample.
fn http_debug_texts(err: &str) -> Vec<(String, String)> {
    err.split("--- http-debug: `")
        .skip(1)
        .map(|b| b.split("\nplanrun: ").next().unwrap_or(b))
        .map(|b| (b[..b.find('`').unwrap()].to_string(), b.to_string()))
        .collect()
}

/// The fields (name, value) of the HEADERS frame `--http-debug` shows under `title`, after the line naming
/// HTTP/2, which must hold `version`.
fn http_debug_h2_fields(text: &str, title: &str, version: &str) -> Vec<(String, String)> {
    let at = text.find(&format!("\n{title}:\n")).unwrap_or_else(|| panic!("no {title}: in\n{text}"));
    let rest = &text[at + title.len() + 3..];
    let (line, rest) = rest.split_once('\n').unwrap();
    assert!(line.starts_with("(HTTP/2") && line.contains(version), "{line}\n{text}");
    let head = rest.split("\n\n").next().unwrap();
    let field = |l: &str| {
        let cut = l[1..].find(": ").unwrap_or_else(|| panic!("not a field: {l}\n{text}")) + 1;
        (l[..cut].to_string(), l[cut + 2..].to_string())
    };
    head.lines().map(field).collect()
}

#[test]
fn http_debug_shows_an_http2_exchange_as_its_headers_frames_carried_it() {
    const SECRET: &str = "Sup3rS3cretKey";
    let server = H2Server::start();
    let steps = [
        "      - name: post\n        request:\n          method: POST\n          url: /echo-size\n",
        "          query: { key: \"{{ props.key }}\" }\n",
        "          headers:\n            X-Key: \"{{ props.key }}\"\n            Authorization: Basic dXNlcjpwYXNz\n",
        "            Connection: keep-alive\n",
        "          json: { key: \"{{ props.key }}\" }\n",
        "      - name: missing\n        request:\n          url: /missing\n",
        "      - name: old\n        request:\n          url: /ok\n          http_version: 1.1\n",
        "      - name: moved\n        request:\n          url: /to-ok\n",
    ]
    .concat();
    let plan = LoadRun::new("debug-h2", &server.url())
        .top(&format!("properties:\n  key: {{ value: {SECRET}, secret: true }}"))
        .defaults("  http_version: 2\n  cookies: false")
        .steps(&steps);

    let dir = TempDir::new("h2-http-debug-full");
    let ran = plan.run_any(&dir, &["--http-debug=full", "--http-debug-first", "4"]);
    assert_eq!(ran.jtl.rows.len(), 4);
    assert_eq!(server.get(|c: &H2Counts| &c.streams), 4, "the HTTP/1.1 request did not reach the HTTP/2 server");
    let err = ran.stderr();
    assert!(!err.contains(SECRET), "{err}");
    let shown = http_debug_texts(&err);
    let labels: Vec<&str> = shown.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["post", "missing", "old", "moved"], "{err}");

    // The request: the fields the server received, in its order, secrets and Authorization as `***`.
    let post = &shown[0].1;
    let fields = http_debug_h2_fields(post, "Request", "cleartext (h2c)");
    let heads = server.counts.heads.lock().unwrap().clone();
    let received: Vec<(String, String)> = heads[0]
        .0
        .iter()
        .map(|(n, v)| (n.clone(), if n == "authorization" { "***".into() } else { v.replace(SECRET, "***") }))
        .collect();
    assert_eq!(fields, received, "{post}");
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..4], [":method", ":scheme", ":authority", ":path"], "{post}");
    assert!(!names.iter().any(|n| ["host", "connection"].contains(n)), "{post}");
    assert!(!post.contains("HTTP/1.1") && !post.contains("Host:"), "{post}");
    assert!(post.contains("\n\n{\"key\":\"***\"}\n"), "the request's body: {post}");
    // The response: its status and fields as received, lower case, and its body.
    let fields = http_debug_h2_fields(post, "Response", "HTTP/2");
    assert_eq!(fields[0], (":status".to_string(), "200".to_string()), "{post}");
    assert!(fields.contains(&("content-type".to_string(), "text/plain".to_string())), "{post}");
    let size = String::from_utf8_lossy(&heads[0].1).len();
    assert!(post.contains(&format!("\n\n{size}\n")), "the response's body: {post}");

    let missing = &shown[1].1;
    assert!(missing.starts_with("missing` (g 1-1) failed: 404 Not Found\n"), "{missing}");
    assert_eq!(http_debug_h2_fields(missing, "Request", "h2c")[3], (":path".to_string(), "/missing".to_string()));
    assert_eq!(http_debug_h2_fields(missing, "Response", "HTTP/2")[0].1, "404", "{missing}");
    assert!(missing.contains("\n\nnot found\n"), "{missing}");
    // A request forced to HTTP/1.1 is shown as HTTP/1.1 sent it.
    let old = &shown[2].1;
    assert!(old.contains("\nRequest:\nGET /ok HTTP/1.1\nHost: 127.0.0.1:"), "{old}");
    assert!(old.contains("\nNo response: ") && !old.contains("(HTTP/2"), "{old}");
    // A followed redirect: each request and response of the chain in the form of its hop.
    let moved = &shown[3].1;
    assert_eq!(http_debug_h2_fields(moved, "Request", "h2c")[3].1, "/to-ok", "{moved}");
    let redirect = http_debug_h2_fields(moved, "RedirectResponse", "HTTP/2");
    assert_eq!(redirect[..2], [(":status".into(), "302".into()), ("location".into(), "/ok".into())], "{moved}");
    assert_eq!(http_debug_h2_fields(moved, "RedirectRequest", "h2c")[3].1, "/ok", "{moved}");
    assert_eq!(http_debug_h2_fields(moved, "Response", "HTTP/2")[0].1, "200", "{moved}");

    // Heads only: the same forms, no body.
    let dir = TempDir::new("h2-http-debug-heads");
    let ran = plan.run_any(&dir, &["--http-debug"]);
    let err = ran.stderr();
    let shown = http_debug_texts(&err);
    let labels: Vec<&str> = shown.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["missing", "old"], "failed samples only: {err}");
    let missing = &shown[0].1;
    let fields = http_debug_h2_fields(missing, "Request", "h2c");
    assert_eq!(
        fields.iter().map(|(n, _)| n.as_str()).take(4).collect::<Vec<_>>(),
        [":method", ":scheme", ":authority", ":path"]
    );
    assert_eq!(http_debug_h2_fields(missing, "Response", "HTTP/2")[0].1, "404", "{missing}");
    assert!(!missing.contains("not found"), "no body: {missing}");
    assert!(shown[1].1.contains("\nRequest:\nGET /ok HTTP/1.1\n"), "{err}");
}

#[test]
fn dry_run_says_over_https_the_version_is_chosen_by_alpn_or_forced() {
    let steps =
        "      - name: auto\n        request:\n          url: /a\n      - name: forced\n        request:\n          \
                 url: /b\n          http_version: 2\n          headers:\n            Authorization: Bearer s3cr3t\n";
    let plan = LoadRun::new("dry-alpn", "https://example.test:8443").steps(steps);
    let dir = TempDir::new("h2-dry-run-alpn");
    let path = dir.write("plan.yaml", plan.yaml());
    let out = common::planrun(dir.path(), ["dry-run", path.to_str().unwrap(), "-n", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let text = common::stdout(&out);
    let auto = &text[text.find(": auto\n").unwrap()..text.find(": forced\n").unwrap()];
    assert!(auto.contains("ALPN") && auto.contains("HTTP/2") && auto.contains("\nGET /a HTTP/1.1\r\n"), "{auto}");
    let (version, fields, _) = dry_run_h2(&text, "forced");
    assert!(version.contains("HTTP/2 over TLS"), "{version}");
    let pseudo: Vec<(&str, &str)> = fields.iter().take(4).map(|(n, v)| (n.as_str(), v.as_str())).collect();
    assert_eq!(
        pseudo,
        [(":method", "GET"), (":scheme", "https"), (":authority", "example.test:8443"), (":path", "/b")],
        "{text}"
    );
    assert!(fields.contains(&("authorization".into(), "***".into())) && !text.contains("s3cr3t"), "{text}");

    // Cleartext HTTP/2 has no absolute form for a forward proxy: dry-run says a run fails it, as it does.
    let plan = LoadRun::new("dry-h2c-proxy", "http://example.test").defaults("  http_version: 2").steps(&get("/c"));
    let path = dir.write("proxied.yaml", plan.yaml());
    let out = common::planrun(dir.path(), ["dry-run", path.to_str().unwrap(), "--proxy", "http://127.0.0.1:3128"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let text = common::stdout(&out);
    assert!(text.contains("cannot carry cleartext HTTP/2 (h2c): a run fails this request"), "{text}");
    assert!(!text.contains("in absolute form"), "{text}");
    let ran = plan.run_any(&dir, &["--proxy", "http://127.0.0.1:3128"]);
    assert_eq!(ran.jtl.rows.len(), 1);
    assert!(ran.jtl.rows[0]["responseMessage"].contains("h2c) cannot go through the proxy"), "{:?}", ran.jtl.rows);
}

// ---------------------------------------------------------------------------------------------------------
// A GOAWAY whose last-stream id a request crosses (a raw server: the h2 crate's cannot send one)
// ---------------------------------------------------------------------------------------------------------

/// A run of `users` x `loops` requests `method /path` with a body of `body` bytes, over h2c.
fn goaway_run(name: &str, server: &GoAwayServer, method: &str, body: usize, users: u32, loops: u32) -> Ran {
    let dir = TempDir::new(name);
    let body = if body > 0 { format!("          body: \"{}\"\n", "b".repeat(body)) } else { String::new() };
    let steps = format!("      - name: send\n        request:\n          method: {method}\n          url: /x\n{body}");
    LoadRun::new(name, &server.url())
        .defaults("  http_version: 2")
        .users(users, loops)
        .steps(&steps)
        .json()
        .run_any(&dir, &[])
}

#[test]
fn a_post_above_a_goaways_last_stream_was_not_processed_and_is_sent_again_on_a_new_connection() {
    // Each connection: stream 1 answered; stream 3 gets GOAWAY (last stream 1, NO_ERROR) and the close.
    for (name, body) in [("h2-goaway-below-post", 5), ("h2-goaway-below-post-100k", 102_400)] {
        // 100 KiB is more than the stream's first window: the GOAWAY comes while the body still waits for room.
        let server = GoAwayServer::start(LastStream::Before);
        let ran = goaway_run(name, &server, "POST", body, 2, 3);
        assert_eq!(ran.out.status.code(), Some(0), "{}", common::describe(&ran.out));
        assert_eq!(ran.jtl.rows.len(), 6, "rows = the requests the users made");
        assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
        assert!(protocols(&ran).iter().all(|p| p == "HTTP/2"), "{:?}", protocols(&ran));
        // Each user: 1 on the first connection, then each later one sent on stream 3, refused by the GOAWAY
        // and sent again as stream 1 of a new connection.
        assert_eq!(server.get(|c: &RawH2Counts| &c.answered), 6, "each request processed once");
        assert_eq!(server.get(|c: &RawH2Counts| &c.answered_body_bytes), 6 * body as u64);
        assert_eq!(server.get(|c: &RawH2Counts| &c.streams), 10);
        assert_eq!(server.get(|c: &RawH2Counts| &c.connections), 6);
    }
}

#[test]
fn a_post_a_goaway_may_have_processed_is_a_failed_sample_and_not_sent_again() {
    // Each connection: stream 1 answered; stream 3 gets GOAWAY naming stream 3 itself, and the close.
    let server = GoAwayServer::start(LastStream::Including);
    let ran = goaway_run("h2-goaway-at-post", &server, "POST", 5, 1, 3);
    assert_eq!(ran.jtl.rows.len(), 3);
    let success: Vec<&str> = ran.jtl.rows.iter().map(|r| r["success"].as_str()).collect();
    assert_eq!(success, ["true", "false", "true"], "{:?}", messages(&ran));
    let failed = &ran.jtl.rows[1];
    assert_eq!(failed["responseCode"], "Non HTTP response code: ConnectionReset", "{failed:?}");
    assert!(failed["responseMessage"].contains("GOAWAY"), "{failed:?}");
    assert!(failed["responseMessage"].contains("may have processed"), "{failed:?}");
    assert_eq!(server.get(|c: &RawH2Counts| &c.streams), 3, "the POST was not sent again");
    assert_eq!(server.get(|c: &RawH2Counts| &c.answered), 2);
    assert_eq!(server.get(|c: &RawH2Counts| &c.connections), 2);
}

#[test]
fn a_get_a_goaway_may_have_processed_is_sent_again_on_a_new_connection() {
    let server = GoAwayServer::start(LastStream::Including);
    let ran = goaway_run("h2-goaway-at-get", &server, "GET", 0, 1, 3);
    assert_eq!(ran.out.status.code(), Some(0), "{}", common::describe(&ran.out));
    assert_eq!(ran.jtl.rows.len(), 3);
    assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
    // An idempotent request whose reused connection ended before any of its response came is sent again.
    assert_eq!(server.get(|c: &RawH2Counts| &c.streams), 5);
    assert_eq!(server.get(|c: &RawH2Counts| &c.answered), 3);
    assert_eq!(server.get(|c: &RawH2Counts| &c.connections), 3);
}

// ---------------------------------------------------------------------------------------------------------
// nginx over TLS, HTTP/2 by ALPN
// ---------------------------------------------------------------------------------------------------------

/// Debian's nginx, on a loopback port with `http2` and TLS from a test CA, logging each request.
struct Nginx {
    child: Child,
    port: u16,
    /// A port where it speaks only HTTP/1.1 (no `http2`), over TLS too.
    h1_port: u16,
    dir: TempDir,
}

impl Nginx {
    fn start(name: &str) -> Option<Nginx> {
        let bin = ["/usr/sbin/nginx", "nginx"].into_iter().find(|b| {
            Command::new(b).arg("-v").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
        });
        let Some(bin) = bin else {
            common::skip("nginx", "PLANRUN_REQUIRE_NGINX", "no nginx binary (apt-get install nginx-light)");
            return None;
        };
        let dir = TempDir::new(name);
        let (ca, cert, key) = test_ca();
        dir.write("ca.pem", ca);
        dir.write("server.pem", cert);
        dir.write("server.key", key);
        let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (port, h1_port) = (free(), free());
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log {d}/access.log;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             server {{\n    listen 127.0.0.1:{port} ssl http2;\n    ssl_certificate {d}/server.pem;\n    \
             ssl_certificate_key {d}/server.key;\n    keepalive_requests 100000;\n    \
             location / {{ default_type text/plain; return 200 \"ok\"; }}\n  }}\n  \
             server {{\n    listen 127.0.0.1:{h1_port} ssl;\n    ssl_certificate {d}/server.pem;\n    \
             ssl_certificate_key {d}/server.key;\n    location / {{ return 200 \"ok\"; }}\n  }}\n}}\n"
        );
        let conf = dir.write("nginx.conf", conf);
        let child = Command::new(bin)
            .args(["-p", &d.to_string(), "-c", conf.to_str().unwrap(), "-e", &format!("{d}/error.log")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        // Held from here, so it is stopped (and waited for) on every path. Without a master process nginx is
        // this one process: killing it leaves no worker behind.
        let nginx = Nginx { child, port, h1_port, dir };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(nginx);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let dir = &nginx.dir;
        let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
        panic!("nginx did not listen on {port}: {log}");
    }

    fn log_lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default();
        text.lines().map(str::to_string).collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A test CA's certificate, and a server certificate it signed for 127.0.0.1 and localhost with its key (PEM).
fn test_ca() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "planrun h2 test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

#[test]
fn nginx_over_tls_is_reached_over_http2_by_alpn_with_rows_equal_to_its_log() {
    let Some(nginx) = Nginx::start("h2-nginx") else { return };
    let dir = TempDir::new("h2-nginx-run");
    std::fs::copy(nginx.dir.join("ca.pem"), dir.join("ca.pem")).unwrap();
    let url = format!("https://127.0.0.1:{}", nginx.port);
    let steps =
        "      - name: get\n        request:\n          url: /ok\n        assert:\n          - status: 200\n          \
                 - body_contains: ok\n";
    let ran = LoadRun::new("nginx-h2", &url)
        .defaults("  tls:\n    ca: ca.pem")
        .users(3, 7)
        .steps(steps)
        .json()
        .run(&dir, &["--http-debug-first", "1"]);
    assert_eq!(ran.jtl.rows.len(), 21);
    assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
    assert!(protocols(&ran).iter().all(|p| p == "HTTP/2"), "{:?}", protocols(&ran));
    let log = nginx.log_lines();
    assert_eq!(log.len(), 21, "rows = nginx's access log");
    assert!(log.iter().all(|l| l.contains("\"GET /ok HTTP/2.0\" 200")), "{log:?}");
    // The version is what ALPN chose: `--http-debug` shows the fields of the HEADERS frames.
    let shown = http_debug_texts(&ran.stderr());
    assert_eq!(shown.len(), 1, "{}", ran.stderr());
    let fields = http_debug_h2_fields(&shown[0].1, "Request", "over TLS");
    assert_eq!(fields[1], (":scheme".to_string(), "https".to_string()), "{}", shown[0].1);
    assert_eq!(http_debug_h2_fields(&shown[0].1, "Response", "HTTP/2")[0].1, "200", "{}", shown[0].1);

    // Forced to HTTP/1.1, ALPN offers only http/1.1 and nginx answers over it.
    let dir = TempDir::new("h2-nginx-run-1-1");
    std::fs::copy(nginx.dir.join("ca.pem"), dir.join("ca.pem")).unwrap();
    let ran = LoadRun::new("nginx-h1", &url)
        .defaults("  tls:\n    ca: ca.pem\n  http_version: 1.1")
        .users(1, 2)
        .steps(steps)
        .json()
        .run(&dir, &[]);
    assert!(ran.jtl.rows.iter().all(|r| r["success"] == "true"), "{:?}", messages(&ran));
    assert_eq!(protocols(&ran), ["HTTP/1.1", "HTTP/1.1"]);
    let log = nginx.log_lines();
    assert_eq!(log.len(), 23);
    assert!(log[21..].iter().all(|l| l.contains("\"GET /ok HTTP/1.1\" 200")), "{log:?}");

    // Where nginx does not speak HTTP/2, ALPN chooses http/1.1 by default, and `http_version: 2` fails saying
    // why, before any request is sent.
    let dir = TempDir::new("h2-nginx-run-h1-only");
    std::fs::copy(nginx.dir.join("ca.pem"), dir.join("ca.pem")).unwrap();
    let h1_url = format!("https://127.0.0.1:{}", nginx.h1_port);
    let steps_both =
        format!("{steps}      - name: forced\n        request:\n          url: /ok\n          http_version: 2\n");
    let ran = LoadRun::new("nginx-h1-only", &h1_url)
        .defaults("  tls:\n    ca: ca.pem")
        .steps(&steps_both)
        .json()
        .run_any(&dir, &["--http-debug-first", "2"]);
    assert_eq!(ran.jtl.rows.len(), 2);
    assert_eq!((ran.jtl.rows[0]["success"].as_str(), protocols(&ran)[0].as_str()), ("true", "HTTP/1.1"));
    let shown = http_debug_texts(&ran.stderr());
    assert_eq!(shown.len(), 2, "{}", ran.stderr());
    assert!(shown[0].1.contains("\nRequest:\nGET /ok HTTP/1.1\nHost: 127.0.0.1:"), "{}", shown[0].1);
    assert!(shown[0].1.contains("\nResponse:\nHTTP/1.1 200 OK\n") && !shown[0].1.contains("(HTTP/2"), "{}", shown[0].1);
    // A request forced to HTTP/2 could only go over it: it shows that form, and why nothing was sent.
    assert_eq!(http_debug_h2_fields(&shown[1].1, "Request", "over TLS")[0].1, "GET", "{}", shown[1].1);
    assert!(shown[1].1.contains("\nNo response: Tls: "), "{}", shown[1].1);
    let forced = &ran.jtl.rows[1];
    assert_eq!(forced["success"], "false");
    assert_eq!(forced["responseCode"], "Non HTTP response code: Tls", "{forced:?}");
    assert!(forced["responseMessage"].contains("did not agree to HTTP/2 (ALPN"), "{forced:?}");
    assert_eq!(nginx.log_lines().len(), 24, "the forced request never reached nginx");
}
