//! A percent-decoded view of a text, mapped back to it: a secret percent-encoded by any encoder (whichever
//! characters it leaves alone, upper- or lower-case hex, `+` or `%20` for a space) is found by looking for
//! its plain forms in the view.

/// `text` with every `%XX` decoded (and `+` read as a space when `plus_is_space`), and where each decoded
/// byte came from: byte `i` of the view is `text[at[i]..at[i + 1]]`.
pub(super) struct Decoded {
    /// The decoded bytes.
    pub bytes: Vec<u8>,
    /// The start of each decoded byte in the text, and the text's length last.
    pub at: Vec<usize>,
}

impl Decoded {
    /// The view, or `None` when decoding would change nothing.
    pub fn of(text: &[u8], plus_is_space: bool) -> Option<Decoded> {
        let changes = text.iter().any(|&b| b == b'%' || (plus_is_space && b == b'+'));
        if !changes {
            return None;
        }
        let mut bytes = Vec::with_capacity(text.len());
        let mut at = Vec::with_capacity(text.len() + 1);
        let mut i = 0;
        while i < text.len() {
            at.push(i);
            let escaped = match text.get(i..i + 3) {
                Some([b'%', hi, lo]) => hex(*hi).zip(hex(*lo)).map(|(hi, lo)| (hi << 4) | lo),
                _ => None,
            };
            match text[i] {
                _ if escaped.is_some() => {
                    bytes.extend(escaped);
                    i += 3;
                }
                b'+' if plus_is_space => {
                    bytes.push(b' ');
                    i += 1;
                }
                b => {
                    bytes.push(b);
                    i += 1;
                }
            }
        }
        at.push(text.len());
        Some(Decoded { bytes, at })
    }

    /// The text's span of the view's bytes `start..end`.
    pub fn span(&self, start: usize, end: usize) -> (usize, usize) {
        (self.at[start], self.at[end])
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_bytes_map_back_to_their_text() {
        let d = Decoded::of(b"a%20b+c%zz%4", true).unwrap();
        assert_eq!(d.bytes, b"a b c%zz%4");
        assert_eq!(d.span(1, 3), (1, 5));
        assert_eq!(d.span(4, 6), (6, 8));
        assert!(Decoded::of(b"a+b", false).is_none());
    }
}
