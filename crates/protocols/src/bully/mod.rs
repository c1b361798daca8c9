//! The bully election as an actor.
//!
//! Sources: H. Garcia-Molina, "Elections in a Distributed Computing System", IEEE Transactions
//! on Computers C-31(1), 1982; G. Coulouris, J. Dollimore, T. Kindberg, G. Blair, "Distributed
//! Systems: Concepts and Design", 5th ed., §15.3 (Elections), the bully algorithm.
//!
//! Node ids order the bully: among the configured [`BullyConfig::peers`] (the bully nodes of a
//! simulation, not storage or lock servers), the higher id wins. Two readings of the published
//! rules are implemented ([`BullyVariant`]); the rules they share:
//!
//! - **Election** ([`BullyNode`] starts one when its failure detector fires, when it restarts,
//!   or when it is bullied by an ELECTION): send ELECTION to every higher peer (ascending) and
//!   wait [`BullyConfig::answer_timeout`]. A node with no higher peer wins at once. A node
//!   already in an election does not start another (Coulouris: "unless it has begun one
//!   already").
//! - **ELECTION from a lower node**: reply ANSWER.
//! - **No ANSWER in time**: become leader. The term goes up by one, the node observes
//!   [`Obs::LeaderClaim`], sends COORDINATOR{term} (see the variants for to whom) and starts
//!   heartbeating every [`BullyConfig::heartbeat_every`].
//! - **ANSWER**: a higher node is alive and electing; wait
//!   [`BullyConfig::coordinator_timeout`] for its COORDINATOR, else restart the election
//!   (Coulouris: "waits a further period T' for a coordinator message").
//! - **COORDINATOR from a higher node**: accept it ([`Obs::LeaderKnown`]); a leader steps down
//!   first ([`Obs::LeaderStepDown`]); any election in progress is abandoned.
//!   **COORDINATOR from a lower node**: bully it (start an election) unless already electing.
//! - **HEARTBEAT** from the followed leader resets the failure detector. Any other HEARTBEAT is
//!   ignored: a node learns of a new leader from COORDINATOR only (Garcia-Molina's
//!   `Coordinator` message, Coulouris's "coordinator message"; neither text has a heartbeat
//!   carry leadership). [`BullyConfig::adopt_on_heartbeat`] turns on an extension that no
//!   textbook rule has: a HEARTBEAT from a node higher than both this node and the leader it
//!   follows is accepted like a COORDINATOR (it lets the two sides of a healed partition
//!   converge without a new election, and a node that missed a COORDINATOR learn the leader).
//! - **Failure detector**: an idle follower that has heard nothing from its leader for
//!   [`BullyConfig::failure_timeout`] starts an election. It is a lazy watchdog (one pending
//!   timer per node, re-armed to the current deadline when it fires), as in
//!   `bench/WORKLOADS.md` §3.5.
//! - **Crash / restart**: a crashed node runs nothing. On restart every volatile field is
//!   rebuilt; only the term survives ([`BullyDurable`]), so a restarted node's next claim has a
//!   higher term than any it made before. Then it starts an election (a recovering node
//!   bullies its way back if it is the highest).
//!
//! **The textbook reading** ([`BullyVariant::Textbook`], the default). Garcia-Molina's
//! coordinator keeps its role while it is up: an inquiry from a lower node is answered, it does
//! not reorganise the group (his `AreYouThere` is answered; only a node that finds no live
//! higher node takes over). Coulouris sends COORDINATOR "to all processes with lower
//! identifiers". And an election message is a statement about the coordinator the sender knew
//! when it started; Garcia-Molina's nodes act on a `NewCoordinator` only when it belongs to the
//! election they are in (`S.h = j`), i.e. they discard messages of an election that is over.
//! Here that becomes:
//!
//! - ELECTION carries the claim term of the leader the sender followed when it started
//!   electing (0: none). An idle follower that receives ELECTION starts its own election only
//!   if it has no leader or the ELECTION's term is at least its leader's claim term (the
//!   sender suspects the leader it follows). An ELECTION with a lower term was sent before the
//!   sender heard the current claim: it is stale, ANSWER alone replies to it (the leader got
//!   the same ELECTION and answers for itself).
//! - A sitting leader that receives ELECTION replies ANSWER and starts no new election: it is
//!   the highest live node it knows of, so a new election could only re-elect it. If the
//!   ELECTION's term is at least the leader's claim term (the sender heard the claim and still
//!   suspects it), the leader re-sends its COORDINATOR to that sender only; otherwise its
//!   broadcast is already on the way and the heartbeats follow.
//! - The winner sends COORDINATOR to every lower peer only.
//!
//! One failure then costs at most the published bound: every node elects at most once per
//! claim it suspects, so at most N(N-1)/2 ELECTION messages (and as many ANSWERs), and one
//! COORDINATOR to each lower peer (at most N-1) per new leader.
//!
//! **The literal reading** ([`BullyVariant::Literal`], the W2 workload of
//! `bench/WORKLOADS.md` §3.5): any node not already electing answers and starts an
//! election on every ELECTION from a lower node, the sitting leader included ("the node
//! answers and bullies again"); ELECTION's term is ignored; the winner sends COORDINATOR to
//! every other peer, higher ones too. A sitting leader that receives a late ELECTION re-claims
//! with a new term and broadcasts again, and followers that receive stale ELECTIONs elect
//! again: each wave of elections feeds the next (an election storm, many times the bound).
//!
//! **Ties, decided by Coulouris's bound.** Coulouris et al. (§15.1 on failure detectors, used
//! by the bully algorithm of §15.3) take T = 2 Ttrans + Tprocess as "an upper bound on the
//! total elapsed time from sending a message to another process to receiving a response",
//! Ttrans the maximum transmission delay and Tprocess the maximum delay for processing a
//! message; `answer_timeout` is that T.
//!
//! - *An ANSWER that arrives at the instant the answer timer ends* took exactly T: no longer
//!   than the bound, so it is in time and the node does not claim. The timer does not claim at
//!   once: it arms a zero-length [`BullyTimer::AnswerGrace`], which runs after every message
//!   already due at that instant (events at one instant run in scheduling order), and claims
//!   only if no ANSWER came. [`AnswerAtTimeout::Late`] keeps the timer first (format 1).
//! - *Two ELECTIONs that reach a node within one processing time*: a node handles one message
//!   at a time (the engine's processing time, a single-threaded event loop), so the second is
//!   handled after the first and answered one processing time later than a lone ELECTION. That
//!   wait is part of the receiver's delay in processing the second message, so Tprocess, the
//!   bound on it, includes it: the model keeps the queue, and `answer_timeout` is Coulouris's T
//!   only when it covers it, 2 Ttrans + k p for a node that can hold k ELECTIONs at once (k
//!   lower peers electing together, each handled in p). A shorter `answer_timeout` breaks the
//!   algorithm's synchronous assumption, and a node may then claim over a live higher one, as
//!   a real deployment with that timeout would.
//!
//! **Terms.** A term is a per-node claim counter: every claim increments it. A node also raises
//! it to the highest term it has accepted from a leader (COORDINATOR or HEARTBEAT), so its next
//! claim outranks every claim it has heard of. It is not a global epoch: two nodes that never
//! heard of each other's claims (a partition) can claim the same term.
//!
//! Stale timers do nothing: the answer and coordinator timeouts carry the election number they
//! belong to, the heartbeat tick carries the term of the claim it serves. No timer is ever
//! cancelled (the engine drops every timer of a crashed incarnation).

use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration};
use std::sync::Arc;

/// Which reading of the published rules a node follows (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BullyVariant {
    /// Garcia-Molina (1982) and Coulouris et al. §15.3 as published: a sitting leader answers
    /// an ELECTION without re-electing itself, stale ELECTIONs start no election, the winner
    /// tells the lower peers. One failure costs at most N(N-1)/2 ELECTIONs and N-1
    /// COORDINATORs.
    #[default]
    Textbook,
    /// The storm-prone literal reading (`bench/WORKLOADS.md` §3.5, workload W2): every
    /// ELECTION from a lower node makes an idle receiver elect, the sitting leader included,
    /// and the winner broadcasts COORDINATOR to every other peer.
    Literal,
}

/// Whether an ANSWER that arrives at the very instant the answer timer ends is in time (see
/// the module doc, "Ties").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerAtTimeout {
    /// In time: it took exactly T = 2 Ttrans + Tprocess, within Coulouris's bound; the node
    /// does not claim.
    #[default]
    InTime,
    /// Late: the timer, set when the election began, runs first and the node claims.
    Late,
}

/// The parameters of one bully node. Durations are lengths of the node's own **monotonic**
/// clock (local ns; they drift with the node's clock).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BullyConfig {
    /// The participants of the election, in any order (sorted and deduplicated by
    /// [`BullyNode::new`]); must contain the node itself. "Higher" means a higher id among
    /// these. Shared between the nodes of a run (one list, not one per node). Default: empty
    /// (set it).
    pub peers: Arc<[NodeId]>,
    /// How long an electing node waits for an ANSWER before it declares itself leader.
    /// Default 50 ms (local monotonic).
    pub answer_timeout: SimDuration,
    /// How long a node that received an ANSWER waits for a COORDINATOR before it restarts its
    /// election. Default 300 ms (local monotonic).
    pub coordinator_timeout: SimDuration,
    /// The leader's heartbeat period. Default 100 ms (local monotonic).
    pub heartbeat_every: SimDuration,
    /// A follower that hears nothing from its leader for this long starts an election.
    /// Default 300 ms (local monotonic).
    pub failure_timeout: SimDuration,
    /// Start an election at true time 0. Default `true`. With `false` the run begins with
    /// [`BullyConfig::initial_leader`] agreed (W2 in `bench/WORKLOADS.md` §3.2).
    pub start_election_on_start: bool,
    /// The leader everyone agrees on at time 0 when `start_election_on_start` is `false`;
    /// that node claims term 1 and heartbeats without an election. `None`: no leader, the
    /// failure detectors start the first election after `failure_timeout`. Default `None`.
    pub initial_leader: Option<NodeId>,
    /// The reading of the published rules. Default [`BullyVariant::Textbook`].
    pub variant: BullyVariant,
    /// Accept a HEARTBEAT from a node higher than this one and than its leader as a
    /// COORDINATOR (an extension no textbook rule has, see the module doc). Default `false`.
    pub adopt_on_heartbeat: bool,
    /// Whether an ANSWER at the answer timer's instant is in time. Default
    /// [`AnswerAtTimeout::InTime`].
    pub answer_at_timeout: AnswerAtTimeout,
}

impl Default for BullyConfig {
    /// No peers; 50 ms answer timeout, 300 ms coordinator timeout, 100 ms heartbeats, 300 ms
    /// failure timeout; elect at start; no initial leader; the textbook reading, leaders
    /// learnt from COORDINATOR only, an ANSWER at the timer's instant in time.
    fn default() -> Self {
        BullyConfig {
            peers: Arc::from([]),
            answer_timeout: SimDuration::from_millis(50),
            coordinator_timeout: SimDuration::from_millis(300),
            heartbeat_every: SimDuration::from_millis(100),
            failure_timeout: SimDuration::from_millis(300),
            start_election_on_start: true,
            initial_leader: None,
            variant: BullyVariant::Textbook,
            adopt_on_heartbeat: false,
            answer_at_timeout: AnswerAtTimeout::InTime,
        }
    }
}

/// Messages of the bully algorithm (Garcia-Molina 1982; Coulouris et al. §15.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BullyMsg {
    /// "I am electing: is any higher node alive?" Sent to every higher peer.
    Election {
        /// The claim term of the leader the sender followed when it started this election
        /// (0: it followed none). The textbook reading uses it to tell a stale ELECTION.
        term: u64,
    },
    /// "I am alive and higher; I take over the election." Reply to an ELECTION.
    Answer,
    /// "I am the leader in `term`." Sent by the winner to every lower peer (textbook) or to
    /// every other peer (literal).
    Coordinator {
        /// The term of the claim.
        term: u64,
    },
    /// "I am still the leader in `term`." Sent by the leader to every other peer each
    /// `heartbeat_every`.
    Heartbeat {
        /// The term of the claim.
        term: u64,
    },
}

impl BullyMsg {
    /// The message kind for traces and metrics: `"ELECTION"`, `"ANSWER"`, `"COORDINATOR"`
    /// or `"HEARTBEAT"`.
    #[inline]
    pub fn kind(&self) -> &'static str {
        match self {
            BullyMsg::Election { .. } => "ELECTION",
            BullyMsg::Answer => "ANSWER",
            BullyMsg::Coordinator { .. } => "COORDINATOR",
            BullyMsg::Heartbeat { .. } => "HEARTBEAT",
        }
    }
}

/// Timers of a bully node. Each carries what makes it stale: a timer whose election or term
/// is no longer current does nothing when it fires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BullyTimer {
    /// `answer_timeout` after election number `election` started.
    AnswerTimeout {
        /// The election (per-incarnation counter) it belongs to.
        election: u64,
    },
    /// `coordinator_timeout` after the first ANSWER of election number `election`.
    CoordinatorTimeout {
        /// The election (per-incarnation counter) it belongs to.
        election: u64,
    },
    /// The leader's heartbeat tick for its claim of `term`.
    HeartbeatTick {
        /// The term of the claim it serves.
        term: u64,
    },
    /// The lazy failure-detector watchdog (one chain per incarnation).
    FailureCheck,
    /// Zero-length, armed by an `AnswerTimeout` under [`AnswerAtTimeout::InTime`]: claims
    /// for election number `election` unless an ANSWER due at the timer's instant came.
    AnswerGrace {
        /// The election (per-incarnation counter) it belongs to.
        election: u64,
    },
}

/// What a bully node keeps across a crash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BullyDurable {
    /// The node's term counter: its last claim, or the highest term it accepted from a leader.
    pub term: u64,
}

/// The context a bully node runs in: any composition whose messages, timers and durable
/// state wrap the bully's own ([`BullyMsg`], [`BullyTimer`], [`BullyDurable`]).
pub trait BullyCtx:
    Ctx<Msg: Wraps<BullyMsg>, Timer: Wraps<BullyTimer>, Durable: Wraps<BullyDurable>>
{
}

impl<C> BullyCtx for C where
    C: Ctx<Msg: Wraps<BullyMsg>, Timer: Wraps<BullyTimer>, Durable: Wraps<BullyDurable>>
{
}

/// Where a node is in the election protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BullyPhase {
    /// No election in progress: a follower, the leader, or (before any election) neither.
    Idle,
    /// ELECTION sent to the higher peers; waiting `answer_timeout` for an ANSWER.
    Electing,
    /// An ANSWER arrived; waiting `coordinator_timeout` for a COORDINATOR.
    AwaitCoordinator,
}

/// A participant of the bully election. Build it with [`BullyNode::new`]; it plays its part
/// through [`Role`] (the composition wraps it in `Node::Bully`).
#[derive(Clone, Debug)]
pub struct BullyNode {
    config: BullyConfig,
    /// This node's id, learnt in `on_start` (the engine assigns ids).
    me: Option<NodeId>,
    /// Index of the first peer higher than this node in the sorted `config.peers`.
    first_higher: usize,
    term: u64,
    leader: Option<NodeId>,
    /// The claim term of the leader this node follows or last followed (0: none since the
    /// start or restart); kept while electing, sent in ELECTION.
    leader_term: u64,
    phase: BullyPhase,
    /// Elections started by this incarnation; stamps the election timers.
    election: u64,
    /// Local monotonic instant at which the failure detector suspects the leader.
    suspect_at: LocalTime,
}

impl BullyNode {
    /// A node with `config`; its peers are sorted and deduplicated (a list already sorted
    /// and free of duplicates is shared as it is).
    pub fn new(mut config: BullyConfig) -> Self {
        if !config.peers.windows(2).all(|w| w[0] < w[1]) {
            let mut peers = config.peers.to_vec();
            peers.sort_unstable();
            peers.dedup();
            config.peers = peers.into();
        }
        BullyNode {
            config,
            me: None,
            first_higher: 0,
            term: 0,
            leader: None,
            leader_term: 0,
            phase: BullyPhase::Idle,
            election: 0,
            suspect_at: LocalTime(0),
        }
    }

    /// The configuration (peers sorted).
    pub fn config(&self) -> &BullyConfig {
        &self.config
    }
    /// The node this one believes is leader (itself when it is leader), if any.
    pub fn leader(&self) -> Option<NodeId> {
        self.leader
    }
    /// Whether this node believes it is the leader.
    pub fn is_leader(&self) -> bool {
        self.me.is_some() && self.leader == self.me
    }
    /// The term counter: the term of this node's last claim, or the highest term it accepted
    /// from a leader, whichever is larger.
    pub fn term(&self) -> u64 {
        self.term
    }
    /// Where this node is in the protocol.
    pub fn phase(&self) -> BullyPhase {
        self.phase
    }
    /// Elections this incarnation has started (volatile: 0 after a restart).
    pub fn elections_started(&self) -> u64 {
        self.election
    }

    fn id(&self) -> NodeId {
        self.me.expect("bully node used before on_start")
    }

    fn bind(&mut self, ctx: &mut impl BullyCtx) {
        let me = ctx.id();
        let Ok(pos) = self.config.peers.binary_search(&me) else {
            panic!("bully node {me} is not in its own peers list");
        };
        self.me = Some(me);
        self.first_higher = pos + 1;
    }

    fn arm_failure_detector(&mut self, ctx: &mut impl BullyCtx) {
        self.suspect_at = ctx.mono_now().saturating_add(self.config.failure_timeout);
        ctx.set_timer(self.config.failure_timeout, BullyTimer::FailureCheck);
    }

    fn persist(&self, ctx: &mut impl BullyCtx) {
        ctx.persist(BullyDurable { term: self.term });
    }

    fn raise_term(&mut self, ctx: &mut impl BullyCtx, term: u64) {
        if term > self.term {
            self.term = term;
            self.persist(ctx);
        }
    }

    fn step_down_if_leader(&mut self, ctx: &mut impl BullyCtx) {
        if self.is_leader() {
            ctx.observe(Obs::LeaderStepDown { term: self.term });
            self.leader = None;
        }
    }

    fn send_to_others(&self, ctx: &mut impl BullyCtx, msg: BullyMsg) {
        let me = self.id();
        for &peer in self.config.peers.iter() {
            if peer != me {
                ctx.send(peer, msg.clone());
            }
        }
    }

    /// The peers lower than this node, ascending.
    fn lower(&self) -> &[NodeId] {
        &self.config.peers[..self.first_higher - 1]
    }

    fn start_election(&mut self, ctx: &mut impl BullyCtx) {
        self.step_down_if_leader(ctx);
        self.leader = None;
        self.phase = BullyPhase::Electing;
        self.election += 1;
        ctx.observe(Obs::ElectionStarted);
        let higher = &self.config.peers[self.first_higher..];
        if higher.is_empty() {
            self.become_leader(ctx, true);
            return;
        }
        let term = self.leader_term;
        for &peer in higher {
            ctx.send(peer, BullyMsg::Election { term });
        }
        ctx.set_timer(
            self.config.answer_timeout,
            BullyTimer::AnswerTimeout {
                election: self.election,
            },
        );
    }

    /// Claims leadership with a new term; `announce`: send COORDINATOR to every lower peer
    /// (textbook) or every other peer (literal); not done for the agreed initial leader.
    fn become_leader(&mut self, ctx: &mut impl BullyCtx, announce: bool) {
        self.phase = BullyPhase::Idle;
        self.leader = self.me;
        self.term += 1;
        self.leader_term = self.term;
        self.persist(ctx);
        let term = self.term;
        ctx.observe(Obs::LeaderClaim { term });
        if announce {
            match self.config.variant {
                BullyVariant::Textbook => {
                    for &peer in self.lower() {
                        ctx.send(peer, BullyMsg::Coordinator { term });
                    }
                }
                BullyVariant::Literal => self.send_to_others(ctx, BullyMsg::Coordinator { term }),
            }
        }
        ctx.set_timer(
            self.config.heartbeat_every,
            BullyTimer::HeartbeatTick { term },
        );
    }

    /// Follows `leader` (higher than this node), abandoning any election or own claim.
    fn accept_leader(&mut self, ctx: &mut impl BullyCtx, leader: NodeId, term: u64) {
        self.step_down_if_leader(ctx);
        self.leader = Some(leader);
        self.leader_term = term;
        self.phase = BullyPhase::Idle;
        self.raise_term(ctx, term);
        self.suspect_at = ctx.mono_now().saturating_add(self.config.failure_timeout);
        ctx.observe(Obs::LeaderKnown { leader });
    }
}

impl<C: BullyCtx> Role<C> for BullyNode {
    /// Runs at true time 0: arms the failure detector, then either starts an election or
    /// adopts [`BullyConfig::initial_leader`] (which claims term 1 and heartbeats).
    fn on_start(&mut self, ctx: &mut C) {
        self.bind(ctx);
        self.arm_failure_detector(ctx);
        if self.config.start_election_on_start {
            self.start_election(ctx);
        } else if let Some(leader) = self.config.initial_leader {
            if Some(leader) == self.me {
                self.become_leader(ctx, false);
            } else {
                // The agreed leader claims term 1 (its first claim).
                self.leader = Some(leader);
                self.leader_term = 1;
                ctx.observe(Obs::LeaderKnown { leader });
            }
        }
    }

    /// Handles a message; messages of other protocols are ignored.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(msg) = msg.into_part() else { return };
        let me = self.id();
        match msg {
            BullyMsg::Election { term } => {
                if from < me {
                    ctx.send(from, BullyMsg::Answer);
                    if self.phase != BullyPhase::Idle {
                        return;
                    }
                    match self.config.variant {
                        BullyVariant::Literal => self.start_election(ctx),
                        BullyVariant::Textbook if self.is_leader() => {
                            if term >= self.term {
                                ctx.send(from, BullyMsg::Coordinator { term: self.term });
                            }
                        }
                        BullyVariant::Textbook => {
                            if self.leader.is_none() || term >= self.leader_term {
                                self.start_election(ctx);
                            }
                        }
                    }
                }
            }
            BullyMsg::Answer => {
                if self.phase == BullyPhase::Electing {
                    self.phase = BullyPhase::AwaitCoordinator;
                    ctx.set_timer(
                        self.config.coordinator_timeout,
                        BullyTimer::CoordinatorTimeout {
                            election: self.election,
                        },
                    );
                }
            }
            BullyMsg::Coordinator { term } => {
                if from > me {
                    self.accept_leader(ctx, from, term);
                } else if self.phase == BullyPhase::Idle {
                    // A lower node claims leadership while this one is alive: bully it.
                    self.start_election(ctx);
                }
            }
            BullyMsg::Heartbeat { term } => {
                if self.leader == Some(from) {
                    self.leader_term = self.leader_term.max(term);
                    self.raise_term(ctx, term);
                    self.suspect_at = ctx.mono_now().saturating_add(self.config.failure_timeout);
                } else if self.config.adopt_on_heartbeat
                    && from > me
                    && self.leader.map_or(true, |l| from > l)
                {
                    self.accept_leader(ctx, from, term);
                }
            }
        }
    }

    /// Handles a timer; stale ones (an old election or term) do nothing, and so do other
    /// protocols' timers.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        let Some(timer) = timer.into_part() else {
            return;
        };
        match timer {
            BullyTimer::AnswerTimeout { election } => {
                if election == self.election && self.phase == BullyPhase::Electing {
                    match self.config.answer_at_timeout {
                        AnswerAtTimeout::Late => self.become_leader(ctx, true),
                        AnswerAtTimeout::InTime => {
                            ctx.set_timer(SimDuration::ZERO, BullyTimer::AnswerGrace { election });
                        }
                    }
                }
            }
            BullyTimer::AnswerGrace { election } => {
                if election == self.election && self.phase == BullyPhase::Electing {
                    self.become_leader(ctx, true);
                }
            }
            BullyTimer::CoordinatorTimeout { election } => {
                if election == self.election && self.phase == BullyPhase::AwaitCoordinator {
                    self.start_election(ctx);
                }
            }
            BullyTimer::HeartbeatTick { term } => {
                if self.is_leader() && self.term == term {
                    self.send_to_others(ctx, BullyMsg::Heartbeat { term });
                    ctx.set_timer(
                        self.config.heartbeat_every,
                        BullyTimer::HeartbeatTick { term },
                    );
                }
            }
            BullyTimer::FailureCheck => {
                let now = ctx.mono_now();
                if self.phase == BullyPhase::Idle && !self.is_leader() && now >= self.suspect_at {
                    self.start_election(ctx);
                }
                let next = if self.suspect_at > now {
                    self.suspect_at.saturating_since(now)
                } else {
                    self.config.failure_timeout
                };
                ctx.set_timer(next, BullyTimer::FailureCheck);
            }
        }
    }

    /// Rebuilds from durable state after a crash (only the term survives), re-arms the
    /// failure detector and starts an election.
    fn on_restart(&mut self, ctx: &mut C, durable: &C::Durable) {
        let term = durable.part().map_or(0, |d| d.term);
        *self = BullyNode::new(std::mem::take(&mut self.config));
        self.term = term;
        self.bind(ctx);
        self.arm_failure_detector(ctx);
        self.start_election(ctx);
    }
}
