//! `splitbrain compare A.json B.json ... --seeds 0..N [-o DIR]` (or one `*.compare.json`
//! manifest): the same workload under the same random nemesis over several lock designs, per
//! design the rates of two accepted writers, duplicate effects and stalls, the times to
//! acquire and to take over, and messages per acquisition, each with its 95% interval. Prints
//! an aligned table; with `-o` writes `<name>.json`, `.csv`, `.md`, `.svg` and `.png`. The
//! numbers do not depend on `--jobs`.

use crate::atomic::{finish, AtomicFile};
use crate::cmd_check::is_manifest;
use crate::exit;
use anyhow::{Context, Result};
use clap::Args;
use splitbrain_lab::compare::{
    compare, design_differences, load_manifest, not_a_lock_design, Design,
};
use splitbrain_report::compare::{
    compare_csv, compare_page, compare_text, render_compare, ComparePage,
};
use splitbrain_report::ChartFormat;
use splitbrain_scenario::format::{is_manifest_text, MANIFEST_SUFFIX};
use splitbrain_scenario::seeds::SeedRange;
use splitbrain_scenario::{load_file, read_scenario};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Arguments of `compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// Two or more scenario files (one per design), or one comparison manifest
    /// (`NAME.compare.json`: the files, their labels and the seeds).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Seeds to run: A..B (B excluded: 0..1000 is 1000 seeds), A..=B (B included: 0..=999 is
    /// the same 1000) or one seed A. Required for scenario files; overrides a manifest's.
    #[arg(long, value_name = "A..B", allow_hyphen_values = true)]
    pub seeds: Option<SeedRange>,
    /// A design's label, once per scenario file in order (default: the scenario's name).
    #[arg(long, value_name = "TEXT")]
    pub label: Vec<String>,
    /// Worker threads (default: the available cores). Results do not depend on it.
    #[arg(long, short = 'j', value_name = "N", allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    /// Write the table (JSON, CSV, markdown) and the chart (SVG, PNG) to this folder.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The comparison's name, title, lesson, description, seeds and designs.
struct Setup {
    name: String,
    title: String,
    lesson: String,
    description: Option<String>,
    seeds: SeedRange,
    designs: Vec<Design>,
}

/// What `compare` runs: the designs of a manifest or of the files given, with the arguments
/// checked.
///
/// Long because each argument's refusal (exit 2) is a few lines of its own, all checked before any
/// run.
fn setup(a: &CompareArgs) -> Result<Setup> {
    if a.inputs.iter().any(|p| is_manifest(p)) {
        let [manifest] = a.inputs.as_slice() else {
            return Err(exit::BadInput(format!(
                "give one comparison manifest ({MANIFEST_SUFFIX}) or scenario files, not both \
                 or two manifests"
            ))
            .into());
        };
        if !a.label.is_empty() {
            return Err(exit::BadInput(
                "--label names scenario files' designs; a manifest labels its own".into(),
            )
            .into());
        }
        let (m, seeds, designs) =
            load_manifest(manifest).map_err(|e| exit::BadInput(e.to_string()))?;
        return Ok(Setup {
            name: m.name,
            title: m.title,
            lesson: m.lesson,
            description: m.description,
            seeds: a.seeds.unwrap_or(seeds),
            designs,
        });
    }
    for f in &a.inputs {
        if !f.exists() {
            // `s.json/` (a trailing slash) exists as a file: say so, not "no such file".
            splitbrain_scenario::load::check_regular(f)
                .map_err(|e| exit::BadInput(format!("{}: {e}", f.display())))?;
            return Err(exit::BadInput(format!("{}: no such file", f.display())).into());
        }
        // A manifest whose name lacks the suffix would be read as a scenario.
        // The read refuses a FIFO or device (it would block or never end).
        let text = read_scenario(f)?;
        if is_manifest_text(&text) {
            let stem = f.file_stem().unwrap_or_default().to_string_lossy();
            return Err(exit::BadInput(format!(
                "{}: this is a comparison manifest, but its file name does not end in \
                 {MANIFEST_SUFFIX}, so it would be read as a scenario: rename it \
                 {stem}{MANIFEST_SUFFIX}",
                f.display()
            ))
            .into());
        }
    }
    if let [one] = a.inputs.as_slice() {
        return Err(exit::BadInput(format!(
            "{}: one scenario file is one design; a comparison needs two or more scenario files \
             (one per design, with --seeds A..B) or one manifest named NAME{MANIFEST_SUFFIX} \
             (see docs/compare-manifest.md)",
            one.display()
        ))
        .into());
    }
    // The manifest's limit holds for scenario files named on the command line too.
    let max = splitbrain_lab::compare::MAX_DESIGNS;
    if a.inputs.len() > max {
        return Err(exit::BadInput(format!(
            "{} scenario files: a comparison takes at most {max} designs",
            a.inputs.len()
        ))
        .into());
    }
    let Some(seeds) = a.seeds else {
        return Err(exit::BadInput("--seeds A..B is required with scenario files".into()).into());
    };
    if !a.label.is_empty() && a.label.len() != a.inputs.len() {
        return Err(exit::BadInput(format!(
            "{} --label for {} scenario files: give one per file, in order, or none",
            a.label.len(),
            a.inputs.len()
        ))
        .into());
    }
    let mut designs: Vec<Design> = Vec::new();
    for (i, f) in a.inputs.iter().enumerate() {
        if !f.exists() {
            return Err(exit::BadInput(format!("{}: no such file", f.display())).into());
        }
        let plan = load_file(f)?;
        if let Some(why) = not_a_lock_design(&plan) {
            return Err(exit::BadInput(format!("{} {why}", f.display())).into());
        }
        let label = a
            .label
            .get(i)
            .cloned()
            .unwrap_or_else(|| plan.scenario.name.clone());
        if label.trim().is_empty() {
            return Err(exit::BadInput(format!(
                "--label {:?} for {}: a label cannot be empty: it heads the design's column",
                label,
                f.display()
            ))
            .into());
        }
        if designs.iter().any(|d| d.label == label) {
            return Err(exit::BadInput(format!(
                "two designs are labelled {label:?}: give each a distinct --label"
            ))
            .into());
        }
        designs.push(Design {
            label,
            file: f.display().to_string(),
            plan,
        });
    }
    // Scenario files share the workload and nemesis: a difference there is only allowed by
    // a manifest that says it is the point.
    let (differences, parts) = design_differences(&designs);
    if !differences.is_empty() {
        let list: Vec<String> = parts.iter().map(|p| format!("\"{p}\"")).collect();
        return Err(exit::BadInput(format!(
            "{}: the designs of a comparison run one workload under one nemesis; if the \
             difference is the point, compare them with a manifest that says so \
             (\"differ_on_purpose\": [{}], see docs/compare-manifest.md)",
            differences.join("; "),
            list.join(", ")
        ))
        .into());
    }
    Ok(Setup {
        name: "compare".to_string(),
        title: format!("{} lock designs compared", designs.len()),
        lesson: String::new(),
        description: None,
        seeds,
        designs,
    })
}

/// Runs `compare`.
///
/// Long because it is the command's one sequence (load, run every design, print the table, write
/// the page, chart and CSV).
pub fn run(a: CompareArgs) -> Result<u8> {
    let s = setup(&a)?;
    let threads = crate::cmd_sweep::threads_of(a.jobs)?;
    // Outputs are checked writable before any seed runs.
    let outputs = match &a.out {
        Some(dir) => {
            let names = ["json", "csv", "md", "svg", "png"]
                .map(|ext| dir.join(format!("{}.{ext}", s.name)));
            // `-o d` next to a design named `d/compare.json` overwrote it with the table.
            let inputs: Vec<(&str, &std::path::Path)> = a
                .inputs
                .iter()
                .map(|p| ("an input", p.as_path()))
                .chain(
                    s.designs
                        .iter()
                        .map(|d| ("a design", std::path::Path::new(&d.file))),
                )
                .collect();
            let labels = [
                "the table (JSON)",
                "the CSV",
                "the page",
                "the SVG chart",
                "the PNG chart",
            ];
            let outputs: Vec<(&str, &std::path::Path)> = labels
                .iter()
                .zip(&names)
                .map(|(w, p)| (*w, p.as_path()))
                .collect();
            crate::atomic::check_distinct(&inputs, &outputs)?;
            let files = names
                .iter()
                .map(|p| AtomicFile::create(p))
                .collect::<Result<Vec<_>>>()?;
            Some((names, files))
        }
        None => None,
    };
    let seeds = s.seeds;
    let runs = seeds.len() * s.designs.len() as u64;
    outln!(
        "compare   {} designs over seeds {seeds} ({runs} runs, {threads} {})",
        s.designs.len(),
        if threads == 1 { "job" } else { "jobs" }
    );
    for d in &s.designs {
        outln!("  {:<24} {}", d.label, d.file);
    }
    // A manifest has let these differ on purpose (scenario files that differ are refused).
    let (differences, _) = design_differences(&s.designs);
    for d in &differences {
        outln!("differs   {d}");
    }
    let done = AtomicU64::new(0);
    let on_done = || {
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        if d * 10 / runs != (d - 1) * 10 / runs {
            eprintln!("compare: {d}/{runs} runs ({}%)", d * 100 / runs);
        }
    };
    let table = compare(
        &s.designs,
        seeds,
        threads.min(runs as usize).max(1),
        &on_done,
    )
    .context("a run failed")?;
    outln!();
    out!("{}", compare_text(&table));
    outln!();
    outln!("{}", table.intervals);
    let bounded: u64 = table.rows.iter().map(|r| r.bounded).sum();
    if bounded > 0 {
        outln!(
            "bound     {bounded} runs stopped at their event or time bound: they feed no time, \
             count or ratio, and a rate only by a failure they showed"
        );
    }
    if let Some((names, files)) = outputs {
        let mut files = files.into_iter();
        let mut next = || files.next().expect("five output files");
        let json = serde_json::to_string_pretty(&table).expect("the table serialises") + "\n";
        finish(next(), json.as_bytes())?;
        finish(next(), compare_csv(&table).as_bytes())?;
        let svg_name = format!("{}.svg", s.name);
        let png_name = format!("{}.png", s.name);
        let inputs: Vec<String> = a.inputs.iter().map(|p| p.display().to_string()).collect();
        let page = compare_page(
            &table,
            &ComparePage {
                title: &s.title,
                lesson: &s.lesson,
                description: s.description.as_deref(),
                manifest_arg: &format!("{} --seeds {seeds}", inputs.join(" ")),
                chart: &svg_name,
                png: Some(&png_name),
                scenario_links: s.designs.iter().map(|d| d.file.clone()).collect(),
                differences: differences.clone(),
            },
        );
        finish(next(), page.as_bytes())?;
        finish(next(), &render_compare(&table, &s.title, ChartFormat::Svg)?)?;
        finish(next(), &render_compare(&table, &s.title, ChartFormat::Png)?)?;
        for n in &names {
            outln!("wrote     {}", n.display());
        }
    }
    Ok(if bounded > 0 { exit::BOUND } else { exit::OK })
}
