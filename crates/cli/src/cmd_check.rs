//! `splitbrain check PATH...`: every scenario under the paths against its expectation.

use crate::exit;
use crate::junit::{render, Case, Outcome};
use anyhow::Result;
use clap::Args;
use splitbrain_lab::sweep::{judge_rates, run_jobs, Job};
use splitbrain_scenario::seeds::{rate_seeds, seeds_of};
use splitbrain_scenario::{execute_keeping, Keep, Plan};
use std::path::{Path, PathBuf};

/// Arguments of `check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Scenario files or folders (searched recursively for *.json).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Also write a JUnit XML report here, one test case per scenario file, for CI systems
    /// (written whole or not at all; no timings, so the same files give the same bytes)
    #[arg(long, value_name = "report.xml")]
    pub junit: Option<PathBuf>,
}

/// Whether `p` is a comparison manifest (`*.compare.json`), not a scenario.
pub fn is_manifest(p: &Path) -> bool {
    p.to_string_lossy()
        .ends_with(splitbrain_scenario::format::MANIFEST_SUFFIX)
}

/// Pushes every file under `p` that `keep` accepts, in sorted order. A symbolic link to a
/// folder found while walking is not followed (a link to `.` would make the walk endless, as
/// in ripgrep's default); `p` itself is walked, link or not.
fn walk(p: &Path, keep: fn(&Path) -> bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(p)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for e in entries {
            if e.is_symlink() && e.is_dir() {
                continue;
            }
            walk(&e, keep, out)?;
        }
    } else if keep(p) {
        out.push(p.to_path_buf());
    }
    Ok(())
}

/// Every comparison manifest (`*.compare.json`) under the folders of `paths`, sorted.
pub fn manifest_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        walk(p, is_manifest, &mut out)?;
    }
    Ok(out)
}

/// What a JSON file that splitbrain itself writes is, told by its top-level keys, or `None`
/// for anything else (a scenario, or a file to read as one: a broken scenario stays
/// `INVALID`, never skipped). A file with a `splitbrain` key (the format version) is a
/// scenario whatever else it holds. Only the keys are parsed; their values are skipped unread.
/// A JSON Lines output (a `sweep --out` results file, a `run --trace` trace) is told by its
/// first line, its header.
pub fn splitbrain_output(src: &str) -> Option<&'static str> {
    #[derive(serde::Deserialize)]
    struct Keys {
        splitbrain: Option<serde::de::IgnoredAny>,
        rows: Option<serde::de::IgnoredAny>,
        bootstrap_resamples: Option<serde::de::IgnoredAny>,
        #[serde(rename = "traceEvents")]
        trace_events: Option<serde::de::IgnoredAny>,
        trace_hash: Option<serde::de::IgnoredAny>,
        expectations: Option<serde::de::IgnoredAny>,
        splitbrain_sweep: Option<serde::de::IgnoredAny>,
        splitbrain_trace: Option<serde::de::IgnoredAny>,
    }
    let src = src.trim_start_matches('\u{feff}');
    // A JSON Lines file is not one JSON value: its first line is its header.
    let k: Keys = serde_json::from_str(src)
        .or_else(|_| serde_json::from_str(src.lines().next().unwrap_or_default()))
        .ok()?;
    if k.splitbrain.is_some() {
        None
    } else if k.rows.is_some() && k.bootstrap_resamples.is_some() {
        Some("a comparison's results table (`splitbrain compare -o`)")
    } else if k.trace_events.is_some() {
        Some("a Chrome trace (`splitbrain export --format chrome`)")
    } else if k.trace_hash.is_some() && k.expectations.is_some() {
        Some("a run summary (`splitbrain run --json`)")
    } else if k.splitbrain_sweep.is_some() {
        Some("a sweep's results (`splitbrain sweep --out`)")
    } else if k.splitbrain_trace.is_some() {
        Some("a trace (`splitbrain run --trace`)")
    } else {
        None
    }
}

/// The `*.json` files under `paths` that are scenarios, and those found in a folder that are
/// splitbrain's own outputs, skipped with what each is ([`splitbrain_output`]).
pub struct ScenarioFiles {
    /// Scenario files, in walk order.
    pub files: Vec<PathBuf>,
    /// Files found in a folder and skipped: not scenarios but a command's output, with what.
    pub skipped: Vec<(PathBuf, &'static str)>,
    /// `*.json` entries found in a folder that are not regular files (a FIFO, a device), never
    /// opened, with the refusal ("FILE: cannot read the scenario: it is a FIFO ..."): `check`
    /// lists each as INVALID and checks the rest, other commands refuse the first.
    pub not_regular: Vec<(PathBuf, String)>,
}

/// Every `*.json` scenario file under `paths` (comparison manifests left out), sorted within
/// each folder (see `walk` for links); a file named on the command line is taken as it is.
/// A file found in a folder that is one of splitbrain's own JSON outputs (a `compare -o`
/// table, a Chrome trace export, a `run --json` summary) is skipped and listed, not read as
/// a broken scenario: a results folder beside the scenarios must not fail `check`.
/// Bad input (exit 2): a path that does not exist, a folder that holds no scenario file, a
/// scenario that is not a regular file (a FIFO would block the read forever).
pub fn scenario_files(paths: &[PathBuf]) -> Result<ScenarioFiles> {
    fn is_scenario(p: &Path) -> bool {
        p.extension().is_some_and(|x| x == "json") && !is_manifest(p)
    }
    let (mut out, mut skipped, mut not_regular) = (Vec::new(), Vec::new(), Vec::new());
    for p in paths {
        if !p.exists() {
            // `s.json/` exists as a file: say so rather than "no such file".
            splitbrain_scenario::load::check_regular(p)
                .map_err(|e| exit::BadInput(format!("{}: {e}", p.display())))?;
            return Err(exit::BadInput(format!("{}: no such file or folder", p.display())).into());
        }
        if !p.is_dir() {
            out.push(p.clone());
        } else {
            let before = out.len();
            let mut found = Vec::new();
            walk(p, is_scenario, &mut found)?;
            for f in found {
                // A FIFO named *.json would block the read forever: refused before the read,
                // and told with the other files rather than stopping the whole walk.
                if let Err(e) = crate::atomic::check_input(&f, "the scenario") {
                    not_regular.push((f, e.to_string()));
                    continue;
                }
                let what = std::fs::read_to_string(&f)
                    .ok()
                    .and_then(|src| splitbrain_output(&src));
                match what {
                    Some(what) => skipped.push((f, what)),
                    None => out.push(f),
                }
            }
            // A mistyped or empty folder must not pass as "0 passed, 0 failed" in CI.
            if out.len() == before && not_regular.is_empty() {
                let note = match skipped.len() {
                    0 => String::new(),
                    n => format!(" ({n} JSON file(s) skipped: command outputs, not scenarios)"),
                };
                return Err(exit::BadInput(format!(
                    "{} holds no scenario files (*.json){note}",
                    p.display()
                ))
                .into());
            }
        }
    }
    // A FIFO named *.json would block the read forever: refuse it before opening anything.
    for f in &out {
        crate::atomic::check_input(f, "the scenario")?;
    }
    Ok(ScenarioFiles {
        files: out,
        skipped,
        not_regular,
    })
}

/// Checks a file with `expect_rate` by the sweep it names (`rate_seeds`): every run must
/// match the file's `expect` and every rate its bounds. Returns (matched, some run hit a
/// bound, what to print: one line, and one per rate).
fn check_rates(f: &Path, plan: &Plan) -> Result<(bool, bool, String)> {
    use std::fmt::Write;
    let range = rate_seeds(&plan.scenario);
    let jobs: Vec<Job> = seeds_of(range, None)
        .into_iter()
        .map(|seed| Job { plan: 0, seed })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let lines = run_jobs(
        std::slice::from_ref(plan),
        &[],
        &jobs,
        threads,
        false,
        &|_| {},
    )?;
    let refs: Vec<_> = lines.iter().collect();
    let rates = judge_rates(&plan.scenario, &refs);
    let matched = lines.iter().filter(|l| l.matches).count();
    let bounded = lines.iter().any(|l| l.bound.is_some());
    let all = matched == lines.len() && rates.iter().all(|j| j.ok);
    let status = if bounded {
        "BOUND   "
    } else if all {
        "ok      "
    } else {
        "MISMATCH"
    };
    let mut text = String::new();
    writeln!(
        text,
        "{status}  {}  [sweep {range}: {matched} of {} runs matched]",
        f.display(),
        lines.len()
    )?;
    for j in &rates {
        writeln!(text, "          rate {j}")?;
        for w in j.warnings() {
            writeln!(text, "               {w}")?;
        }
    }
    if matched < lines.len() {
        let first: Vec<String> = lines
            .iter()
            .filter(|l| !l.matches)
            .take(3)
            .map(|l| {
                format!(
                    "splitbrain run {} --seed {}",
                    splitbrain_scenario::error::shell_word(&f.display().to_string()),
                    l.seed
                )
            })
            .collect();
        writeln!(
            text,
            "          runs not as expected, e.g.: {}",
            first.join("; ")
        )?;
    }
    Ok((all && !bounded, bounded, text))
}

/// Runs `check`.
///
/// Long because it is the command's one sequence over the files (refuse, run, judge rates, tally,
/// print, write JUnit); each step is a call or a few lines.
pub fn run(a: CheckArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    let ScenarioFiles {
        files,
        skipped,
        not_regular,
    } = scenario_files(&a.paths)?;
    let junit = match &a.junit {
        Some(path) => {
            let inputs: Vec<(&str, &Path)> =
                files.iter().map(|f| ("a scenario", f.as_path())).collect();
            crate::atomic::check_distinct(&inputs, &[("--junit", path)])?;
            Some(crate::atomic::AtomicFile::create(path)?)
        }
        None => None,
    };
    let mut cases: Vec<Case> = Vec::new();
    // Printed as each file is judged; a closed stdout ends the command (`main` maps it).
    let mut case = |name: &Path, outcome: Outcome, text: String| -> std::io::Result<()> {
        std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes())?;
        cases.push(Case {
            name: name.display().to_string(),
            outcome,
            text: text.trim_end().to_string(),
        });
        Ok(())
    };
    for (f, what) in &skipped {
        let text = format!("skipped   {}  [{what}: not a scenario]\n", f.display());
        case(f, Outcome::Skipped, text)?;
    }
    let (mut ok, mut bad, mut invalid, mut bounded) = (0, 0, 0, 0);
    for (f, why) in &not_regular {
        case(
            f,
            Outcome::Invalid,
            format!("INVALID   {}\n{why}\n", f.display()),
        )?;
        invalid += 1;
    }
    for f in &files {
        let plan = match roles.load_file(f) {
            Ok(p) => p,
            Err(e) => {
                case(
                    f,
                    Outcome::Invalid,
                    format!("INVALID   {}\n{e}\n", f.display()),
                )?;
                invalid += 1;
                continue;
            }
        };
        if !plan.scenario.expect_rate.is_empty() {
            let (matched, was_bounded, text) = check_rates(f, &plan)?;
            if matched {
                ok += 1;
            } else {
                bad += 1;
            }
            if was_bounded {
                bounded += 1;
            }
            let outcome = match (was_bounded, matched) {
                (true, _) => Outcome::Bound,
                (false, true) => Outcome::Passed,
                (false, false) => Outcome::Failed,
            };
            case(f, outcome, text)?;
            continue;
        }
        let r = execute_keeping(&plan, plan.scenario.seed, None, Keep::Checked)?;
        let detail: Vec<String> = r
            .expectations
            .iter()
            .map(|e| {
                let exp = e.expected_text();
                let got = e.got_text();
                if e.matches {
                    format!("{}={got}", e.invariant)
                } else {
                    format!("{}: expected {exp}, got {got}", e.invariant)
                }
            })
            .collect();
        let status = if r.bound.is_some() {
            "BOUND   "
        } else if r.matches() {
            "ok      "
        } else {
            "MISMATCH"
        };
        if r.matches() {
            ok += 1;
        } else {
            bad += 1;
        }
        if r.bound.is_some() {
            bounded += 1;
        }
        let mut text = format!("{status}  {}  [{}]\n", f.display(), detail.join(", "));
        if let Some(b) = &r.bound {
            text.push_str(&format!("          {b}\n"));
        }
        for u in &r.untriggered {
            text.push_str(&format!("          {u}\n"));
        }
        let outcome = if r.bound.is_some() {
            Outcome::Bound
        } else if r.matches() {
            Outcome::Passed
        } else {
            Outcome::Failed
        };
        case(f, outcome, text)?;
    }
    if let Some(out) = junit {
        crate::atomic::finish(out, &render(&cases)?)?;
    }
    // Skipped files are counted where CI reads the outcome, not only listed above.
    match skipped.len() {
        0 => outln!("{ok} passed, {bad} failed"),
        n => outln!("{ok} passed, {bad} failed, {n} skipped (not scenarios)"),
    }
    if invalid > 0 {
        outln!("{invalid} invalid scenario file(s)");
        return Ok(exit::BAD_INPUT);
    }
    Ok(if bounded > 0 {
        exit::BOUND
    } else if bad > 0 {
        exit::MISMATCH
    } else {
        exit::OK
    })
}
