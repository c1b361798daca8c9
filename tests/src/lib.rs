//! End-to-end tests live in `tests/tests/`: the lesson library, determinism, snapshots.
