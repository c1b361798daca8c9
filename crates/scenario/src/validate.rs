//! Semantic validation: references, ranges, limits. Collects every problem, each located.

use crate::checker::{k, Checker, NodeCheck};
use crate::error::{did_you_mean, Problem, ScenarioError};
use crate::locate::Seg;
use crate::plan::{Plan, PlannedNode};
use crate::roles::worker::LockKind;
use crate::roster::Roster;
use crate::schema::{DelaySpec, FaultSpec, NodeSet, NodeSpec, Scenario};
use splitbrain_engine::SimDuration;
use splitbrain_protocols::{MESSAGE_KINDS, OBSERVATION_KINDS};
use std::collections::BTreeMap;
use std::path::Path;

use crate::limits::{
    MAX_DRIFT_PPM, MAX_DURATION, MAX_FAULTS, MAX_NAME_LEN, MAX_NODES, MIN_DRIFT_PPM,
};

/// Checks a delay distribution's parameters.
fn check_delay(c: &mut Checker, path: Vec<Seg>, d: &DelaySpec) {
    match d {
        DelaySpec::Uniform([lo, hi]) if lo > hi => c.err(
            path,
            format!("uniform delay bounds are reversed: {} > {}", lo.0, hi.0),
        ),
        DelaySpec::Lognormal { sigma, .. } if !(*sigma >= 0.0 && sigma.is_finite()) => c.err(
            path,
            format!("lognormal sigma must be a finite number >= 0, found {sigma}"),
        ),
        _ => {}
    }
}

/// Checks that `kind` names a message kind; the error lists the kinds (it named none).
fn check_message_kind(c: &mut Checker, path: Vec<Seg>, kind: &str) {
    if !MESSAGE_KINDS.contains(&kind) {
        let hint = did_you_mean(kind, MESSAGE_KINDS.iter().copied())
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        c.err(
            path,
            format!(
                "unknown message kind `{kind}`: expected one of {}{hint}",
                ticked(MESSAGE_KINDS)
            ),
        );
    }
}

/// Names as an error lists its choices: "`a`, `b`, `c`" (serde's "expected one of" form).
fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why `name` cannot name a scenario, if it cannot. `report` makes file names of it
/// (`reports/<name>.md`), so it must be one plain file name: a name like `../x` would write
/// outside the report folder, an empty one a hidden `.md`.
pub fn bad_scenario_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the scenario name cannot be empty".into());
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Some(format!(
            "the scenario name is {} characters long: at most {MAX_NAME_LEN}",
            name.chars().count()
        ));
    }
    let plain = name
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.'));
    if !plain || name.starts_with('.') {
        return Some(format!(
            "scenario name {name:?} may use only ASCII letters (a-z, A-Z), digits (0-9), '-', '_' and '.', and not start \
             with '.' (`report` names its files after it)"
        ));
    }
    None
}

/// Reads and validates the scenario at `path`.
pub fn load_file(path: &Path) -> Result<Plan, ScenarioError> {
    let file = path.display().to_string();
    let src = crate::load::read_scenario(path)?;
    load_str(&file, &src)
}

/// Parses and validates scenario text of the built-in roles; `file` names it in errors.
pub fn load_str(file: &str, src: &str) -> Result<Plan, ScenarioError> {
    load_str_with(&crate::registry::RoleRegistry::builtin(), file, src)
}

/// Parses and validates scenario text whose nodes play any role of `roles`; `file` names it
/// in errors.
pub fn load_str_with(
    roles: &crate::registry::RoleRegistry,
    file: &str,
    src: &str,
) -> Result<Plan, ScenarioError> {
    let src = crate::json::without_bom(src);
    let invalid = |problems| ScenarioError::Invalid {
        file: file.to_string(),
        problems,
    };
    let mut scenario = crate::load::parse(file, src)?;
    roles.resolve(&mut scenario, src).map_err(invalid)?;
    let mut plan = validate(scenario, src).map_err(invalid)?;
    plan.roles = roles.clone();
    Ok(plan)
}

/// Loading through a registry: the nodes of any role it holds.
impl crate::registry::RoleRegistry {
    /// Reads and validates the scenario at `path`, its nodes of any registered role.
    pub fn load_file(&self, path: &std::path::Path) -> Result<Plan, ScenarioError> {
        let file = path.display().to_string();
        let src = crate::load::read_scenario(path)?;
        self.load_str(&file, &src)
    }

    /// Parses and validates scenario text, its nodes of any registered role; `file` names it
    /// in errors.
    pub fn load_str(&self, file: &str, src: &str) -> Result<Plan, ScenarioError> {
        load_str_with(self, file, src)
    }
}

/// Validates a parsed scenario against its source text (for locations).
pub fn validate(scenario: Scenario, src: &str) -> Result<Plan, Vec<Problem>> {
    let mut c = Checker::new(src);
    check_top(&mut c, &scenario);
    check_params_and_chart(&mut c, &scenario);
    let (nodes, roster) = expand_nodes(&mut c, &scenario);
    if nodes.is_empty() && c.problems.is_empty() {
        c.err(vec![k("nodes")], "a scenario needs at least one node");
    }
    if !c.problems.is_empty() {
        // Without a sound node list every reference check would only echo the problem.
        c.problems.sort_by_key(|p| (p.line, p.column));
        return Err(c.problems);
    }
    let duration = scenario.duration.0;
    let duration_ok = duration > SimDuration::ZERO && duration <= MAX_DURATION;
    check_node_params(&mut c, &scenario, &roster);
    check_network(&mut c, &scenario, &roster);
    check_faults(&mut c, &scenario, &nodes, &roster, duration_ok);
    check_nemesis(&mut c, &scenario, &nodes, &roster);
    check_invariants(&mut c, &scenario);
    check_rates(&mut c, &scenario);
    nothing_to_check(&mut c, &scenario);
    fencing_behind_redis(&mut c, &scenario, &nodes);

    if c.problems.is_empty() {
        Ok(Plan {
            scenario,
            nodes,
            roster,
            roles: crate::registry::RoleRegistry::builtin(),
        })
    } else {
        c.problems.sort_by_key(|p| (p.line, p.column));
        Err(c.problems)
    }
}

/// The file's version, name, duration and event bound: what the run as a whole is.
fn check_top(c: &mut Checker<'_>, scenario: &Scenario) {
    if crate::format::version(scenario.splitbrain).is_none() {
        c.err(
            vec![k("splitbrain")],
            format!(
                "unsupported format version {}: this splitbrain reads versions {} (the \
                 current is {})",
                scenario.splitbrain,
                crate::format::known(),
                crate::format::CURRENT
            ),
        );
    }
    if let Some(why) = bad_scenario_name(&scenario.name) {
        c.err(vec![k("name")], why);
    }
    let duration = scenario.duration.0;
    if duration == SimDuration::ZERO {
        c.err(vec![k("duration")], "duration must be greater than zero");
    } else if duration > MAX_DURATION {
        c.err(
            vec![k("duration")],
            format!("duration {duration} exceeds the 24 h limit"),
        );
    }
    if scenario.limits.max_events == Some(0) {
        // Zero stopped every run before its first event (exit 3, "stopped at a bound").
        c.err(
            vec![k("limits"), k("max_events")],
            "max_events must be at least 1 (it bounds the events a run processes; omit it for \
             the default 5,000,000)",
        );
    }
}

/// `check_params` (the invariants' windows), the bound on queued events, and the chart's
/// window.
fn check_params_and_chart(c: &mut Checker<'_>, scenario: &Scenario) {
    let duration = scenario.duration.0;
    // A window of 0 s is refused: it would make every instant a client waits with nobody
    // holding the lock a violation. `settle` 0 s stays allowed: it claims the
    // last fault disturbed no leadership (a follower restarted, a partition healed that did
    // not cut the leader), a strict claim but a meaningful one.
    if scenario
        .check_params
        .window
        .is_some_and(|w| w.0 == SimDuration::ZERO)
    {
        c.err(
            vec![k("check_params"), k("window")],
            "window must be greater than zero: lock_progress lets clients wait at most the \
             window with nobody holding the lock, so 0 s makes every instant of waiting a \
             violation (omit it for the default 10 s)",
        );
    } else {
        c.positive(
            vec![k("check_params"), k("window")],
            scenario.check_params.window,
            "window",
        );
    }
    if scenario
        .check_params
        .max_gap
        .is_some_and(|w| w.0 == SimDuration::ZERO)
    {
        c.err(
            vec![k("check_params"), k("max_gap")],
            "max_gap must be greater than zero: leader_available allows at most max_gap with \
             no leader, and every election takes time (omit it for the default 2 s)",
        );
    } else {
        c.positive(
            vec![k("check_params"), k("max_gap")],
            scenario.check_params.max_gap,
            "max_gap",
        );
    }
    if scenario
        .check_params
        .settle
        .is_some_and(|d| d.0 > MAX_DURATION)
    {
        c.positive(
            vec![k("check_params"), k("settle")],
            scenario.check_params.settle,
            "settle",
        );
    }
    if scenario.limits.max_in_flight == Some(0) {
        c.err(
            vec![k("limits"), k("max_in_flight")],
            "max_in_flight must be at least 1 (it bounds the events queued at once; omit it for \
             the default 20,000,000)",
        );
    }
    if let Some(w) = &scenario.chart {
        if w.from.0 >= w.to.0 {
            c.err(
                vec![k("chart"), k("to")],
                format!(
                    "chart window ends at {} but starts at {}: `to` must be after `from`",
                    w.to.0, w.from.0
                ),
            );
        } else if w.to.0 > duration {
            c.err(
                vec![k("chart"), k("to")],
                format!("chart window ends at {} after the run's {duration}", w.to.0),
            );
        }
    }
}

/// The file's nodes, each `count` expanded to its names (`client-1`, ...), with the roster of
/// names to ids.
fn expand_nodes(c: &mut Checker<'_>, scenario: &Scenario) -> (Vec<PlannedNode>, Roster) {
    // Expand nodes. Every name the file declares counts toward the limit, repeated or not, and
    // the first one past it ends the expansion with one error: the work stays within the limit
    // whatever the file's length.
    let mut nodes = Vec::new();
    let mut roster = Roster::new(scenario.splitbrain);
    let mut declared = 0;
    'declarations: for (key, spec) in &scenario.nodes {
        let path = vec![k("nodes"), k(key)];
        if key.is_empty() {
            c.err(path.clone(), "node names cannot be empty");
        } else if !key
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.'))
        {
            c.err(
                path.clone(),
                format!("node name {key:?} may use only ASCII letters (a-z, A-Z), digits (0-9), '-', '_' and '.' (it appears in narrations and charts)"),
            );
        }
        let count = spec.role().count();
        if count == Some(0) || count.is_some_and(|n| n as usize > MAX_NODES) {
            c.err(
                [path.clone(), vec![k("count")]].concat(),
                format!("count must be between 1 and {MAX_NODES}"),
            );
            continue;
        }
        let expanded: Vec<String> = match count {
            None => vec![key.clone()],
            Some(n) => (1..=n).map(|i| format!("{key}{i}")).collect(),
        };
        for name in expanded {
            if declared == MAX_NODES {
                c.err(path, format!("too many nodes: the limit is {MAX_NODES}"));
                break 'declarations;
            }
            declared += 1;
            if roster.contains(&name) {
                c.err(path.clone(), format!("node name `{name}` is used twice"));
                continue;
            }
            roster.add(name.clone(), spec.role_name());
            nodes.push(PlannedNode {
                name,
                declared_as: key.clone(),
                spec: spec.clone(),
            });
        }
    }
    (nodes, roster)
}

/// Each node's own parameters (its role checks them) and its clock's drift.
fn check_node_params(c: &mut Checker<'_>, scenario: &Scenario, roster: &Roster) {
    // Per-node parameters and references.
    for (key, spec) in &scenario.nodes {
        let p = |f: &str| vec![k("nodes"), k(key), k(f)];
        spec.role().validate(&mut NodeCheck::new(c, roster, key));
        let clock = spec.role().clock();
        if !(MIN_DRIFT_PPM..=MAX_DRIFT_PPM).contains(&clock.drift_ppm) {
            c.err(
                [p("clock"), vec![k("drift_ppm")]].concat(),
                format!(
                    "drift_ppm must be within {MIN_DRIFT_PPM}..={MAX_DRIFT_PPM} (a clock rate of 0.1x to 3x), found {}",
                    clock.drift_ppm
                ),
            );
        }
    }
}

/// The network's delays and losses, its per-link and per-message rules, and the handling
/// times (`processing`).
fn check_network(c: &mut Checker<'_>, scenario: &Scenario, roster: &Roster) {
    // Network.
    let net = &scenario.network;
    if let Some(d) = &net.delay {
        check_delay(c, vec![k("network"), k("delay")], d);
    }
    c.probability(vec![k("network"), k("loss")], net.loss);
    c.probability(vec![k("network"), k("duplicate")], net.duplicate);
    if let Some(s) = &net.spike {
        c.probability(
            vec![k("network"), k("spike"), k("probability")],
            Some(s.probability),
        );
        check_delay(c, vec![k("network"), k("spike"), k("delay")], &s.delay);
    }
    for (i, l) in net.links.iter().enumerate() {
        let p = |f: &str| vec![k("network"), k("links"), Seg::Index(i), k(f)];
        c.node_ref(roster, p("from"), &l.from, &[]);
        c.node_ref(roster, p("to"), &l.to, &[]);
        c.probability(p("loss"), l.loss);
        if let Some(d) = &l.delay {
            check_delay(c, p("delay"), d);
        }
    }

    for (i, m) in net.messages.iter().enumerate() {
        let p = |f: &str| vec![k("network"), k("messages"), Seg::Index(i), k(f)];
        check_message_kind(c, p("kind"), &m.kind);
        for (field, n) in [("from", &m.from), ("to", &m.to)] {
            if let Some(n) = n {
                c.node_ref(roster, p(field), n, &[]);
            }
        }
        c.probability(p("drop"), m.drop);
        c.probability(p("duplicate"), m.duplicate);
        match &m.delay {
            Some(d) => check_delay(c, p("delay"), d),
            None if m.drop.is_none() && m.duplicate.is_none() => c.err(
                vec![k("network"), k("messages"), Seg::Index(i)],
                "a message rule needs `delay`, `drop` or `duplicate`",
            ),
            None => {}
        }
    }

    for (i, r) in scenario.processing.iter().enumerate() {
        let p = |f: &str| vec![k("processing"), Seg::Index(i), k(f)];
        if let Some(kind) = &r.kind {
            check_message_kind(c, p("kind"), kind);
        }
        match &r.node {
            Some(NodeSet::One(n)) => c.node_ref(roster, p("node"), n, &[]),
            Some(NodeSet::Group(g)) => {
                for (j, n) in g.iter().enumerate() {
                    c.node_ref(roster, [p("node"), vec![Seg::Index(j)]].concat(), n, &[]);
                }
            }
            None => {}
        }
        if r.time.0 > MAX_DURATION {
            c.err(p("time"), "a handling time longer than 24 h");
        }
    }
}

/// The listed faults: their number, then each fault's time, action and targets.
fn check_faults(
    c: &mut Checker<'_>,
    scenario: &Scenario,
    nodes: &[PlannedNode],
    roster: &Roster,
    duration_ok: bool,
) {
    // Faults.
    if scenario.faults.len() > MAX_FAULTS {
        c.err(
            vec![k("faults")],
            format!(
                "too many faults: {} (the limit is {MAX_FAULTS})",
                scenario.faults.len()
            ),
        );
    }
    // Each node's spec by name, for `when` triggers (what the node can observe).
    let spec_of: BTreeMap<&str, &NodeSpec> = if scenario.faults.iter().any(|f| f.when.is_some()) {
        nodes.iter().map(|n| (n.name.as_str(), &n.spec)).collect()
    } else {
        BTreeMap::new()
    };
    for (i, f) in scenario.faults.iter().enumerate() {
        check_fault_time(c, scenario, roster, &spec_of, (i, f), duration_ok);
        check_fault_action(c, roster, i, f);
        check_fault_partition(c, scenario, roster, i, f);
        check_fault_links(c, roster, i, f);
    }
}

/// When fault `i` applies: `at` a true time before the end, or `when` a node observes a kind
/// it can observe (`spec_of`: the node specs by name), with `after` inside the run.
///
/// Long because `at` and `when` each have several rules, each with its own message.
fn check_fault_time(
    c: &mut Checker<'_>,
    scenario: &Scenario,
    roster: &Roster,
    spec_of: &BTreeMap<&str, &NodeSpec>,
    (i, f): (usize, &FaultSpec),
    duration_ok: bool,
) {
    let duration = scenario.duration.0;
    let p = |field: &str| vec![k("faults"), Seg::Index(i), k(field)];
    let here = vec![k("faults"), Seg::Index(i)];
    match (&f.at, &f.when) {
        (None, None) => c.err(
            here.clone(),
            "a fault needs `at` (a true time) or `when` (a protocol point)",
        ),
        (Some(_), Some(_)) => c.err(p("when"), "give either `at` or `when`, not both"),
        (Some(at), None) => {
            if duration_ok && at.0 >= duration {
                c.err(
                    p("at"),
                    format!(
                        "fault at {} is not before the end of the run ({duration}): it would never apply",
                        at.0
                    ),
                );
            }
            if f.after.is_some() {
                c.err(
                    p("after"),
                    "`after` goes with `when`; with `at`, put the delay into `at`",
                );
            }
        }
        (None, Some(w)) => {
            c.node_ref(roster, [p("when"), vec![k("node")]].concat(), &w.node, &[]);
            if !OBSERVATION_KINDS.contains(&w.observed.as_str()) {
                let hint = did_you_mean(&w.observed, OBSERVATION_KINDS.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                c.err(
                    [p("when"), vec![k("observed")]].concat(),
                    format!(
                        "unknown observation kind `{}`, expected one of {}{hint}",
                        w.observed,
                        ticked(OBSERVATION_KINDS)
                    ),
                );
            } else if let Some(spec) = spec_of.get(w.node.as_str()) {
                // A trigger its node can never observe would never fire: the fault would
                // silently not happen.
                let mine = spec.role().observations();
                if !mine.contains(&w.observed.as_str()) {
                    let role = spec.role_name();
                    let can = if mine.is_empty() {
                        format!("a {role} observes nothing, so no `when` can name it")
                    } else {
                        format!("a {role} observes one of {}", ticked(mine))
                    };
                    c.err(
                        [p("when"), vec![k("observed")]].concat(),
                        format!(
                            "node `{}` never observes `{}`, so this fault would never \
                             happen: {can}",
                            w.node, w.observed
                        ),
                    );
                }
            }
            if w.nth == 0 {
                c.err(
                    [p("when"), vec![k("nth")]].concat(),
                    "nth counts from 1 (the first occurrence)",
                );
            }
            if f.after.is_some_and(|a| a.0 > duration) {
                c.err(p("after"), "`after` is longer than the run");
            }
        }
    }
}

/// Fault `i` has exactly one action, its nodes exist, and its action's parameters (`for`,
/// `by`, `ppm`, `loss`) go with it.
fn check_fault_action(c: &mut Checker<'_>, roster: &Roster, i: usize, f: &FaultSpec) {
    let p = |field: &str| vec![k("faults"), Seg::Index(i), k(field)];
    let here = vec![k("faults"), Seg::Index(i)];
    let actions: Vec<&str> = [
        ("crash", f.crash.is_some()),
        ("restart", f.restart.is_some()),
        ("pause", f.pause.is_some()),
        ("partition", f.partition.is_some()),
        ("block", f.block.is_some()),
        ("cut", f.cut.is_some()),
        ("heal", f.heal.is_some()),
        ("heal_partition", f.heal_partition.is_some()),
        ("clock_step", f.clock_step.is_some()),
        ("drift", f.drift.is_some()),
        ("loss", f.loss.is_some()),
    ]
    .into_iter()
    .filter_map(|(n, set)| set.then_some(n))
    .collect();
    match actions.len() {
        0 => c.err(here.clone(), "a fault needs one action: crash, restart, pause, partition, block, cut, heal, heal_partition, clock_step, drift or loss"),
        1 => {}
        _ => c.err(p(actions[1]), format!("a fault has exactly one action, found {}", actions.join(" and "))),
    }
    for (field, v) in [
        ("crash", &f.crash),
        ("restart", &f.restart),
        ("pause", &f.pause),
        ("clock_step", &f.clock_step),
        ("drift", &f.drift),
    ] {
        if let Some(n) = v {
            c.node_ref(roster, p(field), n, &[]);
        }
    }
    match (&f.pause, f.for_) {
        (Some(_), None) => c.err(p("pause"), "a pause needs `for`, its length (e.g. \"15s\")"),
        (Some(_), Some(d)) => c.positive(p("for"), Some(d), "pause length"),
        (None, Some(_)) => c.err(p("for"), "`for` goes with `pause`"),
        _ => {}
    }
    match (&f.clock_step, f.by) {
        (Some(_), None) => c.err(p("clock_step"), "a clock step needs `by` (e.g. \"+20s\")"),
        (Some(_), Some(by)) if by.0.unsigned_abs() > MAX_DURATION.as_nanos() => {
            c.err(p("by"), "clock step larger than 24 h")
        }
        (None, Some(_)) => c.err(p("by"), "`by` goes with `clock_step`"),
        _ => {}
    }
    match (&f.drift, f.ppm) {
        (Some(_), None) => c.err(p("drift"), "a drift change needs `ppm`"),
        (Some(_), Some(ppm)) if !(MIN_DRIFT_PPM..=MAX_DRIFT_PPM).contains(&ppm) => c.err(
            p("ppm"),
            format!(
                "ppm must be within {MIN_DRIFT_PPM}..={MAX_DRIFT_PPM} (a clock rate of 0.1x to 3x)"
            ),
        ),
        (None, Some(_)) => c.err(p("ppm"), "`ppm` goes with `drift`"),
        _ => {}
    }
    if f.heal == Some(false) {
        c.err(p("heal"), "write `\"heal\": true` (false does nothing)");
    }
    c.probability(p("loss"), f.loss);
}

/// The groups of fault `i`'s `partition` or `heal_partition`, and a heal's partition among the
/// file's faults.
fn check_fault_partition(
    c: &mut Checker<'_>,
    scenario: &Scenario,
    roster: &Roster,
    i: usize,
    f: &FaultSpec,
) {
    let p = |field: &str| vec![k("faults"), Seg::Index(i), k(field)];
    for (field, groups) in [
        ("partition", &f.partition),
        ("heal_partition", &f.heal_partition),
    ] {
        let Some(groups) = groups else { continue };
        if groups.len() < 2 {
            c.err(p(field), "a partition needs at least two groups");
        }
        let mut seen = BTreeMap::new();
        for (g, group) in groups.iter().enumerate() {
            if group.is_empty() {
                c.err(
                    [p(field), vec![Seg::Index(g)]].concat(),
                    "a partition group cannot be empty",
                );
            }
            for (j, n) in group.iter().enumerate() {
                let path = [p(field), vec![Seg::Index(g), Seg::Index(j)]].concat();
                c.node_ref(roster, path.clone(), n, &[]);
                if seen.insert(n.clone(), g).is_some() {
                    c.err(path, format!("node `{n}` is in two groups"));
                }
            }
        }
    }
    if let Some(groups) = &f.heal_partition {
        // The engine removes the partition with exactly these groups (in this order); one
        // that matches no partition of the file would do nothing while narrated as healed.
        if !scenario
            .faults
            .iter()
            .any(|o| o.partition.as_ref() == Some(groups))
        {
            c.err(
                p("heal_partition"),
                "heal_partition must repeat the groups of a `partition` fault of this file, \
                 node for node and in the same order (it heals only that partition; \
                 `\"heal\": true` heals every rule)",
            );
        }
    }
}

/// The sides of fault `i`'s `block` and the links of its `cut`.
fn check_fault_links(c: &mut Checker<'_>, roster: &Roster, i: usize, f: &FaultSpec) {
    let p = |field: &str| vec![k("faults"), Seg::Index(i), k(field)];
    if let Some(b) = &f.block {
        for (side, set) in [("from", &b.from), ("to", &b.to)] {
            let at = |j: usize| match set {
                NodeSet::One(_) => [p("block"), vec![k(side)]].concat(),
                NodeSet::Group(_) => [p("block"), vec![k(side), Seg::Index(j)]].concat(),
            };
            if set.names().is_empty() {
                c.err(
                    [p("block"), vec![k(side)]].concat(),
                    "a block side needs at least one node",
                );
            }
            for (j, n) in set.names().iter().enumerate() {
                c.node_ref(roster, at(j), n, &[]);
            }
        }
        if let Some(n) = b.from.names().iter().find(|n| b.to.names().contains(n)) {
            c.err(
                p("block"),
                format!("a node's link to itself (`{n}`) cannot be blocked"),
            );
        }
    }
    if let Some(links) = &f.cut {
        if links.is_empty() {
            c.err(
                p("cut"),
                "`cut` needs at least one link, e.g. [[\"a\", \"b\"]]",
            );
        }
        for (j, [a, b]) in links.iter().enumerate() {
            if a == b {
                c.err(
                    [p("cut"), vec![Seg::Index(j)]].concat(),
                    format!("a node's link to itself (`{a}`) cannot be cut"),
                );
            }
            c.node_ref(
                roster,
                [p("cut"), vec![Seg::Index(j), Seg::Index(0)]].concat(),
                a,
                &[],
            );
            c.node_ref(
                roster,
                [p("cut"), vec![Seg::Index(j), Seg::Index(1)]].concat(),
                b,
                &[],
            );
        }
    }
}

/// The nemesis's rate, bounds, targets and fault kinds (`nodes`: every node, the default
/// targets).
///
/// Long because each nemesis field has its own rule and message.
fn check_nemesis(c: &mut Checker<'_>, scenario: &Scenario, nodes: &[PlannedNode], roster: &Roster) {
    let duration = scenario.duration.0;
    if let Some(n) = &scenario.nemesis {
        let p = |f: &str| vec![k("nemesis"), k(f)];
        c.positive(p("mean_interval"), Some(n.mean_interval), "mean_interval");
        if n.max_faults.is_some_and(|m| m as usize > MAX_FAULTS) {
            c.err(
                p("max_faults"),
                format!("max_faults must be at most {MAX_FAULTS} (a bound on the drawn schedule)"),
            );
        } else if n.max_faults == Some(0) {
            c.err(
                p("max_faults"),
                "max_faults is 0: the nemesis would draw nothing (remove the nemesis instead)",
            );
        }
        if n.targets.as_ref().is_some_and(Vec::is_empty) {
            c.err(
                p("targets"),
                "targets is empty: the nemesis would draw nothing (omit it to target every node)",
            );
        }
        let start = n.start.map_or(SimDuration::ZERO, |s| s.0);
        let end = n.end.map_or(duration, |e| e.0);
        if start >= end {
            c.err(
                p("start"),
                format!("the nemesis starts at {start}, not before its end ({end}): it would draw nothing"),
            );
        }
        let targets: &[String] = n.targets.as_deref().unwrap_or(&[]);
        for (j, t) in targets.iter().enumerate() {
            let path = [p("targets"), vec![Seg::Index(j)]].concat();
            c.node_ref(roster, path.clone(), t, &[]);
            if targets[..j].contains(t) {
                c.err(path, format!("target `{t}` is listed twice"));
            }
        }
        let distinct = match &n.targets {
            Some(t) => t
                .iter()
                .enumerate()
                .filter(|(j, x)| !t[..*j].contains(x))
                .count(),
            None => nodes.len(),
        };
        if n.partition.is_some() && distinct < 2 {
            c.err(
                p("partition"),
                format!(
                    "a nemesis partition splits its targets into two non-empty sides: it needs at \
                     least two distinct targets, found {distinct}"
                ),
            );
        }
        if n.pause.is_none()
            && n.crash.is_none()
            && n.partition.is_none()
            && n.clock_step.is_none()
            && n.drift_ppm.is_none()
        {
            c.err(
                vec![k("nemesis")],
                "the nemesis needs at least one kind: pause, crash, partition, clock_step or drift_ppm",
            );
        }
        // The nemesis draws a drift in -drift_ppm..=drift_ppm: both ends must stay within the
        // clock model's rates (0.1x to 3x), so the bound is the slow side's.
        if n.drift_ppm.is_some_and(|d| i64::from(d) > -MIN_DRIFT_PPM) {
            c.err(
                p("drift_ppm"),
                format!(
                    "drift_ppm must be at most {} (the nemesis draws a drift in \
                     -drift_ppm..=drift_ppm, and {MIN_DRIFT_PPM} is a clock at 0.1x)",
                    -MIN_DRIFT_PPM
                ),
            );
        }
        for (f, r) in [
            ("pause", &n.pause),
            ("crash", &n.crash),
            ("partition", &n.partition),
        ] {
            if let Some(r) = r {
                if r.min > r.max {
                    c.err(p(f), "min is greater than max");
                }
                c.positive([p(f), vec![k("max")]].concat(), Some(r.max), "max");
            }
        }
    }
}

/// An invariant name in `check`, `expect` or `expect_rate` that is not one.
fn check_invariant_name(c: &mut Checker<'_>, path: Vec<Seg>, name: &str) {
    let known = splitbrain_check::Invariant::NAMES;
    if !known.contains(&name) {
        let hint = did_you_mean(name, known.iter().copied())
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        c.err(
            path,
            format!(
                "unknown invariant `{name}`{hint}; known: {}",
                known.join(", ")
            ),
        );
    }
}

/// The invariants of `check` (each once) and of `expect` (each also in `check`, when it
/// lists any).
fn check_invariants(c: &mut Checker<'_>, scenario: &Scenario) {
    let known = splitbrain_check::Invariant::NAMES;
    for (i, name) in scenario.check.iter().enumerate() {
        check_invariant_name(c, vec![k("check"), Seg::Index(i)], name);
        // Twice was checked and printed twice, and counted twice in `check` DIR's tallies.
        if let Some(j) = scenario.check[..i].iter().position(|n| n == name) {
            c.err(
                vec![k("check"), Seg::Index(i)],
                format!("`{name}` is listed twice (check[{j}] has it): list each invariant once"),
            );
        }
    }
    for name in scenario.expect.keys() {
        check_invariant_name(c, vec![k("expect"), k(name)], name);
        if !scenario.check.is_empty()
            && !scenario.check.contains(name)
            && known.contains(&name.as_str())
        {
            c.err(
                vec![k("expect"), k(name)],
                format!("`{name}` has an expectation but is not in `check`: add it to `check` (or drop the expectation)"),
            );
        }
    }
}

/// `expect_rate`: each invariant's bounds, between 0 and 1 and in order, and `rate_seeds`
/// only beside it.
fn check_rates(c: &mut Checker<'_>, scenario: &Scenario) {
    let known = splitbrain_check::Invariant::NAMES;
    for (name, rate) in &scenario.expect_rate {
        let here = vec![k("expect_rate"), k(name)];
        check_invariant_name(c, here.clone(), name);
        if !known.contains(&name.as_str()) {
            continue;
        }
        if !scenario.check.is_empty() && !scenario.check.contains(name) {
            c.err(
                here.clone(),
                format!("`{name}` has a rate expectation but is not in `check`: add it to `check` (or drop the expectation)"),
            );
        }
        if scenario.expect.contains_key(name) {
            c.err(
                here.clone(),
                format!("`{name}` has both `expect` and `expect_rate`: keep one (a rate judges a sweep, `expect` every run)"),
            );
        }
        for (f, v) in [
            ("violated_at_most", rate.violated_at_most),
            ("violated_at_least", rate.violated_at_least),
        ] {
            if let Some(v) = v {
                if !(0.0..=1.0).contains(&v) {
                    c.err(
                        [here.clone(), vec![k(f)]].concat(),
                        format!(
                            "{f} is a fraction of runs: between 0 and 1 (0.01 is 1%), found {v}"
                        ),
                    );
                }
            }
        }
        match (rate.violated_at_least, rate.violated_at_most) {
            (None, None) => c.err(
                here.clone(),
                "a rate expectation needs `violated_at_most` or `violated_at_least` (or both)",
            ),
            (Some(lo), Some(hi)) if lo > hi => c.err(
                [here.clone(), vec![k("violated_at_least")]].concat(),
                format!("violated_at_least ({lo}) is above violated_at_most ({hi})"),
            ),
            _ => {}
        }
    }
    if let Some(seeds) = &scenario.rate_seeds {
        if scenario.expect_rate.is_empty() {
            c.err(
                vec![k("rate_seeds")],
                "`rate_seeds` goes with `expect_rate` (the seeds `check` sweeps to judge it)",
            );
        }
        if let Err(e) = seeds.parse::<crate::seeds::SeedRange>() {
            c.err(vec![k("rate_seeds")], e);
        }
    }
}

/// A fencing storage behind Redis or Redlock workers rejects every write they send (they
/// carry no fencing token), so the write invariants would "hold" because nothing was ever
/// accepted (no vacuous passes). A located error names the storage, its clients and
/// the fix.
fn fencing_behind_redis(c: &mut Checker, scenario: &Scenario, nodes: &[PlannedNode]) {
    for (key, spec) in &scenario.nodes {
        let NodeSpec::Storage(st) = spec else {
            continue;
        };
        if st.fencing == Some(false) {
            continue;
        }
        let storage_names: Vec<&str> = nodes
            .iter()
            .filter(|n| &n.declared_as == key)
            .map(|n| n.name.as_str())
            .collect();
        let clients: Vec<&str> = nodes
            .iter()
            .filter(|n| match &n.spec {
                NodeSpec::Worker(w) => {
                    matches!(w.lock, LockKind::Redis | LockKind::Redlock)
                        && storage_names.contains(&w.storage.as_str())
                }
                _ => false,
            })
            .map(|n| n.name.as_str())
            .collect();
        if clients.is_empty() {
            continue;
        }
        let who = match clients.as_slice() {
            [one] => format!("worker `{one}` uses"),
            many => format!(
                "workers {} use",
                many.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let path = match st.fencing {
            Some(_) => vec![k("nodes"), k(key), k("fencing")],
            None => vec![k("nodes"), k(key)],
        };
        c.err(
            path,
            format!(
                "storage `{key}` fences (the default), but {who} a Redis-based lock (redis, redlock), which issues no \
                 fencing token: the storage would reject every write and the write invariants \
                 would hold vacuously; set `\"fencing\": false` on `{key}` (or use a lease lock)"
            ),
        );
    }
}

/// A file that names no invariant (neither `check` nor `expect` nor `expect_rate`) checks the
/// ones its roles can apply to (`execute::applicable_invariants`); when none can, it would
/// check nothing and always pass, so it is refused at `nodes`.
fn nothing_to_check(c: &mut Checker, scenario: &Scenario) {
    if !scenario.check.is_empty()
        || !scenario.expect.is_empty()
        || !scenario.expect_rate.is_empty()
        || !crate::applies::applicable_invariants(scenario).is_empty()
    {
        return;
    }
    let mut roles: Vec<&str> = Vec::new();
    for spec in scenario.nodes.values() {
        if !roles.contains(&spec.role_name()) {
            roles.push(spec.role_name());
        }
    }
    c.err(
        vec![k("nodes")],
        format!(
            "nothing to check: no invariant applies to these roles ({}); every invariant needs a \
             node that claims leadership (bully, lease_leader, lease_candidate, raft) or a lock \
             client (worker)",
            roles.join(", ")
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::MAX_NODES;
    use crate::error::{Problem, ScenarioError};
    use crate::validate::load_str;

    /// The problems of a scenario with these node declarations (`"name": {node}`).
    fn problems(nodes: &[String]) -> Vec<Problem> {
        let src = format!(
            "{{\"splitbrain\": 1, \"name\": \"many\", \"duration\": \"1s\", \"nodes\": {{\n{}\n}}}}",
            nodes.join(",\n")
        );
        match load_str("many.json", &src) {
            Err(ScenarioError::Invalid { problems, .. }) => problems,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Names past the node limit get one "too many nodes" error, not one per node (each
    /// located by a scan of the file: quadratic). 40,000 names, four times the limit.
    #[test]
    fn nodes_past_the_limit_are_one_error() {
        let nodes: Vec<String> = (0..4 * MAX_NODES)
            .map(|i| format!("\"s{i}\": {{\"role\": \"storage\"}}"))
            .collect();
        let p = problems(&nodes);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, format!("nodes.s{MAX_NODES}"));
        assert_eq!(p[0].line, MAX_NODES + 2);
        assert_eq!(
            p[0].message,
            format!("too many nodes: the limit is {MAX_NODES}")
        );
    }

    /// A file of millions of faults (190 MB) is not read whole into memory (the process would
    /// abort): the reader stops at the first fault past the limit, and text after it is never
    /// parsed (here, a syntax error a whole-file reader would report).
    #[test]
    fn faults_past_the_limit_stop_the_reading() {
        use super::MAX_FAULTS;
        let fault = "{\"at\": \"1s\", \"crash\": \"s0\"}";
        let mut faults = vec![fault; MAX_FAULTS + 2];
        faults.push("{\"at\": }");
        let src = format!(
            "{{\"splitbrain\": 1, \"name\": \"many\", \"duration\": \"2s\",\n\
             \"nodes\": {{\"s0\": {{\"role\": \"bully\"}}}},\n\"faults\": [\n{}\n]}}",
            faults.join(",\n")
        );
        let p = match load_str("many.json", &src) {
            Err(ScenarioError::Invalid { problems, .. }) => problems,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, format!("faults[{MAX_FAULTS}]"));
        assert_eq!((p[0].line, p[0].column), (MAX_FAULTS + 4, 1));
        assert_eq!(
            p[0].message,
            format!("too many faults: the limit is {MAX_FAULTS}")
        );
        // The limit itself is read (and validated).
        let at_limit = src.replacen(&format!(",\n{fault},\n{fault},\n{{\"at\": }}"), "", 1);
        assert!(load_str("many.json", &at_limit).is_ok());
    }

    /// The same for nodes: the map is read up to the first key past the limit, no further.
    #[test]
    fn nodes_past_the_limit_stop_the_reading() {
        let mut nodes: Vec<String> = (0..MAX_NODES + 2)
            .map(|i| format!("\"s{i}\": {{\"role\": \"storage\"}}"))
            .collect();
        nodes.push("\"bad\": {\"role\": }".to_string());
        let p = problems(&nodes);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, format!("nodes.s{MAX_NODES}"));
        assert_eq!((p[0].line, p[0].column), (MAX_NODES + 2, 11));
        assert_eq!(
            p[0].message,
            format!("too many nodes: the limit is {MAX_NODES}")
        );
    }

    /// Names that repeat earlier ones still count toward the limit, so a file cannot make
    /// validation expand (and report) without bound by repeating a group's names.
    #[test]
    fn repeated_names_count_toward_the_limit() {
        let mut nodes = vec![format!(
            "\"r\": {{\"role\": \"redis\", \"count\": {MAX_NODES}}}"
        )];
        nodes.extend((1..=5_000).map(|i| format!("\"r{i}\": {{\"role\": \"storage\"}}")));
        let p = problems(&nodes);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].path, "nodes.r1");
        assert_eq!(
            p[0].message,
            format!("too many nodes: the limit is {MAX_NODES}")
        );
    }
}
