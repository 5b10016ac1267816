//! JMeter variable names and what they become in templates: `${login}` of a CSV set is `users.login`,
//! `${token}` of an extractor is `token`, `${host}` of User Defined Variables is `host`.

use std::collections::{HashMap, HashSet};

/// Names a template cannot use for a variable: planrun's own, minijinja's keywords, and the functions.
const RESERVED: &[&str] = &[
    "vu",
    "iteration",
    "group",
    "props",
    "stub",
    "response",
    "true",
    "false",
    "none",
    "True",
    "False",
    "None",
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
    "elif",
    "endif",
    "for",
    "endfor",
    "loop",
    "self",
    "super",
    "random_int",
    "random_float",
    "random_digits",
    "random_string",
    "random_choice",
    "uuid",
    "now_ms",
    "timestamp",
    "counter",
    "env",
    "range",
    "dict",
    "namespace",
    "debug",
];

/// `name` made into a template name: letters, digits and `_`, not starting with a digit, not reserved.
pub fn ident(name: &str) -> String {
    let mut out: String =
        name.trim().chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "v_");
    }
    if RESERVED.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Where a JMeter variable's value comes from in the converted plan.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The template expression that reads it (`host`, `users.login`).
    pub expr: String,
    /// For a User Defined Variable: its JMeter value, so values needed when the plan loads (thread counts,
    /// the host) can be computed from it.
    pub udv_value: Option<String>,
}

/// Every JMeter variable the plan sets, and the template names taken.
#[derive(Debug, Default)]
pub struct Names {
    vars: HashMap<String, Binding>,
    taken: HashSet<String>,
}

impl Names {
    /// A fresh template name for `wanted` (made an identifier, with `_2`, `_3`... when taken).
    pub fn fresh(&mut self, wanted: &str) -> String {
        let base = ident(wanted);
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    /// Binds the JMeter variable `var` to `expr`; a variable bound already keeps its first binding.
    pub fn bind(&mut self, var: &str, expr: String, udv_value: Option<String>) {
        self.vars.entry(var.to_string()).or_insert(Binding { expr, udv_value });
    }

    /// The template name for a plain variable `var` (User Defined Variables, extractors): the same name for
    /// every element that sets it.
    pub fn variable(&mut self, var: &str) -> String {
        if let Some(b) = self.vars.get(var) {
            return b.expr.clone();
        }
        let name = self.fresh(var);
        self.bind(var, name.clone(), None);
        name
    }

    /// What `var` is bound to.
    pub fn get(&self, var: &str) -> Option<&Binding> {
        self.vars.get(var)
    }

    /// Sets the JMeter value of a User Defined Variable already bound.
    pub fn set_udv_value(&mut self, var: &str, value: &str) {
        if let Some(b) = self.vars.get_mut(var) {
            b.udv_value = Some(value.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idents() {
        assert_eq!(ident("ref-name"), "ref_name");
        assert_eq!(ident("1st"), "v_1st");
        assert_eq!(ident("group"), "group_");
        assert_eq!(ident(""), "v_");
        let mut n = Names::default();
        assert_eq!(n.fresh("a-b"), "a_b");
        assert_eq!(n.fresh("a.b"), "a_b_2");
    }
}
