//! Replays the Redis conformance vectors committed in the repository,
//! `conformance/redis/vectors.json` (recorded from a live redis-server 7.0 by
//! `conformance/redis/record.py`; format in `conformance/redis/README.md`), against the model,
//! with no server: every step must match, or fall under a named exclusion the file declares
//! with the model's documented reply. `SPLITBRAIN_REDIS_VECTORS=FILE` replays another
//! recording instead (CI replays a fresh one). A missing file is a failure, never a skip.

use std::path::PathBuf;

use splitbrain_protocols::redis::conformance;

fn vectors_path() -> PathBuf {
    match std::env::var_os("SPLITBRAIN_REDIS_VECTORS") {
        Some(p) => PathBuf::from(p),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/redis/vectors.json")
        }
    }
}

#[test]
fn every_recorded_redis_vector_passes() {
    let path = vectors_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the Redis vectors at {}: {e}", path.display()));
    let report = conformance::replay(&text)
        .unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()));
    for f in &report.failures {
        eprintln!(
            "FAIL {} step {} {:?}: expected {} got {} ({})",
            f.case, f.step, f.command, f.expected, f.got, f.detail
        );
    }
    eprintln!(
        "redis conformance ({}): cases={} passed={} excluded={:?} failed={}",
        path.display(),
        report.cases,
        report.passed,
        report.excluded,
        report.failed
    );
    assert!(report.cases > 0, "no cases in {}", path.display());
    assert!(
        report.all_passed(),
        "{} of {} steps failed",
        report.failed,
        report.passed + report.failed + report.excluded_steps()
    );
}
