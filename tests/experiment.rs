//! The experiment that started planrun, at a small scale: the same plan against a blocking gateway
//! (8 workers) and a non-blocking one, then `planrun compare` must call the non-blocking side faster.

use crate::common;

use common::{planrun, TempDir};

#[test]
fn the_non_blocking_gateway_is_faster() {
    let dir = TempDir::new("experiment");
    let plan = concat!(env!("CARGO_MANIFEST_DIR"), "/plans/sms.yaml");
    let small = ["-D", "threads=32", "-D", "ramp_up=0s", "-D", "loops=4", "--quiet"];
    for (out, stub) in [("blocking.jtl", "stubs/kannel-blocking.yaml"), ("nonblocking.jtl", "stubs/kannel.yaml")] {
        let mut args = vec!["run", plan, "-o", out, "-D"];
        let stub = format!("stub={stub}");
        args.push(&stub);
        args.extend(small);
        let run = planrun(dir.path(), &args);
        assert_eq!(run.status.code(), Some(0), "{}", common::describe(&run));
    }
    let out = planrun(dir.path(), ["compare", "blocking.jtl", "nonblocking.jtl", "--html", "compare.html"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::describe(&out));
    let text = common::stdout(&out);
    for label in ["sendsms", "dispatch-form", "TOTAL"] {
        assert!(text.contains(&format!("{label}: faster")), "{label} must be faster on the non-blocking side:\n{text}");
    }
    assert!(dir.join("compare.html").is_file());
}
