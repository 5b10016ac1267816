//! deploy/kubernetes/: every checked-in manifest and what `render.py` prints for a plan, validated offline
//! against the Kubernetes schemas by the PyPI package `kubernetes-validate` (skipped with a reason when it is
//! not installed, unless PLANRUN_REQUIRE_KUBEVAL=1), and what no schema can see: the Indexed Job runs segment
//! `$(JOB_COMPLETION_INDEX)/N` of N from one start instant, the ConfigMap holds the plan and its files byte for
//! byte, and the merge Job reads what the segments write. The last test runs the rendered pods' commands
//! locally, as the pods would, against a recording server, and merges their results.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use base64::Engine;
use common::*;
use serde_json::Value;

/// The Kubernetes version the manifests are checked against.
const KUBE_VERSION: &str = "1.30";

/// A start instant in the past: render.py only warns (a future one would be refused when over 24 h ahead).
const PAST: &str = "2025-06-01T12:00:00Z";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `python3 deploy/kubernetes/render.py ARGS --planrun <this build>`, run from the repository's root.
fn render(args: &[&str]) -> Output {
    let mut cmd = Command::new("python3");
    cmd.arg(repo().join("deploy/kubernetes/render.py")).args(args);
    cmd.arg("--planrun").arg(env!("CARGO_BIN_EXE_planrun")).current_dir(repo());
    run_guarded(&mut cmd, Duration::from_secs(120), "render.py", |_| {})
}

/// render.py's manifests, expecting exit 0.
fn render_ok(args: &[&str]) -> String {
    let out = render(args);
    assert_eq!(out.status.code(), Some(0), "render.py failed:\n{}", describe(&out));
    stdout(&out)
}

/// Whether `kubernetes-validate` can run; when it cannot, says why the schema checks are skipped, or fails
/// when PLANRUN_REQUIRE_KUBEVAL=1 (CI).
fn kubeval_available() -> bool {
    let ran = Command::new("kubernetes-validate").arg("--version").output();
    if ran.as_ref().is_ok_and(|o| o.status.success()) {
        return true;
    }
    let why = match ran {
        Ok(out) => format!("`kubernetes-validate --version` failed:\n{}", describe(&out)),
        Err(e) => format!("kubernetes-validate is not on PATH ({e}); `pip install kubernetes-validate`"),
    };
    skip("kubernetes-validate", "PLANRUN_REQUIRE_KUBEVAL", &why);
    false
}

/// Validates the files against the Kubernetes schemas, strictly (no unknown fields), with no warning either
/// (an unknown kind is only a warning).
fn kubeval(files: &[PathBuf]) {
    let mut cmd = Command::new("kubernetes-validate");
    cmd.args(["--kubernetes-version", KUBE_VERSION, "--strict", "--quiet"]).args(files);
    let out = run_guarded(&mut cmd, Duration::from_secs(120), "kubernetes-validate", |_| {});
    assert_eq!(out.status.code(), Some(0), "kubernetes-validate refused {files:?}:\n{}", describe(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.trim().is_empty(), "kubernetes-validate warned about {files:?}:\n{said}");
}

/// The YAML stream's documents, as serde-saphyr reads them; when PyYAML is there (it comes with
/// kubernetes-validate), it must read the same values, since kubectl's reader is another one again.
fn documents(text: &str) -> Vec<Value> {
    let docs: Vec<Value> = serde_saphyr::from_multiple::<Value>(text)
        .unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
        .into_iter()
        .filter(|d| !d.is_null())
        .collect();
    let py =
        "import sys, json, yaml\njson.dump([d for d in yaml.safe_load_all(sys.stdin) if d is not None], sys.stdout)";
    let dir = TempDir::new("k8s-pyyaml");
    let input = dir.write("in.yaml", text);
    let out = Command::new("python3").args(["-c", py]).stdin(std::fs::File::open(&input).unwrap()).output();
    match out {
        Ok(out) if out.status.success() => {
            let theirs: Vec<Value> = serde_json::from_slice(&out.stdout).expect("PyYAML's JSON");
            assert_eq!(theirs, docs, "PyYAML and serde-saphyr read the manifests differently");
        }
        _ => eprintln!("PyYAML is not installed: the manifests were read by serde-saphyr alone"),
    }
    docs
}

fn kind<'a>(docs: &'a [Value], kind: &str, component: &str) -> &'a Value {
    let found: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == kind && d["metadata"]["labels"]["app.kubernetes.io/component"] == component)
        .collect();
    assert_eq!(found.len(), 1, "expected one {kind} ({component}) in {docs:#?}");
    found[0]
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap_or_else(|| panic!("not a list: {v}")).iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn container(job: &Value) -> &Value {
    let containers = job["spec"]["template"]["spec"]["containers"].as_array().expect("containers");
    assert_eq!(containers.len(), 1, "one container: {job:#}");
    &containers[0]
}

/// The value after `flag` in `args`.
fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("no {flag} in {args:?}"));
    args.get(i + 1).unwrap_or_else(|| panic!("nothing after {flag} in {args:?}"))
}

/// The ConfigMap's items as the pods see them: path under the mount -> bytes.
fn mounted_files(docs: &[Value], job: &Value) -> BTreeMap<String, Vec<u8>> {
    let cm = kind(docs, "ConfigMap", "plan");
    let volumes = job["spec"]["template"]["spec"]["volumes"].as_array().expect("volumes");
    let plan = volumes.iter().find(|v| v["name"] == "plan").expect("the plan volume");
    assert_eq!(plan["configMap"]["name"], cm["metadata"]["name"], "the volume names the ConfigMap");
    let key_chars = regex::Regex::new(r"^[-._a-zA-Z0-9]+$").unwrap();
    let mut files = BTreeMap::new();
    for item in plan["configMap"]["items"].as_array().expect("items") {
        let (key, path) = (item["key"].as_str().unwrap(), item["path"].as_str().unwrap());
        assert!(key_chars.is_match(key), "a ConfigMap key may hold only [-._a-zA-Z0-9]: {key:?}");
        let bytes = match (&cm["data"][key], &cm["binaryData"][key]) {
            (Value::String(text), Value::Null) => text.as_bytes().to_vec(),
            (Value::Null, Value::String(b64)) => base64::engine::general_purpose::STANDARD.decode(b64).unwrap(),
            other => panic!("key {key} is not in exactly one of data and binaryData: {other:?}"),
        };
        assert!(files.insert(path.to_string(), bytes).is_none(), "two items at {path}");
    }
    let keys = |field: &str| cm[field].as_object().map(|m| m.len()).unwrap_or(0);
    assert_eq!(keys("data") + keys("binaryData"), files.len(), "every key is mounted");
    files
}

/// The fixture's plan: an indented first line and blank lines at its end, a data file named through a
/// property, one in a flow mapping, a query parameter called `file` that names no file.
const FIXTURE_PLAN: &str = r#"  # an indented first line
name: k8s-fixture
seed: 7
stub: stubs/echo.yaml
properties:
  users: data/sub/users.csv
  base_url: "{{ stub.url }}"
defaults:
  base_url: "{{ props.base_url }}"
data:
  users:
    file: "{{ props.users }}"   # through a property
  phones: { file: 'data/crlf.csv' }
thread_groups:
  - name: uploaders
    threads: 2
    loops: 1
    steps:
      - name: upload
        request:
          method: POST
          url: /upload
          query: { file: not-a-file }
          multipart:
            who: "{{ users.name }} {{ phones.phone }}"
            photo: { file: data/photo.bin, content_type: image/png }


"#;

/// A plan in a temp dir that reads files under nested paths, through a property, with contents a YAML
/// writer can get wrong: an indented first line and blank lines at the end (the plan), CR LF line ends, bytes
/// that are not UTF-8, no final newline (the stub).
fn fixture(dir: &TempDir) -> PathBuf {
    for sub in ["data/sub", "stubs"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    dir.write("data/sub/users.csv", "name,password\nann,x1\nbob,x2\n");
    dir.write("data/crlf.csv", "phone\r\n+100\r\n+101\r\n");
    dir.write("data/photo.bin", [0x89, b'P', b'N', b'G', 0xff, 0x00, 0x80, b'\n']);
    dir.write("stubs/echo.yaml", "routes:\n  - path: /upload\n    status: 200\n    body: ok");
    dir.write("k8s-fixture.yaml", FIXTURE_PLAN)
}

#[test]
fn every_checked_in_manifest_passes_the_kubernetes_schemas() {
    let mut manifests = Vec::new();
    let mut stack = vec![repo().join("deploy/kubernetes")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                manifests.push(path);
            }
        }
    }
    assert!(!manifests.is_empty(), "no manifest under deploy/kubernetes/");
    for path in &manifests {
        let docs = documents(&std::fs::read_to_string(path).unwrap());
        assert!(!docs.is_empty(), "{} holds no manifest", path.display());
        for d in &docs {
            assert!(d["apiVersion"].is_string() && d["kind"].is_string(), "{}: {d:#}", path.display());
        }
    }
    if kubeval_available() {
        kubeval(&manifests);
    }
}

#[test]
fn rendered_manifests_pass_the_kubernetes_schemas() {
    let dir = TempDir::new("k8s-schemas");
    let fixture = fixture(&dir);
    let data_driven = repo().join("plans/data-driven.yaml");
    let mut rendered = Vec::new();
    for (plan, n) in [(&fixture, "1"), (&fixture, "4"), (&data_driven, "1"), (&data_driven, "4")] {
        let plan = plan.to_str().unwrap();
        let props = "base_url=http://target.load.svc:8080";
        let text = render_ok(&[plan, "--segments", n, "--start-at", PAST, "--namespace", "load", "-D", props]);
        assert_eq!(documents(&text).len(), 4, "ConfigMap, PVC, Job, merge Job:\n{text}");
        rendered.push(dir.write(&format!("rendered-{}-{n}.yaml", rendered.len()), text));
    }
    if kubeval_available() {
        kubeval(&rendered);
    }
}

/// The schema check is not a formality: a misspelt field in the Job fails it.
#[test]
fn the_schema_check_refuses_an_unknown_field() {
    if !kubeval_available() {
        return;
    }
    let text = render_ok(&["plans/data-driven.yaml", "-n", "2", "--start-at", PAST]);
    let bad = text.replacen("  completionMode: Indexed\n", "  completionMode: Indexed\n  completion: 2\n", 1);
    assert_ne!(bad, text);
    let dir = TempDir::new("k8s-unknown-field");
    let file = dir.write("bad.yaml", bad);
    let mut cmd = Command::new("kubernetes-validate");
    cmd.args(["--kubernetes-version", KUBE_VERSION, "--strict", "--quiet"]).arg(&file);
    let out = run_guarded(&mut cmd, Duration::from_secs(120), "kubernetes-validate", |_| {});
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stdout(&out).contains("'completion' was unexpected"), "{}", describe(&out));
}

#[test]
fn the_indexed_job_runs_segment_index_of_n_from_one_start_instant() {
    let dir = TempDir::new("k8s-segments");
    let plan = fixture(&dir);
    let start = PAST;
    for n in [1usize, 4] {
        let text = render_ok(&[plan.to_str().unwrap(), "-n", &n.to_string(), "--start-at", start]);
        let docs = documents(&text);
        let (job, merge) = (kind(&docs, "Job", "segments"), kind(&docs, "Job", "merge"));
        let spec = &job["spec"];
        assert_eq!(spec["completionMode"], "Indexed");
        assert_eq!((spec["completions"].as_u64(), spec["parallelism"].as_u64()), (Some(n as u64), Some(n as u64)));
        let c = container(job);
        let args = strings(&c["args"]);
        assert_eq!(after(&args, "--segment"), format!("$(JOB_COMPLETION_INDEX)/{n}"), "{args:?}");
        assert_eq!(args[0], "run");
        // The start instant: one value in the pod template, so the same for every pod, passed as --start-at.
        let start_ref = after(&args, "--start-at");
        let var = start_ref.strip_prefix("$(").and_then(|v| v.strip_suffix(')')).expect("--start-at $(VAR)");
        let env: Vec<&Value> = c["env"].as_array().unwrap().iter().filter(|e| e["name"] == var).collect();
        assert_eq!(env.len(), 1, "{var} once in {:#}", c["env"]);
        assert_eq!(env[0]["value"], start);
        assert_eq!(text.matches(start).count(), 3, "the instant is written in the header lines and the env only");
        // The segments write where the merge reads, on the same claim mounted at the same place.
        let out = after(&args, "-o");
        let merge_args = strings(&container(merge)["args"]);
        assert_eq!(merge_args[0], "merge");
        let inputs: Vec<String> = (0..n).map(|i| out.replace("$(JOB_COMPLETION_INDEX)", &i.to_string())).collect();
        assert_eq!(&merge_args[1..=n], inputs.as_slice(), "merge reads every segment's -o");
        assert!(merge_args[n + 1].starts_with('-'), "and nothing else: {merge_args:?}");
        let claim = |j: &Value| {
            let volumes = j["spec"]["template"]["spec"]["volumes"].as_array().unwrap();
            let results = volumes.iter().find(|v| v["persistentVolumeClaim"].is_object()).expect("a claim");
            let mount =
                container(j)["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == results["name"]).cloned();
            (results["persistentVolumeClaim"]["claimName"].clone(), mount.expect("mounted")["mountPath"].clone())
        };
        assert_eq!(claim(job), claim(merge));
        let pvc = kind(&docs, "PersistentVolumeClaim", "results");
        assert_eq!(claim(job).0, pvc["metadata"]["name"]);
        assert_eq!(strings(&pvc["spec"]["accessModes"]), ["ReadWriteMany"]);
        assert!(out.starts_with(claim(job).1.as_str().unwrap()), "{out} is on the claim");
        // Both read the same plan.
        assert_eq!(args[1], after(&merge_args, "--plan"));
        assert_eq!(mounted_files(&docs, job), mounted_files(&docs, merge));
    }
}

#[test]
fn the_configmap_holds_the_plan_and_every_file_it_reads_byte_for_byte() {
    let dir = TempDir::new("k8s-configmap");
    let plan = fixture(&dir);
    let text = render_ok(&[plan.to_str().unwrap(), "-n", "2", "--start-at", PAST]);
    let docs = documents(&text);
    let job = kind(&docs, "Job", "segments");
    let files = mounted_files(&docs, job);
    let want: BTreeSet<&str> =
        ["k8s-fixture.yaml", "data/sub/users.csv", "data/crlf.csv", "data/photo.bin", "stubs/echo.yaml"].into();
    assert_eq!(files.keys().map(String::as_str).collect::<BTreeSet<_>>(), want);
    for (path, bytes) in &files {
        assert_eq!(bytes, &std::fs::read(dir.join(path)).unwrap(), "{path} differs in the ConfigMap");
    }
    let args = strings(&container(job)["args"]);
    let mount = container(job)["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == "plan").unwrap();
    assert_eq!(args[1], format!("{}/k8s-fixture.yaml", mount["mountPath"].as_str().unwrap()));
}

#[test]
fn the_checked_in_example_is_what_the_generator_prints() {
    let example = repo().join("deploy/kubernetes/example/data-driven.yaml");
    let text = std::fs::read_to_string(&example).unwrap();
    let line = text.lines().find_map(|l| l.strip_prefix("# Rendered by: deploy/kubernetes/render.py "));
    let args: Vec<&str> = line.expect("a `# Rendered by:` line").split_whitespace().collect();
    assert!(args.contains(&"--segments") && args.contains(&"4"), "the example has 4 segments: {args:?}");
    assert_eq!(render_ok(&args), text, "deploy/kubernetes/example/ is stale: render it again");
}

#[test]
fn lead_seconds_sets_one_instant_that_far_ahead() {
    let before = chrono::Utc::now();
    let text = render_ok(&["plans/data-driven.yaml", "-n", "3", "--lead-seconds", "300"]);
    let after = chrono::Utc::now();
    let docs = documents(&text);
    let env = container(kind(&docs, "Job", "segments"))["env"].as_array().unwrap().clone();
    let at = env.iter().find(|e| e["name"] == "PLANRUN_START_AT").expect("the start env")["value"].as_str().unwrap();
    let at = chrono::DateTime::parse_from_rfc3339(at).expect("RFC 3339");
    assert!(at >= before + chrono::Duration::seconds(300) - chrono::Duration::seconds(1), "{at} vs {before}");
    assert!(at <= after + chrono::Duration::seconds(301), "{at} vs {after}");
    assert!(text.contains(&format!("--start-at {}", at.format("%Y-%m-%dT%H:%M:%SZ"))), "the header replays it");
}

#[test]
fn the_generator_refuses_bad_input() {
    let dir = TempDir::new("k8s-refusals");
    std::fs::create_dir_all(dir.join("plan")).unwrap();
    dir.write("outside.csv", "phone\n+1\n");
    let outside = dir.write(
        "plan/outside.yaml",
        "name: outside\ndata:\n  phones:\n    file: ../outside.csv\nthread_groups:\n  - name: g\n    threads: 1\n    \
         steps:\n      - name: s\n        request: { url: \"http://127.0.0.1:1/{{ phones.phone }}\" }\n",
    );
    let broken = dir.write("plan/broken.yaml", "name: broken\nthread_groups: 3\n");
    let (outside, broken) = (outside.to_str().unwrap(), broken.to_str().unwrap());
    let (missing, folder) = (dir.join("plan/missing.yaml"), dir.path().to_str().unwrap());
    let ok = "plans/data-driven.yaml";
    let cases: [(&[&str], &str); 13] = [
        (&[ok, "-n", "0"], "--segments must be from 1"),
        (&[ok, "-n", "-3"], "--segments must be from 1"),
        (&[ok, "-n", "x"], "invalid int value"),
        (&[missing.to_str().unwrap(), "-n", "2"], "not found"),
        (&[folder, "-n", "2"], "not a regular file"),
        (&[outside, "-n", "2"], "outside the plan's directory"),
        (&[broken, "-n", "2"], "does not validate"),
        (&[ok, "-n", "2", "--start-at", "tomorrow"], "expected RFC 3339"),
        (&[ok, "-n", "2", "--start-at", "2999-01-01T00:00:00Z"], "more than 24 h"),
        (&[ok, "-n", "2", "--start-at", "1", "--lead-seconds", "5"], "not allowed with"),
        (&[ok, "-n", "2", "--lead-seconds", "-1"], "--lead-seconds must be"),
        (&[ok, "-n", "2", "-D", "novalue"], "expected -D name=value"),
        (&[ok, "-n", "2", "--name", "Bad_Name"], "DNS-1123"),
    ];
    for (args, said) in cases {
        let out = render(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}:\n{}", describe(&out));
        assert!(stderr(&out).contains(said), "{args:?} should say {said:?}:\n{}", describe(&out));
        assert!(out.stdout.is_empty(), "{args:?} printed manifests:\n{}", describe(&out));
    }
}

/// The rendered pods, run here: the ConfigMap written out as the plan volume, a folder for the claim, and each
/// container's command and args expanded as the kubelet does, with the volumes' paths mapped to those folders.
struct Pods {
    dir: TempDir,
    docs: Vec<Value>,
}

impl Pods {
    fn render(name: &str, args: &[&str]) -> Pods {
        let dir = TempDir::new(name);
        let docs = documents(&render_ok(args));
        for (path, bytes) in mounted_files(&docs, kind(&docs, "Job", "segments")) {
            let file = dir.join("plan").join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, bytes).unwrap();
        }
        Pods { dir, docs }
    }

    /// Runs pod `index` of the Job of this component ("segments" or "merge").
    fn run(&self, component: &str, index: usize) -> Output {
        let c = container(kind(&self.docs, "Job", component));
        let mut env = BTreeMap::new();
        for var in c["env"].as_array().into_iter().flatten() {
            let value = match (&var["value"], &var["valueFrom"]["fieldRef"]["fieldPath"]) {
                (Value::String(v), _) => v.clone(),
                (_, Value::String(field)) if field.contains("job-completion-index") => index.to_string(),
                other => panic!("an env var this test cannot give: {other:?}"),
            };
            env.insert(var["name"].as_str().unwrap().to_string(), value);
        }
        let words: Vec<String> = strings(&c["command"])
            .iter()
            .chain(&strings(&c["args"]))
            .map(|a| self.local(&kubelet_expand(a, &env)))
            .collect();
        let bin = Path::new(env!("CARGO_BIN_EXE_planrun")).parent().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]).env("PATH", path).current_dir(self.dir.path());
        run_guarded(&mut cmd, Duration::from_secs(60), &words.join(" "), |_| {})
    }

    /// A path in a pod, here.
    fn local(&self, arg: &str) -> String {
        match (arg.strip_prefix("/plan/"), arg.strip_prefix("/results/")) {
            (Some(rest), _) => self.dir.join("plan").join(rest).display().to_string(),
            (_, Some(rest)) => self.results(rest).display().to_string(),
            _ => arg.to_string(),
        }
    }

    fn results(&self, rest: &str) -> PathBuf {
        self.dir.join("results").join(rest)
    }
}

/// The kubelet's expansion of command and args: `$(NAME)` is the container's env var NAME (left as written
/// when there is none), `$$` is `$`.
fn kubelet_expand(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("$$") {
            out.push('$');
            rest = after;
        } else if let Some((name, after)) = rest.strip_prefix("$(").and_then(|r| r.split_once(')')) {
            match env.get(name) {
                Some(value) => out.push_str(value),
                None => out.push_str(&rest[..name.len() + 3]),
            }
            rest = after;
        } else {
            out.push('$');
            rest = &rest[1..];
        }
    }
    out + rest
}

#[test]
fn the_rendered_pods_run_here_and_their_merge_counts_every_request() {
    let server = Server::start();
    let (base, start) = (format!("base_url={}", server.url()), (now_ms() - 1000).to_string());
    let pods = Pods::render("k8s-pods", &["plans/data-driven.yaml", "-n", "4", "--start-at", &start, "-D", &base]);
    let mut rows = 0;
    for index in 0..4 {
        let out = pods.run("segments", index);
        assert_eq!(out.status.code(), Some(0), "segment {index}:\n{}", describe(&out));
        assert!(stderr(&out).contains(&format!("segment {index}/4")), "{}", describe(&out));
        rows += read_jtl(&pods.results(&format!("data-driven/segment-{index}.jtl"))).rows.len();
    }
    let out = pods.run("merge", 0);
    assert_eq!(out.status.code(), Some(0), "merge:\n{}", describe(&out));
    let merged = read_jtl(&pods.results("data-driven/all.jtl"));
    // 5 senders x 4 loops, each request once, on both sides.
    assert_eq!((server.count(), rows, merged.rows.len()), (20, 20, 20));
    assert_eq!(summary_total(&stdout(&out)).0, 20);
    assert!(pods.results("data-driven/summary.json").is_file());
    assert!(pods.results("data-driven/report/index.html").is_file());
}

/// A segment whose own rows fail a threshold exits 1; its pod succeeds (the segment wrapper), and the merge
/// Job's exit code is the verdict. Any other failure of planrun fails the pod.
#[test]
fn a_segments_own_threshold_is_not_the_verdict_the_merge_jobs_exit_code_is() {
    let server = Server::start();
    let dir = TempDir::new("k8s-verdict-plan");
    let plan = dir.write(
        "verdict.yaml",
        "name: verdict\nseed: 3\nproperties:\n  base_url: http://127.0.0.1:1\ndefaults:\n  base_url: \"{{ props.base_url }}\"\n\
         thresholds:\n  total: [\"error_rate < 1%\"]\nthread_groups:\n  - name: g\n    threads: 4\n    loops: 2\n    \
         steps:\n      - name: get\n        request: { url: /x }\n        assert: [{ status: 418 }]\n",
    );
    let base = format!("base_url={}", server.url());
    let pods = Pods::render("k8s-verdict", &[plan.to_str().unwrap(), "-n", "2", "--start-at", PAST, "-D", &base]);
    for index in 0..2 {
        let out = pods.run("segments", index);
        assert_eq!(out.status.code(), Some(0), "segment {index}:\n{}", describe(&out));
        assert!(stderr(&out).contains("the merge job judges them on all segments"), "{}", describe(&out));
    }
    let out = pods.run("merge", 0);
    assert_eq!(out.status.code(), Some(1), "merge:\n{}", describe(&out));
    assert_eq!((server.count(), read_jtl(&pods.results("verdict/all.jtl")).rows.len()), (8, 8));
    // A plan that is not there: exit 2 goes through the wrapper.
    std::fs::remove_file(pods.dir.join("plan/verdict.yaml")).unwrap();
    let out = pods.run("segments", 0);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(server.count(), 8);
}
