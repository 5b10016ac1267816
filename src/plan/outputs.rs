//! `outputs:` the live outputs a run streams its figures to (see docs/outputs.md): each item
//! `{ influxdb: URL, raw: true }`, `{ prometheus: URL }`, or the command line's `KIND=URL`. URLs are rendered
//! at load time (`{{ props.influx }}`, `{{ env('INFLUX_URL') }}`).

use super::decode::Ctx;
use super::node::{Node, Value};
use super::vocab;
use crate::diag::Diagnostic;
use crate::plan::output_spec::{OutputKind, OutputSpec};

/// Validates `outputs:`.
pub fn outputs(cx: &mut Ctx, node: &Node) -> Option<Vec<OutputSpec>> {
    let Value::Seq(items) = &node.value else {
        cx.type_error(node, "outputs: a list like [{ influxdb: http://127.0.0.1:8086/planrun }]");
        return None;
    };
    let mut out = Some(Vec::new());
    for item in items {
        match (one(cx, item), out.as_mut()) {
            (Some(spec), Some(all)) => all.push(spec),
            _ => out = None,
        }
    }
    out
}

fn one(cx: &mut Ctx, node: &Node) -> Option<OutputSpec> {
    if !matches!(node.value, Value::Map(_)) {
        let text = cx.load_time_text(node, "output")?;
        return checked(cx, node, OutputSpec::parse(&text));
    }
    let f = cx.object(node, &vocab::OUTPUT)?;
    let names = vocab::OUTPUT.alternatives();
    let kinds: Vec<(OutputKind, &Node)> =
        names.iter().filter_map(|k| Some((OutputKind::named(k)?, f.get(k)?))).collect();
    let [(kind, url_node)] = kinds[..] else {
        cx.error(Diagnostic::new(node.span, "an output names one database").expected(format!(
            "one of {} with its URL, like influxdb: http://127.0.0.1:8086/planrun",
            names.join(", ")
        )));
        return None;
    };
    let raw = match f.get("raw") {
        Some(r) => {
            let raw = cx.boolean(r, "raw")?;
            if raw && kind != OutputKind::Influxdb {
                cx.error(Diagnostic::new(r.span, "raw: one point per sample is InfluxDB's").hint("remove `raw`"));
                return None;
            }
            raw
        }
        None => false,
    };
    let url = cx.load_time_text(url_node, "output URL")?;
    let spec = OutputSpec { kind, url, raw };
    let endpoint = spec.endpoint().map(|_| spec);
    checked(cx, url_node, endpoint)
}

fn checked(
    cx: &mut Ctx,
    node: &Node,
    spec: Result<OutputSpec, crate::plan::output_spec::SpecError>,
) -> Option<OutputSpec> {
    match spec {
        Ok(spec) => Some(spec),
        Err(e) => {
            cx.error(Diagnostic::new(node.span, e.0));
            None
        }
    }
}
