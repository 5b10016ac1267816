//! `planrun import` of browser recordings (HAR): every recording of tests/fixtures/har (Chrome, Firefox,
//! Safari, Charles and Insomnia saves from mitmproxy's test data, and planrun's own shop.har) converts,
//! matches its snapshot and validates; run against a server that replays the recorded responses, the
//! imported plan sends the recorded requests, byte for byte, in order, values a response gave extracted from
//! the replayed response; bad input is exit 2 with its line and column.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::import_corpus::{self, converts_matches_its_snapshot_and_validates};
use common::{describe, planrun, read_jtl, stderr, stdout, TempDir};
use serde_json::Value;

fn fixtures() -> PathBuf {
    import_corpus::fixtures("har")
}

fn recordings() -> Vec<PathBuf> {
    import_corpus::corpus("har", |p| {
        p.extension().is_some_and(|e| e == "har") && !p.to_string_lossy().contains("broken")
    })
}

#[test]
fn every_recording_converts_matches_its_snapshot_and_validates() {
    converts_matches_its_snapshot_and_validates(&recordings(), |f| f.with_extension("yaml"));
}

/// One request as the replay server read it.
#[derive(Debug, Clone, PartialEq)]
struct Got {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// A server that answers each request with the recorded response of the same method and target (the first
/// not yet given), and records what it got.
struct Replay {
    port: u16,
    got: Arc<Mutex<Vec<Got>>>,
}

type Answers = Arc<Mutex<HashMap<(String, String), Vec<Vec<u8>>>>>;

impl Replay {
    fn start(answers: HashMap<(String, String), Vec<Vec<u8>>>) -> Replay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let answers: Answers = Arc::new(Mutex::new(answers));
        let g = got.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (g, a) = (g.clone(), answers.clone());
                std::thread::spawn(move || serve(stream, &g, &a));
            }
        });
        Replay { port, got }
    }
}

fn serve(stream: TcpStream, got: &Mutex<Vec<Got>>, answers: &Answers) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut out = stream.try_clone().expect("clone");
    let mut r = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            if let Some((n, v)) = h.trim_end().split_once(':') {
                headers.push((n.to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let len: usize =
            headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let answer = {
            let mut a = answers.lock().unwrap();
            a.get_mut(&(method.clone(), target.clone())).and_then(|v| (!v.is_empty()).then(|| v.remove(0)))
        };
        got.lock().unwrap().push(Got { method, target, headers, body });
        let answer = answer.unwrap_or_else(|| b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec());
        if out.write_all(&answer).is_err() {
            return;
        }
    }
}

/// The recorded response of an entry as bytes on the wire.
fn response(entry: &Value) -> Vec<u8> {
    let r = &entry["response"];
    let status = r["status"].as_u64().filter(|s| (100..600).contains(s)).unwrap_or(200);
    let text = r["content"]["text"].as_str().unwrap_or("");
    let body = if r["content"]["encoding"].as_str() == Some("base64") { Vec::new() } else { text.as_bytes().to_vec() };
    let mut head = format!("HTTP/1.1 {status} Recorded\r\nContent-Length: {}\r\n", body.len());
    if let Some(mime) = r["content"]["mimeType"].as_str().filter(|m| !m.is_empty()) {
        head.push_str(&format!("Content-Type: {mime}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend(body);
    out
}

/// Path and query of a URL, without its fragment.
fn target(url: &str) -> String {
    let after = url.split_once("://").map(|(_, r)| r).unwrap_or("");
    let t = after.find(['/', '?']).map(|i| &after[i..]).unwrap_or("/");
    let t = t.split('#').next().unwrap_or("/");
    if t.starts_with('/') {
        t.to_string()
    } else {
        format!("/{t}")
    }
}

#[test]
fn an_imported_recording_sends_the_recorded_requests_to_a_replaying_server() {
    for har in recordings() {
        let stem = har.file_stem().and_then(|s| s.to_str()).expect("a name").to_string();
        let doc: Value =
            serde_json::from_str(std::fs::read_to_string(&har).unwrap().trim_start_matches('\u{feff}')).expect("a HAR");
        let dir = TempDir::new("import-har-replay");
        let plan = dir.join("plan.yaml");
        // Without the recording's pauses, which run to minutes.
        let out = planrun(
            dir.path(),
            ["import".as_ref(), har.as_os_str(), "--no-think".as_ref(), "-o".as_ref(), plan.as_os_str()],
        );
        assert_eq!(out.status.code(), Some(0), "{stem}: {}", describe(&out));
        let yaml = std::fs::read_to_string(&plan).unwrap();
        // The entries the plan kept are the ones whose target it names, in the recording's order.
        let entries: Vec<&Value> = doc["log"]["entries"].as_array().unwrap().iter().collect();
        let kept: Vec<&Value> = entries
            .into_iter()
            .filter(|e| {
                let t = target(e["request"]["url"].as_str().unwrap_or(""));
                yaml.contains(&format!("url: {t}\n"))
                    || yaml.contains(&format!("url: \"{t}\""))
                    || yaml.contains(&format!("}}{t}\""))
                    || yaml.contains(&format!("url: {}", t.split('?').next().unwrap()))
            })
            .collect();
        let mut answers: HashMap<(String, String), Vec<Vec<u8>>> = HashMap::new();
        for e in &kept {
            let key =
                (e["request"]["method"].as_str().unwrap().to_string(), target(e["request"]["url"].as_str().unwrap()));
            answers.entry(key).or_default().push(response(e));
        }
        let server = Replay::start(answers);
        let local = format!("http://127.0.0.1:{}", server.port);
        // Every origin property points at the replaying server.
        let mut args: Vec<String> =
            vec!["run".into(), plan.to_str().unwrap().into(), "-o".into(), "out.jtl".into(), "--quiet".into()];
        for line in yaml.lines() {
            let t = line.trim_start();
            if let Some((k, v)) = t.split_once(": ") {
                if (k == "base_url" && v.starts_with("http")) || k.ends_with("_url") && v.starts_with("http") {
                    args.extend(["-D".into(), format!("{k}={local}")]);
                }
            }
        }
        let run = planrun(dir.path(), &args);
        assert!(matches!(run.status.code(), Some(0 | 1)), "{stem}: {}", describe(&run));
        let got = server.got.lock().unwrap().clone();
        let rows = read_jtl(&dir.join("out.jtl")).rows;
        // A page's transaction writes a row of its own.
        let request_rows =
            rows.iter().filter(|r| !r["responseMessage"].starts_with("Number of samples in transaction")).count();
        assert_eq!(request_rows, got.len(), "{stem}: rows = the server's count");
        assert_eq!(got.len(), kept.len(), "{stem}: one request per kept entry: {got:?}");
        for (e, g) in kept.iter().zip(&got) {
            let req = &e["request"];
            assert_eq!(g.method, req["method"].as_str().unwrap(), "{stem}");
            assert_eq!(g.target, target(req["url"].as_str().unwrap()), "{stem}");
            let recorded_body = req["postData"]["text"].as_str().unwrap_or("");
            assert_eq!(String::from_utf8_lossy(&g.body), recorded_body, "{stem}: {} {}", g.method, g.target);
            for h in req["headers"].as_array().unwrap() {
                let name = h["name"].as_str().unwrap().to_ascii_lowercase();
                let skip = name.starts_with(':')
                    || [
                        "host",
                        "content-length",
                        "connection",
                        "cookie",
                        "keep-alive",
                        "te",
                        "upgrade",
                        "proxy-connection",
                    ]
                    .contains(&name.as_str());
                if skip {
                    continue;
                }
                let sent: Vec<&str> = g.headers.iter().filter(|(n, _)| *n == name).map(|(_, v)| v.as_str()).collect();
                assert_eq!(sent, [h["value"].as_str().unwrap()], "{stem}: {name} of {} {}", g.method, g.target);
            }
        }
    }
}

#[test]
fn correlated_values_secrets_and_left_out_assets_are_said() {
    let dir = TempDir::new("import-har-said");
    let out = planrun(dir.path(), ["import".as_ref(), fixtures().join("shop.har").as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let (yaml, err) = (stdout(&out), stderr(&out));
    assert!(
        err.contains("note: left out: 1 static assets (images, fonts, styles, scripts), 1 to analytics hosts"),
        "{err}"
    );
    assert!(err.contains("`token` extracted from entry 4 and sent by 2 later request(s)"), "{err}");
    assert!(
        yaml.contains("jsonpath: $.user.token") && yaml.contains("Authorization: \"Bearer {{ token }}\""),
        "{yaml}"
    );
    assert!(yaml.contains("body: \"csrf_token={{ csrf_token }}&qty=2\""), "{yaml}");
    // The session cookie the server set is the user's jar's; the one from before the recording is secret.
    assert!(!yaml.contains("s3ss10n-1d"), "{yaml}");
    for secret in ["pref=dark-mode-on", "s3cret%21pass", "n3w-s3cret"] {
        assert_eq!(yaml.matches(secret).count(), 1, "{secret} only in its property:\n{yaml}");
        let at = yaml.find(&format!("value: {secret}")).expect("a property");
        assert!(yaml[at..].lines().nth(1).is_some_and(|l| l.trim() == "secret: true"), "{yaml}");
    }
    // Pauses between entries are think steps; between pages outside the page's transaction.
    assert!(
        yaml.contains("- think: 2480ms") && yaml.contains("      - think: 1470ms\n      - transaction: Checkout"),
        "{yaml}"
    );
    let out = planrun(
        dir.path(),
        ["import".as_ref(), fixtures().join("shop.har").as_os_str(), "--keep-static".as_ref(), "--no-think".as_ref()],
    );
    let yaml = stdout(&out);
    assert!(yaml.contains("/img/logo.png") && !yaml.contains("think:"), "{yaml}");
    let out = planrun(
        dir.path(),
        [
            "import".as_ref(),
            fixtures().join("shop.har").as_os_str(),
            "--include-host".as_ref(),
            "api.shop.example".as_ref(),
        ],
    );
    assert_eq!(stdout(&out).matches("request:").count(), 1, "{}", describe(&out));
}

#[test]
fn bad_recordings_are_exit_2_with_line_and_column() {
    let dir = TempDir::new("import-har-bad");
    let broken = fixtures().join("mitmproxy__brokenfile.har");
    let out = planrun(dir.path(), ["import".as_ref(), broken.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("5:1: not a HAR file"), "{}", describe(&out));
    for (name, text, expected) in [
        ("cut.har", "{\"log\": {\"entries\": [", "1:21: not a HAR file"),
        ("nolog.har", "{\"entries\": []}", "1:1: not a HAR file: no `log` object"),
        ("empty.har", "{\"log\": {\"entries\": []}}", "nothing to convert"),
        ("wrong.har", "{\"log\": {\"entries\": 3}}", "`log.entries` is not a list"),
    ] {
        let file = dir.write(name, text);
        let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", describe(&out));
        assert!(stderr(&out).contains(expected), "{name}: {}", describe(&out));
        assert!(!stderr(&out).contains("panicked") && out.stdout.is_empty(), "{name}");
    }
    // A filter that is no regular expression is the command line's fault: no place in the file.
    let shop = fixtures().join("shop.har");
    let out = planrun(dir.path(), ["import".as_ref(), shop.as_os_str(), "--exclude".as_ref(), "[".as_ref()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("--exclude `[` is not a regular expression") && !err.contains("0:0"), "{err}");
    let deep = format!("{{\"log\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let file = dir.write("deep.har", deep);
    let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", describe(&out));
}
