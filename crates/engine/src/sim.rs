//! The simulation: the event queue, node lifecycle, and the event loop.
//!
//! Events are ordered by `(true time, sequence number assigned when scheduled)`: ties run in
//! scheduling order (the queue is a radix heap that keeps that order exactly, `queue.rs`).
//! Cancelled timers cost nothing to find: a timer lives in a slot with a generation counter,
//! and a queue entry whose generation no longer matches is skipped when it comes up (lazy
//! deletion). A crash bumps the node's incarnation, which makes its pending timers stale in
//! O(1), and marks the deliveries queued to it stale (one pass over the queue).
//!
//! **A message in flight is its queue entry.** The entry's word holds the sender and the
//! receiver, its payload the message (32 bytes with the protocols' two-word `Msg`; 16 with a
//! message type that has no values, W1's), so a delivery reads nothing at random but its
//! receiver (a read of a slab slot per delivery would be a quarter of W3's time).
//! A message sent while trace ids are kept also takes a slot in `Core::traced` for its id.
//!
//! **Timers follow the monotonic clock.** A timer fires when its node's monotonic clock
//! reaches its deadline (set time + duration, on that clock). Its queue entry holds the true
//! instant the current rate gives; a drift change (`Fault::SetDrift`) gives each of the node's
//! pending timers a new entry at the instant the new rate gives, and bumps the slot's
//! generation so the old entry is skipped (`Core::reschedule_timers`: O(timer slots), once per
//! drift change). A clock step moves the wall clock only, and no timer. So that W1's hot path
//! keeps no deadline, the deadlines are kept only once a drift change is scheduled or a trigger can
//! apply one ([`Sim::schedule_fault`], [`Sim::add_trigger`]), which the scenario layer does
//! before the run starts.
//!
//! **Processing time** (Coulouris's Tprocess; off unless [`Sim::set_processing`] is called):
//! a node handles one message at a time, like a single-threaded event loop. A message that
//! reaches an idle node whose [`Processing`] gives it a handling time `p > 0` occupies the
//! node from arrival to arrival + `p`; its handler runs (and is traced as delivered) at the
//! end, so its effects (replies, clock reads) are `p` late. Whatever reaches a busy node
//! (messages and due timers) waits in its queue in arrival order and starts when the node is
//! free. Timers take no handling time. A pause that begins during a handling freezes it: the
//! remaining time runs after the pause ends, before anything queued. A crash drops the
//! message being handled (as `crashed`) with the rest of the queue.
//!
//! A paused node queues what reaches it in arrival order. A queued timer keeps its slot until
//! it runs at resume, so cancelling it from an earlier queued handler still works; a crash
//! during the pause cancels the queued timers and drops the queued messages as `crashed`.

use crate::actor::{Message, Observation, TimerId};
use crate::clock::{ClockConfig, LocalClock, LocalTime, WallTime};
use crate::fault::{Fault, FaultEffect, FaultLedger, FaultStart, Trigger};
use crate::network::{DropReason, LinkModel, NetRule, Network, SendVerdict};
use crate::node::NodeId;
use crate::obs_log::{ObsFilter, ObsLog};
use crate::prefetch::prefetch;
use crate::queue::EventQueue;
#[cfg(test)]
use crate::queue::Item;
use crate::rng::RngStream;
use crate::stats::KindTable;
pub use crate::stats::{KindCounts, Stats};
use crate::time::{SimDuration, SimTime};
use crate::trace::{Recorder, TraceEvent};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Debug;

/// A node's behaviour: a state machine reacting to start, messages, timers and restart.
///
/// This trait and the [`Context`] a handler acts through are the actor API. Handlers are
/// reactions: `(state, event) -> state changes + effects through the context`. The context
/// gives the node's own clocks (never true time), `send`, `set_timer` / `cancel_timer`, the
/// node's RNG stream, `observe` for claims the checkers judge, and `persist` for the state
/// that survives a crash. Several kinds of actor share one simulation by being variants of
/// one enum that implements [`Actor`] (no `dyn Any`). Both stand here, with the simulator's
/// `Core`, because each names the next: a handler takes a `Context`, a context holds the
/// `Core`, the core holds the actors.
pub trait Actor: Sized {
    /// Messages exchanged between nodes.
    type Msg: Message;
    /// Timer payloads.
    type Timer: Clone + Debug + Serialize;
    /// Observations this actor reports.
    type Obs: Observation;
    /// The state that survives a crash (written with [`Context::persist`]).
    type Durable: Clone + Debug + Default;

    /// Runs once at true time 0.
    fn on_start(&mut self, ctx: &mut Context<'_, Self>);
    /// A message from `from` arrived.
    fn on_message(&mut self, ctx: &mut Context<'_, Self>, from: NodeId, msg: Self::Msg);
    /// A timer set with [`Context::set_timer`] came due.
    fn on_timer(&mut self, ctx: &mut Context<'_, Self>, timer: Self::Timer);
    /// The node restarted after a crash. The actor must rebuild itself from `durable` alone:
    /// everything else it held is volatile and lost.
    fn on_restart(&mut self, ctx: &mut Context<'_, Self>, durable: &Self::Durable);
}

/// What a handler can see and do. Created by the engine for each handler call.
pub struct Context<'a, A: Actor> {
    pub(crate) node: NodeId,
    pub(crate) core: &'a mut Core<A>,
}

impl<A: Actor> Context<'_, A> {
    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.node
    }
    /// This node's name.
    pub fn name(&self) -> &str {
        &self.core.names[self.node.index()]
    }
    /// Number of nodes in the simulation.
    pub fn node_count(&self) -> usize {
        self.core.names.len()
    }
    /// The id of the node called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.core.name_index.get(name).copied()
    }
    /// The name of node `id`.
    pub fn node_name(&self, id: NodeId) -> &str {
        &self.core.names[id.index()]
    }
    /// This node's monotonic clock now (local ns; drifts, never steps).
    pub fn mono_now(&self) -> LocalTime {
        self.core.nodes[self.node.index()].clock.mono(self.core.now)
    }
    /// This node's wall clock now (local ns; drifts and steps).
    pub fn wall_now(&self) -> WallTime {
        self.core.nodes[self.node.index()].clock.wall(self.core.now)
    }
    /// Sends `msg` to `to` through the network.
    pub fn send(&mut self, to: NodeId, msg: A::Msg) {
        self.core.send(self.node, to, msg);
    }
    /// Sets a timer to fire after `after` of this node's monotonic clock: it fires when that
    /// clock reaches its deadline, its reading now + `after`, as a `CLOCK_MONOTONIC` timer
    /// does. If the node's drift changes before then ([`crate::Fault::SetDrift`]), the timer
    /// follows the clock (a faster clock fires it sooner in true time, a slower one later);
    /// a clock step (wall clock only) does not move it.
    pub fn set_timer(&mut self, after: SimDuration, timer: A::Timer) -> TimerId {
        self.core.set_timer(self.node, after, timer)
    }
    /// Cancels a pending timer (no effect if it already fired or was cancelled). O(1).
    pub fn cancel_timer(&mut self, id: TimerId) {
        self.core.cancel_timer(id);
    }
    /// This node's random stream (`"actor/<name>"`).
    pub fn rng(&mut self) -> &mut RngStream {
        &mut self.core.nodes[self.node.index()].rng
    }
    /// Reports a claim about this node; recorded with true time for the checkers, and matched
    /// against fault triggers.
    pub fn observe(&mut self, obs: A::Obs) {
        self.core.observe(self.node, obs);
    }
    /// Replaces this node's durable state (what `on_restart` will see after a crash).
    pub fn persist(&mut self, durable: A::Durable) {
        self.core.nodes[self.node.index()].durable = durable;
    }
    /// This node's durable state as last persisted.
    pub fn durable(&self) -> &A::Durable {
        &self.core.nodes[self.node.index()].durable
    }
    /// This node's durable state, to change in place: a write of what changed (say, entries
    /// appended to a log on disk) costs what changed, where [`Context::persist`] replaces the
    /// whole state. A crash keeps whatever the state holds when it strikes.
    pub fn durable_mut(&mut self) -> &mut A::Durable {
        &mut self.core.nodes[self.node.index()].durable
    }
}

/// The trace event type of a simulation of actor `A`.
pub type EventOf<A> = TraceEvent<<A as Actor>::Msg, <A as Actor>::Timer, <A as Actor>::Obs>;

/// Bounds on one run. Hitting one ends the run with [`SimError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most events processed (stale timers included).
    pub max_events: u64,
    /// Latest true time an event may be processed at.
    pub max_time: SimTime,
    /// Most events waiting in the queue at once: messages in flight, pending timers, resumes
    /// and faults. It bounds the run's memory, which `max_events` does not: 10,000 bully nodes
    /// that all start an election queue N(N-1)/2 = 49,995,000 ELECTIONs before the first event
    /// is processed (about 100 bytes each with the queue's growth and the links' FIFO rows).
    /// Checked after each node's start and before every 1,024th event (the first included),
    /// so a run overshoots it by at most what one start or 1,024 events queue.
    pub max_in_flight: u64,
}

impl Default for Limits {
    /// 50 million events, 24 hours of simulated time, 100 million events queued at once.
    fn default() -> Self {
        Limits {
            max_events: 50_000_000,
            max_time: SimTime(24 * 3600 * 1_000_000_000),
            max_in_flight: 100_000_000,
        }
    }
}

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The event bound was reached.
    #[error("event limit reached: {limit} events processed by true time {at} (raise max_events or shorten the run)")]
    EventLimit {
        /// The bound.
        limit: u64,
        /// True time when it was reached.
        at: SimTime,
    },
    /// The simulated-time bound was reached.
    #[error("simulated-time limit reached: next event at {next} is past max_time {limit}")]
    TimeLimit {
        /// The bound.
        limit: SimTime,
        /// The event that would have crossed it.
        next: SimTime,
    },
    /// More events were queued at once than [`Limits::max_in_flight`] allows.
    #[error("in-flight limit reached: {queued} events queued at true time {at}, more than max_in_flight {limit} (raise max_in_flight, use fewer nodes, or lower the message rate)")]
    InFlightLimit {
        /// The bound.
        limit: u64,
        /// Events queued when it was found crossed.
        queued: u64,
        /// True time when it was found crossed.
        at: SimTime,
    },
}

/// An observation with its true time and node.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed<O> {
    /// True time, ns.
    pub t: SimTime,
    /// Who reported it.
    pub node: NodeId,
    /// What was reported.
    pub obs: O,
}

/// Handling times of one node's messages (Coulouris's Tprocess), in true ns: the first rule
/// whose kind matches (or that names no kind) gives the time; no match means 0 (immediate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Processing {
    /// `(message kind or None for every kind, handling time)`, in order.
    pub rules: Vec<(Option<String>, SimDuration)>,
}

impl Processing {
    /// The handling time of a message of `kind`.
    pub fn time_of(&self, kind: &str) -> SimDuration {
        self.rules
            .iter()
            .find(|(k, _)| k.as_deref().map_or(true, |k| k == kind))
            .map_or(SimDuration::ZERO, |(_, d)| *d)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    Timer {
        slot: u32,
        gen: u32,
    },
    /// A message from `from` to `to` arrives; its message is the queue entry's payload.
    /// `stale`: its receiver crashed after it was sent (set on the queued entry by the crash,
    /// [`Core::mark_in_flight_stale`]).
    Deliver {
        from: u32,
        to: u32,
        stale: bool,
    },
    /// A message sent while trace ids are kept arrives: its sender, receiver, incarnation
    /// and trace id are in [`Core::traced`] at `slot`, its message is the payload.
    Traced {
        slot: u32,
    },
    Fault {
        index: u32,
    },
    Resume {
        node: u32,
        gen: u32,
    },
    Done {
        node: u32,
        gen: u32,
    },
}

/// Slots, node ids and fault indexes are below 2^29: the event's kind takes the top 3 bits
/// of the word.
const FIELD_BITS: u32 = 29;

/// The largest value of a field.
const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;

/// The kind of a [`Event::Deliver`] (the word's top 3 bits).
const DELIVER: u64 = 1;

/// The bit of a [`Event::Deliver`]'s word that says it is stale.
const STALE: u64 = 1 << 60;

impl Event {
    /// Packs the event into the queue's 64-bit word: `kind << 61 | a << 32 | b`, and for a
    /// delivery `1 << 61 | stale << 60 | from << 29 | to`.
    #[inline]
    fn pack(self) -> u64 {
        let (kind, a, b) = match self {
            Event::Timer { slot, gen } => (0u64, slot, gen),
            Event::Deliver { from, to, stale } => {
                assert!(
                    u64::from(from.max(to)) <= FIELD_MASK,
                    "more than 2^29 nodes"
                );
                return DELIVER << 61
                    | if stale { STALE } else { 0 }
                    | u64::from(from) << FIELD_BITS
                    | u64::from(to);
            }
            Event::Traced { slot } => (5, slot, 0),
            Event::Fault { index } => (2, index, 0),
            Event::Resume { node, gen } => (3, node, gen),
            Event::Done { node, gen } => (4, node, gen),
        };
        assert!(a < 1 << FIELD_BITS, "more than 2^29 slots, nodes or faults");
        kind << 61 | (a as u64) << 32 | b as u64
    }

    #[inline]
    fn unpack(data: u64) -> Self {
        let a = (data >> 32) as u32 & FIELD_MASK as u32;
        let b = data as u32;
        match data >> 61 {
            0 => Event::Timer { slot: a, gen: b },
            DELIVER => Event::Deliver {
                from: (data >> FIELD_BITS & FIELD_MASK) as u32,
                to: (data & FIELD_MASK) as u32,
                stale: data & STALE != 0,
            },
            2 => Event::Fault { index: a },
            3 => Event::Resume { node: a, gen: b },
            4 => Event::Done { node: a, gen: b },
            _ => Event::Traced { slot: a },
        }
    }
}

/// A timer slot. `gen` names the slot's current queue entry: it is bumped when the slot is
/// freed and when a drift change re-schedules its timer, and a queue entry (or a paused node's
/// queued timer) whose `gen` differs is stale. Without drift changes it also names the timer
/// an actor holds ([`TimerId::gen`]); with them, [`TimerDeadline::id`] does.
struct TimerSlot<T> {
    gen: u32,
    node: u32,
    incarnation: u32,
    payload: Option<T>,
}

/// How many events ahead the event loop prefetches what a delivery reads.
const PREFETCH_AHEAD: usize = 4;

/// The event loop prefetches only while this many messages are in flight (2 MB of queue
/// entries, about what one core's caches hold): below that what a delivery reads is cached
/// anyway, and a run of timers (W1) would pay the look ahead for nothing.
const PREFETCH_FROM_IN_FLIGHT: usize = 1 << 16;

/// What a drift change needs to know of a slot's timer. Kept (in `Core::deadlines`, by slot
/// index) only in a run that can change a drift, and beside the slots rather than in them:
/// the event loop reads the slots, and a run without drift changes (W1) pays nothing.
#[derive(Clone, Copy)]
struct TimerDeadline {
    /// The node's monotonic reading at which the timer fires, local ns. `LocalTime(0)` for a
    /// timer set before the run could change a drift (see `Core::keep_deadlines`): it keeps
    /// its instant.
    mono: LocalTime,
    /// Order of setting among all timers (`Core::timers_set` when it was set).
    set_seq: u64,
    /// The slot's `gen` when the timer was set: the [`TimerId::gen`] that names it, unchanged
    /// when a drift change re-schedules it.
    id: u32,
}

/// What a message sent while trace ids are kept needs beside its queue entry (whose word
/// has no room for a trace id): [`Event::Traced`] names its slot in [`Core::traced`].
struct TracedMsg {
    from: NodeId,
    to: NodeId,
    /// The receiver's incarnation at the send: a different one at the delivery means it
    /// crashed meanwhile.
    incarnation: u32,
    id: u64,
}

/// Work that reached a paused node, in arrival order.
enum Pending<M> {
    /// A timer that came due. It stays in its slot until it runs, so a handler that runs
    /// before it at resume can still cancel it.
    Timer { slot: u32, gen: u32 },
    /// A message that arrived.
    Msg { from: NodeId, id: u64, msg: M },
}

pub(crate) struct NodeState<A: Actor> {
    pub(crate) clock: LocalClock,
    pub(crate) rng: RngStream,
    pub(crate) durable: A::Durable,
    up: bool,
    paused: bool,
    pause_gen: u32,
    paused_until: SimTime,
    pending: VecDeque<Pending<A::Msg>>,
    /// Handling a message (processing time): nothing else runs until it is done.
    busy: bool,
    /// Bumped at every handling start and at every pause of one, so a stale `Done` is
    /// skipped.
    service_gen: u32,
    /// When the message being handled is done (while not paused), true ns.
    service_done_at: SimTime,
    /// Handling time left when a pause froze the handling, true ns.
    service_left: Option<SimDuration>,
    /// The message being handled: `(from, id, msg)`.
    in_service: Option<(NodeId, u64, A::Msg)>,
}

struct TriggerState {
    trigger: Trigger,
    fired: bool,
}

/// Everything but the actors: handlers get `&mut Core` through their [`Context`].
pub(crate) struct Core<A: Actor> {
    pub(crate) now: SimTime,
    /// The events; a delivery's entry carries its message (`Some`), every other `None`.
    queue: EventQueue<Option<A::Msg>>,
    timers: Vec<TimerSlot<A::Timer>>,
    free_timers: Vec<u32>,
    /// Each slot's [`TimerDeadline`], by slot index, once `keep_deadlines` is on; empty
    /// before.
    deadlines: Vec<TimerDeadline>,
    /// A drift change is scheduled or can be triggered: timers keep their deadlines.
    keep_deadlines: bool,
    /// Timers set so far: the next timer's `set_seq`.
    timers_set: u64,
    /// Messages in flight (scheduled deliveries not yet processed).
    in_flight: usize,
    /// The sender, receiver, incarnation and trace id of each message sent while trace ids
    /// are kept ([`Core::keeps_ids`]), by the slot its [`Event::Traced`] names; slots are
    /// reused through `free_traced`. A run without a trace uses none: its queue entries say
    /// all a delivery needs (a slot read at random per delivery would be a quarter of W3's
    /// time).
    traced: Vec<Option<TracedMsg>>,
    free_traced: Vec<u32>,
    /// [`Sim::record_no_trace`] was called: no recorder that builds events will be set.
    no_trace: bool,
    next_msg_id: u64,
    pub(crate) nodes: Vec<NodeState<A>>,
    /// Each node's incarnation, bumped by a crash: a message or timer of an earlier one is
    /// stale. Apart from the rest of [`NodeState`] (528 bytes a node) because every send reads
    /// the receiver's: a dense `u32` a node stays cached through a broadcast to 1,000 nodes.
    incarnations: Vec<u32>,
    pub(crate) names: Vec<String>,
    /// Name -> id, so adding and looking up nodes is O(log n), not a scan of `names`.
    pub(crate) name_index: BTreeMap<String, NodeId>,
    network: Network,
    net_rng: RngStream,
    faults: Vec<Fault>,
    triggers: Vec<TriggerState>,
    obs_counts: BTreeMap<(NodeId, &'static str), u32>,
    observations: ObsLog<Observed<A::Obs>>,
    /// Which observations `observations` keeps (all when `None`).
    obs_filter: Option<Box<dyn ObsFilter<A::Obs>>>,
    /// Every fault applied, with what it did.
    ledger: FaultLedger,
    /// Per applied fault, the number of observations recorded before it (their index bound).
    applied_after_obs: Vec<usize>,
    stats: Stats,
    /// Per-kind message counters (folded into [`Stats::messages`] by [`Sim::stats`]).
    kinds: KindTable,
    recorder: Option<Recorder<EventOf<A>>>,
    /// Per-node handling times; empty (the default) when no node has any, so the event loop
    /// pays one length check per delivery.
    processing: Vec<Processing>,
}

impl<A: Actor> Core<A> {
    #[inline]
    fn push(&mut self, time: SimTime, event: Event) {
        self.queue.push(time, event.pack(), None);
    }

    #[inline]
    fn record(&mut self, make: impl FnOnce() -> EventOf<A>) {
        if let Some(r) = &mut self.recorder {
            r.record_with(make);
        }
    }

    pub(crate) fn send(&mut self, from: NodeId, to: NodeId, msg: A::Msg) {
        assert!(to.index() < self.nodes.len(), "send to unknown node {to}");
        let kind = msg.kind();
        let row = self.kinds.index(kind);
        self.kinds.at(row).1.sent += 1;
        let id = self.next_msg_id;
        self.next_msg_id += 1;
        let now = self.now;
        self.record(|| TraceEvent::Send {
            t: now,
            from,
            to,
            id,
            kind: kind.to_string(),
            msg: msg.clone(),
        });
        match self.network.on_send(now, from, to, kind, &mut self.net_rng) {
            SendVerdict::Lost => self.drop_msg(from, to, id, kind, DropReason::Loss),
            SendVerdict::Deliver { first, duplicate } => {
                if let Some(at) = duplicate {
                    self.kinds.at(row).1.duplicated += 1;
                    let copy = msg.clone();
                    self.schedule_msg(first, from, to, msg, id);
                    self.schedule_msg(at, from, to, copy, id);
                } else {
                    self.schedule_msg(first, from, to, msg, id);
                }
            }
        }
    }

    /// Queues the delivery of `msg` (trace id `id`) from `from` to `to` at `at`.
    #[inline]
    fn schedule_msg(&mut self, at: SimTime, from: NodeId, to: NodeId, msg: A::Msg, id: u64) {
        self.in_flight += 1;
        let event = if self.keeps_ids() {
            let m = TracedMsg {
                from,
                to,
                incarnation: self.incarnations[to.index()],
                id,
            };
            let slot = match self.free_traced.pop() {
                Some(s) => {
                    self.traced[s as usize] = Some(m);
                    s
                }
                None => {
                    self.traced.push(Some(m));
                    (self.traced.len() - 1) as u32
                }
            };
            Event::Traced { slot }
        } else {
            Event::Deliver {
                from: from.0,
                to: to.0,
                stale: false,
            }
        };
        self.queue.push(at, event.pack(), Some(msg));
    }

    /// Marks every queued delivery to `node` stale: called when `node` crashes, so a message
    /// sent to the incarnation that just ended is dropped as `crashed` when it arrives (a
    /// message sent while trace ids are kept compares incarnations instead). O(events queued),
    /// once per crash: every delivery stays one queue entry with nothing to read elsewhere.
    fn mark_in_flight_stale(&mut self, node: NodeId) {
        let to = u64::from(node.0);
        self.queue.for_each_data_mut(|d| {
            if *d >> 61 == DELIVER && *d & FIELD_MASK == to {
                *d |= STALE;
            }
        });
    }

    /// Whether messages keep their trace ids: while the recorder builds events, and, with no
    /// recorder set, before the first event (so a recorder set after the actors' `on_start`
    /// still names the messages they sent) unless [`Sim::record_no_trace`] said none will
    /// be. A run with a recorder that builds no events (a sweep's count-only one) keeps none:
    /// the 50 million messages a 10,000-node election sends at its start would each take a
    /// [`Core::traced`] slot.
    #[inline]
    fn keeps_ids(&self) -> bool {
        match &self.recorder {
            Some(r) => r.builds_events(),
            None => self.stats.events == 0 && !self.no_trace,
        }
    }

    /// Whether enough messages are in flight to prefetch for ([`PREFETCH_FROM_IN_FLIGHT`]).
    #[inline]
    fn prefetching(&self) -> bool {
        self.in_flight >= PREFETCH_FROM_IN_FLIGHT
    }

    /// Asks for the cache lines the event [`PREFETCH_AHEAD`] places on will use, if it is a
    /// delivery: its receiver's state, and the FIFO entry of the link back to the sender
    /// (where a reply goes); its message is in its queue entry. Only a hint: nothing computed
    /// depends on it.
    #[inline]
    fn prefetch_ahead(&self) {
        if !self.prefetching() {
            return;
        }
        if let Some(data) = self.queue.ahead(PREFETCH_AHEAD) {
            if let Event::Deliver { from, to, .. } = Event::unpack(data) {
                if let Some(n) = self.nodes.get(to as usize) {
                    prefetch(n);
                }
                self.network.prefetch_link(NodeId(to), NodeId(from));
            }
        }
    }

    fn drop_msg(
        &mut self,
        from: NodeId,
        to: NodeId,
        id: u64,
        kind: &'static str,
        reason: DropReason,
    ) {
        self.kinds.row(kind).dropped += 1;
        *self.stats.drops.entry(reason).or_default() += 1;
        let t = self.now;
        self.record(|| TraceEvent::Drop {
            t,
            from,
            to,
            id,
            reason,
        });
    }

    /// Sets a timer for `after` of `node`'s monotonic clock: it fires when that clock reaches
    /// `mono(now) + after`, its deadline. The true instant is computed now with the node's
    /// current rate ([`LocalClock::timer_after`]) and recomputed from the deadline if the
    /// node's drift changes before it fires ([`Core::reschedule_timers`]); a clock step (wall
    /// clock only) never moves it.
    pub(crate) fn set_timer(
        &mut self,
        node: NodeId,
        after: SimDuration,
        timer: A::Timer,
    ) -> TimerId {
        let n = &self.nodes[node.index()];
        let (deadline, at) = if self.keep_deadlines {
            n.clock.timer_after(self.now, after)
        } else {
            (LocalTime(0), n.clock.true_time_after(self.now, after))
        };
        let incarnation = self.incarnations[node.index()];
        let slot = match self.free_timers.pop() {
            Some(s) => {
                let t = &mut self.timers[s as usize];
                t.node = node.0;
                t.incarnation = incarnation;
                t.payload = Some(timer);
                s
            }
            None => {
                self.timers.push(TimerSlot {
                    gen: 0,
                    node: node.0,
                    incarnation,
                    payload: Some(timer),
                });
                (self.timers.len() - 1) as u32
            }
        };
        let gen = self.timers[slot as usize].gen;
        if self.keep_deadlines {
            self.keep_deadline(slot, deadline, gen);
        }
        self.push(at, Event::Timer { slot, gen });
        TimerId { slot, gen }
    }

    /// Records the deadline of the timer just set in `slot` (whose `gen` is `id`).
    fn keep_deadline(&mut self, slot: u32, mono: LocalTime, id: u32) {
        let d = TimerDeadline {
            mono,
            set_seq: self.timers_set,
            id,
        };
        self.timers_set += 1;
        match self.deadlines.get_mut(slot as usize) {
            Some(kept) => *kept = d,
            None => {
                debug_assert_eq!(slot as usize, self.deadlines.len(), "slots grow by one");
                self.deadlines.push(d);
            }
        }
    }

    /// From now on timers keep their deadlines, so that drift changes can re-schedule them:
    /// called when a drift change is scheduled or a trigger can apply one, normally before
    /// the run starts. A timer already pending then (only if a drift change is scheduled
    /// mid-run through the API) has no known deadline and keeps its true instant.
    fn keep_deadlines(&mut self) {
        if self.keep_deadlines {
            return;
        }
        self.keep_deadlines = true;
        self.deadlines = self
            .timers
            .iter()
            .map(|t| TimerDeadline {
                mono: LocalTime(0),
                set_seq: 0,
                id: t.gen,
            })
            .collect();
    }

    /// After `node`'s drift changed at `now`: every pending timer of the node whose deadline
    /// its monotonic clock has not reached yet gets its true instant recomputed from the
    /// deadline ([`LocalClock::true_time_at`]) and a new queue entry; its slot's `gen` is
    /// bumped, so the old entry is skipped as stale when it comes up. A timer already due (its
    /// entry at or before `now`, or queued by a pause) keeps its place: readings up to `now`
    /// did not change. Timers of a crashed node are stale already and are left alone.
    ///
    /// **Order.** The new entries are scheduled now, so they run after every event already
    /// scheduled for the same true instant; among themselves, timers with equal new instants
    /// run in the order they were set. Costs one pass over the timer slots (O(slots), once per
    /// drift change; only runs that can change a drift keep each slot's [`TimerDeadline`]).
    fn reschedule_timers(&mut self, node: NodeId) {
        let now = self.now;
        let n = &self.nodes[node.index()];
        if !n.up {
            return;
        }
        let (incarnation, clock) = (self.incarnations[node.index()], &n.clock);
        let reached = clock.mono(now);
        assert!(self.keep_deadlines, "a drift change was scheduled");
        let mut moved: Vec<(SimTime, u64, u32)> = self
            .timers
            .iter()
            .zip(&self.deadlines)
            .enumerate()
            .filter(|(_, (t, d))| {
                t.payload.is_some()
                    && t.node == node.0
                    && t.incarnation == incarnation
                    && d.mono > reached
            })
            .map(|(slot, (_, d))| (clock.true_time_at(now, d.mono), d.set_seq, slot as u32))
            .collect();
        moved.sort_unstable();
        for (at, _, slot) in moved {
            let t = &mut self.timers[slot as usize];
            t.gen = t.gen.wrapping_add(1);
            let gen = t.gen;
            self.push(at, Event::Timer { slot, gen });
        }
    }

    /// Takes the payload out of a live timer slot and frees the slot.
    #[inline]
    fn take_timer(&mut self, slot: u32) -> Option<A::Timer> {
        let t = &mut self.timers[slot as usize];
        let payload = t.payload.take();
        t.gen = t.gen.wrapping_add(1);
        self.free_timers.push(slot);
        payload
    }

    pub(crate) fn cancel_timer(&mut self, id: TimerId) {
        let slot = id.slot as usize;
        if let Some(t) = self.timers.get_mut(slot) {
            // A drift change may have bumped `gen`; the id the timer was set with names it
            // (`deadlines` is filled only once they are kept).
            let current = self.deadlines.get(slot).map_or(t.gen, |d| d.id);
            if current == id.gen && t.payload.is_some() {
                t.payload = None;
                t.gen = t.gen.wrapping_add(1);
                self.free_timers.push(id.slot);
            }
        }
    }

    pub(crate) fn observe(&mut self, node: NodeId, obs: A::Obs) {
        let t = self.now;
        self.record(|| TraceEvent::Observe {
            t,
            node,
            obs: obs.clone(),
        });
        if !self.triggers.is_empty() {
            let kind = obs.kind();
            let count = {
                let c = self.obs_counts.entry((node, kind)).or_insert(0);
                *c += 1;
                *c
            };
            let mut fire = Vec::new();
            for tr in &mut self.triggers {
                if !tr.fired
                    && tr.trigger.node == node
                    && tr.trigger.kind == kind
                    && tr.trigger.nth == count
                {
                    tr.fired = true;
                    fire.push((t.saturating_add(tr.trigger.delay), tr.trigger.fault.clone()));
                }
            }
            for (at, fault) in fire {
                self.schedule_fault(at, fault);
            }
        }
        let observed = Observed { t, node, obs };
        let keep = match &mut self.obs_filter {
            Some(f) => f.keep(t, node, &observed.obs),
            None => true,
        };
        if keep {
            self.observations.push(observed);
        } else {
            let kind = observed.obs.kind();
            self.observations.skip(kind, observed);
        }
    }

    fn schedule_fault(&mut self, at: SimTime, fault: Fault) {
        if matches!(fault, Fault::SetDrift { .. }) {
            self.keep_deadlines();
        }
        self.faults.push(fault);
        let index = (self.faults.len() - 1) as u32;
        self.push(at, Event::Fault { index });
    }
}

/// A simulation of actors of type `A` (use an enum for several kinds).
pub struct Sim<A: Actor> {
    actors: Vec<A>,
    core: Core<A>,
    seed: u64,
    limits: Limits,
    started: bool,
}

impl<A: Actor> Sim<A> {
    /// An empty simulation with run seed `seed`, the default link model and bounds.
    pub fn new(seed: u64) -> Self {
        Sim {
            actors: Vec::new(),
            core: Core {
                now: SimTime::ZERO,
                queue: EventQueue::new(),
                timers: Vec::new(),
                free_timers: Vec::new(),
                deadlines: Vec::new(),
                keep_deadlines: false,
                timers_set: 0,
                in_flight: 0,
                traced: Vec::new(),
                free_traced: Vec::new(),
                no_trace: false,
                next_msg_id: 0,
                nodes: Vec::new(),
                incarnations: Vec::new(),
                names: Vec::new(),
                name_index: BTreeMap::new(),
                network: Network::new(LinkModel::default()),
                net_rng: RngStream::new(seed, "net"),
                faults: Vec::new(),
                triggers: Vec::new(),
                obs_counts: BTreeMap::new(),
                observations: ObsLog::new(),
                obs_filter: None,
                ledger: FaultLedger::default(),
                applied_after_obs: Vec::new(),
                stats: Stats::default(),
                kinds: KindTable::default(),
                recorder: None,
                processing: Vec::new(),
            },
            seed,
            limits: Limits::default(),
            started: false,
        }
    }

    /// Sets the run's bounds.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The run seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Adds a node; its RNG stream is `"actor/<name>"`. Node ids are assigned 0, 1, 2, ...
    ///
    /// # Panics
    /// After the run started, or with a duplicate name.
    pub fn add_node(&mut self, name: &str, actor: A, clock: ClockConfig) -> NodeId {
        assert!(!self.started, "add nodes before running");
        let id = NodeId(self.actors.len() as u32);
        let fresh = self.core.name_index.insert(name.to_string(), id).is_none();
        assert!(fresh, "duplicate node name {name}");
        self.actors.push(actor);
        self.core.names.push(name.to_string());
        self.core.incarnations.push(0);
        self.core.nodes.push(NodeState {
            clock: LocalClock::new(clock),
            rng: RngStream::new(self.seed, &format!("actor/{name}")),
            durable: A::Durable::default(),
            up: true,
            paused: false,
            pause_gen: 0,
            paused_until: SimTime::ZERO,
            pending: VecDeque::new(),
            busy: false,
            service_gen: 0,
            service_done_at: SimTime::ZERO,
            service_left: None,
            in_service: None,
        });
        id
    }

    /// Gives node `id` handling times for its messages (see the module doc, "Processing
    /// time"). Without a call, every handling is immediate.
    pub fn set_processing(&mut self, id: NodeId, processing: Processing) {
        let n = self.core.nodes.len();
        if self.core.processing.len() < n {
            self.core.processing.resize(n, Processing::default());
        }
        self.core.processing[id.index()] = processing;
    }

    /// The network (set the default model and per-link overrides before running).
    pub fn network_mut(&mut self) -> &mut Network {
        &mut self.core.network
    }

    /// The network as it is now.
    pub fn network(&self) -> &Network {
        &self.core.network
    }

    /// Schedules `fault` at true time `at`. A [`Fault::SetDrift`] scheduled after timers were
    /// set (mid-run) does not move those: timers keep their deadlines from the first
    /// drift change scheduled on (see the module doc).
    pub fn schedule_fault(&mut self, at: SimTime, fault: Fault) {
        self.core.schedule_fault(at, fault);
    }

    /// Adds a protocol-point trigger (one that applies a [`Fault::SetDrift`] makes timers keep
    /// their deadlines from now on, as [`Sim::schedule_fault`] does).
    pub fn add_trigger(&mut self, trigger: Trigger) {
        if matches!(trigger.fault, Fault::SetDrift { .. }) {
            self.core.keep_deadlines();
        }
        self.core.triggers.push(TriggerState {
            trigger,
            fired: false,
        });
    }

    /// Starts recording the trace.
    ///
    /// # Panics
    /// If the new recorder builds events while messages sent without one's are in flight
    /// (their trace ids were not kept): set the recorder before the first event.
    pub fn set_recorder(&mut self, recorder: Recorder<EventOf<A>>) {
        let keep = recorder.builds_events();
        assert!(
            !keep || self.core.keeps_ids() || self.core.in_flight == 0,
            "set_recorder: messages are in flight whose trace ids were not kept; set the recorder before the first event"
        );
        self.core.recorder = Some(recorder);
    }

    /// Says that this run will record no trace: no recorder that builds events will be set,
    /// so messages sent before the first event keep no trace ids either (which a recorder set
    /// then would need). Changes no result; saves a side slot a message sent at the start.
    /// A recorder that builds events, set later while messages are in flight, is refused.
    pub fn record_no_trace(&mut self) {
        self.core.no_trace = true;
    }

    /// Records the trace's closing [`TraceEvent::End`] (time now, events processed so far);
    /// `complete` says whether the run reached its planned end. Call once, after the last
    /// `run_until`, before [`Sim::take_recorder`].
    pub fn record_end(&mut self, complete: bool) {
        let (t, events) = (self.core.now, self.core.stats.events);
        self.core.record(|| TraceEvent::End {
            t,
            events,
            complete,
        });
    }

    /// Stops recording and hands the recorder back.
    pub fn take_recorder(&mut self) -> Option<Recorder<EventOf<A>>> {
        self.core.recorder.take()
    }

    /// True time now.
    pub fn now(&self) -> SimTime {
        self.core.now
    }
    /// Node names, by id.
    pub fn names(&self) -> &[String] {
        &self.core.names
    }
    /// The actor of node `id` (for tests and reports; actors never see each other).
    pub fn actor(&self, id: NodeId) -> &A {
        &self.actors[id.index()]
    }
    /// Whether node `id` is up (not crashed).
    pub fn is_up(&self, id: NodeId) -> bool {
        self.core.nodes[id.index()].up
    }
    /// Node `id`'s clocks.
    pub fn clock(&self, id: NodeId) -> &LocalClock {
        &self.core.nodes[id.index()].clock
    }
    /// Every observation so far, in order.
    pub fn observations(&self) -> &ObsLog<Observed<A::Obs>> {
        &self.core.observations
    }
    /// Keeps, from now on, only the observations `filter` keeps (every one still takes its
    /// index, is recorded by the recorder and counts for fault triggers).
    pub fn set_obs_filter(&mut self, filter: Box<dyn ObsFilter<A::Obs>>) {
        self.core.obs_filter = Some(filter);
    }
    /// Moves every observation so far out of the simulation (leaving none), for a caller
    /// done with the run that would otherwise copy them.
    pub fn take_observations(&mut self) -> ObsLog<Observed<A::Obs>> {
        std::mem::take(&mut self.core.observations)
    }
    /// Every fault applied so far, in order.
    pub fn applied_faults(&self) -> &[(SimTime, Fault)] {
        self.core.ledger.faults()
    }
    /// Per applied fault (as [`Sim::applied_faults`]), what it did, recorded as it was
    /// applied ([`FaultEffect`]).
    pub fn fault_effects(&self) -> &[FaultEffect] {
        self.core.ledger.effects()
    }
    /// Per applied fault (as [`Sim::applied_faults`]), how many observations the run had
    /// recorded, kept or left out, when it was applied: observations with a lower index came
    /// before it, the others after, also at the same instant (a crash and a restart at one
    /// time with a claim between them).
    pub fn applied_fault_positions(&self) -> &[usize] {
        &self.core.applied_after_obs
    }
    /// Counters so far (a copy; [`Stats::messages`] is built from the per-kind table).
    pub fn stats(&self) -> Stats {
        Stats {
            messages: self.core.kinds.to_map(),
            ..self.core.stats.clone()
        }
    }
    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.core.stats.events
    }

    /// Starts the run (every node's `on_start`) if it has not started. Inlined, so the test
    /// `step` makes on every event is not a call (in W3 the call would be 1.5% of the
    /// instructions).
    #[inline]
    fn start(&mut self) {
        if !self.started {
            self.start_nodes();
        }
    }

    /// [`Sim::start`] the first time.
    #[cold]
    #[inline(never)]
    fn start_nodes(&mut self) {
        self.started = true;
        self.core.network.reserve_nodes(self.actors.len());
        for i in 0..self.actors.len() {
            let node = NodeId(i as u32);
            let t = self.core.now;
            self.core.record(|| TraceEvent::Start { t, node });
            let mut ctx = Context {
                node,
                core: &mut self.core,
            };
            self.actors[i].on_start(&mut ctx);
            // The rest start only if the run goes on; `run_until` reports the bound.
            if self.core.queue.queued() as u64 > self.limits.max_in_flight {
                break;
            }
        }
    }

    /// Runs events with true time `< end`, then sets the clock to `end` (unless `end` is
    /// [`SimTime::MAX`]). Stops with an error at a bound.
    pub fn run_until(&mut self, end: SimTime) -> Result<(), SimError> {
        self.start();
        while let Some(top) = self.core.queue.peek() {
            // Before the end test: a start cut short by this bound must not look like a run
            // that reached its end.
            if self.core.stats.events % 1024 == 0 {
                let queued = self.core.queue.queued() as u64;
                if queued > self.limits.max_in_flight {
                    return Err(SimError::InFlightLimit {
                        limit: self.limits.max_in_flight,
                        queued,
                        at: self.core.now,
                    });
                }
            }
            if top >= end {
                break;
            }
            if top > self.limits.max_time {
                return Err(SimError::TimeLimit {
                    limit: self.limits.max_time,
                    next: top,
                });
            }
            if self.core.stats.events >= self.limits.max_events {
                return Err(SimError::EventLimit {
                    limit: self.limits.max_events,
                    at: self.core.now,
                });
            }
            self.step();
        }
        if end != SimTime::MAX && end > self.core.now {
            self.core.now = end;
        }
        Ok(())
    }

    /// Processes exactly one event (the earliest by `(time, seq)`); `false` if none is left.
    /// Does not check the bounds: [`Sim::run_until`] does.
    pub fn step(&mut self) -> bool {
        self.start();
        let Some(entry) = self.core.queue.pop() else {
            return false;
        };
        let (time, event) = (entry.time, Event::unpack(entry.data));
        self.core.now = time;
        self.core.prefetch_ahead();
        self.core.stats.events += 1;
        match event {
            Event::Timer { slot, gen } => self.on_timer_event(slot, gen),
            Event::Deliver { from, to, stale } => {
                let msg = entry.payload.expect("a delivery carries its message");
                self.on_deliver_event(NodeId(from), NodeId(to), stale, 0, msg);
            }
            Event::Traced { slot } => {
                let core = &mut self.core;
                let m = core.traced[slot as usize]
                    .take()
                    .expect("a traced message's slot is full");
                core.free_traced.push(slot);
                let stale = core.incarnations[m.to.index()] != m.incarnation;
                // Kept while a trace is built; 0 (read by nothing) once not.
                let id = if core.keeps_ids() { m.id } else { 0 };
                let msg = entry.payload.expect("a delivery carries its message");
                self.on_deliver_event(m.from, m.to, stale, id, msg);
            }
            Event::Fault { index } => {
                let fault = self.core.faults[index as usize].clone();
                self.apply_fault(fault);
            }
            Event::Resume { node, gen } => self.on_resume(NodeId(node), gen),
            Event::Done { node, gen } => self.on_done(NodeId(node), gen),
        }
        true
    }

    #[inline]
    fn on_timer_event(&mut self, slot: u32, gen: u32) {
        let core = &mut self.core;
        let t = &core.timers[slot as usize];
        if t.gen != gen || t.payload.is_none() {
            core.stats.stale_timers += 1;
            return;
        }
        let (node, incarnation) = (t.node, t.incarnation);
        let n = &mut core.nodes[node as usize];
        if !n.up || core.incarnations[node as usize] != incarnation {
            core.take_timer(slot);
            core.stats.stale_timers += 1;
            return;
        }
        if n.paused || n.busy {
            n.pending.push_back(Pending::Timer { slot, gen });
            return;
        }
        let payload = core.take_timer(slot).expect("checked above");
        self.run_timer(NodeId(node), payload);
    }

    #[inline]
    fn run_timer(&mut self, node: NodeId, payload: A::Timer) {
        self.core.stats.timers_fired += 1;
        let t = self.core.now;
        self.core.record(|| TraceEvent::Timer {
            t,
            node,
            timer: payload.clone(),
        });
        let mut ctx = Context {
            node,
            core: &mut self.core,
        };
        self.actors[node.index()].on_timer(&mut ctx, payload);
    }

    /// A message arrives: it is dropped (the link is cut, its receiver is down or `stale`:
    /// crashed since the send), queued (its receiver is paused or busy), or handled.
    fn on_deliver_event(&mut self, from: NodeId, to: NodeId, stale: bool, id: u64, msg: A::Msg) {
        self.core.in_flight -= 1;
        let kind = msg.kind();
        let reason = if self.core.network.is_cut(from, to) {
            Some(DropReason::Partition)
        } else if !self.core.nodes[to.index()].up {
            Some(DropReason::NodeDown)
        } else if stale {
            Some(DropReason::Crashed)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.core.drop_msg(from, to, id, kind, reason);
            return;
        }
        let n = &mut self.core.nodes[to.index()];
        if n.paused || n.busy {
            n.pending.push_back(Pending::Msg { from, id, msg });
            return;
        }
        if let Some(pr) = self.core.processing.get(to.index()) {
            let p = pr.time_of(kind);
            if p > SimDuration::ZERO {
                self.start_service(to, from, id, msg, p);
                return;
            }
        }
        self.core.kinds.row(kind).delivered += 1;
        self.run_message(from, to, id, msg);
    }

    /// Node `node` starts handling a message that takes `p` (processing time).
    fn start_service(&mut self, node: NodeId, from: NodeId, id: u64, msg: A::Msg, p: SimDuration) {
        let now = self.core.now;
        let n = &mut self.core.nodes[node.index()];
        n.busy = true;
        n.in_service = Some((from, id, msg));
        n.service_gen = n.service_gen.wrapping_add(1);
        n.service_done_at = now.saturating_add(p);
        let (at, gen) = (n.service_done_at, n.service_gen);
        self.core.push(at, Event::Done { node: node.0, gen });
    }

    /// The handling of node `node`'s message is done: its handler runs, then what queued.
    fn on_done(&mut self, node: NodeId, gen: u32) {
        let n = &mut self.core.nodes[node.index()];
        if !n.up || !n.busy || n.paused || n.service_gen != gen {
            return;
        }
        n.busy = false;
        let (from, id, msg) = n.in_service.take().expect("a busy node handles a message");
        self.core.kinds.row(msg.kind()).delivered += 1;
        self.run_message(from, node, id, msg);
        self.drain(node);
    }

    /// Runs what queued at `node`, in arrival order, until the queue is empty or the node is
    /// busy again (a queued message with a processing time starts its handling).
    fn drain(&mut self, node: NodeId) {
        loop {
            let n = &mut self.core.nodes[node.index()];
            if !n.up || n.paused || n.busy {
                return;
            }
            let Some(p) = n.pending.pop_front() else {
                return;
            };
            match p {
                Pending::Timer { slot, gen } => {
                    let t = &self.core.timers[slot as usize];
                    if t.gen == gen && t.payload.is_some() {
                        let payload = self.core.take_timer(slot).expect("checked above");
                        self.run_timer(node, payload);
                    } else {
                        // Cancelled by a handler that ran before it in this batch.
                        self.core.stats.stale_timers += 1;
                    }
                }
                Pending::Msg { from, id, msg } => {
                    let p = match self.core.processing.get(node.index()) {
                        Some(pr) => pr.time_of(msg.kind()),
                        None => SimDuration::ZERO,
                    };
                    if p > SimDuration::ZERO {
                        self.start_service(node, from, id, msg, p);
                    } else {
                        self.core.kinds.row(msg.kind()).delivered += 1;
                        self.run_message(from, node, id, msg);
                    }
                }
            }
        }
    }

    /// Runs `to`'s handler of `msg` (the caller has counted it as delivered).
    #[inline]
    fn run_message(&mut self, from: NodeId, to: NodeId, id: u64, msg: A::Msg) {
        let t = self.core.now;
        self.core.record(|| TraceEvent::Deliver { t, from, to, id });
        let mut ctx = Context {
            node: to,
            core: &mut self.core,
        };
        self.actors[to.index()].on_message(&mut ctx, from, msg);
    }

    fn on_resume(&mut self, node: NodeId, gen: u32) {
        let n = &mut self.core.nodes[node.index()];
        if !n.up || !n.paused || n.pause_gen != gen {
            return;
        }
        n.paused = false;
        let t = self.core.now;
        self.core.record(|| TraceEvent::Resume { t, node });
        // A handling the pause froze resumes first, for the time it had left.
        let n = &mut self.core.nodes[node.index()];
        if let Some(left) = n.service_left.take() {
            n.service_gen = n.service_gen.wrapping_add(1);
            n.service_done_at = t.saturating_add(left);
            let (at, gen) = (n.service_done_at, n.service_gen);
            self.core.push(at, Event::Done { node: node.0, gen });
            return;
        }
        // Everything queued runs now, in arrival order, before anything newer: handlers
        // cannot re-pause the node (faults are events) and nothing new is queued meanwhile,
        // so the queue only shrinks (or waits behind a message with a processing time).
        self.drain(node);
    }

    fn apply_fault(&mut self, fault: Fault) {
        let t = self.core.now;
        self.core.record(|| TraceEvent::Fault {
            t,
            fault: fault.clone(),
        });
        if self.core.ledger.faults().is_empty() {
            // No fault has changed a drift or a loss yet: the run's start is what is in force.
            let start = FaultStart {
                drift_ppm: Some(
                    self.core
                        .nodes
                        .iter()
                        .map(|n| n.clock.drift_ppm())
                        .collect(),
                ),
                link_loss_ppm: self.core.network.uniform_loss_ppm(),
            };
            self.core.ledger = FaultLedger::new(start);
        }
        self.core.ledger.apply(t, &fault);
        self.core
            .applied_after_obs
            .push(self.core.observations.len());
        match fault {
            Fault::Crash { node } => {
                if let Some(f) = &mut self.core.obs_filter {
                    f.crashed(node);
                }
                let n = &mut self.core.nodes[node.index()];
                if n.up {
                    n.up = false;
                    n.paused = false;
                    let inc = &mut self.core.incarnations[node.index()];
                    *inc = inc.wrapping_add(1);
                    n.busy = false;
                    n.service_left = None;
                    if let Some((from, id, msg)) = n.in_service.take() {
                        let kind = msg.kind();
                        self.core
                            .drop_msg(from, node, id, kind, DropReason::Crashed);
                    }
                    // The messages in flight to the incarnation that ended die with it.
                    self.core.mark_in_flight_stale(node);
                    let n = &mut self.core.nodes[node.index()];
                    // Work queued during a pause dies with the node: messages are dropped as
                    // `crashed` (every send ends in a delivery or a drop), timers are cancelled.
                    let queued = std::mem::take(&mut n.pending);
                    for p in queued {
                        match p {
                            Pending::Timer { slot, gen } => {
                                if self.core.timers[slot as usize].gen == gen {
                                    self.core.take_timer(slot);
                                }
                                self.core.stats.stale_timers += 1;
                            }
                            Pending::Msg { from, id, msg } => {
                                let kind = msg.kind();
                                self.core
                                    .drop_msg(from, node, id, kind, DropReason::Crashed);
                            }
                        }
                    }
                }
            }
            Fault::Restart { node } => {
                let n = &mut self.core.nodes[node.index()];
                if !n.up {
                    n.up = true;
                    let durable = n.durable.clone();
                    let mut ctx = Context {
                        node,
                        core: &mut self.core,
                    };
                    self.actors[node.index()].on_restart(&mut ctx, &durable);
                }
            }
            Fault::Pause { node, duration } => {
                let now = self.core.now;
                let n = &mut self.core.nodes[node.index()];
                if n.up {
                    let until = now.saturating_add(duration).max(if n.paused {
                        n.paused_until
                    } else {
                        now
                    });
                    if n.busy && !n.paused {
                        // The handling under way is frozen with the rest of the node.
                        n.service_left = Some(n.service_done_at.saturating_since(now));
                        n.service_gen = n.service_gen.wrapping_add(1);
                    }
                    n.paused = true;
                    n.paused_until = until;
                    n.pause_gen = n.pause_gen.wrapping_add(1);
                    let gen = n.pause_gen;
                    self.core.push(until, Event::Resume { node: node.0, gen });
                }
            }
            Fault::Network { rule } => self.core.network.add_rule(rule),
            Fault::Heal => self.core.network.heal(),
            Fault::HealPartition { groups } => {
                self.core
                    .network
                    .remove_rule(&NetRule::Partition { groups });
            }
            Fault::ClockStep { node, delta_ns } => {
                self.core.nodes[node.index()].clock.step(delta_ns)
            }
            // A drift change to the drift in force changes nothing: re-scheduling the node's
            // timers would only move them after the events already due at their instants.
            Fault::SetDrift { node, drift_ppm }
                if self.core.nodes[node.index()].clock.drift_ppm() == drift_ppm => {}
            Fault::SetDrift { node, drift_ppm } => {
                let now = self.core.now;
                self.core.nodes[node.index()]
                    .clock
                    .set_drift(now, drift_ppm);
                // Timers fire when the monotonic clock reaches their deadline, whatever its
                // rate: move the node's pending ones to the instants the new rate gives.
                self.core.reschedule_timers(node);
            }
            Fault::SetLoss { loss_ppm } => self.core.network.set_loss_override(loss_ppm),
        }
    }
}

impl<A: Actor> Sim<A>
where
    A::Obs: Observation,
    A::Msg: Message,
{
    /// The node called `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.core.name_index.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message of two words with a niche (as the protocols' `Msg`, an enum of boxes and
    /// small values, has) makes a queue entry of 32 bytes, so an entry never straddles a
    /// cache line and 50 million in flight take 1.6 GB; a message type with no values (W1)
    /// leaves the entries at 16 bytes.
    #[test]
    fn a_queue_entry_is_32_bytes_with_a_two_word_message_and_16_without_messages() {
        type TwoWords = (Box<u64>, u64);
        enum NoMsg {}
        assert_eq!(std::mem::size_of::<TwoWords>(), 16);
        assert_eq!(std::mem::size_of::<Item<Option<TwoWords>>>(), 32);
        assert_eq!(std::mem::size_of::<Item<Option<NoMsg>>>(), 16);
    }

    /// The queue payload round-trips every event, including the link hint of a delivery.
    #[test]
    fn events_pack_and_unpack() {
        let max = (1 << FIELD_BITS) - 1;
        for e in [
            Event::Timer {
                slot: max,
                gen: u32::MAX,
            },
            Event::Deliver {
                from: max,
                to: 0,
                stale: true,
            },
            Event::Deliver {
                from: 7,
                to: max,
                stale: false,
            },
            Event::Traced { slot: max },
            Event::Fault { index: 9 },
            Event::Resume { node: 2, gen: 5 },
            Event::Done { node: max, gen: 0 },
        ] {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }
}
