//! Debian's InfluxDB 1.x and Prometheus 2.x, each started on a free loopback port with its configuration and
//! data in a temp dir, stopped (by PID) when dropped; a plain HTTP/1.0 client to query them; and the Grafana
//! dashboard's queries. Each test file uses a part of it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server has to start answering.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The program's path, or `None` when it is not installed.
fn program(name: &str) -> Option<String> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())?;
    Some(found.display().to_string())
}

fn missing(name: &str, package: &str) -> Option<String> {
    let p = program(name);
    if p.is_none() {
        let why = format!("`{name}` is not on PATH (apt-get install {package}; .ci/run does)");
        let tool = if name == "influxd" { "InfluxDB" } else { "Prometheus" };
        crate::common::skip(tool, "PLANRUN_REQUIRE_LIVE", &why);
    }
    p
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().unwrap().port()
}

/// A server process, stopped by its PID when dropped.
pub struct Process {
    child: Child,
    /// Its HTTP port on 127.0.0.1.
    pub port: u16,
    log: std::path::PathBuf,
}

impl Process {
    fn spawn(cmd: &mut Command, port: u16, log: &Path, what: &str) -> Process {
        let out = std::fs::File::create(log).expect("create the server's log");
        let err = out.try_clone().expect("the server's log twice");
        let child =
            cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn().unwrap_or_else(|e| panic!("start {what}: {e}"));
        Process { child, port, log: log.to_path_buf() }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Waits until GET `path` answers `status`.
    fn wait_ready(&mut self, path: &str, status: u16) {
        let started = Instant::now();
        loop {
            if let Ok((s, _)) = get(self.port, path) {
                if s == status {
                    return;
                }
            }
            if let Ok(Some(exit)) = self.child.try_wait() {
                panic!("the server exited ({exit}):\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
            }
            assert!(
                started.elapsed() < READY_WITHIN,
                "the server did not answer {path} within {READY_WITHIN:?}:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `influxd` with its meta, data and WAL in `dir`, HTTP on a free port; `None` when it is not installed.
pub fn influxdb(dir: &Path) -> Option<Process> {
    let influxd = missing("influxd", "influxdb")?;
    let (http, rpc) = (free_port(), free_port());
    let d = dir.display();
    let config = format!(
        "reporting-disabled = true\nbind-address = \"127.0.0.1:{rpc}\"\n\
         [meta]\n  dir = \"{d}/meta\"\n  logging-enabled = false\n\
         [data]\n  dir = \"{d}/data\"\n  wal-dir = \"{d}/wal\"\n  query-log-enabled = false\n\
         [http]\n  bind-address = \"127.0.0.1:{http}\"\n  log-enabled = false\n\
         [monitor]\n  store-enabled = false\n\
         [continuous_queries]\n  enabled = false\n"
    );
    let path = dir.join("influxdb.conf");
    std::fs::write(&path, config).expect("write influxdb.conf");
    let mut p =
        Process::spawn(Command::new(influxd).arg("-config").arg(&path), http, &dir.join("influxd.log"), "influxd");
    p.wait_ready("/ping", 204);
    Some(p)
}

/// `prometheus` with the remote-write receiver, its TSDB in `dir`, on a free port; `None` when it is not
/// installed.
pub fn prometheus(dir: &Path) -> Option<Process> {
    let prometheus = missing("prometheus", "prometheus")?;
    let port = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(&config, "global:\n  scrape_interval: 1m\n").expect("write prometheus.yml");
    let mut cmd = Command::new(prometheus);
    cmd.arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--web.enable-remote-write-receiver");
    let mut p = Process::spawn(&mut cmd, port, &dir.join("prometheus.log"), "prometheus");
    p.wait_ready("/-/ready", 200);
    Some(p)
}

/// GET `path` over HTTP/1.0 (so the answer is never chunked): the status and the body.
pub fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    Ok((status, body))
}

/// A query's URL-encoded form.
pub fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs an InfluxQL query; the JSON answer.
pub fn influxql(db: &Process, database: &str, q: &str) -> serde_json::Value {
    let (status, body) = get(db.port, &format!("/query?db={database}&q={}", encode(q))).expect("query influxdb");
    assert_eq!(status, 200, "{q}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{q}: {e}: {body}"))
}

/// Runs a PromQL instant query; the JSON answer's `data.result`.
pub fn promql(db: &Process, q: &str) -> Vec<serde_json::Value> {
    let (status, body) = get(db.port, &format!("/api/v1/query?query={}", encode(q))).expect("query prometheus");
    assert_eq!(status, 200, "{q}: {body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{q}: {e}: {body}"));
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

/// deploy/grafana/planrun.json, parsed.
pub fn dashboard() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/planrun.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The dashboard's queries for one data source (`influxdb` or `prometheus`), with Grafana's variables
/// replaced as Grafana would for the last hour and the plan `application`.
pub fn dashboard_queries(kind: &str, application: &str) -> Vec<String> {
    let d = dashboard();
    let mut out = Vec::new();
    for panel in d["panels"].as_array().into_iter().flatten() {
        for t in panel["targets"].as_array().into_iter().flatten() {
            if t["datasource"]["type"] != kind {
                continue;
            }
            let q = t["query"].as_str().or(t["expr"].as_str()).expect("a target has a query");
            out.push(
                q.replace("$application", application)
                    .replace("$timeFilter", "time > now() - 1h")
                    .replace("$__interval", "1s")
                    .replace("$__rate_interval", "1m"),
            );
        }
    }
    out
}
