//! W1 "timer churn" (`shared/bench/WORKLOADS.md` §2) on the engine's public actor API.
//!
//! 10,000 actors; each `on_start` arms a timer of `uniform_inclusive(1, 1000)` µs drawn from
//! its own `ctx.rng()`, and each firing increments the actor's counter and re-arms the same
//! way. The run stops after exactly `--events` processed events (default 10,000,000).
//!
//! **Not event-for-event with the reference.** WORKLOADS.md draws every delay from one
//! shared stream in processing order; the engine gives each actor its own stream
//! (`"actor/<name>"`, as docs/design.md, "Determinism", requires so that adding an actor changes no one else's
//! draws). The delays have the same distribution and the event count is the same, so the run
//! is statistically equivalent to the reference (final time near 0.5 s, counters near 1,000),
//! but its counters, fingerprint and trace hash differ from §4.
//!
//! ```text
//! cargo run --release -p splitbrain-engine --example w1_timer_churn -- [--events N] [--record FILE | --hash]
//! ```
//! `--record FILE` streams the JSON Lines trace to FILE and prints its hash; `--hash` computes
//! the hash without writing. The last line is always `events=N wall_s=S events_per_s=R`.

use serde::Serialize;
use splitbrain_engine::{
    Actor, ClockConfig, Context, Message, NodeId, Observation, Recorder, Sim, SimDuration,
};
use std::fs::File;
use std::io::BufWriter;
use std::process::ExitCode;

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

enum Recording {
    Off,
    HashOnly,
    File(String),
}

struct Args {
    events: u64,
    recording: Recording,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        events: 10_000_000,
        recording: Recording::Off,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--events" => {
                let v = it.next().ok_or("--events needs a value")?;
                args.events = v
                    .replace('_', "")
                    .parse()
                    .map_err(|_| format!("bad --events value: {v}"))?;
            }
            "--record" => {
                args.recording = Recording::File(it.next().ok_or("--record needs a file")?);
            }
            "--hash" => args.recording = Recording::HashOnly,
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\nusage: w1_timer_churn [--events N] [--record FILE | --hash]");
            return ExitCode::from(2);
        }
    };

    // Wall time is measured, not simulated: examples may read the OS clock, the engine never.
    #[allow(clippy::disallowed_methods)]
    let started = std::time::Instant::now();

    let mut sim: Sim<Churner> = Sim::new(SEED);
    for i in 0..ACTORS {
        sim.add_node(
            &format!("a{i}"),
            Churner { counter: 0 },
            ClockConfig::default(),
        );
    }
    match &args.recording {
        Recording::Off => {}
        Recording::HashOnly => sim.set_recorder(Recorder::hash_only()),
        Recording::File(path) => match File::create(path) {
            Ok(f) => sim.set_recorder(
                Recorder::hash_only().with_writer(Box::new(BufWriter::with_capacity(1 << 20, f))),
            ),
            Err(e) => {
                eprintln!("cannot create {path}: {e}");
                return ExitCode::FAILURE;
            }
        },
    }
    while sim.events_processed() < args.events {
        if !sim.step() {
            break;
        }
    }
    let summary = sim.take_recorder().map(|r| r.finish());
    let wall_s = started.elapsed().as_secs_f64();

    let counters = (0..ACTORS).map(|i| sim.actor(NodeId(i as u32)).counter);
    let (min, max) = counters.fold((u64::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)));
    let events = sim.events_processed();
    let mut line = format!(
        "W1 engine actors={ACTORS} seed={SEED} final_time={} counters_min={min} counters_max={max}",
        sim.now()
    );
    match summary {
        None => {}
        Some(Ok(s)) => line += &format!(" trace_events={} trace_hash={:#018x}", s.events, s.hash),
        Some(Err(e)) => {
            eprintln!("writing the trace failed: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!("{line}");
    println!(
        "events={events} wall_s={wall_s:.6} events_per_s={:.0}",
        events as f64 / wall_s
    );
    ExitCode::SUCCESS
}
