//! The JMeter element tree, as read from a .jmx: each test element with its properties and the elements of
//! the `hashTree` that follows it.

/// One property value.
#[derive(Debug, Clone)]
pub enum Prop {
    /// `stringProp`, `boolProp`, `intProp`, `longProp`, `doubleProp`, `floatProp`, and the value of the
    /// `<name>`/`<value>` forms.
    Text(String),
    /// `elementProp`: a nested element (an `Argument`, a `Header`, `HTTPsampler.Arguments`...).
    Element(Props),
    /// `collectionProp`: a list.
    List(Vec<Prop>),
}

/// A list of named properties, in document order.
#[derive(Debug, Clone, Default)]
pub struct Props(pub Vec<(String, Prop)>);

impl Props {
    /// The property named `name`.
    pub fn get(&self, name: &str) -> Option<&Prop> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, p)| p)
    }

    /// The text of `name`; empty when absent or not text.
    pub fn text(&self, name: &str) -> &str {
        match self.get(name) {
            Some(Prop::Text(t)) => t,
            _ => "",
        }
    }

    /// The text of `name`, trimmed; None when absent or blank.
    pub fn opt(&self, name: &str) -> Option<&str> {
        Some(self.text(name).trim()).filter(|t| !t.is_empty())
    }

    /// `name` read as JMeter reads a boolean: `true` in any case; `default` when absent.
    pub fn flag(&self, name: &str, default: bool) -> bool {
        match self.get(name) {
            Some(Prop::Text(t)) => t.trim().eq_ignore_ascii_case("true"),
            _ => default,
        }
    }

    /// The nested element `name`.
    pub fn element(&self, name: &str) -> Option<&Props> {
        match self.get(name) {
            Some(Prop::Element(p)) => Some(p),
            _ => None,
        }
    }

    /// The items of the list `name` that are elements (an empty slice when absent).
    pub fn elements(&self, name: &str) -> Vec<&Props> {
        match self.get(name) {
            Some(Prop::List(items)) => items
                .iter()
                .filter_map(|i| match i {
                    Prop::Element(p) => Some(p),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The items of the list `name` that are text.
    pub fn texts(&self, name: &str) -> Vec<&str> {
        match self.get(name) {
            Some(Prop::List(items)) => items
                .iter()
                .filter_map(|i| match i {
                    Prop::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A test element and the elements under it.
#[derive(Debug, Clone)]
pub struct Element {
    /// The element's class: `testclass`, else the XML tag (`HTTPSamplerProxy`, `kg.apc.jmeter.threads.SteppingThreadGroup`).
    pub class: String,
    /// The name given in JMeter (`testname`).
    pub name: String,
    /// `enabled="false"` makes this false.
    pub enabled: bool,
    /// Its properties.
    pub props: Props,
    /// The elements of its hashTree, in order.
    pub children: Vec<Element>,
    /// Line of the element in the .jmx (from 1).
    pub line: u32,
}

impl Element {
    /// The last part of the class name (`SteppingThreadGroup` for `kg.apc.jmeter.threads.SteppingThreadGroup`).
    pub fn short_class(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }

    /// How many elements this one is, with every element below it.
    pub fn count(&self) -> usize {
        1 + self.children.iter().map(Element::count).sum::<usize>()
    }
}
