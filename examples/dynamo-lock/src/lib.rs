//! A protocol written outside splitbrain: a lock client that leases a row of a table by the
//! row's record version number, as the Amazon DynamoDB Lock Client does, and the table's
//! conditional writes. Nothing in splitbrain's own crates names this crate; [`roles`] adds its
//! two roles to the built-in ones and `src/main.rs` runs the whole splitbrain command line over
//! them, so its scenario files (`scenarios/`) use the nemesis, the checkers, sweeps, shrink,
//! charts and views as a built-in role's do.
//!
//! What is modelled, from awslabs/amazon-dynamodb-lock-client:
//! - A lock is one item of a table, keyed by the lock's name, holding its owner, its lease
//!   duration and a record version number (RVN). Acquiring writes the item with a conditional
//!   put: "the item does not exist, or its RVN is still the one I read" (README, "How we handle
//!   clock skew"; `AmazonDynamoDBLockClient.acquireLock`).
//! - The table stores no absolute time. A client that finds the item held reads its RVN and
//!   waits: "If the lock still has the same GUID after the lease duration time has passed, the
//!   client will determine that the lock is stale and expire it" (README, same section). It
//!   polls every `refresh_period` meanwhile (README, "Acquire lock with timeout": "poll
//!   DynamoDB every second").
//! - The holder heartbeats every `heartbeat_period` (README example: lease 10 s, heartbeat
//!   3 s), each heartbeat a conditional put that gives the item a new RVN
//!   (`sendHeartbeat`, `LockItem.updateRecordVersionNumber`).
//! - The holder's belief: `LockItem.isExpired()` is `now - lookupTime > leaseDuration`, on the
//!   client's monotonic clock (`LockClientUtils.millisecondTime`), `lookupTime` being the last
//!   successful acquire or heartbeat. Here `lookupTime` is the time the put was *sent*, the
//!   conservative end of the request.
//!
//! One departure, on purpose: the real RVN is a random UUID, which cannot order two holders.
//! This table numbers versions with a counter (a conditional `SET rvn = rvn + 1` would do it
//! in DynamoDB), so the client can hand its RVN to storage as a fencing token; with
//! `"fencing": true` storage then refuses a paused holder's stale write
//! (`scenarios/gc-pause-fenced.json`), and without it accepts it (`scenarios/gc-pause.json`).

use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};
use splitbrain_protocols::custom::{CustomMessage, CustomNode, CustomTimer, JudgedAs};
use splitbrain_protocols::storage::StorageMsg;
use splitbrain_protocols::{Ctx, Obs, Role, Wraps};
use splitbrain_scenario::checker::NodeCheck;
use splitbrain_scenario::duration::{or, Dur};
use splitbrain_scenario::role::{CheckedRole, Claims, ClockSpec, Role as SpecRole};
use splitbrain_scenario::roster::Roster;
use splitbrain_scenario::RoleRegistry;
use std::collections::BTreeMap;

/// The built-in roles plus this crate's: `dynamo_lock_table` ([`TableSpec`]) and
/// `dynamo_lock_client` ([`ClientSpec`]).
pub fn roles() -> RoleRegistry {
    RoleRegistry::builtin()
        .with::<TableSpec>("dynamo_lock_table")
        .with::<ClientSpec>("dynamo_lock_client")
}

// ---- the protocol ----

/// One lock item of the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The client that wrote it last.
    pub owner: NodeId,
    /// Its record version number (see the crate docs: a counter here).
    pub rvn: u64,
    /// The lease duration its owner wrote, ns of any client's clock.
    pub lease_ns: u64,
}

/// The table's messages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableMsg {
    /// Client -> table: read the item of `key` (`GetItem`, consistent read).
    Get {
        /// Request id, echoed.
        req: u64,
        /// The lock's name.
        key: String,
    },
    /// Table -> client: the item (`None`: no item).
    Item {
        /// Request id.
        req: u64,
        /// The item.
        item: Option<Item>,
    },
    /// Client -> table: a conditional write of `key`: applied only if the item's RVN is
    /// `expect` (`None`: only if there is no item). Writes the sender as owner with a new RVN,
    /// or deletes the item if `release`.
    Put {
        /// Request id.
        req: u64,
        /// The lock's name.
        key: String,
        /// The RVN the item must still have.
        expect: Option<u64>,
        /// Lease duration to store, ns.
        lease_ns: u64,
        /// Delete the item instead (`releaseLock`).
        release: bool,
    },
    /// Table -> client: whether the put applied, and the item's RVN after it.
    PutResult {
        /// Request id.
        req: u64,
        /// Whether the condition held.
        ok: bool,
        /// The new RVN (`None` after a release, or when refused).
        rvn: Option<u64>,
    },
}

impl CustomMessage for TableMsg {
    fn kind(&self) -> &'static str {
        match self {
            TableMsg::Get { .. } => "LOCK_GET",
            TableMsg::Item { .. } => "LOCK_ITEM",
            TableMsg::Put { .. } => "LOCK_PUT",
            TableMsg::PutResult { .. } => "LOCK_PUT_RESULT",
        }
    }
}

/// The client's timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientTimer {
    /// Start a round (`start_after`, and between rounds).
    Begin,
    /// Read the item again (`refresh_period`).
    Poll,
    /// Send a heartbeat (`heartbeat_period`).
    Heartbeat,
    /// The work is done: check the lease (`work_time` after acquiring).
    Check,
    /// Write to storage (right after the check).
    Write,
}

impl CustomTimer for ClientTimer {}

/// What the table's context must wrap.
pub trait TableCtx: Ctx<Msg: Wraps<TableMsg>> {}
impl<C: Ctx<Msg: Wraps<TableMsg>>> TableCtx for C {}

/// What the client's context must wrap.
pub trait ClientCtx:
    Ctx<Msg: Wraps<TableMsg> + Wraps<StorageMsg>, Timer: Wraps<ClientTimer>>
{
}
impl<C: Ctx<Msg: Wraps<TableMsg> + Wraps<StorageMsg>, Timer: Wraps<ClientTimer>>> ClientCtx for C {}

/// The lock table: conditional puts on items keyed by lock name. Its writes are the truth of
/// who holds a lock: it observes `lease_granted` (the RVN as token) when a put makes or keeps
/// a client the owner, and `lease_freed` when a release deletes the item. No item ever expires
/// by the table's clock: a lease ends only when another client's put takes the item over.
#[derive(Clone, Debug, Default)]
pub struct Table {
    items: BTreeMap<String, Item>,
    /// The last RVN handed out (the counter).
    rvn: u64,
}

impl<C: TableCtx> Role<C> for Table {
    fn on_start(&mut self, _ctx: &mut C) {}

    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(msg) = Wraps::<TableMsg>::into_part(msg) else {
            return;
        };
        match msg {
            TableMsg::Get { req, key } => {
                let item = self.items.get(&key).cloned();
                ctx.send(from, TableMsg::Item { req, item });
            }
            TableMsg::Put {
                req,
                key,
                expect,
                lease_ns,
                release,
            } => {
                let current = self.items.get(&key).map(|i| i.rvn);
                if current != expect {
                    ctx.send(
                        from,
                        TableMsg::PutResult {
                            req,
                            ok: false,
                            rvn: current,
                        },
                    );
                    return;
                }
                if release {
                    if let Some(old) = self.items.remove(&key) {
                        ctx.observe(Obs::LeaseFreed {
                            lease: key,
                            holder: old.owner,
                            token: old.rvn,
                            expired: false,
                        });
                    }
                    ctx.send(
                        from,
                        TableMsg::PutResult {
                            req,
                            ok: true,
                            rvn: None,
                        },
                    );
                    return;
                }
                self.rvn += 1;
                let rvn = self.rvn;
                self.items.insert(
                    key.clone(),
                    Item {
                        owner: from,
                        rvn,
                        lease_ns,
                    },
                );
                ctx.observe(Obs::LeaseGranted {
                    lease: key,
                    holder: from,
                    token: rvn,
                    ttl_ns: lease_ns,
                });
                ctx.send(
                    from,
                    TableMsg::PutResult {
                        req,
                        ok: true,
                        rvn: Some(rvn),
                    },
                );
            }
            TableMsg::Item { .. } | TableMsg::PutResult { .. } => {}
        }
    }

    fn on_timer(&mut self, _ctx: &mut C, _timer: C::Timer) {}

    /// The table is durable (DynamoDB): a restart here is not modelled, the items stay.
    fn on_restart(&mut self, _ctx: &mut C, _durable: &C::Durable) {}
}

/// The client's configuration (local monotonic durations of its own clock).
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The table.
    pub table: NodeId,
    /// The storage it writes to under the lock.
    pub storage: NodeId,
    /// The lock's name (the item's key).
    pub key: String,
    /// `leaseDuration`.
    pub lease: SimDuration,
    /// `heartbeatPeriod`.
    pub heartbeat: SimDuration,
    /// How often a waiting client reads the item again.
    pub refresh: SimDuration,
    /// Work between acquiring and the check before the write.
    pub work_time: SimDuration,
    /// Delay before the first round.
    pub start_after: SimDuration,
    /// Rounds of acquire, work, check, write, release.
    pub rounds: u32,
}

/// Where the client is in a round.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Waiting for the item; `seen`: the RVN first read and when (local).
    Reading {
        seen: Option<(u64, LocalTime)>,
    },
    /// A conditional put is in flight, sent at `sent`.
    Putting {
        sent: LocalTime,
        seen: Option<(u64, LocalTime)>,
    },
    /// Holding the lock with `rvn` since `lookup` (local).
    Holding {
        rvn: u64,
        lookup: LocalTime,
    },
    /// A write to storage is in flight under `rvn`.
    Writing {
        rvn: u64,
        lookup: LocalTime,
    },
    Done,
}

/// A DynamoDB-Lock-Client-style lock client driving one unit of work per round: acquire the
/// item, heartbeat while holding it, work, check `isExpired`, write to storage with the RVN as
/// token, release.
#[derive(Clone, Debug)]
pub struct Client {
    cfg: ClientConfig,
    phase: Phase,
    next_req: u64,
    rounds_done: u32,
    heartbeat: Option<TimerId>,
    /// A heartbeat put in flight, sent at this local time.
    beating: Option<LocalTime>,
}

impl Client {
    /// A client of `cfg`, idle.
    pub fn new(cfg: ClientConfig) -> Self {
        Client {
            cfg,
            phase: Phase::Idle,
            next_req: 1,
            rounds_done: 0,
            heartbeat: None,
            beating: None,
        }
    }

    fn req(&mut self) -> u64 {
        self.next_req += 1;
        self.next_req - 1
    }

    fn get(&mut self, ctx: &mut impl ClientCtx) {
        let req = self.req();
        ctx.send(
            self.cfg.table,
            TableMsg::Get {
                req,
                key: self.cfg.key.clone(),
            },
        );
    }

    fn put(&mut self, ctx: &mut impl ClientCtx, expect: Option<u64>, release: bool) {
        let req = self.req();
        ctx.send(
            self.cfg.table,
            TableMsg::Put {
                req,
                key: self.cfg.key.clone(),
                expect,
                lease_ns: self.cfg.lease.0,
                release,
            },
        );
    }

    fn begin(&mut self, ctx: &mut impl ClientCtx) {
        ctx.observe(Obs::LockRequested {
            lock: self.cfg.key.clone(),
            servers: vec![self.cfg.table],
            thread: None,
        });
        self.phase = Phase::Reading { seen: None };
        self.get(ctx);
    }

    /// The read came back: take a free item, take over one whose RVN has not changed for the
    /// lease duration, else poll again.
    fn on_item(&mut self, ctx: &mut impl ClientCtx, item: Option<Item>) {
        let Phase::Reading { seen } = self.phase.clone() else {
            return;
        };
        let now = ctx.mono_now();
        let (expect, seen) = match item {
            None => (None, None),
            Some(item) => match seen {
                Some((rvn, since)) if rvn == item.rvn => {
                    if now.saturating_since(since) < SimDuration(item.lease_ns) {
                        ctx.set_timer(self.cfg.refresh, ClientTimer::Poll);
                        return;
                    }
                    (Some(rvn), Some((rvn, since)))
                }
                _ => {
                    self.phase = Phase::Reading {
                        seen: Some((item.rvn, now)),
                    };
                    ctx.set_timer(self.cfg.refresh, ClientTimer::Poll);
                    return;
                }
            },
        };
        self.phase = Phase::Putting { sent: now, seen };
        self.put(ctx, expect, false);
    }

    fn on_put_result(&mut self, ctx: &mut impl ClientCtx, ok: bool, rvn: Option<u64>) {
        if let Some(sent) = self.beating.take() {
            self.on_heartbeat_result(ctx, sent, ok, rvn);
            return;
        }
        let Phase::Putting { sent, seen } = self.phase.clone() else {
            return;
        };
        match (ok, rvn) {
            (true, Some(rvn)) => {
                ctx.observe(Obs::LockAcquired {
                    lock: self.cfg.key.clone(),
                    token: Some(rvn),
                    value: rvn.to_string(),
                    valid_until_local: sent.saturating_add(self.cfg.lease),
                    thread: None,
                });
                self.phase = Phase::Holding { rvn, lookup: sent };
                self.heartbeat = Some(ctx.set_timer(self.cfg.heartbeat, ClientTimer::Heartbeat));
                ctx.set_timer(self.cfg.work_time, ClientTimer::Check);
            }
            _ => {
                // Someone else's put came first: read again, keeping what was seen if the
                // item is still the one being waited out.
                ctx.observe(Obs::LockFailed {
                    lock: self.cfg.key.clone(),
                    reason: "the conditional put found another record version".into(),
                    thread: None,
                });
                self.phase = Phase::Reading { seen };
                ctx.set_timer(self.cfg.refresh, ClientTimer::Poll);
            }
        }
    }

    fn send_heartbeat(&mut self, ctx: &mut impl ClientCtx) {
        let (Phase::Holding { rvn, .. } | Phase::Writing { rvn, .. }) = self.phase else {
            return;
        };
        self.beating = Some(ctx.mono_now());
        self.put(ctx, Some(rvn), false);
    }

    fn on_heartbeat_result(
        &mut self,
        ctx: &mut impl ClientCtx,
        sent: LocalTime,
        ok: bool,
        rvn: Option<u64>,
    ) {
        let held = match self.phase {
            Phase::Holding { .. } => true,
            Phase::Writing { .. } => false,
            _ => return,
        };
        match (ok, rvn) {
            (true, Some(rvn)) => {
                ctx.observe(Obs::LockRenewed {
                    lock: self.cfg.key.clone(),
                    token: Some(rvn),
                    valid_until_local: sent.saturating_add(self.cfg.lease),
                    thread: None,
                });
                self.phase = if held {
                    Phase::Holding { rvn, lookup: sent }
                } else {
                    Phase::Writing { rvn, lookup: sent }
                };
                self.heartbeat = Some(ctx.set_timer(self.cfg.heartbeat, ClientTimer::Heartbeat));
            }
            _ => {
                ctx.observe(Obs::LockLost {
                    lock: self.cfg.key.clone(),
                    reason: "a heartbeat found another record version: the lock was taken over"
                        .into(),
                    thread: None,
                });
                self.end_round(ctx);
            }
        }
    }

    /// `isExpired()` before the write: on time, write at once (a fault triggered by the
    /// observation lands between the check and the write, as in a GC pause).
    fn check(&mut self, ctx: &mut impl ClientCtx) {
        let Phase::Holding { rvn, lookup } = self.phase else {
            return;
        };
        let now = ctx.mono_now();
        let deadline = lookup.saturating_add(self.cfg.lease);
        let remaining = deadline.0 as i128 - now.0 as i128;
        let valid = remaining > 0;
        ctx.observe(Obs::ValidityChecked {
            lock: self.cfg.key.clone(),
            valid,
            remaining_ns: remaining.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
            thread: None,
        });
        if valid {
            self.phase = Phase::Writing { rvn, lookup };
            ctx.set_timer(SimDuration::ZERO, ClientTimer::Write);
        } else {
            ctx.observe(Obs::LockLost {
                lock: self.cfg.key.clone(),
                reason: "the lease duration passed since the last heartbeat".into(),
                thread: None,
            });
            self.end_round(ctx);
        }
    }

    fn write(&mut self, ctx: &mut impl ClientCtx) {
        let Phase::Writing { rvn, .. } = self.phase else {
            return;
        };
        let req = self.req();
        ctx.send(
            self.cfg.storage,
            StorageMsg::Write {
                req,
                token: Some(rvn),
                job: None,
                data: format!("{} round {}", ctx.name(), self.rounds_done + 1),
            },
        );
        ctx.observe(Obs::WriteSent {
            req,
            token: Some(rvn),
            job: None,
            thread: None,
        });
    }

    /// The write was acknowledged: release (a conditional delete) and end the round.
    fn on_ack(&mut self, ctx: &mut impl ClientCtx) {
        let Phase::Writing { rvn, .. } = self.phase else {
            return;
        };
        self.beating = None;
        self.put(ctx, Some(rvn), true);
        ctx.observe(Obs::LockReleased {
            lock: self.cfg.key.clone(),
            thread: None,
        });
        self.end_round(ctx);
    }

    fn end_round(&mut self, ctx: &mut impl ClientCtx) {
        if let Some(t) = self.heartbeat.take() {
            ctx.cancel_timer(t);
        }
        self.rounds_done += 1;
        if self.rounds_done < self.cfg.rounds {
            self.phase = Phase::Idle;
            ctx.set_timer(self.cfg.refresh, ClientTimer::Begin);
        } else {
            self.phase = Phase::Done;
        }
    }
}

impl<C: ClientCtx> Role<C> for Client {
    fn on_start(&mut self, ctx: &mut C) {
        if self.cfg.start_after == SimDuration::ZERO {
            self.begin(ctx);
        } else {
            ctx.set_timer(self.cfg.start_after, ClientTimer::Begin);
        }
    }

    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        if let Some(&StorageMsg::Ack { .. }) = Wraps::<StorageMsg>::part(&msg) {
            if from == self.cfg.storage {
                self.on_ack(ctx);
            }
            return;
        }
        match Wraps::<TableMsg>::into_part(msg) {
            Some(TableMsg::Item { item, .. }) => self.on_item(ctx, item),
            Some(TableMsg::PutResult { ok, rvn, .. }) => self.on_put_result(ctx, ok, rvn),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        let Some(timer) = Wraps::<ClientTimer>::into_part(timer) else {
            return;
        };
        match timer {
            ClientTimer::Begin => self.begin(ctx),
            ClientTimer::Poll => {
                if matches!(self.phase, Phase::Reading { .. }) {
                    self.get(ctx);
                }
            }
            ClientTimer::Heartbeat => self.send_heartbeat(ctx),
            ClientTimer::Check => self.check(ctx),
            ClientTimer::Write => self.write(ctx),
        }
    }

    /// A restarted client has lost its lock item and its round: it does nothing more.
    fn on_restart(&mut self, _ctx: &mut C, _durable: &C::Durable) {
        self.phase = Phase::Done;
        self.heartbeat = None;
        self.beating = None;
    }
}

// ---- the scenario roles ----

/// `"role": "dynamo_lock_table"`: the lock table.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Clocks (the table reads none).
    #[serde(default)]
    pub clock: ClockSpec,
}

impl SpecRole for TableSpec {
    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn validate(&self, _v: &mut NodeCheck<'_, '_>) {}

    fn observations(&self) -> &'static [&'static str] {
        &["lease_granted", "lease_freed"]
    }

    fn node(&self, _roster: &Roster) -> splitbrain_protocols::Node {
        CustomNode::node(Table::default(), JudgedAs::LockServer)
    }
    fn checked_as(&self) -> CheckedRole {
        JudgedAs::LockServer.into()
    }
}

/// `"role": "dynamo_lock_client"`: a lock client working under the lock.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// Clocks.
    #[serde(default)]
    pub clock: ClockSpec,
    /// The `dynamo_lock_table` node.
    pub table: String,
    /// The `storage` node it writes to.
    pub storage: String,
    /// The lock's name (default `"lock"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// `leaseDuration` (default 10 s, the README's example).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration: Option<Dur>,
    /// `heartbeatPeriod` (default 3 s, the README's example); below `lease_duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_period: Option<Dur>,
    /// How often a waiting client reads the item again (default 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_period: Option<Dur>,
    /// Work between acquiring and the check before the write (default 2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_time: Option<Dur>,
    /// Delay before the first round (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_after: Option<Dur>,
    /// Rounds (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
}

impl ClientSpec {
    /// The client's configuration, defaults applied, names resolved by `roster`.
    pub fn config(&self, roster: &Roster) -> ClientConfig {
        ClientConfig {
            table: roster.id(&self.table),
            storage: roster.id(&self.storage),
            key: self.lock.clone().unwrap_or_else(|| "lock".into()),
            lease: or(self.lease_duration, SimDuration::from_secs(10)),
            heartbeat: or(self.heartbeat_period, SimDuration::from_secs(3)),
            refresh: or(self.refresh_period, SimDuration::from_secs(1)),
            work_time: or(self.work_time, SimDuration::from_secs(2)),
            start_after: or(self.start_after, SimDuration::ZERO),
            rounds: self.rounds.unwrap_or(1),
        }
    }
}

impl SpecRole for ClientSpec {
    fn clock(&self) -> &ClockSpec {
        &self.clock
    }

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        v.node_ref("table", &self.table, &["dynamo_lock_table"]);
        v.node_ref("storage", &self.storage, &["storage"]);
        for (f, d) in [
            ("lease_duration", self.lease_duration),
            ("heartbeat_period", self.heartbeat_period),
            ("refresh_period", self.refresh_period),
            ("work_time", self.work_time),
        ] {
            v.positive(f, d);
        }
        let lease = or(self.lease_duration, SimDuration::from_secs(10));
        let beat = or(self.heartbeat_period, SimDuration::from_secs(3));
        if beat >= lease {
            v.err(
                "heartbeat_period",
                format!(
                    "heartbeat_period ({beat}) must be below lease_duration ({lease}): a \
                     heartbeat after the lease has run out comes too late"
                ),
            );
        }
        if self.rounds == Some(0) {
            v.err("rounds", "rounds must be at least 1");
        }
    }

    fn observations(&self) -> &'static [&'static str] {
        &[
            "lock_requested",
            "lock_acquired",
            "lock_renewed",
            "lock_failed",
            "lock_released",
            "lock_lost",
            "validity_checked",
            "write_sent",
        ]
    }

    fn node(&self, roster: &Roster) -> splitbrain_protocols::Node {
        CustomNode::node(Client::new(self.config(roster)), JudgedAs::LockClient)
    }
    fn checked_as(&self) -> CheckedRole {
        JudgedAs::LockClient.into()
    }

    /// A lock client whose writes carry its RVN as a fencing token.
    fn claims(&self) -> Claims {
        Claims {
            lock_client: true,
            writer: true,
            tokens: true,
            ..Claims::default()
        }
    }
}
