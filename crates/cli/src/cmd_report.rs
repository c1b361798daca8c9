//! `splitbrain report PATH... -o DIR`: per scenario a chart (`<name>.svg`, optionally
//! `<name>.png`), a browser view (`<name>.html`) and a page (`<name>.md`), plus the index `README.md`. Every file is written
//! atomically and depends only on the scenarios and on paths relative to the output folder,
//! so regenerating gives identical bytes.

use crate::atomic::write_atomic;
use crate::cmd_chart::DrawArgs;
use crate::cmd_check::{manifest_files, scenario_files};
use crate::exit::BadInput;
use anyhow::{Context, Result};
use clap::Args;
use splitbrain_engine::Recorder;
use splitbrain_report::page::{index_page, lesson_page, IndexRow, PageLinks};
use splitbrain_report::{model_of_run, render, view_of_run, ChartFormat};
use splitbrain_scenario::{execute, Plan};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// Arguments of `report`.
#[derive(Args)]
pub struct ReportArgs {
    /// Scenario files or folders (searched recursively for *.json).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output folder (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write a PNG chart per scenario.
    #[arg(long)]
    pub png: bool,
    #[command(flatten)]
    pub draw: DrawArgs,
}

/// `path` with `/` separators and without `.` components (lexical).
fn slash(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir | Component::RootDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let s = parts.join("/");
    if path.has_root() && !s.starts_with('/') {
        format!("/{s}")
    } else {
        s
    }
}

/// Lexically normalised absolute path.
fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `target` relative to the folder `base` (both absolute, normalised).
fn relative(base: &Path, target: &Path) -> PathBuf {
    let b: Vec<Component> = base.components().collect();
    let t: Vec<Component> = target.components().collect();
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// How a path given on the command line is shown in pages: as given if relative, relative
/// to the current folder if below it, else as is.
fn shown(path: &Path, cwd: &Path) -> String {
    if path.is_relative() {
        return slash(path);
    }
    match path.strip_prefix(cwd) {
        Ok(p) => slash(p),
        Err(_) => slash(path),
    }
}

/// A comparison manifest under the paths, loaded: its file, manifest, seeds and designs.
type Loaded = (
    PathBuf,
    splitbrain_lab::compare::Manifest,
    splitbrain_scenario::seeds::SeedRange,
    Vec<splitbrain_lab::compare::Design>,
);

/// Refuses, before anything runs or is written, an output that is an input, two outputs at
/// one path (a scenario named `README` wrote its page where the index then went) and an
/// output path held by a folder, FIFO, socket or device. The outputs are those `run` writes.
fn check_outputs(
    a: &ReportArgs,
    scenarios: &[(PathBuf, Plan)],
    manifests: &[Loaded],
) -> Result<()> {
    let kind = |ext: &str| match ext {
        "html" => "view",
        "svg" => "chart",
        "png" => "PNG chart",
        "csv" => "table",
        _ => "page",
    };
    let mut outputs: Vec<(String, PathBuf)> = vec![("the index".into(), a.out.join("README.md"))];
    let exts: &[&str] = if a.png {
        &["html", "svg", "png", "md"]
    } else {
        &["html", "svg", "md"]
    };
    for (f, plan) in scenarios {
        let name = &plan.scenario.name;
        for ext in exts {
            let what = format!("the {} of {name:?} ({})", kind(ext), f.display());
            outputs.push((what, a.out.join(format!("{name}.{ext}"))));
        }
    }
    let exts: &[&str] = if a.png {
        &["svg", "png", "csv", "md"]
    } else {
        &["svg", "csv", "md"]
    };
    for (m, manifest, _, _) in manifests {
        let name = &manifest.name;
        for ext in exts {
            let what = format!("the {} of {name:?} ({})", kind(ext), m.display());
            outputs.push((what, a.out.join(format!("{name}.{ext}"))));
        }
    }
    let inputs: Vec<(&str, &Path)> = scenarios
        .iter()
        .map(|(f, _)| ("a scenario", f.as_path()))
        .chain(manifests.iter().flat_map(|(m, _, _, designs)| {
            std::iter::once(("a manifest", m.as_path())).chain(
                designs
                    .iter()
                    .map(|d| ("a manifest's design", Path::new(&d.file))),
            )
        }))
        .collect();
    let outs: Vec<(&str, &Path)> = outputs
        .iter()
        .map(|(w, p)| (w.as_str(), p.as_path()))
        .collect();
    crate::atomic::check_distinct(&inputs, &outs)?;
    for (_, p) in &outputs {
        crate::atomic::output_target(p)?;
    }
    Ok(())
}

/// Creates the report folder `out` (and its parents).
///
/// # Errors
/// `BadInput` naming the file in the way, where a file stands at `out` or above it.
fn create_out_dir(out: &Path) -> Result<(), BadInput> {
    std::fs::create_dir_all(out).map_err(|e| {
        // "entity already exists" said little: name the file in the way.
        let why = match out.ancestors().find(|p| p.is_file()) {
            Some(f) if f == out => "it is a file (-o names the folder to write)".to_string(),
            Some(f) => format!("{} is a file, not a folder", f.display()),
            None => e.kind().to_string(),
        };
        BadInput(format!(
            "cannot write the report folder {}: {why}",
            out.display()
        ))
    })
}

/// Runs `report`.
///
/// Long because it is the command's one sequence (read the lessons, run them, write each page and
/// the index in the order the output names them); each step is a call or a few lines of file
/// handling.
pub fn run(a: ReportArgs, roles: &splitbrain_scenario::RoleRegistry) -> Result<u8> {
    let crate::cmd_check::ScenarioFiles {
        files,
        skipped,
        not_regular,
    } = scenario_files(&a.paths)?;
    if let Some((_, why)) = not_regular.first() {
        return Err(BadInput(why.clone()).into());
    }
    for (f, what) in &skipped {
        outln!("skipped   {}  [{what}: not a scenario]", f.display());
    }
    if files.is_empty() {
        return Err(BadInput("no scenario files (*.json) under the given paths".into()).into());
    }
    // Every input is read, and every output named and checked, before any run.
    let mut names = BTreeSet::new();
    let mut scenarios = Vec::new();
    for f in &files {
        let plan = roles.load_file(f)?;
        let name = plan.scenario.name.clone();
        if !names.insert(name.clone()) {
            return Err(BadInput(format!(
                "{}: a second scenario named {name:?}; report file names come from scenario names",
                f.display()
            ))
            .into());
        }
        scenarios.push((f.clone(), plan));
    }
    let mut manifests = Vec::new();
    for m in manifest_files(&a.paths)? {
        let (manifest, seeds, designs) =
            splitbrain_lab::compare::load_manifest(&m).map_err(|e| BadInput(e.to_string()))?;
        let name = manifest.name.clone();
        if !names.insert(name.clone()) {
            return Err(BadInput(format!(
                "{}: a second page named {name:?}; report file names come from names",
                m.display()
            ))
            .into());
        }
        manifests.push((m, manifest, seeds, designs));
    }
    check_outputs(&a, &scenarios, &manifests)?;
    create_out_dir(&a.out)?;
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let out_abs = absolute(&a.out, &cwd);
    let mut rows = Vec::new();
    let mut all_ok = true;
    let mut bounded = false;
    for (f, plan) in &scenarios {
        let name = plan.scenario.name.clone();
        let seed = plan.scenario.seed;
        let result = execute(plan, seed, Some(Recorder::hash_only().keep_events()))?;
        let model = model_of_run(&result);
        let lesson = crate::cmd_chart::lesson_window(&plan.scenario);
        let opts = a.draw.options_in(
            model.end,
            lesson,
            &crate::cmd_chart::lesson_kinds(&plan.scenario),
        )?;
        let svg_name = format!("{name}.svg");
        let png_name = format!("{name}.png");
        let md_name = format!("{name}.md");
        let html_name = format!("{name}.html");
        let view = view_of_run(&result, opts.window).for_scenario(&plan.scenario);
        write_atomic(&a.out.join(&html_name), view.html().as_bytes())?;
        write_atomic(
            &a.out.join(&svg_name),
            &render(&model, &opts, ChartFormat::Svg)?,
        )?;
        if a.png {
            write_atomic(
                &a.out.join(&png_name),
                &render(&model, &opts, ChartFormat::Png)?,
            )?;
        }
        let scenario_arg = shown(f, &cwd);
        let scenario_link = slash(&relative(&out_abs, &absolute(f, &cwd)));
        let links = PageLinks {
            scenario_arg: &scenario_arg,
            scenario_link: &scenario_link,
            chart: &svg_name,
            png: a.png.then_some(png_name.as_str()),
            view: Some(&html_name),
        };
        let lesson = plan.scenario.lesson.as_deref();
        let page = lesson_page(
            &result,
            lesson,
            plan.scenario.description.as_deref(),
            &links,
        );
        write_atomic(&a.out.join(&md_name), page.as_bytes())?;
        all_ok &= result.matches();
        // A run stopped at a bound is BOUND (exit 3), as `check` and `run` say it.
        bounded |= result.bound.is_some();
        outln!(
            "{}  {}  ->  {}",
            if result.bound.is_some() {
                "BOUND   "
            } else if result.matches() {
                "ok      "
            } else {
                "MISMATCH"
            },
            scenario_arg,
            slash(&a.out.join(&md_name))
        );
        if let Some(b) = &result.bound {
            outln!("          {b}");
        }
        let mut row = IndexRow::of(&result, lesson, md_name, svg_name);
        row.view = Some(html_name);
        rows.push(row);
    }
    let comparisons = write_comparisons(&a, &cwd, &out_abs, manifests)?;
    let paths: Vec<String> = a.paths.iter().map(|p| shown(p, &cwd)).collect();
    let mut command = format!(
        "splitbrain report {} -o {}",
        paths.join(" "),
        shown(&a.out, &cwd)
    );
    if a.png {
        command.push_str(" --png");
    }
    let mut index = index_page(&rows, &command);
    if !comparisons.is_empty() {
        index.push_str("\n## Comparisons\n\n");
        index.push_str(&comparisons.join(""));
    }
    write_atomic(&a.out.join("README.md"), index.as_bytes())?;
    outln!("index     {}", slash(&a.out.join("README.md")));
    Ok(if bounded {
        crate::exit::BOUND
    } else if all_ok {
        crate::exit::OK
    } else {
        crate::exit::MISMATCH
    })
}

/// Runs every comparison manifest (`*.compare.json`, loaded from under the folders given) and writes its
/// page (`<name>.md`), chart (`<name>.svg`, `<name>.png` with `--png`) and table
/// (`<name>.csv`). Returns the index lines, one per comparison.
fn write_comparisons(
    a: &ReportArgs,
    cwd: &Path,
    out_abs: &Path,
    manifests: Vec<Loaded>,
) -> Result<Vec<String>> {
    use splitbrain_report::compare::{compare_csv, compare_page, render_compare, ComparePage};
    let mut lines = Vec::new();
    for (m, manifest, seeds, designs) in manifests {
        let name = manifest.name.clone();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let table = splitbrain_lab::compare::compare(&designs, seeds, threads, &|| {})
            .context("a comparison run failed")?;
        let (svg_name, png_name) = (format!("{name}.svg"), format!("{name}.png"));
        let (md_name, csv_name) = (format!("{name}.md"), format!("{name}.csv"));
        write_atomic(
            &a.out.join(&svg_name),
            &render_compare(&table, &manifest.title, ChartFormat::Svg)?,
        )?;
        if a.png {
            write_atomic(
                &a.out.join(&png_name),
                &render_compare(&table, &manifest.title, ChartFormat::Png)?,
            )?;
        }
        write_atomic(&a.out.join(&csv_name), compare_csv(&table).as_bytes())?;
        let manifest_arg = shown(&m, cwd);
        let page = compare_page(
            &table,
            &ComparePage {
                title: &manifest.title,
                lesson: &manifest.lesson,
                description: manifest.description.as_deref(),
                manifest_arg: &manifest_arg,
                chart: &svg_name,
                png: a.png.then_some(png_name.as_str()),
                scenario_links: designs
                    .iter()
                    .map(|d| slash(&relative(out_abs, &absolute(Path::new(&d.file), cwd))))
                    .collect(),
                differences: splitbrain_lab::compare::design_differences(&designs).0,
            },
        );
        write_atomic(&a.out.join(&md_name), page.as_bytes())?;
        outln!(
            "compare   {manifest_arg}  ->  {}",
            slash(&a.out.join(&md_name))
        );
        let labels: Vec<&str> = designs.iter().map(|d| d.label.as_str()).collect();
        lines.push(format!(
            "- [{}]({md_name}): {} over seeds {} ([chart]({svg_name}), [table]({csv_name}))\n",
            manifest.title,
            labels.join(", "),
            table.seeds
        ));
    }
    Ok(lines)
}
