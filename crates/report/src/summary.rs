//! The text and JSON summaries of one run: scenario, seed, the invariant table with windows,
//! nodes and contributing faults, metrics, and the command that reproduces the run.

use serde::Serialize;
use splitbrain_check::{MessageCounts, Metrics, Outcome, Violation};
use splitbrain_engine::SimTime;
use splitbrain_lab::vary::Setting;
use splitbrain_scenario::{ExpectationResult, RunResult};
use std::fmt::Write;

fn got_text(e: &ExpectationResult) -> String {
    match (e.got, &e.vacuous) {
        (Outcome::Holds, Some(why)) => format!("holds (vacuous: {why})"),
        (Outcome::Holds, None) => "holds".to_string(),
        (Outcome::Violated, _) => "VIOLATED".to_string(),
        (Outcome::Inconclusive, _) => "inconclusive".to_string(),
    }
}

/// `"1 fault"`, `"2 faults"`.
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Faults that changed nothing, in words: a crash of a node already down, a restart or pause
/// of a node that was up or down respectively, a pause of a node already paused past its end,
/// a heal with nothing to heal, a network rule already in force, a wall clock step of 0 s, a
/// drift or loss change to the drift or loss in force. Usually a mistake in the scenario's timing. The
/// effects are the engine's, as it recorded them (`RunRecord::fault_effects`); the checkers
/// leave these faults out of a violation's causes.
pub fn fault_notes(record: &splitbrain_check::RunRecord) -> Vec<String> {
    use splitbrain_engine::{Fault, NetRule};
    let mut notes = Vec::new();
    for ((t, f), effect) in record.faults.iter().zip(&record.fault_effects) {
        let Some(state) = effect.idle else { continue };
        let (node, what) = match f {
            Fault::Crash { node } => (*node, "crash"),
            Fault::Restart { node } => (*node, "restart"),
            Fault::Pause { node, .. } => (*node, "pause"),
            Fault::Heal | Fault::HealPartition { .. } => {
                notes.push(format!("the heal at {t} had no effect: there was {state}"));
                continue;
            }
            Fault::ClockStep { node, .. } => (*node, "wall clock step"),
            Fault::SetDrift { node, .. } => (*node, "drift change"),
            Fault::Network { rule } => {
                let what = match rule {
                    NetRule::Partition { .. } => "partition",
                    NetRule::Block { .. } => "one-way block",
                    NetRule::Cut { .. } => "link cut",
                };
                notes.push(format!("the {what} at {t} had no effect: it was {state}"));
                continue;
            }
            Fault::SetLoss { .. } => {
                notes.push(format!(
                    "the loss change at {t} had no effect: every link was {state}"
                ));
                continue;
            }
        };
        notes.push(format!(
            "the {what} of {} at {t} had no effect: it was {state}",
            record.name(node)
        ));
    }
    notes
}

/// `"3 faults applied"`, or `"3 faults applied (1 had no effect)"` when some changed nothing
/// ([`fault_notes`] says which and why): a pause of a node that is down is applied, but is no
/// pause.
pub fn faults_applied(record: &splitbrain_check::RunRecord) -> String {
    let n = record.faults.len();
    let idle = record
        .fault_effects
        .iter()
        .filter(|e| e.idle.is_some())
        .count();
    let applied = format!("{} applied", plural(n, "fault"));
    if idle == 0 {
        applied
    } else {
        format!("{applied} ({idle} had no effect)")
    }
}

/// A metric's time or duration, ns, in the summary's one style: seconds with 3 decimals
/// (`27.995 s`), rounded half up as verdicts write their times.
fn secs(ns: u64) -> String {
    splitbrain_check::fmt_secs(SimTime(ns), 3)
}

/// The line that tells a run with a nemesis that it is one seed, and how to sweep the file
/// (the command runs as printed).
pub fn nemesis_line(file: &str) -> String {
    format!(
        "sweep     one run is one seed of the nemesis's random faults; its rate over 1000: \
         splitbrain sweep {} --seeds 0..1000 --out results.jsonl",
        splitbrain_scenario::error::shell_word(file)
    )
}

/// The command that reproduces a run, the file's path quoted for a POSIX shell when it needs
/// to be (`splitbrain run 'my scen'\''s.json' --seed 12`).
pub fn reproduce_command(file: &str, seed: u64) -> String {
    format!(
        "splitbrain run {} --seed {seed}",
        splitbrain_scenario::error::shell_word(file)
    )
}

/// The command that reproduces a run of `file` edited by `settings` (`run --set`, a varied
/// sweep's combination): [`reproduce_command`] followed by one `--set PATH=VALUE` per
/// setting, each its own shell word, so the line runs as printed.
pub fn reproduce_command_with(file: &str, settings: &[Setting], seed: u64) -> String {
    let mut cmd = reproduce_command(file, seed);
    for s in settings {
        let _ = write!(cmd, " --set {s}");
    }
    cmd
}

/// The settings of a run as the summary's `set` line shows them: `--set PATH=VALUE` each,
/// quoted for a POSIX shell where needed.
fn settings_text(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| format!("--set {s}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn violation_text(out: &mut String, v: &Violation) {
    let window = v.window();
    let _ = writeln!(out, "    {window}  [{}]  {}", v.nodes.join(", "), v.summary);
    for f in &v.faults {
        let _ = writeln!(out, "      because: {f}");
    }
    let d = v.time_decimals();
    for e in v.evidence.iter().take(8) {
        let t = splitbrain_check::fmt_secs(e.t, d);
        let _ = writeln!(out, "      {t:>12}  {}: {}", e.node, e.text);
    }
    if v.evidence.len() > 8 {
        let _ = writeln!(out, "      ... {} more", v.evidence.len() - 8);
    }
}

/// Metrics as indented lines.
pub fn metrics_text(m: &Metrics) -> String {
    let mut out = String::new();
    if !m.messages.is_empty() {
        // Duplicated copies and messages in flight at the end get a column only when some
        // are, so that sent (+ duplicated) = delivered + dropped (+ in flight) on every row.
        let dup = m.messages.values().any(|c| c.duplicated > 0);
        let flying = m.messages.values().any(|c| c.in_flight > 0);
        // (header, narrowest width, count).
        type Column = (&'static str, usize, fn(&MessageCounts) -> u64);
        let mut cols: Vec<Column> = vec![
            ("sent", 6, |c| c.sent),
            ("delivered", 9, |c| c.delivered),
            ("dropped", 7, |c| c.dropped),
        ];
        if dup {
            cols.push(("duplicated", 10, |c| c.duplicated));
        }
        if flying {
            cols.push(("in flight", 9, |c| c.in_flight));
        }
        // A column is as wide as its largest number (3000 nodes send millions).
        let widths: Vec<usize> = cols
            .iter()
            .map(|(_, w, f)| {
                let widest = m.messages.values().map(|c| f(c).to_string().len()).max();
                (*w).max(widest.unwrap_or(0))
            })
            .collect();
        // The kind column is as wide as its longest name (RAFT_LEASE_NOT_FOUND is 20).
        let kw = m
            .messages
            .keys()
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(0)
            .max(14);
        let mut line = format!("  {:<w$}", "messages", w = kw + 2);
        for ((name, _, _), w) in cols.iter().zip(&widths) {
            let _ = write!(line, "{name:>w$}  ");
        }
        let _ = writeln!(out, "{}", line.trim_end());
        for (k, c) in &m.messages {
            let mut line = format!("    {k:<kw$}");
            for ((_, _, f), w) in cols.iter().zip(&widths) {
                let _ = write!(line, "{:>w$}  ", f(c));
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    if m.elections_started > 0 || m.first_leader_ns.is_some() {
        let _ = writeln!(
            out,
            "  elections started {}, leader changes {}",
            m.elections_started, m.leader_changes
        );
        if let Some(t) = m.first_leader_ns {
            let _ = writeln!(out, "  first leader at {}", secs(t));
        }
        for e in &m.elections_after_leader_crash {
            match (&e.new_leader, e.took_ns) {
                (Some(l), Some(_)) if e.elected_at_ns.is_some_and(|a| a < e.crashed_at_ns) => {
                    let _ = writeln!(
                        out,
                        "  leader {} crashed at {}: {l} already led (claimed at {})",
                        e.leader,
                        secs(e.crashed_at_ns),
                        secs(e.elected_at_ns.unwrap_or(0))
                    );
                }
                (Some(l), Some(d)) => {
                    let _ = writeln!(
                        out,
                        "  leader {} crashed at {}: {l} took over after {}",
                        e.leader,
                        secs(e.crashed_at_ns),
                        secs(d)
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "  leader {} crashed at {}: no new leader",
                        e.leader,
                        secs(e.crashed_at_ns)
                    );
                }
            }
        }
    }
    if m.acquisitions > 0 || m.failed_attempts > 0 || m.writes_accepted > 0 || m.writes_rejected > 0
    {
        let _ = writeln!(
            out,
            "  acquisitions {}, failed attempts {}, writes accepted {}, rejected {}",
            m.acquisitions, m.failed_attempts, m.writes_accepted, m.writes_rejected
        );
    }
    if let Some(ns) = m.no_leader_ns {
        let _ = writeln!(out, "  time with no leader {}", secs(ns));
    }
    if let Some(ns) = m.no_valid_hold_ns {
        let _ = writeln!(out, "  time with no valid hold {}", secs(ns));
    }
    if let Some(ns) = m.no_believed_holder_ns {
        let _ = writeln!(out, "  time no client believed it held a lock {}", secs(ns));
    }
    out
}

/// The human summary of a run of `file` edited by `settings` (`run --set`; none for the
/// file as it is): the `scenario` line names the file alone, a `set` line lists the settings,
/// and the `reproduce` line repeats both as separate shell words.
pub fn summary_text(
    r: &RunResult,
    file: &str,
    settings: &[Setting],
    lesson: Option<&str>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "scenario  {} ({file})", r.name);
    if !settings.is_empty() {
        let _ = writeln!(out, "set       {}", settings_text(settings));
    }
    if let Some(l) = lesson {
        let _ = writeln!(out, "lesson    {}", terminal_text(l));
    }
    let _ = writeln!(out, "seed      {}", r.seed);
    let _ = writeln!(
        out,
        "run       {} simulated, {} nodes, {}, {} events processed",
        r.record.end,
        r.record.names.len(),
        faults_applied(&r.record),
        r.stats.events
    );
    if let Some(b) = &r.bound {
        let _ = writeln!(out, "STOPPED   {b}");
    }
    let _ = writeln!(out);
    // The got column is as wide as its longest text plus two spaces (at least 14), so a long
    // `holds (vacuous: ...)` never runs into the mark.
    let got_width = r
        .expectations
        .iter()
        .map(|e| got_text(e).chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(14);
    let _ = writeln!(
        out,
        "  {:<26}{:<10}{:<got_width$}",
        "invariant", "expected", "got"
    );
    for (res, e) in r.report.results.iter().zip(&r.expectations) {
        let mark = if e.matches { "ok" } else { "MISMATCH" };
        let got = got_text(e);
        let _ = writeln!(
            out,
            "  {:<26}{:<10}{got:<got_width$}{mark}",
            res.name,
            e.expected_text(),
        );
        if let splitbrain_check::Verdict::Inconclusive { reason } = &res.verdict {
            let _ = writeln!(out, "    {reason}");
        }
        for v in res.verdict.violations().iter().take(3) {
            violation_text(&mut out, v);
        }
        let n = res.verdict.violations().len();
        if n > 3 {
            let _ = writeln!(out, "    ... {} more violation windows", n - 3);
        }
    }
    let _ = writeln!(out);
    let mut notes = fault_notes(&r.record);
    notes.extend(r.untriggered.iter().cloned());
    if !notes.is_empty() {
        for n in &notes {
            let _ = writeln!(out, "note      {n}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "metrics");
    out.push_str(&metrics_text(&r.report.metrics));
    let _ = writeln!(out);
    // `RunResult::matches` decides, as it decides `--json`'s `as_expected` and the exit
    // status; a bound is named, since every row may be `ok` (violations seen before it).
    let verdict = if r.matches() {
        "as expected"
    } else if r.bound.is_some() {
        "NOT as expected: the run stopped at a bound before its duration"
    } else {
        "NOT as expected"
    };
    let _ = writeln!(out, "outcome   {verdict}");
    let _ = writeln!(
        out,
        "reproduce {}",
        reproduce_command_with(file, settings, r.seed)
    );
    out
}

/// The machine-readable summary (`run --json`).
#[derive(Serialize)]
pub struct JsonSummary<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// Scenario file.
    pub file: &'a str,
    /// The `--set` settings the run applied to the file (`PATH=VALUE`, as given), in order.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub settings: Vec<String>,
    /// Run seed.
    pub seed: u64,
    /// Simulated end, ns.
    pub end_ns: u64,
    /// Events processed.
    pub events: u64,
    /// Trace content hash, if recorded (hex).
    pub trace_hash: Option<String>,
    /// Whether every expectation held and no bound was hit.
    pub as_expected: bool,
    /// The bound that stopped the run, if any.
    pub stopped: Option<String>,
    /// Expected vs got per invariant.
    pub expectations: &'a [splitbrain_scenario::ExpectationResult],
    /// The file's `when` faults that never applied, in words.
    pub untriggered: &'a [String],
    /// Faults applied (the text summary's "N faults applied"), each engine fault once.
    pub faults_applied: usize,
    /// Of them, those that changed nothing ([`fault_notes`] says which and why).
    pub faults_without_effect: usize,
    /// Full verdicts.
    pub results: &'a [splitbrain_check::InvariantResult],
    /// Metrics.
    pub metrics: &'a Metrics,
    /// The command that reproduces the run.
    pub reproduce: String,
}

/// The JSON summary of a run.
pub fn summary_json(r: &RunResult, file: &str, settings: &[Setting]) -> String {
    let s = JsonSummary {
        scenario: &r.name,
        file,
        settings: settings
            .iter()
            .map(|s| format!("{}={}", s.path, s.value))
            .collect(),
        seed: r.seed,
        end_ns: r.record.end.as_nanos(),
        events: r.stats.events,
        trace_hash: r.trace.as_ref().map(|t| format!("{:016x}", t.hash)),
        as_expected: r.matches(),
        stopped: r.bound.as_ref().map(|b| b.to_string()),
        expectations: &r.expectations,
        untriggered: &r.untriggered,
        faults_applied: r.record.faults.len(),
        faults_without_effect: (r.record.fault_effects.iter())
            .filter(|e| e.idle.is_some())
            .count(),
        results: &r.report.results,
        metrics: &r.report.metrics,
        reproduce: reproduce_command_with(file, settings, r.seed),
    };
    serde_json::to_string_pretty(&s).expect("summary serialises")
}

/// Unicode's explicit bidirectional formatting characters (UAX #9, "Explicit Directional
/// Embeddings/Overrides/Isolates" and the marks): text from a file must not reorder what a
/// terminal or a page shows around it.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Scenario text as one terminal line that shows it as written: a line break as a space, and
/// every other control character (an ESC that would start a terminal escape sequence, C1) or
/// bidirectional control as its `\u{..}` escape.
pub fn terminal_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() || is_bidi_control(c) => {
                out.push_str(&c.escape_unicode().to_string());
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_check::{Role, RunRecord};

    /// Every metric's time in one style, seconds with 3 decimals: not "27.995 s" beside
    /// "11.874227144 s".
    #[test]
    fn metric_times_are_in_one_style() {
        let mut m = splitbrain_check::metrics(&no_nodes());
        m.no_leader_ns = Some(11_874_227_144);
        m.no_valid_hold_ns = Some(27_995_000_000);
        m.first_leader_ns = Some(1_500_000);
        let text = metrics_text(&m);
        assert!(text.contains("time with no leader 11.874 s\n"), "{text}");
        assert!(
            text.contains("time with no valid hold 27.995 s\n"),
            "{text}"
        );
        assert!(text.contains("first leader at 0.002 s\n"), "{text}");
    }

    /// A run with a nemesis says it is one seed and how to sweep, as a command that runs.
    #[test]
    fn the_nemesis_line_says_how_to_sweep() {
        assert_eq!(
            nemesis_line("my file.json"),
            "sweep     one run is one seed of the nemesis's random faults; its rate over \
             1000: splitbrain sweep 'my file.json' --seeds 0..1000 --out results.jsonl"
        );
    }
    use splitbrain_engine::{ClockConfig, Fault, NodeId, SimDuration};

    /// A 1 ns run of no nodes: metrics with nothing in them, for tests of the table's layout.
    fn no_nodes() -> RunRecord {
        RunRecord {
            names: vec![],
            roles: vec![],
            clocks: vec![],
            observations: Default::default(),
            faults: vec![],
            fault_effects: vec![],
            end: SimTime(1),
            messages: Default::default(),
            redis_keys: Default::default(),
            fault_positions: Vec::new(),
            elections: Vec::new(),
        }
    }

    #[test]
    fn faults_that_change_nothing_are_noted() {
        let s = |x: u64| SimTime(x * 1_000_000_000);
        let (a, b) = (NodeId(0), NodeId(1));
        let mut record = RunRecord {
            names: vec!["a".into(), "b".into()],
            roles: vec![Role::Bully, Role::Bully],
            clocks: vec![ClockConfig::default(); 2],
            observations: Default::default(),
            faults: vec![
                (s(1), Fault::Restart { node: a }),
                (s(2), Fault::Crash { node: b }),
                (s(3), Fault::Crash { node: b }),
                (
                    s(4),
                    Fault::Pause {
                        node: b,
                        duration: SimDuration::from_secs(1),
                    },
                ),
                (s(5), Fault::Restart { node: b }),
                (
                    s(6),
                    Fault::Pause {
                        node: b,
                        duration: SimDuration::from_secs(1),
                    },
                ),
                (
                    s(6),
                    Fault::Pause {
                        node: b,
                        duration: SimDuration::from_millis(500),
                    },
                ),
                (s(7), Fault::Heal),
            ],
            end: s(10),
            messages: Default::default(),
            redis_keys: Default::default(),
            fault_positions: Vec::new(),
            elections: Vec::new(),
            fault_effects: Vec::new(),
        };
        record.fault_effects = splitbrain_engine::FaultLedger::replay(
            splitbrain_engine::FaultStart::default(),
            &record.faults,
        );
        assert_eq!(
            fault_notes(&record),
            vec![
                "the restart of a at 1.000 s had no effect: it was up",
                "the crash of b at 3.000 s had no effect: it was already down",
                "the pause of b at 4.000 s had no effect: it was down",
                "the pause of b at 6.000 s had no effect: it was already paused",
                "the heal at 7.000 s had no effect: there was nothing to heal",
            ]
        );
    }

    /// A kind name longer than 14 characters (RAFT_LEASE_NOT_FOUND) keeps its row's counts in
    /// line with the header and the other rows.
    #[test]
    fn a_long_message_kind_keeps_the_columns_aligned() {
        let mut m = splitbrain_check::metrics(&no_nodes());
        let c = |n| MessageCounts {
            sent: n,
            delivered: n,
            dropped: 0,
            duplicated: 0,
            in_flight: 0,
        };
        m.messages.insert("ACQUIRE".into(), c(12));
        m.messages.insert("RAFT_LEASE_NOT_FOUND".into(), c(3));
        let text = metrics_text(&m);
        let lines: Vec<&str> = text.lines().take(3).collect();
        // Every row's last column ends where the header's does.
        let ends: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{text}");
        let col = |l: &str| l.find(" 0").unwrap();
        assert_eq!(col(lines[1]), col(lines[2]), "{text}");
    }

    /// With messages still in flight at the end the table's counts add up (3000-node bully:
    /// ANSWER 4498500 sent, 498501 delivered, 0 dropped, the rest in flight), and numbers
    /// wider than a column keep the rest in line.
    #[test]
    fn messages_in_flight_get_a_column_and_wide_counts_stay_aligned() {
        use splitbrain_engine::KindCounts;
        let mut m = splitbrain_check::metrics(&no_nodes());
        let counts = |sent, delivered, dropped, duplicated| {
            let c = KindCounts {
                sent,
                delivered,
                dropped,
                duplicated,
            };
            MessageCounts {
                sent: c.sent,
                delivered: c.delivered,
                dropped: c.dropped,
                duplicated: c.duplicated,
                in_flight: c.sent + c.duplicated - c.delivered - c.dropped,
            }
        };
        m.messages
            .insert("ANSWER".into(), counts(4_498_500, 498_501, 0, 0));
        m.messages.insert("ELECTION".into(), counts(20, 16, 4, 0));
        assert_eq!(
            metrics_text(&m),
            "  messages           sent  delivered  dropped  in flight\n\
             \x20   ANSWER        4498500     498501        0    3999999\n\
             \x20   ELECTION           20         16        4          0\n"
        );
        // Nothing in flight, no duplicates: the table as it always was.
        m.messages.remove("ANSWER");
        assert_eq!(
            metrics_text(&m),
            "  messages          sent  delivered  dropped\n\
             \x20   ELECTION          20         16        4\n"
        );
    }
}
