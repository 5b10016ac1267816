//! Every example plan in plans/ runs against its embedded stub (small where it has knobs) and ends as it
//! says it will: exit 0, and the thresholds example fails on purpose against the slow stub.

use crate::common;

use common::{planrun, TempDir};

fn run(dir: &TempDir, plan: &str, extra: &[&str]) -> std::process::Output {
    let path = format!("{}/plans/{plan}", env!("CARGO_MANIFEST_DIR"));
    let out = format!("{plan}.jtl");
    let mut args = vec!["run", path.as_str(), "-o", out.as_str(), "--quiet"];
    args.extend(extra);
    planrun(dir.path(), args)
}

#[test]
fn every_example_plan_runs() {
    let dir = TempDir::new("plans_run");
    let mut plans: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/plans"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    plans.sort();
    assert!(plans.len() >= 4, "{plans:?}");
    for plan in &plans {
        let small: &[&str] =
            if plan == "sms.yaml" { &["-D", "threads=10", "-D", "loops=2", "-D", "ramp_up=0s"] } else { &[] };
        let out = run(&dir, plan, small);
        assert_eq!(out.status.code(), Some(0), "{plan}:\n{}", common::describe(&out));
        let rows = common::read_jtl(&dir.join(&format!("{plan}.jtl"))).rows;
        assert!(!rows.is_empty() && rows.iter().all(|r| r["success"] == "true"), "{plan}: every sample passed");
    }
}

#[test]
fn the_thresholds_example_fails_on_purpose_against_the_slow_stub() {
    let dir = TempDir::new("plans_thresholds");
    let out = run(&dir, "checkout-thresholds.yaml", &["-D", "stub=stubs/shop-slow.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    assert!(common::stdout(&out).contains("FAIL  TOTAL: p95 < 200ms"), "{}", common::describe(&out));
}
