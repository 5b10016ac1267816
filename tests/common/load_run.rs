//! One builder for what most load tests do: a plan of one thread group against a server, run through the
//! binary, and what it wrote (the output, the JTL's rows, the JSON lines).

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::{describe, planrun, read_jtl, Jtl, TempDir};

/// A plan named `name` with `defaults.base_url` and one thread group, `g`, of `threads` users looping
/// `loops` times over `steps`. Each setter takes YAML at the indentation of the place it goes.
#[derive(Debug, Clone)]
pub struct LoadRun {
    name: String,
    base_url: String,
    top: String,
    defaults: String,
    group: String,
    threads: u32,
    loops: u32,
    steps: String,
    json: bool,
}

impl LoadRun {
    /// One user, one loop, no steps yet.
    pub fn new(name: &str, base_url: &str) -> LoadRun {
        LoadRun {
            name: name.to_string(),
            base_url: base_url.to_string(),
            top: String::new(),
            defaults: String::new(),
            group: String::new(),
            threads: 1,
            loops: 1,
            steps: String::new(),
            json: false,
        }
    }

    /// `threads` users, each looping `loops` times.
    pub fn users(mut self, threads: u32, loops: u32) -> LoadRun {
        self.threads = threads;
        self.loops = loops;
        self
    }

    /// Top-level keys (`properties:`, `variables:`, `data:` ...), at no indentation.
    pub fn top(mut self, yaml: &str) -> LoadRun {
        push_lines(&mut self.top, yaml);
        self
    }

    /// Keys of `defaults:` besides `base_url`, at two spaces.
    pub fn defaults(mut self, yaml: &str) -> LoadRun {
        push_lines(&mut self.defaults, yaml);
        self
    }

    /// Keys of the group besides its users, loops and steps (`ramp_up:`, `think_time:` ...), at four spaces.
    pub fn group(mut self, yaml: &str) -> LoadRun {
        push_lines(&mut self.group, yaml);
        self
    }

    /// The group's steps, at six spaces (`      - name: s\n        request: ...`).
    pub fn steps(mut self, yaml: &str) -> LoadRun {
        push_lines(&mut self.steps, yaml);
        self
    }

    /// Writes JSON lines to `out.jsonl` too, read back into [`Ran::json`].
    pub fn json(mut self) -> LoadRun {
        self.json = true;
        self
    }

    /// The plan's text.
    pub fn yaml(&self) -> String {
        let LoadRun { name, base_url, top, defaults, group, threads, loops, steps, .. } = self;
        format!(
            "name: {name}\n{top}defaults:\n  base_url: \"{base_url}\"\n{defaults}thread_groups:\n  - name: g\n    \
             threads: {threads}\n    loops: {loops}\n{group}    steps:\n{steps}"
        )
    }

    /// Writes the plan to `dir/plan.yaml` and runs `planrun run plan.yaml -o out.jtl [--json out.jsonl]
    /// extra...` in `dir`, whatever its exit status.
    pub fn run_any(&self, dir: &TempDir, extra: &[&str]) -> Ran {
        let plan = dir.write("plan.yaml", self.yaml());
        let mut args = vec!["run", plan.to_str().expect("a UTF-8 temp path"), "-o", "out.jtl"];
        if self.json {
            args.extend(["--json", "out.jsonl"]);
        }
        args.extend(extra);
        let out = planrun(dir.path(), &args);
        let jtl_path = dir.join("out.jtl");
        let jtl = jtl_path.exists().then(|| read_jtl(&jtl_path));
        let json =
            if self.json && dir.join("out.jsonl").exists() { json_lines(&dir.join("out.jsonl")) } else { vec![] };
        Ran { out, jtl: jtl.unwrap_or(Jtl { text: String::new(), header: vec![], rows: vec![] }), json }
    }

    /// [`LoadRun::run_any`], expecting exit 0.
    pub fn run(&self, dir: &TempDir, extra: &[&str]) -> Ran {
        let ran = self.run_any(dir, extra);
        assert_eq!(ran.out.status.code(), Some(0), "planrun failed:\n{}", describe(&ran.out));
        ran
    }
}

fn push_lines(to: &mut String, yaml: &str) {
    to.push_str(yaml);
    if !yaml.is_empty() && !yaml.ends_with('\n') {
        to.push('\n');
    }
}

/// What a [`LoadRun`] did: the binary's output, the JTL (empty when none was written), and the JSON lines
/// (with [`LoadRun::json`]).
#[derive(Debug)]
pub struct Ran {
    /// Exit status, stdout and stderr.
    pub out: Output,
    /// `out.jtl`, read back.
    pub jtl: Jtl,
    /// `out.jsonl`'s records.
    pub json: Vec<Value>,
}

impl Ran {
    /// stdout, as text.
    pub fn stdout(&self) -> String {
        super::stdout(&self.out)
    }

    /// stderr, as text.
    pub fn stderr(&self) -> String {
        super::stderr(&self.out)
    }
}

/// A JSON file, parsed.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON-lines file, one value per line; its last line must be whole.
pub fn json_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(text.is_empty() || text.ends_with('\n'), "a torn last line in {}", path.display());
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}
