//! The validated plan: every default applied, every template compiled, nothing left to check.

use std::path::PathBuf;

pub use crate::http::{HttpVersion, TlsSettings};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::HeaderName;
use regex::Regex;

use crate::metric::Metric;
use crate::source::Span;
use crate::template::{Shared, Templates, Tpl};

/// A plan ready to compile; its groups' steps are `S`: [`Step`]s as validated, or their compiled form.
#[derive(Debug)]
pub struct Plan<S = Step> {
    /// The plan's name (used in the default results file name).
    pub name: String,
    /// What the plan is for.
    pub description: Option<String>,
    /// The run's seed: from `--seed`, the plan, or drawn at random.
    pub seed: u64,
    /// True when the seed was drawn, so the run prints it.
    pub seed_drawn: bool,
    /// Every compiled template of the plan.
    pub templates: Templates,
    /// What every scope shares (rendered properties, stub address).
    pub shared: Arc<Shared>,
    /// Request defaults.
    pub defaults: Defaults,
    /// Per-user variables, rendered in order when a virtual user starts.
    pub variables: Vec<(Arc<str>, Tpl)>,
    /// CSV data sets, read as `{{ name.column }}`; each virtual user takes a row per iteration.
    pub data: Vec<DataSet>,
    /// Pass/fail criteria on the run's statistics.
    pub thresholds: Vec<Threshold>,
    /// Live outputs the run streams its figures to (`outputs:`).
    pub outputs: Vec<crate::plan::output_spec::OutputSpec>,
    /// What is masked as `***` in dry-run output and results.
    pub secrets: Secrets,
    /// The thread groups, in plan order: `setup` groups, then the main ones, then `teardown` groups.
    pub groups: Vec<ThreadGroup<S>>,
}

impl<S> Plan<S> {
    /// The same plan, every group's steps made into `T`s by `f`, group by group in order.
    pub fn map_steps<T>(self, mut f: impl FnMut(Vec<S>) -> Vec<T>) -> Plan<T> {
        let groups = self
            .groups
            .into_iter()
            .map(|g| ThreadGroup {
                name: g.name,
                phase: g.phase,
                load: g.load,
                threads: g.threads,
                ramp_up: g.ramp_up,
                loops: g.loops,
                duration: g.duration,
                think_time: g.think_time,
                steps: f(g.steps),
            })
            .collect();
        Plan {
            name: self.name,
            description: self.description,
            seed: self.seed,
            seed_drawn: self.seed_drawn,
            templates: self.templates,
            shared: self.shared,
            defaults: self.defaults,
            variables: self.variables,
            data: self.data,
            thresholds: self.thresholds,
            outputs: self.outputs,
            secrets: self.secrets,
            groups,
        }
    }
}

/// When a group runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Before the main groups.
    Setup,
    /// The main load.
    Main,
    /// After the main groups.
    Teardown,
}

/// Settings every request inherits.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// Prefix of relative URLs, rendered at load time.
    pub base_url: Option<String>,
    /// Whole-request timeout (connect, send, receive).
    pub timeout: Duration,
    /// Headers sent with every request (a request's own headers of the same name win).
    pub headers: Vec<(HeaderName, Tpl)>,
    /// Follow 3xx redirects within one sample.
    pub follow_redirects: bool,
    /// Each virtual user keeps a cookie jar.
    pub cookies: bool,
    /// Response bodies beyond this many bytes are read and counted but not kept.
    pub max_body: u64,
    /// TLS settings for https targets.
    pub tls: TlsSettings,
    /// `proxy:` as the plan sets it (`none`, or a proxy for every request); `None` when it does not.
    pub proxy: Option<crate::http::ProxyChoice>,
    /// The proxies the run uses: the command line's, the plan's or the environment's (set when the plan is
    /// prepared to run; none until then).
    pub proxies: Arc<crate::http::Proxies>,
    /// The HTTP version requests speak unless they say.
    pub http_version: HttpVersion,
    /// Each user keeps its connection for its next request; false sends `Connection: close`.
    pub keep_alive: bool,
}

/// How a group makes load.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// Closed model: `threads` users start evenly over `ramp_up` and loop.
    Closed,
    /// Closed model with a ramping number of users: each stage moves linearly to its target count.
    ClosedStages(Vec<Stage>),
    /// Open model: iterations start on a schedule of arrivals per second, whatever the target's speed;
    /// each stage moves the rate linearly from the previous target to its own.
    Open {
        /// The rate at the start, per second.
        initial_rate: f64,
        /// The stages (a constant `arrival_rate` is one stage at that rate).
        stages: Vec<Stage>,
    },
}

/// One stage of a ramp.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// How long the stage lasts.
    pub duration: Duration,
    /// Threads (closed) or arrivals per second (open) at the end of the stage.
    pub target: f64,
}

impl Stage {
    /// The value a ramp has `t` into `stages`, moving linearly from `from` to each stage's target in turn
    /// (the last target once they are over).
    pub fn value_at(from: f64, stages: &[Stage], t: Duration) -> f64 {
        let mut from = from;
        let mut elapsed = Duration::ZERO;
        for s in stages {
            if t < elapsed + s.duration {
                let frac = (t - elapsed).as_secs_f64() / s.duration.as_secs_f64();
                return from + (s.target - from) * frac;
            }
            elapsed += s.duration;
            from = s.target;
        }
        from
    }

    /// `stages` ended at `until`: the ones over by then, and the part of the one under way, which ends at
    /// the value the ramp has at `until`.
    pub fn cut(from: f64, stages: &[Stage], until: Duration) -> Vec<Stage> {
        let mut out = Vec::new();
        let mut elapsed = Duration::ZERO;
        for s in stages {
            if elapsed >= until {
                break;
            }
            if elapsed + s.duration <= until {
                out.push(s.clone());
            } else {
                let duration = until - elapsed;
                out.push(Stage { duration, target: Stage::value_at(from, stages, until) });
            }
            elapsed += s.duration;
        }
        out
    }

    /// The highest value a ramp from `from` reaches over `stages` (a ramp is linear between targets, so at
    /// one of them).
    pub fn peak(from: f64, stages: &[Stage]) -> f64 {
        stages.iter().map(|s| s.target).fold(from, f64::max)
    }

    /// How long `stages` last, end to end.
    pub fn total(stages: &[Stage]) -> Duration {
        stages.iter().map(|s| s.duration).sum()
    }
}

/// A thread group: virtual users running the same steps (`S`: [`Step`]s, or their compiled form).
#[derive(Debug)]
pub struct ThreadGroup<S = Step> {
    /// The group's name (threadName prefix).
    pub name: Arc<str>,
    /// When it runs.
    pub phase: Phase,
    /// How it makes load.
    pub load: Load,
    /// Number of virtual users (closed), the most at any time (closed stages), or `max_threads` (open).
    pub threads: u32,
    /// Virtual users start evenly over this time.
    pub ramp_up: Duration,
    /// Iterations per virtual user, if bounded.
    pub loops: Option<u64>,
    /// How long the group runs, if bounded.
    pub duration: Option<Duration>,
    /// Pause after each request.
    pub think_time: Think,
    /// What each iteration does.
    pub steps: Vec<S>,
}

impl<S> ThreadGroup<S> {
    /// When user `vu` (from 1) of a closed group starts, after the group's start: the users start evenly
    /// over `ramp_up`, the first at once.
    pub fn start_offset(&self, vu: u32) -> Duration {
        self.ramp_up.mul_f64(f64::from(vu.saturating_sub(1)) / f64::from(self.threads.max(1)))
    }

    /// Whether user `vu` of a closed group starts at all: before its `duration` ends the group.
    pub fn starts(&self, vu: u32) -> bool {
        self.duration.is_none_or(|d| self.start_offset(vu) < d)
    }

    /// How many of a closed group's `threads` start before its `duration` ends it.
    pub fn users_started(&self) -> u32 {
        // Users start in order, so those that start are a prefix of 1..=threads.
        let (mut lo, mut hi) = (0u32, self.threads);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.starts(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// The load as it runs: stages (closed or open) end with the group's `duration` when it is shorter.
    pub fn load_as_run(&self) -> Load {
        let cut = |from: f64, stages: &[Stage]| match self.duration {
            Some(d) if d < Stage::total(stages) => Stage::cut(from, stages, d),
            _ => stages.to_vec(),
        };
        match &self.load {
            Load::Closed => Load::Closed,
            Load::ClosedStages(stages) => Load::ClosedStages(cut(0.0, stages)),
            Load::Open { initial_rate, stages } => {
                Load::Open { initial_rate: *initial_rate, stages: cut(*initial_rate, stages) }
            }
        }
    }
}

/// A pause.
#[derive(Debug, Clone, PartialEq)]
pub enum Think {
    /// No pause.
    None,
    /// Always this long.
    Fixed(Duration),
    /// Uniformly between the two.
    Uniform(Duration, Duration),
    /// Normally distributed, never negative.
    Gaussian {
        /// The mean pause.
        mean: Duration,
        /// Standard deviation.
        stddev: Duration,
    },
}

/// One step of an iteration.
#[derive(Debug)]
pub enum Step<R = RequestStep> {
    /// Send a request and record a sample.
    Request(Box<R>),
    /// Pause.
    Think(Think),
    /// A parent sample over its steps, like JMeter's Transaction Controller.
    Transaction {
        /// The transaction's label.
        name: Arc<str>,
        /// Its steps.
        steps: Vec<Step<R>>,
    },
    /// Steps run when a condition renders true.
    If {
        /// The condition, a template.
        cond: Tpl,
        /// Run when true.
        then: Vec<Step<R>>,
        /// Run when false.
        otherwise: Vec<Step<R>>,
    },
    /// Steps run a fixed number of times.
    Loop {
        /// How many times.
        count: u64,
        /// The steps.
        steps: Vec<Step<R>>,
    },
    /// Steps run while a condition renders true, at most `max` times.
    While {
        /// The condition, a template.
        cond: Tpl,
        /// The bound.
        max: u64,
        /// The steps.
        steps: Vec<Step<R>>,
    },
    /// Steps run once per item of a list, the item in a variable.
    ForEach {
        /// The list, a template rendering JSON.
        list: Tpl,
        /// The variable that holds the item.
        var: Arc<str>,
        /// The steps.
        steps: Vec<Step<R>>,
    },
    /// Steps run once per virtual user.
    Once {
        /// Tells the plan's `once` blocks apart: 1, 2, ... in plan order, parents before their children.
        id: usize,
        /// The steps.
        steps: Vec<Step<R>>,
    },
    /// One branch chosen at random by weight: `(cumulative weight, steps)`, the last weight being the total.
    Random(Vec<(u32, Vec<Step<R>>)>),
}

impl<R> Step<R> {
    /// Calls `f` on every step of `steps`, those inside blocks included, parents before their children.
    pub fn walk<'a>(steps: &'a [Step<R>], f: &mut impl FnMut(&'a Step<R>)) {
        for step in steps {
            f(step);
            match step {
                Step::Request(_) | Step::Think(_) => {}
                Step::Transaction { steps, .. }
                | Step::Loop { steps, .. }
                | Step::While { steps, .. }
                | Step::ForEach { steps, .. }
                | Step::Once { steps, .. } => Self::walk(steps, f),
                Step::If { then, otherwise, .. } => {
                    Self::walk(then, f);
                    Self::walk(otherwise, f);
                }
                Step::Random(branches) => branches.iter().for_each(|(_, steps)| Self::walk(steps, f)),
            }
        }
    }

    /// How many request steps `steps` holds, those inside blocks included (each written once, however
    /// often it runs).
    pub fn count_requests(steps: &[Step<R>]) -> usize {
        let mut n = 0;
        Self::walk(steps, &mut |s| n += usize::from(matches!(s, Step::Request(_))));
        n
    }

    /// The same step with each of its requests, those inside blocks included, made into a `T` by `f`.
    pub fn map_requests<T>(self, f: &mut impl FnMut(R) -> T) -> Step<T> {
        let mut all = |steps: Vec<Step<R>>| -> Vec<Step<T>> { steps.into_iter().map(|s| s.map_requests(f)).collect() };
        match self {
            Step::Request(r) => Step::Request(Box::new(f(*r))),
            Step::Think(t) => Step::Think(t),
            Step::Transaction { name, steps } => Step::Transaction { name, steps: all(steps) },
            Step::If { cond, then, otherwise } => Step::If { cond, then: all(then), otherwise: all(otherwise) },
            Step::Loop { count, steps } => Step::Loop { count, steps: all(steps) },
            Step::While { cond, max, steps } => Step::While { cond, max, steps: all(steps) },
            Step::ForEach { list, var, steps } => Step::ForEach { list, var, steps: all(steps) },
            Step::Once { id, steps } => Step::Once { id, steps: all(steps) },
            Step::Random(branches) => Step::Random(branches.into_iter().map(|(w, b)| (w, all(b))).collect()),
        }
    }
}

impl Step {
    /// The label this step's samples have, if it records any (a request or a transaction).
    pub fn label(&self) -> Option<&Arc<str>> {
        match self {
            Step::Request(r) => Some(&r.name),
            Step::Transaction { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// A request step.
#[derive(Debug)]
pub struct RequestStep {
    /// The label in results.
    pub name: Arc<str>,
    /// Where the step is in the plan, for runtime messages.
    pub span: Span,
    /// The HTTP method.
    pub method: http::Method,
    /// URL, absolute or relative to `defaults.base_url`.
    pub url: Tpl,
    /// Query parameters appended to the URL, in order.
    pub query: Vec<(String, Tpl)>,
    /// Request headers (defaults merged in), their names checked and parsed once.
    pub headers: Vec<(HeaderName, Tpl)>,
    /// The body.
    pub body: Body,
    /// Overrides `defaults.timeout`.
    pub timeout: Duration,
    /// Whether 3xx redirects are followed within the sample (`defaults.follow_redirects` unless the
    /// request says).
    pub follow_redirects: bool,
    /// The HTTP version (`defaults.http_version` unless the request says).
    pub http_version: HttpVersion,
    /// Checks on the response.
    pub asserts: Vec<Assertion>,
    /// Values captured from the response into the user's variables.
    pub extract: Vec<Extractor>,
    /// Whether the connection is kept for the next request (`defaults.keep_alive` unless the request says);
    /// when false, `headers` hold `Connection: close`.
    pub keep_alive: bool,
}

/// Captures a value from a response into a per-user variable.
#[derive(Debug)]
pub struct Extractor {
    /// The variable.
    pub name: Arc<str>,
    /// Where it is written in the plan.
    pub span: Span,
    /// Where the value comes from.
    pub from: ExtractFrom,
    /// The value when nothing matched; without one, no match fails the sample.
    pub default: Option<String>,
}

/// Where an extractor looks.
#[derive(Debug)]
pub enum ExtractFrom {
    /// A regex on the body: the capture group of the n-th match (1-based; 0 = a random match; -1 = all, as a list).
    Regex {
        /// The regex.
        regex: Regex,
        /// The capture group (0 = the whole match).
        group: usize,
        /// Which match.
        match_no: i64,
    },
    /// A JSONPath query on the body: the n-th node (as above).
    JsonPath {
        /// The query.
        path: Box<serde_json_path::JsonPath>,
        /// Which node.
        match_no: i64,
    },
    /// A response header.
    Header(String),
    /// A cookie from the user's jar, after the response was stored.
    Cookie(String),
}

/// A request body: exactly one kind.
#[derive(Debug)]
pub enum Body {
    /// No body.
    None,
    /// `application/x-www-form-urlencoded`, fields in order.
    Form(Vec<(String, Tpl)>),
    /// `multipart/form-data`, parts in order.
    Multipart(Vec<Part>),
    /// `application/json`.
    Json(JsonTpl),
    /// Bytes as written, with an optional content type.
    Raw {
        /// The body template.
        body: Tpl,
        /// The Content-Type, if any.
        content_type: Option<String>,
    },
}

/// One part of a multipart body.
#[derive(Debug)]
pub enum Part {
    /// A text field.
    Text {
        /// Field name.
        name: String,
        /// Value template.
        value: Tpl,
    },
    /// A file, read at load time.
    File {
        /// Field name.
        name: String,
        /// File name sent in the part header.
        filename: String,
        /// The part's Content-Type.
        content_type: String,
        /// The file's bytes.
        bytes: Bytes,
    },
}

/// A JSON body with templated leaves.
#[derive(Debug)]
pub enum JsonTpl {
    /// A constant value.
    Const(serde_json::Value),
    /// A string template.
    Str(Tpl),
    /// A leaf that is exactly one `{{ expr }}`: rendered through `tojson`, keeping the value's type.
    Expr(Tpl),
    /// A list.
    Array(Vec<JsonTpl>),
    /// An object, keys in order.
    Object(Vec<(String, JsonTpl)>),
}

/// A check on a response.
#[derive(Debug)]
pub struct Assertion {
    /// Where the assertion is written, named in failure messages.
    pub span: Span,
    /// What it checks.
    pub check: Check,
}

/// What an assertion checks.
#[derive(Debug)]
pub enum Check {
    /// The status is one of these classes or codes.
    Status(Vec<StatusMatch>),
    /// The body contains the text.
    BodyContains(String),
    /// The body does not contain the text.
    BodyNotContains(String),
    /// The body matches the regex.
    BodyMatches(Regex),
    /// The sample took at most this many ms.
    MaxMs(u64),
    /// The response is at most this many bytes.
    MaxBytes(u64),
    /// A JSONPath query on the body.
    JsonPath {
        /// The query, as written.
        text: String,
        /// The query.
        path: Box<serde_json_path::JsonPath>,
        /// What its result must be.
        expect: JsonExpect,
    },
    /// A response header.
    Header {
        /// The header name.
        name: String,
        /// What it must be.
        expect: TextExpect,
    },
    /// A template that must render true; it reads `response.status`, `.headers`, `.body`, `.json`.
    Expr(Tpl),
}

/// What a JSONPath query must give.
#[derive(Debug)]
pub enum JsonExpect {
    /// The first node equals this value.
    Equals(serde_json::Value),
    /// The query finds something (true) or nothing (false).
    Exists(bool),
    /// The first node, as text, matches.
    Matches(Regex),
}

/// What a text must be.
#[derive(Debug)]
pub enum TextExpect {
    /// Exactly this.
    Equals(String),
    /// Matching this.
    Matches(Regex),
    /// Present at all.
    Exists,
    /// Not present.
    Absent,
}

/// One accepted status: a code or a class like `2xx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusMatch {
    /// Exactly this code.
    Code(u16),
    /// Any code of this hundred (2 for 2xx).
    Class(u16),
}

impl StatusMatch {
    /// True when the status is accepted.
    pub fn accepts(self, status: u16) -> bool {
        match self {
            StatusMatch::Code(c) => c == status,
            StatusMatch::Class(c) => status / 100 == c,
        }
    }
}

impl std::fmt::Display for StatusMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusMatch::Code(c) => write!(f, "{c}"),
            StatusMatch::Class(c) => write!(f, "{c}xx"),
        }
    }
}

/// Where the stub file of a plan is.
#[derive(Debug, Clone)]
pub struct StubRef {
    /// The stub file, resolved relative to the plan.
    pub path: PathBuf,
    /// Where `stub:` is written.
    pub span: Span,
}

/// A CSV data set, checked at load time.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSet {
    /// The name templates read it by.
    pub name: Arc<str>,
    /// The file, resolved relative to the plan.
    pub file: PathBuf,
    /// The field delimiter.
    pub delimiter: u8,
    /// Column names: from `columns:`, or the file's header row.
    pub columns: Vec<Arc<str>>,
    /// True when the first row of the file is a header (skipped when reading rows).
    pub has_header: bool,
    /// Which row a virtual user gets next.
    pub mode: DataMode,
    /// Whether users share one cursor or each has its own.
    pub scope: DataScope,
    /// What happens at the end of the file.
    pub on_eof: OnEof,
    /// Number of data rows (counted at load time, without keeping them).
    pub rows: u64,
    /// The file's length at load time: the run reads no further (rows appended later are not read).
    pub len: u64,
    /// The byte offset of the first data row (after the byte order mark and the header row).
    pub first_row: u64,
    /// The byte offset of every data row, for a random set's draws (`None` for the other modes).
    pub starts: Option<Arc<[u64]>>,
    /// The groups its `groups:` names, the only ones that may read it; empty when it names none.
    pub groups: Vec<Arc<str>>,
    /// The indexes in `groups` of the plan's groups whose steps read the set: only their users take its rows.
    pub read_by: Vec<usize>,
}

/// Which row comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataMode {
    /// In file order.
    Sequential,
    /// A random row each time (with repetition).
    Random,
    /// Each row at most once in the whole run (implies a shared cursor).
    Unique,
}

/// Who shares a cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataScope {
    /// All users of the run share one cursor.
    Shared,
    /// Each user reads the file from its start.
    PerThread,
}

/// The end of the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnEof {
    /// Start again from the first row.
    Recycle,
    /// The user stops (its current iteration does not run).
    StopThread,
    /// The whole run stops.
    StopRun,
}

/// A pass/fail criterion, like `p95 < 500ms` on a label or on the total.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The label it applies to; `None` for the total.
    pub label: Option<Arc<str>>,
    /// What is measured.
    pub metric: Metric,
    /// How it compares.
    pub op: Op,
    /// The bound, in the metric's unit: ms for times, a fraction for error_rate, per second, or a count.
    pub value: f64,
    /// As written.
    pub text: String,
    /// Where it is written.
    pub span: Span,
    /// Stop the run as soon as it fails (checked every second once `delay` has passed).
    pub abort_on_fail: bool,
    /// How long to wait before checking it while running.
    pub delay: Duration,
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// <
    Lt,
    /// <=
    Le,
    /// >
    Gt,
    /// >=
    Ge,
    /// ==
    Eq,
}

/// Values that must not appear in dry-run output or result files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// Rendered values of secret properties.
    pub values: Vec<String>,
    /// Variables marked secret (their values differ per user).
    pub variables: Vec<Arc<str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(ms: u64, target: f64) -> Stage {
        Stage { duration: Duration::from_millis(ms), target }
    }

    #[test]
    fn stages_cut_at_a_duration_end_where_the_ramp_is() {
        let stages = [stage(1000, 10.0), stage(1000, 10.0), stage(500, 0.0)];
        assert_eq!(Stage::cut(0.0, &stages, Duration::from_millis(400)), [stage(400, 4.0)]);
        assert_eq!(
            Stage::cut(0.0, &stages, Duration::from_millis(2250)),
            [stages[0].clone(), stages[1].clone(), stage(250, 5.0)]
        );
        assert_eq!(Stage::cut(0.0, &stages, Duration::from_secs(9)), stages);
        assert_eq!(Stage::cut(20.0, &[stage(1000, 0.0)], Duration::from_millis(500)), [stage(500, 10.0)]);
        assert_eq!((Stage::peak(0.0, &stages), Stage::peak(20.0, &stages)), (10.0, 20.0));
    }

    #[test]
    fn users_whose_start_falls_after_the_duration_never_start() {
        let group = |threads: u32, ramp_up_ms: u64, duration_ms: Option<u64>| ThreadGroup::<Step> {
            name: "g".into(),
            phase: Phase::Main,
            load: Load::Closed,
            threads,
            ramp_up: Duration::from_millis(ramp_up_ms),
            loops: None,
            duration: duration_ms.map(Duration::from_millis),
            think_time: Think::None,
            steps: Vec::new(),
        };
        assert_eq!(group(20, 5000, Some(2000)).users_started(), 8);
        assert_eq!(group(20, 5000, Some(4750)).users_started(), 19);
        assert_eq!(group(20, 5000, Some(4751)).users_started(), 20);
        assert_eq!(group(20, 5000, None).users_started(), 20);
        assert_eq!(group(1_000_000, 1000, Some(1)).users_started(), 1000);
        assert_eq!(group(3, 0, Some(1)).users_started(), 3);
        assert_eq!(group(20, 5000, Some(2000)).start_offset(8), Duration::from_millis(1750));
    }
}
