//! Timeline charts: a [`TimelineModel`] drawn with plotters as SVG or PNG.
//!
//! Layout, top to bottom: title (scenario and seed) and notes; labels of violations and
//! network rules; one lane per node, grouped by role, with its beliefs, the servers' truth,
//! pauses, crashes, partition shading, writes and messages; the true-time axis; optionally the
//! clock panel (each node's wall clock minus true time); the legend.
//!
//! The palette is Okabe-Ito (colour-blind safe), and nothing is told by hue alone: bands carry
//! labels (term, token), pauses are hatched, rejected writes are crosses, violations are
//! named. PNG text uses the embedded DejaVu Sans (no system fonts needed); SVG output is a pure
//! function of the model and options (byte-deterministic).

use crate::chart_model::{role_label, Arrow, BandKind, LaneGroup, MarkKind, TimelineModel};
use ab_glyph::{Font, ScaleFont};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontFamily, FontStyle};
use splitbrain_engine::SimTime;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Once;

/// DejaVu Sans (Bitstream Vera licence, see `assets/DejaVuSans-LICENSE`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// What to draw.
#[derive(Clone, Debug)]
pub struct ChartOptions {
    /// Only this true-time window (default: the whole run).
    pub window: Option<(SimTime, SimTime)>,
    /// Message kinds not to draw (case-insensitive, e.g. `HEARTBEAT`).
    pub hide_kinds: Vec<String>,
    /// Draw no message arrows at all.
    pub no_messages: bool,
    /// Add the clock panel.
    pub clocks: bool,
    /// Above this many arrows, the most frequent kinds are hidden (then arrows thinned).
    pub max_arrows: usize,
    /// Image width, px.
    pub width: u32,
}

impl Default for ChartOptions {
    fn default() -> Self {
        ChartOptions {
            window: None,
            hide_kinds: Vec::new(),
            no_messages: false,
            clocks: false,
            max_arrows: 400,
            width: 1400,
        }
    }
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartFormat {
    /// SVG text.
    Svg,
    /// PNG image.
    Png,
}

impl ChartFormat {
    /// The format for a file name by extension (`.svg`, `.png`), if known.
    pub fn from_path(path: &std::path::Path) -> Option<ChartFormat> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("svg") => Some(ChartFormat::Svg),
            Some("png") => Some(ChartFormat::Png),
            _ => None,
        }
    }
}

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The drawing backend failed.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// The window is empty or outside the run.
    #[error("empty time window: {0}")]
    Window(String),
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded font is valid; if registration failed, text would be missing from PNGs,
        // which the tests catch.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Renders `model` in `format`.
pub fn render(
    model: &TimelineModel,
    opts: &ChartOptions,
    format: ChartFormat,
) -> Result<Vec<u8>, ChartError> {
    match format {
        ChartFormat::Svg => render_svg(model, opts).map(String::into_bytes),
        ChartFormat::Png => render_png(model, opts),
    }
}

/// Renders `model` as SVG text.
pub fn render_svg(model: &TimelineModel, opts: &ChartOptions) -> Result<String, ChartError> {
    register_font();
    let layout = Layout::new(model, opts)?;
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (layout.width, layout.height)).into_drawing_area();
        let cv = Cv {
            area: &root,
            texts: None,
        };
        draw(&cv, model, &layout).map_err(|e| ChartError::Draw(e.to_string()))?;
        root.present()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    Ok(out)
}

/// Renders `model` as a PNG image.
pub fn render_png(model: &TimelineModel, opts: &ChartOptions) -> Result<Vec<u8>, ChartError> {
    register_font();
    let layout = Layout::new(model, opts)?;
    let (w, h) = (layout.width, layout.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    let texts: Vec<PendingText>;
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        let cv = Cv {
            area: &root,
            texts: Some(RefCell::new(Vec::new())),
        };
        draw(&cv, model, &layout).map_err(|e| ChartError::Draw(e.to_string()))?;
        texts = cv.texts.map(RefCell::into_inner).unwrap_or_default();
        root.present()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    // Text is rasterised here rather than by plotters, whose ab_glyph path drops each
    // glyph's left side bearing ("cl" came out as "d").
    let font = ab_glyph::FontRef::try_from_slice(FONT)
        .map_err(|e| ChartError::Draw(format!("embedded font: {e}")))?;
    for t in &texts {
        raster_text(&mut rgb, w, h, &font, t);
    }
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        let mut wr = enc
            .write_header()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
        wr.write_image_data(&rgb)
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    Ok(png_bytes)
}

// ---- palette (Okabe-Ito) ----
const BLUE: RGBColor = RGBColor(0, 114, 178);
const ORANGE: RGBColor = RGBColor(230, 159, 0);
const GREEN: RGBColor = RGBColor(0, 158, 115);
const PURPLE: RGBColor = RGBColor(204, 121, 167);
const SKY: RGBColor = RGBColor(86, 180, 233);
const YELLOW: RGBColor = RGBColor(240, 228, 66);
const VERMILLION: RGBColor = RGBColor(213, 94, 0);
const INK: RGBColor = RGBColor(30, 30, 30);
const GREY: RGBColor = RGBColor(120, 120, 120);
const LIGHT: RGBColor = RGBColor(225, 225, 225);
const VIOLATION: RGBColor = RGBColor(220, 30, 30);

const TONES: [RGBColor; 6] = [BLUE, ORANGE, GREEN, PURPLE, SKY, YELLOW];

/// The colour of a term or token (consecutive numbers get different colours).
fn tone(n: u64) -> RGBColor {
    TONES[(n % TONES.len() as u64) as usize]
}

/// Black or white, whichever reads better on `c`.
fn text_on(c: RGBColor) -> RGBColor {
    let l = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if l > 140.0 {
        INK
    } else {
        WHITE
    }
}

// ---- layout ----
const LANE_H: i32 = 56;
const GROUP_H: i32 = 18;
const LEFT: i32 = 150;
const RIGHT: i32 = 30;
const LABEL_ROW_H: i32 = 16;
const CLOCK_H: i32 = 170;

/// A label above the lanes (violation or network rule) placed on a row.
struct TopLabel {
    x0: i32,
    x1: i32,
    row: i32,
    text: String,
    violation: bool,
}

struct Layout {
    width: u32,
    height: u32,
    from: SimTime,
    to: SimTime,
    plot_x0: i32,
    plot_x1: i32,
    /// Top of each lane.
    lane_y: Vec<i32>,
    /// Group headings: (y, title).
    groups: Vec<(i32, &'static str)>,
    lanes_top: i32,
    lanes_bottom: i32,
    title_notes: Vec<String>,
    top_labels: Vec<TopLabel>,
    labels_top: i32,
    arrows: Vec<Arrow>,
    clocks: bool,
    clock_top: i32,
    legend_top: i32,
    legend: Vec<LegendItem>,
    legend_rows: Vec<Vec<(i32, LegendItem)>>,
    /// Message kinds drawn: name, colour, faint.
    kinds: Vec<(String, RGBColor, bool)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LegendItem {
    Leader,
    Holds,
    Stale,
    TrueHold,
    Grant,
    Key,
    Validity,
    Paused,
    Crashed,
    Partition,
    Cut,
    Message,
    Dropped,
    Accepted,
    Rejected,
    Violation,
    ClockStep,
    /// A message kind, by index into `Layout::kinds`.
    Kind(usize),
}

impl LegendItem {
    fn label(self, kinds: &[(String, RGBColor, bool)]) -> String {
        match self {
            LegendItem::Kind(i) => {
                let (k, _, faint) = &kinds[i];
                if *faint {
                    format!("{k} (most frequent, faint)")
                } else {
                    k.clone()
                }
            }
            other => other.text().to_string(),
        }
    }

    fn text(self) -> &'static str {
        match self {
            LegendItem::Kind(_) => "message",
            LegendItem::Leader => "believes it is leader (label: term)",
            LegendItem::Holds => "believes it holds the lock (label: token)",
            LegendItem::Stale => "belief the servers no longer back (stale)",
            LegendItem::TrueHold => "truly held at the lock servers",
            LegendItem::Grant => "grant at the lease service",
            LegendItem::Key => "key at a Redis instance",
            LegendItem::Validity => "validity end the holder believed",
            LegendItem::Paused => "paused (stop-the-world)",
            LegendItem::Crashed => "down (crashed)",
            LegendItem::Partition => "partition side (A, B, ...)",
            LegendItem::Cut => "cut / blocked link",
            LegendItem::Message => "message, send \u{2192} handled",
            LegendItem::Dropped => "dropped message",
            LegendItem::Accepted => "write accepted (token)",
            LegendItem::Rejected => "write rejected (token)",
            LegendItem::Violation => "invariant violated",
            LegendItem::ClockStep => "wall clock step",
        }
    }
}

/// A text to rasterise after the shapes (PNG only).
struct PendingText {
    s: String,
    at: (i32, i32),
    size: f64,
    color: RGBColor,
    pos: Pos,
}

/// A drawing area plus, for PNG, the texts to rasterise ourselves.
struct Cv<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    texts: Option<RefCell<Vec<PendingText>>>,
}

impl<DB: DrawingBackend> std::ops::Deref for Cv<'_, DB> {
    type Target = DrawingArea<DB, plotters::coord::Shift>;
    fn deref(&self) -> &Self::Target {
        self.area
    }
}

/// The em size of a plotters text size (the SVG backend writes `font-size: size / 1.24`).
fn em(size: f64) -> f32 {
    (size / 1.24) as f32
}

fn scaled<'f>(
    font: &'f ab_glyph::FontRef<'static>,
    size: f64,
) -> ab_glyph::PxScaleFont<&'f ab_glyph::FontRef<'static>> {
    let upm = font.units_per_em().unwrap_or(2048.0);
    let h = font.height_unscaled();
    font.as_scaled(ab_glyph::PxScale::from(em(size) * h / upm))
}

fn advance(sf: &ab_glyph::PxScaleFont<&ab_glyph::FontRef<'static>>, text: &str) -> f32 {
    let mut x = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let g = sf.glyph_id(c);
        if let Some(p) = prev {
            x += sf.kern(p, g);
        }
        x += sf.h_advance(g);
        prev = Some(g);
    }
    x
}

/// Width of `text` at `size` in the embedded font (the same for SVG and PNG layout).
fn text_width(text: &str, size: f64) -> i32 {
    match ab_glyph::FontRef::try_from_slice(FONT) {
        Ok(font) => advance(&scaled(&font, size * TEXT_SCALE), text).ceil() as i32,
        Err(_) => (text.chars().count() as f64 * size * 0.5) as i32,
    }
}

/// Draws `t` into an RGB buffer, anchored as the SVG backend anchors text.
fn raster_text(buf: &mut [u8], w: u32, h: u32, font: &ab_glyph::FontRef<'static>, t: &PendingText) {
    let sf = scaled(font, t.size);
    let width = advance(&sf, &t.s);
    let em = em(t.size);
    let x0 = match t.pos.h_pos {
        HPos::Left => t.at.0 as f32,
        HPos::Center => t.at.0 as f32 - width / 2.0,
        HPos::Right => t.at.0 as f32 - width,
    };
    // SVG: dy = 0.76em (top), 0.5ex (centre), -0.5ex (bottom); ex ~ 0.55em.
    let baseline = t.at.1 as f32
        + match t.pos.v_pos {
            VPos::Top => 0.76 * em,
            VPos::Center => 0.275 * em,
            VPos::Bottom => -0.275 * em,
        };
    let mut x = x0;
    let mut prev = None;
    for c in t.s.chars() {
        let id = sf.glyph_id(c);
        if let Some(p) = prev {
            x += sf.kern(p, id);
        }
        let glyph = id.with_scale_and_position(sf.scale(), ab_glyph::point(x, baseline));
        x += sf.h_advance(id);
        prev = Some(id);
        let Some(outline) = font.outline_glyph(glyph) else {
            continue;
        };
        let b = outline.px_bounds();
        outline.draw(|gx, gy, cov| {
            let px = b.min.x as i32 + gx as i32;
            let py = b.min.y as i32 + gy as i32;
            if px < 0 || py < 0 || px >= w as i32 || py >= h as i32 {
                return;
            }
            let i = (py as usize * w as usize + px as usize) * 3;
            let a = cov.clamp(0.0, 1.0);
            for (k, c) in [t.color.0, t.color.1, t.color.2].into_iter().enumerate() {
                let old = buf[i + k] as f32;
                buf[i + k] = (old + (c as f32 - old) * a).round() as u8;
            }
        });
    }
}

impl Layout {
    fn new(model: &TimelineModel, opts: &ChartOptions) -> Result<Layout, ChartError> {
        let end = model.end.max(SimTime(1));
        let (from, to) = opts.window.unwrap_or((SimTime::ZERO, end));
        let to = to.min(end.max(to.min(end)));
        if from >= to {
            return Err(ChartError::Window(format!(
                "from {from} is not before to {to} (the run lasts {})",
                model.end
            )));
        }
        let width = opts.width.max(600);
        let plot_x0 = LEFT;
        let plot_x1 = width as i32 - RIGHT;
        let px = |t: SimTime| -> i32 {
            let f = (t.0.saturating_sub(from.0)) as f64 / (to.0 - from.0) as f64;
            plot_x0 + (f.min(1.0) * (plot_x1 - plot_x0) as f64).round() as i32
        };

        // Arrows: window, hidden kinds, then thinning.
        let mut notes = Vec::new();
        let hide: Vec<String> = opts
            .hide_kinds
            .iter()
            .map(|k| k.to_ascii_uppercase())
            .collect();
        let mut arrows: Vec<Arrow> = if opts.no_messages {
            Vec::new()
        } else {
            model
                .arrows
                .iter()
                .filter(|a| a.sent < to && a.end.max(a.sent) >= from)
                .filter(|a| !hide.contains(&a.kind.to_ascii_uppercase()))
                .cloned()
                .collect()
        };
        if opts.no_messages && !model.arrows.is_empty() {
            notes.push("messages not drawn (--no-messages)".to_string());
        } else if !hide.is_empty() {
            notes.push(format!("hidden message kinds: {}", hide.join(", ")));
        }
        if arrows.len() > opts.max_arrows {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for a in &arrows {
                *counts.entry(a.kind.as_str()).or_default() += 1;
            }
            let mut by_count: Vec<(&str, usize)> = counts.into_iter().collect();
            by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let mut total = arrows.len();
            let mut hidden: Vec<(String, usize)> = Vec::new();
            for (kind, c) in by_count {
                // Keep at least one kind; thinning handles the rest.
                if total <= opts.max_arrows || hidden.len() + 1 >= counts_len(&arrows) {
                    break;
                }
                hidden.push((kind.to_string(), c));
                total -= c;
            }
            if !hidden.is_empty() {
                arrows.retain(|a| !hidden.iter().any(|(k, _)| *k == a.kind));
                let list: Vec<String> = hidden.iter().map(|(k, c)| format!("{k} ({c})")).collect();
                notes.push(format!(
                    "too many messages to draw: hid {} (show with --hide / --from --to)",
                    list.join(", ")
                ));
            }
            if arrows.len() > opts.max_arrows {
                let every = arrows.len().div_ceil(opts.max_arrows);
                let before = arrows.len();
                let mut i = 0usize;
                arrows.retain(|_| {
                    i += 1;
                    (i - 1) % every == 0
                });
                notes.push(format!(
                    "too many messages to draw: showing every {every}th of {before} arrows"
                ));
            }
        }

        // Labels above the lanes: violations (merged per invariant when close) and net rules.
        let mut wanted: Vec<(i32, i32, String, bool)> = Vec::new();
        let mut last_by_inv: BTreeMap<&str, (i32, usize)> = BTreeMap::new();
        let mut counts: Vec<usize> = Vec::new();
        for v in &model.violations {
            if v.to < from || v.from > to {
                continue;
            }
            let (x0, x1) = (
                px(v.from.max(from)),
                px(v.to.min(to)).max(px(v.from.max(from)) + 3),
            );
            if let Some((lx, idx)) = last_by_inv.get(v.invariant.as_str()).copied() {
                if x0 - lx < 160 {
                    counts[idx] += 1;
                    continue;
                }
            }
            last_by_inv.insert(v.invariant.as_str(), (x0, wanted.len()));
            counts.push(1);
            wanted.push((x0, x1, v.invariant.clone(), true));
        }
        for (w, c) in wanted.iter_mut().zip(&counts) {
            if *c > 1 {
                w.2 = format!("{} (\u{00d7}{c})", w.2);
            }
        }
        for p in &model.net {
            if p.to < from || p.from > to {
                continue;
            }
            wanted.push((
                px(p.from.max(from)),
                px(p.to.min(to)),
                p.label.clone(),
                false,
            ));
        }
        let mut rows_end: Vec<i32> = Vec::new();
        let mut top_labels = Vec::new();
        for (x0, x1, text, violation) in wanted {
            let w = text_width(&text, 12.0) + 8;
            let lx = x0.min(plot_x1 - w).max(plot_x0);
            let row = match rows_end.iter().position(|e| *e < lx) {
                Some(r) => r,
                None => {
                    rows_end.push(i32::MIN);
                    rows_end.len() - 1
                }
            };
            rows_end[row] = lx + w;
            top_labels.push(TopLabel {
                x0,
                x1,
                row: row as i32,
                text,
                violation,
            });
        }

        // Vertical layout.
        let title_h = 34 + 18 * (1 + notes.len() as i32);
        let labels_top = title_h;
        let lanes_top = labels_top + LABEL_ROW_H * rows_end.len() as i32 + 6;
        let mut y = lanes_top;
        let mut lane_y = Vec::new();
        let mut groups = Vec::new();
        let mut prev: Option<LaneGroup> = None;
        for lane in &model.lanes {
            if prev != Some(lane.group) {
                groups.push((y, lane.group.title()));
                y += GROUP_H;
                prev = Some(lane.group);
            }
            lane_y.push(y);
            y += LANE_H;
        }
        let lanes_bottom = y;
        let axis_bottom = lanes_bottom + 44;
        let clock_top = axis_bottom + 14;
        let legend_top = if opts.clocks {
            clock_top + CLOCK_H + 48
        } else {
            axis_bottom + 6
        };

        // Legend items present in the window.
        let mut legend: Vec<LegendItem> = Vec::new();
        let in_win = |a: SimTime, b: SimTime| a <= to && b >= from;
        for b in &model.bands {
            if !in_win(b.from, b.to) {
                continue;
            }
            legend.push(match b.kind {
                BandKind::Leader { .. } => LegendItem::Leader,
                BandKind::Holds { .. } => LegendItem::Holds,
                BandKind::Stale => LegendItem::Stale,
                BandKind::TrueHold { .. } => LegendItem::TrueHold,
                BandKind::Grant { .. } => LegendItem::Grant,
                BandKind::Key { .. } => LegendItem::Key,
                BandKind::Paused => LegendItem::Paused,
                BandKind::Crashed => LegendItem::Crashed,
            });
        }
        for m in &model.marks {
            if !in_win(m.t, m.t) {
                continue;
            }
            legend.push(match m.kind {
                MarkKind::ValidityEnd => LegendItem::Validity,
                MarkKind::WriteAccepted { .. } => LegendItem::Accepted,
                MarkKind::WriteRejected { .. } => LegendItem::Rejected,
                MarkKind::ClockStep { .. } => LegendItem::ClockStep,
            });
        }
        for p in &model.net {
            if in_win(p.from, p.to) {
                legend.push(if p.partition {
                    LegendItem::Partition
                } else {
                    LegendItem::Cut
                });
            }
        }
        // Message kinds: each its colour; the most frequent kind, if it is most of the
        // traffic (heartbeats), faint so the rare kinds (elections, grants) stand out.
        let mut kind_counts: BTreeMap<&str, usize> = BTreeMap::new();
        for a in &arrows {
            *kind_counts.entry(a.kind.as_str()).or_default() += 1;
        }
        let mut by_count: Vec<(&str, usize)> = kind_counts.into_iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let total: usize = by_count.iter().map(|k| k.1).sum();
        let faint_top = by_count.len() >= 2 && by_count[0].1 * 2 > total;
        let kind_tones = [BLUE, GREEN, PURPLE, ORANGE, SKY, INK];
        let mut kinds: Vec<(String, RGBColor, bool)> = Vec::new();
        let mut tone_i = 0;
        // Legend and colours in name order, so a kind keeps its colour across charts of a run.
        let mut names: Vec<&str> = by_count.iter().map(|k| k.0).collect();
        names.sort();
        for k in names {
            let faint = faint_top && k == by_count[0].0;
            let c = if faint {
                GREY
            } else {
                tone_i += 1;
                kind_tones[(tone_i - 1) % kind_tones.len()]
            };
            kinds.push((k.to_string(), c, faint));
        }
        if kinds.len() > 8 {
            // Too many to tell apart: one neutral colour.
            for k in &mut kinds {
                k.1 = RGBColor(50, 50, 50);
                k.2 = false;
            }
            legend.push(LegendItem::Message);
        } else {
            for i in 0..kinds.len() {
                legend.push(LegendItem::Kind(i));
            }
        }
        if arrows.iter().any(|a| a.dropped) {
            legend.push(LegendItem::Dropped);
        }
        if top_labels.iter().any(|l| l.violation) {
            legend.push(LegendItem::Violation);
        }
        legend.sort();
        legend.dedup();
        let mut legend_rows: Vec<Vec<(i32, LegendItem)>> = vec![Vec::new()];
        let mut x = plot_x0;
        for item in &legend {
            let w = 40 + text_width(&item.label(&kinds), 12.0) + 22;
            if x + w > plot_x1 && x > plot_x0 {
                legend_rows.push(Vec::new());
                x = plot_x0;
            }
            legend_rows.last_mut().expect("one row").push((x, *item));
            x += w;
        }
        let height = legend_top + 22 * legend_rows.len() as i32 + 16;

        Ok(Layout {
            width,
            height: height as u32,
            from,
            to,
            plot_x0,
            plot_x1,
            lane_y,
            groups,
            lanes_top,
            lanes_bottom,
            title_notes: notes,
            top_labels,
            labels_top,
            arrows,
            clocks: opts.clocks,
            clock_top,
            legend_top,
            legend,
            legend_rows,
            kinds,
        })
    }

    fn x(&self, t: SimTime) -> i32 {
        let t = t.max(self.from).min(self.to);
        let f = (t.0 - self.from.0) as f64 / (self.to.0 - self.from.0) as f64;
        self.plot_x0 + (f * (self.plot_x1 - self.plot_x0) as f64).round() as i32
    }

    /// Unclamped x for interpolation.
    fn xf(&self, t: SimTime) -> f64 {
        let f = (t.0 as f64 - self.from.0 as f64) / (self.to.0 - self.from.0) as f64;
        self.plot_x0 as f64 + f * (self.plot_x1 - self.plot_x0) as f64
    }

    fn lane_mid(&self, lane: usize) -> i32 {
        self.lane_y[lane] + LANE_H / 2
    }

    /// Top and bottom of the belief band in a lane.
    fn band_y(&self, lane: usize) -> (i32, i32) {
        (self.lane_y[lane] + 12, self.lane_y[lane] + 34)
    }
}

fn counts_len(arrows: &[Arrow]) -> usize {
    let mut kinds: Vec<&str> = arrows.iter().map(|a| a.kind.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    kinds.len()
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// All text sizes are scaled by this (plotters' sizes come out small: font-size = size / 1.24).
const TEXT_SCALE: f64 = 1.15;

fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size * TEXT_SCALE, FontStyle::Normal)
}

fn style(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: font(size),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

fn text<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    s: &str,
    at: (i32, i32),
    st: &TextStyle<'_>,
) -> DrawResult<DB> {
    match &root.texts {
        Some(list) => {
            let (r, g, b) = st.color.rgb;
            list.borrow_mut().push(PendingText {
                s: s.to_string(),
                at,
                size: st.font.get_size(),
                color: RGBColor(r, g, b),
                pos: st.pos,
            });
            Ok(())
        }
        None => root.area.draw(&Text::new(s.to_string(), at, st.clone())),
    }
}

fn rect<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    a: (i32, i32),
    b: (i32, i32),
    s: ShapeStyle,
) -> DrawResult<DB> {
    root.draw(&Rectangle::new([a, b], s))
}

fn line<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    pts: Vec<(i32, i32)>,
    s: ShapeStyle,
) -> DrawResult<DB> {
    root.draw(&PathElement::new(pts, s))
}

/// Diagonal hatching inside a rectangle.
fn hatch<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    gap: i32,
    s: ShapeStyle,
) -> DrawResult<DB> {
    let h = y1 - y0;
    if h <= 0 || x1 <= x0 {
        return Ok(());
    }
    // Lines from (x, y1) to (x + h, y0), clipped to [x0, x1].
    let mut x = x0 - h;
    while x < x1 {
        let s_lo = (x0 - x).max(0);
        let s_hi = (x1 - x).min(h);
        if s_lo < s_hi {
            line(root, vec![(x + s_lo, y1 - s_lo), (x + s_hi, y1 - s_hi)], s)?;
        }
        x += gap;
    }
    Ok(())
}

fn arrow_head<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    from: (f64, f64),
    to: (f64, f64),
    s: ShapeStyle,
) -> DrawResult<DB> {
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1.0 {
        return Ok(());
    }
    let (ux, uy) = (dx / len, dy / len);
    let size = 6.0;
    let base = (to.0 - ux * size, to.1 - uy * size);
    let p1 = (base.0 - uy * size * 0.5, base.1 + ux * size * 0.5);
    let p2 = (base.0 + uy * size * 0.5, base.1 - ux * size * 0.5);
    let r = |p: (f64, f64)| (p.0.round() as i32, p.1.round() as i32);
    root.draw(&Polygon::new(vec![r(to), r(p1), r(p2)], s.filled()))
}

fn fmt_secs(ns: i128, decimals: usize) -> String {
    format!("{:.*}", decimals, ns as f64 / 1e9)
}

/// Nice tick step (1, 2, 5 x 10^k) for a range, aiming at about `target` ticks.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = range / target;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10.0 * mag
}

fn draw<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let (px0, px1) = (l.plot_x0, l.plot_x1);

    // Title and notes.
    let title = format!("{}  \u{00b7}  seed {}", model.name, model.seed);
    let title_style = TextStyle {
        font: FontDesc::new(FontFamily::SansSerif, 22.0, FontStyle::Bold),
        color: INK.to_backend_color(),
        pos: Pos::new(HPos::Left, VPos::Top),
    };
    text(root, &title, (16, 10), &title_style)?;
    let sub = format!(
        "true time {} \u{2013} {} of a {} run  \u{00b7}  {} nodes  \u{00b7}  {} violation window(s)",
        SimTime(l.from.0),
        SimTime(l.to.0),
        model.end,
        model.lanes.len(),
        model.violations.len()
    );
    text(
        root,
        &sub,
        (16, 38),
        &style(13.0, GREY, HPos::Left, VPos::Top),
    )?;
    for (i, n) in l.title_notes.iter().enumerate() {
        text(
            root,
            &format!("note: {n}"),
            (16, 56 + 18 * i as i32),
            &style(13.0, VERMILLION, HPos::Left, VPos::Top),
        )?;
    }

    let (top, bottom) = (l.lanes_top, l.lanes_bottom);

    // Lane backgrounds, group headings, lane labels.
    for (y, t) in &l.groups {
        text(
            root,
            &t.to_uppercase(),
            (10, y + GROUP_H / 2 + 1),
            &style(11.0, GREY, HPos::Left, VPos::Center),
        )?;
        line(
            root,
            vec![(10, *y + GROUP_H - 2), (px1, *y + GROUP_H - 2)],
            LIGHT.stroke_width(1),
        )?;
    }
    for (i, lane) in model.lanes.iter().enumerate() {
        let y = l.lane_y[i];
        if i % 2 == 1 {
            rect(
                root,
                (px0, y),
                (px1, y + LANE_H),
                RGBColor(247, 247, 247).filled(),
            )?;
        }
        text(
            root,
            &lane.name,
            (12, y + LANE_H / 2 - 7),
            &style(14.0, INK, HPos::Left, VPos::Center),
        )?;
        text(
            root,
            role_label(lane.role),
            (12, y + LANE_H / 2 + 10),
            &style(11.0, GREY, HPos::Left, VPos::Center),
        )?;
    }

    // Network periods: shading per side.
    let side_tint = [SKY, ORANGE, GREEN, PURPLE];
    for p in &model.net {
        if p.to < l.from || p.from > l.to {
            continue;
        }
        let (x0, x1) = (l.x(p.from), l.x(p.to));
        for (lane, side) in p.sides.iter().enumerate() {
            let Some(side) = side else { continue };
            let y = l.lane_y[lane];
            let c = if p.partition {
                side_tint[side % side_tint.len()]
            } else {
                PURPLE
            };
            rect(
                root,
                (x0, y + 1),
                (x1, y + LANE_H - 1),
                c.mix(0.16).filled(),
            )?;
            if p.partition && x1 - x0 > 60 {
                let name = ((b'A' + (*side % 26) as u8) as char).to_string();
                text(
                    root,
                    &format!("side {name}"),
                    (x1 - 4, y + 2),
                    &style(10.0, GREY, HPos::Right, VPos::Top),
                )?;
            }
        }
        for x in [x0, x1] {
            if x > px0 && x < px1 {
                line(
                    root,
                    vec![(x, top), (x, bottom)],
                    GREY.mix(0.6).stroke_width(1),
                )?;
            }
        }
    }

    // Time grid.
    let range_ns = (l.to.0 - l.from.0) as f64;
    let step = nice_step(range_ns / 1e9, 12.0);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let step_ns = (step * 1e9).round() as u64;
    let mut tick = l.from.0.div_ceil(step_ns.max(1)) * step_ns.max(1);
    let mut ticks = Vec::new();
    while tick <= l.to.0 {
        ticks.push(SimTime(tick));
        tick += step_ns.max(1);
    }
    for t in &ticks {
        let x = l.x(*t);
        line(
            root,
            vec![(x, top), (x, bottom)],
            RGBColor(235, 235, 235).stroke_width(1),
        )?;
    }

    // Crashed and paused (under the beliefs so labels stay readable).
    for b in &model.bands {
        if b.to < l.from || b.from > l.to {
            continue;
        }
        let (x0, x1) = (l.x(b.from), l.x(b.to).max(l.x(b.from) + 1));
        let y = l.lane_y[b.lane];
        match b.kind {
            BandKind::Crashed => {
                rect(
                    root,
                    (x0, y + 2),
                    (x1, y + LANE_H - 2),
                    RGBColor(160, 160, 160).mix(0.75).filled(),
                )?;
                if x1 - x0 > 50 {
                    text(
                        root,
                        "down",
                        (x0 + 5, y + LANE_H / 2),
                        &style(12.0, INK, HPos::Left, VPos::Center),
                    )?;
                }
            }
            BandKind::Paused => {
                rect(
                    root,
                    (x0, y + 2),
                    (x1, y + LANE_H - 2),
                    WHITE.mix(0.6).filled(),
                )?;
                hatch(
                    root,
                    (x0, y + 2),
                    (x1, y + LANE_H - 2),
                    7,
                    INK.mix(0.45).stroke_width(1),
                )?;
                rect(root, (x0, y + 2), (x1, y + LANE_H - 2), INK.stroke_width(1))?;
            }
            _ => {}
        }
    }

    // Beliefs and server state.
    for b in &model.bands {
        if b.to < l.from || b.from > l.to {
            continue;
        }
        let (x0, x1) = (l.x(b.from), l.x(b.to).max(l.x(b.from) + 2));
        let (by0, by1) = l.band_y(b.lane);
        let (fill, label) = match &b.kind {
            BandKind::Leader { term, token } => (
                tone(*term),
                match token {
                    Some(tok) => format!("leader t{term} \u{00b7} token {tok}"),
                    None => format!("leader t{term}"),
                },
            ),
            BandKind::Holds { lock, token } => (
                token.map_or(BLUE, tone),
                match token {
                    Some(tok) => format!("holds {lock} \u{00b7} token {tok}"),
                    None => format!("holds {lock}"),
                },
            ),
            BandKind::Grant { holder, token } => {
                (tone(*token), format!("token {token} \u{2192} {holder}"))
            }
            BandKind::Key { key, holder } => (
                GREEN,
                format!("{key} = {}", holder.as_deref().unwrap_or("?")),
            ),
            _ => continue,
        };
        rect(root, (x0, by0), (x1, by1), fill.mix(0.85).filled())?;
        rect(root, (x0, by0), (x1, by1), fill.stroke_width(1))?;
        let w = text_width(&label, 12.0);
        if w + 8 < x1 - x0 {
            text(
                root,
                &label,
                (x0 + 5, (by0 + by1) / 2),
                &style(12.0, text_on(fill), HPos::Left, VPos::Center),
            )?;
        } else if x1 - x0 > 14 {
            let short = match &b.kind {
                BandKind::Leader { term, .. } => format!("t{term}"),
                BandKind::Holds { token: Some(t), .. } | BandKind::Grant { token: t, .. } => {
                    t.to_string()
                }
                _ => String::new(),
            };
            if text_width(&short, 11.0) + 4 < x1 - x0 {
                text(
                    root,
                    &short,
                    (x0 + 2, (by0 + by1) / 2),
                    &style(11.0, text_on(fill), HPos::Left, VPos::Center),
                )?;
            }
        }
    }
    // Stale parts and truth strips.
    for b in &model.bands {
        if b.to < l.from || b.from > l.to {
            continue;
        }
        let (x0, x1) = (l.x(b.from), l.x(b.to).max(l.x(b.from) + 1));
        let (by0, by1) = l.band_y(b.lane);
        match &b.kind {
            BandKind::Stale => {
                rect(root, (x0, by0), (x1, by1), WHITE.mix(0.55).filled())?;
                hatch(root, (x0, by0), (x1, by1), 5, VERMILLION.stroke_width(1))?;
                rect(root, (x0, by0), (x1, by1), VERMILLION.stroke_width(2))?;
                let label = "stale: servers no longer grant it";
                let w = text_width(label, 12.0);
                if w + 10 < x1 - x0 {
                    let (lx, ly) = (x0 + 6, (by0 + by1) / 2);
                    rect(root, (lx - 2, ly - 8), (lx + w + 2, ly + 8), WHITE.filled())?;
                    text(
                        root,
                        label,
                        (lx, ly),
                        &style(12.0, VERMILLION, HPos::Left, VPos::Center),
                    )?;
                }
            }
            BandKind::TrueHold { .. } => {
                rect(root, (x0, by1 + 3), (x1, by1 + 8), INK.filled())?;
            }
            _ => {}
        }
    }
    // Pause labels on top of beliefs.
    for b in &model.bands {
        if b.kind != BandKind::Paused || b.to < l.from || b.from > l.to {
            continue;
        }
        let (x0, x1) = (l.x(b.from), l.x(b.to));
        let label = format!(
            "paused {}",
            splitbrain_engine::SimDuration(b.to.0 - b.from.0)
        );
        let w = text_width(&label, 12.0);
        let y = l.lane_y[b.lane] + LANE_H - 7;
        if w + 8 < x1 - x0 {
            rect(root, (x0 + 3, y - 7), (x0 + w + 7, y + 6), WHITE.filled())?;
            text(
                root,
                &label,
                (x0 + 5, y),
                &style(12.0, INK, HPos::Left, VPos::Center),
            )?;
        }
    }

    // Violations: translucent band over every lane.
    for v in &model.violations {
        if v.to < l.from || v.from > l.to {
            continue;
        }
        let x0 = l.x(v.from);
        let x1 = l.x(v.to).max(x0 + 3);
        rect(root, (x0, top), (x1, bottom), VIOLATION.mix(0.10).filled())?;
        line(
            root,
            vec![(x0, top), (x0, bottom)],
            VIOLATION.mix(0.7).stroke_width(1),
        )?;
        line(
            root,
            vec![(x1, top), (x1, bottom)],
            VIOLATION.mix(0.7).stroke_width(1),
        )?;
        for lane in &v.lanes {
            let y = l.lane_y[*lane];
            rect(
                root,
                (x0, y + 1),
                (x1, y + LANE_H - 1),
                VIOLATION.mix(0.8).stroke_width(1),
            )?;
        }
    }
    for lab in &l.top_labels {
        let y = l.labels_top + LABEL_ROW_H * lab.row;
        let c = if lab.violation { VIOLATION } else { GREY };
        let w = text_width(&lab.text, 12.0) + 8;
        let lx = lab.x0.min(px1 - w).max(px0);
        text(
            root,
            &lab.text,
            (lx, y + LABEL_ROW_H / 2),
            &style(12.0, c, HPos::Left, VPos::Center),
        )?;
        // A bracket from the label down to the lanes.
        line(
            root,
            vec![(lab.x0, y + LABEL_ROW_H - 1), (lab.x0, top)],
            c.mix(0.6).stroke_width(1),
        )?;
        let _ = lab.x1;
    }

    // Messages: faint kinds first, so the rare kinds are drawn over them.
    let faint = |a: &Arrow| l.kinds.iter().any(|k| k.0 == a.kind && k.2);
    let ordered = l
        .arrows
        .iter()
        .filter(|a| faint(a))
        .chain(l.arrows.iter().filter(|a| !faint(a)));
    for a in ordered {
        let (y0, y1) = (l.lane_mid(a.from) as f64, l.lane_mid(a.to) as f64);
        let (sx, ex) = (l.xf(a.sent), l.xf(a.end.max(a.sent)));
        // A loss at send time: a short stub towards the receiver.
        let (ex, y1) = if a.dropped && a.end <= a.sent {
            (sx + 6.0, y0 + (y1 - y0) * 0.35)
        } else {
            (ex, y1)
        };
        // Clip to the window.
        let (lo, hi) = (px0 as f64, px1 as f64);
        let at = |x: f64| {
            if (ex - sx).abs() < 1e-9 {
                y0
            } else {
                y0 + (y1 - y0) * (x - sx) / (ex - sx)
            }
        };
        let (cx0, cx1) = (sx.max(lo), ex.min(hi));
        if cx0 > cx1 {
            continue;
        }
        let p0 = (cx0, at(cx0));
        let p1 = (cx1, at(cx1));
        let c = if a.dropped && faint(a) {
            VERMILLION.mix(0.35)
        } else if a.dropped {
            VERMILLION.mix(0.9)
        } else {
            match l.kinds.iter().find(|k| k.0 == a.kind) {
                Some((_, c, true)) => c.mix(0.35),
                Some((_, c, false)) => c.mix(0.9),
                None => RGBColor(50, 50, 50).mix(0.55),
            }
        };
        let r = |p: (f64, f64)| (p.0.round() as i32, p.1.round() as i32);
        line(root, vec![r(p0), r(p1)], c.stroke_width(1))?;
        if cx1 >= ex - 0.5 {
            if a.dropped {
                let w = if faint(a) { 1 } else { 2 };
                root.draw(&Cross::new(r(p1), 4, c.stroke_width(w)))?;
            } else {
                arrow_head(root, p0, p1, c.stroke_width(1))?;
            }
        }
    }

    // Point marks.
    let mut storage_label_end: BTreeMap<(usize, bool), i32> = BTreeMap::new();
    for m in &model.marks {
        if m.t < l.from || m.t > l.to {
            continue;
        }
        let x = l.x(m.t);
        let mid = l.lane_mid(m.lane);
        let (by0, by1) = l.band_y(m.lane);
        match &m.kind {
            MarkKind::ValidityEnd => {
                line(root, vec![(x, by0 - 5), (x, by1 + 1)], INK.stroke_width(2))?;
                root.draw(&Polygon::new(
                    vec![(x - 5, by0 - 8), (x + 5, by0 - 8), (x, by0 - 2)],
                    INK.filled(),
                ))?;
            }
            MarkKind::WriteAccepted { token, writer }
            | MarkKind::WriteRejected { token, writer } => {
                let rejected = matches!(m.kind, MarkKind::WriteRejected { .. });
                let label = match token {
                    Some(t) if rejected => format!("{t} rejected"),
                    Some(t) => t.to_string(),
                    None if rejected => format!("{writer} rejected"),
                    None => writer.clone(),
                };
                if rejected {
                    root.draw(&Cross::new((x, mid), 6, VERMILLION.stroke_width(3)))?;
                } else {
                    let c = token.map_or(INK, tone);
                    root.draw(&Circle::new((x, mid), 5, c.filled()))?;
                    root.draw(&Circle::new((x, mid), 5, INK.stroke_width(1)))?;
                }
                // Accepted labels prefer above the dot, rejected below; a label that would
                // overlap the previous one on its row tries the other row, else is left out.
                let w = text_width(&label, 12.0);
                let lx = x - w / 2;
                let rows = if rejected {
                    [true, false]
                } else {
                    [false, true]
                };
                for below in rows {
                    let key = (m.lane, below);
                    if storage_label_end.get(&key).is_some_and(|e| *e + 4 >= lx) {
                        continue;
                    }
                    storage_label_end.insert(key, lx + w);
                    let ly = if below { mid + 16 } else { mid - 15 };
                    let c = if rejected { VERMILLION } else { INK };
                    text(
                        root,
                        &label,
                        (x, ly),
                        &style(12.0, c, HPos::Center, VPos::Center),
                    )?;
                    break;
                }
            }
            MarkKind::ClockStep { delta_ns } => {
                let y = l.lane_y[m.lane];
                line(
                    root,
                    vec![(x, y + 2), (x, y + LANE_H - 2)],
                    PURPLE.stroke_width(3),
                )?;
                let sign = if *delta_ns < 0 { "-" } else { "+" };
                let label = format!(
                    "clock {sign}{}",
                    splitbrain_engine::SimDuration(delta_ns.unsigned_abs())
                );
                text(
                    root,
                    &label,
                    (x + 4, y + 3),
                    &style(11.0, INK, HPos::Left, VPos::Top),
                )?;
            }
        }
    }

    // Frame and x axis.
    rect(root, (px0, top), (px1, bottom), GREY.stroke_width(1))?;
    for t in &ticks {
        let x = l.x(*t);
        line(
            root,
            vec![(x, bottom), (x, bottom + 5)],
            INK.stroke_width(1),
        )?;
        text(
            root,
            &fmt_secs(t.0 as i128, decimals),
            (x, bottom + 8),
            &style(12.0, INK, HPos::Center, VPos::Top),
        )?;
    }
    text(
        root,
        "true time (s)",
        ((px0 + px1) / 2, bottom + 26),
        &style(13.0, INK, HPos::Center, VPos::Top),
    )?;

    if l.clocks {
        draw_clocks(root, model, l, &ticks, decimals)?;
    }

    // Legend.
    for (r, row) in l.legend_rows.iter().enumerate() {
        let y = l.legend_top + 22 * r as i32 + 10;
        for (x, item) in row {
            legend_swatch(root, *item, *x, y, &l.kinds)?;
            text(
                root,
                &item.label(&l.kinds),
                (x + 40, y),
                &style(12.0, INK, HPos::Left, VPos::Center),
            )?;
        }
    }
    let _ = &l.legend;
    Ok(())
}

fn legend_swatch<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    item: LegendItem,
    x: i32,
    y: i32,
    kinds: &[(String, RGBColor, bool)],
) -> DrawResult<DB> {
    let (a, b) = ((x, y - 7), (x + 32, y + 7));
    match item {
        LegendItem::Leader | LegendItem::Holds | LegendItem::Grant => {
            rect(root, a, b, BLUE.mix(0.85).filled())?;
            rect(root, a, b, ORANGE.mix(0.85).filled().stroke_width(0))?;
            rect(root, a, (x + 16, y + 7), BLUE.mix(0.85).filled())?;
        }
        LegendItem::Key => rect(root, a, b, GREEN.mix(0.85).filled())?,
        LegendItem::Stale => {
            rect(root, a, b, WHITE.filled())?;
            hatch(root, a, b, 5, VERMILLION.stroke_width(1))?;
            rect(root, a, b, VERMILLION.stroke_width(2))?;
        }
        LegendItem::TrueHold => rect(root, (x, y - 3), (x + 32, y + 2), INK.filled())?,
        LegendItem::Validity => {
            line(
                root,
                vec![(x + 16, y - 4), (x + 16, y + 8)],
                INK.stroke_width(2),
            )?;
            root.draw(&Polygon::new(
                vec![(x + 11, y - 8), (x + 21, y - 8), (x + 16, y - 2)],
                INK.filled(),
            ))?;
        }
        LegendItem::Paused => {
            hatch(root, a, b, 7, INK.mix(0.45).stroke_width(1))?;
            rect(root, a, b, INK.stroke_width(1))?;
        }
        LegendItem::Crashed => rect(root, a, b, RGBColor(160, 160, 160).mix(0.75).filled())?,
        LegendItem::Partition => {
            rect(root, a, (x + 16, y + 7), SKY.mix(0.16).filled())?;
            rect(root, (x + 16, y - 7), b, ORANGE.mix(0.16).filled())?;
            rect(root, a, b, LIGHT.stroke_width(1))?;
        }
        LegendItem::Cut => rect(root, a, b, PURPLE.mix(0.16).filled())?,
        LegendItem::Kind(i) => {
            let (_, c, faint) = &kinds[i];
            let c = c.mix(if *faint { 0.35 } else { 0.9 });
            line(root, vec![(x, y + 6), (x + 30, y - 5)], c.stroke_width(1))?;
            arrow_head(
                root,
                (x as f64, y as f64 + 6.0),
                (x as f64 + 30.0, y as f64 - 5.0),
                c.stroke_width(1),
            )?;
        }
        LegendItem::Message => {
            let c = RGBColor(50, 50, 50).mix(0.55);
            line(root, vec![(x, y + 6), (x + 30, y - 5)], c.stroke_width(1))?;
            arrow_head(
                root,
                (x as f64, y as f64 + 6.0),
                (x as f64 + 30.0, y as f64 - 5.0),
                c.stroke_width(1),
            )?;
        }
        LegendItem::Dropped => {
            line(
                root,
                vec![(x, y + 6), (x + 28, y - 4)],
                VERMILLION.stroke_width(1),
            )?;
            root.draw(&Cross::new((x + 28, y - 4), 4, VERMILLION.stroke_width(2)))?;
        }
        LegendItem::Accepted => {
            root.draw(&Circle::new((x + 16, y), 5, ORANGE.filled()))?;
            root.draw(&Circle::new((x + 16, y), 5, INK.stroke_width(1)))?;
        }
        LegendItem::Rejected => {
            root.draw(&Cross::new((x + 16, y), 6, VERMILLION.stroke_width(3)))?
        }
        LegendItem::Violation => {
            rect(root, a, b, VIOLATION.mix(0.13).filled())?;
            rect(root, a, b, VIOLATION.mix(0.9).stroke_width(2))?;
        }
        LegendItem::ClockStep => line(
            root,
            vec![(x + 16, y - 7), (x + 16, y + 7)],
            PURPLE.stroke_width(3),
        )?,
    }
    Ok(())
}

fn draw_clocks<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
    ticks: &[SimTime],
    decimals: usize,
) -> DrawResult<DB> {
    let (px0, px1) = (l.plot_x0, l.plot_x1);
    let (top, bottom) = (l.clock_top + 20, l.clock_top + CLOCK_H);
    text(
        root,
        "wall clock \u{2212} true time, per node (drift and steps)",
        (px0, l.clock_top + 8),
        &style(13.0, INK, HPos::Left, VPos::Center),
    )?;
    // Range over the window.
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    let exact = |s: &crate::chart_model::ClockSeries| s.pieces.iter().flatten().all(|p| p.1 == 0);
    for s in &model.clocks {
        for p in s.pieces.iter().flatten() {
            lo = lo.min(p.1);
            hi = hi.max(p.1);
        }
    }
    if lo > hi {
        lo = 0;
        hi = 0;
    }
    lo = lo.min(0);
    hi = hi.max(0);
    if hi - lo < 2_000_000 {
        hi += 1_000_000;
        lo -= 1_000_000;
    }
    let pad = (hi - lo) / 10;
    let (lo, hi) = (lo - pad, hi + pad);
    let y = |v: i64| -> i32 {
        bottom - ((v - lo) as f64 / (hi - lo) as f64 * (bottom - top) as f64).round() as i32
    };
    let in_secs = hi - lo >= 20_000_000_000;
    let unit = if in_secs { 1e9 } else { 1e6 };
    let step = nice_step((hi - lo) as f64 / unit, 5.0);
    let dec = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let mut v = ((lo as f64 / unit) / step).ceil() * step;
    rect(root, (px0, top), (px1, bottom), GREY.stroke_width(1))?;
    for t in ticks {
        let x = l.x(*t);
        line(
            root,
            vec![(x, top), (x, bottom)],
            RGBColor(235, 235, 235).stroke_width(1),
        )?;
        text(
            root,
            &fmt_secs(t.0 as i128, decimals),
            (x, bottom + 8),
            &style(12.0, INK, HPos::Center, VPos::Top),
        )?;
    }
    while v <= hi as f64 / unit {
        let yy = y((v * unit) as i64);
        line(root, vec![(px0 - 4, yy), (px0, yy)], INK.stroke_width(1))?;
        line(
            root,
            vec![(px0, yy), (px1, yy)],
            RGBColor(235, 235, 235).stroke_width(1),
        )?;
        text(
            root,
            &format!("{v:.dec$}"),
            (px0 - 7, yy),
            &style(12.0, INK, HPos::Right, VPos::Center),
        )?;
        v += step;
    }
    text(
        root,
        if in_secs { "offset (s)" } else { "offset (ms)" },
        (12, (top + bottom) / 2),
        &style(12.0, INK, HPos::Left, VPos::Center),
    )?;
    text(
        root,
        "true time (s)",
        ((px0 + px1) / 2, bottom + 26),
        &style(13.0, INK, HPos::Center, VPos::Top),
    )?;
    line(root, vec![(px0, y(0)), (px1, y(0))], GREY.stroke_width(1))?;
    let mut label_ys: Vec<i32> = Vec::new();
    let mut k = 0usize;
    for s in &model.clocks {
        if exact(s) {
            continue;
        }
        let c = TONES[k % TONES.len()];
        k += 1;
        let mut last = None;
        for piece in &s.pieces {
            // Clip each straight segment to the window.
            let mut pts: Vec<(i32, i32)> = Vec::new();
            for seg in piece.windows(2) {
                let ((t0, v0), (t1, v1)) = (seg[0], seg[1]);
                if t1 < l.from || t0 > l.to || t1 <= t0 {
                    continue;
                }
                let at = |t: SimTime| {
                    let f = (t.0 - t0.0) as f64 / (t1.0 - t0.0) as f64;
                    (v0 as f64 + (v1 - v0) as f64 * f) as i64
                };
                let (a, b) = (t0.max(l.from), t1.min(l.to));
                let p0 = (l.x(a), y(at(a)));
                if pts.last() != Some(&p0) {
                    pts.push(p0);
                }
                pts.push((l.x(b), y(at(b))));
            }
            if pts.len() >= 2 {
                line(root, pts.clone(), c.stroke_width(2))?;
            }
            // A step: a thin vertical joining the piece before it to this one.
            if let (Some(prev), Some(first)) = (last, pts.first()) {
                if prev != *first {
                    line(root, vec![prev, *first], c.mix(0.6).stroke_width(1))?;
                }
            }
            if let Some(p) = pts.last() {
                last = Some(*p);
            }
        }
        if let Some((_, ly)) = last {
            let mut ly = ly - 8;
            while label_ys.iter().any(|u| (u - ly).abs() < 14) {
                ly -= 14;
            }
            label_ys.push(ly);
            text(
                root,
                &model.lanes[s.lane].name,
                (px1 - 4, ly),
                &style(12.0, c, HPos::Right, VPos::Center),
            )?;
        }
    }
    if model.clocks.iter().any(exact) {
        let names: Vec<&str> = model
            .clocks
            .iter()
            .filter(|s| exact(s))
            .map(|s| model.lanes[s.lane].name.as_str())
            .collect();
        let label = if k == 0 {
            "every clock is exact".to_string()
        } else if names.len() > 4 {
            format!("{} others exact", names.len())
        } else {
            format!("{} exact", names.join(", "))
        };
        text(
            root,
            &label,
            (px0 + 6, y(0) - 9),
            &style(12.0, GREY, HPos::Left, VPos::Center),
        )?;
    }
    Ok(())
}
