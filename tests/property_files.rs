//! `--env-file` and `-p`: property files that set what `-D` sets, in a documented order (the plan's defaults,
//! then the files as given, then `-D`), read by docker's and by java.util.Properties' rules; secrets read from
//! them stay masked; a bad file is exit 2 naming file and line.

use std::collections::BTreeMap;
use std::process::Command;

use crate::common::{describe, planrun, read_jtl, skip, stderr, stdout, Server, TempDir};

/// A plan whose one request posts every property as JSON; `properties` is the plan's `properties:` block.
fn echo_plan(dir: &TempDir, properties: &str) -> std::path::PathBuf {
    dir.write(
        "plan.yaml",
        format!(
            r#"name: echo
{properties}
defaults:
  base_url: http://127.0.0.1:1
thread_groups:
  - name: g
    threads: 1
    loops: 1
    steps:
      - name: s
        request:
          method: POST
          url: /x
          body: "{{{{ props | tojson }}}}"
          content_type: application/json
"#
        ),
    )
}

/// The properties the plan sees with `args`, from the body `dry-run` prints; numbers as their text.
fn seen(dir: &TempDir, args: &[&str]) -> BTreeMap<String, String> {
    let mut all = vec!["dry-run", "plan.yaml", "-n", "1"];
    all.extend_from_slice(args);
    let out = planrun(dir.path(), &all);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = stdout(&out);
    let body = text.lines().find(|l| l.starts_with('{')).unwrap_or_else(|| panic!("no body in:\n{text}"));
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(body).unwrap();
    map.into_iter().map(|(k, v)| (k, v.as_str().map(String::from).unwrap_or_else(|| v.to_string()))).collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn property_files_apply_in_command_line_order_under_d_and_over_the_plan() {
    let dir = TempDir::new("property-order");
    echo_plan(&dir, "properties:\n  a: plan\n  b: plan\n  c: plan\n  d: plan");
    dir.write("one.env", "# docker's rules\na=env\nb=env\n");
    dir.write("two.properties", "b = props\nc: props\n");
    let got = seen(&dir, &["--env-file", "one.env", "-p", "two.properties", "-D", "c=cli"]);
    assert_eq!(got, map(&[("a", "env"), ("b", "props"), ("c", "cli"), ("d", "plan")]));
    // The later file wins whichever its kind.
    let got = seen(&dir, &["-p", "two.properties", "--env-file", "one.env"]);
    assert_eq!(got, map(&[("a", "env"), ("b", "env"), ("c", "props"), ("d", "plan")]));
    // A name the plan does not declare: the last value given wins too, -D over a file.
    dir.write("three.env", "x=file\n");
    let got = seen(&dir, &["--env-file", "three.env", "-D", "x=one", "-D", "x=two"]);
    assert_eq!(got["x"], "two");
    let got = seen(&dir, &["-D", "x=one", "--env-file", "three.env"]);
    assert_eq!(got["x"], "one", "-D wins over a file given after it");
    // validate reads them too.
    let out = planrun(dir.path(), ["validate", "plan.yaml", "--env-file", "missing.env"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
}

#[test]
fn a_name_only_in_a_file_is_not_warned_about() {
    let dir = TempDir::new("property-unused");
    echo_plan(&dir, "properties:\n  a: plan");
    dir.write("many.env", "a=env\nunrelated=1\n");
    let out = planrun(dir.path(), ["validate", "plan.yaml", "--env-file", "many.env", "-D", "tpyo=1"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("-D tpyo") && !err.contains("unrelated"), "{err}");
}

#[test]
fn a_secret_read_from_a_file_stays_secret() {
    let server = Server::start();
    let dir = TempDir::new("property-secret");
    let plan = dir.write(
        "plan.yaml",
        format!(
            r#"name: secret-files
properties:
  password: {{ value: "plan-default", secret: true }}
defaults:
  base_url: "{}"
thread_groups:
  - name: g
    threads: 1
    loops: 3
    steps:
      - name: send
        request:
          url: /ok
          query: {{ password: "{{{{ props.password }}}}" }}
"#,
            server.url()
        ),
    );
    for (option, file, text) in [
        ("--env-file", "vault.env", "password=env-s3cr3t-value\n"),
        ("-p", "vault.properties", "password = env-s3cr3t-value\n"),
    ] {
        dir.write(file, text);
        let before = server.count();
        let jtl = dir.join("out.jtl");
        let json = dir.join("out.jsonl");
        let out = planrun(
            dir.path(),
            [
                "run",
                plan.to_str().unwrap(),
                option,
                file,
                "-o",
                jtl.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ]
            .into_iter()
            .chain(["--http-debug-first", "1", "--quiet"]),
        );
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let rows = read_jtl(&jtl);
        assert_eq!(server.count() - before, rows.rows.len(), "the server's count equals the JTL's rows");
        assert_eq!(rows.rows.len(), 3);
        assert!(server.requests().iter().all(|r| r.query()["password"] == "env-s3cr3t-value"), "sent as it is");
        let shown = [rows.text.clone(), std::fs::read_to_string(&json).unwrap(), stdout(&out), stderr(&out)];
        for text in &shown {
            assert!(!text.contains("s3cr3t"), "{option}: the secret shows in:\n{text}");
        }
        assert!(rows.rows[0]["URL"].ends_with("/ok?password=***"), "{:?}", rows.rows[0]);
        let dry = planrun(dir.path(), ["dry-run", plan.to_str().unwrap(), "-n", "1", option, file]);
        assert!(stdout(&dry).contains("password=***") && !stdout(&dry).contains("s3cr3t"), "{}", describe(&dry));
    }
    // Too short to be masked, from a file as from -D: refused, and the value is not shown.
    dir.write("short.env", "password=ab\n");
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap(), "--env-file", "short.env"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("set by a property file to a value 2 characters long"), "{}", describe(&out));
}

#[test]
fn bad_property_files_are_refused_with_file_and_line() {
    let dir = TempDir::new("property-bad");
    echo_plan(&dir, "properties:\n  a: plan");
    std::fs::create_dir(dir.join("adir")).unwrap();
    dir.write("space.env", "# ok\na=1\nMY KEY=hunter2-password\n");
    dir.write("noname.env", "\n=hunter2-password\n");
    dir.write("latin1.env", b"a=1\nb=caf\xe9\n");
    dir.write("escape.properties", "a=1\nb=\\u12x hunter2-password\n");
    dir.write("surrogate.properties", "a = 1 \\\n   2\nb=\\uD800\n");
    dir.write("noname.properties", "a=1\n = hunter2-password\n");
    dir.write("long.env", format!("a=1\nb={}\n", "x".repeat(2 << 20)));
    dir.write("huge.properties", "a=1\n".repeat(5 << 20));
    let cases: &[(&str, &str, &str)] = &[
        ("--env-file", "space.env", "space.env:3: the name `MY KEY` holds white space; expected NAME=VALUE"),
        ("--env-file", "noname.env", "noname.env:2: a value without a name; expected NAME=VALUE"),
        ("--env-file", "latin1.env", "latin1.env:2: the line is not UTF-8"),
        ("-p", "escape.properties", "escape.properties:2: malformed \\uXXXX escape `\\u12x `"),
        ("-p", "surrogate.properties", "surrogate.properties:3: a \\uXXXX escape is half of a UTF-16 surrogate pair"),
        ("-p", "noname.properties", "noname.properties:2: a property without a name"),
        ("--env-file", "missing.env", "--env-file missing.env: not found"),
        ("-p", "adir", "-p adir: is a directory; expected a file"),
        ("--env-file", "long.env", "long.env:2: the line is longer than 1 MiB"),
        ("-p", "huge.properties", "huge.properties: holds more than 16 MiB"),
    ];
    for (option, file, expected) in cases {
        let out = planrun(dir.path(), ["dry-run", "plan.yaml", option, file]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", describe(&out));
        let err = stderr(&out);
        assert!(err.contains(expected), "{file}: expected `{expected}` in:\n{err}");
        assert!(!err.contains("hunter2") && !err.contains("panicked"), "{err}");
        assert!(stdout(&out).is_empty(), "{file}: nothing is printed before the files are read");
    }
    let out = planrun(dir.path(), ["merge", "a.jtl", "-o", "m.jtl", "--env-file", "space.env"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("give --plan too"), "{}", describe(&out));
}

/// Reads a properties file with java.util.Properties.load and prints it as a JSON object.
const JAVA_READER: &str = r#"
import java.io.*;
import java.util.*;

public class PropsToJson {
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (Reader r = new InputStreamReader(new FileInputStream(args[0]), "UTF-8")) { p.load(r); }
        List<String> out = new ArrayList<>();
        for (String k : new TreeSet<>(p.stringPropertyNames())) out.add(quote(k) + ":" + quote(p.getProperty(k)));
        System.out.println("{" + String.join(",", out) + "}");
    }
}
"#;

#[test]
fn properties_files_are_read_as_java_reads_them() {
    let dir = TempDir::new("property-java");
    echo_plan(&dir, "");
    let tricky = concat!(
        "# Properties.load's documented examples\n",
        "Truth = Beauty\n",
        " Truth2:Beauty\n",
        "Truth3                    :Beauty\n",
        "fruits                           apple, banana, pear, \\\n",
        "                                 cantaloupe, watermelon, \\\n",
        "                                 kiwi, mango\n",
        "cheeses\n",
        "\\:\\=\n",
        "! a bang comment \\\n",
        "after.comment=x\r\n",
        "cr.only=y\rtab\\tkey\t= tab value\\t\n",
        "unicode=caf\\u00e9 \\uD83D\\uDE00 \u{e9}\n",
        "escapes=\\b\\q\\\\\\#\\!\\ lead\n",
        "key\\ with\\ spaces  :  value: with = seps  \n",
        "a.b = = double\n",
        "even=ends\\\\\n",
        "blank.continuation=one\\\n",
        "\n",
        "comment.continuation=two\\\n",
        "   # not a comment\n",
        "\u{c}formfeed\u{c}=\u{c}ff\n",
        "last=dropped backslash\\",
    );
    dir.write("tricky.properties", tricky);
    let ours = seen(&dir, &["-p", "tricky.properties"]);
    if Command::new("java").arg("-version").output().is_err() {
        skip("java", "PLANRUN_REQUIRE_JMETER", "no `java` (apt-get install default-jdk-headless)");
        assert_eq!(ours["fruits"], "apple, banana, pear, cantaloupe, watermelon, kiwi, mango");
        return;
    }
    let source = dir.write("PropsToJson.java", JAVA_READER);
    let out = Command::new("java")
        .arg(&source)
        .arg(dir.join("tricky.properties"))
        .current_dir(dir.path())
        .output()
        .expect("run java");
    assert!(out.status.success(), "{}", describe(&out));
    let java: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let java: BTreeMap<String, String> = java.into_iter().map(|(k, v)| (k, v.as_str().unwrap().to_string())).collect();
    assert_eq!(ours, java, "planrun and java.util.Properties read the file alike");
    assert_eq!(java.len(), 18, "{java:?}");
}
