//! A URL rendered with bytes no URL may hold as they are (a data value with a space, a quote, a letter beyond
//! ASCII) is sent percent-encoded, as browsers and JMeter send it: before, every such request failed with
//! `invalid request target` and nothing was sent.

use crate::common;

use common::{run_ok, Server, TempDir};

#[test]
fn spaces_quotes_and_non_ascii_rendered_into_a_url_go_percent_encoded() {
    let server = Server::start();
    let dir = TempDir::new("url_escaping");
    let plan = dir.write(
        "plan.yaml",
        format!(
            "name: u\ndefaults: {{ base_url: \"{}\" }}\nvariables: {{ who: 'Zoë \"Z\" Smith' }}\nthread_groups:\n  \
             - name: g\n    threads: 2\n    loops: 3\n    steps:\n      - name: r\n        \
             request: {{ url: \"/people/{{{{ who }}}}?q={{{{ who }}}}&raw=%41\" }}\n        assert: [{{ status: 404 }}]\n",
            server.url()
        ),
    );
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    assert_eq!(jtl.rows.len(), 6);
    assert_eq!(server.count(), 6, "every row is a request the server read");
    assert!(jtl.rows.iter().all(|r| r["success"] == "true"), "{}", jtl.text);
    let wanted = "/people/Zo%C3%AB%20%22Z%22%20Smith?q=Zo%C3%AB%20%22Z%22%20Smith&raw=%41";
    for request in server.requests() {
        assert_eq!(request.target, wanted);
    }
    assert_eq!(jtl.rows[0]["URL"], format!("{}{wanted}", server.url()));
}
