//! Replays the recorded Redis conformance vectors (`shared/conformance/redis-vectors.json`,
//! format in `shared/conformance/README.md`) against the model and reports every step whose
//! reply differs.
//!
//! # Clocks
//!
//! Each case starts a fresh [`Instance`] with the case's persistence and a simulated clock:
//! - monotonic time is the step's `at_ms` (ms since the case start);
//! - the wall clock, in ns, is
//!   `wall_start_ns + at_ms * 1_000_000 + (sum of __WALL_CLOCK_JUMP__ so far)`;
//! - after `__WALL_CLOCK_FREEZE__` the wall clock stops at its value then and moves only by
//!   later jumps.
//!
//! The case starts at a realistic Unix time, `wall_start_ns` = 2026-01-01T00:00:00Z
//! ([`DEFAULT_WALL_START_NS`]; [`replay_cases_at`] sets another), as the recording server's
//! clock did: a backward jump then leaves `SET .. PX` valid, as on the real server, where
//! a wall clock near 1970 would make it `ERR invalid expire time`.
//!
//! With [`Persistence::AofEverysec`], [`Instance::fsync_tick`] is called at every whole
//! second of monotonic time (1000 ms, 2000 ms, ...) that is `<=` the next step's `at_ms`,
//! before that step (no recorded case uses `everysec`).
//!
//! # Comparison (one verdict per step)
//!
//! - Redis steps: the model's reply in normalised JSON ([`Reply::to_json`]) must equal
//!   `reply`, and its type must equal `reply_type` when that is given. Exceptions:
//!   - `timing.kind == "ttl_value"` (PTTL): the model's integer must be within
//!     `tolerance_ms` of `timing.ideal` (of `reply` if `ideal` is absent), as the README says;
//!   - error replies: equal, or the recorded text is the model's text followed by a
//!     script suffix (` script: ...`), which real Redis appends to errors raised inside
//!     scripts (README: "compare the prefix up to it").
//! - Pseudo-steps `__STOP__ SIGTERM|SIGKILL`, `__START__`, `__WALL_CLOCK_JUMP__ <ms>`,
//!   `__WALL_CLOCK_FREEZE__` pass if the replayer could perform them (e.g. a `__START__` of a
//!   running instance fails); their recorded replies (`STOPPED`, `READY`, `JUMPED`) are the
//!   recorder's, not Redis's, and are not compared.
//!
//! Cases marked `optional` are replayed and counted like the others.

use serde::Deserialize;
use serde_json::Value;

use super::command::Reply;
use super::persistence::{Instance, Persistence, StopKind};
use super::store::NS_PER_MS;
use splitbrain_engine::DEFAULT_WALL_START_NS;

/// The vectors file: a list of cases.
pub type Vectors = Vec<Case>;

/// One recorded case (fields of the vectors file; unknown fields are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// Unique case name, e.g. `set_nx_absent_key`.
    pub name: String,
    /// What the case shows.
    #[serde(default)]
    pub description: String,
    /// The server configuration it was recorded with.
    pub server: Server,
    /// Whether the case is optional (replayed and counted like the others).
    #[serde(default)]
    pub optional: bool,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// The recorded server configuration (only what the replayer needs).
#[derive(Debug, Clone, Deserialize)]
pub struct Server {
    /// `none`, `aof_fsync_always` or `aof_fsync_everysec` (also accepted: the scenario
    /// names `aof_always`, `aof_everysec`).
    pub persistence: String,
    /// Whether the recording used the wall-clock shim (informational).
    #[serde(default)]
    pub clock_shim: bool,
}

/// One recorded step.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    /// When the command was sent, in **ms** of monotonic time from the case start.
    pub at_ms: i64,
    /// The argument list sent, or a pseudo-step (`__STOP__`, ...).
    pub command: Vec<String>,
    /// The normalised recorded reply (see [`Reply::to_json`]).
    pub reply: Value,
    /// `status`, `bulk`, `nil`, `integer`, `error` or `meta`.
    #[serde(default)]
    pub reply_type: Option<String>,
    /// Time-dependence of the reply, if any.
    #[serde(default)]
    pub timing: Option<Timing>,
    /// `release` or `extend` for `EVAL` steps.
    #[serde(default)]
    pub script: Option<String>,
}

/// The `timing` annotation of a step.
#[derive(Debug, Clone, Deserialize)]
pub struct Timing {
    /// `ttl_value` (compare with tolerance) or `expiry_margin` (informational).
    pub kind: String,
    /// The ideal PTTL in **ms** for `ttl_value`.
    #[serde(default)]
    pub ideal: Option<i64>,
    /// Accepted distance from `ideal`, in **ms**.
    #[serde(default)]
    pub tolerance_ms: Option<i64>,
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

/// The result of a replay: steps passed and failed, and the failures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Number of cases replayed.
    pub cases: usize,
    /// Steps whose reply (or pseudo-step) matched.
    pub passed: usize,
    /// Steps that did not match.
    pub failed: usize,
    /// One entry per failed step, in file order.
    pub failures: Vec<Failure>,
}

impl Report {
    /// Whether every step passed.
    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }
}

/// Errors reading the vectors.
#[derive(Debug, thiserror::Error)]
pub enum ConformanceError {
    /// The text is not a valid vectors file.
    #[error("invalid vectors file: {0}")]
    Parse(#[from] serde_json::Error),
}

/// Parses a vectors file.
pub fn parse(vectors_json: &str) -> Result<Vectors, ConformanceError> {
    Ok(serde_json::from_str(vectors_json)?)
}

/// Parses and replays a vectors file (see the module docs for clocks and comparison).
pub fn replay(vectors_json: &str) -> Result<Report, ConformanceError> {
    Ok(replay_cases(&parse(vectors_json)?))
}

/// Replays parsed cases, each case's wall clock starting at [`DEFAULT_WALL_START_NS`].
pub fn replay_cases(cases: &[Case]) -> Report {
    replay_cases_at(cases, DEFAULT_WALL_START_NS)
}

/// Replays parsed cases, each case's wall clock starting at Unix time `wall_start_ns` (ns).
pub fn replay_cases_at(cases: &[Case], wall_start_ns: i64) -> Report {
    let mut report = Report::default();
    for case in cases {
        replay_case(case, wall_start_ns, &mut report);
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

/// The replayer's simulated wall clock.
#[derive(Debug, Default)]
struct WallClock {
    /// The case's wall start plus the sum of jumps before any freeze, in ns.
    offset_ns: i64,
    /// The frozen wall value in ns (jumps after the freeze are added to it).
    frozen_ns: Option<i64>,
}

impl WallClock {
    fn now_ns(&self, at_ms: i64) -> Option<i64> {
        match self.frozen_ns {
            Some(f) => Some(f),
            None => at_ms.checked_mul(NS_PER_MS)?.checked_add(self.offset_ns),
        }
    }

    fn jump(&mut self, ms: i64) -> Option<()> {
        let d = ms.checked_mul(NS_PER_MS)?;
        match &mut self.frozen_ns {
            Some(f) => *f = f.checked_add(d)?,
            None => self.offset_ns = self.offset_ns.checked_add(d)?,
        }
        Some(())
    }

    fn freeze(&mut self, at_ms: i64) -> Option<()> {
        if self.frozen_ns.is_none() {
            self.frozen_ns = Some(self.now_ns(at_ms)?);
        }
        Some(())
    }
}

fn replay_case(case: &Case, wall_start_ns: i64, report: &mut Report) {
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
    let Some(persistence) = persistence_from_name(&case.server.persistence) else {
        for (i, step) in case.steps.iter().enumerate() {
            fail(
                report,
                i,
                step,
                Value::Null,
                format!("unknown persistence {:?}", case.server.persistence),
            );
        }
        return;
    };
    let mut instance = Instance::new(persistence);
    let mut clock = WallClock {
        offset_ns: wall_start_ns,
        frozen_ns: None,
    };
    let mut next_tick_ms: i64 = 1000;
    for (i, step) in case.steps.iter().enumerate() {
        if next_tick_ms <= step.at_ms {
            // Every tick due since the previous step sees the same state, so one call
            // stands for all of them.
            instance.fsync_tick();
            next_tick_ms = (step.at_ms / 1000).saturating_add(1).saturating_mul(1000);
        }
        match run_step(&mut instance, &mut clock, step) {
            Ok(()) => report.passed += 1,
            Err((got, detail)) => fail(report, i, step, got, detail),
        }
    }
}

type StepError = (Value, String);

fn run_step(instance: &mut Instance, clock: &mut WallClock, step: &Step) -> Result<(), StepError> {
    let name = step.command.first().map(String::as_str).unwrap_or("");
    let arg = step.command.get(1).map(String::as_str);
    let meta_err = |detail: String| (Value::String("<pseudo-step failed>".into()), detail);
    match name {
        "__STOP__" => {
            let kind = match arg {
                Some("SIGTERM") => StopKind::Graceful,
                Some("SIGKILL") => StopKind::Crash,
                other => return Err(meta_err(format!("unknown stop signal {other:?}"))),
            };
            instance.stop(kind).map_err(|e| meta_err(e.to_string()))
        }
        "__START__" => instance.start().map_err(|e| meta_err(e.to_string())),
        "__WALL_CLOCK_JUMP__" => {
            let ms = arg
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| meta_err(format!("bad jump argument {arg:?}")))?;
            clock
                .jump(ms)
                .ok_or_else(|| meta_err("wall clock overflow".into()))
        }
        "__WALL_CLOCK_FREEZE__" => clock
            .freeze(step.at_ms)
            .ok_or_else(|| meta_err("wall clock overflow".into())),
        _ => {
            let now = clock
                .now_ns(step.at_ms)
                .ok_or_else(|| meta_err("wall clock overflow".into()))?;
            let reply = instance
                .execute(&step.command, now)
                .map_err(|e| meta_err(e.to_string()))?;
            compare(step, &reply).map_err(|detail| (reply.to_json(), detail))
        }
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
        if t != "meta" && t != reply.type_name() {
            return Err(format!(
                "reply type {} but {t} was recorded",
                reply.type_name()
            ));
        }
    }
    if let Some(timing) = step.timing.as_ref().filter(|t| t.kind == "ttl_value") {
        let Reply::Integer(got) = reply else {
            return Err("ttl_value step: integer reply expected".into());
        };
        let ideal = timing
            .ideal
            .or_else(|| step.reply.as_i64())
            .ok_or("ttl_value step without an ideal value")?;
        let tolerance = timing.tolerance_ms.unwrap_or(0);
        let distance = i128::from(*got) - i128::from(ideal);
        return if distance.abs() <= i128::from(tolerance) {
            Ok(())
        } else {
            Err(format!(
                "PTTL {got} is {distance} ms from ideal {ideal} (tolerance {tolerance} ms)"
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

    fn case(persistence: &str, steps: Value) -> String {
        json!([{ "name": "t", "server": { "persistence": persistence }, "steps": steps }])
            .to_string()
    }

    #[test]
    fn wall_clock_jumps_and_freeze() {
        let mut c = WallClock::default();
        assert_eq!(c.now_ns(5), Some(5 * NS_PER_MS));
        c.jump(100).unwrap();
        assert_eq!(c.now_ns(5), Some(105 * NS_PER_MS));
        c.freeze(10).unwrap();
        assert_eq!(c.now_ns(500), Some(110 * NS_PER_MS));
        c.jump(-20).unwrap();
        assert_eq!(c.now_ns(900), Some(90 * NS_PER_MS));
    }

    /// The replayer's wall clock starts at a realistic Unix time, so a 20 s step
    /// back leaves `SET .. PX` valid, as on the recording server; from wall 0 it would be
    /// rejected.
    #[test]
    fn replayer_starts_at_a_realistic_wall_time() {
        let cases = parse(&case(
            "none",
            json!([
                {"at_ms": 0, "command": ["__WALL_CLOCK_JUMP__", "-20000"], "reply": null},
                {"at_ms": 1, "command": ["SET","k","v","NX","PX","10000"], "reply": "OK", "reply_type": "status"},
            ]),
        ))
        .unwrap();
        assert!(replay_cases(&cases).all_passed());
        let at_epoch = replay_cases_at(&cases, 0);
        assert_eq!(at_epoch.failed, 1);
        assert_eq!(
            at_epoch.failures[0].got,
            json!({"error": "ERR invalid expire time in 'set' command"})
        );
    }

    #[test]
    fn ttl_tolerance_and_failures_are_counted() {
        let text = case(
            "none",
            json!([
                {"at_ms": 0, "command": ["SET","k","v","PX","1000"], "reply": "OK", "reply_type": "status"},
                {"at_ms": 10, "command": ["PTTL","k"], "reply": 985, "reply_type": "integer",
                 "timing": {"kind": "ttl_value", "ideal": 985, "tolerance_ms": 5}},
                {"at_ms": 10, "command": ["PTTL","k"], "reply": 980, "reply_type": "integer",
                 "timing": {"kind": "ttl_value", "ideal": 980, "tolerance_ms": 5}},
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
    fn frozen_clock_and_backward_jump() {
        let text = case(
            "none",
            json!([
                {"at_ms": 0, "command": ["SET","k","v","PX","100"], "reply": "OK"},
                {"at_ms": 0, "command": ["__WALL_CLOCK_FREEZE__"], "reply": "FROZEN"},
                {"at_ms": 5000, "command": ["PTTL","k"], "reply": 100},
                {"at_ms": 5000, "command": ["__WALL_CLOCK_JUMP__","-50"], "reply": "JUMPED"},
                {"at_ms": 6000, "command": ["PTTL","k"], "reply": 150},
                {"at_ms": 6000, "command": ["__WALL_CLOCK_JUMP__","151"], "reply": "JUMPED"},
                {"at_ms": 6000, "command": ["PTTL","k"], "reply": -2}
            ]),
        );
        let r = replay(&text).unwrap();
        assert!(r.all_passed(), "{:?}", r.failures);
    }

    #[test]
    fn everysec_ticks_follow_monotonic_time() {
        let text = case(
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
        let r = replay(&case(
            "rdb",
            json!([{"at_ms": 0, "command": ["GET","k"], "reply": null}]),
        ))
        .unwrap();
        assert_eq!(r.failed, 1);
        let r = replay(&case(
            "none",
            json!([{"at_ms": 0, "command": [], "reply": null},
                   {"at_ms": 0, "command": ["__STOP__", "SIGHUP"], "reply": "STOPPED"},
                   {"at_ms": 9223372036854775807i64, "command": ["GET","k"], "reply": null}]),
        ))
        .unwrap();
        assert_eq!((r.passed, r.failed), (0, 3));
    }
}
