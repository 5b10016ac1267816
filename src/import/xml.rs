//! Reads a .jmx into the element tree ([`super::tree`]) with roxmltree: a document type declaration is
//! refused outright, so no entity (internal or external) is ever expanded or fetched.

use roxmltree::{Document, Node, ParsingOptions};

use super::error::ImportError;
use super::tree::{Element, Prop, Props};

/// The deepest element nesting read; deeper is refused (each level costs a stack frame when converting).
pub const MAX_DEPTH: usize = 200;

/// What the reader found: the root element (the Test Plan, its hashTree as children) and the JMeter
/// version that saved it.
pub struct Read {
    /// The `TestPlan` element; the rest of the plan is its children.
    pub plan: Element,
    /// `jmeter="5.4.1"`, when given.
    pub version: Option<String>,
    /// The elements JMeter 2.x and 3.x save beside the Test Plan (the WorkBench), which never run: their
    /// names and how many elements each holds, itself included.
    pub beside: Vec<(String, usize)>,
}

/// Parses `bytes` as a JMeter plan.
pub fn read(bytes: &[u8]) -> Result<Read, ImportError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = position(&bytes[..e.valid_up_to()]);
        ImportError::NotUtf8 { line, column }
    })?;
    let options = ParsingOptions { allow_dtd: false, ..ParsingOptions::default() };
    let doc = Document::parse_with_options(text, options).map_err(|e| {
        let pos = e.pos();
        match e {
            roxmltree::Error::DtdDetected => {
                let at = text.find("<!DOCTYPE").unwrap_or(0);
                let (line, column) = position(&bytes[..at]);
                ImportError::Dtd { line, column }
            }
            roxmltree::Error::UnclosedRootNode | roxmltree::Error::UnexpectedEndOfStream => {
                let (line, column) = position(bytes);
                ImportError::Xml {
                    line,
                    column,
                    message: "the file ends before the plan is closed (is it cut short?)".into(),
                }
            }
            other => ImportError::Xml { line: pos.row, column: pos.col, message: other.to_string() },
        }
    })?;
    let root = doc.root_element();
    let at = |n: Node| {
        let p = doc.text_pos_at(n.range().start);
        (p.row, p.col)
    };
    if root.tag_name().name() != "jmeterTestPlan" {
        let (line, column) = at(root);
        return Err(ImportError::NotJmeter {
            line,
            column,
            found: format!("the root element is <{}>, not <jmeterTestPlan>", root.tag_name().name()),
        });
    }
    let version = root.attribute("jmeter").map(str::to_string);
    if let Some(v) = &version {
        let major = v.trim().split(['.', ' ', '-']).next().and_then(|m| m.parse::<u32>().ok());
        if !matches!(major, Some(2..=5)) {
            let (line, column) = at(root);
            return Err(ImportError::UnknownVersion { line, column, version: v.clone() });
        }
    }
    let Some(tree) = root.children().find(|n| n.is_element()) else {
        let (line, column) = at(root);
        return Err(ImportError::NotJmeter { line, column, found: "<jmeterTestPlan> is empty".into() });
    };
    let lines = Lines(text.match_indices('\n').map(|(i, _)| i).collect());
    let mut elements = hash_tree(&doc, &lines, tree, 0)?;
    // JMeter 2.x and 3.x save a <WorkBench> beside the <TestPlan>: scratch elements that never run.
    let plans = elements.iter().filter(|e| e.class == "TestPlan").count();
    let others_run = elements.iter().any(|e| e.class != "TestPlan" && e.class != "WorkBench");
    let at_plan = elements.iter().position(|e| e.class == "TestPlan");
    let (Some(at_plan), 1, false) = (at_plan, plans, others_run) else {
        let (line, column) = at(tree);
        return Err(ImportError::NotJmeter {
            line,
            column,
            found: "the plan's top <hashTree> does not hold exactly one <TestPlan> (and at most a <WorkBench>)".into(),
        });
    };
    let plan = elements.remove(at_plan);
    let beside = elements.iter().map(|e| (e.name.clone(), e.count())).collect();
    Ok(Read { plan, version, beside })
}

/// Line and column (from 1) just after `bytes`.
fn position(bytes: &[u8]) -> (u32, u32) {
    let line = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = bytes.len() - bytes.iter().rposition(|&b| b == b'\n').map(|i| i + 1).unwrap_or(0) + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// The elements of a `<hashTree>`: each test element, followed by the hashTree of its children.
/// The offsets of the line ends, to find an element's line without reading the text from its start.
struct Lines(Vec<usize>);

impl Lines {
    fn of(&self, offset: usize) -> u32 {
        u32::try_from(self.0.partition_point(|&nl| nl < offset) + 1).unwrap_or(u32::MAX)
    }
}

fn hash_tree(doc: &Document, lines: &Lines, tree: Node, depth: usize) -> Result<Vec<Element>, ImportError> {
    let line_of = |n: Node| lines.of(n.range().start);
    if tree.tag_name().name() != "hashTree" {
        let p = doc.text_pos_at(tree.range().start);
        return Err(ImportError::NotJmeter {
            line: p.row,
            column: p.col,
            found: format!("<{}> where a <hashTree> was expected", tree.tag_name().name()),
        });
    }
    if depth > MAX_DEPTH {
        let p = doc.text_pos_at(tree.range().start);
        return Err(ImportError::TooDeep { line: p.row, column: p.col, max: MAX_DEPTH });
    }
    let mut out: Vec<Element> = Vec::new();
    for node in tree.children().filter(|n| n.is_element()) {
        if node.tag_name().name() == "hashTree" {
            match out.last_mut() {
                Some(last) if last.children.is_empty() => last.children = hash_tree(doc, lines, node, depth + 1)?,
                _ => {
                    let p = doc.text_pos_at(node.range().start);
                    return Err(ImportError::NotJmeter {
                        line: p.row,
                        column: p.col,
                        found: "a <hashTree> that follows no test element".into(),
                    });
                }
            }
            continue;
        }
        let class = node.attribute("testclass").unwrap_or(node.tag_name().name()).to_string();
        out.push(Element {
            class,
            name: node.attribute("testname").unwrap_or("").to_string(),
            enabled: node.attribute("enabled").is_none_or(|e| !e.eq_ignore_ascii_case("false")),
            props: props(node, 0),
            children: Vec::new(),
            line: line_of(node),
        });
    }
    Ok(out)
}

/// The properties written inside an element (or an `elementProp`).
fn props(node: Node, depth: usize) -> Props {
    let mut out = Vec::new();
    for child in node.children().filter(|n| n.is_element()) {
        if let Some((name, prop)) = prop(child, depth) {
            out.push((name, prop));
        }
    }
    Props(out)
}

fn prop(node: Node, depth: usize) -> Option<(String, Prop)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let tag = node.tag_name().name();
    let name = node.attribute("name").unwrap_or("").to_string();
    let value = match tag {
        "elementProp" => Prop::Element(props(node, depth + 1)),
        "collectionProp" => Prop::List(
            node.children().filter(|n| n.is_element()).filter_map(|c| prop(c, depth + 1)).map(|(_, p)| p).collect(),
        ),
        t if t.ends_with("Prop") && t != "objProp" && t != "mapProp" => {
            Prop::Text(node.text().unwrap_or("").to_string())
        }
        // `<objProp>`, `<FloatProperty>` and kin: `<name>` and `<value>` children.
        _ => {
            let child = |n: &str| node.children().find(|c| c.tag_name().name() == n);
            let name = child("name")?.text().unwrap_or("").to_string();
            let value = child("value")?;
            if value.children().any(|c| c.is_element()) {
                return None;
            }
            return Some((name, Prop::Text(value.text().unwrap_or("").to_string())));
        }
    };
    Some((name, value))
}
