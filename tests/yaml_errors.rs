//! YAML syntax errors in planrun's words: each common mistake is reported at the line and column of the
//! mistake (not where the parser gave up, often the line after), with what was expected and a hint that
//! shows the fix. One case per translated error, each through `planrun validate`.

use crate::common;

use common::{describe, planrun, stderr, TempDir};

/// The one problem `planrun validate` reports for `yaml`: its line, column, message, `expected` text and hint.
struct Reported {
    line: u32,
    col: u32,
    message: String,
    expected: String,
    hint: String,
}

fn validate(name: &str, yaml: &str) -> Reported {
    let dir = TempDir::new(&format!("yaml_{name}"));
    let plan = dir.write("plan.yaml", yaml);
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.ends_with("plan.yaml: 1 problem found; nothing was sent\n"), "one problem:\n{err}");
    let field = |prefix: &str| {
        err.lines()
            .find_map(|l| l.trim_start().strip_prefix(prefix).map(str::to_string))
            .unwrap_or_else(|| panic!("no `{prefix}` in:\n{err}"))
    };
    let at = field("--> ");
    let mut parts = at.rsplitn(3, ':');
    let col = parts.next().and_then(|c| c.parse().ok()).expect("a column");
    let line = parts.next().and_then(|l| l.parse().ok()).expect("a line");
    let carets = err.lines().find(|l| l.contains('^')).expect("carets");
    let expected = carets.split_once("^ expected ").map(|(_, e)| e.to_string()).unwrap_or_default();
    Reported { line, col, message: field("error: "), expected, hint: field("= help: ") }
}

const GROUP: &str = "name: x\nthread_groups:\n  - name: g\n    threads: 1\n";

#[test]
fn a_key_indented_less_than_the_one_above() {
    let r = validate(
        "less",
        &format!(
            "{GROUP}    steps:\n      - name: a\n        request:\n          url: http://x/\n         method: GET\n"
        ),
    );
    assert_eq!((r.line, r.col), (9, 10));
    assert_eq!(r.message, "`method` is in column 10, but `url` on line 8 is in column 11");
    assert_eq!(r.expected, "a key at column 11, like `url`");
    assert!(
        r.hint
            .starts_with("move `method` to column 11 to go with `url`, or to column 9 to go with `request` on line 7;"),
        "{}",
        r.hint
    );
}

#[test]
fn a_key_indented_more_than_the_one_above_mapping_values_not_allowed() {
    let r = validate(
        "more",
        &format!(
            "{GROUP}    steps:\n      - name: a\n        request:\n          url: http://x/\n            method: GET\n"
        ),
    );
    assert_eq!((r.line, r.col), (9, 13));
    assert_eq!(
        r.message,
        "`method` is indented more than `url` on line 8, so YAML reads it as the rest of `url`'s value"
    );
    assert!(r.hint.starts_with("move `method` to column 11;"), "{}", r.hint);
}

#[test]
fn a_missing_colon_is_found_on_the_line_above_where_the_parser_stopped() {
    // The parser stops at the `:` of `threads` on line 4; the mistake is `name g` on line 3.
    let r = validate("colon_above", "name: x\nthread_groups:\n  - name g\n    threads: 1\n    steps: []\n");
    assert_eq!((r.line, r.col), (3, 5));
    assert_eq!(r.message, "`name` has no `:` after it");
    assert_eq!(r.hint, "write `- name: g`");
}

#[test]
fn a_key_without_its_colon() {
    let r = validate("no_colon", &format!("{GROUP}    steps\n      - think: 1s\n"));
    assert_eq!((r.line, r.col), (5, 5));
    assert_eq!(r.message, "`steps` has no `:` after it");
    assert_eq!(r.hint, "write `steps:`");
}

#[test]
fn a_colon_without_its_space() {
    let r = validate("no_space", "name: x\nthread_groups:\n  - name: g\n    threads:1\n    steps: []\n");
    assert_eq!((r.line, r.col), (4, 5));
    assert_eq!(r.message, "`threads:1` has no space after its `:`");
    assert_eq!(r.hint, "write `threads: 1`");
}

#[test]
fn a_value_holding_colon_space() {
    let r = validate("colon_value", &format!("name: x\ndescription: sends: 5 kinds\n{}", &GROUP[8..]));
    assert_eq!((r.line, r.col), (2, 14));
    assert_eq!(r.message, "the value of `description` holds `: `");
    assert_eq!(r.hint, "a value with `: ` in it must be quoted: `description: \"sends: 5 kinds\"`");
}

#[test]
fn a_list_item_out_of_line() {
    let r = validate(
        "dash",
        &format!(
            "{GROUP}    steps:\n      - name: a\n        request: {{ url: http://x/ }}\n        assert:\n          - status: 200\n           - max_ms: 5\n"
        ),
    );
    assert_eq!((r.line, r.col), (10, 12));
    assert_eq!(r.message, "this list item's `-` is in column 12, the one on line 9 in column 11");
    assert!(r.hint.starts_with("move the `-` to column 11, under the one above;"), "{}", r.hint);
}

#[test]
fn a_tab_in_the_indentation_is_shown_on_its_own_line() {
    // The parser stops at the end of line 3; the tab is on line 4.
    let r = validate("tab", "name: x\nthread_groups:\n  - name: g\n\tthreads: 1\n");
    assert_eq!((r.line, r.col), (4, 1));
    assert_eq!(r.message, "a tab in the indentation");
    assert_eq!(r.expected, "spaces");
    assert!(r.hint.starts_with("YAML indents with spaces only"), "{}", r.hint);
}

#[test]
fn an_unclosed_quote() {
    let r = validate("quote", &format!("name: x\ndescription: \"five senders\n{}", &GROUP[8..]));
    assert_eq!((r.line, r.col), (2, 14));
    assert_eq!(r.message, "the quoted string that starts here is never closed");
    assert_eq!(r.expected, "a closing \" on this line");
    assert_eq!(r.hint, "write `description: \"five senders\"`");
}

#[test]
fn a_quote_closed_only_by_the_next_lines_quote() {
    // YAML reads `http://x/\n method: ` as one string, then stops at `GET"` on line 9.
    let r = validate(
        "quote_runs_on",
        &format!("{GROUP}    steps:\n      - name: a\n        request:\n          url: \"http://x/\n          method: \"GET\"\n"),
    );
    assert_eq!((r.line, r.col), (8, 16));
    assert_eq!(
        r.message,
        "the quoted string that starts here is not closed on its line: YAML reads on to the \" on line 9"
    );
    assert_eq!(r.hint, "write `url: \"http://x/\"`");
}

#[test]
fn text_after_a_closing_quote() {
    let r = validate("after_quote", &format!("name: x\ndescription: \"five\" senders\n{}", &GROUP[8..]));
    assert_eq!((r.line, r.col), (2, 21));
    assert_eq!(r.message, "text after the closing quote");
    assert_eq!(r.hint, "put the whole value inside the quotes: `description: \"five senders\"`");
}

#[test]
fn an_unclosed_bracket_is_shown_where_it_opens() {
    // The parser stops at the `:` of `steps` on the next line.
    let r = validate("bracket", "name: x\nthread_groups:\n  - name: g\n    threads: [1, 2\n    steps: []\n");
    assert_eq!((r.line, r.col), (4, 14));
    assert_eq!(r.message, "this `[` is never closed");
    assert_eq!(r.expected, "a `]` to end the list");
    assert_eq!(r.hint, "write `threads: [1, 2]`");
}

#[test]
fn an_unclosed_brace_is_shown_where_it_opens() {
    let r = validate(
        "brace",
        &format!(
            "{GROUP}    steps:\n      - name: a\n        request: {{ url: http://x/, method: GET\n      - think: 1s\n"
        ),
    );
    assert_eq!((r.line, r.col), (7, 18));
    assert_eq!(r.message, "this `{` is never closed");
    assert_eq!(r.hint, "write `request: { url: http://x/, method: GET }`");
}

#[test]
fn a_bracket_closed_by_the_other_kind() {
    let r = validate("mismatched", &format!("{GROUP}    steps: [ {{ think: 1s }}, {{ think: 2s ]\n"));
    assert_eq!((r.line, r.col), (5, 29));
    assert_eq!(r.message, "this `{` is closed by the `]` at line 5, column 41");
    assert_eq!(r.expected, "a `}` to close it first");
}

#[test]
fn a_missing_comma_between_flow_entries() {
    let r = validate(
        "comma",
        &format!("{GROUP}    steps:\n      - name: a\n        request: {{ url: http://x/ method: GET }}\n"),
    );
    assert_eq!((r.line, r.col), (7, 41));
    assert_eq!(r.message, "expected `,` or `}` here");
    assert!(r.hint.starts_with("separate the entries"), "{}", r.hint);
}

#[test]
fn a_duplicate_key_in_a_mapping_planrun_does_not_know() {
    // Accepted before, sending one of the two headers without a word.
    let r = validate(
        "duplicate",
        &format!(
            "{GROUP}    steps:\n      - name: a\n        request:\n          url: http://x/\n          headers:\n            X-Tenant: a\n            X-Tenant: b\n"
        ),
    );
    assert_eq!((r.line, r.col), (11, 13));
    assert_eq!(r.message, "`X-Tenant` is given twice in `headers`");
    assert_eq!(r.hint, "it is first given on line 10; YAML keeps only one of the two, so remove or rename one");
}

#[test]
fn an_unquoted_template_value() {
    let r = validate(
        "template",
        &format!(
            "name: x\nproperties:\n  base: http://x\ndefaults:\n  base_url: {{{{ props.base }}}}/api\n{}",
            &GROUP[8..]
        ),
    );
    assert_eq!((r.line, r.col), (5, 13));
    assert_eq!(r.message, "a value that starts with `{{` must be quoted: YAML reads `{` as the start of a mapping");
    assert_eq!(r.expected, "a quoted string");
    assert_eq!(r.hint, "write `base_url: \"{{ props.base }}/api\"`");
}

#[test]
fn an_unquoted_template_inside_braces() {
    let r = validate(
        "template_flow",
        &format!("{GROUP}    steps:\n      - name: a\n        request: {{ url: http://x/, query: {{ user: {{{{ vu }}}}, n: 1 }} }}\n"),
    );
    assert_eq!((r.line, r.col), (7, 51));
    assert_eq!(r.hint, "write `request: { url: http://x/, query: { user: \"{{ vu }}\", n: 1 } }`");
}

#[test]
fn a_regex_backslash_in_double_quotes() {
    let r = validate(
        "escape",
        &format!(
            "{GROUP}    steps:\n      - name: a\n        request: {{ url: http://x/ }}\n        extract:\n          id: {{ regex: \"id=(\\d+)\" }}\n"
        ),
    );
    assert_eq!((r.line, r.col), (9, 29));
    assert_eq!(r.message, "`\\d` is not an escape in a double-quoted string");
    assert_eq!(
        r.hint,
        "in single quotes a backslash is just a backslash: `id: { regex: 'id=(\\d+)' }`; or double it in double quotes"
    );
}

#[test]
fn a_list_on_the_line_of_its_key() {
    let r = validate("list_inline", "name: x\nthread_groups: - name: g\n");
    assert_eq!((r.line, r.col), (2, 16));
    assert_eq!(r.message, "a list item cannot follow `thread_groups:` on its line");
    assert!(r.hint.starts_with("end the line at `thread_groups:` and put `- name: g` on the next line"), "{}", r.hint);
}

#[test]
fn carets_stand_under_the_mistake_after_chinese_or_japanese_text() {
    let dir = TempDir::new("yaml_wide_carets");
    let plan = dir.write(
        "plan.yaml",
        format!("{GROUP}    steps:\n      - name: 发送短信\n        request: {{ url: \"http://127.0.0.1:1/ログイン\", mehtod: GET }}\n"),
    );
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    // Terminal columns: kana and CJK ideographs take two.
    let columns = |s: &str| -> usize {
        let wide = |c: char| ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c);
        s.chars().map(|c| if wide(c) { 2 } else { 1 }).sum()
    };
    let line = err.lines().find(|l| l.contains("mehtod: GET")).unwrap_or_else(|| panic!("{err}"));
    let carets = err.lines().find(|l| l.contains("^ expected one of")).unwrap_or_else(|| panic!("{err}"));
    let key = line.find("mehtod").unwrap();
    let start = carets.find('^').unwrap();
    assert_eq!(columns(&carets[..start]), columns(&line[..key]), "carets under `mehtod`:\n{err}");
    assert_eq!(carets[start..].chars().take_while(|&c| c == '^').count(), "mehtod".len(), "{err}");
}

#[test]
fn a_mistake_on_an_enormous_line_is_shown_around_its_column() {
    // A plan on one line, as a generator writes it, with a 1 MiB URL and an unknown key after it.
    let url = format!("http://127.0.0.1:1/{}", "a".repeat(1 << 20));
    let yaml = format!(
        "{{name: x, thread_groups: [{{name: g, threads: 1, steps: [{{name: s, request: {{url: \"{url}\"}}}}], bogus: 1}}]}}\n"
    );
    let dir = TempDir::new("yaml_enormous");
    let plan = dir.write("plan.yaml", &yaml);
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    let at = format!("plan.yaml:1:{}\n", yaml.find("bogus").unwrap() + 1);
    assert!(err.starts_with("error: unknown key `bogus` in thread group\n") && err.contains(&at), "{err}");
    assert!(err.len() < 2_000, "{} bytes of diagnostics for one problem", err.len());
    let shown = err.lines().find(|l| l.starts_with("1 | ")).expect("the line");
    let carets = err.lines().find(|l| l.contains('^')).expect("carets");
    assert!(shown.starts_with("1 | ...aaa") && shown.contains("bogus: 1"), "{err}");
    assert_eq!(carets.find('^'), shown.find("bogus"), "{err}");
}
