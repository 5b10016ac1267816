//! What each JMeter element class is to the converter, and its name as JMeter's GUI shows it.

use crate::import::tree::Element;

/// Which list a thread group goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `setUp Thread Group`.
    Setup,
    /// `Thread Group` (and plugin thread groups).
    Main,
    /// `tearDown Thread Group`.
    Teardown,
}

/// An element's role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    ThreadGroup(Phase),
    Http,
    Controller,
    TestAction,
    Header,
    Defaults,
    Cookies,
    Csv,
    Variables,
    Counter,
    Timer,
    Assertion,
    Extractor,
    Listener,
    /// Not converted, and why.
    Other(String),
}

/// The role of `el`.
pub fn kind(el: &Element) -> Kind {
    let class = el.class.as_str();
    match el.short_class() {
        "ThreadGroup" => Kind::ThreadGroup(Phase::Main),
        "SetupThreadGroup" => Kind::ThreadGroup(Phase::Setup),
        "PostThreadGroup" => Kind::ThreadGroup(Phase::Teardown),
        c if c.ends_with("ThreadGroup") || c == "ArrivalsThreadGroup" => Kind::ThreadGroup(Phase::Main),
        "HTTPSamplerProxy" | "HTTPSampler" | "HTTPSampler2" => Kind::Http,
        "GenericController"
        | "LoopController"
        | "TransactionController"
        | "IfController"
        | "WhileController"
        | "ForeachController"
        | "OnceOnlyController"
        | "RandomController"
        | "RandomOrderController"
        | "InterleaveControl"
        | "ThroughputController"
        | "SwitchController"
        | "RunTime"
        | "CriticalSectionController"
        | "ModuleController"
        | "IncludeController"
        | "RecordingController" => Kind::Controller,
        "TestAction" => Kind::TestAction,
        "HeaderManager" => Kind::Header,
        "ConfigTestElement"
            if el.props.get("HTTPSampler.domain").is_some() || el.props.get("HTTPsampler.Arguments").is_some() =>
        {
            Kind::Defaults
        }
        "CookieManager" => Kind::Cookies,
        "CSVDataSet" => Kind::Csv,
        "Arguments" => Kind::Variables,
        "CounterConfig" => Kind::Counter,
        "ConstantTimer" | "UniformRandomTimer" | "GaussianRandomTimer" => Kind::Timer,
        "ResponseAssertion" | "DurationAssertion" | "SizeAssertion" | "JSONPathAssertion" => Kind::Assertion,
        "RegexExtractor" | "JSONPostProcessor" | "BoundaryExtractor" => Kind::Extractor,
        "JSONPathExtractor" if class.starts_with("com.atlantbh") => Kind::Extractor,
        "ResultCollector" | "BackendListener" | "Summariser" | "ResultSaver" | "JSR223Listener"
        | "BeanShellListener" => Kind::Listener,
        c if c.ends_with("Visualizer") || c.ends_with("Listener") || c.ends_with("Collector") => Kind::Listener,
        c => Kind::Other(why_not(c)),
    }
}

fn why_not(c: &str) -> String {
    let what = if c.contains("JSR223") || c.contains("BeanShell") || c.contains("BSF") {
        "scripts are not converted; write what it does as templates, extractors or `expr` assertions"
    } else if c.ends_with("Sampler") || c.ends_with("SamplerProxy") {
        "only HTTP samplers are converted; this sampler is dropped"
    } else if c.ends_with("Timer") {
        "only constant, uniform and Gaussian timers are converted"
    } else if c.ends_with("Assertion") {
        "this assertion has no planrun equivalent; not converted"
    } else if c.ends_with("Extractor") || c.ends_with("PostProcessor") {
        "this extractor has no planrun equivalent; not converted"
    } else if c.ends_with("PreProcessor") || c == "UserParameters" {
        "pre-processors are not converted"
    } else if c == "CacheManager" {
        "planrun keeps no HTTP cache: every request is sent"
    } else if c == "AuthManager" {
        "not converted: send the Authorization header with a header manager instead"
    } else if c == "DNSCacheManager" || c == "KeystoreConfig" || c == "LoginConfig" {
        "this configuration element has no planrun equivalent; not converted"
    } else {
        "planrun has no equivalent of this element; not converted"
    };
    what.to_string()
}

/// `HTTP Request "Login"`: the element's kind as JMeter names it, and its name.
pub fn label(el: &Element) -> String {
    let gui = match el.short_class() {
        "TestPlan" => "Test Plan",
        "ThreadGroup" => "Thread Group",
        "SetupThreadGroup" => "setUp Thread Group",
        "PostThreadGroup" => "tearDown Thread Group",
        "HTTPSamplerProxy" | "HTTPSampler" | "HTTPSampler2" => "HTTP Request",
        "ConfigTestElement" => "HTTP Request Defaults",
        "HeaderManager" => "HTTP Header Manager",
        "CookieManager" => "HTTP Cookie Manager",
        "CacheManager" => "HTTP Cache Manager",
        "CSVDataSet" => "CSV Data Set Config",
        "Arguments" => "User Defined Variables",
        "GenericController" => "Simple Controller",
        "LoopController" => "Loop Controller",
        "TransactionController" => "Transaction Controller",
        "IfController" => "If Controller",
        "WhileController" => "While Controller",
        "ForeachController" => "ForEach Controller",
        "OnceOnlyController" => "Once Only Controller",
        "RandomController" => "Random Controller",
        "ThroughputController" => "Throughput Controller",
        "ResponseAssertion" => "Response Assertion",
        "ConstantTimer" => "Constant Timer",
        "UniformRandomTimer" => "Uniform Random Timer",
        "GaussianRandomTimer" => "Gaussian Random Timer",
        "DurationAssertion" => "Duration Assertion",
        "SizeAssertion" => "Size Assertion",
        "JSONPathAssertion" => "JSON Assertion",
        "BoundaryExtractor" => "Boundary Extractor",
        "DebugSampler" => "Debug Sampler",
        "RegexExtractor" => "Regular Expression Extractor",
        "JSONPostProcessor" => "JSON Extractor",
        "JSR223PostProcessor" => "JSR223 PostProcessor",
        "JSR223PreProcessor" => "JSR223 PreProcessor",
        "JSR223Sampler" => "JSR223 Sampler",
        "TestAction" => "Flow Control Action",
        "ResultCollector" => "Listener",
        c => c,
    };
    if el.name.trim().is_empty() || el.name == gui {
        gui.to_string()
    } else {
        format!("{gui} \"{}\"", el.name)
    }
}
