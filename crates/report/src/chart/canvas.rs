//! The drawing surface shared by every layer: the Okabe-Ito palette, a plotters drawing
//! area that (for PNG) collects texts to rasterise with the embedded font, and the few
//! primitives the layers draw with (text, rectangle, line, hatching, arrow head).

use ab_glyph::{Font, ScaleFont};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontFamily, FontStyle};
use std::cell::RefCell;

/// DejaVu Sans (Bitstream Vera licence, see `assets/DejaVuSans-LICENSE`).
pub(crate) static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

// ---- palette (Okabe-Ito) ----
pub(crate) const BLUE: RGBColor = RGBColor(0, 114, 178);
pub(crate) const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub(crate) const GREEN: RGBColor = RGBColor(0, 158, 115);
pub(crate) const PURPLE: RGBColor = RGBColor(204, 121, 167);
pub(crate) const SKY: RGBColor = RGBColor(86, 180, 233);
pub(crate) const YELLOW: RGBColor = RGBColor(240, 228, 66);
pub(crate) const VERMILLION: RGBColor = RGBColor(213, 94, 0);
pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);
pub(crate) const GREY: RGBColor = RGBColor(120, 120, 120);
pub(crate) const LIGHT: RGBColor = RGBColor(225, 225, 225);
pub(crate) const VIOLATION: RGBColor = RGBColor(220, 30, 30);

// ---- more message-kind colours, past the six above (Paul Tol's "muted" scheme, also
// colour-blind safe: https://personal.sron.nl/~pault/#sec:qualitative) ----
pub(crate) const INDIGO: RGBColor = RGBColor(51, 34, 136);
pub(crate) const WINE: RGBColor = RGBColor(136, 34, 85);
pub(crate) const OLIVE: RGBColor = RGBColor(153, 153, 51);
pub(crate) const TEAL: RGBColor = RGBColor(68, 170, 153);
pub(crate) const ROSE: RGBColor = RGBColor(204, 102, 119);
pub(crate) const SAND: RGBColor = RGBColor(221, 204, 119);

/// Message-kind colours, in the order kinds (by name) take them: Okabe-Ito's first, then Tol's
/// muted ones, so up to twelve kinds are told apart (with six, APPEND_ACK, RAFT_KEPT_ALIVE
/// and WRITE would all be blue in lesson 21b). The static chart and the HTML view both take
/// them from `kind_colours`.
pub(crate) const KIND_TONES: [RGBColor; 12] = [
    BLUE, GREEN, PURPLE, ORANGE, SKY, INK, INDIGO, WINE, OLIVE, TEAL, ROSE, SAND,
];

pub(crate) const TONES: [RGBColor; 6] = [BLUE, ORANGE, GREEN, PURPLE, SKY, YELLOW];

/// The colour of a term or token (consecutive numbers get different colours).
pub(crate) fn tone(n: u64) -> RGBColor {
    TONES[(n % TONES.len() as u64) as usize]
}

/// Black or white, whichever reads better on `c`.
pub(crate) fn text_on(c: RGBColor) -> RGBColor {
    let l = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if l > 140.0 {
        INK
    } else {
        WHITE
    }
}

/// A text to rasterise after the shapes (PNG only).
pub(crate) struct PendingText {
    pub(crate) s: String,
    pub(crate) at: (i32, i32),
    pub(crate) size: f64,
    pub(crate) color: RGBColor,
    pub(crate) pos: Pos,
}

/// A drawing area plus, for PNG, the texts to rasterise ourselves.
pub(crate) struct Cv<'a, DB: DrawingBackend> {
    pub(crate) area: &'a DrawingArea<DB, plotters::coord::Shift>,
    pub(crate) texts: Option<RefCell<Vec<PendingText>>>,
}

impl<DB: DrawingBackend> std::ops::Deref for Cv<'_, DB> {
    type Target = DrawingArea<DB, plotters::coord::Shift>;
    fn deref(&self) -> &Self::Target {
        self.area
    }
}

/// The em size of a plotters text size (the SVG backend writes `font-size: size / 1.24`).
pub(crate) fn em(size: f64) -> f32 {
    (size / 1.24) as f32
}

pub(crate) fn scaled<'f>(
    font: &'f ab_glyph::FontRef<'static>,
    size: f64,
) -> ab_glyph::PxScaleFont<&'f ab_glyph::FontRef<'static>> {
    let upm = font.units_per_em().unwrap_or(2048.0);
    let h = font.height_unscaled();
    font.as_scaled(ab_glyph::PxScale::from(em(size) * h / upm))
}

pub(crate) fn advance(sf: &ab_glyph::PxScaleFont<&ab_glyph::FontRef<'static>>, text: &str) -> f32 {
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
pub(crate) fn text_width(text: &str, size: f64) -> i32 {
    match ab_glyph::FontRef::try_from_slice(FONT) {
        Ok(font) => advance(&scaled(&font, size * TEXT_SCALE), text).ceil() as i32,
        Err(_) => (text.chars().count() as f64 * size * 0.5) as i32,
    }
}

/// `text` cut in the middle, with an ellipsis, to fit `max_w` px at `size`; unchanged if it
/// fits. Its start and its end are kept (`{"normal":{"mea…"sd":"20ms"}}`): values that differ
/// only at the end (a JSON value's last number) stay apart, as a cut at the end made them look
/// alike. A label that would run off the canvas is cut instead (a heat map's row values).
pub(crate) fn fitted(text: &str, size: f64, max_w: i32) -> String {
    if text_width(text, size) <= max_w {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    longest_fit(chars.len(), size, max_w, |keep| {
        let head = keep.div_ceil(2);
        let mut out: String = chars[..head].iter().collect();
        out.push('\u{2026}');
        out.extend(&chars[chars.len() - (keep - head)..]);
        out
    })
}

/// `cut(keep)` for the most characters kept (`keep` in `0..len`) that fits `max_w` px at
/// `size`, `cut(0)` if none does: a label's width grows with what it keeps.
fn longest_fit(len: usize, size: f64, max_w: i32, cut: impl Fn(usize) -> String) -> String {
    let (mut fits, mut over) = (0, len);
    while over - fits > 1 {
        let mid = (fits + over) / 2;
        if text_width(&cut(mid), size) <= max_w {
            fits = mid;
        } else {
            over = mid;
        }
    }
    cut(fits)
}

/// `values` fitted to `max_w` px at `size` as [`fitted`] fits each, with different values
/// kept different: where two cut the same (they differ only in the middle), each is shown
/// from a few characters before the first one that sets it apart from the others
/// (`…an":"5ms","sd":"1…`), cut at the end.
pub(crate) fn fitted_distinct(values: &[String], size: f64, max_w: i32) -> Vec<String> {
    let plain: Vec<String> = values.iter().map(|v| fitted(v, size, max_w)).collect();
    let chars: Vec<Vec<char>> = values.iter().map(|v| v.chars().collect()).collect();
    let mut out = plain.clone();
    for (i, label) in out.iter_mut().enumerate() {
        let Some(common) = (0..values.len())
            .filter(|&j| plain[j] == plain[i] && values[j] != values[i])
            .map(|j| {
                chars[i]
                    .iter()
                    .zip(&chars[j])
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
        else {
            continue;
        };
        let from = common.saturating_sub(4);
        let lead = if from > 0 { "\u{2026}" } else { "" };
        let rest = &chars[i][from..];
        let whole: String = lead.chars().chain(rest.iter().copied()).collect();
        *label = if text_width(&whole, size) <= max_w {
            whole
        } else {
            longest_fit(rest.len(), size, max_w, |keep| {
                let mut s: String = lead.to_string();
                s.extend(&rest[..keep]);
                s.push('\u{2026}');
                s
            })
        };
    }
    out
}

/// Draws `t` into an RGB buffer, anchored as the SVG backend anchors text.
pub(crate) fn raster_text(
    buf: &mut [u8],
    w: u32,
    h: u32,
    font: &ab_glyph::FontRef<'static>,
    t: &PendingText,
) {
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

pub(crate) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// All text sizes are scaled by this (plotters' sizes come out small: font-size = size / 1.24).
pub(crate) const TEXT_SCALE: f64 = 1.15;

pub(crate) fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size * TEXT_SCALE, FontStyle::Normal)
}

pub(crate) fn style(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: font(size),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

pub(crate) fn text<DB: DrawingBackend>(
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

pub(crate) fn rect<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    a: (i32, i32),
    b: (i32, i32),
    s: ShapeStyle,
) -> DrawResult<DB> {
    root.draw(&Rectangle::new([a, b], s))
}

pub(crate) fn line<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    pts: Vec<(i32, i32)>,
    s: ShapeStyle,
) -> DrawResult<DB> {
    root.draw(&PathElement::new(pts, s))
}

/// Diagonal hatching inside a rectangle.
pub(crate) fn hatch<DB: DrawingBackend>(
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

pub(crate) fn arrow_head<DB: DrawingBackend>(
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
