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
use crate::narrate::{derived_facts, describe_applied_fault, describe_obs, Event};
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

/// A lane: one node.
#[derive(Clone, Debug, Serialize)]
pub struct ViewLane {
    /// Node name.
    pub name: String,
    /// Role, in words.
    pub role: &'static str,
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
}

impl ViewArrow {
    fn of(a: &crate::chart_model::Arrow) -> ViewArrow {
        ViewArrow {
            from: a.from,
            to: a.to,
            sent: a.sent.0,
            end: a.end.0,
            kind: a.kind.clone(),
            dropped: a.dropped,
        }
    }
}

/// A message kind.
#[derive(Clone, Debug, Serialize)]
pub struct ViewKind {
    /// Kind name.
    pub name: String,
    /// Colour.
    pub colour: String,
    /// Number of messages of the kind.
    pub count: usize,
    /// Shown when the page opens (a kind that is most of the traffic, e.g. heartbeats, is not).
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
}

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// One piece of a lane's clocks, as the page's script evaluates it (a
/// [`splitbrain_check::ClockPiece`]): `(from, origin, origin_mono, drift_ppm, wall_base)`, true
/// and local ns, ppm, and the wall base in Unix ns as a decimal string (a page's numbers are
/// doubles, exact only to 2^53).
pub type ViewClockPiece = (u64, u64, u64, i64, String);

/// The lanes' indexes by node index (nodes without a lane map to lane 0, as none is asked).
fn lane_of(model: &TimelineModel, nodes: usize) -> Vec<usize> {
    let mut v = vec![0; nodes];
    for (l, lane) in model.lanes.iter().enumerate() {
        if let Some(x) = v.get_mut(lane.node.index()) {
            *x = l;
        }
    }
    v
}

/// What a node is doing at the instant, as the cause of what it reports: the last message,
/// timer, start, restart or resumption it handled, by node.
type Handling = BTreeMap<NodeId, (SimTime, String)>;

/// Walks the run's events in trace order and turns faults, news-worthy observations and
/// resumptions into cursor steps, each with its cause (what the node was handling then).
struct StepWalker<'a> {
    record: &'a splitbrain_check::RunRecord,
    lane_of: &'a [usize],
    /// Message id -> (kind, sender, send time).
    kinds_of: BTreeMap<u64, (String, NodeId, SimTime)>,
    handling: Handling,
    paused_at: BTreeMap<NodeId, SimTime>,
    accepted: crate::narrate::Acceptances,
    /// Per fault in trace order, the state that made it change nothing.
    idle: std::vec::IntoIter<Option<&'static str>>,
    steps: Vec<(SimTime, u8, Step)>,
}

impl<'a> StepWalker<'a> {
    fn new(input: &ModelInput<'a>, lane_of: &'a [usize]) -> StepWalker<'a> {
        let record = input.record;
        let idle = crate::narrate::faults_without_effect(
            &splitbrain_check::FaultStart::of(record),
            input.events,
        );
        StepWalker {
            record,
            lane_of,
            kinds_of: BTreeMap::new(),
            handling: BTreeMap::new(),
            paused_at: BTreeMap::new(),
            accepted: crate::narrate::Acceptances::default(),
            idle: idle.into_iter(),
            steps: Vec::new(),
        }
    }

    fn lane(&self, n: NodeId) -> Option<usize> {
        self.lane_of.get(n.index()).copied()
    }

    fn push(&mut self, t: SimTime, node: Option<NodeId>, what: &'static str, text: String) {
        let cause = match (what, node) {
            ("event", Some(n)) => self
                .handling
                .get(&n)
                .filter(|(at, _)| *at == t)
                .map(|(_, c)| c.clone()),
            ("fault", _) => Some("the scenario's fault plan (or its nemesis)".to_string()),
            _ => None,
        };
        let lane = node.and_then(|n| self.lane(n));
        self.steps.push((
            t,
            0,
            Step {
                t: t.0,
                lane,
                what,
                text,
                cause,
            },
        ));
    }

    /// Takes one event: records what its node is handling, and adds the step it makes.
    fn event(&mut self, ev: &Event) {
        let record = self.record;
        match ev {
            Event::Send {
                id, kind, from, t, ..
            } => {
                self.kinds_of.insert(*id, (kind.clone(), *from, *t));
            }
            Event::Deliver { t, to, id, .. } => {
                if let Some((kind, from, sent)) = self.kinds_of.get(id) {
                    let what = format!(
                        "handling {kind} from {} (sent at {sent})",
                        record.name(*from)
                    );
                    self.handling.insert(*to, (*t, what));
                }
            }
            Event::Timer { t, node, .. } => {
                let what = "one of its own timers fired (by its monotonic clock)";
                self.handling.insert(*node, (*t, what.into()));
            }
            Event::Start { t, node } => {
                self.handling.insert(*node, (*t, "its start".into()));
            }
            Event::Drop { .. } | Event::End { .. } => {}
            Event::Resume { t, node } => self.resume(*t, *node),
            Event::Fault { t, fault } => self.fault(*t, fault),
            // A follower's repeated acceptance of the same leader is not a step.
            Event::Observe { node, obs, .. } if !self.accepted.is_news(*node, obs) => {}
            Event::Observe { t, node, obs } => {
                let text = describe_obs(&record.names, &record.name(*node), obs);
                self.push(*t, Some(*node), "event", text);
            }
        }
    }

    fn resume(&mut self, t: SimTime, node: NodeId) {
        let since = self.paused_at.remove(&node);
        let what = "waking from its pause: what queued up runs now";
        self.handling.insert(node, (t, what.into()));
        let name = self.record.name(node);
        let text = match since {
            Some(p) => format!(
                "{name} resumes after a {} pause, unaware of it",
                t.saturating_since(p)
            ),
            None => format!("{name} resumes"),
        };
        let lane = self.lane(node);
        self.steps.push((
            t,
            0,
            Step {
                t: t.0,
                lane,
                what: "event",
                text,
                cause: since.map(|p| format!("its pause that began at {p}")),
            },
        ));
    }

    fn fault(&mut self, t: SimTime, fault: &Fault) {
        let state = self.idle.next().flatten();
        match fault {
            Fault::Pause { node, .. } if state.is_none() => {
                self.paused_at.insert(*node, t);
            }
            Fault::Crash { node } => self.accepted.crashed(*node),
            Fault::Restart { node } if state.is_none() => {
                self.handling.insert(*node, (t, "its restart".into()));
            }
            _ => {}
        }
        let text = describe_applied_fault(&self.record.names, fault, state);
        self.push(t, fault.node(), "fault", text);
    }
}

/// The violations of the run for the page, and their cursor steps.
fn violations_of(
    input: &ModelInput<'_>,
    lane_of: &[usize],
) -> (Vec<ViewViolation>, Vec<(SimTime, u8, Step)>) {
    let names = &input.record.names;
    let mut violations = Vec::new();
    let mut steps = Vec::new();
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
        steps.push((
            v.from,
            2,
            Step {
                t: v.from.0,
                lane: lanes.first().copied(),
                what: "violation",
                text: format!("{} VIOLATED: {}", v.invariant, v.summary),
                cause: (!v.faults.is_empty()).then(|| v.faults.join("; ")),
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
        });
    }
    (violations, steps)
}

/// Every lane's clocks as pieces ([`ViewClockPiece`]), computed once from the record's
/// clock faults ([`splitbrain_check::WallClocks`]): the page's size grows with the clock
/// faults, not with nodes times steps.
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

/// A band's colour, label, short label and page kind.
fn band_of(b: &crate::chart_model::Band) -> ViewBand {
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
}

/// A point marker's page kind, label and colour.
fn mark_of(m: &crate::chart_model::Mark) -> ViewMark {
    let with_token = |text: String, token: &Option<u64>| match token {
        Some(t) => format!("{text} (token {t})"),
        None => text,
    };
    let (kind, label, colour) = match &m.kind {
        MarkKind::ValidityEnd => ("validity", "validity end the holder believed".into(), INK),
        MarkKind::WriteAccepted {
            writer,
            token,
            applied: false,
        } => (
            "duplicate",
            with_token(
                format!("write of {writer} accepted as a duplicate, no effect"),
                token,
            ),
            GREY,
        ),
        MarkKind::WriteAccepted { writer, token, .. } => (
            "accepted",
            with_token(format!("write of {writer} accepted"), token),
            token.map_or(INK, tone),
        ),
        MarkKind::WriteRejected { writer, token } => (
            "rejected",
            with_token(format!("write of {writer} rejected"), token),
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
    ViewMark {
        lane: m.lane,
        t: m.t.0,
        kind,
        label,
        colour: hex(colour),
    }
}

/// The chart's named colours, as `#rrggbb`.
fn palette() -> BTreeMap<&'static str, String> {
    [
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
    .collect()
}

/// The network rule periods, labelled as the static chart groups them over the whole run.
fn net_of(model: &TimelineModel, end: u64) -> Vec<ViewNet> {
    let plot_w =
        (crate::ChartOptions::default().width as i32 - crate::chart::LEFT - crate::chart::RIGHT)
            .max(1);
    let px = |t: SimTime| (t.0 as f64 / end as f64 * plot_w as f64).round() as i32;
    let net_top: BTreeMap<usize, String> =
        crate::chart::net_labels(model, SimTime::ZERO, SimTime(end), &px, plot_w - 8)
            .into_iter()
            .map(|(i, _, _, text)| (i, text))
            .collect();
    model
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
        .collect()
}

/// The message kinds with their colour, count and whether they show when the page opens.
fn kinds_of(model: &TimelineModel) -> Vec<ViewKind> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &model.arrows {
        *count.entry(a.kind.as_str()).or_default() += 1;
    }
    kind_colours(&model.arrows)
        .iter()
        .map(|(k, c, faint)| ViewKind {
            name: k.clone(),
            colour: hex(*c),
            count: count.get(k.as_str()).copied().unwrap_or(0),
            shown: !faint,
        })
        .collect()
}

impl ViewModel {
    /// Builds the view of a run: its [`TimelineModel`] plus the cursor's steps and each
    /// lane's clock pieces.
    pub fn build(input: &ModelInput<'_>, window: Option<(SimTime, SimTime)>) -> ViewModel {
        let model = TimelineModel::build(input);
        let record = input.record;
        let lane_of = lane_of(&model, record.names.len());
        // Steps: faults, observations and resumptions in trace order, the derived facts
        // after the events of their instant, violations after both.
        let mut walker = StepWalker::new(input, &lane_of);
        for ev in input.events {
            walker.event(ev);
        }
        let mut steps = walker.steps;
        for (t, fact) in derived_facts(record) {
            let cause = "derived from the servers' truth, not reported by a node";
            steps.push((
                t,
                1,
                Step {
                    t: t.0,
                    lane: None,
                    what: "fact",
                    text: fact,
                    cause: Some(cause.into()),
                },
            ));
        }
        let (violations, violation_steps) = violations_of(input, &lane_of);
        steps.extend(violation_steps);
        // Stable: trace order within an instant, then facts, then violations.
        steps.sort_by_key(|s| (s.0, s.1));
        let end = model.end.0.max(1);
        let window = window
            .map(|(a, b)| (a.0.min(end), b.0.min(end)))
            .filter(|(a, b)| a < b)
            .unwrap_or((0, end));
        ViewModel {
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
            palette: palette(),
            lanes: model
                .lanes
                .iter()
                .map(|l| ViewLane {
                    name: l.name.clone(),
                    role: role_label(l.role),
                    group: l.group.title(),
                })
                .collect(),
            clocks: clocks_of(&model, record),
            bands: model.bands.iter().map(band_of).collect(),
            marks: model.marks.iter().map(mark_of).collect(),
            arrows: model.arrows.iter().map(ViewArrow::of).collect(),
            kinds: kinds_of(&model),
            net: net_of(&model, end),
            violations,
            steps: steps.into_iter().map(|(_, _, s)| s).collect(),
            stopped: model.stop_note(),
        }
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
             <button id=\"next\" title=\"next step (Right, n)\">next \u{25b6}</button>\
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
             <p class=\"help\">Keys: Right/n next step, Left/p previous, +/- zoom, 0 whole run, \
             drag to pan, wheel to zoom.</p></aside></main>\n\
             <script type=\"application/json\" id=\"model\">{json}</script>\n\
             <script>\n{VIEW_JS}</script>\n</body>\n</html>\n"
        )
    }
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
