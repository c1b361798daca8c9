//! The composition: [`Node`], the one actor type of a splitbrain simulation (an enum over
//! every role), and the enums that wrap each protocol's messages ([`Msg`]), timers
//! ([`Timer`], [`ClientTimer`]) and durable state ([`Durable`]).
//!
//! This is the only file that names every protocol, and no protocol imports it: each is
//! written against [`Ctx`](crate::context::Ctx) with its own types, and the enums here
//! implement [`Wraps`] for them. Adding a role adds one line to `Node` and one line to each
//! enum it brings a type to (ARCHITECTURE.md, "Adding a role").
//!
//! The wrappers are the trace's vocabulary: a message or timer is serialized as this enum,
//! externally tagged in snake_case (`{"bully":"election"}`,
//! `{"client":{"lease":{"timeout":{"req":1}}}}`), so a variant's name is part of the trace
//! format. Rename nothing here without a trace format change.

use crate::bully::{BullyDurable, BullyMsg, BullyNode, BullyTimer};
use crate::context::{Role, Wraps};
use crate::lease::{
    LeaderTimer, LeaseClientTimer, LeaseLeader, LeaseMsg, LeaseService, ServiceDurable,
    ServiceTimer,
};
use crate::lease_record::{CandidateTimer, LeaseCandidate, LeaseRecordStore, RecordMsg};
use crate::observation::{JudgedAs, Obs};
use crate::opaque::Opaque;
use crate::raft::{RaftClientTimer, RaftDurable, RaftMsg, RaftNode, RaftTimer};
use crate::redis::{InstanceTimer, RedisDurable, RedisInstance, RedisMsg};
use crate::redis_lock::RedisClientTimer;
use crate::redlock::RedlockTimer;
use crate::storage::{FencedStorage, StorageDurable, StorageMsg};
use crate::worker::{ThreadTimer, Worker, WorkerTimer};
use serde::{Deserialize, Serialize};
use splitbrain_engine::{Actor, Context, Message, NodeId};
use std::fmt::Debug;

/// Defines an enum whose variants each wrap one protocol's type (unit variants wrap nothing)
/// and implements [`Wraps`] (so also [`From`]) for every wrapped type. The enum is written out
/// as it is declared, attributes and docs included. An optional `impl Trait { fn f(&self) ->
/// R }` after it implements `Trait` by calling `f` on the wrapped value of every variant.
macro_rules! wrapper_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident ( $inner:ty ) ),* $(,)?
        }
        impl $tr:ident { fn $f:ident(&self) -> $ret:ty }
    ) => {
        wrapper_enum! {
            $(#[$meta])*
            pub enum $name {
                $( $(#[$vmeta])* $variant($inner) ),*
            }
        }
        impl $tr for $name {
            #[inline]
            fn $f(&self) -> $ret {
                match self {
                    $( $name::$variant(inner) => inner.$f(), )*
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident $( ( $inner:ty ) )? ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $( $(#[$vmeta])* $variant $( ( $inner ) )? ),*
        }
        $( $( wraps!($name::$variant($inner)); )? )*
    };
}

/// `impl Wraps<$inner> for $outer` through the variant `$outer::$variant($inner)`.
macro_rules! wraps {
    ($outer:ident :: $variant:ident ( $inner:ty )) => {
        impl From<$inner> for $outer {
            #[inline]
            fn from(inner: $inner) -> Self {
                $outer::$variant(inner)
            }
        }
        impl Wraps<$inner> for $outer {
            #[inline]
            fn into_part(self) -> Option<$inner> {
                match self {
                    $outer::$variant(inner) => Some(inner),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
            #[inline]
            fn part(&self) -> Option<&$inner> {
                match self {
                    $outer::$variant(inner) => Some(inner),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
            #[inline]
            fn part_mut(&mut self) -> Option<&mut $inner> {
                match self {
                    $outer::$variant(inner) => Some(inner),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    };
}

/// `impl Wraps<$inner> for $outer` through the variant `$outer::$variant(Box<$inner>)`: the
/// box is made and opened here, so callers see `$inner` only.
macro_rules! wraps_boxed {
    ($outer:ident :: $variant:ident ( $inner:ty )) => {
        impl From<$inner> for $outer {
            #[inline]
            fn from(inner: $inner) -> Self {
                $outer::$variant(Box::new(inner))
            }
        }
        impl Wraps<$inner> for $outer {
            #[inline]
            fn into_part(self) -> Option<$inner> {
                match self {
                    $outer::$variant(inner) => Some(*inner),
                    _ => None,
                }
            }
            #[inline]
            fn part(&self) -> Option<&$inner> {
                match self {
                    $outer::$variant(inner) => Some(inner),
                    _ => None,
                }
            }
            #[inline]
            fn part_mut(&mut self) -> Option<&mut $inner> {
                match self {
                    $outer::$variant(inner) => Some(inner),
                    _ => None,
                }
            }
        }
    };
}

/// `impl Wraps<$inner> for $outer` two levels down, through `$outer::$variant($mid)` where
/// `$mid: Wraps<$inner>`.
macro_rules! wraps_through {
    ($outer:ident :: $variant:ident ( $mid:ident ) : $($inner:ty),* $(,)?) => {
        $(
            impl From<$inner> for $outer {
                #[inline]
                fn from(inner: $inner) -> Self {
                    $outer::$variant($mid::from(inner))
                }
            }
            impl Wraps<$inner> for $outer {
                #[inline]
                fn into_part(self) -> Option<$inner> {
                    match self {
                        $outer::$variant(mid) => mid.into_part(),
                        _ => None,
                    }
                }
                #[inline]
                fn part(&self) -> Option<&$inner> {
                    match self {
                        $outer::$variant(mid) => mid.part(),
                        _ => None,
                    }
                }
                #[inline]
                fn part_mut(&mut self) -> Option<&mut $inner> {
                    match self {
                        $outer::$variant(mid) => mid.part_mut(),
                        _ => None,
                    }
                }
            }
        )*
    };
}

/// Defines [`Node`] as written and implements the engine's [`Actor`] for it: every handler
/// goes to the variant's [`Role`] with the same arguments.
macro_rules! role_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident($role:ty) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $( $(#[$vmeta])* $variant($role) ),*
        }

        impl Actor for $name {
            type Msg = Msg;
            type Timer = Timer;
            type Obs = Obs;
            type Durable = Durable;

            #[inline]
            fn on_start(&mut self, ctx: &mut Context<'_, Self>) {
                match self {
                    $( $name::$variant(role) => Role::on_start(role, ctx), )*
                }
            }
            #[inline]
            fn on_message(&mut self, ctx: &mut Context<'_, Self>, from: NodeId, msg: Msg) {
                match self {
                    $( $name::$variant(role) => Role::on_message(role, ctx, from, msg), )*
                }
            }
            #[inline]
            fn on_timer(&mut self, ctx: &mut Context<'_, Self>, timer: Timer) {
                match self {
                    $( $name::$variant(role) => Role::on_timer(role, ctx, timer), )*
                }
            }
            #[inline]
            fn on_restart(&mut self, ctx: &mut Context<'_, Self>, durable: &Durable) {
                match self {
                    $( $name::$variant(role) => Role::on_restart(role, ctx, durable), )*
                }
            }
        }
    };
}

role_enum! {
    /// Every role a node can play.
    ///
    /// The variants differ in size (a worker with its lock client is largest): a run holds one
    /// `Node` per node in one vector, so the spread costs little memory (under 8 MB at 10,000
    /// nodes), while boxing a variant would cost a pointer chase on every event it handles.
    #[derive(Clone, Debug)]
    #[allow(clippy::large_enum_variant)]
    pub enum Node {
        /// A bully election participant.
        Bully(BullyNode),
        /// The lease service (a single authoritative lock service).
        LeaseService(LeaseService),
        /// A lease-based leader (lease client on the lease "leader").
        LeaseLeader(LeaseLeader),
        /// A Redis instance.
        RedisInstance(RedisInstance),
        /// Fenced (or unfenced) storage.
        Storage(FencedStorage),
        /// A worker driving a lock client (lease, Redis, Redlock or Raft).
        Worker(Worker),
        /// A Kubernetes-style lease record (read and compare-and-swap only).
        LeaseRecord(LeaseRecordStore),
        /// A client-go-style leader-election candidate over a lease record.
        LeaseCandidate(LeaseCandidate),
        /// A replica of the Raft lock service.
        Raft(RaftNode),
        /// A role defined outside this crate ([`crate::custom`]).
        Custom(CustomNode),
    }
}

/// Every message a splitbrain actor sends.
///
/// Every variant but bully's holds its message in a `Box`, so a `Msg` is 16 bytes (the tag
/// shares bully's spare values) where the largest message (a lease or record request, 72
/// bytes) would make every message 80: an election among 10,000 nodes keeps 50 million
/// messages in flight at once, all of them bully messages. The box is invisible outside this file:
/// protocols send and match their own message types through [`Wraps`], and serde writes a
/// box as its contents, so traces are unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Msg {
    /// Bully election messages.
    Bully(BullyMsg),
    /// Lease service requests and replies.
    Lease(Box<LeaseMsg>),
    /// Redis commands and replies.
    Redis(Box<RedisMsg>),
    /// Storage writes and acknowledgements.
    Storage(Box<StorageMsg>),
    /// Lease record reads and compare-and-swaps.
    Record(Box<RecordMsg>),
    /// Raft RPCs and the Raft lock service's client requests and replies.
    Raft(Box<RaftMsg>),
    /// A message of a role defined outside this crate ([`crate::custom`]).
    Custom(Box<Opaque>),
}

impl Message for Msg {
    /// Bully's kinds inline (the engine asks on every send and delivery: an out-of-line call
    /// would be 2.6% of W3's instructions), the boxed protocols' through one call.
    #[inline]
    fn kind(&self) -> &'static str {
        match self {
            Msg::Bully(m) => m.kind(),
            _ => self.boxed_kind(),
        }
    }
}

impl Msg {
    /// [`Message::kind`] of a message other than bully's.
    #[inline(never)]
    fn boxed_kind(&self) -> &'static str {
        match self {
            Msg::Bully(m) => m.kind(),
            Msg::Lease(m) => m.kind(),
            Msg::Redis(m) => m.kind(),
            Msg::Storage(m) => m.kind(),
            Msg::Record(m) => m.kind(),
            Msg::Raft(m) => m.kind(),
            Msg::Custom(m) => m.kind(),
        }
    }
}

wraps!(Msg::Bully(BullyMsg));
wraps_boxed!(Msg::Lease(LeaseMsg));
wraps_boxed!(Msg::Redis(RedisMsg));
wraps_boxed!(Msg::Storage(StorageMsg));
wraps_boxed!(Msg::Record(RecordMsg));
wraps_boxed!(Msg::Raft(RaftMsg));

/// Every message kind ([`Message::kind`] of a [`Msg`]), for validating the per-kind network
/// rules of scenario files: bully, lease service, Redis commands and replies, storage.
pub const MESSAGE_KINDS: &[&str] = &[
    "ELECTION",
    "ANSWER",
    "COORDINATOR",
    "HEARTBEAT",
    "LEASE_ACQUIRE",
    "LEASE_GRANTED",
    "LEASE_DENIED",
    "LEASE_RENEW",
    "LEASE_RENEWED",
    "LEASE_RELEASE",
    "LEASE_RELEASED",
    "SET",
    "GET",
    "DEL",
    "EVAL",
    "PEXPIRE",
    "PTTL",
    "CMD",
    "REPLY",
    "WRITE",
    "WRITE_ACK",
    "RECORD_GET",
    "RECORD",
    "RECORD_UPDATE",
    "RECORD_UPDATED",
    "REQUEST_VOTE",
    "VOTE",
    "APPEND_ENTRIES",
    "APPEND_ACK",
    "PRE_VOTE",
    "PRE_VOTE_RESP",
    "RAFT_ACQUIRE",
    "RAFT_KEEPALIVE",
    "RAFT_RELEASE",
    "RAFT_GRANTED",
    "RAFT_DENIED",
    "RAFT_KEPT_ALIVE",
    "RAFT_LEASE_NOT_FOUND",
    "RAFT_RELEASED",
    "RAFT_REDIRECT",
    "ETCD_LEASE_GRANT",
    "ETCD_MUTEX_TXN",
    "ETCD_RANGE",
    "ETCD_DELETE",
    "ETCD_WATCH_DELETE",
    "ETCD_LEASE_GRANTED",
    "ETCD_TXN_RESULT",
    "ETCD_RANGE_RESULT",
    "ETCD_DELETE_RESULT",
    "ETCD_WATCH_PENDING",
    "ETCD_WATCH_FIRED",
    "ZK_CONNECT",
    "ZK_CREATE",
    "ZK_DELETE",
    "ZK_EXISTS",
    "ZK_GET_DATA",
    "ZK_GET_CHILDREN",
    "ZK_CONNECTED",
    "ZK_REPLY",
    "ZK_WATCH_EVENT",
    "PSYNC",
    "FULLRESYNC",
    "REPL",
    "REPLPING",
    "SWITCH-MASTER",
];

wrapper_enum! {
    /// Every timer payload a splitbrain actor sets.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Timer {
        /// Bully node timers.
        Bully(BullyTimer),
        /// Lease service timers (grant expiry).
        LeaseService(ServiceTimer),
        /// Lease-based leader timers.
        LeaseLeader(LeaderTimer),
        /// Redis instance timers (AOF fsync tick, delayed restart).
        RedisInstance(InstanceTimer),
        /// Lock client timers (inside workers and lease leaders).
        Client(ClientTimer),
        /// Worker loop timers.
        Worker(WorkerTimer),
        /// Lease candidate timers.
        LeaseCandidate(CandidateTimer),
        /// Raft replica timers (election, heartbeat, lease check).
        Raft(RaftTimer),
        /// A timer of one thread of a multi-threaded worker.
        Thread(ThreadTimer),
        /// A timer of a role defined outside this crate ([`crate::custom`]).
        Custom(Box<Opaque>),
    }
}

wrapper_enum! {
    /// Timers of the lock clients (one level under [`Timer::Client`]).
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum ClientTimer {
        /// Lease client timers.
        Lease(LeaseClientTimer),
        /// Single-instance Redis lock client timers.
        Redis(RedisClientTimer),
        /// Redlock client timers.
        Redlock(RedlockTimer),
        /// Raft lock client timers.
        Raft(RaftClientTimer),
    }
}

wraps_through!(Timer::Client(ClientTimer): LeaseClientTimer, RedisClientTimer, RedlockTimer, RaftClientTimer);

wrapper_enum! {
    /// The durable state of a node (what survives a crash, see `Context::persist`);
    /// `Nothing` for actors that keep nothing.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub enum Durable {
        /// Nothing survives.
        #[default]
        Nothing,
        /// Bully node: its term counter.
        Bully(BullyDurable),
        /// Lease service: its token counter.
        LeaseService(ServiceDurable),
        /// Redis instance: its persisted keyspace.
        Redis(RedisDurable),
        /// Storage: its highest token and applied jobs.
        Storage(StorageDurable),
        /// Raft replica: current term, vote and log.
        Raft(RaftDurable),
        /// A role defined outside this crate ([`crate::custom`]).
        Custom(Box<Opaque>),
    }
}

/// The engine context a custom actor's handlers get: the one every built-in role gets too.
pub type NodeCtx<'a> = Context<'a, Node>;

/// A custom protocol's actor behind a trait object ([`CustomNode`]); implemented for every
/// `Clone + Debug` type that is a [`Role`] in the composition's context. A role written
/// outside this crate is one of these ([`crate::custom`]).
pub trait CustomActor: Debug + Send + Sync {
    /// [`Role::on_start`].
    fn on_start(&mut self, ctx: &mut NodeCtx<'_>);
    /// [`Role::on_message`].
    fn on_message(&mut self, ctx: &mut NodeCtx<'_>, from: NodeId, msg: Msg);
    /// [`Role::on_timer`].
    fn on_timer(&mut self, ctx: &mut NodeCtx<'_>, timer: Timer);
    /// [`Role::on_restart`].
    fn on_restart(&mut self, ctx: &mut NodeCtx<'_>, durable: &Durable);
    /// A copy of the actor.
    fn clone_box(&self) -> Box<dyn CustomActor>;
}

impl<R> CustomActor for R
where
    R: for<'a> Role<NodeCtx<'a>> + Clone + Debug + Send + Sync + 'static,
{
    fn on_start(&mut self, ctx: &mut NodeCtx<'_>) {
        Role::on_start(self, ctx);
    }
    fn on_message(&mut self, ctx: &mut NodeCtx<'_>, from: NodeId, msg: Msg) {
        Role::on_message(self, ctx, from, msg);
    }
    fn on_timer(&mut self, ctx: &mut NodeCtx<'_>, timer: Timer) {
        Role::on_timer(self, ctx, timer);
    }
    fn on_restart(&mut self, ctx: &mut NodeCtx<'_>, durable: &Durable) {
        Role::on_restart(self, ctx, durable);
    }
    fn clone_box(&self) -> Box<dyn CustomActor> {
        Box::new(self.clone())
    }
}

/// A node playing a role defined outside this crate: its actor, and how the checkers read
/// what it observes.
#[derive(Debug)]
pub struct CustomNode {
    actor: Box<dyn CustomActor>,
    judged_as: JudgedAs,
}

impl CustomNode {
    /// A [`Node`] playing `actor`, judged as `judged_as`.
    pub fn node(actor: impl CustomActor + 'static, judged_as: JudgedAs) -> Node {
        Node::Custom(CustomNode {
            actor: Box::new(actor),
            judged_as,
        })
    }

    /// How the checkers read the node's observations.
    pub fn judged_as(&self) -> JudgedAs {
        self.judged_as
    }

    /// The actor.
    pub fn actor(&self) -> &dyn CustomActor {
        &*self.actor
    }
}

impl Clone for CustomNode {
    fn clone(&self) -> Self {
        CustomNode {
            actor: self.actor.clone_box(),
            judged_as: self.judged_as,
        }
    }
}

impl<'a> Role<NodeCtx<'a>> for CustomNode {
    fn on_start(&mut self, ctx: &mut NodeCtx<'a>) {
        self.actor.on_start(ctx);
    }
    fn on_message(&mut self, ctx: &mut NodeCtx<'a>, from: NodeId, msg: Msg) {
        self.actor.on_message(ctx, from, msg);
    }
    fn on_timer(&mut self, ctx: &mut NodeCtx<'a>, timer: Timer) {
        self.actor.on_timer(ctx, timer);
    }
    fn on_restart(&mut self, ctx: &mut NodeCtx<'a>, durable: &Durable) {
        self.actor.on_restart(ctx, durable);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages in flight are stored by value: a large variant makes every message large.
    #[test]
    fn a_message_is_two_words() {
        assert_eq!(std::mem::size_of::<Msg>(), 16);
    }

    #[test]
    fn a_boxed_message_wraps_and_unwraps_as_its_own_type() {
        let w = StorageMsg::Ack {
            req: 7,
            accepted: true,
            applied: true,
            highest: Some(3),
        };
        let m = Msg::from(w.clone());
        assert_eq!(Wraps::<StorageMsg>::part(&m), Some(&w));
        assert_eq!(Wraps::<BullyMsg>::part(&m), None);
        assert_eq!(Wraps::<StorageMsg>::into_part(m), Some(w));
    }
    use serde_json::{json, to_value};

    #[test]
    fn wrappers_serialize_as_the_trace_has_them() {
        assert_eq!(
            to_value(Msg::from(BullyMsg::Election { term: 2 })).unwrap(),
            json!({"bully": {"election": {"term": 2}}})
        );
        assert_eq!(
            to_value(Timer::from(BullyTimer::HeartbeatTick { term: 1 })).unwrap(),
            json!({"bully": {"heartbeat_tick": {"term": 1}}})
        );
        assert_eq!(
            to_value(Timer::from(LeaseClientTimer::Renew)).unwrap(),
            json!({"client": {"lease": "renew"}})
        );
        assert_eq!(
            to_value(Timer::from(RedlockTimer::Timeout { req: 83 })).unwrap(),
            json!({"client": {"redlock": {"timeout": {"req": 83}}}})
        );
        assert_eq!(
            to_value(Timer::from(WorkerTimer::Begin)).unwrap(),
            json!({"worker": "begin"})
        );
        assert_eq!(
            to_value(Timer::from(LeaderTimer::Retry)).unwrap(),
            json!({"lease_leader": "retry"})
        );
    }

    #[test]
    fn a_wrapper_gives_back_only_its_own_part() {
        let t = Timer::from(RedisClientTimer::Deadline);
        assert_eq!(
            t,
            Timer::Client(ClientTimer::Redis(RedisClientTimer::Deadline))
        );
        assert_eq!(
            Wraps::<RedisClientTimer>::part(&t),
            Some(&RedisClientTimer::Deadline)
        );
        assert_eq!(Wraps::<RedlockTimer>::part(&t), None);
        assert_eq!(Wraps::<LeaseClientTimer>::part(&t), None);
        assert_eq!(Wraps::<WorkerTimer>::part(&t), None);
        assert_eq!(Wraps::<BullyTimer>::into_part(t), None);

        let m = Msg::from(StorageMsg::Write {
            req: 1,
            token: Some(33),
            job: None,
            data: "x".into(),
        });
        assert_eq!(m.kind(), "WRITE");
        assert!(Wraps::<StorageMsg>::part(&m).is_some());
        assert_eq!(Wraps::<BullyMsg>::into_part(m.clone()), None);
        assert!(Wraps::<StorageMsg>::into_part(m).is_some());

        let d = Durable::from(BullyDurable { term: 4 });
        assert_eq!(
            Wraps::<BullyDurable>::part(&d),
            Some(&BullyDurable { term: 4 })
        );
        assert_eq!(Wraps::<BullyDurable>::part(&Durable::Nothing), None);
        assert_eq!(Wraps::<StorageDurable>::part(&d), None);
    }
}
