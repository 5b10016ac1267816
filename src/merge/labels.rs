//! The labels a plan's rows can have: its request steps', its transactions', and its groups' (a failure
//! outside any request is a row labelled with its group's name).

use std::collections::HashSet;

use crate::compile::{Graph, StepNode};

/// Every label `graph` can write.
pub fn plan_labels(graph: &Graph) -> HashSet<String> {
    let mut labels = HashSet::new();
    for group in &graph.groups {
        labels.insert(group.name.to_string());
        StepNode::walk(&group.steps, &mut |step| match step {
            StepNode::Request(r) => _ = labels.insert(r.step.name.to_string()),
            StepNode::Transaction { name, .. } => _ = labels.insert(name.to_string()),
            _ => {}
        });
    }
    labels
}
