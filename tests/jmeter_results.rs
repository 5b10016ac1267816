//! Result columns written as JMeter writes them, checked against raw servers that say unusual things.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use common::{read_jtl, read_request, run_ok, TempDir};

/// Answers every request with `response`, keeping the connection; counts the requests it read.
struct Answering {
    _rt: Runtime,
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
}

impl Answering {
    fn start(response: &'static [u8]) -> Answering {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let counted = requests.clone();
        rt.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { continue };
                let counted = counted.clone();
                tokio::spawn(async move {
                    while read_request(&mut stream).await.is_some() {
                        counted.fetch_add(1, Ordering::SeqCst);
                        if stream.write_all(response).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Answering { _rt: rt, addr, requests }
    }
}

fn one_request(dir: &TempDir, server: &Answering) -> std::collections::HashMap<String, String> {
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: p\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      - name: r\n        \
             request: {{ url: \"http://{}/x\" }}\n        assert: [{{ status: [200, 520] }}]\n",
            server.addr
        ),
    );
    let (_, jtl) = run_ok(dir, &plan, &[]);
    assert_eq!(jtl.rows.len() as u64, server.requests.load(Ordering::SeqCst));
    read_jtl(&dir.join("out.jtl")).rows[0].clone()
}

#[test]
fn the_reason_phrase_is_the_one_the_server_sent() {
    let dir = TempDir::new("reason_phrase");
    let custom = Answering::start(b"HTTP/1.1 200 Fine, thanks\r\nContent-Length: 2\r\n\r\nok");
    assert_eq!(one_request(&dir, &custom)["responseMessage"], "Fine, thanks");
    // hyper's parser (httparse) drops a phrase with bytes beyond ASCII: written empty, not as `OK`.
    let cafe = Answering::start("HTTP/1.1 200 Café au lait\r\nContent-Length: 2\r\n\r\nok".as_bytes());
    assert_eq!(one_request(&dir, &cafe)["responseMessage"], "");
    let origin = Answering::start(b"HTTP/1.1 520 Origin Error\r\nContent-Length: 0\r\n\r\n");
    let row = one_request(&dir, &origin);
    assert_eq!((row["responseCode"].as_str(), row["responseMessage"].as_str()), ("520", "Origin Error"));
    let standard = Answering::start(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(one_request(&dir, &standard)["responseMessage"], "OK");
}

#[test]
fn a_followed_redirect_writes_the_last_url_and_a_request_may_refuse_to_follow() {
    let server = common::Server::start();
    let dir = TempDir::new("redirect_url");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: p\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    \
             steps:\n      - name: followed\n        request: {{ url: /redirect }}\n      - name: kept\n        \
             request: {{ url: /redirect, follow_redirects: false }}\n        assert: [{{ status: 302 }}]\n",
            server.url()
        ),
    );
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(server.count(), 3, "two hops, then one request not followed");
    let followed = jtl.one("followed");
    assert_eq!((followed["responseCode"].as_str(), followed["success"].as_str()), ("200", "true"));
    assert_eq!(followed["URL"], format!("{}/ok", server.url()), "JMeter writes the final URL");
    let kept = jtl.one("kept");
    assert_eq!((kept["responseCode"].as_str(), kept["success"].as_str()), ("302", "true"), "{kept:?}");
    assert_eq!(kept["URL"], format!("{}/redirect", server.url()));
}
