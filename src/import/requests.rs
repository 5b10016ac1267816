//! What the formats that list requests (curl commands, HAR recordings) share: the origins as properties
//! (`base_url` for the most used one, a property per other one), secret properties, and the plan around
//! the steps.

use std::collections::BTreeMap;

use super::functions::escape_text;
use super::yaml::{Item, MapB, Y};

/// The secret properties, by value: the same value is one property.
#[derive(Default)]
pub struct Secrets(pub Vec<(String, String)>);

impl Secrets {
    /// The property that holds `value`, named after `base` (`cookie`, `cookie_2`...).
    pub fn name(&mut self, base: &str, value: &str) -> String {
        if let Some((n, _)) = self.0.iter().find(|(_, v)| v == value) {
            return n.clone();
        }
        let taken = self.0.iter().filter(|(n, _)| n == base || n.starts_with(&format!("{base}_"))).count();
        let n = if taken == 0 { base.to_string() } else { format!("{base}_{}", taken + 1) };
        self.0.push((n.clone(), value.to_string()));
        n
    }

    /// `{{ props.NAME }}` for `value`.
    pub fn reference(&mut self, base: &str, value: &str) -> String {
        format!("{{{{ props.{} }}}}", self.name(base, value))
    }
}

/// The origins the requests go to, the most used first (ties: the first seen).
pub struct Origins {
    pub main: String,
    pub others: Vec<String>,
}

impl Origins {
    pub fn of<'a>(all: impl IntoIterator<Item = &'a str>) -> Origins {
        let mut order: Vec<&str> = Vec::new();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for o in all {
            if !counts.contains_key(o) {
                order.push(o);
            }
            *counts.entry(o).or_insert(0) += 1;
        }
        let main = order
            .iter()
            .enumerate()
            .max_by_key(|(i, o)| (counts[*o], std::cmp::Reverse(*i)))
            .map(|(_, o)| o.to_string())
            .unwrap_or_else(|| "http://localhost".into());
        let others = order.into_iter().filter(|o| *o != main).map(str::to_string).collect();
        Origins { main, others }
    }

    /// The `url` of a request to `origin` with `rest` (path and query), written as a template.
    pub fn url(&self, origin: &str, rest: &str) -> String {
        self.url_template(origin, &escape_text(rest))
    }

    /// The `url` of a request to `origin` whose path and query are already the template `rest`; an origin
    /// known only at run time (empty) leaves `rest` whole.
    pub fn url_template(&self, origin: &str, rest: &str) -> String {
        if origin.is_empty() || origin == self.main {
            rest.to_string()
        } else {
            format!("{{{{ props.{} }}}}{rest}", property(origin))
        }
    }

    /// `properties:`: base_url, the other origins, then the secrets.
    pub fn properties(&self, secrets: &Secrets, source: &str) -> Y {
        let mut props = MapB::default();
        props.put_commented(
            "base_url",
            Y::s(self.main.clone()),
            vec!["Where the requests go: planrun PLAN -D base_url=http://host:port".into()],
        );
        for o in &self.others {
            props.put(property(o), Y::s(o.clone()));
        }
        for (name, value) in &secrets.0 {
            let mut m = MapB::default();
            m.put("value", Y::s(escape_text(value)));
            // planrun's secrets have at least 4 characters; a shorter value is a plain property.
            if value.chars().count() >= 4 {
                m.put("secret", Y::Bool(true));
            }
            props.put_commented(name.clone(), m.done(), vec![format!("From the {source}: give it with -D {name}=...")]);
        }
        props.done()
    }
}

/// The property of an origin other than the main one: `api_example_com_url`.
pub fn property(origin: &str) -> String {
    let host = origin.split_once("://").map(|(_, h)| h).unwrap_or(origin);
    format!("{}_url", super::names::ident(&host.replace([':', '.', '-'], "_")))
}

/// A plan of one thread group of one user and one loop running `steps`.
pub fn plan(header: Vec<String>, name: &str, properties: Y, defaults: MapB, group: &str, steps: Vec<Item>) -> String {
    let mut g = MapB::default();
    g.put("name", Y::s(group));
    g.put("threads", Y::Int(1));
    g.put("loops", Y::Int(1));
    g.put("steps", Y::Seq(steps));
    let mut root = MapB::default();
    root.put("name", Y::s(name));
    root.put("properties", properties);
    root.put("defaults", defaults.done());
    root.put("thread_groups", Y::Seq(vec![Item { value: Some(g.done()), comments: Vec::new() }]));
    super::yaml::document(
        &header,
        &match root.done() {
            Y::Map(m) => m,
            _ => Vec::new(),
        },
    )
}

/// `(origin, path and query)` of an http or https URL, without its fragment; None for another scheme or a
/// URL that does not parse.
pub fn split_url(u: &str) -> Option<(String, String)> {
    let parsed = url::Url::parse(u).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return None;
    }
    let origin = parsed.origin().ascii_serialization();
    let after = u.split_once("://").map(|(_, r)| r).unwrap_or("");
    let mut rest = match after.find(['/', '?', '#']) {
        Some(i) => after[i..].to_string(),
        None => "/".to_string(),
    };
    if let Some(i) = rest.find('#') {
        rest.truncate(i);
    }
    if !rest.starts_with('/') {
        rest.insert(0, '/');
    }
    Some((origin, rest))
}
