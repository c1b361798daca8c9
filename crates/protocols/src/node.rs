//! [`Node`]: the one actor type of a splitbrain simulation, an enum over every role.

use crate::bully::BullyNode;
use crate::durable::Durable;
use crate::lease::{LeaseLeader, LeaseService};
use crate::msg::Msg;
use crate::observation::Obs;
use crate::redis_instance::RedisInstance;
use crate::storage::FencedStorage;
use crate::timer::Timer;
use crate::worker::Worker;
use splitbrain_engine::{Actor, Context, NodeId};

/// The handler context every splitbrain actor gets.
pub type Ctx<'a> = Context<'a, Node>;

/// Every role a node can play.
#[derive(Clone, Debug)]
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
    /// A worker driving a lock client (lease, Redis or Redlock).
    Worker(Worker),
}

impl Actor for Node {
    type Msg = Msg;
    type Timer = Timer;
    type Obs = Obs;
    type Durable = Durable;

    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        match self {
            Node::Bully(a) => a.on_start(ctx),
            Node::LeaseService(a) => a.on_start(ctx),
            Node::LeaseLeader(a) => a.on_start(ctx),
            Node::RedisInstance(a) => a.on_start(ctx),
            Node::Storage(a) => a.on_start(ctx),
            Node::Worker(a) => a.on_start(ctx),
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_>, from: NodeId, msg: Msg) {
        match self {
            Node::Bully(a) => a.on_message(ctx, from, msg),
            Node::LeaseService(a) => a.on_message(ctx, from, msg),
            Node::LeaseLeader(a) => a.on_message(ctx, from, msg),
            Node::RedisInstance(a) => a.on_message(ctx, from, msg),
            Node::Storage(a) => a.on_message(ctx, from, msg),
            Node::Worker(a) => a.on_message(ctx, from, msg),
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, timer: Timer) {
        match self {
            Node::Bully(a) => a.on_timer(ctx, timer),
            Node::LeaseService(a) => a.on_timer(ctx, timer),
            Node::LeaseLeader(a) => a.on_timer(ctx, timer),
            Node::RedisInstance(a) => a.on_timer(ctx, timer),
            Node::Storage(a) => a.on_timer(ctx, timer),
            Node::Worker(a) => a.on_timer(ctx, timer),
        }
    }

    fn on_restart(&mut self, ctx: &mut Ctx<'_>, durable: &Durable) {
        match self {
            Node::Bully(a) => a.on_restart(ctx, durable),
            Node::LeaseService(a) => a.on_restart(ctx, durable),
            Node::LeaseLeader(a) => a.on_restart(ctx, durable),
            Node::RedisInstance(a) => a.on_restart(ctx, durable),
            Node::Storage(a) => a.on_restart(ctx, durable),
            Node::Worker(a) => a.on_restart(ctx, durable),
        }
    }
}
