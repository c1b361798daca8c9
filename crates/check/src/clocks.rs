//! Every node's clocks over true time, rebuilt from the record ([`WallClocks`]), and the
//! Redis expiry rule judged on them ([`key_expired`]).

use crate::run::RunRecord;
use splitbrain_engine::{Fault, LocalClock, LocalTime, NodeId, SimDuration, SimTime, WallTime};

/// The Redis model's expiry rule: a key with wall-clock deadline `deadline` is expired at a
/// wall reading `wall` iff `wall >= deadline`. The Redis instance actor reports `deadline` as
/// the first wall instant at which Redis counts the key expired (`(deadline_ms + 1) * 1e6` ns,
/// Redis expiring at `now_ms > deadline_ms`), so this agrees with Redis to the nanosecond.
pub fn key_expired(wall: WallTime, deadline: WallTime) -> bool {
    wall >= deadline
}

/// Every node's clocks over true time (ns), rebuilt from its initial [`ClockConfig`] (the
/// record's `clocks`) and the `ClockStep` / `SetDrift` faults applied to it, replayed in order
/// with [`LocalClock`] as the engine applies them (docs/design.md, "Clocks": `wall(t) =
/// wall_clock_start + offset + mono(t) + sum of steps so far`; a step moves the wall clock only). A fault at true time `t`
/// is in effect at `t`. A node the record does not know reads true time.
///
/// Used by the checkers for Redis key expiry ([`key_expired`], `Truth`(crate::Truth)) and by the charts
/// (belief deadlines, the clock-offset panel).
///
/// [`ClockConfig`]: splitbrain_engine::ClockConfig
pub struct WallClocks {
    /// Per node: `(from, clock)` snapshots, `from` increasing; the first is at 0.
    snaps: Vec<Vec<(SimTime, LocalClock)>>,
}

/// One piece of a node's clocks, in force from true time `from` until the next piece starts
/// (a clock fault starts a piece): for `t >= from`, `mono(t) = origin_mono + floor((t -
/// origin) * (1e6 + drift_ppm) / 1e6)` and `wall(t) = wall_base_ns + mono(t)` (clamped to
/// i64), as [`LocalClock`] reads them. A view evaluates these pieces itself (the browser
/// page's script) rather than storing readings per step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockPiece {
    /// True time the piece starts, ns.
    pub from: SimTime,
    /// True time of the last drift change at or before `from` (0 if none), ns.
    pub origin: SimTime,
    /// Monotonic reading at `origin`, local ns.
    pub origin_mono: LocalTime,
    /// Drift in force, ppm.
    pub drift_ppm: i64,
    /// The run's wall start plus the node's offset plus every step so far, Unix ns (an
    /// i128: the sum of an extreme start and steps may pass i64 before the clamp).
    pub wall_base_ns: i128,
}

impl WallClocks {
    /// Rebuilds the clocks of every node of `record` from its initial clocks and applied
    /// faults.
    pub fn new(record: &RunRecord) -> WallClocks {
        let mut snaps: Vec<Vec<(SimTime, LocalClock)>> = (0..record.names.len())
            .map(|i| {
                vec![(
                    SimTime::ZERO,
                    LocalClock::new(record.clock(NodeId(i as u32))),
                )]
            })
            .collect();
        for (t, fault) in &record.faults {
            let (node, step, drift) = match *fault {
                Fault::ClockStep { node, delta_ns } => (node, Some(delta_ns), None),
                Fault::SetDrift { node, drift_ppm } => (node, None, Some(drift_ppm)),
                _ => continue,
            };
            let Some(list) = snaps.get_mut(node.index()) else {
                continue;
            };
            let mut clock = list.last().expect("initial snapshot").1.clone();
            if let Some(delta) = step {
                clock.step(delta);
            }
            if let Some(ppm) = drift {
                clock.set_drift(*t, ppm);
            }
            if list.last().expect("initial snapshot").0 == *t {
                list.last_mut().expect("initial snapshot").1 = clock;
            } else {
                list.push((*t, clock));
            }
        }
        WallClocks { snaps }
    }

    /// The pieces of `node`'s clocks ([`ClockPiece`]), the first at 0; empty for a node the
    /// record does not know. One piece per clock fault of the node (faults at one instant
    /// make one piece): a page stores these instead of a reading per step.
    pub fn pieces(&self, node: NodeId) -> Vec<ClockPiece> {
        self.snaps.get(node.index()).map_or(Vec::new(), |list| {
            list.iter()
                .map(|(from, c)| {
                    let (origin, origin_mono) = c.origin();
                    ClockPiece {
                        from: *from,
                        origin,
                        origin_mono,
                        drift_ppm: c.drift_ppm(),
                        wall_base_ns: c.wall_start_ns() as i128
                            + c.wall_offset_ns() as i128
                            + c.steps_ns() as i128,
                    }
                })
                .collect()
        })
    }

    /// `node`'s monotonic clock reading (local ns) at true time `t`; true time for a node the
    /// record does not know.
    pub fn mono(&self, node: NodeId, t: SimTime) -> LocalTime {
        match self.snaps.get(node.index()) {
            Some(list) => {
                let i = list.partition_point(|(from, _)| *from <= t);
                list[i.saturating_sub(1)].1.mono(t)
            }
            None => LocalTime(t.0),
        }
    }

    /// `node`'s wall clock reading (ns, signed) at true time `t`.
    pub fn wall(&self, node: NodeId, t: SimTime) -> WallTime {
        match self.snaps.get(node.index()) {
            Some(list) => {
                let i = list.partition_point(|(from, _)| *from <= t);
                list[i.saturating_sub(1)].1.wall(t)
            }
            None => WallTime(t.0 as i64),
        }
    }

    /// The first true instant at or after `t` at which `node`'s monotonic clock reads at least
    /// `local` ns (a belief's deadline, which actors keep as a monotonic reading); `t` itself
    /// if it already does. Follows drift changes after `t`, rounding as
    /// [`LocalClock::true_time_after`] does.
    pub fn true_time_of_mono(&self, node: NodeId, t: SimTime, local: u64) -> SimTime {
        let Some(list) = self.snaps.get(node.index()) else {
            return t;
        };
        let k = list
            .partition_point(|(from, _)| *from <= t)
            .saturating_sub(1);
        let mut start = t;
        for (i, (_, c)) in list.iter().enumerate().skip(k) {
            let now = c.mono(start).0;
            if now >= local {
                return start;
            }
            let at = c.true_time_after(start, SimDuration(local - now));
            match list.get(i + 1) {
                Some((next, _)) if *next <= at => start = *next,
                _ => return at,
            }
        }
        start
    }

    /// `node`'s wall clock minus the run's wall start minus true time (ns: its offset plus
    /// steps plus drift so far) over `[0, end]`, as continuous pieces of
    /// `(t, offset)` points: one point where each piece starts, at every drift change and at
    /// its end; a clock step starts a new piece. Empty for a node the record does not know.
    pub fn offsets(&self, node: NodeId, end: SimTime) -> Vec<Vec<(SimTime, i64)>> {
        let Some(list) = self.snaps.get(node.index()) else {
            return Vec::new();
        };
        let off = |c: &LocalClock, t: SimTime| {
            c.wall(t)
                .0
                .saturating_sub(c.wall_start_ns())
                .saturating_sub(t.0 as i64)
        };
        let mut pieces: Vec<Vec<(SimTime, i64)>> = Vec::new();
        for (i, (from, c)) in list.iter().enumerate() {
            if *from > end {
                break;
            }
            let to = list.get(i + 1).map_or(end, |(f, _)| (*f).min(end));
            let first = (*from, off(c, *from));
            let stepped = i > 0 && c.steps_ns() != list[i - 1].1.steps_ns();
            match pieces.last_mut() {
                Some(p) if !stepped => p.push(first),
                _ => pieces.push(vec![first]),
            }
            let p = pieces.last_mut().expect("pushed above");
            if to > *from {
                p.push((to, off(c, to)));
            }
        }
        pieces
    }

    /// True times in `(from, to)` at which `node`'s clock changes (steps or drift changes).
    fn breakpoints(&self, node: NodeId, from: SimTime, to: SimTime) -> Vec<SimTime> {
        self.snaps.get(node.index()).map_or(Vec::new(), |list| {
            list.iter()
                .map(|(t, _)| *t)
                .filter(|t| from < *t && *t < to)
                .collect()
        })
    }

    /// The sub-intervals of `[from, to)` during which a key with wall deadline `deadline` on
    /// `node` is not expired ([`key_expired`]), each with the instant and wall reading at which
    /// it expired (`None` if it lasted to `to`). Between breakpoints the wall clock is
    /// continuous and non-decreasing, so expiry is a threshold found by bisection; a backward
    /// step can make an expired key live again.
    pub(crate) fn live_pieces(
        &self,
        node: NodeId,
        from: SimTime,
        to: SimTime,
        deadline: WallTime,
    ) -> Vec<(SimTime, SimTime, Option<WallTime>)> {
        let mut bounds = vec![from];
        bounds.extend(self.breakpoints(node, from, to));
        bounds.push(to);
        let mut out = Vec::new();
        let mut open: Option<SimTime> = None;
        for w in bounds.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a >= b {
                continue;
            }
            let expired_at = |t: SimTime| key_expired(self.wall(node, t), deadline);
            if expired_at(a) {
                if let Some(s) = open.take() {
                    out.push((s, a, Some(self.wall(node, a))));
                }
                continue;
            }
            open.get_or_insert(a);
            let last = SimTime(b.0 - 1);
            if !expired_at(last) {
                continue;
            }
            // First expired instant in (a, last]: invariant lo not expired, hi expired.
            let (mut lo, mut hi) = (a.0, last.0);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if expired_at(SimTime(mid)) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let s = open.take().expect("opened above");
            out.push((s, SimTime(hi), Some(self.wall(node, SimTime(hi)))));
        }
        if let Some(s) = open {
            out.push((s, to, None));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{key_expired, WallClocks};
    use crate::testkit::*;
    use splitbrain_engine::{ClockConfig, Fault, SimTime, WallTime};

    const S: i64 = 1_000_000_000;

    fn step(node: u32, delta_s: i64) -> Fault {
        Fault::ClockStep {
            node: id(node),
            delta_ns: delta_s * S,
        }
    }
    fn drift(node: u32, drift_ppm: i64) -> Fault {
        Fault::SetDrift {
            node: id(node),
            drift_ppm,
        }
    }

    /// One node, wall offset +1 s; its wall clock steps +2 s at 3 s, and its clocks run at
    /// double speed (+1_000_000 ppm) from 5 s.
    fn stepped_then_fast() -> WallClocks {
        let r = Builder::new(&[("n", Worker)])
            .clock(
                0,
                ClockConfig {
                    drift_ppm: 0,
                    wall_offset_ns: S,
                    wall_start_ns: 0,
                },
            )
            .fault(ms(3_000), step(0, 2))
            .fault(ms(5_000), drift(0, 1_000_000))
            .end(ms(10_000))
            .build();
        WallClocks::new(&r)
    }

    #[test]
    fn expiry_is_wall_at_or_past_the_deadline() {
        for (wall, deadline, expect) in [(4, 5, false), (5, 5, true), (6, 5, true), (-1, 0, false)]
        {
            assert_eq!(
                key_expired(WallTime(wall), WallTime(deadline)),
                expect,
                "wall {wall} deadline {deadline}"
            );
        }
    }

    /// A fault at true time `t` is in effect at `t`; a node the record does not know reads
    /// true time.
    #[test]
    fn wall_replays_steps_and_drift_changes() {
        let c = stepped_then_fast();
        for (node, t, expect) in [
            (0, SimTime(0), S),
            (0, SimTime(3 * S as u64 - 1), 4 * S - 1),
            (0, ms(3_000), 6 * S),
            (0, ms(5_000), 8 * S),
            (0, ms(6_000), 10 * S),
            (7, ms(6_000), 6 * S),
        ] {
            assert_eq!(c.wall(id(node), t), WallTime(expect), "node {node} at {t}");
        }
    }

    /// `(asked at, local deadline) -> true instant`: the monotonic clock is true time until
    /// 5 s (a wall step does not move it), then runs at double speed.
    #[test]
    fn true_time_of_mono_follows_later_drift_changes() {
        let c = stepped_then_fast();
        for (at_ms, local_ms, expect_ms) in [
            // Before the drift change, reached before it.
            (0, 1_000, 1_000),
            (1_000, 4_999, 4_999),
            // Asked before the change, reached after it: 5 s at rate 1, then 1 s local in
            // 0.5 s true.
            (1_000, 6_000, 5_500),
            (5_000, 6_000, 5_500),
            // Asked after the change: mono(6 s) = 7 s.
            (6_000, 9_000, 7_000),
            // Already reached: the instant asked.
            (6_000, 7_000, 6_000),
            (6_000, 2_000, 6_000),
        ] {
            assert_eq!(
                c.true_time_of_mono(id(0), ms(at_ms), local_ms as u64 * 1_000_000),
                ms(expect_ms),
                "asked at {at_ms} ms for local {local_ms} ms"
            );
        }
        assert_eq!(c.true_time_of_mono(id(7), ms(1), 5), ms(1));
    }

    /// Offsets (wall minus true, ns): a point where each piece starts, at each drift change
    /// and at the end; the step at 3 s starts a new piece.
    #[test]
    fn offsets_break_at_steps_only() {
        let c = stepped_then_fast();
        let p = |t_ms: u64, off_s: i64| (ms(t_ms), off_s * S);
        for (end_ms, expect) in [
            (
                10_000,
                vec![
                    vec![p(0, 1), p(3_000, 1)],
                    vec![p(3_000, 3), p(5_000, 3), p(5_000, 3), p(10_000, 8)],
                ],
            ),
            (
                4_000,
                vec![vec![p(0, 1), p(3_000, 1)], vec![p(3_000, 3), p(4_000, 3)]],
            ),
            (3_000, vec![vec![p(0, 1), p(3_000, 1)], vec![p(3_000, 3)]]),
            (2_000, vec![vec![p(0, 1), p(2_000, 1)]]),
        ] {
            assert_eq!(c.offsets(id(0), ms(end_ms)), expect, "end {end_ms} ms");
        }
        assert!(c.offsets(id(7), ms(10_000)).is_empty());
    }

    /// `(from, to) -> live pieces`, each with the instant and wall reading it expired at.
    /// Wall = true time, +20 s at 3 s, -30 s at 6 s; deadline wall 10 s.
    #[test]
    fn live_pieces_are_cut_at_expiry_and_revived_by_a_backward_step() {
        let r = Builder::new(&[("redis", RedisInstance)])
            .fault(ms(3_000), step(0, 20))
            .fault(ms(6_000), step(0, -30))
            .end(ms(30_000))
            .build();
        let c = WallClocks::new(&r);
        let deadline = WallTime(10 * S);
        type Piece = (SimTime, SimTime, Option<WallTime>);
        let cases: [((u64, u64), Vec<Piece>); 6] = [
            // Expired by the forward step at exactly 3 s (wall 23 s), live again from 6 s
            // (wall -4 s) until wall 10 s at true 20 s.
            (
                (1_000, 25_000),
                vec![
                    (ms(1_000), ms(3_000), Some(WallTime(23 * S))),
                    (ms(6_000), ms(20_000), Some(deadline)),
                ],
            ),
            // Ends before the revived key expires.
            (
                (1_000, 15_000),
                vec![
                    (ms(1_000), ms(3_000), Some(WallTime(23 * S))),
                    (ms(6_000), ms(15_000), None),
                ],
            ),
            // Wholly inside the expired stretch.
            ((4_000, 5_000), vec![]),
            // From the backward step exactly; one nanosecond before the expiry.
            ((6_000, 20_000), vec![(ms(6_000), ms(20_000), None)]),
            (
                (6_000, 20_001),
                vec![(ms(6_000), ms(20_000), Some(deadline))],
            ),
            // Empty interval.
            ((2_000, 2_000), vec![]),
        ];
        for ((from, to), expect) in cases {
            assert_eq!(
                c.live_pieces(id(0), ms(from), ms(to), deadline),
                expect,
                "[{from} ms, {to} ms)"
            );
        }
    }

    /// Expiry found to the nanosecond on a drifting clock: at +500_000 ppm from 0, wall
    /// 3 s is reached at true 2 s; deadline one nanosecond later is reached one true
    /// nanosecond later (rate 1.5 rounds down).
    #[test]
    fn live_pieces_bisect_to_the_first_expired_nanosecond() {
        let r = Builder::new(&[("redis", RedisInstance)])
            .clock(
                0,
                ClockConfig {
                    drift_ppm: 500_000,
                    wall_offset_ns: 0,
                    wall_start_ns: 0,
                },
            )
            .end(ms(30_000))
            .build();
        let c = WallClocks::new(&r);
        for (deadline, expect_to) in [
            (3 * S, 2 * S as u64),
            (3 * S + 1, 2 * S as u64 + 1),
            (3 * S + 2, 2 * S as u64 + 2),
            (3 * S + 3, 2 * S as u64 + 2),
        ] {
            let pieces = c.live_pieces(id(0), ms(1), ms(10_000), WallTime(deadline));
            assert_eq!(pieces.len(), 1);
            assert_eq!(pieces[0].1, SimTime(expect_to), "deadline {deadline}");
            let wall = pieces[0].2.expect("expired");
            assert!(key_expired(wall, WallTime(deadline)));
            assert!(!key_expired(
                c.wall(id(0), SimTime(expect_to - 1)),
                WallTime(deadline)
            ));
        }
    }
}
