//! `planrun import FILE [-o plan.yaml] [--strict]` and `planrun import --curl 'curl ...'`: a JMeter plan, a
//! HAR recording, an OpenAPI document or curl commands converted ([`crate::import`]); the plan on stdout or
//! in the file, warnings on stderr.

use std::io::{Read, Write};

use super::args::ImportArgs;
use super::exit;
use super::print::errln;
use crate::import::{import as convert, Options, MAX_BYTES};

pub(super) fn import(a: ImportArgs) -> i32 {
    let (shown, bytes, options) = match (&a.curl, &a.jmx) {
        (Some(command), _) => {
            let options = Options { source_name: "curl".into(), jmx_dir: None };
            ("--curl".to_string(), command.clone().into_bytes(), options)
        }
        (None, Some(path)) => {
            let shown = path.display().to_string();
            let mut bytes = Vec::new();
            let read = crate::files::open_regular(path).and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes));
            if let Err(e) = read {
                errln!("error: cannot read `{shown}`: {e}");
                return exit::BAD_INPUT;
            }
            let options = Options {
                source_name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| shown.clone()),
                jmx_dir: path.parent().map(|p| if p.as_os_str().is_empty() { ".".into() } else { p.to_path_buf() }),
            };
            (shown, bytes, options)
        }
        (None, None) => {
            errln!("error: give a file to import, or --curl 'curl ...'");
            return exit::BAD_INPUT;
        }
    };
    let result = if bytes.len() as u64 > MAX_BYTES {
        Err(crate::import::ImportError::TooLarge { size: bytes.len() as u64, limit: MAX_BYTES })
    } else {
        convert_any(&a, &bytes, &options)
    };
    let converted = match result {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {shown}: {e}");
            return exit::BAD_INPUT;
        }
    };
    // On the terminal a value quoted in a warning is cut; the plan's comments keep it whole.
    for w in &converted.warnings {
        errln!("warning: {}", crate::diag::shorten_quoted(&w.to_string()));
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

/// Converts `bytes`, in the format their content (or, failing that, the file's extension) says.
fn convert_any(
    a: &ImportArgs,
    bytes: &[u8],
    options: &Options,
) -> Result<crate::import::Converted, crate::import::ImportError> {
    use crate::import::{curl, har, openapi, postman};
    let ext = |names: &[&str]| {
        a.jmx.as_ref().and_then(|p| p.extension()).is_some_and(|e| names.iter().any(|x| e.eq_ignore_ascii_case(x)))
    };
    let Ok(text) = std::str::from_utf8(bytes) else { return convert(bytes, options) };
    if a.curl.is_some() || curl::looks_like_curl(text) {
        return curl::import(text, options);
    }
    if postman::looks_like_postman(text) {
        let env = a.postman_env.as_ref().map(|path| read_text(path)).transpose()?;
        return postman::import(text, env.as_deref(), options);
    }
    if openapi::looks_like_openapi(text) {
        return openapi_import(a, text, options);
    }
    if har::looks_like_har(text) || ext(&["har"]) {
        let har = har::HarOptions {
            include_hosts: a.include_host.clone(),
            exclude: a.exclude.clone(),
            keep_static: a.keep_static,
            no_think: a.no_think,
        };
        return har::import(text, options, &har);
    }
    if ext(&["yaml", "yml", "json"]) {
        return openapi_import(a, text, options);
    }
    convert(bytes, options)
}

fn openapi_import(
    a: &ImportArgs,
    text: &str,
    options: &Options,
) -> Result<crate::import::Converted, crate::import::ImportError> {
    let pick = crate::import::openapi::OpenApiOptions { operations: a.operation.clone(), tags: a.tag.clone() };
    crate::import::openapi::import(text, options, &pick)
}

/// A side file (`--postman-env`) as text.
fn read_text(path: &std::path::Path) -> Result<String, crate::import::ImportError> {
    let mut bytes = Vec::new();
    crate::files::open_regular(path).and_then(|f| f.take(MAX_BYTES + 1).read_to_end(&mut bytes)).map_err(|e| {
        crate::import::ImportError::SideFile { path: path.display().to_string(), message: e.to_string() }
    })?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(crate::import::ImportError::TooLarge { size: bytes.len() as u64, limit: MAX_BYTES });
    }
    String::from_utf8(bytes).map_err(|_| crate::import::ImportError::SideFile {
        path: path.display().to_string(),
        message: "not UTF-8 text".into(),
    })
}
