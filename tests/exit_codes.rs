//! The exit codes are a contract for scripts: the README's table names every code the source exits with, and
//! no other; `--quiet` leaves stderr to warnings and errors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::{describe, planrun, read_jtl, stderr, stdout, Server, TempDir};

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("src/ readable") {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The codes the source exits with: the constants of `cli/exit.rs` that some file uses (`exit::NAME`), and
/// any number given to `process::exit`, `ExitCode::from` or `exit(`.
fn codes_in_source() -> BTreeSet<i32> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let constants: BTreeMap<String, i32> = {
        let text = std::fs::read_to_string(root.join("cli/exit.rs")).unwrap();
        let re = regex::Regex::new(r"pub const ([A-Z_]+): i32 = (\d+);").unwrap();
        re.captures_iter(&text).map(|c| (c[1].to_string(), c[2].parse().unwrap())).collect()
    };
    assert!(constants.len() >= 5, "cli/exit.rs's constants not found: {constants:?}");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let used = regex::Regex::new(r"\bexit::([A-Z_]+)\b").unwrap();
    let literal = regex::Regex::new(r"(?:\bexit|ExitCode::from)\(\s*(\d+)\s*\)").unwrap();
    let mut codes = BTreeSet::new();
    for (path, text) in &files {
        for c in used.captures_iter(text) {
            let code = constants.get(&c[1]).unwrap_or_else(|| panic!("{path}: exit::{} is no constant", &c[1]));
            codes.insert(*code);
        }
        for c in literal.captures_iter(text) {
            codes.insert(c[1].parse().unwrap());
        }
    }
    codes
}

/// The codes of the README's exit code table.
fn codes_in_readme() -> BTreeSet<i32> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let table = readme.split("### Exit codes").nth(1).expect("README has a section `### Exit codes`");
    let table = table.split("\n\n").find(|block| block.starts_with("| code |")).expect("a table | code | meaning |");
    table.lines().skip(2).map(|row| row.split('|').nth(1).unwrap().trim().parse().expect("a code")).collect()
}

#[test]
fn the_readme_names_every_exit_code_of_the_source_and_no_other() {
    let source = codes_in_source();
    let readme = codes_in_readme();
    assert!(source.contains(&2) && source.contains(&130), "the scan finds the codes: {source:?}");
    assert_eq!(readme, source, "README's exit code table (left) and the source (right) differ");
}

#[test]
fn quiet_leaves_stderr_to_warnings_and_errors() {
    let server = Server::start();
    let dir = TempDir::new("quiet");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: quiet\ndefaults:\n  base_url: \"{}\"\nthread_groups:\n  - name: g\n    threads: 2\n    loops: 3\n    \
             steps:\n      - name: ok\n        request:\n          url: /ok\nthresholds:\n  ok:\n    - samples >= 6\n",
            server.url()
        ),
    );
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--report", "rep", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stderr(&out), "", "nothing but warnings and errors on stderr with --quiet");
    assert!(stdout(&out).contains("TOTAL"), "the summary stays on stdout: {}", describe(&out));
    let jtl = read_jtl(&dir.join("out.jtl"));
    assert_eq!(jtl.rows.len(), 6);
    assert_eq!(server.count(), jtl.rows.len(), "the server's count equals the JTL's rows");
    // A failed threshold: exit 1, said on stdout; a warning still reaches stderr.
    let failing = std::fs::read_to_string(&plan).unwrap().replace("samples >= 6", "samples >= 7");
    std::fs::write(&plan, failing).unwrap();
    let out = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet", "-D", "unused=1"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("warning: -D unused") && !err.contains("samples in"), "{err}");
    assert_eq!(server.count(), 12, "two runs of six requests");
}
