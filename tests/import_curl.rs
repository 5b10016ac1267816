//! `planrun import` of curl commands: every command of tests/fixtures/curl (curlconverter's corpus) converts,
//! matches its snapshot and validates; sent by curl itself and, imported, by planrun to one recording server,
//! the two requests are the same (method, target, body byte for byte, every header the command sets); bad
//! input is exit 2 with its line and column.
//!
//! Without curl the comparison says why and passes, unless PLANRUN_REQUIRE_CURL=1 (set by .ci/run).

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::import_corpus::{self, converts_matches_its_snapshot_and_validates, multipart_parts};
use common::{describe, planrun, stderr, stdout, Recorded, Server, TempDir};

/// The host and port every command of the corpus is written for.
const CORPUS_ORIGIN: &str = "localhost:28139";

fn corpus() -> Vec<PathBuf> {
    import_corpus::corpus("curl", |p| p.extension().is_some_and(|e| e == "sh"))
}

#[test]
fn every_command_of_the_corpus_converts_matches_its_snapshot_and_validates() {
    converts_matches_its_snapshot_and_validates(&corpus(), |f| f.with_extension("yaml"));
}

/// What must be the same on both sides: headers a client chooses itself (User-Agent, Accept unless the command
/// sets them, the multipart boundary, Accept-Encoding's list) are left out.
fn same(curl: &Recorded, ours: &Recorded, set_by_command: &[String]) -> Vec<String> {
    let mut diffs = Vec::new();
    if curl.method != ours.method || curl.target != ours.target {
        diffs.push(format!("{} {} against {} {}", curl.method, curl.target, ours.method, ours.target));
    }
    let multipart = curl.header("content-type").is_some_and(|c| c.starts_with("multipart/"));
    if multipart {
        if multipart_parts(curl) != multipart_parts(ours) {
            diffs.push(format!("parts {:?} against {:?}", multipart_parts(curl), multipart_parts(ours)));
        }
    } else if curl.body != ours.body {
        diffs.push(format!(
            "body {:?} against {:?}",
            String::from_utf8_lossy(&curl.body),
            String::from_utf8_lossy(&ours.body)
        ));
    }
    for name in set_by_command {
        if name == "accept-encoding" || (multipart && name == "content-type") {
            continue;
        }
        let (a, b) = (curl.headers_named(name), ours.headers_named(name));
        if a != b {
            diffs.push(format!("{name}: {a:?} against {b:?}"));
        }
    }
    diffs
}

/// The header names a command sets (-H, -A, -e, -b, -u, -d's Content-Type), lower case.
fn header_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for h in text.split(" -H ").skip(1) {
        let h = h.trim_start_matches(['\'', '"']);
        if let Some((n, _)) = h.split_once(':') {
            names.push(n.trim().to_ascii_lowercase());
        }
    }
    for (flag, name) in [(" -A ", "user-agent"), (" -e ", "referer"), (" -b ", "cookie"), (" -u ", "authorization")] {
        if text.contains(flag) {
            names.push(name.into());
        }
    }
    if text.contains(" -d ") || text.contains(" --data") {
        names.push("content-type".into());
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn an_imported_command_sends_what_curl_sends() {
    if Command::new("curl").arg("--version").output().is_err() {
        return common::skip("curl", "PLANRUN_REQUIRE_CURL", "`curl` is not on PATH");
    }
    let mut differences = Vec::new();
    for sh in corpus() {
        let stem = sh.file_stem().and_then(|s| s.to_str()).expect("a name").to_string();
        let dir = TempDir::new("import-curl-send");
        dir.write("myfile.jpg", "not really a jpeg\n");
        let server = Server::start();
        let text = std::fs::read_to_string(&sh).expect("fixture");
        assert!(text.contains(CORPUS_ORIGIN), "{stem}: every command goes to {CORPUS_ORIGIN}");
        let local = text.replace(CORPUS_ORIGIN, &format!("127.0.0.1:{}", server.port()));
        // curl itself, bounded in time, its output thrown away.
        let command = format!("{} --max-time 10 -s -o /dev/null", local.trim_end());
        let run = Command::new("bash").arg("-c").arg(&command).current_dir(dir.path()).output().expect("bash");
        assert!(run.status.success(), "{stem}: curl failed: {}", describe(&run));
        let by_curl = server.requests();
        assert_eq!(by_curl.len(), 1, "{stem}: one request from curl");

        let file = dir.write("commands.sh", &local);
        let plan = dir.join("plan.yaml");
        let out = planrun(dir.path(), ["import", file.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{stem}: {}", describe(&out));
        let run = planrun(dir.path(), ["run", plan.to_str().unwrap(), "-o", "out.jtl", "--quiet"]);
        assert!(matches!(run.status.code(), Some(0 | 1)), "{stem}: {}", describe(&run));
        let all = server.requests();
        assert_eq!(all.len(), 2, "{stem}: one request from planrun: {all:?}");
        let d = same(&all[0], &all[1], &header_names(&text));
        if !d.is_empty() {
            differences.push(format!("{stem}:\n  {}", d.join("\n  ")));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn credentials_and_cookies_become_secret_properties() {
    let dir = TempDir::new("import-curl-secrets");
    let out = planrun(
        dir.path(),
        [
            "import",
            "--curl",
            "curl -u bob:hunter22 -H 'Authorization: Bearer t0ken-value' -b 'sid=abcd1234' https://api.example/x",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let yaml = stdout(&out);
    for secret in ["bob:hunter22", "sid=abcd1234"] {
        let at = yaml.find(&format!("value: {secret}")).unwrap_or_else(|| panic!("{secret} is a property:\n{yaml}"));
        assert!(yaml[at..].lines().nth(1).is_some_and(|l| l.trim() == "secret: true"), "{yaml}");
        assert_eq!(yaml.matches(secret).count(), 1, "only in its property:\n{yaml}");
    }
    // -u wins over an Authorization header, as in curl.
    assert!(yaml.contains("Authorization: \"Basic {{ props.credentials | base64 }}\""), "{yaml}");
    assert!(!yaml.contains("t0ken-value"), "{yaml}");
}

#[test]
fn bad_curl_input_is_exit_2_with_line_and_column() {
    let dir = TempDir::new("import-curl-bad");
    for (text, expected) in [
        ("curl 'https://x/\n", "1:6: a single quote is not closed"),
        ("# copied\ncurl -H\n", "2:6: -H needs a value after it"),
        ("curl -X POST\n", "1:1: curl without a URL"),
        ("curl ftp://files.example/x\n", "planrun sends http and https, not ftp"),
        ("curl -X BREW http://x/\n", "method `BREW` is not one planrun sends"),
    ] {
        let file = dir.write("bad.sh", text);
        let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{text}: {}", describe(&out));
        assert!(stderr(&out).contains(expected), "{text}: {}", describe(&out));
        assert!(!stderr(&out).contains("panicked") && out.stdout.is_empty(), "{text}: {}", describe(&out));
    }
    // A huge command line and a line of NUL bytes: an answer, not a panic.
    let huge = format!("curl http://x/ -d '{}'\n", "a".repeat(5 << 20));
    let file = dir.write("huge.sh", &huge);
    let out = planrun(dir.path(), ["import", file.to_str().unwrap(), "-o", "huge.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // A value megabytes long in a warning: cut on the terminal, whole in the plan's comment.
    let header = "h".repeat(3 << 20);
    let file = dir.write("header.sh", format!("curl http://x/ -H '{header}'\n"));
    let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.len() < 500 && err.contains(&format!("-H `{}...` is not a header", "h".repeat(200))), "{err}");
    assert!(stdout(&out).contains(&format!("-H `{header}` is not a header")), "the plan keeps it");
    let file = dir.write("nul.sh", "curl \0\0\0\n");
    let out = planrun(dir.path(), ["import", file.to_str().unwrap()]);
    assert!(matches!(out.status.code(), Some(2)) && !stderr(&out).contains("panicked"), "{}", describe(&out));
}
