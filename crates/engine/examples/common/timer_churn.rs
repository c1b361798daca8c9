//! The W1 "timer churn" workload (`shared/bench/WORKLOADS.md` §2) on the engine's public actor
//! API, shared by the `w1_timer_churn` example and by W3, which runs it in the same process to
//! give its events/s a same-moment W1 reference (issue 11 §3).
//!
//! 10,000 actors; each `on_start` arms a timer of `uniform_inclusive(1, 1000)` µs drawn from
//! its own `ctx.rng()`, and each firing increments the actor's counter and re-arms the same
//! way.

use serde::Serialize;
use splitbrain_engine::{
    Actor, ClockConfig, Context, Message, NodeId, Observation, Sim, SimDuration,
};

/// The number of actors.
pub const ACTORS: usize = 10_000;
/// The run's seed.
pub const SEED: u64 = 1;

/// W1 sends no messages.
#[derive(Clone, Debug, Serialize)]
pub enum NoMsg {}

impl Message for NoMsg {
    fn kind(&self) -> &'static str {
        match *self {}
    }
}

/// W1 reports no observations.
#[derive(Clone, Debug, Serialize)]
pub enum NoObs {}

impl Observation for NoObs {
    fn kind(&self) -> &'static str {
        match *self {}
    }
}

/// One W1 actor: a counter and one pending timer.
pub struct Churner {
    /// Timer firings so far.
    pub counter: u64,
}

impl Churner {
    #[inline]
    fn arm(ctx: &mut Context<'_, Self>) {
        let us = ctx.rng().uniform_inclusive(1, 1000);
        ctx.set_timer(SimDuration::from_micros(us), ());
    }
}

impl Actor for Churner {
    type Msg = NoMsg;
    type Timer = ();
    type Obs = NoObs;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Context<'_, Self>) {
        Self::arm(ctx);
    }
    fn on_message(&mut self, _: &mut Context<'_, Self>, _: NodeId, msg: NoMsg) {
        match msg {}
    }
    #[inline]
    fn on_timer(&mut self, ctx: &mut Context<'_, Self>, _: ()) {
        self.counter += 1;
        Self::arm(ctx);
    }
    fn on_restart(&mut self, _: &mut Context<'_, Self>, _: &()) {}
}

/// A W1 simulation with its [`ACTORS`] actors added, not yet started.
pub fn build() -> Sim<Churner> {
    let mut sim: Sim<Churner> = Sim::new(SEED);
    for i in 0..ACTORS {
        sim.add_node(
            &format!("a{i}"),
            Churner { counter: 0 },
            ClockConfig::default(),
        );
    }
    sim
}

/// Steps `sim` until it has processed `events` events (or its queue is empty).
pub fn run(sim: &mut Sim<Churner>, events: u64) {
    while sim.events_processed() < events {
        if !sim.step() {
            break;
        }
    }
}
