//! [`TimelineModel`]: what a timeline chart shows, rebuilt from a run's names, roles, clocks,
//! trace events and check report. The live path (`run --chart`) and the saved-trace path
//! (`chart TRACE.jsonl`) both build this one model, so they draw the same picture.
//!
//! Everything is in true time (ns). Beliefs come from the actors' observations (leader claims,
//! lock holds); truth from the servers' observations (lease grants, Redis keys) and faults
//! (pauses, crashes, partitions); violations from the checkers.

use splitbrain_check::{CheckReport, Role};
use splitbrain_engine::{ClockConfig, Fault, LocalClock, NetRule, NodeId, SimTime, WallTime};
use splitbrain_protocols::Obs;
use std::collections::BTreeMap;

use crate::narrate::Event;

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
            Role::LeaseService | Role::RedisInstance => LaneGroup::Servers,
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
}

/// What the model is built from (the same for a live run and a saved trace).
pub struct ModelInput<'a> {
    /// Scenario name.
    pub name: &'a str,
    /// Seed.
    pub seed: u64,
    /// Node names by id.
    pub names: &'a [String],
    /// Node roles by id.
    pub roles: &'a [Role],
    /// Initial clocks by id.
    pub clocks: &'a [ClockConfig],
    /// End of the run.
    pub end: SimTime,
    /// The trace events, in order.
    pub events: &'a [Event],
    /// The checkers' report.
    pub report: &'a CheckReport,
}

/// Every node's clocks over true time, rebuilt from the initial configs and the
/// `ClockStep` / `SetDrift` faults in the trace (as the engine applies them).
pub struct Clocks {
    /// Per node: `(from, clock)` snapshots, `from` increasing; the first at 0.
    snaps: Vec<Vec<(SimTime, LocalClock)>>,
}

impl Clocks {
    /// Rebuilds the clocks of `n` nodes.
    pub fn new(configs: &[ClockConfig], n: usize, events: &[Event]) -> Clocks {
        let mut snaps: Vec<Vec<(SimTime, LocalClock)>> = (0..n)
            .map(|i| {
                let cfg = configs.get(i).copied().unwrap_or_default();
                vec![(SimTime::ZERO, LocalClock::new(cfg))]
            })
            .collect();
        for ev in events {
            let Event::Fault { t, fault } = ev else {
                continue;
            };
            let (node, f) = match fault {
                Fault::ClockStep { node, .. } | Fault::SetDrift { node, .. } => (*node, fault),
                _ => continue,
            };
            let Some(list) = snaps.get_mut(node.index()) else {
                continue;
            };
            let mut c = list.last().expect("one snapshot at least").1.clone();
            match f {
                Fault::ClockStep { delta_ns, .. } => c.step(*delta_ns),
                Fault::SetDrift { drift_ppm, .. } => c.set_drift(*t, *drift_ppm),
                _ => unreachable!(),
            }
            list.push((*t, c));
        }
        Clocks { snaps }
    }

    fn clock(&self, node: NodeId, t: SimTime) -> Option<&LocalClock> {
        let list = self.snaps.get(node.index())?;
        let k = list.partition_point(|(from, _)| *from <= t);
        list.get(k.saturating_sub(1)).map(|(_, c)| c)
    }

    /// Wall clock of `node` at `t`.
    pub fn wall(&self, node: NodeId, t: SimTime) -> WallTime {
        self.clock(node, t)
            .map_or(WallTime(t.0 as i64), |c| c.wall(t))
    }

    /// The true instant at or after `t` when `node`'s monotonic clock reads `local` (its
    /// belief deadlines are monotonic readings); `t` itself if it already has.
    pub fn true_time_of_mono(&self, node: NodeId, t: SimTime, local: u64) -> SimTime {
        let Some(list) = self.snaps.get(node.index()) else {
            return t;
        };
        let k = list
            .partition_point(|(from, _)| *from <= t)
            .saturating_sub(1);
        let mut start = t;
        for (i, (_, c)) in list.iter().enumerate().skip(k) {
            let now = c.mono(start).0;
            if now >= local {
                return start;
            }
            let at = c.true_time_after(start, splitbrain_engine::SimDuration(local - now));
            match list.get(i + 1) {
                Some((next, _)) if *next <= at => start = *next,
                _ => return at,
            }
        }
        start
    }

    /// The first true instant in `[from, to)` at which `node`'s wall clock reads at least
    /// `deadline` (a Redis key's expiry), if any.
    pub fn wall_reaches(
        &self,
        node: NodeId,
        from: SimTime,
        to: SimTime,
        deadline: WallTime,
    ) -> Option<SimTime> {
        let list = self.snaps.get(node.index())?;
        let k = list.partition_point(|(f, _)| *f <= from).saturating_sub(1);
        let mut start = from;
        for (i, (_, c)) in list.iter().enumerate().skip(k) {
            let seg_end = list.get(i + 1).map_or(to, |(f, _)| (*f).min(to));
            if start >= to {
                return None;
            }
            let w = c.wall(start).0;
            if w >= deadline.0 {
                return Some(start);
            }
            let need = (deadline.0 - w) as u64;
            let at = c.true_time_after(start, splitbrain_engine::SimDuration(need));
            if at < seg_end {
                return Some(at);
            }
            start = seg_end.max(start);
        }
        None
    }

    /// Wall clock minus true time of `node`, as continuous pieces over `[0, end]`.
    pub fn offsets(&self, node: NodeId, end: SimTime) -> Vec<Vec<(SimTime, i64)>> {
        let Some(list) = self.snaps.get(node.index()) else {
            return Vec::new();
        };
        let off = |c: &LocalClock, t: SimTime| c.wall(t).0.saturating_sub(t.0 as i64);
        let mut pieces: Vec<Vec<(SimTime, i64)>> = Vec::new();
        for (i, (from, c)) in list.iter().enumerate() {
            if *from > end {
                break;
            }
            let to = list.get(i + 1).map_or(end, |(f, _)| (*f).min(end));
            let first = (*from, off(c, *from));
            let stepped = i > 0 && c.steps_ns() != list[i - 1].1.steps_ns();
            match pieces.last_mut() {
                Some(p) if !stepped => p.push(first),
                _ => pieces.push(vec![first]),
            }
            let p = pieces.last_mut().expect("pushed above");
            if to > *from {
                p.push((to, off(c, to)));
            }
        }
        pieces
    }
}

impl TimelineModel {
    /// Builds the model.
    pub fn build(input: &ModelInput<'_>) -> TimelineModel {
        let n = input.names.len();
        let end = input.end;
        // Lanes: grouped by role, in id order within a group.
        let mut order: Vec<usize> = (0..n).collect();
        let group_of =
            |i: usize| LaneGroup::of(input.roles.get(i).copied().unwrap_or(Role::Worker));
        order.sort_by_key(|&i| (group_of(i), i));
        let mut lane_of = vec![0usize; n];
        let lanes: Vec<Lane> = order
            .iter()
            .enumerate()
            .map(|(lane, &i)| {
                lane_of[i] = lane;
                Lane {
                    node: NodeId(i as u32),
                    name: input.names[i].clone(),
                    role: input.roles.get(i).copied().unwrap_or(Role::Worker),
                    group: group_of(i),
                }
            })
            .collect();
        let lane = |id: NodeId| lane_of.get(id.index()).copied();
        let name = |id: NodeId| {
            input
                .names
                .get(id.index())
                .cloned()
                .unwrap_or_else(|| id.to_string())
        };
        let clocks = Clocks::new(input.clocks, n, input.events);
        let is_ll = |id: NodeId| input.roles.get(id.index()) == Some(&Role::LeaseLeader);

        let mut bands: Vec<Band> = Vec::new();
        let mut marks: Vec<Mark> = Vec::new();
        let mut arrows: Vec<Arrow> = Vec::new();
        let mut net: Vec<NetPeriod> = Vec::new();

        // Open intervals.
        let mut leaders: BTreeMap<NodeId, (SimTime, u64, Option<u64>)> = BTreeMap::new();
        // (node, lock) -> (since, token, believed validity end in true time)
        let mut holds: BTreeMap<(NodeId, String), OpenHold> = BTreeMap::new();
        let mut lease_tokens: BTreeMap<NodeId, u64> = BTreeMap::new();
        // lease service grants: (service, lease) -> (since, holder, token)
        let mut grants: BTreeMap<(NodeId, String), (SimTime, NodeId, u64)> = BTreeMap::new();
        let mut true_holds: Vec<(NodeId, SimTime, SimTime, Option<u64>)> = Vec::new();
        // Redis keys: (instance, key) -> (since, value, deadline)
        let mut keys: BTreeMap<(NodeId, String), (SimTime, String, Option<WallTime>)> =
            BTreeMap::new();
        let mut key_spans: Vec<(NodeId, String, String, SimTime, SimTime)> = Vec::new();
        let mut value_owner: BTreeMap<String, NodeId> = BTreeMap::new();
        let mut down: BTreeMap<NodeId, SimTime> = BTreeMap::new();
        let mut pending: BTreeMap<u64, (NodeId, NodeId, SimTime, String)> = BTreeMap::new();
        let mut rules: Vec<(SimTime, NetRule)> = Vec::new();

        let close_key = |spans: &mut Vec<(NodeId, String, String, SimTime, SimTime)>,
                         node: NodeId,
                         key: String,
                         (since, value, deadline): (SimTime, String, Option<WallTime>),
                         t: SimTime| {
            let to = deadline
                .and_then(|d| clocks.wall_reaches(node, since, t, d))
                .unwrap_or(t);
            spans.push((node, key, value, since, to));
        };
        let close_rules = |net: &mut Vec<NetPeriod>, rules: &mut Vec<(SimTime, NetRule)>, t| {
            for (from, rule) in rules.drain(..) {
                net.push(net_period(&rule, from, t, n, &lane_of, input.names));
            }
        };

        for ev in input.events {
            match ev {
                Event::Send {
                    t,
                    from,
                    to,
                    id,
                    kind,
                    ..
                } => {
                    pending.insert(*id, (*from, *to, *t, kind.clone()));
                }
                Event::Deliver { t, id, .. } | Event::Drop { t, id, .. } => {
                    let dropped = matches!(ev, Event::Drop { .. });
                    let info = if dropped {
                        pending.remove(id)
                    } else {
                        // A duplicate may be delivered again: keep the send.
                        pending.get(id).cloned()
                    };
                    if let Some((from, to, sent, kind)) = info {
                        if let (Some(a), Some(b)) = (lane(from), lane(to)) {
                            arrows.push(Arrow {
                                from: a,
                                to: b,
                                sent,
                                end: *t,
                                kind,
                                dropped,
                            });
                        }
                    }
                }
                Event::Fault { t, fault } => match fault {
                    Fault::Crash { node } => {
                        if let Some(l) = lane(*node) {
                            down.entry(*node).or_insert(*t);
                            if let Some((since, term, token)) = leaders.remove(node) {
                                bands.push(leader_band(l, since, *t, term, token));
                            }
                            let mine: Vec<(NodeId, String)> = holds
                                .keys()
                                .filter(|(who, _)| who == node)
                                .cloned()
                                .collect();
                            for k in mine {
                                let (since, token, valid) = holds.remove(&k).expect("listed");
                                push_hold(
                                    &mut bands,
                                    &mut marks,
                                    l,
                                    since,
                                    *t,
                                    &k.1,
                                    token,
                                    valid,
                                    is_ll(*node),
                                );
                            }
                            let mine: Vec<(NodeId, String)> = keys
                                .keys()
                                .filter(|(who, _)| who == node)
                                .cloned()
                                .collect();
                            for k in mine {
                                let v = keys.remove(&k).expect("listed");
                                close_key(&mut key_spans, k.0, k.1, v, *t);
                            }
                        }
                    }
                    Fault::Restart { node } => {
                        if let (Some(l), Some(since)) = (lane(*node), down.remove(node)) {
                            bands.push(Band {
                                lane: l,
                                from: since,
                                to: *t,
                                kind: BandKind::Crashed,
                            });
                        }
                    }
                    Fault::Pause { node, duration } => {
                        if let Some(l) = lane(*node) {
                            bands.push(Band {
                                lane: l,
                                from: *t,
                                to: t.saturating_add(*duration).min(end.max(*t)),
                                kind: BandKind::Paused,
                            });
                        }
                    }
                    Fault::Network { rule } => rules.push((*t, rule.clone())),
                    Fault::Heal => close_rules(&mut net, &mut rules, *t),
                    Fault::ClockStep { node, delta_ns } => {
                        if let Some(l) = lane(*node) {
                            marks.push(Mark {
                                lane: l,
                                t: *t,
                                kind: MarkKind::ClockStep {
                                    delta_ns: *delta_ns,
                                },
                            });
                        }
                    }
                    Fault::SetDrift { .. } | Fault::SetLoss { .. } => {}
                },
                Event::Observe { t, node, obs } => {
                    let Some(l) = lane(*node) else { continue };
                    let t = *t;
                    match obs {
                        Obs::LeaderClaim { term } => {
                            let token = lease_tokens.get(node).copied();
                            leaders.entry(*node).or_insert((t, *term, token));
                        }
                        Obs::LeaderStepDown { .. } => {
                            if let Some((since, term, token)) = leaders.remove(node) {
                                bands.push(leader_band(l, since, t, term, token));
                            }
                        }
                        Obs::LockAcquired {
                            lock,
                            token,
                            value,
                            valid_until_local,
                        } => {
                            value_owner.insert(value.clone(), *node);
                            if let Some(tok) = token {
                                lease_tokens.insert(*node, *tok);
                            }
                            let valid = clocks.true_time_of_mono(*node, t, valid_until_local.0);
                            let e = holds
                                .entry((*node, lock.clone()))
                                .or_insert((t, *token, None));
                            e.2 = Some(valid);
                        }
                        Obs::LockRenewed {
                            lock,
                            valid_until_local,
                            ..
                        } => {
                            let valid = clocks.true_time_of_mono(*node, t, valid_until_local.0);
                            if let Some(e) = holds.get_mut(&(*node, lock.clone())) {
                                e.2 = Some(valid);
                            }
                        }
                        Obs::LockReleased { lock } | Obs::LockLost { lock, .. } => {
                            if let Some((since, token, valid)) =
                                holds.remove(&(*node, lock.clone()))
                            {
                                push_hold(
                                    &mut bands,
                                    &mut marks,
                                    l,
                                    since,
                                    t,
                                    lock,
                                    token,
                                    valid,
                                    is_ll(*node),
                                );
                            }
                        }
                        Obs::LeaseGranted {
                            lease,
                            holder,
                            token,
                            ..
                        } => {
                            let k = (*node, lease.clone());
                            if let Some((since, h, tok)) = grants.remove(&k) {
                                push_grant(&mut bands, &mut true_holds, l, since, t, h, tok, &name);
                            }
                            grants.insert(k, (t, *holder, *token));
                        }
                        Obs::LeaseFreed { lease, .. } => {
                            if let Some((since, h, tok)) = grants.remove(&(*node, lease.clone())) {
                                push_grant(&mut bands, &mut true_holds, l, since, t, h, tok, &name);
                            }
                        }
                        Obs::RedisKeySet {
                            key,
                            value,
                            deadline_wall,
                        } => {
                            let k = (*node, key.clone());
                            if let Some(v) = keys.remove(&k) {
                                close_key(&mut key_spans, *node, key.clone(), v, t);
                            }
                            keys.insert(k, (t, value.clone(), *deadline_wall));
                        }
                        Obs::RedisKeyExpiry { key, deadline_wall } => {
                            let k = (*node, key.clone());
                            if let Some(v) = keys.remove(&k) {
                                let gone = v.2.and_then(|d| clocks.wall_reaches(*node, v.0, t, d));
                                if gone.is_some() {
                                    close_key(&mut key_spans, *node, key.clone(), v, t);
                                } else {
                                    keys.insert(k, (v.0, v.1, *deadline_wall));
                                }
                            }
                        }
                        Obs::RedisKeyDeleted { key } => {
                            if let Some(v) = keys.remove(&(*node, key.clone())) {
                                close_key(&mut key_spans, *node, key.clone(), v, t);
                            }
                        }
                        Obs::RedisRestarted { keys: survived } => {
                            for (key, value, deadline) in survived {
                                keys.insert((*node, key.clone()), (t, value.clone(), *deadline));
                            }
                        }
                        Obs::WriteAccepted { writer, token, .. } => marks.push(Mark {
                            lane: l,
                            t,
                            kind: MarkKind::WriteAccepted {
                                writer: name(*writer),
                                token: *token,
                            },
                        }),
                        Obs::WriteRejected { writer, token, .. } => marks.push(Mark {
                            lane: l,
                            t,
                            kind: MarkKind::WriteRejected {
                                writer: name(*writer),
                                token: *token,
                            },
                        }),
                        _ => {}
                    }
                }
                Event::Start { .. } | Event::Timer { .. } | Event::Resume { .. } => {}
            }
        }
        // Close what is still open at the end.
        for (node, (since, term, token)) in std::mem::take(&mut leaders) {
            if let Some(l) = lane(node) {
                bands.push(leader_band(l, since, end, term, token));
            }
        }
        for ((node, lock), (since, token, valid)) in std::mem::take(&mut holds) {
            if let Some(l) = lane(node) {
                push_hold(
                    &mut bands,
                    &mut marks,
                    l,
                    since,
                    end,
                    &lock,
                    token,
                    valid,
                    is_ll(node),
                );
            }
        }
        for ((service, _), (since, h, tok)) in std::mem::take(&mut grants) {
            if let Some(l) = lane(service) {
                push_grant(&mut bands, &mut true_holds, l, since, end, h, tok, &name);
            }
        }
        for ((node, key), v) in std::mem::take(&mut keys) {
            close_key(&mut key_spans, node, key, v, end);
        }
        for (node, since) in down {
            if let Some(l) = lane(node) {
                bands.push(Band {
                    lane: l,
                    from: since,
                    to: end,
                    kind: BandKind::Crashed,
                });
            }
        }
        close_rules(&mut net, &mut rules, end);

        // Redis keys on instance lanes, and majority truth for their owners.
        let instances = input
            .roles
            .iter()
            .filter(|r| **r == Role::RedisInstance)
            .count();
        for (node, key, value, from, to) in &key_spans {
            if let Some(l) = lane(*node) {
                bands.push(Band {
                    lane: l,
                    from: *from,
                    to: *to,
                    kind: BandKind::Key {
                        key: key.clone(),
                        holder: value_owner.get(value).map(|o| name(*o)),
                    },
                });
            }
        }
        true_holds.extend(redis_majorities(&key_spans, &value_owner, instances));

        // Truth strips under beliefs, and the stale part of each belief.
        let has_truth = !true_holds.is_empty();
        let mut extra = Vec::new();
        for b in &bands {
            let believes = matches!(b.kind, BandKind::Holds { .. })
                || matches!(b.kind, BandKind::Leader { token: Some(_), .. });
            if !believes || !has_truth {
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
                    extra.push(Band {
                        lane: b.lane,
                        from: at,
                        to: f,
                        kind: BandKind::Stale,
                    });
                }
                at = at.max(t);
            }
            if at < b.to {
                extra.push(Band {
                    lane: b.lane,
                    from: at,
                    to: b.to,
                    kind: BandKind::Stale,
                });
            }
        }
        for (node, from, to, token) in &true_holds {
            if let Some(l) = lane(*node) {
                extra.push(Band {
                    lane: l,
                    from: *from,
                    to: *to,
                    kind: BandKind::TrueHold { token: *token },
                });
            }
        }
        bands.extend(extra);
        bands.sort_by_key(|b| (b.lane, b.from, b.to));
        marks.sort_by_key(|m| (m.lane, m.t));

        let violations = input
            .report
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
                    .filter_map(|nm| input.names.iter().position(|x| x == nm))
                    .map(|i| lane_of[i])
                    .collect(),
            })
            .collect();

        let clocks = lanes
            .iter()
            .enumerate()
            .map(|(l, lane)| ClockSeries {
                lane: l,
                pieces: clocks.offsets(lane.node, end),
            })
            .collect();

        TimelineModel {
            name: input.name.to_string(),
            seed: input.seed,
            end,
            lanes,
            bands,
            marks,
            arrows,
            net,
            violations,
            clocks,
        }
    }
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

#[allow(clippy::too_many_arguments)]
fn push_grant(
    bands: &mut Vec<Band>,
    true_holds: &mut Vec<(NodeId, SimTime, SimTime, Option<u64>)>,
    lane: usize,
    from: SimTime,
    to: SimTime,
    holder: NodeId,
    token: u64,
    name: &dyn Fn(NodeId) -> String,
) {
    bands.push(Band {
        lane,
        from,
        to,
        kind: BandKind::Grant {
            holder: name(holder),
            token,
        },
    });
    true_holds.push((holder, from, to, Some(token)));
}

/// Intervals during which a majority of the Redis instances hold one client's value.
fn redis_majorities(
    spans: &[(NodeId, String, String, SimTime, SimTime)],
    owner: &BTreeMap<String, NodeId>,
    instances: usize,
) -> Vec<(NodeId, SimTime, SimTime, Option<u64>)> {
    if instances == 0 {
        return Vec::new();
    }
    let need = instances / 2 + 1;
    let mut by_value: BTreeMap<&str, Vec<(SimTime, i32)>> = BTreeMap::new();
    for (_, _, value, from, to) in spans {
        if from < to {
            let e = by_value.entry(value.as_str()).or_default();
            e.push((*from, 1));
            e.push((*to, -1));
        }
    }
    let mut out = Vec::new();
    for (value, mut edges) in by_value {
        let Some(who) = owner.get(value) else {
            continue;
        };
        edges.sort();
        let mut count = 0i32;
        let mut open: Option<SimTime> = None;
        for (t, d) in edges {
            count += d;
            let held = count as usize >= need && count > 0;
            match (held, open) {
                (true, None) => open = Some(t),
                (false, Some(s)) => {
                    if s < t {
                        out.push((*who, s, t, None));
                    }
                    open = None;
                }
                _ => {}
            }
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
    }
}
