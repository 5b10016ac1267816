//! A sample's detail (see [`Detail`]): JMeter 5's sub-results of a followed redirect, the `--http-debug`
//! text, a failed response's body. Made only when the run asks for one of them.

use std::sync::Arc;
use std::time::Duration;

use super::debug_text;
use super::options::{RunOptions, KEPT_BODY_LIMIT};
use crate::http::content_coding::Decoded;
use crate::http::{Hop, Recorded, Response};
use crate::mask::{masked_prefix, Masks};
use crate::sample::{Detail, KeptBody, Outcome, Sample};

/// The detail of a finished (masked) sample, what its exchange `recorded`, and its last response, when the
/// exchange ended with one (`last`, with its body decoded when a check read it); `show` when `--http-debug`
/// shows it whatever its outcome; `late` is
/// how late the sample started (open model); `rows` the data rows its iteration took (each set's name and
/// the row's number). `None` when there is nothing to add. Failed samples past `--http-debug-max` or
/// `--failed-bodies-max` are counted, not shown or kept.
#[cold]
#[allow(clippy::too_many_arguments)]
pub(super) fn detail(
    options: &RunOptions,
    show: bool,
    sample: &Sample,
    recorded: &Recorded,
    (last, decoded): (Option<&Response>, Option<&Decoded>),
    late: Duration,
    masks: &Masks,
    rows: Vec<(Arc<str>, u64)>,
) -> Option<Box<Detail>> {
    let (hops, mut size) = (&recorded.hops, recorded.body_size);
    let mut d = Detail::default();
    // The views show the body as the server meant it, decoded from its Content-Encoding: decoded here only
    // when one of them may show it (a passing sample's body is not decoded for views that skip it).
    let debugged = options.http_debug.as_ref().is_some_and(|debug| debug.full && (show || !sample.success));
    let kept = options.failed_bodies && !sample.success && !options.bodies_cap.full();
    let shown = last.filter(|_| debugged || kept || decoded.is_some()).map(|resp| {
        let (shown, shown_size, whole) = super::coding::shown(resp, decoded, size);
        size = shown_size;
        d.decoded_bytes = whole;
        shown
    });
    let last = shown.as_deref().or(last);
    if options.sub_results && hops.len() > 1 {
        d.sub_results = sub_results(sample, hops, late, masks);
    }
    if let Some(debug) = &options.http_debug {
        if show || (debug.failed && !sample.success && debug.cap.claim()) {
            d.debug = Some(debug_text::render(sample, hops, (last, size), &rows, debug.full, masks));
        }
    }
    if options.failed_bodies && !sample.success {
        if let Some(resp) = last.filter(|_| options.bodies_cap.claim()) {
            let bytes = resp.body.as_deref().unwrap_or_default();
            let (prefix, _) = masked_prefix(bytes, size, KEPT_BODY_LIMIT, masks);
            d.body = Some(KeptBody { bytes: prefix.into(), size });
        }
    }
    if d.debug.is_some() || d.body.is_some() {
        d.rows = rows;
    }
    let any = !d.sub_results.is_empty() || d.debug.is_some() || d.body.is_some() || d.decoded_bytes.is_some();
    any.then(|| Box::new(d))
}

/// JMeter 5's sub-results: one sample per request, labelled `<label>-<n>` from 0, each with its own times,
/// bytes, URL and response; success by the status alone (2xx and 3xx), as JMeter judges a sub-result
/// (assertions apply to the parent).
fn sub_results(parent: &Sample, hops: &[Hop], late: Duration, masks: &Masks) -> Vec<Sample> {
    hops.iter()
        .enumerate()
        .map(|(i, hop)| {
            // The first request's times count from the sample's intended start, as the parent's do.
            let (offset, elapsed, latency) = if i == 0 {
                (Duration::ZERO, hop.elapsed + late, hop.latency + late)
            } else {
                (hop.offset + late, hop.elapsed, hop.latency)
            };
            let (outcome, data_type) = match &hop.response {
                Some(r) => (Outcome::Response { status: r.status, reason: r.reason.clone() }, r.data_type),
                None => (parent.outcome.clone(), parent.data_type),
            };
            let success = matches!(outcome, Outcome::Response { status: 200..=399, .. });
            let mut sub = Sample {
                start_ms: parent.start_ms + offset.as_millis() as u64,
                elapsed_us: elapsed.as_micros() as u64,
                latency_us: latency.as_micros() as u64,
                connect_us: hop.connect.as_micros() as u64,
                idle_us: 0,
                label: Arc::from(format!("{}-{i}", parent.label)),
                outcome,
                thread: parent.thread.clone(),
                data_type,
                success,
                failure: None,
                bytes: hop.bytes,
                sent_bytes: hop.sent,
                grp_threads: parent.grp_threads,
                all_threads: parent.all_threads,
                url: Some(hop.url.as_str().into()),
                protocol: parent.protocol,
                detail: None,
            };
            masks.apply_to(&mut sub);
            sub
        })
        .collect()
}
