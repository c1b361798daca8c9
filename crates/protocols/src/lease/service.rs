//! The lease service: a single authoritative lock service, as etcd or ZooKeeper look from a
//! client.
//!
//! It grants a named lease to one client at a time for a requested TTL, measured by **its own
//! monotonic clock** (Gray & Cheriton, "Leases: An Efficient Fault-Tolerant Mechanism for
//! Distributed File Cache Consistency", SOSP 1989: the server alone decides expiry, and a
//! client's view must be conservative). Every grant carries a **fencing token** strictly
//! greater than every token granted before, so storage can reject a write from a holder whose
//! lease has since been granted to someone else (Kleppmann, "How to do distributed locking",
//! 2016: the 33/34 story). The token counter is durable, so tokens keep increasing across a
//! restart of the service.
//!
//! Rules, per lease name:
//! - `Acquire` from a client when the lease is free or expired (service clock): a new grant,
//!   token = the counter, counter + 1, reply `Granted`.
//! - `Acquire` from the current holder (a retry after a lost reply, or the holder restarted):
//!   its grant is replaced by a new one with a new token (`LeaseFreed { expired: false }` for
//!   the old grant, then `LeaseGranted`). Every `Granted` thus carries a token greater than
//!   all earlier ones, and writes from the holder's earlier incarnation become stale.
//! - `Acquire` from anyone else while the grant is live: `Denied`.
//! - `Renew` by the holder with the matching token while live: extends to now + ttl; `Renewed`.
//!   Anything else: `Denied` (renewals never resurrect an ended grant).
//! - `Release` by the holder with the matching token: the lease is freed; `Released { freed:
//!   true }`. Anything else is a no-op answered with `freed: false`.
//!
//! A grant with TTL `d` made at local monotonic `L` is live for local times in `[L, L + d)`.
//! A timer is set for the expiry instant, so `LeaseFreed { expired: true }` is observed exactly
//! when the grant expires (the truth the checkers use). A request handled at that same instant
//! before the timer sees the grant expired and frees it first (same observation, same time).
//!
//! **Restart.** The token counter is always durable. With [`Grants::Forgetful`] (the default)
//! grants are volatile: a restarted service has forgotten every grant and may grant a lease
//! that an old holder still believes it holds; fencing (the durable counter) still orders the
//! two holders' writes. With [`Grants::Durable`] (ZooKeeper sessions and etcd leases, which
//! live in the replicated log) every grant survives: holder, token and TTL are written before
//! the reply leaves. **Remaining time across the outage:** a restored grant gets a full TTL
//! from the restart instant, as etcd's lessor does when a new leader promotes itself
//! (`Promote` refreshes every lease by its TTL) and as ZooKeeper's new leader does with session
//! timeouts. The grant thus never ends earlier, by the service's clock, than before the
//! crash: a holder that renewed just before the outage keeps its safety margin, and a holder
//! that vanished during the outage is detected one TTL after the restart. The restored grant
//! is observed as `LeaseGranted` again with the same token.
//!
//! **Lock delay** (Consul sessions, `lock-delay`, default 15 s in Consul, 0 here): when a grant
//! is invalidated by expiry (its holder stopped renewing) the service refuses to grant that
//! lease to anyone for `lock_delay` of its own clock, so a holder that is merely slow has time
//! to notice before a new holder acts. A release by the holder starts no delay, as in Consul.

use crate::context::{Ctx, Role, Wraps};
use crate::observation::Obs;
use serde::{Deserialize, Serialize};
use splitbrain_engine::{LocalTime, NodeId, SimDuration, TimerId};
use std::collections::BTreeMap;

/// Lease service requests and replies. `req` is chosen by the client and echoed in the
/// reply, so a client can match replies to requests and ignore late ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseMsg {
    /// Client -> service: grant me `lease` for `ttl` (local ns of the service's clock).
    Acquire {
        /// Request id.
        req: u64,
        /// Lease name.
        lease: String,
        /// Requested time to live, ns.
        ttl: SimDuration,
    },
    /// Service -> client: `lease` is yours with fencing `token` for `ttl` of the service clock.
    Granted {
        /// Request id of the `Acquire`.
        req: u64,
        /// Lease name.
        lease: String,
        /// Fencing token of the grant.
        token: u64,
        /// Granted time to live, ns.
        ttl: SimDuration,
    },
    /// Service -> client: the acquire or renewal was refused.
    Denied {
        /// Request id of the refused request.
        req: u64,
        /// Lease name.
        lease: String,
        /// Token of the live grant, if someone holds the lease.
        held_token: Option<u64>,
        /// Why, in words ("held by another client", "not the holder").
        reason: String,
    },
    /// Holder -> service: extend my grant `token` of `lease` by `ttl` from now.
    Renew {
        /// Request id.
        req: u64,
        /// Lease name.
        lease: String,
        /// Token of the grant to extend.
        token: u64,
        /// New time to live from receipt, ns of the service clock.
        ttl: SimDuration,
    },
    /// Service -> holder: the grant is extended by `ttl` from when the service handled it.
    Renewed {
        /// Request id of the `Renew`.
        req: u64,
        /// Lease name.
        lease: String,
        /// Token of the grant.
        token: u64,
        /// Time to live from receipt, ns.
        ttl: SimDuration,
    },
    /// Holder -> service: I give up grant `token` of `lease`.
    Release {
        /// Request id.
        req: u64,
        /// Lease name.
        lease: String,
        /// Token of the grant to end.
        token: u64,
    },
    /// Service -> client: answer to `Release`.
    Released {
        /// Request id of the `Release`.
        req: u64,
        /// Lease name.
        lease: String,
        /// Token named in the request.
        token: u64,
        /// Whether a live grant was ended (false: it had expired or was not the sender's).
        freed: bool,
    },
}

impl LeaseMsg {
    /// The message kind for traces and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            LeaseMsg::Acquire { .. } => "LEASE_ACQUIRE",
            LeaseMsg::Granted { .. } => "LEASE_GRANTED",
            LeaseMsg::Denied { .. } => "LEASE_DENIED",
            LeaseMsg::Renew { .. } => "LEASE_RENEW",
            LeaseMsg::Renewed { .. } => "LEASE_RENEWED",
            LeaseMsg::Release { .. } => "LEASE_RELEASE",
            LeaseMsg::Released { .. } => "LEASE_RELEASED",
        }
    }

    /// The request id the message carries.
    pub fn req(&self) -> u64 {
        match self {
            LeaseMsg::Acquire { req, .. }
            | LeaseMsg::Granted { req, .. }
            | LeaseMsg::Denied { req, .. }
            | LeaseMsg::Renew { req, .. }
            | LeaseMsg::Renewed { req, .. }
            | LeaseMsg::Release { req, .. }
            | LeaseMsg::Released { req, .. } => *req,
        }
    }
}

/// Lease service timers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceTimer {
    /// Grant `token` of `lease` reaches its expiry instant (service monotonic clock).
    Expire {
        /// Lease name.
        lease: String,
        /// Token of the grant the timer was set for (a renewed or replaced grant's old timer
        /// is cancelled; the token guards against acting on a stale one regardless).
        token: u64,
    },
}

/// What survives a crash of the lease service: the token counter, and with
/// [`Grants::Durable`] every live grant as `lease -> (holder, token, ttl)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceDurable {
    /// The token the next grant will carry.
    pub next_token: u64,
    /// Live grants (empty with [`Grants::Forgetful`]).
    pub grants: BTreeMap<String, (NodeId, u64, SimDuration)>,
}

/// What a restart does to grants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Grants {
    /// Grants are volatile: a restarted service has forgotten them (the default).
    #[default]
    Forgetful,
    /// Grants are durable: a restarted service restores each with a full TTL from the restart.
    Durable,
}

/// The context the lease service runs in: any composition whose messages, timers and durable
/// state wrap the service's own ([`LeaseMsg`], [`ServiceTimer`], [`ServiceDurable`]).
pub trait ServiceCtx:
    Ctx<Msg: Wraps<LeaseMsg>, Timer: Wraps<ServiceTimer>, Durable: Wraps<ServiceDurable>>
{
}

impl<C> ServiceCtx for C where
    C: Ctx<Msg: Wraps<LeaseMsg>, Timer: Wraps<ServiceTimer>, Durable: Wraps<ServiceDurable>>
{
}

/// Lease service configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceConfig {
    /// Token of the very first grant (default 1). Set it to 33 to tell Kleppmann's 33/34 story.
    pub first_token: u64,
    /// Whether grants survive a restart (default [`Grants::Forgetful`]).
    pub grants: Grants,
    /// After a grant expires, nobody gets that lease for this long, local ns of the service
    /// clock (Consul's lock-delay; default 0).
    pub lock_delay: SimDuration,
}

impl Default for ServiceConfig {
    /// `first_token: 1`, forgetful grants, no lock delay.
    fn default() -> Self {
        ServiceConfig {
            first_token: 1,
            grants: Grants::Forgetful,
            lock_delay: SimDuration::ZERO,
        }
    }
}

/// One live grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The holder.
    pub holder: NodeId,
    /// Its fencing token.
    pub token: u64,
    /// Expiry instant, local monotonic ns of the service (exclusive: expired at this reading).
    pub expires_at: LocalTime,
    /// The TTL of the last grant or renewal, ns.
    pub ttl: SimDuration,
    timer: TimerId,
}

/// The lease service actor.
#[derive(Clone, Debug)]
pub struct LeaseService {
    cfg: ServiceConfig,
    next_token: u64,
    grants: BTreeMap<String, Grant>,
    /// Per lease, the service-clock instant until which the lock delay refuses every acquire.
    delayed_until: BTreeMap<String, LocalTime>,
}

impl LeaseService {
    /// A service that has granted nothing yet; its first grant carries `cfg.first_token`.
    pub fn new(cfg: ServiceConfig) -> Self {
        LeaseService {
            next_token: cfg.first_token,
            cfg,
            grants: BTreeMap::new(),
            delayed_until: BTreeMap::new(),
        }
    }

    /// The token the next grant will carry.
    pub fn next_token(&self) -> u64 {
        self.next_token
    }

    /// The live grant of `lease`, as the service last updated it (an expired grant whose
    /// timer has not run yet is still listed).
    pub fn grant(&self, lease: &str) -> Option<&Grant> {
        self.grants.get(lease)
    }

    fn persist(&self, ctx: &mut impl ServiceCtx) {
        let grants = match self.cfg.grants {
            Grants::Forgetful => BTreeMap::new(),
            Grants::Durable => self
                .grants
                .iter()
                .map(|(l, g)| (l.clone(), (g.holder, g.token, g.ttl)))
                .collect(),
        };
        ctx.persist(ServiceDurable {
            next_token: self.next_token,
            grants,
        });
    }

    /// Writes the grants after a change, if they are durable.
    fn persist_grants(&self, ctx: &mut impl ServiceCtx) {
        if self.cfg.grants == Grants::Durable {
            self.persist(ctx);
        }
    }

    /// Frees `lease` if its grant has expired by the service's clock.
    fn expire_if_due(&mut self, ctx: &mut impl ServiceCtx, lease: &str) {
        let now = ctx.mono_now();
        let Some(g) = self.grants.get(lease) else {
            return;
        };
        if now < g.expires_at {
            return;
        }
        let g = self.grants.remove(lease).expect("checked above");
        ctx.cancel_timer(g.timer);
        if self.cfg.lock_delay > SimDuration::ZERO {
            // Consul: an invalidated session's locks are held back for lock-delay, counted
            // from the moment the service notices (its expiry instant).
            self.delayed_until.insert(
                lease.to_string(),
                g.expires_at.saturating_add(self.cfg.lock_delay),
            );
        }
        ctx.observe(Obs::LeaseFreed {
            lease: lease.to_string(),
            holder: g.holder,
            token: g.token,
            expired: true,
        });
        self.persist_grants(ctx);
    }

    /// Sets (or resets) the grant's deadline and expiry timer to now + ttl.
    fn arm(
        ctx: &mut impl ServiceCtx,
        lease: &str,
        token: u64,
        ttl: SimDuration,
    ) -> (LocalTime, TimerId) {
        let expires_at = ctx.mono_now().saturating_add(ttl);
        let timer = ctx.set_timer(
            ttl,
            ServiceTimer::Expire {
                lease: lease.to_string(),
                token,
            },
        );
        (expires_at, timer)
    }

    fn acquire(
        &mut self,
        ctx: &mut impl ServiceCtx,
        from: NodeId,
        req: u64,
        lease: String,
        ttl: SimDuration,
    ) {
        self.expire_if_due(ctx, &lease);
        if let Some(&until) = self.delayed_until.get(&lease) {
            if ctx.mono_now() < until {
                ctx.send(
                    from,
                    LeaseMsg::Denied {
                        req,
                        lease,
                        held_token: None,
                        reason: "lock delay".to_string(),
                    },
                );
                return;
            }
            self.delayed_until.remove(&lease);
        }
        if let Some(g) = self.grants.get(&lease) {
            if g.holder != from {
                let held_token = Some(g.token);
                ctx.send(
                    from,
                    LeaseMsg::Denied {
                        req,
                        lease,
                        held_token,
                        reason: "held by another client".to_string(),
                    },
                );
                return;
            }
            // The holder asks again (a lost reply, or it restarted): its grant is replaced.
            let g = self.grants.remove(&lease).expect("checked above");
            ctx.cancel_timer(g.timer);
            ctx.observe(Obs::LeaseFreed {
                lease: lease.clone(),
                holder: from,
                token: g.token,
                expired: false,
            });
        }
        let token = self.next_token;
        self.next_token = token
            .checked_add(1)
            .expect("fencing token counter overflowed u64");
        // Durable before the token leaves the service, so no restart can reissue it.
        self.persist(ctx);
        if ttl == SimDuration::ZERO {
            // A zero-length grant is live for no instant: it is granted and freed at once.
            ctx.observe(Obs::LeaseGranted {
                lease: lease.clone(),
                holder: from,
                token,
                ttl_ns: 0,
            });
            ctx.observe(Obs::LeaseFreed {
                lease: lease.clone(),
                holder: from,
                token,
                expired: true,
            });
        } else {
            let (expires_at, timer) = Self::arm(ctx, &lease, token, ttl);
            self.grants.insert(
                lease.clone(),
                Grant {
                    holder: from,
                    token,
                    expires_at,
                    ttl,
                    timer,
                },
            );
            self.persist_grants(ctx);
            ctx.observe(Obs::LeaseGranted {
                lease: lease.clone(),
                holder: from,
                token,
                ttl_ns: ttl.as_nanos(),
            });
        }
        ctx.send(
            from,
            LeaseMsg::Granted {
                req,
                lease,
                token,
                ttl,
            },
        );
    }

    /// Extends the live grant of `lease` (held by `holder` with `token`) to now + ttl.
    fn extend(
        &mut self,
        ctx: &mut impl ServiceCtx,
        holder: NodeId,
        lease: &str,
        token: u64,
        ttl: SimDuration,
    ) {
        let g = self.grants.get(lease).expect("extend a live grant");
        ctx.cancel_timer(g.timer);
        if ttl == SimDuration::ZERO {
            let g = self.grants.remove(lease).expect("live");
            ctx.observe(Obs::LeaseFreed {
                lease: lease.to_string(),
                holder: g.holder,
                token: g.token,
                expired: true,
            });
            self.persist_grants(ctx);
            return;
        }
        let (expires_at, timer) = Self::arm(ctx, lease, token, ttl);
        let g = self.grants.get_mut(lease).expect("live");
        g.expires_at = expires_at;
        g.timer = timer;
        if g.ttl != ttl {
            g.ttl = ttl;
            self.persist_grants(ctx);
        }
        ctx.observe(Obs::LeaseRenewed {
            lease: lease.to_string(),
            holder,
            token,
        });
    }

    fn renew(
        &mut self,
        ctx: &mut impl ServiceCtx,
        from: NodeId,
        req: u64,
        lease: String,
        token: u64,
        ttl: SimDuration,
    ) {
        self.expire_if_due(ctx, &lease);
        let live = self.grants.get(&lease).map(|g| (g.holder, g.token));
        if live == Some((from, token)) {
            self.extend(ctx, from, &lease, token, ttl);
            ctx.send(
                from,
                LeaseMsg::Renewed {
                    req,
                    lease,
                    token,
                    ttl,
                },
            );
        } else {
            ctx.send(
                from,
                LeaseMsg::Denied {
                    req,
                    lease,
                    held_token: live.map(|(_, t)| t),
                    reason: "not the holder".to_string(),
                },
            );
        }
    }

    fn release(
        &mut self,
        ctx: &mut impl ServiceCtx,
        from: NodeId,
        req: u64,
        lease: String,
        token: u64,
    ) {
        self.expire_if_due(ctx, &lease);
        let live = self.grants.get(&lease).map(|g| (g.holder, g.token));
        let freed = live == Some((from, token));
        if freed {
            let g = self.grants.remove(&lease).expect("live");
            ctx.cancel_timer(g.timer);
            ctx.observe(Obs::LeaseFreed {
                lease: lease.clone(),
                holder: from,
                token,
                expired: false,
            });
            self.persist_grants(ctx);
        }
        ctx.send(
            from,
            LeaseMsg::Released {
                req,
                lease,
                token,
                freed,
            },
        );
    }
}

impl<C: ServiceCtx> Role<C> for LeaseService {
    /// Runs at true time 0: persists the counter.
    fn on_start(&mut self, ctx: &mut C) {
        self.persist(ctx);
    }

    /// Handles a request.
    fn on_message(&mut self, ctx: &mut C, from: NodeId, msg: C::Msg) {
        let Some(msg) = msg.into_part() else { return };
        match msg {
            LeaseMsg::Acquire { req, lease, ttl } => self.acquire(ctx, from, req, lease, ttl),
            LeaseMsg::Renew {
                req,
                lease,
                token,
                ttl,
            } => self.renew(ctx, from, req, lease, token, ttl),
            LeaseMsg::Release { req, lease, token } => self.release(ctx, from, req, lease, token),
            // Replies are never addressed to the service.
            LeaseMsg::Granted { .. } | LeaseMsg::Denied { .. } | LeaseMsg::Renewed { .. } => {}
            LeaseMsg::Released { .. } => {}
        }
    }

    /// Handles an expiry timer.
    fn on_timer(&mut self, ctx: &mut C, timer: C::Timer) {
        let Some(ServiceTimer::Expire { lease, token }) = timer.into_part() else {
            return;
        };
        if self.grants.get(&lease).map(|g| g.token) == Some(token) {
            self.expire_if_due(ctx, &lease);
        }
    }

    /// Rebuilds from durable state after a crash: the counter survives; grants survive with
    /// [`Grants::Durable`], each with a full TTL from now (see the module doc), and are
    /// observed as granted again; the lock delays are volatile.
    fn on_restart(&mut self, ctx: &mut C, durable: &C::Durable) {
        self.grants.clear();
        self.delayed_until.clear();
        let d: Option<&ServiceDurable> = durable.part();
        self.next_token = d.map_or(self.cfg.first_token, |d| {
            d.next_token.max(self.cfg.first_token)
        });
        if self.cfg.grants == Grants::Durable {
            for (lease, &(holder, token, ttl)) in d.map(|d| &d.grants).into_iter().flatten() {
                let (expires_at, timer) = Self::arm(ctx, lease, token, ttl);
                self.grants.insert(
                    lease.clone(),
                    Grant {
                        holder,
                        token,
                        expires_at,
                        ttl,
                        timer,
                    },
                );
                ctx.observe(Obs::LeaseGranted {
                    lease: lease.clone(),
                    holder,
                    token,
                    ttl_ns: ttl.as_nanos(),
                });
            }
        }
        self.persist(ctx);
    }
}
