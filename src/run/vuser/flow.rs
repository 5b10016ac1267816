//! Running a user's steps: requests, pauses, and blocks (transaction, if, loop, while, foreach, once, random).

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use rand::Rng;

use super::super::check::truthy;
use super::emit::Emit;
use super::holding::Holding;
use super::VirtualUser;
use crate::compile::{Graph, StepNode};
use crate::plan::model::{OnEof, Think};
use crate::template::Tpl;

type Step<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

impl VirtualUser {
    /// Runs one iteration of the steps; `intended` is when it should have started (open model), and the
    /// first request's times are measured from it. False when the run or the group is over.
    pub async fn iterate<H: Holding>(&mut self, graph: &Graph, intended: Option<Instant>) -> bool {
        self.iteration += 1;
        self.scope.set_iteration(self.iteration);
        if !self.cx.data.is_empty() {
            if let Err(end) = self.cx.data.advance(&mut self.cursors, &self.scope) {
                if end.on_eof == OnEof::StopRun {
                    let _ = self.cx.data_end.set(format!("data set `{}` has no rows left (on_eof: stop_run)", end.set));
                    let _ = self.cx.halt.send(true);
                }
                return false;
            }
        }
        // Measured before the iteration's own steps (a think time first) can add to it.
        self.late = intended.map(|i| Instant::now().saturating_duration_since(i));
        if intended.is_some() {
            // An open-model arrival waited for its time: the last exchange's end is long past.
            self.ended = None;
        }
        let steps = &graph.groups[self.group].steps;
        self.run_steps::<H>(graph, steps).await && !self.must_stop_after_iteration()
    }

    /// [`must_stop`](VirtualUser::must_stop) at an iteration's end, leaving the last exchange's end for the
    /// check before the next iteration's first step: in a closed loop that follows with nothing awaited
    /// between, and it is one clock read a request less.
    fn must_stop_after_iteration(&mut self) -> bool {
        let ended = self.ended;
        let stop = self.must_stop();
        self.ended = ended;
        stop
    }

    async fn run_steps<H: Holding>(&mut self, graph: &Graph, steps: &[StepNode]) -> bool {
        for step in steps {
            if self.must_stop() || !self.run_step::<H>(graph, step).await {
                return false;
            }
        }
        true
    }

    /// The steps of a block: boxed, as blocks nest (an iteration's own steps are not, so a plain plan
    /// allocates nothing per iteration for them).
    fn run_block<'a, H: Holding>(&'a mut self, graph: &'a Graph, steps: &'a [StepNode]) -> Step<'a> {
        Box::pin(self.run_steps::<H>(graph, steps))
    }

    async fn run_step<H: Holding>(&mut self, graph: &Graph, step: &StepNode) -> bool {
        match step {
            StepNode::Request(node) => {
                let late = self.late.take().unwrap_or_default();
                // Each value lives in a block of its own: one that outlived an await would take room in
                // every user's task.
                let sent = match H::request(self, graph, node, late).await {
                    Ok(sent) => sent,
                    Err(why) => {
                        let sample = self.internal_error(node.step.name.clone(), why);
                        self.hand_over(sample)
                    }
                };
                if !sent.await {
                    return false;
                }
                // Tested here, not only in `pause`: making and polling its future cost 50 instructions a request.
                let think = &graph.groups[self.group].think_time;
                if !matches!(think, Think::None) && !self.must_stop() {
                    self.pause(think).await;
                }
                true
            }
            StepNode::Think(t) => {
                self.pause(t).await;
                true
            }
            StepNode::Transaction { name, steps } => {
                self.transactions.open(name.clone());
                let go_on = self.run_block::<H>(graph, steps).await;
                let sent = match self.transactions.close(self.thread.clone(), &self.cx.active, self.group) {
                    Some(sample) => self.emit(sample),
                    None => Emit::Done(true),
                };
                if !sent.await {
                    return false;
                }
                go_on
            }
            StepNode::If { cond, then, otherwise } => {
                let branch = if self.condition(graph, cond) { then } else { otherwise };
                self.run_block::<H>(graph, branch).await
            }
            StepNode::Loop { count, steps } => {
                for _ in 0..*count {
                    if !self.run_block::<H>(graph, steps).await {
                        return false;
                    }
                }
                true
            }
            StepNode::While { cond, max, steps } => {
                for _ in 0..*max {
                    if !self.condition(graph, cond) {
                        break;
                    }
                    if !self.run_block::<H>(graph, steps).await {
                        return false;
                    }
                }
                true
            }
            StepNode::ForEach { list, var, steps } => {
                for item in self.list(graph, list) {
                    self.scope.set_var(var.clone(), item);
                    if !self.run_block::<H>(graph, steps).await {
                        return false;
                    }
                }
                true
            }
            StepNode::Once { id, steps } => {
                if self.once_done.insert(*id) {
                    return self.run_block::<H>(graph, steps).await;
                }
                true
            }
            StepNode::Random(branches) => {
                let total = branches.last().map_or(0, |(w, _)| *w);
                if total == 0 {
                    return true;
                }
                let pick = self.scope.with_rng(|r| r.random_range(0..total));
                match branches.iter().find(|(w, _)| pick < *w) {
                    Some((_, steps)) => self.run_block::<H>(graph, steps).await,
                    None => true,
                }
            }
        }
    }

    /// Counts a request's sample in the open transactions and hands it to the sinks ([`VirtualUser::emit`]).
    pub(super) fn hand_over(&mut self, sample: crate::sample::Sample) -> Emit {
        self.transactions.add(&sample);
        self.emit(sample)
    }

    /// Hands a sample to the sinks; when they fall behind the user waits (never drops it) and it is counted.
    /// Not an `async fn`: one would keep room for the sample in every user's task for as long as the user
    /// lives; here the sample is handed over at once, and only a wait (rare) holds it, boxed.
    pub(super) fn emit(&mut self, sample: crate::sample::Sample) -> Emit {
        use tokio::sync::mpsc::error::TrySendError;
        match self.cx.tx.try_send(sample) {
            Ok(()) => Emit::Done(true),
            Err(TrySendError::Closed(_)) => Emit::Done(false),
            Err(TrySendError::Full(sample)) => {
                // The wait may be long: the next deadline check reads the clock.
                self.ended = None;
                self.cx.active.waited.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let tx = self.cx.tx.clone();
                Emit::Wait(Box::pin(async move { tx.send(sample).await.is_ok() }))
            }
        }
    }

    /// A condition that fails to render counts as false.
    fn condition(&self, graph: &Graph, cond: &Tpl) -> bool {
        graph.templates.render(cond, &self.scope).is_ok_and(|s| truthy(&s))
    }

    /// The items of a foreach list; a list that fails to render or is not a list gives no items.
    fn list(&self, graph: &Graph, list: &Tpl) -> Vec<minijinja::Value> {
        let Ok(text) = graph.templates.render(list, &self.scope) else { return Vec::new() };
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => minijinja::Value::from(s.as_str()),
                    other => crate::template::to_value(other),
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}
