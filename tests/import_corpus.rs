//! Every JMeter plan in tests/fixtures/jmx (JMeter's templates, Taurus' test plans, planrun's own shop)
//! converts, its YAML matches the snapshot next to it (`BLESS=1 cargo test --test integration import_corpus`
//! rewrites them), and the converted plan passes `planrun validate`; the deliberately broken one is refused.

use crate::common;

use std::path::{Path, PathBuf};

use common::{describe, planrun, stderr, TempDir};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmx")
}

fn jmx_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jmx"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_plan_converts_matches_its_snapshot_and_validates() {
    let files: Vec<PathBuf> = jmx_files().into_iter().filter(|p| !p.to_string_lossy().contains("broken")).collect();
    assert!(files.len() >= 6, "the corpus is there: {files:?}");
    let dir = TempDir::new("import-corpus");
    // build-adv-web-test-plan reads its CSV from `${__P(resources_folder, CHANGE_FOLDER)}`.
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    dir.write("data/login.csv", "alice,secret\nbob,hunter2\n");
    let bless = std::env::var_os("BLESS").is_some();
    let mut mismatches = Vec::new();
    for jmx in &files {
        let stem = jmx.file_stem().and_then(|s| s.to_str()).expect("a name");
        let out_path = dir.join(&format!("{stem}.yaml"));
        let out = planrun(dir.path(), ["import".as_ref(), jmx.as_os_str(), "-o".as_ref(), out_path.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{stem}: import failed\n{}", describe(&out));
        assert!(!stderr(&out).contains("panicked"), "{stem}");
        let yaml = std::fs::read_to_string(&out_path).expect("the plan was written");
        let snapshot = jmx.with_extension("yaml");
        if bless {
            std::fs::write(&snapshot, &yaml).expect("snapshot written");
        } else if std::fs::read_to_string(&snapshot).unwrap_or_default() != yaml {
            mismatches.push(format!("--- {}\n+++ actual\n{yaml}", snapshot.display()));
        }
        let v = planrun(dir.path(), ["validate", out_path.to_str().expect("utf-8"), "-D", "resources_folder=data"]);
        assert_eq!(v.status.code(), Some(0), "{stem}: the converted plan does not validate\n{yaml}\n{}", describe(&v));
    }
    assert!(mismatches.is_empty(), "snapshots differ (BLESS=1 to accept):\n{}", mismatches.join("\n"));
}

#[test]
fn the_cut_short_plan_is_refused_with_where_it_ends() {
    let jmx = fixtures().join("blazemeter-taurus__broken.jmx");
    let dir = TempDir::new("import-broken");
    let out = planrun(dir.path(), ["import".as_ref(), jmx.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("43:1: not well-formed XML") && err.contains("cut short"), "{err}");
    assert!(out.stdout.is_empty());
}
