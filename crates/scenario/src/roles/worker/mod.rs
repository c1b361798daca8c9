//! The `worker` role: acquire a lock, work, check validity, write to storage, release (file
//! spec in `spec.rs`; each lock kind's fields, checks and client config in its own module).
//! Defaults as the protocol's `WorkerConfig::new`: `name` "lock", `work_time` 2 s,
//! `think_time` 1 s, `write_delay` 1 ms, `start_after` 0, no bound on rounds, not idempotent.

mod etcd_mutex;
mod lease;
mod raft;
mod redis;
mod redlock;
mod spec;
mod zookeeper;

pub use spec::{
    LockKind, LockObjectSpec, OnRefreshFailureSpec, OnSessionDoneSpec, OnSuspendedSpec,
    RedlockModeSpec, RefreshSpec, ReleaseSpec, StartTimeSpec, WorkerSpec,
};

use crate::checker::NodeCheck;
use crate::duration::or;
use crate::role::clock_and_count;
use crate::role::{ClockSpec, Role};
use crate::roster::Roster;
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::worker::{LockObject, Worker, WorkerConfig};
use splitbrain_protocols::Node;

impl LockKind {
    /// The fields only this lock reads, and whether `w` sets each.
    fn own_fields(self, w: &WorkerSpec) -> Vec<(&'static str, bool)> {
        match self {
            LockKind::Lease => lease::own_fields(w),
            LockKind::Redis => redis::own_fields(w),
            LockKind::Redlock => redlock::own_fields(w),
            LockKind::Raft => raft::own_fields(w),
            LockKind::EtcdMutex => etcd_mutex::own_fields(w),
            LockKind::Zookeeper => zookeeper::own_fields(w),
        }
    }
}

impl Role for WorkerSpec {
    fn checked_as(&self) -> splitbrain_check::Role {
        splitbrain_check::Role::Worker
    }

    clock_and_count!();

    fn validate(&self, v: &mut NodeCheck<'_, '_>) {
        v.node_ref("storage", &self.storage, &["storage"]);
        for (f, d) in [
            ("ttl", self.ttl),
            ("work_time", self.work_time),
            ("renew_every", self.renew_every),
            ("request_timeout", self.request_timeout),
            ("extend_every", self.extend_every),
        ] {
            v.positive(f, d);
        }
        if self.rounds == Some(0) {
            v.err(
                "rounds",
                "rounds must be at least 1 (leave it out to run forever)",
            );
        }
        let own = self.lock.name();
        let mine = self.lock.own_fields(self);
        for kind in LockKind::ALL.into_iter().filter(|k| *k != self.lock) {
            for (f, set) in kind.own_fields(self) {
                if set && !mine.iter().any(|(m, _)| *m == f) {
                    v.err(
                        f,
                        format!(
                            "`{f}` applies to lock \"{}\", but this worker uses lock \"{own}\"",
                            kind.name()
                        ),
                    );
                }
            }
        }
        // Fields the Redis and Redlock clients share; a lease worker renews with renew_every.
        if self.lock == LockKind::Lease {
            for (f, set) in [
                ("extend_every", self.extend_every.is_some()),
                ("clock_drift_factor", self.clock_drift_factor.is_some()),
            ] {
                if set {
                    v.err(
                        f,
                        format!("`{f}` applies to locks \"redis\" and \"redlock\", but this worker uses lock \"lease\""),
                    );
                }
            }
        }
        match self.lock {
            LockKind::Lease => lease::validate(self, v),
            LockKind::Redis => redis::validate(self, v),
            LockKind::Redlock => redlock::validate(self, v),
            LockKind::Raft => raft::validate(self, v),
            LockKind::EtcdMutex => etcd_mutex::validate(self, v),
            LockKind::Zookeeper => zookeeper::validate(self, v),
        }
        redlock::check_drift_factor(self, v);
    }

    /// Its lock's claims, its validity checks and writes; `shared_token_release` with a
    /// Redis lock (a lock object shared by threads).
    fn observations(&self) -> &'static [&'static str] {
        const WORKER: &[&str] = &[
            "lock_requested",
            "lock_acquired",
            "lock_renewed",
            "lock_failed",
            "lock_released",
            "lock_lost",
            "lock_belief_past_deadline",
            "validity_checked",
            "write_sent",
        ];
        const REDIS_WORKER: &[&str] = &[
            "lock_requested",
            "lock_acquired",
            "lock_renewed",
            "lock_failed",
            "lock_released",
            "lock_lost",
            "validity_checked",
            "write_sent",
            "shared_token_release",
        ];
        if self.lock == LockKind::Redis {
            REDIS_WORKER
        } else {
            WORKER
        }
    }

    fn node(&self, roster: &Roster) -> Node {
        let name = self.name.clone().unwrap_or_else(|| "lock".to_string());
        let lock: LockConfig = match self.lock {
            LockKind::Lease => lease::config(self, roster, name),
            LockKind::Redis => redis::config(self, roster, name),
            LockKind::Redlock => redlock::config(self, roster, name),
            LockKind::Raft => raft::config(self, roster, name),
            LockKind::EtcdMutex => etcd_mutex::config(self, roster, name),
            LockKind::Zookeeper => zookeeper::config(self, roster, name),
        };
        let mut c = WorkerConfig::new(lock, roster.id(&self.storage));
        c.work_time = or(self.work_time, c.work_time);
        c.think_time = or(self.think_time, c.think_time);
        c.write_delay = or(self.write_delay, c.write_delay);
        c.start_after = or(self.start_after, c.start_after);
        c.rounds = self.rounds;
        c.idempotent = self.idempotent.unwrap_or(false);
        c.extend_every = self.extend_every.map(|d| d.0);
        c.threads = self.threads.unwrap_or(1);
        c.lock_object = match self.lock_object {
            None | Some(LockObjectSpec::ThreadLocal) => LockObject::ThreadLocal,
            Some(LockObjectSpec::Shared) => LockObject::Shared,
        };
        Node::Worker(Worker::new(c))
    }
}
