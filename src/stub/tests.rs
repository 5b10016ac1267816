//! End-to-end tests: stubs served on port 0 and called with a minimal hyper client.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::config::{parse, StubConfig};
use super::*;

const ANY_PORT: &str = "127.0.0.1:0";

fn stub_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plans/stubs").join(name)
}

fn config(yaml: &str) -> StubConfig {
    parse(yaml, Path::new("test.yaml")).expect("test stub parses")
}

async fn serve(config: StubConfig) -> StubHandle {
    start(config, ANY_PORT.parse().expect("address")).await.expect("stub starts")
}

/// One keep-alive client connection.
async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.expect("connect to stub");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(conn);
    sender
}

async fn send(sender: &mut SendRequest<Full<Bytes>>, method: Method, uri: &str, body: &str) -> (StatusCode, String) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "stub")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let resp = sender.send_request(req).await.expect("response");
    let status = resp.status();
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

async fn get(addr: SocketAddr, uri: &str) -> (StatusCode, String) {
    send(&mut connect(addr).await, Method::GET, uri, "").await
}

#[tokio::test]
async fn kannel_accepts_a_good_request() {
    let stub = serve(load(&stub_file("kannel.yaml")).expect("kannel.yaml loads")).await;
    let uri = "/cgi-bin/sendsms?username=tester&password=foobar&to=%2B79161234567&text=hello+world";
    let (status, body) = get(stub.local_addr, uri).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body, "0: Accepted for delivery");
    assert_eq!(stub.stats(), 1);
    stub.shutdown().await;
}

#[tokio::test]
async fn kannel_rejects_missing_receiver_wrong_credentials_and_unknown_paths() {
    let stub = serve(load(&stub_file("kannel.yaml")).expect("kannel.yaml loads")).await;
    let mut client = connect(stub.local_addr).await;
    let cases = [
        ("/cgi-bin/sendsms?username=tester&password=foobar&text=hi", 400, "Missing receiver number, rejected"),
        ("/cgi-bin/sendsms?username=tester&password=wrong&to=1&text=hi", 403, "Authorization failed for sendsms"),
        ("/cgi-bin/sendsms?to=1&text=hi", 403, "Authorization failed for sendsms"),
        ("/cgi-bin/nothing?username=tester&password=foobar&to=1", 404, "Not found"),
    ];
    // All on one connection: keep-alive carries on after every kind of answer.
    for (uri, status, body) in cases {
        assert_eq!(send(&mut client, Method::GET, uri, "").await, (StatusCode::from_u16(status).unwrap(), body.into()));
    }
    let form = "to=79161234567&text=hi+1%2F1";
    assert_eq!(send(&mut client, Method::POST, "/dispatch", form).await, (StatusCode::OK, "OK".into()));
    assert_eq!(stub.stats(), 5);
    stub.shutdown().await;
}

#[tokio::test]
async fn both_kannel_files_load_and_differ_only_in_workers() {
    let plain = load(&stub_file("kannel.yaml")).expect("kannel.yaml loads");
    let blocking = load(&stub_file("kannel-blocking.yaml")).expect("kannel-blocking.yaml loads");
    assert_eq!((plain.workers, blocking.workers), (0, 8));
    assert_eq!(plain.routes, blocking.routes);
}

#[tokio::test]
async fn fixed_latency_is_respected() {
    let stub = serve(config("routes: [{ path: /slow, latency: { fixed: 30ms } }]")).await;
    let started = Instant::now();
    let (status, _) = get(stub.local_addr, "/slow").await;
    assert_eq!(status, StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(30), "answered after {:?}", started.elapsed());
}

#[tokio::test]
async fn precise_delays_wait_on_a_thread_at_least_the_delay() {
    let config = config("routes: [{ path: /slow, latency: { fixed: 30ms } }]\nprecise_delays: true");
    assert!(config.precise_delays);
    let stub = serve(config).await;
    for _ in 0..3 {
        let started = Instant::now();
        let (status, _) = get(stub.local_addr, "/slow").await;
        assert_eq!(status, StatusCode::OK);
        assert!(started.elapsed() >= Duration::from_millis(30), "answered after {:?}", started.elapsed());
    }
    assert_eq!(stub.stats(), 3);
}

#[tokio::test]
async fn workers_queue_requests_like_a_blocking_server() {
    let stub = serve(config("routes: [{ path: /, latency: { fixed: 50ms } }]\nworkers: 2")).await;
    let addr = stub.local_addr;
    let started = Instant::now();
    let requests: Vec<_> = (0..4).map(|_| tokio::spawn(async move { get(addr, "/").await.0 })).collect();
    for request in requests {
        assert_eq!(request.await.expect("request task"), StatusCode::OK);
    }
    // Two workers, four 50ms requests: two rounds.
    assert!(started.elapsed() >= Duration::from_millis(100), "all answered after {:?}", started.elapsed());
    assert_eq!(stub.stats(), 4);
}

#[tokio::test]
async fn error_rate_one_always_fails() {
    let yaml = r#"
routes:
  - path: /flaky
    body: fine
    errors: { rate: 1.0, status: 503, body: "Service unavailable" }
seed: 7
"#;
    let stub = serve(config(yaml)).await;
    let mut client = connect(stub.local_addr).await;
    for _ in 0..20 {
        let answer = send(&mut client, Method::GET, "/flaky", "").await;
        assert_eq!(answer, (StatusCode::SERVICE_UNAVAILABLE, "Service unavailable".into()));
    }
}

#[tokio::test]
async fn status_reason_headers_and_any_method() {
    let yaml = r#"
routes:
  - path: /teapot
    status: 418
    reason: Short And Stout
    headers: { X-Stub: yes, Content-Type: text/plain }
    body: tea
"#;
    let stub = serve(config(yaml)).await;
    let mut client = connect(stub.local_addr).await;
    let req = Request::builder().method(Method::DELETE).uri("/teapot").header("host", "stub");
    let resp = client.send_request(req.body(Full::new(Bytes::new())).expect("request")).await.expect("response");
    assert_eq!(resp.status().as_u16(), 418);
    let reason = resp.extensions().get::<hyper::ext::ReasonPhrase>().map(|r| r.as_bytes().to_vec());
    assert_eq!(reason.as_deref(), Some(&b"Short And Stout"[..]));
    assert_eq!(resp.headers()["x-stub"], "yes");
    assert_eq!(resp.headers()["content-type"], "text/plain");
}

#[tokio::test]
async fn shutdown_stops_accepting() {
    let stub = serve(config("routes: []")).await;
    let addr = stub.local_addr;
    assert!(stub.url().starts_with("http://127.0.0.1:"), "{}", stub.url());
    assert_eq!(get(addr, "/").await.0, StatusCode::NOT_FOUND);
    stub.shutdown().await;
    assert!(TcpStream::connect(addr).await.is_err(), "still accepting after shutdown");
}

#[test]
fn unknown_key_is_an_error_with_line_and_column() {
    let yaml = "routes:\n  - path: /x\n    stauts: 201\n";
    let err = parse(yaml, Path::new("stubs/typo.yaml")).expect_err("unknown key refused");
    let text = err.to_string();
    assert!(text.starts_with("stubs/typo.yaml:3:5: "), "{text}");
    assert!(text.contains("stauts"), "{text}");
}

#[test]
fn bad_values_are_errors_at_their_place() {
    let cases = [
        ("routes:\n  - path: /x\n    latency: { fixed: 30 }\n", "test.yaml:3:", "no unit"),
        ("routes:\n  - path: /x\n    latency: { median: 20ms }\n", "test.yaml:3:", "p99"),
        ("routes:\n  - path: /x\n    errors: { rate: 2 }\n", "test.yaml:3:", "between 0.0 and 1.0"),
        ("routes:\n  - path: x\n", "test.yaml:2:", "must start with `/`"),
        ("routes:\n  - path: /x\n    status: 1000\n", "test.yaml:3:", "between 100 and 999"),
        ("routes:\n  - path: /x\n    latency: { fixed: 100000000000000000000h }\n", "test.yaml:3:", "365 days"),
        ("routes:\n  - path: /x\n    latency: { uniform: [1ms, 1e20s] }\n", "test.yaml:3:", "unknown unit `e`"),
        ("routes:\n  - path: /x\n    latency: { median: 1ms, p99: 8761h }\n", "test.yaml:3:", "365 days"),
        ("workers: 100000000000000000\nroutes: []\n", "test.yaml:1:", "above the limit of 1000000"),
    ];
    for (yaml, place, message) in cases {
        let text = parse(yaml, Path::new("test.yaml")).expect_err(yaml).to_string();
        assert!(text.starts_with(place) && text.contains(message), "{yaml:?} gave {text}");
    }
}

#[test]
fn durations_take_the_plan_grammar() {
    let yaml = "routes:\n  - path: /x\n    latency: { uniform: [1.5ms, 2500ns] }\n";
    let err = parse(yaml, Path::new("test.yaml")).expect_err("min above max").to_string();
    assert!(err.contains("1.5ms") && err.contains("2.5µs"), "{err}");
    let yaml = "routes:\n  - path: /x\n    latency: { uniform: [0.5ms, 1.25s] }\n";
    let latency = parse(yaml, Path::new("test.yaml")).expect("fractions are durations").routes[0].latency;
    assert_eq!(
        latency,
        Some(super::latency::Latency::Uniform { min: Duration::from_micros(500), max: Duration::from_millis(1250) })
    );
}

#[test]
fn a_missing_file_says_so() {
    let err = load(Path::new("no/such/stub.yaml")).expect_err("missing file");
    assert_eq!(err.to_string(), "stub file no/such/stub.yaml not found");
}
