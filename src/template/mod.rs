//! Templates: one minijinja environment per run, every template compiled once at load time, rendered
//! against a per-virtual-user [`Scope`]. Plain text is kept as it is, and the simplest templates (text around
//! names and random functions with literal arguments) render without minijinja, through `fast.rs`.

mod fast;
mod functions;
mod json;
#[cfg(test)]
mod proptests;
mod scope;

pub use json::{JsonBody, JsonBuilder, JsonError};
pub use scope::{Scope, Shared};

use std::collections::HashSet;
use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};

/// Work one render may do before it is stopped: guards against template bombs.
const FUEL_PER_RENDER: u64 = 1_000_000;

/// A compiled template: plain text, or a template identified by its name in the run's environment (plus its
/// fast form, when it has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tpl {
    name: Arc<str>,
    /// The template's source text.
    source: Arc<str>,
    /// The literal text when the source has no template syntax: rendering is then free.
    literal: Option<Arc<str>>,
    /// The fast form, when the template is simple enough to render without the engine.
    fast: Option<Arc<fast::Fast>>,
    /// Whether the text, when it is literal or renders through the fast form, is all [`form_safe`] bytes.
    form_safe: bool,
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
    counters: Arc<functions::CounterDeal>,
}

/// A template that did not compile or render, with the byte range of the problem inside the template when known.
#[derive(Debug, Clone)]
pub struct TemplateError {
    /// What is wrong.
    pub message: String,
    /// Byte range inside the template source.
    pub range: Option<std::ops::Range<usize>>,
}

impl Templates {
    /// A new environment with planrun's functions and filters, strict about undefined names, and fuel for
    /// each render. The counters of `counter(name)` live in it, shared by every render of the run.
    pub fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL_PER_RENDER));
        let counters = Arc::new(functions::CounterDeal::default());
        functions::register(&mut env, counters.clone());
        // `test_panic(true)` panics, so tests can check that a panic inside a virtual user is a failed
        // sample and not a lost user; debug builds only, and only when the environment asks for it.
        #[cfg(debug_assertions)]
        if std::env::var_os("PLANRUN_TEST_PANIC").is_some() {
            env.add_function("test_panic", |when: bool| {
                assert!(!when, "test_panic(true)");
                String::new()
            });
        }
        Self { env, next: 0, counters }
    }

    /// Deals `counter()` values to a segment of a run, so that no value repeats across segments (see
    /// [`Turns`](crate::segment::Turns)). Set before the run starts.
    pub fn deal_counters(&self, turns: crate::segment::Turns) {
        self.counters.set(turns);
    }

    /// Compiles `source`; returns the template and the names it reads that are not functions.
    pub fn add(&mut self, source: &str) -> Result<(Tpl, HashSet<String>), TemplateError> {
        if !source.contains("{{") && !source.contains("{%") && !source.contains("{#") {
            let text: Arc<str> = Arc::from(source);
            let form_safe = source.bytes().all(form_safe);
            return Ok((
                Tpl { name: Arc::from(""), source: text.clone(), literal: Some(text), fast: None, form_safe },
                HashSet::new(),
            ));
        }
        self.next += 1;
        let name = format!("t{}", self.next);
        self.env.add_template_owned(name.clone(), source.to_owned()).map_err(to_error)?;
        let tmpl = self.env.get_template(&name).map_err(to_error)?;
        let globals: HashSet<String> = self.env.globals().map(|(k, _)| k.to_owned()).collect();
        let names = tmpl.undeclared_variables(false).into_iter().filter(|n| !globals.contains(n)).collect();
        let fast = fast::Fast::compile(source).map(Arc::new);
        let form_safe = fast.as_ref().is_some_and(|f| f.form_safe());
        Ok((Tpl { name: Arc::from(name), source: Arc::from(source), literal: None, fast, form_safe }, names))
    }

    /// Renders a template in a scope, appending the text to `out` (left as it was on an error).
    pub fn render_into(&self, tpl: &Tpl, scope: &Arc<Scope>, out: &mut String) -> Result<(), TemplateError> {
        self.render_form_into(tpl, scope, out).map(|_| ())
    }

    /// As [`render_into`](Self::render_into); true when the text appended is known to be all [`form_safe`]
    /// bytes (a query value that then needs no look before it goes into a URL as it is).
    pub fn render_form_into(&self, tpl: &Tpl, scope: &Arc<Scope>, out: &mut String) -> Result<bool, TemplateError> {
        if let Some(lit) = &tpl.literal {
            out.push_str(lit);
            return Ok(tpl.form_safe);
        }
        if let Some(fast) = &tpl.fast {
            let mark = out.len();
            if fast.render(scope, out).is_some() {
                return Ok(tpl.form_safe);
            }
            out.truncate(mark);
        }
        out.push_str(&self.render(tpl, scope)?);
        Ok(false)
    }

    /// Renders a template in a scope.
    pub fn render(&self, tpl: &Tpl, scope: &Arc<Scope>) -> Result<String, TemplateError> {
        if let Some(lit) = &tpl.literal {
            return Ok(lit.to_string());
        }
        if let Some(fast) = &tpl.fast {
            let mut out = String::new();
            if fast.render(scope, &mut out).is_some() {
                return Ok(out);
            }
        }
        self.render_engine(tpl, scope)
    }

    /// Renders a template through the engine, whatever its fast form.
    fn render_engine(&self, tpl: &Tpl, scope: &Arc<Scope>) -> Result<String, TemplateError> {
        let tmpl = self.env.get_template(&tpl.name).map_err(to_error)?;
        tmpl.render(minijinja::Value::from_dyn_object(scope.clone())).map_err(|e| naming(to_error(e), &tpl.source))
    }

    /// The dotted paths a template reads (`users.name`), for checks at load time; none for plain text.
    pub fn attributes_read(&self, tpl: &Tpl) -> Vec<String> {
        if tpl.literal.is_some() {
            return Vec::new();
        }
        match self.env.get_template(&tpl.name) {
            Ok(t) => t.undeclared_variables(true).into_iter().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Whether templates can apply the filter `name`, asked of the environment (minijinja's `is filter` test).
    pub fn has_filter(&self, name: &str) -> bool {
        let Ok(expr) = self.env.compile_expression("name is filter") else { return false };
        expr.eval(minijinja::context! { name => name }).is_ok_and(|v| v.is_true())
    }

    /// Names of the filters templates can apply, minijinja's and planrun's, for "did you mean".
    pub fn filter_names(&self) -> Vec<String> {
        filter_names(&self.env)
    }

    /// Names of planrun's own filters, those a plain minijinja environment lacks.
    pub fn own_filter_names(&self) -> Vec<String> {
        let builtin = filter_names(&Environment::new());
        self.filter_names().into_iter().filter(|f| !builtin.contains(f)).collect()
    }

    /// Names of the functions templates can call, planrun's and minijinja's, for "did you mean".
    pub fn function_names(&self) -> Vec<String> {
        self.env.globals().map(|(k, _)| k.to_owned()).collect()
    }
}

/// The filters of an environment. minijinja lists them only in its `Debug` output (`filters: ["abs", ...]`);
/// each name found is checked with `is filter`, so a change of that output can only shorten the list, which
/// the tests would see.
fn filter_names(env: &Environment<'static>) -> Vec<String> {
    let debug = format!("{env:?}");
    let Some(list) = debug.split("filters: [").nth(1).and_then(|rest| rest.split(']').next()) else {
        return Vec::new();
    };
    let names = list.split(',').map(|n| n.trim().trim_matches('"').to_string()).filter(|n| !n.is_empty());
    let Ok(expr) = env.compile_expression("name is filter") else { return Vec::new() };
    names.filter(|n| expr.eval(minijinja::context! { name => n }).is_ok_and(|v| v.is_true())).collect()
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

/// Names the part of `source` an error is about (`undefined value in `users.usernmae``), when minijinja
/// says which: a run-time message that says only "undefined value" leaves the user to guess.
fn naming(mut e: TemplateError, source: &str) -> TemplateError {
    if let Some(part) = e.range.clone().and_then(|r| source.get(r)).map(str::trim).filter(|p| !p.is_empty()) {
        if e.message.contains(&format!("`{part}`")) {
            return e;
        }
        e.message = format!("{} in `{part}`", e.message);
    }
    e
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

/// Bytes that `application/x-www-form-urlencoded` leaves as they are.
pub fn form_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'*' | b'-' | b'.' | b'_')
}

/// Any serializable value (a JSON node, say) as a template value.
pub fn to_value<T: serde::Serialize>(v: &T) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path draws from the generator exactly as the functions do: same seed, same text.
    #[test]
    fn the_fast_path_renders_what_the_engine_renders() {
        let mut t = Templates::new();
        let src = "+7{{ random_digits(10) }}-{{ random_string(5, 'xy') }}-{{ random_string(7) }}-{{ random_int(3, 99) }}-{{ uuid() }}-{{ vu }}/{{ group }}/{{ iteration }}";
        let (fast, _) = t.add(src).unwrap();
        assert!(fast.fast.is_some());
        let slow = Tpl { fast: None, ..fast.clone() };
        let shared = Arc::new(Shared::default());
        let a = Scope::for_vu(shared.clone(), 7, 1, Arc::from("g"), 3);
        let b = Scope::for_vu(shared, 7, 1, Arc::from("g"), 3);
        for i in 0..5 {
            a.set_iteration(i);
            b.set_iteration(i);
            assert_eq!(t.render(&fast, &a).unwrap(), t.render(&slow, &b).unwrap());
        }
    }

    /// A template said to render form-safe text does, and the ones that may not are not said to.
    #[test]
    fn only_templates_of_form_safe_text_say_so() {
        let mut t = Templates::new();
        let scope = Scope::for_vu(Arc::new(Shared::default()), 3, 1, Arc::from("g"), 2);
        scope.set_iteration(4);
        let safe = [
            "abc-1.2_*",
            "{{ random_string(16) }}",
            "x{{ random_int(-5, 1000000) }}",
            "{{ random_digits(9) }}{{ uuid() }}{{ vu }}.{{ iteration }}",
            "{{ random_string(40, 'ab-') }}",
        ];
        for src in safe {
            let (tpl, _) = t.add(src).unwrap();
            for _ in 0..20 {
                let mut out = String::new();
                assert!(t.render_form_into(&tpl, &scope, &mut out).unwrap(), "{src}");
                assert!(out.bytes().all(form_safe), "{src}: {out}");
            }
        }
        scope.set_var(Arc::from("name"), minijinja::Value::from("a b"));
        for src in ["a b", "{{ name }}", "{{ random_string(4, 'a b') }}", "+{{ vu }}", "{{ name | upper }}"] {
            let (tpl, _) = t.add(src).unwrap();
            assert!(!t.render_form_into(&tpl, &scope, &mut String::new()).unwrap(), "{src}");
        }
    }

    #[test]
    fn an_undefined_name_falls_back_to_the_engines_error() {
        let mut t = Templates::new();
        let (tpl, _) = t.add("x{{ missing }}").unwrap();
        let scope = Scope::for_vu(Arc::new(Shared::default()), 1, 1, Arc::from("g"), 1);
        let err = t.render(&tpl, &scope).unwrap_err();
        assert!(err.message.contains("undefined"), "{}", err.message);
    }
}
