//! The Redis lock variants of issue 13, each input pinned with its exact effect on a whole
//! run: realistic wall clocks, and (as they land) refresh, retry, validity and replication
//! variants.

use splitbrain_engine::{Observation, SimTime, WallTime, DEFAULT_WALL_START_NS};
use splitbrain_protocols::Obs;
use splitbrain_scenario::{execute, load_str, RunResult};

fn run(src: &str, seed: u64) -> RunResult {
    let plan = load_str("inline.json", src).unwrap();
    execute(&plan, seed, None).unwrap()
}

/// `(true time, node name, observation kind)` of every observation of `kinds`.
fn obs_of(r: &RunResult, kinds: &[&str]) -> Vec<(SimTime, String, String)> {
    r.record
        .observations
        .iter()
        .filter(|o| kinds.contains(&o.obs.kind()))
        .map(|o| (o.t, r.record.name(o.node), o.obs.kind().to_string()))
        .collect()
}

/// Issue 13's input: lesson 08 without client-2, client-1 `start_after: 2s`, and at 1 s the
/// Redis instance's wall clock steps back 20 s. `wall_clock_start` replaces `{start}`.
fn lesson08_step_back(start: Option<&str>) -> String {
    let start = start.map_or(String::new(), |s| format!("\"wall_clock_start\": \"{s}\","));
    format!(
        r#"{{
  "splitbrain": 1, "name": "issue13-wall", "duration": "10s", {start}
  "network": {{ "delay": {{ "fixed": "1ms" }} }},
  "nodes": {{
    "redis": {{ "role": "redis" }},
    "storage": {{ "role": "storage", "fencing": false }},
    "client-1": {{ "role": "worker", "lock": "redis", "instance": "redis", "storage": "storage",
                  "ttl": "10s", "work_time": "2s", "rounds": 1, "start_after": "2s" }}
  }},
  "faults": [ {{ "at": "1s", "clock_step": "redis", "by": "-20s" }} ],
  "check": ["exclusive_holders"]
}}"#
    )
}

/// Issue 13: with wall clocks at a realistic Unix time (the default, 2026-01-01T00:00:00Z)
/// the Redis instance grants the SET NX PX at 2.001 s, 20 s step back or not, as a real
/// server (wall about 1.7e12 ms) does; its key's deadline is 2026-01-01T00:00:11.001Z minus
/// the step, +1 ms (the first expired ms). Before the fix wall clocks started at 0 and every
/// acquisition failed with `ERR invalid expire time` for 8 s; `wall_clock_start` at the epoch
/// still reproduces that.
#[test]
fn issue13_step_back_20s_grants_at_2_001s() {
    let r = run(&lesson08_step_back(None), 0);
    let got = obs_of(&r, &["redis_key_set", "lock_acquired", "lock_failed"]);
    assert_eq!(
        got[..2],
        [
            (
                SimTime(2_001_000_000),
                "redis".into(),
                "redis_key_set".into()
            ),
            (
                SimTime(2_002_000_000),
                "client-1".into(),
                "lock_acquired".into()
            ),
        ]
    );
    let set = r
        .record
        .observations
        .iter()
        .find_map(|o| match &o.obs {
            Obs::RedisKeySet { deadline_wall, .. } => *deadline_wall,
            _ => None,
        })
        .unwrap();
    // wall(2.001 s) = start - 20 s + 2.001 s; PX 10000 -> deadline ms + 1 ms.
    assert_eq!(
        set,
        WallTime(DEFAULT_WALL_START_NS - 20_000_000_000 + 12_002_000_000)
    );
    assert_eq!(set.rfc3339(), "2025-12-31T23:59:52.002Z");

    // The same run with the wall clocks at the Unix epoch: Redis refuses every SET .. PX
    // while its wall clock reads at most -10 s (now_ms + ttl <= 0), i.e. until true 11 s,
    // past the end of this 10 s run.
    let r = run(&lesson08_step_back(Some("1970-01-01T00:00:00Z")), 0);
    assert_eq!(obs_of(&r, &["lock_acquired"]), []);
    assert!(!obs_of(&r, &["lock_failed"]).is_empty());
}

/// `wall_clock_start` is settable; every node's wall clock reads it (plus its own offset) at
/// true time 0.
#[test]
fn wall_clock_start_is_settable() {
    let r = run(&lesson08_step_back(Some("2030-06-15T12:00:00.5Z")), 0);
    let c = splitbrain_check::WallClocks::new(&r.record);
    let id = r.record.names.iter().position(|n| n == "client-1").unwrap();
    assert_eq!(
        c.wall(splitbrain_engine::NodeId(id as u32), SimTime::ZERO)
            .rfc3339(),
        "2030-06-15T12:00:00.500Z"
    );
}
