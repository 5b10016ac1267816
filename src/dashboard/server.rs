//! The dashboard's HTTP server: `/` the page, `/events` the events, anything else 404.
//!
//! It answers only GET and HEAD (405 otherwise), and only requests addressed to it by a name that cannot be
//! rebound: `localhost`, a loopback address, the address it listens on, or any IP address when it listens
//! on all of them (421 otherwise). A web page that rebinds its own domain name to 127.0.0.1 still sends that
//! name, so it cannot read the dashboard. At most [`MAX_CONNECTIONS`] connections are open at once.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{ALLOW, HOST};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Notify;

use super::events::Hub;

const PAGE: &str = include_str!("page.html");

/// Connections open at once; the next one is answered 503 and closed.
pub(super) const MAX_CONNECTIONS: usize = 64;

/// What hyper buffers for one connection, either way.
const MAX_BUFFER: usize = 16 * 1024;

/// The kernel's send buffer of each connection (Linux doubles it). Without it the kernel grows the buffer of
/// a page that never reads up to `net.ipv4.tcp_wmem`'s maximum, 4 MB by default, before the page falls behind.
const SEND_BUFFER: u32 = 64 * 1024;

/// The answer to a connection past [`MAX_CONNECTIONS`], written without waiting.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 27\r\n\
Connection: close\r\n\r\ntoo many dashboard pages.\r\n";

/// The dashboard could not listen.
#[derive(Debug, thiserror::Error)]
#[error("the dashboard cannot listen on {addr}: {source}")]
pub struct DashboardError {
    addr: SocketAddr,
    source: std::io::Error,
}

type Reply = Response<http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>>;

/// Binds `addr` and serves on the current runtime until the task is aborted; returns the bound address.
/// `refused` counts the connections turned away because too many were open.
pub(super) async fn serve(
    addr: SocketAddr,
    hub: Arc<Hub>,
    refused: Arc<AtomicU64>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), DashboardError> {
    let listener = listen(addr).map_err(|source| DashboardError { addr, source })?;
    let bound = listener.local_addr().map_err(|source| DashboardError { addr, source })?;
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of file descriptors, say: the pages already open go on, and the next try is soon.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            while connections.try_join_next().is_some() {}
            if connections.len() >= MAX_CONNECTIONS {
                // A fresh socket's buffer takes these few bytes; the socket closes when dropped.
                let _ = stream.try_write(BUSY);
                refused.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let hub = hub.clone();
            connections.spawn(async move {
                let kick = Arc::new(Notify::new());
                let page_kick = kick.clone();
                let service = service_fn(move |req: Request<Incoming>| {
                    let reply = answer(&req, &hub, bound, &page_kick);
                    async move { Ok::<_, Infallible>(reply) }
                });
                let connection = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(10))
                    .writev(false)
                    .max_buf_size(MAX_BUFFER)
                    .serve_connection(TokioIo::new(stream), service);
                // A page that fell behind is shut here, even while hyper waits to write to it.
                tokio::select! {
                    _ = connection => {}
                    _ = kick.notified() => {}
                }
            });
        }
    });
    Ok((bound, task))
}

/// A listener on `addr` whose connections have a send buffer of [`SEND_BUFFER`].
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.set_send_buffer_size(SEND_BUFFER)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

fn answer(req: &Request<Incoming>, hub: &Arc<Hub>, bound: SocketAddr, kick: &Arc<Notify>) -> Reply {
    let response = Response::builder().header("Cache-Control", "no-store").header("X-Content-Type-Options", "nosniff");
    let authority = req.uri().authority().map(|a| a.as_str()).or_else(|| req.headers().get(HOST)?.to_str().ok());
    let built = if !authority.is_some_and(|host| host_allowed(host, bound.ip())) {
        response
            .status(StatusCode::MISDIRECTED_REQUEST)
            .body(text("this dashboard answers only to localhost or an IP address\n"))
    } else if req.method() != Method::GET && req.method() != Method::HEAD {
        response.status(StatusCode::METHOD_NOT_ALLOWED).header(ALLOW, "GET, HEAD").body(text("method not allowed\n"))
    } else {
        match req.uri().path() {
            "/" => response
                .header("Content-Type", "text/html; charset=utf-8")
                .header("X-Frame-Options", "DENY")
                .body(Full::new(Bytes::from_static(PAGE.as_bytes())).boxed_unsync()),
            "/events" => {
                let response = response.header("Content-Type", "text/event-stream");
                if req.method() == Method::HEAD {
                    response.body(Empty::new().boxed_unsync())
                } else {
                    response.body(hub.subscribe(kick.clone()).boxed_unsync())
                }
            }
            _ => response.status(StatusCode::NOT_FOUND).body(text("not found\n")),
        }
    };
    built.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

fn text(s: &'static str) -> http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible> {
    Full::new(Bytes::from_static(s.as_bytes())).boxed_unsync()
}

/// Whether a `Host` (or a request target's authority) names this dashboard by a name no web page can rebind:
/// `localhost`, a loopback address, the address listened on, or any address when listening on all. Any port:
/// a forwarded port (`ssh -L 8080:localhost:5665`) keeps the name.
fn host_allowed(authority: &str, bound: IpAddr) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((ip, port)) if port.is_empty() || port.strip_prefix(':').is_some_and(valid_port) => ip,
            _ => return false,
        },
        None => match authority.split_once(':') {
            Some((host, port)) if valid_port(port) => host,
            Some(_) => return false,
            None => authority,
        },
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip == bound || bound.is_unspecified(),
        Err(_) => false,
    }
}

fn valid_port(port: &str) -> bool {
    !port.is_empty() && port.parse::<u16>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_that_cannot_be_rebound_are_answered() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        for host in ["127.0.0.1:5665", "localhost:5665", "LOCALHOST", "[::1]:5665", "[::1]", "127.0.0.2:8080"] {
            assert!(host_allowed(host, loopback), "{host}");
        }
        for host in ["evil.example:5665", "evil.example", "192.168.1.5:5665", "127.0.0.1:x", "[::1", "", "localhost.:1"]
        {
            assert!(!host_allowed(host, loopback), "{host}");
        }
        let lan: IpAddr = "192.168.1.5".parse().unwrap();
        assert!(host_allowed("192.168.1.5:5665", lan));
        assert!(!host_allowed("192.168.1.6:5665", lan));
        let all: IpAddr = "0.0.0.0".parse().unwrap();
        assert!(host_allowed("10.0.0.7:5665", all) && host_allowed("[fe80::1]:5665", all));
        assert!(!host_allowed("my-laptop.lan:5665", all));
    }
}
