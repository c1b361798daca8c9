//! W3 (issue 11 §3): 1,000 bully nodes through the whole scenario pipeline (file, validation,
//! build, protocols, checkers), no trace.
//!
//! 1,000 nodes of the default (textbook) bully, message delays uniform in 1..3 ms, heartbeats
//! every 100 ms (the default), every node elects at t = 0; the leader, n1000, crashes every
//! 10 s (10, 20, ..., 590 s) and restarts 5 s later; 600 s simulated; `single_leader` and
//! `eventual_leader` checked. Each crash costs the textbook's worst case: every survivor's
//! failure detector fires within a few ms, so about N(N-1)/2 ELECTIONs and as many ANSWERs.
//!
//! The issue's target is a ratio, W3's events/s against W1's "measured in the same run", and
//! on a shared machine two separate processes run at different moments can differ by 15%. So
//! this example runs W1 itself (the `w1_timer_churn` example's actor, 10 M events), once
//! just before W3 and once just after, and divides W3's events/s by the mean of the two. Each
//! W1 run is a child process of this example (`--w1-only`), so that W3's peak RSS is its own.
//!
//! Run: `cargo run --release -p splitbrain-scenario --example w3_bully_1000`. The line before
//! the last is `w1_events_per_s=B,A w3_to_w1=X` (B before, A after W3). The last line is
//! `events=N wall_s=S events_per_s=R peak_rss_mb=M` (W3's own; peak RSS: `VmHWM` of
//! /proc/self/status, 0 where there is none). `--nodes N` and `--secs S`
//! change the size and length (for quick looks; the benchmark is the default); `--no-w1` skips
//! the W1 runs (for profiling W3 alone).

/// The W1 example itself, for its actor (its `main` is not used here).
#[path = "../../engine/examples/w1_timer_churn.rs"]
#[allow(dead_code)]
mod w1;

use splitbrain_scenario::{execute, load_str};

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |s| s.parse().expect("an integer"))
}

/// The scenario file's text.
fn scenario(nodes: u64, secs: u64) -> String {
    let mut faults = Vec::new();
    let mut t = 10;
    while t < secs {
        faults.push(format!(r#"{{"at": "{t}s", "crash": "n{nodes}"}}"#));
        if t + 5 < secs {
            faults.push(format!(r#"{{"at": "{}s", "restart": "n{nodes}"}}"#, t + 5));
        }
        t += 10;
    }
    format!(
        r#"{{"splitbrain": 1, "name": "w3-bully-{nodes}", "seed": 1, "duration": "{secs}s",
  "network": {{"delay": {{"uniform": ["1ms", "3ms"]}}}},
  "nodes": {{"n": {{"role": "bully", "count": {nodes}, "heartbeat_every": "100ms"}}}},
  "faults": [{}],
  "check": ["single_leader", "eventual_leader"], "check_params": {{"settle": "4s"}},
  "limits": {{"max_events": 1000000000}}}}"#,
        faults.join(", ")
    )
}

/// Peak resident set size in MB (`VmHWM`), 0 if unknown.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

// The example times itself with the OS clock, which the simulator crates never read.
#[allow(clippy::disallowed_methods)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nodes = arg(&args, "--nodes", 1_000);
    let secs = arg(&args, "--secs", 600);
    if args.iter().any(|a| a == "--w1-only") {
        println!("{}", w1_events_per_s());
        return;
    }
    let with_w1 = !args.iter().any(|a| a == "--no-w1");
    let w1_before = with_w1.then(w1_in_child);
    let wall = std::time::Instant::now();
    let plan = load_str("w3.json", &scenario(nodes, secs)).expect("W3's scenario is valid");
    let r = execute(&plan, plan.scenario.seed, None).expect("no trace, no I/O");
    let wall_s = wall.elapsed().as_secs_f64();
    assert!(r.bound.is_none(), "W3 stopped at a bound: {:?}", r.bound);
    for (kind, c) in &r.stats.messages {
        println!(
            "{kind:<12} sent={} delivered={} dropped={}",
            c.sent, c.delivered, c.dropped
        );
    }
    for v in &r.report.results {
        println!("{:<16} {:?}", v.name, v.verdict.outcome());
    }
    let events = r.stats.events;
    let events_per_s = events as f64 / wall_s;
    let peak = peak_rss_mb();
    if let Some(before) = w1_before {
        let after = w1_in_child();
        println!(
            "w1_events_per_s={before:.0},{after:.0} w3_to_w1={:.3}",
            events_per_s / ((before + after) / 2.0)
        );
    }
    println!(
        "events={events} wall_s={wall_s:.3} events_per_s={events_per_s:.0} peak_rss_mb={peak:.1}"
    );
}

/// W1's events/s, measured by this example run again with `--w1-only`.
fn w1_in_child() -> f64 {
    let exe = std::env::current_exe().expect("the example's own path");
    let out = std::process::Command::new(exe)
        .arg("--w1-only")
        .output()
        .expect("the example runs itself");
    assert!(out.status.success(), "the W1 run failed: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the W1 run prints its events/s")
}

/// W1's events/s (10 M events, timed from building its actors, as `w1_timer_churn` times it).
#[allow(clippy::disallowed_methods)]
fn w1_events_per_s() -> f64 {
    const EVENTS: u64 = 10_000_000;
    let wall = std::time::Instant::now();
    let mut sim: splitbrain_engine::Sim<w1::Churner> = splitbrain_engine::Sim::new(w1::SEED);
    for i in 0..w1::ACTORS {
        sim.add_node(
            &format!("a{i}"),
            w1::Churner { counter: 0 },
            splitbrain_engine::ClockConfig::default(),
        );
    }
    while sim.events_processed() < EVENTS && sim.step() {}
    let wall_s = wall.elapsed().as_secs_f64();
    assert_eq!(sim.events_processed(), EVENTS, "W1 runs forever");
    EVENTS as f64 / wall_s
}
