//! `planrun import`: what a converted plan sends is what the .jmx says (against a recording server), warnings
//! name the element's path and leave a comment, `--strict` refuses, and bad input (not XML, not JMeter, an
//! unknown version, cut short, not UTF-8, a DTD with entities, 10 MB) is exit 2 with line and column, never a
//! panic.

use crate::common;

use std::path::{Path, PathBuf};

use common::{describe, planrun, read_jtl, stderr, stdout, Server, TempDir};

fn shop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmx/shop.jmx")
}

fn import(dir: &TempDir, jmx: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["import".as_ref(), jmx.as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    planrun(dir.path(), args)
}

/// Converts shop.jmx into DIR/shop.yaml and runs it against a recording server with `-D base_url=...` and
/// `defines`; returns the plan, the server and the JTL.
fn convert_and_run(dir: &TempDir, defines: &[&str]) -> (std::path::PathBuf, Server, std::path::PathBuf) {
    let plan = dir.join("shop.yaml");
    let out = import(dir, &shop(), &["-o", plan.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let server = Server::start();
    let jtl = dir.join("out.jtl");
    let base = format!("base_url={}", server.url());
    let mut args = vec!["run", plan.to_str().expect("utf-8"), "-D", &base];
    for d in defines {
        args.extend(["-D", d]);
    }
    args.extend(["-o", jtl.to_str().expect("utf-8"), "--quiet"]);
    let run = planrun(dir.path(), &args);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    (plan, server, jtl)
}

#[test]
fn the_converted_plan_sends_what_the_jmx_says() {
    let dir = TempDir::new("import-sends");
    let (_, server, jtl) = convert_and_run(&dir, &[]);
    // 2 threads x 2 loops x 4 samplers (the disabled one is skipped), on both sides.
    let rows = read_jtl(&jtl).rows;
    let requests = server.requests();
    assert_eq!(rows.len(), 16);
    assert_eq!(requests.len(), 16);
    for r in &requests {
        // Plan-level and group-level header managers reach every request.
        assert_eq!(r.header("accept"), Some("application/json"), "{r:?}");
        assert_eq!(r.header("x-group"), Some("buyers"), "{r:?}");
        match (r.method.as_str(), r.path()) {
            ("GET", "/ok") => {
                // `q` is "encoded" in JMeter, `page` is not (and needs no encoding).
                assert_eq!(r.target, "/ok?q=alice+shoes&page=2");
                assert!(r.body.is_empty());
            }
            ("POST", "/ok") => {
                assert_eq!(r.header("content-type"), Some("application/x-www-form-urlencoded"));
                assert_eq!(String::from_utf8_lossy(&r.body), "user=alice&pass=s3cret");
            }
            ("POST", "/accepted") => {
                // postBodyRaw with the Content-Type of the sampler's header manager; __P(qty,3) by default.
                assert_eq!(r.header("content-type"), Some("application/json"));
                assert_eq!(String::from_utf8_lossy(&r.body), r#"{"user": "alice", "qty": 3}"#);
                let trace = r.header("x-trace").expect("X-Trace");
                assert!(trace == "user-1" || trace == "user-2", "{trace}");
            }
            ("DELETE", "/status/204") => assert!(r.body.is_empty()),
            other => panic!("a request the .jmx does not send: {other:?} {r:?}"),
        }
    }
    for (method, path) in [("GET", "/ok"), ("POST", "/ok"), ("POST", "/accepted"), ("DELETE", "/status/204")] {
        assert_eq!(requests.iter().filter(|r| r.method == method && r.path() == path).count(), 4, "{method} {path}");
    }
}

#[test]
fn jmeter_properties_become_planrun_properties() {
    let dir = TempDir::new("import-props");
    let (plan, server, jtl) = convert_and_run(&dir, &["threads=1", "loops=1", "qty=7"]);
    assert_eq!(read_jtl(&jtl).rows.len(), 4);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let order = requests.iter().find(|r| r.path() == "/accepted").expect("the order request");
    assert_eq!(String::from_utf8_lossy(&order.body), r#"{"user": "alice", "qty": 7}"#);
    // Without -D base_url, the host and port of the HTTP Request Defaults (`${__P(host,shop.example)}:8080`).
    let yaml = std::fs::read_to_string(&plan).expect("plan");
    assert!(yaml.contains("base_url: \"http://{{ props.host }}:8080\""), "{yaml}");
    assert!(yaml.contains("host: shop.example"), "{yaml}");
}

#[test]
fn warnings_name_the_element_path_and_leave_a_comment() {
    let dir = TempDir::new("import-warn");
    let out = import(&dir, &shop(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning: shop > buyers > login > JSR223 PostProcessor \"token\" (line 123): scripts are not converted"
        ),
        "{err}"
    );
    assert!(err.contains("note: disabled in JMeter, skipped: shop > buyers > HTTP Request \"old\""), "{err}");
    assert!(err.contains("note: 1 listener(s) dropped"), "{err}");
    let yaml = stdout(&out);
    // The comment sits just above the request the script was under.
    assert!(yaml.contains("# planrun import: JSR223 PostProcessor \"token\": scripts are not converted"), "{yaml}");
    let at = yaml.find("JSR223 PostProcessor").expect("comment");
    assert!(yaml[at..].lines().nth(1).is_some_and(|l| l.trim() == "- name: login"), "{yaml}");
    assert!(yaml.contains("# disabled in JMeter, skipped: HTTP Request \"old\""), "{yaml}");
}

#[test]
fn strict_refuses_a_plan_with_warnings_and_writes_nothing() {
    let dir = TempDir::new("import-strict");
    let plan = dir.join("shop.yaml");
    let out = import(&dir, &shop(), &["--strict", "-o", plan.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("--strict: 1 warning(s); no plan written"), "{}", describe(&out));
    assert!(!plan.exists());
    // A plan converted entirely passes --strict.
    let clean = dir.write("clean.jmx", minimal("<stringProp name=\"HTTPSampler.path\">/ok</stringProp>"));
    let out = import(&dir, &clean, &["--strict"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(stdout(&out).contains("url: /ok"));
}

#[test]
fn a_cookie_manager_keeps_cookies_and_says_what_it_cannot_take() {
    let dir = TempDir::new("import-cookies");
    let manager = r#"<CookieManager guiclass="CookiePanel" testclass="CookieManager" testname="jar" enabled="true">
          <collectionProp name="CookieManager.cookies">
            <elementProp name="session" elementType="Cookie" testname="session">
              <stringProp name="Cookie.value">abc</stringProp>
            </elementProp>
          </collectionProp>
          <boolProp name="CookieManager.clearEachIteration">true</boolProp>
        </CookieManager>
        <hashTree/>
        <HTTPSamplerProxy"#;
    let jmx =
        minimal("<stringProp name=\"HTTPSampler.path\">/ok</stringProp>").replacen("<HTTPSamplerProxy", manager, 1);
    let out = import(&dir, &dir.write("jar.jmx", jmx), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("HTTP Cookie Manager \"jar\""), "{err}");
    assert!(err.contains("user-defined cookies are not sent") && err.contains("clearEachIteration"), "{err}");
    let yaml = stdout(&out);
    assert!(!yaml.contains("cookies: false") && yaml.contains("# planrun import: HTTP Cookie Manager"), "{yaml}");
}

#[test]
fn use_keepalive_off_becomes_keep_alive_false() {
    let dir = TempDir::new("import-keepalive");
    let sampler = r#"<stringProp name="HTTPSampler.path">/ok</stringProp>
          <boolProp name="HTTPSampler.use_keepalive">false</boolProp>"#;
    let out = import(&dir, &dir.write("close.jmx", minimal(sampler)), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let yaml = stdout(&out);
    assert!(yaml.contains("keep_alive: false"), "{yaml}");
    assert!(!stderr(&out).contains("keep-alive"), "no warning: {}", stderr(&out));
}

/// A plan with one thread group and one HTTP sampler whose properties are `sampler`.
fn minimal(sampler: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="p" enabled="true"/>
    <hashTree>
      <ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="g" enabled="true">
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController">
          <stringProp name="LoopController.loops">1</stringProp>
        </elementProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="s" enabled="true">
          {sampler}
          <boolProp name="HTTPSampler.follow_redirects">true</boolProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
"#
    )
}

/// `import` of `bytes` exits 2 with `expected` in its error, and no panic.
fn refused(name: &str, bytes: &[u8], expected: &[&str]) {
    let dir = TempDir::new("import-bad");
    let path = dir.write(name, bytes);
    let out = import(&dir, &path, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{name}: {}", describe(&out));
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
    for e in expected {
        assert!(err.contains(e), "{name}: `{e}` not in:\n{err}");
    }
}

#[test]
fn bad_input_is_exit_2_with_line_and_column() {
    refused("text.jmx", b"this is not a plan\n", &["1:1: not well-formed XML"]);
    refused("empty.jmx", b"", &["not well-formed XML"]);
    refused("html.jmx", b"<html>\n  <body/>\n</html>\n", &["1:1: not a JMeter test plan: the root element is <html>"]);
    refused(
        "future.jmx",
        br#"<?xml version="1.0"?>
<jmeterTestPlan version="1.2" jmeter="9.1">
  <hashTree/>
</jmeterTestPlan>"#,
        &["2:1: saved by JMeter `9.1`; planrun import reads plans of JMeter 2.x to 5.x"],
    );
    let whole = minimal("<stringProp name=\"HTTPSampler.path\">/ok</stringProp>");
    let cut = &whole.as_bytes()[..whole.len() / 2];
    let lines = cut.iter().filter(|&&b| b == b'\n').count() + 1;
    refused("cut.jmx", cut, &[&format!("{lines}:"), "cut short"]);
    refused("latin1.jmx", b"<?xml version=\"1.0\"?>\n<jmeterTestPlan>caf\xe9</jmeterTestPlan>", &["2:20: not UTF-8"]);
    refused(
        "no-plan.jmx",
        b"<jmeterTestPlan version=\"1.2\" jmeter=\"5.0\">\n  <hashTree>\n    <ThreadGroup/>\n  </hashTree>\n</jmeterTestPlan>",
        &["2:3: not a JMeter test plan: the plan's top <hashTree> does not hold exactly one <TestPlan>"],
    );
    refused(
        "no-http.jmx",
        minimal("").replace("HTTPSamplerProxy", "DebugSampler").as_bytes(),
        &["nothing to convert", "only HTTP samplers are converted"],
    );
    let deep = format!("<jmeterTestPlan jmeter=\"5.0\">{}</jmeterTestPlan>", "<hashTree><TestPlan/>".repeat(300));
    refused("deep.jmx", deep.as_bytes(), &["not well-formed XML"]);
    let deep_closed = format!(
        "<jmeterTestPlan jmeter=\"5.0\">{}{}</jmeterTestPlan>",
        "<hashTree><TestPlan/>".repeat(250),
        "</hashTree>".repeat(250)
    );
    refused("deep-closed.jmx", deep_closed.as_bytes(), &["nested more than 200 deep"]);
}

#[test]
fn entities_are_never_expanded_nor_fetched() {
    let server = Server::start();
    let xxe = format!(
        r#"<?xml version="1.0"?>
<!DOCTYPE jmeterTestPlan [ <!ENTITY x SYSTEM "{}/ok"> <!ENTITY f SYSTEM "file:///etc/passwd"> ]>
<jmeterTestPlan version="1.2" jmeter="5.0"><hashTree><TestPlan testname="&x;&f;"/></hashTree></jmeterTestPlan>"#,
        server.url()
    );
    refused("xxe.jmx", xxe.as_bytes(), &["2:1: the file declares a document type", "refuses DTDs and entities"]);
    assert_eq!(server.count(), 0, "an external entity was fetched");
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<jmeterTestPlan><hashTree><TestPlan testname="&lol2;"/></hashTree></jmeterTestPlan>"#;
    refused("laughs.jmx", laughs.as_bytes(), &["2:1: the file declares a document type"]);
    // Without a DTD, an entity reference is simply unknown.
    refused("entity.jmx", b"<jmeterTestPlan>\n  &ext;\n</jmeterTestPlan>", &["2:3: not well-formed XML"]);
}

#[test]
fn a_ten_megabyte_plan_converts() {
    let dir = TempDir::new("import-big");
    let sampler = r#"<HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="s" enabled="true">
          <stringProp name="HTTPSampler.path">/ok</stringProp>
          <stringProp name="HTTPSampler.comments">padding padding padding padding padding padding padding padding</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
"#;
    let n = 10 * 1024 * 1024 / sampler.len() + 1;
    let plan = minimal("<stringProp name=\"HTTPSampler.path\">/ok</stringProp>")
        .replace("<hashTree/>\n      </hashTree>", &format!("<hashTree/>\n{}      </hashTree>", sampler.repeat(n)));
    assert!(plan.len() > 10 * 1024 * 1024);
    let path = dir.write("big.jmx", &plan);
    let out_path = dir.join("big.yaml");
    let out = import(&dir, &path, &["-o", out_path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let yaml = std::fs::read_to_string(&out_path).expect("written");
    assert_eq!(yaml.matches("- name: s").count(), n + 1);
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmx").join(name)
}

#[test]
fn a_jmeter_3_plan_with_a_workbench_converts_without_it() {
    let dir = TempDir::new("import-workbench");
    let out = import(&dir, &fixture("apache-jmeter__TestCookieManager.jmx"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("note: JMeter's WorkBench `WorkBench` skipped: its 2 element(s) are never run by JMeter either"),
        "{err}"
    );
    assert!(stdout(&out).contains("# JMeter's WorkBench `WorkBench` skipped"), "{}", stdout(&out));
    // Anything else beside the Test Plan is still refused.
    let xml = minimal("<stringProp name=\"HTTPSampler.path\">/ok</stringProp>").replace(
        "  </hashTree>\n</jmeterTestPlan>",
        "    <Arguments testclass=\"Arguments\" testname=\"stray\" enabled=\"true\"/>\n    <hashTree/>\n  </hashTree>\n</jmeterTestPlan>",
    );
    refused("stray.jmx", xml.as_bytes(), &["does not hold exactly one <TestPlan> (and at most a <WorkBench>)"]);
}

/// spring-petclinic's plan, imported, run by one user for four iterations against the recording server.
fn petclinic_requests() -> (Vec<common::Recorded>, String) {
    let dir = TempDir::new("import-petclinic");
    let out = import(&dir, &fixture("spring-petclinic__petclinic_test_plan.jmx"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let yaml = stdout(&out).replace("threads: 500", "threads: 1").replace("loops: 10", "loops: 4");
    let yaml: String = yaml.lines().filter(|l| !l.trim().starts_with("- think:")).map(|l| format!("{l}\n")).collect();
    let plan = dir.write("petclinic.yaml", &yaml);
    let server = Server::start();
    let base = format!("base_url={}", server.url());
    let jtl = dir.join("out.jtl");
    let run = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-D", &base, "-o", jtl.to_str().unwrap(), "--quiet"]);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let requests = server.requests();
    assert_eq!(read_jtl(&jtl).rows.len(), requests.len(), "rows = the server's count");
    (requests, stderr(&out))
}

#[test]
fn paths_form_values_and_counters_are_sent_as_jmeter_sends_them() {
    let (requests, warnings) = petclinic_requests();
    assert_eq!(requests.len(), 4 * 13);
    // `${CONTEXT_WEB}/owners/find` with CONTEXT_WEB empty is `/owners/find`, as JMeter builds it.
    assert!(requests.iter().all(|r| r.target.starts_with('/') && !r.target.starts_with("//")), "{requests:?}");
    // Shared counters from 1 to 3: each iteration takes the next value, the same for every use in it.
    let per_iteration: Vec<Vec<&common::Recorded>> = requests.chunks(13).map(|c| c.iter().collect()).collect();
    for (i, iteration) in per_iteration.iter().enumerate() {
        let n = i % 3 + 1;
        let owner_paths: Vec<&str> = iteration.iter().map(|r| r.path()).filter(|p| p.starts_with("/owners/")).collect();
        assert!(
            owner_paths.iter().filter(|p| *p != &"/owners/find").all(|p| p.starts_with(&format!("/owners/{n}"))),
            "iteration {i}: {owner_paths:?}"
        );
        let new_pet = iteration
            .iter()
            .find(|r| r.method == "POST" && r.path() == format!("/owners/{n}/pets/new"))
            .expect("POST new pet");
        // `Test+Fluffy+${petCount}`, not encoded in JMeter: decoded, then form-encoded again.
        assert_eq!(
            String::from_utf8_lossy(&new_pet.body),
            format!("name=Test+Fluffy+{n}&birthDate=2020-12-20&type=cat")
        );
        let visit = iteration.iter().find(|r| r.method == "POST" && r.path().ends_with("/visits/new")).expect("visit");
        assert_eq!(visit.path(), format!("/owners/{n}/pets/{n}/visits/new"));
    }
    assert!(!warnings.contains("counter"), "the counters are converted exactly: {warnings}");
}

/// A plan whose one thread group holds `counter` and a sampler of `path`, with `loops` loops.
fn with_counter(counter: &str, path: &str, loops: u32) -> String {
    minimal(&format!("<stringProp name=\"HTTPSampler.path\">{path}</stringProp>"))
        .replace(
            "<stringProp name=\"LoopController.loops\">1</stringProp>",
            &format!("<stringProp name=\"LoopController.loops\">{loops}</stringProp>"),
        )
        .replace(
            "      <hashTree>\n        <HTTPSamplerProxy",
            &format!("      <hashTree>\n        {counter}\n        <hashTree/>\n        <HTTPSamplerProxy"),
        )
}

#[test]
fn a_per_user_counter_starts_again_after_its_maximum() {
    let dir = TempDir::new("import-counter");
    let counter = r#"<CounterConfig guiclass="CounterConfigGui" testclass="CounterConfig" testname="n" enabled="true">
          <stringProp name="CounterConfig.start">5</stringProp>
          <stringProp name="CounterConfig.end">9</stringProp>
          <stringProp name="CounterConfig.incr">2</stringProp>
          <stringProp name="CounterConfig.name">n</stringProp>
          <stringProp name="CounterConfig.format"></stringProp>
          <boolProp name="CounterConfig.per_user">true</boolProp>
        </CounterConfig>"#;
    let jmx = dir.write("counter.jmx", with_counter(counter, "/n/${n}", 5));
    let plan = dir.join("counter.yaml");
    let out = import(&dir, &jmx, &["--strict", "-o", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "converted exactly, so --strict passes: {}", describe(&out));
    let server = Server::start();
    let base = format!("base_url={}", server.url());
    let run = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-D", &base, "-o", "out.jtl", "--quiet"]);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let paths: Vec<String> = server.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(paths, ["/n/5", "/n/7", "/n/9", "/n/5", "/n/7"]);

    // What cannot be converted is said exactly: a number format, and a counter inside a controller.
    let formatted = counter.replace(
        "<stringProp name=\"CounterConfig.format\"></stringProp>",
        "<stringProp name=\"CounterConfig.format\">000</stringProp>",
    );
    let jmx = dir.write("format.jmx", with_counter(&formatted, "/n/${n}", 1));
    let out = import(&dir, &jmx, &[]);
    assert!(stderr(&out).contains("counter `n`: its number format `000` is not applied"), "{}", describe(&out));
}

#[test]
fn embedded_resources_asked_for_in_http_request_defaults_are_warned_about() {
    let dir = TempDir::new("import-embedded");
    let defaults = r#"<ConfigTestElement guiclass="HttpDefaultsGui" testclass="ConfigTestElement" testname="defaults" enabled="true">
          <stringProp name="HTTPSampler.domain">shop.example</stringProp>
          <boolProp name="HTTPSampler.image_parser">true</boolProp>
        </ConfigTestElement>"#;
    let jmx = dir.write("embedded.jmx", with_counter(defaults, "/page", 1));
    let out = import(&dir, &jmx, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        stderr(&out).contains("\"Retrieve All Embedded Resources\" (set in HTTP Request Defaults) is dropped"),
        "{}",
        describe(&out)
    );
}
