//! A virtual user: its scope, its connection and cookie jar, and the loop over its iterations.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::Rng;
use rand_distr::{Distribution, Normal};
use tokio::sync::{mpsc, watch};

use super::check::{check, Observed};
use super::http::Client;
use super::scheduler::{stopped, Active};
use super::wire;
use crate::compile::{Graph, GroupGraph, RequestNode, StepNode};
use crate::plan::model::Think;
use crate::sample::{DataType, ErrorKind, Outcome, Sample, ThreadId};
use crate::template::Scope;

/// Bodies kept for assertions are cut at this size.
const BODY_LIMIT: usize = 10 << 20;

/// Everything one virtual user needs.
pub struct VirtualUser {
    /// The run's graph.
    pub graph: Arc<Graph>,
    /// Index of the user's group in `graph.groups`.
    pub group: usize,
    /// The user's number in the group, from 1.
    pub vu: u32,
    /// Where samples go.
    pub tx: mpsc::Sender<Sample>,
    /// Becomes true when the run must stop starting requests.
    pub stop: watch::Receiver<bool>,
    /// Active-thread counters.
    pub active: Arc<Active>,
    /// When the group must stop, if it has a duration.
    pub deadline: Option<Instant>,
}

/// A virtual user's scope with its variables rendered; a variable that fails to render stays undefined,
/// so the requests that read it fail with the template error.
pub fn user_scope(graph: &Graph, group: usize, vu: u32) -> Arc<Scope> {
    let g = &graph.groups[group];
    let scope = Scope::for_vu(graph.shared.clone(), graph.seed, g.number, g.name.clone(), vu);
    for (name, tpl) in &graph.variables {
        if let Ok(v) = graph.templates.render(tpl, &scope) {
            scope.set_var(name.clone(), v.into());
        }
    }
    scope
}

impl VirtualUser {
    /// Runs the user's iterations until its loops are done, its deadline passes or the run stops.
    pub async fn run(mut self) {
        let graph = self.graph.clone();
        let group = &graph.groups[self.group];
        let scope = user_scope(&graph, self.group, self.vu);
        let thread = ThreadId { group: group.name.clone(), group_no: group.number, vu: self.vu };
        let mut client = Client::new(graph.defaults.cookies, graph.defaults.follow_redirects, BODY_LIMIT);
        self.active.start(self.group);
        let mut iteration = 0u64;
        'iterations: while group.loops.is_none_or(|l| iteration < l) {
            iteration += 1;
            scope.set_iteration(iteration);
            for step in &group.steps {
                if self.must_stop() {
                    break 'iterations;
                }
                match step {
                    StepNode::Think(t) => self.pause(t, &scope).await,
                    StepNode::Request(node) => {
                        let sample = self.request(&graph, group, node, &scope, &mut client, &thread).await;
                        if self.tx.send(sample).await.is_err() {
                            break 'iterations;
                        }
                        if !self.must_stop() {
                            self.pause(&group.think_time, &scope).await;
                        }
                    }
                }
            }
        }
        self.active.finish(self.group);
    }

    fn must_stop(&self) -> bool {
        *self.stop.borrow() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    async fn pause(&mut self, think: &Think, scope: &Scope) {
        let d = match think {
            Think::None => return,
            Think::Fixed(d) => *d,
            Think::Uniform(lo, hi) => scope.with_rng(|r| r.random_range(*lo..=*hi)),
            Think::Gaussian { mean, stddev } => scope.with_rng(|r| {
                let n = Normal::new(mean.as_secs_f64(), stddev.as_secs_f64()).map(|n| n.sample(r)).unwrap_or(0.0);
                Duration::from_secs_f64(n.max(0.0))
            }),
        };
        let until = match self.deadline {
            Some(dl) => dl.min(Instant::now() + d),
            None => Instant::now() + d,
        };
        tokio::select! {
            _ = tokio::time::sleep_until(until.into()) => {}
            _ = stopped(&mut self.stop) => {}
        }
    }

    async fn request(
        &self,
        graph: &Graph,
        group: &GroupGraph,
        node: &RequestNode,
        scope: &Arc<Scope>,
        client: &mut Client,
        thread: &ThreadId,
    ) -> Sample {
        let start_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let step = &node.step;
        let mut sample = Sample {
            start_ms,
            elapsed_us: 0,
            latency_us: 0,
            connect_us: 0,
            idle_us: 0,
            label: step.name.clone(),
            outcome: Outcome::Error { kind: ErrorKind::BadRequest, message: String::new() },
            thread: thread.clone(),
            data_type: DataType::Text,
            success: false,
            failure: None,
            bytes: 0,
            sent_bytes: 0,
            grp_threads: 0,
            all_threads: 0,
            url: None,
        };
        let wire = match wire::render(graph, node, scope, |u| client.cookie_header(u)) {
            Ok(w) => w,
            Err(e) => {
                sample.outcome = Outcome::Error { kind: ErrorKind::BadRequest, message: e.0.clone() };
                sample.failure = Some(e.0);
                sample.data_type = DataType::None;
                self.stamp_threads(&mut sample, group);
                return sample;
            }
        };
        sample.url = Some(wire.url.to_string());
        let ex = client.execute(wire, step.timeout, node.needs_body).await;
        sample.elapsed_us = ex.elapsed.as_micros() as u64;
        sample.latency_us = ex.latency.as_micros() as u64;
        sample.connect_us = ex.connect.as_micros() as u64;
        sample.bytes = ex.bytes;
        sample.sent_bytes = ex.sent;
        match ex.result {
            Ok(resp) => {
                let seen = Observed { response: &resp, elapsed_ms: sample.elapsed_us / 1000, bytes: ex.bytes };
                sample.failure = check(&step.asserts, &seen);
                sample.success = sample.failure.is_none();
                sample.data_type = resp.data_type;
                sample.outcome = Outcome::Response { status: resp.status, reason: resp.reason };
            }
            Err(f) => {
                sample.failure = Some(f.message.clone());
                sample.data_type = DataType::None;
                sample.outcome = Outcome::Error { kind: f.kind, message: f.message };
            }
        }
        self.stamp_threads(&mut sample, group);
        sample
    }

    fn stamp_threads(&self, sample: &mut Sample, _group: &GroupGraph) {
        sample.grp_threads = self.active.groups[self.group].load(Ordering::Relaxed);
        sample.all_threads = self.active.all.load(Ordering::Relaxed);
    }
}
