//! `validate` checks the columns a template reads from a data set against the CSV's header: before, a
//! misspelt column passed and failed every request at run time with `undefined value`.

use crate::common;

use common::{describe, planrun, stderr, TempDir};

#[test]
fn a_misspelt_column_is_a_plan_error_with_did_you_mean() {
    let dir = TempDir::new("plan_columns");
    dir.write("users.csv", "username,password\nann,a1\nbob,b2\n");
    let plan = dir.write(
        "plan.yaml",
        "name: columns\ndata:\n  users: { file: users.csv }\nthread_groups:\n  - name: g\n    threads: 1\n    \
         loops: 1\n    steps:\n      - name: login\n        request: { url: \"http://127.0.0.1:1/?u={{ users.usernmae }}&p={{ users.password }}\" }\n",
    );
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(err.contains("data set `users` has no column `usernmae`"), "{err}");
    assert!(err.contains("did you mean `users.username`?"), "{err}");
    assert!(err.contains("plan.yaml:10:"), "{err}");
    assert!(!err.contains("password`"), "a column that exists is not reported:\n{err}");
}

#[test]
fn columns_given_in_the_plan_are_the_ones_checked() {
    let dir = TempDir::new("plan_columns_given");
    dir.write("phones.csv", "123,ann\n456,bob\n");
    let plan = dir.write(
        "plan.yaml",
        "name: columns\ndata:\n  rows: { file: phones.csv, columns: [phone, name] }\nthread_groups:\n  - name: g\n    \
         threads: 1\n    loops: 1\n    steps:\n      - name: send\n        request: { url: \"http://127.0.0.1:1/?to={{ rows.phone }}&n={{ rows.nmae }}\" }\n",
    );
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("data set `rows` has no column `nmae`"), "{}", describe(&out));
    let fixed = std::fs::read_to_string(&plan).unwrap().replace("rows.nmae", "rows.name");
    let plan = dir.write("plan.yaml", fixed);
    let out = planrun(dir.path(), ["validate", plan.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

#[test]
fn an_undefined_value_at_run_time_names_what_and_where() {
    let dir = TempDir::new("undefined_names");
    let plan = dir.write(
        "plan.yaml",
        "name: undefined\nvariables:\n  t: plain\nthread_groups:\n  - name: g\n    threads: 1\n    loops: 1\n    steps:\n      \
         - name: s\n        request: { url: \"http://127.0.0.1:1/?x={{ t.nope }}\" }\n",
    );
    let (_, jtl) = common::run_ok(&dir, &plan, &[]);
    let row = jtl.one("s");
    assert_eq!(row["responseCode"], "Non HTTP response code: BadRequest");
    let message = &row["responseMessage"];
    assert!(message.contains("undefined value"), "{message}");
    assert!(message.contains("`t.nope`"), "the message names what was undefined: {message}");
    assert!(message.contains("step `s`, plan line 9"), "and where: {message}");
}
