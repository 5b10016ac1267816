//! What a segment of a run has to do, known before it starts: for messages, file limits and the
//! "nothing to do" case.

use super::deal::Deal;
use crate::compile::Graph;
use crate::plan::model::Phase;
use crate::segment::Segment;

/// A segment's part of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// Per group in plan order, the users (or pool threads) that run in the segment.
    pub groups: Vec<u64>,
    /// Closed groups' users (at the most, for staged groups) and open groups' pool threads of the main
    /// groups that run in the segment.
    pub users: u64,
    /// The same in the whole plan.
    pub of: u64,
    /// Setup and teardown groups' users: the first segment runs them, whole.
    pub setup_users: u64,
}

impl Share {
    /// True when the segment sends nothing at all.
    pub fn is_empty(&self) -> bool {
        self.users == 0 && self.setup_users == 0
    }
}

/// The part of `graph` that `segment` runs, dealt as the scheduler deals it.
pub fn share(graph: &Graph, segment: Segment) -> Share {
    let mut out = Share { groups: Vec::with_capacity(graph.groups.len()), users: 0, of: 0, setup_users: 0 };
    for g in &graph.groups {
        let threads = u64::from(g.threads);
        let here = if g.phase != Phase::Main {
            let here = if segment.is_first() { threads } else { 0 };
            out.setup_users += here;
            here
        } else {
            let here = Deal { segment, base: out.of }.users(threads);
            out.of += threads;
            out.users += here;
            here
        };
        out.groups.push(here);
    }
    out
}
