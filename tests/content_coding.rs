//! Compressed responses: a body with a Content-Encoding (gzip, deflate zlib or raw, br, zstd and chains) is
//! decoded when something reads it, the JTL's `bytes` stays the bytes on the wire, `defaults.compression`
//! sends Accept-Encoding, and a hostile server (a truncated or corrupt stream, a lying header, a bomb) makes
//! a failed sample with its reason, never a panic nor a lost row.

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

use crate::common;

use common::{describe, planrun, read_jtl, TempDir};

const JSON: &str =
    r#"{"user":{"id":42,"name":"Ada"},"items":[1,2,3],"pad":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &brotli::enc::BrotliEncoderParams::default()).unwrap();
    out
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

/// A whole response: `encoding` (none when empty) over `body`, with a Content-Length.
fn response(encoding: &str, body: &[u8]) -> Vec<u8> {
    let coding = if encoding.is_empty() { String::new() } else { format!("Content-Encoding: {encoding}\r\n") };
    let head =
        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{coding}Content-Length: {}\r\n\r\n", body.len());
    [head.as_bytes(), body].concat()
}

/// A server that answers each path with its own bytes (404 for the rest), counting the requests it read
/// and keeping each one's Accept-Encoding header.
struct CodingServer {
    _rt: Runtime,
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    accept_encoding: Arc<Mutex<Vec<Option<String>>>>,
}

impl CodingServer {
    fn start(routes: Vec<(&str, Vec<u8>)>) -> CodingServer {
        let routes: Arc<HashMap<String, Vec<u8>>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.to_string(), r)).collect());
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let accept_encoding = Arc::new(Mutex::new(Vec::new()));
        let (counted, seen) = (requests.clone(), accept_encoding.clone());
        rt.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                tokio::spawn(serve(stream, routes.clone(), counted.clone(), seen.clone()));
            }
        });
        CodingServer { _rt: rt, addr, requests, accept_encoding }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    fn accept_encoding(&self) -> Vec<Option<String>> {
        self.accept_encoding.lock().unwrap().clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    routes: Arc<HashMap<String, Vec<u8>>>,
    counted: Arc<AtomicU64>,
    seen: Arc<Mutex<Vec<Option<String>>>>,
) {
    let mut buf = Vec::new();
    loop {
        // The plans send GETs: a request is its head.
        let end = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        counted.fetch_add(1, Ordering::SeqCst);
        let path = head.split(' ').nth(1).unwrap_or("").to_string();
        let accept = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(n, _)| n.eq_ignore_ascii_case("accept-encoding")))
            .map(|(_, v)| v.trim().to_string());
        seen.lock().unwrap().push(accept);
        let answer = routes
            .get(&path)
            .cloned()
            .unwrap_or_else(|| b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec());
        if stream.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// A plan of one group, `threads` users looping `loops` times over `steps` (YAML, indented for `steps:`).
fn plan(base: &str, defaults: &str, threads: u32, loops: u32, steps: &str) -> String {
    format!(
        "name: coding\ndefaults:\n  base_url: \"{base}\"\n{defaults}thread_groups:\n  - name: g\n    threads: {threads}\n    \
         loops: {loops}\n    steps:\n{steps}"
    )
}

/// A step GETting `path`, with `asserts` (a YAML flow list, or empty for none).
fn step(name: &str, path: &str, asserts: &str) -> String {
    let asserts = if asserts.is_empty() { String::new() } else { format!("        assert: {asserts}\n") };
    format!("      - name: {name}\n        request: {{ url: {path} }}\n{asserts}")
}

/// Runs `plan` with JSON lines (and `extra` arguments); the JTL rows and the JSON lines.
fn run(test: &str, plan: &str, extra: &[&str]) -> (TempDir, Vec<HashMap<String, String>>, Vec<Value>, String) {
    let dir = TempDir::new(test);
    let path = dir.write("plan.yaml", plan);
    let mut args = vec!["run", path.to_str().unwrap(), "-o", "out.jtl", "--json", "out.jsonl", "--quiet"];
    args.extend_from_slice(extra);
    let out = planrun(dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    let lines = std::fs::read_to_string(dir.join("out.jsonl")).unwrap();
    let json = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (dir, jtl.rows, json, common::stderr(&out))
}

fn by_label<'a>(json: &'a [Value], label: &str) -> Vec<&'a Value> {
    json.iter().filter(|l| l["label"] == label).collect()
}

#[test]
fn a_plan_against_a_compressed_json_api_passes_its_jsonpath_assertions_with_every_coding() {
    let body = JSON.as_bytes();
    let cases = [
        ("gzip", "/gzip", response("gzip", &gzip(body))),
        ("br", "/br", response("br", &brotli(body))),
        ("zstd", "/zstd", response("zstd", &zstd(body))),
        ("zlib", "/zlib", response("deflate", &zlib(body))),
        ("raw_deflate", "/raw", response("deflate", &raw_deflate(body))),
        ("chain", "/chain", response("gzip, br", &brotli(&gzip(body)))),
        ("two_lines", "/lines", {
            let head = "HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Encoding: zstd\r\n";
            let encoded = zstd(&zlib(body));
            [format!("{head}Content-Length: {}\r\n\r\n", encoded.len()).as_bytes(), &encoded].concat()
        }),
    ];
    let wire: HashMap<&str, usize> = cases.iter().map(|(n, _, r)| (*n, r.len())).collect();
    let mut steps: String = cases
        .iter()
        .map(|(name, path, _)| {
            step(
                name,
                path,
                r#"[ { jsonpath: { path: "$.user.name", equals: Ada } }, { body_contains: '"items":[1,2,3]' } ]"#,
            )
        })
        .collect();
    // An extractor reads the decoded body too.
    steps.push_str(
        "      - name: extract\n        request: { url: /gzip }\n        extract: { id: { jsonpath: \"$.user.id\" } }\n",
    );
    steps.push_str(&step("use", "/gzip", r#"[ { expr: "{{ id == 42 }}" } ]"#));
    let server = CodingServer::start(cases.iter().map(|(_, p, r)| (*p, r.clone())).collect());
    let (_, rows, json, _) = run("coding_api", &plan(&server.url(), "", 2, 3, &steps), &[]);
    assert_eq!(rows.len() as u64, server.requests(), "every request the server read has its row");
    assert_eq!(rows.len(), 2 * 3 * 9);
    for row in &rows {
        assert_eq!(row["success"], "true", "{row:?}");
    }
    for (name, _, _) in &cases {
        for line in by_label(&json, name) {
            assert_eq!(line["bytes"], wire[name] as u64, "{name}: the JTL's bytes are the bytes on the wire");
            assert_eq!(line["decoded_bytes"], JSON.len() as u64, "{name}: the decoded size in the JSON lines");
        }
    }
    for row in rows.iter().filter(|r| r["label"] == "gzip") {
        assert_eq!(row["bytes"], wire["gzip"].to_string(), "the JTL column too");
    }
    assert!(server.accept_encoding().iter().all(Option::is_none), "no Accept-Encoding unless the plan says so");
}

#[test]
fn compression_in_defaults_sends_accept_encoding_and_a_header_written_wins() {
    let server = CodingServer::start(vec![("/gzip", response("gzip", &gzip(JSON.as_bytes())))]);
    let steps = step("a", "/gzip", r#"[ { jsonpath: { path: "$.user.id", equals: 42 } } ]"#)
        + "      - name: b\n        request: { url: /gzip, headers: { Accept-Encoding: identity } }\n";
    let defaults = "  compression: [gzip, br, zstd]\n";
    let (_, rows, _, _) = run("coding_accept", &plan(&server.url(), defaults, 1, 1, &steps), &[]);
    assert_eq!((rows.len(), server.requests()), (2, 2));
    assert!(rows.iter().all(|r| r["success"] == "true"), "{rows:?}");
    let seen = server.accept_encoding();
    assert_eq!(seen, [Some("gzip, br, zstd".to_string()), Some("identity".to_string())]);

    let defaults = "  compression: [br]\n  headers: { Accept-Encoding: gzip }\n";
    let server = CodingServer::start(vec![("/gzip", response("gzip", &gzip(JSON.as_bytes())))]);
    run("coding_accept_header", &plan(&server.url(), defaults, 1, 1, &step("a", "/gzip", "")), &[]);
    assert_eq!(server.accept_encoding(), [Some("gzip".to_string())], "the header written in defaults wins");
}

#[test]
fn an_unknown_compression_is_refused_with_where_and_a_suggestion() {
    let dir = TempDir::new("coding_bad_key");
    let path = dir.write(
        "plan.yaml",
        plan("http://127.0.0.1:9", "  compression: [gzip, brr, gzip, compress]\n", 1, 1, &step("a", "/", "")),
    );
    let out = planrun(dir.path(), ["run", path.to_str().unwrap(), "-o", "out.jtl"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = common::stderr(&out);
    assert!(err.contains("plan.yaml:4:23"), "line and column of `brr`: {err}");
    assert!(err.contains("unknown content coding `brr`") && err.contains("did you mean `br`?"), "{err}");
    assert!(err.contains("content coding `gzip` is listed twice"), "{err}");
    assert!(err.contains("unknown content coding `compress`") && err.contains("gzip, deflate, br, zstd"), "{err}");
    assert!(!dir.join("out.jtl").exists(), "nothing ran");
}

/// A hostile case: the response, and the reason its sample gives when a check reads the body.
fn hostile() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let body = JSON.as_bytes();
    let gz = gzip(body);
    let mut bad_crc = gz.clone();
    let n = bad_crc.len();
    bad_crc[n - 8] ^= 0x55;
    let trailing = [gz.clone(), b"GARBAGE".to_vec()].concat();
    vec![
        ("truncated_gzip", response("gzip", &gz[..gz.len() - 12]), "the gzip body ends before its stream does"),
        ("wrong_crc", response("gzip", &bad_crc), "the gzip body does not decode"),
        ("bad_brotli", response("br", &[0xff; 64]), "the br body does not decode"),
        ("lying_header", response("gzip", body), "the gzip body does not decode: invalid gzip header"),
        ("bytes_after_end", response("gzip", &trailing), "the gzip body has 7 bytes after the end of its stream"),
        ("truncated_zstd", response("zstd", &zstd(body)[..10]), "the zstd body"),
        ("unknown", response("compress", body), "Content-Encoding `compress` is not one planrun decodes"),
    ]
}

#[test]
fn a_hostile_encoded_body_fails_its_sample_with_the_reason_when_a_check_reads_it() {
    let cases = hostile();
    let steps: String = cases
        .iter()
        .map(|(name, _, _)| step(name, &format!("/{name}"), r#"[ { jsonpath: { path: "$.user.id" } } ]"#))
        .collect();
    let routes = cases.iter().map(|(name, r, _)| (&name[..], r.clone())).collect::<Vec<_>>();
    let routes = routes.into_iter().map(|(n, r)| (Box::leak(format!("/{n}").into_boxed_str()) as &str, r)).collect();
    let server = CodingServer::start(routes);
    let (_, rows, json, _) = run("coding_hostile", &plan(&server.url(), "", 2, 2, &steps), &[]);
    assert_eq!(rows.len() as u64, server.requests());
    assert_eq!(rows.len(), cases.len() * 4);
    for (name, _, why) in &cases {
        let lines = by_label(&json, name);
        assert_eq!(lines.len(), 4, "{name}");
        for line in lines {
            assert_eq!(line["success"], false, "{name}: {line}");
            assert_eq!(line["response_code"], "200", "{name}");
            let message = line["failure_message"].as_str().unwrap_or_default();
            assert!(message.contains(why), "{name}: `{message}` should say `{why}`");
            assert!(line.get("decoded_bytes").is_none(), "{name}: no decoded size for a body that did not decode");
        }
    }
}

#[test]
fn an_encoded_body_no_check_reads_is_not_decoded_and_its_sample_passes() {
    // A decode would fail every one of these: passing, they show that no decode happened.
    let cases = hostile();
    let steps: String =
        cases.iter().map(|(name, _, _)| step(name, &format!("/{name}"), "[ { status: 200 } ]")).collect();
    let routes = cases.iter().map(|(name, r, _)| (Box::leak(format!("/{name}").into_boxed_str()) as &str, r.clone()));
    let server = CodingServer::start(routes.collect());
    let (_, rows, json, _) = run("coding_lazy", &plan(&server.url(), "", 1, 2, &steps), &[]);
    assert_eq!(rows.len() as u64, server.requests());
    assert!(rows.iter().all(|r| r["success"] == "true"), "{rows:?}");
    assert!(json.iter().all(|l| l.get("decoded_bytes").is_none()), "nothing decoded");
}

#[test]
fn a_body_that_inflates_past_max_body_is_cut_there_and_fails_its_sample() {
    // 64 MiB of zeros in 64 KiB of gzip, against a max_body of 1 MiB.
    let zeros = vec![0u8; 64 << 20];
    let bomb = response("gzip", &gzip(&zeros));
    let wire = bomb.len() as u64;
    let server = CodingServer::start(vec![("/bomb", bomb), ("/brbomb", response("br", &brotli(&zeros[..8 << 20])))]);
    let steps =
        step("bomb", "/bomb", "[ { body_contains: x } ]") + &step("brbomb", "/brbomb", "[ { body_contains: x } ]");
    let (_, rows, json, _) = run("coding_bomb", &plan(&server.url(), "  max_body: 1048576\n", 2, 2, &steps), &[]);
    assert_eq!(rows.len() as u64, server.requests());
    assert_eq!(rows.len(), 8);
    for line in &json {
        let message = line["failure_message"].as_str().unwrap_or_default();
        assert_eq!(line["success"], false);
        assert!(message.contains("the decoded body is longer than max_body (1048576 bytes): cut there"), "{message}");
        assert_eq!(line["decoded_bytes"], 1048576, "the body kept is cut at max_body");
    }
    for line in by_label(&json, "bomb") {
        assert_eq!(line["bytes"], wire, "the bytes on the wire");
    }
}

#[test]
fn a_compressed_body_longer_than_max_body_as_received_fails_saying_so() {
    // 64 KiB that do not compress (a linear congruential sequence), against a max_body of 16 KiB: the body
    // kept is cut before its stream ends.
    let mut x: u32 = 12345;
    let noise: Vec<u8> = (0..65536)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    let server = CodingServer::start(vec![("/noise", response("gzip", &gzip(&noise)))]);
    let steps = step("noise", "/noise", "[ { body_contains: x } ]");
    let (_, rows, json, _) = run("coding_cut_raw", &plan(&server.url(), "  max_body: 16384\n", 1, 2, &steps), &[]);
    assert_eq!((rows.len() as u64, rows.len()), (server.requests(), 2));
    for line in &json {
        let message = line["failure_message"].as_str().unwrap_or_default();
        assert!(message.contains("the body as received is longer than max_body (16384 bytes)"), "{message}");
    }
}

#[test]
fn failed_bodies_and_http_debug_show_the_decoded_body() {
    let server = CodingServer::start(vec![
        ("/br", response("br", &brotli(JSON.as_bytes()))),
        ("/zstd", response("zstd", &zstd(JSON.as_bytes()))),
    ]);
    // `br` fails on its status check alone: nothing else reads its body before --failed-bodies does.
    let steps = step("br", "/br", "[ { status: 201 } ]") + &step("zstd", "/zstd", "[ { body_contains: nothing } ]");
    let (dir, rows, json, err) = run(
        "coding_views",
        &plan(&server.url(), "", 1, 1, &steps),
        &["--failed-bodies", "bodies", "--json-failed-bodies", "--http-debug=full"],
    );
    assert_eq!(rows.len() as u64, server.requests());
    for line in &json {
        assert_eq!(line["success"], false);
        assert_eq!(line["response_body"], JSON, "{line}");
        assert_eq!(line["response_body_size"], JSON.len() as u64);
        assert_eq!(line["decoded_bytes"], JSON.len() as u64);
    }
    let mut saved = 0;
    for entry in std::fs::read_dir(dir.join("bodies")).unwrap() {
        assert_eq!(std::fs::read_to_string(entry.unwrap().path()).unwrap(), JSON);
        saved += 1;
    }
    assert_eq!(saved, 2);
    assert_eq!(err.matches(JSON).count(), 2, "--http-debug=full shows each decoded body: {err}");
}
