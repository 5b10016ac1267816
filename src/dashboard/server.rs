//! The dashboard's HTTP server: `/` the page, `/events` the events, anything else 404.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::events::Hub;

const PAGE: &str = include_str!("page.html");

/// The dashboard could not listen.
#[derive(Debug, thiserror::Error)]
#[error("the dashboard cannot listen on {addr}: {source}")]
pub struct DashboardError {
    addr: SocketAddr,
    source: std::io::Error,
}

type Reply = Response<http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>>;

/// Binds `addr` and serves on the current runtime until the task is aborted; returns the bound address.
pub(super) async fn serve(
    addr: SocketAddr,
    hub: Arc<Hub>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), DashboardError> {
    let listener = TcpListener::bind(addr).await.map_err(|source| DashboardError { addr, source })?;
    let bound = listener.local_addr().map_err(|source| DashboardError { addr, source })?;
    let task = tokio::spawn(async move {
        let mut pages = tokio::task::JoinSet::new();
        while let Ok((stream, _)) = listener.accept().await {
            let hub = hub.clone();
            pages.spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let hub = hub.clone();
                    async move { Ok::<_, Infallible>(answer(&req, &hub)) }
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
            while pages.try_join_next().is_some() {}
        }
    });
    Ok((bound, task))
}

fn answer(req: &Request<Incoming>, hub: &Hub) -> Reply {
    let response = Response::builder().header("Cache-Control", "no-store");
    let built = match req.uri().path() {
        "/" => response
            .header("Content-Type", "text/html; charset=utf-8")
            .body(Full::new(Bytes::from_static(PAGE.as_bytes())).boxed_unsync()),
        "/events" => response.header("Content-Type", "text/event-stream").body(hub.subscribe().boxed_unsync()),
        _ => response.status(StatusCode::NOT_FOUND).body(Full::new(Bytes::from_static(b"not found")).boxed_unsync()),
    };
    built.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}
