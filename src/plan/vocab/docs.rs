//! The key tables of docs/plan.md, made from the vocabulary. Each object's table sits between
//! `<!-- keys: ID -->` and `<!-- /keys -->`; the test fails when a table is missing or differs from what the
//! vocabulary says, and `BLESS=1 cargo test --lib vocab::docs` writes them.

use super::{all, Need, Object, Ty, STEP_SHAPES};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/plan.md");
const END: &str = "<!-- /keys -->";

/// The markdown table of an object's keys.
pub fn table(o: &Object) -> String {
    let mut out = String::from("| key | type | default | what |\n| --- | --- | --- | --- |\n");
    for k in o.keys {
        let default = match k.need {
            Need::Optional => "none".to_string(),
            Need::Required => "required".to_string(),
            Need::Default(v) => format!("`{v}`"),
            Need::Otherwise(what) => what.to_string(),
            Need::RequiredWhen(case) => format!("required {case}"),
        };
        let row = [format!("`{}`", k.name), type_name(&k.ty), default, k.doc.to_string()]
            .map(|cell| cell.replace('|', "\\|"));
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// The table of the step shapes: each one's keys, the optional ones said so.
fn steps_table() -> String {
    let mut out = String::from("| step | keys |\n| --- | --- |\n");
    for shape in STEP_SHAPES {
        let quoted = |need: bool| -> Vec<String> {
            shape.keys.iter().filter(|k| (k.need == Need::Required) == need).map(|k| format!("`{}`", k.name)).collect()
        };
        let (required, optional) = (quoted(true), quoted(false));
        let mut keys = required.join(", ");
        if !optional.is_empty() {
            keys.push_str(&format!(", and optionally {}", optional.join(", ")));
        }
        out.push_str(&format!("| {} | {keys} |\n", shape.what));
    }
    out
}

/// A type as the docs name it.
fn type_name(ty: &Ty) -> String {
    match ty {
        Ty::Text => "text".into(),
        Ty::Bool => "true or false".into(),
        Ty::Duration => "duration".into(),
        Ty::Count(range) if *range.end() == u64::MAX => format!("whole number from {}", range.start()),
        Ty::Count(range) => format!("whole number, {} to {}", range.start(), thousands(*range.end())),
        Ty::Rate => "rate".into(),
        Ty::Think => "pause".into(),
        Ty::Word(words) => words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", "),
        Ty::Any => "any value".into(),
        Ty::Object(o) => format!("mapping: {}", o.what),
        Ty::Shape(s) => s.docs().into(),
    }
}

/// `1000000` as `1,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `text` with every marked table written anew; the ids of the objects it has no table for.
fn regenerate(text: &str) -> (String, Vec<&'static str>) {
    let mut out = String::new();
    let mut rest = text;
    let mut missing: Vec<&'static str> = all().iter().map(|o| o.id).collect();
    while let Some(at) = rest.find("<!-- keys: ") {
        let (before, marked) = rest.split_at(at);
        out.push_str(before);
        let Some(close) = marked.find("-->") else { break };
        let id = marked["<!-- keys: ".len()..close].trim();
        let Some(end) = marked.find(END) else { break };
        out.push_str(&marked[..close + 3]);
        out.push('\n');
        match all().into_iter().find(|o| o.id == id) {
            None if id == "step" => out.push_str(&steps_table()),
            Some(o) => {
                missing.retain(|m| *m != o.id);
                out.push_str(&table(o));
            }
            None => out.push_str(&format!("unknown object `{id}`\n")),
        }
        out.push_str(END);
        rest = &marked[end + END.len()..];
    }
    out.push_str(rest);
    (out, missing)
}

#[test]
fn plan_md_has_every_objects_key_table() {
    let text = std::fs::read_to_string(DOC).expect("docs/plan.md");
    let (fresh, missing) = regenerate(&text);
    assert!(missing.is_empty(), "docs/plan.md has no `<!-- keys: ID -->` table for {missing:?}");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(DOC, &fresh).expect("docs/plan.md is written");
        return;
    }
    assert!(
        fresh == text,
        "a key table of docs/plan.md is not what the vocabulary (src/plan/vocab) says: write them with \
         `BLESS=1 cargo test --lib vocab::docs`"
    );
}

#[test]
fn numbers_get_thousands_separators() {
    assert_eq!(thousands(1_000_000), "1,000,000");
    assert_eq!(thousands(100), "100");
    assert_eq!(thousands(1_073_741_824), "1,073,741,824");
}
