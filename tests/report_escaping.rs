//! User text (labels, failure messages, file names) reaches the HTML report and the HTML comparison escaped
//! exactly once: the page's tables through its template's auto-escaping, the charts' titles and legends through
//! report/svg.rs; the embedded JSON keeps the text as it is.

use crate::common;

use common::{describe, planrun, Server, TempDir};

const LABEL: &str = r#"<script>&"'"#;
const NEEDLE: &str = r#"<b>&"'"#;

/// The page without its embedded JSON (where the text stays raw, `<` written as \u003c).
fn markup(html: &str) -> &str {
    html.split("<script type=\"application/json\"").next().unwrap_or(html)
}

fn assert_escaped_once(html: &str, text: &str) {
    let page = markup(html);
    assert!(!page.contains(text), "`{text}` appears unescaped");
    for twice in ["&amp;lt;", "&amp;gt;", "&amp;amp;", "&amp;quot;", "&amp;#"] {
        assert!(!page.contains(twice), "escaped twice: {twice}");
    }
    assert!(!page.to_ascii_lowercase().contains("<script>"), "no script element but the data");
}

#[test]
fn labels_and_messages_are_escaped_once_in_the_report_and_the_comparison() {
    let server = Server::start();
    let dir = TempDir::new("report-escaping");
    let plan = format!(
        "name: escaping\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 3\n    steps:\n      - name: {label:?}\n        \
         request:\n          url: {url}/ok\n        assert:\n          - body_contains: {needle:?}\n",
        label = LABEL,
        url = server.url(),
        needle = NEEDLE
    );
    dir.write("plan.yaml", plan);
    let out = planrun(dir.path(), ["run", "plan.yaml", "-o", "out.jtl", "--report", "report", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(server.count(), 3, "three requests sent");

    let html = std::fs::read_to_string(dir.join("report/index.html")).expect("the report");
    assert_escaped_once(&html, LABEL);
    assert_escaped_once(&html, NEEDLE);
    let page = markup(&html);
    let escaped = "&lt;script&gt;&amp;&quot;&#x27;";
    // The summary, the response codes, the failures and the per-label percentiles' heading.
    let in_tables = page.split("<svg").map(|part| part.split("</svg>").last().unwrap_or("")).collect::<String>();
    assert!(in_tables.matches(escaped).count() >= 4, "the label in the page's tables");
    // The distribution chart's title and legend, the per-label charts' legends.
    let in_charts = page.matches(escaped).count() - in_tables.matches(escaped).count();
    assert!(in_charts >= 2, "the label in the charts: {in_charts}");
    assert!(page.contains("&lt;b&gt;&amp;&quot;&#x27;"), "the failure message, escaped");
    // The data keeps the label as it was.
    assert!(html.contains(r#""label":"\u003cscript>&\"'""#), "the label in the embedded JSON");

    let compare = ["compare", "out.jtl", "out.jtl", "--html", "compare.html"];
    let out = planrun(dir.path(), compare);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let html = std::fs::read_to_string(dir.join("compare.html")).expect("the comparison");
    assert_escaped_once(&html, LABEL);
    assert!(markup(&html).contains("<h2>&lt;script&gt;&amp;&quot;&#x27;</h2>"), "the label's section");
}
