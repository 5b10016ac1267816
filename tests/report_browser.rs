//! The HTML report as a person sees it: headless Chromium (Debian's `chromium`, which `.ci/run`
//! installs) opens it offline, takes a screenshot, and logs no console message and no failed fetch.
//! Where Chromium is missing the test says so and passes, except under CI (`CI` set), where it fails.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{chromium, planrun, TempDir};

#[test]
fn chromium_renders_the_report_offline_without_console_errors() {
    let Some(browser) = chromium() else {
        assert!(std::env::var_os("CI").is_none(), "CI must have chromium (.ci/run installs it)");
        eprintln!("chromium not found: skipping the browser check (install Debian's chromium to run it)");
        return;
    };
    let dir = TempDir::new("report_browser");
    let jtl = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jtl/jenkinsci-performance-plugin__filewithtransactions.csv");
    let out = planrun(dir.path(), ["report", jtl.to_str().unwrap(), "-o", "report"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let page = dir.join("report/index.html");
    let shot = dir.join("shot.png");
    let profile = dir.join("chromium-profile");
    let mut child = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    while child.try_wait().expect("wait for chromium").is_none() {
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = child.wait_with_output().expect("chromium's log").stderr;
    let log = String::from_utf8_lossy(&log);
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(size > 20_000, "a screenshot with content was taken ({size} bytes)\n{log}");
    let problems: Vec<&str> =
        log.lines().filter(|l| l.contains("CONSOLE") || l.contains("net::ERR_") || l.contains("Uncaught")).collect();
    assert!(problems.is_empty(), "the page logged:\n{}", problems.join("\n"));
}
