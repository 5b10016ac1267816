//! The names a template can read, per virtual user, and the virtual user's seeded random generator.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, Value};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// What every scope of a run shares: the properties and the stub's address.
#[derive(Debug, Default)]
pub struct Shared {
    /// `props`: rendered properties.
    pub props: Value,
    /// `stub`: `{ url }` when the plan has a stub.
    pub stub: Value,
}

/// The context of one render: a virtual user (or the load-time scope, which has no `vu`).
#[derive(Debug)]
pub struct Scope {
    vu: Option<u32>,
    group: Option<Arc<str>>,
    iteration: AtomicU64,
    shared: Arc<Shared>,
    vars: Mutex<HashMap<Arc<str>, Value>>,
    rng: Mutex<ChaCha8Rng>,
}

/// The name under which a scope finds itself, for planrun's functions.
pub(super) const SELF_KEY: &str = "__planrun_scope";

impl Scope {
    /// A virtual user's scope. Its random generator is derived from (seed, group, vu), so the same
    /// seed gives every virtual user the same data whatever the timing.
    pub fn for_vu(shared: Arc<Shared>, seed: u64, group_no: u32, group: Arc<str>, vu: u32) -> Arc<Self> {
        let stream = (u64::from(group_no) << 32) | u64::from(vu);
        Arc::new(Self {
            vu: Some(vu),
            group: Some(group),
            iteration: AtomicU64::new(0),
            shared,
            vars: Mutex::new(HashMap::new()),
            rng: Mutex::new(derive_rng(seed, stream)),
        })
    }

    /// The load-time scope: props, stub and env only.
    pub fn load_time(shared: Arc<Shared>, seed: u64) -> Arc<Self> {
        Arc::new(Self {
            vu: None,
            group: None,
            iteration: AtomicU64::new(0),
            shared,
            vars: Mutex::new(HashMap::new()),
            rng: Mutex::new(derive_rng(seed, u64::MAX)),
        })
    }

    /// Sets the current iteration (from 1).
    pub fn set_iteration(&self, n: u64) {
        self.iteration.store(n, Ordering::Relaxed);
    }

    /// Sets a per-user variable.
    pub fn set_var(&self, name: Arc<str>, value: Value) {
        lock(&self.vars).insert(name, value);
    }

    /// What a template reading `name` sees.
    pub fn lookup(self: &Arc<Self>, name: &str) -> Option<Value> {
        self.get_value(&Value::from(name))
    }

    /// `vu` and `iteration` as templates see them (both undefined outside a virtual user).
    pub fn vu_and_iteration(&self) -> Option<(u32, u64)> {
        self.vu.map(|vu| (vu, self.iteration.load(Ordering::Relaxed)))
    }

    /// A per-user variable's value.
    pub fn var(&self, name: &str) -> Option<Value> {
        lock(&self.vars).get(name).cloned()
    }

    /// The scope's random generator, held until the guard is dropped (no render may run meanwhile: the
    /// functions take it too).
    pub(super) fn rng(&self) -> std::sync::MutexGuard<'_, ChaCha8Rng> {
        lock(&self.rng)
    }

    /// Runs `f` with the scope's random generator.
    pub fn with_rng<R>(&self, f: impl FnOnce(&mut ChaCha8Rng) -> R) -> R {
        f(&mut lock(&self.rng))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn derive_rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

impl Object for Scope {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let key = key.as_str()?;
        match key {
            "vu" => self.vu.map(Value::from),
            "iteration" if self.vu.is_some() => Some(Value::from(self.iteration.load(Ordering::Relaxed))),
            "group" => self.group.as_ref().map(|g| Value::from(g.as_ref())),
            "props" => Some(self.shared.props.clone()),
            "stub" if !self.shared.stub.is_undefined() => Some(self.shared.stub.clone()),
            SELF_KEY => Some(Value::from_dyn_object(self.clone())),
            _ => lock(&self.vars).get(key).cloned(),
        }
    }
}
