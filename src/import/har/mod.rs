//! Browser recordings (HAR 1.2, as Chrome, Firefox and Safari "Save all as HAR") made into a plan: one
//! request step per entry, in order, in a transaction per page; think times from the gaps between entries;
//! static assets and analytics left out unless asked; values a response gave and a later request sent
//! become extractors; credentials, cookies and passwords secret properties.

mod correlate;
mod entries;

use serde_json::Value;

use self::entries::Filters;
use super::convert::{Converted, Options};
use super::error::Warning;
use super::requests::{Origins, Secrets};
use super::yaml::{Item, MapB, Y};
use super::ImportError;

/// What the command line says about a HAR import.
#[derive(Debug, Clone, Default)]
pub struct HarOptions {
    /// Only entries to these hosts (all when empty).
    pub include_hosts: Vec<String>,
    /// Entries whose URL matches one of these regular expressions are left out.
    pub exclude: Vec<String>,
    /// Keep images, fonts, styles, scripts and analytics.
    pub keep_static: bool,
    /// No think steps.
    pub no_think: bool,
}

/// Whether `bytes` read as a HAR: a JSON object with `log.entries`.
pub fn looks_like_har(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('{') && t.contains("\"log\"") && t.contains("\"entries\"")
}

/// The gap from one entry's end to the next one's start that becomes a think step.
const MIN_THINK_MS: i64 = 100;
/// The longest think step: a longer gap is another session, not a user's pause.
const MAX_THINK_MS: i64 = 60_000;

/// Converts the HAR in `text`.
pub fn import(text: &str, options: &Options, har: &HarOptions) -> Result<Converted, ImportError> {
    let text = text.trim_start_matches('\u{feff}');
    let doc: Value = serde_json::from_str(text).map_err(|e| ImportError::Har {
        line: u32::try_from(e.line()).unwrap_or(u32::MAX),
        column: u32::try_from(e.column()).unwrap_or(u32::MAX),
        message: format!("not a HAR file: {e}"),
    })?;
    let filters = Filters::new(har).map_err(|message| ImportError::Har { line: 0, column: 0, message })?;
    let mut warnings: Vec<Warning> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let read = entries::read(&doc, &filters, &mut warnings)?;
    if !read.left_out.is_empty() {
        let counts: Vec<String> = read.left_out.iter().map(|(why, n)| format!("{n} {why}")).collect();
        notes.push(format!(
            "left out: {} (--keep-static keeps static assets and analytics; --include-host and --exclude choose others)",
            counts.join(", ")
        ));
    }
    if read.entries.is_empty() {
        return Err(ImportError::Empty("no entry of the HAR is left to send (see the notes above)".into()));
    }
    let mut entries = read.entries;
    let mut secrets = Secrets::default();
    let extractors = correlate::correlate(&mut entries, &mut notes);
    entries::secrets(&mut entries, &mut secrets);

    let origins = Origins::of(entries.iter().map(|e| e.origin.as_str()));
    let mut items: Vec<Item> = Vec::new();
    let mut page_items: Vec<Item> = Vec::new();
    let mut page: Option<String> = None;
    let mut last_end: Option<i64> = None;
    let flush = |items: &mut Vec<Item>, page_items: &mut Vec<Item>, page: &Option<String>| {
        if page_items.is_empty() {
            return;
        }
        match page {
            Some(title) => {
                let mut t = MapB::default();
                t.put("transaction", Y::s(title.clone()));
                t.put("steps", Y::Seq(std::mem::take(page_items)));
                items.push(Item { value: Some(t.done()), comments: Vec::new() });
            }
            None => items.append(page_items),
        }
    };
    for (i, e) in entries.iter().enumerate() {
        let title = e.page.as_ref().map(|p| read.pages.get(p).cloned().unwrap_or_else(|| p.clone()));
        let new_page = title != page;
        if new_page {
            flush(&mut items, &mut page_items, &page);
            page = title;
        }
        if let (Some(end), Some(start), false) = (last_end, e.started_ms, har.no_think) {
            let mut gap = start - end;
            if gap > MAX_THINK_MS {
                warnings.push(Warning {
                    path: format!("entry {}", e.number),
                    message: format!(
                        "{} s passed since the entry before: more than a pause, the think step waits {} s",
                        gap / 1000,
                        MAX_THINK_MS / 1000
                    ),
                    line: 0,
                });
                gap = MAX_THINK_MS;
            }
            if gap >= MIN_THINK_MS {
                let mut t = MapB::default();
                t.put("think", Y::s(format!("{gap}ms")));
                // The pause before a page is not the page's time.
                let to = if new_page { &mut items } else { &mut page_items };
                to.push(Item { value: Some(t.done()), comments: Vec::new() });
            }
        }
        if let Some(s) = e.started_ms {
            let end = s + e.time_ms.max(0);
            last_end = Some(last_end.map_or(end, |l| l.max(end)));
        }
        page_items.push(entries::step(e, &origins, extractors.get(&i)));
    }
    flush(&mut items, &mut page_items, &page);

    let mut defaults = MapB::default();
    defaults.put("base_url", Y::s("{{ props.base_url }}"));
    defaults.put_commented(
        "follow_redirects",
        Y::Bool(false),
        vec!["The browser's redirects are entries of their own in the recording".into()],
    );
    let name = read.pages.values().next().cloned().unwrap_or_else(|| {
        options.source_name.rsplit_once('.').map(|(s, _)| s.to_string()).unwrap_or(options.source_name.clone())
    });
    let mut header = vec![
        format!("Converted by `planrun import` from {}.", options.source_name),
        "Check it with `planrun validate`; see the requests with `planrun dry-run`.".into(),
    ];
    if let Some(creator) = &read.creator {
        header.push(format!("Recorded by {creator}."));
    }
    header.extend(notes.iter().map(|n| format!("{n}.")));
    let yaml =
        super::requests::plan(header, &name, origins.properties(&secrets, "recording"), defaults, "recording", items);
    Ok(Converted { yaml, warnings, disabled: Vec::new(), listeners: 0, notes })
}
