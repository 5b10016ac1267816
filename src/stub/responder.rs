//! Answers one request: picks the route, waits its latency under the worker limit, builds the response.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::ext::ReasonPhrase;
use rand::Rng;
use tokio::sync::Semaphore;

use super::config::StubConfig;
use super::latency::Sampler;
use super::route::Route;

/// The body of the answer to a request no route matches.
const NOT_FOUND: &str = "Not found";

/// Everything a connection needs to answer requests, shared read-only by all connections.
#[derive(Debug)]
pub(crate) struct Responder {
    routes: Vec<CompiledRoute>,
    not_found: Answer,
    /// Held while a request is served when `workers` > 0.
    workers: Option<Semaphore>,
    /// Sleep on a thread rather than the runtime's millisecond timer.
    precise_delays: bool,
    /// Requests answered so far.
    pub(crate) served: Arc<AtomicU64>,
}

/// A route with its answers built once, so answering only clones reference-counted bytes.
#[derive(Debug)]
struct CompiledRoute {
    route: Route,
    answer: Answer,
    latency: Sampler,
    /// The share of failed answers, and the failed answer.
    error: Option<(f64, Answer)>,
}

/// A ready-made response.
#[derive(Debug, Clone)]
struct Answer {
    status: StatusCode,
    reason: Option<ReasonPhrase>,
    headers: HeaderMap,
    body: Bytes,
}

/// What the random draws decided for one request, made before its future starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decision {
    /// The matching route, by index; `None` answers 404.
    route: Option<usize>,
    /// Whether to answer with the route's error.
    fail: bool,
    /// How long to wait before answering.
    delay: Duration,
}

impl Responder {
    /// Builds every answer of `config` up front.
    pub(crate) fn new(config: StubConfig) -> Self {
        let routes = config.routes.into_iter().map(CompiledRoute::new).collect();
        let workers = (config.workers > 0).then(|| Semaphore::new(config.workers));
        Responder {
            routes,
            not_found: Answer::plain(StatusCode::NOT_FOUND, NOT_FOUND),
            workers,
            precise_delays: config.precise_delays,
            served: Arc::default(),
        }
    }

    /// Picks the route for `req` and draws its error and latency.
    pub(crate) fn decide<R: Rng + ?Sized>(&self, req: &Request<Incoming>, rng: &mut R) -> Decision {
        let (method, uri) = (req.method(), req.uri());
        let route = self.routes.iter().position(|r| r.route.matches(method, uri.path(), uri.query()));
        let Some(compiled) = route.map(|i| &self.routes[i]) else {
            return Decision { route: None, fail: false, delay: Duration::ZERO };
        };
        let fail = compiled.error.as_ref().is_some_and(|(rate, _)| rng.random::<f64>() < *rate);
        Decision { route, fail, delay: compiled.latency.sample(rng) }
    }

    /// Serves `req` as decided: takes a worker, reads the request body, waits, answers.
    pub(crate) async fn serve(
        self: Arc<Self>,
        req: Request<Incoming>,
        decision: Decision,
    ) -> Result<Response<Full<Bytes>>, Infallible> {
        // The semaphore is never closed, so acquiring only fails if it were; then serve unthrottled.
        let _permit = match &self.workers {
            Some(workers) => workers.acquire().await.ok(),
            None => None,
        };
        drain(req.into_body()).await;
        if !decision.delay.is_zero() {
            wait(decision.delay, self.precise_delays).await;
        }
        let answer = match decision.route.map(|i| &self.routes[i]) {
            None => &self.not_found,
            Some(CompiledRoute { error: Some((_, failed)), .. }) if decision.fail => failed,
            Some(compiled) => &compiled.answer,
        };
        self.served.fetch_add(1, Ordering::Relaxed);
        Ok(answer.response())
    }
}

/// Waits `delay`: on the runtime's timer (whole milliseconds, rounded up), or precisely on a thread.
async fn wait(delay: Duration, precise: bool) {
    if precise {
        let asked = std::time::Instant::now();
        // The blocking pool's threads sleep with the kernel's timer (tens of microseconds late at most).
        let slept = tokio::task::spawn_blocking(move || std::thread::sleep(delay.saturating_sub(asked.elapsed())));
        if slept.await.is_ok() {
            return;
        }
    }
    tokio::time::sleep(delay).await;
}

impl CompiledRoute {
    fn new(route: Route) -> Self {
        let answer = Answer {
            status: route.status,
            // Checked when the file was read; a phrase that slipped through falls back to the canonical one.
            reason: route.reason.as_ref().and_then(|r| ReasonPhrase::try_from(r.as_bytes()).ok()),
            headers: route.headers.clone(),
            body: Bytes::from(route.body.clone()),
        };
        let latency = Sampler::new(route.latency.as_ref());
        let error = route.errors.as_ref().map(|e| (e.rate, Answer::plain(e.status, &e.body)));
        CompiledRoute { route, answer, latency, error }
    }
}

impl Answer {
    fn plain(status: StatusCode, body: &str) -> Self {
        Answer { status, reason: None, headers: HeaderMap::new(), body: Bytes::from(body.to_string()) }
    }

    fn response(&self) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(self.body.clone()));
        *response.status_mut() = self.status;
        if !self.headers.is_empty() {
            *response.headers_mut() = self.headers.clone();
        }
        if let Some(reason) = &self.reason {
            response.extensions_mut().insert(reason.clone());
        }
        response
    }
}

/// Reads the request body to its end without keeping it, so the connection can serve the next request.
async fn drain(mut body: Incoming) {
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            // The client went away; hyper closes the connection.
            return;
        }
    }
}
