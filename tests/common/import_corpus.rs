//! What the import tests of every format share: the corpus of a fixtures folder, the check that each file
//! converts, matches its snapshot (`BLESS=1` rewrites them) and validates, and multipart bodies by part.

use std::path::{Path, PathBuf};

use super::{describe, planrun, stdout, Recorded, TempDir};

/// `tests/fixtures/<folder>`.
pub fn fixtures(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(folder)
}

/// The files of `tests/fixtures/<folder>` that `keep` keeps, sorted.
pub fn corpus(folder: &str, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures(folder))
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && keep(p))
        .collect();
    files.sort();
    files
}

/// Each file imports (exit 0), its plan is the snapshot `snapshot(file)` says, and `planrun validate`
/// accepts it; at least five files.
pub fn converts_matches_its_snapshot_and_validates(files: &[PathBuf], snapshot: impl Fn(&Path) -> PathBuf) {
    assert!(files.len() >= 5, "the corpus is there: {files:?}");
    let dir = TempDir::new("import-corpus");
    // Files a converted plan names (an upload) exist where it looks for them.
    dir.write("myfile.jpg", "not really a jpeg\n");
    let bless = std::env::var_os("BLESS").is_some();
    let mut mismatches = Vec::new();
    for file in files {
        let name = file.file_name().and_then(|s| s.to_str()).expect("a name");
        let out = planrun(dir.path(), ["import".as_ref(), file.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", describe(&out));
        let yaml = stdout(&out);
        let snap = snapshot(file);
        if bless {
            std::fs::create_dir_all(snap.parent().expect("a folder")).expect("the snapshot's folder");
            std::fs::write(&snap, &yaml).expect("snapshot written");
        } else if std::fs::read_to_string(&snap).unwrap_or_default() != yaml {
            mismatches.push(format!("--- {}\n+++ actual\n{yaml}", snap.display()));
        }
        let plan = dir.write(&format!("{name}.plan.yaml"), &yaml);
        let v = planrun(dir.path(), ["validate", plan.to_str().expect("utf-8")]);
        assert_eq!(v.status.code(), Some(0), "{name}: the converted plan does not validate\n{yaml}\n{}", describe(&v));
    }
    assert!(mismatches.is_empty(), "snapshots differ (BLESS=1 to accept):\n{}", mismatches.join("\n"));
}

/// The parts of a multipart body: (the part's Content-Disposition line, its content), in order.
pub fn multipart_parts(r: &Recorded) -> Vec<(String, String)> {
    let ct = r.header("content-type").unwrap_or_default();
    let boundary = ct.split("boundary=").nth(1).unwrap_or_default().trim_matches('"');
    String::from_utf8_lossy(&r.body)
        .split(&format!("--{boundary}"))
        .filter(|p| !p.trim().is_empty() && p.trim() != "--")
        .map(|p| {
            let (head, content) = p.split_once("\r\n\r\n").unwrap_or((p, ""));
            let name = head.lines().find(|l| l.to_ascii_lowercase().starts_with("content-disposition")).unwrap_or("");
            (name.to_string(), content.trim_end_matches("\r\n").to_string())
        })
        .collect()
}
