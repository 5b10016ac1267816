//! Plans whose numbers, durations, rates and thresholds are arbitrary: validating one gives a plan or plan
//! errors, never a panic, and whatever validates stays within the documented bounds.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;

use super::{PlanError, PlanFile, PlanOptions};
use crate::source::Source;

/// A YAML scalar: a number at or beyond the edges, a duration-like or rate-like text, or any text (quoted).
fn scalar() -> impl Strategy<Value = String> {
    let quoted = |s: String| serde_json::to_string(&s).unwrap_or_default();
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
        prop_oneof![Just("0"), Just("-1"), Just("4294967296"), Just("1000001"), Just("18446744073709551616")]
            .prop_map(str::to_string),
        "[0-9]{1,30}(\\.[0-9]{0,10})?(ns|us|µs|ms|s|m|h|d|e|)([0-9]{1,5}(ms|s|h))?".prop_map(quoted),
        "[0-9.e+-]{1,20}(/s|/m|/h|/d|%|)".prop_map(quoted),
        "\\{\\{ [0-9*+ ]{1,12} \\}\\}".prop_map(quoted),
        "\\PC{0,12}".prop_map(quoted),
    ]
}

/// A plan with every numeric key set from `v`, in a closed, a staged and an open group.
fn plan(v: &[String]) -> String {
    format!(
        r#"name: p
seed: {seed}
defaults: {{ timeout: {timeout}, max_body: {max_body} }}
thresholds:
  total: [ "p95 < {t1}", "error_rate < {t2}", {{ check: "throughput > {t3}", delay: {delay} }} ]
thread_groups:
  - name: closed
    threads: {threads}
    loops: {loops}
    ramp_up: {ramp_up}
    duration: {duration}
    think_time: {{ gaussian: {{ mean: {mean}, stddev: {stddev} }} }}
    steps:
      - name: a
        request: {{ url: "http://127.0.0.1:1/", timeout: {timeout2} }}
        assert: [ {{ max_ms: {max_ms} }}, {{ max_bytes: {max_bytes} }} ]
      - think: {{ uniform: [ {lo}, {hi} ] }}
      - loop: {count}
        steps: [ {{ think: {think} }} ]
      - while: "{{{{ false }}}}"
        max: {max}
        steps: [ {{ think: 1ms }} ]
      - random:
          - {{ weight: {weight}, steps: [ {{ think: 1ms }} ] }}
  - name: staged
    stages: [ {{ duration: {sd}, target: {target} }} ]
    steps: [ {{ think: 1ms }} ]
  - name: open
    arrival_rate: {rate}
    max_threads: {max_threads}
    stages: [ {{ duration: {od}, target: {orate} }} ]
    steps: [ {{ think: 1ms }} ]
"#,
        seed = v[0],
        timeout = v[1],
        max_body = v[2],
        t1 = v[3].trim_matches('"'),
        t2 = v[4].trim_matches('"'),
        t3 = v[5].trim_matches('"'),
        delay = v[6],
        threads = v[7],
        loops = v[8],
        ramp_up = v[9],
        duration = v[10],
        mean = v[11],
        stddev = v[12],
        timeout2 = v[13],
        max_ms = v[14],
        max_bytes = v[15],
        lo = v[16],
        hi = v[17],
        count = v[18],
        think = v[19],
        max = v[20],
        weight = v[21],
        sd = v[22],
        target = v[23],
        rate = v[24],
        max_threads = v[25],
        od = v[26],
        orate = v[27],
    )
}

/// Values of the right kind for each key of [`plan`], near their limits: most plans made of them validate.
fn near_limits() -> impl Strategy<Value = Vec<String>> {
    let count = || {
        prop_oneof![
            40 => 1..100u64,
            1 => 999_990..1_000_010u64,
            1 => 999_999_990..1_000_000_010u64,
            1 => any::<u32>().prop_map(u64::from),
        ]
        .prop_map(|n| n.to_string())
        .boxed()
    };
    let duration = || {
        prop_oneof![40 => "[0-9]{1,4}(ns|us|ms|s|m|h)", 1 => "87(59|60|61)h", 1 => "52559[0-9]m", 1 => "3153600[0-9]s"]
            .boxed()
    };
    let rate = || "[0-9]{1,3}/s".boxed();
    // In the order of `plan`'s positions.
    let kinds: Vec<BoxedStrategy<String>> = vec![
        count(),
        duration(),
        count(),
        duration(),
        "[0-9]{1,2}%".boxed(),
        rate(),
        duration(),
        count(),
        count(),
        duration(),
        duration(),
        duration(),
        duration(),
        duration(),
        count(),
        count(),
        "[0-9]ns".boxed(),
        duration(),
        count(),
        duration(),
        count(),
        count(),
        duration(),
        count(),
        rate(),
        count(),
        duration(),
        rate(),
    ];
    kinds
}

#[test]
fn plans_near_the_limits_stay_within_them() {
    check(near_limits());
}

#[test]
fn plans_with_arbitrary_numbers_validate_or_are_refused() {
    check(prop::collection::vec(scalar(), 28));
}

fn check(values: impl Strategy<Value = Vec<String>>) {
    let mut runner = TestRunner::new(ProptestConfig { cases: 256, ..ProptestConfig::default() });
    runner
        .run(&values, |values| {
            let text = plan(&values);
            let Ok(file) = PlanFile::parse(Source::new("p.yaml", text.as_str())) else { return Ok(()) };
            match file.validate(&PlanOptions::default()) {
                Ok(plan) => {
                    prop_assert!(plan.defaults.timeout <= crate::duration::MAX);
                    prop_assert!(plan.defaults.max_body <= super::bounds::MAX_BODY);
                    for g in &plan.groups {
                        prop_assert!(u64::from(g.threads) <= super::bounds::MAX_THREADS);
                        prop_assert!(g.loops.is_none_or(|l| l <= super::bounds::MAX_LOOPS));
                        prop_assert!(g.duration.is_none_or(|d| d <= crate::duration::MAX));
                        prop_assert!(g.ramp_up <= crate::duration::MAX);
                    }
                }
                Err(PlanError::Invalid { diags, .. }) => prop_assert!(!diags.items.is_empty()),
                Err(e) => prop_assert!(false, "{e}"),
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

proptest! {
    /// The parsers of rates and thresholds take any text.
    #[test]
    fn rates_and_thresholds_parse_or_are_refused(text in "\\PC{0,30}", number in "[0-9.e+-]{0,25}") {
        let _ = super::load::parse_rate(&text);
        let _ = super::load::parse_rate(&format!("{number}/s"));
        let _ = super::threshold::parse(&text);
        for metric in ["p95 <", "error_rate <", "throughput >", "samples >=", "mean =="] {
            let _ = super::threshold::parse(&format!("{metric} {number}"));
            let _ = super::threshold::parse(&format!("{metric} {number}s"));
            let _ = super::threshold::parse(&format!("{metric} {number}%"));
        }
    }
}
