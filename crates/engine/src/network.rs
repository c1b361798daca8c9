//! The simulated network: per-link delay models, loss, duplication, FIFO, and an ordered
//! chain of rules (partitions, one-way blocks, cut links, loss overrides).
//!
//! At **send** time the link's model draws loss, duplication, then the delay (plus an
//! optional rare spike) of the message and of its duplicate from the `"net"` stream, in that
//! order, drawing only what a non-zero parameter needs. At **delivery** time the rule chain is asked whether the link is cut: a
//! message is dropped if its link is cut at the instant it would arrive (docs/design.md, "The network").
//! New fault kinds add a [`NetRule`] variant; the event loop does not change.

use crate::node::NodeId;
use crate::rng::RngStream;
use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A message delay distribution. All parameters in ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayDist {
    /// Always this delay.
    Fixed(SimDuration),
    /// Uniform in `lo..=hi` (one draw, multiply-shift).
    Uniform {
        /// Shortest delay, ns.
        lo: SimDuration,
        /// Longest delay, ns.
        hi: SimDuration,
    },
    /// Normal with `mean` and standard deviation `sd`, truncated at 0.
    Normal {
        /// Mean, ns.
        mean: SimDuration,
        /// Standard deviation, ns.
        sd: SimDuration,
    },
    /// Exponential with this mean.
    Exponential {
        /// Mean, ns.
        mean: SimDuration,
    },
    /// Log-normal with this median and shape `sigma`.
    LogNormal {
        /// Median, ns.
        median: SimDuration,
        /// Standard deviation of the underlying normal (dimensionless).
        sigma: f64,
    },
}

impl DelayDist {
    /// One draw, ns.
    pub fn sample(&self, rng: &mut RngStream) -> SimDuration {
        SimDuration(match *self {
            DelayDist::Fixed(d) => d.0,
            DelayDist::Uniform { lo, hi } => rng.uniform_inclusive(lo.0, hi.0),
            DelayDist::Normal { mean, sd } => rng.normal_ns(mean.0 as f64, sd.0 as f64),
            DelayDist::Exponential { mean } => rng.exponential_ns(mean.0 as f64),
            DelayDist::LogNormal { median, sigma } => rng.lognormal_ns(median.0 as f64, sigma),
        })
    }
}

/// A rare extra delay: with probability `ppm / 1e6` a message gets `extra` on top of its delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spike {
    /// Probability per message, parts per million.
    pub ppm: u32,
    /// The extra delay.
    pub extra: DelayDist,
}

/// How one directed link behaves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkModel {
    /// Delay of each message.
    pub delay: DelayDist,
    /// Optional rare spike.
    pub spike: Option<Spike>,
    /// Loss probability per message, ppm.
    pub loss_ppm: u32,
    /// Duplication probability per message, ppm (the copy gets its own delay draw).
    pub duplicate_ppm: u32,
    /// FIFO: a message never overtakes an earlier one on the same link.
    pub fifo: bool,
}

impl Default for LinkModel {
    /// 1 ms fixed delay, no loss, no duplication, FIFO.
    fn default() -> Self {
        LinkModel {
            delay: DelayDist::Fixed(SimDuration::from_millis(1)),
            spike: None,
            loss_ppm: 0,
            duplicate_ppm: 0,
            fifo: true,
        }
    }
}

/// A rule for the messages of one kind (the engine's [`Message::kind`](crate::Message::kind)
/// string, e.g. `"ANSWER"`) on a directed link, or on every link from or to a node: drop,
/// delay or duplicate only those. It acts at send time, after the link's own model: a
/// message the link did not lose is dropped with probability `drop_ppm`, duplicated with
/// probability `duplicate_ppm` (on top of the link's own duplication), and each copy arrives
/// `extra_delay` later than the link's delay (FIFO still holds on FIFO links). Draws come from
/// the `"net"` stream only for matching messages, so a rule that matches nothing changes no
/// draw. The first matching rule applies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindRule {
    /// The message kind it matches, exactly.
    pub kind: String,
    /// Sender it matches (`None`: any).
    pub from: Option<NodeId>,
    /// Receiver it matches (`None`: any).
    pub to: Option<NodeId>,
    /// Drop probability per matching message, ppm.
    pub drop_ppm: u32,
    /// Duplication probability per matching message, ppm.
    pub duplicate_ppm: u32,
    /// Extra delay added to each matching message's link delay.
    pub extra_delay: Option<DelayDist>,
}

impl KindRule {
    /// Does this rule apply to a message of `kind` on `from -> to`?
    #[inline]
    pub fn matches(&self, from: NodeId, to: NodeId, kind: &str) -> bool {
        (self.from.is_none() || self.from == Some(from))
            && (self.to.is_none() || self.to == Some(to))
            && self.kind == kind
    }
}

/// Why a message was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Random loss on the link.
    Loss,
    /// The link was cut (partition, block, cut link) at delivery time.
    Partition,
    /// The destination was down when the message arrived.
    NodeDown,
    /// The destination crashed while the message was in flight, or while it sat unhandled in
    /// the queue of a paused node.
    Crashed,
}

/// One rule of the chain, evaluated in order; the first that cuts a link wins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetRule {
    /// Nodes in different groups cannot talk; nodes in no group talk to everyone.
    Partition {
        /// The sides.
        groups: Vec<Vec<NodeId>>,
    },
    /// `from -> to` is cut, the other direction is open.
    Block {
        /// Sender side.
        from: NodeId,
        /// Receiver side.
        to: NodeId,
    },
    /// Both directions between `a` and `b` are cut (several make non-transitive shapes).
    Cut {
        /// One end.
        a: NodeId,
        /// The other end.
        b: NodeId,
    },
}

impl NetRule {
    /// Does this rule cut `from -> to`?
    pub fn cuts(&self, from: NodeId, to: NodeId) -> bool {
        match self {
            NetRule::Partition { groups } => {
                let side = |n: NodeId| groups.iter().position(|g| g.contains(&n));
                match (side(from), side(to)) {
                    (Some(a), Some(b)) => a != b,
                    _ => false,
                }
            }
            NetRule::Block { from: f, to: t } => *f == from && *t == to,
            NetRule::Cut { a, b } => (*a == from && *b == to) || (*a == to && *b == from),
        }
    }
}

/// What the network decided for one send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendVerdict {
    /// Lost on the link.
    Lost,
    /// Arrives at `first`, and a duplicate at `duplicate` if the link duplicated it.
    Deliver {
        /// Arrival of the message, true time.
        first: SimTime,
        /// Arrival of the duplicate, if any.
        duplicate: Option<SimTime>,
    },
}

/// Most nodes for which the FIFO table is one flat `N x N` array (128 MB of address space
/// at most); with more, a sender's row grows to its highest receiver as it is used.
const FLAT_FIFO_AT_MOST: usize = 4096;

/// The latest arrival scheduled on each directed link, for FIFO links, in ns (0: none).
///
/// Up to [`FLAT_FIFO_AT_MOST`] nodes it is one flat table indexed `from * stride + to`, so a
/// lookup is one index operation: the row pointer of a table of rows would be a dependent load
/// before every FIFO read, a stall of about 7% of W3's time. The flat table
/// is allocated zeroed at the first FIFO send, sized for every node of the run (the hint
/// [`Network::reserve_nodes`] gives), so pages of links never used take no memory. Beyond
/// that size, and for a network that was never told its size, a sender's row grows to its
/// highest receiver on first use (memory one `u64` per link a sender reaches).
#[derive(Clone, Debug, Default)]
struct FifoTable {
    /// Nodes of the run, if known: the flat table's stride once allocated.
    nodes: usize,
    /// Nodes per row of `flat` (0: no flat table).
    stride: usize,
    /// `stride * stride` entries, `[from * stride + to]`.
    flat: Vec<u64>,
    /// `rows[from][to]`, when there is no flat table.
    rows: Vec<Vec<u64>>,
}

impl FifoTable {
    /// The entry of `from -> to`, created on first use.
    #[inline]
    fn slot(&mut self, from: NodeId, to: NodeId) -> &mut u64 {
        let (f, t) = (from.index(), to.index());
        if f < self.stride && t < self.stride {
            return &mut self.flat[f * self.stride + t];
        }
        self.slow_slot(f, t)
    }

    /// [`FifoTable::slot`] outside the flat table: allocates it on first use if the run's
    /// size is known and small enough, else uses the rows.
    #[cold]
    #[inline(never)]
    fn slow_slot(&mut self, f: usize, t: usize) -> &mut u64 {
        let n = self.nodes;
        if self.stride == 0 && self.rows.is_empty() && f < n && t < n && n <= FLAT_FIFO_AT_MOST {
            self.stride = n;
            self.flat = vec![0; n * n];
            return &mut self.flat[f * n + t];
        }
        if self.stride > 0 {
            // A node beyond the size given: the flat entries move to rows.
            let stride = self.stride;
            self.rows = self
                .flat
                .chunks_exact(stride)
                .map(<[u64]>::to_vec)
                .collect();
            self.flat = Vec::new();
            self.stride = 0;
        }
        if self.rows.len() <= f {
            self.rows.resize_with(f + 1, Vec::new);
        }
        let row = &mut self.rows[f];
        if row.len() <= t {
            row.resize(t + 1, 0);
        }
        &mut row[t]
    }

    /// The entry of `from -> to`, if the table has one yet.
    #[inline]
    fn get(&self, from: NodeId, to: NodeId) -> Option<&u64> {
        let (f, t) = (from.index(), to.index());
        if f < self.stride && t < self.stride {
            return self.flat.get(f * self.stride + t);
        }
        self.rows.get(f).and_then(|row| row.get(t))
    }
}

/// The network state of one simulation.
#[derive(Clone, Debug)]
pub struct Network {
    default: LinkModel,
    overrides: BTreeMap<(NodeId, NodeId), LinkModel>,
    loss_override_ppm: Option<u32>,
    rules: Vec<NetRule>,
    kind_rules: Vec<KindRule>,
    /// FIFO: the latest arrival scheduled on each directed link (N^2 entries of 8 bytes;
    /// N = 1,000 is 8 MB).
    last_arrival: FifoTable,
}

impl Network {
    /// A network where every link follows `default`.
    pub fn new(default: LinkModel) -> Self {
        Network {
            default,
            overrides: BTreeMap::new(),
            loss_override_ppm: None,
            rules: Vec::new(),
            kind_rules: Vec::new(),
            last_arrival: FifoTable::default(),
        }
    }

    /// Asks for the cache line of the FIFO entry of `from -> to`, if it exists (a hint for the
    /// event loop; see `prefetch.rs`).
    #[inline]
    pub(crate) fn prefetch_link(&self, from: NodeId, to: NodeId) {
        if let Some(slot) = self.last_arrival.get(from, to) {
            crate::prefetch::prefetch(slot);
        }
    }

    /// Tells the FIFO table the run's node count (the engine does when a run starts), so it
    /// can be one flat table allocated at the first FIFO send (see `FifoTable`).
    pub(crate) fn reserve_nodes(&mut self, nodes: usize) {
        self.last_arrival.nodes = nodes;
    }

    /// Sets the model of the directed link `from -> to`.
    pub fn set_link(&mut self, from: NodeId, to: NodeId, model: LinkModel) {
        self.overrides.insert((from, to), model);
    }

    /// The model used for `from -> to`.
    pub fn link(&self, from: NodeId, to: NodeId) -> &LinkModel {
        self.overrides.get(&(from, to)).unwrap_or(&self.default)
    }

    /// The loss every link has of its own (no override), ppm, when all links have the same.
    pub fn uniform_loss_ppm(&self) -> Option<u32> {
        let own = self.default.loss_ppm;
        self.overrides
            .values()
            .all(|m| m.loss_ppm == own)
            .then_some(own)
    }

    /// Overrides the loss probability of every link (a loss-rate-change fault); `None` restores
    /// each link's own.
    pub fn set_loss_override(&mut self, ppm: Option<u32>) {
        self.loss_override_ppm = ppm;
    }

    /// Appends a rule to the chain.
    pub fn add_rule(&mut self, rule: NetRule) {
        self.rules.push(rule);
    }

    /// Removes every partition, block and cut (heal).
    pub fn heal(&mut self) {
        self.rules.clear();
    }

    /// Removes the first rule equal to `rule`, if one is in force; the others stay, in order.
    /// Returns whether one was removed.
    pub fn remove_rule(&mut self, rule: &NetRule) -> bool {
        match self.rules.iter().position(|r| r == rule) {
            Some(i) => {
                self.rules.remove(i);
                true
            }
            None => false,
        }
    }

    /// The rules in force, in order.
    pub fn rules(&self) -> &[NetRule] {
        &self.rules
    }

    /// Is `from -> to` cut now?
    #[inline]
    pub fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        !self.rules.is_empty() && self.rules.iter().any(|r| r.cuts(from, to))
    }

    /// Adds a per-kind rule (after the ones already there: the first match applies).
    pub fn add_kind_rule(&mut self, rule: KindRule) {
        self.kind_rules.push(rule);
    }

    /// The per-kind rules, in order.
    pub fn kind_rules(&self) -> &[KindRule] {
        &self.kind_rules
    }

    /// Decides the fate of a message of `kind` sent now on `from -> to`, drawing from `rng`:
    /// the link's loss, duplication and delay (plus spike), then, for a message a
    /// [`KindRule`] matches, the rule's drop, duplication and extra delay.
    pub fn on_send(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        kind: &str,
        rng: &mut RngStream,
    ) -> SendVerdict {
        let model = self.overrides.get(&(from, to)).unwrap_or(&self.default);
        let loss = self.loss_override_ppm.unwrap_or(model.loss_ppm);
        if rng.chance_ppm(loss) {
            return SendVerdict::Lost;
        }
        // Without per-kind rules (the common case) this is one length check per send.
        let rule = if self.kind_rules.is_empty() {
            None
        } else {
            self.kind_rules.iter().find(|r| r.matches(from, to, kind))
        };
        if let Some(r) = rule {
            if rng.chance_ppm(r.drop_ppm) {
                return SendVerdict::Lost;
            }
        }
        let mut duplicated = rng.chance_ppm(model.duplicate_ppm);
        if let Some(r) = rule {
            duplicated |= rng.chance_ppm(r.duplicate_ppm);
        }
        let fifo = model.fifo;
        let mut arrival = |rng: &mut RngStream| {
            let mut d = model.delay.sample(rng);
            if let Some(spike) = &model.spike {
                if rng.chance_ppm(spike.ppm) {
                    d = d.saturating_add(spike.extra.sample(rng));
                }
            }
            if let Some(extra) = rule.and_then(|r| r.extra_delay.as_ref()) {
                d = d.saturating_add(extra.sample(rng));
            }
            let mut at = now.saturating_add(d);
            if fifo {
                let last = self.last_arrival.slot(from, to);
                at = at.max(SimTime(*last));
                *last = at.0;
            }
            at
        };
        // One call site, so the closure is inlined: with two (the message, its duplicate) it
        // would be an out-of-line call per send, 3% of W3's instructions. The message's
        // arrival is drawn first, then the duplicate's.
        let mut at = [SimTime::ZERO; 2];
        for slot in at.iter_mut().take(1 + usize::from(duplicated)) {
            *slot = arrival(rng);
        }
        let first = at[0];
        let duplicate = duplicated.then_some(at[1]);
        SendVerdict::Deliver { first, duplicate }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: u32) -> NodeId {
        NodeId(i)
    }

    #[test]
    fn partition_cuts_across_groups_only() {
        let r = NetRule::Partition {
            groups: vec![vec![n(0), n(1)], vec![n(2), n(3), n(4)]],
        };
        assert!(!r.cuts(n(0), n(1)));
        assert!(!r.cuts(n(2), n(4)));
        assert!(r.cuts(n(0), n(2)));
        assert!(r.cuts(n(4), n(1)));
        // A node in no group is reachable from both sides.
        assert!(!r.cuts(n(5), n(0)) && !r.cuts(n(2), n(5)));
    }

    #[test]
    fn block_is_one_way_and_cut_links_are_not_transitive() {
        let mut net = Network::new(LinkModel::default());
        net.add_rule(NetRule::Block {
            from: n(0),
            to: n(1),
        });
        assert!(net.is_cut(n(0), n(1)));
        assert!(!net.is_cut(n(1), n(0)));
        net.heal();
        // Bridge: 0 and 2 cannot talk, both talk to 1.
        net.add_rule(NetRule::Cut { a: n(0), b: n(2) });
        assert!(net.is_cut(n(0), n(2)) && net.is_cut(n(2), n(0)));
        assert!(!net.is_cut(n(0), n(1)) && !net.is_cut(n(1), n(2)));
        net.heal();
        assert!(!net.is_cut(n(0), n(2)));
    }

    /// Found by mutation testing (docs/mutation.md): a one-way block cuts its direction only;
    /// the rules in force and per-link models read back.
    #[test]
    fn a_one_way_block_cuts_one_direction_and_state_reads_back() {
        let mut net = Network::new(LinkModel::default());
        let block = NetRule::Block {
            from: n(1),
            to: n(0),
        };
        net.add_rule(block.clone());
        assert!(net.is_cut(n(1), n(0)) && !net.is_cut(n(0), n(1)));
        assert_eq!(net.rules(), &[block][..]);
        net.heal();
        assert!(net.rules().is_empty());
        let slow = LinkModel {
            loss_ppm: 7,
            ..LinkModel::default()
        };
        net.set_link(n(0), n(1), slow.clone());
        assert_eq!(net.link(n(0), n(1)), &slow);
        assert_eq!(net.link(n(1), n(0)), &LinkModel::default());
    }

    #[test]
    fn fifo_never_reorders_and_loss_drops() {
        let model = LinkModel {
            delay: DelayDist::Uniform {
                lo: SimDuration(1),
                hi: SimDuration(1_000_000),
            },
            fifo: true,
            ..LinkModel::default()
        };
        let mut net = Network::new(model);
        let mut rng = RngStream::new(1, "net");
        let mut last = SimTime::ZERO;
        for i in 0..1000u64 {
            match net.on_send(SimTime(i * 10), n(0), n(1), "M", &mut rng) {
                SendVerdict::Deliver { first, .. } => {
                    assert!(first >= last);
                    last = first;
                }
                SendVerdict::Lost => panic!("no loss configured"),
            }
        }
        net.set_loss_override(Some(1_000_000));
        assert_eq!(
            net.on_send(SimTime(0), n(0), n(1), "M", &mut rng),
            SendVerdict::Lost
        );
    }

    #[test]
    fn duplication_yields_two_arrivals() {
        let model = LinkModel {
            duplicate_ppm: 1_000_000,
            ..LinkModel::default()
        };
        let mut net = Network::new(model);
        let mut rng = RngStream::new(1, "net");
        assert_eq!(
            net.on_send(SimTime(0), n(0), n(1), "M", &mut rng),
            SendVerdict::Deliver {
                first: SimTime(1_000_000),
                duplicate: Some(SimTime(1_000_000))
            }
        );
    }

    #[test]
    fn a_kind_rule_acts_on_its_kind_and_link_only() {
        let mut net = Network::new(LinkModel::default());
        net.add_kind_rule(KindRule {
            kind: "ANSWER".into(),
            from: Some(n(4)),
            to: Some(n(3)),
            drop_ppm: 0,
            duplicate_ppm: 0,
            extra_delay: Some(DelayDist::Fixed(SimDuration::from_millis(40))),
        });
        net.add_kind_rule(KindRule {
            kind: "ELECTION".into(),
            from: None,
            to: None,
            drop_ppm: 1_000_000,
            duplicate_ppm: 0,
            extra_delay: None,
        });
        let mut rng = RngStream::new(1, "net");
        let at = |ms: u64| SendVerdict::Deliver {
            first: SimTime(ms * 1_000_000),
            duplicate: None,
        };
        // Only ANSWER from n4 to n3 is 40 ms late: 1 ms link + 40 ms.
        assert_eq!(
            net.on_send(SimTime(0), n(4), n(3), "ANSWER", &mut rng),
            at(41)
        );
        assert_eq!(
            net.on_send(SimTime(0), n(3), n(4), "ANSWER", &mut rng),
            at(1)
        );
        assert_eq!(
            net.on_send(SimTime(0), n(4), n(2), "ANSWER", &mut rng),
            at(1)
        );
        assert_eq!(
            net.on_send(SimTime(0), n(5), n(6), "COORDINATOR", &mut rng),
            at(1)
        );
        // Every ELECTION is dropped, on every link.
        assert_eq!(
            net.on_send(SimTime(0), n(1), n(2), "ELECTION", &mut rng),
            SendVerdict::Lost
        );
        // FIFO still holds: a later HEARTBEAT on n4 -> n3 does not overtake the late ANSWER.
        assert_eq!(
            net.on_send(SimTime(0), n(4), n(3), "HEARTBEAT", &mut rng),
            at(41)
        );
    }

    #[test]
    fn a_kind_rule_that_matches_nothing_changes_no_draw() {
        let model = LinkModel {
            delay: DelayDist::Uniform {
                lo: SimDuration(1),
                hi: SimDuration(1_000_000),
            },
            loss_ppm: 100_000,
            duplicate_ppm: 100_000,
            fifo: false,
            ..LinkModel::default()
        };
        let mut plain = Network::new(model.clone());
        let mut ruled = Network::new(model);
        ruled.add_kind_rule(KindRule {
            kind: "OTHER".into(),
            from: None,
            to: None,
            drop_ppm: 500_000,
            duplicate_ppm: 500_000,
            extra_delay: Some(DelayDist::Fixed(SimDuration(7))),
        });
        let (mut r1, mut r2) = (RngStream::new(3, "net"), RngStream::new(3, "net"));
        for i in 0..1000u64 {
            assert_eq!(
                plain.on_send(SimTime(i), n(0), n(1), "M", &mut r1),
                ruled.on_send(SimTime(i), n(0), n(1), "M", &mut r2)
            );
        }
    }
}
