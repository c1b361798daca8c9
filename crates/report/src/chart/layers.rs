//! The layers of a timeline chart, drawn in order over one [`Layout`]: title, lanes, network
//! shading, grid, faults, beliefs, truth, pause labels, violations, messages, markers, axis,
//! clock panel, legend. Each layer is a function of the model and the layout only.

use crate::chart_model::{role_label, Arrow, BandKind, MarkKind, TimelineModel};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontFamily, FontStyle};
use splitbrain_engine::SimTime;
use std::collections::BTreeMap;

use super::canvas::{
    arrow_head, hatch, line, rect, style, text, text_on, text_width, tone, Cv, DrawResult, BLUE,
    GREEN, GREY, INK, LIGHT, ORANGE, PURPLE, SKY, VERMILLION, VIOLATION,
};
use super::clocks::draw_clocks;
use super::layout::{fmt_secs, Layout, LegendItem, GROUP_H, LABEL_ROW_H, LANE_H};

/// The tint of a cut or blocked link: a neutral slate, so it cannot be read as the red of a
/// violation (two pinkish tints would be told apart by no one).
pub(crate) const CUT: RGBColor = RGBColor(70, 90, 120);

/// Draws every layer, bottom to top.
pub(crate) fn draw<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    layer_title(root, model, l)?;
    layer_lanes(root, model, l)?;
    layer_net(root, model, l)?;
    layer_grid(root, model, l)?;
    layer_faults(root, model, l)?;
    layer_beliefs(root, model, l)?;
    layer_truth(root, model, l)?;
    layer_pause_labels(root, model, l)?;
    layer_violations(root, model, l)?;
    layer_arrows(root, model, l)?;
    layer_marks(root, model, l)?;
    layer_axis(root, model, l)?;
    if l.clocks {
        draw_clocks(root, model, l, &l.ticks, l.decimals)?;
    }
    layer_legend(root, model, l)?;
    Ok(())
}

/// The title (scenario and seed), the window, and notes on what was left out.
fn layer_title<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
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
    Ok(())
}

/// Group headings, alternate lane shading, lane names and roles.
fn layer_lanes<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    let (px0, px1) = (l.plot_x0, l.plot_x1);
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
    Ok(())
}

/// Network rules: each partition side tinted per lane, a cut or blocked link on its two lanes.
fn layer_net<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    let (px0, px1) = (l.plot_x0, l.plot_x1);
    let (top, bottom) = (l.lanes_top, l.lanes_bottom);
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
                CUT
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
        // A one-way block: an arrow from the sender's lane to the receiver's, ending in a bar
        // (nothing gets through that way); blocks starting together are set side by side.
        if let Some((a, b)) = p.blocked {
            let k = model
                .net
                .iter()
                .take_while(|q| !std::ptr::eq(*q, p))
                .filter(|q| q.blocked.is_some() && l.x(q.from) == x0)
                .count() as i32;
            let bx = (x0 + 6 + 7 * k).min(x1.max(x0 + 6));
            let (ya, yb) = (l.lane_mid(a), l.lane_mid(b));
            let dir = if yb > ya { 1 } else { -1 };
            let head = yb - dir * 6;
            line(root, vec![(bx, ya), (bx, head)], CUT.stroke_width(2))?;
            arrow_head(
                root,
                (bx as f64, ya as f64),
                (bx as f64, head as f64),
                CUT.stroke_width(2),
            )?;
            line(
                root,
                vec![(bx - 5, yb - dir * 2), (bx + 5, yb - dir * 2)],
                CUT.stroke_width(3),
            )?;
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
    Ok(())
}

/// Vertical grid lines at the time ticks.
fn layer_grid<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    _model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    let (top, bottom) = (l.lanes_top, l.lanes_bottom);
    // Time grid.
    for t in &l.ticks {
        let x = l.x(*t);
        line(
            root,
            vec![(x, top), (x, bottom)],
            RGBColor(235, 235, 235).stroke_width(1),
        )?;
    }
    Ok(())
}

/// Crashes and pauses, under the beliefs so the belief labels stay readable.
fn layer_faults<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
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
            BandKind::Unavailable => {
                rect(
                    root,
                    (x0, y + 2),
                    (x1, y + LANE_H - 2),
                    RGBColor(160, 160, 160).mix(0.30).filled(),
                )?;
                hatch(
                    root,
                    (x0, y + 2),
                    (x1, y + LANE_H - 2),
                    10,
                    RGBColor(120, 120, 120).mix(0.5).stroke_width(1),
                )?;
                rect(
                    root,
                    (x0, y + 2),
                    (x1, y + LANE_H - 2),
                    RGBColor(120, 120, 120).stroke_width(1),
                )?;
                let label = format!(
                    "unavailable {} (restart delay)",
                    splitbrain_engine::SimDuration(b.to.0 - b.from.0)
                );
                for t in [label.as_str(), "unavailable"] {
                    if text_width(t, 12.0) + 10 < x1 - x0 {
                        let ly = y + LANE_H - 9;
                        let w = text_width(t, 12.0);
                        rect(root, (x0 + 3, ly - 7), (x0 + w + 7, ly + 6), WHITE.filled())?;
                        text(
                            root,
                            t,
                            (x0 + 5, ly),
                            &style(12.0, INK, HPos::Left, VPos::Center),
                        )?;
                        break;
                    }
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
    Ok(())
}

/// Beliefs (leader, holds) and server state (grants, keys), labelled with term or token.
fn layer_beliefs<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    // Beliefs and server state.
    for b in &model.bands {
        if b.to < l.from || b.from > l.to {
            continue;
        }
        let (x0, x1) = (l.x(b.from), l.x(b.to).max(l.x(b.from) + 2));
        let (by0, by1) = l.band_y(b.lane);
        let Some((fill, label, short)) = band_look(&b.kind) else {
            continue;
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
        } else if x1 - x0 > 14 && text_width(&short, 11.0) + 4 < x1 - x0 {
            text(
                root,
                &short,
                (x0 + 2, (by0 + by1) / 2),
                &style(11.0, text_on(fill), HPos::Left, VPos::Center),
            )?;
        }
    }
    Ok(())
}

/// The stale part of each belief, and the strip under it where the servers truly granted it.
fn layer_truth<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
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
    Ok(())
}

/// Pause durations, on top of the beliefs.
fn layer_pause_labels<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
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
    Ok(())
}

/// Violations: a translucent band over every lane, outlines on the lanes involved, and the
/// labels (violations and network rules) above the lanes.
fn layer_violations<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    let (px0, px1) = (l.plot_x0, l.plot_x1);
    let (top, bottom) = (l.lanes_top, l.lanes_bottom);
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
    // Brackets first, from each label down to the lanes; then the labels on a white ground,
    // so a bracket passing a lower row never runs through that row's text.
    for lab in &l.top_labels {
        let y = l.labels_top + LABEL_ROW_H * lab.row;
        let c = if lab.violation { VIOLATION } else { GREY };
        line(
            root,
            vec![(lab.x0, y + LABEL_ROW_H - 1), (lab.x0, top)],
            c.mix(0.6).stroke_width(1),
        )?;
    }
    for lab in &l.top_labels {
        let y = l.labels_top + LABEL_ROW_H * lab.row;
        let c = if lab.violation { VIOLATION } else { GREY };
        let w = text_width(&lab.text, 12.0) + 8;
        let lx = lab.x0.min(px1 - w).max(px0);
        rect(
            root,
            (lx - 1, y + 1),
            (lx + w - 6, y + LABEL_ROW_H - 1),
            WHITE.filled(),
        )?;
        text(
            root,
            &lab.text,
            (lx, y + LABEL_ROW_H / 2),
            &style(12.0, c, HPos::Left, VPos::Center),
        )?;
        let _ = lab.x1;
    }
    Ok(())
}

/// Messages, send to handling (or drop), coloured by kind; faint kinds first.
fn layer_arrows<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    _model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    let (px0, px1) = (l.plot_x0, l.plot_x1);
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
    Ok(())
}

/// Point markers: believed validity ends, accepted and rejected writes, clock steps.
fn layer_marks<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
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
            MarkKind::WriteAccepted { token, writer, .. }
            | MarkKind::WriteRejected { token, writer } => {
                let rejected = matches!(m.kind, MarkKind::WriteRejected { .. });
                let duplicate = matches!(m.kind, MarkKind::WriteAccepted { applied: false, .. });
                let label = match token {
                    Some(t) if rejected => format!("{t} rejected"),
                    Some(t) if duplicate => format!("{t} duplicate, no effect"),
                    Some(t) => t.to_string(),
                    None if rejected => format!("{writer} rejected"),
                    None if duplicate => format!("{writer} duplicate, no effect"),
                    None => writer.clone(),
                };
                if rejected {
                    root.draw(&Cross::new((x, mid), 6, VERMILLION.stroke_width(3)))?;
                } else if duplicate {
                    // A hollow ring: accepted, but it changed nothing (an applied job again).
                    root.draw(&Circle::new((x, mid), 6, WHITE.filled()))?;
                    root.draw(&Circle::new((x, mid), 6, GREY.stroke_width(2)))?;
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
    Ok(())
}

/// The frame and the true-time axis.
fn layer_axis<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    _model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
    let (px0, px1) = (l.plot_x0, l.plot_x1);
    let (top, bottom) = (l.lanes_top, l.lanes_bottom);
    // Frame and x axis.
    rect(root, (px0, top), (px1, bottom), GREY.stroke_width(1))?;
    for t in &l.ticks {
        let x = l.x(*t);
        line(
            root,
            vec![(x, bottom), (x, bottom + 5)],
            INK.stroke_width(1),
        )?;
        text(
            root,
            &fmt_secs(t.0 as i128, l.decimals),
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
    Ok(())
}

/// The legend: one swatch and label per item present in the window.
fn layer_legend<DB: DrawingBackend>(
    root: &Cv<'_, DB>,
    _model: &TimelineModel,
    l: &Layout,
) -> DrawResult<DB> {
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
        LegendItem::Cut => rect(root, a, b, CUT.mix(0.16).filled())?,
        LegendItem::Blocked => {
            line(root, vec![(x + 4, y), (x + 24, y)], CUT.stroke_width(2))?;
            arrow_head(
                root,
                (x as f64 + 4.0, y as f64),
                (x as f64 + 24.0, y as f64),
                CUT.stroke_width(2),
            )?;
            line(
                root,
                vec![(x + 28, y - 5), (x + 28, y + 5)],
                CUT.stroke_width(3),
            )?;
        }
        LegendItem::Unavailable => {
            rect(root, a, b, RGBColor(160, 160, 160).mix(0.30).filled())?;
            hatch(
                root,
                a,
                b,
                10,
                RGBColor(120, 120, 120).mix(0.5).stroke_width(1),
            )?;
            rect(root, a, b, RGBColor(120, 120, 120).stroke_width(1))?;
        }
        LegendItem::Duplicate => {
            root.draw(&Circle::new((x + 16, y), 6, WHITE.filled()))?;
            root.draw(&Circle::new((x + 16, y), 6, GREY.stroke_width(2)))?;
        }
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

/// How a belief or server band looks: its fill, its full label and its short label (term or
/// token, for a narrow band); `None` for bands drawn otherwise (pauses, crashes, stale parts,
/// truth strips). Shared by the static chart and the browser view.
pub(crate) fn band_look(kind: &BandKind) -> Option<(RGBColor, String, String)> {
    let (fill, label) = match kind {
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
        _ => return None,
    };
    let short = match kind {
        BandKind::Leader { term, .. } => format!("t{term}"),
        BandKind::Holds { token: Some(t), .. } | BandKind::Grant { token: t, .. } => t.to_string(),
        // A narrow key band still says whose value it holds.
        BandKind::Key { holder, .. } => holder.clone().unwrap_or_else(|| "?".into()),
        _ => String::new(),
    };
    Some((fill, label, short))
}

#[cfg(test)]
mod tests {
    use super::{CUT, VIOLATION};

    /// The cut-link tint and the violation's have different hues.
    #[test]
    fn cut_links_and_violations_have_different_hues() {
        let hue = |c: plotters::style::RGBColor| {
            let (r, g, b) = (c.0 as f64, c.1 as f64, c.2 as f64);
            let (max, min) = (r.max(g).max(b), r.min(g).min(b));
            let d = max - min;
            let h = if max == r {
                ((g - b) / d).rem_euclid(6.0)
            } else if max == g {
                (b - r) / d + 2.0
            } else {
                (r - g) / d + 4.0
            };
            h * 60.0
        };
        let diff = (hue(CUT) - hue(VIOLATION)).abs();
        assert!(
            diff.min(360.0 - diff) > 90.0,
            "{} vs {}",
            hue(CUT),
            hue(VIOLATION)
        );
    }
}
