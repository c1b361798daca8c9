//! Replays what a real etcd answered (`tests/etcd/etcd-3.4.23.json`, recorded by
//! `tests/etcd/record.py` from Debian's etcd-server 3.4.23 on loopback) against the model's
//! store ([`LockStore`]), step by step: every recorded revision, txn outcome, key (create and
//! mod revision, lease), deleted count, lease-not-found error, keepalive TTL and watch DELETE
//! event must come out of the model the same. No server is needed.
//!
//! How each recorded operation maps onto the model: `lease_grant` -> `Command::LeaseGrant`;
//! `mutex_txn` -> `Command::MutexTxn`; `range_last_below` / `get` -> `Command::Range`;
//! `delete` -> `Command::Delete`; `lease_revoke` -> `Command::Release`; `expire` (the server's
//! own expiry, waited for) -> `Command::ExpireLease`; `keepalive` -> the leader's answer to a
//! `KeepAlive` (the lease's TTL if the store holds the lease, TTL 0 = not found otherwise);
//! `watch_delete` -> [`LockStore::deleted_since_created`] (a DELETE event recorded iff the
//! model's watch fires; the PUT events `waitDelete` skips are not modelled).

use serde_json::Value;
use splitbrain_engine::{NodeId, SimDuration};
use splitbrain_protocols::raft::store::ApplyResult;
use splitbrain_protocols::raft::{Command, Kv, LockStore, RangeOrder};
use std::collections::BTreeMap;

const RECORDING: &str = include_str!("etcd/etcd-3.4.23.json");

/// The model replaying a recording: the store, the log index of the next command, and the
/// recording's lease names bound to the model's lease ids.
struct Replay {
    store: LockStore,
    index: u64,
    leases: BTreeMap<String, u64>,
    /// Each key's create revision (keys are never re-created under one name here).
    created: BTreeMap<String, u64>,
    /// The revision at which each deleted key went.
    deleted_at: BTreeMap<String, u64>,
}

impl Replay {
    fn apply(&mut self, c: Command) -> ApplyResult {
        self.index += 1;
        let r = self.store.apply(self.index, &c);
        let deleted = match &r {
            ApplyResult::Txn {
                created: Some(k), ..
            } => {
                self.created.insert(k.key.clone(), k.revision);
                &[][..]
            }
            ApplyResult::Deleted { deleted, .. }
            | ApplyResult::Released { deleted, .. }
            | ApplyResult::Expired { deleted, .. } => &deleted[..],
            _ => &[][..],
        };
        for (k, _) in deleted {
            self.deleted_at.insert(k.clone(), self.store.revision());
        }
        r
    }

    fn lease(&self, name: &str) -> u64 {
        // A lease the recording never granted ("Z") is an id the model never drew either.
        self.leases.get(name).copied().unwrap_or(999_999)
    }

    /// `m/{A}` -> `m/<A's model id in hex>`.
    fn real_key(&self, pattern: &str) -> String {
        let mut k = pattern.to_string();
        for (name, id) in &self.leases {
            k = k.replace(&format!("{{{name}}}"), &format!("{id:x}"));
        }
        k
    }

    /// A model key-value in the recording's vocabulary.
    fn kv(&self, kv: &Kv) -> Value {
        let name = |id: u64| {
            self.leases
                .iter()
                .find(|(_, v)| **v == id)
                .map(|(n, _)| n.clone())
        };
        let mut key = kv.key.clone();
        if let Some(n) = name(kv.lease) {
            let hex = format!("{:x}", kv.lease);
            if key.ends_with(&format!("/{hex}")) {
                key = format!("{}{{{n}}}", &key[..key.len() - hex.len()]);
            }
        }
        serde_json::json!({
            "key": key,
            "create_revision": kv.create_revision,
            "mod_revision": kv.mod_revision,
            "lease": name(kv.lease),
        })
    }

    fn kvs(&self, kvs: &[Kv]) -> Value {
        Value::Array(kvs.iter().map(|kv| self.kv(kv)).collect())
    }

    /// What the model answers to `step`, in the recording's shape.
    fn answer(&mut self, step: &Value) -> Value {
        let c = NodeId(1);
        let s = |f: &str| step[f].as_str().expect("a string field").to_string();
        let rev = |r: &Replay| serde_json::json!(r.store.revision());
        match step["op"].as_str().expect("an op") {
            "lease_grant" => {
                let ttl = step["ttl_s"].as_u64().expect("ttl_s");
                let r = self.apply(Command::LeaseGrant {
                    client: c,
                    req: 1,
                    ttl: SimDuration::from_secs(ttl),
                });
                let ApplyResult::LeaseGranted { lease, ttl, .. } = r else {
                    panic!("a grant: {r:?}")
                };
                self.leases.insert(s("lease"), lease);
                serde_json::json!({"revision": self.store.revision(), "ttl_s": ttl.0 / 1_000_000_000})
            }
            "mutex_txn" => {
                let prefix = s("prefix");
                let lease = self.lease(&s("lease"));
                let key = format!("{prefix}{lease:x}");
                match self.apply(Command::MutexTxn {
                    client: c,
                    req: 1,
                    key: key.clone(),
                    lease,
                    prefix,
                }) {
                    ApplyResult::TxnLeaseNotFound { .. } => {
                        serde_json::json!({"error": "etcdserver: requested lease not found"})
                    }
                    ApplyResult::Txn {
                        revision,
                        succeeded,
                        owner,
                        ..
                    } => {
                        let existing = (!succeeded)
                            .then(|| {
                                self.store
                                    .range(&key, false, 0, RangeOrder::Key, 0)
                                    .first()
                                    .map(|kv| self.kv(kv))
                            })
                            .flatten();
                        serde_json::json!({
                            "revision": revision,
                            "succeeded": succeeded,
                            "existing": existing,
                            "owner": owner.map(|kv| self.kv(&kv)),
                        })
                    }
                    r => panic!("a txn: {r:?}"),
                }
            }
            "range_last_below" | "get" => {
                let last = step["op"] == "range_last_below";
                let key = if last {
                    s("prefix")
                } else {
                    self.real_key(&s("key"))
                };
                let r = self.apply(Command::Range {
                    client: c,
                    req: 1,
                    key,
                    prefix: last,
                    max_create_revision: step["max_create_revision"].as_u64().unwrap_or(0),
                    order: if last {
                        RangeOrder::LastCreate
                    } else {
                        RangeOrder::Key
                    },
                    limit: u64::from(last),
                });
                let ApplyResult::Range { revision, kvs, .. } = r else {
                    panic!("a range: {r:?}")
                };
                serde_json::json!({"revision": revision, "kvs": self.kvs(&kvs)})
            }
            "delete" => {
                let r = self.apply(Command::Delete {
                    client: c,
                    req: 1,
                    key: self.real_key(&s("key")),
                });
                let ApplyResult::Deleted {
                    revision, deleted, ..
                } = r
                else {
                    panic!("a delete: {r:?}")
                };
                serde_json::json!({"revision": revision, "deleted": deleted.len()})
            }
            "lease_revoke" => {
                let lease = self.lease(&s("lease"));
                match self.apply(Command::Release {
                    client: c,
                    req: 1,
                    lease,
                }) {
                    ApplyResult::Released { freed: true, .. } => {
                        serde_json::json!({"revision": rev(self)})
                    }
                    ApplyResult::Released { freed: false, .. } => {
                        serde_json::json!({"error": "etcdserver: requested lease not found"})
                    }
                    r => panic!("a revoke: {r:?}"),
                }
            }
            "expire" => {
                let lease = self.lease(&s("lease"));
                self.apply(Command::ExpireLease { lease });
                serde_json::json!({"revision": rev(self)})
            }
            "keepalive" => {
                let ttl = self
                    .store
                    .lease(self.lease(&s("lease")))
                    .map_or(0, |l| l.ttl.0 / 1_000_000_000);
                serde_json::json!({"ttl_s": ttl})
            }
            "watch_delete" => {
                let key = self.real_key(&s("key"));
                let created = self
                    .created
                    .get(&key)
                    .copied()
                    .expect("a watched key was created");
                let events: Vec<Value> = if self.store.deleted_since_created(&key, created) {
                    vec![serde_json::json!({
                        "type": "DELETE",
                        "key": s("key"),
                        "mod_revision": self.deleted_at[&key],
                    })]
                } else {
                    Vec::new()
                };
                serde_json::json!({ "events": events })
            }
            op => panic!("an op the replay does not know: {op}"),
        }
    }
}

/// The recorded answer in the model's terms: a watch's events are its DELETE events only
/// (`waitDelete` skips the others; the model's watch reports deletions alone).
fn expected(step: &Value) -> Value {
    let mut a = step["answer"].clone();
    if step["op"] == "watch_delete" {
        let deletes: Vec<Value> = a["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter(|e| e["type"] == "DELETE")
            .cloned()
            .collect();
        a["events"] = Value::Array(deletes);
    }
    a
}

#[test]
fn the_model_answers_every_recorded_etcd_step_as_etcd_did() {
    let doc: Value = serde_json::from_str(RECORDING).expect("the recording is JSON");
    let steps = doc["steps"].as_array().expect("steps");
    assert!(steps.len() >= 20, "a recording of {} steps", steps.len());
    let mut r = Replay {
        store: LockStore::new(),
        index: 0,
        leases: BTreeMap::new(),
        created: BTreeMap::new(),
        deleted_at: BTreeMap::new(),
    };
    let mut failures = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let got = r.answer(step);
        let want = expected(step);
        if got != want {
            failures.push(format!("step {i} {}: etcd {want}, model {got}", step["op"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The recording covers what the issue names: grant, keepalive, revoke, expiry removing a
/// key, the txn comparing create revisions both ways, a put under a missing lease, reads
/// bounded by create revision, and a watch firing on a delete.
#[test]
fn the_recording_covers_the_etcd_operations_the_recipes_use() {
    let doc: Value = serde_json::from_str(RECORDING).expect("the recording is JSON");
    assert!(doc["server"].as_str().is_some_and(|v| v.contains("3.4")));
    let ops: Vec<&str> = doc["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["op"].as_str().expect("op"))
        .collect();
    for op in [
        "lease_grant",
        "keepalive",
        "lease_revoke",
        "expire",
        "mutex_txn",
        "range_last_below",
        "get",
        "delete",
        "watch_delete",
    ] {
        assert!(ops.contains(&op), "no {op} step");
    }
    let text = RECORDING;
    assert!(
        text.contains("\"succeeded\": false"),
        "no txn taking the Else branch"
    );
    assert!(text.contains("requested lease not found"));
    assert!(
        text.contains("\"type\": \"DELETE\""),
        "no watch DELETE event"
    );
}
