//! The invariant checkers, one module per family. Each invariant is one
//! [`InvariantDef`](crate::invariant::InvariantDef) const in its module (name, parameters,
//! definition, premise, roles, judge), listed once in [`INVARIANTS`](crate::spec::INVARIANTS);
//! its `pub fn` implements that definition, judging observations against true time.

pub mod availability;
pub mod leader;
pub mod locks;
pub mod progress;
pub mod raft;
pub mod writes;

use crate::clocks::WallClocks;
use crate::evidence::Evidence;
use crate::run::RunRecord;
use crate::timeline::{fault_evidence, obs_evidence, End};
use crate::truth::{Fact, Hold, Spans, Truth};
use splitbrain_engine::{NodeId, SimTime};
use std::cell::OnceCell;
use std::collections::BTreeSet;

/// What several invariants derive from one record, each built at most once per
/// [`check`](crate::check) (on first use): the wall clocks and the truth. Rebuilding the truth
/// for each invariant that reads it cost a sweep time and gave the same answer.
pub(crate) struct Shared<'r> {
    /// The record judged.
    pub record: &'r RunRecord,
    clocks: OnceCell<WallClocks>,
    truth: OnceCell<Truth>,
    /// Whether a verdict reads the truth's holds themselves (`holder_writes_only`,
    /// `validity_within_truth`): then [`Shared::spans`] reads them from the truth.
    reads_holds: bool,
    /// [`Truth::spans`], where no verdict reads the holds themselves.
    spans: OnceCell<Spans>,
    /// The truth with every hold's facts, built only if a verdict cites a hold's facts that
    /// [`Shared::truth`] does not keep.
    cited: OnceCell<Truth>,
    /// Whether violations are put in words (summary, evidence, faults): false for a caller
    /// that reads only outcomes and windows ([`crate::check_outcomes`]), where the words
    /// (and the truth with every hold's facts they cite) would be made for nobody.
    pub(crate) words: bool,
}

impl<'r> Shared<'r> {
    /// Nothing derived yet.
    pub(crate) fn new(record: &'r RunRecord) -> Shared<'r> {
        Shared {
            record,
            clocks: OnceCell::new(),
            truth: OnceCell::new(),
            reads_holds: false,
            spans: OnceCell::new(),
            cited: OnceCell::new(),
            words: true,
        }
    }

    /// Nothing derived yet, for judging invariants of which some read the truth's holds
    /// themselves if `reads_holds` ([`InvariantDef`](crate::invariant::InvariantDef)'s
    /// `reads_holds`).
    pub(crate) fn reading_holds(record: &'r RunRecord, reads_holds: bool) -> Shared<'r> {
        let mut shared = Shared::new(record);
        shared.reads_holds = reads_holds;
        shared
    }

    /// `(from, to, lock, holder)` of every hold of [`Shared::truth`], in its order: read from
    /// the truth where a verdict reads its holds anyway (or it was built), else from
    /// [`Truth::spans`], whose holds are never all alive.
    #[allow(clippy::type_complexity)]
    pub(crate) fn spans(
        &self,
    ) -> Box<dyn Iterator<Item = (SimTime, SimTime, &str, Option<NodeId>)> + '_> {
        if self.reads_holds || self.truth.get().is_some() {
            return Box::new(
                self.truth()
                    .all()
                    .map(|h| (h.from, h.to, &*h.lock, h.holder)),
            );
        }
        let spans = self
            .spans
            .get_or_init(|| Truth::spans(self.record, self.clocks()));
        Box::new(spans.iter())
    }

    /// The record's wall clocks ([`WallClocks::new`]).
    pub(crate) fn clocks(&self) -> &WallClocks {
        self.clocks.get_or_init(|| WallClocks::new(self.record))
    }

    /// The record's truth ([`Truth::holds_uncited`] with [`Shared::clocks`]): a long run's
    /// holds may keep no facts; [`Shared::facts`] finds them.
    pub(crate) fn truth(&self) -> &Truth {
        self.truth
            .get_or_init(|| Truth::holds_uncited(self.record, self.clocks()))
    }

    /// The facts that started and ended `hold`, one of [`Shared::truth`]'s holds, for a
    /// verdict to cite: its own, or, where that truth keeps none, those of the same hold (same
    /// place) in the truth built with them ([`Truth::holds_only`]), built once.
    pub(crate) fn facts<'a>(&'a self, hold: &'a Hold) -> (&'a [Fact], &'a [Fact]) {
        let truth = self.truth();
        if truth.keeps_facts() {
            return (&hold.started_by, &hold.ended_by);
        }
        let at = truth
            .all()
            .position(|h| std::ptr::eq(h, hold))
            .expect("a hold of the shared truth");
        let cited = self
            .cited
            .get_or_init(|| Truth::holds_only(self.record, self.clocks()));
        let h = &cited.holds[at];
        debug_assert!((h.from, h.to, &h.lock) == (hold.from, hold.to, &hold.lock));
        (&h.started_by, &h.ended_by)
    }
}

/// "a", "a and b", "a, b and c".
pub(crate) fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Sorted names of a node set.
pub(crate) fn names(record: &RunRecord, nodes: &BTreeSet<NodeId>) -> Vec<String> {
    let mut v: Vec<String> = nodes.iter().map(|n| record.name(*n)).collect();
    v.sort();
    v
}

/// The evidence of how a belief ended, if it ended by an observation or a crash.
pub(crate) fn end_evidence(record: &RunRecord, end: End) -> Option<Evidence> {
    match end {
        End::Obs(i) => Some(obs_evidence(record, i)),
        End::Crash(i) => Some(fault_evidence(record, i)),
        End::Open => None,
    }
}

/// Evidence in true-time order (ties by source), duplicates removed.
pub(crate) fn tidy(mut ev: Vec<Evidence>) -> Vec<Evidence> {
    ev.sort_by_key(|e| (e.t, e.source));
    ev.dedup();
    ev
}
