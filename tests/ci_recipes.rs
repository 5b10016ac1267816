//! docs/ci/: the GitHub Actions workflow, the GitLab CI job and the Jenkins pipeline that docs/ci.md shows.
//! The two YAML files are checked against GitHub's and GitLab's published schemas by check-jsonschema (from
//! PyPI, offline with its vendored schemas; skipped with a reason when missing, unless
//! PLANRUN_REQUIRE_CHECK_JSONSCHEMA=1), and every shell command in each recipe runs here, as its CI system
//! would run it, in a temp dir laid out like the repository, with this build's planrun on PATH, the service
//! on a free loopback port: twice, so that the second time compares with the first. What the test cannot run
//! is left out and named: the steps that build planrun (it is built) and the CI systems' own actions
//! (checkout, cache, artifacts, JUnit publishing), whose inputs the test checks exist instead.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use serde_json::Value;

/// The recipes, as docs/ci.md quotes them.
const RECIPES: [&str; 3] = ["github-workflow.yml", "gitlab-ci.yml", "Jenkinsfile"];

/// How long one recipe's commands may take, as a guard against hangs.
const GUARD: Duration = Duration::from_secs(180);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn recipe(name: &str) -> String {
    std::fs::read_to_string(repo().join("docs/ci").join(name)).unwrap_or_else(|e| panic!("docs/ci/{name}: {e}"))
}

fn yaml(name: &str) -> Value {
    serde_saphyr::from_str(&recipe(name)).unwrap_or_else(|e| panic!("docs/ci/{name} is not YAML: {e}"))
}

#[test]
fn docs_ci_md_shows_each_recipe_as_it_is_in_docs_ci() {
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    for name in RECIPES.iter().copied().chain(["plan.yaml", "stub.yaml"]) {
        let text = recipe(name);
        let fence = if name == "Jenkinsfile" { "```groovy\n" } else { "```yaml\n" };
        assert!(doc.contains(&format!("{fence}{text}```\n")), "docs/ci.md does not show docs/ci/{name} as it is");
        assert!(doc.contains(&format!("docs/ci/{name}")), "docs/ci.md does not name docs/ci/{name}");
    }
}

/// Whether check-jsonschema can run; when it cannot, says why, or fails when
/// PLANRUN_REQUIRE_CHECK_JSONSCHEMA=1 (CI).
fn check_jsonschema_available() -> bool {
    let ran = Command::new("check-jsonschema").arg("--version").output();
    if ran.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let why = match ran {
        Ok(out) => format!("`check-jsonschema --version` failed:\n{}", describe(&out)),
        Err(e) => format!("check-jsonschema is not on PATH ({e}); `pip install check-jsonschema`"),
    };
    skip("check-jsonschema", "PLANRUN_REQUIRE_CHECK_JSONSCHEMA", &why);
    false
}

fn check_jsonschema(schema: &str, file: &Path) -> Output {
    let mut cmd = Command::new("check-jsonschema");
    cmd.args(["--builtin-schema", schema]).arg(file);
    run_guarded(&mut cmd, Duration::from_secs(120), "check-jsonschema", |_| {})
}

#[test]
fn the_github_workflow_and_the_gitlab_job_match_their_published_schemas() {
    if !check_jsonschema_available() {
        return;
    }
    let dir = TempDir::new("ci_schemas");
    for (name, schema) in [("github-workflow.yml", "vendor.github-workflows"), ("gitlab-ci.yml", "vendor.gitlab-ci")] {
        let out = check_jsonschema(schema, &repo().join("docs/ci").join(name));
        assert_eq!(out.status.code(), Some(0), "docs/ci/{name} against {schema}:\n{}", describe(&out));
        // The check bites: the same file with a mistake its schema knows is refused.
        let broken = recipe(name).replacen("runs-on: ubuntu-latest", "runs_on: ubuntu-latest", 1).replacen(
            "  when: always\n",
            "  when: sometimes\n",
            1,
        );
        assert_ne!(broken, recipe(name));
        let path = dir.write(name, broken);
        let out = check_jsonschema(schema, &path);
        assert_eq!(out.status.code(), Some(1), "a broken {name} passes {schema}:\n{}", describe(&out));
    }
}

/// A temp dir laid out as the repository the recipes run in: the plan and the stand-in service.
fn workspace(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    std::fs::create_dir_all(dir.join("docs/ci")).unwrap();
    for file in ["plan.yaml", "stub.yaml"] {
        std::fs::copy(repo().join("docs/ci").join(file), dir.join("docs/ci").join(file)).unwrap();
    }
    dir
}

/// A loopback address no one listens on now, for the service.
fn free_addr() -> String {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    socket.local_addr().unwrap().to_string()
}

/// PATH with this build's planrun first.
fn path_with_planrun() -> OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_planrun")).parent().unwrap().to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path))).unwrap()
}

/// Runs `script` with `shell` (the program and its options before the script) in `dir`, with `env`.
fn shell(dir: &Path, shell: &[&str], script: &str, env: &BTreeMap<String, String>) -> Output {
    let mut cmd = Command::new(shell[0]);
    cmd.args(&shell[1..]).arg(script).current_dir(dir).env("PATH", path_with_planrun()).envs(env);
    run_guarded(&mut cmd, GUARD, shell[0], |_| {})
}

/// What one pass of a recipe left: the service's count against the JTL's rows, the verdict files.
fn check_pass(dir: &Path, pass: u32, compare_ran: bool) {
    let rows = read_jtl(&dir.join("results/results.jtl")).rows.len();
    assert_eq!(rows, 200, "pass {pass}: 5 users x 20 rounds x 2 requests");
    let log = std::fs::read_to_string(dir.join("stub.log")).unwrap();
    // The health check is the one request the JTL does not have.
    assert!(log.contains(&format!("stub stopped after {} request(s)", rows + 1)), "pass {pass}: {log}");
    let junit = std::fs::read_to_string(dir.join("results/junit.xml")).unwrap();
    assert!(junit.contains(r#"<testsuite name="ci-smoke" tests="3" failures="0""#), "pass {pass}: {junit}");
    assert!(dir.join("results/report/index.html").is_file(), "pass {pass}: the HTML report");
    assert!(dir.join("results/summary.json").is_file());
    assert_eq!(dir.join("results/compare-junit.xml").is_file(), compare_ran, "pass {pass}");
    assert_eq!(dir.join("results/compare.html").is_file(), compare_ran, "pass {pass}");
}

/// A compare that exited 1 did so because a label got slower by more than allowed: its JUnit file says so.
/// (Two runs on a shared machine can differ by that much; the recipe means it to fail then.)
fn compare_status_agrees(dir: &Path, code: Option<i32>) {
    let junit = std::fs::read_to_string(dir.join("results/compare-junit.xml")).unwrap();
    match code {
        Some(0) => assert!(junit.contains(" failures=\"0\""), "{junit}"),
        Some(1) => {
            assert!(!junit.contains(" failures=\"0\"") && junit.contains("more than the 25% allowed"), "{junit}")
        }
        other => panic!("compare exited {other:?}"),
    }
}

/// The GitHub workflow's job: its `run` steps in order, as the runner runs them (`bash -eo pipefail`), each
/// in its own shell, with the job's env, `$GITHUB_STEP_SUMMARY` and `$GITHUB_PATH`; a step runs when its `if`
/// says `always()`, or when every step before it passed (the rest of its condition is taken as true: the
/// test stands for a run on the default branch). `uses` steps are the runner's; the cache between the two
/// passes is the workspace itself. Returns each run step's name and exit code.
fn run_github_job(dir: &Path, job: &Value, addr: &str) -> Vec<(String, Option<i32>)> {
    let mut env: BTreeMap<String, String> = job["env"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), str::to_string))).collect())
        .unwrap_or_default();
    env.insert("STUB_ADDR".into(), addr.into());
    env.insert("GITHUB_STEP_SUMMARY".into(), dir.join("step-summary.md").display().to_string());
    env.insert("GITHUB_PATH".into(), dir.join("github-path").display().to_string());
    let mut failed = false;
    let mut ran = Vec::new();
    for step in job["steps"].as_array().unwrap() {
        let name = step["name"].as_str().unwrap_or("").to_string();
        let Some(script) = step["run"].as_str() else { continue };
        assert!(!script.contains("${{"), "step `{name}`: an expression in a run block is code injection waiting");
        if name == "Build planrun" {
            continue;
        }
        let condition = step["if"].as_str().unwrap_or("success()");
        if failed && !condition.contains("always()") {
            continue;
        }
        let out = shell(dir, &["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"], script, &env);
        failed |= !out.status.success();
        eprintln!("github step `{name}`: {}", describe(&out));
        ran.push((name, out.status.code()));
    }
    ran
}

#[test]
fn the_github_workflow_runs_starts_the_service_judges_and_compares_with_the_last_run() {
    let workflow = yaml("github-workflow.yml");
    let job = &workflow["jobs"]["load-test"];
    let uses: Vec<&str> = job["steps"].as_array().unwrap().iter().filter_map(|s| s["uses"].as_str()).collect();
    for action in ["actions/checkout@", "actions/cache/restore@", "actions/cache/save@", "actions/upload-artifact@"] {
        assert!(uses.iter().any(|u| u.starts_with(action)), "no {action} in {uses:?}");
    }
    let steps = job["steps"].as_array().unwrap();
    let build: Vec<&Value> = steps.iter().filter(|s| s["name"] == "Build planrun").collect();
    assert_eq!(build.len(), 1, "one step builds planrun: the test skips it");
    assert!(build[0]["run"].as_str().unwrap().starts_with("cargo build --release --locked\n"));
    let publish =
        job["steps"].as_array().unwrap().iter().find(|s| s["uses"].as_str().is_some_and(|u| u.contains("junit")));
    assert_eq!(publish.unwrap()["with"]["report_paths"], "results/*junit.xml");
    let dir = workspace("ci_github");
    let addr = free_addr();

    let first = run_github_job(dir.path(), job, &addr);
    assert!(first.iter().all(|(_, code)| *code == Some(0)), "{first:?}");
    assert_eq!(first.len(), 6, "every run step but the build: {first:?}");
    check_pass(dir.path(), 1, false);
    let summary = std::fs::read_to_string(dir.join("step-summary.md")).unwrap();
    assert!(summary.starts_with("### planrun: ci-smoke\n\n**✅ Thresholds: all 3 held**"), "{summary}");
    assert!(dir.join("baseline/results.jtl").is_file(), "the run became the baseline");

    let second = run_github_job(dir.path(), job, &addr);
    check_pass(dir.path(), 2, true);
    let compare = second.iter().find(|(n, _)| n == "Compare with the last run").unwrap();
    compare_status_agrees(dir.path(), compare.1);
    let summary = std::fs::read_to_string(dir.join("step-summary.md")).unwrap();
    assert!(summary.contains("### planrun compare\n"), "the comparison is in the step summary: {summary}");
    assert_eq!(summary.matches("### planrun: ci-smoke").count(), 2, "{summary}");
}

/// A GitLab job's `script` (or `after_script`) as the runner runs it: the lines in order in one `bash`
/// shell that stops at the first failing one.
fn gitlab_script(job: &Value, key: &str) -> String {
    let lines: Vec<&str> = job[key].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    lines.join("\n")
}

#[test]
fn the_gitlab_job_runs_starts_the_service_judges_and_compares_with_the_last_run() {
    let config = yaml("gitlab-ci.yml");
    let job = &config["load-test"];
    let reports = &job["artifacts"]["reports"]["junit"];
    assert_eq!(reports, &serde_json::json!(["results/junit.xml", "results/compare-junit.xml"]));
    assert_eq!(job["artifacts"]["when"], "always");
    assert_eq!(job["cache"]["paths"], serde_json::json!(["baseline/"]));
    let before = gitlab_script(job, "before_script");
    assert!(before.starts_with("cargo build --release --locked\n"), "before_script builds planrun: {before}");
    let env = BTreeMap::from([("STUB_ADDR".to_string(), free_addr())]);
    let dir = workspace("ci_gitlab");
    let bash = ["bash", "-eo", "pipefail", "-c"];
    for pass in 1..=2 {
        let script = shell(dir.path(), &bash, &gitlab_script(job, "script"), &env);
        let after = shell(dir.path(), &bash, &gitlab_script(job, "after_script"), &env);
        assert_eq!(after.status.code(), Some(0), "{}", describe(&after));
        check_pass(dir.path(), pass, pass == 2);
        if pass == 1 {
            assert_eq!(script.status.code(), Some(0), "{}", describe(&script));
            assert!(stdout(&script).contains("No earlier results"), "{}", describe(&script));
        } else {
            compare_status_agrees(dir.path(), script.status.code());
        }
        for path in ["results/", "stub.log"] {
            assert!(dir.join(path).exists(), "artifact {path}");
        }
    }
}

/// The shell blocks of a Jenkinsfile's `sh '''...'''` and `sh '...'` steps, each with the name of the stage
/// it is in (`post` after the stages).
fn jenkins_sh_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut stage = String::new();
    let mut rest = text;
    loop {
        let next_stage = rest.find("stage('");
        let next_post = rest.find("post {");
        let next_sh = rest.find("sh '");
        let Some(sh) = next_sh else { break };
        if let Some(s) = next_stage.filter(|s| *s < sh) {
            let name = &rest[s + 7..];
            stage = name[..name.find('\'').unwrap()].to_string();
            rest = &rest[s + 7..];
            continue;
        }
        if next_post.is_some_and(|p| p < sh) {
            stage = "post".into();
        }
        let body = &rest[sh + 3..];
        let (quote, from) = if body.starts_with("'''") { ("'''", 3) } else { ("'", 1) };
        let end = body[from..].find(quote).unwrap() + from;
        blocks.push((stage.clone(), body[from..end].to_string()));
        rest = &body[end + quote.len()..];
    }
    blocks
}

#[test]
fn the_jenkins_pipeline_runs_starts_the_service_judges_and_compares_with_the_last_build() {
    let text = recipe("Jenkinsfile");
    for step in [
        "copyArtifacts(",
        "archiveArtifacts artifacts: 'results/**, stub.log'",
        "junit testResults: 'results/*junit.xml'",
    ] {
        assert!(text.contains(step), "no {step}");
    }
    let blocks = jenkins_sh_blocks(&text);
    let stages: Vec<&str> = blocks.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(stages, ["Build planrun", "Load test", "Compare with the last build"]);
    let env = BTreeMap::from([("STUB_ADDR".to_string(), free_addr())]);
    let dir = workspace("ci_jenkins");
    for pass in 1..=2 {
        let mut codes = Vec::new();
        for (stage, script) in blocks.iter().filter(|(s, _)| s != "Build planrun") {
            let out = shell(dir.path(), &["sh", "-xe", "-c"], script, &env);
            eprintln!("jenkins stage `{stage}`: {}", describe(&out));
            codes.push(out.status.code());
            if !out.status.success() {
                break;
            }
        }
        check_pass(dir.path(), pass, pass == 2);
        assert_eq!(codes[0], Some(0), "the load test passes");
        if pass == 2 {
            compare_status_agrees(dir.path(), codes[1]);
        }
        // What copyArtifacts brings the next build: the last successful build's JTL, flattened.
        std::fs::create_dir_all(dir.join("baseline")).unwrap();
        std::fs::copy(dir.join("results/results.jtl"), dir.join("baseline/results.jtl")).unwrap();
    }
}
