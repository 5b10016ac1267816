//! Java properties files, read as `java.util.Properties.load` reads them (JMeter reads `-q` and `-p` files
//! with it):
//! - a line ends at `\n`, `\r` or `\r\n`; white space is space, tab and form feed;
//! - a line blank after its leading white space is skipped, and so is a comment: its first other character is
//!   `#` or `!` (a comment does not continue on the next line);
//! - a line that ends in an odd number of backslashes goes on with the next line, whose leading white space
//!   is dropped (the backslash is dropped too, also at the end of the file);
//! - the name runs from the first character that is not white space to the first `=`, `:` or white space
//!   that no backslash escapes; white space after it, then one `=` or `:`, then white space, are skipped,
//!   and the rest of the line is the value (`name=value`, `name: value`, `name value`, `name` alone for an
//!   empty value);
//! - in the name and the value, `\t`, `\n`, `\r`, `\f` are those characters, `\uXXXX` is a UTF-16 code unit
//!   (a surrogate pair makes one character), and a backslash before any other character is that character
//!   (`\=`, `\:`, `\ `, `\#`, `\\`; `\b` is `b`). A malformed `\u` is an error, as in Java.

/// Every `(line, (name, value))` of `text`, the line being where the logical line starts, or the line and
/// what is wrong with it.
pub(super) fn parse(text: &str) -> super::Parsed {
    let lines = natural_lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line_no = i + 1;
        let first = skip_white(lines[i]);
        i += 1;
        if first.is_empty() || first.starts_with(['#', '!']) {
            continue;
        }
        let mut logical = first.to_string();
        while odd_backslashes(&logical) {
            logical.pop();
            let Some(next) = lines.get(i) else { break };
            logical.push_str(skip_white(next));
            i += 1;
            if logical.len() > super::MAX_LINE {
                let message = format!("the line is longer than {} MiB with its continuations", super::MAX_LINE >> 20);
                return Err((line_no, message));
            }
        }
        let (key, value) = split(&logical);
        let key = unescape(key).map_err(|m| (line_no, m))?;
        let value = unescape(value).map_err(|m| (line_no, m))?;
        out.push((line_no, (key, value)));
    }
    Ok(out)
}

fn is_white(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

fn skip_white(s: &str) -> &str {
    s.trim_start_matches(is_white)
}

/// The lines of `text`, split at `\r\n`, `\r` and `\n`.
fn natural_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(['\r', '\n']) {
        lines.push(&rest[..at]);
        let skip = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[at + skip..];
    }
    if !rest.is_empty() {
        lines.push(rest);
    }
    lines
}

fn odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// The name and the value of a logical line, both still escaped.
fn split(line: &str) -> (&str, &str) {
    let mut escaped = false;
    let mut key_end = line.len();
    let mut value_start = line.len();
    let mut has_separator = false;
    for (at, c) in line.char_indices() {
        if !escaped && (c == '=' || c == ':') {
            (key_end, value_start, has_separator) = (at, at + 1, true);
            break;
        }
        if !escaped && is_white(c) {
            (key_end, value_start) = (at, at + c.len_utf8());
            break;
        }
        escaped = c == '\\' && !escaped;
    }
    let mut rest = &line[value_start..];
    loop {
        rest = skip_white(rest);
        match rest.chars().next() {
            Some(c @ ('=' | ':')) if !has_separator => {
                has_separator = true;
                rest = &rest[c.len_utf8()..];
            }
            _ => break,
        }
    }
    (&line[..key_end], rest)
}

/// `s` with its escapes replaced by what they stand for.
fn unescape(s: &str) -> Result<String, String> {
    let mut units: Vec<u16> = Vec::with_capacity(s.len());
    let mut chars = s.chars();
    let mut buf = [0u16; 2];
    while let Some(c) = chars.next() {
        let c = if c == '\\' {
            match chars.next() {
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    match (hex.len(), u16::from_str_radix(&hex, 16)) {
                        (4, Ok(unit)) if hex.chars().all(|h| h.is_ascii_hexdigit()) => {
                            units.push(unit);
                            continue;
                        }
                        _ => {
                            return Err(format!(
                                "malformed \\uXXXX escape `\\u{hex}`; expected four hexadecimal digits"
                            ))
                        }
                    }
                }
                Some('t') => '\t',
                Some('n') => '\n',
                Some('r') => '\r',
                Some('f') => '\x0c',
                Some(other) => other,
                None => break,
            }
        } else {
            c
        };
        units.extend_from_slice(c.encode_utf16(&mut buf));
    }
    String::from_utf16(&units).map_err(|_| {
        "a \\uXXXX escape is half of a UTF-16 surrogate pair without its other half; expected a character".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text).unwrap().into_iter().map(|(_, p)| p).collect()
    }

    fn pair(k: &str, v: &str) -> (String, String) {
        (k.to_string(), v.to_string())
    }

    /// The examples of `Properties.load(Reader)`'s documentation.
    #[test]
    fn reads_the_documented_examples() {
        for line in ["Truth = Beauty", "  Truth:Beauty", "Truth                    :Beauty"] {
            assert_eq!(pairs(line), [pair("Truth", "Beauty")], "{line}");
        }
        let fruits = "fruits                           apple, banana, pear, \\\n                                 cantaloupe, watermelon, \\\n                                 kiwi, mango\n";
        assert_eq!(pairs(fruits), [pair("fruits", "apple, banana, pear, cantaloupe, watermelon, kiwi, mango")]);
        assert_eq!(pairs("cheeses\n"), [pair("cheeses", "")]);
        assert_eq!(pairs("\\:\\=\n"), [pair(":=", "")]);
    }

    #[test]
    fn reads_escapes_comments_and_line_ends() {
        let text = "# comment \\\nnot.continued=1\r! bang\r\nkey\\ with\\ spaces = a\\tb\\n\\u00e9\\uD83D\\uDE00\\b\\\\\nx:\n=y\n a\\=b:c \n";
        assert_eq!(
            pairs(text),
            [
                pair("not.continued", "1"),
                pair("key with spaces", "a\tb\né😀b\\"),
                pair("x", ""),
                pair("", "y"),
                pair("a=b", "c "),
            ]
        );
        // An even number of backslashes does not continue; a continuation at the end of the file is dropped.
        assert_eq!(pairs("a=1\\\\\nb=2\\"), [pair("a", "1\\"), pair("b", "2")]);
        // A blank continuation line ends the logical line; a comment-looking one is part of the value.
        assert_eq!(pairs("a=1\\\n\nb=2\\\n  # not a comment"), [pair("a", "1"), pair("b", "2# not a comment")]);
        assert_eq!(pairs("a = = b"), [pair("a", "= b")]);
    }

    #[test]
    fn refuses_malformed_escapes_with_their_line() {
        assert_eq!(parse("a=1\nb=\\u12\n").unwrap_err().0, 2);
        assert_eq!(parse("a=\\uZZZZ").unwrap_err().0, 1);
        assert_eq!(parse("a=1\\\n  2\nb=\\uD800\n").unwrap_err().0, 3);
    }
}
