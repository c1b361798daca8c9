//! Vacuous passes: an invariant that "holds" because its premise never occurred (no write
//! accepted, no leader claimed, no lock acquired) shows nothing. [`vacuous`] names the missing
//! premise so reports can say `holds (vacuous: ...)` and `check` can refuse such a pass.

use crate::invariant::Invariant;
use crate::run::RunRecord;

/// Why a `holds` verdict on `invariant` is vacuous for `record`, in words, or `None` if the
/// premise occurred: each invariant's [`Premise`](crate::invariant::Premise), in its table entry.
pub fn vacuous(record: &RunRecord, invariant: &Invariant) -> Option<String> {
    invariant.vacuous(record)
}

#[cfg(test)]
mod tests {
    use super::vacuous;
    use crate::invariant::Invariant;
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
        assert_eq!(
            vacuous(&written, &Invariant::named("no_two_accepted_writers")),
            None
        );
        assert!(vacuous(&written, &Invariant::named("fencing_monotonic")).is_some());
        assert!(vacuous(&written, &Invariant::named("exactly_once_effects")).is_some());
        let jobs = Builder::new(&[("storage", Storage), ("client-1", Worker)])
            .obs(ms(10), 0, accepted(Some(3), Some(1)))
            .end(ms(1_000))
            .build();
        assert_eq!(
            vacuous(&jobs, &Invariant::named("exactly_once_effects")),
            None
        );
        assert_eq!(vacuous(&jobs, &Invariant::named("fencing_monotonic")), None);
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
        let progress = Invariant::named("lock_progress")
            .with_param("window", splitbrain_engine::SimDuration::from_secs(10));
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
