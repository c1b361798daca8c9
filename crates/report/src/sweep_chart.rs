//! The parameter-sweep chart: P(violation) per invariant against a swept parameter, with 95%
//! confidence intervals as error bars. Plain data in, an SVG document out.
//!
//! Written as SVG text directly rather than through plotters: the chart is a handful of lines,
//! points and labels, and writing it by hand needs no font file (plotters measures text with a
//! registered font) and gives byte-identical output on every machine.

use std::fmt::Write;

/// One point of a series: the violation rate at one parameter value and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePoint {
    /// Violation rate, 0..=1.
    pub rate: f64,
    /// Lower end of the 95% interval.
    pub lo: f64,
    /// Upper end of the 95% interval.
    pub hi: f64,
}

/// One invariant's rates, one point per parameter value.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSeries {
    /// Invariant name (the legend).
    pub name: String,
    /// Points, in the order of the values.
    pub points: Vec<RatePoint>,
}

const W: f64 = 760.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 210.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 70.0;
const COLORS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart as an SVG document. `values` label the x axis (evenly spaced, in the order
/// swept: values may be numbers or durations); each series has one point per value.
pub fn sweep_chart_svg(
    title: &str,
    parameter: &str,
    values: &[String],
    series: &[RateSeries],
) -> String {
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let n = values.len().max(1);
    let x_of = |i: usize, s: usize| {
        let slot = plot_w / n as f64;
        // Series side by side within a slot so error bars do not hide each other.
        let spread = (slot * 0.3).min(24.0);
        let off = if series.len() > 1 {
            spread * (s as f64 / (series.len() - 1) as f64 - 0.5)
        } else {
            0.0
        };
        LEFT + slot * (i as f64 + 0.5) + off
    };
    let y_of = |p: f64| TOP + plot_h * (1.0 - p.clamp(0.0, 1.0));

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="28" text-anchor="middle" font-size="16">{}</text>"#,
        LEFT + plot_w / 2.0,
        esc(title)
    );
    // Y grid and labels.
    for k in 0..=4 {
        let p = k as f64 / 4.0;
        let y = y_of(p);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/>"##,
            LEFT + plot_w
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}%</text>"#,
            LEFT - 8.0,
            y + 4.0,
            k * 25
        );
    }
    // Axes.
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT:.1}" y1="{TOP:.1}" x2="{LEFT:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + plot_h
    );
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h
    );
    for (i, v) in values.iter().enumerate() {
        let x = LEFT + plot_w / n as f64 * (i as f64 + 0.5);
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="black"/>"#,
            TOP + plot_h,
            TOP + plot_h + 5.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            TOP + plot_h + 20.0,
            esc(v)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        H - 20.0,
        esc(parameter)
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">P(violation), 95% CI</text>"#,
        TOP + plot_h / 2.0
    );
    // Series.
    for (s, ser) in series.iter().enumerate() {
        let color = COLORS[s % COLORS.len()];
        let pts: Vec<String> = ser
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{:.1},{:.1}", x_of(i, s), y_of(p.rate)))
            .collect();
        if pts.len() > 1 {
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
                pts.join(" ")
            );
        }
        for (i, p) in ser.points.iter().enumerate() {
            let x = x_of(i, s);
            let (y, ylo, yhi) = (y_of(p.rate), y_of(p.lo), y_of(p.hi));
            let _ = writeln!(
                out,
                r#"<line x1="{x:.1}" y1="{ylo:.1}" x2="{x:.1}" y2="{yhi:.1}" stroke="{color}"/>"#
            );
            for yc in [ylo, yhi] {
                let _ = writeln!(
                    out,
                    r#"<line x1="{:.1}" y1="{yc:.1}" x2="{:.1}" y2="{yc:.1}" stroke="{color}"/>"#,
                    x - 4.0,
                    x + 4.0
                );
            }
            let _ = writeln!(
                out,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{color}"><title>{}: {:.2}% [{:.2}%, {:.2}%]</title></circle>"#,
                esc(&ser.name),
                p.rate * 100.0,
                p.lo * 100.0,
                p.hi * 100.0
            );
        }
        // Legend.
        let ly = TOP + 10.0 + 20.0 * s as f64;
        let lx = W - RIGHT + 20.0;
        let _ = writeln!(
            out,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"/>"#,
            lx + 20.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 26.0,
            ly + 4.0,
            esc(&ser.name)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_points_bars_and_labels() {
        let values = vec!["0".to_string(), "100".into(), "1000".into()];
        let series = vec![RateSeries {
            name: "no_two_accepted_writers".into(),
            points: vec![
                RatePoint {
                    rate: 0.0,
                    lo: 0.0,
                    hi: 0.1,
                },
                RatePoint {
                    rate: 0.5,
                    lo: 0.4,
                    hi: 0.6,
                },
                RatePoint {
                    rate: 1.0,
                    lo: 0.9,
                    hi: 1.0,
                },
            ],
        }];
        let svg = sweep_chart_svg("a <title>", "drift_ppm", &values, &series);
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("a &lt;title&gt;"));
        assert!(svg.contains(">1000</text>"));
        assert!(svg.contains("50.00% [40.00%, 60.00%]"));
        assert_eq!(
            svg,
            sweep_chart_svg("a <title>", "drift_ppm", &values, &series)
        );
    }
}
