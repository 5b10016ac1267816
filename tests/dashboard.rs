//! `planrun run --dashboard`: headless Chromium (Debian's `chromium`, which `.ci/run` installs) loads the page
//! while the run goes on, and the counts the page shows at the end must be the run's: the server's count,
//! the JTL's rows, the summary's. A screenshot is kept in the test's directory. Where Chromium is missing the
//! test says so and passes, except under CI (`CI` set), where it fails.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{chromium, describe, now_ms, planrun, read_jtl, stderr, Server, TempDir};

/// Two labels, 3 users, 30 iterations each.
fn plan(dir: &TempDir, server: &Server) -> std::path::PathBuf {
    dir.write(
        "plan.yaml",
        format!(
            "name: live page\ndefaults: {{ base_url: \"{}\" }}\nthresholds:\n  total: [\"p95 < 5s\"]\n\
             thread_groups:\n  - name: g\n    threads: 3\n    loops: 30\n    think_time: 30ms\n    steps:\n      \
             - name: send\n        request: {{ url: /ok }}\n      - name: fail\n        request: {{ url: /status/503 }}\n",
            server.url()
        ),
    )
}

/// Chromium loading `url`, with `mode` (`--dump-dom` or `--screenshot=FILE`), letting the page's own time
/// run for long enough to see the whole run.
fn browser(path: &str, dir: &TempDir, mode: &str, url: &str, profile: &str) -> Child {
    Command::new(path)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", dir.join(profile).display()),
            "--window-size=1280,1400",
            "--virtual-time-budget=20000",
            mode,
            url,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium")
}

/// The text of the element with this id in the dumped DOM.
fn by_id<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id} in the page:\n{dom}"));
    let rest = &dom[at..];
    let open = rest.find('>').unwrap() + 1;
    let close = rest[open..].find('<').unwrap() + open;
    &rest[open..close]
}

#[test]
fn the_page_follows_the_run_and_ends_with_its_counts() {
    let Some(path) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI must have chromium (.ci/run installs it)");
        eprintln!("chromium not found: skipping the dashboard check (install Debian's chromium to run it)");
        return;
    };
    let server = Server::start();
    let dir = TempDir::new("dashboard");
    let plan = plan(&dir, &server);
    // The run starts 2 s after planrun does, so the page is there before the first request.
    let start_at = (now_ms() + 2000).to_string();
    let mut run = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(["run", plan.to_str().unwrap(), "-o", "out.jtl", "--dashboard=127.0.0.1:0", "--start-at", &start_at])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start planrun");
    let mut lines = BufReader::new(run.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("planrun says where the dashboard is").unwrap();
        if let Some(url) = line.strip_prefix("planrun: dashboard on ") {
            break url.to_string();
        }
    };
    let rest_of_stderr = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    let shot = dir.join("dashboard.png");
    let page = browser(&path, &dir, "--dump-dom", &url, "profile-dom");
    let screenshot = browser(&path, &dir, &format!("--screenshot={}", shot.display()), &url, "profile-shot");

    let started = Instant::now();
    let mut children = [("planrun", run), ("chromium", page), ("chromium screenshot", screenshot)];
    for (what, child) in &mut children {
        while child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < Duration::from_secs(90), "{what} did not finish");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let [(_, run), (_, page), _] = children;
    let run = run.wait_with_output().unwrap();
    let run_err = rest_of_stderr.join().unwrap();
    assert_eq!(run.status.code(), Some(0), "planrun: {run_err}");
    let dom = String::from_utf8(page.wait_with_output().unwrap().stdout).unwrap();

    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(server.count(), 180, "3 users x 30 loops x 2 requests");
    assert_eq!(jtl.rows.len(), server.count());
    let mut per_label: HashMap<String, usize> = HashMap::new();
    for r in &jtl.rows {
        *per_label.entry(r["label"].clone()).or_default() += 1;
    }
    assert_eq!(by_id(&dom, "status"), "finished", "{dom}");
    assert_eq!(by_id(&dom, "plan"), "live page");
    assert_eq!(by_id(&dom, "final-total-samples"), jtl.rows.len().to_string(), "the page's TOTAL is the run's");
    assert_eq!(by_id(&dom, "final-total-errors"), "90", "every /status/503");
    assert_eq!(by_id(&dom, "requests"), "180", "the live counter reached the total");
    assert_eq!(by_id(&dom, "errors"), "90");
    for (label, n) in &per_label {
        let row = format!("<tr data-label=\"{label}\"><td class=\"l\">{label}</td><td>{n}</td>");
        assert!(dom.contains(&row), "the final table's {label} row shows {n}:\n{dom}");
    }
    assert!(dom.contains("PASS TOTAL: p95 &lt; 5s"), "thresholds so far:\n{dom}");
    assert!(dom.contains("id=\"report-link\""), "a link to save the report:\n{dom}");
    assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "a screenshot in {}", shot.display());
}

#[test]
fn an_address_in_use_stops_the_run_before_anything_is_sent() {
    let server = Server::start();
    let dir = TempDir::new("dashboard-in-use");
    let plan = plan(&dir, &server);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "x.jtl", &format!("--dashboard={addr}")]);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(stderr(&out).contains("the dashboard cannot listen on"), "{}", describe(&out));
    assert_eq!(server.count(), 0);
}
