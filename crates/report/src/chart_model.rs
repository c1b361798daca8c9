//! [`TimelineModel`]: what a timeline chart shows, rebuilt from a run's names, roles, clocks,
//! trace events and check report. The live path (`run --chart`) and the saved-trace path
//! (`chart TRACE.jsonl`) both build this one model, so they draw the same picture.
//!
//! Everything is in true time (ns). Beliefs come from the actors' observations (leader claims,
//! lock holds); truth (lease grants, Redis keys and majorities) from the checkers'
//! [`Truth`], clocks from their [`WallClocks`], both over the run's [`RunRecord`]; faults
//! (pauses, crashes, partitions) from the trace; violations from the checkers' report.

use splitbrain_check::{CheckReport, HoldSource, KeyHold, Role, RunRecord, Truth, WallClocks};
use splitbrain_engine::{Fault, NetRule, NodeId, SimTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

use crate::event::Event;

/// The groups lanes are arranged in, top to bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneGroup {
    /// Bully election participants.
    Election,
    /// Lock servers: the lease service, Redis instances.
    Servers,
    /// Lock clients (workers) and lease-based leaders.
    Clients,
    /// Storage.
    Storage,
}

impl LaneGroup {
    /// The group's heading.
    pub fn title(self) -> &'static str {
        match self {
            LaneGroup::Election => "bully nodes",
            LaneGroup::Servers => "lock servers",
            LaneGroup::Clients => "clients and leaders",
            LaneGroup::Storage => "storage",
        }
    }
    fn of(role: Role) -> LaneGroup {
        match role {
            Role::Bully => LaneGroup::Election,
            Role::LeaseService | Role::RedisInstance | Role::Raft => LaneGroup::Servers,
            Role::LeaseLeader | Role::Worker => LaneGroup::Clients,
            Role::Storage => LaneGroup::Storage,
        }
    }
}

/// Short role name for a lane's second label line.
pub fn role_label(role: Role) -> &'static str {
    match role {
        Role::Bully => "bully",
        Role::LeaseService => "lease service",
        Role::LeaseLeader => "lease leader",
        Role::RedisInstance => "redis",
        Role::Storage => "storage",
        Role::Worker => "worker",
        Role::Raft => "raft replica",
    }
}

/// One lane: one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// Its group.
    pub group: LaneGroup,
}

/// What a band in a lane stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum BandKind {
    /// The node believed it was leader in `term`.
    Leader {
        /// Term of the claim.
        term: u64,
        /// Fencing token of the lease it leads by, if any.
        token: Option<u64>,
    },
    /// The node believed it held `lock`.
    Holds {
        /// Lock name.
        lock: String,
        /// Fencing token, if any.
        token: Option<u64>,
    },
    /// Part of a hold (or lease-based leadership) during which the servers no longer granted
    /// it: a stale belief.
    Stale,
    /// At the servers, the lock was truly this node's (thin strip under its belief).
    TrueHold {
        /// Token of the grant, if any.
        token: Option<u64>,
    },
    /// On a lease service lane: a grant.
    Grant {
        /// Holder's name.
        holder: String,
        /// Token.
        token: u64,
    },
    /// On a Redis lane: `key` held a client's value.
    Key {
        /// The key.
        key: String,
        /// The client whose value it is, if known.
        holder: Option<String>,
    },
    /// The node was paused (stop-the-world).
    Paused,
    /// The node was down.
    Crashed,
    /// The node was running again but not serving: a Redis instance's `restart_delay`, from
    /// its restart until it answered again.
    Unavailable,
}

/// A band: `[from, to)` in lane `lane`.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    /// Lane index.
    pub lane: usize,
    /// Start, true time.
    pub from: SimTime,
    /// End, true time.
    pub to: SimTime,
    /// What it is.
    pub kind: BandKind,
}

/// A point marker in a lane.
#[derive(Clone, Debug, PartialEq)]
pub enum MarkKind {
    /// The end of validity the holder believed in (its local deadline, in true time).
    ValidityEnd,
    /// Storage accepted a write.
    WriteAccepted {
        /// Writer's name.
        writer: String,
        /// Its token.
        token: Option<u64>,
        /// `false` for a duplicate of an already-applied job: accepted, with no effect.
        applied: bool,
    },
    /// Storage rejected a write.
    WriteRejected {
        /// Writer's name.
        writer: String,
        /// Its token.
        token: Option<u64>,
    },
    /// The node's wall clock stepped by `delta_ns`.
    ClockStep {
        /// Step, ns.
        delta_ns: i64,
    },
}

/// A marker at true time `t` in lane `lane`.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// Lane index.
    pub lane: usize,
    /// True time.
    pub t: SimTime,
    /// What it is.
    pub kind: MarkKind,
}

/// One message: sent at `sent`, handled (or dropped) at `end`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrow {
    /// Sender lane.
    pub from: usize,
    /// Receiver lane.
    pub to: usize,
    /// Send time.
    pub sent: SimTime,
    /// Delivery (handling) or drop time.
    pub end: SimTime,
    /// Message kind.
    pub kind: String,
    /// Dropped rather than delivered.
    pub dropped: bool,
    /// The message's id in the trace (a duplicate delivered twice has two arrows of one id).
    pub id: u64,
}

/// A network rule in force over `[from, to)`.
#[derive(Clone, Debug, PartialEq)]
pub struct NetPeriod {
    /// Start.
    pub from: SimTime,
    /// End (heal or end of run).
    pub to: SimTime,
    /// Per lane, the partition side (0, 1, ...) or `None` (not in a group / not involved).
    pub sides: Vec<Option<usize>>,
    /// In words ("partition {n1,n2} | {n3,n4,n5}", "link a <-> b cut").
    pub label: String,
    /// A partition into sides (else a cut or blocked link between the two marked lanes).
    pub partition: bool,
    /// A one-way block: the lanes of its sender and its receiver (messages from the first to
    /// the second are dropped, the other way passes).
    pub blocked: Option<(usize, usize)>,
}

/// A violation window.
#[derive(Clone, Debug, PartialEq)]
pub struct ViolationBand {
    /// Invariant name.
    pub invariant: String,
    /// Start.
    pub from: SimTime,
    /// End (equal to `from` for an instant).
    pub to: SimTime,
    /// Lanes of the nodes involved.
    pub lanes: Vec<usize>,
}

/// A node's wall clock minus true time, as continuous pieces of `(t, offset ns)` points.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockSeries {
    /// Lane index.
    pub lane: usize,
    /// Continuous pieces (a clock step starts a new piece).
    pub pieces: Vec<Vec<(SimTime, i64)>>,
}

/// Everything a timeline chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineModel {
    /// Scenario name.
    pub name: String,
    /// Run seed.
    pub seed: u64,
    /// End of the run.
    pub end: SimTime,
    /// Lanes, grouped, top to bottom.
    pub lanes: Vec<Lane>,
    /// Bands.
    pub bands: Vec<Band>,
    /// Point markers.
    pub marks: Vec<Mark>,
    /// Messages.
    pub arrows: Vec<Arrow>,
    /// Network rule periods.
    pub net: Vec<NetPeriod>,
    /// Violations.
    pub violations: Vec<ViolationBand>,
    /// Clock offsets per lane.
    pub clocks: Vec<ClockSeries>,
    /// Where the run stopped at a limit (the trace's `end` record marked incomplete):
    /// true time and events processed; `None` for a run that reached its planned end.
    pub stopped: Option<(SimTime, u64)>,
}

impl TimelineModel {
    /// The note a chart or view of a run stopped at a limit carries: `stopped at a limit
    /// (max_events or max_in_flight) at 0.512 s (1000 events): later steps never ran`. The
    /// trace's `end` record says that the run stopped, not which limit stopped it.
    pub fn stop_note(&self) -> Option<String> {
        self.stopped.map(|(t, events)| {
            format!(
                "stopped at a limit (max_events or max_in_flight) at {t} ({events} events): \
                 later steps never ran"
            )
        })
    }
}

/// What the model is built from (the same for a live run and a saved trace).
pub struct ModelInput<'a> {
    /// Scenario name.
    pub name: &'a str,
    /// Seed.
    pub seed: u64,
    /// The run: node names, roles and initial clocks, observations and faults, its end.
    pub record: &'a RunRecord,
    /// The trace events, in order.
    pub events: &'a [Event],
    /// The checkers' report.
    pub report: &'a CheckReport,
}

impl TimelineModel {
    /// Builds the model: the lanes, then the trace read event by event ([`Drawing`]), what is
    /// still open closed at the end, the truth beneath the beliefs, the violations.
    pub fn build(input: &ModelInput<'_>) -> TimelineModel {
        let record = input.record;
        let end = record.end;
        let (lanes, lane_of) = lanes_of(record);
        let mut d = Drawing::new(record, lane_of);
        // A pause is drawn as the engine applied it: not at all when its node was down (or
        // paused past its end already), and cut short by a crash.
        let mut effects = record.fault_effects.iter().copied();
        for ev in input.events {
            match ev {
                Event::Send { .. } | Event::Deliver { .. } | Event::Drop { .. } => d.message(ev),
                Event::Fault { t, fault } => d.fault(*t, fault, effects.next()),
                Event::Observe { t, node, obs } => d.observe(*t, *node, obs),
                Event::End { .. }
                | Event::Start { .. }
                | Event::Timer { .. }
                | Event::Resume { .. } => {}
            }
        }
        d.close_open(end);
        let true_holds = d.truth(&Truth::new(record, &d.clocks));
        let extra = beliefs_against_truth(&d.bands, &lanes, &true_holds, &d.lane_of);
        d.bands.extend(extra);
        d.bands.sort_by_key(|b| (b.lane, b.from, b.to));
        d.marks.sort_by_key(|m| (m.lane, m.t));
        let violations = violation_bands(input.report, &record.names, &d.lane_of);
        let clocks = lanes
            .iter()
            .enumerate()
            .map(|(l, lane)| ClockSeries {
                lane: l,
                pieces: d.clocks.offsets(lane.node, end),
            })
            .collect();
        TimelineModel {
            name: input.name.to_string(),
            seed: input.seed,
            end,
            lanes,
            bands: d.bands,
            marks: d.marks,
            arrows: d.arrows,
            net: d.net,
            violations,
            clocks,
            stopped: input.events.iter().rev().find_map(|e| match e {
                Event::End {
                    t,
                    events,
                    complete: false,
                } => Some((*t, *events)),
                _ => None,
            }),
        }
    }
}

/// The lanes, grouped by role and in id order within a group, and each node's lane (by
/// `NodeId` index).
fn lanes_of(record: &RunRecord) -> (Vec<Lane>, Vec<usize>) {
    let (names, roles) = (&record.names, &record.roles);
    let n = names.len();
    let mut order: Vec<usize> = (0..n).collect();
    let group_of = |i: usize| LaneGroup::of(roles.get(i).copied().unwrap_or(Role::Worker));
    order.sort_by_key(|&i| (group_of(i), i));
    let mut lane_of = vec![0usize; n];
    let lanes: Vec<Lane> = order
        .iter()
        .enumerate()
        .map(|(lane, &i)| {
            lane_of[i] = lane;
            Lane {
                node: NodeId(i as u32),
                name: names[i].clone(),
                role: roles.get(i).copied().unwrap_or(Role::Worker),
                group: group_of(i),
            }
        })
        .collect();
    (lanes, lane_of)
}

/// A true hold to draw: holder, from, to, token.
type TrueHold = (NodeId, SimTime, SimTime, Option<u64>);

/// What [`TimelineModel::build`] has drawn so far as it reads the trace, and the intervals
/// still open.
struct Drawing<'a> {
    record: &'a RunRecord,
    lane_of: Vec<usize>,
    clocks: WallClocks,
    bands: Vec<Band>,
    marks: Vec<Mark>,
    arrows: Vec<Arrow>,
    net: Vec<NetPeriod>,
    /// Open leaderships: since, term, token.
    leaders: BTreeMap<NodeId, (SimTime, u64, Option<u64>)>,
    /// Open lock beliefs by (node, lock).
    holds: BTreeMap<(NodeId, String), OpenHold>,
    lease_tokens: BTreeMap<NodeId, u64>,
    down: BTreeMap<NodeId, SimTime>,
    /// Redis instances restarted and not yet answering (restart_delay), since when.
    restarting: BTreeMap<NodeId, SimTime>,
    /// Messages sent and not yet dropped: from, to, sent, kind.
    pending: BTreeMap<u64, (NodeId, NodeId, SimTime, String)>,
    /// Network rules in force, since when.
    rules: Vec<(SimTime, NetRule)>,
}

impl<'a> Drawing<'a> {
    fn new(record: &'a RunRecord, lane_of: Vec<usize>) -> Drawing<'a> {
        Drawing {
            record,
            lane_of,
            clocks: WallClocks::new(record),
            bands: Vec::new(),
            marks: Vec::new(),
            arrows: Vec::new(),
            net: Vec::new(),
            leaders: BTreeMap::new(),
            holds: BTreeMap::new(),
            lease_tokens: BTreeMap::new(),
            down: BTreeMap::new(),
            restarting: BTreeMap::new(),
            pending: BTreeMap::new(),
            rules: Vec::new(),
        }
    }

    fn lane(&self, id: NodeId) -> Option<usize> {
        self.lane_of.get(id.index()).copied()
    }

    fn is_lease_leader(&self, id: NodeId) -> bool {
        self.record.roles.get(id.index()) == Some(&Role::LeaseLeader)
    }

    fn band(&mut self, lane: usize, from: SimTime, to: SimTime, kind: BandKind) {
        self.bands.push(Band {
            lane,
            from,
            to,
            kind,
        });
    }

    /// Ends a lock belief at `to`: its band and its believed deadline.
    fn end_hold(&mut self, lane: usize, node: NodeId, to: SimTime, lock: &str, open: OpenHold) {
        let (since, token, valid) = open;
        let ll = self.is_lease_leader(node);
        push_hold(
            &mut self.bands,
            &mut self.marks,
            lane,
            since,
            to,
            lock,
            token,
            valid,
            ll,
        );
    }

    /// Ends the network rule periods in force at `t`.
    fn close_rules(&mut self, t: SimTime) {
        let (n, names) = (self.record.names.len(), &self.record.names);
        for (from, rule) in self.rules.drain(..) {
            self.net
                .push(net_period(&rule, from, t, n, &self.lane_of, names));
        }
    }

    /// A send (remembered) or its delivery or drop (an arrow).
    fn message(&mut self, ev: &Event) {
        let (t, id, dropped) = match ev {
            Event::Send {
                t,
                from,
                to,
                id,
                kind,
                ..
            } => {
                self.pending.insert(*id, (*from, *to, *t, kind.clone()));
                return;
            }
            Event::Deliver { t, id, .. } => (*t, *id, false),
            Event::Drop { t, id, .. } => (*t, *id, true),
            _ => return,
        };
        let info = if dropped {
            self.pending.remove(&id)
        } else {
            // A duplicate may be delivered again: keep the send.
            self.pending.get(&id).cloned()
        };
        if let Some((from, to, sent, kind)) = info {
            if let (Some(a), Some(b)) = (self.lane(from), self.lane(to)) {
                self.arrows.push(Arrow {
                    from: a,
                    to: b,
                    sent,
                    end: t,
                    kind,
                    dropped,
                    id,
                });
            }
        }
    }

    /// A fault as the engine applied it (`effect`).
    fn fault(&mut self, t: SimTime, fault: &Fault, effect: Option<splitbrain_engine::FaultEffect>) {
        let idle = effect.as_ref().is_some_and(|a| a.idle.is_some());
        match fault {
            Fault::Crash { node } => self.crash(t, *node),
            Fault::Restart { node } => {
                if let (Some(l), Some(since)) = (self.lane(*node), self.down.remove(node)) {
                    self.band(l, since, t, BandKind::Crashed);
                }
                // A Redis instance tells when it answers again (`RedisRestarted`); until
                // then it is unavailable.
                if self.record.roles.get(node.index()) == Some(&Role::RedisInstance) {
                    self.restarting.insert(*node, t);
                }
            }
            Fault::Pause { node, duration } => {
                let end = self.record.end;
                let to = effect
                    .as_ref()
                    .map_or(t.saturating_add(*duration), |a| a.ends)
                    .min(end.max(t));
                if let (Some(l), false) = (self.lane(*node), idle) {
                    self.band(l, t, to, BandKind::Paused);
                }
            }
            // A rule already in force is drawn once: the copy changed nothing.
            Fault::Network { rule } if !idle => self.rules.push((t, rule.clone())),
            Fault::Network { .. } => {}
            Fault::Heal => self.close_rules(t),
            Fault::HealPartition { groups } => {
                // Only the first partition with these groups ends (as in the engine).
                let healed = NetRule::Partition {
                    groups: groups.clone(),
                };
                if let Some(i) = self.rules.iter().position(|(_, r)| *r == healed) {
                    let (from, rule) = self.rules.remove(i);
                    let (n, names) = (self.record.names.len(), &self.record.names);
                    self.net
                        .push(net_period(&rule, from, t, n, &self.lane_of, names));
                }
            }
            // A step of 0 s is no step: no mark.
            Fault::ClockStep { delta_ns: 0, .. } => {}
            Fault::ClockStep { node, delta_ns } => {
                if let Some(l) = self.lane(*node) {
                    self.marks.push(Mark {
                        lane: l,
                        t,
                        kind: MarkKind::ClockStep {
                            delta_ns: *delta_ns,
                        },
                    });
                }
            }
            Fault::SetDrift { .. } | Fault::SetLoss { .. } => {}
        }
    }

    /// A crash ends the node's unavailability, leadership and lock beliefs.
    fn crash(&mut self, t: SimTime, node: NodeId) {
        let Some(l) = self.lane(node) else { return };
        self.down.entry(node).or_insert(t);
        if let Some(since) = self.restarting.remove(&node).filter(|s| *s < t) {
            self.band(l, since, t, BandKind::Unavailable);
        }
        if let Some((since, term, token)) = self.leaders.remove(&node) {
            self.bands.push(leader_band(l, since, t, term, token));
        }
        let mine: Vec<(NodeId, String)> = self
            .holds
            .keys()
            .filter(|(who, _)| *who == node)
            .cloned()
            .collect();
        for k in mine {
            let open = self.holds.remove(&k).expect("listed");
            self.end_hold(l, node, t, &k.1, open);
        }
    }

    /// An observation: a leadership or lock belief begins, changes or ends; a write mark.
    ///
    /// Long because: one arm per observation kind the chart draws (claims, holds, writes).
    fn observe(&mut self, t: SimTime, node: NodeId, obs: &Obs) {
        let Some(l) = self.lane(node) else { return };
        if let (Obs::RedisRestarted { .. }, Some(since)) = (obs, self.restarting.remove(&node)) {
            if t > since {
                self.band(l, since, t, BandKind::Unavailable);
            }
        }
        let name = |id: &NodeId| self.record.name(*id);
        match obs {
            Obs::LeaderClaim { term } => {
                let token = self.lease_tokens.get(&node).copied();
                self.leaders.entry(node).or_insert((t, *term, token));
            }
            Obs::LeaderStepDown { .. } => {
                if let Some((since, term, token)) = self.leaders.remove(&node) {
                    self.bands.push(leader_band(l, since, t, term, token));
                }
            }
            Obs::LockAcquired {
                lock,
                token,
                valid_until_local,
                ..
            } => {
                if let Some(tok) = token {
                    self.lease_tokens.insert(node, *tok);
                }
                let valid = self.clocks.true_time_of_mono(node, t, valid_until_local.0);
                let e = self
                    .holds
                    .entry((node, hold_label(lock, obs.thread())))
                    .or_insert((t, *token, None));
                e.2 = Some(valid);
            }
            Obs::LockRenewed {
                lock,
                valid_until_local,
                ..
            } => {
                let valid = self.clocks.true_time_of_mono(node, t, valid_until_local.0);
                if let Some(e) = self.holds.get_mut(&(node, hold_label(lock, obs.thread()))) {
                    e.2 = Some(valid);
                }
            }
            Obs::LockReleased { thread: _, lock } | Obs::LockLost { lock, .. } => {
                let label = hold_label(lock, obs.thread());
                if let Some(open) = self.holds.remove(&(node, label.clone())) {
                    self.end_hold(l, node, t, &label, open);
                }
            }
            Obs::WriteAccepted {
                writer,
                token,
                applied,
                ..
            } => {
                let kind = MarkKind::WriteAccepted {
                    writer: name(writer),
                    token: *token,
                    applied: *applied,
                };
                self.marks.push(Mark { lane: l, t, kind });
            }
            Obs::WriteRejected { writer, token, .. } => {
                let kind = MarkKind::WriteRejected {
                    writer: name(writer),
                    token: *token,
                };
                self.marks.push(Mark { lane: l, t, kind });
            }
            _ => {}
        }
    }

    /// Closes what is still open at the run's `end`.
    fn close_open(&mut self, end: SimTime) {
        for (node, (since, term, token)) in std::mem::take(&mut self.leaders) {
            if let Some(l) = self.lane(node) {
                self.bands.push(leader_band(l, since, end, term, token));
            }
        }
        for ((node, lock), open) in std::mem::take(&mut self.holds) {
            if let Some(l) = self.lane(node) {
                self.end_hold(l, node, end, &lock, open);
            }
        }
        for (node, since) in std::mem::take(&mut self.down) {
            if let Some(l) = self.lane(node) {
                self.band(l, since, end, BandKind::Crashed);
            }
        }
        for (node, since) in std::mem::take(&mut self.restarting) {
            if let Some(l) = self.lane(node).filter(|_| since < end) {
                self.band(l, since, end, BandKind::Unavailable);
            }
        }
        self.close_rules(end);
    }

    /// The truth: grants on lease service lanes, keys on Redis instance lanes; returns who
    /// truly held a lock when (by grant, Redis majority or Raft commit), up to the run's end.
    fn truth(&mut self, truth: &Truth) -> Vec<TrueHold> {
        let end = self.record.end;
        let mut true_holds: Vec<TrueHold> = Vec::new();
        for h in &truth.holds {
            let (Some(holder), to) = (h.holder, h.to.min(end)) else {
                continue;
            };
            let token = match h.source {
                HoldSource::Lease { service, token } => {
                    if let Some(l) = self.lane(service) {
                        let holder = self.record.name(holder);
                        self.band(l, h.from, to, BandKind::Grant { holder, token });
                    }
                    Some(token)
                }
                HoldSource::RedisMajority { .. } => None,
                // The committed log is everyone's: its truth is drawn on the holder's lane
                // only (the replicas' lanes show their terms as leader).
                HoldSource::Raft { revision, .. } => Some(revision),
            };
            true_holds.push((holder, h.from, to, token));
        }
        for k in key_bands(&truth.keys) {
            // A key is drawn until its instance's crash: the instance lost it then, whatever
            // the truth goes on counting it for (a down instance votes for nobody else).
            let lost = crate::key_loss::key_lost_at(self.record, &k);
            if let Some(l) = self.lane(k.instance) {
                let kind = BandKind::Key {
                    key: k.key.to_string(),
                    holder: k.holder.map(|h| self.record.name(h)),
                };
                self.band(l, k.from, lost.unwrap_or(k.to).min(end), kind);
            }
        }
        true_holds
    }
}

/// Truth strips under beliefs, and the stale part of each belief (a hold, or a leadership
/// with a token) that no true hold of its node covers.
fn beliefs_against_truth(
    bands: &[Band],
    lanes: &[Lane],
    true_holds: &[TrueHold],
    lane_of: &[usize],
) -> Vec<Band> {
    let mut extra = Vec::new();
    let stale = |lane, from, to| Band {
        lane,
        from,
        to,
        kind: BandKind::Stale,
    };
    for b in bands {
        let believes = matches!(b.kind, BandKind::Holds { .. })
            || matches!(b.kind, BandKind::Leader { token: Some(_), .. });
        if !believes || true_holds.is_empty() {
            continue;
        }
        let node = lanes[b.lane].node;
        let mut covered: Vec<(SimTime, SimTime)> = true_holds
            .iter()
            .filter(|h| h.0 == node && h.1 < b.to && h.2 > b.from)
            .map(|h| (h.1.max(b.from), h.2.min(b.to)))
            .collect();
        covered.sort();
        let mut at = b.from;
        for (f, t) in covered {
            if f > at {
                extra.push(stale(b.lane, at, f));
            }
            at = at.max(t);
        }
        if at < b.to {
            extra.push(stale(b.lane, at, b.to));
        }
    }
    for (node, from, to, token) in true_holds {
        if let Some(l) = lane_of.get(node.index()).copied() {
            extra.push(Band {
                lane: l,
                from: *from,
                to: *to,
                kind: BandKind::TrueHold { token: *token },
            });
        }
    }
    extra
}

/// The report's violations as bands over the lanes of their nodes.
fn violation_bands(
    report: &CheckReport,
    names: &[String],
    lane_of: &[usize],
) -> Vec<ViolationBand> {
    report
        .results
        .iter()
        .flat_map(|r| r.verdict.violations())
        .map(|v| ViolationBand {
            invariant: v.invariant.to_string(),
            from: v.from,
            to: v.to,
            lanes: v
                .nodes
                .iter()
                .filter_map(|nm| names.iter().position(|x| x == nm))
                .map(|i| lane_of[i])
                .collect(),
        })
        .collect()
}

/// An open lock belief: since, token, believed validity end (true time).
type OpenHold = (SimTime, Option<u64>, Option<SimTime>);

fn leader_band(lane: usize, from: SimTime, to: SimTime, term: u64, token: Option<u64>) -> Band {
    Band {
        lane,
        from,
        to,
        kind: BandKind::Leader { term, token },
    }
}

/// What a hold is called on the chart: the lock's name, with the worker thread that holds it
/// when the node runs several (`lock (thread 2)`), so two threads' holds stay apart.
fn hold_label(lock: &str, thread: Option<u32>) -> String {
    match thread {
        Some(t) => format!("{lock} (thread {t})"),
        None => lock.to_string(),
    }
}

#[allow(clippy::too_many_arguments)]
fn push_hold(
    bands: &mut Vec<Band>,
    marks: &mut Vec<Mark>,
    lane: usize,
    from: SimTime,
    to: SimTime,
    lock: &str,
    token: Option<u64>,
    valid: Option<SimTime>,
    lease_leader: bool,
) {
    // A lease-based leader's hold is its leadership: drawn once, as the leader band.
    if !lease_leader {
        bands.push(Band {
            lane,
            from,
            to,
            kind: BandKind::Holds {
                lock: lock.to_string(),
                token,
            },
        });
    }
    // The believed deadline matters only if the belief lasted to it (or past it); a holder
    // that released early never relied on it.
    if let Some(v) = valid.filter(|v| *v <= to) {
        marks.push(Mark {
            lane,
            t: v,
            kind: MarkKind::ValidityEnd,
        });
    }
}

/// The keys to draw: a piece ended by a change of the key's expiry is continued by the next
/// piece of the same key and value on the instance, and drawn as one band with it.
fn key_bands(keys: &[KeyHold]) -> Vec<KeyHold> {
    let mut sorted: Vec<&KeyHold> = keys.iter().collect();
    sorted.sort_by(|a, b| (a.instance, &a.key, a.from).cmp(&(b.instance, &b.key, b.from)));
    let mut out: Vec<KeyHold> = Vec::new();
    for k in sorted {
        match out.last_mut() {
            Some(prev)
                if prev.instance == k.instance
                    && prev.key == k.key
                    && prev.value == k.value
                    && prev.to == k.from
                    && prev.end.is_none() =>
            {
                prev.to = k.to;
                prev.end.clone_from(&k.end);
            }
            _ => out.push(k.clone()),
        }
    }
    out
}

fn net_period(
    rule: &NetRule,
    from: SimTime,
    to: SimTime,
    n: usize,
    lane_of: &[usize],
    names: &[String],
) -> NetPeriod {
    let nm = |id: &NodeId| names.get(id.index()).cloned().unwrap_or_default();
    let mut sides = vec![None; n];
    let mut blocked = None;
    let label = match rule {
        NetRule::Partition { groups } => {
            for (g, members) in groups.iter().enumerate() {
                for m in members {
                    if let Some(&l) = lane_of.get(m.index()) {
                        sides[l] = Some(g);
                    }
                }
            }
            let g: Vec<String> = groups
                .iter()
                .map(|g| format!("{{{}}}", g.iter().map(nm).collect::<Vec<_>>().join(",")))
                .collect();
            format!("partition {}", g.join(" | "))
        }
        NetRule::Block { from: a, to: b } => {
            for x in [a, b] {
                if let Some(&l) = lane_of.get(x.index()) {
                    sides[l] = Some(0);
                }
            }
            if let (Some(&la), Some(&lb)) = (lane_of.get(a.index()), lane_of.get(b.index())) {
                blocked = Some((la, lb));
            }
            format!("link {} \u{2192} {} blocked", nm(a), nm(b))
        }
        NetRule::Cut { a, b } => {
            for x in [a, b] {
                if let Some(&l) = lane_of.get(x.index()) {
                    sides[l] = Some(0);
                }
            }
            format!("link {} \u{2194} {} cut", nm(a), nm(b))
        }
    };
    NetPeriod {
        from,
        to,
        sides,
        label,
        partition: matches!(rule, NetRule::Partition { .. }),
        blocked,
    }
}
