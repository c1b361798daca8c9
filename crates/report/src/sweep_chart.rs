//! The parameter-sweep charts, as SVG or PNG (the timeline chart's canvas, with the embedded
//! font, so both formats have the same layout):
//!
//! - one parameter: P(violation) per invariant against the parameter, with 95% Wilson
//!   intervals as error bars. When every value is a number or every value a duration the x
//!   axis is numeric (durations in seconds), linear or, on request, logarithmic; otherwise the
//!   values are evenly spaced in the order swept.
//! - two parameters (a grid): a heat map per invariant, the first parameter down, the second
//!   across, each cell coloured by its violation rate and labelled with it where it fits.
//!
//! Labels never overlap: tick and value labels that would touch the previous one are left
//! out, and legend entries each have their own row.

use crate::chart::canvas::{
    fitted_distinct, line, rect, style, text, text_on, text_width, Cv, DrawResult, BLUE, GREEN,
    GREY, INK, LIGHT, ORANGE, PURPLE, SKY, VERMILLION,
};
use crate::chart::{png_surface, svg_surface, ChartError, ChartFormat};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use splitbrain_scenario::duration::durations_ns;

/// One point of a series: the violation rate at one parameter value and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePoint {
    /// Violation rate, 0..=1.
    pub rate: f64,
    /// Lower end of the 95% interval.
    pub lo: f64,
    /// Upper end of the 95% interval.
    pub hi: f64,
    /// Runs that decided (the rate's denominator).
    pub decided: u64,
    /// Of those, runs where the invariant held vacuously (nothing written, elected or
    /// acquired): they count as holding, so a rate over them is a vacuous zero.
    pub vacuous: u64,
}

impl RatePoint {
    /// Every decided run held vacuously: the 0% says nothing about safety, and the chart
    /// draws "vacuous" instead (as `compare` does for a design that acquired nothing).
    pub fn all_vacuous(&self) -> bool {
        self.decided > 0 && self.vacuous >= self.decided
    }
}

/// One invariant's rates, one point per parameter value (per grid cell, first parameter
/// outermost).
#[derive(Clone, Debug, PartialEq)]
pub struct RateSeries {
    /// Invariant name (the legend).
    pub name: String,
    /// Points, in the order of the values; `None` where no run decided (every run
    /// inconclusive): there is no rate, and the chart draws "n/a", never a 0%.
    pub points: Vec<Option<RatePoint>>,
}

/// The caption of a chart with a missing point.
const NA_NOTE: &str =
    "n/a: no run decided at that value (every run inconclusive), so it has no rate";

/// The caption of a chart with a point where every run held vacuously.
const VACUOUS_NOTE: &str =
    "vacuous: every run at that value held vacuously (nothing written, elected or acquired)";

/// The caption of a chart with a point where some runs held vacuously.
const SOME_VACUOUS_NOTE: &str =
    "(N vac.) or *: N runs held vacuously (nothing written, elected or acquired), counted as holding";

/// The line chart's caption for a point where some runs held vacuously.
const HOLLOW_NOTE: &str =
    "hollow dot: some runs held vacuously (nothing written, elected or acquired), counted as holding";

/// The captions a series' points need, in order: n/a, all vacuous, some vacuous (`line`:
/// the line chart's wording, else the heat map's).
fn notes(points: &[Option<RatePoint>], line: bool) -> Vec<String> {
    let mut out = Vec::new();
    if points.contains(&None) {
        out.push(if line {
            NA_NOTE.to_string()
        } else {
            format!("grey {NA_NOTE}")
        });
    }
    if points.iter().flatten().any(RatePoint::all_vacuous) {
        out.push(if line {
            VACUOUS_NOTE.to_string()
        } else {
            format!("hatched {VACUOUS_NOTE}")
        });
    }
    if points
        .iter()
        .flatten()
        .any(|p| p.vacuous > 0 && !p.all_vacuous())
    {
        out.push(if line { HOLLOW_NOTE } else { SOME_VACUOUS_NOTE }.to_string());
    }
    out
}

/// The captions of a line chart: every series' notes, each once.
fn line_notes(chart: &SweepChart) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ser in &chart.series {
        for n in notes(&ser.points, true) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// A swept parameter: its dotted path and its values, in the order swept.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepParam {
    /// Dotted path.
    pub path: String,
    /// Values as written.
    pub values: Vec<String>,
}

/// What a sweep chart shows.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepChart {
    /// Title.
    pub title: String,
    /// One parameter (a line chart) or two (heat maps).
    pub params: Vec<SweepParam>,
    /// Rates per invariant.
    pub series: Vec<RateSeries>,
    /// A logarithmic x axis (one numeric parameter, all values above zero).
    pub log_x: bool,
}

/// The values as numbers on one axis: plain numbers, or durations in seconds (with the unit
/// for the axis title); `None` if any value is neither.
pub fn numeric_axis(values: &[String]) -> Option<(Vec<f64>, Option<&'static str>)> {
    let nums: Option<Vec<f64>> = values
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    if let Some(n) = nums {
        return Some((n, None));
    }
    let texts: Vec<&str> = values.iter().map(String::as_str).collect();
    durations_ns(&texts).map(|d| (d.iter().map(|&ns| ns as f64 / 1e9).collect(), Some("s")))
}

/// Whether `values` can be drawn on a log axis; the reason if not.
pub fn log_axis_ok(values: &[String]) -> Result<(), String> {
    match numeric_axis(values) {
        None => Err("a log axis needs numeric or duration values".into()),
        Some((v, _)) if v.iter().any(|x| *x <= 0.0) => {
            Err("a log axis needs every value above zero".into())
        }
        Some(_) => Ok(()),
    }
}

/// Renders the chart in `format`.
pub fn render_sweep(chart: &SweepChart, format: ChartFormat) -> Result<Vec<u8>, ChartError> {
    let size = size_of(chart);
    match format {
        ChartFormat::Svg => svg_surface(size, |cv| draw(cv, chart, size)).map(String::into_bytes),
        ChartFormat::Png => png_surface(size, |cv| draw(cv, chart, size)),
    }
}

const W: i32 = 900;
const LEFT: i32 = 80;
const TOP: i32 = 56;
const LINE_H: i32 = 480;
/// Tallest a heat map's grid is drawn by giving its rows room (40 px each at most); a grid of
/// more than 43 rows (6 px each) is taller.
const PANEL_GRID_H: i32 = 260;
/// From a panel's top to its grid's: the title's line and the row parameter's.
const GRID_TOP: i32 = 38;
/// Below a panel's grid: the column values, the column parameter and one caption (n/a or
/// vacuous); [`NOTE_H`] more for each further caption.
const GRID_FOOT: i32 = 56;
/// One more caption line, px.
const NOTE_H: i32 = 16;
/// Between one panel's content and the next panel's title.
const PANEL_GAP: i32 = 12;
/// Shortest colour scale (a grid of one or two rows would squeeze its 11 steps together).
const SCALE_MIN_H: i32 = 100;
const SERIES_COLOURS: [RGBColor; 6] = [VERMILLION, BLUE, GREEN, ORANGE, PURPLE, SKY];

/// A heat-map figure's geometry, shared by the canvas's size and the drawing: each panel is
/// as tall as its content (the grid or the colour scale, whichever is taller, and its labels),
/// and the canvas as wide as the widest of the grid with its scale, the titles and captions.
/// A fixed 356 px panel left 150-250 px empty below a grid of a few rows, and a grid of many
/// rows ran into the next panel.
struct HeatLayout {
    /// Width of the row-label column, px.
    label_w: i32,
    /// The grid's left edge, px.
    gx0: i32,
    /// Cell width and height, px.
    cw: i32,
    ch: i32,
    /// Rows and columns.
    nr: usize,
    nc: usize,
    /// The colour scale's height, px.
    scale_h: i32,
    /// One panel's height, px.
    panel_h: i32,
    /// The canvas's width, px.
    width: i32,
}

impl HeatLayout {
    fn of(chart: &SweepChart) -> HeatLayout {
        let (rows_p, cols_p) = (&chart.params[0], &chart.params[1]);
        let (nr, nc) = (rows_p.values.len().max(1), cols_p.values.len().max(1));
        let label_w = rows_p
            .values
            .iter()
            .map(|v| text_width(v, 12.0))
            .max()
            .unwrap_or(0)
            .clamp(20, 160);
        let gx0 = 24 + label_w + 10;
        let cw = ((W - gx0 - 140) / nc as i32).clamp(6, 90);
        let ch = (PANEL_GRID_H / nr as i32).clamp(6, 40);
        let grid_h = ch * nr as i32;
        let scale_h = grid_h.clamp(SCALE_MIN_H, PANEL_GRID_H);
        let gx1 = gx0 + cw * nc as i32;
        // The scale's swatches and labels end 22 px + "100%" right of its left edge.
        let mut width = gx1 + 30 + 22 + text_width("100%", 11.0) + 16;
        width = width.max(16 + text_width(&chart.title, 16.0) + 16);
        width = width
            .max((gx0 + gx1) / 2 + text_width(&format!("{} \u{2192}", cols_p.path), 12.0) / 2 + 16);
        width = width.max(8 + text_width(&format!("\u{2193} {}", rows_p.path), 12.0) + 16);
        // The column values drawn (centred on their cells, those that would overlap left out).
        for (x, v) in spaced(column_labels(cols_p, gx0, cw), 12.0) {
            width = width.max(x + text_width(&v, 12.0) / 2 + 16);
        }
        let mut extra_notes = 0;
        for ser in &chart.series {
            width = width.max(8 + text_width(&format!("{}: P(violation)", ser.name), 13.0) + 16);
            let ns = notes(&ser.points, false);
            for n in &ns {
                width = width.max(gx0 + text_width(n, 12.0) + 16);
            }
            extra_notes = extra_notes.max(ns.len().saturating_sub(1) as i32);
        }
        HeatLayout {
            label_w,
            gx0,
            cw,
            ch,
            nr,
            nc,
            scale_h,
            panel_h: GRID_TOP
                + (grid_h + GRID_FOOT + NOTE_H * extra_notes).max(scale_h)
                + PANEL_GAP,
            width: width.min(W),
        }
    }
}

/// Widest a column value is drawn, px, where its cell is narrower: a longer one is cut as a
/// row value is ([`fitted_distinct`]), so it neither runs off the canvas's left edge nor into
/// the colour scale.
const COLUMN_LABEL_W: i32 = 76;

/// A heat map's column values at the centres of their cells (`gx0`: the grid's left edge,
/// `cw`: a cell's width, px), each cut to its cell's width or [`COLUMN_LABEL_W`].
fn column_labels(cols: &SweepParam, gx0: i32, cw: i32) -> Vec<(i32, String)> {
    fitted_distinct(&cols.values, 12.0, (cw - 4).max(COLUMN_LABEL_W))
        .into_iter()
        .enumerate()
        .map(|(c, v)| (gx0 + cw * c as i32 + cw / 2, v))
        .collect()
}

fn size_of(chart: &SweepChart) -> (u32, u32) {
    if chart.params.len() >= 2 {
        let l = HeatLayout::of(chart);
        let panels = chart.series.len().max(1) as i32;
        (l.width as u32, (TOP + l.panel_h * panels) as u32)
    } else {
        let extra = line_notes(chart).len().saturating_sub(1) as i32;
        (W as u32, (LINE_H + NOTE_H * extra) as u32)
    }
}

fn draw<DB: DrawingBackend>(
    cv: &Cv<'_, DB>,
    chart: &SweepChart,
    size: (u32, u32),
) -> DrawResult<DB> {
    cv.fill(&WHITE)?;
    text(
        cv,
        &chart.title,
        (16, 14),
        &style(16.0, INK, HPos::Left, VPos::Top),
    )?;
    if chart.params.len() >= 2 {
        heat_maps(cv, chart)
    } else {
        line_chart(cv, chart, size)
    }
}

/// Labels at `xs` (centre x, text), left to right: each that would come within 8 px of the
/// one before is left out. Returns the ones kept.
fn spaced(labels: Vec<(i32, String)>, size: f64) -> Vec<(i32, String)> {
    let mut kept: Vec<(i32, String)> = Vec::new();
    let mut right = i32::MIN;
    for (x, s) in labels {
        let w = text_width(&s, size);
        if x - w / 2 < right + 8 {
            continue;
        }
        right = x + w / 2;
        kept.push((x, s));
    }
    kept
}

/// A short number: no trailing zeros, at most 6 significant digits.
fn fmt_num(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let s = format!("{:.6}", x);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if x.abs() >= 1e6 || x.abs() < 1e-4 {
        format!("{x:e}")
    } else {
        s.to_string()
    }
}

/// The line chart of a sweep over one parameter: each series' violation rate with its 95%
/// interval at each value, a legend, and notes below.
fn line_chart<DB: DrawingBackend>(
    cv: &Cv<'_, DB>,
    chart: &SweepChart,
    size: (u32, u32),
) -> DrawResult<DB> {
    let empty = SweepParam {
        path: String::new(),
        values: Vec::new(),
    };
    let param = chart.params.first().unwrap_or(&empty);
    let legend_w = chart
        .series
        .iter()
        .map(|s| text_width(&s.name, 12.0) + 40)
        .max()
        .unwrap_or(0)
        .clamp(120, 300);
    let (x0, x1) = (LEFT, W - legend_w - 20);
    let line_notes = line_notes(chart);
    let extra = NOTE_H * line_notes.len().saturating_sub(1) as i32;
    let (y0, y1) = (TOP, size.1 as i32 - 70 - extra);
    let y_of = |p: f64| y1 - ((y1 - y0) as f64 * p.clamp(0.0, 1.0)).round() as i32;

    // X positions of the values, and the tick labels.
    let numeric = numeric_axis(&param.values);
    let log = chart.log_x && log_axis_ok(&param.values).is_ok();
    let (xs, ticks, unit) = x_axis(param, &numeric, log, (x0, x1));
    line_axes(cv, param, ticks, unit, log, (x0, x1), (y0, y1), y_of)?;

    // Series, side by side around each value so error bars do not hide each other.
    let k = chart.series.len();
    for (s, ser) in chart.series.iter().enumerate() {
        line_series(cv, (s, k), ser, &xs, x1, y1, y_of)?;
    }
    for (i, note) in line_notes.iter().enumerate() {
        text(
            cv,
            note,
            (16, size.1 as i32 - 14 - extra + NOTE_H * i as i32),
            &style(12.0, GREY, HPos::Left, VPos::Center),
        )?;
    }
    Ok(())
}

/// Where each of `param`'s values sits on a line chart's x axis between pixels `x0` and `x1`,
/// the tick labels, and the axis unit: a numeric axis (log if `log`) where the values are
/// numbers or durations (`numeric`, from [`numeric_axis`]), else one even slot per value.
#[allow(clippy::type_complexity)]
fn x_axis(
    param: &SweepParam,
    numeric: &Option<(Vec<f64>, Option<&'static str>)>,
    log: bool,
    (x0, x1): (i32, i32),
) -> (Vec<i32>, Vec<(i32, String)>, Option<&'static str>) {
    let n = param.values.len().max(1);
    match numeric {
        Some((vals, unit)) if vals.len() >= 2 || log => {
            let f = |x: f64| if log { x.log10() } else { x };
            let lo = vals.iter().copied().map(f).fold(f64::INFINITY, f64::min);
            let hi = vals
                .iter()
                .copied()
                .map(f)
                .fold(f64::NEG_INFINITY, f64::max);
            let (lo, hi) = if hi > lo {
                (lo, hi)
            } else {
                (lo - 1.0, hi + 1.0)
            };
            let pad = (hi - lo) * 0.04;
            let (lo, hi) = (lo - pad, hi + pad);
            let px = move |x: f64| x0 + ((x1 - x0) as f64 * (f(x) - lo) / (hi - lo)).round() as i32;
            let xs = vals.iter().map(|v| px(*v)).collect();
            let mut ticks = Vec::new();
            if log {
                let mut k = lo.floor() as i32;
                while (k as f64) <= hi {
                    for m in [1.0, 2.0, 5.0] {
                        let v = m * 10f64.powi(k);
                        let lv = v.log10();
                        if lv >= lo && lv <= hi {
                            ticks.push((px(v), fmt_num(v)));
                        }
                    }
                    k += 1;
                }
            } else {
                let step = crate::chart::nice_step(hi - lo, 8.0);
                let mut t = (lo / step).ceil() * step;
                while t <= hi + step * 1e-9 {
                    ticks.push((px(t), fmt_num((t / step).round() * step)));
                    t += step;
                }
            }
            (xs, ticks, *unit)
        }
        _ => {
            let slot = (x1 - x0) as f64 / n as f64;
            let xs: Vec<i32> = (0..n)
                .map(|i| x0 + (slot * (i as f64 + 0.5)).round() as i32)
                .collect();
            let ticks = xs
                .iter()
                .zip(&param.values)
                .map(|(x, v)| (*x, v.clone()))
                .collect();
            (xs, ticks, None)
        }
    }
}

/// A line chart's grid (every 25%), axes, tick labels, axis title and y caption.
#[allow(clippy::too_many_arguments)]
fn line_axes<DB: DrawingBackend>(
    cv: &Cv<'_, DB>,
    param: &SweepParam,
    ticks: Vec<(i32, String)>,
    unit: Option<&str>,
    log: bool,
    (x0, x1): (i32, i32),
    (y0, y1): (i32, i32),
    y_of: impl Fn(f64) -> i32,
) -> DrawResult<DB> {
    for k in 0..=4 {
        let y = y_of(k as f64 / 4.0);
        line(cv, vec![(x0, y), (x1, y)], LIGHT.stroke_width(1))?;
        text(
            cv,
            &format!("{}%", k * 25),
            (x0 - 8, y),
            &style(12.0, INK, HPos::Right, VPos::Center),
        )?;
    }
    line(cv, vec![(x0, y0), (x0, y1)], INK.stroke_width(1))?;
    line(cv, vec![(x0, y1), (x1, y1)], INK.stroke_width(1))?;
    for (x, label) in spaced(ticks, 12.0) {
        line(cv, vec![(x, y1), (x, y1 + 5)], INK.stroke_width(1))?;
        text(
            cv,
            &label,
            (x, y1 + 8),
            &style(12.0, INK, HPos::Center, VPos::Top),
        )?;
    }
    let axis_title = match (unit, log) {
        (Some(u), true) => format!("{} ({u}, log scale)", param.path),
        (Some(u), false) => format!("{} ({u})", param.path),
        (None, true) => format!("{} (log scale)", param.path),
        (None, false) => param.path.clone(),
    };
    text(
        cv,
        &axis_title,
        ((x0 + x1) / 2, y1 + 32),
        &style(13.0, INK, HPos::Center, VPos::Top),
    )?;
    text(
        cv,
        "P(violation), 95% CI",
        (16, TOP - 20),
        &style(12.0, GREY, HPos::Left, VPos::Center),
    )?;
    Ok(())
}

/// Series `s` of `k` (`ser`) on a line chart: its line, error bars and dots at `xs`, shifted
/// beside the other series' so error bars do not hide each other, a word where a point has no
/// rate, and its legend row right of `x1`.
#[allow(clippy::too_many_arguments)]
fn line_series<DB: DrawingBackend>(
    cv: &Cv<'_, DB>,
    (s, k): (usize, usize),
    ser: &RateSeries,
    xs: &[i32],
    x1: i32,
    y1: i32,
    y_of: impl Fn(f64) -> i32,
) -> DrawResult<DB> {
    let c = SERIES_COLOURS[s % SERIES_COLOURS.len()];
    let off = if k > 1 {
        (s as f64 / (k - 1) as f64 - 0.5) * 12.0
    } else {
        0.0
    }
    .round() as i32;
    let pts: Vec<Option<(i32, i32)>> = ser
        .points
        .iter()
        .zip(xs)
        // A point where every run held vacuously has no rate worth drawing either.
        .map(|(p, x)| {
            p.filter(|p| !p.all_vacuous())
                .map(|p| (x + off, y_of(p.rate)))
        })
        .collect();
    // The line joins neighbouring points that have a rate; a missing one breaks it.
    for run in pts.split(Option::is_none) {
        let run: Vec<(i32, i32)> = run.iter().flatten().copied().collect();
        if run.len() > 1 {
            line(cv, run, c.stroke_width(2))?;
        }
    }
    for ((p, at), x) in ser.points.iter().zip(&pts).zip(xs) {
        let (Some(p), Some((x, y))) = (p, at) else {
            // No rate ("n/a") or a vacuous zero ("vacuous"), in the series' colour just
            // above the axis, one row a series.
            let what = if p.is_some() { "vacuous" } else { "n/a" };
            text(
                cv,
                what,
                (x + off, y1 - 10 - 14 * s as i32),
                &style(11.0, c, HPos::Center, VPos::Center),
            )?;
            continue;
        };
        let (ylo, yhi) = (y_of(p.lo), y_of(p.hi));
        line(cv, vec![(*x, ylo), (*x, yhi)], c.stroke_width(1))?;
        for yc in [ylo, yhi] {
            line(cv, vec![(x - 4, yc), (x + 4, yc)], c.stroke_width(1))?;
        }
        if p.vacuous > 0 {
            // Some runs held vacuously: a hollow dot (the caption says why).
            cv.draw(&Circle::new((*x, *y), 4, WHITE.filled()))?;
            cv.draw(&Circle::new((*x, *y), 4, c.stroke_width(2)))?;
        } else {
            cv.draw(&Circle::new((*x, *y), 4, c.filled()))?;
        }
    }
    // Legend: one row each.
    let ly = TOP + 10 + 22 * s as i32;
    let lx = x1 + 24;
    line(cv, vec![(lx, ly), (lx + 22, ly)], c.stroke_width(2))?;
    text(
        cv,
        &ser.name,
        (lx + 28, ly),
        &style(12.0, INK, HPos::Left, VPos::Center),
    )?;
    Ok(())
}

/// The fill of a rate: white at 0, vermillion at 1.
fn heat(rate: f64) -> RGBColor {
    let r = rate.clamp(0.0, 1.0);
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * r).round() as u8;
    RGBColor(
        mix(255, VERMILLION.0),
        mix(255, VERMILLION.1),
        mix(255, VERMILLION.2),
    )
}

/// Diagonal hatching over the cell at `at` of `size` (px), 6 px apart: a vacuous cell.
fn hatch<DB: DrawingBackend>(cv: &Cv<'_, DB>, at: (i32, i32), size: (i32, i32)) -> DrawResult<DB> {
    let ((ax, ay), (cw, ch)) = (at, size);
    let mut k = 6;
    while k < cw + ch {
        // The segment x + y = ax + ay + k, clipped to the cell.
        let a = (ax + k.min(cw), ay + (k - cw).max(0));
        let b = (ax + (k - ch).max(0), ay + k.min(ch));
        line(cv, vec![a, b], GREY.stroke_width(1))?;
        k += 6;
    }
    Ok(())
}

fn heat_maps<DB: DrawingBackend>(cv: &Cv<'_, DB>, chart: &SweepChart) -> DrawResult<DB> {
    let (rows_p, cols_p) = (&chart.params[0], &chart.params[1]);
    let HeatLayout {
        label_w,
        gx0,
        cw,
        ch,
        nr,
        nc,
        scale_h,
        panel_h,
        ..
    } = HeatLayout::of(chart);
    // Distinct values keep distinct labels, however long.
    let row_labels = fitted_distinct(&rows_p.values, 12.0, label_w);
    for (s, ser) in chart.series.iter().enumerate() {
        let top = TOP + panel_h * s as i32;
        text(
            cv,
            &format!("{}: P(violation)", ser.name),
            (8, top),
            &style(13.0, INK, HPos::Left, VPos::Top),
        )?;
        let gy0 = top + GRID_TOP;
        for (i, p) in ser.points.iter().enumerate() {
            let (r, c) = ((i / nc) as i32, (i % nc) as i32);
            let (ax, ay) = (gx0 + c * cw, gy0 + r * ch);
            // A cell without a rate is grey and says "n/a", one where every run held
            // vacuously is hatched and says "vacuous": never the 0% of white. One where some
            // runs did says how many, where that fits.
            let labels: Vec<String> = match p {
                Some(p) if p.all_vacuous() => vec!["vacuous".into(), "vac.".into()],
                Some(p) if p.vacuous > 0 => vec![
                    format!("{:.0}% ({} vac.)", p.rate * 100.0, p.vacuous),
                    format!("{:.0}%*", p.rate * 100.0),
                ],
                Some(p) => vec![format!("{:.0}%", p.rate * 100.0)],
                None => vec!["n/a".to_string()],
            };
            let fill = match p {
                Some(p) if !p.all_vacuous() => heat(p.rate),
                _ => LIGHT,
            };
            rect(cv, (ax, ay), (ax + cw, ay + ch), fill.filled())?;
            if p.is_some_and(|p| p.all_vacuous()) {
                hatch(cv, (ax, ay), (cw, ch))?;
            }
            rect(cv, (ax, ay), (ax + cw, ay + ch), WHITE.stroke_width(1))?;
            let label = labels
                .iter()
                .find(|l| text_width(l, 11.0) + 4 < cw)
                .filter(|_| ch >= 14);
            if let Some(label) = label {
                if p.is_some_and(|p| p.all_vacuous()) {
                    // A plain ground under the word, so the hatching does not cross it.
                    let w = text_width(label, 11.0) / 2 + 2;
                    let (cx, cy) = (ax + cw / 2, ay + ch / 2);
                    rect(cv, (cx - w, cy - 7), (cx + w, cy + 7), LIGHT.filled())?;
                }
                text(
                    cv,
                    label,
                    (ax + cw / 2, ay + ch / 2),
                    &style(11.0, text_on(fill), HPos::Center, VPos::Center),
                )?;
            }
        }
        let gx1 = gx0 + cw * nc as i32;
        let gy1 = gy0 + ch * nr as i32;
        rect(cv, (gx0, gy0), (gx1, gy1), GREY.stroke_width(1))?;
        // Row labels (first parameter), every one that has room.
        let mut last = i32::MIN;
        for (r, v) in row_labels.iter().enumerate() {
            let y = gy0 + ch * r as i32 + ch / 2;
            if y - 7 < last {
                continue;
            }
            last = y + 7;
            text(
                cv,
                v,
                (gx0 - 6, y),
                &style(12.0, INK, HPos::Right, VPos::Center),
            )?;
        }
        // Column labels (second parameter), left out where they would overlap.
        for (x, v) in spaced(column_labels(cols_p, gx0, cw), 12.0) {
            text(
                cv,
                &v,
                (x, gy1 + 5),
                &style(12.0, INK, HPos::Center, VPos::Top),
            )?;
        }
        text(
            cv,
            &format!("{} \u{2192}", cols_p.path),
            ((gx0 + gx1) / 2, gy1 + 24),
            &style(12.0, GREY, HPos::Center, VPos::Top),
        )?;
        text(
            cv,
            &format!("\u{2193} {}", rows_p.path),
            (8, gy0 - 9),
            &style(12.0, GREY, HPos::Left, VPos::Center),
        )?;
        for (k, note) in notes(&ser.points, false).iter().enumerate() {
            text(
                cv,
                note,
                (gx0, gy1 + 47 + NOTE_H * k as i32),
                &style(12.0, GREY, HPos::Left, VPos::Center),
            )?;
        }
        // Colour scale: 11 steps, 100% at the top, filling `scale_h` without gaps.
        let sx = gx1 + 30;
        for k in 0..=10 {
            let (y0, y1) = (gy0 + scale_h * (10 - k) / 11, gy0 + scale_h * (11 - k) / 11);
            rect(cv, (sx, y0), (sx + 16, y1), heat(k as f64 / 10.0).filled())?;
            if k % 5 == 0 {
                text(
                    cv,
                    &format!("{}%", k * 10),
                    (sx + 22, (y0 + y1) / 2),
                    &style(11.0, INK, HPos::Left, VPos::Center),
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::canvas::{fitted, TEXT_SCALE};

    fn pt(rate: f64) -> Option<RatePoint> {
        Some(RatePoint {
            rate,
            lo: (rate - 0.1).max(0.0),
            hi: (rate + 0.1).min(1.0),
            decided: 40,
            vacuous: 0,
        })
    }

    /// A point at `rate` over 40 decided runs, `vacuous` of them vacuous.
    fn vac(rate: f64, vacuous: u64) -> Option<RatePoint> {
        pt(rate).map(|p| RatePoint { vacuous, ..p })
    }

    fn one(values: &[&str], log_x: bool) -> SweepChart {
        SweepChart {
            title: "a <title>".into(),
            params: vec![SweepParam {
                path: "nodes.c.clock.drift_ppm".into(),
                values: values.iter().map(|s| s.to_string()).collect(),
            }],
            series: vec![RateSeries {
                name: "no_two_accepted_writers".into(),
                points: values
                    .iter()
                    .enumerate()
                    .map(|(i, _)| pt(i as f64 / 10.0))
                    .collect(),
            }],
            log_x,
        }
    }

    fn svg(c: &SweepChart) -> String {
        String::from_utf8(render_sweep(c, ChartFormat::Svg).unwrap()).unwrap()
    }

    /// The text elements of an SVG as (x, text).
    fn texts(svg: &str) -> Vec<(f64, String)> {
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let x: f64 = t
                    .split("x=\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(-1.0);
                let body = t
                    .split('>')
                    .nth(1)
                    .unwrap_or("")
                    .split('<')
                    .next()
                    .unwrap_or("");
                (x, body.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn numeric_values_sit_at_their_value_not_evenly() {
        let s = svg(&one(&["0", "100", "1000"], false));
        assert!(s.starts_with("<svg"));
        assert!(s.contains("a &lt;title&gt;"));
        assert_eq!(s.matches("<circle").count(), 3);
        // Ticks at a nice step (0, 200, ..., 1000), not one label per value.
        let t = texts(&s);
        let x = |l: &str| t.iter().find(|(_, s)| s == l).map(|p| p.0);
        let (x0, x200, x1000) = (x("0").unwrap(), x("200").unwrap(), x("1000").unwrap());
        assert!(
            ((x200 - x0) * 5.0 - (x1000 - x0)).abs() < 3.0,
            "{x0} {x200} {x1000}"
        );
        assert!(x("100").is_none(), "100 is a value, not a tick");
    }

    #[test]
    fn an_integer_beside_durations_is_integer_ns_on_the_duration_axis() {
        let (xs, unit) = numeric_axis(&["2s".into(), "5000000000".into(), "8s".into()]).unwrap();
        assert_eq!((xs, unit), (vec![2.0, 5.0, 8.0], Some("s")));
        assert_eq!(numeric_axis(&["2s".into(), "x".into()]), None);
    }

    #[test]
    fn durations_and_log_scale_name_the_unit() {
        let s = svg(&one(&["100ms", "1s", "10s"], true));
        assert!(s.contains("nodes.c.clock.drift_ppm (s, log scale)"));
        let t = texts(&s);
        let x = |l: &str| t.iter().find(|(_, s)| s == l).map(|p| p.0).unwrap();
        // Decades are equally spaced on a log axis.
        let (a, b, c) = (x("0.1"), x("1"), x("10"));
        assert!(((b - a) - (c - b)).abs() < 2.0, "{a} {b} {c}");
        assert!(log_axis_ok(&["0".into(), "5".into()]).is_err());
        assert!(log_axis_ok(&["a".into()]).is_err());
    }

    /// The sweep chart's value labels do not overlap, however many there are.
    #[test]
    fn many_category_labels_do_not_overlap() {
        let values: Vec<String> = (0..60).map(|i| format!("mode-{i}")).collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let s = svg(&one(&refs, false));
        let mut spans: Vec<(f64, f64)> = texts(&s)
            .into_iter()
            .filter(|(_, t)| t.starts_with("mode-"))
            .map(|(x, t)| {
                let w = text_width(&t, 12.0) as f64;
                (x - w / 2.0, x + w / 2.0)
            })
            .collect();
        assert!(spans.len() > 3 && spans.len() < 60, "{}", spans.len());
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "{:?} overlaps {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn two_parameters_draw_a_heat_map_per_invariant_and_a_png() {
        let c = SweepChart {
            title: "grid".into(),
            params: vec![
                SweepParam {
                    path: "faults.0.for".into(),
                    values: vec!["1s".into(), "5s".into(), "15s".into()],
                },
                SweepParam {
                    path: "nodes.s.fencing".into(),
                    values: vec!["true".into(), "false".into()],
                },
            ],
            series: vec![
                RateSeries {
                    name: "a".into(),
                    points: (0..6).map(|i| pt(i as f64 / 5.0)).collect(),
                },
                RateSeries {
                    name: "b".into(),
                    points: (0..6).map(|_| pt(0.0)).collect(),
                },
            ],
            log_x: false,
        };
        let s = svg(&c);
        let t = texts(&s);
        assert!(t.iter().any(|(_, x)| x == "a: P(violation)"));
        assert!(t.iter().any(|(_, x)| x == "b: P(violation)"));
        assert!(t.iter().any(|(_, x)| x == "100%"));
        assert!(t.iter().any(|(_, x)| x == "60%"));
        assert_eq!(s, svg(&c), "deterministic");
        let png = render_sweep(&c, ChartFormat::Png).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    /// The text elements of an SVG as boxes (left, top, right, bottom) with their text, from
    /// the position, anchor and size plotters writes (`dy` 0.76em: top; 0.5ex: centre).
    fn text_boxes(svg: &str) -> Vec<((f64, f64, f64, f64), String)> {
        let attr = |t: &str, name: &str| -> String {
            t.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let num = |name| attr(t, name).parse::<f64>().unwrap();
                // plotters writes the pixel size in points (px / 1.24).
                let (x, y, size) = (num("x"), num("y"), num("font-size") * 1.24);
                let body = t.split('>').nth(1).unwrap().split('<').next().unwrap();
                let body = body
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&#39;", "'")
                    .replace("&amp;", "&");
                let w = text_width(body.trim(), size / TEXT_SCALE) as f64;
                let left = match attr(t, "text-anchor").as_str() {
                    "middle" => x - w / 2.0,
                    "end" => x - w,
                    _ => x,
                };
                let top = match attr(t, "dy").as_str() {
                    "0.76em" => y,
                    "0.5ex" => y - size / 2.0,
                    _ => y - size,
                };
                ((left, top, left + w, top + size), body.trim().to_string())
            })
            .collect()
    }

    /// No two texts of a heat map overlap: its row parameter ("↓ faults.0.for") is not drawn
    /// on the panel title's line.
    #[test]
    fn a_heat_maps_labels_do_not_overlap() {
        let c = SweepChart {
            title: "redlock-gc-pause: P(violation) over 2 seeds".into(),
            params: vec![
                SweepParam {
                    path: "faults.0.for".into(),
                    values: ["100ms", "500ms", "1s", "2s", "5s", "10s", "15s", "20s"]
                        .map(String::from)
                        .to_vec(),
                },
                SweepParam {
                    path: "network.delay.fixed".into(),
                    values: (1..=12).map(|i| format!("{}ms", i * 250)).collect(),
                },
            ],
            series: ["exclusive_holders", "no_two_accepted_writers"]
                .iter()
                .map(|n| RateSeries {
                    name: n.to_string(),
                    points: (0..96).map(|i| pt((i % 3) as f64 / 2.0)).collect(),
                })
                .collect(),
            log_x: false,
        };
        let boxes = text_boxes(&svg(&c));
        assert!(boxes.len() > 200, "{}", boxes.len());
        for (i, (a, ta)) in boxes.iter().enumerate() {
            for (b, tb) in &boxes[i + 1..] {
                let apart =
                    a.2 <= b.0 + 0.5 || b.2 <= a.0 + 0.5 || a.3 <= b.1 + 0.5 || b.3 <= a.1 + 0.5;
                assert!(apart, "{ta:?} {a:?} overlaps {tb:?} {b:?}");
            }
        }
    }

    /// A heat map's row value wider than the label column (160 px) is cut with an ellipsis,
    /// not drawn right-aligned at the grid off the canvas's left edge; a short one is drawn
    /// whole.
    #[test]
    fn a_long_row_value_is_cut_not_drawn_off_the_canvas() {
        let long = "x".repeat(30) + "-a-very-long-mode-name-that-goes-on";
        let c = SweepChart {
            title: "grid".into(),
            params: vec![
                SweepParam {
                    path: "nodes.w.mode".into(),
                    values: vec![long.clone(), "short".into()],
                },
                SweepParam {
                    path: "b".into(),
                    values: vec!["x".into(), "y".into()],
                },
            ],
            series: vec![RateSeries {
                name: "i".into(),
                points: vec![pt(0.5), pt(0.0), pt(0.2), pt(1.0)],
            }],
            log_x: false,
        };
        let boxes = text_boxes(&svg(&c));
        for (b, t) in &boxes {
            assert!(b.0 >= 0.0, "{t:?} starts at {} px, off the canvas", b.0);
        }
        let row = |p: &str| boxes.iter().find(|(_, t)| t.starts_with(p)).unwrap();
        // Cut in the middle: its start and its end are kept.
        assert!(row("xxx").1.contains('\u{2026}'), "{:?}", row("xxx").1);
        assert!(row("xxx").1.ends_with("goes-on"), "{:?}", row("xxx").1);
        assert_eq!(row("short").1, "short");
        assert_eq!(fitted("short", 12.0, 160), "short");
        assert_eq!(fitted(&long, 12.0, 0), "\u{2026}");
    }

    /// A heat map of `rows` x `cols` values, one series per name, every cell at 50%.
    fn grid(rows: Vec<String>, cols: usize, names: &[&str]) -> SweepChart {
        let n = rows.len() * cols;
        SweepChart {
            title: "grid".into(),
            params: vec![
                SweepParam {
                    path: "network.delay".into(),
                    values: rows,
                },
                SweepParam {
                    path: "faults.0.at".into(),
                    values: (1..=cols).map(|i| format!("{i}s")).collect(),
                },
            ],
            series: names
                .iter()
                .map(|name| RateSeries {
                    name: name.to_string(),
                    points: (0..n).map(|_| pt(0.5)).collect(),
                })
                .collect(),
            log_x: false,
        }
    }

    /// Every value keeps a label of its own: cut in the middle, or, where that is the same
    /// too, shown from where it differs (cut at the end, `{"normal":{"mean":"5ms"...` would
    /// stand for both `"sd":"1ms"` and `"sd":"20ms"`).
    #[test]
    fn distinct_long_row_values_keep_distinct_labels() {
        let rows: Vec<String> = [
            r#"{"normal":{"mean":"5ms","sd":"1ms"}}"#,
            r#"{"normal":{"mean":"50ms","sd":"1ms"}}"#,
            r#"{"normal":{"mean":"5ms","sd":"20ms"}}"#,
            r#"{"lognormal":{"median":"2ms","sigma":0.5,"a-long-middle":"x","end":1}}"#,
            r#"{"lognormal":{"median":"3ms","sigma":0.5,"a-long-middle":"x","end":1}}"#,
        ]
        .map(String::from)
        .to_vec();
        let labels = fitted_distinct(&rows, 12.0, 160);
        for (i, a) in labels.iter().enumerate() {
            assert!(text_width(a, 12.0) <= 160, "{a:?} is wider than its column");
            for b in &labels[i + 1..] {
                assert_ne!(a, b, "two values drawn alike: {labels:?}");
            }
        }
        let boxes = text_boxes(&svg(&grid(rows.clone(), 3, &["i"])));
        for label in &labels {
            let (b, _) = boxes.iter().find(|(_, t)| t == label).unwrap();
            assert!(b.0 >= 0.0, "{label:?} starts off the canvas");
        }
        // Short values are drawn whole.
        let short: Vec<String> = vec!["1ms".into(), "2ms".into()];
        assert_eq!(fitted_distinct(&short, 12.0, 160), short);
    }

    /// A box on the canvas: left, top, right, bottom, px.
    type Extent = (f64, f64, f64, f64);

    /// The extents of every rectangle and text of an SVG, and its canvas size.
    fn extents(svg: &str) -> (Vec<Extent>, (f64, f64)) {
        let attr = |t: &str, name: &str| -> f64 {
            t.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0)
        };
        let head = svg.split("<svg").nth(1).unwrap();
        let size = (attr(head, "width"), attr(head, "height"));
        let mut out: Vec<Extent> = svg
            .split("<rect")
            .skip(1)
            .map(|r| {
                let (x, y) = (attr(r, "x"), attr(r, "y"));
                (x, y, x + attr(r, "width"), y + attr(r, "height"))
            })
            // The background.
            .filter(|r| (r.2 - r.0, r.3 - r.1) != size)
            .collect();
        out.extend(text_boxes(svg).into_iter().map(|(b, _)| b));
        (out, size)
    }

    /// The canvas and each heat-map panel are sized to their content: a fixed 356 px panel
    /// would leave 150-250 px empty below a grid of 2 or 3 rows (and a 900 px canvas 350 px
    /// empty on the right), and a grid of 60 rows (6 px each) would run into the next panel.
    #[test]
    fn a_heat_map_canvas_fits_its_content() {
        for (nr, nc, long_column) in [
            (1, 2, false),
            (2, 3, false),
            (3, 3, false),
            (8, 12, false),
            (60, 4, false),
            (2, 1, true),
        ] {
            let rows: Vec<String> = (0..nr).map(|i| format!("{i}ms")).collect();
            let mut c = grid(rows, nc, &["first", "second"]);
            if long_column {
                c.params[1].values[nc - 1] =
                    r#"{"uniform":["1ms","5ms"],"spike":{"p":0.01,"delay":"1s"}}"#.into();
            }
            let (boxes, (w, h)) = extents(&svg(&c));
            let bottom = boxes.iter().map(|b| b.3).fold(0.0, f64::max);
            let right = boxes.iter().map(|b| b.2).fold(0.0, f64::max);
            assert!(
                bottom <= h && right <= w,
                "{nr}x{nc}: drawn past the canvas"
            );
            assert!(
                h - bottom < 40.0,
                "{nr}x{nc}: {} px empty below",
                h - bottom
            );
            assert!(
                w - right < 40.0 || w >= 900.0,
                "{nr}x{nc}: {} px empty on the right",
                w - right
            );
            // The second panel starts below everything of the first.
            let s = svg(&c);
            let second = text_boxes(&s)
                .into_iter()
                .find(|(_, t)| t == "second: P(violation)")
                .unwrap()
                .0;
            let first_bottom = boxes
                .iter()
                .filter(|b| b.1 < second.1)
                .map(|b| b.3)
                .fold(0.0, f64::max);
            assert!(
                first_bottom <= second.1,
                "{nr}x{nc}: the first panel ends at {first_bottom}, the second starts at {}",
                second.1
            );
        }
    }

    /// A value where every run was inconclusive (no rate, "n/a" in the table) is drawn as
    /// missing (no dot, the line broken, "n/a", and a caption saying why), not as a 0% point
    /// with a 0..100% bar or a white 0% cell, which would look like safety.
    #[test]
    fn a_value_without_a_decided_run_is_drawn_as_missing_not_zero() {
        let mut c = one(&["0", "100", "1000"], false);
        c.series[0].points[1] = None;
        let s = svg(&c);
        assert_eq!(
            s.matches("<circle").count(),
            2,
            "no dot for the missing value"
        );
        let t = texts(&s);
        assert!(t.iter().any(|(_, x)| x == "n/a"));
        assert!(t.iter().any(|(_, x)| x == NA_NOTE));
        // Without a missing value, no caption.
        assert!(!svg(&one(&["0", "100"], false)).contains("n/a"));
        let mut grid = SweepChart {
            title: "grid".into(),
            params: vec![
                SweepParam {
                    path: "a".into(),
                    values: vec!["1".into(), "2".into()],
                },
                SweepParam {
                    path: "b".into(),
                    values: vec!["x".into(), "y".into()],
                },
            ],
            series: vec![RateSeries {
                name: "i".into(),
                points: vec![pt(0.5), pt(0.0), None, pt(1.0)],
            }],
            log_x: false,
        };
        let t = texts(&svg(&grid));
        assert_eq!(t.iter().filter(|(_, x)| x == "n/a").count(), 1);
        assert_eq!(
            t.iter().filter(|(_, x)| x == "0%").count(),
            2,
            "one cell and the scale"
        );
        assert!(t.iter().any(|(_, x)| x == &format!("grey {NA_NOTE}")));
        grid.series[0].points[2] = pt(0.2);
        assert!(!svg(&grid).contains("n/a"));
    }

    /// A sweep value where every run held vacuously (Redlock with a 1 s TTL and 1 s of work:
    /// nothing acquired; the table's "(40 vacuous)") is not a white "0%" cell nor a 0% dot,
    /// the same as a safe value. It is drawn as `compare` draws a design that acquired
    /// nothing: hatched and "vacuous" in a heat map, no dot and
    /// "vacuous" in a line chart, with a caption; a value where some runs were vacuous says
    /// how many.
    #[test]
    fn a_value_where_every_run_was_vacuous_is_drawn_as_vacuous_not_zero() {
        let mut c = one(&["1s", "3s", "10s"], false);
        c.series[0].points = vec![vac(0.0, 40), vac(0.0, 12), pt(0.0)];
        let s = svg(&c);
        // Two dots, one of them hollow (a white fill under the ring).
        assert_eq!(s.matches("<circle").count(), 3, "{s}");
        let t = texts(&s);
        assert!(t.iter().any(|(_, x)| x == "vacuous"));
        assert!(t.iter().any(|(_, x)| x == VACUOUS_NOTE));
        assert!(t.iter().any(|(_, x)| x == HOLLOW_NOTE));
        assert!(!t.iter().any(|(_, x)| x == "n/a"));

        let grid = SweepChart {
            title: "grid".into(),
            params: vec![
                SweepParam {
                    path: "nodes.client.ttl".into(),
                    values: vec!["1s".into(), "3s".into()],
                },
                SweepParam {
                    path: "nodes.client.work_time".into(),
                    values: vec!["100ms".into(), "1s".into(), "5s".into()],
                },
            ],
            series: vec![RateSeries {
                name: "i".into(),
                points: vec![
                    vac(0.0, 12),
                    vac(0.0, 40),
                    vac(0.0, 40),
                    pt(0.5),
                    pt(0.0),
                    None,
                ],
            }],
            log_x: false,
        };
        let s = svg(&grid);
        let t = texts(&s);
        let count = |l: &str| t.iter().filter(|(_, x)| x == l).count();
        assert_eq!(count("vacuous"), 2);
        assert_eq!(count("0% (12 vac.)"), 1);
        assert_eq!(count("0%"), 2, "one safe cell and the scale");
        assert_eq!(count("n/a"), 1);
        assert_eq!(count(&format!("hatched {VACUOUS_NOTE}")), 1);
        assert_eq!(count(SOME_VACUOUS_NOTE), 1);
        assert_eq!(count(&format!("grey {NA_NOTE}")), 1);
        // The captions do not overlap each other or anything else.
        let boxes = text_boxes(&s);
        for (i, (a, ta)) in boxes.iter().enumerate() {
            for (b, tb) in &boxes[i + 1..] {
                let apart =
                    a.2 <= b.0 + 0.5 || b.2 <= a.0 + 0.5 || a.3 <= b.1 + 0.5 || b.3 <= a.1 + 0.5;
                assert!(apart, "{ta:?} {a:?} overlaps {tb:?} {b:?}");
            }
        }
        let (boxes, (w, h)) = extents(&s);
        assert!(
            boxes.iter().all(|b| b.2 <= w && b.3 <= h),
            "drawn past the canvas"
        );
        let png = render_sweep(&grid, ChartFormat::Png).unwrap();
        std::fs::write(std::env::temp_dir().join("vacuous-grid.png"), png).unwrap();
        let png = render_sweep(&c, ChartFormat::Png).unwrap();
        std::fs::write(std::env::temp_dir().join("vacuous-line.png"), png).unwrap();
    }
}
