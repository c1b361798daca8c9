//! The format's limits: how much one scenario file may hold and how far its values may go.
//! The schema states them (`maxItems`, `maximum`), the readers stop at them
//! (`schema::bounded`), validation refuses past them; each number lives here alone. Seed
//! ranges keep their own limit ([`crate::seeds::MAX_SEEDS`]).

use splitbrain_engine::SimDuration;

/// Most nodes in one scenario.
pub const MAX_NODES: usize = 10_000;
/// Most faults listed in one scenario.
pub const MAX_FAULTS: usize = 10_000;
/// Most entries of each list of rules: `processing`, `network.links`, `network.messages`, and
/// the pairs of a fault's `cut`.
pub const MAX_RULES: usize = 10_000;
/// Most entries of `check` (each names one invariant; there are far fewer).
pub const MAX_CHECKS: usize = 100;
/// Most entries of a list of the format whose schema states no `maxItems` (every list states
/// one, `every_list_has_a_limit...` checks it; this bounds any added later).
pub const MAX_LIST: usize = 10_000;
/// Slowest drift accepted, ppm: a clock at 0.1x true rate.
pub const MIN_DRIFT_PPM: i64 = -900_000;
/// Fastest drift accepted, ppm: a clock at 3x true rate (published analyses use 2x).
pub const MAX_DRIFT_PPM: i64 = 2_000_000;
/// Longest scenario name, in characters.
pub const MAX_NAME_LEN: usize = 100;
/// Longest run: 24 h of simulated time.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(24 * 3600);
