//! Partition shapes: each drops exactly the messages whose link is cut at delivery time.

mod common;

use common::*;
use splitbrain_engine::{
    DelayDist, DropReason, Fault, LinkModel, NetRule, NodeId, Sim, SimDuration,
};

const P: DropReason = DropReason::Partition;

/// Three probes; at each of `times_ms` every node sends to every other node (1 ms links).
/// The Ping number is the send time in ms, so fates read as (from, to, sent_ms, fate).
fn mesh(times_ms: &[u64]) -> Sim<Probe> {
    let plan = |me: u32| {
        let mut plan = Vec::new();
        for &t in times_ms {
            for to in (0..3).filter(|&to| to != me) {
                plan.push((ms(t), Tm::Send { to, n: t as u32 }));
            }
        }
        Probe::new(plan)
    };
    sim_of(5, vec![("n0", plan(0)), ("n1", plan(1)), ("n2", plan(2))])
}

fn rule_at(sim: &mut Sim<Probe>, t_ms: u64, rule: NetRule) {
    sim.schedule_fault(at_ms(t_ms), Fault::Network { rule });
}

fn n(i: u32) -> NodeId {
    NodeId(i)
}

/// Fates of the messages sent at `sent_ms`, as `(from, to, delivered?)` or the drop.
fn round(fates: &[(u32, u32, u32, Fate)], sent_ms: u32) -> Vec<(u32, u32, Fate)> {
    fates
        .iter()
        .filter(|f| f.2 == sent_ms)
        .map(|f| (f.0, f.1, f.3.clone()))
        .collect()
}

fn ok(at_ms: u64) -> Fate {
    Fate::Delivered(at_ms * 1_000_000)
}

fn cut(at_ms: u64) -> Fate {
    Fate::Dropped(at_ms * 1_000_000, P)
}

#[test]
fn groups_cut_across_sides_and_heal_restores() {
    let mut sim = mesh(&[5, 15, 25]);
    rule_at(
        &mut sim,
        10,
        NetRule::Partition {
            groups: vec![vec![n(0)], vec![n(1), n(2)]],
        },
    );
    sim.schedule_fault(at_ms(20), Fault::Heal);
    let f = fates(&run_traced(&mut sim, at_ms(100)));
    let all_ok = |t| {
        vec![
            (0, 1, ok(t)),
            (0, 2, ok(t)),
            (1, 0, ok(t)),
            (1, 2, ok(t)),
            (2, 0, ok(t)),
            (2, 1, ok(t)),
        ]
    };
    assert_eq!(round(&f, 5), all_ok(6));
    assert_eq!(
        round(&f, 15),
        vec![
            (0, 1, cut(16)),
            (0, 2, cut(16)),
            (1, 0, cut(16)),
            (1, 2, ok(16)),
            (2, 0, cut(16)),
            (2, 1, ok(16)),
        ]
    );
    assert_eq!(round(&f, 25), all_ok(26));
    assert_eq!(sim.stats().drops.get(&P), Some(&4));
    assert!(sim.network().rules().is_empty());
}

#[test]
fn one_way_block_cuts_one_direction_only() {
    let mut sim = mesh(&[15]);
    rule_at(
        &mut sim,
        10,
        NetRule::Block {
            from: n(0),
            to: n(1),
        },
    );
    let f = fates(&run_traced(&mut sim, at_ms(100)));
    assert_eq!(
        round(&f, 15),
        vec![
            (0, 1, cut(16)),
            (0, 2, ok(16)),
            (1, 0, ok(16)),
            (1, 2, ok(16)),
            (2, 0, ok(16)),
            (2, 1, ok(16)),
        ]
    );
}

#[test]
fn cut_links_make_a_bridge_that_is_not_transitive() {
    let mut sim = mesh(&[15, 35]);
    rule_at(&mut sim, 10, NetRule::Cut { a: n(0), b: n(2) });
    sim.schedule_fault(at_ms(30), Fault::Heal);
    let f = fates(&run_traced(&mut sim, at_ms(100)));
    // 0-1 and 1-2 talk both ways; 0-2 does not, in either direction.
    assert_eq!(
        round(&f, 15),
        vec![
            (0, 1, ok(16)),
            (0, 2, cut(16)),
            (1, 0, ok(16)),
            (1, 2, ok(16)),
            (2, 0, cut(16)),
            (2, 1, ok(16)),
        ]
    );
    assert!(round(&f, 35)
        .iter()
        .all(|x| matches!(x.2, Fate::Delivered(_))));
}

#[test]
fn the_cut_is_judged_at_delivery_time_not_send_time() {
    // 0 -> 1 takes 10 ms. Sent at 5 (arrives 15, cut at 10): dropped. Sent at 18 during the
    // cut, arriving at 28 after the heal at 20: delivered.
    let a = Probe::new(vec![
        (ms(5), Tm::Send { to: 1, n: 5 }),
        (ms(18), Tm::Send { to: 1, n: 18 }),
    ]);
    let mut sim = sim_of(1, vec![("n0", a), ("n1", Probe::default())]);
    sim.network_mut().set_link(
        n(0),
        n(1),
        LinkModel {
            delay: DelayDist::Fixed(ms(10)),
            ..LinkModel::default()
        },
    );
    rule_at(
        &mut sim,
        10,
        NetRule::Partition {
            groups: vec![vec![n(0)], vec![n(1)]],
        },
    );
    sim.schedule_fault(at_ms(20), Fault::Heal);
    let f = fates(&run_traced(&mut sim, at_ms(100)));
    assert_eq!(f, vec![(0, 1, 5, cut(15)), (0, 1, 18, ok(28))]);
}

#[test]
fn a_partition_drop_wins_over_a_paused_receiver() {
    // The receiver is paused; a message on a cut link is dropped at arrival, not queued.
    let a = Probe::new(vec![(ms(12), Tm::Send { to: 1, n: 12 })]);
    let mut sim = sim_of(1, vec![("n0", a), ("n1", Probe::default())]);
    sim.schedule_fault(
        at_ms(10),
        Fault::Pause {
            node: n(1),
            duration: SimDuration::from_millis(20),
        },
    );
    rule_at(&mut sim, 11, NetRule::Cut { a: n(0), b: n(1) });
    sim.schedule_fault(at_ms(15), Fault::Heal);
    let f = fates(&run_traced(&mut sim, at_ms(100)));
    assert_eq!(f, vec![(0, 1, 12, cut(13))]);
}

/// Issue 17 item 4: a `HealPartition` (the nemesis' heal) removes only the partition it names.
/// An explicit partition `{n0} | {n1,n2}` holds from 10 ms to 40 ms; a second partition
/// `{n2} | {n0,n1}` from 15 ms is healed by name at 20 ms, and a heal naming a partition not in
/// force (at 25 ms) changes nothing. The first partition still cuts n0 at 25 and 35 ms, until
/// its own heal at 40 ms.
#[test]
fn heal_partition_removes_only_its_own_partition() {
    let mut sim = mesh(&[12, 17, 22, 27, 35, 45]);
    let first = vec![vec![n(0)], vec![n(1), n(2)]];
    let second = vec![vec![n(2)], vec![n(0), n(1)]];
    rule_at(
        &mut sim,
        10,
        NetRule::Partition {
            groups: first.clone(),
        },
    );
    rule_at(
        &mut sim,
        15,
        NetRule::Partition {
            groups: second.clone(),
        },
    );
    sim.schedule_fault(at_ms(20), Fault::HealPartition { groups: second });
    sim.schedule_fault(
        at_ms(25),
        Fault::HealPartition {
            groups: vec![vec![n(1)], vec![n(0), n(2)]],
        },
    );
    sim.schedule_fault(at_ms(40), Fault::HealPartition { groups: first });
    let f = fates(&run_traced(&mut sim, at_ms(100)));
    let first_only = |t: u64| {
        vec![
            (0, 1, cut(t + 1)),
            (0, 2, cut(t + 1)),
            (1, 0, cut(t + 1)),
            (1, 2, ok(t + 1)),
            (2, 0, cut(t + 1)),
            (2, 1, ok(t + 1)),
        ]
    };
    assert_eq!(round(&f, 12), first_only(12));
    // Both partitions: only n0 <-> n1 would pass the second, and the first cuts it.
    assert_eq!(
        round(&f, 17),
        vec![
            (0, 1, cut(18)),
            (0, 2, cut(18)),
            (1, 0, cut(18)),
            (1, 2, cut(18)),
            (2, 0, cut(18)),
            (2, 1, cut(18)),
        ]
    );
    for t in [22u64, 27, 35] {
        assert_eq!(round(&f, t as u32), first_only(t), "sent at {t} ms");
    }
    assert!(round(&f, 45).iter().all(|x| x.2 == ok(46)));
}
