//! One seed, the same data: a run is replayed request for request by its seed, whatever the timing.

use crate::common;

use common::{run_ok, stderr, Server, TempDir};

const PLAN: &str = r#"
name: seeded
defaults:
  base_url: "@BASE@"
thread_groups:
  - name: senders
    threads: 3
    loops: 3
    steps:
      - name: get
        request:
          url: /ok
          query:
            vu: "{{ vu }}"
            it: "{{ iteration }}"
            to: "+7{{ random_digits(10) }}"
            text: "{{ random_string(20) }}"
      - name: post
        request:
          method: POST
          url: /ok
          query: { vu: "{{ vu }}", it: "{{ iteration }}" }
          json: { id: "{{ uuid() }}", pin: "{{ random_digits(4) }}", n: "{{ random_int(1, 1000000) }}" }
  - name: others
    threads: 2
    loops: 2
    steps:
      - name: form
        request:
          method: POST
          url: /ok
          query: { vu: "{{ vu }}", it: "{{ iteration }}", group: "{{ group }}" }
          form: { text: "{{ random_string(12, 'abc') }}", id: "{{ uuid() }}" }
"#;

/// Runs the plan against a fresh server and returns the sorted (target, body) of every request received.
fn requests(test: &str, extra: &[&str]) -> (Vec<(String, Vec<u8>)>, String) {
    let server = Server::start();
    let dir = TempDir::new(test);
    let plan = dir.write("plan.yaml", PLAN.replace("@BASE@", &server.url()));
    let (out, jtl) = run_ok(&dir, &plan, extra);
    assert_eq!(jtl.rows.len(), 3 * 3 * 2 + 2 * 2, "{}", jtl.text);
    let mut sent: Vec<(String, Vec<u8>)> = server.requests().into_iter().map(|r| (r.target, r.body)).collect();
    assert_eq!(sent.len(), 22);
    sent.sort();
    (sent, stderr(&out))
}

#[test]
fn the_same_seed_sends_the_same_requests() {
    let (a, _) = requests("seed_same_a", &["--seed", "7"]);
    let (b, _) = requests("seed_same_b", &["--seed", "7"]);
    assert_eq!(a, b, "two runs with --seed 7 sent different requests");
    // The random parts are really random: users do not all send the same text.
    let texts: std::collections::HashSet<&str> =
        a.iter().filter_map(|(t, _)| t.split("text=").nth(1)).map(|t| t.split('&').next().unwrap()).collect();
    assert_eq!(texts.len(), 9, "each of the 9 GET requests has its own random text: {texts:?}");
}

#[test]
fn another_seed_sends_other_data() {
    let (a, _) = requests("seed_other_7", &["--seed", "7"]);
    let (b, _) = requests("seed_other_8", &["--seed", "8"]);
    assert_ne!(a, b);
    // Not one random request body is the same.
    let bodies =
        |v: &[(String, Vec<u8>)]| v.iter().map(|(_, b)| b.clone()).filter(|b| !b.is_empty()).collect::<Vec<_>>();
    for body in bodies(&a) {
        assert!(!bodies(&b).contains(&body), "seed 8 sent seed 7's body {:?}", String::from_utf8_lossy(&body));
    }
}

#[test]
fn a_drawn_seed_is_printed_and_replays_the_run() {
    let (drawn, err) = requests("seed_drawn", &[]);
    let re = regex::Regex::new(r"seed (\d+)").unwrap();
    let seed = re
        .captures(&err)
        .unwrap_or_else(|| panic!("no `seed N` on stderr:\n{err}"))
        .get(1)
        .unwrap()
        .as_str()
        .to_string();
    // Every mention of the seed names the same one.
    for c in re.captures_iter(&err) {
        assert_eq!(c[1], seed, "stderr names two seeds:\n{err}");
    }
    let (replayed, err2) = requests("seed_replayed", &["--seed", &seed]);
    assert_eq!(drawn, replayed, "--seed {seed} did not replay the run");
    assert!(!re.is_match(&err2), "a given seed is not announced as drawn:\n{err2}");
}
