//! Worker loop and fenced storage, pinned exactly (1 ms fixed delays, no drift): rounds,
//! idempotent jobs, giving up at a failed validity check, crash and restart.

use splitbrain_engine::{ClockConfig, Fault, NodeId, Sim, SimDuration, SimTime, Trigger};
use splitbrain_protocols::lease::{LeaseClientConfig, LeaseService, ServiceConfig};
use splitbrain_protocols::lock::LockConfig;
use splitbrain_protocols::storage::{FencedStorage, StorageConfig};
use splitbrain_protocols::worker::{Phase, Worker, WorkerConfig};
use splitbrain_protocols::{Node, Obs};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

fn render(sim: &Sim<Node>, filter: impl Fn(&Obs) -> bool) -> Vec<String> {
    sim.observations()
        .iter()
        .filter(|o| filter(&o.obs))
        .map(|o| {
            format!(
                "{} {} {}",
                o.t,
                sim.names()[o.node.index()],
                serde_json::to_string(&o.obs).expect("serialisable")
            )
        })
        .collect()
}

fn is_write(o: &Obs) -> bool {
    matches!(
        o,
        Obs::WriteSent { .. } | Obs::WriteAccepted { .. } | Obs::WriteRejected { .. }
    )
}

struct Setup {
    sim: Sim<Node>,
    storage: NodeId,
    workers: Vec<NodeId>,
}

/// Service (first token 1), storage (fenced), and one worker per `start_after` entry, each
/// configured further by `tweak`.
fn setup(starts_ms: &[u64], tweak: impl Fn(&mut WorkerConfig)) -> Setup {
    let mut sim = Sim::<Node>::new(3);
    let clock = ClockConfig::default();
    let locks = sim.add_node(
        "locks",
        Node::LeaseService(LeaseService::new(ServiceConfig::default())),
        clock,
    );
    let storage = sim.add_node(
        "storage",
        Node::Storage(FencedStorage::new(StorageConfig::default())),
        clock,
    );
    let workers = starts_ms
        .iter()
        .enumerate()
        .map(|(i, &start)| {
            let mut cfg = WorkerConfig::new(
                LockConfig::Lease(LeaseClientConfig::new(locks, "job-lock")),
                storage,
            );
            cfg.start_after = SimDuration::from_millis(start);
            tweak(&mut cfg);
            sim.add_node(
                &format!("worker-{}", i + 1),
                Node::Worker(Worker::new(cfg)),
                clock,
            )
        })
        .collect();
    Setup {
        sim,
        storage,
        workers,
    }
}

fn worker(s: &Setup, i: usize) -> &Worker {
    match s.sim.actor(s.workers[i]) {
        Node::Worker(w) => w,
        _ => unreachable!(),
    }
}

/// Two idempotent workers, two rounds each, no faults. They alternate; each works through
/// jobs 1, 2 and the second write of each job is accepted without effect.
#[test]
fn idempotent_jobs_are_applied_once() {
    let mut s = setup(&[0, 1_000], |c| {
        c.rounds = Some(2);
        c.idempotent = true;
    });
    s.sim.run_until(ms(30_000)).expect("bounded run");
    assert_eq!(
        render(&s.sim, |o| matches!(
            o,
            Obs::WriteAccepted { .. } | Obs::WriteRejected { .. }
        )),
        [
            r#"2.004 s storage {"obs":"write_accepted","writer":2,"req":1,"token":1,"job":1,"applied":true}"#,
            r#"5.008 s storage {"obs":"write_accepted","writer":3,"req":1,"token":2,"job":1,"applied":false}"#,
            r#"8.013 s storage {"obs":"write_accepted","writer":3,"req":2,"token":3,"job":2,"applied":true}"#,
            r#"10.019 s storage {"obs":"write_accepted","writer":2,"req":2,"token":4,"job":2,"applied":false}"#,
        ]
    );
    let Node::Storage(st) = s.sim.actor(s.storage) else {
        unreachable!()
    };
    assert_eq!(
        st.applied_jobs().iter().copied().collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(st.highest(), Some(4));
    for i in 0..2 {
        assert_eq!(worker(&s, i).phase(), Phase::Done);
        assert_eq!(worker(&s, i).rounds_done(), 2);
    }
}

/// The same run without idempotency: every write is a new effect, tokens only grow.
#[test]
fn plain_workers_alternate_with_increasing_tokens() {
    let mut s = setup(&[0, 1_000], |c| c.rounds = Some(2));
    s.sim.run_until(ms(30_000)).expect("bounded run");
    let accepted: Vec<(Option<u64>, NodeId, bool)> = s
        .sim
        .observations()
        .iter()
        .filter_map(|o| match o.obs {
            Obs::WriteAccepted {
                writer,
                token,
                job: None,
                applied,
                ..
            } => Some((token, writer, applied)),
            Obs::WriteRejected { .. } => panic!("no write is stale without faults"),
            _ => None,
        })
        .collect();
    let (w1, w2) = (s.workers[0], s.workers[1]);
    assert_eq!(
        accepted,
        [
            (Some(1), w1, true),
            (Some(2), w2, true),
            (Some(3), w2, true),
            (Some(4), w1, true),
        ]
    );
}

/// A pause of 12 s right after acquiring (work timer due 2.002, deadline 10.000): on resume
/// at 12.002 the work timer runs first and the check finds the deadline 2.002 s behind. The
/// worker gives up the round: no write; the client still believed (its deadline timer is queued
/// behind), so giving up releases (`LockReleased`). The service had freed the grant at 10.001.
#[test]
fn a_failed_validity_check_gives_up_the_round() {
    let mut s = setup(&[0], |c| c.rounds = Some(1));
    let w = s.workers[0];
    s.sim.add_trigger(Trigger {
        node: w,
        kind: "lock_acquired".to_string(),
        nth: 1,
        delay: SimDuration::ZERO,
        fault: Fault::Pause {
            node: w,
            duration: SimDuration::from_secs(12),
        },
    });
    s.sim.run_until(ms(20_000)).expect("bounded run");
    assert_eq!(
        render(&s.sim, |_| true),
        [
            r#"0.000 s worker-1 {"obs":"lock_requested","lock":"job-lock","servers":[0]}"#,
            r#"0.001 s locks {"obs":"lease_granted","lease":"job-lock","holder":2,"token":1,"ttl_ns":10000000000}"#,
            r#"0.002 s worker-1 {"obs":"lock_acquired","lock":"job-lock","token":1,"value":"1","valid_until_local":10000000000}"#,
            r#"10.001 s locks {"obs":"lease_freed","lease":"job-lock","holder":2,"token":1,"expired":true}"#,
            r#"12.002 s worker-1 {"obs":"validity_checked","lock":"job-lock","valid":false,"remaining_ns":-2002000000}"#,
            r#"12.002 s worker-1 {"obs":"lock_released","lock":"job-lock"}"#,
        ]
    );
    assert_eq!(worker(&s, 0).phase(), Phase::Done);
}

/// A worker that crashes while holding restarts its loop from scratch: it asks again at once
/// (3.000). The service keys holders by node and still holds its grant (token 1, live until
/// 10.001), so the repeated acquire replaces that grant with a new one, token 2: writes from
/// the crashed incarnation (token 1) are stale from now on. The worker redoes job 1 (its job
/// counter is volatile; the storage's idempotency absorbs any repeat).
#[test]
fn a_crashed_worker_starts_over() {
    let mut s = setup(&[0], |c| {
        c.rounds = Some(1);
        c.idempotent = true;
    });
    let w = s.workers[0];
    s.sim.schedule_fault(ms(1_000), Fault::Crash { node: w });
    s.sim.schedule_fault(ms(3_000), Fault::Restart { node: w });
    s.sim.run_until(ms(20_000)).expect("bounded run");
    assert_eq!(
        render(&s.sim, |o| matches!(
            o,
            Obs::LeaseGranted { .. }
                | Obs::LeaseRenewed { .. }
                | Obs::LeaseFreed { .. }
                | Obs::LockAcquired { .. }
        ) || is_write(o)),
        [
            r#"0.001 s locks {"obs":"lease_granted","lease":"job-lock","holder":2,"token":1,"ttl_ns":10000000000}"#,
            r#"0.002 s worker-1 {"obs":"lock_acquired","lock":"job-lock","token":1,"value":"1","valid_until_local":10000000000}"#,
            r#"3.001 s locks {"obs":"lease_freed","lease":"job-lock","holder":2,"token":1,"expired":false}"#,
            r#"3.001 s locks {"obs":"lease_granted","lease":"job-lock","holder":2,"token":2,"ttl_ns":10000000000}"#,
            r#"3.002 s worker-1 {"obs":"lock_acquired","lock":"job-lock","token":2,"value":"2","valid_until_local":13000000000}"#,
            r#"5.003 s worker-1 {"obs":"write_sent","req":1,"token":2,"job":1}"#,
            r#"5.004 s storage {"obs":"write_accepted","writer":2,"req":1,"token":2,"job":1,"applied":true}"#,
            r#"5.006 s locks {"obs":"lease_freed","lease":"job-lock","holder":2,"token":2,"expired":false}"#,
        ]
    );
    assert_eq!(worker(&s, 0).rounds_done(), 1);
}
