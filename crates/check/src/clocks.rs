//! Every node's clocks over true time, rebuilt from the record ([`WallClocks`]), and the
//! Redis expiry rule judged on them ([`key_expired`]).

use crate::run::RunRecord;
use splitbrain_engine::{Fault, LocalClock, NodeId, SimDuration, SimTime, WallTime};

/// The Redis model's expiry rule: a key with wall-clock deadline `deadline` is expired at a
/// wall reading `wall` iff `wall >= deadline`. The Redis instance actor reports `deadline` as
/// the first wall instant at which Redis counts the key expired (`(deadline_ms + 1) * 1e6` ns,
/// Redis expiring at `now_ms > deadline_ms`), so this agrees with Redis to the nanosecond.
pub fn key_expired(wall: WallTime, deadline: WallTime) -> bool {
    wall >= deadline
}

/// Every node's clocks over true time (ns), rebuilt from its initial [`ClockConfig`] (the
/// record's `clocks`) and the `ClockStep` / `SetDrift` faults applied to it, replayed in order
/// with [`LocalClock`] as the engine applies them (DESIGN.md, "Clocks": `wall(t) = offset +
/// mono(t) + sum of steps so far`; a step moves the wall clock only). A fault at true time `t`
/// is in effect at `t`. A node the record does not know reads true time.
///
/// Used by the checkers for Redis key expiry ([`key_expired`], [`Truth`](crate::Truth)) and by the charts
/// (belief deadlines, the clock-offset panel).
///
/// [`ClockConfig`]: splitbrain_engine::ClockConfig
pub struct WallClocks {
    /// Per node: `(from, clock)` snapshots, `from` increasing; the first is at 0.
    snaps: Vec<Vec<(SimTime, LocalClock)>>,
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

    /// `node`'s wall clock minus true time (ns) over `[0, end]`, as continuous pieces of
    /// `(t, offset)` points: one point where each piece starts, at every drift change and at
    /// its end; a clock step starts a new piece. Empty for a node the record does not know.
    pub fn offsets(&self, node: NodeId, end: SimTime) -> Vec<Vec<(SimTime, i64)>> {
        let Some(list) = self.snaps.get(node.index()) else {
            return Vec::new();
        };
        let off = |c: &LocalClock, t: SimTime| c.wall(t).0.saturating_sub(t.0 as i64);
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
