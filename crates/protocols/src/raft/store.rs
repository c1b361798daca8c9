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
//! - The etcd `concurrency` recipes' operations (etcd `mvcc`, `etcdserver/apply.go`):
//!   `LeaseGrant` creates a lease with no key; `MutexTxn` is `Mutex.tryAcquire`'s transaction
//!   (create-if-absent put under a lease, plus the first-created key under the prefix; a put
//!   under a missing lease fails the whole txn with `ErrLeaseNotFound` and changes nothing);
//!   `Range` reads keys (by prefix, bounded by create revision, ordered by create revision,
//!   limited) without changing the revision; `Delete` deletes one key (one new revision if
//!   it existed) and detaches it from its lease.
//!
//! - ZooKeeper's data tree ([`super::znode::ZnodeTree`]) rides in the same store:
//!   `ZkCreateSession` opens a session and a lease with the same id (the lease carries the
//!   session's expiry through the leader's lease machinery: pings are keepalives, expiry is
//!   `ExpireLease`); revoking or expiring a lease that is a session closes the session
//!   (`closeSession`, deleting its ephemeral nodes); `Zk` applies one API operation. The
//!   tree's zxid is its own counter: etcd's revision does not move for ZooKeeper operations.
//!
//! Because revisions only grow and every grant puts a new key at a new revision, fencing
//! tokens strictly increase across grants, across leader changes and across restarts (the
//! revision is a function of the committed log).

use super::msg::{Command, Kv, LeaseId, LogIndex, RangeOrder};
use super::znode::{SessionId, ZkResult, ZnodeTree};
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
    /// For a key a `MutexTxn` created: the lock's prefix (the first-created key under it owns
    /// the lock). `None` for an `Acquire`'s key (the key is the lock).
    pub mutex_prefix: Option<String>,
}

impl KeyValue {
    fn kv(&self, key: &str) -> Kv {
        Kv {
            key: key.to_string(),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            lease: self.lease,
        }
    }
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
    /// A lease was granted (`LeaseGrant`).
    LeaseGranted {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The new lease.
        lease: LeaseId,
        /// Its TTL.
        ttl: SimDuration,
    },
    /// A `MutexTxn` ran.
    Txn {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The store revision after it.
        revision: u64,
        /// True if the key was absent and is now put.
        succeeded: bool,
        /// The key's create revision.
        key_create_revision: u64,
        /// The first-created key under the prefix.
        owner: Option<Kv>,
        /// The key it created, if it did.
        created: Option<Created>,
    },
    /// A `MutexTxn` named a lease that does not exist: nothing changed.
    TxnLeaseNotFound {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The missing lease.
        lease: LeaseId,
    },
    /// A `Range` read.
    Range {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The store revision it saw.
        revision: u64,
        /// The keys found.
        kvs: Vec<Kv>,
    },
    /// A ZooKeeper session was opened (`ZkCreateSession`).
    ZkSession {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The session (and its lease).
        session: SessionId,
        /// The negotiated timeout.
        timeout: SimDuration,
        /// The `createSession`'s zxid.
        zxid: u64,
    },
    /// A ZooKeeper operation ran.
    Zk {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The tree's zxid after it.
        zxid: u64,
        /// The answer.
        result: ZkResult,
    },
    /// A `Delete` ran.
    Deleted {
        /// The client.
        client: NodeId,
        /// Its request id.
        req: u64,
        /// The store revision after it.
        revision: u64,
        /// The key deleted, with its create revision (none if it was absent).
        deleted: Vec<(String, u64)>,
    },
}

/// A key a command created (the replica reports it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Created {
    /// The key.
    pub key: String,
    /// Its create revision.
    pub revision: u64,
    /// Its lease.
    pub lease: LeaseId,
    /// The mutex prefix it contends under.
    pub mutex_prefix: String,
}

/// The key space and leases. See the module docs for the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockStore {
    revision: u64,
    keys: BTreeMap<String, KeyValue>,
    leases: BTreeMap<LeaseId, Lease>,
    zk: ZnodeTree,
    /// The client of each ZooKeeper session (where its watch events go).
    zk_clients: BTreeMap<SessionId, NodeId>,
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
            zk: ZnodeTree::new(),
            zk_clients: BTreeMap::new(),
        }
    }

    /// The ZooKeeper data tree.
    pub fn zk(&self) -> &ZnodeTree {
        &self.zk
    }

    /// The tree, for the replica to take its triggered watches and contender changes.
    pub fn zk_mut(&mut self) -> &mut ZnodeTree {
        &mut self.zk
    }

    /// The client of ZooKeeper session `session`, if it lives.
    pub fn zk_client(&self, session: SessionId) -> Option<NodeId> {
        self.zk_clients.get(&session).copied()
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
                        mutex_prefix: None,
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
                let (freed, deleted) = self.revoke(*lease, false);
                ApplyResult::Released {
                    client: *client,
                    req: *req,
                    lease: *lease,
                    freed,
                    deleted,
                }
            }
            Command::ExpireLease { lease } => {
                let (existed, deleted) = self.revoke(*lease, true);
                ApplyResult::Expired {
                    lease: *lease,
                    existed,
                    deleted,
                }
            }
            Command::LeaseGrant { client, req, ttl } => {
                let lease = index;
                assert!(
                    !self.leases.contains_key(&lease),
                    "lease ids are log indexes, applied once"
                );
                self.leases.insert(
                    lease,
                    Lease {
                        id: lease,
                        ttl: *ttl,
                        keys: BTreeSet::new(),
                    },
                );
                ApplyResult::LeaseGranted {
                    client: *client,
                    req: *req,
                    lease,
                    ttl: *ttl,
                }
            }
            Command::MutexTxn {
                client,
                req,
                key,
                lease,
                prefix,
            } => self.mutex_txn(*client, *req, key, *lease, prefix),
            Command::Range {
                client,
                req,
                key,
                prefix,
                max_create_revision,
                order,
                limit,
            } => ApplyResult::Range {
                client: *client,
                req: *req,
                revision: self.revision,
                kvs: self.range(key, *prefix, *max_create_revision, *order, *limit),
            },
            Command::ZkCreateSession {
                client,
                req,
                timeout,
            } => {
                let lease = index;
                assert!(
                    !self.leases.contains_key(&lease),
                    "lease ids are log indexes, applied once"
                );
                self.leases.insert(
                    lease,
                    Lease {
                        id: lease,
                        ttl: *timeout,
                        keys: BTreeSet::new(),
                    },
                );
                let zxid = self.zk.create_session(lease, timeout.0);
                self.zk_clients.insert(lease, *client);
                ApplyResult::ZkSession {
                    client: *client,
                    req: *req,
                    session: lease,
                    timeout: *timeout,
                    zxid,
                }
            }
            Command::Zk {
                client,
                req,
                session,
                call,
            } => {
                let result = self.zk.apply(*session, call);
                ApplyResult::Zk {
                    client: *client,
                    req: *req,
                    zxid: self.zk.zxid(),
                    result,
                }
            }
            Command::Delete { client, req, key } => {
                let mut deleted = Vec::new();
                if let Some(kv) = self.keys.remove(key) {
                    if let Some(l) = self.leases.get_mut(&kv.lease) {
                        l.keys.remove(key);
                    }
                    self.revision += 1;
                    deleted.push((key.clone(), kv.create_revision));
                }
                ApplyResult::Deleted {
                    client: *client,
                    req: *req,
                    revision: self.revision,
                    deleted,
                }
            }
        }
    }

    /// `Mutex.tryAcquire`'s txn (client/v3/concurrency/mutex.go at v3.5.0): put `key` under
    /// `lease` if absent; either way report the key's create revision and the first-created
    /// key under `prefix`. etcd checks the put's lease before running the txn
    /// (`checkRequestPut` in etcdserver/apply.go): a missing lease fails it whole.
    fn mutex_txn(
        &mut self,
        client: NodeId,
        req: u64,
        key: &str,
        lease: LeaseId,
        prefix: &str,
    ) -> ApplyResult {
        let exists = self.keys.contains_key(key);
        if !exists && !self.leases.contains_key(&lease) {
            return ApplyResult::TxnLeaseNotFound { client, req, lease };
        }
        let mut created = None;
        if !exists {
            self.revision += 1;
            self.keys.insert(
                key.to_string(),
                KeyValue {
                    create_revision: self.revision,
                    mod_revision: self.revision,
                    lease,
                    owner: client,
                    owner_req: req,
                    mutex_prefix: Some(prefix.to_string()),
                },
            );
            self.leases
                .get_mut(&lease)
                .expect("checked above")
                .keys
                .insert(key.to_string());
            created = Some(Created {
                key: key.to_string(),
                revision: self.revision,
                lease,
                mutex_prefix: prefix.to_string(),
            });
        }
        let key_create_revision = self.keys[key].create_revision;
        let owner = self
            .range(prefix, true, 0, RangeOrder::FirstCreate, 1)
            .into_iter()
            .next();
        ApplyResult::Txn {
            client,
            req,
            revision: self.revision,
            succeeded: !exists,
            key_create_revision,
            owner,
            created,
        }
    }

    /// True if the key `key` created at `create_revision` has been deleted: the store has
    /// reached that revision (a replica that has not applied the creation yet must not call the
    /// key deleted; an etcd watch from a revision waits for it the same way) and holds no key
    /// by that name with that create revision (a deleted key never comes back with its old
    /// create revision). What a watch for the key's DELETE event waits for.
    pub fn deleted_since_created(&self, key: &str, create_revision: u64) -> bool {
        self.revision >= create_revision
            && self
                .keys
                .get(key)
                .map_or(true, |kv| kv.create_revision != create_revision)
    }

    /// The keys from `key` (every key starting with it if `prefix`), created at or before
    /// `max_create_revision` (0: any), in `order`, at most `limit` (0: all). etcd's
    /// `WithFirstCreate` / `WithLastCreate` are this with limit 1.
    pub fn range(
        &self,
        key: &str,
        prefix: bool,
        max_create_revision: u64,
        order: RangeOrder,
        limit: u64,
    ) -> Vec<Kv> {
        let mut kvs: Vec<Kv> = if prefix {
            self.keys
                .range(key.to_string()..)
                .take_while(|(k, _)| k.starts_with(key))
                .map(|(k, v)| v.kv(k))
                .collect()
        } else {
            self.keys.get(key).map(|v| v.kv(key)).into_iter().collect()
        };
        if max_create_revision > 0 {
            kvs.retain(|kv| kv.create_revision <= max_create_revision);
        }
        match order {
            RangeOrder::Key => {}
            RangeOrder::FirstCreate => kvs.sort_by_key(|kv| kv.create_revision),
            RangeOrder::LastCreate => kvs.sort_by_key(|kv| std::cmp::Reverse(kv.create_revision)),
        }
        if limit > 0 {
            kvs.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        kvs
    }

    /// etcd `LeaseRevoke`: deletes the lease and its keys; one new revision if a key went.
    /// A lease that carries a ZooKeeper session closes the session (`expired`: the leader
    /// expired it) with its ephemeral nodes, which the tree reports as its own changes.
    fn revoke(&mut self, lease: LeaseId, expired: bool) -> (bool, Vec<(String, u64)>) {
        let Some(l) = self.leases.remove(&lease) else {
            return (false, Vec::new());
        };
        if self.zk_clients.remove(&lease).is_some() {
            self.zk.close_session(lease, expired);
        }
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

    fn txn(client: u32, req: u64, lease: LeaseId) -> Command {
        Command::MutexTxn {
            client: NodeId(client),
            req,
            key: format!("m/{lease:x}"),
            lease,
            prefix: "m/".into(),
        }
    }

    fn last_below(max: u64) -> Command {
        Command::Range {
            client: NodeId(9),
            req: 1,
            key: "m/".into(),
            prefix: true,
            max_create_revision: max,
            order: RangeOrder::LastCreate,
            limit: 1,
        }
    }

    /// The etcd Mutex's operations: create-if-absent under a lease with the prefix's first
    /// key, the waiter's read of the last key created before its own, a delete, and a lease
    /// revocation taking the lease's key with it; reads change no revision.
    #[test]
    fn mutex_txn_range_delete_and_revoke() {
        let mut s = LockStore::new();
        let grant = |c: u32| Command::LeaseGrant {
            client: NodeId(c),
            req: 1,
            ttl: SimDuration::from_secs(60),
        };
        assert!(matches!(
            s.apply(1, &grant(7)),
            ApplyResult::LeaseGranted { lease: 1, .. }
        ));
        s.apply(2, &grant(8));
        let ApplyResult::Txn {
            succeeded: true,
            revision: 2,
            key_create_revision: 2,
            owner: Some(owner),
            created: Some(_),
            ..
        } = s.apply(3, &txn(7, 2, 1))
        else {
            panic!("the first txn puts the key")
        };
        assert_eq!(owner.create_revision, 2);
        let ApplyResult::Txn {
            succeeded: true,
            key_create_revision: 3,
            owner: Some(owner),
            ..
        } = s.apply(4, &txn(8, 2, 2))
        else {
            panic!("the second txn puts its own key")
        };
        assert_eq!((owner.key.as_str(), owner.create_revision), ("m/1", 2));
        // A retry finds the key: the Else branch, same create revision, no new revision.
        assert!(matches!(
            s.apply(5, &txn(8, 2, 2)),
            ApplyResult::Txn {
                succeeded: false,
                key_create_revision: 3,
                revision: 3,
                ..
            }
        ));
        let ApplyResult::Range {
            kvs, revision: 3, ..
        } = s.apply(6, &last_below(2))
        else {
            panic!("a range")
        };
        assert_eq!(kvs.len(), 1);
        assert_eq!((kvs[0].key.as_str(), kvs[0].lease), ("m/1", 1));
        // A put under a lease that does not exist fails whole.
        assert!(matches!(
            s.apply(7, &txn(9, 1, 99)),
            ApplyResult::TxnLeaseNotFound { lease: 99, .. }
        ));
        assert!(matches!(
            s.apply(
                8,
                &Command::Delete {
                    client: NodeId(7),
                    req: 3,
                    key: "m/1".into()
                }
            ),
            ApplyResult::Deleted { revision: 4, .. }
        ));
        assert!(s.lease(1).is_some_and(|l| l.keys.is_empty()));
        let ApplyResult::Range { kvs, .. } = s.apply(9, &last_below(2)) else {
            panic!("a range")
        };
        assert!(kvs.is_empty());
        assert_eq!(
            s.apply(10, &Command::ExpireLease { lease: 2 }),
            ApplyResult::Expired {
                lease: 2,
                existed: true,
                deleted: vec![("m/2".into(), 3)]
            }
        );
        assert_eq!(s.revision(), 5);
    }

    /// A watch for a key's deletion fires only once the store has applied the key's creation
    /// and no longer holds it: a store behind the creation (a new leader still applying) says
    /// nothing yet.
    #[test]
    fn a_key_is_deleted_only_after_its_creation_was_applied() {
        let mut s = LockStore::new();
        assert!(!s.deleted_since_created("m/1", 2), "not created yet");
        s.apply(
            1,
            &Command::LeaseGrant {
                client: NodeId(7),
                req: 1,
                ttl: SimDuration::from_secs(60),
            },
        );
        s.apply(2, &txn(7, 2, 1));
        assert!(!s.deleted_since_created("m/1", 2));
        s.apply(
            3,
            &Command::Delete {
                client: NodeId(7),
                req: 3,
                key: "m/1".into(),
            },
        );
        assert!(s.deleted_since_created("m/1", 2));
    }
}
