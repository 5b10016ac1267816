//! A virtual user: its scope, its connection and cookie jar, and its iterations over the group's steps.

use std::collections::HashSet;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use rand_distr::{Distribution, Normal};
use tokio::sync::{mpsc, watch};

use super::active::{stopped, Active};
use super::catch::catch;
use super::check::{check, truthy, Observed};
use super::data_rows::{DataSources, UserCursors};
use super::extract::extract;
use super::options::{RunOptions, Wants};
use super::wire;
use crate::compile::{Graph, RequestNode};
use crate::http::{Client, How, Recorded};
use crate::mask::Masks;
use crate::plan::model::{Check, ExtractFrom, Think};
use crate::sample::{DataType, ErrorKind, Outcome, Sample, SampleUrl, ThreadId};
use crate::template::{Scope, Tpl};

mod emit;
mod flow;
mod holding;
mod transaction;

use emit::Emit;

pub use holding::{pauses, Boxed, Holding, InPlace};

use transaction::Transactions;

/// What every user of a run shares.
#[derive(Clone)]
pub struct RunContext {
    /// The run's graph.
    pub graph: Arc<Graph>,
    /// Where samples go.
    pub tx: mpsc::Sender<Sample>,
    /// Becomes true when the run must stop starting requests.
    pub stop: watch::Receiver<bool>,
    /// Stops the whole run from inside it (a data set with `on_eof: stop_run`).
    pub halt: Arc<watch::Sender<bool>>,
    /// Active-thread counters.
    pub active: Arc<Active>,
    /// The plan's CSV data sets.
    pub data: Arc<DataSources>,
    /// Why a data set stopped the run, set by the first user that ran out.
    pub data_end: Arc<std::sync::OnceLock<String>>,
    /// What the run records beyond the samples' columns.
    pub options: Arc<RunOptions>,
    /// The part of the plan's users and arrivals that runs on this runtime.
    pub segment: crate::segment::Segment,
}

/// A virtual user's scope with its variables rendered; a variable that fails to render stays undefined,
/// so the requests that read it fail with the template error.
pub fn user_scope(graph: &Graph, group: usize, vu: u32) -> Arc<Scope> {
    let g = &graph.groups[group];
    let scope = Scope::for_vu(graph.shared.clone(), graph.seed, Graph::group_number(group), g.name.clone(), vu);
    for (name, tpl) in &graph.variables {
        if let Ok(v) = graph.templates.render(tpl, &scope) {
            scope.set_var(name.clone(), v.into());
        }
    }
    scope
}

/// What to mask in this user's results: secret properties and the user's secret variables, made once per user.
pub fn user_masks(graph: &Graph, scope: &Scope) -> Masks {
    if graph.secrets.variables.is_empty() {
        return graph.masks.clone();
    }
    let vars: Vec<String> =
        graph.secrets.variables.iter().filter_map(|v| scope.var(v)).map(|v| v.to_string()).collect();
    Masks::new(graph.secrets.values.iter().chain(&vars).map(String::as_str))
}

/// One virtual user.
pub struct VirtualUser {
    cx: RunContext,
    group: usize,
    scope: Arc<Scope>,
    client: Client,
    thread: ThreadId,
    /// When the group must stop, if it has a duration.
    deadline: Option<Instant>,
    /// Asks this user alone to stop after its current iteration (a ramp going down).
    retire: Option<watch::Receiver<bool>>,
    iteration: u64,
    /// How late the current iteration started (open model), until its first request takes it.
    late: Option<Duration>,
    /// Transactions being timed, innermost last.
    transactions: Transactions,
    /// `once` blocks this user has run.
    once_done: HashSet<usize>,
    /// Secret values masked in the samples written to results.
    masks: Masks,
    /// This user's place in each data set.
    cursors: UserCursors,
    /// The run records something beyond the columns (`RunOptions`): read once, not at every request.
    extras: bool,
    /// The header list of the last request, for the next one (see [`wire::render_reusing`]); kept only by
    /// users that never pause, as they hold nothing else between requests either (see [`Holding`]).
    spare_headers: wire::SpareHeaders,
    keeps_headers: bool,
    /// When the last exchange ended, until the next deadline check takes it: that check, a few microseconds
    /// later with nothing awaited between, reads it instead of the clock (an iteration's last check leaves
    /// it for the next iteration's first, see [`VirtualUser::iterate`]).
    ended: Option<Instant>,
    /// The run's stop was seen true (see [`VirtualUser::stopping`]).
    stopping: bool,
}

impl VirtualUser {
    /// A user numbered `vu` (from 1) in group `group`.
    pub fn new(cx: RunContext, group: usize, vu: u32, deadline: Option<Instant>) -> Self {
        let graph = cx.graph.clone();
        let g = &graph.groups[group];
        let scope = user_scope(&graph, group, vu);
        let cursors = cx.data.user(group);
        let extras = !cx.options.is_off();
        // Read now: the receiver may be a clone of one that had already seen the stop's last change.
        let stopping = *cx.stop.borrow();
        Self {
            cursors,
            masks: user_masks(&graph, &scope),
            scope,
            client: Client::with_tls(
                graph.defaults.cookies,
                usize::try_from(graph.defaults.max_body).unwrap_or(usize::MAX),
                crate::http::shared_tls_config(&graph.defaults.tls),
            )
            .counting(cx.active.connections.clone())
            .proxied(graph.defaults.proxies.clone()),
            thread: ThreadId { group: g.name.clone(), group_no: Graph::group_number(group), vu },
            cx,
            group,
            deadline,
            retire: None,
            iteration: 0,
            late: None,
            transactions: Transactions::default(),
            once_done: HashSet::new(),
            extras,
            spare_headers: wire::SpareHeaders::default(),
            keeps_headers: !pauses(&g.think_time, &g.steps),
            ended: None,
            stopping,
        }
    }

    /// Lets a ramp retire this user after its current iteration.
    pub fn with_retire(mut self, retire: watch::Receiver<bool>) -> Self {
        self.retire = Some(retire);
        self
    }

    /// The compiled plan this user runs, for [`iterate_caught`](Self::iterate_caught).
    pub fn graph(&self) -> Arc<Graph> {
        self.cx.graph.clone()
    }

    /// Closed model: iterate until the loops are done, the deadline passes, or the user or run stops.
    /// Boxed, so a task that waits to start the user and then runs it holds the user once, not twice.
    pub async fn run_closed<H: Holding>(mut self: Box<Self>, loops: Option<u64>) {
        self.cx.active.start(self.group);
        // Held for the user's whole run: cloned for each iteration, its count went up and down (two locked
        // instructions, on a line every core shares) with every one.
        let graph = self.graph();
        while loops.is_none_or(|l| self.iteration < l) && !self.retired() {
            if !self.iterate_caught::<H>(&graph, None).await {
                break;
            }
        }
        self.cx.active.finish(self.group);
    }

    /// One iteration; a panic outside any request ends the iteration with a failed sample labelled with
    /// the group's name, and the user goes on with its next one. False when the run or the group is over.
    pub async fn iterate_caught<H: Holding>(&mut self, graph: &Graph, intended: Option<Instant>) -> bool {
        let caught = {
            let iteration = pin!(self.iterate::<H>(graph, intended));
            catch(iteration).await
        };
        match caught {
            Ok(go_on) => go_on,
            Err(why) => {
                let label = graph.groups[self.group].name.clone();
                let sent = {
                    let sample = self.internal_error(label, why);
                    self.emit(sample)
                };
                sent.await && !self.must_stop()
            }
        }
    }

    /// The failed sample of a panic, after which the user starts afresh: a new connection, no open
    /// transactions (the rest of what it holds, its scope and jar, is kept).
    pub(super) fn internal_error(&mut self, label: Arc<str>, why: String) -> Sample {
        self.client.forget_connection();
        self.transactions = Transactions::default();
        let mut sample = failed(start_ms(Instant::now(), Duration::ZERO), label, &self.thread);
        sample.outcome = Outcome::Error { kind: ErrorKind::Internal, message: why };
        self.stamp_threads(&mut sample);
        // A panic's message may quote a value the user rendered.
        self.masks.apply_to(&mut sample);
        sample
    }

    fn retired(&self) -> bool {
        self.retire.as_ref().is_some_and(|r| *r.borrow())
    }

    pub(super) fn must_stop(&mut self) -> bool {
        let ended = self.ended.take();
        self.stopping() || self.deadline.is_some_and(|d| ended.unwrap_or_else(Instant::now) >= d)
    }

    /// Whether the run is stopping. The stop's value is read (under the channel's lock) only when its version
    /// moved since this user last read it: otherwise an atomic load answers, twice a request.
    fn stopping(&mut self) -> bool {
        if !self.stopping && !matches!(self.cx.stop.has_changed(), Ok(false)) {
            self.stopping = *self.cx.stop.borrow_and_update();
        }
        self.stopping
    }

    /// Pauses; inside transactions the pause counts as their idle time.
    pub(super) async fn pause(&mut self, think: &Think) {
        let d = match think {
            Think::None => return,
            Think::Fixed(d) => *d,
            Think::Uniform(lo, hi) => self.scope.with_rng(|r| r.random_range(*lo..=*hi)),
            Think::Gaussian { mean, stddev } => self.scope.with_rng(|r| {
                let n = Normal::new(mean.as_secs_f64(), stddev.as_secs_f64()).map(|n| n.sample(r)).unwrap_or(0.0);
                Duration::try_from_secs_f64(n.max(0.0)).unwrap_or(crate::duration::MAX)
            }),
        };
        let until = match self.deadline {
            Some(dl) => dl.min(crate::clock::after(Instant::now(), d)),
            None => crate::clock::after(Instant::now(), d),
        };
        let began = Instant::now();
        tokio::select! {
            _ = tokio::time::sleep_until(until.into()) => {}
            // The wait marks the stop as read: `stopping` must learn it here.
            _ = stopped(&mut self.cx.stop) => self.stopping = true,
        }
        self.transactions.idle(began.elapsed());
    }

    /// Sends one request and hands its sample to the sinks ([`VirtualUser::hand_over`]); `late` is how late its
    /// iteration started (open model), which counts against the target as wrk2 counts it (no coordinated
    /// omission). The sample goes from where it is made to the channel: returned, it would be copied, 200-odd
    /// bytes, by each layer it passed (the catch, the holding, the steps).
    pub(super) async fn request(&mut self, graph: &Graph, node: &RequestNode, late: Duration) -> Emit {
        let step = &node.step;
        // Made after the exchange, so that it is not part of the state held while waiting for it; stamped
        // with when the exchange started (the request's rendering took microseconds before that).
        let new_sample = |thread: &ThreadId, start: Instant| failed(start_ms(start, late), step.name.clone(), thread);
        // Decided before anything is sent: whether this is one of the first requests `--http-debug` shows.
        let wants = if self.extras { self.cx.options.wants(&self.masks) } else { Wants::default() };
        let Wants { keep, record, show, any } = wants;
        let client = &self.client;
        let spare = &mut self.spare_headers;
        let wire = match wire::render_reusing(graph, node, &self.scope, |u| client.cookie_header(u), spare) {
            Ok(w) => w,
            Err(e) => {
                let sample = self.unrendered(new_sample(&self.thread, Instant::now()), step, &e.0, (any, show), late);
                return self.hand_over(sample);
            }
        };
        let how = How {
            keep: if node.needs_body { usize::MAX } else { keep },
            follow_redirects: step.follow_redirects,
            record,
            headers: node.needs_headers || any,
        };
        let mut ex = self.client.exchange(&wire, step.timeout, how).await;
        let mut sample = new_sample(&self.thread, ex.start);
        self.ended = ex.start.checked_add(ex.elapsed);
        // Only a cookie extractor needs the URL after this; otherwise it moves into the sample uncopied.
        let cookie_target =
            step.extract.iter().any(|e| matches!(e.from, ExtractFrom::Cookie(_))).then(|| wire.target.clone());
        let (url, buffer) = SampleUrl::keeping_buffer(ex.final_url.take().unwrap_or(wire.target.url));
        sample.url = Some(url);
        if let Some(buffer) = buffer.filter(|_| self.keeps_headers) {
            self.spare_headers.keep_url(buffer);
        }
        self.spare_headers.keep(node, if self.keeps_headers { wire.headers } else { Vec::new() });
        sample.elapsed_us = (ex.elapsed + late).as_micros() as u64;
        sample.latency_us = (ex.latency + late).as_micros() as u64;
        sample.connect_us = ex.connect.as_micros() as u64;
        sample.bytes = ex.bytes;
        sample.sent_bytes = ex.sent;
        // The body decoded from its Content-Encoding, when a check or an extractor read it.
        let mut decoded = None;
        sample.protocol = ex.protocol;
        // Read where it lies: the response stays in the exchange (moved out, it was copied) for the detail.
        match &mut ex.result {
            Ok(resp) => {
                let max_body = self.client.body_limit();
                let seen = Observed::new(resp, sample.elapsed_us / 1000, ex.bytes, max_body);
                let client = &self.client;
                let target = cookie_target.as_ref();
                let cookie = |name: &str| target.and_then(|t| client.cookie(name, t));
                let extracted = extract(&step.extract, &seen, &cookie, &self.scope);
                if step.asserts.iter().any(|a| matches!(a.check, Check::Expr(_))) {
                    self.scope.set_var(Arc::from("response"), response_value(&seen));
                }
                let templates = &graph.templates;
                let scope = &self.scope;
                let mut expr = |tpl: &Tpl| templates.render(tpl, scope).map(|s| truthy(&s)).map_err(|e| e.message);
                (sample.success, sample.failure) = check(&step.asserts, &seen, &mut expr);
                if let (Err(msg), None) = (extracted, &sample.failure) {
                    sample.success = false;
                    sample.failure = Some(msg);
                }
                decoded = seen.into_decoded();
                if let Some(problem) = decoded.as_ref().and_then(|d| d.problem.as_ref()) {
                    // What the checks saw is not the body the server meant: that is the sample's failure.
                    sample.success = false;
                    sample.failure = Some(super::coding::failure(problem, resp, max_body));
                }
                sample.data_type = resp.data_type;
                // The reason phrase moves into the sample; the detail reads it there.
                sample.outcome = Outcome::Response { status: resp.status, reason: std::mem::take(&mut resp.reason) };
            }
            Err(f) => sample.outcome = Outcome::Error { kind: f.kind, message: std::mem::take(&mut f.message) },
        }
        self.stamp_threads(&mut sample);
        self.masks.apply_to(&mut sample);
        if any {
            let options = &self.cx.options;
            let recorded = self.client.recorded();
            let last = ex.result.as_ref().ok();
            let rows = self.cx.data.rows(&self.cursors);
            let last = (last, decoded.as_ref());
            sample.detail = super::detail::detail(options, show, &sample, &recorded, last, late, &self.masks, rows);
        }
        if let Some(d) = decoded.filter(|d| d.problem.as_ref().is_none_or(|p| p.is_cut())) {
            sample.detail.get_or_insert_with(Default::default).decoded_bytes = Some(d.body.len() as u64);
        }
        self.hand_over(sample)
    }

    /// The failed sample of a request that could not be rendered. Out of line, as other rare paths are: the
    /// code of every request's path is more than the instruction cache holds, and what sits between its
    /// instructions is fetched with them.
    #[cold]
    fn unrendered(
        &self,
        mut sample: Sample,
        step: &crate::plan::model::RequestStep,
        why: &str,
        (any, show): (bool, bool),
        late: Duration,
    ) -> Sample {
        let message = format!("{why} (request of step `{}`, plan line {})", step.name, step.span.line);
        sample.outcome = Outcome::Error { kind: ErrorKind::BadRequest, message };
        self.stamp_threads(&mut sample);
        self.masks.apply_to(&mut sample);
        if any {
            let options = &self.cx.options;
            let rows = self.cx.data.rows(&self.cursors);
            let recorded = Recorded::default();
            sample.detail =
                super::detail::detail(options, show, &sample, &recorded, (None, None), late, &self.masks, rows);
        }
        sample
    }

    fn stamp_threads(&self, sample: &mut Sample) {
        sample.grp_threads = self.cx.active.groups[self.group].load(Ordering::Relaxed);
        sample.all_threads = self.cx.active.all.load(Ordering::Relaxed);
    }
}

/// `response` for `expr:` assertions: status, headers (lower-case names), body, json.
fn response_value(seen: &Observed) -> minijinja::Value {
    let headers: std::collections::BTreeMap<String, String> = seen
        .response
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    minijinja::context! {
        status => seen.response.status,
        headers => headers,
        body => seen.body().into_owned(),
        json => seen.json().map(crate::template::to_value),
    }
}

/// A sample that failed before anything was sent: to be given its outcome.
fn failed(start_ms: u64, label: Arc<str>, thread: &ThreadId) -> Sample {
    Sample {
        start_ms,
        elapsed_us: 0,
        latency_us: 0,
        connect_us: 0,
        idle_us: 0,
        label,
        outcome: Outcome::Error { kind: ErrorKind::BadRequest, message: String::new() },
        thread: thread.clone(),
        data_type: DataType::None,
        success: false,
        failure: None,
        bytes: 0,
        sent_bytes: 0,
        grp_threads: 0,
        all_threads: 0,
        url: None,
        protocol: None,
        detail: None,
    }
}

/// A sample's timestamp: when it started, `late` before `start` in the open model (see [`VirtualUser::request`]).
fn start_ms(start: Instant, late: Duration) -> u64 {
    match start.checked_sub(late) {
        Some(at) => crate::clock::epoch_ms(at),
        None => crate::clock::epoch_ms(start).saturating_sub(late.as_millis() as u64),
    }
}
