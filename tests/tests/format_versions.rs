//! Each lesson's trace hash under each format version (`docs/format-changelog.md`): a format 1
//! lesson (`tests/format/v1/`, the lessons as format 1 wrote them) runs with format 1's
//! meaning, the lesson library (`scenarios/`, format 2) with format 2's, and `migrate` keeps a
//! file's meaning: a migrated format 1 lesson runs to its format 1 hash, and migrating a
//! format 2 lesson changes nothing.
//!
//! Where a lesson's two hashes differ, format 2 changed what it runs on purpose: the bully
//! lessons 01-03 follow the textbook's rules (leaders learnt from COORDINATOR only, an ANSWER
//! at the timer's instant in time; lesson 03 turns heartbeats back on by name), the
//! `lease_candidate` lessons 19-20 client-go's renewal loop (a step-down `retry_period +
//! renew_deadline` after the last renewal, a renewal at once after acquiring).

use splitbrain_engine::Recorder;
use splitbrain_scenario::migrate::migrate_str;
use splitbrain_scenario::{execute, load_file, load_str};
use std::path::{Path, PathBuf};

/// (lesson file stem, format version, seed, trace hash). Version 1: `tests/format/v1/STEM.json`;
/// version 2: `scenarios/STEM.json`.
const PINNED: &[(&str, u32, u64, u64)] = &[
    ("01-bully-leader-crash", 1, 1, 0x504dd5d3cf9c2e96),
    ("01-bully-leader-crash", 2, 1, 0x6a564dab84b9a33f),
    ("01b-bully-literal-storm", 1, 1, 0xc13820adc6e55c37),
    ("01b-bully-literal-storm", 2, 1, 0x22260409ac083da5),
    ("02-bully-worst-case", 1, 1, 0xf5009e06bdca2963),
    ("02-bully-worst-case", 2, 1, 0x36de3cabd6d675ac),
    ("03-bully-partition-split-brain", 1, 3, 0xf23308924d762b51),
    ("03-bully-partition-split-brain", 2, 3, 0xfc376de55fcb94dc),
    ("04-lease-leader-failover", 1, 1, 0x69bd6ad022f4dfc2),
    ("04-lease-leader-failover", 2, 1, 0x69bd6ad022f4dfc2),
    ("05-lease-gc-pause-unfenced", 1, 7, 0xc221f6aebfc7509d),
    ("05-lease-gc-pause-unfenced", 2, 7, 0xc221f6aebfc7509d),
    ("06-lease-gc-pause-fenced", 1, 7, 0xbdfb8c25eb0ef6ff),
    ("06-lease-gc-pause-fenced", 2, 7, 0xbdfb8c25eb0ef6ff),
    ("07a-lease-renewal-ignored", 1, 1, 0x40cb631e7afc52ac),
    ("07a-lease-renewal-ignored", 2, 1, 0x40cb631e7afc52ac),
    ("07b-lease-renewal-respected", 1, 1, 0x406cf303a3abcf85),
    ("07b-lease-renewal-respected", 2, 1, 0x406cf303a3abcf85),
    ("08-redis-lock-contention", 1, 8, 0x0d4e241c46171958),
    ("08-redis-lock-contention", 2, 8, 0x0d4e241c46171958),
    ("09-redis-lock-plain-del", 1, 9, 0xe2834375f00fabfd),
    ("09-redis-lock-plain-del", 2, 9, 0xe2834375f00fabfd),
    ("10-redis-restart-no-persistence", 1, 10, 0x63575f8247823f76),
    ("10-redis-restart-no-persistence", 2, 10, 0x63575f8247823f76),
    ("11-redlock-one-instance-down", 1, 11, 0xbb26ff725b91ec8f),
    ("11-redlock-one-instance-down", 2, 11, 0xbb26ff725b91ec8f),
    ("12-redlock-gc-pause", 1, 12, 0x4a8dcdba9821c1d7),
    ("12-redlock-gc-pause", 2, 12, 0x4a8dcdba9821c1d7),
    ("13-redlock-clock-step", 1, 13, 0x9c4551dbdde5a992),
    ("13-redlock-clock-step", 2, 13, 0x9c4551dbdde5a992),
    ("14a-redlock-restart-empty", 1, 14, 0xbc5fb6a2b626b021),
    ("14a-redlock-restart-empty", 2, 14, 0xbc5fb6a2b626b021),
    ("14b-redlock-delayed-restart", 1, 14, 0x86cb3e7341d77682),
    ("14b-redlock-delayed-restart", 2, 14, 0x86cb3e7341d77682),
    ("15-redlock-minority-partition", 1, 15, 0xaee05736e0c68c0b),
    ("15-redlock-minority-partition", 2, 15, 0xaee05736e0c68c0b),
    (
        "16-idempotent-work-under-gc-pause",
        1,
        7,
        0x553114183db44a35,
    ),
    (
        "16-idempotent-work-under-gc-pause",
        2,
        7,
        0x553114183db44a35,
    ),
    (
        "17a-lease-service-restart-forgetful",
        1,
        17,
        0x53607cf1999ddcc6,
    ),
    (
        "17a-lease-service-restart-forgetful",
        2,
        17,
        0x53607cf1999ddcc6,
    ),
    (
        "17b-lease-service-restart-durable",
        1,
        17,
        0xa1bcd1663d13fbd6,
    ),
    (
        "17b-lease-service-restart-durable",
        2,
        17,
        0xa1bcd1663d13fbd6,
    ),
    ("18-lease-lock-delay-gc-pause", 1, 18, 0xe66de9a6d4a5656d),
    ("18-lease-lock-delay-gc-pause", 2, 18, 0xe66de9a6d4a5656d),
    ("19a-k8s-lease-clock-1.25x", 1, 19, 0xaad3b952f49eb9aa),
    ("19a-k8s-lease-clock-1.25x", 2, 19, 0xdee8680744c2c749),
    ("19b-k8s-lease-clock-3x", 1, 19, 0x281ee66bdb3ad57a),
    ("19b-k8s-lease-clock-3x", 2, 19, 0x4588e6abb9025983),
    (
        "20a-k8s-lease-mismatched-durations-own",
        1,
        20,
        0x0b74bd2bb7721e4d,
    ),
    (
        "20a-k8s-lease-mismatched-durations-own",
        2,
        20,
        0xaa9602caecfd1f4c,
    ),
    (
        "20b-k8s-lease-mismatched-durations-record",
        1,
        20,
        0x3ea45a2ad5aa6fbc,
    ),
    (
        "20b-k8s-lease-mismatched-durations-record",
        2,
        20,
        0x1c1132e8d2b9c31f,
    ),
    ("21a-raft-crashes", 1, 17, 0xd24a68dcf23ab839),
    ("21a-raft-crashes", 2, 17, 0xd24a68dcf23ab839),
    (
        "21b-raft-leader-minority-partition",
        1,
        17,
        0xe22523577d3c61ce,
    ),
    (
        "21b-raft-leader-minority-partition",
        2,
        17,
        0xe22523577d3c61ce,
    ),
    ("21c-raft-gc-pause-unfenced", 1, 7, 0xe015f355724ce750),
    ("21c-raft-gc-pause-unfenced", 2, 7, 0xe015f355724ce750),
    ("21d-raft-gc-pause-fenced", 1, 7, 0x1c736d50c94f84c9),
    ("21d-raft-gc-pause-fenced", 2, 7, 0x1c736d50c94f84c9),
    ("21e-raft-whole-cluster-restart", 1, 17, 0xd2b1b1a5674836c4),
    ("21e-raft-whole-cluster-restart", 2, 17, 0xd2b1b1a5674836c4),
    (
        "22-redis-failover-async-replication",
        1,
        17,
        0x6b269e9808de2f10,
    ),
    (
        "22-redis-failover-async-replication",
        2,
        17,
        0x6b269e9808de2f10,
    ),
    ("24a-redis-shared-lock-object", 1, 24, 0xa6ac3e45a74ad3f1),
    ("24a-redis-shared-lock-object", 2, 24, 0xa6ac3e45a74ad3f1),
    (
        "24b-redis-thread-local-lock-object",
        1,
        24,
        0x562291eff96062c3,
    ),
    (
        "24b-redis-thread-local-lock-object",
        2,
        24,
        0x562291eff96062c3,
    ),
    (
        "25a-etcd-waiter-expired-session-v3.4.3",
        1,
        3,
        0xab400b3742067c8f,
    ),
    (
        "25a-etcd-waiter-expired-session-v3.4.3",
        2,
        3,
        0xab400b3742067c8f,
    ),
    (
        "25b-etcd-waiter-expired-session-fixed",
        1,
        3,
        0xc4e63ec490119520,
    ),
    (
        "25b-etcd-waiter-expired-session-fixed",
        2,
        3,
        0xc4e63ec490119520,
    ),
    ("25c-etcd-mutex-gc-pause-fenced", 1, 7, 0x86e35576dbbbe2da),
    ("25c-etcd-mutex-gc-pause-fenced", 2, 7, 0x86e35576dbbbe2da),
    (
        "26a-zookeeper-lock-held-until-lost",
        1,
        26,
        0xe7ac15e2dcfcf2de,
    ),
    (
        "26a-zookeeper-lock-held-until-lost",
        2,
        26,
        0xe7ac15e2dcfcf2de,
    ),
    (
        "26b-zookeeper-lock-gives-up-on-suspended",
        1,
        26,
        0xe9bad6d09f74c2cd,
    ),
    (
        "26b-zookeeper-lock-gives-up-on-suspended",
        2,
        26,
        0xe9bad6d09f74c2cd,
    ),
    ("26c-zookeeper-lock-orphan-node", 1, 26, 0xe30969e5aefb7d74),
    ("26c-zookeeper-lock-orphan-node", 2, 26, 0xe30969e5aefb7d74),
    (
        "26d-zookeeper-lock-orphan-node-protected",
        1,
        26,
        0xe34bba3fb2711428,
    ),
    (
        "26d-zookeeper-lock-orphan-node-protected",
        2,
        26,
        0xe34bba3fb2711428,
    ),
    (
        "26e-zookeeper-lock-gc-pause-fenced",
        1,
        26,
        0x8d070607a9224c18,
    ),
    (
        "26e-zookeeper-lock-gc-pause-fenced",
        2,
        26,
        0x8d070607a9224c18,
    ),
    ("27a-raft-figure8-count-replicas", 1, 27, 0xcac7fb151ab66155),
    ("27a-raft-figure8-count-replicas", 2, 27, 0xcac7fb151ab66155),
    ("27b-raft-figure8-current-term", 1, 27, 0x42ae75167edc2b4e),
    ("27b-raft-figure8-current-term", 2, 27, 0x42ae75167edc2b4e),
    ("28a-raft-rejoin-without-prevote", 1, 28, 0xae235d6957ee140c),
    ("28a-raft-rejoin-without-prevote", 2, 28, 0xae235d6957ee140c),
    ("28b-raft-rejoin-with-prevote", 1, 28, 0x0b5d8f380ebc2394),
    ("28b-raft-rejoin-with-prevote", 2, 28, 0x0b5d8f380ebc2394),
    ("29a-raft-lease-read-slow-clock", 1, 29, 0xe47a1ea01d9bd6b4),
    ("29a-raft-lease-read-slow-clock", 2, 29, 0xe47a1ea01d9bd6b4),
    ("29b-raft-read-index", 1, 29, 0x526c958d5290426c),
    ("29b-raft-read-index", 2, 29, 0x526c958d5290426c),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn file_of(stem: &str, version: u32) -> PathBuf {
    match version {
        1 => repo().join("tests/format/v1").join(format!("{stem}.json")),
        _ => repo().join("scenarios").join(format!("{stem}.json")),
    }
}

fn hash_of(plan: &splitbrain_scenario::Plan, seed: u64) -> u64 {
    let r = execute(plan, seed, Some(Recorder::hash_only())).unwrap();
    r.trace.unwrap().hash
}

fn stems(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Every lesson of both versions has its row, and each runs to its pinned hash.
#[test]
fn each_lesson_runs_to_its_pinned_hash_under_each_version() {
    for (version, dir) in [(1, "tests/format/v1"), (2, "scenarios")] {
        for stem in stems(&repo().join(dir)) {
            assert!(
                PINNED.iter().any(|r| r.0 == stem && r.1 == version),
                "{dir}/{stem}.json has no row in PINNED"
            );
        }
    }
    let mut wrong = Vec::new();
    for &(stem, version, seed, hash) in PINNED {
        let plan = load_file(&file_of(stem, version)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.scenario.splitbrain, version, "{stem}");
        let got = hash_of(&plan, seed);
        if got != hash {
            wrong.push(format!("(\"{stem}\", {version}, {seed}, 0x{got:016x}),"));
        }
    }
    assert!(wrong.is_empty(), "hashes moved:\n{}", wrong.join("\n"));
}

/// `migrate` keeps each format 1 lesson's meaning (the migrated file runs to the format 1
/// hash) and leaves each format 2 lesson byte for byte as it is.
#[test]
fn migrate_round_trips_every_lesson() {
    for &(stem, version, seed, hash) in PINNED {
        let path = file_of(stem, version);
        let src = std::fs::read_to_string(&path).unwrap();
        let m = migrate_str(&path.display().to_string(), &src).unwrap();
        assert_eq!(m.from, version, "{stem}");
        if version == 2 {
            assert_eq!(m.text, src, "{stem}: migrating a current file changes it");
            assert!(m.notes.is_empty(), "{stem}: {:?}", m.notes);
            continue;
        }
        let plan = load_str(stem, &m.text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.scenario.splitbrain, 2);
        assert_eq!(
            hash_of(&plan, seed),
            hash,
            "{stem}: migrated, it runs otherwise"
        );
        // Migrated once more: unchanged.
        assert_eq!(migrate_str(stem, &m.text).unwrap().text, m.text, "{stem}");
    }
}

/// A format 1 file that writes a nemesis bound as `[min, max]` (format 1 read it) is refused,
/// located, with the `migrate` command; migrated, it loads with the bound as an object.
#[test]
fn a_format_1_list_bound_is_refused_with_the_migrate_hint() {
    let src = r#"{"splitbrain": 1, "name": "t", "duration": "10s",
"nodes": {"n": {"role": "bully", "count": 3}},
"nemesis": {"mean_interval": "2s", "pause": ["1s", "2s"]}}"#;
    let e = load_str("old.json", src).unwrap_err().to_string();
    assert!(e.contains("old.json:3:45"), "{e}");
    assert!(e.contains("nemesis.pause"), "{e}");
    assert!(e.contains("`splitbrain migrate old.json`"), "{e}");
    let m = migrate_str("old.json", src).unwrap();
    let plan = load_str("old.json", &m.text).unwrap();
    let pause = plan.scenario.nemesis.unwrap().pause.unwrap();
    assert_eq!(
        (pause.min.0.as_nanos(), pause.max.0.as_nanos()),
        (1_000_000_000, 2_000_000_000)
    );
    // The same list in a format 2 file: refused without the hint (no older form to name).
    let e = load_str(
        "new.json",
        &src.replace("\"splitbrain\": 1", "\"splitbrain\": 2"),
    )
    .unwrap_err()
    .to_string();
    assert!(!e.contains("migrate"), "{e}");
}
