//! `--junit FILE` and `--summary-md FILE` on `run`, `merge --plan` and `compare`: a JUnit test case per
//! threshold (per compared label), a failed one saying what was measured, the limit and the plan line, the
//! summary as the suite's output, names with markup characters kept whole; read back here with roxmltree,
//! validated against Jenkins' xUnit plugin's JUnit schema with Python's lxml and read with junitparser (both
//! from PyPI: skipped with a reason when missing, unless PLANRUN_REQUIRE_JUNIT=1); the Markdown table with a
//! failed threshold in it; and the two files claimed like every other output.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

/// A label with every character XML and Markdown treat as markup.
const LABEL: &str = r#"a<b & "c" 'd' |e| *f*"#;

/// Two steps against the test server, 30 requests; four thresholds: two hold, two fail.
fn plan(dir: &TempDir, server: &Server) -> std::path::PathBuf {
    let text = format!(
        r#"name: ci-outputs
thread_groups:
  - name: g
    threads: 3
    loops: 5
    steps:
      - name: '{label}'
        request: {{ method: GET, url: "{url}/ok" }}
      - name: slow
        request: {{ method: GET, url: "{url}/delay/20" }}
thresholds:
  total:
    - samples == 30
    - p95 < 1ms
  '{label}':
    - error_rate < 1%
  slow:
    - max < 5ms
"#,
        label = LABEL.replace('\'', "''"),
        url = server.url()
    );
    dir.write("plan.yaml", text)
}

/// The `<testcase>` elements of a JUnit document: (classname, name, failure message and text, output).
#[derive(Debug)]
struct Case {
    classname: String,
    name: String,
    failure: Option<(String, String)>,
    skipped: Option<String>,
    out: String,
}

/// Reads a JUnit document: its one suite's counts and output, and its cases.
fn junit(path: &Path) -> (roxmltree::Node<'static, 'static>, Vec<Case>) {
    let text: &'static str = Box::leak(std::fs::read_to_string(path).unwrap().into_boxed_str());
    let doc: &'static roxmltree::Document<'static> =
        Box::leak(Box::new(roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("not XML: {e}\n{text}"))));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites", "{text}");
    let suites: Vec<_> = root.children().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 1, "{text}");
    let suite = suites[0];
    let cases = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|c| {
            let child = |tag: &str| c.children().find(|n| n.has_tag_name(tag));
            Case {
                classname: c.attribute("classname").unwrap().to_string(),
                name: c.attribute("name").unwrap().to_string(),
                failure: child("failure")
                    .map(|f| (f.attribute("message").unwrap().to_string(), f.text().unwrap_or("").to_string())),
                skipped: child("skipped").map(|s| s.attribute("message").unwrap_or("").to_string()),
                out: child("system-out").and_then(|o| o.text()).unwrap_or("").to_string(),
            }
        })
        .collect();
    (suite, cases)
}

fn count(suite: roxmltree::Node<'_, '_>, attr: &str) -> u64 {
    suite.attribute(attr).unwrap_or_else(|| panic!("no {attr}")).parse().unwrap()
}

fn suite_out(suite: roxmltree::Node<'_, '_>) -> String {
    suite.children().find(|n| n.has_tag_name("system-out")).and_then(|n| n.text()).unwrap_or("").to_string()
}

#[test]
fn a_run_writes_a_junit_case_per_threshold_with_measured_value_limit_and_plan_line() {
    let server = Server::start();
    let dir = TempDir::new("ci_junit_run");
    plan(&dir, &server);
    let out = planrun(dir.path(), "run plan.yaml -o r.jtl --junit j.xml --summary-md s.md -q".split(' '));
    assert_eq!(out.status.code(), Some(1), "two thresholds fail:\n{}", describe(&out));
    let jtl = read_jtl(&dir.join("r.jtl"));
    assert_eq!(jtl.rows.len(), 30);
    assert_eq!(server.count(), jtl.rows.len(), "the server's count equals the JTL's rows");

    let (suite, cases) = junit(&dir.join("j.xml"));
    assert_eq!(suite.attribute("name"), Some("ci-outputs"));
    assert_eq!((count(suite, "tests"), count(suite, "failures"), count(suite, "errors")), (4, 2, 0));
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let label_case = format!("{LABEL}: error_rate < 1%");
    assert_eq!(names, ["TOTAL: samples == 30", "TOTAL: p95 < 1ms", label_case.as_str(), "slow: max < 5ms"]);
    assert!(cases.iter().all(|c| c.classname == "ci-outputs"), "{cases:?}");
    // Held: no failure, what was measured as output.
    assert!(cases[0].failure.is_none() && cases[2].failure.is_none(), "{cases:?}");
    assert!(cases[0].out.contains("measured: 30\nlimit: samples == 30\nplan: plan.yaml:"), "{cases:?}");
    assert!(cases[2].out.contains("measured: 0.00%"), "{cases:?}");
    // Failed: the measured value, the limit and the plan line, in the message and the text.
    let (message, text) = cases[3].failure.as_ref().expect("max < 5ms fails: every /delay/20 takes 20 ms");
    let max_ms = jtl.labelled("slow").iter().map(|r| num(r, "elapsed")).max().unwrap();
    assert!(
        message.starts_with("slow: max measured ") && message.contains("ms, limit < 5.00ms (plan.yaml:18:7)"),
        "{message}"
    );
    let measured: f64 = message["slow: max measured ".len()..].split("ms").next().unwrap().parse().unwrap();
    assert!(measured >= max_ms as f64 && measured < max_ms as f64 + 1.0, "{measured} vs the JTL's {max_ms}");
    assert!(text.contains("limit: max < 5.00ms\nplan: plan.yaml:18:7"), "{text}");
    assert!(cases[1].failure.as_ref().unwrap().0.contains("limit < 1.00ms (plan.yaml:14:7)"), "{cases:?}");
    // The summary table, as printed, is the suite's output, with the label whole.
    let printed = stdout(&out);
    let table: String = printed.lines().take_while(|l| !l.is_empty()).map(|l| format!("{l}\n")).collect();
    let output = suite_out(suite);
    assert!(output.starts_with(&table), "{output}\nvs\n{table}");
    assert!(output.contains("30 samples in ") && output.contains("FAIL  slow: max < 5ms"), "{output}");
    let raw = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    assert!(raw.contains("a&lt;b &amp; &quot;c&quot; &apos;d&apos;"), "{raw}");

    // The Markdown: the verdicts' table with the failed thresholds, the summary table, the label escaped.
    let md = std::fs::read_to_string(dir.join("s.md")).unwrap();
    assert!(md.starts_with("### planrun: ci-outputs\n\n**❌ Thresholds: 2 of 4 failed**\n"), "{md}");
    assert!(md.contains("| Result | Label | Threshold | Measured | Limit | Plan line |\n| --- |"), "{md}");
    let fail_line = md.lines().find(|l| l.starts_with("| ❌ **FAIL** | slow | max \\< 5ms | ")).expect(&md);
    assert!(fail_line.ends_with(" | \\< 5.00ms | plan.yaml\\:18\\:7 |"), "{fail_line}");
    let escaped = r#"a\<b \& "c" 'd' \|e\| \*f\*"#;
    assert!(md.contains(&format!("| ✅ PASS | {escaped} | error\\_rate \\< 1% | 0.00% |")), "{md}");
    assert!(md.contains("| Label | Samples | Mean |"), "{md}");
    assert!(md.contains(&format!("\n| {escaped} | 15 | ")), "{md}");
    assert!(md.contains("\n| **TOTAL** | **30** | "), "{md}");
    // Every table row has as many cells as its header (a `|` in a label would add one unescaped).
    for table in md.split("\n\n").filter(|b| b.starts_with('|')) {
        let cells = |l: &str| l.replace("\\|", "").matches('|').count();
        let header = cells(table.lines().next().unwrap());
        assert!(table.lines().all(|l| cells(l) == header), "{table}");
    }
}

#[test]
fn held_thresholds_give_a_junit_file_without_failures_and_a_markdown_that_says_so() {
    let server = Server::start();
    let dir = TempDir::new("ci_junit_pass");
    let text = format!(
        "name: fine\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 4\n    steps:\n      - name: ok\n        \
         request: {{ method: GET, url: \"{}/ok\" }}\nthresholds:\n  total: [\"samples == 4\", \"error_rate < 1%\"]\n",
        server.url()
    );
    let plan = dir.write("plan.yaml", text);
    let (_, jtl) = run_ok(&dir, &plan, &["--junit", "j.xml", "--summary-md", "s.md", "-q"]);
    assert_eq!(server.count(), jtl.rows.len());
    let (suite, cases) = junit(&dir.join("j.xml"));
    assert_eq!((count(suite, "tests"), count(suite, "failures")), (2, 0));
    assert!(cases.iter().all(|c| c.failure.is_none()), "{cases:?}");
    let md = std::fs::read_to_string(dir.join("s.md")).unwrap();
    assert!(md.contains("**✅ Thresholds: all 2 held**") && !md.contains("FAIL"), "{md}");
}

/// Writes a JTL of (label, elapsed ms) samples, one started every 10 ms, all passing.
fn write_jtl(path: &Path, samples: &[(&str, u64)]) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        w,
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,\
         sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect"
    )
    .unwrap();
    for (i, (label, elapsed)) in samples.iter().enumerate() {
        let start = 1_700_000_000_000 + i as u64 * 10;
        let label =
            if label.contains(['"', ',']) { format!("\"{}\"", label.replace('"', "\"\"")) } else { label.to_string() };
        writeln!(w, "{start},{elapsed},{label},200,OK,g 1-1,text,true,,100,50,1,1,http://h/x,{elapsed},0,0").unwrap();
    }
    w.flush().unwrap();
}

/// A: `send` 10..=209 ms, LABEL 1..=100 ms, `only-a`. B: `send` doubled, LABEL the same, `only-b`.
fn compare_pair(dir: &TempDir) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..200u64 {
        a.push(("send", 10 + i));
        b.push(("send", 2 * (10 + i)));
    }
    for i in 0..100u64 {
        a.push((LABEL, i + 1));
        b.push((LABEL, (i * 37) % 100 + 1));
    }
    a.push(("only-a", 5));
    b.push(("only-b", 5));
    write_jtl(&dir.join("a.jtl"), &a);
    write_jtl(&dir.join("b.jtl"), &b);
}

#[test]
fn compare_writes_a_junit_case_per_label_failed_where_fail_if_slower_trips() {
    let dir = TempDir::new("ci_junit_compare");
    compare_pair(&dir);
    let args = "compare a.jtl b.jtl --fail-if-slower 10 --junit j.xml --summary-md s.md";
    let out = planrun(dir.path(), args.split(' '));
    assert_eq!(out.status.code(), Some(1), "send got twice as slow:\n{}", describe(&out));
    let (suite, cases) = junit(&dir.join("j.xml"));
    assert_eq!((count(suite, "tests"), count(suite, "failures"), count(suite, "skipped")), (5, 2, 2));
    let case = |name: &str| cases.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no {name}: {cases:?}"));
    let send = case("send: p95 at most 10% worse");
    let (message, _) = send.failure.as_ref().expect("send fails");
    assert!(message.starts_with("send: p95 got 100.0% worse ("), "{message}");
    assert!(message.ends_with("), more than the 10% allowed"), "{message}");
    assert!(send.out.is_empty() && send.classname == "compare", "{send:?}");
    assert!(case("TOTAL: p95 at most 10% worse").failure.is_some());
    let same = case(&format!("{LABEL}: p95 at most 10% worse"));
    assert!(same.failure.is_none() && same.out.contains("no significant difference"), "{same:?}");
    assert_eq!(case("only-a: p95 at most 10% worse").skipped.as_deref(), Some("only in A: not compared"));
    assert_eq!(case("only-b: p95 at most 10% worse").skipped.as_deref(), Some("only in B: not compared"));
    assert!(suite_out(suite).contains("send: slower ("), "{}", suite_out(suite));

    let md = std::fs::read_to_string(dir.join("s.md")).unwrap();
    assert!(md.contains("**❌ 2 label(s) got worse in p95 by more than 10%**"), "{md}");
    assert!(md.contains("| Label | Verdict | p95 A | p95 B | B/A | Check |"), "{md}");
    assert!(
        md.lines().any(|l| l.starts_with("| send | **slower** | ") && l.ends_with(" | 2.00 | ❌ **100.0% worse** |")),
        "{md}"
    );
    assert!(md.contains("\nOnly in A: only\\-a") || md.contains("\nOnly in A: only-a"), "{md}");

    // Without --fail-if-slower nothing fails: a case per label with the verdict as its output.
    let out = planrun(dir.path(), "compare a.jtl b.jtl --junit j2.xml".split(' '));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let (suite, cases) = junit(&dir.join("j2.xml"));
    assert_eq!((count(suite, "tests"), count(suite, "failures")), (5, 0));
    assert!(cases.iter().any(|c| c.name == "send" && c.out.starts_with("send: slower (")), "{cases:?}");
}

#[test]
fn merge_with_a_plan_writes_junit_of_its_thresholds_and_without_one_refuses_junit() {
    let server = Server::start();
    let dir = TempDir::new("ci_junit_merge");
    plan(&dir, &server);
    for (segment, name) in [("0/2", "s0.jtl"), ("1/2", "s1.jtl")] {
        let out = planrun(dir.path(), ["run", "plan.yaml", "--segment", segment, "-o", name, "-q"]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", describe(&out));
    }
    let rows = read_jtl(&dir.join("s0.jtl")).rows.len() + read_jtl(&dir.join("s1.jtl")).rows.len();
    assert_eq!((rows, server.count()), (30, 30));
    let out = planrun(
        dir.path(),
        "merge s0.jtl s1.jtl -o all.jtl --plan plan.yaml --junit j.xml --summary-md s.md".split(' '),
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let (suite, cases) = junit(&dir.join("j.xml"));
    assert_eq!((count(suite, "tests"), count(suite, "failures")), (4, 2));
    assert!(
        cases[0].failure.is_none() && cases[0].out.contains("measured: 30\n"),
        "the merged rows are judged: {cases:?}"
    );
    assert!(suite_out(suite).contains("30 samples from 2 file(s) merged into all.jtl"), "{}", suite_out(suite));
    let md = std::fs::read_to_string(dir.join("s.md")).unwrap();
    assert!(
        md.contains("**❌ Thresholds: 2 of 4 failed**") && md.contains("| ❌ **FAIL** | slow | max \\< 5ms |"),
        "{md}"
    );

    let out = planrun(dir.path(), "merge s0.jtl s1.jtl -o x.jtl --junit k.xml".split(' '));
    assert_eq!(out.status.code(), Some(2), "--junit needs --plan:\n{}", describe(&out));
    assert!(!dir.join("x.jtl").exists() && !dir.join("k.xml").exists());
}

#[test]
fn junit_and_markdown_outputs_are_claimed_like_the_others() {
    let server = Server::start();
    let dir = TempDir::new("ci_junit_claim");
    let plan = plan(&dir, &server);
    let before = std::fs::read_to_string(&plan).unwrap();
    dir.write("r.jtl", "an earlier run's rows\n");
    // The plan as --junit, the JTL as --summary-md, one file as both: refused, nothing sent or written.
    for extra in ["--junit plan.yaml", "--summary-md r.jtl", "--junit same --summary-md same"] {
        let args = format!("run plan.yaml -o r.jtl {extra}");
        let out = planrun(dir.path(), args.split(' '));
        assert_eq!(out.status.code(), Some(2), "{args:?}:\n{}", describe(&out));
        assert!(stderr(&out).contains("nothing was sent"), "{}", describe(&out));
        assert_eq!(server.count(), 0);
        assert_eq!(std::fs::read_to_string(&plan).unwrap(), before);
        assert_eq!(std::fs::read_to_string(dir.join("r.jtl")).unwrap(), "an earlier run's rows\n", "{args:?}");
    }
    // A path that cannot be opened stops the run before it sends anything (exit 3).
    dir.write("a-file", "");
    let out = planrun(dir.path(), ["run", "plan.yaml", "-o", "r.jtl", "--summary-md", "a-file/s.md"]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert_eq!(server.count(), 0);
    // compare: an output that is an input is refused.
    compare_pair(&dir);
    let a = std::fs::read(dir.join("a.jtl")).unwrap();
    let out = planrun(dir.path(), "compare a.jtl b.jtl --junit a.jtl".split(' '));
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(std::fs::read(dir.join("a.jtl")).unwrap(), a);
    // compare: one file as two outputs is refused before anything is written to it, as a run refuses it.
    for two in ["--junit one --summary-md one", "--html two --json two"] {
        let out = planrun(dir.path(), format!("compare a.jtl b.jtl {two}").split(' '));
        assert_eq!(out.status.code(), Some(2), "{two}: {}", describe(&out));
        assert!(stderr(&out).contains("it is also another output"), "{}", describe(&out));
        let file = dir.join(two.rsplit(' ').next().unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap_or_default(), "", "{two}: nothing written");
    }
}

/// Whether Python has lxml and junitparser; when not, says why the check is skipped, or fails when
/// PLANRUN_REQUIRE_JUNIT=1 (CI).
fn python_junit_available() -> bool {
    let ran = Command::new("python3").args(["-c", "import lxml.etree, junitparser"]).output();
    if ran.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let why = match ran {
        Ok(out) => {
            let said = stderr(&out);
            let last = said.lines().last().unwrap_or("").to_string();
            format!("python3 lacks lxml or junitparser ({last}); `pip install lxml junitparser`")
        }
        Err(e) => format!("python3 cannot run ({e})"),
    };
    skip("lxml and junitparser", "PLANRUN_REQUIRE_JUNIT", &why);
    false
}

/// Validates each file against Jenkins' JUnit schema with lxml, then reads it with junitparser; prints, per
/// file, `tests failures skipped` and each case as `result<TAB>name<TAB>message`.
const CHECK: &str = r#"
import sys
from lxml import etree
import junitparser
schema = etree.XMLSchema(etree.parse(sys.argv[1]))
for path in sys.argv[2:]:
    doc = etree.parse(path)
    if not schema.validate(doc):
        sys.exit(f"{path}: {schema.error_log}")
    xml = junitparser.JUnitXml.fromfile(path)
    suites = list(xml)
    assert len(suites) == 1, path
    s = suites[0]
    print(path, s.tests, s.failures, s.skipped)
    for case in s:
        kinds = [r._tag for r in case.result]
        message = case.result[0].message if case.result else ""
        print((kinds[0] if kinds else "passed") + "\t" + case.name + "\t" + (message or ""))
"#;

#[test]
fn junit_files_are_valid_against_jenkins_schema_and_read_by_junitparser() {
    if !python_junit_available() {
        return;
    }
    let server = Server::start();
    let dir = TempDir::new("ci_junit_xsd");
    plan(&dir, &server);
    let out = planrun(dir.path(), "run plan.yaml -o r.jtl --junit run.xml -q".split(' '));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(server.count(), read_jtl(&dir.join("r.jtl")).rows.len());
    let out = planrun(dir.path(), "merge r.jtl -o all.jtl --plan plan.yaml --junit merge.xml".split(' '));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    compare_pair(&dir);
    let out = planrun(dir.path(), "compare a.jtl b.jtl --fail-if-slower 10 --junit compare.xml".split(' '));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));

    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/jenkins-junit-10.xsd");
    let mut cmd = Command::new("python3");
    cmd.args(["-c", CHECK]).arg(&xsd).args(["run.xml", "merge.xml", "compare.xml"]).current_dir(dir.path());
    let checked = run_guarded(&mut cmd, Duration::from_secs(60), "python3 lxml junitparser", |_| {});
    assert_eq!(checked.status.code(), Some(0), "{}", describe(&checked));
    let said = stdout(&checked);
    for summary in ["run.xml 4 2 0", "merge.xml 4 2 0", "compare.xml 5 2 2"] {
        assert!(said.lines().any(|l| l == summary), "{summary}:\n{said}");
    }
    assert!(said.contains(&format!("passed\t{LABEL}: error_rate < 1%\t\n")), "{said}");
    assert!(said.contains("failure\tslow: max < 5ms\tslow: max measured "), "{said}");
    assert!(said.contains("failure\tsend: p95 at most 10% worse\tsend: p95 got 100.0% worse"), "{said}");
    assert!(said.contains("skipped\tonly-a: p95 at most 10% worse\tonly in A: not compared"), "{said}");
}
