//! Each virtual user keeps its own cookie jar (or none); redirects are followed within one sample, or not.

use crate::common;

use common::{num, run_ok, LoadRun, Recorded, Server, TempDir};

fn plan(base: &str, defaults: &str, threads: u32, loops: u32, ramp_up: &str, steps: &str) -> String {
    let group = format!("    ramp_up: {ramp_up}");
    LoadRun::new("cr", base).defaults(defaults).users(threads, loops).group(&group).steps(steps).yaml()
}

const COOKIE_STEPS: &str = r#"      - name: set
        request:
          url: /set-cookie
          query: { vu: "{{ vu }}", it: "{{ iteration }}" }
      - name: echo
        request:
          url: /echo-cookie
          query: { vu: "{{ vu }}", it: "{{ iteration }}" }
"#;

fn find<'a>(reqs: &'a [Recorded], path: &str, vu: u32, it: u32) -> &'a Recorded {
    reqs.iter()
        .find(|r| r.path() == path && r.query()["vu"] == vu.to_string() && r.query()["it"] == it.to_string())
        .unwrap_or_else(|| panic!("no {path} request from vu {vu} iteration {it}"))
}

#[test]
fn each_user_keeps_its_own_cookie_jar() {
    let server = Server::start();
    let dir = TempDir::new("cookies_jar");
    // The second user starts 300 ms after the first, when the first holds its cookie.
    let text = plan(&server.url(), "  cookies: true\n", 2, 2, "600ms", COOKIE_STEPS);
    let plan = dir.write("plan.yaml", text);
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 8);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 8);

    for vu in 1..=2 {
        let first = find(&reqs, "/set-cookie", vu, 1);
        assert_eq!(first.header("cookie"), None, "vu {vu}'s first request carries a cookie it never got: {first:?}");
        assert_eq!(find(&reqs, "/echo-cookie", vu, 1).header("cookie"), Some("session=abc123"), "vu {vu}");
        assert_eq!(find(&reqs, "/set-cookie", vu, 2).header("cookie"), Some("session=abc123"), "vu {vu}");
        assert_eq!(find(&reqs, "/echo-cookie", vu, 2).header("cookie"), Some("session=abc123"), "vu {vu}");
    }
    for r in &reqs {
        assert!(r.headers_named("cookie").len() <= 1, "one Cookie header: {r:?}");
    }
    // The second user really started after the first had its cookie, so a shared jar would have shown.
    let order: Vec<(String, String)> = reqs.iter().map(|r| (r.query()["vu"].clone(), r.path().to_string())).collect();
    let vu2_first = order.iter().position(|(vu, _)| vu == "2").unwrap();
    assert!(
        order[..vu2_first].contains(&("1".to_string(), "/set-cookie".to_string())),
        "vu 2 started before vu 1 had a cookie: {order:?}"
    );
}

#[test]
fn cookies_false_sends_no_cookie() {
    let server = Server::start();
    let dir = TempDir::new("cookies_off");
    let plan = dir.write("plan.yaml", plan(&server.url(), "  cookies: false\n", 2, 2, "0s", COOKIE_STEPS));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 8);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 8);
    for r in &reqs {
        assert_eq!(r.header("cookie"), None, "{r:?}");
    }
}

const REDIRECT_STEPS: &str = r#"      - name: redirect
        request: { url: /redirect }
      - name: post-redirect
        request: { method: POST, url: /redirect, form: { a: "1" } }
"#;

#[test]
fn redirects_are_followed_within_one_sample() {
    let server = Server::start();
    let dir = TempDir::new("redirect_follow");
    let plan = dir.write("plan.yaml", plan(&server.url(), "  follow_redirects: true\n", 1, 1, "0s", REDIRECT_STEPS));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 2, "one row per sample, not per hop:\n{}", jtl.text);
    for label in ["redirect", "post-redirect"] {
        let row = jtl.one(label);
        assert_eq!(row["responseCode"], "200", "{row:?}");
        assert_eq!(row["success"], "true");
        assert!(row["URL"].ends_with("/ok"), "the sample's URL is the last one, as JMeter writes it: {row:?}");
    }
    let reqs = server.requests();
    let seen: Vec<(&str, &str)> = reqs.iter().map(|r| (r.method.as_str(), r.target.as_str())).collect();
    assert_eq!(seen, [("GET", "/redirect"), ("GET", "/ok"), ("POST", "/redirect"), ("GET", "/ok")]);
    // A 302 after a POST is followed with a GET without the body.
    let after_post = &reqs[3];
    assert!(after_post.body.is_empty());
    assert_eq!(after_post.header("content-type"), None, "{after_post:?}");
    // Both hops are in the sample's bytes.
    let sent: u64 = jtl.rows.iter().map(|r| num(r, "sentBytes")).sum();
    let got: u64 = jtl.rows.iter().map(|r| num(r, "bytes")).sum();
    assert_eq!(sent, server.bytes_read(), "sentBytes counts every hop");
    assert_eq!(got, server.bytes_written(), "bytes counts every hop");
}

#[test]
fn redirects_are_not_followed_when_follow_redirects_is_false() {
    let server = Server::start();
    let dir = TempDir::new("redirect_nofollow");
    let plan = dir.write("plan.yaml", plan(&server.url(), "  follow_redirects: false\n", 1, 1, "0s", REDIRECT_STEPS));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 2);
    for label in ["redirect", "post-redirect"] {
        let row = jtl.one(label);
        assert_eq!(row["responseCode"], "302", "{row:?}");
        assert_eq!(row["responseMessage"], "Found");
        assert_eq!(row["success"], "true", "a 3xx is not an error: {row:?}");
    }
    let targets: Vec<String> = server.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["/redirect", "/redirect"]);
}

#[test]
fn a_redirect_loop_fails_with_a_redirect_error() {
    let server = Server::start();
    let dir = TempDir::new("redirect_loop");
    let steps = "      - name: loop\n        request: { url: /redirect-loop }\n";
    let plan = dir.write("plan.yaml", plan(&server.url(), "", 1, 1, "0s", steps));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    let row = jtl.one("loop");
    assert_eq!(jtl.rows.len(), 1);
    assert_eq!(row["responseCode"], "Non HTTP response code: Redirect", "{row:?}");
    assert_eq!(row["success"], "false");
    assert!(row["responseMessage"].contains("redirects"), "{row:?}");
    let reqs = server.requests();
    assert!(reqs.len() > 1, "the loop was followed");
    assert!(reqs.iter().all(|r| r.target == "/redirect-loop"));
}

#[test]
fn a_followed_redirect_whose_next_hop_fails_or_times_out_is_that_failure_not_the_302() {
    let server = Server::start();
    let dir = TempDir::new("redirect_then_fail");
    let steps = "      - name: slow\n        request: { url: /redirect-to/delay/2000, timeout: 300ms }\n      \
                 - name: missing\n        request: { url: /redirect-to/nowhere }\n      \
                 - name: fine\n        request: { url: /redirect-to/ok }\n";
    let plan = dir.write("plan.yaml", plan(&server.url(), "  follow_redirects: true\n", 1, 1, "0s", steps));
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 3, "{}", jtl.text);
    let slow = jtl.one("slow");
    assert_eq!(slow["responseCode"], "Non HTTP response code: ReadTimeout", "{slow:?}");
    assert_eq!(slow["success"], "false");
    let missing = jtl.one("missing");
    assert_eq!(missing["responseCode"], "404", "the last hop's response: {missing:?}");
    assert!(missing["URL"].ends_with("/nowhere"), "{missing:?}");
    let fine = jtl.one("fine");
    assert_eq!(fine["responseCode"], "200", "{fine:?}");
    assert_eq!(fine["success"], "true");
    let targets: Vec<String> = server.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(
        targets,
        ["/redirect-to/delay/2000", "/delay/2000", "/redirect-to/nowhere", "/nowhere", "/redirect-to/ok", "/ok"]
    );
}
