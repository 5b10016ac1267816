//! Fuzzing the plan pipeline (parse -> validate -> compile) with proptest: no input may panic, every refusal
//! must render as a diagnostic that names the file (`fuzz.yaml:LINE:COL`), and every case must finish quickly.
//!
//! Cases: 2,000 mutations of the valid plans in plans/ and tests/plans/ok/ (lines deleted, duplicated, swapped,
//! re-indented, truncated; scalars replaced and lines inserted with hostile tokens: `-1`, `{{`, `}}`, `[`, `~`,
//! `0x`, huge numbers, long strings, unicode, template bombs...), then 250 arbitrary printable strings and 250
//! strings over YAML's punctuation: 2,500 in all. The random seed is fixed so CI sees the same cases every run;
//! set PROPTEST_RNG_SEED to explore others. Template bombs are also rendered by `planrun dry-run`, which must
//! finish and say what went wrong.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};

use planrun::plan::{PlanFile, PlanOptions};
use planrun::source::Source;

const MUTATION_CASES: u32 = 2000;
const ARBITRARY_CASES: u32 = 250;
/// No single case may take longer than this (a guard against pathological slowness, not a benchmark).
const CASE_LIMIT: Duration = Duration::from_secs(5);

/// Scalars and fragments that break plans in interesting ways.
const TOKENS: &[&str] = &[
    "-1",
    "0",
    "{{",
    "}}",
    "{{ }}",
    "{%",
    "{% for i in range(100000000) %}x{% endfor %}",
    "{{ 'x' * 1000000000 }}",
    "{{ nope }}",
    "{{ random_string(99999999999) }}",
    "[",
    "]",
    "{",
    "}",
    "[]",
    "{}",
    "~",
    "null",
    "0x",
    "0x1F",
    "0o17",
    "1e309",
    "-0",
    ".inf",
    ".nan",
    "18446744073709551616",
    "-9223372036854775809",
    "99999999999h",
    "0.0000001ms",
    "1h1h",
    "1.5",
    "true",
    "yes",
    "\"\"",
    "''",
    "&anchor",
    "*anchor",
    "!!binary",
    "!tag",
    "|",
    ">",
    "%",
    "@",
    "`",
    "#",
    ": :",
    "- -",
    "? key",
    "\t",
    "ü日本語🚀",
    "\u{202e}reversed",
    "e\u{301}",
    "https://",
    "ftp://x/y",
    "GET",
    "2xx",
    "600",
    "/",
    "10/s",
    "-5/s",
    "((((",
    "[a-",
];

#[derive(Debug, Clone)]
enum Op {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Indent(usize, i8),
    /// Replace the value of a line (after `: `, or the line's text) with a token.
    Replace(usize, usize),
    /// Insert a line made of the token, at the indentation of the line before.
    Insert(usize, usize),
    /// Replace the value with a long string.
    Long(usize, u16),
    /// Cut the text at a byte (on a char boundary).
    Truncate(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<usize>().prop_map(Op::Delete),
        any::<usize>().prop_map(Op::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Swap(a, b)),
        (any::<usize>(), -4i8..=4).prop_map(|(a, d)| Op::Indent(a, d)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, t)| Op::Replace(a, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, t)| Op::Insert(a, t)),
        (any::<usize>(), any::<u16>()).prop_map(|(a, n)| Op::Long(a, n)),
        any::<usize>().prop_map(Op::Truncate),
    ]
}

fn apply(text: &str, ops: &[Op]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut cut: Option<usize> = None;
    for op in ops {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let n = lines.len();
        match *op {
            Op::Delete(i) => {
                lines.remove(i % n);
            }
            Op::Duplicate(i) => {
                let line = lines[i % n].clone();
                lines.insert(i % n, line);
            }
            Op::Swap(a, b) => lines.swap(a % n, b % n),
            Op::Indent(i, d) => {
                let line = &mut lines[i % n];
                if d > 0 {
                    line.insert_str(0, &" ".repeat(d as usize));
                } else {
                    let strip = line.len() - line.trim_start_matches(' ').len();
                    line.drain(..strip.min(d.unsigned_abs() as usize));
                }
            }
            Op::Replace(i, t) => replace_value(&mut lines[i % n], TOKENS[t % TOKENS.len()]),
            Op::Insert(i, t) => {
                let at = i % (n + 1);
                let indent = at.checked_sub(1).map(|p| indent_of(&lines[p])).unwrap_or(0);
                lines.insert(at, format!("{}{}", " ".repeat(indent), TOKENS[t % TOKENS.len()]));
            }
            Op::Long(i, len) => {
                let long: String = "ab\u{e9}".chars().cycle().take(usize::from(len) * 4).collect();
                replace_value(&mut lines[i % n], &long);
            }
            Op::Truncate(at) => cut = Some(at),
        }
    }
    let mut out = lines.join("\n");
    if let Some(at) = cut {
        let mut at = at % (out.len() + 1);
        while !out.is_char_boundary(at) {
            at -= 1;
        }
        out.truncate(at);
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn replace_value(line: &mut String, token: &str) {
    match line.find(": ") {
        Some(i) => line.replace_range(i + 2.., token),
        None => {
            let indent = indent_of(line);
            let dash = if line[indent..].starts_with("- ") { 2 } else { 0 };
            line.replace_range(indent + dash.., token);
        }
    }
}

/// Runs the pipeline on one text: Ok, or a refusal that renders with the file's name and a position.
fn pipeline(text: &str) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let source = Source::new("fuzz.yaml", text.to_string());
    let refusal = match PlanFile::parse(source).and_then(|file| file.validate(&PlanOptions::default())) {
        Err(e) => Some(e.to_string()),
        Ok(plan) => {
            planrun::compile::compile(plan);
            None
        }
    };
    if let Some(message) = refusal {
        prop_assert!(!message.trim().is_empty(), "an empty error for:\n{text}");
        prop_assert!(message.contains("fuzz.yaml:"), "an error without a position:\n{message}\n--- for:\n{text}");
    }
    prop_assert!(started.elapsed() < CASE_LIMIT, "took {:?} for:\n{text}", started.elapsed());
    Ok(())
}

fn config(cases: u32) -> Config {
    let default = Config::default();
    let rng_seed = match std::env::var_os("PROPTEST_RNG_SEED") {
        Some(_) => default.rng_seed,
        None => RngSeed::Fixed(0x0070_6c61_6e72_756e),
    };
    // Failures print the shrunk input; no regression files are written into the source tree.
    Config { cases, failure_persistence: None, rng_seed, ..default }
}

fn seed_plans() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut plans = Vec::new();
    for dir in ["plans", "tests/plans/ok"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("a directory of plans")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        plans.extend(files.into_iter().map(|p| {
            let text = std::fs::read_to_string(&p).expect("a readable plan");
            (p, text)
        }));
    }
    assert!(plans.len() >= 3, "the valid plans are there");
    plans
}

#[test]
fn mutated_plans_never_panic_and_every_error_has_a_position() {
    let seeds = seed_plans();
    let strategy = (0..seeds.len(), prop::collection::vec(op(), 1..6));
    let mut runner = TestRunner::new(config(MUTATION_CASES));
    let result = runner.run(&strategy, |(seed, ops)| pipeline(&apply(&seeds[seed].1, &ops)));
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn arbitrary_text_never_panics_and_every_error_has_a_position() {
    for pattern in ["\\PC{0,300}", "[a-z_ :\\-\\[\\]{}\n\"'|>&*!%@#0-9.~,?]{0,300}"] {
        let mut runner = TestRunner::new(config(ARBITRARY_CASES));
        if let Err(e) = runner.run(&pattern, |text| pipeline(&text)) {
            panic!("{pattern}: {e}");
        }
    }
}

#[test]
fn the_valid_plans_go_through_without_panicking() {
    for (path, text) in seed_plans() {
        // The plans that need a stub or files beside them may be refused here (the source is `fuzz.yaml`);
        // what matters is that nothing panics and a refusal has a position.
        if let Err(e) = pipeline(&text) {
            panic!("{}: {e}", path.display());
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Template bombs, through the binary
// ---------------------------------------------------------------------------------------------------------

fn bomb_plan(query: &str) -> String {
    format!(
        r#"name: bomb
thread_groups:
  - name: g
    threads: 1
    steps:
      - name: s
        request:
          url: "http://127.0.0.1:1/"
          query:
            q: "{query}"
"#
    )
}

/// Each bomb renders per request: `dry-run` must finish (the test harness kills it after 60 s) and say why the
/// request could not be rendered.
#[test]
fn template_bombs_in_requests_stop_with_a_clear_error() {
    let bombs = [
        ("{% for i in range(100000000) %}x{% endfor %}", "range has too many elements"),
        ("{{ 'x' * 1000000000 }}", "out of fuel"),
        ("{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}", "out of fuel"),
        ("{{ ((('x' * 1000) * 1000) * 1000) | length }}", "out of fuel"),
        ("{{ random_string(1000000000) }}", "over the limit"),
        ("{{ (range(100000) | list * 10000) | length }}", "too large"),
    ];
    let dir = common::TempDir::new("fuzz_bombs");
    for (i, (bomb, why)) in bombs.iter().enumerate() {
        let plan = dir.write(&format!("bomb{i}.yaml"), bomb_plan(bomb));
        let started = Instant::now();
        let out = common::planrun(dir.path(), [std::ffi::OsStr::new("dry-run"), plan.as_os_str()]);
        let stdout = common::stdout(&out);
        assert!(started.elapsed() < Duration::from_secs(20), "{bomb}: took {:?}", started.elapsed());
        assert!(stdout.contains("cannot render: template error:") && stdout.contains(why), "{bomb}:\n{stdout}");
    }
}

/// Bombs in values rendered when the plan loads are plan errors, with their position.
#[test]
fn template_bombs_at_load_time_are_plan_errors() {
    let dir = common::TempDir::new("fuzz_load_bombs");
    let plan = dir.write(
        "plan.yaml",
        r#"name: bomb
properties:
  big: "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}"
thread_groups:
  - name: g
    threads: "{{ 'x' * 1000000000 }}"
    steps:
      - name: s
        request: { url: "http://127.0.0.1:1/" }
"#,
    );
    let out = common::planrun(dir.path(), [std::ffi::OsStr::new("validate"), plan.as_os_str()]);
    let stderr = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot render property: template did too much work (out of fuel)"), "{stderr}");
    assert!(stderr.contains("plan.yaml:3:8") && stderr.contains("plan.yaml:6:14"), "{stderr}");
}
