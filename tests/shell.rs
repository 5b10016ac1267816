//! The shell's view of planrun: completion scripts and the manual page, generated from the command line's
//! definitions, and checked with bash itself and man.

use std::process::Command;

use crate::common::{describe, planrun, skip, stdout, TempDir};

/// What bash's completion offers for `words` (the last one being completed), in `dir`: the generated script
/// is sourced, COMP_WORDS and COMP_CWORD are set as readline sets them, and the function that `complete -p`
/// names for planrun is called, as readline calls it.
fn bash_complete(dir: &TempDir, words: &[&str]) -> Vec<String> {
    let script = dir.join("planrun.bash");
    let out = planrun(dir.path(), ["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    std::fs::write(&script, &out.stdout).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let driver = format!(
        r#"source {script}
COMP_WORDS=({words})
COMP_CWORD={cword}
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
fn=$(complete -p planrun | sed -E 's/.*-F ([^ ]+).*/\1/')
"$fn" planrun "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        script = script.display(),
        words = quoted.join(" "),
        cword = words.len() - 1,
    );
    let out = Command::new("bash").arg("-c").arg(driver).current_dir(dir.path()).output().expect("run bash");
    assert!(out.status.success(), "{}", describe(&out));
    let mut got: Vec<String> = stdout(&out).lines().filter(|l| !l.is_empty()).map(String::from).collect();
    got.sort();
    got
}

#[test]
fn bash_completes_subcommands_and_plan_files() {
    let dir = TempDir::new("bash-completion");
    dir.write("load.yaml", "name: x\n");
    dir.write("rush.yaml", "name: y\n");
    std::fs::create_dir(dir.join("plans")).unwrap();

    // The subcommands starting with r, and the files: `planrun PLAN` runs a plan.
    assert_eq!(bash_complete(&dir, &["planrun", "r"]), ["report", "run", "rush.yaml"]);
    // Where the plan goes: the files and directories, not the options.
    assert_eq!(bash_complete(&dir, &["planrun", "run", ""]), ["load.yaml", "planrun.bash", "plans", "rush.yaml"]);
    assert_eq!(bash_complete(&dir, &["planrun", "validate", "lo"]), ["load.yaml"]);
    assert_eq!(bash_complete(&dir, &["planrun", "run", "load.yaml", "--json", "r"]), ["rush.yaml"]);
    assert_eq!(bash_complete(&dir, &["planrun", "run", "load.yaml", "--env-file", "r"]), ["rush.yaml"]);
    // Options when asked for, and no files where none go.
    let opts = bash_complete(&dir, &["planrun", "run", "--se"]);
    assert_eq!(opts, ["--seed", "--segment"]);
    assert_eq!(bash_complete(&dir, &["planrun", "completions", ""]), ["bash", "elvish", "fish", "powershell", "zsh"]);
}

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    let dir = TempDir::new("completions");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = planrun(dir.path(), ["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", describe(&out));
        let text = stdout(&out);
        for word in ["dry-run", "merge", "json", "summary-json", "env-file"] {
            assert!(text.contains(word), "{shell}'s script lacks {word}");
        }
    }
    // zsh completes the plan with files, from the value hint.
    let zsh = stdout(&planrun(dir.path(), ["completions", "zsh"]));
    assert!(zsh.contains(":plan -- The plan file:_files"), "{zsh}");
    let out = planrun(dir.path(), ["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    // bash itself reads the script.
    let script = dir.write("planrun.bash", planrun(dir.path(), ["completions", "bash"]).stdout);
    let out = Command::new("bash").arg("-n").arg(&script).output().expect("run bash");
    assert!(out.status.success(), "{}", describe(&out));
}

/// `man -l` renders the page without a warning (groff's `-ww` through MANROFFOPT).
fn render_man(dir: &TempDir, page: &std::path::Path) -> Option<String> {
    if Command::new("man").arg("--version").output().is_err() {
        skip("man", "PLANRUN_REQUIRE_MAN", "no `man` (apt-get install man-db groff-base)");
        return None;
    }
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .current_dir(dir.path())
        .env("MANWIDTH", "100")
        .env("MANROFFOPT", "-ww")
        .env("MAN_KEEP_STDERR", "1")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .expect("run man");
    assert!(out.status.success(), "{}", describe(&out));
    assert!(out.stderr.is_empty(), "man warned:\n{}", describe(&out));
    Some(stdout(&out))
}

#[test]
fn man_renders_the_page_of_planrun_and_of_each_subcommand() {
    let dir = TempDir::new("man");
    let out = planrun(dir.path(), ["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let page = dir.write("planrun.1", &out.stdout);
    let Some(text) = render_man(&dir, &page) else { return };
    assert!(text.contains("SYNOPSIS"), "{text}");
    for sub in ["planrun-run(1)", "planrun-merge(1)", "planrun-completions(1)"] {
        assert!(text.contains(sub), "the page does not list {sub}:\n{text}");
    }

    let pages = dir.join("pages");
    let out = planrun(dir.path(), ["man".as_ref(), "--dir".as_ref(), pages.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let run = render_man(&dir, &pages.join("planrun-run.1")).unwrap();
    for option in ["--json", "--env-file", "--properties", "--seed", "--summary-json", "FILE"] {
        assert!(run.contains(option), "planrun-run(1) lacks {option}:\n{run}");
    }
    assert!(pages.join("planrun-validate.1").is_file());
}
