//! A think time: a fixed duration, `uniform: [min, max]` or `gaussian: { mean, stddev }`, on a group or as
//! a step.

use super::decode::Ctx;
use super::model::Think;
use super::node::{Node, Value};
use super::vocab;
use crate::diag::Diagnostic;

/// Decodes a think time; `None` after an error was reported.
pub(super) fn think(cx: &mut Ctx, node: &Node) -> Option<Think> {
    match &node.value {
        Value::Map(_) => {
            let f = cx.object(node, &vocab::THINK)?;
            if let Some(u) = f.get("uniform") {
                let Value::Seq(b) = &u.value else {
                    cx.type_error(u, "uniform: [min, max], e.g. [100ms, 300ms]");
                    return None;
                };
                if b.len() != 2 {
                    cx.type_error(u, "uniform: two durations [min, max]");
                    return None;
                }
                let (lo, hi) = (cx.duration(&b[0], "uniform")?, cx.duration(&b[1], "uniform")?);
                if lo > hi {
                    cx.error(Diagnostic::new(u.span, "uniform: the minimum is above the maximum"));
                    return None;
                }
                return Some(Think::Uniform(lo, hi));
            }
            if let Some(g) = f.get("gaussian") {
                let gf = cx.object(g, &vocab::GAUSSIAN)?;
                let mean = cx.require(&gf, "mean").and_then(|m| cx.duration(m, "mean"));
                let stddev = cx.require(&gf, "stddev").and_then(|s| cx.duration(s, "stddev"));
                return Some(Think::Gaussian { mean: mean?, stddev: stddev? });
            }
            if node.as_map().is_some_and(|m| m.is_empty()) {
                cx.error(Diagnostic::new(node.span, "empty think time").expected("uniform or gaussian"));
            }
            None
        }
        _ => cx.duration(node, "think time").map(|d| if d.is_zero() { Think::None } else { Think::Fixed(d) }),
    }
}
