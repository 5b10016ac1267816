//! Environment files, read as docker's `--env-file` reads them: a line is `NAME=VALUE`; the line's leading
//! white space is dropped; an empty line or one that starts with `#` is skipped; the name may not hold a space
//! or a tab; the value is everything after the first `=`, as it is (quotes and trailing spaces included: no
//! unquoting, no `#` comment after a value, no `${}`); a line `NAME` alone takes NAME's value from planrun's
//! own environment, and is skipped when NAME is not set there; a CR before the line's end is dropped.

/// Every `(line, (name, value))` of `text`, or the line and what is wrong with it.
pub(super) fn parse(text: &str, env: impl Fn(&str) -> Option<String>) -> super::Parsed {
    let mut out = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line_no = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (line, None),
        };
        if name.contains([' ', '\t']) {
            let shown = name.trim_end();
            return Err((line_no, format!("the name `{shown}` holds white space; expected NAME=VALUE")));
        }
        if name.is_empty() {
            return Err((line_no, "a value without a name; expected NAME=VALUE".to_string()));
        }
        match value {
            Some(v) => out.push((line_no, (name.to_string(), v.to_string()))),
            None => {
                if let Some(v) = env(name) {
                    out.push((line_no, (name.to_string(), v)));
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn pairs(text: &str) -> Vec<(String, String)> {
        let env = |n: &str| (n == "FROM_ENV").then(|| "env value".to_string());
        parse(text, env).unwrap().into_iter().map(|(_, p)| p).collect()
    }

    #[test]
    fn reads_lines_as_docker_does() {
        let text =
            "# a comment\n\n  \tA=1\r\nB= 2 \nC=\"quoted\" # kept\nD=a=b\nE=\nFROM_ENV\nUNSET\n   # indented comment\n";
        let got = pairs(text);
        let want =
            [("A", "1"), ("B", " 2 "), ("C", "\"quoted\" # kept"), ("D", "a=b"), ("E", ""), ("FROM_ENV", "env value")];
        assert_eq!(got, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn refuses_names_with_spaces_and_values_without_names() {
        assert_eq!(parse("A=1\nB C=2\n", |_| None).unwrap_err().0, 2);
        assert_eq!(parse("A=1\nB =2\n", |_| None).unwrap_err().0, 2);
        assert_eq!(parse("\n\n=2\n", |_| None).unwrap_err().0, 3);
    }
}
