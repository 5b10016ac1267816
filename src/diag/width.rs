//! Text as wide as a terminal shows it. A column of a table is as wide as its widest cell in terminal
//! columns, not in bytes or chars: a Chinese or Japanese character takes two columns, a combining accent none
//! (Unicode's East Asian Width, as terminals apply it, by the `unicode-width` crate).

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How many terminal columns `text` takes (tables escape control characters first: see [`one_line`]).
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// How many terminal columns `c` takes (0 for a control character).
pub fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `text` followed by spaces up to `columns` (left-aligned).
pub fn pad_end(text: &str, columns: usize) -> String {
    let mut out = String::with_capacity(text.len() + columns);
    out.push_str(text);
    out.extend(std::iter::repeat_n(' ', columns.saturating_sub(width(text))));
    out
}

/// Spaces up to `columns`, then `text` (right-aligned).
pub fn pad_start(text: &str, columns: usize) -> String {
    let mut out: String = std::iter::repeat_n(' ', columns.saturating_sub(width(text))).collect();
    out.push_str(text);
    out
}

/// At most `columns` terminal columns of `text`: cut, ending in `…`, when it is wider.
pub fn truncate(text: &str, columns: usize) -> Cow<'_, str> {
    if width(text) <= columns {
        return Cow::Borrowed(text);
    }
    let mut cut = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > columns {
            break;
        }
        cut.push(c);
        used += w;
    }
    cut.push('…');
    Cow::Owned(cut)
}

/// At most `chars` characters of `text`: cut, ending in `...`, when it has more. For a piece of input quoted
/// in a message, where a terminal's columns do not matter.
pub fn cut_chars(text: &str, chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(chars) {
        None => Cow::Borrowed(text),
        Some((at, _)) => Cow::Owned(format!("{}...", &text[..at])),
    }
}

/// `text` on one line of a table: line ends, tabs and other control characters written as escapes
/// (`\n`, `\t`, `\u{1b}`), which keep the row on its line and its width known.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_and_zero_width_characters() {
        assert_eq!((width("abc"), width("発送"), width("发送短信"), width("e\u{301}")), (3, 4, 8, 1));
        assert_eq!(pad_end("発送", 6), "発送  ");
        assert_eq!(pad_start("発送", 6), "  発送");
        assert_eq!(truncate("発送発送発送", 7), "発送発…");
        assert_eq!(width(&truncate("発送発送発送", 7)), 7);
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(one_line("a\nb\tc\u{1b}"), "a\\nb\\tc\\u{1b}");
    }
}
