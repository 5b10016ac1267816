//! `planrun import FILE.jmx [-o plan.yaml] [--strict]`: a JMeter plan converted ([`crate::import`]); the plan
//! on stdout or in the file, warnings on stderr.

use std::io::{Read, Write};

use super::args::ImportArgs;
use super::exit;
use super::print::errln;
use crate::import::{import as convert, Options, MAX_BYTES};

pub(super) fn import(a: ImportArgs) -> i32 {
    let shown = a.jmx.display().to_string();
    let mut bytes = Vec::new();
    let read = crate::files::open_regular(&a.jmx).and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        errln!("error: cannot read `{shown}`: {e}");
        return exit::BAD_INPUT;
    }
    let options = Options {
        source_name: a.jmx.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| shown.clone()),
        jmx_dir: a.jmx.parent().map(|p| if p.as_os_str().is_empty() { ".".into() } else { p.to_path_buf() }),
    };
    let converted = match convert(&bytes, &options) {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {shown}: {e}");
            return exit::BAD_INPUT;
        }
    };
    for w in &converted.warnings {
        errln!("warning: {w}");
    }
    for n in &converted.notes {
        errln!("note: {n}");
    }
    for d in &converted.disabled {
        errln!("note: disabled in JMeter, skipped: {d}");
    }
    if converted.listeners > 0 {
        errln!(
            "note: {} listener(s) dropped (planrun writes its own results: -o, --json, --report)",
            converted.listeners
        );
    }
    if a.strict && !converted.warnings.is_empty() {
        errln!("error: --strict: {} warning(s); no plan written", converted.warnings.len());
        return exit::BAD_INPUT;
    }
    let written = match &a.output {
        Some(path) => crate::sink::file::write_whole(path, converted.yaml.as_bytes())
            .map_err(|e| (format!("cannot write {}: {e}", path.display()), super::outputs::exit_code(&e))),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(converted.yaml.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err((format!("cannot write the plan: {e}"), exit::ABORTED))
                }
                _ => Ok(()),
            }
        }
    };
    match written {
        Ok(()) => {
            if let Some(path) = &a.output {
                errln!(
                    "wrote {} ({} warning(s)); check it with `planrun validate {}`",
                    path.display(),
                    converted.warnings.len(),
                    path.display()
                );
            }
            exit::OK
        }
        Err((e, code)) => {
            errln!("error: {e}");
            code
        }
    }
}
