//! A ZooKeeper client with its session, Curator's connection states, and the lock recipe, as
//! a pure state machine over [`ZkClientEnv`]; and the same client as one of the lock clients a
//! worker drives ([`ZkLock`]).
//!
//! **The ensemble.** The Raft replica group ([`super::replica`]) serves as the ensemble: the
//! leader orders every request through a majority, as Zab's leader does, and the data tree
//! is [`super::znode::ZnodeTree`]. Where Zab differs, and why the recipes cannot tell:
//! - Zab's leader is elected with the most recent history and syncs followers before it
//!   serves (Junqueira, Reed, Serafini, "Zab: High-performance broadcast for primary-backup
//!   systems", DSN 2011, §IV); Raft's election restriction (§5.4.1) and the new leader's no-op
//!   give the same guarantee a recipe relies on: a committed transaction is never lost and
//!   every server applies the same transactions in the same order.
//! - A ZooKeeper client talks to one server of its choice, which forwards writes to the
//!   leader and serves reads from its own copy (possibly behind: Programmer's Guide
//!   "Consistency Guarantees"); here every request goes to the leader and reads go through
//!   the log (linearizable). A recipe's waits are built on watches, which ZooKeeper orders
//!   with the reads of the same server, so the recipes do the same steps; only a client cut
//!   from the leader but not from a follower loses its connection here and would not in
//!   ZooKeeper (the lessons cut clients from every server).
//! - Watches are kept with the replicated tree and sent by whichever server leads; ZooKeeper
//!   keeps them on the connected server and re-registers them on reconnect (`SetWatches`,
//!   `ClientCnxn.SendThread.primeConnection`); either way a watch set before a change fires
//!   once after it.
//! - A session's expiry is leader-local and volatile (the lease machinery of
//!   [`super::replica`]): the leader expires a session that no ping touched for its timeout,
//!   checking every `lease_check_interval`, which plays ZooKeeper's `tickTime`
//!   (`SessionTrackerImpl`, `ExpiryQueue` rounds expiries up to the next tick). A new leader
//!   re-arms every session to `now + lease_promote_extend + timeout` (ZooKeeper's new leader
//!   adds every session with its full timeout: `lease_promote_extend` 0). Every request
//!   and every ping touches the session on the leader (`SessionTrackerImpl.touchSession`),
//!   so a client that counts any answer as life is never behind the ensemble's view by more
//!   than one request's round trip.
//!
//! **The client** (apache/zookeeper branch-3.8, `ClientCnxn`): after the session is
//! established, `readTimeout = negotiatedSessionTimeout * 2 / 3` (`onConnected`); the client
//! pings when it has sent nothing for `readTimeout / 2` (modelled: a ping every third of the
//! timeout); when nothing has been **received** for `readTimeout`, the connection is lost
//! ("Client session timed out, have not heard from server"): every outstanding request fails
//! with `CONNECTIONLOSS` and the client tries the next server (each attempt given
//! `connectTimeout = timeout / servers`). **A client learns that its session expired only
//! when it reconnects**: the server it reaches refuses the session (`onConnected` with a
//! timeout of 0: `Expired`). Connection loss is not expiry: a request that failed with
//! `CONNECTIONLOSS` may have been applied (Programmer's Guide, "Handling CONNECTION_LOSS").
//!
//! **Curator's connection states** (apache/curator, `ConnectionState`, `ConnectionStateManager`;
//! curator.apache.org "Error Handling"): `SUSPENDED` when the connection is lost,
//! `RECONNECTED` when it is re-established with the same session, `LOST` when the session has
//! expired — since Curator 3.0 also when the negotiated session timeout has elapsed since
//! `SUSPENDED` without a reconnection (`ConnectionStateManager.checkSessionExpiration`, which
//! then injects the expiry into the ZooKeeper handle; the next use makes a new session).
//!
//! **The lock recipe** (ZooKeeper "Recipes and Solutions", "Locks"; kazoo `recipe/lock.py`
//! `Lock`, whose calls the conformance test compares with the real library's; Curator
//! `LockInternals` / `StandardLockInternalsDriver`): make sure the lock's path exists
//! (`ensure_path`: `exists`, `create` if absent), create an ephemeral sequential node under
//! it, list the children; if no contender has a lower sequence number the lock is held;
//! otherwise `get` the next-lower node with a watch (no herd: only its successor hears of its
//! deletion) and list again when the watch fires. Release deletes the node. The fencing token
//! is the node's `czxid` (from the create's stat; a node found again by its GUID is read with
//! `exists`), which grows with every create and which fenced storage can check.
//! - **Protection** (`protection`, default on): the node's name starts with a GUID
//!   (Curator's `withProtection()`, `_c_<uuid>-`; kazoo always, `<uuid hex>__lock__`), so
//!   after a create that failed with `CONNECTIONLOSS` the recipe lists the children and takes
//!   the node with its GUID if the create was applied (kazoo `_find_node`, called whenever
//!   `create_tried` is set, which kazoo never resets; Curator `findProtectedNodeInForeground`;
//!   ZooKeeper's recipe: "If a recoverable error occurs calling create() the client should
//!   call getChildren() and check for a node containing the guid used in the path name").
//!   A node found under another session than the current one is not taken (Curator
//!   `ProtectedMode.validateFoundNode`, which compares the node's session with the client's):
//!   after Curator's LOST the client opens a new session while the ensemble may keep the old
//!   one, and its node, for up to a timeout more. (kazoo's `_find_node` has no such check; a
//!   kazoo client gets a new session only once the ensemble has expired the old one.)
//!   Without it (`protection: false`: a recipe that retries the create, as Curator's
//!   `RetryLoop` does for an unprotected create), a create applied before the connection was
//!   lost leaves an **orphan** node of the live session, lower than the retried one: the
//!   client waits for its own orphan, and so does every later contender, until the session
//!   ends.
//! - **What the holder does on `SUSPENDED`** (`on_suspended`): `give_up` (default) stops
//!   believing at once and deletes its node once reconnected (Curator "Error Handling": "If a
//!   SUSPENDED state is reported you cannot be certain that you still hold the lock unless you
//!   subsequently receive a RECONNECTED state"; `StandardConnectionStateErrorPolicy`); its
//!   belief's deadline is when the connection would be declared lost (last receipt +
//!   `readTimeout`). `hold_until_lost` keeps the lock through `SUSPENDED` and stops at `LOST`
//!   (what an application that only handles `LOST`, or Curator's
//!   `SessionConnectionStateErrorPolicy`, does; Curator Tech Note 10): the ensemble expires
//!   the session one timeout after the last ping it heard, while `LOST` comes one timeout
//!   after `SUSPENDED`, itself two thirds of a timeout after the last receipt.
//!
//! Not modelled: ACLs, node data, `setData`, multi, read-only mode, chroot, Curator's
//! retry-policy sleeps (a retry waits for the reconnection), `acquire` timeouts.

use super::client::RaftClientTimer;
use super::msg::RaftMsg;
use super::znode::{SessionId, ZkError, ZkEventType, ZkOp, ZkResult};
use crate::context::{Ctx, Wraps};
use crate::lock_event::LockEvent;
use crate::observation::Obs;
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};

/// What the lock holder does when the connection is `SUSPENDED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnSuspended {
    /// Stop believing at once (default; Curator's advice).
    #[default]
    GiveUp,
    /// Keep the lock until `LOST`.
    HoldUntilLost,
}

/// How a ZooKeeper lock client behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkLockConfig {
    /// The ensemble's servers, tried in this order from the first.
    pub servers: Vec<NodeId>,
    /// The lock's name; the lock's path is `"/" + name`.
    pub lock: String,
    /// The requested session timeout, ns (the ensemble clamps it to `[2, 20] x tickTime`).
    pub session_timeout: SimDuration,
    /// Put the GUID in the node's name and look for it after a lost create reply.
    pub protection: bool,
    /// What the holder does on `SUSPENDED`.
    pub on_suspended: OnSuspended,
    /// This client's GUID (kazoo draws `uuid4().hex`; only its uniqueness matters).
    pub guid: String,
}

/// One call of the recipe on the client API, with its path as the recipe wrote it (the own
/// node's GUID written `{guid}`, sequence numbers `{seq}`): what the conformance test
/// compares with kazoo's `Lock`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipeCall {
    /// kazoo's method name: `ensure_path`, `create`, `get_children`, `get`, `exists`, `delete`.
    pub method: &'static str,
    /// The path, normalized.
    pub path: String,
}

/// What the client claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkObs {
    /// The lock is held with token `czxid`.
    Acquired {
        /// The node's czxid.
        czxid: u64,
        /// The session.
        session: SessionId,
        /// Local deadline of the belief.
        deadline: LocalTime,
    },
    /// A ping reply moved the holder's deadline.
    Extended {
        /// The new deadline.
        deadline: LocalTime,
    },
    /// The acquisition failed.
    Failed {
        /// Why.
        reason: &'static str,
    },
    /// The holder stopped believing.
    Lost {
        /// Why.
        reason: &'static str,
    },
    /// The holder released.
    Released,
}

/// The client's effects.
pub trait ZkClientEnv {
    /// A handle to a pending timer.
    type TimerHandle: Copy;
    /// Sends `msg` to `to`.
    fn send(&mut self, to: NodeId, msg: RaftMsg);
    /// Sets `timer` to fire after `after` of the client's monotonic clock.
    fn set_timer(&mut self, after: SimDuration, timer: RaftClientTimer) -> Self::TimerHandle;
    /// Cancels a pending timer.
    fn cancel_timer(&mut self, handle: Self::TimerHandle);
    /// The client's monotonic clock now.
    fn mono_now(&self) -> LocalTime;
    /// Reports a claim.
    fn observe(&mut self, obs: ZkObs);
}

/// The connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conn {
    /// No session.
    Closed,
    /// `ZkConnect` outstanding.
    Connecting { req: u64 },
    /// Connected to the session.
    Connected,
    /// Lost (`SUSPENDED`) since `since`; `req`: the reconnect attempt outstanding.
    Suspended { since: LocalTime, req: u64 },
}

/// Where the recipe stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// `ensure_path`: `exists(path)`.
    EnsureExists,
    /// `ensure_path`: `create(path)`.
    EnsureCreate,
    /// `_find_node`: `get_children(path)`.
    FindNode,
    /// `create(path/prefix, ephemeral, sequence)`.
    Creating,
    /// `exists(own)` for the czxid of a node found by its GUID.
    OwnStat,
    /// `_get_predecessor`: `get_children(path)`.
    Listing,
    /// `get(pred, watch)` outstanding; `fired`: its deletion's event came first.
    WatchPred {
        pred: String,
        fired: bool,
    },
    /// The watch on `pred` is set: waiting for its event.
    Waiting {
        pred: String,
    },
    /// The lock is held (and believed).
    Holding,
    /// `delete(own)`; `then`: acquire again once done.
    Releasing,
}

/// A ZooKeeper client with the lock recipe. `H` is the environment's timer handle type.
#[derive(Clone, Debug)]
pub struct ZkLockClient<H> {
    cfg: ZkLockConfig,
    target: usize,
    next_req: u64,
    conn: Conn,
    session: Option<(SessionId, SimDuration)>,
    last_recv: LocalTime,
    ping: Option<u64>,
    phase: Phase,
    /// The outstanding recipe request (sent while connected).
    pending: Option<u64>,
    /// kazoo's `assured_path`.
    assured: bool,
    /// kazoo's `create_tried` (never reset, as kazoo's).
    create_tried: bool,
    node: Option<String>,
    czxid: u64,
    then_acquire: bool,
    calls: Vec<RecipeCall>,
    retry: Option<H>,
    ping_timer: Option<H>,
    deadline: Option<H>,
}

fn seq_of(name: &str) -> Option<u64> {
    let tail = name.get(name.len().checked_sub(10)?..)?;
    let prefix = &name[..name.len() - 10];
    if prefix.ends_with("__lock__") && tail.bytes().all(|b| b.is_ascii_digit()) {
        tail.parse().ok()
    } else {
        None
    }
}

impl<H: Copy> ZkLockClient<H> {
    /// An idle client with no session. Panics on an empty server list (validated first).
    pub fn new(cfg: ZkLockConfig) -> Self {
        assert!(!cfg.servers.is_empty(), "a ZooKeeper client needs servers");
        ZkLockClient {
            cfg,
            target: 0,
            next_req: 1,
            conn: Conn::Closed,
            session: None,
            last_recv: LocalTime(0),
            ping: None,
            phase: Phase::Idle,
            pending: None,
            assured: false,
            create_tried: false,
            node: None,
            czxid: 0,
            then_acquire: false,
            calls: Vec::new(),
            retry: None,
            ping_timer: None,
            deadline: None,
        }
    }

    /// The lock's path.
    pub fn path(&self) -> String {
        format!("/{}", self.cfg.lock)
    }

    fn prefix(&self) -> String {
        if self.cfg.protection {
            format!("{}__lock__", self.cfg.guid)
        } else {
            "__lock__".to_string()
        }
    }

    /// The recipe's calls so far.
    pub fn calls(&self) -> &[RecipeCall] {
        &self.calls
    }

    /// The token (czxid) and local deadline while the lock is believed held.
    pub fn hold(&self) -> Option<(u64, LocalTime)> {
        (self.phase == Phase::Holding).then(|| (self.czxid, self.belief_deadline()))
    }

    /// True while no acquisition or release is under way.
    pub fn is_idle(&self) -> bool {
        self.phase == Phase::Idle
    }

    /// The connection's state in kazoo's and Curator's words: `CONNECTING` (no session yet),
    /// `CONNECTED` (also after a reconnection: Curator's `RECONNECTED`), `SUSPENDED`, `LOST`
    /// (no session: expired, or never opened).
    pub fn state(&self) -> &'static str {
        match self.conn {
            Conn::Closed => "LOST",
            Conn::Connecting { .. } => "CONNECTING",
            Conn::Connected => "CONNECTED",
            Conn::Suspended { .. } => "SUSPENDED",
        }
    }

    /// The session, if the client has one.
    pub fn session(&self) -> Option<SessionId> {
        self.session.map(|s| s.0)
    }

    fn timeout(&self) -> SimDuration {
        self.session.map_or(self.cfg.session_timeout, |s| s.1)
    }

    /// `readTimeout`: two thirds of the negotiated timeout.
    fn read_timeout(&self) -> SimDuration {
        SimDuration(self.timeout().0 / 3 * 2)
    }

    fn belief_deadline(&self) -> LocalTime {
        let t = self.timeout();
        match (self.cfg.on_suspended, self.conn) {
            (OnSuspended::GiveUp, _) => self.last_recv.saturating_add(self.read_timeout()),
            (OnSuspended::HoldUntilLost, Conn::Suspended { since, .. }) => since.saturating_add(t),
            (OnSuspended::HoldUntilLost, _) => self
                .last_recv
                .saturating_add(self.read_timeout())
                .saturating_add(t),
        }
    }

    fn fresh_req(&mut self) -> u64 {
        let r = self.next_req;
        self.next_req += 1;
        r
    }

    /// Logs a call, its path normalized as the recorder writes kazoo's: any contender's GUID
    /// (the part of a lock node's name before `__lock__`) as `{guid}`, a sequence number as
    /// `{seq}`.
    fn call(&mut self, method: &'static str, path: &str) {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let mut name = match name.split_once("__lock__") {
            Some((guid, rest)) if !guid.is_empty() => format!("{{guid}}__lock__{rest}"),
            _ => name.to_string(),
        };
        if seq_of(&name).is_some() {
            name.truncate(name.len() - 10);
            name.push_str("{seq}");
        }
        self.calls.push(RecipeCall {
            method,
            path: format!("{dir}/{name}"),
        });
    }

    /// Starts an acquisition (ignored unless idle; queued behind a release under way).
    pub fn acquire<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        match self.phase {
            Phase::Idle => {
                self.phase = if self.assured {
                    if self.cfg.protection && self.create_tried {
                        Phase::FindNode
                    } else {
                        Phase::Creating
                    }
                } else {
                    Phase::EnsureExists
                };
                if self.phase == Phase::EnsureExists {
                    let p = self.path();
                    self.call("ensure_path", &p);
                }
                match self.conn {
                    Conn::Closed => self.connect(env),
                    Conn::Connected => self.step(env),
                    // The step runs once connected.
                    Conn::Connecting { .. } | Conn::Suspended { .. } => {}
                }
            }
            Phase::Releasing => self.then_acquire = true,
            _ => {}
        }
    }

    /// Releases (the holder stops acting at once) and deletes the node.
    pub fn release<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if self.phase == Phase::Holding {
            env.observe(ZkObs::Released);
            self.phase = Phase::Releasing;
            if self.conn == Conn::Connected {
                self.step(env);
            }
        }
    }

    /// Sends the current phase's request (connected only).
    fn step<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let path = self.path();
        let own = self.node.as_ref().map(|n| format!("{path}/{n}"));
        let op = match &self.phase {
            Phase::Idle | Phase::Holding | Phase::Waiting { .. } => return,
            Phase::EnsureExists => ZkOp::Exists { path, watch: false },
            Phase::EnsureCreate => ZkOp::Create {
                path,
                ephemeral: false,
                sequential: false,
            },
            Phase::FindNode => {
                self.call("get_children", &path);
                ZkOp::GetChildren { path, watch: false }
            }
            Phase::Creating => {
                self.create_tried = true;
                let p = format!("{path}/{}", self.prefix());
                self.call("create", &p);
                ZkOp::Create {
                    path: p,
                    ephemeral: true,
                    sequential: true,
                }
            }
            Phase::OwnStat => {
                let own = own.expect("a found node");
                self.call("exists", &own);
                ZkOp::Exists {
                    path: own,
                    watch: false,
                }
            }
            Phase::Listing => {
                self.call("get_children", &path);
                ZkOp::GetChildren { path, watch: false }
            }
            Phase::WatchPred { pred, .. } => {
                let p = format!("{path}/{pred}");
                self.call("get", &p);
                ZkOp::GetData {
                    path: p,
                    watch: true,
                }
            }
            Phase::Releasing => {
                let Some(own) = own else {
                    self.released(env);
                    return;
                };
                self.call("delete", &own);
                ZkOp::Delete {
                    path: own,
                    version: -1,
                }
            }
        };
        let req = self.fresh_req();
        self.pending = Some(req);
        let session = self.session.map_or(0, |s| s.0);
        env.send(
            self.cfg.servers[self.target],
            RaftMsg::ZkRequest { req, session, op },
        );
    }

    fn released<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.node = None;
        self.phase = Phase::Idle;
        if std::mem::take(&mut self.then_acquire) {
            self.acquire(env);
        }
    }

    /// Opens a new session at the current server.
    fn connect<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let req = self.fresh_req();
        self.conn = Conn::Connecting { req };
        self.send_connect(env);
    }

    fn connect_timeout(&self) -> SimDuration {
        SimDuration((self.timeout().0 / self.cfg.servers.len() as u64).max(1))
    }

    fn send_connect<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        let to = self.cfg.servers[self.target];
        match self.conn {
            Conn::Connecting { req } => env.send(
                to,
                RaftMsg::ZkConnect {
                    req,
                    timeout: self.cfg.session_timeout,
                },
            ),
            Conn::Suspended { req, .. } => {
                let lease = self.session.map_or(0, |s| s.0);
                env.send(to, RaftMsg::KeepAlive { req, lease });
            }
            _ => return,
        }
        if let Some(t) = self.retry.take() {
            env.cancel_timer(t);
        }
        let after = self.connect_timeout();
        self.retry = Some(env.set_timer(after, RaftClientTimer::Retry));
    }

    /// A timer came due.
    pub fn on_timer<E: ZkClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        timer: RaftClientTimer,
    ) {
        match timer {
            RaftClientTimer::Retry => {
                self.retry = None;
                self.target = (self.target + 1) % self.cfg.servers.len();
                if let Conn::Suspended { since, .. } = self.conn {
                    let req = self.fresh_req();
                    self.conn = Conn::Suspended { since, req };
                } else if let Conn::Connecting { .. } = self.conn {
                    let req = self.fresh_req();
                    self.conn = Conn::Connecting { req };
                }
                self.send_connect(env);
            }
            RaftClientTimer::KeepAlive => {
                self.ping_timer = None;
                if self.conn != Conn::Connected {
                    return;
                }
                let req = self.fresh_req();
                self.ping = Some(req);
                let lease = self.session.map_or(0, |s| s.0);
                env.send(
                    self.cfg.servers[self.target],
                    RaftMsg::KeepAlive { req, lease },
                );
                let every = SimDuration((self.timeout().0 / 3).max(1));
                self.ping_timer = Some(env.set_timer(every, RaftClientTimer::KeepAlive));
            }
            RaftClientTimer::Deadline => {
                self.deadline = None;
                let now = env.mono_now();
                match self.conn {
                    Conn::Connected => {
                        if now >= self.last_recv.saturating_add(self.read_timeout()) {
                            self.suspend(env, now);
                        } else {
                            self.arm_deadline(env);
                        }
                    }
                    Conn::Suspended { since, .. } => {
                        if now >= since.saturating_add(self.timeout()) {
                            self.lost(
                                env,
                                "connection LOST (session timeout elapsed since SUSPENDED)",
                            );
                        } else {
                            self.arm_deadline(env);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Re-arms the connection-state timer: the read timeout while connected, Curator's LOST
    /// while suspended.
    fn arm_deadline<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        if let Some(t) = self.deadline.take() {
            env.cancel_timer(t);
        }
        let at = match self.conn {
            Conn::Connected => self.last_recv.saturating_add(self.read_timeout()),
            Conn::Suspended { since, .. } => since.saturating_add(self.timeout()),
            _ => return,
        };
        let after = at.saturating_since(env.mono_now());
        self.deadline = Some(env.set_timer(after, RaftClientTimer::Deadline));
    }

    /// The connection is lost: `SUSPENDED`. The outstanding request fails with
    /// `CONNECTIONLOSS`; the client tries the next server with its session.
    fn suspend<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E, now: LocalTime) {
        self.pending = None;
        self.ping = None;
        if let Some(t) = self.ping_timer.take() {
            env.cancel_timer(t);
        }
        if let Phase::Waiting { pred } = &self.phase {
            // kazoo's `_watch_session` wakes the waiter on any state change: it lists again
            // once reconnected.
            let _ = pred;
            self.phase = Phase::Listing;
        }
        if let Phase::WatchPred { .. } = self.phase {
            self.phase = Phase::Listing;
        }
        if self.phase == Phase::Holding && self.cfg.on_suspended == OnSuspended::GiveUp {
            env.observe(ZkObs::Lost {
                reason: "connection SUSPENDED (nothing heard for 2/3 of the session timeout)",
            });
            self.phase = Phase::Releasing;
        }
        self.target = (self.target + 1) % self.cfg.servers.len();
        let req = self.fresh_req();
        self.conn = Conn::Suspended { since: now, req };
        self.send_connect(env);
        self.arm_deadline(env);
    }

    /// `LOST`: the session is gone (expired, or given up by Curator).
    fn lost<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E, reason: &'static str) {
        for t in [
            self.retry.take(),
            self.ping_timer.take(),
            self.deadline.take(),
        ]
        .into_iter()
        .flatten()
        {
            env.cancel_timer(t);
        }
        self.conn = Conn::Closed;
        self.session = None;
        self.pending = None;
        self.ping = None;
        match self.phase {
            Phase::Idle => {}
            Phase::Holding => {
                env.observe(ZkObs::Lost { reason });
                self.released(env);
            }
            Phase::Releasing => self.released(env),
            _ => {
                self.node = None;
                self.phase = Phase::Idle;
                env.observe(ZkObs::Failed { reason });
            }
        }
    }

    fn connected<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E, from: NodeId) {
        if let Some(t) = self.retry.take() {
            env.cancel_timer(t);
        }
        if let Some(i) = self.cfg.servers.iter().position(|s| *s == from) {
            self.target = i;
        }
        let was_suspended = matches!(self.conn, Conn::Suspended { .. });
        self.conn = Conn::Connected;
        self.last_recv = env.mono_now();
        self.arm_deadline(env);
        let every = SimDuration((self.timeout().0 / 3).max(1));
        if let Some(t) = self.ping_timer.take() {
            env.cancel_timer(t);
        }
        self.ping_timer = Some(env.set_timer(every, RaftClientTimer::KeepAlive));
        if was_suspended && self.phase == Phase::Creating && self.cfg.protection {
            // The create may have been applied: look for the node with our GUID.
            self.phase = Phase::FindNode;
        }
        self.step(env);
    }

    /// A message from a server.
    pub fn on_message<E: ZkClientEnv<TimerHandle = H>>(
        &mut self,
        env: &mut E,
        from: NodeId,
        msg: RaftMsg,
    ) {
        match msg {
            RaftMsg::ZkConnected {
                req,
                session,
                timeout,
                ..
            } if self.conn == (Conn::Connecting { req }) => {
                self.session = Some((session, timeout));
                self.connected(env, from);
            }
            RaftMsg::KeptAlive { req, .. } => {
                if matches!(self.conn, Conn::Suspended { req: r, .. } if r == req) {
                    self.connected(env, from);
                } else if self.conn == Conn::Connected && self.ping == Some(req) {
                    self.ping = None;
                    self.heard(env);
                    if self.phase == Phase::Holding {
                        let deadline = self.belief_deadline();
                        env.observe(ZkObs::Extended { deadline });
                    }
                }
            }
            RaftMsg::LeaseNotFound { req, .. } => {
                let reconnecting = matches!(self.conn, Conn::Suspended { req: r, .. } if r == req);
                if reconnecting || (self.conn == Conn::Connected && self.ping == Some(req)) {
                    self.lost(env, "session expired (the ensemble refused it)");
                }
            }
            RaftMsg::Redirect { req, leader_hint } => {
                let hint = leader_hint.and_then(|h| self.cfg.servers.iter().position(|s| *s == h));
                match self.conn {
                    Conn::Connecting { req: r } | Conn::Suspended { req: r, .. } if r == req => {
                        if let Some(i) = hint {
                            self.target = i;
                            let req = self.fresh_req();
                            self.conn = match self.conn {
                                Conn::Suspended { since, .. } => Conn::Suspended { since, req },
                                _ => Conn::Connecting { req },
                            };
                            self.send_connect(env);
                        }
                    }
                    Conn::Connected if self.pending == Some(req) || self.ping == Some(req) => {
                        // The server no longer leads: it drops its clients' connections.
                        let now = env.mono_now();
                        self.suspend(env, now);
                        if let Some(i) = hint {
                            self.target = i;
                            let req = self.fresh_req();
                            if let Conn::Suspended { since, .. } = self.conn {
                                self.conn = Conn::Suspended { since, req };
                            }
                            self.send_connect(env);
                        }
                    }
                    _ => {}
                }
            }
            RaftMsg::ZkReply { req, result, .. } if self.pending == Some(req) => {
                self.pending = None;
                self.heard(env);
                self.on_result(env, result);
            }
            RaftMsg::ZkWatchEvent {
                session,
                path,
                event: ZkEventType::NodeDeleted,
            } if Some(session) == self.session() => {
                let base = self.path();
                match &mut self.phase {
                    Phase::Waiting { pred } if format!("{base}/{pred}") == path => {
                        self.phase = Phase::Listing;
                        if self.conn == Conn::Connected {
                            self.step(env);
                        }
                    }
                    Phase::WatchPred { pred, fired } if format!("{base}/{pred}") == path => {
                        *fired = true;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn heard<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.last_recv = env.mono_now();
        self.arm_deadline(env);
    }

    /// The answer to the outstanding recipe request, taken by phase: the next request, the
    /// hold, or a start over. Long because it is the recipe's one table of (phase, answer)
    /// steps, kept in one place so each step reads beside its neighbours.
    fn on_result<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E, result: ZkResult) {
        let expired = ZkResult::Error {
            code: ZkError::SessionExpired,
        };
        if result == expired {
            self.lost(env, "session expired (the ensemble refused a request)");
            return;
        }
        match (&self.phase, result) {
            (Phase::EnsureExists, ZkResult::Exists { stat }) => {
                if stat.is_some() {
                    self.assured = true;
                    self.phase = self.after_ensure();
                } else {
                    self.phase = Phase::EnsureCreate;
                }
                self.step(env);
            }
            (Phase::EnsureCreate, _) => {
                self.assured = true;
                self.phase = self.after_ensure();
                self.step(env);
            }
            (Phase::FindNode, ZkResult::Children { children }) => {
                let prefix = self.prefix();
                match children.into_iter().find(|c| c.starts_with(&prefix)) {
                    Some(n) => {
                        self.node = Some(n);
                        self.phase = Phase::OwnStat;
                    }
                    None => self.phase = Phase::Creating,
                }
                self.step(env);
            }
            (Phase::Creating, ZkResult::Created { path, stat }) => {
                self.node = path.rsplit('/').next().map(str::to_string);
                self.czxid = stat.czxid;
                self.phase = Phase::Listing;
                self.step(env);
            }
            (Phase::OwnStat, ZkResult::Exists { stat }) => {
                // Curator's owner check (`ProtectedMode.validateFoundNode`): a node found by
                // its GUID under another session than the current one is not adopted. After
                // Curator's own LOST (a session timeout after SUSPENDED) the client opens a
                // new session while the ensemble may still keep the old one (a new leader
                // re-arms every session for a full timeout), so the old node outlives the
                // belief; the ensemble deletes it when that session expires.
                match stat.filter(|s| Some(s.ephemeral_owner) == self.session()) {
                    Some(s) => {
                        self.czxid = s.czxid;
                        self.phase = Phase::Listing;
                    }
                    None => {
                        self.node = None;
                        self.phase = Phase::Creating;
                    }
                }
                self.step(env);
            }
            (Phase::Listing, ZkResult::Children { children }) => {
                let own = self.node.clone().unwrap_or_default();
                let Some(mine) = seq_of(&own).filter(|_| children.contains(&own)) else {
                    // kazoo's ForceRetryError: our node is gone; start over.
                    self.node = None;
                    self.phase = if self.cfg.protection {
                        Phase::FindNode
                    } else {
                        Phase::Creating
                    };
                    self.step(env);
                    return;
                };
                let pred = children
                    .into_iter()
                    .filter_map(|c| seq_of(&c).map(|s| (s, c)))
                    .filter(|(s, _)| *s < mine)
                    .max();
                match pred {
                    None => self.locked(env),
                    Some((_, pred)) => {
                        self.phase = Phase::WatchPred { pred, fired: false };
                        self.step(env);
                    }
                }
            }
            (Phase::WatchPred { pred, fired }, r) => {
                let gone = *fired || !matches!(r, ZkResult::Data { .. });
                if gone {
                    self.phase = Phase::Listing;
                    self.step(env);
                } else {
                    self.phase = Phase::Waiting { pred: pred.clone() };
                }
            }
            (Phase::Releasing, _) => self.released(env),
            // Any other answer (an error where none is expected): start over from the list.
            (_, _) => {}
        }
    }

    fn after_ensure(&self) -> Phase {
        if self.cfg.protection && self.create_tried {
            Phase::FindNode
        } else {
            Phase::Creating
        }
    }

    fn locked<E: ZkClientEnv<TimerHandle = H>>(&mut self, env: &mut E) {
        self.phase = Phase::Holding;
        env.observe(ZkObs::Acquired {
            czxid: self.czxid,
            session: self.session().unwrap_or(0),
            deadline: self.belief_deadline(),
        });
    }

    /// Forgets all volatile state (the owning node crashed; the engine dropped its timers).
    /// Request ids keep counting; the session stays with the ensemble until it expires.
    pub fn reset(&mut self) {
        let next_req = self.next_req;
        let calls = std::mem::take(&mut self.calls);
        *self = ZkLockClient::new(self.cfg.clone());
        self.next_req = next_req;
        self.calls = calls;
    }
}

/// The context a ZooKeeper lock client runs in (the Raft lock client's).
pub trait ZkLockCtx: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftClientTimer>> {}

impl<C: Ctx<Msg: Wraps<RaftMsg>, Timer: Wraps<RaftClientTimer>>> ZkLockCtx for C {}

struct Env<'a, C> {
    ctx: &'a mut C,
    lock: &'a str,
    event: Option<LockEvent>,
    czxid: u64,
}

impl<C: ZkLockCtx> ZkClientEnv for Env<'_, C> {
    type TimerHandle = TimerId;
    #[inline]
    fn send(&mut self, to: NodeId, msg: RaftMsg) {
        self.ctx.send(to, msg);
    }
    #[inline]
    fn set_timer(&mut self, after: SimDuration, timer: RaftClientTimer) -> TimerId {
        self.ctx.set_timer(after, timer)
    }
    #[inline]
    fn cancel_timer(&mut self, handle: TimerId) {
        self.ctx.cancel_timer(handle);
    }
    #[inline]
    fn mono_now(&self) -> LocalTime {
        self.ctx.mono_now()
    }
    fn observe(&mut self, obs: ZkObs) {
        let lock = self.lock.to_string();
        let (o, ev) = match obs {
            ZkObs::Acquired {
                czxid,
                session,
                deadline,
            } => (
                Obs::LockAcquired {
                    thread: None,
                    lock,
                    token: Some(czxid),
                    value: format!("session {session:x}"),
                    valid_until_local: deadline,
                },
                LockEvent::Acquired {
                    token: Some(czxid),
                    valid_until_local: deadline,
                },
            ),
            ZkObs::Extended { deadline } => (
                Obs::LockRenewed {
                    thread: None,
                    lock,
                    token: Some(self.czxid),
                    valid_until_local: deadline,
                },
                LockEvent::Extended {
                    valid_until_local: deadline,
                },
            ),
            ZkObs::Failed { reason } => (
                Obs::LockFailed {
                    thread: None,
                    lock,
                    reason: reason.to_string(),
                },
                LockEvent::Failed,
            ),
            ZkObs::Lost { reason } => (
                Obs::LockLost {
                    thread: None,
                    lock,
                    reason: reason.to_string(),
                },
                LockEvent::Lost,
            ),
            ZkObs::Released => (
                Obs::LockReleased { thread: None, lock },
                LockEvent::Released,
            ),
        };
        self.ctx.observe(o);
        self.event = Some(ev);
    }
}

/// A ZooKeeper lock client for a worker (module doc).
#[derive(Clone, Debug)]
pub struct ZkLock {
    client: ZkLockClient<TimerId>,
    lock: String,
    servers: Vec<NodeId>,
}

impl ZkLock {
    /// An idle client of `cfg` (its `servers` non-empty: the scenario layer validates).
    pub fn new(cfg: ZkLockConfig) -> Self {
        ZkLock {
            lock: cfg.lock.clone(),
            servers: cfg.servers.clone(),
            client: ZkLockClient::new(cfg),
        }
    }

    /// The lock's name.
    pub fn lock_name(&self) -> &str {
        &self.lock
    }

    fn run<C: ZkLockCtx>(
        &mut self,
        ctx: &mut C,
        f: impl FnOnce(&mut ZkLockClient<TimerId>, &mut Env<'_, C>),
    ) -> Option<LockEvent> {
        let czxid = self.client.czxid;
        let mut env = Env {
            ctx,
            lock: &self.lock,
            event: None,
            czxid,
        };
        f(&mut self.client, &mut env);
        env.event
    }

    /// Starts an acquisition; observes `LockRequested`. A client configured without a GUID
    /// takes one derived from its node id (deterministic, 32 hex digits as kazoo's).
    pub fn acquire(&mut self, ctx: &mut impl ZkLockCtx) {
        if self.client.cfg.guid.is_empty() {
            let id = u128::from(ctx.id().0) + 1;
            self.client.cfg.guid = format!(
                "{:032x}",
                id.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
            );
        }
        ctx.observe(Obs::LockRequested {
            thread: None,
            lock: self.lock.clone(),
            servers: self.servers.clone(),
        });
        self.run(ctx, |c, e| c.acquire(e));
    }

    /// Stops acting at once and deletes the node.
    pub fn release(&mut self, ctx: &mut impl ZkLockCtx) {
        self.run(ctx, |c, e| c.release(e));
    }

    /// Handles a message from a server.
    pub fn on_message<C: ZkLockCtx>(
        &mut self,
        ctx: &mut C,
        from: NodeId,
        msg: &C::Msg,
    ) -> Option<LockEvent> {
        let m = msg.part()?;
        if !self.servers.contains(&from) {
            return None;
        }
        let m = m.clone();
        self.run(ctx, |c, e| c.on_message(e, from, m))
    }

    /// Handles one of the client's timers.
    pub fn on_timer<C: ZkLockCtx>(&mut self, ctx: &mut C, timer: &C::Timer) -> Option<LockEvent> {
        let t = *timer.part()?;
        self.run(ctx, |c, e| c.on_timer(e, t))
    }

    /// The local deadline of the current hold.
    pub fn valid_until(&self) -> Option<LocalTime> {
        self.client.hold().map(|h| h.1)
    }

    /// The fencing token (the node's czxid) of the current hold.
    pub fn token(&self) -> Option<u64> {
        self.client.hold().map(|h| h.0)
    }

    /// Forgets all volatile state after a crash of the owning node.
    pub fn reset(&mut self) {
        self.client.reset();
    }
}
