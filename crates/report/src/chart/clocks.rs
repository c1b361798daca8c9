//! The clock panel: each node's wall clock minus true time over the window.

use crate::chart_model::TimelineModel;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use splitbrain_engine::SimTime;

use super::canvas::{line, rect, style, text, Cv, DrawResult, GREY, INK, TONES};
use super::layout::{fmt_secs, nice_step, Layout, CLOCK_H};

pub(crate) fn draw_clocks<DB: DrawingBackend>(
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
