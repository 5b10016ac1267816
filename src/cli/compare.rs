//! `planrun compare A B`: per label, side by side, with ratios and a statistical verdict; exit 1 with
//! `--fail-if-slower PCT` when a label got worse by more than that; `--junit` and `--summary-md` say the same
//! for CI.

use super::args::CompareArgs;
use super::exit;
use super::print::{errln, out};
use crate::metric::Metric;
use crate::report::compare::{compare as compare_sides, worse_text, Comparison, Side};
use crate::report::html::compare_html;
use crate::report::junit::{compare_cases, Suite};
use crate::report::summary_md::compare_md;
use crate::sink::WholeFile;

pub(super) fn compare(a: CompareArgs) -> i32 {
    let (side_a, side_b) = match (Side::load(&a.a), Side::load(&a.b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            errln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    // Every output claimed, then opened, before any is written: none may be an input, nor another output.
    super::outputs::note_inputs([a.a.as_path(), a.b.as_path()]);
    let paths = [a.html.as_deref(), a.json.as_deref(), a.ci.junit.as_deref(), a.ci.summary_md.as_deref()];
    let opened = super::outputs::claim_all(paths.into_iter().flatten())
        .and_then(|_| paths.map(|p| p.map(WholeFile::open).transpose()).into_iter().collect::<Result<Vec<_>, _>>());
    let files = match opened {
        Ok(files) => files,
        Err(e) => {
            errln!("error: {e}");
            return super::outputs::sink_exit_code(&e);
        }
    };
    let comparison = compare_sides(&side_a, &side_b);
    out!("{}", comparison.render_text());
    let json = || serde_json::to_string_pretty(&comparison).expect("a comparison always serializes") + "\n";
    let fail_if_slower = a.fail_if_slower.map(|pct| (a.metric, pct));
    let junit = || junit_suite(&comparison, fail_if_slower).to_xml();
    let markdown = || compare_md(&comparison, a.metric, a.fail_if_slower);
    let texts: [&dyn Fn() -> String; 4] = [&|| compare_html(&comparison), &json, &junit, &markdown];
    for (file, text) in files.into_iter().zip(texts) {
        if let Some(file) = file {
            if let Err(e) = file.write(text().as_bytes()) {
                errln!("error: {e}");
                return super::outputs::sink_exit_code(&e);
            }
        }
    }
    let Some(max_pct) = a.fail_if_slower else { return exit::OK };
    let regressions = comparison.regressions(a.metric, max_pct);
    let metric = a.metric.name();
    for r in &regressions {
        let (a, b) = &r.shown;
        let worse = worse_text(r.worse_pct);
        if r.counted {
            errln!("planrun: {}: {metric} got {worse} ({a} -> {b}), more than the {max_pct}% allowed", r.label);
        } else {
            errln!(
                "planrun: {}: {metric} read {worse} ({a} -> {b}), but at {} as little as {}: not more than the \
                 {max_pct}% allowed",
                r.label,
                r.resolution,
                worse_text(r.least_worse_pct.max(0.0))
            );
        }
    }
    if regressions.iter().all(|r| !r.counted) {
        errln!("planrun: no label's {metric} got worse by more than {max_pct}%");
        exit::OK
    } else {
        exit::THRESHOLD_FAILED
    }
}

/// The comparison as a JUnit test suite: a case per label.
fn junit_suite(comparison: &Comparison, fail_if_slower: Option<(Metric, f64)>) -> Suite {
    Suite {
        name: format!("compare {} {}", comparison.a, comparison.b),
        timestamp: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string(),
        properties: vec![("a".into(), comparison.a.clone()), ("b".into(), comparison.b.clone())],
        cases: compare_cases(comparison, fail_if_slower),
        system_out: comparison.render_text(),
        ..Suite::default()
    }
}
