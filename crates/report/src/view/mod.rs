//! The browser view: one self-contained HTML page per run (`splitbrain view TRACE.jsonl -o
//! run.html`). The page draws the same [`TimelineModel`] as the static charts, with the same
//! lane geometry, palette, band labels and message-kind colours (taken from the chart's
//! layers), and adds what a class needs to step through a run: a cursor on the run's steps
//! (faults, observations, derived facts, violations) that shows, at that instant, each node's
//! local clocks and beliefs; zoom and pan; message kinds that can be hidden; details and
//! causes of a clicked event or violation.
//!
//! The model is embedded as JSON in the page; the JavaScript and CSS are inlined (no network,
//! no CDN). The page is a pure function of the run, so regenerating it gives identical bytes.
//!
//! The page honours a URL hash for scripted use (the browser test uses it): `#step=N` puts
//! the cursor on step N; `keys=Right,Right,Left` presses keys after load; `click=ID` clicks
//! the element with that id (e.g. `violation-0`); `kinds=ALL` shows every message kind;
//! `zoom=FROM_NS-TO_NS` sets the window. Parts are joined with `&`.

use crate::chart::{
    band_look, kind_colours, tone, BLUE, GREEN, GREY, GROUP_H, INK, LANE_H, ORANGE, PURPLE, SKY,
    VERMILLION, VIOLATION,
};
use crate::chart_model::{role_label, BandKind, MarkKind, ModelInput, TimelineModel};
use crate::event::Event;
use crate::narrate::{derived_facts, describe_obs, fault_cause};
use plotters::style::RGBColor;
use serde::Serialize;
use splitbrain_engine::{Fault, NodeId, SimDuration, SimTime};
use std::collections::BTreeMap;

static VIEW_JS: &str = include_str!("view.js");
static VIEW_CSS: &str = include_str!("view.css");

/// Everything the page draws and steps through (serialized into the page as JSON).
#[derive(Clone, Debug, Serialize)]
pub struct ViewModel {
    /// Scenario name.
    pub name: String,
    /// Run seed.
    pub seed: u64,
    /// End of the run, true time ns.
    pub end: u64,
    /// The window the page opens on, true time ns (the lesson's `chart` window, or the run).
    pub window: (u64, u64),
    /// Lane geometry shared with the static chart, px.
    pub geometry: Geometry,
    /// Colours shared with the static chart (`#rrggbb`).
    pub palette: BTreeMap<&'static str, String>,
    /// Lanes, top to bottom.
    pub lanes: Vec<ViewLane>,
    /// Per lane, its node's clocks as pieces, the first at 0 ([`ViewClockPiece`]). The page
    /// computes a node's monotonic and wall readings at the cursor from them, so the page
    /// grows with the run's clock faults rather than with nodes times steps.
    pub clocks: Vec<Vec<ViewClockPiece>>,
    /// Bands (beliefs, truth, server state, pauses, crashes).
    pub bands: Vec<ViewBand>,
    /// Point markers.
    pub marks: Vec<ViewMark>,
    /// Messages.
    pub arrows: Vec<ViewArrow>,
    /// Message kinds with their colour and whether they are shown when the page opens.
    pub kinds: Vec<ViewKind>,
    /// Network rule periods.
    pub net: Vec<ViewNet>,
    /// Violations with their evidence and contributing faults.
    pub violations: Vec<ViewViolation>,
    /// The steps the cursor visits, in true-time order.
    pub steps: Vec<Step>,
    /// The note of a run stopped at its event limit (as the chart's), shown in the header.
    pub stopped: Option<String>,
}

/// Lane geometry, px (the static chart's).
#[derive(Clone, Debug, Serialize)]
pub struct Geometry {
    /// Height of a lane.
    pub lane_h: i32,
    /// Height of a group heading.
    pub group_h: i32,
    /// Top of a belief band within its lane.
    pub band_top: i32,
    /// Bottom of a belief band within its lane.
    pub band_bottom: i32,
    /// Width of the label column on the left.
    pub left: i32,
}

/// A lane: one node, or one thread of a node that runs several ([`ViewModel::split_threads`]).
#[derive(Clone, Debug, Serialize)]
pub struct ViewLane {
    /// The lane's name: the node's, or `node · thread k`.
    pub name: String,
    /// The node's name (a fault added on the lane is the node's).
    pub node: String,
    /// Role, in words.
    pub role: String,
    /// Group heading.
    pub group: &'static str,
}

/// A band `[from, to)` ns in a lane.
#[derive(Clone, Debug, Serialize)]
pub struct ViewBand {
    /// Lane index.
    pub lane: usize,
    /// Start, true time ns.
    pub from: u64,
    /// End, true time ns.
    pub to: u64,
    /// `leader`, `holds`, `stale`, `truth`, `grant`, `key`, `paused` or `down`.
    pub kind: &'static str,
    /// Label (as on the static chart).
    pub label: String,
    /// Short label for a narrow band.
    pub short: String,
    /// Fill colour.
    pub fill: String,
    /// Whether it is a belief of the node (leader or holds), shown in the cursor's table.
    pub belief: bool,
    /// The steps `[first, end)` at which the cursor's table shows it: a belief or stale part
    /// lasts through the steps of its last instant on its lane that come before the one that
    /// ends it (a paused holder's stale write comes before its give-up at the same instant).
    pub steps: (usize, usize),
}

/// A point marker.
#[derive(Clone, Debug, Serialize)]
pub struct ViewMark {
    /// Lane index.
    pub lane: usize,
    /// True time ns.
    pub t: u64,
    /// `validity`, `accepted`, `duplicate`, `rejected` or `clock_step`.
    pub kind: &'static str,
    /// Label.
    pub label: String,
    /// Colour.
    pub colour: String,
    /// The short text beside a write's mark, as on the static chart: its token (or writer),
    /// "rejected" or "duplicate, no effect".
    pub tag: Option<String>,
}

/// A message from send to handling (or drop).
#[derive(Clone, Debug, Serialize)]
pub struct ViewArrow {
    /// Sender lane.
    pub from: usize,
    /// Receiver lane.
    pub to: usize,
    /// Send time ns.
    pub sent: u64,
    /// Handling or drop time ns.
    pub end: u64,
    /// Message kind.
    pub kind: String,
    /// Dropped rather than delivered.
    pub dropped: bool,
    /// The message as the trace writes it (JSON), cut at [`PAYLOAD_CHARS`] characters.
    pub payload: String,
}

/// Longest payload text a message carries in the page, chars (a Raft append of many entries
/// is cut, with `…`).
pub const PAYLOAD_CHARS: usize = 400;

/// A message kind.
#[derive(Clone, Debug, Serialize)]
pub struct ViewKind {
    /// Kind name.
    pub name: String,
    /// Colour.
    pub colour: String,
    /// Number of messages of the kind.
    pub count: usize,
    /// Shown when the page opens: bulk traffic is not (see [`BULK_SHARE`]), unless the lesson's
    /// `chart.shown_kinds` names it.
    pub shown: bool,
}

/// A network rule in force over `[from, to)`.
#[derive(Clone, Debug, Serialize)]
pub struct ViewNet {
    /// Start ns.
    pub from: u64,
    /// End ns.
    pub to: u64,
    /// Per lane, its partition side, if any.
    pub sides: Vec<Option<usize>>,
    /// In words.
    pub label: String,
    /// A partition (else a cut or blocked link).
    pub partition: bool,
    /// A one-way block: sender and receiver lanes.
    pub blocked: Option<(usize, usize)>,
    /// The label above the lanes; `None` when this rule is listed in an earlier rule's label
    /// (links cut or blocked together share one label, as on the static chart).
    pub top_label: Option<String>,
}

/// A violation.
#[derive(Clone, Debug, Serialize)]
pub struct ViewViolation {
    /// Invariant name.
    pub invariant: String,
    /// Start ns.
    pub from: u64,
    /// End ns.
    pub to: u64,
    /// Lanes of the nodes involved.
    pub lanes: Vec<usize>,
    /// What went wrong, in a sentence.
    pub summary: String,
    /// The facts that prove it: `(t ns, node, text)`.
    pub evidence: Vec<(u64, String, String)>,
    /// Faults that contributed, in words.
    pub faults: Vec<String>,
    /// Per evidence line, the step it is (the step at its instant on its node's lane), if any.
    pub evidence_steps: Vec<Option<usize>>,
}

/// A step of the cursor: something that happened at true time `t`.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// True time ns.
    pub t: u64,
    /// The lane it happened on, if one.
    pub lane: Option<usize>,
    /// `fault`, `event`, `fact` or `violation`.
    pub what: &'static str,
    /// In words.
    pub text: String,
    /// What caused it, in words (the message or timer being handled, the pause woken from).
    pub cause: Option<String>,
    /// The step that caused it (the pause a resume ends), if one.
    pub cause_step: Option<usize>,
    /// The message whose handling caused it (an index into the arrows), if one.
    pub cause_arrow: Option<usize>,
}

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// One piece of a lane's clocks, as the page's script evaluates it (a
/// [`splitbrain_check::ClockPiece`]): `(from, origin, origin_mono, drift_ppm, wall_base)`,
/// true and local ns, ppm, and the wall base in Unix ns as a decimal string (a page's numbers
/// are doubles, exact only to 2^53). The script shows the wall reading as RFC 3339 UTC with
/// milliseconds, rounded half up (`2026-01-01T00:00:02.156Z`), the one time style of the
/// narration and the verdicts.
pub type ViewClockPiece = (u64, u64, u64, i64, String);

/// Every lane's clocks as pieces ([`ViewClockPiece`]), computed once from the record's clock
/// faults by [`splitbrain_check::WallClocks`] (docs/design.md, "Clocks"): the page's size
/// grows with the clock faults, not with nodes times steps.
fn clocks_of(
    model: &TimelineModel,
    record: &splitbrain_check::RunRecord,
) -> Vec<Vec<ViewClockPiece>> {
    let clocks = splitbrain_check::WallClocks::new(record);
    model
        .lanes
        .iter()
        .map(|l| {
            clocks
                .pieces(l.node)
                .into_iter()
                .map(|p| {
                    (
                        p.from.0,
                        p.origin.0,
                        p.origin_mono.0,
                        p.drift_ppm,
                        p.wall_base_ns.to_string(),
                    )
                })
                .collect()
        })
        .collect()
}

impl ViewModel {
    /// Builds the view of a run: its [`TimelineModel`] plus the cursor's steps.
    pub fn build(input: &ModelInput<'_>, window: Option<(SimTime, SimTime)>) -> ViewModel {
        let model = TimelineModel::build(input);
        let record = input.record;
        let names = &record.names;
        let lane_of: Vec<usize> = {
            let mut v = vec![0; names.len()];
            for (l, lane) in model.lanes.iter().enumerate() {
                if let Some(x) = v.get_mut(lane.node.index()) {
                    *x = l;
                }
            }
            v
        };
        let lane = |n: NodeId| lane_of.get(n.index()).copied();
        // Each delivered (or dropped) message's arrow, by message id and handling time.
        let arrow_of: BTreeMap<(u64, SimTime), usize> = model
            .arrows
            .iter()
            .enumerate()
            .map(|(i, a)| ((a.id, a.end), i))
            .collect();
        // Steps: faults, observations and resumptions in trace order, the derived facts
        // after the events of their instant, violations after both. A step's cause names
        // another step by its place in this list until the list is sorted.
        let mut steps: Vec<(SimTime, u8, Step)> = Vec::new();
        let mut kinds_of: BTreeMap<u64, (String, NodeId, SimTime)> = BTreeMap::new();
        let mut payloads: BTreeMap<u64, String> = BTreeMap::new();
        let mut handling: BTreeMap<NodeId, (SimTime, String, Option<usize>)> = BTreeMap::new();
        let mut paused_at: BTreeMap<NodeId, (SimTime, usize)> = BTreeMap::new();
        let mut accepted = crate::narrate::Acceptances::default();
        let mut idle = record.fault_effects.iter().map(|e| e.idle);
        // The cause of the fault step being made: the fault, named.
        let mut fault_named: Option<String> = None;
        for ev in input.events {
            let (t, node, what, text) = match ev {
                Event::Send {
                    id,
                    kind,
                    from,
                    t,
                    msg,
                    ..
                } => {
                    kinds_of.insert(*id, (kind.clone(), *from, *t));
                    payloads.insert(*id, payload_text(msg));
                    continue;
                }
                Event::Deliver { t, to, id, .. } => {
                    if let Some((kind, from, sent)) = kinds_of.get(id) {
                        handling.insert(
                            *to,
                            (
                                *t,
                                format!(
                                    "handling {kind} from {} (sent at {sent})",
                                    record.name(*from)
                                ),
                                arrow_of.get(&(*id, *t)).copied(),
                            ),
                        );
                    }
                    continue;
                }
                Event::Timer { t, node, .. } => {
                    handling.insert(
                        *node,
                        (
                            *t,
                            "one of its own timers fired (by its monotonic clock)".into(),
                            None,
                        ),
                    );
                    continue;
                }
                Event::Start { t, node } => {
                    handling.insert(*node, (*t, "its start".into(), None));
                    continue;
                }
                Event::Drop { .. } | Event::End { .. } => continue,
                Event::Resume { t, node } => {
                    let since = paused_at.remove(node);
                    let cause = since.map(|(p, _)| format!("its pause that began at {p}"));
                    handling.insert(
                        *node,
                        (
                            *t,
                            "waking from its pause: what queued up runs now".into(),
                            None,
                        ),
                    );
                    let text = match since {
                        Some((p, _)) => format!(
                            "{} resumes after a {} pause, unaware of it{}",
                            record.name(*node),
                            t.saturating_since(p),
                            lane(*node).map_or(String::new(), |l| still_believes(&model, l, *t))
                        ),
                        None => format!("{} resumes", record.name(*node)),
                    };
                    steps.push((
                        *t,
                        0,
                        Step {
                            t: t.0,
                            lane: lane(*node),
                            what: "event",
                            text,
                            cause,
                            cause_step: since.map(|(_, pid)| pid),
                            cause_arrow: None,
                        },
                    ));
                    continue;
                }
                Event::Fault { t, fault } => {
                    let node = match fault {
                        Fault::Crash { node }
                        | Fault::Restart { node }
                        | Fault::Pause { node, .. }
                        | Fault::ClockStep { node, .. }
                        | Fault::SetDrift { node, .. } => Some(*node),
                        _ => None,
                    };
                    let state = idle.next().flatten();
                    fault_named = Some(fault_cause(names, *t, fault));
                    match fault {
                        // A pause of a paused node extends the first pause: the resume
                        // names the pause that stopped it.
                        Fault::Pause { node, .. } if state.is_none() => {
                            paused_at.entry(*node).or_insert((*t, steps.len()));
                        }
                        Fault::Crash { node } => {
                            paused_at.remove(node);
                            accepted.crashed(*node)
                        }
                        Fault::Restart { node } if state.is_none() => {
                            handling.insert(*node, (*t, "its restart".into(), None));
                        }
                        _ => {}
                    }
                    (*t, node, "fault", fault.describe_applied(names, state))
                }
                // A follower's repeated acceptance of the same leader is not a step.
                Event::Observe { node, obs, .. } if !accepted.is_news(*node, obs) => continue,
                Event::Observe { t, node, obs } => (
                    *t,
                    Some(*node),
                    "event",
                    describe_obs(names, &record.name(*node), obs),
                ),
            };
            let (cause, cause_arrow) = match (what, node) {
                ("event", Some(n)) => handling
                    .get(&n)
                    .filter(|(at, _, _)| *at == t)
                    .map_or((None, None), |(_, c, a)| (Some(c.clone()), *a)),
                ("fault", _) => (fault_named.take(), None),
                _ => (None, None),
            };
            steps.push((
                t,
                0,
                Step {
                    t: t.0,
                    lane: node.and_then(lane),
                    what,
                    text,
                    cause,
                    cause_step: None,
                    cause_arrow,
                },
            ));
        }
        for (t, fact) in derived_facts(record) {
            steps.push((
                t,
                1,
                Step {
                    t: t.0,
                    lane: None,
                    what: "fact",
                    text: fact,
                    cause: Some("derived from the servers' truth, not reported by a node".into()),
                    cause_step: None,
                    cause_arrow: None,
                },
            ));
        }
        let mut violations = Vec::new();
        for v in input
            .report
            .results
            .iter()
            .flat_map(|r| r.verdict.violations())
        {
            let lanes: Vec<usize> = v
                .nodes
                .iter()
                .filter_map(|nm| names.iter().position(|x| x == nm))
                .filter_map(|i| lane_of.get(i).copied())
                .collect();
            let at = evident_at(v);
            steps.push((
                at,
                2,
                Step {
                    t: at.0,
                    lane: lanes.first().copied(),
                    what: "violation",
                    text: format!("{} VIOLATED: {}", v.invariant, v.summary),
                    cause: (!v.faults.is_empty()).then(|| v.faults.join("; ")),
                    cause_step: None,
                    cause_arrow: None,
                },
            ));
            violations.push(ViewViolation {
                invariant: v.invariant.to_string(),
                from: v.from.0,
                to: v.to.0,
                lanes,
                summary: v.summary.clone(),
                evidence: v
                    .evidence
                    .iter()
                    .map(|e| (e.t.0, e.node.clone(), e.text.clone()))
                    .collect(),
                faults: v.faults.clone(),
                evidence_steps: Vec::new(),
            });
        }
        // Stable: trace order within an instant, then facts, then violations.
        let mut order: Vec<usize> = (0..steps.len()).collect();
        order.sort_by_key(|&i| (steps[i].0, steps[i].1));
        let mut place = vec![0; steps.len()];
        for (new, &old) in order.iter().enumerate() {
            place[old] = new;
        }
        let mut slots: Vec<Option<(SimTime, u8, Step)>> = steps.into_iter().map(Some).collect();
        let steps: Vec<Step> = order
            .iter()
            .map(|&i| {
                let (_, _, mut s) = slots[i].take().expect("each step once");
                s.cause_step = s.cause_step.map(|c| place[c]);
                s
            })
            .collect();
        for v in &mut violations {
            v.evidence_steps = v
                .evidence
                .iter()
                .map(|(t, node, _)| {
                    let on = names
                        .iter()
                        .position(|n| n == node)
                        .and_then(|i| lane_of.get(i).copied());
                    steps
                        .iter()
                        .position(|s| s.t == *t && s.lane == on && s.what != "violation")
                        .or_else(|| steps.iter().position(|s| s.t == *t))
                })
                .collect();
        }

        let colours = kind_colours(&model.arrows);
        let total = model.arrows.len();
        let kinds = colours
            .iter()
            .map(|(k, c, _)| {
                let count = model.arrows.iter().filter(|a| a.kind == *k).count();
                ViewKind {
                    name: k.clone(),
                    colour: hex(*c),
                    count,
                    shown: !is_bulk(count, total, colours.len()),
                }
            })
            .collect();
        let bands = model
            .bands
            .iter()
            .map(|b| {
                let (fill, label, short) = band_look(&b.kind).unwrap_or_else(|| match &b.kind {
                    BandKind::Stale => (
                        VERMILLION,
                        "stale: servers no longer grant it".into(),
                        String::new(),
                    ),
                    BandKind::TrueHold { token } => (
                        INK,
                        match token {
                            Some(t) => format!("truly held at the lock servers (token {t})"),
                            None => "truly held at the lock servers".into(),
                        },
                        String::new(),
                    ),
                    BandKind::Paused => (
                        GREY,
                        format!("paused {}", SimDuration(b.to.0 - b.from.0)),
                        String::new(),
                    ),
                    BandKind::Unavailable => (
                        GREY,
                        format!(
                            "unavailable {} (restart delay): restarted, not yet answering",
                            SimDuration(b.to.0 - b.from.0)
                        ),
                        String::new(),
                    ),
                    _ => (GREY, "down".into(), String::new()),
                });
                ViewBand {
                    steps: band_steps(&steps, b),
                    lane: b.lane,
                    from: b.from.0,
                    to: b.to.0,
                    kind: match b.kind {
                        BandKind::Leader { .. } => "leader",
                        BandKind::Holds { .. } => "holds",
                        BandKind::Stale => "stale",
                        BandKind::TrueHold { .. } => "truth",
                        BandKind::Grant { .. } => "grant",
                        BandKind::Key { .. } => "key",
                        BandKind::Paused => "paused",
                        BandKind::Crashed => "down",
                        BandKind::Unavailable => "unavailable",
                    },
                    belief: matches!(b.kind, BandKind::Leader { .. } | BandKind::Holds { .. }),
                    label,
                    short,
                    fill: hex(fill),
                }
            })
            .collect();
        let marks = model
            .marks
            .iter()
            .map(|m| {
                let (kind, label, colour) = match &m.kind {
                    MarkKind::ValidityEnd => {
                        ("validity", "validity end the holder believed".into(), INK)
                    }
                    MarkKind::WriteAccepted {
                        writer,
                        token,
                        applied: false,
                    } => (
                        "duplicate",
                        match token {
                            Some(t) => format!(
                                "write of {writer} accepted as a duplicate, no effect (token {t})"
                            ),
                            None => format!("write of {writer} accepted as a duplicate, no effect"),
                        },
                        GREY,
                    ),
                    MarkKind::WriteAccepted { writer, token, .. } => (
                        "accepted",
                        match token {
                            Some(t) => format!("write of {writer} accepted (token {t})"),
                            None => format!("write of {writer} accepted"),
                        },
                        token.map_or(INK, tone),
                    ),
                    MarkKind::WriteRejected { writer, token } => (
                        "rejected",
                        match token {
                            Some(t) => format!("write of {writer} rejected (token {t})"),
                            None => format!("write of {writer} rejected"),
                        },
                        VERMILLION,
                    ),
                    MarkKind::ClockStep { delta_ns } => (
                        "clock_step",
                        format!(
                            "wall clock steps {}{}",
                            if *delta_ns < 0 { "-" } else { "+" },
                            SimDuration(delta_ns.unsigned_abs())
                        ),
                        PURPLE,
                    ),
                };
                let tag = match &m.kind {
                    MarkKind::WriteAccepted {
                        writer,
                        token,
                        applied,
                    } => Some(match (token, applied) {
                        (Some(t), true) => t.to_string(),
                        (Some(t), false) => format!("{t} duplicate, no effect"),
                        (None, true) => writer.clone(),
                        (None, false) => format!("{writer} duplicate, no effect"),
                    }),
                    MarkKind::WriteRejected { writer, token } => Some(match token {
                        Some(t) => format!("{t} rejected"),
                        None => format!("{writer} rejected"),
                    }),
                    _ => None,
                };
                ViewMark {
                    lane: m.lane,
                    t: m.t.0,
                    kind,
                    label,
                    colour: hex(colour),
                    tag,
                }
            })
            .collect();
        let palette: BTreeMap<&'static str, String> = [
            ("blue", BLUE),
            ("orange", ORANGE),
            ("green", GREEN),
            ("purple", PURPLE),
            ("sky", SKY),
            ("vermillion", VERMILLION),
            ("ink", INK),
            ("grey", GREY),
            ("violation", VIOLATION),
        ]
        .into_iter()
        .map(|(k, c)| (k, hex(c)))
        .collect();
        let end = model.end.0.max(1);
        // Network labels grouped as the static chart groups them over the whole run.
        let plot_w = (crate::ChartOptions::default().width as i32
            - crate::chart::LEFT
            - crate::chart::RIGHT)
            .max(1);
        let px = |t: SimTime| (t.0 as f64 / end as f64 * plot_w as f64).round() as i32;
        let net_top: BTreeMap<usize, String> =
            crate::chart::net_labels(&model, SimTime::ZERO, SimTime(end), &px, plot_w - 8)
                .into_iter()
                .map(|(i, _, _, text)| (i, text))
                .collect();
        let window = window
            .map(|(a, b)| (a.0.min(end), b.0.min(end)))
            .filter(|(a, b)| a < b)
            .unwrap_or((0, end));
        let mut view = ViewModel {
            name: model.name.clone(),
            seed: model.seed,
            end,
            window,
            geometry: Geometry {
                lane_h: LANE_H,
                group_h: GROUP_H,
                band_top: 12,
                band_bottom: 34,
                left: 150,
            },
            palette,
            lanes: model
                .lanes
                .iter()
                .map(|l| ViewLane {
                    name: l.name.clone(),
                    node: l.name.clone(),
                    role: role_label(l.role).to_string(),
                    group: l.group.title(),
                })
                .collect(),
            clocks: clocks_of(&model, record),
            bands,
            marks,
            arrows: model
                .arrows
                .iter()
                .map(|a| ViewArrow {
                    from: a.from,
                    to: a.to,
                    sent: a.sent.0,
                    end: a.end.0,
                    kind: a.kind.clone(),
                    dropped: a.dropped,
                    payload: payloads.get(&a.id).cloned().unwrap_or_default(),
                })
                .collect(),
            kinds,
            net: model
                .net
                .iter()
                .enumerate()
                .map(|(i, p)| ViewNet {
                    from: p.from.0,
                    to: p.to.0,
                    sides: p.sides.clone(),
                    label: p.label.clone(),
                    partition: p.partition,
                    blocked: p.blocked,
                    top_label: net_top.get(&i).cloned(),
                })
                .collect(),
            violations,
            steps,
            stopped: model.stop_note(),
        };
        view.split_threads();
        view
    }

    /// Gives each thread of a node that runs several (a worker's `threads`, whose holds the
    /// chart labels `lock (thread k)`) its own lane under the node's, named `node · thread k`:
    /// the thread's holds move there, with the stale parts and truth strips of those holds
    /// (each with the hold it overlaps most). Messages, writes, pauses
    /// and crashes stay on the node's lane (a node, not a thread, sends and stops); a thread's
    /// lane has the node's clocks and partition side.
    ///
    /// Long because every lane index of the model (bands, marks, arrows, network rules,
    /// violations, steps, clocks) is renumbered in one place, where the new order is made.
    fn split_threads(&mut self) {
        let threads: Vec<Vec<u32>> = (0..self.lanes.len())
            .map(|l| {
                let mut ts: Vec<u32> = self
                    .bands
                    .iter()
                    .filter(|b| b.lane == l && b.kind == "holds")
                    .filter_map(|b| thread_of(&b.label))
                    .collect();
                ts.sort_unstable();
                ts.dedup();
                ts
            })
            .collect();
        if threads.iter().all(|t| t.is_empty()) {
            return;
        }
        // New lanes: each old lane, then its threads' lanes; `new_of[old]` is its new index.
        let mut lanes = Vec::new();
        let mut clocks = Vec::new();
        let mut source = Vec::new();
        let mut new_of = Vec::new();
        for (l, lane) in self.lanes.iter().enumerate() {
            new_of.push(lanes.len());
            lanes.push(lane.clone());
            clocks.push(self.clocks[l].clone());
            source.push(l);
            for t in &threads[l] {
                lanes.push(ViewLane {
                    name: format!("{} \u{00b7} thread {t}", lane.name),
                    node: lane.node.clone(),
                    role: "thread".into(),
                    group: lane.group,
                });
                clocks.push(self.clocks[l].clone());
                source.push(l);
            }
        }
        let thread_lane = |l: usize, t: u32| {
            new_of[l]
                + 1
                + threads[l]
                    .iter()
                    .position(|x| *x == t)
                    .expect("a thread of l")
        };
        // Each thread's holds, by old lane: (from, to, new lane), to place stale and truth.
        let holds: Vec<(usize, u64, u64, usize)> = self
            .bands
            .iter()
            .filter(|b| b.kind == "holds")
            .filter_map(|b| {
                thread_of(&b.label).map(|t| (b.lane, b.from, b.to, thread_lane(b.lane, t)))
            })
            .collect();
        for b in &mut self.bands {
            let l = b.lane;
            b.lane = match (b.kind, thread_of(&b.label)) {
                ("holds", Some(t)) => thread_lane(l, t),
                // A stale part or truth strip goes with the thread's hold it overlaps most
                // (a grant reaches the servers a little before its holder learns of it).
                ("stale" | "truth", _) => holds
                    .iter()
                    .filter(|h| h.0 == l)
                    .map(|h| (h.2.min(b.to).saturating_sub(h.1.max(b.from)), h.3))
                    .filter(|(overlap, _)| *overlap > 0)
                    .max_by_key(|(overlap, _)| *overlap)
                    .map_or(new_of[l], |(_, lane)| lane),
                _ => new_of[l],
            };
        }
        for m in &mut self.marks {
            m.lane = new_of[m.lane];
        }
        for a in &mut self.arrows {
            (a.from, a.to) = (new_of[a.from], new_of[a.to]);
        }
        for n in &mut self.net {
            n.sides = source
                .iter()
                .map(|&l| n.sides.get(l).copied().flatten())
                .collect();
            n.blocked = n.blocked.map(|(a, b)| (new_of[a], new_of[b]));
        }
        for v in &mut self.violations {
            v.lanes = v.lanes.iter().map(|&l| new_of[l]).collect();
        }
        for s in &mut self.steps {
            s.lane = s.lane.map(|l| new_of[l]);
        }
        self.lanes = lanes;
        self.clocks = clocks;
    }

    /// The view as the run's scenario wants it: the kinds its `chart.shown_kinds` names start
    /// ticked (a storm that is the lesson's point), and a lane whose role shares its checker
    /// role with another is named by the file's role (a Kubernetes `lease_candidate` is a
    /// lease candidate, not a "lease leader"; a `lease_record` is the Lease object, not
    /// "storage").
    pub fn for_scenario(mut self, scenario: &splitbrain_scenario::schema::Scenario) -> Self {
        if let Some(chart) = &scenario.chart {
            for k in &mut self.kinds {
                if chart
                    .shown_kinds
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(&k.name))
                {
                    k.shown = true;
                }
            }
        }
        for lane in &mut self.lanes {
            match scenario.nodes.get(&lane.name).map(|n| n.role_name()) {
                Some("lease_candidate") => lane.role = "lease candidate".into(),
                Some("lease_record") => lane.role = "lease record".into(),
                _ => {}
            }
        }
        self
    }

    /// The self-contained HTML page (model as JSON, script and style inlined).
    pub fn html(&self) -> String {
        let json = serde_json::to_string(self)
            .expect("the view model serializes")
            // Inside <script>, "</" would end the element.
            .replace("</", "<\\/");
        let title = escape(&format!("{} \u{00b7} seed {}", self.name, self.seed));
        // A run cut short says so under the title, whatever the cursor shows.
        let stopped = self.stopped.as_ref().map_or(String::new(), |n| {
            format!("<p id=\"stopped\">note: {}</p>\n", escape(n))
        });
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{title}</title>\n<style>\n{VIEW_CSS}</style>\n</head>\n<body>\n\
             <header><h1>{title}</h1>\n{stopped}\
             <div id=\"controls\">\
             <button id=\"prev\" title=\"previous step (Left, p)\">\u{25c0} prev</button>\
             <button id=\"play\" title=\"play or pause (Space)\" data-playing=\"no\">\u{25b6} play</button>\
             <button id=\"next\" title=\"next step (Right, n)\">next \u{25b6}</button>\
             <label title=\"steps per second while playing\">speed <select id=\"speed\">\
             <option value=\"0.5\">0.5</option><option value=\"1\">1</option>\
             <option value=\"2\" selected>2</option><option value=\"5\">5</option>\
             <option value=\"10\">10</option><option value=\"25\">25</option></select> steps/s</label> \
             <input type=\"range\" id=\"slider\" min=\"0\" max=\"10000\" value=\"0\" \
             title=\"true time: drag to rewind or skip ahead\" aria-label=\"true time\"> \
             <button id=\"zoom-in\" title=\"zoom in (+)\">+</button>\
             <button id=\"zoom-out\" title=\"zoom out (-)\">\u{2212}</button>\
             <button id=\"zoom-reset\" title=\"whole run (0)\">whole run</button>\
             <span id=\"kinds\"></span></div>\n\
             <div id=\"step\"><span id=\"step-index\"></span> <span id=\"cursor-time\"></span> \
             <span id=\"step-text\"></span></div>\n</header>\n\
             <main><div id=\"chart\"><svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\"></svg></div>\n\
             <aside><h2>At the cursor</h2><table id=\"state\"><thead><tr><th>node</th>\
             <th>monotonic</th><th>wall</th><th>believes</th></tr></thead><tbody></tbody></table>\n\
             <h2>Details</h2><div id=\"details\">Click an event, a message, a band or a violation.</div>\n\
             <p class=\"help\">Keys: Right/n next step, Left/p previous, Space play/pause, \
             +/- zoom around the cursor, 0 whole run, drag to pan, wheel to zoom.</p></aside></main>\n\
             <script type=\"application/json\" id=\"model\">{json}</script>\n\
             <script>\n{VIEW_JS}</script>\n</body>\n</html>\n"
        )
    }
}

/// Fewest messages in a run for any kind to count as bulk traffic.
pub const BULK_MIN_MESSAGES: usize = 200;

/// Whether a kind of `count` of a run's `total` messages over `kinds` kinds is bulk traffic,
/// which the view opens unticked so the rare kinds and the band labels stay readable: more
/// than twice a kind's even share (`2 / kinds` of the messages) in a run of at least
/// [`BULK_MIN_MESSAGES`]. Raft's APPEND_ENTRIES and APPEND_ACK (46% each of 21e's 2,534 in
/// 12 kinds), heartbeats, and Redlock's REPLY (49% of lesson 12's 524 in 5 kinds) are bulk;
/// its SET and EVAL (25% each) are not.
pub fn is_bulk(count: usize, total: usize, kinds: usize) -> bool {
    total >= BULK_MIN_MESSAGES && count * kinds > 2 * total
}

/// When a violation is first evident from the run: at its window's start for an overlap
/// (two leaders, two holders: the second claim shows it), but at its window's end for an
/// invariant whose window runs from an earlier event to the one that breaks it (a stale
/// write accepted after a newer writer's, a job applied again, a wait that never ended), so
/// the step never comes before its cause.
pub fn evident_at(v: &splitbrain_check::Violation) -> SimTime {
    match v.invariant {
        "no_two_accepted_writers"
        | "exactly_once_effects"
        | "lock_progress"
        | "eventual_leader" => v.to,
        _ => v.from,
    }
}

/// The message as the trace writes it, cut at [`PAYLOAD_CHARS`].
fn payload_text<M: Serialize>(msg: &M) -> String {
    let full = serde_json::to_string(msg).unwrap_or_default();
    match full.char_indices().nth(PAYLOAD_CHARS) {
        Some((cut, _)) => format!("{}\u{2026}", &full[..cut]),
        None => full,
    }
}

/// "; it still believes it holds …" for a node on `lane` that resumes at `t` holding a belief
/// (its belief band reaches `t`), as the narration says it; empty otherwise.
fn still_believes(model: &TimelineModel, lane: usize, t: SimTime) -> String {
    model
        .bands
        .iter()
        .filter(|b| b.lane == lane && b.from < t && t <= b.to)
        .find_map(|b| match &b.kind {
            BandKind::Holds { .. } | BandKind::Leader { .. } => {
                band_look(&b.kind).map(|(_, label, _)| match b.kind {
                    BandKind::Leader { .. } => format!("; it still believes it is {label}"),
                    _ => format!("; it still believes it {label}"),
                })
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// The steps `[first, end)` at which `band` is shown in the cursor's table (see
/// [`ViewBand::steps`]).
fn band_steps(steps: &[Step], band: &crate::chart_model::Band) -> (usize, usize) {
    let first = steps.partition_point(|s| s.t < band.from.0);
    let lasting = matches!(
        band.kind,
        BandKind::Holds { .. } | BandKind::Leader { .. } | BandKind::Stale
    );
    let last_here = steps
        .iter()
        .rposition(|s| s.t == band.to.0 && s.lane == Some(band.lane) && s.what != "violation");
    let end = match last_here {
        Some(i) if lasting => i,
        _ => steps.partition_point(|s| s.t < band.to.0),
    };
    (first, end.max(first))
}

/// The thread `k` of a hold's label `holds lock (thread k) · token n`, if it names one.
fn thread_of(label: &str) -> Option<u32> {
    let rest = &label[label.find("(thread ")? + "(thread ".len()..];
    rest[..rest.find(')')?].parse().ok()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_html() {
        assert_eq!(escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
