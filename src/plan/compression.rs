//! `defaults.compression:`: the content codings a plan accepts, sent as one `Accept-Encoding` header. No
//! header is sent for it unless the plan asks: a response is decoded whatever it says, but what the server
//! is told to send is the plan's to choose.

use super::decode::Ctx;
use super::node::{Node, Value};
use crate::diag::{did_you_mean, Diagnostic};
use crate::http::content_coding::CODINGS;

/// The `Accept-Encoding` value of a `compression:` list (`gzip, br`), in the order written; empty for `[]`.
pub(super) fn compression(cx: &mut Ctx, node: &Node) -> Option<String> {
    let expected = format!("a list of content codings, of: {}", CODINGS.join(", "));
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, &format!("{expected}, e.g. [gzip, br]"));
        return None;
    };
    let mut names: Vec<&str> = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(text) = cx.string(item, "content coding") else {
            ok = false;
            continue;
        };
        let lower = text.trim().to_ascii_lowercase();
        match CODINGS.iter().find(|c| **c == lower) {
            Some(c) if names.contains(c) => {
                cx.error(Diagnostic::new(item.span, format!("content coding `{c}` is listed twice")));
                ok = false;
            }
            Some(c) => names.push(c),
            None => {
                let hint = match did_you_mean(&lower, CODINGS.iter().copied()) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None if lower == "identity" => "identity is always accepted: leave it out".into(),
                    None => "planrun decodes only these; a header `Accept-Encoding` sends any value".into(),
                };
                cx.error(
                    Diagnostic::new(item.span, format!("unknown content coding `{text}`"))
                        .expected(format!("one of: {}", CODINGS.join(", ")))
                        .hint(hint),
                );
                ok = false;
            }
        }
    }
    ok.then(|| names.join(", "))
}
