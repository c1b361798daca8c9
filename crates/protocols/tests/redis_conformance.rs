//! Replays `shared/conformance/redis-vectors.json` (recorded from redis-server 7.0.15) against
//! the model and requires every step to match. The file is looked up beside the repository
//! checkout: `<repo>/../shared/conformance/redis-vectors.json`. A missing file is a failure,
//! never a skip.

use std::path::PathBuf;

use splitbrain_protocols::redis::conformance;

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/redis-vectors.json")
}

#[test]
fn every_recorded_redis_vector_passes() {
    let path = vectors_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the Redis conformance vectors at {}: {e}. They are expected in \
             shared/conformance/ beside the repository checkout.",
            path.display()
        )
    });
    let report = conformance::replay(&text)
        .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()));
    for f in &report.failures {
        eprintln!(
            "FAIL {} step {} {:?}: expected {} got {} ({})",
            f.case, f.step, f.command, f.expected, f.got, f.detail
        );
    }
    eprintln!(
        "redis conformance: cases={} passed={} failed={}",
        report.cases, report.passed, report.failed
    );
    assert!(report.cases > 0, "no cases in {}", path.display());
    assert!(
        report.all_passed(),
        "{} of {} steps failed",
        report.failed,
        report.passed + report.failed
    );
}
