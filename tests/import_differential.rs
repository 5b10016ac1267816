//! Imported JMeter plans send what JMeter sends. Each plan of tests/fixtures/jmx that JMeter can run is
//! pointed at one recording server (its hosts, ports and full URLs rewritten to the server; one thread, three
//! loops, no timers), run by JMeter (Debian's 2.13 in CI) and, once imported, by planrun. The requests must
//! be the same on both sides: method, path and query, body, Content-Type and the headers the plan's header
//! managers set, each as often; and the JTLs must hold as many rows per label.
//!
//! Without java, javac or JMeter the test says why and passes, unless PLANRUN_REQUIRE_JMETER=1 (set by
//! .ci/run) makes that a failure.

use crate::common;
use crate::jmeter;

use std::collections::BTreeMap;
use std::path::Path;

use common::{describe, planrun, read_jtl, TempDir};
use jmeter::recorder::{response, Hit, Recorder};

/// The plans JMeter 2.13 runs as planrun does, and why the others are not here.
///
/// Not here: TestCookieManager (JSR223 scripts, and HTTPS to a mirror server it starts itself),
/// build-adv-web-test-plan (login pages on other hosts it reads from CSV files), all_controllers (random
/// controllers: a different sequence on each side), SteppingThreadGroup (a plugin thread group Debian's
/// JMeter does not have), http.jmx (CSV files on the author's machine), simple-http-request-test-plan (a
/// template whose URL is a placeholder, `[=url]`, that JMeter's template wizard fills in).
const PLANS: &[&str] = &["spring-petclinic__petclinic_test_plan.jmx", "shop.jmx"];

const LOOPS: &str = "3";

fn ok(_method: &str, _path: &str) -> Vec<u8> {
    response(200, "OK", Some("text/html; charset=utf-8"), &[], "<p>ok</p>")
}

/// The value of a one-line property element (`<stringProp name="N">V</stringProp>`): (name, start and end
/// of the value in `line`).
fn prop(line: &str) -> Option<(&str, usize, usize)> {
    let name_at = line.find("name=\"")? + 6;
    let name_end = name_at + line[name_at..].find('"')?;
    let open = name_end + line[name_end..].find('>')? + 1;
    if line[..open].ends_with("/>") {
        return None;
    }
    let close = open + line[open..].find("</")?;
    Some((&line[name_at..name_end], open, close))
}

/// `xml` pointed at 127.0.0.1:`port`, with one thread, LOOPS loops and no waits.
fn localize(xml: &str, port: u16) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut port_due = false;
    for line in xml.split_inclusive('\n') {
        // A listener setting JMeter 2.13 cannot read (listeners send nothing).
        if line.trim_start().starts_with("<sentBytes>") {
            continue;
        }
        let Some((name, from, to)) = prop(line) else {
            out.push_str(line);
            continue;
        };
        let value = &line[from..to];
        let new = match name {
            "HTTPSampler.domain" if !value.is_empty() => {
                port_due = true;
                Some("127.0.0.1".to_string())
            }
            "HTTPSampler.port" if port_due || !value.is_empty() => {
                port_due = false;
                Some(port.to_string())
            }
            "HTTPSampler.protocol" if !value.is_empty() => Some("http".into()),
            "HTTPSampler.path" | "Argument.value" if value.starts_with("http://") || value.starts_with("https://") => {
                let rest = value.split_once("://").map(|(_, r)| r).unwrap_or("");
                let path = rest.find('/').map(|i| &rest[i..]).unwrap_or("/");
                Some(format!("http://127.0.0.1:{port}{path}"))
            }
            "ThreadGroup.num_threads" => Some("1".into()),
            "ThreadGroup.ramp_time" => Some("0".into()),
            "ThreadGroup.scheduler" => Some("false".into()),
            "ThreadGroup.duration" | "ThreadGroup.delay" => Some(String::new()),
            "LoopController.loops" => Some(LOOPS.into()),
            "ConstantTimer.delay" | "RandomTimer.range" => Some("0".into()),
            _ => None,
        };
        match new {
            Some(v) => {
                out.push_str(&line[..from]);
                out.push_str(&v);
                out.push_str(&line[to..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The header names the plan's header managers set, lower case.
fn managed_headers(xml: &str) -> Vec<String> {
    let mut names: Vec<String> = xml
        .lines()
        .filter_map(|line| match prop(line) {
            Some(("Header.name", from, to)) => Some(line[from..to].trim().to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What is compared of a request.
fn key(hit: &Hit, headers: &[String]) -> String {
    let mut k = format!("{} {}", hit.method, hit.target);
    // Content-Type is compared where there is a body: JMeter 2.13 also sends `text/plain; charset=ISO-8859-1`
    // on a DELETE without one.
    let mut names: Vec<&str> = headers.iter().map(String::as_str).filter(|h| *h != "content-type").collect();
    if !hit.body.is_empty() {
        k.push_str(&format!(" body={}", String::from_utf8_lossy(&hit.body)));
        names.insert(0, "content-type");
    }
    for name in names {
        if let Some(v) = hit.header(name) {
            k.push_str(&format!(" {name}: {v}"));
        }
    }
    k
}

fn tally<I: IntoIterator<Item = String>>(items: I) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m
}

#[test]
fn imported_plans_send_what_jmeter_sends() {
    let jm = match jmeter::launch::find() {
        Ok(j) => j,
        Err(why) => return common::skip("JMeter", "PLANRUN_REQUIRE_JMETER", &why),
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmx");
    let mut differences = Vec::new();
    for name in PLANS {
        let dir = TempDir::new("import-differential");
        let xml = std::fs::read_to_string(fixtures.join(name)).expect("the fixture");
        let server = Recorder::start(ok);
        let jmx = dir.write("plan.jmx", localize(&xml, server.ports[0]));
        let headers = managed_headers(&xml);

        let jm_jtl = dir.join("jmeter.jtl");
        jm.run(dir.path(), &jmx, &jm_jtl, &[]);
        let by_jmeter = server.take();

        let plan = dir.join("plan.yaml");
        let out = planrun(dir.path(), ["import", jmx.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", describe(&out));
        let pr_jtl = dir.join("planrun.jtl");
        let run = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", pr_jtl.to_str().unwrap(), "--quiet"]);
        assert!(matches!(run.status.code(), Some(0 | 1)), "{name}: {}", describe(&run));
        let by_planrun = server.take();

        assert!(!by_jmeter.is_empty(), "{name}: JMeter sent nothing");
        let (jm_rows, pr_rows) = (read_jtl(&jm_jtl).rows, read_jtl(&pr_jtl).rows);
        // Rows = requests on each side (no redirects here: the server answers 200 to everything).
        assert_eq!(pr_rows.len(), by_planrun.len(), "{name}: planrun's rows against the server's count");
        let labels =
            |rows: &[std::collections::HashMap<String, String>]| tally(rows.iter().map(|r| r["label"].clone()));
        let (a, b) = (labels(&jm_rows), labels(&pr_rows));
        if a != b {
            differences.push(format!("{name}: rows per label\n  JMeter:  {a:?}\n  planrun: {b:?}"));
        }
        let (a, b) =
            (tally(by_jmeter.iter().map(|h| key(h, &headers))), tally(by_planrun.iter().map(|h| key(h, &headers))));
        if a != b {
            let only = |x: &BTreeMap<String, usize>, y: &BTreeMap<String, usize>| -> Vec<String> {
                x.iter().filter(|(k, n)| y.get(*k) != Some(n)).map(|(k, n)| format!("{n} x {k}")).collect()
            };
            differences.push(format!(
                "{name}: requests\n  JMeter only:\n    {}\n  planrun only:\n    {}",
                only(&a, &b).join("\n    "),
                only(&b, &a).join("\n    ")
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
