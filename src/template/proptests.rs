//! Every template function and filter, called through the public template API with arbitrary numbers and
//! strings: each render gives text or a template error, never a panic.

use std::sync::Arc;

use minijinja::Value;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

use super::{Scope, Shared, Templates};

/// Numbers at and beyond the edges of what the functions take.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0), Just(-1), Just(1), Just(1 << 10), Just((1 << 20) + 1)]
            .prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        Just(Value::from(u128::MAX)),
        Just(Value::from(i128::MIN)),
        any::<f64>().prop_map(Value::from),
        prop_oneof![
            Just(f64::MAX),
            Just(f64::MIN),
            Just(1e308),
            Just(-1e308),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(f64::MIN_POSITIVE),
            Just(5e-324),
            Just(-0.0),
            Just(0.5),
        ]
        .prop_map(Value::from),
    ]
}

/// Lengths: small ones, just over the limit, and any.
fn length() -> impl Strategy<Value = u64> {
    prop_oneof![0..64u64, Just((1 << 20) + 1), any::<u64>()]
}

/// Strings, including strftime-like formats and names that are not valid environment names.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["\\PC{0,12}", "[%a-zA-Z0-9:.#+_=-]{0,8}", Just(String::new()), Just("=".into()), Just("a\0b".into())]
}

/// Any value a template may be handed: numbers, strings, lists, maps, none.
fn anything() -> impl Strategy<Value = Value> {
    prop_oneof![
        number(),
        text().prop_map(Value::from),
        prop::collection::vec(number(), 0..4).prop_map(Value::from),
        Just(Value::from(())),
        Just(Value::from_iter([("k", 1)])),
    ]
}

/// Templates calling every function and filter of planrun (and minijinja's number-taking ones) on `a`, `b`
/// (numbers or anything), `s`, `t` (strings) and `l` (anything).
const TEMPLATES: &[&str] = &[
    "{{ random_int(a, b) }}",
    "{{ random_float(a, b) }}",
    "{{ random_digits(a) }}",
    "{{ random_string(a) }}",
    "{{ random_string(a, s) }}",
    "{{ random_choice(l) }}",
    "{{ random_choice(s) }}",
    "{{ uuid() }}",
    "{{ now_ms() }}",
    "{{ timestamp(s) }}",
    "{{ timestamp(l) }}",
    "{{ counter(s) }}",
    "{{ env(s) }}",
    "{{ env(s, t) }}",
    "{{ s | base64 }}",
    "{{ l | base64 }}",
    "{{ s | sha256 }}",
    "{{ l | sha256 }}",
    "{{ s | urlencode }}",
    "{{ l | urlencode }}",
    "{{ l | tojson }}",
    "{{ a | abs }}",
    "{{ a | round }}",
    "{{ a | round(b) }}",
    "{{ a | int }}",
    "{{ s | int }}",
    "{{ a | float }}",
    "{{ s | float }}",
    "{{ a | string }}",
    "{{ s | truncate(a) }}",
    "{{ l | batch(a) }}",
    "{{ l | first }}",
    "{{ l | sum }}",
    "{{ l | min }}",
    "{{ l | max }}",
    "{{ a + b }}",
    "{{ a - b }}",
    "{{ a * b }}",
    "{{ a / b }}",
    "{{ a // b }}",
    "{{ a % b }}",
    "{{ a ** b }}",
    "{{ -a }}",
    "{{ a < b }}",
    "{{ s[a:b] }}",
    "{{ l[a] }}",
];

fn scope(a: Value, b: Value, s: &str, t: &str, l: Value) -> Arc<Scope> {
    let scope = Scope::for_vu(Arc::new(Shared::default()), 7, 1, Arc::from("g"), 1);
    scope.set_iteration(1);
    for (name, value) in [("a", a), ("b", b), ("s", Value::from(s)), ("t", Value::from(t)), ("l", l)] {
        scope.set_var(Arc::from(name), value);
    }
    scope
}

#[test]
fn functions_and_filters_never_panic() {
    let mut templates = Templates::new();
    let compiled: Vec<_> = TEMPLATES.iter().map(|src| templates.add(src).expect("compiles").0).collect();
    let args = (number(), prop_oneof![number(), anything()], text(), text(), anything());
    let mut runner = TestRunner::new(ProptestConfig { cases: 256, ..ProptestConfig::default() });
    runner
        .run(&args, |(a, b, s, t, l)| {
            let scope = scope(a, b, &s, &t, l);
            for tpl in &compiled {
                let _ = templates.render(tpl, &scope);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

proptest! {
    /// The fast path takes literal arguments: the same promise holds for them.
    #[test]
    fn literal_arguments_never_panic(a in any::<i64>(), b in any::<i64>(), n in length(), s in "[a-z]{0,3}") {
        let mut templates = Templates::new();
        let scope = scope(Value::from(0), Value::from(0), "", "", Value::from(()));
        for src in [
            format!("{{{{ random_int({a}, {b}) }}}}"),
            format!("{{{{ random_int({}, {}) }}}}", a.min(b), a.max(b)),
            format!("{{{{ random_float({a}, {b}) }}}}"),
            format!("{{{{ random_digits({n}) }}}}"),
            format!("{{{{ random_string({n}, '{s}') }}}}"),
            format!("{{{{ random_string({n}) }}}}"),
            format!("{{{{ random_float({a}e300, {b}e300) }}}}"),
        ] {
            if let Ok((tpl, _)) = templates.add(&src) {
                let _ = templates.render(&tpl, &scope);
            }
        }
    }
}

#[test]
fn extremes_are_template_errors_not_panics() {
    let mut templates = Templates::new();
    let scope = scope(Value::from(0), Value::from(0), "", "", Value::from(()));
    let mut render = |src: &str| {
        let (tpl, _) = templates.add(src).expect("compiles");
        templates.render(&tpl, &scope)
    };
    for src in [
        "{{ random_float(-1e308, 1e308) }}",
        "{{ random_float(0, 1e308 * 10) }}",
        "{{ random_float(-1e308 * 10, 0) }}",
        "{{ random_digits(10000000000000000000) }}",
        "{{ random_string(1048577) }}",
        "{{ random_choice([]) }}",
        "{{ env('') }}",
        "{{ env('A=B') }}",
    ] {
        let err = render(src).expect_err(src);
        assert!(!err.message.is_empty(), "{src}");
    }
    let n: i64 = render("{{ random_int(-9223372036854775808, 9223372036854775807) }}").unwrap().parse().unwrap();
    assert!((i64::MIN..=i64::MAX).contains(&n));
    let f: f64 = render("{{ random_float(-1e307, 1e307) }}").unwrap().parse().unwrap();
    assert_eq!(render("{{ random_digits(1048576) }}").expect("the limit itself is allowed").len(), 1 << 20);
    assert!((-1e307..1e307).contains(&f));
}
