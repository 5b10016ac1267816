//! Request bodies arrive byte for byte as design.md says, with the right Content-Type and Content-Length, and
//! `planrun dry-run` shows exactly what a run then sends.

use crate::common;

use common::{planrun, run_ok, Recorded, Server, TempDir};

/// A plan with one group per request (`@REQ@` is replaced by each group's `request:` mapping).
fn plan(base: &str, groups: &[(&str, &str)]) -> String {
    let mut s = format!("name: bodies\ndefaults:\n  base_url: \"{base}\"\nthread_groups:\n");
    for (name, request) in groups {
        s.push_str(&format!(
            "  - name: {name}\n    threads: 1\n    loops: 1\n    steps:\n      - name: send\n        request:\n"
        ));
        for line in request.trim_matches('\n').lines() {
            s.push_str("          ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s
}

/// Runs a one-request plan and returns the one request the server received.
fn send_one(test: &str, request: &str, files: &[(&str, &[u8])]) -> Recorded {
    let server = Server::start();
    let dir = TempDir::new(test);
    for (name, bytes) in files {
        dir.write(name, bytes);
    }
    let plan = dir.write("plan.yaml", plan(&server.url(), &[("g", request)]));
    let (_, jtl) = run_ok(&dir, &plan, &["--seed", "5"]);
    assert_eq!(jtl.rows.len(), 1, "{}", jtl.text);
    assert_eq!(jtl.rows[0]["success"], "true", "{}", jtl.text);
    let received = server.requests();
    assert_eq!(received.len(), 1);
    let rec = received.into_iter().next().unwrap();
    assert_eq!(
        rec.header("content-length").map(|v| v.parse::<usize>().unwrap()),
        Some(rec.body.len()),
        "Content-Length = body length: {rec:?}"
    );
    assert_eq!(rec.headers_named("content-length").len(), 1, "one Content-Length: {rec:?}");
    rec
}

const FORM: &str = r#"
method: POST
url: /ok
form: { b: "x y/z&=", a: "é+1", vu: "{{ vu }}" }
"#;

#[test]
fn form_is_urlencoded_in_the_order_written() {
    let rec = send_one("bodies_form", FORM, &[]);
    assert_eq!(rec.method, "POST");
    assert_eq!(rec.header("content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(String::from_utf8_lossy(&rec.body), "b=x+y%2Fz%26%3D&a=%C3%A9%2B1&vu=1");
}

const MULTIPART: &str = r#"
method: POST
url: /ok
multipart:
  greeting: "hello {{ vu }}"
  upload: { file: data.bin, content_type: application/octet-stream }
"#;

const FILE: &[u8] = b"line one\r\nline two\x00\xff\xfe end";

#[test]
fn multipart_has_a_text_part_and_a_file_part_under_its_boundary() {
    let rec = send_one("bodies_multipart", MULTIPART, &[("data.bin", FILE)]);
    let ct = rec.header("content-type").expect("a Content-Type");
    let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap_or_else(|| panic!("Content-Type {ct}"));
    assert!(!boundary.is_empty() && boundary.len() <= 70, "boundary {boundary:?}");
    let parts = multipart_parts(&rec.body, boundary);
    assert_eq!(parts.len(), 2, "two parts in the order written");

    let (head, content) = &parts[0];
    assert_eq!(head, &["Content-Disposition: form-data; name=\"greeting\""]);
    assert_eq!(content, b"hello 1");

    let (head, content) = &parts[1];
    assert_eq!(
        head,
        &[
            "Content-Disposition: form-data; name=\"upload\"; filename=\"data.bin\"",
            "Content-Type: application/octet-stream"
        ]
    );
    assert_eq!(content, FILE, "the file's bytes, untouched");
}

/// Bodies on either side of the sizes where the engine stops copying a body after the request head (1 KiB
/// over plain TCP, where a larger one goes beside the head in one vectored write; 16 KiB over TLS), and one
/// far larger than the socket's buffers (sent over many partial writes), arrive byte for byte, each request
/// once, counted in sentBytes; on kept-alive connections and on a new connection per request.
#[test]
fn bodies_of_every_size_arrive_whole_and_counted() {
    // A multipart body is its file plus 188 bytes of parts and boundary.
    let sizes = [1, 800, 900, 16_000, 16_400, 8 << 20];
    for keep_alive in [true, false] {
        let server = Server::start();
        let dir = TempDir::new(&format!("bodies_every_size_{keep_alive}"));
        let mut groups = Vec::new();
        let mut files = Vec::new();
        for (i, size) in sizes.iter().enumerate() {
            let bytes: Vec<u8> = (0..*size).map(|k: usize| (k.wrapping_mul(31) ^ (k >> 9) ^ i) as u8).collect();
            dir.write(&format!("f{i}.bin"), &bytes);
            files.push(bytes);
            let request = format!(
                "method: POST\nurl: /ok?file={i}\nkeep_alive: {keep_alive}\n\
                 multipart:\n  upload: {{ file: f{i}.bin, content_type: application/octet-stream }}\n"
            );
            groups.push((format!("g{i}"), request));
        }
        let groups: Vec<(&str, &str)> = groups.iter().map(|(n, r)| (n.as_str(), r.as_str())).collect();
        let plan = dir.write("plan.yaml", plan(&server.url(), &groups).replace("loops: 1", "loops: 2"));
        let (_, jtl) = run_ok(&dir, &plan, &[]);
        assert_eq!(jtl.rows.len(), 2 * sizes.len(), "{}", jtl.text);
        assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
        let received = server.requests();
        assert_eq!(received.len(), jtl.rows.len(), "one request on the server per row");
        for rec in &received {
            let i: usize = rec.query()["file"].parse().unwrap();
            let ct = rec.header("content-type").expect("a Content-Type");
            let boundary = ct.strip_prefix("multipart/form-data; boundary=").expect("a boundary");
            let parts = multipart_parts(&rec.body, boundary);
            assert_eq!(parts.len(), 1, "one part of {} bytes", sizes[i]);
            assert!(parts[0].1 == files[i], "the file of {} bytes arrived whole", sizes[i]);
            assert_eq!(rec.header("content-length"), Some(rec.body.len().to_string().as_str()));
        }
        let sent: u64 = jtl.rows.iter().map(|r| common::num(r, "sentBytes")).sum();
        let raw: u64 = received.iter().map(Recorded::raw_len).sum();
        assert_eq!(sent, raw, "sentBytes counts each request's head and body once");
        assert_eq!(server.bytes_read(), raw, "nothing else crossed the wire");
        let expected = if keep_alive { sizes.len() } else { 2 * sizes.len() } as u64;
        assert_eq!(server.connections(), expected, "keep_alive: {keep_alive}");
    }
}

/// Splits a multipart body by RFC 7578 / 2046: `--B\r\n` part `\r\n--B\r\n` part ... `\r\n--B--\r\n`.
/// Returns each part's header lines and content.
fn multipart_parts(body: &[u8], boundary: &str) -> Vec<(Vec<String>, Vec<u8>)> {
    let first = format!("--{boundary}\r\n");
    let close = format!("\r\n--{boundary}--\r\n");
    assert!(
        body.starts_with(first.as_bytes()),
        "the body starts with the boundary: {:?}",
        String::from_utf8_lossy(body)
    );
    assert!(body.ends_with(close.as_bytes()), "the body ends with the closing boundary");
    let inner = &body[first.len()..body.len() - close.len()];
    let sep = format!("\r\n--{boundary}\r\n");
    let mut parts = Vec::new();
    let mut rest = inner;
    loop {
        let (part, next) = match find(rest, sep.as_bytes()) {
            Some(i) => (&rest[..i], Some(&rest[i + sep.len()..])),
            None => (rest, None),
        };
        let split = find(part, b"\r\n\r\n").expect("a part has headers and a blank line");
        let head = String::from_utf8(part[..split].to_vec()).unwrap().split("\r\n").map(str::to_string).collect();
        parts.push((head, part[split + 4..].to_vec()));
        match next {
            Some(n) => rest = n,
            None => break,
        }
    }
    parts
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

const JSON: &str = r#"
method: POST
url: /ok
json:
  a_sum: "{{ 1 + 2 }}"
  b_text: "vu {{ vu }}"
  c_list: [1, "{{ vu }}", "n{{ vu }}", 2.5]
  d_obj: { t: true, z: null, s: "{{ 'x' ~ 'y' }}" }
"#;

#[test]
fn json_keeps_the_type_of_a_single_expression() {
    let rec = send_one("bodies_json", JSON, &[]);
    assert_eq!(rec.header("content-type"), Some("application/json"));
    let value: serde_json::Value = serde_json::from_slice(&rec.body).expect("the body is JSON");
    assert_eq!(value["a_sum"], serde_json::json!(3), "{{{{ 1 + 2 }}}} is the number 3");
    assert!(value["a_sum"].is_u64());
    assert_eq!(value["b_text"], serde_json::json!("vu 1"));
    assert_eq!(value["c_list"], serde_json::json!([1, 1, "n1", 2.5]));
    assert_eq!(value["d_obj"], serde_json::json!({ "t": true, "z": null, "s": "xy" }));
    // Keys go out in the order the plan writes them.
    assert_eq!(
        String::from_utf8_lossy(&rec.body),
        r#"{"a_sum":3,"b_text":"vu 1","c_list":[1,1,"n1",2.5],"d_obj":{"t":true,"z":null,"s":"xy"}}"#
    );
}

const RAW: &str = r#"
method: PUT
url: /ok
body: "<sms to=\"{{ vu }}\">a, b\n</sms>"
content_type: "application/xml; charset=utf-8"
"#;

#[test]
fn raw_body_goes_as_written_with_its_content_type() {
    let rec = send_one("bodies_raw", RAW, &[]);
    assert_eq!(rec.method, "PUT");
    assert_eq!(rec.header("content-type"), Some("application/xml; charset=utf-8"));
    assert_eq!(String::from_utf8_lossy(&rec.body), "<sms to=\"1\">a, b\n</sms>");
}

#[test]
fn raw_body_without_content_type_sends_none() {
    let rec = send_one("bodies_raw_bare", "method: POST\nurl: /ok\nbody: \"just text {{ vu }}\"\n", &[]);
    assert_eq!(rec.header("content-type"), None, "{rec:?}");
    assert_eq!(rec.body, b"just text 1");
}

/// One request as `planrun dry-run` prints it.
struct Printed {
    title: String,
    line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Parses dry-run's output: `### <group> 1-1, iteration N: <step>` then the request head (CRLF lines, a blank
/// line) and exactly Content-Length bytes of body.
fn parse_dry_run(out: &[u8]) -> Vec<Printed> {
    let mut printed = Vec::new();
    let mut rest = out;
    while let Some(i) = find(rest, b"### ") {
        rest = &rest[i + 4..];
        let nl = find(rest, b"\n").unwrap();
        let title = String::from_utf8(rest[..nl].to_vec()).unwrap();
        rest = &rest[nl + 1..];
        let end = find(rest, b"\r\n\r\n").expect("a request head ends with a blank line");
        let head = String::from_utf8(rest[..end].to_vec()).unwrap();
        rest = &rest[end + 4..];
        let mut lines = head.split("\r\n");
        let line = lines.next().unwrap().to_string();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(": ").unwrap_or_else(|| panic!("header line {l:?}"));
                (n.to_string(), v.to_string())
            })
            .collect();
        let len = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse::<usize>().unwrap())
            .unwrap_or(0);
        let body = rest[..len].to_vec();
        rest = &rest[len..];
        printed.push(Printed { title, line, headers, body });
    }
    printed
}

#[test]
fn dry_run_prints_what_the_run_sends() {
    let server = Server::start();
    let dir = TempDir::new("bodies_dry_run");
    dir.write("data.bin", FILE);
    let with_random = r#"
method: POST
url: /ok
query: { kind: form, q: "{{ random_string(8) }}" }
form: { to: "+7{{ random_digits(10) }}", id: "{{ uuid() }}" }
"#;
    let groups = [
        ("form", with_random),
        ("multipart", &*MULTIPART.replace("url: /ok", "url: /ok\nquery: { kind: multipart }")),
        ("json", &*JSON.replace("url: /ok", "url: /ok\nquery: { kind: json }")),
        ("raw", &*RAW.replace("url: /ok", "url: /ok\nquery: { kind: raw }")),
    ];
    let plan = dir.write("plan.yaml", plan(&server.url(), &groups));

    let dry = planrun(
        dir.path(),
        ["dry-run".as_ref(), plan.as_os_str(), "-n".as_ref(), "1".as_ref(), "--seed".as_ref(), "11".as_ref()],
    );
    assert_eq!(dry.status.code(), Some(0), "{}", common::describe(&dry));
    assert_eq!(server.count(), 0, "dry-run sends nothing");
    let printed = parse_dry_run(&dry.stdout);
    assert_eq!(printed.len(), 4, "one request per group:\n{}", common::stdout(&dry));

    let (_, jtl) = run_ok(&dir, &plan, &["--seed", "11"]);
    assert_eq!(jtl.rows.len(), 4);
    let received = server.requests();
    assert_eq!(received.len(), 4);

    for (i, (p, (group, _))) in printed.iter().zip(groups.iter()).enumerate() {
        assert_eq!(p.title, format!("{group} {}-1, iteration 1: send", i + 1));
        let rec = received
            .iter()
            .find(|r| r.query().get("kind").map(String::as_str) == Some(group))
            .unwrap_or_else(|| panic!("no {group} request received"));
        assert_eq!(p.line, format!("{} {} HTTP/1.1", rec.method, rec.target), "{group}: request line");
        let printed_ct = p.headers.iter().find(|(n, _)| n == "Content-Type").map(|(_, v)| v.as_str());
        assert_eq!(printed_ct, rec.header("content-type"), "{group}: Content-Type");
        assert_eq!(p.body, rec.body, "{group}: body bytes");
        // Every header printed is a header sent, with the same value.
        for (n, v) in &p.headers {
            assert_eq!(rec.header(n), Some(v.as_str()), "{group}: header {n}");
        }
        assert_eq!(
            p.headers.len(),
            rec.headers.len(),
            "{group}: the same headers: {:?} vs {:?}",
            p.headers,
            rec.headers
        );
    }
}

#[test]
fn a_request_header_replaces_the_default_of_the_same_name() {
    let server = Server::start();
    let dir = TempDir::new("bodies_headers");
    let text = plan(&server.url(), &[("g", "url: /ok\nheaders: { user-agent: custom/1, X-Vu: \"{{ vu }}\" }\n")]);
    let plan = dir.write(
        "plan.yaml",
        text.replace("thread_groups:", "  headers: { User-Agent: planrun, X-Team: load }\nthread_groups:"),
    );
    run_ok(&dir, &plan, &[]);
    let rec = &server.requests()[0];
    assert_eq!(rec.headers_named("user-agent"), ["custom/1"], "{rec:?}");
    assert_eq!(rec.header("x-team"), Some("load"));
    assert_eq!(rec.header("x-vu"), Some("1"));
    assert_eq!(rec.header("host"), Some(server.url().trim_start_matches("http://")));
    assert_eq!(rec.header("content-length"), None, "a GET without a body has no Content-Length");
}

#[test]
fn contradicting_or_double_bodies_are_plan_errors_and_nothing_is_sent() {
    let server = Server::start();
    let dir = TempDir::new("bodies_plan_errors");
    let cases = [
        ("content-type", "method: POST\nurl: /ok\nheaders: { Content-Type: application/json }\nform: { a: \"1\" }\n"),
        ("two-bodies", "method: POST\nurl: /ok\nform: { a: \"1\" }\njson: { a: 1 }\n"),
        ("content-type-without-body", "method: POST\nurl: /ok\njson: { a: 1 }\ncontent_type: text/plain\n"),
    ];
    for (name, request) in cases {
        let plan = dir.write(&format!("{name}.yaml"), plan(&server.url(), &[("g", request)]));
        let jtl = dir.join(&format!("{name}.jtl"));
        let out = planrun(dir.path(), [std::ffi::OsStr::new("run"), plan.as_os_str(), "-o".as_ref(), jtl.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", common::describe(&out));
        assert!(common::stderr(&out).contains(&format!("{name}.yaml:")), "{name}: the error names the plan");
    }
    assert_eq!(server.count(), 0);
}

/// Every kind of JSON leaf, drawn from the users' generators in the order written: a body's bytes for a seed
/// are pinned below, so a change in how JSON bodies are built cannot change what a plan sends.
const JSON_KINDS: &str = r#"
method: POST
url: /ok
json:
  order: "{{ vu }}-{{ iteration }}"
  id: "{{ random_int(1, 999999) }}"
  neg: "{{random_int(-50,-10)}}"
  sku: "{{ random_string(12) }}"
  digits: "{{ random_digits(6) }}"
  quoted: "{{ random_string(9, 'a\"<>&') }}"
  backslash: '{{ random_string(3, "\\") }}'
  wide: "{{ random_string(3, 'éü') }}"
  uuid: "{{ uuid() }}"
  spaced: "  {{ random_int(1, 9) }}  "
  vu: "{{ vu }}"
  iteration: "{{ iteration }}"
  group: "{{ group }}"
  prop: "{{ props.label }}"
  props: "{{ props }}"
  sum: "{{ 1 + 2 }}"
  float: "{{ random_float(0, 1) }}"
  choice: "{{ random_choice(['x', 'y', 'z']) }}"
  list: "{{ [vu, 'a<b', none, true] }}"
  text: "n{{ vu }}-{{ random_string(4) }}"
  tab: "\t{{ random_string(2, 'x\"') }}\u0001é"
  filtered: "{{ random_string(5) | upper }}"
  "key \"q\" é": [1, -2.5, 1e300, null, true, false, "const \" \\ \n", [], {}]
  nested: { a: [{ b: "{{ random_int(1, 3) }}" }, "{{ random_string(3) }}"], c: { } }
"#;

#[test]
fn json_bodies_keep_their_bytes_for_a_seed() {
    let server = Server::start();
    let dir = TempDir::new("bodies_json_pinned");
    let plan = plan(&server.url(), &[("g", JSON_KINDS), ("h", JSON_KINDS)])
        .replace("loops: 1", "loops: 2")
        .replace("thread_groups:", "properties: { label: \"a\\\"b<c>\", n: 7 }\nthread_groups:");
    let plan = dir.write("plan.yaml", plan);
    let dry = planrun(
        dir.path(),
        ["dry-run".as_ref(), plan.as_os_str(), "-n".as_ref(), "2".as_ref(), "--seed".as_ref(), "5".as_ref()],
    );
    assert_eq!(dry.status.code(), Some(0), "{}", common::describe(&dry));
    let shown: Vec<String> =
        parse_dry_run(&dry.stdout).into_iter().map(|p| String::from_utf8(p.body).expect("UTF-8")).collect();
    assert_eq!(shown, JSON_KINDS_BODIES);

    // The run sends the same bodies.
    let (_, jtl) = run_ok(&dir, &plan, &["--seed", "5"]);
    assert_eq!(jtl.rows.len(), 4, "{}", jtl.text);
    assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
    let mut sent: Vec<String> =
        server.requests().into_iter().map(|r| String::from_utf8(r.body).expect("UTF-8")).collect();
    sent.sort();
    let mut want = JSON_KINDS_BODIES.map(String::from).to_vec();
    want.sort();
    assert_eq!(sent, want);
    for body in &sent {
        serde_json::from_str::<serde_json::Value>(body).expect("the body is JSON");
    }
}

/// The benchmark's 10 KB order (bench/plans/json-body.yaml), as dry-run prints its first requests for seed 1:
/// length and SHA-256.
#[test]
fn the_benchmark_json_body_keeps_its_bytes_for_a_seed() {
    let dir = TempDir::new("bodies_json_bench_pinned");
    let plan = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/plans/json-body.yaml");
    let dry = planrun(dir.path(), ["dry-run".as_ref(), plan.as_os_str(), "-n".as_ref(), "3".as_ref()]);
    assert_eq!(dry.status.code(), Some(0), "{}", common::describe(&dry));
    let printed = parse_dry_run(&dry.stdout);
    let digests: Vec<String> = printed
        .iter()
        .map(|p| {
            use sha2::Digest as _;
            let hash = sha2::Sha256::digest(&p.body);
            format!("{} {}", p.body.len(), hash.iter().map(|b| format!("{b:02x}")).collect::<String>())
        })
        .collect();
    assert_eq!(
        digests,
        [
            "10191 8841d32c01919607cc1db8e23d89f62fc1024164acbe888829a25e50f3c433df",
            "10182 1563348fc842c71f34307109631c1176ea42ba68ecc33805af04b3876987883b",
            "10186 f18ed09c485ad73513d415501a2b789c4c03174f978513abdf22065bf7b3acf0",
        ]
    );
}

/// What [`JSON_KINDS`] sends with seed 5: dry-run's first two requests of group `g`'s first user, then `h`'s.
const JSON_KINDS_BODIES: [&str; 4] = [
    r##"{"order":"1-1","id":925548,"neg":-46,"sku":"oDKO5A7GyT8c","digits":"755301","quoted":">\">&a\"aaa","backslash":"\\\\\\","wide":"üüé","uuid":"d86bbacf-983f-4795-af1b-9fa1ca9fab34","spaced":3,"vu":1,"iteration":1,"group":"g","prop":"a\"b<c>","props":{"label":"a\"b<c>","n":7},"sum":3,"float":0.1523421262611402,"choice":"z","list":[1,"a<b",null,true],"text":"n1-t4FB","tab":"\t\"\"\u0001é","filtered":"NHKRJ","key \"q\" é":[1,-2.5,1e+300,null,true,false,"const \" \\ \n",[],{}],"nested":{"a":[{"b":1},"9dP"],"c":{}}}"##,
    r##"{"order":"1-2","id":484657,"neg":-41,"sku":"ZKeHYOuBS0SD","digits":"992822","quoted":">>>>a>\"<\"","backslash":"\\\\\\","wide":"üüé","uuid":"b9714192-a7e1-45c3-bc7a-3290dcc9108e","spaced":4,"vu":1,"iteration":2,"group":"g","prop":"a\"b<c>","props":{"label":"a\"b<c>","n":7},"sum":3,"float":0.5743940560581435,"choice":"z","list":[1,"a<b",null,true],"text":"n1-veS1","tab":"\txx\u0001é","filtered":"HQFY2","key \"q\" é":[1,-2.5,1e+300,null,true,false,"const \" \\ \n",[],{}],"nested":{"a":[{"b":1},"mK1"],"c":{}}}"##,
    r##"{"order":"1-1","id":316728,"neg":-35,"sku":"Ck91a0rdewv3","digits":"704422","quoted":">\"&>><a&a","backslash":"\\\\\\","wide":"üéé","uuid":"61c97a36-b127-4b9b-96bf-b3618cd5e7fe","spaced":7,"vu":1,"iteration":1,"group":"h","prop":"a\"b<c>","props":{"label":"a\"b<c>","n":7},"sum":3,"float":0.4654065590122034,"choice":"x","list":[1,"a<b",null,true],"text":"n1-R6nS","tab":"\txx\u0001é","filtered":"N24FB","key \"q\" é":[1,-2.5,1e+300,null,true,false,"const \" \\ \n",[],{}],"nested":{"a":[{"b":2},"lbf"],"c":{}}}"##,
    r##"{"order":"1-2","id":769395,"neg":-16,"sku":"jK0qE9FrT74M","digits":"991004","quoted":"<a&aa<<&<","backslash":"\\\\\\","wide":"üéü","uuid":"a95c13d5-1ca2-414f-a788-5d1e25ca5717","spaced":2,"vu":1,"iteration":2,"group":"h","prop":"a\"b<c>","props":{"label":"a\"b<c>","n":7},"sum":3,"float":0.640143434397326,"choice":"y","list":[1,"a<b",null,true],"text":"n1-h70x","tab":"\tx\"\u0001é","filtered":"XMWXN","key \"q\" é":[1,-2.5,1e+300,null,true,false,"const \" \\ \n",[],{}],"nested":{"a":[{"b":2},"UUD"],"c":{}}}"##,
];
