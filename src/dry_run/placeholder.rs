//! Values a dry run cannot know because a run captures them from responses (`extract`) or takes them from a
//! list it renders then (`foreach`). Each renders as a marker made of characters that URL, form and JSON
//! encoding leave alone, so it survives into the request's bytes, where [`Placeholders::show`] replaces it
//! by `<token: captured at run time>`. Reading a field or an item of one (`{{ user.id }}`) gives another.

use std::fmt;
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, ObjectRepr, Value};

const MARKER: &str = "__planrun_placeholder_";

/// Every placeholder handed out, by number: what it stands for and why it is not known yet.
#[derive(Debug, Default)]
pub(super) struct Placeholders {
    shown: Mutex<Vec<String>>,
}

#[derive(Debug)]
struct Placeholder {
    label: String,
    why: &'static str,
    marker: String,
    book: Arc<Placeholders>,
}

impl Placeholders {
    /// A value standing for `label` (`token`, `user.id`), not known until run time because `why`.
    pub(super) fn value(self: &Arc<Self>, label: String, why: &'static str) -> Value {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        let marker = format!("{MARKER}{}__", shown.len());
        shown.push(format!("<{label}: {why}>"));
        Value::from_object(Placeholder { label, why, marker, book: self.clone() })
    }

    /// `bytes` with every marker replaced by what it stands for.
    pub(super) fn show(&self, bytes: &[u8]) -> Vec<u8> {
        let shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while let Some(i) = find(rest, MARKER.as_bytes()) {
            out.extend_from_slice(&rest[..i]);
            let after = &rest[i + MARKER.len()..];
            let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
            let index = std::str::from_utf8(&after[..digits]).ok().and_then(|d| d.parse::<usize>().ok());
            match (index.and_then(|n| shown.get(n)), after[digits..].starts_with(b"__")) {
                (Some(text), true) => {
                    out.extend_from_slice(text.as_bytes());
                    rest = &after[digits + 2..];
                }
                _ => {
                    out.extend_from_slice(MARKER.as_bytes());
                    rest = after;
                }
            }
        }
        out.extend_from_slice(rest);
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Object for Placeholder {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let label = match key.as_str() {
            Some(field) => format!("{}.{field}", self.label),
            None => format!("{}[{key}]", self.label),
        };
        Some(self.book.value(label, self.why))
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.marker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_survive_encoding_and_are_shown_by_name() {
        let book = Arc::new(Placeholders::default());
        let token = book.value("token".into(), "captured at run time");
        let id = token.get_attr("id").unwrap();
        let first = token.get_item(&Value::from(0)).unwrap();
        let text = format!("a={token}&b={id}/{first}");
        let encoded: String = url::form_urlencoded::byte_serialize(text.as_bytes()).collect();
        assert_eq!(
            String::from_utf8(book.show(encoded.as_bytes())).unwrap(),
            "a%3D<token: captured at run time>%26b%3D<token.id: captured at run time>%2F<token[0]: captured at run time>"
        );
        assert_eq!(
            book.show(b"__planrun_placeholder_9__ __planrun_placeholder_x"),
            b"__planrun_placeholder_9__ __planrun_placeholder_x"
        );
    }
}
