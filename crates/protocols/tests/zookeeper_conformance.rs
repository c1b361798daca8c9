//! The ZooKeeper model held to a real server: `tests/zookeeper/zookeeper-3.8.json` is what
//! ZooKeeper 3.8.0 (Debian's `zookeeper`, standalone, tickTime 500 ms) answered to
//! `tests/zookeeper/record.py` through kazoo 2.10.0; `record.sh` re-records it (`.ci/run`
//! does, and compares). This test replays every recorded step against the model:
//! - the negotiated session timeouts ([`negotiate_timeout`]);
//! - every API call of sessions a, b, c against a [`ZnodeTree`]: created paths (sequence
//!   numbers), error codes, stats (czxid, mzxid, pzxid, version, cversion, ephemeral owner,
//!   children), the zxid of each reply header (relative to session a's first read), the
//!   watch events each call triggered, session c's expiry deleting its ephemeral node (one
//!   zxid) and session b's close removing its watches;
//! - session c's states after its pause: the client learns of its expiry only when it
//!   reconnects (CONNECTED, SUSPENDED, LOST), with [`ZkLockClient`];
//! - the client API calls kazoo's `Lock` made for acquire and release, against the calls the
//!   modelled recipe makes ([`ZkLockClient::calls`]), phase by phase and in order.

use serde_json::Value;
use splitbrain_engine::{LocalTime, NodeId, SimDuration};
use splitbrain_protocols::raft::zk_lock::{ZkClientEnv, ZkObs};
use splitbrain_protocols::raft::znode::{SessionId, Stat};
use splitbrain_protocols::raft::{
    negotiate_timeout, OnSuspended, RaftClientTimer, RaftMsg, ZkError, ZkEventType, ZkLockClient,
    ZkLockConfig, ZkOp, ZkResult, ZnodeTree,
};
use std::collections::BTreeMap;

fn recording() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/zookeeper/zookeeper-3.8.json"
    );
    let text = std::fs::read_to_string(path).expect("the committed recording");
    serde_json::from_str(&text).expect("valid JSON")
}

fn error_name(code: ZkError) -> &'static str {
    match code {
        ZkError::NoNode => "NoNodeError",
        ZkError::NodeExists => "NodeExistsError",
        ZkError::BadVersion => "BadVersionError",
        ZkError::NotEmpty => "NotEmptyError",
        ZkError::NoChildrenForEphemerals => "NoChildrenForEphemeralsError",
        ZkError::SessionExpired => "SessionExpiredError",
    }
}

fn event_name(e: ZkEventType) -> &'static str {
    match e {
        ZkEventType::NodeCreated => "CREATED",
        ZkEventType::NodeDeleted => "DELETED",
        ZkEventType::NodeDataChanged => "CHANGED",
        ZkEventType::NodeChildrenChanged => "CHILD",
    }
}

fn stat_json(s: Option<Stat>, base: u64) -> Value {
    match s {
        None => Value::Null,
        Some(s) => serde_json::json!({
            "czxid": s.czxid as i64 - base as i64,
            "mzxid": s.mzxid as i64 - base as i64,
            "pzxid": s.pzxid as i64 - base as i64,
            "version": s.version,
            "cversion": s.cversion,
            "ephemeral_owner": s.ephemeral_owner != 0,
            "num_children": s.num_children,
        }),
    }
}

/// The model's answer in the recording's shape.
fn result_json(r: ZkResult, base: u64) -> Value {
    match r {
        ZkResult::Created { path, stat } => {
            serde_json::json!({"path": path, "stat": stat_json(Some(stat), base)})
        }
        ZkResult::Deleted => Value::Null,
        ZkResult::Exists { stat } => serde_json::json!({"stat": stat_json(stat, base)}),
        ZkResult::Data { stat } => serde_json::json!({"stat": stat_json(Some(stat), base)}),
        ZkResult::Children { children } => serde_json::json!({ "children": children }),
        ZkResult::Error { code } => serde_json::json!({"error": error_name(code)}),
    }
}

#[test]
fn negotiated_session_timeouts_are_the_servers() {
    let rec = recording();
    let tick = rec["tick_ms"].as_u64().expect("tick_ms") * 1_000_000;
    let neg = rec["negotiation"].as_array().expect("negotiation");
    assert_eq!(neg.len(), 3);
    for n in neg {
        let asked = n["requested_ms"].as_u64().expect("requested") * 1_000_000;
        let got = n["negotiated_ms"].as_u64().expect("negotiated") * 1_000_000;
        assert_eq!(negotiate_timeout(asked, tick), got, "{n}");
    }
}

#[test]
fn every_recorded_step_replays_against_the_tree() {
    let rec = recording();
    let mut t = ZnodeTree::new();
    let ids: BTreeMap<&str, SessionId> = BTreeMap::from([("a", 1), ("b", 2), ("c", 3)]);
    let name = |id: SessionId| match id {
        1 => "a",
        2 => "b",
        _ => "c",
    };
    t.create_session(1, 4_000_000_000);
    let base = t.zxid();
    let steps = rec["steps"].as_array().expect("steps");
    assert!(steps.len() >= 20, "the recording has its steps");
    for (i, s) in steps.iter().enumerate() {
        let who = s["session"].as_str().expect("session");
        let session = ids[who];
        let path = s["path"].as_str().unwrap_or("").to_string();
        let watch = s["watch"].as_bool().unwrap_or(false);
        let op = match s["call"].as_str().expect("call") {
            "connect" => {
                t.create_session(session, 4_000_000_000);
                None
            }
            "expire" => {
                assert!(t.close_session(session, true));
                None
            }
            "close" => {
                assert!(t.close_session(session, false));
                None
            }
            "create" => Some(ZkOp::Create {
                path,
                ephemeral: s["ephemeral"].as_bool().unwrap_or(false),
                sequential: s["sequence"].as_bool().unwrap_or(false),
            }),
            "delete" => Some(ZkOp::Delete {
                path,
                version: s["version"].as_i64().map_or(-1, |v| v as i32),
            }),
            "exists" => Some(ZkOp::Exists { path, watch }),
            "get" => Some(ZkOp::GetData { path, watch }),
            "get_children" => Some(ZkOp::GetChildren { path, watch }),
            other => panic!("step {i}: unknown call {other}"),
        };
        if let Some(op) = op {
            let got = result_json(t.apply(session, &op), base);
            let want = &s["result"];
            if s["zxid"].is_null() {
                // Session c's create, made in another process: only its path was recorded.
                assert_eq!(got["path"], want["path"], "step {i} {s}");
            } else {
                assert_eq!(&got, want, "step {i}: {s}");
                assert_eq!(
                    Some(t.zxid() as i64 - base as i64),
                    s["zxid"].as_i64(),
                    "step {i}: the reply header's zxid: {s}"
                );
            }
        }
        let mut fired: Vec<Value> = t
            .take_fired()
            .into_iter()
            .map(|w| serde_json::json!([name(w.session), event_name(w.event), w.path]))
            .collect();
        fired.sort_by_key(|v| v.to_string());
        let mut want: Vec<Value> = s["events"].as_array().expect("events").clone();
        want.sort_by_key(|v| v.to_string());
        assert_eq!(fired, want, "step {i}: watch events: {s}");
    }
}

/// A synchronous ensemble for the client: one tree, replies at once, timers never fire
/// unless the test fires them.
#[derive(Default)]
struct Net {
    tree: ZnodeTree,
    next_session: SessionId,
    clients: BTreeMap<SessionId, usize>,
    inbox: Vec<(usize, RaftMsg)>,
    /// Per client: (outbox, claims).
    outbox: Vec<Vec<RaftMsg>>,
    claims: Vec<Vec<ZkObs>>,
    now: u64,
    /// Sessions the server has forgotten (expired).
    refuse_pings: bool,
}

struct Env<'a> {
    net: &'a mut Net,
    me: usize,
}

impl ZkClientEnv for Env<'_> {
    type TimerHandle = ();
    fn send(&mut self, _to: NodeId, msg: RaftMsg) {
        self.net.outbox[self.me].push(msg);
    }
    fn set_timer(&mut self, _after: SimDuration, _timer: RaftClientTimer) {}
    fn cancel_timer(&mut self, _handle: ()) {}
    fn mono_now(&self) -> LocalTime {
        LocalTime(self.net.now)
    }
    fn observe(&mut self, obs: ZkObs) {
        self.net.claims[self.me].push(obs);
    }
}

impl Net {
    fn new(clients: usize) -> Net {
        Net {
            next_session: 1,
            outbox: vec![Vec::new(); clients],
            claims: vec![Vec::new(); clients],
            ..Net::default()
        }
    }

    /// Serves every request until nothing is in flight.
    fn run(&mut self, cs: &mut [ZkLockClient<()>]) {
        loop {
            let mut any = false;
            for me in 0..cs.len() {
                for msg in std::mem::take(&mut self.outbox[me]) {
                    any = true;
                    self.serve(me, msg);
                }
            }
            for (me, msg) in std::mem::take(&mut self.inbox) {
                any = true;
                cs[me].on_message(&mut Env { net: self, me }, NodeId(0), msg);
            }
            if !any {
                return;
            }
        }
    }

    fn serve(&mut self, me: usize, msg: RaftMsg) {
        let reply = match msg {
            RaftMsg::ZkConnect { req, timeout } => {
                let session = self.next_session;
                self.next_session += 1;
                let zxid = self.tree.create_session(session, timeout.0);
                self.clients.insert(session, me);
                RaftMsg::ZkConnected {
                    req,
                    session,
                    timeout,
                    zxid,
                }
            }
            RaftMsg::ZkRequest { req, session, op } => {
                let result = self.tree.apply(session, &op);
                RaftMsg::ZkReply {
                    req,
                    zxid: self.tree.zxid(),
                    result,
                }
            }
            RaftMsg::KeepAlive { req, lease } if self.refuse_pings => {
                RaftMsg::LeaseNotFound { req, lease }
            }
            RaftMsg::KeepAlive { req, lease } => RaftMsg::KeptAlive {
                req,
                lease,
                ttl: SimDuration::from_secs(4),
            },
            other => panic!("the client sent {other:?}"),
        };
        self.inbox.push((me, reply));
        for w in self.tree.take_fired() {
            let to = self.clients[&w.session];
            self.inbox.push((
                to,
                RaftMsg::ZkWatchEvent {
                    session: w.session,
                    path: w.path,
                    event: w.event,
                },
            ));
        }
    }
}

fn client(guid: &str) -> ZkLockClient<()> {
    ZkLockClient::new(ZkLockConfig {
        servers: vec![NodeId(0)],
        lock: "lock".to_string(),
        session_timeout: SimDuration::from_secs(4),
        protection: true,
        on_suspended: OnSuspended::GiveUp,
        guid: guid.to_string(),
    })
}

#[test]
fn the_modelled_recipe_makes_kazoos_calls_in_kazoos_order() {
    let rec = recording();
    let want: Vec<[String; 4]> = rec["lock_calls"]
        .as_array()
        .expect("lock_calls")
        .iter()
        .map(|c| {
            let f = |i: usize| c[i].as_str().expect("a string").to_string();
            [f(0), f(1), f(2), f(3)]
        })
        .collect();
    let mut net = Net::new(2);
    let mut cs = vec![
        client("0123456789abcdef0123456789abcdef"),
        client("fedcba9876543210fedcba9876543210"),
    ];
    let mut got: Vec<[String; 4]> = Vec::new();
    let mut seen = [0usize; 2];
    let mut take = |phase: &str, cs: &[ZkLockClient<()>], got: &mut Vec<[String; 4]>| {
        for (i, who) in ["a", "b"].into_iter().enumerate() {
            for c in &cs[i].calls()[seen[i]..] {
                got.push([
                    phase.to_string(),
                    who.to_string(),
                    c.method.to_string(),
                    c.path.clone(),
                ]);
            }
            seen[i] = cs[i].calls().len();
        }
    };
    cs[0].acquire(&mut Env {
        net: &mut net,
        me: 0,
    });
    net.run(&mut cs);
    assert!(cs[0].hold().is_some(), "a holds");
    take("acquire", &cs, &mut got);
    cs[1].acquire(&mut Env {
        net: &mut net,
        me: 1,
    });
    net.run(&mut cs);
    assert!(cs[1].hold().is_none(), "b waits");
    take("contended_acquire", &cs, &mut got);
    cs[0].release(&mut Env {
        net: &mut net,
        me: 0,
    });
    net.run(&mut cs);
    assert!(cs[1].hold().is_some(), "b holds once a released");
    take("release", &cs, &mut got);
    cs[1].release(&mut Env {
        net: &mut net,
        me: 1,
    });
    net.run(&mut cs);
    take("release_b", &cs, &mut got);
    cs[0].acquire(&mut Env {
        net: &mut net,
        me: 0,
    });
    net.run(&mut cs);
    assert!(cs[0].hold().is_some(), "a holds again");
    cs[0].release(&mut Env {
        net: &mut net,
        me: 0,
    });
    net.run(&mut cs);
    take("reacquire", &cs, &mut got);
    assert_eq!(got, want);
}

#[test]
fn a_client_learns_of_its_expiry_only_when_it_reconnects() {
    let rec = recording();
    let want: Vec<&str> = rec["c_states_after_thaw"]
        .as_array()
        .expect("states")
        .iter()
        .map(|s| s.as_str().expect("a state"))
        .collect();
    let mut net = Net::new(1);
    let mut cs = vec![client("0123456789abcdef0123456789abcdef")];
    let mut states = Vec::new();
    cs[0].acquire(&mut Env {
        net: &mut net,
        me: 0,
    });
    net.run(&mut cs);
    states.push(cs[0].state());
    // Frozen past the session timeout: the ensemble forgot the session meanwhile. On waking
    // the client first notices that it heard nothing for its read timeout...
    net.now = SimDuration::from_secs(30).0;
    net.refuse_pings = true;
    cs[0].on_timer(
        &mut Env {
            net: &mut net,
            me: 0,
        },
        RaftClientTimer::Deadline,
    );
    states.push(cs[0].state());
    // ...and hears of the expiry from the server it reconnects to.
    net.run(&mut cs);
    states.push(cs[0].state());
    assert_eq!(states, want);
    assert!(
        matches!(net.claims[0].last(), Some(ZkObs::Lost { .. })),
        "{:?}",
        net.claims[0]
    );
}
