//! A tiny deterministic harness (a time-ordered queue of messages and timers, fixed or seeded
//! random delays, crashes, restarts, partitions) driving replicas and clients together, and
//! the tests of the Raft lock service built on it.

use super::client::{ClientObs, RaftClientConfig, RaftClientEnv, RaftClientTimer, RaftLockClient};
use super::config::{CommitRule, RaftConfig, RaftConfigError, ReadOnlyOption};
use super::env::{RaftDurable, RaftEnv, RaftObs};
use super::msg::{RaftMsg, RaftTimer};
use super::replica::{RaftReplica, Role};
use splitbrain_engine::{LocalTime, NodeId, RngStream, SimDuration};
use std::collections::{BTreeMap, BTreeSet};

const MS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug)]
enum AnyTimer {
    Raft(RaftTimer),
    Client(RaftClientTimer),
}

#[derive(Debug)]
enum Ev {
    Msg {
        from: NodeId,
        to: NodeId,
        msg: RaftMsg,
    },
    Timer {
        node: NodeId,
        id: u64,
        epoch: u64,
        timer: AnyTimer,
    },
}

/// What a node said, at true time `at`.
#[derive(Clone, Debug)]
enum Said {
    Raft(RaftObs),
    Client(ClientObs),
    /// The node crashed (a crashed client holds nothing).
    Crashed,
}

/// The world: time, queue, network, storage, observations. True time = every local clock.
struct Net {
    now: u64,
    seq: u64,
    queue: BTreeMap<(u64, u64), Ev>,
    cancelled: BTreeSet<u64>,
    next_timer: u64,
    delay_min: u64,
    delay_max: u64,
    drop_ppm: u32,
    net_rng: RngStream,
    node_rng: Vec<RngStream>,
    up: Vec<bool>,
    epoch: Vec<u64>,
    group: Vec<u8>,
    /// Also drop a message at delivery if its ends are in different groups by then (a
    /// partition cuts messages in flight).
    cut_in_flight: bool,
    durable: Vec<RaftDurable>,
    sent: BTreeMap<&'static str, u64>,
    /// AppendEntries refused (answered with `success: false`), by the refusing node.
    refused: Vec<u64>,
    said: Vec<(u64, NodeId, Said)>,
}

impl Net {
    fn send(&mut self, from: NodeId, to: NodeId, msg: RaftMsg) {
        *self.sent.entry(msg.kind()).or_default() += 1;
        if matches!(msg, RaftMsg::AppendEntriesResponse { success: false, .. }) {
            self.refused[from.index()] += 1;
        }
        if self.group[from.index()] != self.group[to.index()] {
            return;
        }
        if self.drop_ppm > 0 && self.net_rng.chance_ppm(self.drop_ppm) {
            return;
        }
        let d = self
            .net_rng
            .uniform_inclusive(self.delay_min, self.delay_max);
        self.push(self.now + d, Ev::Msg { from, to, msg });
    }
    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.queue.insert((at, self.seq), ev);
    }
    fn set_timer(&mut self, node: NodeId, after: SimDuration, timer: AnyTimer) -> u64 {
        self.next_timer += 1;
        let id = self.next_timer;
        let epoch = self.epoch[node.index()];
        self.push(
            self.now + after.0,
            Ev::Timer {
                node,
                id,
                epoch,
                timer,
            },
        );
        id
    }
}

struct Env<'a> {
    net: &'a mut Net,
    node: NodeId,
}

impl RaftEnv for Env<'_> {
    type TimerHandle = u64;
    fn send(&mut self, to: NodeId, msg: RaftMsg) {
        self.net.send(self.node, to, msg);
    }
    fn set_timer(&mut self, after: SimDuration, timer: RaftTimer) -> u64 {
        self.net.set_timer(self.node, after, AnyTimer::Raft(timer))
    }
    fn cancel_timer(&mut self, handle: u64) {
        self.net.cancelled.insert(handle);
    }
    fn mono_now(&self) -> LocalTime {
        LocalTime(self.net.now)
    }
    fn rng_u64(&mut self) -> u64 {
        self.net.node_rng[self.node.index()].next_u64()
    }
    fn durable_mut(&mut self) -> &mut RaftDurable {
        &mut self.net.durable[self.node.index()]
    }
    fn observe(&mut self, obs: RaftObs) {
        self.net
            .said
            .push((self.net.now, self.node, Said::Raft(obs)));
    }
}

impl RaftClientEnv for Env<'_> {
    type TimerHandle = u64;
    fn send(&mut self, to: NodeId, msg: RaftMsg) {
        self.net.send(self.node, to, msg);
    }
    fn set_timer(&mut self, after: SimDuration, timer: RaftClientTimer) -> u64 {
        self.net
            .set_timer(self.node, after, AnyTimer::Client(timer))
    }
    fn cancel_timer(&mut self, handle: u64) {
        self.net.cancelled.insert(handle);
    }
    fn mono_now(&self) -> LocalTime {
        LocalTime(self.net.now)
    }
    fn observe(&mut self, obs: ClientObs) {
        self.net
            .said
            .push((self.net.now, self.node, Said::Client(obs)));
    }
}

enum Node {
    Replica(Box<RaftReplica<u64>>),
    Client(Box<RaftLockClient<u64>>),
}

struct Cluster {
    net: Net,
    nodes: Vec<Node>,
    n_replicas: usize,
}

impl Cluster {
    /// `replicas` replicas (ids 0..) and `clients` lock clients (ids after them) on lock "L".
    fn new(seed: u64, replicas: usize, clients: usize, delay_ms: (u64, u64)) -> Cluster {
        Cluster::new_with(seed, replicas, clients, delay_ms, |_| {})
    }

    /// As [`Cluster::new`], with `tune` applied to the replicas' config.
    fn new_with(
        seed: u64,
        replicas: usize,
        clients: usize,
        delay_ms: (u64, u64),
        tune: impl FnOnce(&mut RaftConfig),
    ) -> Cluster {
        let total = replicas + clients;
        let ids: Vec<NodeId> = (0..replicas as u32).map(NodeId).collect();
        let mut cfg = RaftConfig::with_replicas(ids.clone());
        cfg.lease_check_interval = SimDuration::from_millis(50);
        tune(&mut cfg);
        let mut nodes = Vec::new();
        for &id in &ids {
            nodes.push(Node::Replica(Box::new(RaftReplica::new(id, cfg.clone()))));
        }
        for c in 0..clients {
            nodes.push(Node::Client(Box::new(RaftLockClient::new(
                RaftClientConfig {
                    replicas: ids.clone(),
                    lock: "L".into(),
                    ttl: SimDuration::from_millis(1000),
                    safety_margin: SimDuration::from_millis(10),
                    request_timeout: SimDuration::from_millis(100),
                    first_req: 1000 * (c as u64 + 1),
                },
            ))));
        }
        let net = Net {
            now: 0,
            seq: 0,
            queue: BTreeMap::new(),
            cancelled: BTreeSet::new(),
            next_timer: 0,
            delay_min: delay_ms.0 * MS,
            delay_max: delay_ms.1 * MS,
            drop_ppm: 0,
            net_rng: RngStream::new(seed, "net"),
            node_rng: (0..total)
                .map(|i| RngStream::new(seed, &format!("actor/{i}")))
                .collect(),
            up: vec![true; total],
            epoch: vec![0; total],
            group: vec![0; total],
            cut_in_flight: false,
            durable: vec![RaftDurable::default(); total],
            sent: BTreeMap::new(),
            refused: vec![0; total],
            said: Vec::new(),
        };
        let mut c = Cluster {
            net,
            nodes,
            n_replicas: replicas,
        };
        for i in 0..replicas {
            let mut env = Env {
                net: &mut c.net,
                node: NodeId(i as u32),
            };
            if let Node::Replica(r) = &mut c.nodes[i] {
                r.on_start(&mut env);
            }
        }
        c
    }

    fn replica(&self, i: usize) -> &RaftReplica<u64> {
        match &self.nodes[i] {
            Node::Replica(r) => r,
            Node::Client(_) => panic!("node {i} is a client"),
        }
    }

    fn client(&mut self, i: usize) -> (&mut RaftLockClient<u64>, Env<'_>) {
        let node = NodeId(i as u32);
        match &mut self.nodes[i] {
            Node::Client(c) => (
                c,
                Env {
                    net: &mut self.net,
                    node,
                },
            ),
            Node::Replica(_) => panic!("node {i} is a replica"),
        }
    }

    fn acquire(&mut self, i: usize) {
        let (c, mut env) = self.client(i);
        c.acquire(&mut env);
    }

    fn release(&mut self, i: usize) {
        let (c, mut env) = self.client(i);
        c.release(&mut env);
    }

    fn step(&mut self) -> bool {
        let Some(((at, _), ev)) = self.net.queue.pop_first() else {
            return false;
        };
        self.net.now = at;
        let (node, ev) = match ev {
            Ev::Msg { from, to, .. }
                if self.net.cut_in_flight
                    && self.net.group[from.index()] != self.net.group[to.index()] =>
            {
                return true;
            }
            Ev::Msg { to, .. } => (to, ev),
            Ev::Timer {
                node, id, epoch, ..
            } => {
                if self.net.cancelled.remove(&id) || epoch != self.net.epoch[node.index()] {
                    return true;
                }
                (node, ev)
            }
        };
        if !self.net.up[node.index()] {
            return true;
        }
        let mut env = Env {
            net: &mut self.net,
            node,
        };
        match (&mut self.nodes[node.index()], ev) {
            (Node::Replica(r), Ev::Msg { from, msg, .. }) => r.on_message(&mut env, from, msg),
            (Node::Client(c), Ev::Msg { from, msg, .. }) => c.on_message(&mut env, from, msg),
            (
                Node::Replica(r),
                Ev::Timer {
                    timer: AnyTimer::Raft(t),
                    ..
                },
            ) => r.on_timer(&mut env, t),
            (
                Node::Client(c),
                Ev::Timer {
                    timer: AnyTimer::Client(t),
                    ..
                },
            ) => c.on_timer(&mut env, t),
            _ => unreachable!("timer kinds match node kinds"),
        }
        // Stable storage is written in place, by what changed: after every handler it holds
        // exactly the replica's term, vote and log (what a crash now would keep).
        if let Node::Replica(r) = &self.nodes[node.index()] {
            assert_eq!(
                self.net.durable[node.index()],
                r.durable(),
                "replica {node}'s stable storage differs from its state"
            );
        }
        true
    }

    fn run_until(&mut self, t: u64) {
        while self
            .net
            .queue
            .first_key_value()
            .is_some_and(|((at, _), _)| *at <= t)
        {
            self.step();
        }
        self.net.now = self.net.now.max(t);
    }

    fn crash(&mut self, i: usize) {
        self.net.up[i] = false;
        self.net.epoch[i] += 1;
        self.net
            .said
            .push((self.net.now, NodeId(i as u32), Said::Crashed));
    }

    fn restart(&mut self, i: usize) {
        self.net.up[i] = true;
        let durable = self.net.durable[i].clone();
        let mut env = Env {
            net: &mut self.net,
            node: NodeId(i as u32),
        };
        if let Node::Replica(r) = &mut self.nodes[i] {
            r.on_restart(&mut env, &durable);
        }
    }

    /// The live leader with the highest term, if any.
    fn leader(&self) -> Option<usize> {
        (0..self.n_replicas)
            .filter(|&i| self.net.up[i] && self.replica(i).role() == Role::Leader)
            .max_by_key(|&i| self.replica(i).term())
    }

    fn run_until_leader(&mut self, limit: u64) -> usize {
        while self.net.now <= limit {
            if let Some(l) = self.leader() {
                return l;
            }
            assert!(self.step(), "queue ran dry");
        }
        panic!("no leader by {limit} ns");
    }

    fn raft_said(&self) -> impl Iterator<Item = (u64, NodeId, &RaftObs)> {
        self.net.said.iter().filter_map(|(t, n, s)| match s {
            Said::Raft(o) => Some((*t, *n, o)),
            _ => None,
        })
    }

    fn client_said(&self) -> impl Iterator<Item = (u64, NodeId, &ClientObs)> {
        self.net.said.iter().filter_map(|(t, n, s)| match s {
            Said::Client(o) => Some((*t, *n, o)),
            _ => None,
        })
    }

    /// Fencing tokens handed out to clients, in order.
    fn acquired(&self) -> Vec<(u64, NodeId, u64)> {
        self.client_said()
            .filter_map(|(t, n, o)| match o {
                ClientObs::Acquired { revision, .. } => Some((t, n, *revision)),
                _ => None,
            })
            .collect()
    }

    fn counts_since(&self, before: &BTreeMap<&'static str, u64>) -> BTreeMap<&'static str, u64> {
        self.net
            .sent
            .iter()
            .map(|(k, v)| (*k, v - before.get(k).copied().unwrap_or(0)))
            .filter(|(_, v)| *v > 0)
            .collect()
    }

    /// Election Safety, Log Matching and State Machine Safety, over everything said so far and
    /// the logs as they are now. Returns a description of the first violation.
    fn check_safety(&self) -> Result<(), String> {
        let mut leaders: BTreeMap<u64, NodeId> = BTreeMap::new();
        let mut applied: BTreeMap<u64, u64> = BTreeMap::new();
        let mut fresh_revisions: Vec<u64> = Vec::new();
        for (t, n, o) in self.raft_said() {
            match o {
                RaftObs::BecameLeader { term } => {
                    if let Some(other) = leaders.insert(*term, n) {
                        if other != n {
                            return Err(format!("two leaders in term {term}: {other}, {n} at {t}"));
                        }
                    }
                }
                RaftObs::Applied { index, digest, .. } => {
                    if let Some(d) = applied.insert(*index, *digest) {
                        if d != *digest {
                            return Err(format!(
                                "index {index} applied as two commands ({n} at {t})"
                            ));
                        }
                    }
                }
                RaftObs::Granted {
                    revision,
                    fresh: true,
                    ..
                } => fresh_revisions.push(*revision),
                _ => {}
            }
        }
        if fresh_revisions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "fencing tokens not increasing: {fresh_revisions:?}"
            ));
        }
        for a in 0..self.n_replicas {
            for b in a + 1..self.n_replicas {
                let (la, lb) = (self.replica(a).log(), self.replica(b).log());
                let common = la.last_index().min(lb.last_index());
                // Log Matching: same index and term => identical prefixes.
                if let Some(i) = (1..=common).rev().find(|&i| la.term_at(i) == lb.term_at(i)) {
                    if la.entries()[..i as usize] != lb.entries()[..i as usize] {
                        return Err(format!(
                            "logs of {a} and {b} match at {i} but differ before"
                        ));
                    }
                }
            }
        }
        // Mutual exclusion, as the clients believed it (every clock here is true time).
        let mut spans: Vec<(u64, u64, NodeId)> = Vec::new();
        let mut open: BTreeMap<NodeId, u64> = BTreeMap::new();
        for (t, n, s) in &self.net.said {
            let (t, n) = (*t, *n);
            match s {
                Said::Client(ClientObs::Acquired { .. }) => {
                    open.insert(n, t);
                }
                Said::Client(ClientObs::Lost { .. } | ClientObs::Released { .. })
                | Said::Crashed => {
                    if let Some(s) = open.remove(&n) {
                        spans.push((s, t, n));
                    }
                }
                _ => {}
            }
        }
        spans.extend(open.into_iter().map(|(n, s)| (s, u64::MAX, n)));
        spans.sort();
        for w in spans.windows(2) {
            if w[0].1 > w[1].0 {
                return Err(format!("two holders: {:?} and {:?}", w[0], w[1]));
            }
        }
        Ok(())
    }
}

fn kinds(pairs: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
    pairs.iter().copied().collect()
}

#[test]
fn one_election_and_one_acquisition_send_exact_message_counts() {
    for (n, seed) in [(3usize, 1u64), (5, 1)] {
        let mut c = Cluster::new(seed, n, 1, (1, 1));
        let l = c.run_until_leader(10_000 * MS);
        let elected = c.net.now;
        c.run_until(elected + 10 * MS);
        let f = (n - 1) as u64;
        // One candidate asks every other replica once; its no-op goes out once to each.
        assert_eq!(
            c.counts_since(&BTreeMap::new()),
            kinds(&[
                ("APPEND_ACK", f),
                ("APPEND_ENTRIES", f),
                ("REQUEST_VOTE", f),
                ("VOTE", f)
            ]),
            "n = {n}"
        );
        assert_eq!(c.replica(l).commit_index(), 1);
        assert_eq!(c.replica(l).term(), 1);
        // One acquisition: request, one AppendEntries round, the reply. Client 0 asks replica
        // 0 first, so a leader elsewhere adds one redirect and one resend.
        let before = c.net.sent.clone();
        c.acquire(n);
        c.run_until(elected + 20 * MS);
        let redirect = u64::from(l != 0);
        let mut want = vec![
            ("APPEND_ACK", f),
            ("APPEND_ENTRIES", f),
            ("RAFT_ACQUIRE", 1 + redirect),
            ("RAFT_GRANTED", 1),
        ];
        if redirect == 1 {
            want.push(("RAFT_REDIRECT", 1));
        }
        assert_eq!(c.counts_since(&before), kinds(&want), "n = {n}, leader {l}");
        // Revision 1 is etcd's initial revision; the first grant creates revision 2.
        assert_eq!(c.acquired(), vec![(c.acquired()[0].0, NodeId(n as u32), 2)]);
    }
}

#[test]
fn leader_crash_elects_a_new_leader_and_tokens_keep_increasing() {
    for n in [3usize, 5] {
        let mut c = Cluster::new(7, n, 2, (1, 3));
        let (a, b) = (n, n + 1);
        let l1 = c.run_until_leader(10_000 * MS);
        c.acquire(a);
        c.run_until(c.net.now + 300 * MS);
        assert_eq!(c.acquired().len(), 1);
        let r1 = c.acquired()[0].2;
        // A follower crash changes nothing: the holder keeps its lease alive.
        let follower = (0..n).find(|&i| i != l1).unwrap();
        c.crash(follower);
        c.run_until(c.net.now + 2000 * MS);
        assert!(c
            .client_said()
            .all(|(_, _, o)| !matches!(o, ClientObs::Lost { .. })));
        c.restart(follower);
        // The holder stops (its keepalives cease) and the leader crashes.
        c.crash(a);
        let holder_down = c.net.now;
        c.crash(l1);
        let l2 = c.run_until_leader(c.net.now + 10_000 * MS);
        assert_ne!(l2, l1);
        assert!(c.replica(l2).term() > c.replica(l1).term());
        // B asks until it gets the lock.
        let mut tries = 0;
        while c.acquired().len() < 2 {
            tries += 1;
            assert!(tries < 100, "B never got the lock");
            c.acquire(b);
            c.run_until(c.net.now + 200 * MS);
        }
        let (t2, who, r2) = c.acquired()[1];
        assert_eq!(who, NodeId(b as u32));
        assert!(r2 > r1, "token {r2} after {r1}");
        // etcd's Promote: the takeover waited at least extend + TTL after the new leader took
        // over, so certainly more than one TTL after the holder went quiet.
        assert!(
            t2 >= holder_down + 1000 * MS,
            "takeover at {t2}, holder down at {holder_down}"
        );
        c.check_safety().unwrap();
    }
}

#[test]
fn a_leader_isolated_in_a_minority_cannot_grant_or_confirm() {
    let n = 5;
    let mut c = Cluster::new(3, n, 2, (1, 3));
    let (a, b) = (n, n + 1);
    let l1 = c.run_until_leader(10_000 * MS);
    // A holds the lock through l1.
    c.acquire(a);
    c.run_until(c.net.now + 300 * MS);
    let r1 = c.acquired()[0].2;
    // Cut l1 and A from everyone else.
    for i in 0..c.net.group.len() {
        c.net.group[i] = u8::from(i == l1 || i == a);
    }
    let cut = c.net.now;
    // A second client on l1's side asks too (it has only l1 to talk to).
    c.run_until(cut + 5000 * MS);
    let from_old_leader: Vec<&RaftObs> = c
        .raft_said()
        .filter(|(t, who, o)| {
            *t > cut
                && who.index() == l1
                && matches!(o, RaftObs::Granted { .. } | RaftObs::KeptAlive { .. })
        })
        .map(|(_, _, o)| o)
        .collect();
    assert!(from_old_leader.is_empty(), "{from_old_leader:?}");
    // A stopped believing at its deadline.
    assert!(c.client_said().any(|(_, who, o)| who.index() == a
        && matches!(
            o,
            ClientObs::Lost {
                reason: "deadline",
                ..
            }
        )));
    // The majority elected someone else, and B gets the lock there with a larger token.
    let l2 = c.leader().unwrap();
    assert_ne!(l2, l1);
    let mut tries = 0;
    while c.acquired().len() < 2 {
        tries += 1;
        assert!(tries < 100, "B never got the lock");
        c.acquire(b);
        c.run_until(c.net.now + 200 * MS);
    }
    assert!(c.acquired()[1].2 > r1);
    // l1 still believes it leads (it heard of no higher term), yet never granted.
    assert_eq!(c.replica(l1).role(), Role::Leader);
    c.check_safety().unwrap();
    // Heal: l1 steps down, its uncommitted tail is overwritten, logs converge.
    for g in c.net.group.iter_mut() {
        *g = 0;
    }
    c.run_until(c.net.now + 2000 * MS);
    assert_ne!(c.replica(l1).role(), Role::Leader);
    let last = c.replica(l2).log().last_index();
    for i in 0..n {
        assert_eq!(
            c.replica(i).log().entries(),
            c.replica(l2).log().entries(),
            "replica {i}, last {last}"
        );
    }
    c.check_safety().unwrap();
}

#[test]
fn a_whole_cluster_restart_keeps_every_grant_and_revision() {
    let n = 3;
    let mut c = Cluster::new(11, n, 1, (1, 3));
    c.run_until_leader(10_000 * MS);
    // Grants on three locks through the Raft client protocol, by hand (one client, three
    // keys): Acquire messages straight to the leader.
    let client = NodeId(n as u32);
    for (k, lock) in ["a", "b", "c"].iter().enumerate() {
        let l = c.leader().unwrap();
        c.net.send(
            client,
            NodeId(l as u32),
            RaftMsg::Acquire {
                req: k as u64,
                lock: (*lock).into(),
                ttl: SimDuration::from_secs(3600),
            },
        );
        c.run_until(c.net.now + 50 * MS);
    }
    let l = c.leader().unwrap();
    let before = c.replica(l).store().clone();
    assert_eq!(before.revision(), 4);
    let revisions: Vec<u64> = before.keys().values().map(|k| k.create_revision).collect();
    assert_eq!(revisions, vec![2, 3, 4]);
    for i in 0..n {
        c.crash(i);
    }
    c.run_until(c.net.now + 1000 * MS);
    for i in 0..n {
        c.restart(i);
    }
    let l2 = c.run_until_leader(c.net.now + 10_000 * MS);
    c.run_until(c.net.now + 500 * MS);
    for i in 0..n {
        assert_eq!(c.replica(i).store(), &before, "replica {i} (leader {l2})");
    }
    // The next grant continues the revision sequence.
    c.net.send(
        client,
        NodeId(l2 as u32),
        RaftMsg::Acquire {
            req: 99,
            lock: "d".into(),
            ttl: SimDuration::from_secs(3600),
        },
    );
    c.run_until(c.net.now + 50 * MS);
    assert_eq!(c.replica(l2).store().key("d").unwrap().create_revision, 5);
    c.check_safety().unwrap();
}

#[test]
fn release_frees_the_lock_for_the_next_client_at_once() {
    let mut c = Cluster::new(5, 3, 2, (1, 2));
    c.run_until_leader(10_000 * MS);
    c.acquire(3);
    c.run_until(c.net.now + 300 * MS);
    c.release(3);
    c.run_until(c.net.now + 300 * MS);
    c.acquire(4);
    c.run_until(c.net.now + 300 * MS);
    let got: Vec<(NodeId, u64)> = c.acquired().iter().map(|(_, n, r)| (*n, *r)).collect();
    // Grant at 2, release deletes the key at 3, the next grant creates it at 4.
    assert_eq!(got, vec![(NodeId(3), 2), (NodeId(4), 4)]);
    c.check_safety().unwrap();
}

/// Random delays, loss, crashes, restarts and partitions; clients acquire, hold, release.
fn random_run(seed: u64, n: usize) -> Cluster {
    let clients = 3;
    let mut c = Cluster::new(seed, n, clients, (1, 30));
    c.net.drop_ppm = 20_000;
    let mut chaos = RngStream::new(seed, "chaos");
    let end = 20_000 * MS;
    while c.net.now < end {
        let next = c.net.now + chaos.uniform_inclusive(50, 400) * MS;
        c.run_until(next);
        match chaos.uniform_inclusive(0, 9) {
            0 | 1 => {
                let i = chaos.uniform_inclusive(0, n as u64 - 1) as usize;
                if c.net.up[i] {
                    c.crash(i);
                } else {
                    c.restart(i);
                }
            }
            2 | 3 => {
                for g in c.net.group.iter_mut() {
                    *g = chaos.uniform_inclusive(0, 2) as u8;
                }
            }
            4 => c.net.group.iter_mut().for_each(|g| *g = 0),
            _ => {
                let k = n + chaos.uniform_inclusive(0, clients as u64 - 1) as usize;
                let now = LocalTime(c.net.now);
                let (cl, _) = c.client(k);
                if cl.token(now).is_some() {
                    c.release(k);
                } else {
                    c.acquire(k);
                }
            }
        }
        if let Err(e) = c.check_safety() {
            panic!("seed {seed}, n {n}: {e}");
        }
    }
    // Heal everything and let the group settle.
    for i in 0..n {
        if !c.net.up[i] {
            c.restart(i);
        }
    }
    c.net.group.iter_mut().for_each(|g| *g = 0);
    c.run_until(end + 5000 * MS);
    if let Err(e) = c.check_safety() {
        panic!("seed {seed}, n {n}: {e}");
    }
    c
}

#[test]
fn random_faults_keep_election_log_and_state_machine_safety() {
    let mut grants = 0;
    for seed in 0..60 {
        for n in [3, 5] {
            let c = random_run(seed, n);
            grants += c.acquired().len();
            // After healing, every replica's log equals the leader's committed prefix.
            let l = c.leader().expect("a leader after healing");
            let commit = c.replica(l).commit_index();
            for i in 0..n {
                assert!(c.replica(i).commit_index() <= c.replica(l).log().last_index());
                assert_eq!(
                    c.replica(i).log().entries()
                        [..commit.min(c.replica(i).log().last_index()) as usize],
                    c.replica(l).log().entries()
                        [..commit.min(c.replica(i).log().last_index()) as usize],
                    "seed {seed}"
                );
            }
        }
    }
    // The faults must not stop all progress: plenty of grants happened.
    assert!(grants > 500, "only {grants} grants");
}

#[test]
fn a_restarted_replica_keeps_its_vote() {
    // Election Safety relies on votedFor surviving a crash (Figure 2).
    let mut c = Cluster::new(2, 3, 0, (1, 1));
    let l = c.run_until_leader(10_000 * MS);
    let voter = (0..3).find(|&i| i != l && c.replica(i).voted_for() == Some(NodeId(l as u32)));
    let voter = voter.expect("someone voted for the leader");
    let term = c.replica(voter).term();
    c.crash(voter);
    c.restart(voter);
    assert_eq!(c.replica(voter).term(), term);
    assert_eq!(c.replica(voter).voted_for(), Some(NodeId(l as u32)));
}

#[test]
fn a_replica_missing_committed_entries_cannot_win_an_election() {
    // §5.4.1: F2 was cut off while entries committed on L and F1; L then crashes. F2 has the
    // higher term (it kept timing out alone) but a shorter log, so F1 must refuse it and win.
    for seed in 0..20 {
        let mut c = Cluster::new(seed, 3, 1, (1, 3));
        let l = c.run_until_leader(10_000 * MS);
        c.run_until(c.net.now + 100 * MS);
        let f2 = (l + 1) % 3;
        let f1 = (l + 2) % 3;
        c.net.group[f2] = 1;
        for k in 0..3 {
            c.net.send(
                NodeId(3),
                NodeId(l as u32),
                RaftMsg::Acquire {
                    req: k,
                    lock: format!("k{k}"),
                    ttl: SimDuration::from_secs(3600),
                },
            );
        }
        c.run_until(c.net.now + 1000 * MS);
        let committed = c.replica(l).commit_index();
        assert_eq!(committed, 4, "seed {seed}");
        c.crash(l);
        c.net.group[f2] = 0;
        assert!(c.replica(f2).term() > c.replica(f1).term(), "seed {seed}");
        let winner = c.run_until_leader(c.net.now + 10_000 * MS);
        assert_eq!(winner, f1, "seed {seed}: the stale replica won");
        c.run_until(c.net.now + 500 * MS);
        assert_eq!(c.replica(f2).store().revision(), 4, "seed {seed}");
        c.check_safety().unwrap();
    }
}

/// Figure 8 of the paper (§5.4.2): an entry of an earlier term stored on a majority can still
/// be overwritten by a later leader, so a leader must not count replicas to commit it; it
/// commits it only with an entry of its own term. The script below builds exactly that
/// situation (one entry per AppendEntries so the old entry reaches a majority alone, and
/// partitions that cut messages in flight): without the rule, leader L2 commits and applies
/// the old entry X at index 2, and the later leader W then overwrites index 2 with its own
/// entry on a majority and applies that: two different commands applied at one index.
#[test]
fn figure_8_an_old_term_entry_on_a_majority_is_not_committed_by_counting() {
    for seed in 0..20 {
        if let Err(e) = figure_8(seed, CommitRule::CurrentTerm) {
            panic!("seed {seed}: {e}");
        }
    }
}

/// The planted bug: committing by counting replicas, the same sequence makes two replicas
/// apply different entries at index 2 (X on L2, W's no-op on W), on every seed.
#[test]
fn figure_8_committing_by_counting_replicas_breaks_state_machine_safety() {
    for seed in 0..20 {
        let e = figure_8(seed, CommitRule::CountReplicas)
            .expect_err("counting replicas commits X, which W overwrites");
        assert!(e.contains("index 2"), "seed {seed}: {e}");
    }
}

/// The paper's Figure 8 sequence under `rule` (§5.4.2); the safety check's verdict.
fn figure_8(seed: u64, rule: CommitRule) -> Result<(), String> {
    {
        let mut c = Cluster::new_with(seed, 5, 0, (1, 1), |cfg| {
            cfg.max_entries_per_append = 1;
            cfg.commit_rule = rule;
        });
        c.net.cut_in_flight = true;
        // (a) A first leader S1 commits its no-op at index 1 everywhere.
        let s1 = c.run_until_leader(10_000 * MS);
        c.run_until(c.net.now + 200 * MS);
        assert!((0..5).all(|i| c.replica(i).commit_index() == 1));
        // S1 appends X at index 2 and gets it only to S2.
        let s2 = (s1 + 1) % 5;
        for i in 0..5 {
            c.net.group[i] = if i == s1 || i == s2 { 0 } else { 1 + i as u8 };
        }
        let x = RaftMsg::Acquire {
            req: 1,
            lock: "X".into(),
            ttl: SimDuration::from_millis(1000),
        };
        // The request comes from S2's id (a replica ignores the reply).
        c.net.push(
            c.net.now + MS,
            Ev::Msg {
                from: NodeId(s2 as u32),
                to: NodeId(s1 as u32),
                msg: x,
            },
        );
        c.run_until(c.net.now + 20 * MS);
        assert_eq!(c.replica(s2).log().last_index(), 2, "seed {seed}: X on S2");
        // (b) S1 crashes; the other three elect W, whose no-op lands at index 2 in its term
        // and reaches nobody (W is cut off the moment it wins).
        c.crash(s1);
        let rest: Vec<usize> = (0..5).filter(|&i| i != s1 && i != s2).collect();
        for &i in &rest {
            c.net.group[i] = 1;
        }
        c.net.group[s2] = 2;
        let w = c.run_until_leader(c.net.now + 10_000 * MS);
        c.net.group[w] = 3;
        c.run_until(c.net.now + 5 * MS);
        assert_eq!(c.replica(w).log().last_index(), 2, "seed {seed}: W's no-op");
        c.crash(w);
        // (c) S1 restarts; S1, S2 and S3 elect L2 (S1 or S2, whose logs hold X). L2 sends X
        // to S3 alone, one entry per message; L2 crashes just after S3's ack arrives, before
        // its own no-op (index 3) reaches a majority.
        let others: Vec<usize> = rest.iter().copied().filter(|&i| i != w).collect();
        let (s3, s4) = (others[0], others[1]);
        c.restart(s1);
        for i in 0..5 {
            c.net.group[i] = 4;
        }
        c.net.group[w] = 5;
        c.net.group[s4] = 6;
        let l2 = c.run_until_leader(c.net.now + 10_000 * MS);
        assert!(l2 == s1 || l2 == s2, "seed {seed}: L2 holds X");
        loop {
            let ack = matches!(
                c.net.queue.first_key_value(),
                Some((_, Ev::Msg { from, to, msg: RaftMsg::AppendEntriesResponse { success: true, match_index, .. } }))
                    if from.index() == s3 && to.index() == l2 && *match_index >= 2
            );
            assert!(c.step(), "queue ran dry");
            if ack {
                break;
            }
            assert!(c.net.now < 100_000 * MS, "seed {seed}: S3 never stored X");
        }
        c.crash(l2);
        // (d) W restarts; with S3 and S4 (whose last terms are older than W's) it wins a new
        // term and replicates its own index 2 over X on S3.
        let f = if l2 == s1 { s2 } else { s1 };
        c.net.group[f] = 7;
        for i in [w, s3, s4] {
            c.net.group[i] = 8;
        }
        c.restart(w);
        c.run_until(c.net.now + 3_000 * MS);
        // Everyone back.
        c.restart(l2);
        c.net.group.iter_mut().for_each(|g| *g = 0);
        c.run_until(c.net.now + 3_000 * MS);
        // Every replica ends with one log, and X (a term-1 entry never committed) may be gone.
        let log0 = c.replica(0).log().entries().to_vec();
        assert!((1..5).all(|i| c.replica(i).log().entries() == log0.as_slice()));
        c.check_safety()
    }
}

/// A grant that arrives after the client's own deadline (the acquisition outlasted the TTL:
/// no leader could be elected for longer than that) is given up at once AND its lease is
/// revoked, so the key does not block the lock until the leader's expiry.
#[test]
fn a_grant_after_the_deadline_is_handed_back() {
    let mut c = Cluster::new(3, 3, 1, (1, 1));
    // No two replicas can talk: no leader for 3 s; the client (id 3) keeps retrying.
    for i in 0..3 {
        c.net.group[i] = i as u8;
    }
    c.acquire(3);
    c.run_until(3_000 * MS);
    c.net.group.iter_mut().for_each(|g| *g = 0);
    c.run_until(6_000 * MS);
    let said: Vec<&ClientObs> = c.client_said().map(|(_, _, o)| o).collect();
    assert!(
        matches!(
            said.as_slice(),
            [
                ClientObs::Acquired { .. },
                ClientObs::Lost {
                    reason: "deadline",
                    ..
                }
            ]
        ),
        "{said:?}"
    );
    let freed: Vec<bool> = c
        .raft_said()
        .filter_map(|(_, _, o)| match o {
            RaftObs::LockFreed { expired, .. } => Some(*expired),
            _ => None,
        })
        .collect();
    assert_eq!(freed, vec![false], "revoked by the client, not expired");
    c.check_safety().unwrap();
}

/// Delivers `msg` from `from` to replica `to` now (after anything already due now).
fn deliver(c: &mut Cluster, from: usize, to: usize, msg: RaftMsg) {
    c.net.push(
        c.net.now,
        Ev::Msg {
            from: NodeId(from as u32),
            to: NodeId(to as u32),
            msg,
        },
    );
    c.run_until(c.net.now);
}

/// Figure 2, RequestVote receiver: only a *higher* term turns a leader or candidate into a
/// follower. A RequestVote of the node's own term (a second candidate of that term, or a
/// candidate's late request reaching the winner) is refused and changes nothing.
#[test]
fn a_request_vote_of_the_same_term_deposes_no_leader_and_no_candidate() {
    let mut c = Cluster::new(1, 3, 0, (1, 1));
    let l = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 10 * MS);
    let t = c.replica(l).term();
    let other = (l + 1) % 3;
    let vote = |term| RaftMsg::RequestVote {
        term,
        last_log_index: 9,
        last_log_term: term,
    };
    deliver(&mut c, other, l, vote(t));
    assert_eq!(c.replica(l).role(), Role::Leader, "the leader stays leader");
    assert_eq!(c.replica(l).term(), t);
    // A candidate of term t+1 (cut off, its election timer fired) meets another candidate's
    // RequestVote of the same term: it stays a candidate and keeps its own vote.
    let x = (l + 2) % 3;
    c.net.group[x] = 1;
    while c.replica(x).role() != Role::Candidate {
        assert!(c.step(), "queue ran dry");
    }
    let tx = c.replica(x).term();
    deliver(&mut c, other, x, vote(tx));
    assert_eq!(
        c.replica(x).role(),
        Role::Candidate,
        "the candidate stays candidate"
    );
    assert_eq!(c.replica(x).voted_for(), Some(NodeId(x as u32)));
    assert!(c.raft_said().all(|(_, n, o)| !(n.index() == x
        && matches!(o, RaftObs::Voted { candidate, .. } if candidate.index() == other))));
}

/// Figure 2, Rules for Servers, Leaders: the commit index becomes the *highest* N stored on a
/// majority with log[N].term == currentTerm, so the scan goes down from the log's end. A
/// current-term entry on a majority commits while a later one is still only on the leader.
#[test]
fn the_commit_scan_finds_a_majority_entry_below_an_unreplicated_one() {
    let mut c = Cluster::new(1, 3, 0, (1, 1));
    let l = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 10 * MS);
    let k = c.replica(l).commit_index();
    assert_eq!(c.replica(l).log().last_index(), k);
    let (f1, f2) = ((l + 1) % 3, (l + 2) % 3);
    c.net.group[f1] = 1;
    c.net.group[f2] = 1;
    for (req, lock) in [(1, "A"), (2, "B")] {
        let acquire = RaftMsg::Acquire {
            req,
            lock: lock.into(),
            ttl: SimDuration::from_millis(1000),
        };
        deliver(&mut c, f1, l, acquire);
    }
    assert_eq!(c.replica(l).log().last_index(), k + 2);
    let ack = RaftMsg::AppendEntriesResponse {
        term: c.replica(l).term(),
        success: true,
        match_index: k + 1,
        seq: 1_000_000,
    };
    deliver(&mut c, f1, l, ack);
    assert_eq!(c.replica(l).commit_index(), k + 1);
}

/// Figure 2, AppendEntries receiver (and Rules for Servers: "if RPC request contains term
/// T greater than currentTerm: set currentTerm = T"): a follower adopts the higher term of a
/// leader it already follows, as when that leader is re-elected in a later term.
#[test]
fn a_follower_adopts_the_higher_term_of_the_leader_it_already_follows() {
    let mut c = Cluster::new(1, 3, 0, (1, 1));
    let l = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 10 * MS);
    let f = (l + 1) % 3;
    let t = c.replica(l).term();
    assert_eq!(c.replica(f).leader_hint(), Some(NodeId(l as u32)));
    assert_eq!(c.replica(f).term(), t);
    let log = c.replica(f).log();
    let heartbeat = RaftMsg::AppendEntries {
        term: t + 1,
        prev_log_index: log.last_index(),
        prev_log_term: log.last_term(),
        entries: Vec::new(),
        leader_commit: c.replica(f).commit_index(),
        seq: 1_000_000,
    };
    deliver(&mut c, l, f, heartbeat);
    assert_eq!(c.replica(f).term(), t + 1);
    assert_eq!(c.replica(f).role(), Role::Follower);
    assert_eq!(c.replica(f).leader_hint(), Some(NodeId(l as u32)));
}

/// Figure 2's "decrement nextIndex and retry", with the follower's hint (its last index, as
/// the paper's §5.3 optimisation and etcd's `rejectHint` allow): a follower that is merely
/// behind costs the new leader one refused AppendEntries, however far behind it is; a
/// follower whose suffix conflicts is walked back one entry per refusal, never past what it
/// is known to match.
#[test]
fn a_refused_append_backs_off_to_the_followers_hint() {
    let mut c = Cluster::new(1, 3, 0, (1, 1));
    let l1 = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 10 * MS);
    let (f1, f2) = ((l1 + 1) % 3, (l1 + 2) % 3);
    // f2 is down while l1 and f1 commit 30 entries.
    c.crash(f2);
    for req in 0..30 {
        let acquire = RaftMsg::Acquire {
            req,
            lock: format!("k{req}"),
            ttl: SimDuration::from_millis(100_000),
        };
        deliver(&mut c, f1, l1, acquire);
        c.run_until(c.net.now + 5 * MS);
    }
    let long = c.replica(l1).commit_index();
    assert!(long >= 31, "commit index {long}");
    // l1 crashes and f2 comes back 30 entries behind: f1 (up to date) wins.
    c.crash(l1);
    c.restart(f2);
    let behind = c.replica(f2).log().last_index();
    assert!(long - behind >= 30);
    let l2 = c.run_until_leader(c.net.now + 10_000 * MS);
    assert_eq!(l2, f1);
    c.run_until(c.net.now + 50 * MS);
    assert_eq!(c.net.refused[f2], 1, "one refusal, then the hint");
    assert_eq!(c.replica(f2).log().entries(), c.replica(f1).log().entries());
    // l1 returns with a log that ends where f1's ended; f1's new term's no-op conflicts
    // with nothing, so l1 needs no refusal either, only its new entries.
    c.restart(l1);
    c.run_until(c.net.now + 1_000 * MS);
    assert_eq!(c.replica(l1).log().entries(), c.replica(f1).log().entries());
    c.check_safety().unwrap();
}

/// A conflicting suffix: an isolated leader appends entries no one else stores; the others
/// elect a new leader whose no-op takes the first of those indexes. The new leader's
/// nextIndex starts just past its own log as it was when it won (Figure 2, "Volatile state on
/// leaders"), which is where the two logs still match, so the stale suffix is truncated by the
/// first AppendEntries (receiver rule 3) with no refusal at all, and the logs converge.
#[test]
fn a_stale_suffix_is_truncated_without_a_refusal() {
    let mut c = Cluster::new(1, 3, 0, (1, 1));
    let l1 = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 10 * MS);
    let f1 = (l1 + 1) % 3;
    c.net.group[l1] = 1;
    for req in 0..4 {
        let acquire = RaftMsg::Acquire {
            req,
            lock: format!("old{req}"),
            ttl: SimDuration::from_millis(100_000),
        };
        deliver(&mut c, f1, l1, acquire);
    }
    let l2 = loop {
        if let Some(l2) = (0..3).find(|&i| i != l1 && c.replica(i).role() == Role::Leader) {
            break l2;
        }
        assert!(c.step() && c.net.now < 100_000 * MS, "no second leader");
    };
    assert!(c.replica(l2).term() > c.replica(l1).term());
    c.run_until(c.net.now + 100 * MS);
    let before = c.net.refused[l1];
    c.net.group[l1] = 0;
    c.run_until(c.net.now + 1_000 * MS);
    assert_eq!(c.replica(l1).log().entries(), c.replica(l2).log().entries());
    assert_eq!(c.net.refused[l1] - before, 0);
    c.check_safety().unwrap();
}

/// What each replica says in a first election and one grant, in order: the observations
/// the checkers and the narration read (a follower's BecameFollower once per leader it
/// learns, CommitAdvanced once per advance, on the leader before the followers).
#[test]
fn one_election_is_observed_in_this_order() {
    let mut c = Cluster::new(1, 3, 1, (1, 1));
    let l = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 10 * MS);
    c.acquire(3);
    c.run_until(c.net.now + 20 * MS);
    let said = |node: usize| -> Vec<String> {
        c.raft_said()
            .filter(|(_, n, _)| n.index() == node)
            .map(|(_, _, o)| {
                let s = format!("{o:?}");
                s[..s.find([' ', '{']).unwrap_or(s.len())]
                    .trim()
                    .to_string()
            })
            .collect()
    };
    let f = (l + 1) % 3;
    assert_eq!(
        said(l),
        [
            "BecameFollower",
            "BecameCandidate",
            "Voted",
            "BecameLeader",
            "LeasesPromoted",
            "Appended",
            "CommitAdvanced",
            "Applied",
            "Appended",
            "CommitAdvanced",
            "Applied",
            "KeyCreated",
            "Granted"
        ],
        "leader {l}"
    );
    assert_eq!(
        said(f),
        [
            "BecameFollower",
            "BecameFollower",
            "Voted",
            "BecameFollower",
            "Appended",
            "Appended",
            "CommitAdvanced",
            "Applied"
        ],
        "follower {f}"
    );
}

/// Cuts replica `x` off for 3 s and heals; returns (leader before, its term before, the
/// cluster after 1 s more).
fn isolate_and_rejoin(seed: u64, tune: impl FnOnce(&mut RaftConfig)) -> (usize, u64, Cluster) {
    let mut c = Cluster::new_with(seed, 3, 0, (1, 1), tune);
    let l = c.run_until_leader(10_000 * MS);
    c.run_until(c.net.now + 100 * MS);
    let t = c.replica(l).term();
    let x = (l + 1) % 3;
    c.net.group[x] = 1;
    c.run_until(c.net.now + 3_000 * MS);
    c.net.group[x] = 0;
    c.run_until(c.net.now + 1_000 * MS);
    (l, t, c)
}

/// Without PreVote, a replica cut off from the others raises its term on every election
/// timeout, and on rejoining deposes the healthy leader (thesis §9.6's motivation).
#[test]
fn without_pre_vote_a_rejoining_replica_deposes_the_leader() {
    for seed in 0..10 {
        let (l, t, c) = isolate_and_rejoin(seed, |_| {});
        assert!(
            c.raft_said().any(|(_, n, o)| n.index() == l
                && matches!(o, RaftObs::SteppedDown { term } if *term == t)),
            "seed {seed}: the leader of term {t} was deposed"
        );
        assert!((0..3).all(|i| c.replica(i).term() > t + 2), "seed {seed}");
    }
}

/// With PreVote (etcd-io/raft `campaign(campaignPreElection)`), the cut-off replica never gets
/// a majority of pre-votes, so it keeps its term. On an idle cluster (equal logs) a pre-vote
/// after the heal is still granted by PreVote alone (raft.go grants any up-to-date pre-vote of
/// a future term); with CheckQuorum too, followers that hear the leader ignore it (`inLease`),
/// and the leader leads on in the same term: etcd's recommended pair.
#[test]
fn pre_vote_keeps_a_cut_off_replica_from_raising_its_term() {
    for seed in 0..10 {
        let mut c = Cluster::new_with(seed, 3, 0, (1, 1), |cfg| cfg.pre_vote = true);
        let l = c.run_until_leader(10_000 * MS);
        c.run_until(c.net.now + 100 * MS);
        let t = c.replica(l).term();
        let x = (l + 1) % 3;
        c.net.group[x] = 1;
        c.run_until(c.net.now + 3_000 * MS);
        assert_eq!(c.replica(x).term(), t, "seed {seed}: no term raised");
        assert!(
            c.net.sent.get("PRE_VOTE").copied().unwrap_or(0) >= 4,
            "seed {seed}"
        );
        let (l, t, c) = isolate_and_rejoin(seed, |cfg| {
            cfg.pre_vote = true;
            cfg.check_quorum = true;
        });
        assert_eq!(c.replica(l).role(), Role::Leader, "seed {seed}");
        assert!((0..3).all(|i| c.replica(i).term() == t), "seed {seed}");
        assert!(c
            .raft_said()
            .all(|(_, _, o)| !matches!(o, RaftObs::SteppedDown { .. })));
        c.check_safety().unwrap();
    }
}

/// PreVote still elects: with no leader at all, pre-votes are granted and a real election
/// follows (one term per election, not one per pre-vote round).
#[test]
fn pre_vote_still_elects_a_leader_after_a_leader_crash() {
    for seed in 0..10 {
        let mut c = Cluster::new_with(seed, 3, 0, (1, 1), |cfg| cfg.pre_vote = true);
        let l = c.run_until_leader(10_000 * MS);
        let t = c.replica(l).term();
        c.run_until(c.net.now + 100 * MS);
        c.crash(l);
        let l2 = c.run_until_leader(c.net.now + 10_000 * MS);
        assert_ne!(l2, l, "seed {seed}");
        assert!(c.replica(l2).term() > t, "seed {seed}");
        c.check_safety().unwrap();
    }
}

/// CheckQuorum (etcd-io/raft `checkQuorumActive`): a leader that hears from no majority for an
/// election timeout steps down, in its own term; without it, it leads on.
#[test]
fn check_quorum_makes_a_cut_off_leader_step_down() {
    for (check_quorum, steps_down) in [(true, true), (false, false)] {
        let mut c = Cluster::new_with(5, 3, 0, (1, 1), |cfg| cfg.check_quorum = check_quorum);
        let l = c.run_until_leader(10_000 * MS);
        c.run_until(c.net.now + 100 * MS);
        let t = c.replica(l).term();
        c.net.group[l] = 1;
        // Two checks of 150 ms (election_timeout_min) at most.
        c.run_until(c.net.now + 400 * MS);
        assert_eq!(c.replica(l).role() != Role::Leader, steps_down);
        if steps_down {
            assert_eq!(c.replica(l).term(), t, "stepping down keeps the term");
        }
    }
}

/// CheckQuorum's lease (etcd-io/raft raft.go `Step`, `inLease`): a follower that heard its
/// leader less than `election_timeout_min` ago ignores a RequestVote of a higher term (no
/// answer, no term change); without CheckQuorum it adopts the term.
#[test]
fn check_quorum_followers_ignore_a_higher_term_vote_while_in_lease() {
    for check_quorum in [true, false] {
        let mut c = Cluster::new_with(5, 3, 0, (1, 1), |cfg| cfg.check_quorum = check_quorum);
        let l = c.run_until_leader(10_000 * MS);
        c.run_until(c.net.now + 100 * MS);
        let t = c.replica(l).term();
        let (f, x) = ((l + 1) % 3, (l + 2) % 3);
        let before = c.net.sent.get("VOTE").copied().unwrap_or(0);
        deliver(
            &mut c,
            x,
            f,
            RaftMsg::RequestVote {
                term: t + 5,
                last_log_index: 100,
                last_log_term: t + 4,
            },
        );
        let answered = c.net.sent.get("VOTE").copied().unwrap_or(0) > before;
        assert_eq!(answered, !check_quorum);
        assert_eq!(c.replica(f).term() == t, check_quorum);
    }
}

/// Lease reads (thesis §6.4.1; etcd-io/raft `ReadOnlyLeaseBased`): a leader cut off from the
/// others with its client still answers a keepalive at once while its lease lasts, and not
/// after it; under ReadIndex (`ReadOnlySafe`) it answers none, since no majority acknowledges
/// a round.
#[test]
fn lease_read_confirms_a_keepalive_without_a_round_only_within_the_lease() {
    for (read_only, within) in [(ReadOnlyOption::LeaseBased, 1), (ReadOnlyOption::Safe, 0)] {
        let mut c = Cluster::new_with(7, 3, 1, (1, 1), |cfg| {
            cfg.check_quorum = true;
            cfg.read_only = read_only;
            // A 100 ms lease: over within 120 ms of the cut, before CheckQuorum's second
            // check (150 ms apart) can depose the leader.
            cfg.clock_drift_bound_ppm = 500_000;
        });
        let l = c.run_until_leader(10_000 * MS);
        c.acquire(3);
        c.run_until(c.net.now + 200 * MS);
        let lease = *c
            .replica(l)
            .store()
            .leases()
            .keys()
            .next()
            .expect("the client holds a lease");
        c.net.group[l] = 1;
        c.net.group[3] = 1;
        let kept = |c: &Cluster| c.net.sent.get("RAFT_KEPT_ALIVE").copied().unwrap_or(0);
        let before = kept(&c);
        deliver(&mut c, 3, l, RaftMsg::KeepAlive { req: 1, lease });
        assert_eq!(kept(&c) - before, within, "{read_only:?}: at once");
        // The lease is 150 ms / 1.5 from a round sent before the cut.
        c.run_until(c.net.now + 120 * MS);
        assert_eq!(
            c.replica(l).role(),
            Role::Leader,
            "CheckQuorum has not fired yet"
        );
        let before = kept(&c);
        deliver(&mut c, 3, l, RaftMsg::KeepAlive { req: 2, lease });
        assert_eq!(kept(&c), before, "{read_only:?}: past the lease");
    }
}

/// etcd-io/raft `Config.validate`: "CheckQuorum must be enabled when ReadOnlyOption is
/// ReadOnlyLeaseBased"; the lease is `election_timeout_min / (1 + bound)`, rounded down.
#[test]
fn lease_read_needs_check_quorum_and_shortens_the_lease_by_the_drift_bound() {
    let mut cfg = RaftConfig::with_replicas(vec![NodeId(0), NodeId(1), NodeId(2)]);
    cfg.read_only = ReadOnlyOption::LeaseBased;
    assert_eq!(
        cfg.validate(),
        Err(RaftConfigError::LeaseReadWithoutCheckQuorum)
    );
    cfg.check_quorum = true;
    assert_eq!(cfg.validate(), Ok(()));
    cfg.election_timeout_min = SimDuration::from_millis(1000);
    cfg.clock_drift_bound_ppm = 250_000;
    assert_eq!(cfg.leader_lease(), SimDuration::from_millis(800));
    cfg.clock_drift_bound_ppm = 0;
    assert_eq!(cfg.leader_lease(), SimDuration::from_millis(1000));
}
