//! A fast path for the templates most plans are made of: literal text around `{{ name }}` or a call of
//! a random function with literal arguments, like `+7{{ random_digits(10) }}`. They render without the
//! template engine, draw from the user's generator exactly as the functions do (same seed, same bytes),
//! and anything else, or any error, goes to minijinja.

use std::fmt::Write as _;
use std::sync::Arc;

use super::functions::{
    check_len, random_digits_bytes, random_digits_into, random_int, random_picked, random_picked_bytes,
    random_string_bytes, random_string_into, random_uuid, Picks,
};
use super::scope::Scope;
use rand_chacha::ChaCha8Rng;

/// A template compiled to pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fast {
    pieces: Vec<Piece>,
    /// Whether every text it renders is made of bytes form encoding keeps as they are ([`super::form_safe`]).
    form_safe: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    Text(String),
    Name(String),
    /// `{{ vu }}` and `{{ iteration }}`, numbers written without going through a template value.
    Vu,
    Iteration,
    Digits(usize),
    Chars(usize, Option<String>),
    /// `random_string(n, alphabet)` with an ASCII alphabet of at most 256 characters, its table made once.
    Picked(usize, Box<Picks>),
    Int(i64, i64),
    Uuid,
}

impl Fast {
    /// The fast form of a template, when it has one.
    pub fn compile(source: &str) -> Option<Fast> {
        if source.contains("{%") || source.contains("{#") {
            return None;
        }
        let mut pieces = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_string()));
            }
            let close = rest[open..].find("}}")? + open;
            pieces.push(expression(rest[open + 2..close].trim())?);
            rest = &rest[close + 2..];
        }
        if rest.contains("}}") {
            return None;
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        let form_safe = pieces.iter().all(Piece::form_safe);
        Some(Fast { pieces, form_safe })
    }

    /// Whether every text it renders is made of bytes form encoding keeps as they are.
    pub fn form_safe(&self) -> bool {
        self.form_safe
    }

    /// Its pieces, in order.
    pub(super) fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// Renders into `out`; `None` when the engine must render it instead (an undefined name, say, so
    /// that its error is minijinja's own).
    pub fn render(&self, scope: &Arc<Scope>, out: &mut String) -> Option<()> {
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Name(n) => name_into(scope, n, out)?,
                Piece::Vu => out.push_str(itoa::Buffer::new().format(scope.vu_and_iteration()?.0)),
                Piece::Iteration => out.push_str(itoa::Buffer::new().format(scope.vu_and_iteration()?.1)),
                Piece::Digits(n) => scope.with_rng(|r| random_digits_into(r, *n, out)),
                Piece::Chars(n, a) => scope.with_rng(|r| random_string_into(r, *n, a.as_deref(), out)),
                Piece::Picked(n, picks) => scope.with_rng(|r| random_picked(r, picks, *n, out)),
                Piece::Int(a, b) => out.push_str(itoa::Buffer::new().format(scope.with_rng(|r| random_int(r, *a, *b)))),
                Piece::Uuid => uuid_into(scope, out),
            }
        }
        Some(())
    }
}

// Out of line, the pieces that format a value: `render` stays small (it is called for every templated value of
// every request), and so does what its calls save and restore.

#[inline(never)]
fn name_into(scope: &Arc<Scope>, name: &str, out: &mut String) -> Option<()> {
    let v = scope.lookup(name)?;
    if v.is_undefined() || v.is_none() {
        return None;
    }
    let _ = write!(out, "{v}");
    Some(())
}

#[inline(never)]
fn uuid_into(scope: &Arc<Scope>, out: &mut String) {
    out.push_str(&scope.with_rng(random_uuid));
}

impl Piece {
    /// Draws a random piece from `rng` into `out`, as [`Fast::render`] draws it into text; false for the
    /// pieces that are not drawn (text, names, `vu`, `iteration`).
    pub(super) fn draw_bytes(&self, rng: &mut ChaCha8Rng, out: &mut Vec<u8>) -> bool {
        match self {
            Piece::Digits(n) => random_digits_bytes(rng, *n, out),
            Piece::Chars(n, a) => random_string_bytes(rng, *n, a.as_deref(), out),
            Piece::Picked(n, picks) => random_picked_bytes(rng, picks, *n, out),
            Piece::Int(a, b) => out.extend_from_slice(itoa::Buffer::new().format(random_int(rng, *a, *b)).as_bytes()),
            Piece::Uuid => out.extend_from_slice(random_uuid(rng).as_bytes()),
            Piece::Text(_) | Piece::Name(_) | Piece::Vu | Piece::Iteration => return false,
        }
        true
    }

    /// Whether what it renders never holds a byte JSON escapes in a string (`"`, `\\`, controls).
    pub(super) fn json_safe(&self) -> bool {
        let safe = |b: u8| b >= 0x20 && b != b'"' && b != b'\\';
        match self {
            Piece::Text(t) => t.bytes().all(safe),
            Piece::Name(_) => false,
            Piece::Vu | Piece::Iteration | Piece::Digits(_) | Piece::Int(..) | Piece::Uuid => true,
            Piece::Chars(_, None) => true,
            Piece::Chars(_, Some(alphabet)) => alphabet.bytes().all(safe),
            Piece::Picked(_, picks) => picks.chars().all(safe),
        }
    }

    /// Whether what it renders is always made of bytes form encoding keeps: digits, letters, `-` (of a
    /// negative number or a UUID) and the like; a name's value can be anything.
    fn form_safe(&self) -> bool {
        match self {
            Piece::Text(t) => t.bytes().all(super::form_safe),
            Piece::Name(_) => false,
            Piece::Vu | Piece::Iteration | Piece::Digits(_) | Piece::Int(..) | Piece::Uuid => true,
            Piece::Chars(_, None) => true,
            Piece::Chars(_, Some(alphabet)) => alphabet.bytes().all(super::form_safe),
            Piece::Picked(_, picks) => picks.chars().all(super::form_safe),
        }
    }
}

/// The piece of one expression, `random_int(1, 9)` or `vu` say, when it has one.
pub(super) fn expression(e: &str) -> Option<Piece> {
    if is_name(e) {
        return Some(match e {
            "vu" => Piece::Vu,
            "iteration" => Piece::Iteration,
            _ => Piece::Name(e.to_string()),
        });
    }
    let (f, args) = e.strip_suffix(')')?.split_once('(')?;
    let args: Vec<&str> = if args.trim().is_empty() { Vec::new() } else { args.split(',').map(str::trim).collect() };
    let int = |i: usize| args.get(i).and_then(|a| a.parse::<i64>().ok());
    let len = |i: usize| int(i).and_then(|n| usize::try_from(n).ok()).filter(|n| check_len("", *n).is_ok());
    match (f.trim(), args.len()) {
        ("random_digits", 1) => Some(Piece::Digits(len(0)?)),
        ("random_string", 1) => Some(Piece::Chars(len(0)?, None)),
        ("random_string", 2) => {
            let alphabet = string_literal(args[1])?;
            let n = len(0)?;
            match Picks::new(alphabet.as_bytes()) {
                Some(picks) => Some(Piece::Picked(n, Box::new(picks))),
                None => (!alphabet.is_empty()).then_some(Piece::Chars(n, Some(alphabet))),
            }
        }
        ("random_int", 2) => {
            let (a, b) = (int(0)?, int(1)?);
            (a <= b).then_some(Piece::Int(a, b))
        }
        ("uuid", 0) => Some(Piece::Uuid),
        _ => None,
    }
}

fn is_name(e: &str) -> bool {
    let mut chars = e.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(e, "true" | "false" | "none" | "True" | "False" | "None")
}

/// A quoted string literal without escapes.
fn string_literal(a: &str) -> Option<String> {
    let q = a.chars().next()?;
    let inner = a.strip_prefix(q)?.strip_suffix(q)?;
    ((q == '\'' || q == '"') && !inner.contains(q) && !inner.contains('\\')).then(|| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_only_what_it_can_render_the_same() {
        assert!(Fast::compile("+7{{ random_digits(10) }}").is_some());
        assert!(Fast::compile("{{ random_string(16) }}-{{ vu }}").is_some());
        assert!(Fast::compile("{{ random_string(4, 'ab') }}").is_some());
        assert!(Fast::compile("{{ random_int(1, 9) }}").is_some());
        assert!(Fast::compile("{{ uuid() }}").is_some());
        assert!(Fast::compile("{{ x | upper }}").is_none());
        assert!(Fast::compile("{{ random_int(9, 1) }}").is_none());
        assert!(Fast::compile("{{ random_string(4, '') }}").is_none());
        assert!(Fast::compile("{% if x %}y{% endif %}").is_none());
        assert!(Fast::compile("{{ props.x }}").is_none());
        assert!(Fast::compile("{{ true }}").is_none());
    }
}
