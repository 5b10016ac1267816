//! `--sub-results`: a followed redirect's requests written as JMeter 5's sub-results (`label-0`, `label-1`,
//! ...), right after the request's own row, one row per request the server received; without the option,
//! one row per request step as before.

use crate::common;
use crate::json_schema;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use common::{json_lines, num, refused_url, stdout, summary_total, LoadRun, Ran, TempDir};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// Counts what crosses the server's sockets and every request it answers.
#[derive(Default)]
struct Counts {
    requests: Mutex<Vec<(String, String)>>,
    read: AtomicU64,
    written: AtomicU64,
}

/// A server that redirects: `/hop/N` answers 302 to `/hop/N-1`, and `/hop/0` 200 `done`; `/see-other/N`
/// the same with 303; `/away` 302 to `AWAY` (a refused port).
struct Redirector {
    rt: Option<Runtime>,
    addr: SocketAddr,
    counts: Arc<Counts>,
}

impl Redirector {
    fn start(away: String) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let counts = Arc::new(Counts::default());
        let c = counts.clone();
        rt.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (c, away) = (c.clone(), away.clone());
                tokio::spawn(async move {
                    let io = TokioIo::new(Counted { inner: stream, counts: c.clone() });
                    let service = service_fn(move |req| answer(req, c.clone(), away.clone()));
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        Redirector { rt: Some(rt), addr, counts }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// (method, target) of every request, in arrival order.
    fn requests(&self) -> Vec<(String, String)> {
        self.counts.requests.lock().unwrap().clone()
    }
}

impl Drop for Redirector {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

async fn answer(
    req: Request<Incoming>,
    counts: Arc<Counts>,
    away: String,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let target = req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
    counts.requests.lock().unwrap().push((req.method().to_string(), target.clone()));
    let _ = req.into_body().collect().await;
    let path: Vec<&str> = target.split('?').next().unwrap_or("").trim_start_matches('/').split('/').collect();
    let redirect = |status: u16, to: String| {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::from_u16(status).unwrap();
        r.headers_mut().insert("location", to.parse().unwrap());
        r
    };
    Ok(match path.as_slice() {
        ["hop", "0"] | ["see-other", "0"] => Response::new(Full::new(Bytes::from_static(b"done"))),
        ["hop", n] => redirect(302, format!("/hop/{}", n.parse::<u32>().unwrap() - 1)),
        ["see-other", n] => redirect(303, format!("/see-other/{}", n.parse::<u32>().unwrap() - 1)),
        ["away"] => redirect(302, format!("{away}/gone")),
        _ => {
            let mut r = Response::new(Full::new(Bytes::from_static(b"not found")));
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    })
}

/// The server's side of a connection, counting its bytes.
struct Counted {
    inner: TcpStream,
    counts: Arc<Counts>,
}

impl AsyncRead for Counted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let res = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.counts.read.fetch_add((buf.filled().len() - before) as u64, Ordering::SeqCst);
        res
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &res {
            self.counts.written.fetch_add(*n as u64, Ordering::SeqCst);
        }
        res
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

const THREE_HOPS: &str = "      - name: chain\n        request: { url: /hop/3 }\n";

#[test]
fn each_request_of_a_followed_redirect_is_a_sub_result_row_after_its_sample() {
    let server = Redirector::start(refused_url());
    let dir = TempDir::new("sub_results_rows");
    let Ran { out, jtl, .. } =
        LoadRun::new("subs", &server.url()).users(2, 3).steps(THREE_HOPS).json().run(&dir, &["--sub-results"]);

    // 6 samples, each of 4 requests: the server's count is the count of sub-result rows.
    let requests = server.requests();
    assert_eq!(requests.len(), 24);
    let parents = jtl.labelled("chain");
    assert_eq!(parents.len(), 6, "{}", jtl.text);
    assert_eq!(jtl.rows.len(), 6 + 24, "{}", jtl.text);
    assert_eq!(summary_total(&stdout(&out)).0, 6, "sub-results are not samples of the summary");

    // Each sample's row, then its 4 sub-results in order: JMeter's CSVSaveService order.
    for chunk in jtl.rows.chunks(5) {
        let (parent, subs) = (&chunk[0], &chunk[1..]);
        assert_eq!(parent["label"], "chain");
        assert_eq!(parent["responseCode"], "200");
        assert!(parent["URL"].ends_with("/hop/0"), "{parent:?}");
        for (i, (sub, path)) in subs.iter().zip(["/hop/3", "/hop/2", "/hop/1", "/hop/0"]).enumerate() {
            assert_eq!(sub["label"], format!("chain-{i}"), "{}", jtl.text);
            assert_eq!(sub["responseCode"], if i < 3 { "302" } else { "200" }, "{sub:?}");
            assert_eq!(sub["responseMessage"], if i < 3 { "Found" } else { "OK" });
            assert_eq!(sub["success"], "true");
            assert_eq!(sub["URL"], format!("{}{path}", server.url()));
            assert_eq!(sub["threadName"], parent["threadName"]);
            assert_eq!(sub["grpThreads"], parent["grpThreads"]);
            assert!(num(sub, "timeStamp") >= num(parent, "timeStamp"));
            assert!(num(sub, "elapsed") <= num(parent, "elapsed"), "{sub:?} within {parent:?}");
        }
        // Every request's bytes are in exactly one sub-result, and all of them in the sample's row.
        for column in ["bytes", "sentBytes"] {
            assert_eq!(subs.iter().map(|s| num(s, column)).sum::<u64>(), num(parent, column), "{column}");
        }
        assert_eq!(num(&subs[0], "timeStamp"), num(parent, "timeStamp"));
    }
    let sum = |column: &str| -> u64 { parents.iter().map(|r| num(r, column)).sum() };
    assert_eq!(sum("bytes"), server.counts.written.load(Ordering::SeqCst));
    assert_eq!(sum("sentBytes"), server.counts.read.load(Ordering::SeqCst));

    // JSON lines: one line per sample, its sub-results nested, valid against the schema.
    let lines = json_lines(&dir.join("out.jsonl"));
    assert_eq!(lines.len(), 6);
    let schema: serde_json::Value =
        serde_json::from_str(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/sample.schema.json"))).unwrap();
    let validator = json_schema::Validator::new(&schema);
    for line in &lines {
        assert!(validator.errors(line).is_empty(), "{line}\n{:?}", validator.errors(line));
        let subs = line["sub_results"].as_array().expect("sub_results");
        let labels: Vec<&str> = subs.iter().map(|s| s["label"].as_str().unwrap()).collect();
        assert_eq!(labels, ["chain-0", "chain-1", "chain-2", "chain-3"]);
    }
}

#[test]
fn without_the_option_a_followed_redirect_is_one_row() {
    let server = Redirector::start(refused_url());
    let dir = TempDir::new("sub_results_off");
    let Ran { jtl, .. } = LoadRun::new("subs", &server.url()).users(2, 3).steps(THREE_HOPS).json().run(&dir, &[]);
    assert_eq!(server.requests().len(), 24);
    assert_eq!(jtl.rows.len(), 6, "{}", jtl.text);
    assert!(jtl.rows.iter().all(|r| r["label"] == "chain"));
    assert!(json_lines(&dir.join("out.jsonl")).iter().all(|l| l.get("sub_results").is_none()));
}

#[test]
fn no_sub_results_without_a_redirect_followed() {
    let server = Redirector::start(refused_url());
    let dir = TempDir::new("sub_results_none");
    let steps = "      - name: direct\n        request: { url: /hop/0 }\n      - name: not-followed\n        \
                 request: { url: /hop/2, follow_redirects: false }\n";
    let Ran { jtl, .. } =
        LoadRun::new("subs", &server.url()).users(1, 2).steps(steps).json().run(&dir, &["--sub-results"]);
    assert_eq!(server.requests().len(), 4);
    assert_eq!(jtl.rows.len(), 4, "{}", jtl.text);
    assert_eq!(jtl.labelled("not-followed").iter().filter(|r| r["responseCode"] == "302").count(), 2);
}

#[test]
fn a_redirect_to_a_target_that_fails_ends_with_an_error_sub_result() {
    let server = Redirector::start(refused_url());
    let dir = TempDir::new("sub_results_error");
    let steps = "      - name: away\n        request: { url: /away, timeout: 2s }\n";
    let Ran { jtl, .. } =
        LoadRun::new("subs", &server.url()).users(1, 2).steps(steps).json().run(&dir, &["--sub-results"]);
    assert_eq!(server.requests().len(), 2, "the second request of each chain is refused");
    assert_eq!(jtl.rows.len(), 2 * 3, "{}", jtl.text);
    for chunk in jtl.rows.chunks(3) {
        let (parent, first, second) = (&chunk[0], &chunk[1], &chunk[2]);
        assert_eq!(parent["responseCode"], "Non HTTP response code: ConnectionRefused");
        assert_eq!(parent["success"], "false");
        assert_eq!((first["label"].as_str(), first["responseCode"].as_str()), ("away-0", "302"));
        assert_eq!(first["success"], "true");
        assert_eq!(second["label"], "away-1");
        assert_eq!(second["responseCode"], "Non HTTP response code: ConnectionRefused");
        assert_eq!(second["success"], "false");
        assert!(second["URL"].ends_with("/gone"), "{second:?}");
        assert_eq!(num(second, "bytes"), 0);
    }
}

#[test]
fn a_post_redirected_with_303_has_a_get_sub_result() {
    let server = Redirector::start(refused_url());
    let dir = TempDir::new("sub_results_post");
    let steps = "      - name: post\n        request: { method: POST, url: /see-other/1, form: { a: \"1\" } }\n";
    let Ran { jtl, .. } =
        LoadRun::new("subs", &server.url()).users(1, 1).steps(steps).json().run(&dir, &["--sub-results"]);
    let methods: Vec<(String, String)> = server.requests();
    assert_eq!(methods, [("POST".into(), "/see-other/1".into()), ("GET".into(), "/see-other/0".into())]);
    let labels: Vec<&str> = jtl.rows.iter().map(|r| r["label"].as_str()).collect();
    assert_eq!(labels, ["post", "post-0", "post-1"]);
    let codes: HashMap<&str, &str> =
        jtl.rows.iter().map(|r| (r["label"].as_str(), r["responseCode"].as_str())).collect();
    assert_eq!(codes["post-0"], "303");
    assert_eq!(codes["post-1"], "200");
}
