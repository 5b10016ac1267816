//! Secret properties and variables go on the wire as they are but show as `***` in dry-run output and in
//! the JTL's URL column; Authorization headers are masked in dry-run output.

use crate::common;

use common::{planrun, run_ok, Server, TempDir};

#[test]
fn secrets_are_sent_but_never_shown() {
    let server = Server::start();
    let dir = TempDir::new("secrets");
    let plan = dir.write(
        "plan.yaml",
        format!(
            r#"
name: secrets
properties:
  password: {{ value: "s3cr3t pw", secret: true }}
defaults:
  base_url: "{}"
variables:
  token: {{ value: "tok-{{{{ vu }}}}", secret: true }}
thread_groups:
  - name: g
    threads: 2
    steps:
      - name: send
        request:
          url: /ok
          query: {{ user: tester, password: "{{{{ props.password }}}}", t: "{{{{ token }}}}" }}
          headers: {{ Authorization: "Bearer {{{{ token }}}}" }}
"#,
            server.url()
        ),
    );
    let (_, jtl) = run_ok(&dir, &plan, &[]);
    let mut tokens: Vec<String> = server.requests().iter().map(|r| r.query()["t"].clone()).collect();
    tokens.sort();
    assert_eq!(tokens, ["tok-1", "tok-2"], "the real values go on the wire");
    assert!(server.requests().iter().all(|r| r.query()["password"] == "s3cr3t pw"));
    for row in &jtl.rows {
        assert!(row["URL"].ends_with("/ok?user=tester&password=***&t=***"), "{row:?}");
    }
    assert!(!jtl.text.contains("s3cr3t") && !jtl.text.contains("tok-"), "{}", jtl.text);

    let out = planrun(dir.path(), ["dry-run", plan.to_str().unwrap(), "-n", "1"]);
    let shown = common::stdout(&out);
    assert!(shown.contains("password=***&t=***"), "{shown}");
    assert!(shown.contains("Authorization: ***"), "{shown}");
    assert!(!shown.contains("s3cr3t") && !shown.contains("tok-1"), "{shown}");
}
