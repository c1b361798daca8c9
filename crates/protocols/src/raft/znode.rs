//! ZooKeeper's data tree as a replicated state machine: znodes with their stat, sessions,
//! ephemeral and sequential znodes, one-shot watches, and the zxid.
//!
//! The tree lives inside the Raft store ([`super::store::LockStore`]) so that the Raft replica
//! group serves as a ZooKeeper ensemble: every write and every read is one committed log
//! entry, applied in log order on every replica. The rules, from the ZooKeeper Programmer's
//! Guide (zookeeperProgrammers.md, release 3.8) and the server's source (apache/zookeeper,
//! branch-3.8, `zookeeper-server/src/main/java/org/apache/zookeeper/server/`):
//! - **zxid**: every state-changing transaction gets the next zxid (Programmer's Guide, "ZooKeeper
//!   Stat Structure" and "Time in ZooKeeper": "every change to the ZooKeeper state receives a
//!   stamp in the form of a zxid"). `createSession` and `closeSession` are transactions too
//!   (`PrepRequestProcessor.pRequest2Txn`, `OpCode.createSession` / `OpCode.closeSession`),
//!   and so is a write that fails: `PrepRequestProcessor.pRequest` gives the request its zxid
//!   before checking it and turns a `KeeperException` into an `ErrorTxn` with that zxid.
//!   Reads get no zxid; their reply header carries the last zxid the server applied. The
//!   epoch (the zxid's high 32 bits) is left out: [`ZnodeTree::zxid`] counts from 0 and the
//!   recording is compared by zxid differences (`tests/zookeeper/`).
//! - **Stat**: `czxid` (the create's zxid), `mzxid` (last data change), `pzxid` (last change
//!   of the children), `version` (data changes), `cversion` (children changes: every create or
//!   delete of a child adds one), `ephemeralOwner` (the session, 0 for a persistent node)
//!   (Programmer's Guide, "ZooKeeper Stat Structure"; `DataTree.createNode` / `deleteNode`).
//! - **create**: the parent must exist (`NONODE`), must not be ephemeral
//!   (`NOCHILDRENFOREPHEMERALS`); a sequential node's name is the path plus a counter of the
//!   parent, as `%010d` (`PrepRequestProcessor.pRequest2TxnCreate`, from the parent's
//!   change record's cversion; Programmer's Guide "Sequence Nodes -- Unique Naming": "the
//!   counter used to store the next sequence number is a signed int maintained by the
//!   parent node"); an existing name is `NODEEXISTS`. As ZooKeeper 3.8.0 answers (the
//!   recording in `tests/zookeeper/`), that counter counts the parent's child **creates**
//!   only, while the parent's `cversion` counts deletes too: after creating `n-0000000000`
//!   and `x` and deleting `n-0000000000`, the next sequential child is `n-0000000002` and the
//!   parent's cversion is 4 once it is created.
//! - **delete**: `NONODE`, `BADVERSION` (an expected version other than -1 that differs),
//!   `NOTEMPTY` (a node with children).
//! - **Sessions**: a session's timeout is negotiated by the server within
//!   `[minSessionTimeout, maxSessionTimeout]`, by default `[2, 20] x tickTime`
//!   (`ZooKeeperServer.processConnectRequest`; Programmer's Guide "ZooKeeper Sessions": "the
//!   current implementation requires that the timeout be a minimum of 2 times the tickTime
//!   and a maximum of 20 times the tickTime"). When the session closes or expires
//!   (`closeSession`), every ephemeral node it owns is deleted in the same transaction
//!   (`DataTree.killSession`), and its watches go.
//! - **Watches** are one-shot (Programmer's Guide, "ZooKeeper Watches": "a watch event is
//!   one-time trigger"): `exists` sets a watch whether or not the node exists (it fires on
//!   `NodeCreated`, `NodeDeleted` or `NodeDataChanged`); `getData` sets one only on an
//!   existing node (`NodeDeleted`, `NodeDataChanged`); `getChildren` sets a child watch on an
//!   existing node (`NodeChildrenChanged` when a child is created or deleted, `NodeDeleted`
//!   when the node itself goes) (`WatchManager`, `DataTree.createNode` / `deleteNode`
//!   triggers). A triggered watch is removed before its event is sent.
//!
//! Where the ensemble differs from ZooKeeper's servers (the watches here are replicated with
//! the tree, ZooKeeper keeps them in the memory of the server a client is connected to and
//! re-registers them on reconnect with `SetWatches`; reads go through the log, ZooKeeper
//! serves them from the connected server's copy) is discussed in [`super::zk_lock`].

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A session id (the id of the store lease that carries the session's expiry).
pub type SessionId = u64;

/// The session timeout the server grants for `requested` with `tick` (`tickTime`):
/// `requested` clamped to `[2, 20] x tick`, ZooKeeper's default `minSessionTimeout` and
/// `maxSessionTimeout` (`ZooKeeperServer.processConnectRequest`). Nanoseconds.
pub fn negotiate_timeout(requested: u64, tick: u64) -> u64 {
    requested.clamp(tick.saturating_mul(2), tick.saturating_mul(20))
}

/// A znode's stat, as ZooKeeper's `Stat` reports it (times and data length left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    /// The zxid of the create.
    pub czxid: u64,
    /// The zxid of the last data change (the create's at first).
    pub mzxid: u64,
    /// The zxid of the last change of the children (the create's at first).
    pub pzxid: u64,
    /// Number of data changes.
    pub version: i32,
    /// Number of children changes (creates and deletes of children).
    pub cversion: i32,
    /// The owning session of an ephemeral node; 0 for a persistent node.
    pub ephemeral_owner: SessionId,
    /// Number of children.
    pub num_children: u32,
}

/// One operation of the ZooKeeper API, as a client sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum ZkOp {
    /// `create(path, mode)`; the reply carries the stat too (ZooKeeper's `create2`).
    Create {
        /// The path (for a sequential node, its prefix).
        path: String,
        /// `EPHEMERAL*`: deleted when the session ends.
        ephemeral: bool,
        /// `*SEQUENTIAL`: the parent's cversion is appended.
        sequential: bool,
    },
    /// `delete(path, version)`; `version` -1 matches any.
    Delete {
        /// The path.
        path: String,
        /// The expected version, or -1.
        version: i32,
    },
    /// `exists(path, watch)`.
    Exists {
        /// The path.
        path: String,
        /// Leave a watch.
        watch: bool,
    },
    /// `getData(path, watch)` (the data itself is left out).
    GetData {
        /// The path.
        path: String,
        /// Leave a watch.
        watch: bool,
    },
    /// `getChildren(path, watch)`: the children's names, sorted.
    GetChildren {
        /// The path.
        path: String,
        /// Leave a child watch.
        watch: bool,
    },
}

impl ZkOp {
    /// True for the operations that are transactions (they take a zxid even when they fail).
    pub fn is_write(&self) -> bool {
        matches!(self, ZkOp::Create { .. } | ZkOp::Delete { .. })
    }
}

/// An error code of the API (`KeeperException.Code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ZkError {
    /// `NONODE`.
    NoNode,
    /// `NODEEXISTS`.
    NodeExists,
    /// `BADVERSION`.
    BadVersion,
    /// `NOTEMPTY`.
    NotEmpty,
    /// `NOCHILDRENFOREPHEMERALS`.
    NoChildrenForEphemerals,
    /// `SESSIONEXPIRED`: the request's session does not exist (any more).
    SessionExpired,
}

/// What an operation answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "result")]
pub enum ZkResult {
    /// `create`: the created path and its stat.
    Created {
        /// The path (with the sequence suffix for a sequential node).
        path: String,
        /// Its stat.
        stat: Stat,
    },
    /// `delete` succeeded.
    Deleted,
    /// `exists`: the stat, or none.
    Exists {
        /// The node's stat if it exists.
        stat: Option<Stat>,
    },
    /// `getData`: the node's stat.
    Data {
        /// Its stat.
        stat: Stat,
    },
    /// `getChildren`: the names, sorted.
    Children {
        /// Child names (not paths).
        children: Vec<String>,
    },
    /// The operation failed.
    Error {
        /// The code.
        code: ZkError,
    },
}

/// The type of a watch event (`Watcher.Event.EventType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub enum ZkEventType {
    /// `NodeCreated`.
    NodeCreated,
    /// `NodeDeleted`.
    NodeDeleted,
    /// `NodeDataChanged`.
    NodeDataChanged,
    /// `NodeChildrenChanged`.
    NodeChildrenChanged,
}

/// The kind of a registered watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum WatchKind {
    /// Set by `exists`.
    Exist,
    /// Set by `getData`.
    Data,
    /// Set by `getChildren`.
    Child,
}

/// A triggered watch: the session to tell, the path and the event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchFired {
    /// The session that set the watch.
    pub session: SessionId,
    /// The watched path.
    pub path: String,
    /// What happened.
    pub event: ZkEventType,
}

/// A change of the tree that the checker needs: a contender node (ephemeral and sequential)
/// created or any ephemeral-sequential node deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeChange {
    /// An ephemeral sequential node was created.
    Created {
        /// Its path.
        path: String,
        /// Its parent's path.
        parent: String,
        /// Its czxid.
        czxid: u64,
        /// The owning session.
        session: SessionId,
    },
    /// An ephemeral sequential node was deleted (`expired`: by its session's end).
    Deleted {
        /// Its path.
        path: String,
        /// Its czxid.
        czxid: u64,
        /// True if the session's end deleted it.
        expired: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Znode {
    stat: Stat,
    sequential: bool,
    children: BTreeSet<String>,
    /// Children created so far: the next sequence number.
    creates: i32,
}

/// The data tree, its sessions and watches. See the module docs for the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZnodeTree {
    zxid: u64,
    nodes: BTreeMap<String, Znode>,
    /// Live sessions and their negotiated timeouts, ns.
    sessions: BTreeMap<SessionId, u64>,
    watches: BTreeSet<(String, WatchKind, SessionId)>,
    /// Watch events not yet taken by the replica (it sends them if it leads).
    fired: Vec<WatchFired>,
    /// Contender changes not yet taken by the replica (it reports them).
    changes: Vec<TreeChange>,
}

impl Default for ZnodeTree {
    fn default() -> Self {
        ZnodeTree::new()
    }
}

fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or("")
}

impl ZnodeTree {
    /// A tree with the root `/` and nothing else, at zxid 0.
    pub fn new() -> ZnodeTree {
        let root = Znode {
            stat: Stat {
                czxid: 0,
                mzxid: 0,
                pzxid: 0,
                version: 0,
                cversion: 0,
                ephemeral_owner: 0,
                num_children: 0,
            },
            sequential: false,
            children: BTreeSet::new(),
            creates: 0,
        };
        ZnodeTree {
            zxid: 0,
            nodes: BTreeMap::from([("/".to_string(), root)]),
            sessions: BTreeMap::new(),
            watches: BTreeSet::new(),
            fired: Vec::new(),
            changes: Vec::new(),
        }
    }

    /// The last zxid applied.
    pub fn zxid(&self) -> u64 {
        self.zxid
    }

    /// The stat of `path`, if it exists.
    pub fn stat(&self, path: &str) -> Option<Stat> {
        self.nodes.get(path).map(|n| n.stat)
    }

    /// True if the session `id` is live.
    pub fn has_session(&self, id: SessionId) -> bool {
        self.sessions.contains_key(&id)
    }

    /// The watch events triggered since the last call, in trigger order.
    pub fn take_fired(&mut self) -> Vec<WatchFired> {
        std::mem::take(&mut self.fired)
    }

    /// The contender changes since the last call, in order.
    pub fn take_changes(&mut self) -> Vec<TreeChange> {
        std::mem::take(&mut self.changes)
    }

    /// `createSession`: a transaction (one zxid) that opens `id` with `timeout` (already
    /// negotiated, ns).
    pub fn create_session(&mut self, id: SessionId, timeout: u64) -> u64 {
        self.zxid += 1;
        self.sessions.insert(id, timeout);
        self.zxid
    }

    /// `closeSession` (closed by the client or expired by the leader): one zxid; every
    /// ephemeral node of the session is deleted in path order, and its watches go. Returns
    /// false (and takes no zxid) if the session does not exist.
    pub fn close_session(&mut self, id: SessionId, expired: bool) -> bool {
        if self.sessions.remove(&id).is_none() {
            return false;
        }
        self.zxid += 1;
        let owned: Vec<String> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.stat.ephemeral_owner == id)
            .map(|(p, _)| p.clone())
            .collect();
        for p in owned {
            self.remove(&p, expired);
        }
        self.watches.retain(|(_, _, s)| *s != id);
        true
    }

    /// Applies one operation of session `session` and returns its answer. A write takes a
    /// zxid whether it succeeds or not; a request of a session that does not exist is
    /// `SESSIONEXPIRED` and takes none (the server refuses it before it is a transaction).
    pub fn apply(&mut self, session: SessionId, op: &ZkOp) -> ZkResult {
        if !self.sessions.contains_key(&session) {
            return ZkResult::Error {
                code: ZkError::SessionExpired,
            };
        }
        if op.is_write() {
            self.zxid += 1;
        }
        let err = |code| ZkResult::Error { code };
        match op {
            ZkOp::Create {
                path,
                ephemeral,
                sequential,
            } => {
                let parent = parent_of(path).to_string();
                let Some(p) = self.nodes.get(&parent) else {
                    return err(ZkError::NoNode);
                };
                if p.stat.ephemeral_owner != 0 {
                    return err(ZkError::NoChildrenForEphemerals);
                }
                let path = if *sequential {
                    format!("{path}{:010}", p.creates)
                } else {
                    path.clone()
                };
                if self.nodes.contains_key(&path) {
                    return err(ZkError::NodeExists);
                }
                let z = self.zxid;
                let stat = Stat {
                    czxid: z,
                    mzxid: z,
                    pzxid: z,
                    version: 0,
                    cversion: 0,
                    ephemeral_owner: if *ephemeral { session } else { 0 },
                    num_children: 0,
                };
                self.nodes.insert(
                    path.clone(),
                    Znode {
                        stat,
                        sequential: *sequential,
                        children: BTreeSet::new(),
                        creates: 0,
                    },
                );
                let p = self.nodes.get_mut(&parent).expect("checked above");
                p.stat.cversion += 1;
                p.creates += 1;
                p.stat.pzxid = z;
                p.stat.num_children += 1;
                p.children.insert(name_of(&path).to_string());
                self.trigger(&path, &[WatchKind::Exist], ZkEventType::NodeCreated);
                self.trigger(
                    &parent,
                    &[WatchKind::Child],
                    ZkEventType::NodeChildrenChanged,
                );
                if *ephemeral && *sequential {
                    self.changes.push(TreeChange::Created {
                        path: path.clone(),
                        parent,
                        czxid: z,
                        session,
                    });
                }
                ZkResult::Created { path, stat }
            }
            ZkOp::Delete { path, version } => {
                let Some(n) = self.nodes.get(path) else {
                    return err(ZkError::NoNode);
                };
                if *version != -1 && *version != n.stat.version {
                    return err(ZkError::BadVersion);
                }
                if !n.children.is_empty() {
                    return err(ZkError::NotEmpty);
                }
                if path == "/" {
                    return err(ZkError::BadVersion);
                }
                self.remove(path, false);
                ZkResult::Deleted
            }
            ZkOp::Exists { path, watch } => {
                let stat = self.stat(path);
                if *watch {
                    self.watches
                        .insert((path.clone(), WatchKind::Exist, session));
                }
                ZkResult::Exists { stat }
            }
            ZkOp::GetData { path, watch } => match self.stat(path) {
                None => err(ZkError::NoNode),
                Some(stat) => {
                    if *watch {
                        self.watches
                            .insert((path.clone(), WatchKind::Data, session));
                    }
                    ZkResult::Data { stat }
                }
            },
            ZkOp::GetChildren { path, watch } => match self.nodes.get(path) {
                None => err(ZkError::NoNode),
                Some(n) => {
                    let children = n.children.iter().cloned().collect();
                    if *watch {
                        self.watches
                            .insert((path.clone(), WatchKind::Child, session));
                    }
                    ZkResult::Children { children }
                }
            },
        }
    }

    /// Deletes `path` (a leaf) at the current zxid and triggers its watches.
    fn remove(&mut self, path: &str, expired: bool) {
        let Some(n) = self.nodes.remove(path) else {
            return;
        };
        let parent = parent_of(path).to_string();
        if let Some(p) = self.nodes.get_mut(&parent) {
            p.stat.cversion += 1;
            p.stat.pzxid = self.zxid;
            p.stat.num_children -= 1;
            p.children.remove(name_of(path));
        }
        self.trigger(
            path,
            &[WatchKind::Exist, WatchKind::Data, WatchKind::Child],
            ZkEventType::NodeDeleted,
        );
        self.trigger(
            &parent,
            &[WatchKind::Child],
            ZkEventType::NodeChildrenChanged,
        );
        if n.stat.ephemeral_owner != 0 && n.sequential {
            self.changes.push(TreeChange::Deleted {
                path: path.to_string(),
                czxid: n.stat.czxid,
                expired,
            });
        }
    }

    /// Removes the watches of `kinds` on `path` and queues one event per session that had
    /// any of them (a session set several kinds on one path hears the event once, as
    /// ZooKeeper's client delivers it to its one default watcher).
    fn trigger(&mut self, path: &str, kinds: &[WatchKind], event: ZkEventType) {
        let hit: Vec<(String, WatchKind, SessionId)> = self
            .watches
            .iter()
            .filter(|(p, k, _)| p == path && kinds.contains(k))
            .cloned()
            .collect();
        let mut told = BTreeSet::new();
        for w in hit {
            self.watches.remove(&w);
            if told.insert(w.2) {
                self.fired.push(WatchFired {
                    session: w.2,
                    path: path.to_string(),
                    event,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(path: &str, ephemeral: bool, sequential: bool) -> ZkOp {
        ZkOp::Create {
            path: path.into(),
            ephemeral,
            sequential,
        }
    }

    /// Sequence numbers count the parent's creates, its cversion counts deletes too; every write
    /// takes a zxid, a failed one too; a session's end deletes its ephemerals in one zxid and
    /// fires the watches set on them once.
    #[test]
    fn sequence_numbers_zxids_and_session_expiry() {
        let mut t = ZnodeTree::new();
        assert_eq!(t.create_session(10, 4_000), 1);
        assert_eq!(t.create_session(11, 4_000), 2);
        assert!(matches!(
            t.apply(10, &create("/lock", false, false)),
            ZkResult::Created { .. }
        ));
        assert_eq!(t.zxid(), 3);
        assert_eq!(
            t.apply(10, &create("/lock", false, false)),
            ZkResult::Error {
                code: ZkError::NodeExists
            }
        );
        assert_eq!(t.zxid(), 4, "a failed create takes a zxid");
        let ZkResult::Created { path, stat } = t.apply(10, &create("/lock/n-", true, true)) else {
            panic!("created")
        };
        assert_eq!((path.as_str(), stat.czxid), ("/lock/n-0000000000", 5));
        assert_eq!(
            t.apply(
                11,
                &ZkOp::GetData {
                    path: path.clone(),
                    watch: true
                }
            ),
            ZkResult::Data { stat }
        );
        assert_eq!(t.zxid(), 5, "reads take none");
        let ZkResult::Created { path: p2, .. } = t.apply(11, &create("/lock/n-", true, true))
        else {
            panic!("created")
        };
        assert_eq!(p2, "/lock/n-0000000001");
        assert_eq!(
            t.apply(11, &create("/lock/n-0000000001/x", false, false)),
            ZkResult::Error {
                code: ZkError::NoChildrenForEphemerals
            }
        );
        assert!(t.close_session(10, true));
        assert_eq!(t.zxid(), 8);
        assert_eq!(t.stat(&path), None);
        assert_eq!(
            t.take_fired(),
            vec![WatchFired {
                session: 11,
                path: path.clone(),
                event: ZkEventType::NodeDeleted
            }]
        );
        let lock = t.stat("/lock").expect("the lock path");
        assert_eq!((lock.cversion, lock.pzxid, lock.num_children), (3, 8, 1));
        let ZkResult::Created { path: p3, .. } = t.apply(11, &create("/lock/n-", true, true))
        else {
            panic!("created")
        };
        assert_eq!(
            p3, "/lock/n-0000000002",
            "the delete advanced cversion, not the counter"
        );
        assert_eq!(
            t.apply(
                10,
                &ZkOp::Exists {
                    path: "/lock".into(),
                    watch: false
                }
            ),
            ZkResult::Error {
                code: ZkError::SessionExpired
            }
        );
        assert!(!t.close_session(10, false));
    }
}
