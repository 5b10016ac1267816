//! JSON bodies written straight into their text. The literal parts (punctuation, keys, constants, the text
//! around templates) are made once; each templated leaf is written as the value the engine would make, and
//! without the engine when its template has a fast form (`fast.rs`): a random function with literal
//! arguments draws from the user's generator into the body, and its number or string is written in place.
//!
//! The bytes are those of building the body as a `serde_json::Value` and serializing it: a string leaf is
//! the template's text, escaped; a leaf that is one `{{ expr }}` is `expr | tojson` parsed back (a number
//! stays a number). The generator is drawn in the same order, the same number of times, so the same seed
//! gives the same bytes. A leaf whose fast form cannot write it (a name that is not defined, say) goes to
//! the engine, as a template outside a body does.

use std::io::Write as _;
use std::sync::{Arc, MutexGuard};

use minijinja::value::ValueKind;
use rand_chacha::ChaCha8Rng;

use super::fast::{self, Piece};
use super::scope::Scope;
use super::{TemplateError, Templates, Tpl};

/// A JSON body compiled to what it writes (made by [`JsonBuilder`], written by [`Templates::render_json`]).
#[derive(Debug, Clone)]
pub struct JsonBody {
    ops: Box<[Op]>,
    /// About the length of a rendered body: its text is allocated once.
    capacity: usize,
}

#[derive(Debug, Clone)]
enum Op {
    /// JSON text, written as it is.
    Text(Box<str>),
    /// JSON text of at most 16 bytes (most between two leaves), padded: copied in one fixed move and cut
    /// back to its length, instead of a call to `memcpy` for a few bytes.
    Short([u8; 16], u8),
    /// A random piece whose text never needs an escape in a JSON string (a number, letters, digits).
    Draw(Piece),
    /// A random piece whose alphabet has characters JSON escapes (`"`, `\`, controls).
    DrawEscaped(Piece),
    /// `vu` or `iteration`, as a number.
    Vu,
    Iteration,
    /// A name's value as text, escaped, inside a string.
    Name(String),
    /// A name's value as a JSON value (a leaf that is only the name): a string, integer, boolean or null.
    NameValue(String),
    /// A leaf whose ops may not be able to write it (they read names, `vu`, `iteration`).
    Leaf(Box<Leaf>),
}

#[derive(Debug, Clone)]
struct Leaf {
    /// The ops that write it without the engine; when one cannot, what they wrote is taken back and the
    /// engine renders the leaf, as it renders a template whose fast form could not.
    ops: Box<[Op]>,
    /// Whether there are ops at all (a leaf without a fast form goes straight to the engine).
    fast: bool,
    tpl: Tpl,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string: the template's text, escaped (the quotes are around the leaf).
    Str,
    /// A value: `{{ (expr) | tojson }}` rendered, parsed and written as serde_json writes it.
    Value,
}

/// Why a JSON body could not be written.
#[derive(Debug, Clone)]
pub enum JsonError {
    /// A template of the body did not render.
    Template(TemplateError),
    /// A leaf that is one expression rendered something that is not JSON.
    Value(String),
}

/// Builds a [`JsonBody`] from the body's tree, written in order: `raw` JSON text, `string` leaves and
/// `value` leaves.
#[derive(Debug, Default)]
pub struct JsonBuilder {
    ops: Vec<Op>,
    capacity: usize,
}

impl JsonBuilder {
    /// A builder of an empty body.
    pub fn new() -> Self {
        Self::default()
    }

    /// JSON text as it is: punctuation, a key with its colon, a constant.
    pub fn raw(&mut self, json: &str) {
        self.capacity += json.len();
        if let Some(Op::Text(t)) = self.ops.last_mut() {
            let mut s = String::with_capacity(t.len() + json.len());
            s.push_str(t);
            s.push_str(json);
            *t = s.into_boxed_str();
        } else {
            self.ops.push(Op::Text(json.into()));
        }
    }

    /// A string leaf: the template's text, as a JSON string.
    pub fn string(&mut self, tpl: &Tpl) {
        if let Some(text) = tpl.literal() {
            self.raw(&quoted(text));
            return;
        }
        self.raw("\"");
        match tpl.fast.as_deref() {
            Some(f) if f.pieces().iter().all(|p| !fallible(p)) => {
                for p in f.pieces() {
                    match p {
                        Piece::Text(t) => self.raw(&escaped(t)),
                        p => self.draw(p),
                    }
                }
            }
            Some(f) => {
                let ops = f.pieces().iter().map(|p| self.string_op(p)).collect();
                self.leaf(Leaf { ops, fast: true, tpl: tpl.clone(), kind: Kind::Str });
            }
            None => self.leaf(Leaf { ops: Box::new([]), fast: false, tpl: tpl.clone(), kind: Kind::Str }),
        }
        self.raw("\"");
    }

    /// A leaf that is one expression: `tpl` is `{{ (expr) | tojson }}`, and what it renders is parsed as JSON.
    pub fn value(&mut self, tpl: &Tpl) {
        let piece = tpl
            .source()
            .strip_prefix("{{ (")
            .and_then(|r| r.strip_suffix(") | tojson }}"))
            .and_then(|e| fast::expression(e.trim()));
        let op = match piece {
            Some(p @ Piece::Int(..)) => return self.draw(&p),
            Some(p @ (Piece::Digits(_) | Piece::Chars(..) | Piece::Picked(..) | Piece::Uuid)) => {
                self.raw("\"");
                self.draw(&p);
                return self.raw("\"");
            }
            Some(Piece::Vu) => Op::Vu,
            Some(Piece::Iteration) => Op::Iteration,
            Some(Piece::Name(n)) => Op::NameValue(n),
            Some(Piece::Text(_)) | None => {
                return self.leaf(Leaf { ops: Box::new([]), fast: false, tpl: tpl.clone(), kind: Kind::Value })
            }
        };
        self.capacity += 16;
        self.leaf(Leaf { ops: Box::new([op]), fast: true, tpl: tpl.clone(), kind: Kind::Value });
    }

    /// The body.
    pub fn finish(self) -> JsonBody {
        let ops = self.ops.into_iter().map(short).collect();
        // The fixed moves write up to 32 bytes past the text they leave.
        JsonBody { ops, capacity: self.capacity + 32 }
    }

    fn draw(&mut self, p: &Piece) {
        self.capacity += estimate(p);
        self.ops.push(if p.json_safe() { Op::Draw(p.clone()) } else { Op::DrawEscaped(p.clone()) });
    }

    fn string_op(&mut self, p: &Piece) -> Op {
        self.capacity += estimate(p);
        match p {
            Piece::Text(t) => short(Op::Text(escaped(t).into())),
            Piece::Vu => Op::Vu,
            Piece::Iteration => Op::Iteration,
            Piece::Name(n) => Op::Name(n.clone()),
            p if p.json_safe() => Op::Draw(p.clone()),
            p => Op::DrawEscaped(p.clone()),
        }
    }

    fn leaf(&mut self, leaf: Leaf) {
        self.capacity += 16;
        self.ops.push(Op::Leaf(Box::new(leaf)));
    }
}

/// A text op of at most 16 bytes as [`Op::Short`]; any other op as it is.
fn short(op: Op) -> Op {
    match op {
        Op::Text(t) if t.len() <= 16 => {
            let mut bytes = [0u8; 16];
            bytes[..t.len()].copy_from_slice(t.as_bytes());
            Op::Short(bytes, t.len() as u8)
        }
        op => op,
    }
}

/// Whether a piece may not be able to write itself (and the engine must then render its leaf).
fn fallible(p: &Piece) -> bool {
    matches!(p, Piece::Name(_) | Piece::Vu | Piece::Iteration)
}

/// About how many bytes a piece writes.
fn estimate(p: &Piece) -> usize {
    match p {
        Piece::Text(t) => t.len(),
        Piece::Digits(n) | Piece::Chars(n, _) | Piece::Picked(n, _) => *n,
        Piece::Uuid => 36,
        _ => 16,
    }
}

impl Templates {
    /// Writes a JSON body for a scope.
    pub fn render_json(&self, body: &JsonBody, scope: &Arc<Scope>) -> Result<Vec<u8>, JsonError> {
        let mut out = Vec::with_capacity(body.capacity);
        // The generator is taken once for a run of draws, and let go before a leaf (the engine takes it).
        let mut rng = None;
        for op in &body.ops {
            match op {
                Op::Leaf(leaf) => {
                    rng = None;
                    self.leaf(leaf, scope, &mut out)?;
                }
                op => {
                    // Only leaves hold ops that can fail.
                    let _ = write(op, scope, &mut rng, &mut out);
                }
            }
        }
        Ok(out)
    }

    fn leaf(&self, leaf: &Leaf, scope: &Arc<Scope>, out: &mut Vec<u8>) -> Result<(), JsonError> {
        let mark = out.len();
        if leaf.fast {
            let mut rng = None;
            if leaf.ops.iter().all(|op| write(op, scope, &mut rng, out).is_some()) {
                return Ok(());
            }
            out.truncate(mark);
        }
        let text = self.render_engine(&leaf.tpl, scope).map_err(JsonError::Template)?;
        match leaf.kind {
            Kind::Str => escape_into(&text, out),
            Kind::Value => {
                let value: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| JsonError::Value(e.to_string()))?;
                out.extend_from_slice(value.to_string().as_bytes());
            }
        }
        Ok(())
    }
}

/// Writes one op; `None` when it cannot (the leaf then goes to the engine).
#[inline]
fn write<'s>(
    op: &Op,
    scope: &'s Arc<Scope>,
    rng: &mut Option<MutexGuard<'s, ChaCha8Rng>>,
    out: &mut Vec<u8>,
) -> Option<()> {
    match op {
        Op::Text(t) => out.extend_from_slice(t.as_bytes()),
        Op::Short(bytes, len) => {
            let end = out.len() + usize::from(*len);
            out.extend_from_slice(bytes);
            out.truncate(end);
        }
        Op::Draw(p) => {
            p.draw_bytes(rng.get_or_insert_with(|| scope.rng()), out);
        }
        Op::DrawEscaped(p) => {
            let mark = out.len();
            p.draw_bytes(rng.get_or_insert_with(|| scope.rng()), out);
            escape_tail(out, mark);
        }
        Op::Vu => out.extend_from_slice(itoa::Buffer::new().format(scope.vu_and_iteration()?.0).as_bytes()),
        Op::Iteration => out.extend_from_slice(itoa::Buffer::new().format(scope.vu_and_iteration()?.1).as_bytes()),
        Op::Name(n) => name_text(scope, n, out)?,
        Op::NameValue(n) => name_value(scope, n, out)?,
        Op::Leaf(_) => return None,
    }
    Some(())
}

/// A name's value as the engine writes it into text; `None` (the engine's turn) for none and undefined.
#[inline(never)]
fn name_text(scope: &Arc<Scope>, name: &str, out: &mut Vec<u8>) -> Option<()> {
    let v = scope.lookup(name)?;
    if v.is_undefined() || v.is_none() {
        return None;
    }
    let mark = out.len();
    let _ = write!(out, "{v}");
    escape_tail(out, mark);
    Some(())
}

/// A name's value as `tojson` gives it, for the kinds that are plainly the same in JSON; `None` for the
/// others (floats, sequences, maps...), which the engine writes.
#[inline(never)]
fn name_value(scope: &Arc<Scope>, name: &str, out: &mut Vec<u8>) -> Option<()> {
    let v = scope.lookup(name)?;
    match v.kind() {
        ValueKind::String => {
            out.push(b'"');
            escape_into(v.as_str()?, out);
            out.push(b'"');
        }
        ValueKind::Number if v.is_integer() => {
            out.extend_from_slice(itoa::Buffer::new().format(v.as_i64()?).as_bytes())
        }
        ValueKind::Bool => out.extend_from_slice(if v.is_true() { b"true" } else { b"false" }),
        ValueKind::None => out.extend_from_slice(b"null"),
        _ => return None,
    }
    Some(())
}

/// `text` as a JSON string, quotes included.
fn quoted(text: &str) -> String {
    format!("\"{}\"", escaped(text))
}

fn escaped(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    escape_into(text, &mut out);
    // Escaping only replaces ASCII bytes with ASCII text: what was UTF-8 stays UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Escapes what was written to `out` from `mark` on, when any of it needs an escape.
fn escape_tail(out: &mut Vec<u8>, mark: usize) {
    if out.get(mark..).unwrap_or_default().iter().any(|&b| needs_escape(b)) {
        let tail = out.split_off(mark);
        escape_bytes_into(&tail, out);
    }
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Appends `text` escaped as serde_json escapes a string: `"`, `\` and the controls below 0x20 (those with
/// a short form as `\n`, the others as `\u00XX`); everything else as it is.
fn escape_into(text: &str, out: &mut Vec<u8>) {
    escape_bytes_into(text.as_bytes(), out);
}

fn escape_bytes_into(text: &[u8], out: &mut Vec<u8>) {
    let mut start = 0;
    for (i, &b) in text.iter().enumerate() {
        if !needs_escape(b) {
            continue;
        }
        out.extend_from_slice(&text[start..i]);
        start = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
        }
    }
    out.extend_from_slice(&text[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut text: String = (0u8..0x80).map(char::from).collect();
        text.push_str("é ü \u{2028} \u{fffd} \u{1f600}");
        assert_eq!(quoted(&text), serde_json::to_string(&text).unwrap());
        let mut out = b"ab".to_vec();
        out.extend_from_slice(text.as_bytes());
        escape_tail(&mut out, 2);
        assert_eq!(out, format!("ab{}", escaped(&text)).into_bytes());
    }
}
