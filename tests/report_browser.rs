//! The HTML report as a person sees it: headless Chromium (Debian's `chromium`, which `.ci/run`
//! installs) opens it offline, takes a screenshot, and logs no console message and no failed fetch.
//! Where Chromium is missing the test says so and passes, except under CI (`CI` set), where it fails.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{chromium, planrun, TempDir};

#[test]
fn chromium_renders_the_report_offline_without_console_errors() {
    let Some(browser) = chromium() else {
        common::skip("Chromium", "PLANRUN_REQUIRE_CHROMIUM", "not on PATH (install Debian's chromium; .ci/run does)");
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

/// A script added to a copy of a page (the report itself runs none): once laid out, it writes how far the
/// widest table reaches and whether any table box has to scroll, into `#layout` for `--dump-dom`.
const MEASURE: &str = r#"<script>
addEventListener("load", () => {
  const view = document.documentElement.clientWidth;
  let right = 0, scrolled = [];
  for (const t of document.querySelectorAll("table")) right = Math.max(right, Math.ceil(t.getBoundingClientRect().right));
  for (const w of document.querySelectorAll(".wrap")) if (w.scrollWidth > w.clientWidth) scrolled.push(w.querySelector("th").textContent);
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = "view=" + view + " right=" + right + " scrolled=" + scrolled.join("|");
  document.body.appendChild(out);
});
</script>"#;

/// `view=W right=R scrolled=...` of `page` in a window `width` px wide.
fn layout(browser: &str, dir: &TempDir, page: &Path, width: u32) -> String {
    let html = std::fs::read_to_string(page).expect("the report");
    let measured = dir.write(&format!("measured-{width}.html"), html.replace("</body>", &format!("{MEASURE}</body>")));
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--dump-dom"])
        .arg(format!("--window-size={width},1000"))
        .arg(format!("--user-data-dir={}", dir.join(&format!("profile-{width}")).display()))
        .arg(format!("file://{}", measured.display()))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let at = dom.find("<pre id=\"layout\">").unwrap_or_else(|| panic!("the page was measured:\n{dom}"));
    let rest = &dom[at + "<pre id=\"layout\">".len()..];
    rest[..rest.find("</pre>").unwrap()].to_string()
}

/// A JTL with labels as they come (short, long without a space, Japanese) and wide figures: minute-long
/// samples, megabyte bodies.
fn wide_jtl(dir: &TempDir) -> std::path::PathBuf {
    let labels = [
        "HP-0".to_string(),
        format!("GET_/api/v1/catalogue/products/search?category=shoes&size=44&sort=price{}", "_x".repeat(30)),
        "購入手続きの確認ページを表示する".to_string(),
    ];
    let mut jtl = String::from(
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,\
         bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n",
    );
    for i in 0..300u64 {
        let label = &labels[(i % 3) as usize];
        let elapsed = 1 + (i * 7919) % 61_000;
        let ok = i % 7 != 0;
        jtl += &format!(
            "{},{elapsed},{label},{},{},g 1-1,text,{ok},,{},{},8,8,http://127.0.0.1/x,{elapsed},0,1\n",
            1_700_000_000_000 + i * 37,
            if ok { 200 } else { 503 },
            if ok { "OK" } else { "Service Unavailable" },
            2_000_000 + i,
            90_000 + i,
        );
    }
    dir.write("wide.jtl", jtl)
}

#[test]
fn the_report_tables_fit_the_window_at_1280_and_1920_px() {
    let Some(browser) = chromium() else {
        common::skip("Chromium", "PLANRUN_REQUIRE_CHROMIUM", "not on PATH (install Debian's chromium; .ci/run does)");
        return;
    };
    let dir = TempDir::new("report_layout");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/jtl/jenkinsci-performance-plugin__filewithtransactions.csv");
    for (name, jtl) in [("fixture", fixture), ("wide", wide_jtl(&dir))] {
        let out = planrun(dir.path(), ["report", jtl.to_str().unwrap(), "-o", name]);
        assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
        for width in [1280, 1920] {
            let facts = layout(&browser, &dir, &dir.join(name).join("index.html"), width);
            let number = |key: &str| -> u32 {
                let v = facts.split(' ').find_map(|f| f.strip_prefix(key)).unwrap_or_else(|| panic!("{facts}"));
                v.parse().unwrap_or_else(|_| panic!("{facts}"))
            };
            assert!(
                number("right=") <= number("view="),
                "{name} at {width} px: a table reaches past the window: {facts}"
            );
            assert!(facts.ends_with("scrolled="), "{name} at {width} px: a table has to be scrolled: {facts}");
        }
    }
}
