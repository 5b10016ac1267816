//! Templates: one minijinja environment per run, every template compiled once at load time,
//! rendered against a per-virtual-user [`Scope`].

mod functions;
mod scope;

pub use functions::FORM_ENCODE;
pub use scope::{Scope, Shared};

use std::collections::HashSet;
use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};

/// Work one render may do before it is stopped: guards against template bombs.
const FUEL_PER_RENDER: u64 = 1_000_000;

/// A compiled template, identified by its name in the run's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tpl {
    name: Arc<str>,
    /// The template's source text.
    source: Arc<str>,
    /// The literal text when the source has no template syntax: rendering is then free.
    literal: Option<Arc<str>>,
}

impl Tpl {
    /// The text if this template is a plain literal.
    pub fn literal(&self) -> Option<&str> {
        self.literal.as_deref()
    }

    /// The source text as written.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// The run's template environment: planrun's functions and filters, and every compiled template.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
    next: usize,
}

/// A template that did not compile, with the byte range of the problem inside the template when known.
#[derive(Debug, Clone)]
pub struct TemplateError {
    /// What is wrong.
    pub message: String,
    /// Byte range inside the template source.
    pub range: Option<std::ops::Range<usize>>,
}

impl Templates {
    /// A new environment with planrun's functions; `counters` are shared by every render of the run.
    pub fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL_PER_RENDER));
        functions::register(&mut env);
        Self { env, next: 0 }
    }

    /// Compiles `source`; returns the template and the names it reads that are not functions.
    pub fn add(&mut self, source: &str) -> Result<(Tpl, HashSet<String>), TemplateError> {
        if !source.contains("{{") && !source.contains("{%") && !source.contains("{#") {
            let text: Arc<str> = Arc::from(source);
            return Ok((Tpl { name: Arc::from(""), source: text.clone(), literal: Some(text) }, HashSet::new()));
        }
        self.next += 1;
        let name = format!("t{}", self.next);
        self.env.add_template_owned(name.clone(), source.to_owned()).map_err(to_error)?;
        let tmpl = self.env.get_template(&name).map_err(to_error)?;
        let globals: HashSet<String> = self.env.globals().map(|(k, _)| k.to_owned()).collect();
        let names = tmpl.undeclared_variables(false).into_iter().filter(|n| !globals.contains(n)).collect();
        Ok((Tpl { name: Arc::from(name), source: Arc::from(source), literal: None }, names))
    }

    /// Renders a template in a scope.
    pub fn render(&self, tpl: &Tpl, scope: &Arc<Scope>) -> Result<String, TemplateError> {
        if let Some(lit) = &tpl.literal {
            return Ok(lit.to_string());
        }
        let tmpl = self.env.get_template(&tpl.name).map_err(to_error)?;
        tmpl.render(minijinja::Value::from_dyn_object(scope.clone())).map_err(to_error)
    }

    /// Names of planrun's functions, for "did you mean".
    pub fn function_names(&self) -> Vec<String> {
        self.env.globals().map(|(k, _)| k.to_owned()).collect()
    }
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

fn to_error(e: minijinja::Error) -> TemplateError {
    let message = match e.detail() {
        Some(d) => format!("{}: {}", kind_text(e.kind()), d),
        None => kind_text(e.kind()).to_string(),
    };
    TemplateError { message, range: e.range() }
}

fn kind_text(kind: minijinja::ErrorKind) -> String {
    use minijinja::ErrorKind as K;
    match kind {
        K::SyntaxError => "template syntax error".into(),
        K::UndefinedError => "undefined value".into(),
        K::UnknownFilter => "unknown filter".into(),
        K::UnknownFunction => "unknown function".into(),
        K::UnknownTest => "unknown test".into(),
        K::UnknownMethod => "unknown method".into(),
        K::OutOfFuel => "template did too much work (out of fuel)".into(),
        other => other.to_string(),
    }
}

/// Any serializable value (a JSON node, say) as a template value.
pub fn to_value<T: serde::Serialize>(v: &T) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(v))
}
