//! A light reading of YAML text, good enough to explain a syntax error the parser reported: where each line's
//! keys and list items start, which lines belong to block scalars, quoted strings, flow brackets left open,
//! and template values written without quotes.
//!
//! It is not a YAML parser: it runs only after the real parser failed, to find the likely mistake.

/// One line as the explanations need it. Columns are 1-based, in characters.
#[derive(Debug, Clone, Default)]
pub struct Line {
    /// The first character that is not a space or a tab; `None` for blank and comment lines and lines
    /// inside a block scalar or a quoted string that started above.
    pub content: Option<u32>,
    /// The column of a leading `-` (a list item).
    pub dash: Option<u32>,
    /// The first `key:` of the line (after a leading `-`), with its column.
    pub key: Option<(u32, String)>,
    /// The column where the value after the first `key:` starts, when there is one on the line.
    pub value: Option<u32>,
}

/// An opening bracket: line, column, and `[` or `{`.
pub type Bracket = (u32, u32, char);

/// A quoted string: where it opens and where it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoted {
    /// Line and column of the opening quote.
    pub open: (u32, u32),
    /// Line and column of the closing quote; `None` when it never closes.
    pub close: Option<(u32, u32)>,
    /// `"` or `'`.
    pub quote: char,
}

/// What the reading found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Every line, index 0 being line 1.
    pub lines: Vec<Line>,
    /// Every quoted string, in order.
    pub quoted: Vec<Quoted>,
    /// `[` and `{` never closed, outermost first: line, column, the bracket.
    pub unclosed: Vec<Bracket>,
    /// Values that start with `{{` outside quotes (YAML reads them as flow mappings): line, column, and
    /// whether they are inside `[ ]` or `{ }`.
    pub templates: Vec<(u32, u32, bool)>,
    /// The first bracket closed by one of the other kind: the opening bracket (line, column, bracket) and the
    /// closing one (line, column).
    pub mismatched: Option<(Bracket, (u32, u32))>,
}

impl Scan {
    /// The line `n` (1-based).
    pub fn line(&self, n: u32) -> Option<&Line> {
        self.lines.get(usize::try_from(n.checked_sub(1)?).ok()?)
    }

    /// The nearest line above `n` with content, and its number.
    pub fn content_above(&self, n: u32) -> Option<(u32, &Line)> {
        (1..n).rev().filter_map(|i| self.line(i).map(|l| (i, l))).find(|(_, l)| l.content.is_some())
    }
}

/// Reads `text`.
pub fn scan(text: &str) -> Scan {
    let mut s = Scan::default();
    let mut flow: Vec<Bracket> = Vec::new();
    // Inside a quoted string that continues past the end of its line: its index in `s.quoted`.
    let mut open_quote: Option<usize> = None;
    // Inside a block scalar (`key: |`): lines indented past this column belong to it.
    let mut block: Option<u32> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i as u32 + 1;
        let chars: Vec<char> = raw.chars().collect();
        let mut line = Line::default();
        let first = chars.iter().position(|c| *c != ' ' && *c != '\t');
        if let (Some(limit), Some(f)) = (block, first) {
            if f as u32 + 1 > limit {
                s.lines.push(line);
                continue;
            }
        }
        if first.is_none() {
            s.lines.push(line);
            continue;
        }
        block = None;
        let mut at = 0usize;
        if let Some(q) = open_quote {
            match close_quote(&chars, 0, s.quoted[q].quote) {
                Some(end) => {
                    s.quoted[q].close = Some((n, end as u32 + 1));
                    open_quote = None;
                    at = end + 1;
                }
                None => {
                    s.lines.push(line);
                    continue;
                }
            }
        }
        let mut value_start = at == 0;
        // Where the current plain token of the block context started (a key, when a `:` follows).
        let mut token: Option<usize> = None;
        while at < chars.len() {
            let c = chars[at];
            let col = at as u32 + 1;
            if c == ' ' || c == '\t' {
                at += 1;
                continue;
            }
            if line.content.is_none() && c != '#' && open_quote.is_none() {
                line.content = Some(col);
            }
            let spaced_before = at == 0 || matches!(chars[at - 1], ' ' | '\t');
            if c == '#' && spaced_before {
                break;
            }
            if value_start && (c == '"' || c == '\'') {
                s.quoted.push(Quoted { open: (n, col), close: None, quote: c });
                match close_quote(&chars, at + 1, c) {
                    Some(end) => {
                        let last = s.quoted.len() - 1;
                        s.quoted[last].close = Some((n, end as u32 + 1));
                        token.get_or_insert(at);
                        at = end + 1;
                        value_start = false;
                        continue;
                    }
                    None => {
                        open_quote = Some(s.quoted.len() - 1);
                        break;
                    }
                }
            }
            let next = chars.get(at + 1).copied();
            let ends = |ch: Option<char>| ch.is_none_or(|ch| ch == ' ' || ch == '\t');
            if c == '-' && ends(next) && flow.is_empty() && value_start {
                line.dash.get_or_insert(col);
                at += 1;
                continue;
            }
            let in_flow = !flow.is_empty();
            if c == '{' && next == Some('{') && value_start {
                s.templates.push((n, col, in_flow));
            }
            if (c == '[' || c == '{') && (value_start || in_flow) {
                flow.push((n, col, c));
                value_start = true;
                at += 1;
                continue;
            }
            if in_flow && (c == ']' || c == '}') {
                let opened = flow.pop();
                if let (Some(o), None) = (opened, s.mismatched) {
                    if (o.2 == '[') != (c == ']') {
                        s.mismatched = Some((o, (n, col)));
                    }
                }
                value_start = false;
                at += 1;
                continue;
            }
            if in_flow && c == ',' {
                value_start = true;
                at += 1;
                continue;
            }
            if c == ':' && (ends(next) || (in_flow && matches!(next, Some(',' | '}' | ']')))) {
                if let (None, Some(t), false) = (&line.key, token, in_flow) {
                    let name: String = chars[t..at].iter().collect();
                    let name = name.trim().trim_matches(['"', '\'']).to_string();
                    line.key = Some((t as u32 + 1, name));
                    let v = chars[at + 1..].iter().position(|ch| *ch != ' ' && *ch != '\t');
                    line.value = v.map(|v| (at + 1 + v) as u32 + 1).filter(|v| chars[*v as usize - 1] != '#');
                }
                if !in_flow && is_block_indicator(&chars[at + 1..]) {
                    block = line.key.as_ref().map(|(k, _)| *k).or(line.dash);
                }
                value_start = true;
                token = None;
                at += 1;
                continue;
            }
            if !in_flow && value_start && (c == '|' || c == '>') && is_block_indicator(&chars[at..]) {
                block = block.or(line.dash).or(line.content);
                break;
            }
            if !in_flow {
                token.get_or_insert(at);
            }
            value_start = false;
            at += 1;
        }
        s.lines.push(line);
    }
    s.unclosed = flow;
    s
}

/// The index of the quote that closes a string opened before `from` (`''` inside single quotes and `\"`
/// inside double quotes are not closing).
fn close_quote(chars: &[char], from: usize, quote: char) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        let c = chars[i];
        if quote == '"' && c == '\\' {
            i += 2;
            continue;
        }
        if c == quote {
            if quote == '\'' && chars.get(i + 1) == Some(&'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

/// True when the rest of a line after `key:` is a block scalar's header: `|` or `>`, with chomping and
/// indentation indicators, then nothing but a comment.
fn is_block_indicator(rest: &[char]) -> bool {
    // Walks the characters without copying them: a line with many `:`s costs each one a look, no more.
    let mut chars = rest.iter().copied().skip_while(|c| *c == ' ' || *c == '\t');
    if !matches!(chars.next(), Some('|' | '>')) {
        return false;
    }
    let mut after = chars.skip_while(|c| matches!(c, '+' | '-' | '1'..='9'));
    loop {
        match after.next() {
            None | Some('#') => return true,
            Some(' ' | '\t') => {}
            Some(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_dashes_and_values() {
        let s = scan("a: 1\n  - b: \"x: y\" # c\n    c:\n");
        assert_eq!(s.lines[0].key, Some((1, "a".into())));
        assert_eq!(s.lines[0].value, Some(4));
        assert_eq!(s.lines[1].dash, Some(3));
        assert_eq!(s.lines[1].key, Some((5, "b".into())));
        assert_eq!(s.quoted[0], Quoted { open: (2, 8), close: Some((2, 13)), quote: '"' });
        assert_eq!(s.lines[2].key, Some((5, "c".into())));
        assert_eq!(s.lines[2].value, None);
    }

    #[test]
    fn block_scalars_are_skipped() {
        let s = scan("body: |\n  {\"a\": {{ vu }}\n  [\nnext: {{ x }}\n");
        assert!(s.unclosed.is_empty(), "{:?}", s.unclosed);
        assert_eq!(s.templates, [(4, 7, false)]);
        assert_eq!(s.lines[1].content, None);
        assert_eq!(s.lines[3].key, Some((1, "next".into())));
    }

    #[test]
    fn brackets_left_open_and_quotes_across_lines() {
        let s = scan("a: { b: [1, 2] \nc: \"x\n  y\" \nd: it's {x\n");
        assert_eq!(s.unclosed.first(), Some(&(1, 4, '{')));
        assert_eq!(s.quoted[0], Quoted { open: (2, 4), close: Some((3, 4)), quote: '"' });
        let s = scan("a: [1, 2\nb: 'x''s' and {{ not a value }}\n");
        assert_eq!(s.unclosed, [(1, 4, '[')]);
        assert!(s.templates.is_empty());
        let s = scan("a: [ { b: 1 ]\n");
        assert_eq!(s.mismatched, Some(((1, 6, '{'), (1, 13))));
    }
}
