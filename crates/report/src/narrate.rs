//! Narration: a run told as a story for a class, one line per step that matters
//! ("1.204 s  n2 -> n5  ELECTION", "45.000 s  client-1 resumes after a 40.000 s pause").

use crate::bulk::{bulk_kind, BULK_ARROWS};
use splitbrain_engine::{
    DropReason, Fault, FaultEffect, NetRule, NodeId, SimDuration, SimTime, TraceEvent, WallTime,
};
use splitbrain_protocols::lease::LeaseClientTimer;
use splitbrain_protocols::redis::{RedisMsg, Reply};
use splitbrain_protocols::storage::StorageMsg;
use splitbrain_protocols::ClientTimer;
use splitbrain_protocols::{Msg, Obs, Timer};
use std::collections::BTreeMap;
use std::fmt::Write;

pub use crate::event::Event;
pub use crate::key_loss::key_lost_at;

/// What to leave out of a narration.
#[derive(Clone, Debug, Default)]
pub struct NarrationOptions {
    /// Message kinds not to mention (e.g. "HEARTBEAT").
    pub hide_kinds: Vec<String>,
    /// Leave out message sends entirely (keep drops of interest? no: all messages).
    pub hide_messages: bool,
    /// Stop after this many lines (None: all).
    pub max_lines: Option<usize>,
    /// Facts derived from the run rather than recorded by an actor (see [`derived_facts`]),
    /// told at their true time `t`, after the recorded events of that instant (which caused
    /// them): `(t, sentence)`.
    pub facts: Vec<(SimTime, String)>,
    /// Per fault of the events, in order, what it did (the record's `fault_effects`), to
    /// tell a fault that changed nothing and a pause as it ran; a fault past the end of the
    /// list is told as if it changed something.
    pub effects: Vec<FaultEffect>,
}

/// Facts no actor reports but a student needs to see, derived with the checkers' own truth:
/// a Redis key expiring by its instance's wall clock (Redis expires keys lazily, so no command
/// marks the moment; a clock step can bring it forward), and a live key lost with its
/// instance's crash. The truth keeps a crashed instance's key counting for its value until
/// the key's deadline or the instance's return ([`KeyHold`](splitbrain_check::KeyHold): a
/// down instance votes for nobody else); that rule is about votes. What the instance holds
/// is gone with the crash, so the story says so at the crash ([`key_lost_at`]) and tells no
/// expiry of a key the instance no longer has; its return says what it came back with.
pub fn derived_facts(record: &splitbrain_check::RunRecord) -> Vec<(SimTime, String)> {
    let clocks = splitbrain_check::WallClocks::new(record);
    let truth = splitbrain_check::Truth::new(record, &clocks);
    let mut facts: Vec<(SimTime, String)> = Vec::new();
    for k in &truth.keys {
        let owner = k
            .holder
            .map(|h| format!("{}'s lock", record.name(h)))
            .unwrap_or_else(|| format!("value {}", k.value));
        let instance = record.name(k.instance);
        let crash = key_lost_at(record, k);
        if let Some(t) = crash {
            facts.push((
                t,
                format!(
                    "{instance}: key {} ({owner}) is LOST with the crash (it was in memory; \
                     {instance} answers nobody until it is back, with only what its \
                     persistence kept)",
                    k.key
                ),
            ));
        }
        let Some(end) = k.end.as_ref() else {
            continue;
        };
        if end.source() != splitbrain_check::Source::Derived || crash.is_some() {
            continue;
        }
        facts.push((
            end.t(),
            format!(
                "{instance}: key {} ({owner}) EXPIRES by {instance}'s own wall clock",
                k.key
            ),
        ));
    }
    facts.sort();
    facts
}

fn name(names: &[String], n: NodeId) -> &str {
    names.get(n.index()).map_or("?", String::as_str)
}

fn secs(ns: u64) -> String {
    SimDuration(ns).to_string()
}

/// Why a fault step happened, naming the fault (which one, on which node, at what true
/// time): what the view shows as a fault's cause. The one place a fault's origin is put into
/// words.
pub fn fault_cause(names: &[String], t: SimTime, f: &Fault) -> String {
    format!(
        "the scenario's fault plan (or its nemesis), at {}: {}",
        clock(t),
        f.describe(names)
    )
}

fn token(t: &Option<u64>) -> String {
    t.map_or_else(|| "no token".to_string(), |t| format!("token {t}"))
}

/// One sentence for an observation by `who`.
///
/// Long because: one arm per kind of client and leader observation, each its sentence.
pub fn describe_obs(names: &[String], who: &str, o: &Obs) -> String {
    // A worker thread's claim names its thread: "client-1 (thread 2) acquires ...".
    let threaded;
    let who = match o.thread() {
        Some(t) => {
            threaded = format!("{who} (thread {t})");
            threaded.as_str()
        }
        None => who,
    };
    match o {
        Obs::SharedTokenRelease {
            lock, value, own, ..
        } => format!(
            "{who} releases lock \"{lock}\" with value {value} from the SHARED lock object, \
             another thread's token (its own hold's was {own}): the release script deletes \
             that thread's key"
        ),
        Obs::LeaderClaim { term } => format!("{who} claims LEADERSHIP (term {term})"),
        Obs::LeaderStepDown { term } => format!("{who} steps down as leader (term {term})"),
        Obs::ElectionStarted => format!("{who} starts an election"),
        Obs::LeaderKnown { leader } => format!("{who} accepts {} as leader", name(names, *leader)),
        Obs::LockRequested { lock, .. } => format!("{who} requests lock \"{lock}\""),
        Obs::LockAcquired {
            lock,
            token: t,
            valid_until_local,
            ..
        } => format!(
            "{who} ACQUIRES \"{lock}\" ({}), believes it valid until local {}",
            token(t),
            secs(valid_until_local.0)
        ),
        Obs::LockRenewed {
            lock,
            valid_until_local,
            ..
        } => {
            format!(
                "{who} renews \"{lock}\", now valid until local {}",
                secs(valid_until_local.0)
            )
        }
        Obs::LockFailed {
            thread: _,
            lock,
            reason,
        } => format!("{who} fails to acquire \"{lock}\": {reason}"),
        Obs::LockReleased { thread: _, lock } => format!("{who} releases \"{lock}\""),
        Obs::LockLost {
            thread: _,
            lock,
            reason,
        } => format!("{who} gives up \"{lock}\": {reason}"),
        Obs::LockBeliefPastDeadline {
            lock,
            until_local,
            reason,
            ..
        } => {
            let until = match until_local {
                Some(u) => format!(" until local {}", secs(u.0)),
                None => " with NO deadline".to_string(),
            };
            format!("{who} goes on believing it holds \"{lock}\"{until}: {reason}")
        }
        Obs::ValidityChecked {
            thread: _,
            lock,
            valid,
            remaining_ns,
        } => {
            // The verdict and the deadline can disagree: a client that checks by asking its
            // servers (Redlock's quorum count) or whose belief outlasts its deadline (a
            // lease client's `grace`, `until_denied`, `renew_attempts`) says so.
            let left = secs(remaining_ns.unsigned_abs());
            match (*valid, *remaining_ns > 0) {
                (true, true) => {
                    format!("{who} checks \"{lock}\": still valid, {left} left by its own clock")
                }
                (true, false) => format!(
                    "{who} checks \"{lock}\": counts it still VALID although its local deadline \
                     passed {left} ago by its own clock"
                ),
                (false, false) => {
                    format!("{who} checks \"{lock}\": EXPIRED {left} ago by its own clock")
                }
                (false, true) => format!(
                    "{who} checks \"{lock}\": NOT valid (its lock client says no), though \
                     {left} were left by its own clock"
                ),
            }
        }
        Obs::WriteSent { token: t, job, .. } => match job {
            Some(j) => format!("{who} sends its write for job {j} ({})", token(t)),
            None => format!("{who} sends its write ({})", token(t)),
        },
        Obs::LeaseGranted { .. }
        | Obs::LeaseRenewed { .. }
        | Obs::LeaseFreed { .. }
        | Obs::RedisKeySet { .. }
        | Obs::RedisKeyExpiry { .. }
        | Obs::RedisKeyDeleted { .. }
        | Obs::RedisRestarted { .. }
        | Obs::RaftApplied { .. }
        | Obs::RaftKeyCreated { .. }
        | Obs::RaftKeyDeleted { .. }
        | Obs::RedisReplicaOf { .. }
        | Obs::RedisPromoted { .. }
        | Obs::WriteAccepted { .. }
        | Obs::WriteRejected { .. } => describe_server_obs(names, who, o),
    }
}

/// [`describe_obs`] of the servers' observations (the truth: lease grants, Redis keys, Raft
/// commits, storage writes); a client's or leader's observation is not one of them.
///
/// Long because: one arm per kind of server observation, each its sentence.
fn describe_server_obs(names: &[String], who: &str, o: &Obs) -> String {
    match o {
        Obs::LeaseGranted {
            lease,
            holder,
            token,
            ttl_ns,
        } => format!(
            "{who} grants lease \"{lease}\" to {} (token {token}, ttl {})",
            name(names, *holder),
            secs(*ttl_ns)
        ),
        Obs::LeaseRenewed {
            lease,
            holder,
            token,
        } => {
            format!(
                "{who} renews lease \"{lease}\" of {} (token {token})",
                name(names, *holder)
            )
        }
        Obs::LeaseFreed {
            lease,
            holder,
            token,
            expired,
        } => {
            let how = if *expired { "EXPIRES" } else { "is released" };
            format!(
                "{who}: lease \"{lease}\" of {} (token {token}) {how}",
                name(names, *holder)
            )
        }
        Obs::RedisKeySet {
            key,
            value,
            deadline_wall,
        } => match deadline_wall {
            Some(d) => format!("{who}: SET {key} = {value}, expires at wall {}", wall(d.0)),
            None => format!("{who}: SET {key} = {value} (no expiry)"),
        },
        Obs::RedisKeyExpiry { key, deadline_wall } => match deadline_wall {
            Some(d) => format!("{who}: {key} now expires at wall {}", wall(d.0)),
            None => format!("{who}: {key} no longer expires"),
        },
        Obs::RedisKeyDeleted { key } => format!("{who}: {key} deleted"),
        Obs::RedisRestarted { keys } if keys.is_empty() => {
            format!("{who} is back EMPTY: no key survived its crash")
        }
        Obs::RedisRestarted { keys } => {
            let names: Vec<&str> = keys.iter().map(|(k, _, _)| k.as_str()).collect();
            format!(
                "{who} is back with {} key(s) its persistence kept: {}",
                keys.len(),
                names.join(", ")
            )
        }
        Obs::RaftApplied {
            index,
            term,
            digest,
        } => format!("{who} applies log entry {index} (term {term}, digest {digest:016x})"),
        Obs::RaftKeyCreated {
            lock,
            holder,
            revision,
            ..
        } => format!(
            "{who} applies the COMMITTED grant of \"{lock}\" to {} (create revision {revision}: the fencing token)",
            name(names, *holder)
        ),
        Obs::RaftKeyDeleted {
            lock,
            revision,
            expired,
        } => {
            let how = if *expired {
                "its lease EXPIRED (the leader's decision, committed)"
            } else {
                "released"
            };
            format!("{who} applies the deletion of \"{lock}\" (create revision {revision}): {how}")
        }
        Obs::RedisReplicaOf { primary } => {
            format!("{who} replicates {}", name(names, *primary))
        }
        Obs::RedisPromoted { primary } => {
            format!(
                "{who} is PROMOTED to primary in place of {}",
                name(names, *primary)
            )
        }
        Obs::WriteAccepted {
            writer,
            token: t,
            job,
            applied,
            ..
        } => {
            let dup = if *applied {
                ""
            } else {
                " (duplicate job: no effect)"
            };
            let job = job.map(|j| format!(", job {j}")).unwrap_or_default();
            format!(
                "{who} ACCEPTS the write of {} ({}{job}){dup}",
                name(names, *writer),
                token(t)
            )
        }
        Obs::WriteRejected {
            writer,
            token: t,
            highest,
            reason,
        } => {
            let hi = highest
                .map(|h| format!(", highest accepted {h}"))
                .unwrap_or_default();
            format!(
                "{who} REJECTS the write of {} ({}{hi}): {reason}",
                name(names, *writer),
                token(t)
            )
        }
        _ => unreachable!("only the server observations are told here"),
    }
}

/// A wall reading as the UTC time it is ("2026-01-01T00:00:10.002Z"): wall clocks read
/// Unix time, and a step shows as a jump in the date.
fn wall(ns: i64) -> String {
    WallTime(ns).rfc3339()
}

/// Why a message was dropped, in words; a drop by a network rule names the kind of the first
/// rule in force (`rules`, in the order added, as the engine checks them) that cuts the link.
fn drop_reason(r: DropReason, rules: &[NetRule], from: NodeId, to: NodeId) -> &'static str {
    match r {
        DropReason::Loss => "lost",
        DropReason::Partition => match rules.iter().find(|rule| rule.cuts(from, to)) {
            Some(NetRule::Block { .. }) => "dropped: one-way block",
            Some(NetRule::Cut { .. }) => "dropped: link cut",
            _ => "dropped: partition",
        },
        DropReason::NodeDown => "dropped: receiver down",
        DropReason::Crashed => "dropped: receiver crashed",
    }
}

/// The client that reported acquiring with each Redis lock value (the first to), so a
/// deleted key can say whose value it held.
fn owners(events: &[Event]) -> BTreeMap<String, NodeId> {
    let mut out = BTreeMap::new();
    for e in events {
        if let TraceEvent::Observe {
            node,
            obs: Obs::LockAcquired { value, .. },
            ..
        } = e
        {
            out.entry(value.clone()).or_insert(*node);
        }
    }
    out
}

/// A true time for the story: seconds with millisecond precision, rounded half up as
/// verdicts write their times ([`splitbrain_check::fmt_secs`], "2.253 s" in both for an
/// event at 2.252500 s). Exact nanoseconds are in the trace.
fn clock(t: SimTime) -> String {
    splitbrain_check::fmt_secs(t, 3)
}

/// Removes and returns the items of `v` that match `f`, keeping the order of both parts.
fn take_where<T>(v: &mut Vec<T>, f: impl Fn(&T) -> bool) -> Vec<T> {
    let (taken, kept) = std::mem::take(v).into_iter().partition(|x| f(x));
    *v = kept;
    taken
}

/// The leader each node was last told, to tell only changes: a follower accepts its leader
/// again for each of its COORDINATOR and HEARTBEAT messages, and only a change of belief is
/// news (for the narration and the view's steps alike).
#[derive(Default)]
pub(crate) struct Acceptances(BTreeMap<NodeId, NodeId>);

impl Acceptances {
    /// Whether `obs` by `node` is news: every observation is, except a `LeaderKnown` of the
    /// leader the node already accepted since its last election, claim or step-down.
    pub(crate) fn is_news(&mut self, node: NodeId, obs: &Obs) -> bool {
        match obs {
            Obs::LeaderKnown { leader } => self.0.insert(node, *leader) != Some(*leader),
            // An election or a claim of its own ends the node's belief in a leader: accepting
            // the same one afterwards is news.
            Obs::ElectionStarted | Obs::LeaderClaim { .. } | Obs::LeaderStepDown { .. } => {
                self.0.remove(&node);
                true
            }
            _ => true,
        }
    }

    /// A crash ends `node`'s belief in a leader.
    pub(crate) fn crashed(&mut self, node: NodeId) {
        self.0.remove(&node);
    }
}

/// Tells `events` as text, one line per step: time, then what happened. A message is told
/// once: the sends of a node's step that also observed something are named on that
/// observation's line ("client-2 requests lock \"lock\"  [LEASE_ACQUIRE -> locks]"), the
/// others one line each; runs of bulk traffic (heartbeats, [`bulk_kinds`]) are folded into one
/// line that says how many.
pub fn narrate(names: &[String], events: &[Event], opts: &NarrationOptions) -> String {
    let mut story = Story::new(names, events, opts);
    story.start(events);
    for ev in events {
        if story.stopped {
            break;
        }
        story.tell(ev);
    }
    story.finish()
}

/// The kinds a narration folds: the chart's bulk kind (the one it draws faint and the view
/// starts unticked: most of the traffic, as heartbeats are), then, by the same rule over the
/// kinds left, any kind of at least 100 messages that is bulk among them (Raft's APPEND_ACK,
/// once its APPEND_ENTRIES are set aside). Counted over the sends of `events`, sorted.
pub fn bulk_kinds(events: &[Event]) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in events {
        if let TraceEvent::Send { kind, .. } = e {
            *counts.entry(kind.as_str()).or_default() += 1;
        }
    }
    let mut out: Vec<String> = Vec::new();
    while let Some(k) = bulk_kind(&counts) {
        if !out.is_empty() && counts[k] < BULK_ARROWS {
            break;
        }
        out.push(k.to_string());
        counts.remove(k);
    }
    out.sort();
    out
}

/// A message kind as told: a storage's reply says whether the write was rejected or had no
/// effect (a `WRITE_ACK` that refuses is not an acknowledgement).
fn label(kind: &str, msg: &Msg) -> String {
    match msg {
        Msg::Storage(m) => match &**m {
            StorageMsg::Ack {
                accepted: false, ..
            } => format!("{kind} (write REJECTED)"),
            StorageMsg::Ack { applied: false, .. } => format!("{kind} (accepted, no effect)"),
            _ => kind.to_string(),
        },
        _ => kind.to_string(),
    }
}

/// One thing a node's step says, held until the step ends so its sends can be named with
/// its observations.
enum Said {
    /// A send by the step's node, told on its own line unless an observation names it.
    Send { to: NodeId, kind: String },
    /// A drop of a message sent to `to`, told on its own line (or folded, if bulk).
    Drop {
        to: NodeId,
        kind: String,
        reason: &'static str,
    },
    /// An observation's line; `claim` is set for a leadership claim (its followers'
    /// acceptances held back are told right after it).
    Obs { line: String, claim: bool },
    /// Any other line of the step.
    Line(String),
}

/// A run of bulk messages told as one line ([`bulk_kinds`]).
struct Fold {
    /// True time of the first message.
    from: SimTime,
    /// True time of the last.
    to: SimTime,
    /// Per kind, how many were sent.
    sent: BTreeMap<String, usize>,
    /// Per reason, how many were dropped.
    dropped: BTreeMap<&'static str, usize>,
    /// Every node that sent or was sent one.
    nodes: std::collections::BTreeSet<NodeId>,
    /// The line of the run's only message, told as is if it stays alone.
    single: String,
}

/// The state of a narration under way: what is told so far and what is known of each node
/// to tell the next step (see [`narrate`]).
struct Story<'a> {
    names: &'a [String],
    opts: &'a NarrationOptions,
    out: String,
    lines: usize,
    stopped: bool,
    /// Message kinds by message id, and the label each send was told with.
    kinds: BTreeMap<u64, String>,
    bulk: Vec<String>,
    paused_at: BTreeMap<NodeId, SimTime>,
    /// What each node believes now, to say it when the node wakes from a pause.
    holds: BTreeMap<NodeId, String>,
    leads: BTreeMap<NodeId, u64>,
    accepted: Acceptances,
    /// Why a node's handler runs now, when it is a failed request: a lease request that timed
    /// out, or a LEASE_DENIED that arrived. A `LockRenewed` it observes then is a failed
    /// renewal the client carries on from (`stop_on_renew_failure: false`), not a renewal.
    failed_request: BTreeMap<NodeId, &'static str>,
    /// Each Redis instance's value per key, to say whose value a DEL removed.
    values: BTreeMap<(NodeId, String), String>,
    value_owner: BTreeMap<String, NodeId>,
    effects: std::slice::Iter<'a, FaultEffect>,
    /// The network rules in force, in the order added (the engine's), to say which kind of
    /// rule dropped a message.
    rules: Vec<NetRule>,
    /// Each Redis request's kind (SET, EVAL, ...) by (client, instance, request id), to name
    /// the command an error reply refuses.
    requests: BTreeMap<(NodeId, NodeId, u64), String>,
    /// Index of the next derived fact to tell.
    fact: usize,
    /// "n1 accepts n5 as leader" told before n5 claims it at the same instant (nodes start in
    /// id order, so a configured leader's followers start first): held back until the claim,
    /// or until time moves on.
    deferred: Vec<(SimTime, NodeId, String)>,
    /// The step under way: its instant, its node, what it said.
    step: Option<(SimTime, NodeId, Vec<Said>)>,
    fold: Option<Fold>,
}

impl<'a> Story<'a> {
    fn new(names: &'a [String], events: &[Event], opts: &'a NarrationOptions) -> Story<'a> {
        Story {
            names,
            opts,
            out: String::new(),
            lines: 0,
            stopped: false,
            kinds: BTreeMap::new(),
            bulk: bulk_kinds(events),
            paused_at: BTreeMap::new(),
            holds: BTreeMap::new(),
            leads: BTreeMap::new(),
            accepted: Acceptances::default(),
            failed_request: BTreeMap::new(),
            values: BTreeMap::new(),
            value_owner: owners(events),
            effects: opts.effects.iter(),
            rules: Vec::new(),
            requests: BTreeMap::new(),
            fact: 0,
            deferred: Vec::new(),
            step: None,
            fold: None,
        }
    }

    fn name(&self, n: NodeId) -> &'a str {
        name(self.names, n)
    }

    /// Writes one line at `t`, or "..." and stops once `max_lines` are told.
    fn write(&mut self, t: SimTime, line: &str) {
        if self.stopped {
            return;
        }
        if self.opts.max_lines.is_some_and(|m| self.lines >= m) {
            let _ = writeln!(self.out, "{:>10}  ...", "");
            self.stopped = true;
            return;
        }
        let _ = writeln!(self.out, "{:>10}  {line}", clock(t));
        self.lines += 1;
    }

    /// Writes a line that is not bulk traffic: the fold under way first.
    fn say(&mut self, t: SimTime, line: &str) {
        self.end_fold();
        self.write(t, line);
    }

    fn hidden(&self, kind: &str) -> bool {
        self.opts.hide_messages
            || self
                .opts
                .hide_kinds
                .iter()
                .any(|k| k.eq_ignore_ascii_case(kind))
    }

    fn is_bulk(&self, kind: &str) -> bool {
        self.bulk.iter().any(|k| k == kind)
    }

    /// Adds a bulk message (sent, or dropped for `dropped`) to the fold under way.
    fn fold_in(
        &mut self,
        t: SimTime,
        from: NodeId,
        to: NodeId,
        kind: &str,
        dropped: Option<&'static str>,
        line: String,
    ) {
        let f = self.fold.get_or_insert_with(|| Fold {
            from: t,
            to: t,
            sent: BTreeMap::new(),
            dropped: BTreeMap::new(),
            nodes: Default::default(),
            single: line.clone(),
        });
        f.to = t;
        match dropped {
            Some(reason) => *f.dropped.entry(reason).or_default() += 1,
            None => *f.sent.entry(kind.to_string()).or_default() += 1,
        }
        f.nodes.extend([from, to]);
        if f.sent.values().sum::<usize>() + f.dropped.values().sum::<usize>() > 1 {
            f.single.clear();
        }
    }

    /// Tells the fold under way, if any: its only message as is, else one line with counts.
    fn end_fold(&mut self) {
        let Some(f) = self.fold.take() else { return };
        if !f.single.is_empty() {
            return self.write(f.from, &f.single);
        }
        let sent: Vec<String> = f.sent.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let nodes: Vec<&str> = f.nodes.iter().map(|n| self.name(*n)).collect();
        let until = if f.to > f.from {
            format!(" until {}", clock(f.to))
        } else {
            String::new()
        };
        let dropped: Vec<String> = f.dropped.iter().map(|(r, n)| format!("{n} {r}")).collect();
        let dropped = if dropped.is_empty() {
            String::new()
        } else {
            format!("; {}", dropped.join(", "))
        };
        let line = format!(
            "[folded] {} message(s){until} among {}{dropped}",
            if sent.is_empty() {
                "0".to_string()
            } else {
                sent.join(", ")
            },
            nodes.join(", ")
        );
        self.write(f.from, &line);
    }

    /// Adds what `node`'s step at `t` says, ending the step under way if this is another.
    fn add(&mut self, t: SimTime, node: NodeId, said: Said) {
        if self
            .step
            .as_ref()
            .is_some_and(|(st, sn, _)| (*st, *sn) != (t, node))
        {
            self.end_step();
        }
        self.step
            .get_or_insert_with(|| (t, node, Vec::new()))
            .2
            .push(said);
    }

    /// Tells the step under way: its sends named on its first observation's line if it has
    /// one, else each on its own line; bulk messages folded.
    fn end_step(&mut self) {
        let Some((t, node, said)) = self.step.take() else {
            return;
        };
        let has_obs = said.iter().any(|s| matches!(s, Said::Obs { .. }));
        let mut merged: Vec<(String, Vec<NodeId>)> = Vec::new();
        let mut rest: Vec<Said> = Vec::new();
        for s in said {
            match s {
                Said::Send { to, kind } if has_obs && !self.is_bulk(&kind) => {
                    match merged.iter_mut().find(|(k, _)| *k == kind) {
                        Some((_, tos)) => tos.push(to),
                        None => merged.push((kind, vec![to])),
                    }
                }
                other => rest.push(other),
            }
        }
        let mut first_obs = true;
        for s in rest {
            match s {
                Said::Send { to, kind } => {
                    let line = format!("{} -> {}  {kind}", self.name(node), self.name(to));
                    if self.is_bulk(&kind) {
                        self.fold_in(t, node, to, &kind, None, line);
                    } else {
                        self.say(t, &line);
                    }
                }
                Said::Drop { to, kind, reason } => {
                    let line = format!("{} -> {}  {kind} {reason}", self.name(node), self.name(to));
                    if self.is_bulk(&kind) {
                        self.fold_in(t, node, to, &kind, Some(reason), line);
                    } else {
                        self.say(t, &line);
                    }
                }
                Said::Obs { mut line, claim } => {
                    if first_obs && !merged.is_empty() {
                        let sends: Vec<String> = merged
                            .iter()
                            .map(|(k, tos)| {
                                let tos: Vec<&str> = tos.iter().map(|n| self.name(*n)).collect();
                                format!("{k} -> {}", tos.join(", "))
                            })
                            .collect();
                        let _ = write!(line, "  [{}]", sends.join("; "));
                    }
                    first_obs = false;
                    self.say(t, &line);
                    if claim {
                        for (dt, _, l) in take_where(&mut self.deferred, |d| d.1 == node) {
                            self.say(dt, &l);
                        }
                    }
                }
                Said::Line(line) => self.say(t, &line),
            }
        }
    }

    /// The first line: the nodes that start at 0.
    fn start(&mut self, events: &[Event]) {
        let starts: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                TraceEvent::Start { node, .. } => Some(self.name(*node)),
                _ => None,
            })
            .collect();
        if !starts.is_empty() {
            let line = format!("start: {}", starts.join(", "));
            self.say(SimTime::ZERO, &line);
        }
    }

    /// Tells one event: what time moving on releases first (the step under way, the held
    /// acceptances, the derived facts before it), then the event.
    ///
    /// Long because: one arm per kind of trace event, each a few lines handing on to its own method.
    fn tell(&mut self, ev: &Event) {
        let t = ev.time();
        if self.step.as_ref().is_some_and(|(st, _, _)| *st < t) {
            self.end_step();
        }
        for (dt, _, line) in take_where(&mut self.deferred, |d| d.0 < t) {
            self.say(dt, &line);
        }
        while let Some((ft, fact)) = self.opts.facts.get(self.fact).filter(|(ft, _)| *ft < t) {
            self.fact += 1;
            self.say(*ft, fact);
        }
        match ev {
            TraceEvent::Start { .. } => {}
            TraceEvent::End {
                events, complete, ..
            } => {
                self.end_step();
                let line = if *complete {
                    format!("end of the run ({events} events)")
                } else {
                    format!("the run STOPPED at its event bound ({events} events): later steps never ran")
                };
                self.say(t, &line);
            }
            TraceEvent::Send {
                from,
                to,
                id,
                kind,
                msg,
                ..
            } => self.send(t, *from, *to, *id, kind, msg),
            TraceEvent::Drop {
                from,
                to,
                id,
                reason,
                ..
            } => {
                let kind = self.kinds.get(id).cloned().unwrap_or_default();
                if !self.hidden(&kind) {
                    let reason = drop_reason(*reason, &self.rules, *from, *to);
                    let to = *to;
                    self.add(t, *from, Said::Drop { to, kind, reason });
                }
            }
            TraceEvent::Deliver { to, id, .. } => {
                self.end_step();
                if self.kinds.get(id).is_some_and(|k| k == "LEASE_DENIED") {
                    self.failed_request.insert(*to, "was denied");
                } else {
                    self.failed_request.remove(to);
                }
            }
            TraceEvent::Timer { node, timer, .. } => {
                self.end_step();
                if matches!(
                    timer,
                    Timer::Client(ClientTimer::Lease(LeaseClientTimer::Timeout { .. }))
                ) {
                    self.failed_request.insert(*node, "timed out");
                } else {
                    self.failed_request.remove(node);
                }
            }
            TraceEvent::Fault { t, fault } => {
                self.end_step();
                let line = self.fault(*t, fault);
                self.say(*t, &line);
            }
            TraceEvent::Resume { t, node } => {
                self.end_step();
                let line = self.resume(*t, *node);
                self.say(*t, &line);
            }
            TraceEvent::Observe { node, obs, .. } => self.observe(t, *node, obs),
        }
    }

    /// A send: remembered by id, its Redis request or refusal noted, told with its step.
    fn send(&mut self, t: SimTime, from: NodeId, to: NodeId, id: u64, kind: &str, msg: &Msg) {
        self.kinds.insert(id, kind.to_string());
        // An error reply is a failure the client may not tell (a Redlock client counts it as
        // a missing OK): the instance says what it refused and why, before the reply.
        if let Msg::Redis(m) = msg {
            match &**m {
                RedisMsg::Command { req, .. } => {
                    self.requests.insert((from, to, *req), kind.to_string());
                }
                RedisMsg::Reply {
                    req,
                    reply: Reply::Error(text),
                } => {
                    let what = self
                        .requests
                        .remove(&(to, from, *req))
                        .map_or("a command".to_string(), |k| format!("a {k}"));
                    let line = format!(
                        "{} REFUSES {what} of {}: {text}",
                        self.name(from),
                        self.name(to)
                    );
                    self.add(t, from, Said::Line(line));
                }
                RedisMsg::Reply { req, .. } => {
                    self.requests.remove(&(to, from, *req));
                }
                _ => {}
            }
        }
        if !self.hidden(kind) {
            let kind = label(kind, msg);
            self.add(t, from, Said::Send { to, kind });
        }
    }

    /// A fault's line, after what it changes in what the story knows.
    fn fault(&mut self, t: SimTime, fault: &Fault) -> String {
        let effect = self.effects.next().copied();
        let state = effect.as_ref().and_then(|a| a.idle);
        match fault {
            Fault::Network { rule } => self.rules.push(rule.clone()),
            Fault::Heal => self.rules.clear(),
            Fault::HealPartition { groups } => {
                let heals =
                    |r: &NetRule| matches!(r, NetRule::Partition { groups: g } if g == groups);
                if let Some(k) = self.rules.iter().position(heals) {
                    self.rules.remove(k);
                }
            }
            // A pause of a paused node moves its resume later: the node has been stopped
            // since the first pause, and says so when it resumes.
            Fault::Pause { node, duration } if state.is_none() => {
                match effect.as_ref().and_then(|a| a.extends) {
                    Some((since, was)) => {
                        self.paused_at.insert(*node, since);
                        return format!(
                            "{}'s pause (since {since}) is EXTENDED by a {duration} pause: it \
                             now ends at {} instead of {was}",
                            self.name(*node),
                            t.saturating_add(*duration)
                        );
                    }
                    None => {
                        self.paused_at.insert(*node, t);
                    }
                }
            }
            Fault::Crash { node } => {
                // A crash ends a pause: no resume comes.
                self.paused_at.remove(node);
                self.holds.remove(node);
                self.leads.remove(node);
                self.accepted.crashed(*node);
                self.values.retain(|(n, _), _| n != node);
            }
            _ => {}
        }
        fault.describe_applied(self.names, state)
    }

    /// A resume's line: how long the node was stopped and what it still believes.
    fn resume(&mut self, t: SimTime, node: NodeId) -> String {
        let since = self.paused_at.remove(&node).map(|p| t.saturating_since(p));
        let belief = match (self.holds.get(&node), self.leads.get(&node)) {
            (Some(h), _) => format!("; it still believes it holds {h}"),
            (None, Some(term)) => format!("; it still believes it is leader (term {term})"),
            (None, None) => String::new(),
        };
        match since {
            Some(d) => format!(
                "{} resumes after a {d} pause, unaware of it{belief}",
                self.name(node)
            ),
            None => format!("{} resumes", self.name(node)),
        }
    }

    /// An observation: what it changes in what the story knows of its node, then its line
    /// in the node's step (unless it is no news, or held back until a claim).
    fn observe(&mut self, t: SimTime, node: NodeId, obs: &Obs) {
        if !self.accepted.is_news(node, obs) {
            return;
        }
        match obs {
            Obs::LockAcquired {
                lock,
                token: tk,
                valid_until_local,
                ..
            }
            | Obs::LockRenewed {
                lock,
                token: tk,
                valid_until_local,
                ..
            } => {
                let held = format!(
                    "\"{lock}\" ({}), valid until local {}",
                    token(tk),
                    secs(valid_until_local.0)
                );
                self.holds.insert(node, held);
            }
            Obs::LockReleased { .. } | Obs::LockLost { .. } => {
                self.holds.remove(&node);
            }
            Obs::LeaderClaim { term } => {
                self.leads.insert(node, *term);
            }
            Obs::LeaderKnown { leader } if !self.leads.contains_key(leader) => {
                let line = describe_obs(self.names, self.name(node), obs);
                self.deferred.push((t, *leader, line));
                return;
            }
            Obs::LeaderStepDown { .. } => {
                self.leads.remove(&node);
            }
            _ => {}
        }
        // Every replica applies every entry: the story tells the commits of lock keys
        // (`RaftKeyCreated` / `RaftKeyDeleted`) instead.
        if matches!(obs, Obs::RaftApplied { .. }) {
            return;
        }
        let line = self.obs_line(node, obs);
        let claim = matches!(obs, Obs::LeaderClaim { .. });
        self.add(t, node, Said::Obs { line, claim });
    }

    /// An observation's line, with what the story knows beside it (a failed renewal, whose
    /// value a DEL removed).
    fn obs_line(&mut self, node: NodeId, obs: &Obs) -> String {
        let who = self.name(node);
        match obs {
            Obs::LockRenewed {
                lock,
                valid_until_local,
                ..
            } if self.failed_request.contains_key(&node) => format!(
                "{who}'s renewal of \"{lock}\" FAILED (its request {}), but {who} carries on as \
                 if renewed: believes it valid until local {}",
                self.failed_request[&node],
                secs(valid_until_local.0)
            ),
            Obs::RedisKeySet { key, value, .. } => {
                self.values.insert((node, key.clone()), value.clone());
                describe_obs(self.names, who, obs)
            }
            Obs::RedisRestarted { keys } => {
                self.values.retain(|(n, _), _| *n != node);
                for (k, v, _) in keys {
                    self.values.insert((node, k.clone()), v.clone());
                }
                describe_obs(self.names, who, obs)
            }
            Obs::RedisKeyDeleted { key } => match self.values.remove(&(node, key.clone())) {
                Some(v) => {
                    let whose = self
                        .value_owner
                        .get(&v)
                        .map(|n| format!("{}'s value {v}", self.name(*n)))
                        .unwrap_or_else(|| format!("value {v}"));
                    format!("{who}: {key} deleted ({whose})")
                }
                None => describe_obs(self.names, who, obs),
            },
            _ => describe_obs(self.names, who, obs),
        }
    }

    /// Tells what is still held (the last step, the fold, held-back acceptances).
    fn finish(mut self) -> String {
        self.end_step();
        self.end_fold();
        for (t, _, line) in std::mem::take(&mut self.deferred) {
            self.write(t, &line);
        }
        self.out
    }
}
