//! CSV data sets through the binary: every iteration sends the next row, files are resolved relative to the
//! plan, and a bad file refuses the run before anything is sent.
//!
//! The tests marked `ignore` run plans that send rows: they pass once the virtual users take their rows from
//! `run::data::DataSources` (remove the `ignore` then).

use crate::common;

use std::collections::HashMap;

use common::{describe, planrun, run_ok, stderr, Recorded, Server, TempDir};

const FOUR_ROWS: &str = "phone,name\n+1001,Ann\n+1002,Bob\n+1003,Cid\n+1004,Dee\n";

/// A plan of `threads` x `loops` sending `GET /ok?phone=..&name=..&vu=..&it=..` from the data set `recipients`.
fn plan(base: &str, data: &str, threads: u32, loops: u32) -> String {
    format!(
        r#"
name: data
defaults:
  base_url: "{base}"
data:
  recipients:
{data}
thread_groups:
  - name: senders
    threads: {threads}
    loops: {loops}
    steps:
      - name: send
        request:
          url: /ok
          query:
            phone: "{{{{ recipients.phone }}}}"
            name: "{{{{ recipients.name }}}}"
            vu: "{{{{ vu }}}}"
            it: "{{{{ iteration }}}}"
"#
    )
}

/// The (phone, name) pairs the server received, sorted.
fn rows(received: &[Recorded]) -> Vec<(String, String)> {
    let mut rows: Vec<_> = received
        .iter()
        .map(|r| {
            let q = r.query();
            (q["phone"].clone(), q["name"].clone())
        })
        .collect();
    rows.sort();
    rows
}

fn row(phone: &str, name: &str) -> (String, String) {
    (phone.to_string(), name.to_string())
}

#[test]
fn a_shared_sequential_set_hands_rows_out_in_file_order_and_recycles() {
    let server = Server::start();
    let dir = TempDir::new("data-shared-sequential");
    dir.write("recipients.csv", FOUR_ROWS);
    let plan = dir.write("plan.yaml", plan(&server.url(), "    file: recipients.csv", 3, 2));

    let (_, jtl) = run_ok(&dir, &plan, &["--seed", "1"]);

    let received = server.requests();
    assert_eq!(received.len(), 6, "3 threads x 2 loops");
    assert_eq!(jtl.rows.len(), 6);
    // Six rows from one cursor over four: each row once, then the first two again; a phone never comes with
    // another row's name.
    let mut expected = vec![
        row("+1001", "Ann"),
        row("+1002", "Bob"),
        row("+1003", "Cid"),
        row("+1004", "Dee"),
        row("+1001", "Ann"),
        row("+1002", "Bob"),
    ];
    expected.sort();
    assert_eq!(rows(&received), expected);
}

#[test]
fn a_unique_set_sends_each_row_once_then_the_users_stop() {
    let server = Server::start();
    let dir = TempDir::new("data-unique");
    dir.write("recipients.csv", FOUR_ROWS);
    let plan = dir.write("plan.yaml", plan(&server.url(), "    file: recipients.csv\n    mode: unique", 3, 2));

    let (out, jtl) = run_ok(&dir, &plan, &[]);

    let received = server.requests();
    assert_eq!(received.len(), 4, "one request per row, then every user stops:\n{}", describe(&out));
    assert_eq!(jtl.rows.len(), 4);
    let expected = vec![row("+1001", "Ann"), row("+1002", "Bob"), row("+1003", "Cid"), row("+1004", "Dee")];
    assert_eq!(rows(&received), expected);
}

#[test]
fn per_thread_users_each_read_the_file_from_the_start() {
    let server = Server::start();
    let dir = TempDir::new("data-per-thread");
    dir.write("recipients.csv", "phone,name\n+1001,Ann\n+1002,Bob\n");
    let plan = dir.write("plan.yaml", plan(&server.url(), "    file: recipients.csv\n    scope: per_thread", 2, 3));

    run_ok(&dir, &plan, &[]);

    let mut by_user: HashMap<String, Vec<(u64, String)>> = HashMap::new();
    for r in server.requests() {
        let q = r.query();
        by_user.entry(q["vu"].clone()).or_default().push((q["it"].parse().expect("iteration"), q["phone"].clone()));
    }
    assert_eq!(by_user.len(), 2, "{by_user:?}");
    for (vu, mut sent) in by_user {
        sent.sort();
        let phones: Vec<&str> = sent.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(phones, ["+1001", "+1002", "+1001"], "user {vu}");
    }
}

#[test]
fn random_rows_repeat_with_the_same_seed() {
    let rows_text: String = (0..10).map(|i| format!("+10{i:02},n{i}\n")).collect();
    let run = |seed: &str| {
        let server = Server::start();
        let dir = TempDir::new(&format!("data-random-{seed}"));
        dir.write("recipients.csv", format!("phone,name\n{rows_text}"));
        let plan = dir.write("plan.yaml", plan(&server.url(), "    file: recipients.csv\n    mode: random", 1, 8));
        run_ok(&dir, &plan, &["--seed", seed]);
        server.requests().iter().map(|r| r.query()["phone"].clone()).collect::<Vec<_>>()
    };
    let first = run("5");
    assert_eq!(first.len(), 8);
    assert_eq!(first, run("5"), "the same seed draws the same rows in the same order");
}

#[test]
fn stop_run_ends_the_run_at_the_end_of_the_file() {
    let server = Server::start();
    let dir = TempDir::new("data-stop-run");
    dir.write("recipients.csv", "phone,name\n+1001,Ann\n+1002,Bob\n");
    let plan = dir.write("plan.yaml", plan(&server.url(), "    file: recipients.csv\n    on_eof: stop_run", 1, 5));

    let out = planrun(dir.path(), ["run".as_ref(), plan.as_os_str(), "-o".as_ref(), dir.join("out.jtl").as_os_str()]);

    assert_eq!(server.count(), 2, "two rows, then the run stops:\n{}", describe(&out));
}

#[test]
fn a_ragged_row_refuses_the_run_with_the_csv_line_number() {
    let server = Server::start();
    let dir = TempDir::new("data-ragged");
    dir.write("recipients.csv", "phone,name\n+1001,Ann\n+1002,Bob\n+1003,Cid,extra\n");
    let plan = dir.write("plan.yaml", plan(&server.url(), "    file: recipients.csv", 1, 1));

    let out = planrun(dir.path(), ["run".as_ref(), plan.as_os_str(), "-o".as_ref(), dir.join("out.jtl").as_os_str()]);

    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("error: recipients.csv:4: row has 3 fields, expected 2"), "{err}");
    assert!(err.contains("plan.yaml:7:11"), "points at `file:` in the plan:\n{err}");
    assert_eq!(server.count(), 0, "nothing was sent");
}

#[test]
fn data_files_are_found_relative_to_the_plan_not_the_working_directory() {
    let dir = TempDir::new("data-relative");
    std::fs::create_dir_all(dir.join("plans/data")).expect("plans/data");
    dir.write("plans/data/recipients.csv", FOUR_ROWS);
    dir.write("plans/plan.yaml", plan("http://127.0.0.1:1", "    file: data/recipients.csv", 1, 1));

    let from_above = planrun(dir.path(), ["validate", "plans/plan.yaml"]);
    assert_eq!(from_above.status.code(), Some(0), "{}", describe(&from_above));
    let from_inside = planrun(&dir.join("plans"), ["validate", "plan.yaml"]);
    assert_eq!(from_inside.status.code(), Some(0), "{}", describe(&from_inside));
}

#[test]
fn the_data_driven_example_validates() {
    let out = planrun(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), ["validate", "plans/data-driven.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

/// Ten unique rows read by `buyers`; `warmup` (a setup group, so it runs first) and `health` (beside
/// `buyers`) never read them.
fn groups_plan(base: &str, scoped: &str) -> String {
    format!(
        r#"
name: shop
defaults:
  base_url: "{base}"
data:
  recipients:
    file: recipients.csv
    mode: unique
{scoped}
setup:
  - name: warmup
    threads: 1
    loops: 2
    steps:
      - name: warm
        request: {{ url: /ok, query: {{ who: warmup }} }}
thread_groups:
  - name: buyers
    threads: 2
    loops: 20
    steps:
      - if: "{{{{ iteration > 0 }}}}"
        steps:
          - name: buy
            request: {{ url: /ok, query: {{ who: buyers, phone: "{{{{ recipients.phone }}}}" }} }}
  - name: health
    threads: 1
    loops: 5
    steps:
      - name: health
        request: {{ url: /ok, query: {{ who: health }} }}
"#
    )
}

fn ten_rows() -> String {
    let rows: String = (0..10).map(|i| format!("+20{i:02},n{i}\n")).collect();
    format!("phone,name\n{rows}")
}

#[test]
fn only_the_groups_whose_steps_read_a_set_take_its_rows() {
    for scoped in ["", "    groups: [buyers]"] {
        let server = Server::start();
        let dir = TempDir::new("data-groups-read");
        dir.write("recipients.csv", ten_rows());
        let plan = dir.write("plan.yaml", groups_plan(&server.url(), scoped));

        let (out, jtl) = run_ok(&dir, &plan, &[]);

        let received = server.requests();
        assert_eq!(jtl.rows.len(), received.len(), "{}", describe(&out));
        let who = |w: &str| received.iter().filter(|r| r.query()["who"] == w).collect::<Vec<_>>();
        let mut phones: Vec<String> = who("buyers").iter().map(|r| r.query()["phone"].clone()).collect();
        phones.sort();
        let all: Vec<String> = (0..10).map(|i| format!("+20{i:02}")).collect();
        assert_eq!(phones, all, "the buyers get every row, once ({scoped:?}):\n{}", describe(&out));
        assert_eq!(who("warmup").len(), 2, "the setup group runs its loops");
        assert_eq!(who("health").len(), 5, "the health group runs every loop: it takes no row");
    }
}

#[test]
fn validate_says_which_groups_read_each_set() {
    let dir = TempDir::new("data-groups-validate");
    dir.write("recipients.csv", ten_rows());
    dir.write("spare.csv", FOUR_ROWS);
    let text = groups_plan("http://127.0.0.1:1", "  spare:\n    file: spare.csv");
    let plan = dir.write("plan.yaml", text);

    let out = planrun(dir.path(), ["validate".as_ref(), plan.as_os_str()]);

    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = common::stdout(&out);
    assert!(text.contains("\n  data set `recipients`: 10 row(s), unique; read by group buyers\n"), "{text}");
    assert!(
        text.contains("\n  data set `spare`: 4 row(s), sequential; read by no group (no step reads it)\n"),
        "{text}"
    );
}

#[test]
fn a_set_scoped_to_groups_refuses_another_group_that_reads_it() {
    let server = Server::start();
    let dir = TempDir::new("data-groups-scoped");
    dir.write("recipients.csv", ten_rows());
    let text = groups_plan(&server.url(), "    groups: [buyers, heath]")
        .replace("query: { who: health }", "query: { who: health, phone: \"{{ recipients.phone }}\" }");
    let plan = dir.write("plan.yaml", text);

    let out = planrun(dir.path(), ["run".as_ref(), plan.as_os_str(), "-o".as_ref(), dir.join("out.jtl").as_os_str()]);

    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("error: data set `recipients` names group `heath`, which the plan does not have"), "{err}");
    assert!(err.contains("did you mean `health`?"), "{err}");
    assert!(
        err.contains("error: group `health` reads data set `recipients`, which is for buyers, heath only"),
        "{err}"
    );
    assert!(err.contains("plan.yaml:31:63"), "points at the read, in the health group's step:\n{err}");
    assert_eq!(server.count(), 0, "nothing was sent");
}
