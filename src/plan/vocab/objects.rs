//! The plan's objects outside the steps: the plan, `defaults`, TLS, secret values, data sets, thread
//! groups, stages, pauses, thresholds, outputs.

use super::super::bounds;
use super::{key, Object, Shape, Ty};

/// The plan file.
pub static PLAN: Object = Object {
    id: "plan",
    what: "plan",
    doc: "A planrun load-test plan. Most strings are minijinja templates ({{ ... }}); see docs/plan.md.",
    examples: "",
    keys: &[
        key("name", Ty::Text, "The plan's name: it starts the default results file name, `results/<name>-<UTC time>.jtl`.")
            .required()
            .examples(r#"["sms-dispatch"]"#),
        key("description", Ty::Text, "What the plan is for, in a sentence.")
            .examples(r#"["200 senders hammer the SMS dispatcher"]"#),
        key(
            "seed",
            Ty::Count(bounds::ANY),
            "The run's random seed (--seed wins), or a template over the properties; any run can be replayed with \
                the seed it printed.",
        )
        .otherwise("drawn and printed")
        .examples("[42]"),
        key(
            "stub",
            Ty::Text,
            "A stub target file, relative to the plan, served on a free loopback port for this run; its URL is {{ \
                stub.url }}. May read {{ props.NAME }}.",
        )
        .examples(r#"["stubs/kannel.yaml", "{{ props.stub }}"]"#),
        key(
            "properties",
            Ty::Shape(Shape::Properties),
            "Run-time knobs read as {{ props.NAME }}, rendered once at load time in order; -D NAME=VALUE replaces or \
                adds one; a value may be { value, secret }.",
        )
        .examples(r#"[{ "base_url": "{{ stub.url }}", "threads": 200 }]"#),
        key("defaults", Ty::Object(&DEFAULTS), "Settings every request inherits.")
            .examples(r#"[{ "base_url": "{{ props.base_url }}", "timeout": "10s", "headers": { "User-Agent": "planrun" } }]"#),
        key(
            "variables",
            Ty::Shape(Shape::Variables),
            "Per-user variables, rendered in order when each virtual user starts (each may read the ones before it); \
                read as {{ NAME }}; a value may be { value, secret }.",
        )
        .examples(r#"[{ "username": "tester", "password": "{{ env('KANNEL_PASSWORD', 'secret') }}" }]"#),
        key(
            "data",
            Ty::Shape(Shape::DataSets),
            "CSV data sets, read as {{ NAME.COLUMN }}: a virtual user takes the next row of each set at the start of \
                every iteration.",
        )
        .examples(r#"[{ "users": { "file": "data/users.csv" } }]"#),
        key(
            "setup",
            Ty::Shape(Shape::Groups),
            "Thread groups that run, side by side and to their end, before the main ones (e.g. to create test data).",
        ),
        key("thread_groups", Ty::Shape(Shape::Groups), "The main load: thread groups that run side by side.").required(),
        key(
            "teardown",
            Ty::Shape(Shape::Groups),
            "Thread groups that run after the main ones, even when the run was stopped.",
        ),
        key(
            "thresholds",
            Ty::Shape(Shape::Thresholds),
            "Pass/fail criteria on the run's statistics, per label (a step's name or a transaction) or `total`; a \
                failed one makes the run exit 1.",
        )
        .examples(
            r#"[{ "total": ["p95 < 500ms", "error_rate < 1%"], "checkout": [{ "check": "max < 5s", "abort_on_fail": true }] }]"#,
        ),
        key(
            "outputs",
            Ty::Shape(Shape::Outputs),
            "Live outputs: the run's figures streamed each second while it runs (see docs/outputs.md); \
                `--out KIND=URL` adds more.",
        )
        .examples(
            r#"[[{ "influxdb": "http://127.0.0.1:8086/planrun", "raw": false }, { "prometheus": "http://127.0.0.1:9090/api/v1/write" }]]"#,
        ),
    ],
};

/// `defaults:`.
pub static DEFAULTS: Object = Object {
    id: "defaults",
    what: "defaults",
    doc: "Settings every request inherits.",
    examples: "",
    keys: &[
        key(
            "base_url",
            Ty::Text,
            "Prefix of relative request URLs: an http:// or https:// URL, rendered once at load time (it may read \
                props and stub.url).",
        )
        .otherwise("none: every URL must then be absolute")
        .examples(r#"["http://127.0.0.1:13013", "{{ props.base_url }}"]"#),
        key("timeout", Ty::Duration, "Whole-request timeout (connect, send, receive) unless a request sets its own.")
            .default("10s")
            .examples(r#"["10s", "1500ms"]"#),
        key(
            "headers",
            Ty::Shape(Shape::Pairs("A header value, a template.")),
            "Headers sent with every request (a request's header of the same name, in any case, wins).",
        )
        .otherwise("User-Agent: planrun")
        .examples(r#"[{ "User-Agent": "planrun", "Accept": "application/json" }]"#),
        key(
            "follow_redirects",
            Ty::Bool,
            "Follow 3xx redirects within one sample (one row, with the last URL in `URL`); a request may say \
                otherwise.",
        )
        .default("true")
        .examples("[false]"),
        key("cookies", Ty::Bool, "Give each virtual user its own cookie jar.").default("true").examples("[false]"),
        key(
            "max_body",
            Ty::Count(bounds::BODY),
            "Response bytes kept for assertions and extractors (10485760 is 10 MiB); the rest is read and counted \
                but not kept.",
        )
        .default("10485760")
        .examples("[1048576]"),
        key(
            "http_version",
            Ty::Shape(Shape::HttpVersion),
            "The HTTP version of every request unless a request says otherwise: `2` speaks HTTP/2 (ALPN offers only \
                `h2` over https; cleartext HTTP/2 with prior knowledge over http), `1.1` HTTP/1.1 only, `auto` \
                HTTP/2 over https when the server picks `h2` by ALPN, else HTTP/1.1.",
        )
        .default("auto")
        .examples(r#"["2", "1.1"]"#),
        key(
            "tls",
            Ty::Object(&TLS),
            "TLS settings for https targets; certificates are verified against Mozilla's root certificates (bundled) \
                and `ca`, unless insecure.",
        )
        .examples(r#"[{ "ca": "certs/ca.pem" }, { "insecure": true }]"#),
        key(
            "proxy",
            Ty::Text,
            "An http:// forward proxy for every request (https ones through CONNECT), `http://user:password@host:port` \
                to send Proxy-Authorization (the credentials are masked as secrets), or `none` to ignore the \
                environment's; `--proxy` wins over it, and it wins over HTTP_PROXY, HTTPS_PROXY and ALL_PROXY. \
                NO_PROXY applies to it too.",
        )
        .otherwise("the environment's proxies, if any")
        .examples(r#"["http://127.0.0.1:3128", "none", "http://{{ props.proxy_user }}:{{ props.proxy_password }}@proxy:8080"]"#),
        key(
            "compression",
            Ty::Shape(Shape::Codings),
            "Content codings to accept, sent as one `Accept-Encoding` header in the order written (an \
                `Accept-Encoding` in `headers`, here or on a request, wins). Responses are decoded whatever this \
                says, when something reads their body.",
        )
        .otherwise("none: no Accept-Encoding header is sent unless `headers` has one")
        .examples(r#"[["gzip", "br"], ["gzip", "deflate", "br", "zstd"]]"#),
        key(
            "keep_alive",
            Ty::Bool,
            "Keep each user's connection open for its next request (JMeter's \"Use KeepAlive\"); false sends every \
                request with `Connection: close` on a new connection; a request may say otherwise.",
        )
        .default("true")
        .examples("[false]"),
    ],
};

/// `defaults.tls:`.
pub static TLS: Object = Object {
    id: "tls",
    what: "tls",
    doc: "TLS settings for https targets.",
    examples: "",
    keys: &[
        key("insecure", Ty::Bool, "Accept any certificate (for self-signed test targets).")
            .default("false")
            .examples("[true]"),
        key("ca", Ty::Text, "A PEM file of extra trusted CA certificates, relative to the plan.")
            .examples(r#"["certs/ca.pem"]"#),
        key(
            "client_cert",
            Ty::Text,
            "A PEM client certificate chain for mutual TLS, relative to the plan; goes with client_key.",
        )
        .examples(r#"["certs/client.pem"]"#),
        key("client_key", Ty::Text, "The PEM private key of client_cert, relative to the plan; goes with client_cert.")
            .examples(r#"["certs/client.key"]"#),
    ],
};

/// `{ value, secret }`: a property or variable whose value is masked.
pub static SECRET: Object = Object {
    id: "secret",
    what: "secret value",
    doc: "A value marked secret.",
    examples: r#"[{ "value": "{{ env('API_TOKEN') }}", "secret": true }]"#,
    keys: &[
        key("value", Ty::Text, "The value: a property's, or a variable's template.").required(),
        key(
            "secret",
            Ty::Bool,
            "true: the value (at least 4 characters) is shown as *** in every encoding, in dry-run output, results \
                and messages.",
        )
        .default("false")
        .examples("[true]"),
    ],
};

/// The words of a data set's `mode:`, in the order `data.rs` maps them.
pub const MODES: [&str; 3] = ["sequential", "random", "unique"];
/// The words of a data set's `scope:`.
pub const SCOPES: [&str; 2] = ["shared", "per_thread"];
/// The words of a data set's `on_eof:`.
pub const ON_EOF: [&str; 3] = ["recycle", "stop_thread", "stop_run"];
/// Names templates already give a meaning to, besides the template functions: no data set may take one.
pub const RESERVED: &[&str] = &["vu", "iteration", "group", "props", "stub"];

/// One set of `data:`.
pub static DATA_SET: Object = Object {
    id: "data_set",
    what: "data set",
    doc: "A CSV data set.",
    examples: "",
    keys: &[
        key(
            "file",
            Ty::Text,
            "The CSV file, relative to the plan (a template rendered at load time); read once at load time to check \
                it.",
        )
        .required()
        .examples(r#"["data/users.csv", "{{ props.users_file }}"]"#),
        key(
            "delimiter",
            Ty::Shape(Shape::Delimiter),
            "The field delimiter: one ASCII character, not a quote or line break; \\t for a tab.",
        )
        .default(",")
        .examples(r#"[";", "|", "\\t"]"#),
        key(
            "columns",
            Ty::Shape(Shape::Columns),
            "The column names when the file has no header row; without it the first row names the columns.",
        )
        .examples(r#"[["phone", "name"]]"#),
        key(
            "mode",
            Ty::Word(&MODES),
            "Which row comes next: in file order, a random one (with repetition), or each row once in the whole run.",
        )
        .default("sequential")
        .examples(r#"["random"]"#),
        key(
            "scope",
            Ty::Word(&SCOPES),
            "Whether all virtual users share one cursor or each reads the file from its start (not with mode: \
                unique).",
        )
        .default("shared")
        .examples(r#"["per_thread"]"#),
        key(
            "on_eof",
            Ty::Word(&ON_EOF),
            "At the end of the file: start again, stop the virtual user, or stop the run.",
        )
        .otherwise("recycle; stop_thread with mode: unique")
        .examples(r#"["stop_thread"]"#),
        key(
            "groups",
            Ty::Shape(Shape::GroupNames),
            "The only thread groups that may read the set; another group that reads it is a plan error. A user \
                takes a row only in a group whose steps read the set, listed or not.",
        )
        .otherwise("every group whose steps read it")
        .examples(r#"[["buyers"]]"#),
    ],
};

/// A thread group.
pub static GROUP: Object = Object {
    id: "thread_group",
    what: "thread group",
    doc: "A thread group: virtual users running the same steps, closed (threads, or stages of thread counts) or open \
        (arrival_rate, or stages of rates).",
    examples: "",
    keys: &[
        key("name", Ty::Text, "The group's name, the prefix of threadName in results (`senders 1-17`).")
            .required()
            .examples(r#"["senders"]"#),
        key(
            "threads",
            Ty::Count(bounds::THREADS),
            "Closed model: the number of virtual users, each looping over the steps.",
        )
        .required_when("for a closed group without stages")
        .examples(r#"[10, "{{ props.threads }}"]"#),
        key("ramp_up", Ty::Duration, "Closed model: the virtual users start evenly over this time (0s: all at once).")
            .default("0s")
            .examples(r#"["10s"]"#),
        key(
            "loops",
            Ty::Count(bounds::LOOPS),
            "Iterations per virtual user; with duration, whichever ends first.",
        )
        .otherwise("1, unless duration or stages bound the group")
        .examples(r#"[100, "{{ props.loops }}"]"#),
        key("duration", Ty::Duration, "How long the group runs; iterations in flight finish.")
            .required_when("for an open group without stages")
            .examples(r#"["60s", "5m"]"#),
        key(
            "think_time",
            Ty::Think,
            "A pause after each request of the group: a duration, { uniform: [min, max] } or { gaussian: { mean, \
                stddev } }.",
        )
        .examples(r#"["200ms", { "uniform": ["100ms", "300ms"] }, { "gaussian": { "mean": "200ms", "stddev": "50ms" } }]"#),
        key("steps", Ty::Shape(Shape::Steps), "What each iteration does, in order.").required(),
        key(
            "arrival_rate",
            Ty::Rate,
            "Open model: iterations started per unit of time whatever the target's speed (200/s, 600/m, 10/h, or a \
                number per second).",
        )
        .examples(r#"["50/s", "600/m", 20]"#),
        key(
            "stages",
            Ty::Shape(Shape::Stages),
            "A ramp: each stage moves linearly to its target over its duration; thread counts (closed) or rates like \
                40/s (open).",
        )
        .examples(
            r#"[[{ "duration": "30s", "target": 50 }, { "duration": "1m", "target": 50 }], [{ "duration": "1m", "target": "100/s" }]]"#,
        ),
        key(
            "max_threads",
            Ty::Count(bounds::THREADS),
            "Open model: the most virtual users at once; arrivals beyond them are dropped and counted.",
        )
        .default("100")
        .examples("[200]"),
    ],
};

/// One stage of `stages:`.
pub static STAGE: Object = Object {
    id: "stage",
    what: "stage",
    doc: "One stage of a ramp.",
    examples: r#"[{ "duration": "30s", "target": 50 }]"#,
    keys: &[
        key("duration", Ty::Duration, "How long the stage lasts.").required().examples(r#"["30s"]"#),
        key(
            "target",
            Ty::Rate,
            "Where the stage ends: a number of threads (closed), or a rate like 100/s (open; one rate makes the \
                group open).",
        )
        .required()
        .examples(r#"[50, "100/s"]"#),
    ],
};

/// A random pause: `think_time:` or `think:` written as a mapping.
pub static THINK: Object = Object {
    id: "think",
    what: "think time",
    doc: "A random pause: uniform or gaussian.",
    examples: "",
    keys: &[
        key("uniform", Ty::Shape(Shape::Between), "A pause drawn uniformly between two durations, [min, max].")
            .examples(r#"[["100ms", "300ms"]]"#),
        key(
            "gaussian",
            Ty::Object(&GAUSSIAN),
            "A pause drawn from a normal distribution with this mean and standard deviation, never below zero.",
        )
        .examples(r#"[{ "mean": "200ms", "stddev": "50ms" }]"#),
    ],
};

/// `gaussian:` of a pause.
pub static GAUSSIAN: Object = Object {
    id: "gaussian",
    what: "gaussian",
    doc: "A normal distribution of pauses.",
    examples: "",
    keys: &[
        key("mean", Ty::Duration, "The mean pause.").required().examples(r#"["200ms"]"#),
        key("stddev", Ty::Duration, "The standard deviation of the pause.").required().examples(r#"["50ms"]"#),
    ],
};

/// A threshold written as a mapping.
pub static THRESHOLD: Object = Object {
    id: "threshold",
    what: "threshold",
    doc: "A threshold: a check like \"p95 < 500ms\", or { check, abort_on_fail, delay }.",
    examples: "",
    keys: &[
        key(
            "check",
            Ty::Shape(Shape::Check),
            "METRIC OP VALUE: metrics mean, min, max, p50, p90, p95, p99, p99.9 (times, like 500ms), error_rate (1%), \
                throughput (100/s), samples, dropped (open-model iterations dropped under `total`: a count, or 1% of \
                the arrivals).",
        )
        .required()
        .examples(r#"["p95 < 500ms", "error_rate < 1%", "throughput > 100/s", "samples >= 1000", "dropped < 1%"]"#),
        key("abort_on_fail", Ty::Bool, "Stop the run as soon as the check fails (checked every second while running).")
            .default("false")
            .examples("[true]"),
        key("delay", Ty::Duration, "With abort_on_fail: start checking while running only after this time.")
            .default("0s")
            .examples(r#"["10s"]"#),
    ],
};

/// One of `outputs:` written as a mapping.
pub static OUTPUT: Object = Object {
    id: "output",
    what: "output",
    doc: "A live output: { influxdb: URL, raw: BOOL }, { prometheus: URL }, or KIND=URL.",
    examples: "",
    keys: &[
        key("influxdb", Ty::Shape(Shape::Url), "InfluxDB 1.x: http://HOST:8086/DATABASE (see docs/outputs.md).")
            .alternative(),
        key(
            "prometheus",
            Ty::Shape(Shape::Url),
            "Prometheus remote write: http://HOST:9090/api/v1/write (see docs/outputs.md).",
        )
        .alternative(),
        key("raw", Ty::Bool, "With influxdb: also one point per sample (JMeter's raw mode).").default("false"),
    ],
};
