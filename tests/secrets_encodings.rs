//! A secret value is masked in every encoding the plan's filters and planrun's encoders make of it (URL-encoded
//! both ways and as minijinja's `urlencode`, JSON-escaped, quoted, base64, base64 inside a longer text), in every
//! output (JTL, JSON lines, summaries, HTML reports, dry-run, plan errors) and in every message a hostile server
//! can fill with it (redirect errors, assertion failures); a secret that is the prefix of another leaves none of
//! it in view; one shorter than 4 characters is a plan error, so that hosts and ports stay whole.

use crate::common;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use base64::Engine as _;
use common::{describe, planrun, read_jtl, stderr, stdout, Server, TempDir};

/// A secret that every encoding changes: a space, quotes, a slash, a non-ASCII letter, `~+&'<\`; its base64
/// holds `+` and ends in `=`.
const SECRET: &str = "hunter 2\"Sup3rS3cret/ü~+&'<\\";

/// What `SECRET` looks like in each encoding, written out by hand rather than computed by the code under test.
const FORMS: &[&str] = &[
    "hunter 2\"Sup3rS3cret/ü~+&'<\\",                       // raw
    "hunter+2%22Sup3rS3cret%2F%C3%BC%7E%2B%26%27%3C%5C",    // form-urlencoded (query parameters)
    "hunter%202%22Sup3rS3cret%2F%C3%BC~%2B%26%27%3C%5C",    // RFC 3986
    "hunter%202%22Sup3rS3cret/%C3%BC%7E%2B%26%27%3C%5C",    // minijinja urlencode
    "hunter%202%22Sup3rS3cret/%C3%BC~+&%27%3C%5C",          // the URL parser's query
    "hunter 2\\\"Sup3rS3cret/ü~+&'<\\\\",                   // JSON and Rust debug escaping
    "hunter 2\\\"Sup3rS3cret/ü~+\\u0026\\u0027\\u003c\\\\", // minijinja tojson
    "aHVudGVyIDIiU3VwM3JTM2NyZXQvw7x+KyYnPFw=",             // base64
    "aHVudGVyIDIiU3VwM3JTM2NyZXQvw7x-KyYnPFw",              // base64, URL-safe, unpadded
    "aHVudGVyIDIiU3VwM3JTM2NyZXQvw7x%2BKyYnPFw%3D",         // base64 as a query parameter
];

/// Fails when `text` holds the secret in any form, or a piece of one: the plain part every text encoding
/// keeps, the base64 of it, or 8 characters of the base64 of `user:SECRET` past the `user:` part.
fn assert_no_leak(what: &str, text: &str) {
    for form in FORMS {
        assert!(!text.contains(form), "{what} holds {form:?}:\n{text}");
    }
    for piece in ["Sup3rS3cret", "hunter", "U3VwM3JTM2NyZXQ", "aHVudGVy"] {
        assert!(!text.contains(piece), "{what} holds {piece:?}:\n{text}");
    }
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{SECRET}"));
    for i in 8..basic.len() - 8 {
        let window = &basic[i..i + 8];
        assert!(!text.contains(window), "{what} holds {window:?} of base64(user:SECRET) {basic}:\n{text}");
    }
}

/// A raw TCP target that answers each request (on a fresh connection) with the `s` query parameter it was
/// sent, decoded, echoed back: `/echo` in its reason phrase, an `X-Echo` header and a JSON body `{"token": s}`;
/// `/ftp` as a redirect to `ftp://127.0.0.1/x?s` (percent-encoded); `/bad-location` as a redirect to an
/// unparsable URL holding `s` form-encoded. Anything else is `200 ok`. Counts the requests it read.
struct Echo {
    addr: std::net::SocketAddr,
    requests: Arc<AtomicU64>,
}

impl Echo {
    fn start() -> Echo {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the echo server");
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let counted = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let counted = counted.clone();
                std::thread::spawn(move || answer(stream, &counted));
            }
        });
        Echo { addr, requests }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn count(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

fn answer(mut stream: TcpStream, counted: &AtomicU64) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).into_owned();
    let body_len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while seen.len() < head_end + 4 + body_len {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    counted.fetch_add(1, Ordering::SeqCst);
    let target = head.split(' ').nth(1).unwrap_or("/").to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let s = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "s").map(|(_, v)| v.into_owned());
    let s = s.unwrap_or_default();
    let mut out: Vec<u8> = Vec::new();
    match path {
        "/echo" => {
            let body = format!("{{\"token\": {}}}", serde_json::Value::from(s.as_str()));
            out.extend_from_slice(format!("HTTP/1.1 200 {s}\r\nX-Echo: {s}\r\n").as_bytes());
            out.extend_from_slice(
                format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()).as_bytes(),
            );
            out.extend_from_slice(format!("Connection: close\r\n\r\n{body}").as_bytes());
        }
        "/ftp" => {
            let encoded = percent_encoding::utf8_percent_encode(&s, percent_encoding::NON_ALPHANUMERIC);
            let head = format!("HTTP/1.1 302 Found\r\nLocation: ftp://127.0.0.1/x?{encoded}\r\n");
            out.extend_from_slice(format!("{head}Content-Length: 0\r\nConnection: close\r\n\r\n").as_bytes());
        }
        "/bad-location" => {
            let encoded: String = url::form_urlencoded::byte_serialize(s.as_bytes()).collect();
            let head = format!("HTTP/1.1 302 Found\r\nLocation: http://[{encoded}/\r\n");
            out.extend_from_slice(format!("{head}Content-Length: 0\r\nConnection: close\r\n\r\n").as_bytes());
        }
        _ => out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"),
    }
    let _ = stream.write_all(&out);
}

/// A plan with one secret property, `pw` (written in the plan as a placeholder: each test sets it with
/// `-D pw=SECRET`, so that the plan's own text, quoted in error messages, never holds it), and `steps`.
fn secret_plan(base_url: &str, steps: &str) -> String {
    format!(
        r#"
name: secrets-encodings
properties:
  pw: {{ value: "placeholder-value", secret: true }}
defaults:
  base_url: "{base_url}"
variables:
  token: {{ value: "tok {{{{ vu }}}} V4riable", secret: true }}
thread_groups:
  - name: g
    threads: 2
    loops: 1
    steps:
{steps}
"#
    )
}

/// Requests that carry the secret in their URL, headers and bodies.
const SENDING_STEPS: &str = r#"
      - name: query-form
        request: { url: /ok, query: { pw: "{{ props.pw }}", b: "{{ props.pw | base64 }}" } }
      - name: urlencode
        request: { url: "/ok?u={{ props.pw | urlencode }}&t={{ token | urlencode }}" }
      - name: base64
        request: { url: "/ok?b={{ props.pw | base64 }}&c={{ props.pw | base64 | replace('+', '-') | replace('=', '') }}" }
      - name: basic
        request: { url: "/ok?a={{ ('user:' ~ props.pw) | base64 }}&j={{ props.pw | tojson | urlencode }}" }
      - name: raw-in-url
        request: { url: "/ok?r={{ props.pw }}" }
      - name: bad-scheme
        request: { url: "{{ 'ftp' }}://127.0.0.1/?s={{ props.pw }}" }
      - name: post-json
        request:
          method: POST
          url: /ok
          headers: { X-Token: "{{ props.pw | base64 }}", X-Raw: "{{ props.pw }}", X-Json: "{{ props.pw | tojson }}" }
          json: { pw: "{{ props.pw }}", list: [ "{{ props.pw }}", "{{ token }}" ] }
      - name: post-form
        request: { method: POST, url: /ok, form: { pw: "{{ props.pw }}", t: "{{ token }}" } }
"#;

/// Requests whose answers bring the secret back in messages.
const ECHO_STEPS: &str = r#"
      - name: echo-header
        request: { url: /echo, query: { s: "{{ props.pw }}" } }
        assert: [ { header: { name: X-Echo, equals: nope } } ]
      - name: echo-header-absent
        request: { url: /echo, query: { s: "{{ props.pw }}" } }
        assert: [ { header: { name: X-Echo, exists: false } } ]
      - name: echo-json
        request: { url: /echo, query: { s: "{{ props.pw }}" } }
        assert: [ { jsonpath: { path: "$.token", equals: nope } } ]
      - name: echo-expr
        request: { url: /echo, query: { s: "{{ props.pw }}" } }
        assert: [ { expr: "{{ response.headers['x-echo'] == 'nope' }}" } ]
      - name: ftp
        request: { url: /ftp, query: { s: "{{ props.pw }}" } }
      - name: bad-location
        request: { url: /bad-location, query: { s: "{{ props.pw }}" } }
"#;

fn arg(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn every_encoding_is_masked_in_every_result_file_and_report() {
    let echo = Echo::start();
    let dir = TempDir::new("secrets-encodings-run");
    let plan = dir.write("plan.yaml", secret_plan(&echo.url(), &format!("{SENDING_STEPS}{ECHO_STEPS}")));
    let (jtl, json, html, summary) =
        (dir.join("out.jtl"), dir.join("out.jsonl"), dir.join("report"), dir.join("summary.json"));
    let define = format!("pw={SECRET}");
    let out = planrun(
        dir.path(),
        [
            arg("run"),
            plan.as_os_str(),
            arg("-D"),
            arg(&define),
            arg("-o"),
            jtl.as_os_str(),
            arg("--json"),
            json.as_os_str(),
            arg("--report"),
            html.as_os_str(),
            arg("--summary-json"),
            summary.as_os_str(),
        ],
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", describe(&out));
    let rows = read_jtl(&jtl);
    // Every step once per user; `bad-scheme` never reaches the server. (`raw-in-url` does: the bytes no URL
    // may hold are percent-encoded, and the masks find the secret in the text percent-decoded.)
    assert_eq!(rows.rows.len(), 2 * 14, "{}", rows.text);
    assert_eq!(echo.count(), 2 * 13, "the server read every request but the unsendable one");

    for row in rows.labelled("query-form") {
        assert!(row["URL"].ends_with("/ok?pw=***&b=***"), "{row:?}");
    }
    for row in rows.labelled("urlencode") {
        assert!(row["URL"].ends_with("/ok?u=***&t=***"), "{row:?}");
    }
    for row in rows.labelled("base64") {
        assert!(row["URL"].ends_with("/ok?b=***&c=***"), "{row:?}");
    }
    for row in rows.labelled("raw-in-url") {
        assert!(row["URL"].ends_with("/ok?r=***"), "{row:?}");
    }
    for row in rows.labelled("bad-scheme") {
        assert!(
            row["responseMessage"]
                .contains("`ftp://127.0.0.1/?s=***` is not an http:// or https:// URL (request of step"),
            "{row:?}"
        );
    }
    for row in rows.labelled("echo-header") {
        assert!(row["failureMessage"].ends_with("header X-Echo expected \"nope\", got \"***\""), "{row:?}");
    }
    for row in rows.labelled("echo-header-absent") {
        assert!(row["failureMessage"].ends_with("expected to be absent, got \"***\""), "{row:?}");
    }
    for row in rows.labelled("echo-json") {
        assert!(row["failureMessage"].ends_with("$.token expected \"nope\", got \"***\""), "{row:?}");
    }
    for row in rows.labelled("ftp") {
        assert!(row["responseMessage"].contains("`ftp://127.0.0.1/x?***` refused"), "{row:?}");
    }
    for row in rows.labelled("bad-location") {
        assert!(row["responseMessage"].contains("Invalid redirect location `http://[***/`"), "{row:?}");
    }
    assert!(!rows.text.contains("tok 1 V4riable") && !rows.text.contains("tok%201%20V4riable"), "{}", rows.text);
    assert!(rows.rows.iter().all(|r| r["URL"].starts_with(&echo.url()) || r["URL"] == "null"), "{}", rows.text);

    assert_no_leak("the JTL", &rows.text);
    assert_no_leak("the JSON lines", &std::fs::read_to_string(&json).unwrap());
    assert_no_leak("the summary JSON", &std::fs::read_to_string(&summary).unwrap());
    assert_no_leak("the run's HTML report", &std::fs::read_to_string(html.join("index.html")).unwrap());
    assert_no_leak("the run's stdout", &stdout(&out));
    assert_no_leak("the run's stderr", &stderr(&out));

    for (input, name) in [(&jtl, "from-jtl"), (&json, "from-jsonl")] {
        let report_dir = dir.join(name);
        let rep = planrun(dir.path(), [arg("report"), input.as_os_str(), arg("-o"), report_dir.as_os_str()]);
        assert_eq!(rep.status.code(), Some(0), "{}", describe(&rep));
        let page = std::fs::read_to_string(report_dir.join("index.html")).unwrap();
        assert!(page.contains("***"), "the report shows the masked messages");
        assert_no_leak(&format!("`report {name}`"), &page);
        assert_no_leak(&format!("`report {name}` stdout"), &stdout(&rep));
    }
}

#[test]
fn dry_run_masks_every_encoding_in_urls_headers_and_bodies() {
    let server = Server::start();
    let dir = TempDir::new("secrets-encodings-dry-run");
    let plan = dir.write("plan.yaml", secret_plan(&server.url(), SENDING_STEPS));
    let define = format!("pw={SECRET}");
    let out = planrun(dir.path(), [arg("dry-run"), plan.as_os_str(), arg("-D"), arg(&define), arg("-n"), arg("8")]);
    // The ftp:// request cannot be rendered for any user: a plan problem, named on stderr.
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("is not an http:// or https:// URL"), "{}", describe(&out));
    assert_no_leak("dry-run stderr", &stderr(&out));
    let shown = stdout(&out);
    for want in [
        "/ok?pw=***&b=***",
        "/ok?u=***&t=***",
        "/ok?b=***&c=***",
        "(cannot render: `ftp://127.0.0.1/?s=***` is not an http:// or https:// URL)",
        "X-Token: ***",
        "X-Raw: ***",
        "X-Json: \"***\"",
        r#"{"pw":"***","list":["***","***"]}"#,
        "pw=***&t=***",
    ] {
        assert!(shown.contains(want), "dry-run shows {want:?}:\n{shown}");
    }
    assert_no_leak("dry-run", &shown);
    assert_eq!(server.count(), 0, "dry-run sends nothing");
}

#[test]
fn plan_errors_do_not_show_a_secret() {
    let dir = TempDir::new("secrets-encodings-errors");
    let plan = dir.write(
        "plan.yaml",
        r#"
name: secret-in-errors
properties:
  pw: { value: "placeholder-value", secret: true }
defaults:
  base_url: "ftp://{{ props.pw | urlencode }}"
thread_groups:
  - name: g
    threads: "{{ props.pw }}"
    duration: "{{ props.pw | base64 }}"
    steps:
      - name: s
        request: { url: /ok }
"#,
    );
    let define = format!("pw={SECRET}");
    for command in ["validate", "run", "dry-run"] {
        let out = planrun(dir.path(), [arg(command), plan.as_os_str(), arg("-D"), arg(&define)]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains("base_url `ftp://***` is not an http:// or https:// URL"), "{command}: {err}");
        assert!(err.contains("got `***`"), "{command}: {err}");
        assert_no_leak(&format!("`{command}` errors"), &err);
        assert_no_leak(&format!("`{command}` stdout"), &stdout(&out));
    }
}

#[test]
fn a_secret_that_starts_another_leaves_none_of_it() {
    let server = Server::start();
    let dir = TempDir::new("secrets-encodings-prefix");
    let plan = dir.write(
        "plan.yaml",
        format!(
            r#"
name: prefix
properties:
  short: {{ value: "Sup3r", secret: true }}
  long: {{ value: "Sup3r-Sup3rS3cret", secret: true }}
  left: {{ value: "abcd1234", secret: true }}
  right: {{ value: "1234wxyz", secret: true }}
defaults:
  base_url: "{}"
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: s
        request: {{ url: "/ok?p={{{{ props.long }}}}&q={{{{ props.short }}}}&o=abcd1234wxyz" }}
"#,
            server.url()
        ),
    );
    let jtl = dir.join("out.jtl");
    let out = planrun(dir.path(), [arg("run"), plan.as_os_str(), arg("-o"), jtl.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let rows = read_jtl(&jtl);
    assert_eq!((rows.rows.len(), server.count()), (1, 1));
    assert_eq!(rows.rows[0]["URL"], format!("{}/ok?p=***&q=***&o=***", server.url()), "{}", rows.text);
    let shown = stdout(&planrun(dir.path(), [arg("dry-run"), plan.as_os_str(), arg("-n"), arg("1")]));
    assert!(shown.contains("GET /ok?p=***&q=***&o=*** HTTP/1.1"), "{shown}");
}

#[test]
fn a_secret_shorter_than_four_characters_is_a_plan_error_and_hosts_stay_whole() {
    let server = Server::start();
    let dir = TempDir::new("secrets-encodings-short");
    let plan = |props: &str, vars: &str| {
        format!(
            "name: short\nproperties:\n{props}\nvariables:\n{vars}\ndefaults:\n  base_url: \"{}\"\nthread_groups:\n  \
             - name: g\n    threads: 2\n    loops: 1\n    steps:\n      - name: s\n        \
             request: {{ url: \"/ok?s={{{{ props.pw }}}}&v={{{{ v }}}}&n=1\" }}\n",
            server.url()
        )
    };
    let short_prop = dir.write("prop.yaml", plan("  pw: { value: \"1\", secret: true }", "  v: x"));
    let short_var = dir.write(
        "var.yaml",
        plan("  pw: { value: \"long-enough\", secret: true }", "  v: { value: \"{{ vu }}\", secret: true }"),
    );
    let cases: [(&std::path::Path, &[&str], &str); 3] = [
        (&short_prop, &[], "prop.yaml:3:"),
        (&short_prop, &["-D", "pw=Zx9"], "prop.yaml:3:"),
        (&short_var, &[], "var.yaml:5:"),
    ];
    for (file, extra, position) in cases {
        for command in ["validate", "run", "dry-run"] {
            let mut args = vec![arg(command), file.as_os_str()];
            args.extend(extra.iter().map(|a| arg(a)));
            let out = planrun(dir.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{command} {extra:?}: {}", describe(&out));
            let err = stderr(&out);
            assert!(err.contains("a secret has at least 4"), "{command}: {err}");
            assert!(err.contains(position), "{command}: the error points at the value: {err}");
            assert!(err.contains("help: a shorter secret cannot be masked"), "{command}: {err}");
            assert!(!err.contains("Zx9"), "{command}: the -D value is not shown: {err}");
        }
    }
    assert_eq!(server.count(), 0, "nothing was sent");

    let long = dir.write(
        "long.yaml",
        plan("  pw: { value: \"x9Qz\", secret: true }", "  v: { value: \"v-{{ vu }}-0.0.\", secret: true }"),
    );
    let jtl = dir.join("out.jtl");
    let out = planrun(dir.path(), [arg("run"), long.as_os_str(), arg("-o"), jtl.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let rows = read_jtl(&jtl);
    assert_eq!((rows.rows.len(), server.count()), (2, 2));
    for row in &rows.rows {
        assert_eq!(row["URL"], format!("{}/ok?s=***&v=***&n=1", server.url()), "{}", rows.text);
    }
}
