//! `-D name=value` for a name the plan neither declares under `properties:` nor reads as `props.name`: the
//! value would be ignored, so it is most likely a typo. JMeter (`-J`) and k6 (`-e`) ignore such values
//! silently; planrun warns, with "did you mean", and goes on.

use super::node::{Node, Value};
use crate::diag::{did_you_mean, Warning, Warnings};

/// A warning for each overridden name that nothing in the plan uses (once per name).
pub fn unused_overrides(root: &Node, overrides: &[(String, String)]) -> Warnings {
    let mut out = Warnings::default();
    let declared: Vec<&str> = root
        .as_map()
        .and_then(|m| m.iter().find(|(k, _)| k.name == "properties"))
        .and_then(|(_, v)| v.as_map())
        .map(|m| m.iter().map(|(k, _)| k.name.as_str()).collect())
        .unwrap_or_default();
    let mut warned: Vec<&str> = Vec::new();
    for (name, _) in overrides {
        if declared.contains(&name.as_str()) || warned.contains(&name.as_str()) || reads_prop(root, name) {
            continue;
        }
        warned.push(name);
        // The value is not shown: it may be a password given to a misspelt name.
        let w = Warning::new(format!(
            "-D {name}: the plan has no property `{name}` and nothing reads `props.{name}`; the value is not used"
        ));
        let hint = match did_you_mean(name, declared.iter().copied()) {
            Some(near) => format!("did you mean `-D {near}=...`?"),
            None if declared.is_empty() => "the plan declares no `properties:`".to_string(),
            None => format!("the plan's properties: {}", declared.join(", ")),
        };
        out.push(w.hint(hint));
    }
    out
}

/// True when a string anywhere in the plan reads `props.name`, `props['name']` or `props["name"]`: a plan
/// may read a property it does not declare, which then must come from `-D`.
fn reads_prop(node: &Node, name: &str) -> bool {
    match &node.value {
        Value::Str(s) => mentions(s, name),
        Value::Seq(items) => items.iter().any(|i| reads_prop(i, name)),
        Value::Map(entries) => entries.iter().any(|(_, v)| reads_prop(v, name)),
        _ => false,
    }
}

fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut rest = text;
    while let Some(i) = rest.find("props") {
        let before_ok = !rest[..i].chars().next_back().is_some_and(ident);
        let after = &rest[i + "props".len()..];
        if before_ok {
            if let Some(tail) = after.strip_prefix('.').and_then(|a| a.strip_prefix(name)) {
                if !tail.chars().next().is_some_and(ident) {
                    return true;
                }
            }
            for q in ['\'', '"'] {
                if after
                    .strip_prefix('[')
                    .and_then(|a| a.strip_prefix(q))
                    .and_then(|a| a.strip_prefix(name))
                    .is_some_and(|t| t.starts_with(q))
                {
                    return true;
                }
            }
        }
        rest = after;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[test]
    fn finds_reads_of_a_property() {
        assert!(mentions("{{ props.pth }}", "pth"));
        assert!(mentions("x{{props['pth']}}", "pth"));
        assert!(mentions("{{ props[\"pth\"] | upper }}", "pth"));
        assert!(!mentions("{{ props.pth2 }}", "pth"));
        assert!(!mentions("{{ myprops.pth }}", "pth"));
        assert!(!mentions("{{ props.path }}", "pth"));
    }
}
