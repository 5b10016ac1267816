//! JMeter's `${...}` in strings, made into planrun templates: `${var}` a variable, `${__P(name,default)}` a
//! property (so `-D name=...` overrides it as `-Jname=...` did), `${__Random(1,9)}` `random_int(1, 9)`, and
//! so on. A function or variable with no equivalent is kept as written (sent as its literal text) and noted.

use super::names::{ident, Names};

/// A piece of a JMeter string.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// Text sent as written.
    Lit(String),
    /// `${name}`.
    Var(String),
    /// `${__name(args)}`, with the text as written.
    Func {
        /// `__Random`.
        name: String,
        /// Each argument, itself parsed.
        args: Vec<Vec<Seg>>,
        /// The call as written, `${__Random(1,9)}`.
        raw: String,
    },
}

/// Splits a JMeter string into text, variables and function calls.
pub fn parse(s: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with("${") {
            if let Some((seg, end)) = reference(s, i) {
                if !lit.is_empty() {
                    out.push(Seg::Lit(std::mem::take(&mut lit)));
                }
                out.push(seg);
                i = end;
                continue;
            }
        }
        let c = s[i..].chars().next().unwrap_or('\0');
        lit.push(c);
        i += c.len_utf8().max(1);
    }
    if !lit.is_empty() {
        out.push(Seg::Lit(lit));
    }
    out
}

/// The reference starting at `start` (at `${`) and the index after it; None when it is not one.
fn reference(s: &str, start: usize) -> Option<(Seg, usize)> {
    let body = start + 2;
    let rest = &s[body..];
    if let Some(after) = rest.strip_prefix("__") {
        let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let name = format!("__{}", &after[..name_len]);
        let mut k = body + 2 + name_len;
        let mut args = Vec::new();
        if s[k..].starts_with('(') {
            let (raw_args, end) = split_args(s, k + 1)?;
            args = raw_args.iter().map(|a| parse(a)).collect();
            k = end;
        }
        if !s[k..].starts_with('}') {
            return None;
        }
        return Some((Seg::Func { name, args, raw: s[start..=k].to_string() }, k + 1));
    }
    let end = rest.find('}')?;
    let name = &rest[..end];
    if name.is_empty() || name.contains(['{', '$', '\n']) {
        return None;
    }
    Some((Seg::Var(name.to_string()), body + end + 1))
}

/// A function's arguments from `start` (just after `(`) to the closing `)`: each as written, `\,` read as
/// a comma; and the index after `)`.
fn split_args(s: &str, start: usize) -> Option<(Vec<String>, usize)> {
    let mut args = Vec::new();
    let mut cur = String::new();
    let (mut parens, mut braces) = (0u32, 0u32);
    let mut chars = s[start..].char_indices().peekable();
    while let Some((off, c)) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some(&(_, n)) if ",\\()".contains(n) && braces == 0 => {
                    cur.push(n);
                    chars.next();
                }
                _ => cur.push('\\'),
            },
            '$' if s[start + off..].starts_with("${") => {
                braces += 1;
                cur.push('$');
            }
            '}' if braces > 0 => {
                braces -= 1;
                cur.push('}');
            }
            '(' if braces == 0 => {
                parens += 1;
                cur.push('(');
            }
            ')' if braces == 0 && parens == 0 => {
                args.push(cur);
                return Some((args, start + off + 1));
            }
            ')' if braces == 0 => {
                parens -= 1;
                cur.push(')');
            }
            ',' if braces == 0 && parens == 0 => args.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    None
}

/// A property the converted plan declares: `props.IDENT`, from JMeter's `__P(name, default)`.
#[derive(Debug, Clone)]
pub struct Property {
    /// The name in the plan.
    pub ident: String,
    /// The JMeter name, when it differs.
    pub jmeter: String,
    /// Its value unless `-D` says otherwise.
    pub default: String,
}

/// Where a converted string is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// In a request, rendered for each one: every name may be read.
    Run,
    /// When the plan loads (counts, durations, the host, file names): only properties and functions; a
    /// User Defined Variable is replaced by its value.
    Load,
    /// In `variables`: only the User Defined Variables before it, properties and functions.
    Variables,
}

/// Converts JMeter strings, collecting the properties they read and what could not be converted.
pub struct Fx<'a> {
    /// The plan's variables.
    pub names: &'a Names,
    /// The properties read so far.
    pub props: &'a mut Vec<Property>,
    /// Where the string is used.
    pub when: When,
    /// For [`When::Variables`]: the variables declared before this one.
    pub earlier: &'a [String],
    /// What was kept as written or approximated, in words.
    pub notes: Vec<String>,
    depth: u32,
}

impl<'a> Fx<'a> {
    /// A converter.
    pub fn new(names: &'a Names, props: &'a mut Vec<Property>, when: When) -> Fx<'a> {
        Fx { names, props, when, earlier: &[], notes: Vec::new(), depth: 0 }
    }

    /// `s` as a template: text as written, each reference as `{{ expression }}`.
    pub fn template(&mut self, s: &str) -> String {
        let mut out = String::new();
        for seg in parse(s) {
            if let (When::Load, Seg::Var(name)) = (self.when, &seg) {
                let value = self.names.get(name).and_then(|b| b.udv_value.clone());
                if let (Some(v), true) = (value, self.depth < 16) {
                    // A User Defined Variable read when the plan loads: its value, in place.
                    self.depth += 1;
                    let t = self.template(&v);
                    self.depth -= 1;
                    out.push_str(&t);
                    continue;
                }
            }
            match seg {
                Seg::Lit(t) => out.push_str(&escape_text(&t)),
                other => match self.seg_expr(&other) {
                    Some(e) => {
                        out.push_str("{{ ");
                        out.push_str(&e);
                        out.push_str(" }}");
                    }
                    None => out.push_str(&escape_text(&raw(&other))),
                },
            }
        }
        out
    }

    /// `s` as one template expression (text quoted), for conditions and comparisons.
    pub fn expr(&mut self, s: &str) -> String {
        self.segs_expr(&parse(s))
    }

    fn segs_expr(&mut self, segs: &[Seg]) -> String {
        let parts: Vec<String> = segs
            .iter()
            .map(|seg| match seg {
                Seg::Lit(t) => quote(t),
                other => self.seg_expr(other).unwrap_or_else(|| quote(&raw(other))),
            })
            .collect();
        match parts.len() {
            0 => "''".into(),
            1 => parts.into_iter().next().unwrap_or_default(),
            _ => format!("({})", parts.join(" ~ ")),
        }
    }

    /// The expression for a variable or function; None (with a note) when it has none and is kept as written.
    fn seg_expr(&mut self, seg: &Seg) -> Option<String> {
        match seg {
            Seg::Lit(t) => Some(quote(t)),
            Seg::Var(name) => self.var(name),
            Seg::Func { name, args, raw } => self.func(name, args, raw),
        }
    }

    fn var(&mut self, name: &str) -> Option<String> {
        let Some(b) = self.names.get(name) else {
            self.notes.push(format!("`${{{name}}}` is set nowhere in the plan that planrun converts; kept as written"));
            return None;
        };
        match self.when {
            When::Run => Some(b.expr.clone()),
            When::Variables if self.earlier.contains(&b.expr) => Some(b.expr.clone()),
            When::Variables => {
                self.notes.push(format!(
                    "`${{{name}}}` is not a User Defined Variable declared before this one; kept as written"
                ));
                None
            }
            When::Load => match (&b.udv_value, self.depth < 16) {
                (Some(v), true) => {
                    let v = v.clone();
                    self.depth += 1;
                    let e = self.expr(&v);
                    self.depth -= 1;
                    Some(e)
                }
                _ => {
                    self.notes.push(format!(
                        "`${{{name}}}` is read where planrun needs the value when the plan loads, and it is only \
                         known while running; kept as written"
                    ));
                    None
                }
            },
        }
    }

    /// Registers the property `name` (with `default`, if this is the first to give one) and returns its
    /// expression.
    pub fn property(&mut self, name: &str, default: Option<String>) -> String {
        let name = name.trim();
        let id = match self.props.iter_mut().find(|p| p.jmeter == name) {
            Some(p) => p.ident.clone(),
            None => {
                let mut id = ident(name);
                while self.props.iter().any(|p| p.ident == id) {
                    id.push('_');
                }
                self.props.push(Property {
                    ident: id.clone(),
                    jmeter: name.to_string(),
                    default: default.unwrap_or_else(|| "1".into()),
                });
                id
            }
        };
        format!("props.{id}")
    }

    fn func(&mut self, name: &str, args: &[Vec<Seg>], raw: &str) -> Option<String> {
        let lit = |i: usize| -> Option<String> {
            match args.get(i).map(Vec::as_slice) {
                Some([]) => Some(String::new()),
                Some([Seg::Lit(t)]) => Some(t.clone()),
                _ => None,
            }
        };
        let given = |i: usize| args.get(i).is_some_and(|a| !a.is_empty());
        match name {
            "__P" | "__property" => {
                let Some(prop) = lit(0).filter(|p| !p.trim().is_empty()) else {
                    return self.keep(raw, "the property name is not plain text");
                };
                let default_at = if name == "__P" { 1 } else { 2 };
                if name == "__property" && given(1) {
                    self.notes.push(format!("`{raw}`: the variable it also sets is not set in planrun"));
                }
                let default = match args.get(default_at) {
                    None => None,
                    Some(_) => match lit(default_at) {
                        Some(d) => Some(d),
                        None => {
                            self.notes.push(format!("`{raw}`: a default that is not plain text is not kept"));
                            None
                        }
                    },
                };
                let default = default.or_else(|| (name == "__property").then(String::new));
                Some(self.property(&prop, default))
            }
            "__Random" => {
                if given(2) {
                    self.notes.push(format!("`{raw}`: the variable it also sets is not set in planrun"));
                }
                let (a, b) = (self.int_arg(args.first()), self.int_arg(args.get(1)));
                Some(format!("random_int({a}, {b})"))
            }
            "__RandomString" => {
                if given(2) {
                    self.notes.push(format!("`{raw}`: the variable it also sets is not set in planrun"));
                }
                let n = self.int_arg(args.first());
                match args.get(1) {
                    Some(chars) if !chars.is_empty() => {
                        let c = self.segs_expr(chars);
                        Some(format!("random_string({n}, {c})"))
                    }
                    _ => Some(format!("random_string({n})")),
                }
            }
            "__UUID" => Some("uuid()".into()),
            "__threadNum" if self.when != When::Load => Some("vu".into()),
            "__time" => match lit(0).as_deref() {
                None if given(0) => self.keep(raw, "a format that is not plain text"),
                None | Some("") => Some("now_ms()".into()),
                Some("/1000") => Some("(now_ms() // 1000)".into()),
                Some(f) => match java_date_format(f) {
                    Some(strf) => {
                        self.notes.push(format!(
                            "`{raw}`: planrun's timestamp() is in UTC, JMeter's __time in the local time zone"
                        ));
                        Some(format!("timestamp({})", quote(&strf)))
                    }
                    None => self.keep(raw, "a date format planrun cannot translate"),
                },
            },
            "__counter" => {
                let per_user = lit(0).is_some_and(|t| t.trim().eq_ignore_ascii_case("true"));
                if per_user {
                    self.notes.push(format!("`{raw}`: a per-thread counter becomes the user's iteration number"));
                    Some("iteration".into())
                } else {
                    let cname = lit(1).filter(|n| !n.trim().is_empty()).unwrap_or_else(|| "counter".into());
                    Some(format!("counter({})", quote(cname.trim())))
                }
            }
            "__urlencode" | "__base64Encode" => {
                let Some(arg) = args.first() else { return self.keep(raw, "no argument") };
                if name == "__base64Encode" && given(1) {
                    self.notes.push(format!("`{raw}`: the variable it also sets is not set in planrun"));
                }
                let filter = if name == "__urlencode" { "urlencode" } else { "base64" };
                let e = self.segs_expr(arg);
                Some(format!("({e} | {filter})"))
            }
            _ => self.keep(raw, "planrun has no equivalent of this function"),
        }
    }

    fn keep(&mut self, raw: &str, why: &str) -> Option<String> {
        self.notes.push(format!("`{raw}` kept as written: {why}"));
        None
    }

    /// A whole-number argument: the number when written as one, else the expression made a number.
    fn int_arg(&mut self, arg: Option<&Vec<Seg>>) -> String {
        match arg.map(Vec::as_slice) {
            Some([Seg::Lit(t)]) if t.trim().parse::<i64>().is_ok() => t.trim().to_string(),
            Some(segs) if !segs.is_empty() => format!("({} | int)", self.segs_expr(segs)),
            _ => "0".into(),
        }
    }
}

/// A reference as written.
fn raw(seg: &Seg) -> String {
    match seg {
        Seg::Lit(t) => t.clone(),
        Seg::Var(n) => format!("${{{n}}}"),
        Seg::Func { raw, .. } => raw.clone(),
    }
}

/// Whether `s` holds any `${...}` reference.
pub fn has_refs(s: &str) -> bool {
    parse(s).iter().any(|s| !matches!(s, Seg::Lit(_)))
}

/// Text made safe inside a template: `{{`, `{%` and `{#` would start a tag, so their `{` is written as an
/// expression.
pub fn escape_text(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '{' && matches!(chars.peek(), Some('{' | '%' | '#')) {
            out.push_str("{{ '{' }}");
        } else {
            out.push(c);
        }
    }
    out
}

/// A template string literal.
pub fn quote(t: &str) -> String {
    let mut out = String::from("'");
    for c in t.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A Java SimpleDateFormat pattern as strftime codes; None when it uses a letter with no equivalent.
pub fn java_date_format(f: &str) -> Option<String> {
    let mut out = String::new();
    let chars: Vec<char> = f.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            let end = chars[i + 1..].iter().position(|&d| d == '\'').map(|p| i + 1 + p)?;
            if end == i + 1 {
                out.push('\'');
            }
            out.extend(chars[i + 1..end].iter().copied().filter(|&d| d != '%'));
            i = end + 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            if c == '%' {
                out.push_str("%%");
            } else {
                out.push(c);
            }
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        let code = match (c, run) {
            ('y', 2) => "%y",
            ('y', _) => "%Y",
            ('M', 1 | 2) => "%m",
            ('M', 3) => "%b",
            ('M', _) => "%B",
            ('d', _) => "%d",
            ('H', _) => "%H",
            ('h', _) => "%I",
            ('m', _) => "%M",
            ('s', _) => "%S",
            ('S', 3) => "%3f",
            ('a', _) => "%p",
            ('E', 1..=3) => "%a",
            ('E', _) => "%A",
            ('Z', _) => "%z",
            ('D', _) => "%j",
            _ => return None,
        };
        out.push_str(code);
        i += run;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        let mut n = Names::default();
        n.variable("host");
        n.set_udv_value("host", "${__P(host,example.com)}");
        n.variable("token");
        n
    }

    #[test]
    fn parses_nested_functions() {
        let segs = parse("a${x}b${__P(n,${__Random(1\\,2,3)})}");
        assert_eq!(segs.len(), 4);
        assert_eq!(segs[1], Seg::Var("x".into()));
        let Seg::Func { name, args, .. } = &segs[3] else { panic!("{segs:?}") };
        assert_eq!(name, "__P");
        assert_eq!(args.len(), 2);
    }

    #[test]
    fn templates() {
        let n = names();
        let mut props = Vec::new();
        let mut fx = Fx::new(&n, &mut props, When::Run);
        assert_eq!(fx.template("/a/${token}?t=${__time()}"), "/a/{{ token }}?t={{ now_ms() }}");
        assert_eq!(fx.template("${__Random(1,9)}"), "{{ random_int(1, 9) }}");
        assert_eq!(fx.template("{{x}} {%"), "{{ '{' }}{x}} {{ '{' }}%");
        assert_eq!(fx.template("${nope}"), "${nope}");
        assert_eq!(fx.template("${__javaScript(1+1)}"), "${__javaScript(1+1)}");
        assert_eq!(fx.notes.len(), 2);
        let mut fx = Fx::new(&n, &mut props, When::Load);
        assert_eq!(fx.template("${host}"), "{{ props.host }}");
        assert_eq!(fx.template("${token}"), "${token}");
        assert_eq!(props[0].default, "example.com");
    }

    #[test]
    fn date_formats() {
        assert_eq!(java_date_format("yyyy-MM-dd'T'HH:mm:ss.SSS").as_deref(), Some("%Y-%m-%dT%H:%M:%S.%3f"));
        assert_eq!(java_date_format("q"), None);
    }
}
