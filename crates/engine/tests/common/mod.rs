//! Shared test actor for the engine's integration tests.
//!
//! [`Probe`] is a scripted actor: at start it arms the timers of its `plan`, and every handler
//! reports what it saw (with the node's own monotonic clock reading) as an observation, so a
//! test can pin the exact sequence of `(true time, node, observation)`.

#![allow(dead_code)]

use serde::Serialize;
use splitbrain_engine::{
    Actor, ClockConfig, Context, DropReason, EventOf, Message, NodeId, Observation, Recorder, Sim,
    SimDuration, SimTime, TimerId, TraceEvent,
};

/// Messages between probes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Msg {
    /// A numbered message.
    Ping(u32),
    /// Cancel the receiver's `n`-th armed timer (index into [`Probe::armed`]).
    CancelTimer(u32),
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Ping(_) => "PING",
            Msg::CancelTimer(_) => "CANCEL",
        }
    }
}

/// Timer payloads: what the probe does when the timer fires.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Tm {
    /// Send `Ping(n)` to node `to`.
    Send { to: u32, n: u32 },
    /// Send `msg` to node `to`.
    SendMsg { to: u32, msg: Msg },
    /// Report `Fired { n }`.
    Mark(u32),
    /// Persist `v` as the durable state.
    Persist(u64),
    /// Cancel the `i`-th armed timer.
    Cancel(u32),
    /// Arm a new timer `Mark(n)` after `after_ns` local ns.
    Arm { n: u32, after_ns: u64 },
    /// Several actions in one handler, in order.
    Do(Vec<Tm>),
    /// Draw one value from the node's stream and report it as `Drew { payload }`.
    Draw,
    /// Re-arm itself after 0 ns forever (a runaway actor).
    Spin,
    /// `rounds` times: draw a peer, a payload and a delay from the node's stream, report the
    /// draws, send the payload, re-arm after the drawn delay.
    Gossip { rounds: u32 },
    /// A worker step: report `Checked`, then write 1 ms later.
    Check { rounds: u32 },
    /// A worker step: report `Wrote`, then check again 10 ms later.
    Write { rounds: u32 },
}

/// What a probe reports. `mono` is the node's monotonic clock reading, in local ns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Obs {
    Got {
        from: u32,
        n: u32,
        mono: u64,
    },
    Fired {
        n: u32,
        mono: u64,
    },
    Restarted {
        durable: u64,
    },
    Drew {
        peer: u32,
        payload: u32,
        delay_ns: u64,
    },
    Checked {
        mono: u64,
    },
    Wrote {
        mono: u64,
    },
}

impl Observation for Obs {
    fn kind(&self) -> &'static str {
        match self {
            Obs::Got { .. } => "got",
            Obs::Fired { .. } => "fired",
            Obs::Restarted { .. } => "restarted",
            Obs::Drew { .. } => "drew",
            Obs::Checked { .. } => "checked",
            Obs::Wrote { .. } => "wrote",
        }
    }
}

/// The scripted actor.
#[derive(Clone, Debug, Default)]
pub struct Probe {
    /// Timers armed by `on_start`, `(local delay, payload)`.
    pub plan: Vec<(SimDuration, Tm)>,
    /// Timers armed by `on_restart`.
    pub restart_plan: Vec<(SimDuration, Tm)>,
    /// Send every received `Ping(n)` back as `Ping(n + 1)` (a ping-pong pair).
    pub bounce: bool,
    /// Volatile state: handlers run since the last (re)start. Lost on a crash.
    pub volatile: u64,
    /// Ids of the timers armed so far, in arming order (volatile).
    pub armed: Vec<TimerId>,
    /// `(to, n)`: `Ping(n)` sent to node `to` from `on_start`, before any event.
    pub start_sends: Vec<(u32, u32)>,
}

impl Probe {
    /// A probe with this start plan.
    pub fn new(plan: Vec<(SimDuration, Tm)>) -> Self {
        Probe {
            plan,
            ..Probe::default()
        }
    }

    /// This probe, also sending `Ping(n)` to node `to` for each `(to, n)` from `on_start`.
    pub fn sending_at_start(mut self, sends: Vec<(u32, u32)>) -> Self {
        self.start_sends = sends;
        self
    }

    fn arm(&mut self, ctx: &mut Context<'_, Self>, after: SimDuration, tm: Tm) {
        let id = ctx.set_timer(after, tm);
        self.armed.push(id);
    }
}

fn mono(ctx: &Context<'_, Probe>) -> u64 {
    ctx.mono_now().0
}

impl Actor for Probe {
    type Msg = Msg;
    type Timer = Tm;
    type Obs = Obs;
    type Durable = u64;

    fn on_start(&mut self, ctx: &mut Context<'_, Self>) {
        for (after, tm) in self.plan.clone() {
            self.arm(ctx, after, tm);
        }
        for &(to, n) in &self.start_sends {
            ctx.send(NodeId(to), Msg::Ping(n));
        }
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Self>, from: NodeId, msg: Msg) {
        self.volatile += 1;
        match msg {
            Msg::Ping(n) => {
                ctx.observe(Obs::Got {
                    from: from.0,
                    n,
                    mono: mono(ctx),
                });
                if self.bounce {
                    ctx.send(from, Msg::Ping(n + 1));
                }
            }
            Msg::CancelTimer(i) => ctx.cancel_timer(self.armed[i as usize]),
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Self>, tm: Tm) {
        self.volatile += 1;
        self.act(ctx, tm);
    }

    fn on_restart(&mut self, ctx: &mut Context<'_, Self>, durable: &u64) {
        // Rebuild from the durable state alone: everything else was volatile.
        self.volatile = 0;
        self.armed.clear();
        ctx.observe(Obs::Restarted { durable: *durable });
        for (after, tm) in self.restart_plan.clone() {
            self.arm(ctx, after, tm);
        }
    }
}

impl Probe {
    fn act(&mut self, ctx: &mut Context<'_, Self>, tm: Tm) {
        match tm {
            Tm::Do(list) => {
                for tm in list {
                    self.act(ctx, tm);
                }
            }
            Tm::Send { to, n } => ctx.send(NodeId(to), Msg::Ping(n)),
            Tm::SendMsg { to, msg } => ctx.send(NodeId(to), msg),
            Tm::Mark(n) => ctx.observe(Obs::Fired { n, mono: mono(ctx) }),
            Tm::Persist(v) => ctx.persist(v),
            Tm::Cancel(i) => ctx.cancel_timer(self.armed[i as usize]),
            Tm::Arm { n, after_ns } => self.arm(ctx, SimDuration(after_ns), Tm::Mark(n)),
            Tm::Draw => {
                let payload = ctx.rng().next_u64() as u32;
                ctx.observe(Obs::Drew {
                    peer: 0,
                    payload,
                    delay_ns: 0,
                });
            }
            Tm::Spin => {
                ctx.set_timer(SimDuration::ZERO, Tm::Spin);
            }
            Tm::Gossip { rounds } => {
                if rounds == 0 {
                    return;
                }
                let others = ctx.node_count() as u64 - 1;
                // Always one draw for the peer, whatever the node count.
                let k = (ctx.rng().next_u64() % others.max(1)) as u32;
                // Skip ourselves: peers are the other nodes in id order.
                let peer = if k >= ctx.id().0 { k + 1 } else { k };
                let payload = ctx.rng().next_u64() as u32;
                let delay_ns = ctx.rng().uniform_inclusive(1_000_000, 5_000_000);
                ctx.observe(Obs::Drew {
                    peer,
                    payload,
                    delay_ns,
                });
                if others > 0 {
                    ctx.send(NodeId(peer), Msg::Ping(payload));
                }
                ctx.set_timer(SimDuration(delay_ns), Tm::Gossip { rounds: rounds - 1 });
            }
            Tm::Check { rounds } => {
                ctx.observe(Obs::Checked { mono: mono(ctx) });
                ctx.set_timer(SimDuration::from_millis(1), Tm::Write { rounds });
            }
            Tm::Write { rounds } => {
                ctx.observe(Obs::Wrote { mono: mono(ctx) });
                if rounds > 1 {
                    ctx.set_timer(
                        SimDuration::from_millis(10),
                        Tm::Check { rounds: rounds - 1 },
                    );
                }
            }
        }
    }
}

/// `n` milliseconds.
pub fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

/// True time `n` milliseconds.
pub fn at_ms(n: u64) -> SimTime {
    SimTime(n * 1_000_000)
}

/// A simulation of `probes`, named as given, with drift-free clocks.
pub fn sim_of(seed: u64, probes: Vec<(&str, Probe)>) -> Sim<Probe> {
    let mut sim = Sim::new(seed);
    for (name, p) in probes {
        sim.add_node(name, p, ClockConfig::default());
    }
    sim
}

/// Runs `sim` until `end` keeping every typed trace event, and returns them.
pub fn run_traced(sim: &mut Sim<Probe>, end: SimTime) -> Vec<EventOf<Probe>> {
    sim.set_recorder(Recorder::hash_only().keep_events());
    sim.run_until(end).expect("run stays within its bounds");
    let summary = sim
        .take_recorder()
        .expect("recorder set above")
        .finish()
        .expect("in-memory trace cannot fail");
    summary.kept.expect("events kept")
}

/// Every observation as `(true ns, node, obs)`.
pub fn observed(sim: &Sim<Probe>) -> Vec<(u64, u32, Obs)> {
    sim.observations()
        .iter()
        .map(|o| (o.t.0, o.node.0, o.obs.clone()))
        .collect()
}

/// What became of one sent message.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fate {
    /// Handled by the receiver at this true ns.
    Delivered(u64),
    /// Dropped at this true ns for this reason.
    Dropped(u64, DropReason),
    /// Still in flight when the run ended.
    InFlight,
}

/// `(from, to, Ping number, fate)` of every `Ping` sent, in send order.
pub fn fates(events: &[EventOf<Probe>]) -> Vec<(u32, u32, u32, Fate)> {
    let mut out = Vec::new();
    for ev in events {
        if let TraceEvent::Send {
            from,
            to,
            id,
            msg: Msg::Ping(n),
            ..
        } = ev
        {
            let fate = events
                .iter()
                .find_map(|e| match e {
                    TraceEvent::Deliver { t, id: i, .. } if i == id => Some(Fate::Delivered(t.0)),
                    TraceEvent::Drop {
                        t, id: i, reason, ..
                    } if i == id => Some(Fate::Dropped(t.0, *reason)),
                    _ => None,
                })
                .unwrap_or(Fate::InFlight);
            out.push((from.0, to.0, *n, fate));
        }
    }
    out
}
