//! A server out of step with its client: after each answer it sends a second response nobody asked for.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use super::read_request;

/// The answer to each request.
pub const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// The response no request asked for; its reason phrase tells it apart in the JTL.
pub const UNASKED: &[u8] = b"HTTP/1.1 200 Late\r\nContent-Length: 4\r\n\r\nlate";

/// When the unasked response follows the answer.
#[derive(Debug, Clone, Copy)]
pub enum Late {
    /// In the same write: the client reads it with the answer, after the answer's end.
    Glued,
    /// This long after the answer, before the server reads the connection's next request: it comes while a
    /// client that waits longer before its next request holds the connection idle.
    After(Duration),
}

/// A raw HTTP/1.1 server that answers every request with [`ANSWER`], then sends [`UNASKED`] as `late`
/// says, and keeps the connection. It counts connections, requests read and bytes written.
pub struct LateServer {
    rt: Option<Runtime>,
    addr: SocketAddr,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    connections: AtomicU64,
    requests: AtomicU64,
    read: AtomicU64,
    written: AtomicU64,
}

impl LateServer {
    /// Starts it on 127.0.0.1, a free port.
    pub fn start(late: Late) -> LateServer {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).expect("bind the late server");
        let addr = listener.local_addr().expect("the late server's address");
        let counts = Arc::new(Counts::default());
        let c = counts.clone();
        rt.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else { continue };
                // Each write leaves at once, not held back until the client acknowledges the one before.
                let _ = stream.set_nodelay(true);
                c.connections.fetch_add(1, Ordering::SeqCst);
                let c = c.clone();
                tokio::spawn(async move {
                    let glued = [ANSWER, UNASKED].concat();
                    while let Some(n) = read_request(&mut stream).await {
                        c.read.fetch_add(n, Ordering::SeqCst);
                        c.requests.fetch_add(1, Ordering::SeqCst);
                        let (first, then): (&[u8], _) = match late {
                            Late::Glued => (&glued, None),
                            Late::After(delay) => (ANSWER, Some(delay)),
                        };
                        if stream.write_all(first).await.is_err() {
                            return;
                        }
                        c.written.fetch_add(first.len() as u64, Ordering::SeqCst);
                        if let Some(delay) = then {
                            tokio::time::sleep(delay).await;
                            if stream.write_all(UNASKED).await.is_err() {
                                return;
                            }
                            c.written.fetch_add(UNASKED.len() as u64, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        LateServer { rt: Some(rt), addr, counts }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections accepted.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }

    /// Requests read.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::SeqCst)
    }

    /// Bytes read from all connections.
    pub fn bytes_read(&self) -> u64 {
        self.counts.read.load(Ordering::SeqCst)
    }

    /// Bytes written to all connections, answers and unasked responses.
    pub fn bytes_written(&self) -> u64 {
        self.counts.written.load(Ordering::SeqCst)
    }
}

impl Drop for LateServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}
