//! The stub's HTTP/1.1 server: an accept loop, one task per keep-alive connection.

use std::cell::RefCell;
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use super::config::StubConfig;
use super::error::StubError;
use super::responder::Responder;

/// Connections waiting to be accepted; large, so a burst of virtual users connecting at once is not refused.
const BACKLOG: u32 = 4096;

/// How long to wait before accepting again after the listener failed (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// How long shutdown lets requests in flight finish before it drops their connections.
const GRACE: Duration = Duration::from_secs(5);

/// A running stub server. Dropping it stops accepting connections; [`StubHandle::shutdown`] also waits.
#[derive(Debug)]
pub struct StubHandle {
    /// The address the server listens on, with the port chosen when port 0 was asked for.
    pub local_addr: SocketAddr,
    /// Dropped to tell the accept loop and every connection to stop.
    stop: watch::Sender<()>,
    accept_loop: JoinHandle<()>,
    served: Arc<AtomicU64>,
}

impl StubHandle {
    /// The base URL of the server, such as `http://127.0.0.1:8080`; an unspecified address becomes loopback.
    pub fn url(&self) -> String {
        let ip = match self.local_addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        format!("http://{}", SocketAddr::new(ip, self.local_addr.port()))
    }

    /// How many requests the server has answered so far.
    pub fn stats(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// Stops accepting, lets requests in flight finish (for at most a few seconds), and closes every connection.
    pub async fn shutdown(self) {
        drop(self.stop);
        // The loop only ends by itself; a join error means it panicked, which shutdown has nothing to add to.
        let _ = self.accept_loop.await;
    }
}

/// Starts serving `config` on `addr` (port 0 picks a free port) on the current tokio runtime.
pub async fn start(config: StubConfig, addr: SocketAddr) -> Result<StubHandle, StubError> {
    let listener = listen(addr).map_err(|source| StubError::Bind { addr, source })?;
    let local_addr = listener.local_addr().map_err(|source| StubError::Bind { addr, source })?;
    let rng = match config.seed {
        Some(seed) => ChaCha8Rng::seed_from_u64(seed),
        None => ChaCha8Rng::from_rng(&mut rand::rng()),
    };
    let responder = Arc::new(Responder::new(config));
    let served = Arc::clone(&responder.served);
    let (stop, stopped) = watch::channel(());
    let accept_loop = tokio::spawn(accept_loop(listener, responder, rng, stopped));
    Ok(StubHandle { local_addr, stop, accept_loop, served })
}

fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    // Lets `planrun stub --listen` restart on the same port while old connections sit in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Accepts connections until told to stop, then gives open ones a grace period.
async fn accept_loop(
    listener: TcpListener,
    responder: Arc<Responder>,
    mut rng: ChaCha8Rng,
    mut stopped: watch::Receiver<()>,
) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new());
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Each connection draws from its own generator: no lock shared between connections.
                    let conn_rng = ChaCha8Rng::from_rng(&mut rng);
                    let conn = serve(builder.clone(), stream, Arc::clone(&responder), conn_rng, stopped.clone());
                    connections.spawn(conn);
                }
                Err(e) if is_per_connection(&e) => {}
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = stopped.changed() => break,
        }
    }
    drop(listener);
    let drained = async { while connections.join_next().await.is_some() {} };
    // Past the grace period, dropping the set aborts the connections still open.
    let _ = tokio::time::timeout(GRACE, drained).await;
}

/// Errors that concern only the connection being accepted, not the listener.
fn is_per_connection(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted)
}

/// Serves one keep-alive connection until the client closes it or the server stops.
async fn serve(
    builder: http1::Builder,
    stream: TcpStream,
    responder: Arc<Responder>,
    rng: ChaCha8Rng,
    mut stopped: watch::Receiver<()>,
) {
    // Small answers must leave at once, not wait for Nagle's algorithm.
    let _ = stream.set_nodelay(true);
    let rng = RefCell::new(rng);
    let service = service_fn(move |req| {
        let decision = responder.decide(&req, &mut *rng.borrow_mut());
        Arc::clone(&responder).serve(req, decision)
    });
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        // A connection error is the client's business (reset, malformed request): nothing to report.
        _ = conn.as_mut() => return,
        _ = stopped.changed() => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}
