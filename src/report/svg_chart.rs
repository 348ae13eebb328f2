//! Small inline SVG charts for the HTML report (and, later, the desktop app).
//!
//! Drawn here instead of with plotters: plotters lays out text through font-kit, which needs
//! fontconfig and system fonts at build and run time, while these charts are a few rectangles,
//! lines and labels whose text the browser lays out itself. Every label is XML-escaped: run
//! names and metric names come from users.

use std::fmt::Write;

/// One row of an interval chart: a point with a 95% interval.
#[derive(Debug, Clone)]
pub struct IntervalRow {
    pub label: String,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

const WIDTH: f64 = 640.0;
const LABEL_WIDTH: f64 = 200.0;
const ROW_HEIGHT: f64 = 22.0;
const AXIS_HEIGHT: f64 = 24.0;
const PALETTE: &[&str] = &["#3b6ea8", "#c2582b", "#3f8f4f", "#8a4fa8", "#a88a2b", "#2b9aa8"];

pub fn color(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// Points with error bars on a shared horizontal axis from `min` to `max`; a dashed line at
/// `reference` (0 for differences) when it lies inside.
pub fn interval_chart(title: &str, rows: &[IntervalRow], min: f64, max: f64, reference: Option<f64>) -> String {
    let plot_width = WIDTH - LABEL_WIDTH - 20.0;
    let height = AXIS_HEIGHT + ROW_HEIGHT * rows.len() as f64 + 10.0;
    let x = |v: f64| LABEL_WIDTH + (v.clamp(min, max) - min) / (max - min).max(1e-12) * plot_width;
    let mut svg = open_svg(title, height);
    axis(&mut svg, min, max, &x, height);
    if let Some(r) = reference.filter(|r| *r >= min && *r <= max) {
        let _ = write!(
            svg,
            r#"<line x1="{0:.1}" y1="4" x2="{0:.1}" y2="{1:.1}" class="ref"/>"#,
            x(r),
            height - AXIS_HEIGHT
        );
    }
    for (i, row) in rows.iter().enumerate() {
        let y = 10.0 + ROW_HEIGHT * i as f64 + ROW_HEIGHT / 2.0;
        let c = color(i);
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" class="label">{}</text>"#,
            LABEL_WIDTH - 8.0,
            y + 4.0,
            escape(&row.label)
        );
        if !(row.value.is_finite() && row.low.is_finite() && row.high.is_finite()) {
            continue;
        }
        let _ = write!(
            svg,
            r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="2"/><line x1="{0:.1}" y1="{:.1}" x2="{0:.1}" y2="{:.1}" stroke="{c}" stroke-width="2"/><line x1="{1:.1}" y1="{2:.1}" x2="{1:.1}" y2="{3:.1}" stroke="{c}" stroke-width="2"/><circle cx="{:.1}" cy="{y:.1}" r="4" fill="{c}"><title>{}: {:.3} [{:.3}, {:.3}]</title></circle>"#,
            x(row.low),
            x(row.high),
            y - 5.0,
            y + 5.0,
            x(row.value),
            escape(&row.label),
            row.value,
            row.low,
            row.high
        );
    }
    close_svg(&mut svg);
    svg
}

/// Histograms of scores in [0, 1] (five bins), one group of bars per bin, one bar per series.
pub fn histogram_chart(title: &str, series: &[(String, Vec<f64>)]) -> String {
    const BINS: usize = 5;
    let height = 150.0;
    let plot_height = height - AXIS_HEIGHT - 24.0;
    let plot_left = 40.0;
    let plot_width = WIDTH - plot_left - 20.0;
    let counts: Vec<[usize; BINS]> = series
        .iter()
        .map(|(_, values)| {
            let mut bins = [0usize; BINS];
            for v in values.iter().filter(|v| v.is_finite()) {
                let bin = ((v.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1);
                bins[bin] += 1;
            }
            bins
        })
        .collect();
    // Share of each run's items, so runs of different sizes compare.
    let shares: Vec<Vec<f64>> = counts
        .iter()
        .zip(series)
        .map(|(bins, (_, values))| {
            let total = values.len().max(1) as f64;
            bins.iter().map(|c| *c as f64 / total).collect()
        })
        .collect();
    let group_width = plot_width / BINS as f64;
    let bar_width = (group_width - 8.0) / series.len().max(1) as f64;
    let mut svg = open_svg(title, height);
    for bin in 0..BINS {
        let gx = plot_left + group_width * bin as f64;
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" class="tick">{:.1}–{:.1}</text>"#,
            gx + group_width / 2.0,
            height - 26.0,
            bin as f64 / BINS as f64,
            (bin + 1) as f64 / BINS as f64
        );
        for (s, share) in shares.iter().enumerate() {
            let h = share[bin] * plot_height;
            let _ = write!(
                svg,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} items ({:.0}%)</title></rect>"#,
                gx + 4.0 + bar_width * s as f64,
                10.0 + plot_height - h,
                (bar_width - 1.0).max(1.0),
                h,
                color(s),
                escape(&series[s].0),
                counts[s][bin],
                share[bin] * 100.0
            );
        }
    }
    let _ = write!(
        svg,
        r#"<line x1="{plot_left}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" class="axis"/>"#,
        10.0 + plot_height,
        plot_left + plot_width
    );
    let mut legend_x = plot_left;
    for (s, (name, _)) in series.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<rect x="{legend_x:.1}" y="{:.1}" width="10" height="10" fill="{}"/><text x="{:.1}" y="{:.1}" class="legend">{}</text>"#,
            height - 14.0,
            color(s),
            legend_x + 14.0,
            height - 5.0,
            escape(name)
        );
        legend_x += 24.0 + 7.0 * name.chars().count().min(40) as f64;
    }
    close_svg(&mut svg);
    svg
}

/// Height of the visible title line above a chart's content.
const TITLE_HEIGHT: f64 = 20.0;

/// The opening of a chart: its title shown above the content (a printed report has no
/// tooltips), and a group that moves the content below it; `close_svg` ends both.
fn open_svg(title: &str, height: f64) -> String {
    let total = height + TITLE_HEIGHT;
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {total:.0}" width="{WIDTH}" height="{total:.0}" role="img" aria-label="{0}"><title>{0}</title><text x="0" y="14" class="title">{0}</text><g transform="translate(0 {TITLE_HEIGHT})">"#,
        escape(title)
    )
}

fn close_svg(svg: &mut String) {
    svg.push_str("</g></svg>");
}

fn axis(svg: &mut String, min: f64, max: f64, x: &dyn Fn(f64) -> f64, height: f64) {
    let y = height - AXIS_HEIGHT + 4.0;
    let _ = write!(
        svg,
        r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" class="axis"/>"#,
        x(min),
        x(max)
    );
    for i in 0..=4 {
        let v = min + (max - min) * i as f64 / 4.0;
        let _ = write!(
            svg,
            r#"<line x1="{0:.1}" y1="{y:.1}" x2="{0:.1}" y2="{1:.1}" class="axis"/><text x="{0:.1}" y="{2:.1}" class="tick">{3:.2}</text>"#,
            x(v),
            y + 4.0,
            y + 16.0,
            v
        );
    }
}

/// XML text and attribute escaping.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Not allowed in XML 1.0 at all.
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{fffd}'),
            '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped() {
        let svg = interval_chart(
            "<b>",
            &[IntervalRow { label: "<script>alert(1)</script>".into(), value: 0.5, low: 0.4, high: 0.6 }],
            0.0,
            1.0,
            None,
        );
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
        let hist = histogram_chart("t", &[("a\"b".into(), vec![0.0, 0.5, 1.0])]);
        assert!(hist.contains("a&quot;b"));
    }
}
