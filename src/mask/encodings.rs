//! The plain forms of a secret value, as the plan's filters (`tojson`, `base64`) and planrun's own encoders
//! (JSON bodies and lines, assertion messages) write it. [`super::Masks`] looks for each in the text and in
//! the text percent-decoded, so that every percent-encoding of each is found too (`urlencode`, query
//! parameters and form bodies, `pw | base64 | urlencode`, what the URL parser makes of a redirect's target).
//! Other compositions (`base64` of a URL-encoded value, say) are not looked for.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;

/// A derived form shorter than this (a piece of base64) is not looked for: it would hide unrelated text.
const MIN_DERIVED: usize = 4;

/// `secret` as written, JSON-escaped (serde_json's way and minijinja `tojson`'s), quoted as Rust debug
/// output, and in base64 (both alphabets, padded or not, and the part of a longer text's base64 that the
/// secret alone makes); and, when it is not ASCII, its UTF-8 bytes read one character a byte (ISO-8859-1, as
/// a response's reason phrase is read) with that text's escapes; each once.
pub(super) fn encodings(secret: &str) -> Vec<String> {
    if secret.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let latin1: String = secret.bytes().map(char::from).collect();
    for text in [secret, latin1.as_str()] {
        out.extend([text.to_string(), debug_escaped(text), json_escaped(text)]);
        out.extend(tojson_escaped(text));
    }
    for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
        out.push(engine.encode(secret));
    }
    out.extend(base64_cores(secret.as_bytes()).into_iter().filter(|c| c.len() >= MIN_DERIVED));
    out.sort_unstable();
    out.dedup();
    out
}

/// Rust's `{:?}` without the quotes: how assertion messages quote a header value (`src/run/check.rs`).
fn debug_escaped(secret: &str) -> String {
    let quoted = format!("{secret:?}");
    quoted[1..quoted.len() - 1].to_string()
}

/// JSON string escaping without the quotes, as serde_json writes it: `json:` bodies, JSON lines, the value a
/// jsonpath assertion quotes.
fn json_escaped(secret: &str) -> String {
    let quoted = serde_json::Value::from(secret).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// minijinja's `tojson` filter without the quotes: it also escapes `<`, `>`, `&` and `'`.
fn tojson_escaped(secret: &str) -> Option<String> {
    let no_args = minijinja::value::Kwargs::from_iter(std::iter::empty::<(&str, minijinja::Value)>());
    let json = minijinja::filters::tojson(&minijinja::Value::from(secret), None, no_args).ok()?.to_string();
    json.strip_prefix('"')?.strip_suffix('"').map(str::to_string)
}

/// The base64 characters made of the secret's bits alone, for each of the three places the secret can start
/// at inside a longer encoded text (`(user ~ ':' ~ password) | base64`), in both alphabets: whatever comes
/// before or after it, these characters are the same.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for skip in 0..3usize {
        let mut bytes = vec![0u8; skip];
        bytes.extend_from_slice(secret);
        // Character i holds bits 6i..6i+6; the secret's bits are 8*skip..8*(skip+len).
        let first = (8 * skip).div_ceil(6);
        let end = 8 * bytes.len() / 6;
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let text = engine.encode(&bytes);
            if let Some(core) = text.get(first..end).filter(|c| !c.is_empty()) {
                out.push(core.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_beyond_ascii_is_also_looked_for_as_its_bytes_read_as_iso_8859_1() {
        let forms = encodings("pw/ü");
        assert!(forms.contains(&"pw/ü".to_string()));
        assert!(forms.contains(&"pw/Ã¼".to_string()), "as a reason phrase holds it: {forms:?}");
    }

    #[test]
    fn an_alphanumeric_secret_has_only_its_base64_forms() {
        let forms = encodings("pass1234");
        assert!(forms.contains(&"pass1234".to_string()));
        assert!(forms.contains(&"cGFzczEyMzQ=".to_string()));
        assert!(forms.contains(&"cGFzczEyMzQ".to_string()));
        assert!(forms.iter().all(|f| f == "pass1234" || !f.contains("pass")), "{forms:?}");
    }

    #[test]
    fn a_base64_core_is_found_whatever_precedes_the_secret() {
        let secret = "Sup3rS3cret";
        let cores = base64_cores(secret.as_bytes());
        for prefix in ["", "u:", "us:", "use:", "user:"] {
            let text = STANDARD.encode(format!("{prefix}{secret}!"));
            assert!(cores.iter().any(|c| text.contains(c.as_str())), "{prefix}: {text} {cores:?}");
        }
    }
}
