//! Shell words as bash reads a command line: quotes (`'...'`, `"..."`, `$'...'`), backslash escapes and line
//! continuations, `#` comments; commands end at an unquoted line break, `;`, `&&`, `||` or `|`. Nothing is
//! expanded: `$NAME` and `` `...` `` stay as written, as the words of a copied command hold no variables.

use crate::import::ImportError;

/// One word, and where it starts in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub line: u32,
    pub column: u32,
}

/// The commands of `text`, each its words; empty commands are left out.
pub fn commands(text: &str) -> Result<Vec<Vec<Word>>, ImportError> {
    let mut out: Vec<Vec<Word>> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut chars = text.chars().peekable();
    let (mut line, mut column) = (1u32, 1u32);
    let mut current: Option<Word> = None;
    let at = |line: u32, column: u32| Word { text: String::new(), line, column };
    // Advances over one character, keeping the position.
    macro_rules! next {
        () => {{
            let c = chars.next();
            if c == Some('\n') {
                line += 1;
                column = 1;
            } else if c.is_some() {
                column += 1;
            }
            c
        }};
    }
    let unterminated = |what: &str, l: u32, c: u32| ImportError::Curl {
        line: l,
        column: c,
        message: format!("{what} is not closed before the end of the text"),
    };
    loop {
        let (l, c) = (line, column);
        let Some(ch) = next!() else { break };
        match ch {
            ' ' | '\t' | '\r' => {
                if let Some(w) = current.take() {
                    words.push(w);
                }
            }
            '\n' | ';' | '&' | '|' => {
                if let Some(w) = current.take() {
                    words.push(w);
                }
                if matches!(ch, '&' | '|') && chars.peek() == Some(&ch) {
                    next!();
                }
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            '#' if current.is_none() => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    next!();
                }
            }
            '\\' => match next!() {
                Some('\n') => {}
                Some(e) => current.get_or_insert_with(|| at(l, c)).text.push(e),
                None => current.get_or_insert_with(|| at(l, c)).text.push('\\'),
            },
            '\'' => {
                let w = current.get_or_insert_with(|| at(l, c));
                loop {
                    match next!() {
                        Some('\'') => break,
                        Some(q) => w.text.push(q),
                        None => return Err(unterminated("a single quote", l, c)),
                    }
                }
            }
            '"' => {
                let w = current.get_or_insert_with(|| at(l, c));
                loop {
                    match next!() {
                        Some('"') => break,
                        Some('\\') => match next!() {
                            Some('\n') => {}
                            Some(e @ ('$' | '`' | '"' | '\\')) => w.text.push(e),
                            Some(e) => {
                                w.text.push('\\');
                                w.text.push(e);
                            }
                            None => return Err(unterminated("a double quote", l, c)),
                        },
                        Some(q) => w.text.push(q),
                        None => return Err(unterminated("a double quote", l, c)),
                    }
                }
            }
            '$' if chars.peek() == Some(&'\'') => {
                next!();
                let w = current.get_or_insert_with(|| at(l, c));
                loop {
                    match next!() {
                        Some('\'') => break,
                        Some('\\') => {
                            let Some(e) = next!() else { return Err(unterminated("a $'...' quote", l, c)) };
                            match e {
                                'n' => w.text.push('\n'),
                                't' => w.text.push('\t'),
                                'r' => w.text.push('\r'),
                                'a' => w.text.push('\u{7}'),
                                'b' => w.text.push('\u{8}'),
                                'e' | 'E' => w.text.push('\u{1b}'),
                                'f' => w.text.push('\u{c}'),
                                'v' => w.text.push('\u{b}'),
                                'x' | 'u' | 'U' => {
                                    let max = match e {
                                        'x' => 2,
                                        'u' => 4,
                                        _ => 8,
                                    };
                                    let mut hex = String::new();
                                    while hex.len() < max && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                                        hex.push(next!().unwrap_or('0'));
                                    }
                                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                                        Some(ch) if !hex.is_empty() => w.text.push(ch),
                                        _ => {
                                            w.text.push('\\');
                                            w.text.push(e);
                                            w.text.push_str(&hex);
                                        }
                                    }
                                }
                                '0'..='7' => {
                                    let mut oct = String::from(e);
                                    while oct.len() < 3 && chars.peek().is_some_and(|d| ('0'..='7').contains(d)) {
                                        oct.push(next!().unwrap_or('0'));
                                    }
                                    let v = u32::from_str_radix(&oct, 8).unwrap_or(0);
                                    w.text.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                                }
                                other => w.text.push(other),
                            }
                        }
                        Some(q) => w.text.push(q),
                        None => return Err(unterminated("a $'...' quote", l, c)),
                    }
                }
            }
            other => current.get_or_insert_with(|| at(l, c)).text.push(other),
        }
    }
    if let Some(w) = current.take() {
        words.push(w);
    }
    if !words.is_empty() {
        out.push(words);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<Vec<String>> {
        commands(s).unwrap().into_iter().map(|c| c.into_iter().map(|w| w.text).collect()).collect()
    }

    #[test]
    fn quotes_escapes_and_continuations() {
        assert_eq!(
            texts("curl 'https://x/a b' -H \"A: \\\"q\\\" \\$HOME\" \\\n  --data-raw $'{\"n\":1}\\n\\u00e9'"),
            [["curl", "https://x/a b", "-H", "A: \"q\" $HOME", "--data-raw", "{\"n\":1}\n\u{e9}"]]
        );
        assert_eq!(
            texts("curl a ;\ncurl b && curl c # note\n"),
            [vec!["curl", "a"], vec!["curl", "b"], vec!["curl", "c"]]
        );
        assert_eq!(texts("a'b'\"c\"d"), [["abcd"]]);
    }

    #[test]
    fn an_open_quote_is_an_error_at_its_place() {
        let e = commands("curl\n  'https://x").unwrap_err().to_string();
        assert!(e.starts_with("2:3: "), "{e}");
        assert!(commands("curl \"x").is_err() && commands("curl $'x").is_err());
    }
}
