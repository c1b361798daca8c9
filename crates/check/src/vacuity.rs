//! Vacuous passes: an invariant that "holds" because its premise never occurred (no write
//! accepted, no leader claimed, no lock acquired) shows nothing. [`vacuous`] names the missing
//! premise so reports can say `holds (vacuous: ...)` and `check` can refuse such a pass.

use crate::invariants::progress::unproven_progress;
use crate::run::RunRecord;
use crate::spec::Invariant;
use splitbrain_protocols::Obs;

/// Why a `holds` verdict on `invariant` is vacuous for `record`, in words, or `None` if the
/// premise occurred. Premises: leader invariants need a `LeaderClaim`; `exclusive_holders`
/// a `LockAcquired` (so does `validity_within_truth`); the write invariants a `WriteAccepted` (`fencing_monotonic` one with a
/// token, `exactly_once_effects` one with a job id); `lock_progress` a `LockRequested` (a
/// client that asked) and a `LockAcquired` or `LockRenewed` (progress shown: without one it
/// held only because clients waited no longer than the window while a majority of lock
/// servers was up, or no majority-up stretch was longer than the window). `eventual_leader` cannot hold without a leader, so it is never vacuous.
pub fn vacuous(record: &RunRecord, invariant: &Invariant) -> Option<String> {
    let any = |pred: &dyn Fn(&Obs) -> bool| record.observations.iter().any(|o| pred(&o.obs));
    let (happened, missing) = match invariant {
        Invariant::SingleLeader
        | Invariant::SingleLeaderPerTerm
        | Invariant::LeaderAvailable { .. } => (
            any(&|o| matches!(o, Obs::LeaderClaim { .. })),
            "no node ever claimed leadership",
        ),
        Invariant::EventualLeader { .. } => (true, ""),
        Invariant::ExclusiveHolders | Invariant::ValidityWithinTruth => (
            any(&|o| matches!(o, Obs::LockAcquired { .. })),
            "no client ever acquired a lock",
        ),
        Invariant::HolderWritesOnly | Invariant::NoTwoAcceptedWriters => (
            any(&|o| matches!(o, Obs::WriteAccepted { .. })),
            "the storage accepted no write",
        ),
        Invariant::FencingMonotonic => (
            any(&|o| matches!(o, Obs::WriteAccepted { token: Some(_), .. })),
            "the storage accepted no write carrying a fencing token",
        ),
        Invariant::LockProgress { window } => {
            if !any(&|o| matches!(o, Obs::LockRequested { .. })) {
                return Some("no client ever asked for a lock".to_string());
            }
            // Progress is shown by acquisitions only: a run without one shows nothing, and it
            // held only because clients waited no longer than the window while a majority of
            // lock servers was up (or no majority-up stretch was longer than the window).
            if any(&|o| matches!(o, Obs::LockAcquired { .. } | Obs::LockRenewed { .. })) {
                return None;
            }
            return Some(
                unproven_progress(record, *window)
                    .unwrap_or_else(|| "no lock was acquired".to_string()),
            );
        }
        Invariant::StateMachineSafety => (
            any(&|o| matches!(o, Obs::RaftApplied { .. })),
            "no Raft replica applied a log entry",
        ),
        Invariant::ExactlyOnceEffects => (
            any(&|o| matches!(o, Obs::WriteAccepted { job: Some(_), .. })),
            "the storage accepted no write carrying a job id",
        ),
    };
    (!happened).then(|| missing.to_string())
}

#[cfg(test)]
mod tests {
    use super::vacuous;
    use crate::spec::Invariant;
    use crate::testkit::*;
    use splitbrain_engine::NodeId;
    use splitbrain_protocols::Obs;

    fn accepted(token: Option<u64>, job: Option<u64>) -> Obs {
        Obs::WriteAccepted {
            writer: NodeId(1),
            req: 0,
            token,
            job,
            applied: true,
        }
    }

    /// Nothing accepted, nothing claimed, nothing acquired are vacuous;
    /// a write without a job id leaves `exactly_once_effects` vacuous.
    #[test]
    fn missing_premises_are_named() {
        let empty = Builder::new(&[("storage", Storage), ("client-1", Worker)])
            .end(ms(1_000))
            .build();
        let all = Invariant::all();
        let got: Vec<Option<String>> = all.iter().map(|i| vacuous(&empty, i)).collect();
        assert_eq!(
            got,
            vec![
                Some("no node ever claimed leadership".to_string()),
                None,
                Some("no client ever acquired a lock".to_string()),
                Some("the storage accepted no write".to_string()),
                Some("the storage accepted no write".to_string()),
                Some("the storage accepted no write carrying a fencing token".to_string()),
                Some("no client ever asked for a lock".to_string()),
                Some("the storage accepted no write carrying a job id".to_string()),
                Some("no client ever acquired a lock".to_string()),
                Some("no node ever claimed leadership".to_string()),
                Some("no Raft replica applied a log entry".to_string()),
                Some("no node ever claimed leadership".to_string()),
            ]
        );
        let written = Builder::new(&[("storage", Storage), ("client-1", Worker)])
            .obs(ms(10), 0, accepted(None, None))
            .end(ms(1_000))
            .build();
        assert_eq!(vacuous(&written, &Invariant::NoTwoAcceptedWriters), None);
        assert!(vacuous(&written, &Invariant::FencingMonotonic).is_some());
        assert!(vacuous(&written, &Invariant::ExactlyOnceEffects).is_some());
        let jobs = Builder::new(&[("storage", Storage), ("client-1", Worker)])
            .obs(ms(10), 0, accepted(Some(3), Some(1)))
            .end(ms(1_000))
            .build();
        assert_eq!(vacuous(&jobs, &Invariant::ExactlyOnceEffects), None);
        assert_eq!(vacuous(&jobs, &Invariant::FencingMonotonic), None);
    }

    /// Lesson 08 with its only Redis instance crashed at 1 ns acquires no lock, and
    /// `lock_progress` holds only because the definition excuses time without a lock server
    /// majority: without an acquisition the pass is vacuous, and says why.
    #[test]
    fn lock_progress_without_any_acquisition_is_vacuous() {
        let requested = Obs::LockRequested {
            thread: None,
            lock: "lock".to_string(),
            servers: vec![],
        };
        let progress = Invariant::LockProgress {
            window: splitbrain_engine::SimDuration::from_secs(10),
        };
        let run = |crash_at| {
            Builder::new(&[("redis", RedisInstance), ("client-1", Worker)])
                .fault(crash_at, crash(0))
                .obs(ms(5), 1, requested.clone())
                .end(ms(60_000))
                .build()
        };
        assert_eq!(
            vacuous(&run(splitbrain_engine::SimTime(1)), &progress).as_deref(),
            Some(
                "a majority (1 of 1) of lock servers was up for at most 0.000000001 s at a \
                 stretch, no longer than the window (10.000 s): too short to show a stall"
            )
        );
        assert_eq!(
            vacuous(&run(ms(0)), &progress).as_deref(),
            Some("a majority (1 of 1) of lock servers was never up: no progress was owed")
        );
        // Up all along, a client that asks late and waits 5 s: held, but showed nothing.
        let late = Builder::new(&[("redis", RedisInstance), ("client-1", Worker)])
            .obs(ms(55_000), 1, requested.clone())
            .end(ms(60_000))
            .build();
        assert_eq!(
            vacuous(&late, &progress).as_deref(),
            Some(
                "no lock was acquired, and no client waited longer than the window \
                 (10.000 s) while a majority (1 of 1) of lock servers was up"
            )
        );
        let acquired = Builder::new(&[("redis", RedisInstance), ("client-1", Worker)])
            .obs(ms(5), 1, requested.clone())
            .obs(
                ms(6),
                1,
                Obs::LockAcquired {
                    thread: None,
                    lock: "lock".to_string(),
                    token: None,
                    value: String::new(),
                    valid_until_local: splitbrain_engine::LocalTime(0),
                },
            )
            .end(ms(60_000))
            .build();
        assert_eq!(vacuous(&acquired, &progress), None);
    }
}
