//! The labels a plan's rows can have: its request steps', its transactions', and its groups' (a failure
//! outside any request is a row labelled with its group's name).

use std::collections::HashSet;

use crate::compile::{Graph, StepNode};

/// Every label `graph` can write.
pub fn plan_labels(graph: &Graph) -> HashSet<String> {
    let mut labels = HashSet::new();
    for group in &graph.groups {
        labels.insert(group.name.to_string());
        add(&group.steps, &mut labels);
    }
    labels
}

fn add(steps: &[StepNode], labels: &mut HashSet<String>) {
    for step in steps {
        match step {
            StepNode::Request(r) => {
                labels.insert(r.step.name.to_string());
            }
            StepNode::Think(_) => {}
            StepNode::Transaction { name, steps } => {
                labels.insert(name.to_string());
                add(steps, labels);
            }
            StepNode::If { then, otherwise, .. } => {
                add(then, labels);
                add(otherwise, labels);
            }
            StepNode::Loop { steps, .. }
            | StepNode::While { steps, .. }
            | StepNode::ForEach { steps, .. }
            | StepNode::Once { steps, .. } => add(steps, labels),
            StepNode::Random(branches) => branches.iter().for_each(|(_, steps)| add(steps, labels)),
        }
    }
}
