//! `planrun completions SHELL` and `planrun man`: generated from the clap definitions, so that they list
//! every subcommand and option the binary has.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, CommandFactory, ValueHint};
use clap_complete::Shell;

use super::args::Cli;
use super::exit;
use super::print::errln;

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish.
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write planrun.1 and a page per subcommand (planrun-run.1, ...) into DIR instead of printing planrun.1.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

pub(super) fn completions(a: CompletionsArgs) -> i32 {
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "planrun", &mut script);
    if a.shell == Shell::Bash {
        script.extend_from_slice(bash_files(&cmd).as_bytes());
    }
    write_stdout(&script, "the completion script")
}

pub(super) fn man(a: ManArgs) -> i32 {
    let cmd = Cli::command();
    match a.dir {
        Some(dir) => {
            let written = std::fs::create_dir_all(&dir).and_then(|()| clap_mangen::generate_to(cmd, &dir));
            match written {
                Ok(()) => exit::OK,
                Err(e) => {
                    errln!("error: cannot write the manual pages into {}: {e}", dir.display());
                    exit::ABORTED
                }
            }
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page).expect("rendering into memory cannot fail");
            write_stdout(&page, "the manual page")
        }
    }
}

fn write_stdout(bytes: &[u8], what: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            errln!("error: cannot write {what}: {e}");
            exit::ABORTED
        }
    }
}

/// What the bash script adds to clap_complete's. Its function offers a subcommand's options where a positional
/// argument goes and leaves files to bash's `-o default` fallback, which applies only when no option matches:
/// `planrun run <TAB>` would list options, never the plans. This function calls clap's, then, where a file
/// goes (not after an option that takes a value, not after `-`), leaves out the options (they are offered
/// after `-`) and adds the files and directories (subcommand names stay: `planrun r<TAB>` offers `run`,
/// `report` and the files starting with r).
fn bash_files(cmd: &clap::Command) -> String {
    let mut valued: Vec<String> = Vec::new();
    let mut no_files: Vec<&str> = Vec::new();
    for sub in cmd.get_subcommands() {
        let takes_path = sub.get_positionals().any(|p| {
            matches!(p.get_value_hint(), ValueHint::FilePath | ValueHint::AnyPath | ValueHint::DirPath)
                && p.get_possible_values().is_empty()
        });
        if !takes_path && !no_files.contains(&sub.get_name()) {
            no_files.push(sub.get_name());
        }
        for arg in sub.get_opts().filter(|a| !a.is_require_equals_set()) {
            let names = arg.get_short().map(|s| format!("-{s}")).into_iter();
            for name in names.chain(arg.get_long().map(|l| format!("--{l}"))) {
                if !valued.contains(&name) {
                    valued.push(name);
                }
            }
        }
    }
    if !no_files.contains(&"help") {
        no_files.push("help");
    }
    format!(
        r#"
# Files where a command takes a file (clap's function above offers options there).
_planrun_files() {{
    _planrun "$@"
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="" cmd="" word
    # Not after `-`, nor where an option's value goes: clap's function knows those.
    local -a kept=()
    [[ $cur == -* ]] && return 0
    (( COMP_CWORD > 0 )) && prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    (( COMP_CWORD > 1 )) && cmd="${{COMP_WORDS[1]}}"
    case "$prev" in
        {valued}) return 0 ;;
    esac
    for word in "${{COMPREPLY[@]}}"; do
        [[ $word == -* ]] || kept+=("$word")
    done
    COMPREPLY=("${{kept[@]}}")
    case "$cmd" in
        {no_files}) return 0 ;;
    esac
    local IFS=$'\n'
    COMPREPLY+=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
    return 0
}}
complete -F _planrun_files -o nosort -o bashdefault -o default planrun
"#,
        valued = valued.join("|"),
        no_files = no_files.join("|"),
    )
}
