//! Lesson 01b's claim on seeds 0..1000: the literal reading of the bully rules storms (many
//! times the textbook bound), the textbook reading (the same file without `variant`) stays
//! within N(N-1)/2 ELECTIONs and N-1 COORDINATORs per new leader.

use splitbrain_protocols::Obs;
use splitbrain_scenario::{execute, load_str};

const LESSON: &str = include_str!("../../scenarios/01b-bully-literal-storm.json");

/// (ELECTION, COORDINATOR, elections started, claims) sent over the whole run, per seed.
fn counts(src: &str, seeds: std::ops::Range<u64>) -> Vec<(u64, u64, u64, u64)> {
    let plan = load_str("01b.json", src).unwrap();
    seeds
        .map(|seed| {
            let r = execute(&plan, seed, None).unwrap();
            assert!(r.bound.is_none() && r.matches(), "seed {seed}");
            let sent = |k: &str| r.stats.messages.get(k).map_or(0, |c| c.sent);
            let obs = |f: fn(&Obs) -> bool| {
                r.record.observations.iter().filter(|o| f(&o.obs)).count() as u64
            };
            (
                sent("ELECTION"),
                sent("COORDINATOR"),
                obs(|o| matches!(o, Obs::ElectionStarted)),
                obs(|o| matches!(o, Obs::LeaderClaim { .. })),
            )
        })
        .collect()
}

#[test]
fn literal_storms_and_textbook_stays_within_the_bound_on_seeds_0_to_1000() {
    let literal = counts(LESSON, 0..1000);
    let textbook_src = LESSON.replace(",\n      \"variant\": \"literal\"", "");
    assert_ne!(textbook_src, LESSON);
    let textbook = counts(&textbook_src, 0..1000);
    // Two elections (the start, n10's crash) of N = 10 nodes: at most 2 * N(N-1)/2 = 90
    // ELECTIONs, and 9 + 8 COORDINATORs (n10 tells 9 lower nodes, n9 tells 8).
    for (seed, &(election, coordinator, _, claims)) in textbook.iter().enumerate() {
        assert!(election <= 90, "seed {seed}: {election} ELECTIONs");
        assert!(
            coordinator <= 9 + 8,
            "seed {seed}: {coordinator} COORDINATORs"
        );
        assert_eq!(claims, 2, "seed {seed}");
    }
    // The storm: on every seed more ELECTIONs than the bound, more than five times its
    // COORDINATORs, and at least ten claims (the sitting leader re-claiming on late ELECTIONs).
    for (seed, &(election, coordinator, started, claims)) in literal.iter().enumerate() {
        assert!(election > 90, "seed {seed}: {election} ELECTIONs");
        assert!(
            coordinator > 5 * 17,
            "seed {seed}: {coordinator} COORDINATORs"
        );
        assert!(
            claims >= 10 && started > 20,
            "seed {seed}: {claims} claims, {started} elections"
        );
    }
    // Seed 1, the file's, as its description tells it.
    assert_eq!(literal[1], (263, 639, 148, 71));
    assert_eq!(textbook[1], (90, 17, 19, 2));
}
