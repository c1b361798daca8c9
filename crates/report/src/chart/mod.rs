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

pub(crate) mod canvas;
mod clocks;
mod layers;
mod layout;

use crate::chart_model::TimelineModel;
use canvas::{Cv, DrawResult};

use canvas::{raster_text, PendingText, FONT};
pub(crate) use canvas::{tone, BLUE, GREEN, GREY, INK, ORANGE, PURPLE, SKY, VERMILLION, VIOLATION};
pub(crate) use layers::band_look;
use layers::draw;
use layout::Layout;
pub(crate) use layout::{kind_colours, net_labels, nice_step, GROUP_H, LANE_H, LEFT, RIGHT};
use plotters::prelude::*;
use splitbrain_engine::SimTime;
use std::cell::RefCell;

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
    /// Kinds the lesson is about (case-insensitive): never hidden as too many (only
    /// thinned), e.g. lesson 01b's storm of ELECTION, ANSWER and COORDINATOR.
    pub keep_kinds: Vec<String>,
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
            keep_kinds: Vec::new(),
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

/// Registers the embedded font as plotters' sans-serif. plotters has that registry only where
/// it draws text itself (not on wasm32, where it would ask the browser); the `chart-font`
/// feature (default) says the build has it. Without it, only the charts' text lacks the font:
/// the models, views and pages do not draw text through plotters.
#[cfg(not(feature = "chart-font"))]
fn register_font() {}

#[cfg(feature = "chart-font")]
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The embedded font is valid; if registration failed, text would be missing from PNGs,
        // which the tests catch.
        let _ =
            plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, FONT);
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
    let layout = Layout::new(model, opts)?;
    svg_surface((layout.width, layout.height), |cv| draw(cv, model, &layout))
}

/// The message kinds the chart of `model` with `opts` draws, each with its colour as
/// `#rrggbb` (the browser view gives each kind the same colour).
pub fn kind_legend(
    model: &TimelineModel,
    opts: &ChartOptions,
) -> Result<Vec<(String, String)>, ChartError> {
    let layout = Layout::new(model, opts)?;
    Ok(layout
        .kinds
        .iter()
        .map(|(k, c, _)| (k.clone(), format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)))
        .collect())
}

/// Renders `model` as a PNG image.
pub fn render_png(model: &TimelineModel, opts: &ChartOptions) -> Result<Vec<u8>, ChartError> {
    let layout = Layout::new(model, opts)?;
    png_surface((layout.width, layout.height), |cv| draw(cv, model, &layout))
}

/// Draws with `paint` on an SVG canvas of `size` px and returns the document (text measured
/// with the embedded font, so the layout equals the PNG's).
pub(crate) fn svg_surface(
    size: (u32, u32),
    paint: impl for<'a, 'b> FnOnce(&Cv<'a, SVGBackend<'b>>) -> DrawResult<SVGBackend<'b>>,
) -> Result<String, ChartError> {
    register_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        let cv = Cv {
            area: &root,
            texts: None,
        };
        paint(&cv).map_err(|e| ChartError::Draw(e.to_string()))?;
        root.present()
            .map_err(|e| ChartError::Draw(e.to_string()))?;
    }
    Ok(out)
}

/// Draws with `paint` on an RGB canvas of `size` px and returns it as a PNG; text is
/// rasterised with the embedded font.
pub(crate) fn png_surface(
    size: (u32, u32),
    paint: impl for<'a, 'b> FnOnce(&Cv<'a, BitMapBackend<'b>>) -> DrawResult<BitMapBackend<'b>>,
) -> Result<Vec<u8>, ChartError> {
    register_font();
    let (w, h) = size;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    let texts: Vec<PendingText>;
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        let cv = Cv {
            area: &root,
            texts: Some(RefCell::new(Vec::new())),
        };
        paint(&cv).map_err(|e| ChartError::Draw(e.to_string()))?;
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
