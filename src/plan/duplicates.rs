//! A key given twice in one mapping. YAML forbids it, and whichever of the two a program keeps, the other is
//! lost without a word: a header, a query parameter, a JSON field. Every mapping of the plan is checked,
//! those whose keys planrun knows and those the user names (headers, query, json, properties...).

use std::collections::HashMap;

use super::node::{Node, Value};
use crate::diag::{Diagnostic, Diagnostics};

/// Reports every key that repeats one before it in the same mapping.
pub fn check(root: &Node, diags: &mut Diagnostics) {
    walk(root, "the plan", diags);
}

fn walk(node: &Node, place: &str, diags: &mut Diagnostics) {
    match &node.value {
        Value::Map(entries) => {
            let mut first: HashMap<&str, u32> = HashMap::new();
            for (k, v) in entries {
                match first.get(k.name.as_str()) {
                    Some(line) => diags.push(
                        Diagnostic::new(k.span, format!("`{}` is given twice in {place}", k.name))
                            .expected("each key once in a mapping")
                            .hint(format!(
                                "it is first given on line {line}; YAML keeps only one of the two, so remove or rename one"
                            )),
                    ),
                    None => {
                        first.insert(&k.name, k.span.line);
                    }
                }
                walk(v, &format!("`{}`", k.name), diags);
            }
        }
        Value::Seq(items) => {
            let inner = format!("an item of {place}");
            items.iter().for_each(|i| walk(i, &inner, diags));
        }
        _ => {}
    }
}
