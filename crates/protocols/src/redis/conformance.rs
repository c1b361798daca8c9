//! Replays the Redis conformance vectors recorded from a live redis-server 7.0 by the
//! repository's harness (`conformance/redis/`: `record.py` writes `vectors.json`, whose format
//! its `README.md` describes) against the model, and reports every step whose outcome differs.
//!
//! # Nodes and clocks
//!
//! A case names its nodes (one Redis server each; default one node, `main`). Each node is an
//! [`Instance`] with the case's persistence and its own simulated wall clock:
//! - monotonic time is the step's `at_ms` (ms since the case start), shared by all nodes;
//! - a node's wall clock, in ns, is
//!   `wall_start_ns + at_ms * 1_000_000 + (sum of that node's __WALL_CLOCK_JUMP__ so far)`.
//!
//! The case starts at a realistic Unix time, `wall_start_ns` = 2026-01-01T00:00:00Z
//! ([`DEFAULT_WALL_START_NS`]; [`replay_vectors_at`] sets another), as the recording server's
//! clock did: a backward jump then leaves `SET .. PX` valid, as on the real server, where
//! a wall clock near 1970 would make it `ERR invalid expire time`.
//!
//! With [`Persistence::AofEverysec`], [`Instance::fsync_tick`] is called at every whole
//! second of monotonic time (1000 ms, 2000 ms, ...) that is `<=` the next step's `at_ms`,
//! before that step.
//!
//! # Replication
//!
//! A node listed in the case's `replica_of` replicates the named primary. Every command on the
//! primary that changes the stored state of the keys it names (a write, or a lazy expiry, which
//! Redis propagates as a `DEL`) queues those keys' stored states after it (value and absolute
//! deadline, as Redis 7 propagates `SET .. PX` as `SET .. PXAT`: `setGenericCommand` in
//! `src/t_string.c`), as the simulated primary's replication stream does; the replica applies
//! the queue at a `__SYNC__` step (the recorder waits there until the real replica has applied
//! all its primary wrote). A replica refuses the commands a replica refuses in the simulator
//! (`SET`, `DEL`, `PEXPIRE`, `EVAL`, `EVALSHA`) with `READONLY` ([`READONLY_ERROR`]).
//!
//! # Comparison (one verdict per step)
//!
//! - Redis steps: the model's reply in normalised JSON ([`Reply::to_json`]) must equal
//!   `reply`, and its type must equal `reply_type`. Exceptions:
//!   - `timing.kind == "ttl"` (a PTTL, or a script replying one): an integer within
//!     `tolerance_ms` of the recorded one (the real server answered a few ms after `at_ms`);
//!   - error replies: equal, or the recorded text is the model's text followed by a
//!     script suffix (` script: ...`), which real Redis appends to errors raised inside
//!     scripts;
//!   - a step with an `exclusion` (a named, documented simplification of the model, declared in
//!     the file's `exclusions`): the model's reply must equal the exclusion's `model_reply`
//!     (and `model_reply_type`); the step counts as excluded, not passed.
//! - `__AOF__`: the keys the node's AOF loads to, as recorded, against the model's durable
//!   copy ([`Instance::durable`]): the same keys live at the step's wall time, each with the
//!   same value and a deadline within `tolerance_ms` (deadlines in ms relative to the case's
//!   wall start). An entry whose deadline has passed counts as absent on both sides: the
//!   model has no active expire cycle, which in real Redis may or may not have written the
//!   `DEL` yet. The recorded AOF command list is not compared (the harness compares it
//!   between recordings).
//! - Pseudo-steps `__STOP__ SIGTERM|SIGKILL`, `__START__`, `__WALL_CLOCK_JUMP__ <ms>`,
//!   `__SYNC__` pass if the replayer could perform them (e.g. a `__START__` of a running
//!   instance fails); their recorded replies (`STOPPED`, `READY`, `JUMPED`, `SYNCED`) are the
//!   recorder's, not Redis's.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::command::Reply;
use super::instance::{is_write, touched_key_names, CommandArgs, ReplOps, READONLY_ERROR};
use super::persistence::{Instance, Persistence, StopKind};
use super::store::{wall_ns_to_ms, Entry, NS_PER_MS};
use splitbrain_engine::DEFAULT_WALL_START_NS;

/// The vectors file.
#[derive(Debug, Clone, Deserialize)]
pub struct Vectors {
    /// The format version (1).
    pub format: u32,
    /// The deliberate simplifications of the model that steps may name.
    #[serde(default)]
    pub exclusions: Vec<Exclusion>,
    /// The cases, in order.
    pub cases: Vec<Case>,
}

/// A named, documented simplification of the model.
#[derive(Debug, Clone, Deserialize)]
pub struct Exclusion {
    /// Its name, as steps refer to it.
    pub name: String,
    /// What the model does instead of what Redis does, and why.
    pub description: String,
}

/// One recorded case (fields of the vectors file; unknown fields are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// Unique case name, e.g. `set_nx_px_absent`.
    pub name: String,
    /// What the case shows.
    #[serde(default)]
    pub description: String,
    /// `none`, `aof_fsync_always` or `aof_fsync_everysec`, for every node.
    pub persistence: String,
    /// The nodes (one Redis server each); the first is the default node of a step.
    #[serde(default = "default_nodes")]
    pub nodes: Vec<String>,
    /// Replica node -> its primary node.
    #[serde(default)]
    pub replica_of: BTreeMap<String, String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

fn default_nodes() -> Vec<String> {
    vec!["main".to_string()]
}

/// One recorded step.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    /// When the command was sent, in **ms** of monotonic time from the case start.
    pub at_ms: i64,
    /// The node it was sent to (default: the case's first node).
    #[serde(default)]
    pub node: Option<String>,
    /// The argument list sent, or a pseudo-step (`__STOP__`, ...).
    pub command: Vec<String>,
    /// The normalised recorded reply (see [`Reply::to_json`]); for `__AOF__`, the AOF read
    /// back (`{commands, keys}`).
    pub reply: Value,
    /// `status`, `bulk`, `nil`, `integer`, `error`, `meta` or `aof`.
    #[serde(default)]
    pub reply_type: Option<String>,
    /// Time-dependence of the reply, if any.
    #[serde(default)]
    pub timing: Option<Timing>,
    /// The named simplification this step falls under, if any.
    #[serde(default)]
    pub exclusion: Option<StepExclusion>,
}

/// The `timing` annotation of a step.
#[derive(Debug, Clone, Deserialize)]
pub struct Timing {
    /// `ttl` (an integer compared within the tolerance) or `aof` (deadlines compared within
    /// the tolerance).
    pub kind: String,
    /// Accepted distance, in **ms**.
    pub tolerance_ms: i64,
}

/// A step's exclusion: which one, and the reply the model gives instead (for an `__AOF__`
/// step: the durable keys the model has, in the recorded `keys` form).
#[derive(Debug, Clone, Deserialize)]
pub struct StepExclusion {
    /// The exclusion's name (declared in [`Vectors::exclusions`]).
    pub name: String,
    /// The model's reply, normalised as `reply`.
    pub model_reply: Value,
    /// The model's reply type.
    pub model_reply_type: String,
}

/// One failing step.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Case name.
    pub case: String,
    /// Index of the step in the case (0-based).
    pub step: usize,
    /// The step's command.
    pub command: Vec<String>,
    /// The recorded reply.
    pub expected: Value,
    /// The model's reply in normalised JSON, or a description of what went wrong.
    pub got: Value,
    /// Why the step failed.
    pub detail: String,
}

/// The result of a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Number of cases replayed.
    pub cases: usize,
    /// Steps whose outcome matched.
    pub passed: usize,
    /// Steps that did not match.
    pub failed: usize,
    /// Steps under a named exclusion whose model reply was the documented one, per exclusion
    /// name.
    pub excluded: BTreeMap<String, usize>,
    /// One entry per failed step, in file order.
    pub failures: Vec<Failure>,
}

impl Report {
    /// Whether every step passed or was excluded as documented.
    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }

    /// Number of excluded steps.
    pub fn excluded_steps(&self) -> usize {
        self.excluded.values().sum()
    }
}

/// Errors reading the vectors.
#[derive(Debug, thiserror::Error)]
pub enum ConformanceError {
    /// The text is not a valid vectors file.
    #[error("invalid vectors file: {0}")]
    Parse(#[from] serde_json::Error),
    /// A format this replayer does not read.
    #[error("vectors format {0} is not supported (this replayer reads format 1)")]
    Format(u32),
}

/// Parses a vectors file.
pub fn parse(vectors_json: &str) -> Result<Vectors, ConformanceError> {
    let v: Vectors = serde_json::from_str(vectors_json)?;
    if v.format != 1 {
        return Err(ConformanceError::Format(v.format));
    }
    Ok(v)
}

/// Parses and replays a vectors file (see the module docs for clocks and comparison).
pub fn replay(vectors_json: &str) -> Result<Report, ConformanceError> {
    Ok(replay_vectors(&parse(vectors_json)?))
}

/// Replays parsed vectors, each node's wall clock starting at [`DEFAULT_WALL_START_NS`].
pub fn replay_vectors(vectors: &Vectors) -> Report {
    replay_vectors_at(vectors, DEFAULT_WALL_START_NS)
}

/// Replays parsed vectors, each node's wall clock starting at Unix time `wall_start_ns` (ns).
pub fn replay_vectors_at(vectors: &Vectors, wall_start_ns: i64) -> Report {
    let mut report = Report::default();
    for case in &vectors.cases {
        replay_case(vectors, case, wall_start_ns, &mut report);
    }
    report
}

/// Maps the vectors' (or a scenario's) persistence name to the model's mode.
pub fn persistence_from_name(name: &str) -> Option<Persistence> {
    match name {
        "none" => Some(Persistence::None),
        "aof_fsync_always" | "aof_always" => Some(Persistence::AofAlways),
        "aof_fsync_everysec" | "aof_everysec" => Some(Persistence::AofEverysec),
        _ => None,
    }
}

/// One node of a case being replayed.
#[derive(Debug)]
struct Node {
    name: String,
    instance: Instance,
    /// The sum of this node's wall-clock jumps, in ns.
    jumps_ns: i64,
    /// The next whole second (ms) at which an `everysec` fsync tick is due.
    next_tick_ms: i64,
    /// As a replica: the index of its primary.
    primary: Option<usize>,
    /// As a replica: writes of its primary not yet applied.
    pending: Vec<ReplOps>,
}

impl Node {
    fn wall_ns(&self, wall_start_ns: i64, at_ms: i64) -> Option<i64> {
        at_ms
            .checked_mul(NS_PER_MS)?
            .checked_add(wall_start_ns)?
            .checked_add(self.jumps_ns)
    }
}

fn replay_case(vectors: &Vectors, case: &Case, wall_start_ns: i64, report: &mut Report) {
    report.cases += 1;
    let fail = |report: &mut Report, i: usize, step: &Step, got: Value, detail: String| {
        report.failed += 1;
        report.failures.push(Failure {
            case: case.name.clone(),
            step: i,
            command: step.command.clone(),
            expected: step.reply.clone(),
            got,
            detail,
        });
    };
    let fail_all = |report: &mut Report, detail: String| {
        for (i, step) in case.steps.iter().enumerate() {
            fail(report, i, step, Value::Null, detail.clone());
        }
    };
    let Some(persistence) = persistence_from_name(&case.persistence) else {
        fail_all(
            report,
            format!("unknown persistence {:?}", case.persistence),
        );
        return;
    };
    let mut nodes: Vec<Node> = case
        .nodes
        .iter()
        .map(|n| Node {
            name: n.clone(),
            instance: Instance::new(persistence),
            jumps_ns: 0,
            next_tick_ms: 1000,
            primary: None,
            pending: Vec::new(),
        })
        .collect();
    for (replica, primary) in &case.replica_of {
        let r = nodes.iter().position(|n| &n.name == replica);
        let p = nodes.iter().position(|n| &n.name == primary);
        match (r, p) {
            (Some(r), Some(p)) if r != p => nodes[r].primary = Some(p),
            _ => {
                fail_all(report, format!("bad replica_of {replica:?} -> {primary:?}"));
                return;
            }
        }
    }
    for (i, step) in case.steps.iter().enumerate() {
        let node = match &step.node {
            None => Some(0),
            Some(n) => nodes.iter().position(|x| &x.name == n),
        };
        let Some(node) = node else {
            fail(
                report,
                i,
                step,
                Value::Null,
                format!("unknown node {:?}", step.node),
            );
            continue;
        };
        for n in &mut nodes {
            if n.next_tick_ms <= step.at_ms {
                // Every tick due since the previous step sees the same state, so one call
                // stands for all of them.
                n.instance.fsync_tick();
                n.next_tick_ms = (step.at_ms / 1000).saturating_add(1).saturating_mul(1000);
            }
        }
        match run_step(&mut nodes, node, wall_start_ns, step) {
            Ok(reply) => match judge(vectors, step, reply.as_ref()) {
                Verdict::Pass => report.passed += 1,
                Verdict::Excluded(name) => *report.excluded.entry(name).or_default() += 1,
                Verdict::Fail(got, detail) => fail(report, i, step, got, detail),
            },
            Err((got, detail)) => fail(report, i, step, got, detail),
        }
    }
}

type StepError = (Value, String);

fn meta_err(detail: String) -> StepError {
    (Value::String("<pseudo-step failed>".into()), detail)
}

/// Performs one step on node `at`; returns the model's reply for a Redis command, `None` for
/// a pseudo-step that was performed (an `__AOF__` step is judged here).
fn run_step(
    nodes: &mut [Node],
    at: usize,
    wall_start_ns: i64,
    step: &Step,
) -> Result<Option<Reply>, StepError> {
    let name = step.command.first().map(String::as_str).unwrap_or("");
    let arg = step.command.get(1).map(String::as_str);
    let overflow = || meta_err("wall clock overflow".into());
    match name {
        "__STOP__" => {
            let kind = match arg {
                Some("SIGTERM") => StopKind::Graceful,
                Some("SIGKILL") => StopKind::Crash,
                other => return Err(meta_err(format!("unknown stop signal {other:?}"))),
            };
            nodes[at]
                .instance
                .stop(kind)
                .map_err(|e| meta_err(e.to_string()))?;
            Ok(None)
        }
        "__START__" => {
            nodes[at]
                .instance
                .start()
                .map_err(|e| meta_err(e.to_string()))?;
            Ok(None)
        }
        "__WALL_CLOCK_JUMP__" => {
            let ms = arg
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| meta_err(format!("bad jump argument {arg:?}")))?;
            let n = &mut nodes[at];
            n.jumps_ns = ms
                .checked_mul(NS_PER_MS)
                .and_then(|d| n.jumps_ns.checked_add(d))
                .ok_or_else(overflow)?;
            Ok(None)
        }
        "__SYNC__" => {
            let n = &mut nodes[at];
            if n.primary.is_none() {
                return Err(meta_err(format!("{} is not a replica", n.name)));
            }
            for ops in std::mem::take(&mut n.pending) {
                for (k, e) in ops {
                    n.instance.apply_replicated(&k, e);
                }
            }
            Ok(None)
        }
        "__AOF__" => {
            let now = nodes[at]
                .wall_ns(wall_start_ns, step.at_ms)
                .ok_or_else(overflow)?;
            let tolerance = step.timing.as_ref().map_or(0, |t| t.tolerance_ms);
            // Under an exclusion the model's durable keys are held to the documented ones.
            let keys = match &step.exclusion {
                Some(ex) => &ex.model_reply,
                None => step.reply.get("keys").unwrap_or(&Value::Null),
            };
            compare_aof(&nodes[at].instance, keys, tolerance, wall_start_ns, now)
                .map_err(|detail| (durable_json(&nodes[at].instance, wall_start_ns), detail))?;
            Ok(None)
        }
        _ => {
            let now = nodes[at]
                .wall_ns(wall_start_ns, step.at_ms)
                .ok_or_else(overflow)?;
            let args: CommandArgs = step.command.clone().into();
            if nodes[at].primary.is_some() && is_write(&args) {
                return Ok(Some(Reply::Error(READONLY_ERROR.to_string())));
            }
            let keys = touched_key_names(&args);
            let stored = |inst: &Instance| -> Vec<Option<Entry>> {
                keys.iter()
                    .map(|k| inst.keyspace().get_stored(k).cloned())
                    .collect()
            };
            let before = stored(&nodes[at].instance);
            let reply = nodes[at]
                .instance
                .execute(&step.command, now)
                .map_err(|e| meta_err(e.to_string()))?;
            let after = stored(&nodes[at].instance);
            if before != after {
                let ops: ReplOps = keys.iter().cloned().zip(after).collect();
                for n in nodes.iter_mut().filter(|n| n.primary == Some(at)) {
                    n.pending.push(ops.clone());
                }
            }
            Ok(Some(reply))
        }
    }
}

/// The model's durable keys as the recorder writes an AOF's keys (for failure reports).
fn durable_json(instance: &Instance, wall_start_ns: i64) -> Value {
    let start_ms = wall_ns_to_ms(wall_start_ns);
    let keys: serde_json::Map<String, Value> = instance
        .durable()
        .iter()
        .map(|(k, e)| {
            let deadline = e.expires_at_ms.map(|d| d.saturating_sub(start_ms));
            (
                k.to_string(),
                serde_json::json!({"value": e.value, "deadline_ms": deadline}),
            )
        })
        .collect();
    serde_json::json!({ "keys": keys })
}

/// An `__AOF__` step: the recorded AOF's live keys against the model's durable copy.
fn compare_aof(
    instance: &Instance,
    keys: &Value,
    tolerance: i64,
    wall_start_ns: i64,
    now_wall_ns: i64,
) -> Result<(), String> {
    let start_ms = wall_ns_to_ms(wall_start_ns);
    let now_rel_ms = wall_ns_to_ms(now_wall_ns).saturating_sub(start_ms);
    let recorded = keys
        .as_object()
        .ok_or("__AOF__ step without recorded keys")?;
    let mut want: BTreeMap<&str, (&str, Option<i64>)> = BTreeMap::new();
    for (k, v) in recorded {
        let value = v
            .get("value")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("recorded AOF key {k:?} without a value"))?;
        let deadline = v.get("deadline_ms").and_then(Value::as_i64);
        if deadline.is_some_and(|d| now_rel_ms > d) {
            continue;
        }
        want.insert(k, (value, deadline));
    }
    let mut got: BTreeMap<&str, (&str, Option<i64>)> = BTreeMap::new();
    for (k, e) in instance.durable().iter() {
        if e.is_expired(now_wall_ns) {
            continue;
        }
        let deadline = e.expires_at_ms.map(|d| d.saturating_sub(start_ms));
        got.insert(k, (e.value.as_str(), deadline));
    }
    let want_keys: Vec<&&str> = want.keys().collect();
    let got_keys: Vec<&&str> = got.keys().collect();
    if want_keys != got_keys {
        return Err(format!(
            "AOF keys {got_keys:?} in the model, {want_keys:?} recorded"
        ));
    }
    for (k, (value, deadline)) in &want {
        let (g_value, g_deadline) = got[k];
        if g_value != *value {
            return Err(format!(
                "AOF key {k:?}: value {g_value:?}, {value:?} recorded"
            ));
        }
        let close = match (g_deadline, deadline) {
            (None, None) => true,
            (Some(g), Some(w)) => (i128::from(g) - i128::from(*w)).abs() <= i128::from(tolerance),
            _ => false,
        };
        if !close {
            return Err(format!(
                "AOF key {k:?}: deadline {g_deadline:?} ms, {deadline:?} recorded (tolerance {tolerance} ms)"
            ));
        }
    }
    Ok(())
}

enum Verdict {
    Pass,
    Excluded(String),
    Fail(Value, String),
}

fn judge(vectors: &Vectors, step: &Step, reply: Option<&Reply>) -> Verdict {
    if let Some(ex) = &step.exclusion {
        let got = reply.map_or(Value::Null, Reply::to_json);
        if !vectors.exclusions.iter().any(|e| e.name == ex.name) {
            return Verdict::Fail(
                got,
                format!("exclusion {:?} is not declared in the file", ex.name),
            );
        }
        // A pseudo-step (`__AOF__`) under an exclusion was held to `model_reply` already.
        let Some(reply) = reply else {
            return Verdict::Excluded(ex.name.clone());
        };
        return if reply.to_json() == ex.model_reply && reply.type_name() == ex.model_reply_type {
            Verdict::Excluded(ex.name.clone())
        } else {
            Verdict::Fail(
                reply.to_json(),
                format!(
                    "excluded step ({}): the model's reply is not the documented {} ({})",
                    ex.name, ex.model_reply, ex.model_reply_type
                ),
            )
        };
    }
    let Some(reply) = reply else {
        return Verdict::Pass;
    };
    match compare(step, reply) {
        Ok(()) => Verdict::Pass,
        Err(detail) => Verdict::Fail(reply.to_json(), detail),
    }
}

/// Whether the recorded error text `expected` matches the model's `got`: equal, or `got`
/// followed by Redis's script-error suffix (` script: <sha1>, on @user_script:<line>.`).
pub fn error_text_matches(expected: &str, got: &str) -> bool {
    expected == got
        || expected
            .strip_prefix(got)
            .is_some_and(|suffix| suffix.starts_with(" script: "))
}

fn compare(step: &Step, reply: &Reply) -> Result<(), String> {
    if let Some(t) = step.reply_type.as_deref() {
        if t != reply.type_name() {
            return Err(format!(
                "reply type {} but {t} was recorded",
                reply.type_name()
            ));
        }
    }
    if let Some(timing) = step.timing.as_ref().filter(|t| t.kind == "ttl") {
        let Reply::Integer(got) = reply else {
            return Err("ttl step: integer reply expected".into());
        };
        let recorded = step
            .reply
            .as_i64()
            .ok_or("ttl step without a recorded integer")?;
        let distance = i128::from(*got) - i128::from(recorded);
        return if distance.abs() <= i128::from(timing.tolerance_ms) {
            Ok(())
        } else {
            Err(format!(
                "{got} is {distance} ms from the recorded {recorded} (tolerance {} ms)",
                timing.tolerance_ms
            ))
        };
    }
    if let (Some(expected), Reply::Error(got)) =
        (step.reply.get("error").and_then(Value::as_str), reply)
    {
        return if error_text_matches(expected, got) {
            Ok(())
        } else {
            Err("error text differs".into())
        };
    }
    if reply.to_json() == step.reply {
        Ok(())
    } else {
        Err("reply differs".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(persistence: &str, steps: Value) -> String {
        json!({"format": 1, "cases": [{ "name": "t", "persistence": persistence, "steps": steps }]})
            .to_string()
    }

    /// The replayer's wall clock starts at a realistic Unix time, so a 20 s step back leaves
    /// `SET .. PX` valid, as on the recording server; from wall 0 it would be rejected.
    #[test]
    fn replayer_starts_at_a_realistic_wall_time() {
        let v = parse(&file(
            "none",
            json!([
                {"at_ms": 0, "command": ["__WALL_CLOCK_JUMP__", "-20000"], "reply": "JUMPED"},
                {"at_ms": 1, "command": ["SET","k","v","NX","PX","10000"], "reply": "OK", "reply_type": "status"},
            ]),
        ))
        .unwrap();
        assert!(replay_vectors(&v).all_passed());
        let at_epoch = replay_vectors_at(&v, 0);
        assert_eq!(at_epoch.failed, 1);
        assert_eq!(
            at_epoch.failures[0].got,
            json!({"error": "ERR invalid expire time in 'set' command"})
        );
    }

    #[test]
    fn ttl_tolerance_and_failures_are_counted() {
        let text = file(
            "none",
            json!([
                {"at_ms": 0, "command": ["SET","k","v","PX","1000"], "reply": "OK", "reply_type": "status"},
                {"at_ms": 10, "command": ["PTTL","k"], "reply": 985, "reply_type": "integer",
                 "timing": {"kind": "ttl", "tolerance_ms": 5}},
                {"at_ms": 10, "command": ["PTTL","k"], "reply": 980, "reply_type": "integer",
                 "timing": {"kind": "ttl", "tolerance_ms": 5}},
                {"at_ms": 10, "command": ["GET","k"], "reply": "v", "reply_type": "status"},
                {"at_ms": 20, "command": ["__START__"], "reply": "READY", "reply_type": "meta"}
            ]),
        );
        let r = replay(&text).unwrap();
        assert_eq!((r.passed, r.failed), (2, 3));
        let steps: Vec<usize> = r.failures.iter().map(|f| f.step).collect();
        assert_eq!(steps, vec![2, 3, 4]);
        assert_eq!(r.failures[0].got, json!(990));
    }

    #[test]
    fn backward_jump_lengthens_the_ttl() {
        let text = file(
            "none",
            json!([
                {"at_ms": 0, "command": ["SET","k","v","PX","100"], "reply": "OK"},
                {"at_ms": 50, "command": ["__WALL_CLOCK_JUMP__","-50"], "reply": "JUMPED"},
                {"at_ms": 60, "command": ["PTTL","k"], "reply": 90},
                {"at_ms": 60, "command": ["__WALL_CLOCK_JUMP__","91"], "reply": "JUMPED"},
                {"at_ms": 60, "command": ["PTTL","k"], "reply": -2}
            ]),
        );
        let r = replay(&text).unwrap();
        assert!(r.all_passed(), "{:?}", r.failures);
    }

    #[test]
    fn everysec_ticks_follow_monotonic_time() {
        let text = file(
            "aof_fsync_everysec",
            json!([
                {"at_ms": 0, "command": ["SET","a","1"], "reply": "OK"},
                {"at_ms": 1500, "command": ["SET","b","2"], "reply": "OK"},
                {"at_ms": 1600, "command": ["__STOP__","SIGKILL"], "reply": "STOPPED"},
                {"at_ms": 1700, "command": ["__START__"], "reply": "READY"},
                {"at_ms": 1800, "command": ["GET","a"], "reply": "1"},
                {"at_ms": 1800, "command": ["GET","b"], "reply": null}
            ]),
        );
        let r = replay(&text).unwrap();
        assert!(r.all_passed(), "{:?}", r.failures);
    }

    /// A replica sees a primary's write only at `__SYNC__`, refuses writes, and each node
    /// has its own wall clock.
    #[test]
    fn replication_waits_for_sync_and_replicas_are_read_only() {
        let text = json!({"format": 1, "cases": [{
        "name": "r", "persistence": "none", "nodes": ["p", "r"],
        "replica_of": {"r": "p"},
        "steps": [
            {"at_ms": 0, "node": "p", "command": ["SET","k","v","PX","1000"], "reply": "OK"},
            {"at_ms": 1, "node": "r", "command": ["GET","k"], "reply": null},
            {"at_ms": 2, "node": "r", "command": ["__SYNC__"], "reply": "SYNCED"},
            {"at_ms": 3, "node": "r", "command": ["GET","k"], "reply": "v"},
            {"at_ms": 4, "node": "r", "command": ["SET","k","w"],
             "reply": {"error": READONLY_ERROR}},
            {"at_ms": 5, "node": "r", "command": ["__WALL_CLOCK_JUMP__","2000"], "reply": "JUMPED"},
            {"at_ms": 6, "node": "r", "command": ["GET","k"], "reply": null},
            {"at_ms": 7, "node": "p", "command": ["GET","k"], "reply": "v"}
        ]}]})
        .to_string();
        let r = replay(&text).unwrap();
        assert!(r.all_passed(), "{:?}", r.failures);
        assert_eq!(r.passed, 8);
    }

    /// An excluded step passes only with the documented model reply and an exclusion the file
    /// declares; it is counted apart.
    #[test]
    fn exclusions_are_named_declared_and_pinned() {
        let mk = |declared: bool, model_reply: Value| {
            let exclusions = if declared {
                json!([{"name": "x", "description": "d"}])
            } else {
                json!([])
            };
            json!({"format": 1, "exclusions": exclusions, "cases": [{
            "name": "e", "persistence": "none", "steps": [
                {"at_ms": 0, "command": ["GET","k"], "reply": "v", "reply_type": "bulk",
                 "exclusion": {"name": "x", "model_reply": model_reply, "model_reply_type": "nil"}}
            ]}]})
            .to_string()
        };
        let r = replay(&mk(true, Value::Null)).unwrap();
        assert_eq!((r.passed, r.failed, r.excluded_steps()), (0, 0, 1));
        assert_eq!(r.excluded.get("x"), Some(&1));
        assert_eq!(replay(&mk(false, Value::Null)).unwrap().failed, 1);
        assert_eq!(replay(&mk(true, json!("v"))).unwrap().failed, 1);
    }

    /// `__AOF__` compares the live durable keys: values exactly, deadlines within the
    /// tolerance; expired entries count as absent.
    #[test]
    fn aof_steps_compare_live_durable_keys() {
        let aof = |keys: Value| {
            json!({"at_ms": 200, "command": ["__AOF__"], "reply": {"commands": [], "keys": keys},
                   "reply_type": "aof", "timing": {"kind": "aof", "tolerance_ms": 5}})
        };
        let run = |keys: Value| {
            replay(&file(
                "aof_fsync_always",
                json!([
                    {"at_ms": 0, "command": ["SET","a","1","PX","1000"], "reply": "OK"},
                    {"at_ms": 0, "command": ["SET","b","2","PX","100"], "reply": "OK"},
                    {"at_ms": 0, "command": ["SET","c","3"], "reply": "OK"},
                    aof(keys)
                ]),
            ))
            .unwrap()
        };
        let ok = run(json!({"a": {"value": "1", "deadline_ms": 1003},
                            "b": {"value": "2", "deadline_ms": 100},
                            "c": {"value": "3", "deadline_ms": null}}));
        assert!(ok.all_passed(), "{:?}", ok.failures);
        assert_eq!(
            run(json!({"a": {"value": "1", "deadline_ms": 1010},
                       "c": {"value": "3", "deadline_ms": null}}))
            .failed,
            1
        );
        assert_eq!(
            run(json!({"a": {"value": "1", "deadline_ms": 1000}})).failed,
            1
        );
        assert_eq!(
            run(json!({"a": {"value": "x", "deadline_ms": 1000},
                       "c": {"value": "3", "deadline_ms": null}}))
            .failed,
            1
        );
    }

    #[test]
    fn script_error_suffix_is_a_prefix_match() {
        assert!(error_text_matches(
            "ERR value is not an integer or out of range script: abc, on @user_script:1.",
            "ERR value is not an integer or out of range"
        ));
        assert!(error_text_matches("ERR syntax error", "ERR syntax error"));
        assert!(!error_text_matches(
            "ERR syntax error x",
            "ERR syntax error"
        ));
        assert!(!error_text_matches("ERR syntax", "ERR syntax error"));
    }

    #[test]
    fn bad_input_is_reported_not_panicking() {
        assert!(replay("not json").is_err());
        assert!(matches!(
            replay(r#"{"format": 2, "cases": []}"#),
            Err(ConformanceError::Format(2))
        ));
        let r = replay(&file(
            "rdb",
            json!([{"at_ms": 0, "command": ["GET","k"], "reply": null}]),
        ))
        .unwrap();
        assert_eq!(r.failed, 1);
        let r = replay(&file(
            "none",
            json!([{"at_ms": 0, "command": [], "reply": null},
                   {"at_ms": 0, "command": ["__STOP__", "SIGHUP"], "reply": "STOPPED"},
                   {"at_ms": 0, "command": ["__SYNC__"], "reply": "SYNCED"},
                   {"at_ms": 0, "node": "nowhere", "command": ["GET","k"], "reply": null},
                   {"at_ms": 9223372036854775807i64, "command": ["GET","k"], "reply": null}]),
        ))
        .unwrap();
        assert_eq!((r.passed, r.failed), (0, 5));
    }
}
