//! deploy/slurm/ on a real Slurm: a one-node cluster started here runs a plan as a job array of 4 segments
//! and the merge job after it (submit.sh), against a server that records every request; what they send and
//! count is what one `planrun run` of the plan sends and counts.
//!
//! That test needs root and Debian's slurm-wlm and munge; without them it says why and passes, unless
//! PLANRUN_REQUIRE_SLURM=1 (set by .ci/run). The scripts' refusals are checked without Slurm.

use crate::common;
use crate::slurm_cluster;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{describe, planrun, read_jtl, Jtl, Recorded, Server, TempDir};
use serde_json::Value;
use slurm_cluster::Cluster;

/// 10 users x 5 loops x 2 requests, plus a setup and a teardown request: 102 requests, with random data
/// drawn from each user's seeded generator, so a segment sends what the same users send in one run.
/// `order: samples == 50` holds only on all the samples: each segment alone fails it (exit 1), the merge
/// of the four passes it (exit 0).
const PLAN: &str = r#"
name: slurm-segments
seed: 1234
properties:
  base_url: http://127.0.0.1:9
defaults:
  base_url: "{{ props.base_url }}"
  timeout: 10s
setup:
  - name: prepare
    threads: 1
    steps:
      - name: setup
        request: { method: POST, url: /ok, body: "setup {{ random_string(8) }}" }
thread_groups:
  - name: buyers
    threads: 10
    loops: 5
    steps:
      - name: order
        request:
          method: POST
          url: /ok
          query: { user: "{{ vu }}", it: "{{ iteration }}", colour: "{{ random_choice(['red', 'green', 'blue']) }}" }
          headers: { X-Request-Id: "{{ uuid() }}" }
          json: { id: "{{ uuid() }}", qty: "{{ random_int(1, 5) }}", note: "{{ random_string(16) }}" }
      - name: look
        request: { url: "/status/201?n={{ random_digits(8) }}" }
teardown:
  - name: cleanup
    threads: 1
    steps:
      - name: teardown
        request: { method: DELETE, url: "/ok?t={{ random_int(1, 1000000) }}" }
thresholds:
  order: "samples == 50"
  total: "error_rate < 1%"
"#;

const REQUESTS: usize = 102;
const SEGMENTS: usize = 4;

/// A request as the target saw it, less the Host header (the two servers have different ports).
type Sent = (String, String, Vec<(String, String)>, Vec<u8>);

fn sent(requests: Vec<Recorded>) -> Vec<Sent> {
    let mut all: Vec<Sent> = requests
        .into_iter()
        .map(|r| {
            let headers = r.headers.into_iter().filter(|(n, _)| n != "host").collect();
            (r.method, r.target, headers, r.body)
        })
        .collect();
    all.sort();
    all
}

/// Per label: samples, errors, transactions and the response codes' counts of a summary JSON.
type Counts = BTreeMap<String, (u64, u64, u64, BTreeMap<String, u64>)>;

fn counts(path: &Path) -> Counts {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let summary: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
    let labels = summary["labels"].as_array().cloned().unwrap_or_default();
    labels
        .iter()
        .chain([&summary["total"]])
        .map(|l| {
            let n = |k: &str| l[k].as_u64().unwrap_or_else(|| panic!("no {k} in {l}"));
            let codes = l["response_codes"]
                .as_object()
                .map(|m| m.iter().map(|(c, v)| (c.clone(), v.as_u64().unwrap_or(0))).collect())
                .unwrap_or_default();
            (l["label"].as_str().unwrap_or("?").to_string(), (n("samples"), n("errors"), n("transactions"), codes))
        })
        .collect()
}

fn add(sum: &mut Counts, more: Counts) {
    for (label, (samples, errors, transactions, codes)) in more {
        let entry = sum.entry(label).or_default();
        entry.0 += samples;
        entry.1 += errors;
        entry.2 += transactions;
        for (code, n) in codes {
            *entry.3.entry(code).or_default() += n;
        }
    }
}

fn labels(jtl: &Jtl) -> Vec<&str> {
    let mut all: Vec<&str> = jtl.rows.iter().map(|r| r["label"].as_str()).collect();
    all.sort();
    all.dedup();
    all
}

/// Whether the cluster can run here (root and the Slurm programs); false after saying why not (a failure
/// with PLANRUN_REQUIRE_SLURM=1).
fn slurm_here() -> bool {
    let Some(why) = slurm_cluster::cannot_run() else { return true };
    common::skip("Slurm", "PLANRUN_REQUIRE_SLURM", &why);
    false
}

#[test]
fn four_segments_and_their_merge_on_slurm_send_and_count_what_one_run_does() {
    if !slurm_here() {
        return;
    }
    // The cluster is declared after the directory holding it, so it is stopped before the directory goes.
    let dir = TempDir::new("slurm");
    let plan = dir.write("plan.yaml", PLAN);
    let plan_arg = plan.to_str().expect("a UTF-8 temp path");
    let validated = planrun(dir.path(), ["validate", plan_arg]);
    assert_eq!(validated.status.code(), Some(0), "{}", describe(&validated));

    let server = Server::start();
    let mut cluster = Cluster::start(&dir.join("cluster"));
    cluster.wait_idle();

    let results = dir.join("results");
    let submit = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/submit.sh");
    let base_url = format!("base_url={}", server.url());
    let submitted = cluster
        .command(&submit)
        .args([plan_arg, &SEGMENTS.to_string(), results.to_str().unwrap(), "-D", &base_url])
        .env("PLANRUN", env!("CARGO_BIN_EXE_planrun"))
        // Slurm starts the tasks 2 to 3 s after they are submitted here: with 6 s they usually wait for the
        // instant (and the timestamps below check that they did); a task that starts late still passes.
        .env("LEAD_SECONDS", "6")
        .current_dir(dir.path())
        .output()
        .expect("run submit.sh");
    assert!(submitted.status.success(), "submit.sh failed:\n{}\n{}", describe(&submitted), cluster.logs());
    let printed = String::from_utf8_lossy(&submitted.stdout).into_owned();
    let field = |name: &str| -> String {
        printed
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("no {name}= in what submit.sh printed:\n{printed}"))
            .to_string()
    };
    let (start_at, array_job, merge_job) = (field("start_at"), field("array_job"), field("merge_job"));

    let merge = cluster.wait_job(&merge_job, Duration::from_secs(120));
    assert_eq!(
        (merge["JobState"].as_str(), merge["ExitCode"].as_str()),
        ("COMPLETED", "0:0"),
        "the merge job judges the thresholds on all the samples, and they hold:\n{merge:?}\n{}",
        cluster.logs()
    );
    // Each segment alone judges its own share: `order: samples == 50` fails there, and the merge ran anyway.
    let tasks = cluster.job(&array_job);
    assert_eq!(tasks.len(), SEGMENTS, "{tasks:?}");
    for task in &tasks {
        assert_eq!(task["ExitCode"], "1:0", "a segment's own thresholds:\n{task:?}\n{}", cluster.logs());
    }
    let results_file = |name: &str| -> PathBuf { results.join(name) };
    let segments: Vec<Jtl> = (0..SEGMENTS).map(|i| read_jtl(&results_file(&format!("segment-{i}.jtl")))).collect();
    let merged = read_jtl(&results_file("all.jtl"));
    drop(cluster);

    // Counted on both sides: every request the segments sent is one row of the merged file.
    assert_eq!(server.count(), REQUESTS);
    assert_eq!(merged.rows.len(), REQUESTS, "{}", merged.text);
    assert_eq!(segments.iter().map(|s| s.rows.len()).sum::<usize>(), REQUESTS);
    // Every segment had a share, all from the shared start instant on; setup and teardown ran in segment 0.
    let start_at: u64 = start_at.parse().expect("submit.sh's start_at is Unix ms");
    for (i, segment) in segments.iter().enumerate() {
        assert!(!segment.rows.is_empty(), "segment {i} sent nothing");
        for row in &segment.rows {
            assert!(common::num(row, "timeStamp") >= start_at, "segment {i} sent before {start_at}: {row:?}");
        }
        let expected: &[&str] = if i == 0 { &["look", "order", "setup", "teardown"] } else { &["look", "order"] };
        assert_eq!(labels(segment), expected, "segment {i}");
    }

    // One run of the same plan, with the same seed, against a server of its own.
    let single_server = Server::start();
    let single_url = format!("base_url={}", single_server.url());
    let single = planrun(
        dir.path(),
        ["run", plan_arg, "-D", &single_url, "-o", "single.jtl", "--summary-json", "single.json", "--quiet"],
    );
    assert_eq!(single.status.code(), Some(0), "{}", describe(&single));
    let single_jtl = read_jtl(&dir.join("single.jtl"));
    assert_eq!(single_server.count(), REQUESTS);
    assert_eq!(single_jtl.rows.len(), REQUESTS);

    // The same requests, byte for byte (less the Host header), as a multiset.
    assert!(
        sent(server.requests()) == sent(single_server.requests()),
        "the segments sent other requests than one run:\nsegments: {:#?}\none run: {:#?}",
        sent(server.requests()),
        sent(single_server.requests())
    );

    // The merged summary counts the segments' samples, errors and codes, and those of one run.
    let mut sum = Counts::new();
    for i in 0..SEGMENTS {
        add(&mut sum, counts(&results_file(&format!("segment-{i}.summary.json"))));
    }
    let merged_counts = counts(&results_file("all.summary.json"));
    assert_eq!(merged_counts, sum);
    assert_eq!(merged_counts, counts(&dir.join("single.json")));
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm").join(name)
}

/// What the scripts refuse before anything is submitted or sent, so that no share of the load goes missing
/// unnoticed: no Slurm needed (the job scripts run as Slurm would start them, with its variables set).
#[test]
fn the_scripts_refuse_arguments_that_would_lose_a_share_of_the_load() {
    let dir = TempDir::new("slurm_refusals");
    let plan = dir.write("plan.yaml", PLAN);
    let plan_arg = plan.to_str().unwrap();
    let run = |cmd: &mut std::process::Command| {
        cmd.current_dir(dir.path()).env("PLANRUN", env!("CARGO_BIN_EXE_planrun")).output().expect("run a script")
    };
    let submit = |args: &[&str]| run(std::process::Command::new(script("submit.sh")).args(args));
    for (args, says) in [
        (&[plan_arg, "0", "results"][..], "N must be a whole number from 1, not '0'"),
        (&[plan_arg, "x", "results"], "N must be a whole number from 1, not 'x'"),
        (&["missing.yaml", "4", "results"], "no plan file 'missing.yaml'"),
        (&[plan_arg, "4"], "usage:"),
    ] {
        let out = submit(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}\n{}", describe(&out));
        assert!(common::stderr(&out).contains(says), "{args:?}\n{}", describe(&out));
    }

    // An array that is not 0..N-1: task 4 of --array=1-4 would be refused by planrun, and segment 0 never run.
    let task = run(std::process::Command::new(script("planrun-segments.sbatch"))
        .arg(plan_arg)
        .env("RESULTS", dir.path())
        .env("START_AT", "0")
        .env("SLURM_ARRAY_TASK_ID", "4")
        .env("SLURM_ARRAY_TASK_COUNT", "4")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_MAX", "4"));
    assert_eq!(task.status.code(), Some(2), "{}", describe(&task));
    assert!(common::stderr(&task).contains("the array must be 0-3 with no gaps"), "{}", describe(&task));
    assert!(!dir.join("segment-4.jtl").exists());

    // A segment that wrote nothing: the merge names its file and fails, rather than merge the others.
    std::fs::write(dir.join("segment-0.jtl"), format!("{}\n", common::JTL_HEADER)).unwrap();
    let merge = run(std::process::Command::new(script("planrun-merge.sbatch"))
        .arg(plan_arg)
        .env("RESULTS", dir.path())
        .env("SEGMENTS", "2"));
    assert_eq!(merge.status.code(), Some(2), "{}", describe(&merge));
    assert!(common::stderr(&merge).contains("segment-1.jtl"), "{}", describe(&merge));
    assert!(!dir.join("all.jtl").exists());
}
