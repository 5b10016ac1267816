//! A one-node Slurm cluster for one test: `munged`, `slurmctld -D` and `slurmd -D` started as root from a
//! munge key and a `slurm.conf` written into a temporary directory (its own ports, sockets, state and logs),
//! and stopped by PID when dropped, also when the test fails.

use std::fmt::Write as _;
use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The programs the cluster needs: the daemons, and the clients the test and deploy/slurm/ run.
const PROGRAMS: [&str; 8] = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel"];

/// Why a cluster cannot run here (not root, or a program missing), or None when it can.
pub fn cannot_run() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.as_deref() != Some("0") {
        return Some(format!("the daemons must run as root, and this is uid {}", uid.unwrap_or_else(|| "?".into())));
    }
    let missing: Vec<&str> = PROGRAMS.iter().copied().filter(|p| which(p).is_none()).collect();
    if !missing.is_empty() {
        return Some(format!("{} not installed (Debian: apt-get install slurm-wlm munge)", missing.join(", ")));
    }
    None
}

/// A program's path: on the PATH, or in /usr/sbin or /sbin (not on every root's PATH).
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a port to release");
    listener.local_addr().expect("its address").port()
}

/// The running cluster. Drop cancels its jobs and stops its daemons.
pub struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    /// The daemons in start order, with their names.
    daemons: Vec<(&'static str, Child)>,
}

impl Cluster {
    /// Writes the key and the configuration into `dir` (which must be world-executable: munged wants its
    /// socket's directory so) and starts the daemons; returns once they are started, not once the node is up.
    pub fn start(dir: &Path) -> Cluster {
        // slurmd finds its node by the short host name (`hostname -s`).
        let host = fs::read_to_string("/proc/sys/kernel/hostname").expect("read the host name");
        let host = host.trim().split('.').next().unwrap_or_default().to_string();
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let dir = dir.to_path_buf();
        for sub in ["munge", "state", "spool"] {
            fs::create_dir_all(dir.join(sub)).expect("create the cluster's directories");
        }
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod the cluster's directory");
        fs::set_permissions(dir.join("munge"), fs::Permissions::from_mode(0o755)).expect("chmod munge's directory");

        // munged wants a key of 32 bytes or more, readable by its user only.
        let key = dir.join("munge/munge.key");
        let mut bytes = vec![0u8; 1024];
        std::io::Read::read_exact(&mut fs::File::open("/dev/urandom").expect("open /dev/urandom"), &mut bytes)
            .expect("read /dev/urandom");
        fs::write(&key, bytes).expect("write the munge key");
        fs::set_permissions(&key, fs::Permissions::from_mode(0o400)).expect("chmod the munge key");
        let socket = dir.join("munge/munge.socket");

        // Needed on these machines: proctrack/linuxproc (the default, proctrack/cgroup, fails every job with
        // "Plugin initialization failed"); CR_CPU with cons_tres (by default a job takes the node's memory, so
        // the tasks run one at a time); OverSubscribe=FORCE (4 tasks at once on 2 CPUs, so that they all wait
        // for the start instant). MailProg only silences an error about a missing mail program.
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        let text = format!(
            "ClusterName=planrun-test\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             AuthInfo=socket={socket}\n\
             CredType=cred/munge\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             MpiDefault=none\n\
             MailProg=/bin/true\n\
             ReturnToService=2\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE\n",
            ctld_port = free_port(),
            slurmd_port = free_port(),
            socket = socket.display(),
        );
        fs::write(&conf, text).expect("write slurm.conf");

        let mut cluster = Cluster { dir: dir.clone(), conf, daemons: Vec::new() };
        cluster.spawn(
            "munged",
            &[
                "-F".to_string(),
                format!("--key-file={}", key.display()),
                format!("--socket={}", socket.display()),
                format!("--pid-file={d}/munge/munged.pid"),
                format!("--log-file={d}/munge/munged.log"),
                format!("--seed-file={d}/munge/munged.seed"),
            ],
        );
        // slurmctld authenticates with munge from its first breath: wait for the socket.
        cluster.wait_for("munged's socket", Duration::from_secs(10), |_| socket.exists());
        cluster.spawn("slurmctld", &["-D".to_string()]);
        cluster.spawn("slurmd", &["-D".to_string()]);
        cluster
    }

    fn spawn(&mut self, name: &'static str, args: &[String]) {
        let log = |suffix: &str| {
            fs::File::create(self.dir.join(format!("{name}.{suffix}"))).expect("create a daemon's output file")
        };
        let child = Command::new(which(name).expect("checked by cannot_run"))
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(log("stdout"))
            .stderr(log("stderr"))
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// A client command (sbatch, squeue, a deploy/slurm script...) pointed at this cluster.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// Runs a Slurm client program to its end; its output.
    pub fn client(&self, program: &str, args: &[&str]) -> Output {
        self.try_client(program, args).unwrap_or_else(|e| panic!("run {program}: {e}"))
    }

    /// [`Cluster::client`] that does not panic (for drop).
    fn try_client(&self, program: &str, args: &[&str]) -> std::io::Result<Output> {
        let path = which(program).ok_or_else(|| std::io::Error::other("not installed"))?;
        self.command(path).args(args).stdin(Stdio::null()).output()
    }

    /// Waits until `ready` holds, or fails the test with the daemons' logs after `limit` (a guard against a
    /// cluster that never comes up, not a measure of speed), or at once when a daemon has exited.
    pub fn wait_for(&mut self, what: &str, limit: Duration, mut ready: impl FnMut(&Cluster) -> bool) {
        let started = Instant::now();
        loop {
            if ready(self) {
                return;
            }
            let exited = self
                .daemons
                .iter_mut()
                .find_map(|(name, child)| child.try_wait().ok().flatten().map(|status| (*name, status)));
            if let Some((name, status)) = exited {
                panic!("{name} exited ({status}) while waiting for {what}\n{}", self.logs());
            }
            if started.elapsed() > limit {
                panic!("no {what} within {limit:?}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the node is idle (registered with the controller and free for jobs).
    pub fn wait_idle(&mut self) {
        self.wait_for("idle node", Duration::from_secs(30), |c| {
            String::from_utf8_lossy(&c.client("sinfo", &["-h", "-N", "-o", "%T"]).stdout).trim() == "idle"
        });
    }

    /// A job's fields (`scontrol show job -o ID`), one map per line (an array job has a line per task).
    pub fn job(&self, id: &str) -> Vec<std::collections::HashMap<String, String>> {
        let out = self.client("scontrol", &["show", "job", "-o", id]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                l.split_whitespace()
                    .filter_map(|f| f.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .collect()
    }

    /// Waits until job `id` has ended; its fields.
    pub fn wait_job(&mut self, id: &str, limit: Duration) -> std::collections::HashMap<String, String> {
        const ENDED: [&str; 9] = [
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "TIMEOUT",
            "NODE_FAIL",
            "OUT_OF_MEMORY",
            "PREEMPTED",
            "BOOT_FAIL",
            "DEADLINE",
        ];
        let mut last = Default::default();
        self.wait_for(&format!("end of job {id}"), limit, |c| {
            let fields = c.job(id).into_iter().next().unwrap_or_default();
            let ended = fields.get("JobState").is_some_and(|s| ENDED.contains(&s.as_str()));
            last = fields;
            ended
        });
        last
    }

    /// Everything the daemons and the jobs wrote, for a failure message.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        let Ok(entries) = fs::read_dir(&self.dir) else { return text };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.extend(fs::read_dir(self.dir.join("munge")).into_iter().flatten().flatten().map(|e| e.path()));
        files.sort();
        for f in files {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let wanted = [".log", ".stdout", ".stderr", ".out", ".conf"].iter().any(|s| name.ends_with(s));
            if !wanted || !f.is_file() {
                continue;
            }
            let body = fs::read_to_string(&f).unwrap_or_default();
            // The last 60 lines of each: the part that says why.
            let lines: Vec<&str> = body.lines().collect();
            let tail = lines[lines.len().saturating_sub(60)..].join("\n");
            let _ = write!(text, "\n--- {} ---\n{tail}\n", f.display());
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first (this cluster's jobs are all this test's), so that no slurmstepd or planrun outlives
        // the daemons; then the daemons, last started first, each by PID: SIGTERM, then SIGKILL if it lingers.
        // Without a live controller a client takes seconds to give up, and there is nothing to cancel.
        let controller_up =
            self.daemons.iter_mut().any(|(name, child)| *name == "slurmctld" && matches!(child.try_wait(), Ok(None)));
        if controller_up {
            let _ = self.try_client("scancel", &["--user=root"]);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline
                && self.try_client("squeue", &["-h"]).is_ok_and(|o| !o.stdout.iter().all(u8::is_ascii_whitespace))
            {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        while let Some((_, mut child)) = self.daemons.pop() {
            if let Ok(None) = child.try_wait() {
                let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
                let deadline = Instant::now() + Duration::from_secs(10);
                while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}
