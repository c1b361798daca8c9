//! Fenced storage: the resource a lock protects, checking fencing tokens on every write
//! (Kleppmann, "How to do distributed locking", 2016: the storage, not the client, must
//! reject a write whose token is lower than one it has already accepted).
//!
//! Rules, in this order:
//! 1. With `fencing: true` (the default), a write **without** a token is rejected with reason
//!    `"no fencing token"`. A lock that issues no monotonic token (a Redis lock, Redlock)
//!    cannot be fenced, and a client must never invent one (a random value or a timestamp is
//!    not ordered by grant): Kleppmann's point. So such writers cannot use fenced storage;
//!    put them on `fencing: false` storage to show what happens without fencing.
//! 2. With `fencing: true`, a write whose token is lower than the highest accepted so far is
//!    rejected with reason `"stale token"`. Equal tokens are accepted (one holder may write
//!    several times under one grant).
//! 3. A write with `job: Some(id)` whose job was already applied is accepted with
//!    `applied: false`: idempotent work, no second effect.
//! 4. Otherwise the write is accepted and applied. With `fencing: false` every write reaches
//!    this rule.
//!
//! The highest token counts accepted writes only (also with `fencing: false`, where it is
//! reported but never enforced). Every write is answered with an `Ack`. The highest token and
//! the applied job ids are durable: a restarted storage keeps fencing.

use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::NodeId;
use std::collections::BTreeSet;

/// Storage messages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageMsg {
    /// Client -> storage: apply `data`.
    Write {
        /// Request id, echoed in the ack.
        req: u64,
        /// Fencing token of the writer's lock, if it has one.
        token: Option<u64>,
        /// Job id, for idempotent work (`None`: every accepted write is a new effect).
        job: Option<u64>,
        /// Payload (free text, for narration).
        data: String,
    },
    /// Storage -> client: the outcome of a write.
    Ack {
        /// Request id of the write.
        req: u64,
        /// Whether the write was accepted.
        accepted: bool,
        /// Whether it had an effect (`false` if rejected, or a duplicate of an applied job).
        applied: bool,
        /// Highest token accepted so far (after this write).
        highest: Option<u64>,
    },
}

impl StorageMsg {
    /// The message kind for traces and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            StorageMsg::Write { .. } => "WRITE",
            StorageMsg::Ack { .. } => "WRITE_ACK",
        }
    }
}

/// What survives a crash of the storage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StorageDurable {
    /// Highest token accepted so far.
    pub highest: Option<u64>,
    /// Job ids already applied.
    pub applied_jobs: BTreeSet<u64>,
}

/// The context storage runs in: any composition whose messages and durable state wrap the
/// storage's own ([`StorageMsg`], [`StorageDurable`]). Storage sets no timers.
pub trait StorageCtx: Ctx<Msg: Wraps<StorageMsg>, Durable: Wraps<StorageDurable>> {}

impl<C: Ctx<Msg: Wraps<StorageMsg>, Durable: Wraps<StorageDurable>>> StorageCtx for C {}

/// Storage configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageConfig {
    /// Check fencing tokens (default `true`); `false` accepts every write.
    pub fencing: bool,
}

impl Default for StorageConfig {
    /// `fencing: true`.
    fn default() -> Self {
        StorageConfig { fencing: true }
    }
}

/// The storage actor.
#[derive(Clone, Debug)]
pub struct FencedStorage {
    cfg: StorageConfig,
    state: StorageDurable,
}

impl FencedStorage {
    /// Empty storage.
    pub fn new(cfg: StorageConfig) -> Self {
        FencedStorage {
            cfg,
            state: StorageDurable::default(),
        }
    }

    /// Highest token accepted so far.
    pub fn highest(&self) -> Option<u64> {
        self.state.highest
    }

    /// Job ids applied so far.
    pub fn applied_jobs(&self) -> &BTreeSet<u64> {
        &self.state.applied_jobs
    }
}

impl<C: StorageCtx> Role<C> for FencedStorage {
    /// Runs at true time 0.
    fn on_start(&mut self, ctx: &mut C) {
        ctx.persist(self.state.clone());
    }

    /// Handles a write.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(StorageMsg::Write {
            req, token, job, ..
        }) = msg.into_part()
        else {
            return;
        };
        let highest = self.state.highest;
        let reject = if !self.cfg.fencing {
            None
        } else {
            match (token, highest) {
                (None, _) => Some("no fencing token"),
                (Some(t), Some(h)) if t < h => Some("stale token"),
                _ => None,
            }
        };
        if let Some(reason) = reject {
            ctx.observe(Obs::WriteRejected {
                writer: from,
                token,
                highest,
                reason: reason.to_string(),
            });
            ctx.send(
                from,
                StorageMsg::Ack {
                    req,
                    accepted: false,
                    applied: false,
                    highest,
                },
            );
            return;
        }
        if let Some(t) = token {
            self.state.highest = Some(highest.map_or(t, |h| h.max(t)));
        }
        let applied = match job {
            Some(j) => self.state.applied_jobs.insert(j),
            None => true,
        };
        ctx.persist(self.state.clone());
        ctx.observe(Obs::WriteAccepted {
            writer: from,
            req,
            token,
            job,
            applied,
        });
        ctx.send(
            from,
            StorageMsg::Ack {
                req,
                accepted: true,
                applied,
                highest: self.state.highest,
            },
        );
    }

    /// Storage sets no timers.
    fn on_timer(&mut self, _ctx: &mut C, _timer: C::Timer) {}

    /// Rebuilds from durable state after a crash: highest token and applied jobs survive.
    fn on_restart(&mut self, _ctx: &mut C, durable: &C::Durable) {
        self.state = durable.part().cloned().unwrap_or_default();
    }
}
