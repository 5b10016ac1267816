//! Charts as inline SVG generated here: no script, no style sheet or font to fetch, so a report opens offline
//! and looks the same in any browser. Every chart has a title, axis labels, ticks and a legend.

use std::fmt::Write as _;

/// Colours of series, in order: distinguishable, and readable on white.
pub const PALETTE: [&str; 8] = ["#2563eb", "#ea580c", "#16a34a", "#dc2626", "#9333ea", "#0891b2", "#ca8a04", "#db2777"];

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 68.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 46.0;

/// Text for SVG: minijinja's HTML escaping, the same as the report's templates apply to the rest of the page.
pub fn escape(text: &str) -> String {
    minijinja::HtmlEscape(text).to_string()
}

/// A label made fit for a one-line title: line breaks become spaces, long ones end in an ellipsis.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let flat: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if flat.chars().count() <= max_chars {
        return flat;
    }
    let mut cut: String = flat.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// One line of a line chart, or one set of bars.
#[derive(Debug, Clone)]
pub struct Series<'a> {
    /// The legend's text.
    pub name: &'a str,
    /// A CSS colour.
    pub color: &'a str,
    /// One value per point or bin; `None` leaves a gap.
    pub values: Vec<Option<f64>>,
}

/// Values over time, one point per interval.
#[derive(Debug, Clone)]
pub struct LineChart<'a> {
    /// The chart's title.
    pub title: &'a str,
    /// What the y axis measures, with its unit.
    pub y_label: &'a str,
    /// What the x axis measures: the time since when.
    pub x_label: &'a str,
    /// Interval length, s; point i stands for the interval starting i·interval after the start.
    pub interval_s: f64,
    /// The lines.
    pub series: Vec<Series<'a>>,
}

/// A histogram: bins of equal width, and an overflow bin for what lies beyond.
#[derive(Debug, Clone)]
pub struct BarChart<'a> {
    /// The chart's title.
    pub title: &'a str,
    /// What the y axis measures.
    pub y_label: &'a str,
    /// Lower edge of the first bin, ms.
    pub lo_ms: f64,
    /// Bin width, ms.
    pub bin_ms: f64,
    /// One value per bin; one series is drawn as bars, several as overlaid translucent steps.
    pub series: Vec<Series<'a>>,
    /// Per series, the value of the overflow bin (at or beyond the last bin's end); drawn when not all 0.
    pub overflow: Vec<f64>,
}

/// The plot area and the data ranges it shows.
struct Frame {
    x_min: f64,
    x_max: f64,
    y_max: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x_min) / (self.x_max - self.x_min) * (WIDTH - LEFT - RIGHT)
    }

    fn py(&self, y: f64) -> f64 {
        HEIGHT - BOTTOM - y / self.y_max * (HEIGHT - TOP - BOTTOM)
    }
}

/// A line chart over time.
pub fn line_chart(c: &LineChart<'_>) -> String {
    let points = c.series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let x_max = (points as f64 * c.interval_s).max(c.interval_s);
    let values = || c.series.iter().flat_map(|s| s.values.iter().flatten());
    let y_top = values().fold(0.0_f64, |m, &v| m.max(v));
    let (y_ticks, y_max) = ticks(y_top, values().all(|v| v.fract() == 0.0));
    let frame = Frame { x_min: 0.0, x_max, y_max };
    let mut svg = open(c.title, &c.series);
    y_axis(&mut svg, &frame, &y_ticks, c.y_label);
    let (step, format) = time_step(x_max);
    let mut x = 0.0;
    while x <= x_max + step * 1e-9 {
        x_tick(&mut svg, &frame, x, &format(x));
        x += step;
    }
    x_label(&mut svg, c.x_label);
    let dots = points <= 60;
    for s in &c.series {
        let mut d = String::new();
        let mut pen_down = false;
        for (i, v) in s.values.iter().enumerate() {
            let Some(v) = v else {
                pen_down = false;
                continue;
            };
            let (px, py) = (frame.px((i as f64 + 0.5) * c.interval_s), frame.py(*v));
            let _ = write!(d, "{}{px:.1},{py:.1} ", if pen_down { "L" } else { "M" });
            pen_down = true;
            if dots {
                let _ = write!(
                    svg,
                    r#"<circle cx="{px:.1}" cy="{py:.1}" r="2.5" fill="{}"><title>{}: {}</title></circle>"#,
                    s.color,
                    escape(s.name),
                    number(*v)
                );
            }
        }
        if !d.is_empty() {
            let _ = write!(
                svg,
                r#"<path d="{}" fill="none" stroke="{}" stroke-width="1.6" stroke-linejoin="round"><title>{}</title></path>"#,
                d.trim_end(),
                s.color,
                escape(s.name)
            );
        }
    }
    close(svg)
}

/// A histogram chart.
pub fn bar_chart(c: &BarChart<'_>) -> String {
    let bins = c.series.iter().map(|s| s.values.len()).max().unwrap_or(0).max(1);
    let has_overflow = c.overflow.iter().any(|&v| v > 0.0);
    let end = c.lo_ms + bins as f64 * c.bin_ms;
    // The overflow bin sits half a bin to the right of the last one.
    let x_max = if has_overflow { end + 1.5 * c.bin_ms } else { end };
    let values = c.series.iter().flat_map(|s| s.values.iter().flatten()).chain(&c.overflow);
    let (y_ticks, y_max) = ticks(values.fold(0.0_f64, |m, &v| m.max(v)), false);
    let frame = Frame { x_min: c.lo_ms, x_max, y_max };
    let mut svg = open(c.title, if c.series.len() > 1 { &c.series } else { &[] });
    y_axis(&mut svg, &frame, &y_ticks, c.y_label);
    let (step, _) = nice_step((end - c.lo_ms) / 8.0);
    let mut x = (c.lo_ms / step).ceil() * step;
    while x <= end + step * 1e-9 {
        x_tick(&mut svg, &frame, x, &number(x));
        x += step;
    }
    if has_overflow {
        x_tick(&mut svg, &frame, end + c.bin_ms, &format!("≥{}", number(end)));
    }
    x_label(&mut svg, "response time (ms)");
    let single = c.series.len() == 1;
    for (k, s) in c.series.iter().enumerate() {
        let bar = |svg: &mut String, lo: f64, v: f64, tip: &str| {
            let (x0, x1, y) = (frame.px(lo), frame.px(lo + c.bin_ms), frame.py(v));
            let _ = write!(
                svg,
                r#"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="{}"><title>{}</title></rect>"#,
                (x1 - x0 - if single { 0.6 } else { 0.0 }).max(0.3),
                (frame.py(0.0) - y).max(0.0),
                s.color,
                if single { "0.85" } else { "0.35" },
                escape(tip)
            );
        };
        for (i, v) in s.values.iter().enumerate() {
            let (Some(v), true) = (v, single) else { continue };
            let lo = c.lo_ms + i as f64 * c.bin_ms;
            bar(&mut svg, lo, *v, &format!("{}–{} ms: {}", number(lo), number(lo + c.bin_ms), number(*v)));
        }
        if !single {
            let mut d = format!("M{:.1},{:.1} ", frame.px(c.lo_ms), frame.py(0.0));
            for (i, v) in s.values.iter().enumerate() {
                let y = frame.py(v.unwrap_or(0.0));
                let lo = c.lo_ms + i as f64 * c.bin_ms;
                let _ = write!(d, "L{:.1},{y:.1} L{:.1},{y:.1} ", frame.px(lo), frame.px(lo + c.bin_ms));
            }
            let _ = write!(d, "L{:.1},{:.1} Z", frame.px(end), frame.py(0.0));
            let _ = write!(
                svg,
                r#"<path d="{d}" fill="{0}" fill-opacity="0.25" stroke="{0}" stroke-width="1.4"><title>{1}</title></path>"#,
                s.color,
                escape(s.name)
            );
        }
        if let Some(&v) = c.overflow.get(k).filter(|&&v| v > 0.0) {
            bar(&mut svg, end + 0.5 * c.bin_ms, v, &format!("{}: ≥{} ms: {}", s.name, number(end), number(v)));
        }
    }
    close(svg)
}

/// The start of an SVG: size, title, and a legend when there are several series.
fn open(title: &str, legend: &[Series<'_>]) -> String {
    let mut svg = format!(
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{0}"><title>{0}</title><text x="{LEFT}" y="20" class="title">{0}</text>"#,
        escape(&one_line(title, 70))
    );
    let mut x = WIDTH - RIGHT;
    for s in legend.iter().rev() {
        let name = one_line(s.name, 30);
        x -= name.chars().count() as f64 * 6.6 + 26.0;
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="28" width="10" height="10" fill="{}"/><text x="{:.1}" y="37" class="legend">{}</text>"#,
            s.color,
            x + 14.0,
            escape(&name)
        );
    }
    svg
}

fn close(mut svg: String) -> String {
    svg.push_str("</svg>");
    svg
}

fn y_axis(svg: &mut String, f: &Frame, ticks: &[f64], label: &str) {
    for &t in ticks {
        let y = f.py(t);
        let _ = write!(
            svg,
            r#"<line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" class="tick" text-anchor="end">{}</text>"#,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            number(t)
        );
    }
    let middle = (TOP + HEIGHT - BOTTOM) / 2.0;
    let _ = write!(
        svg,
        r#"<text transform="translate(14 {middle:.1}) rotate(-90)" text-anchor="middle" class="axis">{}</text><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{:.1}" class="axisline"/><line x1="{LEFT}" x2="{2:.1}" y1="{1:.1}" y2="{1:.1}" class="axisline"/>"#,
        escape(label),
        HEIGHT - BOTTOM,
        WIDTH - RIGHT
    );
}

fn x_tick(svg: &mut String, f: &Frame, x: f64, text: &str) {
    let px = f.px(x);
    let y = HEIGHT - BOTTOM;
    let _ = write!(
        svg,
        r#"<line x1="{px:.1}" x2="{px:.1}" y1="{y:.1}" y2="{:.1}" class="axisline"/><text x="{px:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"#,
        y + 4.0,
        y + 16.0,
        escape(text)
    );
}

fn x_label(svg: &mut String, text: &str) {
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="axis">{}</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 8.0,
        escape(text)
    );
}

/// Round ticks from 0 covering `top` (whole numbers only when `integer`), and the axis maximum (the last tick).
fn ticks(top: f64, integer: bool) -> (Vec<f64>, f64) {
    let top = if top > 0.0 && top.is_finite() { top } else { 1.0 };
    let (step, _) = nice_step(top / 5.0);
    let step = if integer { step.max(1.0) } else { step };
    let count = (top / step).ceil().max(1.0) as usize;
    let ticks: Vec<f64> = (0..=count).map(|i| i as f64 * step).collect();
    let max = ticks[count];
    (ticks, max)
}

/// The smallest 1, 2 or 5 × 10^k at least `raw`, and its number of decimals.
fn nice_step(raw: f64) -> (f64, usize) {
    let raw = if raw > 0.0 && raw.is_finite() { raw } else { 1.0 };
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|&s| s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * base);
    (step, if exp < 0.0 { (-exp) as usize } else { 0 })
}

/// A time-axis step (s) giving at most about 8 ticks, and how to write a tick.
fn time_step(x_max: f64) -> (f64, fn(f64) -> String) {
    const STEPS: [f64; 19] = [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
        21600.0, 43200.0,
    ];
    let step = STEPS
        .iter()
        .copied()
        .find(|s| x_max / s <= 8.0)
        .unwrap_or_else(|| nice_step(x_max / 8.0 / 86400.0).0 * 86400.0);
    let format: fn(f64) -> String = if x_max < 60.0 {
        |s| format!("{}s", number(s))
    } else if x_max < 3600.0 {
        |s| {
            let s = s.round() as u64;
            format!("{}:{:02}", s / 60, s % 60)
        }
    } else {
        |s| {
            let s = s.round() as u64;
            format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        }
    };
    (step, format)
}

/// A number as short as it can be without losing what matters: integers plainly, others to 3 significant
/// digits at most (and 2 decimals at most).
pub fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let decimals = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    let text = format!("{v:.decimals$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_numbers() {
        assert_eq!(ticks(93.0, false), (vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0], 100.0));
        assert_eq!(ticks(0.0, false).1, 1.0);
        assert_eq!(ticks(1.0, true), (vec![0.0, 1.0], 1.0));
        assert_eq!(nice_step(0.03), (0.05, 2));
        assert_eq!(
            (number(12.0), number(0.125), number(1234.56), number(2.5)),
            ("12".into(), "0.125".into(), "1234.6".into(), "2.5".into())
        );
        let (step, format) = time_step(125.0);
        assert_eq!((step, format(90.0)), (30.0, "1:30".to_string()));
        assert_eq!(time_step(5.0).1(2.0), "2s");
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;");
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn charts_are_svg_with_titles_and_escaped_text() {
        let line = line_chart(&LineChart {
            title: "Throughput <all>",
            y_label: "requests/s",
            x_label: "time",
            interval_s: 1.0,
            series: vec![Series { name: "ok", color: PALETTE[0], values: vec![Some(1.0), None, Some(3.0)] }],
        });
        assert!(line.starts_with("<svg") && line.ends_with("</svg>"));
        assert!(line.contains("Throughput &lt;all&gt;") && line.contains("requests&#x2f;s"));
        assert_eq!((line.matches("<path").count(), line.matches("<circle").count()), (1, 2));
        let bars = bar_chart(&BarChart {
            title: "t",
            y_label: "samples",
            lo_ms: 0.0,
            bin_ms: 2.0,
            series: vec![Series { name: "a", color: PALETTE[0], values: vec![Some(1.0), Some(2.0)] }],
            overflow: vec![1.0],
        });
        assert_eq!(bars.matches("<rect").count(), 3);
        assert!(bars.contains("≥4"));
    }
}
