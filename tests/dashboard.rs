//! `planrun run --dashboard`: headless Chromium (Debian's `chromium`, which `.ci/run` installs) loads the page
//! while the run goes on, and the counts the page shows at the end must be the run's: the server's count,
//! the JTL's rows, the summary's. A screenshot is kept in the test's directory. Where Chromium is missing the
//! test says so and passes, except under CI (`CI` set), where it fails.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{chromium, describe, now_ms, planrun, read_jtl, stderr, Server, TempDir};

/// A label longer than a legend's slot, in Japanese.
const LONG_LABEL: &str = "失敗する要求_a_label_much_longer_than_a_chart_legend_has_room_for_in_one_slot";

/// Two labels, 3 users, 30 iterations each.
fn plan(dir: &TempDir, server: &Server) -> std::path::PathBuf {
    dir.write(
        "plan.yaml",
        format!(
            "name: live page\ndefaults: {{ base_url: \"{}\" }}\nthresholds:\n  total: [\"p95 < 5s\"]\n\
             thread_groups:\n  - name: g\n    threads: 3\n    loops: 30\n    think_time: 30ms\n    steps:\n      \
             - name: send\n        request: {{ url: /ok }}\n      - name: {LONG_LABEL}\n        request: {{ url: /status/503 }}\n",
            server.url()
        ),
    )
}

/// `planrun run PLAN ARGS --dashboard=127.0.0.1:0` started, the dashboard's URL, and a thread collecting the
/// rest of its stderr.
fn with_dashboard(
    dir: &TempDir,
    plan: &std::path::Path,
    args: &[&str],
) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut run = Command::new(env!("CARGO_BIN_EXE_planrun"))
        .arg("run")
        .arg(plan)
        .args(args)
        .arg("--dashboard=127.0.0.1:0")
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
    let rest = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    (run, url, rest)
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
        common::skip("Chromium", "PLANRUN_REQUIRE_CHROMIUM", "not on PATH (install Debian's chromium; .ci/run does)");
        return;
    };
    let server = Server::start();
    let dir = TempDir::new("dashboard");
    let plan = plan(&dir, &server);
    // The run starts 2 s after planrun does, so the page is there before the first request.
    let start_at = (now_ms() + 2000).to_string();
    let (run, url, rest_of_stderr) = with_dashboard(&dir, &plan, &["-o", "out.jtl", "--start-at", &start_at]);
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
    assert_eq!(by_id(&dom, "users"), "0", "nobody is active once the run is over");
    assert_eq!(by_id(&dom, "rps"), "0", "nothing is sent once the run is over");
    // Totals and last-second figures sit under their own headings, never side by side unnamed.
    assert!(dom.contains("colspan=\"2\">So far</th>") && dom.contains("colspan=\"5\">Last second</th>"), "{dom}");
    // Each label has a legend entry of its own in each chart, laid out by the page's flow (never drawn at a
    // fixed place in the chart, where long labels overlap), with the whole label as its title.
    for legend in ["legend-rps", "legend-p95"] {
        let at = dom.find(&format!("id=\"{legend}\">")).unwrap_or_else(|| panic!("no #{legend}:\n{dom}"));
        let items = &dom[at..at + dom[at..].find("</div>").unwrap()];
        for label in per_label.keys() {
            assert!(items.contains(&format!("<span title=\"{label}\">")), "{legend} names {label}:\n{items}");
        }
    }
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

/// Waits for planrun to end (a guard against hangs only) and returns its output.
fn finish(mut run: Child) -> Output {
    let started = Instant::now();
    while run.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = run.kill();
            panic!("planrun did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    run.wait_with_output().unwrap()
}

/// The head (status line and headers) of the answer to `request`, sent on a connection of its own.
fn ask(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect to the dashboard");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).expect("the dashboard answers");
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got);
    text[..text.find("\r\n\r\n").unwrap_or(text.len())].to_string()
}

#[test]
fn the_dashboard_answers_only_get_and_head_addressed_to_itself() {
    let server = Server::start();
    let dir = TempDir::new("dashboard-hosts");
    let plan = plan(&dir, &server);
    // The run would start in an hour: the dashboard is up meanwhile, and planrun is stopped once checked.
    let start_at = (now_ms() + 3_600_000).to_string();
    let (mut run, url, rest) = with_dashboard(&dir, &plan, &["-o", "out.jtl", "--start-at", &start_at]);
    let addr = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let port = addr.rsplit(':').next().unwrap().to_string();
    let ask_as = |method: &str, target: &str, host: &str| {
        ask(
            &addr,
            &format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        )
    };
    for host in [addr.clone(), format!("localhost:{port}"), format!("[::1]:{port}"), "localhost".into()] {
        for method in ["GET", "HEAD"] {
            let head = ask_as(method, "/", &host);
            assert!(head.starts_with("HTTP/1.1 200 "), "{method} / as {host}: {head}");
        }
    }
    let head = ask_as("HEAD", "/events", &addr);
    assert!(head.starts_with("HTTP/1.1 200 ") && head.contains("text/event-stream"), "{head}");
    // A page whose own name was rebound to 127.0.0.1 sends that name.
    for host in [format!("evil.example:{port}"), format!("127.0.0.1.nip.io:{port}"), format!("192.0.2.7:{port}")] {
        for target in ["/", "/events", "/nothing"] {
            let head = ask_as("GET", target, &host);
            assert!(head.starts_with("HTTP/1.1 421 "), "GET {target} as {host}: {head}");
        }
    }
    let head = ask(&addr, "GET / HTTP/1.0\r\n\r\n");
    assert!(head.starts_with("HTTP/1.0 421 ") || head.starts_with("HTTP/1.1 421 "), "no Host: {head}");
    let head = ask_as("GET", &format!("http://evil.example:{port}/"), &addr);
    assert!(head.starts_with("HTTP/1.1 421 "), "a request target naming another host: {head}");
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE", "OPTIONS", "BREW"] {
        for target in ["/", "/events", "/nothing"] {
            let head = ask_as(method, target, &addr);
            assert!(head.starts_with("HTTP/1.1 405 "), "{method} {target}: {head}");
            assert!(head.to_ascii_lowercase().contains("\r\nallow: get, head"), "{method} {target}: {head}");
        }
    }
    run.kill().expect("stop planrun");
    run.wait().unwrap();
    rest.join().unwrap();
    assert_eq!(server.count(), 0, "the run never started");
}

/// Connects to `addr` with a small receive buffer (so that a page that never reads is soon full) and asks
/// for the events; the connection is returned unread.
fn page_that_never_reads(rt: &tokio::runtime::Runtime, addr: std::net::SocketAddr) -> TcpStream {
    let stream = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(2048).unwrap();
        socket.connect(addr).await.expect("connect to the dashboard")
    });
    let mut stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.write_all(format!("GET /events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    stream
}

#[test]
fn pages_that_do_not_read_are_closed_and_open_connections_are_bounded() {
    const PAGES: u64 = 150;
    let server = Server::start();
    let dir = TempDir::new("dashboard-slow-pages");
    // 40 labels of 1,000 characters: each second's event is about 42 KB, so a few seconds of history fill
    // what the kernel and the server buffer for a page that never reads.
    let steps: String = (0..40)
        .map(|i| format!("      - name: {}{i:02}\n        request: {{ url: /ok }}\n", "x".repeat(1000)))
        .collect();
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: slow pages\ndefaults: {{ base_url: \"{}\" }}\nthresholds:\n  total: [\"p95 < 5s\"]\n\
             thread_groups:\n  - name: g\n    threads: 1\n    duration: 16s\n    loops: 1000\n    \
             think_time: 10ms\n    steps:\n{steps}",
            server.url()
        ),
    );
    let (run, url, rest) = with_dashboard(&dir, &plan, &["-o", "out.jtl"]);
    let addr: std::net::SocketAddr = url.trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    // A page that reads: once it has seen four seconds, the others connect and get those four at once.
    let mut reader = TcpStream::connect(addr).unwrap();
    reader.write_all(format!("GET /events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(reader);
    let mut seconds = 0;
    while seconds < 4 {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the events end early");
        seconds += usize::from(line == "event: second\n");
    }
    let read_all = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        rest
    });
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    let pages: Vec<TcpStream> = (0..PAGES).map(|_| page_that_never_reads(&rt, addr)).collect();
    let out = finish(run);
    let err = rest.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{err}");
    drop(pages);
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), server.count());
    assert!(read_all.join().unwrap().contains("event: end\n"), "the page that reads gets every event to the end");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("planrun: dashboard: "))
        .unwrap_or_else(|| panic!("planrun counts the pages it closed and the connections it refused:\n{err}"));
    let numbers: Vec<u64> = line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    let [served, dropped, refused, most] = numbers[..] else { panic!("{line}") };
    assert!(most < PAGES, "{line}");
    assert_eq!(served + refused, PAGES + 1, "each connection was served or refused: {line}");
    assert_eq!(served, most, "as many served as may be open at once, none closing before the others came: {line}");
    assert_eq!(dropped, served - 1, "every page that never read was closed, the one that read was not: {line}");
}
