//! The lock service's replicated state machine: an etcd v3 style key space with leases,
//! reduced to what a lock needs.
//!
//! Every replica applies the same committed commands in the same order, so every replica's
//! store is the same function of the log (the replicated state machine of Raft §1, §5.3).
//! Time does not enter the store: a lease's remaining life is leader-local, volatile state
//! (etcd's lessor keeps expiries in memory too; see [`super::replica`]), and a lease ends in
//! the store only when a committed [`Command::ExpireLease`] or [`Command::Release`] says so.
//!
//! Rules (etcd semantics, etcd `mvcc` and `lease` packages):
//! - The store revision starts at 1 and grows by one with every write that changes a key
//!   (etcd: "the revision of the key-value store", a 64-bit cluster-wide counter).
//! - `Acquire` = `LeaseGrant(ttl)` + `Txn(If(CreateRevision(lock) == 0), Then(Put(lock,
//!   lease)))`: if the key is absent, a lease (id = the entry's log index) is created and the
//!   key is put with it, at a new revision; the key's create revision is the **fencing token**.
//!   If the key is present, nothing changes (no lease is left behind). A retry of the very
//!   request that created the key (same client and request id) is answered with the same
//!   grant, so a lost reply does not lock the client out.
//! - `Release` and `ExpireLease` = `LeaseRevoke(lease)`: the lease and every key attached to it
//!   are deleted (one new revision if a key went).
//!
//! Because revisions only grow and every grant puts a new key at a new revision, fencing
//! tokens strictly increase across grants, across leader changes and across restarts (the
//! revision is a function of the committed log).

use super::msg::{Command, LeaseId, LogIndex};
use splitbrain_engine::{NodeId, SimDuration};
use std::collections::{BTreeMap, BTreeSet};

/// One key of the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// The revision at which the key was created: the lock's fencing token.
    pub create_revision: u64,
    /// The revision of the key's last modification.
    pub mod_revision: u64,
    /// The lease the key is attached to.
    pub lease: LeaseId,
    /// The client whose `Acquire` created the key.
    pub owner: NodeId,
    /// That `Acquire`'s request id.
    pub owner_req: u64,
}

/// One lease of the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The lease id (the log index of the entry that created it).
    pub id: LeaseId,
    /// Its TTL, ns of the leader's monotonic clock.
    pub ttl: SimDuration,
    /// Keys attached to it.
    pub keys: BTreeSet<String>,
}

/// What applying one command did (the leader turns this into a client reply).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyResult {
    /// A no-op entry.
    Noop,
    /// The lock key is the client's: created now (`fresh`) or by this very request earlier.
    Granted {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The lock key.
        lock: String,
        /// The key's create revision: the fencing token.
        revision: u64,
        /// The key's lease.
        lease: LeaseId,
        /// The lease's TTL.
        ttl: SimDuration,
        /// True if this command created the key and lease.
        fresh: bool,
    },
    /// The key exists for someone else: nothing changed.
    Denied {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The lock key.
        lock: String,
        /// The holder's create revision.
        held_revision: u64,
    },
    /// A lease was revoked by its client (`freed`), or did not exist.
    Released {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The lease.
        lease: LeaseId,
        /// True if the lease existed.
        freed: bool,
        /// Keys deleted with it, with their create revisions.
        deleted: Vec<(String, u64)>,
    },
    /// A lease was revoked because the leader found it expired (`existed` false if it was
    /// already gone).
    Expired {
        /// The lease.
        lease: LeaseId,
        /// True if the lease existed.
        existed: bool,
        /// Keys deleted with it, with their create revisions.
        deleted: Vec<(String, u64)>,
    },
}

/// The key space and leases. See the module docs for the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockStore {
    revision: u64,
    keys: BTreeMap<String, KeyValue>,
    leases: BTreeMap<LeaseId, Lease>,
}

impl Default for LockStore {
    fn default() -> Self {
        LockStore::new()
    }
}

impl LockStore {
    /// An empty store at revision 1 (etcd's initial revision).
    pub fn new() -> LockStore {
        LockStore {
            revision: 1,
            keys: BTreeMap::new(),
            leases: BTreeMap::new(),
        }
    }

    /// The current store revision.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The key `name`, if present.
    pub fn key(&self, name: &str) -> Option<&KeyValue> {
        self.keys.get(name)
    }

    /// Every key, in name order.
    pub fn keys(&self) -> &BTreeMap<String, KeyValue> {
        &self.keys
    }

    /// The lease `id`, if it exists.
    pub fn lease(&self, id: LeaseId) -> Option<&Lease> {
        self.leases.get(&id)
    }

    /// Every lease, in id order.
    pub fn leases(&self) -> &BTreeMap<LeaseId, Lease> {
        &self.leases
    }

    /// Applies the command of the committed entry at `index`.
    pub fn apply(&mut self, index: LogIndex, command: &Command) -> ApplyResult {
        match command {
            Command::Noop => ApplyResult::Noop,
            Command::Acquire {
                client,
                req,
                lock,
                ttl,
            } => {
                if let Some(kv) = self.keys.get(lock) {
                    if kv.owner == *client && kv.owner_req == *req {
                        let ttl = self.leases.get(&kv.lease).map_or(*ttl, |l| l.ttl);
                        return ApplyResult::Granted {
                            client: *client,
                            req: *req,
                            lock: lock.clone(),
                            revision: kv.create_revision,
                            lease: kv.lease,
                            ttl,
                            fresh: false,
                        };
                    }
                    return ApplyResult::Denied {
                        client: *client,
                        req: *req,
                        lock: lock.clone(),
                        held_revision: kv.create_revision,
                    };
                }
                let lease = index;
                assert!(
                    !self.leases.contains_key(&lease),
                    "lease ids are log indexes, applied once"
                );
                self.revision += 1;
                self.leases.insert(
                    lease,
                    Lease {
                        id: lease,
                        ttl: *ttl,
                        keys: BTreeSet::from([lock.clone()]),
                    },
                );
                self.keys.insert(
                    lock.clone(),
                    KeyValue {
                        create_revision: self.revision,
                        mod_revision: self.revision,
                        lease,
                        owner: *client,
                        owner_req: *req,
                    },
                );
                ApplyResult::Granted {
                    client: *client,
                    req: *req,
                    lock: lock.clone(),
                    revision: self.revision,
                    lease,
                    ttl: *ttl,
                    fresh: true,
                }
            }
            Command::Release { client, req, lease } => {
                let (freed, deleted) = self.revoke(*lease);
                ApplyResult::Released {
                    client: *client,
                    req: *req,
                    lease: *lease,
                    freed,
                    deleted,
                }
            }
            Command::ExpireLease { lease } => {
                let (existed, deleted) = self.revoke(*lease);
                ApplyResult::Expired {
                    lease: *lease,
                    existed,
                    deleted,
                }
            }
        }
    }

    /// etcd `LeaseRevoke`: deletes the lease and its keys; one new revision if a key went.
    fn revoke(&mut self, lease: LeaseId) -> (bool, Vec<(String, u64)>) {
        let Some(l) = self.leases.remove(&lease) else {
            return (false, Vec::new());
        };
        let mut deleted = Vec::new();
        for k in l.keys {
            if let Some(kv) = self.keys.remove(&k) {
                deleted.push((k, kv.create_revision));
            }
        }
        if !deleted.is_empty() {
            self.revision += 1;
        }
        (true, deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acquire(client: u32, req: u64, lock: &str) -> Command {
        Command::Acquire {
            client: NodeId(client),
            req,
            lock: lock.into(),
            ttl: SimDuration::from_secs(1),
        }
    }

    #[test]
    fn acquire_creates_only_if_absent_and_tokens_grow() {
        let mut s = LockStore::new();
        let g = s.apply(1, &acquire(7, 1, "L"));
        assert!(matches!(
            g,
            ApplyResult::Granted {
                revision: 2,
                lease: 1,
                fresh: true,
                ..
            }
        ));
        let d = s.apply(2, &acquire(8, 1, "L"));
        assert!(matches!(
            d,
            ApplyResult::Denied {
                held_revision: 2,
                ..
            }
        ));
        // A retry of the granted request gets the same grant.
        let r = s.apply(3, &acquire(7, 1, "L"));
        assert!(matches!(
            r,
            ApplyResult::Granted {
                revision: 2,
                lease: 1,
                fresh: false,
                ..
            }
        ));
        assert_eq!(s.leases().len(), 1);
        let e = s.apply(4, &Command::ExpireLease { lease: 1 });
        assert_eq!(
            e,
            ApplyResult::Expired {
                lease: 1,
                existed: true,
                deleted: vec![("L".into(), 2)]
            }
        );
        assert_eq!(s.revision(), 3);
        let g2 = s.apply(5, &acquire(8, 2, "L"));
        assert!(matches!(
            g2,
            ApplyResult::Granted {
                revision: 4,
                lease: 5,
                ..
            }
        ));
    }

    #[test]
    fn release_of_a_gone_lease_frees_nothing() {
        let mut s = LockStore::new();
        s.apply(1, &acquire(7, 1, "L"));
        let rel = |req| Command::Release {
            client: NodeId(7),
            req,
            lease: 1,
        };
        assert!(matches!(
            s.apply(2, &rel(2)),
            ApplyResult::Released { freed: true, .. }
        ));
        assert!(matches!(
            s.apply(3, &rel(3)),
            ApplyResult::Released { freed: false, .. }
        ));
        assert_eq!(s.revision(), 3);
        assert!(s.key("L").is_none());
    }
}
