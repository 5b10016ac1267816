//! The crate's layering, checked on its source: the HTTP engine (`src/http/`) is a floor of its own that
//! knows no plan, run or result type, and no two top-level modules of `src/` depend on each other, directly
//! or through others. A `crate::` path in a file (code, doc link or test) counts as a dependency, and so does
//! a `super::` chain that climbs to the crate's root.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// What `src/http/` may name inside the crate besides itself: small helpers with no planrun type.
const HTTP_MAY_USE: &[&str] = &["clock"];

#[test]
fn the_http_engine_names_nothing_above_it() {
    let deps = module_deps();
    let used = &deps["http"];
    let above: Vec<_> = used.iter().filter(|(m, _)| !HTTP_MAY_USE.contains(&m.as_str())).collect();
    assert!(above.is_empty(), "src/http/ must import nothing from the layers above it, but names: {above:?}");
}

#[test]
fn no_two_top_level_modules_depend_on_each_other() {
    let deps = module_deps();
    let mut cycles = Vec::new();
    for start in deps.keys() {
        if let Some(path) = path_back(&deps, start) {
            cycles.push(path.join(" -> "));
        }
    }
    assert!(cycles.is_empty(), "circles across src/'s top-level modules:\n{}", cycles.join("\n"));
}

#[test]
fn the_checker_sees_a_circle_and_a_forbidden_import() {
    let mut deps: Deps = BTreeMap::new();
    deps.entry("a".into()).or_default().insert("b".into(), "src/a.rs".into());
    deps.entry("b".into()).or_default().insert("a".into(), "src/b.rs".into());
    assert_eq!(path_back(&deps, "a"), Some(vec!["a".to_string(), "b".into(), "a".into()]));
    let names = crate_paths("use crate::plan::model::Plan;\n/// [`crate::run::wire`]\nlet x = crate::sink::y;");
    assert_eq!(names, ["plan", "run", "sink"]);
    assert_eq!(root_paths("use super::super::plan::model;\nuse super::conn;", 2), ["plan"]);
}

/// For each top-level module of `src/` (a folder or a file), the other modules it names, each with one
/// file that names it.
type Deps = BTreeMap<String, BTreeMap<String, String>>;

fn module_deps() -> Deps {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let top_of = |file: &Path| -> String {
        let rel = file.strip_prefix(&src).expect("below src");
        rel.iter().next().and_then(|c| c.to_str()).expect("a name").trim_end_matches(".rs").to_string()
    };
    let files = rust_files(&src);
    let tops: BTreeSet<String> = files.iter().map(|f| top_of(f)).collect();
    let mut deps: Deps = BTreeMap::new();
    for file in &files {
        let top = top_of(file);
        if top == "lib" || top == "main" {
            continue;
        }
        let rel = file.strip_prefix(&src).expect("below src");
        let text = fs::read_to_string(file).expect("readable source");
        let depth = rel.iter().count() - usize::from(rel.ends_with("mod.rs"));
        let entry = deps.entry(top.clone()).or_default();
        for name in crate_paths(&text).into_iter().chain(root_paths(&text, depth)) {
            if name != top && tops.contains(&name) {
                entry.entry(name).or_insert_with(|| rel.display().to_string());
            }
        }
    }
    deps
}

/// The first segment of every `crate::` path in `text`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// The first segment after every `super::` chain of `depth` links in `text` (from a file `depth` modules
/// below the root, such a chain names a top-level module).
fn root_paths(text: &str, depth: usize) -> Vec<String> {
    let chain = "super::".repeat(depth);
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&chain) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + chain.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && name != "super" {
            out.push(name);
        }
    }
    out
}

/// A path of dependencies from `start` back to itself, if there is one.
fn path_back(deps: &Deps, start: &str) -> Option<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![vec![start.to_string()]];
    while let Some(path) = stack.pop() {
        let last = path.last().expect("never empty");
        for next in deps.get(last).map(|m| m.keys()).into_iter().flatten() {
            if next == start {
                let mut found = path.clone();
                found.push(next.clone());
                return Some(found);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("src/ readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}
