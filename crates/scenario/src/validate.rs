//! Semantic validation: references, ranges, limits. Collects every problem, each located.

use crate::error::{did_you_mean, Problem};
use crate::locate::{locate, render, Seg};
use crate::plan::{count_of, role_name, Plan, PlannedNode};
use crate::schema::{DelaySpec, LockKind, NodeSpec, Scenario, WorkerSpec};
use splitbrain_engine::{NodeId, SimDuration};
use splitbrain_protocols::OBSERVATION_KINDS;
use std::collections::BTreeMap;

/// Most nodes in one scenario.
pub const MAX_NODES: usize = 1_000;
/// Most faults listed in one scenario.
pub const MAX_FAULTS: usize = 10_000;
/// Longest run: 24 h of simulated time.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(24 * 3600);
/// Largest first fencing token: 2^53, far below overflow whatever a bounded run grants.
pub const MAX_FIRST_TOKEN: u64 = 1 << 53;
/// Largest drift accepted, ppm (either way).
pub const MAX_DRIFT_PPM: i64 = 500_000;

struct Checker<'a> {
    src: &'a str,
    problems: Vec<Problem>,
}

fn k(s: &str) -> Seg {
    Seg::Key(s.to_string())
}

impl Checker<'_> {
    fn err(&mut self, path: Vec<Seg>, message: impl Into<String>) {
        let (line, column) = locate(self.src, &path);
        self.problems.push(Problem {
            line,
            column,
            path: render(&path),
            message: message.into(),
        });
    }

    fn node_ref(
        &mut self,
        names: &BTreeMap<String, (NodeId, &'static str)>,
        path: Vec<Seg>,
        name: &str,
        roles: &[&str],
    ) {
        match names.get(name) {
            None => {
                let hint = did_you_mean(name, names.keys().map(String::as_str))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                self.err(path, format!("unknown node `{name}`{hint}"));
            }
            Some((_, role)) if !roles.is_empty() && !roles.contains(role) => {
                self.err(
                    path,
                    format!(
                        "node `{name}` is a {role}, expected a {}",
                        roles.join(" or ")
                    ),
                );
            }
            _ => {}
        }
    }

    fn probability(&mut self, path: Vec<Seg>, p: Option<f64>) {
        if let Some(p) = p {
            if !(0.0..=1.0).contains(&p) || p.is_nan() {
                self.err(
                    path,
                    format!("probability must be between 0 and 1, found {p}"),
                );
            }
        }
    }

    fn positive(&mut self, path: Vec<Seg>, d: Option<crate::duration::Dur>, what: &str) {
        if let Some(d) = d {
            if d.0 == SimDuration::ZERO {
                self.err(path, format!("{what} must be greater than zero"));
            } else if d.0 > MAX_DURATION {
                self.err(
                    path,
                    format!(
                        "{what} of {} is longer than the 24 h limit",
                        crate::duration::format_ns(d.0.as_nanos())
                    ),
                );
            }
        }
    }

    fn delay(&mut self, path: Vec<Seg>, d: &DelaySpec) {
        match d {
            DelaySpec::Uniform([lo, hi]) if lo > hi => self.err(
                path,
                format!("uniform delay bounds are reversed: {} > {}", lo.0, hi.0),
            ),
            DelaySpec::Lognormal { sigma, .. } if !(*sigma >= 0.0 && sigma.is_finite()) => self
                .err(
                    path,
                    format!("lognormal sigma must be a finite number >= 0, found {sigma}"),
                ),
            _ => {}
        }
    }
}

/// Validates a parsed scenario against its source text (for locations).
pub fn validate(scenario: Scenario, src: &str) -> Result<Plan, Vec<Problem>> {
    let mut c = Checker {
        src,
        problems: Vec::new(),
    };
    if scenario.splitbrain != 1 {
        c.err(
            vec![k("splitbrain")],
            format!(
                "unsupported format version {}: this splitbrain reads version 1",
                scenario.splitbrain
            ),
        );
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

    // Expand nodes.
    let mut nodes = Vec::new();
    let mut names: BTreeMap<String, (NodeId, &'static str)> = BTreeMap::new();
    for (key, spec) in &scenario.nodes {
        let path = vec![k("nodes"), k(key)];
        if key.is_empty() {
            c.err(path.clone(), "node names cannot be empty");
        } else if !key
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.'))
        {
            c.err(
                path.clone(),
                format!("node name {key:?} may use only letters, digits, '-', '_' and '.' (it appears in narrations and charts)"),
            );
        }
        let count = count_of(spec);
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
            if names.contains_key(&name) {
                c.err(path.clone(), format!("node name `{name}` is used twice"));
                continue;
            }
            if nodes.len() >= MAX_NODES {
                c.err(
                    path.clone(),
                    format!("too many nodes: the limit is {MAX_NODES}"),
                );
                break;
            }
            names.insert(name.clone(), (NodeId(nodes.len() as u32), role_name(spec)));
            nodes.push(PlannedNode {
                name,
                declared_as: key.clone(),
                spec: spec.clone(),
            });
        }
    }
    if nodes.is_empty() && c.problems.is_empty() {
        c.err(vec![k("nodes")], "a scenario needs at least one node");
    }
    if !c.problems.is_empty() {
        // Without a sound node list every reference check would only echo the problem.
        c.problems.sort_by_key(|p| (p.line, p.column));
        return Err(c.problems);
    }
    let duration_ok = duration > SimDuration::ZERO && duration <= MAX_DURATION;

    // Per-node parameters and references.
    for (key, spec) in &scenario.nodes {
        let p = |f: &str| vec![k("nodes"), k(key), k(f)];
        let clock = match spec {
            NodeSpec::Bully(s) => {
                for (f, d) in [
                    ("answer_timeout", s.answer_timeout),
                    ("coordinator_timeout", s.coordinator_timeout),
                    ("heartbeat_every", s.heartbeat_every),
                    ("failure_timeout", s.failure_timeout),
                ] {
                    c.positive(p(f), d, f);
                }
                &s.clock
            }
            NodeSpec::LeaseService(s) => {
                if s.first_token.is_some_and(|t| t > MAX_FIRST_TOKEN) {
                    c.err(
                        p("first_token"),
                        format!("first_token must be at most {MAX_FIRST_TOKEN}, so tokens cannot overflow"),
                    );
                }
                &s.clock
            }
            NodeSpec::LeaseLeader(s) => {
                c.node_ref(&names, p("service"), &s.service, &["lease_service"]);
                if let Some(w) = &s.write_to {
                    c.node_ref(&names, p("write_to"), w, &["storage"]);
                }
                for (f, d) in [
                    ("ttl", s.ttl),
                    ("renew_every", s.renew_every),
                    ("retry_every", s.retry_every),
                    ("write_every", s.write_every),
                ] {
                    c.positive(p(f), d, f);
                }
                &s.clock
            }
            NodeSpec::Redis(s) => &s.clock,
            NodeSpec::Storage(s) => &s.clock,
            NodeSpec::Worker(w) => {
                validate_worker(&mut c, &names, key, w);
                &w.clock
            }
        };
        if clock.drift_ppm.abs() > MAX_DRIFT_PPM {
            c.err(
                [p("clock"), vec![k("drift_ppm")]].concat(),
                format!(
                    "drift_ppm must be within ±{MAX_DRIFT_PPM}, found {}",
                    clock.drift_ppm
                ),
            );
        }
    }

    // Network.
    let net = &scenario.network;
    if let Some(d) = &net.delay {
        c.delay(vec![k("network"), k("delay")], d);
    }
    c.probability(vec![k("network"), k("loss")], net.loss);
    c.probability(vec![k("network"), k("duplicate")], net.duplicate);
    if let Some(s) = &net.spike {
        c.probability(
            vec![k("network"), k("spike"), k("probability")],
            Some(s.probability),
        );
        c.delay(vec![k("network"), k("spike"), k("delay")], &s.delay);
    }
    for (i, l) in net.links.iter().enumerate() {
        let p = |f: &str| vec![k("network"), k("links"), Seg::Index(i), k(f)];
        c.node_ref(&names, p("from"), &l.from, &[]);
        c.node_ref(&names, p("to"), &l.to, &[]);
        c.probability(p("loss"), l.loss);
        if let Some(d) = &l.delay {
            c.delay(p("delay"), d);
        }
    }

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
    for (i, f) in scenario.faults.iter().enumerate() {
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
                c.node_ref(&names, [p("when"), vec![k("node")]].concat(), &w.node, &[]);
                if !OBSERVATION_KINDS.contains(&w.observed.as_str()) {
                    let hint = did_you_mean(&w.observed, OBSERVATION_KINDS.iter().copied())
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    c.err(
                        [p("when"), vec![k("observed")]].concat(),
                        format!("unknown observation kind `{}`{hint}", w.observed),
                    );
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
        let actions: Vec<&str> = [
            ("crash", f.crash.is_some()),
            ("restart", f.restart.is_some()),
            ("pause", f.pause.is_some()),
            ("partition", f.partition.is_some()),
            ("block", f.block.is_some()),
            ("cut", f.cut.is_some()),
            ("heal", f.heal.is_some()),
            ("clock_step", f.clock_step.is_some()),
            ("drift", f.drift.is_some()),
            ("loss", f.loss.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, set)| set.then_some(n))
        .collect();
        match actions.len() {
            0 => c.err(here.clone(), "a fault needs one action: crash, restart, pause, partition, block, cut, heal, clock_step, drift or loss"),
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
                c.node_ref(&names, p(field), n, &[]);
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
            (Some(_), Some(ppm)) if ppm.abs() > MAX_DRIFT_PPM => {
                c.err(p("ppm"), format!("ppm must be within ±{MAX_DRIFT_PPM}"))
            }
            (None, Some(_)) => c.err(p("ppm"), "`ppm` goes with `drift`"),
            _ => {}
        }
        if f.heal == Some(false) {
            c.err(p("heal"), "write `\"heal\": true` (false does nothing)");
        }
        c.probability(p("loss"), f.loss);
        if let Some(groups) = &f.partition {
            if groups.len() < 2 {
                c.err(p("partition"), "a partition needs at least two groups");
            }
            let mut seen = BTreeMap::new();
            for (g, group) in groups.iter().enumerate() {
                if group.is_empty() {
                    c.err(
                        [p("partition"), vec![Seg::Index(g)]].concat(),
                        "a partition group cannot be empty",
                    );
                }
                for (j, n) in group.iter().enumerate() {
                    let path = [p("partition"), vec![Seg::Index(g), Seg::Index(j)]].concat();
                    c.node_ref(&names, path.clone(), n, &[]);
                    if seen.insert(n.clone(), g).is_some() {
                        c.err(path, format!("node `{n}` is in two groups"));
                    }
                }
            }
        }
        if let Some(b) = &f.block {
            c.node_ref(&names, [p("block"), vec![k("from")]].concat(), &b.from, &[]);
            c.node_ref(&names, [p("block"), vec![k("to")]].concat(), &b.to, &[]);
            if b.from == b.to {
                c.err(
                    p("block"),
                    format!("a node's link to itself (`{}`) cannot be blocked", b.from),
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
                    &names,
                    [p("cut"), vec![Seg::Index(j), Seg::Index(0)]].concat(),
                    a,
                    &[],
                );
                c.node_ref(
                    &names,
                    [p("cut"), vec![Seg::Index(j), Seg::Index(1)]].concat(),
                    b,
                    &[],
                );
            }
        }
    }

    if let Some(n) = &scenario.nemesis {
        let p = |f: &str| vec![k("nemesis"), k(f)];
        c.positive(p("mean_interval"), Some(n.mean_interval), "mean_interval");
        if n.max_faults.is_some_and(|m| m as usize > MAX_FAULTS) {
            c.err(
                p("max_faults"),
                format!("max_faults must be at most {MAX_FAULTS} (a bound on the drawn schedule)"),
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
        for (j, t) in n.targets.iter().flatten().enumerate() {
            c.node_ref(&names, [p("targets"), vec![Seg::Index(j)]].concat(), t, &[]);
        }
        if n.pause.is_none() && n.crash.is_none() && n.partition.is_none() && n.clock_step.is_none()
        {
            c.err(
                vec![k("nemesis")],
                "the nemesis needs at least one kind: pause, crash, partition or clock_step",
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

    // Invariants and expectations.
    let known: Vec<&str> = splitbrain_check::Invariant::NAMES.to_vec();
    let check_inv = |c: &mut Checker, path: Vec<Seg>, name: &str| {
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
    };
    for (i, name) in scenario.check.iter().enumerate() {
        check_inv(&mut c, vec![k("check"), Seg::Index(i)], name);
    }
    for name in scenario.expect.keys() {
        check_inv(&mut c, vec![k("expect"), k(name)], name);
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

    if c.problems.is_empty() {
        let ids = names.into_iter().map(|(n, (id, _))| (n, id)).collect();
        Ok(Plan {
            scenario,
            nodes,
            ids,
        })
    } else {
        c.problems.sort_by_key(|p| (p.line, p.column));
        Err(c.problems)
    }
}

/// Lock-specific worker fields: (name, whether the file sets it).
type FieldsSet = [(&'static str, bool)];

fn validate_worker(
    c: &mut Checker,
    names: &BTreeMap<String, (NodeId, &'static str)>,
    key: &str,
    w: &WorkerSpec,
) {
    let p = |f: &str| vec![k("nodes"), k(key), k(f)];
    c.node_ref(names, p("storage"), &w.storage, &["storage"]);
    for (f, d) in [
        ("ttl", w.ttl),
        ("work_time", w.work_time),
        ("renew_every", w.renew_every),
        ("request_timeout", w.request_timeout),
        ("extend_every", w.extend_every),
    ] {
        c.positive(p(f), d, f);
    }
    if w.rounds == Some(0) {
        c.err(
            p("rounds"),
            "rounds must be at least 1 (leave it out to run forever)",
        );
    }
    let lease_only = [
        ("service", w.service.is_some()),
        ("renew_every", w.renew_every.is_some()),
        ("safety_margin", w.safety_margin.is_some()),
        ("stop_on_renew_failure", w.stop_on_renew_failure.is_some()),
    ];
    let redis_only = [
        ("instance", w.instance.is_some()),
        ("release", w.release.is_some()),
    ];
    let redlock_only = [
        ("instances", w.instances.is_some()),
        ("retry_count", w.retry_count.is_some()),
        ("retry_delay_max", w.retry_delay_max.is_some()),
        ("clock_drift_factor", w.clock_drift_factor.is_some()),
        ("mode", w.mode.is_some()),
        ("validity_check", w.validity_check.is_some()),
        ("start_time", w.start_time.is_some()),
        ("quorum", w.quorum.is_some()),
        ("extend_every", w.extend_every.is_some()),
    ];
    let (own, others): (&str, Vec<(&str, &FieldsSet)>) = match w.lock {
        LockKind::Lease => (
            "lease",
            vec![("redis", &redis_only), ("redlock", &redlock_only)],
        ),
        LockKind::Redis => (
            "redis",
            vec![("lease", &lease_only), ("redlock", &redlock_only)],
        ),
        LockKind::Redlock => (
            "redlock",
            vec![("lease", &lease_only), ("redis", &redis_only)],
        ),
    };
    for (kind, fields) in others {
        for (f, set) in fields {
            if *set {
                c.err(
                    p(f),
                    format!(
                        "`{f}` applies to lock \"{kind}\", but this worker uses lock \"{own}\""
                    ),
                );
            }
        }
    }
    match w.lock {
        LockKind::Lease => match &w.service {
            Some(s) => c.node_ref(names, p("service"), s, &["lease_service"]),
            None => c.err(
                vec![k("nodes"), k(key)],
                "a lease worker needs `service`, the lease service node",
            ),
        },
        LockKind::Redis => match &w.instance {
            Some(s) => c.node_ref(names, p("instance"), s, &["redis"]),
            None => c.err(
                vec![k("nodes"), k(key)],
                "a redis worker needs `instance`, the Redis node",
            ),
        },
        LockKind::Redlock => match &w.instances {
            Some(list) if !list.is_empty() => {
                for (j, s) in list.iter().enumerate() {
                    if list[..j].contains(s) {
                        c.err(
                            [p("instances"), vec![Seg::Index(j)]].concat(),
                            format!("instance `{s}` is listed twice"),
                        );
                    }
                    c.node_ref(
                        names,
                        [p("instances"), vec![Seg::Index(j)]].concat(),
                        s,
                        &["redis"],
                    );
                }
                if let Some(q) = w.quorum {
                    if q == 0 || q as usize > list.len() {
                        c.err(
                            p("quorum"),
                            format!(
                                "quorum must be between 1 and the number of instances ({})",
                                list.len()
                            ),
                        );
                    }
                }
            }
            _ => c.err(
                vec![k("nodes"), k(key)],
                "a redlock worker needs `instances`, a non-empty list of Redis nodes",
            ),
        },
    }
    if let Some(f) = w.clock_drift_factor {
        if !(0.0..1.0).contains(&f) {
            c.err(
                p("clock_drift_factor"),
                format!("clock_drift_factor must be in [0, 1), found {f}"),
            );
        }
    }
}
