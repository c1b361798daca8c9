//! Shrinking a failing run: from a scenario and a seed whose run violates an invariant, search
//! for a smaller scenario that still violates it.
//!
//! 1. The nemesis draws of the seed become an explicit fault list (`at` faults with node
//!    names; a partition brings its `heal`, a crash its `restart`), so the result replays
//!    without the seed's nemesis; the `nemesis` key is dropped. The run is unchanged. The
//!    file checks only the kept invariant and expects it violated (`expect`), so a rate
//!    expectation (`expect_rate`, `rate_seeds`: a sweep's claim) is dropped too.
//! 2. Delta debugging (ddmin, Zeller and Hildebrandt 2002) removes faults.
//! 3. Greedy numeric shrinking, repeated to a fixpoint: shorten the run, remove nodes and
//!    reduce `count`s where references allow, shorten pauses, move faults later and heals and
//!    restarts earlier, shrink delays after protocol points and clock steps.
//!
//! Every candidate is serialised, validated like a file and run; only runs that still violate
//! the same invariant are kept. The search is sequential and tries candidates in a fixed
//! order, so the same input always gives the same output. It stops after `max_runs` runs.

use splitbrain_check::Verdict;
use splitbrain_engine::{Recorder, SimDuration};
use splitbrain_scenario::duration::{Dur, SignedDur};
use splitbrain_scenario::execute::execute;
use splitbrain_scenario::json::Json;
use splitbrain_scenario::plan::Plan;
use splitbrain_scenario::schema::{Expectation, FaultSpec, Scenario};
use std::collections::BTreeMap;

const MS: u64 = 1_000_000;

/// Options of a shrink.
#[derive(Clone, Debug)]
pub struct ShrinkOptions {
    /// The seed of the failing run.
    pub seed: u64,
    /// The invariant to keep violated (default: the first violated, in report order).
    pub invariant: Option<String>,
    /// Most runs to spend (the original run and the final check not counted).
    pub max_runs: u32,
}

/// The size of a scenario and its run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Size {
    /// Faults listed (`None`: plus a nemesis).
    pub faults: usize,
    /// Whether a nemesis draws more.
    pub nemesis: bool,
    /// Faults the run applied.
    pub faults_applied: usize,
    /// Nodes after expanding groups.
    pub nodes: usize,
    /// Simulated duration.
    pub duration: SimDuration,
    /// Events the run processed (`Stats::events`, stale timers included): the count `run`
    /// prints as "N events processed", not the trace's records.
    pub events: u64,
}

/// The result of a shrink.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The invariant kept violated.
    pub invariant: String,
    /// The smallest scenario found.
    pub scenario: Scenario,
    /// It as a file: pretty JSON with a final newline.
    pub text: String,
    /// The original scenario and run.
    pub before: Size,
    /// The result and its run.
    pub after: Size,
    /// Faults the nemesis drew for the seed (turned explicit).
    pub nemesis_faults: usize,
    /// Candidate runs spent.
    pub runs: u32,
    /// Whether the budget ran out before a fixpoint.
    pub exhausted: bool,
}

/// Why a shrink cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    /// The run violates nothing.
    #[error("seed {seed}: no checked invariant is violated ({checked}); nothing to shrink")]
    NothingViolated {
        /// The seed.
        seed: u64,
        /// The checked invariants and outcomes.
        checked: String,
    },
    /// `--invariant` names an invariant the scenario does not check.
    #[error("`{name}` is not checked by this scenario (it checks: {checked})")]
    NotChecked {
        /// The name given.
        name: String,
        /// What is checked.
        checked: String,
    },
    /// `--invariant` names an invariant that holds in this run.
    #[error("seed {seed}: `{name}` is not violated (outcome: {outcome}); nothing to shrink")]
    NotViolated {
        /// The name.
        name: String,
        /// The seed.
        seed: u64,
        /// What it was.
        outcome: String,
    },
    /// The scenario with its nemesis made explicit does not validate (its faults and the
    /// drawn ones together pass the fault limit): the input cannot be shrunk as it is.
    #[error("cannot shrink seed {seed}: the scenario with the nemesis's {drawn} drawn faults made explicit does not validate: {error}")]
    StartInvalid {
        /// The seed.
        seed: u64,
        /// How many faults the nemesis drew.
        drawn: usize,
        /// The validation error.
        error: String,
    },
    /// The explicit scenario does not violate, or the final one fails to validate or to
    /// violate: a bug in shrink.
    #[error("internal error while shrinking: {0}")]
    Internal(String),
    /// A run failed to record.
    #[error("a run failed: {0}")]
    Io(#[from] std::io::Error),
}

/// `scenario` with the nemesis of `seed` turned into explicit faults (appended after the file's
/// own, in the order `build` schedules them, so the run is the same event for event) and the
/// seed written into the file.
pub fn explicit(plan: &Plan, seed: u64) -> Scenario {
    let mut s = plan.scenario.clone();
    s.faults
        .extend(splitbrain_scenario::build::explicit_nemesis(plan, seed));
    s.nemesis = None;
    s.seed = seed;
    // The lesson's chart window may not fit a shortened run.
    s.chart = None;
    s
}

/// Where a shrink of `plan`'s run with `seed` starts: [`explicit`], renamed, checking only
/// `invariant` and expecting it violated. The result judges one run, not a sweep, so a rate
/// expectation (`expect_rate`, `rate_seeds`) is dropped: it would clash with `expect` on the
/// same invariant, or name an invariant no longer checked, and the file would not validate.
pub fn starting_point(plan: &Plan, seed: u64, invariant: &str) -> Scenario {
    let mut cur = explicit(plan, seed);
    cur.name = format!("{}-shrunk", plan.scenario.name);
    cur.description = Some(format!(
        "Shrunk by `splitbrain shrink` from scenario `{}` with seed {seed}: the smallest scenario found that still violates {invariant}.",
        plan.scenario.name
    ));
    cur.check = vec![invariant.to_string()];
    cur.expect = BTreeMap::from([(invariant.to_string(), Expectation::Violated)]);
    cur.expect_rate = BTreeMap::new();
    cur.rate_seeds = None;
    cur
}

/// The scenario as a file: pretty JSON without the defaults serde writes out (`"clock":
/// {"drift_ppm": 0}`, empty `check_params` and `limits`), which read back the same.
pub fn pretty(s: &Scenario) -> String {
    let text = serde_json::to_string(s).expect("a scenario serialises");
    let mut root: Json = serde_json::from_str(&text).expect("its own JSON reads back");
    if let Json::Object(top) = &mut root {
        for key in ["check_params", "limits", "network"] {
            if matches!(top.get(key), Some(Json::Object(m)) if m.is_empty()) {
                top.shift_remove(key);
            }
        }
        if let Some(Json::Object(nodes)) = top.get_mut("nodes") {
            for node in nodes.values_mut() {
                if let Json::Object(fields) = node {
                    let default_clock = serde_json::json!({ "drift_ppm": 0 });
                    let is_default = fields.get("clock").is_some_and(|c| {
                        serde_json::to_value(c).ok().as_ref() == Some(&default_clock)
                    });
                    if is_default {
                        fields.shift_remove("clock");
                    }
                }
            }
        }
    }
    let mut t = serde_json::to_string_pretty(&root).expect("JSON serialises");
    t.push('\n');
    t
}

struct Shrinker {
    invariant: String,
    seed: u64,
    runs: u32,
    max_runs: u32,
    cache: BTreeMap<String, bool>,
    /// The roles the scenario was loaded with: every candidate is loaded with them.
    roles: splitbrain_scenario::RoleRegistry,
}

impl Shrinker {
    fn exhausted(&self) -> bool {
        self.runs >= self.max_runs
    }

    /// Does `s` validate and still violate the invariant? (false once the budget is spent)
    fn violates(&mut self, s: &Scenario) -> Result<bool, std::io::Error> {
        let text = pretty(s);
        if let Some(&v) = self.cache.get(&text) {
            return Ok(v);
        }
        let Ok(plan) = self.roles.load_str("candidate", &text) else {
            self.cache.insert(text, false);
            return Ok(false);
        };
        if self.exhausted() {
            return Ok(false);
        }
        self.runs += 1;
        let r = execute(&plan, self.seed, None)?;
        let v = matches!(
            r.report.verdict(&self.invariant),
            Some(Verdict::Violated(_))
        );
        self.cache.insert(text, v);
        Ok(v)
    }

    /// Keeps `cand` if it still violates.
    fn accept(&mut self, cur: &mut Scenario, cand: Scenario) -> Result<bool, std::io::Error> {
        if self.violates(&cand)? {
            *cur = cand;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// The smallest `v` in `lo..=hi` (in steps of `unit`, plus the current `hi` itself) for
    /// which `make(v)` still violates, by bisection; `cur` becomes that candidate. Returns
    /// whether anything changed. Assumes `make(hi)` is `cur`.
    fn minimise(
        &mut self,
        cur: &mut Scenario,
        lo: u64,
        hi: u64,
        unit: u64,
        make: &dyn Fn(&Scenario, u64) -> Option<Scenario>,
    ) -> Result<bool, std::io::Error> {
        let mut changed = false;
        let (mut l, mut h) = (lo.div_ceil(unit), hi / unit);
        if h * unit == hi {
            // `hi` is on the grid and known to violate: search below it.
            if h == 0 {
                return Ok(false);
            }
            h -= 1;
        }
        while l <= h && !self.exhausted() {
            let mid = l + (h - l) / 2;
            let Some(cand) = make(cur, mid * unit) else {
                l = mid + 1;
                continue;
            };
            if self.accept(cur, cand)? {
                changed = true;
                if mid == 0 {
                    break;
                }
                h = mid - 1;
            } else {
                l = mid + 1;
            }
        }
        Ok(changed)
    }

    /// The largest `v` in `lo..=hi` (grid `unit`) for which `make(v)` still violates; `make(lo)`
    /// is `cur`.
    fn maximise(
        &mut self,
        cur: &mut Scenario,
        lo: u64,
        hi: u64,
        unit: u64,
        make: &dyn Fn(&Scenario, u64) -> Option<Scenario>,
    ) -> Result<bool, std::io::Error> {
        let mut changed = false;
        let (mut l, mut h) = (lo / unit + 1, hi / unit);
        while l <= h && !self.exhausted() {
            let mid = h - (h - l) / 2;
            let Some(cand) = make(cur, mid * unit) else {
                h = mid - 1;
                continue;
            };
            if self.accept(cur, cand)? {
                changed = true;
                l = mid + 1;
            } else {
                h = mid - 1;
            }
        }
        Ok(changed)
    }

    /// ddmin over the fault list of `cur`.
    fn ddmin(&mut self, cur: &mut Scenario) -> Result<(), std::io::Error> {
        let with = |cur: &Scenario, keep: &[usize], all: &[FaultSpec]| {
            let mut s = cur.clone();
            s.faults = keep.iter().map(|&i| all[i].clone()).collect();
            s
        };
        let all = cur.faults.clone();
        let mut c: Vec<usize> = (0..all.len()).collect();
        if c.is_empty() {
            return Ok(());
        }
        if self.accept(cur, with(cur, &[], &all))? {
            return Ok(());
        }
        let mut n = 2usize;
        while c.len() >= 2 && !self.exhausted() {
            let chunk = c.len().div_ceil(n);
            let parts: Vec<Vec<usize>> = c.chunks(chunk).map(<[usize]>::to_vec).collect();
            let mut reduced = false;
            for p in &parts {
                if self.accept(cur, with(cur, p, &all))? {
                    c = p.clone();
                    n = 2;
                    reduced = true;
                    break;
                }
            }
            if !reduced && parts.len() > 2 {
                for p in &parts {
                    let comp: Vec<usize> = c.iter().copied().filter(|i| !p.contains(i)).collect();
                    if self.accept(cur, with(cur, &comp, &all))? {
                        c = comp;
                        n = (n - 1).max(2);
                        reduced = true;
                        break;
                    }
                }
            }
            if !reduced {
                if n >= c.len() {
                    break;
                }
                n = (2 * n).min(c.len());
            }
        }
        // With two parts the complements are the parts themselves; make sure the result is
        // 1-minimal: no single fault can go.
        let mut i = 0;
        while i < cur.faults.len() && !self.exhausted() && cur.faults.len() > 1 {
            let mut cand = cur.clone();
            cand.faults.remove(i);
            if !self.accept(cur, cand)? {
                i += 1;
            }
        }
        Ok(())
    }

    /// One round of numeric shrinking; whether anything changed.
    ///
    /// Long because each kind of number (a fault's time, a pause's length, a clock step, a drift)
    /// is halved in its own few lines, in one round.
    fn numeric_round(&mut self, cur: &mut Scenario) -> Result<bool, std::io::Error> {
        let mut changed = false;

        // Shorter run (faults after the new end are dropped: they never applied).
        let dur = cur.duration.0.as_nanos();
        changed |= self.minimise(cur, MS, dur, MS, &|s, d| {
            let mut c = s.clone();
            c.duration = Dur(SimDuration(d));
            c.faults
                .retain(|f| f.at.map_or(true, |a| a.0.as_nanos() <= d));
            Some(c)
        })?;

        // Fewer nodes: drop a whole declaration, else reduce its count.
        let keys: Vec<String> = cur.nodes.keys().cloned().collect();
        for key in keys.iter().rev() {
            if self.exhausted() || cur.nodes.len() <= 1 {
                break;
            }
            let mut cand = cur.clone();
            cand.nodes.shift_remove(key);
            if self.accept(cur, cand)? {
                changed = true;
                continue;
            }
            if let Some(n) = cur.nodes.get(key).and_then(|spec| spec.role().count()) {
                let k = key.clone();
                changed |= self.minimise(cur, 1, u64::from(n), 1, &|s, v| {
                    let mut c = s.clone();
                    c.nodes.get_mut(&k)?.role_mut().set_count(v as u32);
                    Some(c)
                })?;
            }
        }

        // Faults, one at a time.
        for i in 0..cur.faults.len() {
            if self.exhausted() {
                break;
            }
            let f = cur.faults[i].clone();
            if let Some(len) = f.for_ {
                changed |= self.minimise(cur, MS, len.0.as_nanos(), MS, &|s, v| {
                    let mut c = s.clone();
                    c.faults[i].for_ = Some(Dur(SimDuration(v)));
                    Some(c)
                })?;
            }
            if let Some(at) = f.at {
                let at = at.0.as_nanos();
                if is_repair(&f) {
                    // Heal or restart earlier, not before what it repairs.
                    let floor = opened_before(cur, i).unwrap_or(0);
                    changed |= self.minimise(cur, floor, at, MS, &|s, v| {
                        let mut c = s.clone();
                        c.faults[i].at = Some(Dur(SimDuration(v)));
                        Some(c)
                    })?;
                } else {
                    // Later, not past its repair or the end.
                    let ceiling = repaired_at(cur, i).unwrap_or(cur.duration.0.as_nanos());
                    changed |= self.maximise(cur, at, ceiling, MS, &|s, v| {
                        let mut c = s.clone();
                        c.faults[i].at = Some(Dur(SimDuration(v)));
                        Some(c)
                    })?;
                }
            }
            if let Some(after) = f.after {
                let mut cand = cur.clone();
                cand.faults[i].after = None;
                if self.accept(cur, cand)? {
                    changed = true;
                } else {
                    changed |= self.minimise(cur, MS, after.0.as_nanos(), MS, &|s, v| {
                        let mut c = s.clone();
                        c.faults[i].after = Some(Dur(SimDuration(v)));
                        Some(c)
                    })?;
                }
            }
            if let Some(w) = &f.when {
                if w.nth > 1 {
                    changed |= self.minimise(cur, 1, u64::from(w.nth), 1, &|s, v| {
                        let mut c = s.clone();
                        c.faults[i].when.as_mut()?.nth = v as u32;
                        Some(c)
                    })?;
                }
            }
            if let Some(by) = f.by {
                let sign = by.0.signum();
                changed |= self.minimise(cur, MS, by.0.unsigned_abs(), MS, &|s, v| {
                    let mut c = s.clone();
                    c.faults[i].by = Some(SignedDur(sign * v as i64));
                    Some(c)
                })?;
            }
        }
        Ok(changed)
    }
}

/// A fault that undoes earlier ones: a heal (of everything or of one partition) or a restart.
fn is_repair(f: &FaultSpec) -> bool {
    f.heal.is_some() || f.heal_partition.is_some() || f.restart.is_some()
}

/// Does the repair `r` end the network fault `f`? A heal ends every rule; a partition's heal
/// only the partition with the same groups.
fn heals(r: &FaultSpec, f: &FaultSpec) -> bool {
    match (&r.heal_partition, &f.partition) {
        _ if r.heal.is_some() => f.partition.is_some() || f.block.is_some() || f.cut.is_some(),
        (Some(healed), Some(groups)) => healed == groups,
        _ => false,
    }
}

fn at_ns(f: &FaultSpec) -> Option<u64> {
    f.at.map(|a| a.0.as_nanos())
}

/// For the repair at `i`: the latest earlier time at which something it repairs started (a
/// network fault for a heal, a crash of the node for a restart).
fn opened_before(s: &Scenario, i: usize) -> Option<u64> {
    let r = &s.faults[i];
    let at = at_ns(r)?;
    s.faults
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .filter(|(_, f)| heals(r, f) || (r.restart.is_some() && f.crash == r.restart))
        .filter_map(|(_, f)| at_ns(f))
        .filter(|&t| t <= at)
        .max()
}

/// For the fault at `i`: the earliest later repair of it (heal of a network fault, restart of
/// a crashed node).
fn repaired_at(s: &Scenario, i: usize) -> Option<u64> {
    let f = &s.faults[i];
    let at = at_ns(f)?;
    s.faults
        .iter()
        .filter(|r| heals(r, f) || (f.crash.is_some() && r.restart == f.crash))
        .filter_map(at_ns)
        .filter(|&t| t >= at)
        .min()
}

fn size_of(s: &Scenario, plan_nodes: usize, faults_applied: usize, events: u64) -> Size {
    Size {
        faults: s.faults.len(),
        nemesis: s.nemesis.is_some(),
        faults_applied,
        nodes: plan_nodes,
        duration: s.duration.0,
        events,
    }
}

fn outcomes_text(r: &splitbrain_scenario::execute::RunResult) -> String {
    r.report
        .results
        .iter()
        .map(|x| format!("{}={:?}", x.name, x.verdict.outcome()).to_lowercase())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Shrinks the run of `plan` with `opts.seed`.
///
/// Long because the rounds (drop faults, drop the nemesis, shorten, shrink numbers) run in a fixed
/// order that the result depends on.
pub fn shrink(plan: &Plan, opts: &ShrinkOptions) -> Result<Shrunk, ShrinkError> {
    let seed = opts.seed;
    let original = execute(plan, seed, Some(Recorder::hash_only()))?;
    let invariant = match &opts.invariant {
        Some(name) => match original.report.verdict(name) {
            None => {
                return Err(ShrinkError::NotChecked {
                    name: name.clone(),
                    checked: original
                        .report
                        .results
                        .iter()
                        .map(|x| x.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
            Some(Verdict::Violated(_)) => name.clone(),
            Some(v) => {
                return Err(ShrinkError::NotViolated {
                    name: name.clone(),
                    seed,
                    outcome: format!("{:?}", v.outcome()).to_lowercase(),
                })
            }
        },
        None => original
            .report
            .results
            .iter()
            .find(|x| matches!(x.verdict, Verdict::Violated(_)))
            .map(|x| x.name.to_string())
            .ok_or_else(|| ShrinkError::NothingViolated {
                seed,
                checked: outcomes_text(&original),
            })?,
    };
    let before = size_of(
        &plan.scenario,
        plan.nodes.len(),
        original.record.faults.len(),
        original.stats.events,
    );

    let mut cur = starting_point(plan, seed, &invariant);
    let nemesis_faults = cur.faults.len() - plan.scenario.faults.len();
    let mut sh = Shrinker {
        invariant: invariant.clone(),
        seed,
        runs: 0,
        max_runs: opts.max_runs,
        cache: BTreeMap::new(),
        roles: plan.roles.clone(),
    };
    // Validated first, so that a starting point that does not load says why rather than
    // passing for one that does not violate.
    if let Err(e) = plan
        .roles
        .load_str("the scenario with the nemesis made explicit", &pretty(&cur))
    {
        return Err(ShrinkError::StartInvalid {
            seed,
            drawn: nemesis_faults,
            error: e.to_string(),
        });
    }
    if !sh.violates(&cur)? {
        return Err(ShrinkError::Internal(format!(
            "the scenario with the nemesis made explicit does not violate {invariant}"
        )));
    }
    sh.ddmin(&mut cur)?;
    // Bounded: every round either changes the scenario or ends the loop, and each change
    // costs a run from the budget.
    while !sh.exhausted() && sh.numeric_round(&mut cur)? {}

    let text = pretty(&cur);
    let final_plan = plan
        .roles
        .load_str("shrunk scenario", &text)
        .map_err(|e| ShrinkError::Internal(format!("the result does not validate: {e}")))?;
    let r = execute(&final_plan, seed, Some(Recorder::hash_only()))?;
    if !matches!(r.report.verdict(&invariant), Some(Verdict::Violated(_))) {
        return Err(ShrinkError::Internal(format!(
            "the result does not violate {invariant}"
        )));
    }
    let after = size_of(
        &cur,
        final_plan.nodes.len(),
        r.record.faults.len(),
        r.stats.events,
    );
    Ok(Shrunk {
        invariant,
        scenario: cur,
        text,
        before,
        after,
        nemesis_faults,
        runs: sh.runs,
        exhausted: sh.exhausted(),
    })
}
