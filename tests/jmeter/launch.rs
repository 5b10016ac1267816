//! Finding an installed JMeter (Debian's `jmeter` + `jmeter-http` packages, or an Apache binary
//! distribution under `JMETER_HOME`) and running a .jmx with it, non-GUI, through
//! tests/fixtures/jmeter/JMeterLauncher.java (why a launcher: see that file).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The longest a JMeter run may take before it is killed and the test fails: a guard against hangs only.
const GUARD: Duration = Duration::from_secs(120);

/// Every column JMeter 2.13 can write in a CSV JTL, switched on (`sent_bytes` is JMeter 3.1's and later;
/// 2.13 ignores it). What is not here is written in XML only (response data, headers, sampler data) or
/// needs plan settings (`sample_variables`).
const SAVE: &[(&str, &str)] = &[
    ("output_format", "csv"),
    ("print_field_names", "true"),
    ("default_delimiter", ","),
    ("timestamp_format", "ms"),
    ("time", "true"),
    ("label", "true"),
    ("response_code", "true"),
    ("response_message", "true"),
    ("thread_name", "true"),
    ("data_type", "true"),
    ("successful", "true"),
    ("assertion_results_failure_message", "true"),
    ("bytes", "true"),
    ("sent_bytes", "true"),
    ("thread_counts", "true"),
    ("url", "true"),
    ("filename", "true"),
    ("latency", "true"),
    ("encoding", "true"),
    ("sample_count", "true"),
    ("hostname", "true"),
    ("idle_time", "true"),
    ("connect_time", "true"),
    ("subresults", "true"),
];

/// An installed JMeter and the JDK to run it.
pub struct JMeter {
    home: PathBuf,
    java: PathBuf,
    javac: PathBuf,
}

/// What a run left.
pub struct Run {
    /// JMeter's version, from its log (`2.13.19691222`, `5.6.3`).
    pub version: String,
    /// JMeter's log.
    pub log: String,
}

/// Finds JMeter, java and javac; why not, when one is missing.
pub fn find() -> Result<JMeter, String> {
    let java = on_path("java").ok_or("`java` is not on PATH")?;
    let javac = on_path("javac").ok_or("`javac` is not on PATH (a JDK is needed to compile the launcher)")?;
    let home = match std::env::var_os("JMETER_HOME") {
        Some(h) => PathBuf::from(h),
        None => {
            let script = on_path("jmeter").ok_or("`jmeter` is not on PATH and JMETER_HOME is not set")?;
            jmeter_home(&script).ok_or_else(|| format!("cannot find JMeter's home from {}", script.display()))?
        }
    };
    if !home.join("bin/ApacheJMeter.jar").is_file() {
        return Err(format!("{} has no bin/ApacheJMeter.jar", home.display()));
    }
    if !home.join("lib/ext/ApacheJMeter_http.jar").is_file() {
        return Err(format!(
            "{} has no lib/ext/ApacheJMeter_http.jar (Debian: apt-get install jmeter-http)",
            home.display()
        ));
    }
    Ok(JMeter { home, java, javac })
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// An Apache distribution's `bin/jmeter` sits in its home's `bin`; Debian's `/usr/bin/jmeter` is a wrapper
/// around /usr/share/jmeter.
fn jmeter_home(script: &Path) -> Option<PathBuf> {
    let real = script.canonicalize().ok()?;
    let beside = real.parent()?.parent()?.to_path_buf();
    [beside, PathBuf::from("/usr/share/jmeter")].into_iter().find(|h| h.join("bin/ApacheJMeter.jar").is_file())
}

impl JMeter {
    /// Runs `jmx` non-GUI in `work`, writing a CSV JTL with every column to `jtl`; `props` become -J
    /// properties. Panics, with what JMeter said, when the launcher cannot be compiled or JMeter fails.
    pub fn run(&self, work: &Path, jmx: &Path, jtl: &Path, props: &[(&str, String)]) -> Run {
        let classes = work.join("launcher-classes");
        std::fs::create_dir_all(&classes).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/jmeter/JMeterLauncher.java");
        let out = Command::new(&self.javac).arg("-d").arg(&classes).arg(&source).output().expect("run javac");
        assert!(out.status.success(), "javac failed:\n{}", String::from_utf8_lossy(&out.stderr));

        let log = work.join("jmeter.log");
        let mut cmd = Command::new(&self.java);
        cmd.arg("-Djava.awt.headless=true")
            .arg("-Xmx256m")
            .arg(format!("-Djmeter.home={}", self.home.display()))
            .arg("-cp")
            .arg(self.classpath(&classes))
            .arg("JMeterLauncher")
            .arg("-n")
            .arg("-t")
            .arg(jmx)
            .arg("-l")
            .arg(jtl)
            .arg("-j")
            .arg(&log)
            // No UDP port for shutdown messages: nothing listens but the recorder.
            .arg("-Jjmeterengine.nongui.port=0");
        for (name, value) in SAVE {
            cmd.arg(format!("-Jjmeter.save.saveservice.{name}={value}"));
        }
        for (name, value) in props {
            cmd.arg(format!("-J{name}={value}"));
        }
        let output = guarded(cmd.current_dir(work));
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let said = || format!("{}\n{}\n--- jmeter.log ---\n{log}", stdout(&output), stderr(&output));
        assert!(output.status.success(), "JMeter failed ({}):\n{}", output.status, said());
        assert!(jtl.is_file(), "JMeter wrote no JTL:\n{}", said());
        let version = log
            .lines()
            .find_map(|l| l.split_once("JMeter: Version ").map(|(_, v)| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no version in JMeter's log:\n{}", said()));
        Run { version, log }
    }

    /// The launcher, ApacheJMeter.jar (whose manifest, in Debian's package, names the dependencies in
    /// /usr/share/java), lib/*.jar and lib/ext/*.jar (an Apache distribution keeps its dependencies in lib).
    fn classpath(&self, classes: &Path) -> OsString {
        let mut entries = vec![classes.to_path_buf(), self.home.join("bin/ApacheJMeter.jar")];
        for dir in ["lib", "lib/ext"] {
            let mut jars: Vec<PathBuf> = std::fs::read_dir(self.home.join(dir))
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            jars.retain(|p| p.extension().is_some_and(|e| e == "jar"));
            jars.sort();
            entries.extend(jars);
        }
        std::env::join_paths(entries).expect("a classpath")
    }
}

fn guarded(cmd: &mut Command) -> Output {
    crate::common::run_guarded(cmd, GUARD, "JMeter", |_| {})
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
