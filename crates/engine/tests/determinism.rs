//! Determinism: same seed, same bytes; a different seed, a different trace; the self-check
//! names the first diverging event of a nondeterministic actor.

mod common;

use common::*;
use splitbrain_engine::{
    check_determinism, Actor, ClockConfig, Context, DelayDist, Divergence, LinkModel, Network,
    NodeId, Recorder, Sim, SimDuration, SimTime,
};
use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A writer into a buffer the test keeps a handle to.
#[derive(Clone, Default)]
struct SharedBuf(Rc<RefCell<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Four gossipers on a lossy, duplicating, reordering network with random delays.
fn random_run(seed: u64) -> Sim<Probe> {
    let gossiper = || Probe::new(vec![(ms(1), Tm::Gossip { rounds: 50 })]);
    let mut sim = sim_of(
        seed,
        vec![
            ("a", gossiper()),
            ("b", gossiper()),
            ("c", gossiper()),
            ("d", gossiper()),
        ],
    );
    *sim.network_mut() = Network::new(LinkModel {
        delay: DelayDist::Uniform {
            lo: SimDuration::from_micros(100),
            hi: ms(20),
        },
        loss_ppm: 50_000,
        duplicate_ppm: 50_000,
        fifo: false,
        ..LinkModel::default()
    });
    sim
}

/// Runs `sim` to the end streaming JSON Lines into memory: `(hash, events, bytes)`.
fn record(mut sim: Sim<Probe>) -> (u64, u64, Vec<u8>) {
    let buf = SharedBuf::default();
    sim.set_recorder(Recorder::hash_only().with_writer(Box::new(buf.clone())));
    sim.run_until(SimTime::MAX).unwrap();
    let s = sim.take_recorder().unwrap().finish().unwrap();
    let bytes = buf.0.borrow().clone();
    (s.hash, s.events, bytes)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn same_seed_gives_the_same_hash_and_the_same_bytes() {
    let (h1, n1, b1) = record(random_run(42));
    let (h2, n2, b2) = record(random_run(42));
    assert!(n1 > 300, "a busy run: {n1} events");
    assert_eq!(b1, b2);
    assert_eq!((h1, n1), (h2, n2));
    // The hash is FNV-1a over exactly the bytes streamed, one line per event.
    assert_eq!(h1, fnv1a(&b1));
    assert_eq!(b1.iter().filter(|&&b| b == b'\n').count() as u64, n1);
    // The run exercised the random paths.
    let text = String::from_utf8(b1).unwrap();
    assert!(text.contains(r#""reason":"loss""#));
    assert_eq!(
        text.lines().next().unwrap(),
        r#"{"ev":"start","t":0,"node":0}"#
    );
}

#[test]
fn a_different_seed_gives_a_different_trace() {
    let (h1, _, b1) = record(random_run(42));
    let (h2, _, b2) = record(random_run(43));
    assert_ne!(h1, h2);
    assert_ne!(b1, b2);
}

#[test]
fn the_self_check_returns_the_hash_of_a_deterministic_run() {
    let (h, _, _) = record(random_run(7));
    assert_eq!(check_determinism(|| random_run(7), SimTime::MAX), Ok(h));
}

/// Process-global state that survives from one run to the next: the bug the self-check exists
/// to catch. Only `Leaky` touches it.
static LEAK: AtomicU64 = AtomicU64::new(0);

/// Ticks every ms, 5 times; at tick 3 it reports a value read from `LEAK`.
struct Leaky;

impl Actor for Leaky {
    type Msg = Msg;
    type Timer = u32;
    type Obs = Obs;
    type Durable = ();

    fn on_start(&mut self, ctx: &mut Context<'_, Self>) {
        ctx.set_timer(ms(1), 1);
    }
    fn on_message(&mut self, _: &mut Context<'_, Self>, _: NodeId, _: Msg) {}
    fn on_timer(&mut self, ctx: &mut Context<'_, Self>, k: u32) {
        let n = if k == 3 {
            LEAK.fetch_add(1, Ordering::Relaxed) as u32
        } else {
            k
        };
        ctx.observe(Obs::Fired {
            n,
            mono: ctx.mono_now().0,
        });
        if k < 5 {
            ctx.set_timer(ms(1), k + 1);
        }
    }
    fn on_restart(&mut self, _: &mut Context<'_, Self>, _: &()) {}
}

#[test]
fn the_self_check_names_the_first_diverging_event() {
    let base = LEAK.load(Ordering::Relaxed);
    let make = || {
        let mut sim = Sim::new(1);
        sim.add_node("leaky", Leaky, ClockConfig::default());
        sim
    };
    let err = check_determinism(make, SimTime::MAX).unwrap_err();
    // 0: start; 1-2: timer 1 and its observation; 3-4: timer 2; 5: timer 3; 6: the leak.
    let line = |v: u64| {
        format!(
            r#"{{"ev":"observe","t":3000000,"node":0,"obs":{{"Fired":{{"n":{v},"mono":3000000}}}}}}"#
        )
    };
    assert_eq!(
        err,
        Divergence::Event {
            index: 6,
            first: Some(line(base)),
            second: Some(line(base + 1)),
        }
    );
    let shown = err.to_string();
    assert!(shown.starts_with("runs diverge at event 6:"), "{shown}");
    assert!(shown.contains(&line(base)) && shown.contains(&line(base + 1)));
}
