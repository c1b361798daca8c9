//! Where everything goes: the true-time window and its x scale, the ticks, the arrows kept
//! after hiding and thinning, the label rows above the lanes, each lane's y, and the legend.
//! Every layer reads its geometry from one [`Layout`] built from the model and the options.

use crate::chart_model::{Arrow, BandKind, LaneGroup, MarkKind, TimelineModel};
use plotters::prelude::*;
use splitbrain_engine::SimTime;
use std::collections::BTreeMap;

use super::canvas::{text_width, GREY, KIND_TONES};
use super::ChartError;
use super::ChartOptions;
use crate::bulk::bulk_kind;

// ---- layout ----
pub(crate) const LANE_H: i32 = 56;
pub(crate) const GROUP_H: i32 = 18;
pub(crate) const LEFT: i32 = 150;
pub(crate) const RIGHT: i32 = 30;
pub(crate) const LABEL_ROW_H: i32 = 16;
pub(crate) const CLOCK_H: i32 = 170;

/// A label above the lanes (violation or network rule) placed on a row.
pub(crate) struct TopLabel {
    pub(crate) x0: i32,
    pub(crate) x1: i32,
    pub(crate) row: i32,
    pub(crate) text: String,
    pub(crate) violation: bool,
}

pub(crate) struct Layout {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) from: SimTime,
    pub(crate) to: SimTime,
    pub(crate) plot_x0: i32,
    pub(crate) plot_x1: i32,
    /// Top of each lane.
    pub(crate) lane_y: Vec<i32>,
    /// Group headings: (y, title).
    pub(crate) groups: Vec<(i32, &'static str)>,
    pub(crate) lanes_top: i32,
    pub(crate) lanes_bottom: i32,
    pub(crate) title_notes: Vec<String>,
    pub(crate) top_labels: Vec<TopLabel>,
    pub(crate) labels_top: i32,
    pub(crate) arrows: Vec<Arrow>,
    pub(crate) clocks: bool,
    pub(crate) clock_top: i32,
    pub(crate) legend_top: i32,
    pub(crate) legend_rows: Vec<Vec<(i32, LegendItem)>>,
    /// Message kinds drawn: name, colour, faint.
    pub(crate) kinds: Vec<(String, RGBColor, bool)>,
    /// Time ticks in the window (a nice step, about 12 of them).
    pub(crate) ticks: Vec<SimTime>,
    /// Decimals the tick labels need.
    pub(crate) decimals: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum LegendItem {
    Leader,
    Holds,
    Stale,
    TrueHold,
    Grant,
    Key,
    Validity,
    Paused,
    Crashed,
    Unavailable,
    Partition,
    Cut,
    Blocked,
    Dropped,
    Accepted,
    Duplicate,
    Rejected,
    Violation,
    ClockStep,
    /// A message kind, by index into `Layout::kinds`.
    Kind(usize),
}

impl LegendItem {
    pub(crate) fn label(self, kinds: &[(String, RGBColor, bool)]) -> String {
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

    pub(crate) fn text(self) -> &'static str {
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
            LegendItem::Blocked => "one-way block (sender \u{2192} receiver)",
            LegendItem::Unavailable => "restarted, not yet answering (restart delay)",
            LegendItem::Duplicate => "duplicate write accepted, no effect",
            LegendItem::Dropped => "dropped message",
            LegendItem::Accepted => "write accepted (token)",
            LegendItem::Rejected => "write rejected (token)",
            LegendItem::Violation => "invariant violated",
            LegendItem::ClockStep => "wall clock step",
        }
    }
}

impl Layout {
    pub(crate) fn new(model: &TimelineModel, opts: &ChartOptions) -> Result<Layout, ChartError> {
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
        // A run cut short says so first: what is not drawn after its end never ran.
        notes.extend(model.stop_note());
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
            let kept = |k: &str| opts.keep_kinds.iter().any(|x| x.eq_ignore_ascii_case(k));
            for (kind, c) in by_count.into_iter().filter(|(k, _)| !kept(k)) {
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
        for (_, x0, x1, label) in net_labels(model, from, to, &px, plot_x1 - plot_x0 - 8) {
            wanted.push((x0, x1, label, false));
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
                BandKind::Unavailable => LegendItem::Unavailable,
            });
        }
        for m in &model.marks {
            if !in_win(m.t, m.t) {
                continue;
            }
            legend.push(match m.kind {
                MarkKind::ValidityEnd => LegendItem::Validity,
                MarkKind::WriteAccepted { applied: true, .. } => LegendItem::Accepted,
                MarkKind::WriteAccepted { applied: false, .. } => LegendItem::Duplicate,
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
                if p.blocked.is_some() {
                    legend.push(LegendItem::Blocked);
                }
            }
        }
        // Message kinds: each its colour; the most frequent kind, if it is most of the
        // traffic (heartbeats), faint so the rare kinds (elections, grants) stand out.
        // Colours (and faintness) are the run's, so a kind has one colour in every chart of
        // the run and in its browser view, whatever the window shows.
        let present: std::collections::BTreeSet<&str> =
            arrows.iter().map(|a| a.kind.as_str()).collect();
        // However many kinds there are, each keeps its colour and its legend entry: the view
        // colours a kind the same, so the PNG and the page agree (the legend wraps rows).
        let kinds: Vec<(String, RGBColor, bool)> = kind_colours(&model.arrows)
            .into_iter()
            .filter(|k| present.contains(k.0.as_str()))
            .collect();
        for i in 0..kinds.len() {
            legend.push(LegendItem::Kind(i));
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
        let (ticks, decimals) = time_ticks(from, to);

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
            legend_rows,
            kinds,
            ticks,
            decimals,
        })
    }

    pub(crate) fn x(&self, t: SimTime) -> i32 {
        let t = t.max(self.from).min(self.to);
        let f = (t.0 - self.from.0) as f64 / (self.to.0 - self.from.0) as f64;
        self.plot_x0 + (f * (self.plot_x1 - self.plot_x0) as f64).round() as i32
    }

    /// Unclamped x for interpolation.
    pub(crate) fn xf(&self, t: SimTime) -> f64 {
        let f = (t.0 as f64 - self.from.0 as f64) / (self.to.0 - self.from.0) as f64;
        self.plot_x0 as f64 + f * (self.plot_x1 - self.plot_x0) as f64
    }

    pub(crate) fn lane_mid(&self, lane: usize) -> i32 {
        self.lane_y[lane] + LANE_H / 2
    }

    /// Top and bottom of the belief band in a lane.
    pub(crate) fn band_y(&self, lane: usize) -> (i32, i32) {
        (self.lane_y[lane] + 12, self.lane_y[lane] + 34)
    }
}

/// The labels of the network rules in the window: `(first rule's index in model.net, x0, x1,
/// text)`. Links cut or blocked
/// close together (starts within 160 px) and healed together get one label listing them
/// ("one-way blocks (\u{00d7}12): n1\u{2192}n2, n1\u{2192}n3, \u{2026}"), cut to `max_w` px, so twelve
/// blocks do not stack twelve rows of labels whose brackets cross each other's text.
pub(crate) fn net_labels(
    model: &TimelineModel,
    from: SimTime,
    to: SimTime,
    px: &dyn Fn(SimTime) -> i32,
    max_w: i32,
) -> Vec<(usize, i32, i32, String)> {
    // (first index, x0, x1, end, kind: 0 partition / 1 cut / 2 block, the links)
    let mut groups: Vec<(usize, i32, i32, SimTime, u8, Vec<String>)> = Vec::new();
    for (i, p) in model.net.iter().enumerate() {
        if p.to < from || p.from > to {
            continue;
        }
        let (x0, x1) = (px(p.from.max(from)), px(p.to.min(to)));
        let kind = match (p.partition, p.blocked.is_some()) {
            (true, _) => 0,
            (false, false) => 1,
            (false, true) => 2,
        };
        let link = p
            .label
            .trim_start_matches("link ")
            .trim_end_matches(" blocked")
            .trim_end_matches(" cut")
            .replace(' ', "");
        match groups.last_mut() {
            Some(g) if kind != 0 && g.4 == kind && g.3 == p.to && x0 - g.1 < 160 => {
                g.5.push(link);
            }
            _ => groups.push((
                i,
                x0,
                x1,
                p.to,
                kind,
                // A rule alone keeps its own words ("link a \u{2194} b cut").
                vec![p.label.clone(), link],
            )),
        }
    }
    groups
        .into_iter()
        .map(|(i, x0, x1, _, kind, links)| {
            // links[0] is the first rule's own label, the rest each rule's link in short.
            let (own, links) = (&links[0], &links[1..]);
            let text = match (kind, links.len()) {
                (0, _) | (_, 1) => own.clone(),
                (k, n) => {
                    let head = if k == 1 {
                        format!("links cut (\u{00d7}{n}): ")
                    } else {
                        format!("one-way blocks (\u{00d7}{n}): ")
                    };
                    let mut text = head;
                    for (i, l) in links.iter().enumerate() {
                        let sep = if i == 0 { "" } else { ", " };
                        let rest = n - i;
                        let more = format!("{sep}\u{2026} +{rest} more");
                        let candidate = format!("{text}{sep}{l}");
                        let tail = if i + 1 < n {
                            format!(", \u{2026} +{} more", rest - 1)
                        } else {
                            String::new()
                        };
                        if text_width(&format!("{candidate}{tail}"), 12.0) + 8 > max_w {
                            text.push_str(&more);
                            break;
                        }
                        text = candidate;
                    }
                    text
                }
            };
            (i, x0, x1, text)
        })
        .collect()
}

pub(crate) fn counts_len(arrows: &[Arrow]) -> usize {
    let mut kinds: Vec<&str> = arrows.iter().map(|a| a.kind.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    kinds.len()
}

pub(crate) fn fmt_secs(ns: i128, decimals: usize) -> String {
    format!("{:.*}", decimals, ns as f64 / 1e9)
}

/// Nice tick step (1, 2, 5 x 10^k) for a range, aiming at about `target` ticks.
pub(crate) fn nice_step(range: f64, target: f64) -> f64 {
    let raw = range / target;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw {
            return m * mag;
        }
    }
    10.0 * mag
}

/// Ticks at a nice step (1, 2, 5 x 10^k s) over `[from, to]`, and the decimals their labels need.
pub(crate) fn time_ticks(from: SimTime, to: SimTime) -> (Vec<SimTime>, usize) {
    let range_ns = (to.0 - from.0) as f64;
    let step = nice_step(range_ns / 1e9, 12.0);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let step_ns = (step * 1e9).round() as u64;
    let mut tick = from.0.div_ceil(step_ns.max(1)) * step_ns.max(1);
    let mut ticks = Vec::new();
    while tick <= to.0 {
        ticks.push(SimTime(tick));
        tick += step_ns.max(1);
    }
    (ticks, decimals)
}

/// Each message kind's colour, in name order (so a kind keeps its colour across charts of a
/// run): `(kind, colour, faint)`, colours from [`KIND_TONES`] (twelve distinct, then they
/// repeat). The most frequent kind, when it is bulk traffic, is faint grey so the rare kinds
/// (elections, grants) stand out, and the HTML view starts with it unticked: bulk is over
/// three quarters of the traffic (heartbeats), or over half of it in at least [`BULK_ARROWS`](crate::bulk::BULK_ARROWS)
/// arrows (Raft's APPEND_ENTRIES, 62% of lesson 21b's 2531 messages, would otherwise be
/// drawn in colour and ticked). A few messages stay in colour even as a majority: a lesson's point, like ten
/// ELECTION messages against six ANSWERs.
pub(crate) fn kind_colours(arrows: &[Arrow]) -> Vec<(String, RGBColor, bool)> {
    let mut kind_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for a in arrows {
        *kind_counts.entry(a.kind.as_str()).or_default() += 1;
    }
    let bulk = bulk_kind(&kind_counts);
    let kind_tones = KIND_TONES;
    let mut kinds: Vec<(String, RGBColor, bool)> = Vec::new();
    let mut tone_i = 0;
    // Legend and colours in name order, so a kind keeps its colour across charts of a run.
    for k in kind_counts.into_keys() {
        let faint = bulk == Some(k);
        let c = if faint {
            GREY
        } else {
            tone_i += 1;
            kind_tones[(tone_i - 1) % kind_tones.len()]
        };
        kinds.push((k.to_string(), c, faint));
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrows(counts: &[(&str, usize)]) -> Vec<Arrow> {
        let mut v = Vec::new();
        for (k, n) in counts {
            for _ in 0..*n {
                v.push(Arrow {
                    from: 0,
                    to: 1,
                    sent: SimTime(0),
                    end: SimTime(1),
                    kind: k.to_string(),
                    dropped: false,
                    id: 0,
                });
            }
        }
        v
    }

    /// The palette has more than six colours, so the seventh kind does not take the first's
    /// (APPEND_ACK, RAFT_KEPT_ALIVE and WRITE are told apart in lesson 21b).
    #[test]
    fn twelve_kinds_get_twelve_colours() {
        let names: Vec<String> = (0..12).map(|i| format!("K{i:02}")).collect();
        let counts: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 3)).collect();
        let kinds = kind_colours(&arrows(&counts));
        let mut colours: Vec<(u8, u8, u8)> =
            kinds.iter().map(|k| (k.1 .0, k.1 .1, k.1 .2)).collect();
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), 12, "{kinds:?}");
        assert!(kinds.iter().all(|k| !k.2));
    }

    /// Nine kinds (more than eight) keep their own colours and legend entries in the PNG,
    /// the colours the view gives them: none falls to one neutral colour, so a kind reads the
    /// same in the PNG and in the page.
    #[test]
    fn many_kinds_keep_the_views_colours() {
        use crate::chart_model::Lane;
        use splitbrain_check::Role;
        let names: Vec<String> = (0..9).map(|i| format!("K{i}")).collect();
        let counts: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 2)).collect();
        let lane = |i: u32| Lane {
            node: splitbrain_engine::NodeId(i),
            name: format!("n{i}"),
            role: Role::Bully,
            group: LaneGroup::Election,
        };
        let model = TimelineModel {
            name: "kinds".into(),
            seed: 0,
            end: SimTime(10),
            lanes: vec![lane(0), lane(1)],
            bands: Vec::new(),
            marks: Vec::new(),
            arrows: arrows(&counts),
            net: Vec::new(),
            violations: Vec::new(),
            clocks: Vec::new(),
            stopped: None,
        };
        let l = Layout::new(&model, &ChartOptions::default()).unwrap();
        assert_eq!(l.kinds, kind_colours(&model.arrows));
        let legend: Vec<LegendItem> = l.legend_rows.iter().flatten().map(|x| x.1).collect();
        for i in 0..9 {
            assert!(legend.contains(&LegendItem::Kind(i)), "{legend:?}");
        }
    }

    /// A kind that is most of the traffic but not three quarters of it (Raft's
    /// APPEND_ENTRIES, 62% in lesson 21b) is not drawn in colour and starts unticked in the
    /// view.
    #[test]
    fn a_kind_that_is_most_of_many_messages_is_faint() {
        let faint = |counts: &[(&str, usize)]| -> Vec<String> {
            kind_colours(&arrows(counts))
                .into_iter()
                .filter(|k| k.2)
                .map(|k| k.0)
                .collect()
        };
        let raft = [
            ("APPEND_ENTRIES", 1572),
            ("APPEND_ACK", 793),
            ("RAFT_ACQUIRE", 81),
        ];
        assert_eq!(faint(&raft), ["APPEND_ENTRIES"]);
        assert_eq!(faint(&[("HEARTBEAT", 40), ("ELECTION", 3)]), ["HEARTBEAT"]);
        // A few messages stay in colour as a majority; half is not most.
        assert!(faint(&[("ELECTION", 10), ("ANSWER", 6)]).is_empty());
        assert!(faint(&[("REPLY", 260), ("SET", 130), ("EVAL", 130)]).is_empty());
    }
}
