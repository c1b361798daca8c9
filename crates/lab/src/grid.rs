//! One `sweep` of a file: the grid of `--vary` combinations, a plan for each, every (plan,
//! seed) job run in parallel and streamed, and what the end of the sweep says about its runs
//! (matched, bounded, events, the bounds hit). The command line prints it; this module
//! decides nothing about words or files.

use crate::sweep::{run_jobs_streaming, Job, SeedLine, StatsTally, STREAM_CHUNK};
use crate::vary::{grid, plan_with_roles, Setting, Vary, VaryPlanError};
use splitbrain_scenario::seeds::{seeds_iter, SeedRange, Shard, MAX_SEEDS};
use splitbrain_scenario::Plan;
use std::collections::BTreeMap;

/// Refuses a sweep of more than [`MAX_SEEDS`] runs in all: every combination of the `--vary`
/// values times `seeds` seeds, so a grid of 10 x 10 x ... values over a large range is refused
/// as one large range is, although each seed range is under the cap. The product is computed
/// with checked multiplication. The error is the sentence to show.
pub fn check_grid_size(vary: &[Vary], seeds: u64) -> Result<(), String> {
    let mut combos: Option<u64> = Some(1);
    for v in vary {
        combos = combos.and_then(|c| c.checked_mul(v.values.len() as u64));
    }
    let runs = combos.and_then(|c| c.checked_mul(seeds));
    let too_many = |runs: String, combos: String| {
        Err(format!(
            "this sweep holds {runs} runs ({combos} --vary combinations x {seeds} seeds): at \
             most {MAX_SEEDS} runs in one sweep; narrow --vary or --seeds"
        ))
    };
    match (runs, combos) {
        (Some(r), Some(c)) if r > MAX_SEEDS => too_many(r.to_string(), c.to_string()),
        (Some(_), _) => Ok(()),
        (None, Some(c)) => too_many(format!("more than {}", u64::MAX), c.to_string()),
        (None, None) => too_many(
            format!("more than {}", u64::MAX),
            format!("more than {}", u64::MAX),
        ),
    }
}

/// The plans of a sweep: one per combination of the `--vary` values (one plan without
/// `--vary`), in grid order.
pub struct Grid {
    /// Each combination's settings (one empty combination without `--vary`).
    pub combos: Vec<Vec<Setting>>,
    /// The plan of each combination.
    pub plans: Vec<Plan>,
    /// A combination's label in the results file: its values joined by `,` (a single
    /// `--vary` keeps its plain value; values cannot hold a `,`); empty without `--vary`.
    pub values: Vec<String>,
}

impl Grid {
    /// The grid of `vary` over the scenario text `src` of `file`; an error names the
    /// combination whose file does not validate.
    pub fn new(
        roles: &splitbrain_scenario::RoleRegistry,
        file: &str,
        src: &str,
        vary: &[Vary],
    ) -> Result<Self, VaryPlanError> {
        let combos = grid(vary);
        let plans: Vec<Plan> = combos
            .iter()
            .map(|c| plan_with_roles(roles, file, src, c))
            .collect::<Result<_, _>>()?;
        let values: Vec<String> = if vary.is_empty() {
            Vec::new()
        } else {
            combos
                .iter()
                .map(|c| {
                    c.iter()
                        .map(|s| s.value.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect()
        };
        Ok(Grid {
            combos,
            plans,
            values,
        })
    }

    /// Every (plan, seed) job of `range` in `shard`, plan by plan, seeds ascending; never
    /// listed whole (a list as long as the range would make memory grow with it).
    pub fn jobs(&self, range: SeedRange, shard: Option<Shard>) -> impl Iterator<Item = Job> {
        (0..self.plans.len())
            .flat_map(move |plan| seeds_iter(range, shard).map(move |seed| Job { plan, seed }))
    }

    /// Runs every job on `threads` threads, keeping each run's trace hash when `hash`; each
    /// line goes to `on_done` as its run ends (any order: progress only) and to `sink` in job
    /// order, then is counted into its plan's tally (`first_k` failing seeds kept) and the
    /// run ends, and dropped: memory holds what is printed, not the runs.
    pub fn run(
        &self,
        jobs: impl Iterator<Item = Job>,
        threads: usize,
        (hash, first_k): (bool, usize),
        on_done: &(dyn Fn(&SeedLine) + Sync),
        mut sink: impl FnMut(&SeedLine) -> std::io::Result<()>,
    ) -> std::io::Result<(Vec<StatsTally>, RunEnds)> {
        let mut tallies: Vec<StatsTally> = self
            .plans
            .iter()
            .map(|_| StatsTally::new(first_k))
            .collect();
        let mut ends = RunEnds::default();
        run_jobs_streaming(
            &self.plans,
            &self.values,
            jobs,
            threads,
            hash,
            on_done,
            STREAM_CHUNK,
            |job, line| {
                sink(&line)?;
                tallies[job.plan].add(&line);
                ends.add(line);
                Ok(())
            },
        )?;
        Ok((tallies, ends))
    }
}

/// What the end of a sweep prints about its runs, counted one run at a time.
#[derive(Default)]
pub struct RunEnds {
    /// Runs that matched the file's expectation.
    pub matched: u64,
    /// Runs that hit a bound.
    pub bounded: u64,
    /// Events the engine processed, over every run.
    pub events: u64,
    /// The runs that hit a bound, per limit: how many, and the first such line.
    pub bounds: BTreeMap<&'static str, (usize, SeedLine)>,
}

impl RunEnds {
    /// Counts the run of line `l`.
    pub fn add(&mut self, l: SeedLine) {
        self.matched += u64::from(l.matches);
        self.events += l.sim_events;
        if let Some(b) = &l.bound {
            self.bounded += 1;
            let limit = limit_of(b);
            match self.bounds.get_mut(limit) {
                Some(e) => e.0 += 1,
                None => {
                    self.bounds.insert(limit, (1, l));
                }
            }
        }
    }
}

/// The limit (`limits` field) a bound message names: `max_events`, `max_time` or
/// `max_in_flight`, from the message's start (the engine's `SimError` display).
pub fn limit_of(bound: &str) -> &'static str {
    if bound.starts_with("event limit") {
        "max_events"
    } else if bound.starts_with("simulated-time limit") {
        "max_time"
    } else if bound.starts_with("in-flight limit") {
        "max_in_flight"
    } else {
        "a bound"
    }
}
