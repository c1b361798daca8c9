//! W2 "bully storm" (`bench/WORKLOADS.md` §3) on the bully actor and the engine.
//!
//! 64 bully nodes (ids 0..63, all peers), message delays uniform in 1..=10 ms (one draw per
//! message from the engine's `"net"` stream, no FIFO), answer timeout 50 ms, heartbeats every
//! 100 ms, failure timeout 300 ms, coordinator timeout 300 ms (WORKLOADS.md lets the watchdog
//! play that role; here it is the actor's own timer of the same length), node 63 the agreed
//! leader at t = 0, seed 2, 600 s. Every 2 s (2, 4, ..., 598 s) the highest live node crashes
//! and comes back 5 s later. The victims depend only on that schedule, so they are computed
//! up front by replaying it on an `alive` array and scheduled as engine faults.
//!
//! This is not event-for-event W2: the engine has one random stream per consumer (the network
//! draws from `"net"`, not from a single run stream), its own scheduling order, and the actor
//! has its own rules (see the module doc of `splitbrain_protocols::bully`). The counts are
//! statistically comparable with the §4 reference, not equal.
//!
//! Run: `cargo run --release -p splitbrain-protocols --example w2_bully_storm`.
//! The last line is `events=N wall_s=S events_per_s=R`. With `--breakdown` the run also
//! records the trace (slower: not a timed run) and prints its hash and the timer firings per
//! kind. `--seed N` replaces the seed (2) to see how the delay draws move the counts.

use splitbrain_engine::{
    ClockConfig, DelayDist, Fault, LinkModel, Network, NodeId, Sim, SimDuration, SimTime,
};
use splitbrain_engine::{Recorder, TraceEvent};
use splitbrain_protocols::bully::{
    AnswerAtTimeout, BullyConfig, BullyNode, BullyTimer, BullyVariant,
};
use splitbrain_protocols::Timer;
use splitbrain_protocols::{Node, Obs};
use std::collections::BTreeMap;

const N: u32 = 64;
const CRASH_PERIOD: SimDuration = SimDuration::from_secs(2);
const DOWNTIME: SimDuration = SimDuration::from_secs(5);
const END: SimTime = SimTime(600_000_000_000);

/// The crash/restart schedule: at each crash instant the highest node alive by the schedule
/// so far crashes; it restarts `DOWNTIME` later. Only instants before `END` are kept.
fn crash_schedule() -> Vec<(SimTime, Fault)> {
    let mut alive = vec![true; N as usize];
    let mut restarts: Vec<(SimTime, u32)> = Vec::new();
    let mut out = Vec::new();
    let mut t = SimTime::ZERO.saturating_add(CRASH_PERIOD);
    while t < END {
        // Restarts (odd seconds) never coincide with crashes (even seconds).
        for &(at, v) in &restarts {
            if at < t {
                alive[v as usize] = true;
            }
        }
        restarts.retain(|&(at, _)| at >= t);
        let v = (0..N)
            .rev()
            .find(|&v| alive[v as usize])
            .expect("a live node");
        alive[v as usize] = false;
        out.push((t, Fault::Crash { node: NodeId(v) }));
        let back = t.saturating_add(DOWNTIME);
        if back < END {
            out.push((back, Fault::Restart { node: NodeId(v) }));
            restarts.push((back, v));
        }
        t = t.saturating_add(CRASH_PERIOD);
    }
    out.sort_by_key(|(at, _)| *at);
    out
}

// The example times itself with the OS clock, which the simulator crates never read.
#[allow(clippy::disallowed_methods)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let breakdown = args.iter().any(|a| a == "--breakdown");
    let seed: u64 = args
        .iter()
        .position(|a| a == "--seed")
        .and_then(|i| args.get(i + 1))
        .map_or(2, |s| s.parse().expect("--seed takes an integer"));
    let wall = std::time::Instant::now();

    let mut sim: Sim<Node> = Sim::new(seed);
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Uniform {
            lo: SimDuration::from_millis(1),
            hi: SimDuration::from_millis(10),
        },
        fifo: false,
        ..LinkModel::default()
    });
    let peers: std::sync::Arc<[NodeId]> = (0..N).map(NodeId).collect();
    for i in 0..N {
        let config = BullyConfig {
            peers: peers.clone(),
            answer_timeout: SimDuration::from_millis(50),
            coordinator_timeout: SimDuration::from_millis(300),
            heartbeat_every: SimDuration::from_millis(100),
            failure_timeout: SimDuration::from_millis(300),
            start_election_on_start: false,
            initial_leader: Some(NodeId(N - 1)),
            // W2's rules are the literal reading (WORKLOADS.md §3.5).
            variant: BullyVariant::Literal,
            // W2 as recorded: leaders adopted from heartbeats too, the answer timer first.
            adopt_on_heartbeat: true,
            answer_at_timeout: AnswerAtTimeout::Late,
        };
        sim.add_node(
            &format!("n{i}"),
            Node::Bully(BullyNode::new(config)),
            ClockConfig::default(),
        );
    }
    for (at, fault) in crash_schedule() {
        sim.schedule_fault(at, fault);
    }
    if breakdown {
        sim.set_recorder(Recorder::hash_only().keep_events());
    }
    sim.run_until(END)
        .expect("W2 stays within the default bounds");

    let elapsed = wall.elapsed();
    let wall_s = elapsed.as_secs_f64();

    let stats = sim.stats();
    let (mut sent, mut delivered, mut dropped) = (0, 0, 0);
    for (kind, c) in &stats.messages {
        println!(
            "{kind:<12} sent={} delivered={} dropped={}",
            c.sent, c.delivered, c.dropped
        );
        sent += c.sent;
        delivered += c.delivered;
        dropped += c.dropped;
    }
    let (mut elections, mut claims, mut step_downs) = (0u64, 0u64, 0u64);
    for o in sim.observations() {
        match o.obs {
            Obs::ElectionStarted => elections += 1,
            Obs::LeaderClaim { .. } => claims += 1,
            Obs::LeaderStepDown { .. } => step_downs += 1,
            _ => {}
        }
    }
    let (mut crashes, mut restarts) = (0, 0);
    for (_, f) in sim.applied_faults() {
        match f {
            Fault::Crash { .. } => crashes += 1,
            Fault::Restart { .. } => restarts += 1,
            _ => {}
        }
    }
    let leaders_now: Vec<u32> = (0..N)
        .filter(|&i| {
            sim.is_up(NodeId(i)) && matches!(sim.actor(NodeId(i)), Node::Bully(b) if b.is_leader())
        })
        .collect();
    println!("msgs_sent={sent} msgs_delivered={delivered} msgs_dropped={dropped}");
    println!("drops_by_reason={:?}", stats.drops);
    // The agreed leader's claim of term 1 at t = 0 is not an election (WORKLOADS.md does not
    // count it either).
    println!(
        "elections_started={elections} leaders_elected={} step_downs={step_downs}",
        claims - 1
    );
    println!(
        "crashes={crashes} recoveries={restarts} stale_timers={} timers_fired={}",
        stats.stale_timers, stats.timers_fired
    );
    println!("live_leaders_at_end={leaders_now:?}");
    if let Some(recorder) = sim.take_recorder() {
        let summary = recorder.finish().expect("no writer, no I/O error");
        let mut fired: BTreeMap<&str, u64> = BTreeMap::new();
        for ev in summary.kept.iter().flatten() {
            if let TraceEvent::Timer {
                timer: Timer::Bully(t),
                ..
            } = ev
            {
                let name = match t {
                    BullyTimer::AnswerTimeout { .. } => "answer_timeout",
                    BullyTimer::CoordinatorTimeout { .. } => "coordinator_timeout",
                    BullyTimer::HeartbeatTick { .. } => "heartbeat_tick",
                    BullyTimer::FailureCheck => "failure_check",
                    BullyTimer::AnswerGrace { .. } => "answer_grace",
                };
                *fired.entry(name).or_default() += 1;
            }
        }
        println!(
            "trace_events={} trace_hash={:#018x}",
            summary.events, summary.hash
        );
        println!("timers_fired_by_kind={fired:?}");
    }
    println!(
        "sim_s={} sim_s_per_wall_s={:.1}",
        END.as_secs_f64(),
        END.as_secs_f64() / wall_s
    );
    println!(
        "events={} wall_s={wall_s:.3} events_per_s={:.0}",
        stats.events,
        stats.events as f64 / wall_s
    );
}
