//! Where a user keeps the future of its request in flight: in its task, or boxed for the request's time.
//!
//! A future kept in the task takes room there for the user's whole life; a boxed one only while the request
//! is in flight, for an allocation per request (about 400 instructions: at 1.4 KiB it is too large for
//! malloc's per-thread cache). Users that pause between requests spend most of their time holding nothing,
//! so theirs are boxed; users that do not pause always have a request in flight, so theirs stay in place.
//! The choice is made where a user's task is spawned, so that each task is as large as its own choice needs.

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use super::emit::Emit;
use super::VirtualUser;
use crate::compile::{Graph, RequestNode, StepNode};
use crate::plan::model::Think;
use crate::run::catch::catch;

/// How a user holds the future of a request in flight (see the module's documentation).
pub trait Holding: 'static {
    /// Sends the request and hands its sample over, a panic caught as [`catch`] does.
    fn request<'a>(
        user: &'a mut VirtualUser,
        graph: &'a Graph,
        node: &'a RequestNode,
        late: Duration,
    ) -> impl Future<Output = Result<Emit, String>> + Send + 'a;
}

/// In the user's task: no allocation per request.
pub struct InPlace;

/// Boxed while the request is in flight: a user that is not sending holds nothing for it.
pub struct Boxed;

impl Holding for InPlace {
    async fn request<'a>(
        user: &'a mut VirtualUser,
        graph: &'a Graph,
        node: &'a RequestNode,
        late: Duration,
    ) -> Result<Emit, String> {
        let request = pin!(user.request(graph, node, late));
        catch(request).await
    }
}

impl Holding for Boxed {
    async fn request<'a>(
        user: &'a mut VirtualUser,
        graph: &'a Graph,
        node: &'a RequestNode,
        late: Duration,
    ) -> Result<Emit, String> {
        let mut request = Box::pin(user.request(graph, node, late));
        catch(request.as_mut()).await
    }
}

/// Whether a user of a group with this think time and these steps ever pauses.
pub fn pauses(think_time: &Think, steps: &[StepNode]) -> bool {
    !matches!(think_time, Think::None) || steps.iter().any(step_pauses)
}

fn step_pauses(step: &StepNode) -> bool {
    let any = |steps: &[StepNode]| steps.iter().any(step_pauses);
    match step {
        StepNode::Request(_) => false,
        StepNode::Think(t) => !matches!(t, Think::None),
        StepNode::Transaction { steps, .. }
        | StepNode::Loop { steps, .. }
        | StepNode::While { steps, .. }
        | StepNode::ForEach { steps, .. }
        | StepNode::Once { steps, .. } => any(steps),
        StepNode::If { then, otherwise, .. } => any(then) || any(otherwise),
        StepNode::Random(branches) => branches.iter().any(|(_, steps)| any(steps)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanFile, PlanOptions};
    use crate::source::Source;

    fn group_pauses(steps: &str, think: &str) -> bool {
        let text = format!(
            "name: p\ndefaults: {{ base_url: \"http://127.0.0.1:9\" }}\nthread_groups:\n  - name: g\n    threads: 1\n    \
             loops: 1\n{think}    steps:\n{steps}"
        );
        let file = PlanFile::parse(Source::new("p.yaml", text)).unwrap_or_else(|e| panic!("{e:?}"));
        let graph = crate::compile::compile(file.validate(&PlanOptions::default()).unwrap_or_else(|e| panic!("{e:?}")));
        let g = &graph.groups[0];
        pauses(&g.think_time, &g.steps)
    }

    const REQUEST: &str = "      - name: r\n        request: { url: /a }\n";

    #[test]
    fn a_group_pauses_with_a_think_time_or_a_think_step_anywhere_in_its_steps() {
        assert!(!group_pauses(REQUEST, ""));
        assert!(group_pauses(REQUEST, "    think_time: 1s\n"));
        assert!(group_pauses(&format!("{REQUEST}      - think: 10ms\n"), ""));
        let nested = "      - transaction: t\n        steps:\n          - loop: 2\n            steps:\n              \
                      - think: 5ms\n              - name: r\n                request: { url: /a }\n";
        assert!(group_pauses(nested, ""));
    }
}
