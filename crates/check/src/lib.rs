//! splitbrain's checkers: invariants and metrics over a finished run, judging the actors'
//! observations against true time.
//!
//! Clients report beliefs ("I am leader", "I hold the lock"); servers report the truth (the
//! lease service's grants, the Redis instances' keys, the storage's accepted writes). A
//! checker reconstructs both over true time from a [`RunRecord`] and returns a [`Verdict`]:
//! `Holds`, `Violated` with each violation as data (true-time window, nodes, evidence,
//! contributing faults in words), or `Inconclusive` where the run cannot decide.
//!
//! - [`run`]: the input, [`RunRecord`], and node [`Role`]s.
//! - [`invariant`]: what an invariant is ([`InvariantDef`], [`Invariant`]); [`spec`]: the table
//!   of them (names are part of the scenario format) and [`CheckSpec`].
//! - [`invariants`]: one `pub fn` per invariant.
//! - [`metrics`](mod@metrics): counters and durations ([`Metrics`]).
//! - [`ObsNeeds`]: the observations a run that is only checked keeps; [`KeyLog`]: the Redis
//!   key reports it keeps compactly beside them.
//! - [`compare`]: what one run of a lock design shows, for `splitbrain compare`.
//! - [`evidence`]: [`Evidence`], the facts that prove a violation.
//! - [`verdict`]: [`Verdict`], [`Violation`]; [`report`]: [`CheckReport`].
//! - Server truth over true time, shared with the charts: [`WallClocks`] (each node's clocks
//!   rebuilt from the record), `Truth` (who truly holds a lock when: [`Hold`]s and the
//!   per-instance Redis [`KeyHold`]s they are made of), [`key_expired`] (the expiry rule).
//!
//! **Architecture Invariant**: checkers are pure functions of the record; no I/O, no clocks,
//! no hash-ordered collections.

pub mod causes;
mod clocks;
pub mod compare;
pub mod evidence;
pub mod invariant;
pub mod invariants;
mod key_log;
pub mod metrics;
mod needs;
pub mod report;
pub mod run;
mod sent;
pub mod spec;
mod timeline;
mod truth;
pub mod vacuity;
pub mod verdict;

#[cfg(test)]
mod testkit;

pub use clocks::{key_expired, ClockPiece, WallClocks};
pub use evidence::{Evidence, Source};
pub use invariant::{Applies, Invariant, InvariantDef, ParamDef, Premise};
pub use invariants::availability::{leader_available, DEFAULT_MAX_GAP};
pub use invariants::leader::{eventual_leader, single_leader, single_leader_per_term};
pub use invariants::locks::{exclusive_holders, holder_writes_only, validity_within_truth};
pub use invariants::progress::lock_progress;
pub use invariants::raft::state_machine_safety;
pub use invariants::writes::{exactly_once_effects, fencing_monotonic, no_two_accepted_writers};
pub use key_log::KeyLog;
pub use metrics::{metrics, ElectionAfterCrash, MessageCounts, Metrics};
pub use needs::ObsNeeds;
pub use report::{CheckReport, InvariantResult};
pub use run::{Role, RunRecord};
pub use spec::{invariant_defs, CheckSpec, DEFAULT_SETTLE, DEFAULT_WINDOW, INVARIANTS};
pub use truth::{Fact, Hold, HoldSource, KeyHold, Truth};
pub use verdict::{fmt_secs, fmt_window, Outcome, Verdict, Violation};

/// Judges one invariant, with what it derives from the record shared with the other
/// invariants of the same check; each violation's times are written in one format
/// ([`Violation::with_uniform_times`]).
fn check_in(shared: &invariants::Shared, invariant: &Invariant) -> Verdict {
    match judge(shared, invariant) {
        Verdict::Violated(v) => {
            Verdict::Violated(v.into_iter().map(Violation::with_uniform_times).collect())
        }
        other => other,
    }
}

/// [`check_in`] before the violations' times are made uniform: the invariant's own judge.
fn judge(shared: &invariants::Shared, invariant: &Invariant) -> Verdict {
    (invariant.def().judge)(shared, invariant)
}

/// Judges every invariant of `spec` (canonical order, each name once) and computes the run's
/// metrics.
pub fn check(record: &RunRecord, spec: &CheckSpec) -> CheckReport {
    check_with(record, spec, true)
}

/// [`check`] for a caller that reads only each verdict's outcome, its violations' windows
/// and nodes, vacuity and the metrics (a sweep): the violations of `holder_writes_only`,
/// `exclusive_holders` and `no_two_accepted_writers` carry no words (empty summary, evidence
/// and faults) and no violation's times are made uniform, so
/// the words a sweep never prints, and the truth with every hold's facts they cite, are not
/// made. Outcomes, windows, nodes, vacuity and metrics are those of [`check`].
pub fn check_outcomes(record: &RunRecord, spec: &CheckSpec) -> CheckReport {
    check_with(record, spec, false)
}

/// [`check`], putting violations in words if `words`.
fn check_with(record: &RunRecord, spec: &CheckSpec, words: bool) -> CheckReport {
    let invariants = spec.in_report_order();
    let reads_holds = invariants.iter().any(|i| i.def().reads_holds);
    let mut shared = invariants::Shared::reading_holds(record, reads_holds);
    shared.words = words;
    let results = invariants
        .into_iter()
        .map(|invariant| {
            let verdict = if words {
                check_in(&shared, &invariant)
            } else {
                judge(&shared, &invariant)
            };
            let vacuous = match verdict {
                Verdict::Holds => vacuity::vacuous(record, &invariant),
                _ => None,
            };
            InvariantResult {
                name: invariant.name(),
                verdict,
                vacuous,
                invariant,
            }
        })
        .collect();
    // The one metric read from the truth is taken while it is at hand (its spans made now if
    // no invariant needed them); then the truth is freed before the other metrics.
    let no_valid_hold = metrics::no_valid_hold_ns(record, || {
        metrics::uncovered_by_holds(record, shared.spans().map(|(from, to, _, _)| (from, to)))
    });
    drop(shared);
    CheckReport {
        results,
        metrics: metrics::metrics_with(record, no_valid_hold),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use splitbrain_protocols::Obs;

    #[test]
    fn report_lists_requested_invariants_in_canonical_order_and_serializes() {
        let r = Builder::new(&[("n1", Bully), ("n2", Bully)])
            .obs(ms(100), 0, Obs::LeaderClaim { term: 1 })
            .obs(ms(200), 1, Obs::LeaderClaim { term: 1 })
            .obs(ms(300), 1, Obs::LeaderStepDown { term: 1 })
            .obs(ms(301), 1, Obs::LeaderKnown { leader: id(0) })
            .end(ms(10_000))
            .build();
        let spec: CheckSpec =
            serde_json::from_str(r#"["fencing_monotonic", "eventual_leader", "single_leader"]"#)
                .unwrap();
        let report = check(&r, &spec);
        let names: Vec<&str> = report.results.iter().map(|x| x.name).collect();
        assert_eq!(
            names,
            vec!["single_leader", "eventual_leader", "fencing_monotonic"]
        );
        assert_eq!(
            report.verdict("single_leader").unwrap().outcome(),
            Outcome::Violated
        );
        assert_eq!(report.verdict("eventual_leader"), Some(&Verdict::Holds));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["results"][1]["verdict"], "holds");
        assert_eq!(
            json["results"][1]["invariant"]["eventual_leader"]["settle"],
            5_000_000_000u64
        );
        let v = &json["results"][0]["verdict"]["violated"][0];
        assert_eq!(v["from"], 200_000_000u64);
        assert_eq!(v["to"], 300_000_000u64);
        assert_eq!(v["evidence"][0]["source"]["observation"], 0);
        assert_eq!(json["metrics"]["first_leader_ns"], 100_000_000u64);
        assert_eq!(
            report.results[0].verdict.violations()[0].to_string(),
            [
                "single_leader violated 0.200 s \u{2013} 0.300 s: n1 and n2 both claim leadership",
                "       0.100 s  n1: claims leadership (term 1)",
                "       0.200 s  n2: claims leadership (term 1)",
                "       0.300 s  n2: steps down (term 1)",
                "",
            ]
            .join("\n")
        );
    }
}
