//! Limits of the machine and of the disk, reported before anything is sent: more users than the
//! open-file limit allows, and a results file on a full disk (/dev/full), are exit 3 with the numbers.

use crate::common;

use common::{planrun, Server, TempDir};

fn plan(dir: &TempDir, server: &Server, threads: u32) -> std::path::PathBuf {
    dir.write(
        "plan.yaml",
        format!(
            "name: limits\ndefaults: {{ base_url: \"{}\" }}\nthread_groups:\n  - name: g\n    threads: {threads}\n    steps:\n      - name: s\n        request: {{ url: /ok }}\n",
            server.url()
        ),
    )
}

#[test]
fn more_users_than_open_files_allow_is_refused_up_front_with_the_numbers() {
    let server = Server::start();
    let dir = TempDir::new("limits_files");
    let out = planrun(dir.path(), ["run", plan(&dir, &server, 1_000_000).to_str().unwrap(), "-o", "out.jtl"]);
    assert_eq!(out.status.code(), Some(3), "{}", common::describe(&out));
    let err = common::stderr(&out);
    assert!(err.contains("1000000 sockets") && err.contains("hard limit"), "{err}");
    assert_eq!(server.count(), 0, "nothing was sent");
}

#[test]
fn a_results_file_on_a_full_disk_is_exit_3_before_sending() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let server = Server::start();
    let dir = TempDir::new("limits_full");
    let out = planrun(dir.path(), ["run", plan(&dir, &server, 2).to_str().unwrap(), "-o", "/dev/full"]);
    assert_eq!(out.status.code(), Some(3), "{}", common::describe(&out));
    assert!(common::stderr(&out).contains("No space left on device"), "{}", common::describe(&out));
    assert_eq!(server.count(), 0, "nothing was sent");
}
