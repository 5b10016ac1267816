//! One curl command's options, read as curl reads them, into the request it sends.

use super::words::Word;
use crate::import::ImportError;

/// A body part given with `-d`, `--data-*` or `--json`, as curl joins them (with `&`, or nothing for JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// Bytes sent as written (after reading a file).
    Raw(String),
    /// `--json` text.
    Json(String),
}

/// A `-F` part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text { name: String, value: String },
    File { name: String, path: String, content_type: Option<String>, filename: Option<String> },
}

/// What one curl command sends, and what of it was not converted.
#[derive(Debug, Default)]
pub struct Curl {
    pub url: Option<String>,
    pub method: Option<String>,
    pub headers: Vec<(String, String)>,
    pub data: Vec<Data>,
    pub parts: Vec<Part>,
    pub get: bool,
    pub head: bool,
    pub user: Option<String>,
    pub bearer: Option<String>,
    pub cookie: Option<String>,
    pub follow: bool,
    pub insecure: bool,
    pub compressed: bool,
    pub globoff: bool,
    pub timeout_s: Option<f64>,
    pub url_queries: Vec<String>,
    /// Options not converted: (option, why).
    pub warnings: Vec<String>,
    /// Options about curl's own output, which change nothing that is sent.
    pub output_only: Vec<String>,
}

/// Options that take an argument and only shape curl's output or its own behaviour, not the request.
const OUTPUT_WITH_ARG: &[&str] = &[
    "-o",
    "--output",
    "-w",
    "--write-out",
    "-D",
    "--dump-header",
    "--trace",
    "--trace-ascii",
    "--stderr",
    "-c",
    "--cookie-jar",
    "--output-dir",
    "--config",
    "-K",
    "--retry",
    "--retry-delay",
    "--retry-max-time",
    "--limit-rate",
    "-Y",
    "--speed-limit",
    "-y",
    "--speed-time",
    "--max-filesize",
    "--keepalive-time",
];
/// Options without an argument that only shape curl's output or its own behaviour.
const OUTPUT_FLAGS: &[&str] = &[
    "-s",
    "--silent",
    "-S",
    "--show-error",
    "-v",
    "--verbose",
    "-i",
    "--include",
    "-O",
    "--remote-name",
    "-f",
    "--fail",
    "--fail-with-body",
    "-#",
    "--progress-bar",
    "--no-progress-meter",
    "-N",
    "--no-buffer",
    "-J",
    "--remote-header-name",
    "--create-dirs",
    "-q",
    "--disable",
    "--no-keepalive",
    "--tcp-nodelay",
    "-n",
    "--netrc",
    "--no-sessionid",
    "--path-as-is",
    "--raw",
    "--styled-output",
    "--no-styled-output",
    "--retry-connrefused",
    "--retry-all-errors",
    "-R",
    "--remote-time",
    "--basic",
];
/// Options that take an argument and shape the request in a way planrun does not convert.
const UNCONVERTED_WITH_ARG: &[&str] = &[
    "-x",
    "--proxy",
    "-U",
    "--proxy-user",
    "--connect-timeout",
    "-T",
    "--upload-file",
    "-E",
    "--cert",
    "--key",
    "--cacert",
    "--capath",
    "-r",
    "--range",
    "--resolve",
    "--connect-to",
    "--interface",
    "--local-port",
    "-z",
    "--time-cond",
    "--max-redirs",
    "--noproxy",
    "-t",
    "--telnet-option",
    "--unix-socket",
    "--abstract-unix-socket",
    "--aws-sigv4",
    "--ciphers",
    "--tls-max",
    "-P",
    "--ftp-port",
    "-Q",
    "--quote",
    "--pinnedpubkey",
    "-C",
    "--continue-at",
    "--dns-servers",
    "--doh-url",
    "--proto",
    "--proto-redir",
    "--expect100-timeout",
];
/// Options without an argument that shape the request in a way planrun does not convert.
const UNCONVERTED_FLAGS: &[&str] = &[
    "--http1.0",
    "-0",
    "--http1.1",
    "--http2",
    "--http2-prior-knowledge",
    "--http3",
    "--http3-only",
    "--digest",
    "--ntlm",
    "--negotiate",
    "--anyauth",
    "-4",
    "--ipv4",
    "-6",
    "--ipv6",
    "--tlsv1",
    "--tlsv1.2",
    "--tlsv1.3",
    "--ssl",
    "--ssl-reqd",
    "-j",
    "--junk-session-cookies",
    "--post301",
    "--post302",
    "--post303",
    "--location-trusted",
    "--tr-encoding",
    "-p",
    "--proxytunnel",
];

/// Reads the words after `curl`.
pub fn parse(words: &[Word]) -> Result<Curl, ImportError> {
    let mut c = Curl::default();
    let mut i = 0;
    let mut options_end = false;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        let t = w.text.as_str();
        if options_end || !t.starts_with('-') || t == "-" {
            set_url(&mut c, t);
            continue;
        }
        if t == "--" {
            options_end = true;
            continue;
        }
        // Short options may be bunched (`-sSL`) and take their argument attached (`-XPOST`).
        let (opt, attached) = if t.starts_with("--") {
            (t.to_string(), None)
        } else {
            let mut opt = String::new();
            let mut rest = None;
            for (k, ch) in t.char_indices().skip(1) {
                let short = format!("-{ch}");
                if takes_arg(&short) {
                    let after = &t[k + ch.len_utf8()..];
                    rest = (!after.is_empty()).then(|| after.to_string());
                    opt = short;
                    break;
                }
                flag(&mut c, &short);
                opt.clear();
            }
            if opt.is_empty() {
                continue;
            }
            (opt, rest)
        };
        if !takes_arg(&opt) {
            flag(&mut c, &opt);
            continue;
        }
        let value = match attached {
            Some(v) => v,
            None => {
                let Some(v) = words.get(i) else {
                    return Err(ImportError::Curl {
                        line: w.line,
                        column: w.column,
                        message: format!("{opt} needs a value after it"),
                    });
                };
                i += 1;
                v.text.clone()
            }
        };
        with_arg(&mut c, &opt, value);
    }
    Ok(c)
}

fn set_url(c: &mut Curl, t: &str) {
    if c.url.is_none() {
        c.url = Some(t.to_string());
    } else {
        c.warnings.push(format!("a second URL `{t}` is not converted: one request per curl command"));
    }
}

fn takes_arg(opt: &str) -> bool {
    OUTPUT_WITH_ARG.contains(&opt)
        || UNCONVERTED_WITH_ARG.contains(&opt)
        || matches!(
            opt,
            "-X" | "--request"
                | "-H"
                | "--header"
                | "-d"
                | "--data"
                | "--data-ascii"
                | "--data-raw"
                | "--data-binary"
                | "--data-urlencode"
                | "--json"
                | "-F"
                | "--form"
                | "--form-string"
                | "-u"
                | "--user"
                | "-b"
                | "--cookie"
                | "-A"
                | "--user-agent"
                | "-e"
                | "--referer"
                | "-m"
                | "--max-time"
                | "--url"
                | "--url-query"
                | "--oauth2-bearer"
        )
}

fn flag(c: &mut Curl, opt: &str) {
    match opt {
        "-G" | "--get" => c.get = true,
        "-I" | "--head" => c.head = true,
        "-L" | "--location" => c.follow = true,
        "-k" | "--insecure" => c.insecure = true,
        "--compressed" => c.compressed = true,
        "-g" | "--globoff" => c.globoff = true,
        o if OUTPUT_FLAGS.contains(&o) => c.output_only.push(o.to_string()),
        o if UNCONVERTED_FLAGS.contains(&o) => c.warnings.push(format!("{o} is not converted")),
        o => c.warnings.push(format!("unknown curl option {o} is not converted")),
    }
}

fn with_arg(c: &mut Curl, opt: &str, v: String) {
    match opt {
        "-X" | "--request" => c.method = Some(v),
        "-H" | "--header" => header(c, &v),
        "-d" | "--data" | "--data-ascii" => {
            let d = at_file(c, &v, true);
            c.data.push(Data::Raw(d));
        }
        "--data-raw" => c.data.push(Data::Raw(v)),
        "--data-binary" => {
            let d = at_file(c, &v, false);
            c.data.push(Data::Raw(d));
        }
        "--data-urlencode" => {
            let encoded = url_encode_arg(c, &v);
            c.data.push(Data::Raw(encoded));
        }
        "--json" => {
            let body = at_file(c, &v, false);
            c.data.push(Data::Json(body));
        }
        "-F" | "--form" => form(c, &v, false),
        "--form-string" => form(c, &v, true),
        "-u" | "--user" => c.user = Some(v),
        "--oauth2-bearer" => c.bearer = Some(v),
        "-b" | "--cookie" => {
            if v.contains('=') {
                c.cookie = Some(match c.cookie.take() {
                    Some(before) => format!("{before}; {v}"),
                    None => v,
                });
            } else {
                c.warnings.push(format!("-b `{v}` reads cookies from a file: not converted"));
            }
        }
        "-A" | "--user-agent" => c.headers.push(("User-Agent".into(), v)),
        "-e" | "--referer" => {
            let r = v.strip_suffix(";auto").unwrap_or(&v).to_string();
            if !r.is_empty() {
                c.headers.push(("Referer".into(), r));
            }
        }
        "-m" | "--max-time" => match v.parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 && s < 1e9 => c.timeout_s = Some(s),
            _ => c.warnings.push(format!("--max-time `{v}` is not a number of seconds: not converted")),
        },
        "--url" => set_url(c, &v),
        "--url-query" => {
            let q = url_encode_arg(c, &v);
            c.url_queries.push(q);
        }
        o if OUTPUT_WITH_ARG.contains(&o) => c.output_only.push(o.to_string()),
        o => c.warnings.push(format!("{o} `{v}` is not converted")),
    }
}

fn header(c: &mut Curl, v: &str) {
    if v.starts_with('@') {
        c.warnings.push(format!("-H `{v}` reads headers from a file: not converted"));
        return;
    }
    if let Some(name) = v.strip_suffix(';').filter(|n| !n.contains(':')) {
        // `Name;` sends the header with no value.
        c.headers.push((name.trim().to_string(), String::new()));
        return;
    }
    match v.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            let value = value.trim();
            if value.is_empty() {
                c.warnings.push(format!(
                    "-H `{v}` removes a header curl would send; planrun sends its own defaults (User-Agent)"
                ));
            } else {
                c.headers.push((name.trim().to_string(), value.to_string()));
            }
        }
        _ => c.warnings.push(format!("-H `{v}` is not a header (Name: value): not converted")),
    }
}

/// `@file` read as curl reads it (`strip_lines`: without CR and LF, as `-d` does); else the text.
fn at_file(c: &mut Curl, v: &str, strip_lines: bool) -> String {
    let Some(path) = v.strip_prefix('@') else { return v.to_string() };
    match read_small(path) {
        Ok(text) if strip_lines => text.replace(['\r', '\n'], ""),
        Ok(text) => text,
        Err(why) => {
            c.warnings.push(format!("`@{path}`: {why}; the body is left empty"));
            String::new()
        }
    }
}

/// The largest file a curl option reads into the plan.
const MAX_FILE: u64 = 1 << 20;

fn read_small(path: &str) -> Result<String, String> {
    if path == "-" {
        return Err("read from stdin by curl, not converted".into());
    }
    let f = crate::files::open_regular(std::path::Path::new(path)).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_FILE + 1), &mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!("larger than {MAX_FILE} bytes, not copied into the plan"));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text, not copied into the plan".into())
}

/// curl's `--data-urlencode` forms: `content`, `=content`, `name=content`, `@file`, `name@file`.
fn url_encode_arg(c: &mut Curl, v: &str) -> String {
    let enc = |s: &str| percent(s);
    if let Some(rest) = v.strip_prefix('=') {
        return enc(rest);
    }
    let eq = v.find('=');
    let at = v.find('@');
    match (eq, at) {
        (Some(e), a) if a.is_none_or(|a| e < a) => format!("{}={}", &v[..e], enc(&v[e + 1..])),
        (_, Some(a)) => {
            let content = at_file(c, &v[a..], false);
            if a == 0 {
                enc(&content)
            } else {
                format!("{}={}", &v[..a], enc(&content))
            }
        }
        _ => enc(v),
    }
}

/// Percent-encoding as curl's `curl_easy_escape`: everything but ALPHA, DIGIT, `-._~`.
pub fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn form(c: &mut Curl, v: &str, string_only: bool) {
    let Some((name, value)) = v.split_once('=') else {
        c.warnings.push(format!("-F `{v}` is not name=content: not converted"));
        return;
    };
    let name = name.to_string();
    if string_only {
        c.parts.push(Part::Text { name, value: value.to_string() });
        return;
    }
    if let Some(spec) = value.strip_prefix('@') {
        let mut fields = spec.split(';');
        let path = fields.next().unwrap_or("").trim_matches('"').to_string();
        let (mut content_type, mut filename) = (None, None);
        for f in fields {
            match f.split_once('=') {
                Some(("type", t)) => content_type = Some(t.to_string()),
                Some(("filename", n)) => filename = Some(n.trim_matches('"').to_string()),
                _ => c.warnings.push(format!("-F `{v}`: `{f}` is not converted")),
            }
        }
        c.parts.push(Part::File { name, path, content_type, filename });
    } else if let Some(path) = value.strip_prefix('<') {
        let text = at_file(c, &format!("@{path}"), false);
        c.parts.push(Part::Text { name, value: text });
    } else {
        let (text, rest) = value.split_once(";type=").map(|(t, r)| (t, Some(r))).unwrap_or((value, None));
        if let Some(t) = rest {
            c.warnings.push(format!("-F `{v}`: a text part's type `{t}` is not converted"));
        }
        c.parts.push(Part::Text { name, value: text.to_string() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<Word> {
        args.iter().map(|a| Word { text: a.to_string(), line: 1, column: 1 }).collect()
    }

    #[test]
    fn bunched_and_attached_short_options() {
        let c = parse(&words(&["-sSLXPUT", "-HAccept: x", "http://h/", "-d@-"])).unwrap();
        assert!(c.follow);
        assert_eq!(c.method.as_deref(), Some("PUT"));
        assert_eq!(c.headers, [("Accept".to_string(), "x".to_string())]);
        assert_eq!(c.url.as_deref(), Some("http://h/"));
        assert_eq!(c.output_only, ["-s", "-S"]);
        assert!(c.warnings.iter().any(|w| w.contains("stdin")), "{:?}", c.warnings);
    }

    #[test]
    fn data_urlencode_forms() {
        let c = parse(&words(&["--data-urlencode", "a b", "--data-urlencode", "=c&d", "--data-urlencode", "n=é x"]))
            .unwrap();
        assert_eq!(c.data, [Data::Raw("a%20b".into()), Data::Raw("c%26d".into()), Data::Raw("n=%C3%A9%20x".into())]);
    }

    #[test]
    fn an_option_without_its_value_is_an_error() {
        let e = parse(&words(&["http://h/", "-H"])).unwrap_err().to_string();
        assert!(e.contains("-H needs a value"), "{e}");
    }
}
