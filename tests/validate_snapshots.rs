//! Every bad plan in tests/plans/err is rejected with exit 2 and exactly the messages in its `.stderr`
//! snapshot (regenerate with `BLESS=1 cargo test --test integration validate_snapshots`); every plan in
//! plans/ and tests/plans/ok validates.

use std::path::{Path, PathBuf};
use std::process::Command;

fn planrun(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_planrun"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("planrun runs")
}

fn yaml_files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
        .expect("directory exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.strip_prefix(root).expect("under the root").to_path_buf())
        .collect();
    files.sort();
    files
}

#[test]
fn bad_plans_match_their_snapshots() {
    let files = yaml_files("tests/plans/err");
    assert!(files.len() >= 15, "the corpus of bad plans is there");
    let bless = std::env::var_os("BLESS").is_some();
    let mut mismatches = Vec::new();
    for plan in &files {
        let out = planrun(&["validate", plan.to_str().expect("utf-8 path")]);
        assert_eq!(out.status.code(), Some(2), "{} must exit 2", plan.display());
        let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
        assert!(out.stdout.is_empty(), "{}: nothing on stdout", plan.display());
        let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join(plan.with_extension("stderr"));
        if bless {
            std::fs::write(&snapshot, &stderr).expect("snapshot written");
            continue;
        }
        let expected = std::fs::read_to_string(&snapshot).unwrap_or_default();
        if expected != stderr {
            mismatches.push(line_diff(&expected, &stderr, &snapshot));
        }
    }
    assert!(mismatches.is_empty(), "snapshots differ (BLESS=1 to accept):\n{}", mismatches.join("\n"));
}

/// A unified line diff of a snapshot against the actual output: `-` lines are the snapshot's, `+` the output's.
fn line_diff(expected: &str, actual: &str, snapshot: &Path) -> String {
    let diff = similar::TextDiff::from_lines(expected, actual);
    diff.unified_diff().context_radius(2).header(&snapshot.display().to_string(), "actual").to_string()
}

#[test]
fn every_error_points_at_file_line_and_column() {
    for plan in yaml_files("tests/plans/err") {
        let out = planrun(&["validate", plan.to_str().expect("utf-8 path")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors = stderr.lines().filter(|l| l.starts_with("error: ")).count();
        let located = stderr
            .lines()
            .filter(|l| l.trim_start().starts_with("--> "))
            .filter(|l| {
                let loc = l.trim_start().trim_start_matches("--> ");
                let mut parts = loc.rsplitn(3, ':');
                let col = parts.next().and_then(|c| c.parse::<u32>().ok());
                let line = parts.next().and_then(|c| c.parse::<u32>().ok());
                col.is_some_and(|c| c > 0) && line.is_some_and(|l| l > 0)
            })
            .count();
        assert!(errors > 0, "{}: at least one error", plan.display());
        assert_eq!(errors, located, "{}: every error has file:line:col\n{stderr}", plan.display());
    }
}

#[test]
fn good_plans_validate() {
    let mut files = yaml_files("plans");
    files.extend(yaml_files("tests/plans/ok"));
    for plan in files {
        let out = planrun(&["validate", plan.to_str().expect("utf-8 path")]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{} must validate:\n{}",
            plan.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
