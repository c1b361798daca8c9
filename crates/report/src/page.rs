//! Report pages: one markdown page per lesson (what it teaches, invariants with expected and
//! actual outcome, metrics, the command that reproduces it, the chart) and the index table.
//!
//! Pages are pure functions of the run and of paths the caller gives relative to the output
//! folder, so regenerating them gives identical bytes (no dates, no absolute paths).

use crate::summary::{metrics_text, reproduce_command};
use splitbrain_check::Outcome;
use splitbrain_scenario::RunResult;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Where a lesson's files are, as the page should mention them.
pub struct PageLinks<'a> {
    /// The scenario file as a command-line argument (e.g. `scenarios/03-....json`).
    pub scenario_arg: &'a str,
    /// The scenario file relative to the output folder (for a link).
    pub scenario_link: &'a str,
    /// The chart file name in the output folder (e.g. `bully-partition-split-brain.svg`).
    pub chart: &'a str,
    /// The PNG chart, if one was written.
    pub png: Option<&'a str>,
    /// The browser view (HTML page to step through), if one was written.
    pub view: Option<&'a str>,
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Holds => "holds",
        Outcome::Violated => "**violated**",
        Outcome::Inconclusive => "inconclusive",
    }
}

/// Escapes `|` for a table cell and keeps it on one line.
fn cell(s: &str) -> String {
    md_text(s).replace('|', "\\|")
}

/// Scenario text (a lesson, a description, a manifest's title) as markdown that shows it as
/// written: `&`, `<` and `>` as entities, since markdown renderers (a book, a static-site
/// generator) pass raw HTML through and `<script>` in a lesson would run there; a line break
/// as a space, so the text stays one paragraph; a control character as U+FFFD.
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() || crate::summary::is_bidi_control(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The markdown page of one lesson.
pub fn lesson_page(
    r: &RunResult,
    lesson: Option<&str>,
    description: Option<&str>,
    links: &PageLinks<'_>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", r.name);
    if let Some(l) = lesson {
        let _ = writeln!(out, "**Lesson.** {}\n", md_text(l));
    }
    if let Some(d) = description {
        let _ = writeln!(out, "{}\n", md_text(d));
    }
    let _ = writeln!(
        out,
        "Scenario: [`{}`]({}) \u{00b7} seed {} \u{00b7} {} simulated \u{00b7} {} nodes \u{00b7} {}\n",
        links.scenario_arg,
        links.scenario_link,
        r.seed,
        r.record.end,
        r.record.names.len(),
        crate::summary::faults_applied(&r.record)
    );
    let _ = writeln!(out, "![timeline of {}]({})\n", r.name, links.chart);
    match (links.png, links.view) {
        (Some(p), Some(v)) => {
            let _ = writeln!(
                out,
                "([PNG]({p}) \u{00b7} [step through it in the browser]({v}))\n"
            );
        }
        (Some(p), None) => {
            let _ = writeln!(out, "([PNG]({p}))\n");
        }
        (None, Some(v)) => {
            let _ = writeln!(out, "([step through it in the browser]({v}))\n");
        }
        (None, None) => {}
    }
    let _ = writeln!(out, "## Invariants\n");
    let _ = writeln!(out, "| invariant | expected | outcome | as expected |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (res, e) in r.report.results.iter().zip(&r.expectations) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            res.name,
            e.expected_text(),
            match &e.vacuous {
                Some(why) => format!("holds (vacuous: {})", cell(why)),
                None => outcome_word(e.got).to_string(),
            },
            if e.matches { "yes" } else { "**NO**" }
        );
    }
    let _ = writeln!(out);
    for res in &r.report.results {
        let vs = res.verdict.violations();
        if let splitbrain_check::Verdict::Inconclusive { reason } = &res.verdict {
            let _ = writeln!(out, "- `{}` inconclusive: {}", res.name, cell(reason));
        }
        for v in vs.iter().take(3) {
            let window = v.window();
            let _ = writeln!(
                out,
                "- `{}` violated {window} ({}): {}",
                v.invariant,
                v.nodes.join(", "),
                cell(&v.summary)
            );
        }
        if vs.len() > 3 {
            let _ = writeln!(
                out,
                "- `{}`: {} more violation windows",
                res.name,
                vs.len() - 3
            );
        }
    }
    if r.report
        .results
        .iter()
        .any(|x| !x.verdict.violations().is_empty())
    {
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## Metrics\n");
    let _ = writeln!(out, "```text\n{}```\n", metrics_text(&r.report.metrics));
    let _ = writeln!(out, "## Reproduce\n");
    let _ = writeln!(out, "```sh");
    let _ = writeln!(out, "{}", reproduce_command(links.scenario_arg, r.seed));
    // `--hide HEARTBEAT` only where there are heartbeats (it printed "matches no message" on
    // the Redis lessons).
    let hide = if r.stats.messages.contains_key("HEARTBEAT") {
        " --hide HEARTBEAT"
    } else {
        ""
    };
    let word = splitbrain_scenario::error::shell_word;
    let _ = writeln!(
        out,
        "splitbrain run {} --narrate{hide}",
        word(links.scenario_arg)
    );
    let _ = writeln!(
        out,
        "splitbrain run {} --chart {}",
        word(links.scenario_arg),
        word(links.chart)
    );
    let _ = writeln!(out, "```");
    out
}

/// One row of the index.
pub struct IndexRow {
    /// Scenario name.
    pub name: String,
    /// The page, relative to the output folder.
    pub page: String,
    /// The chart, relative to the output folder.
    pub chart: String,
    /// The browser view, relative to the output folder.
    pub view: Option<String>,
    /// The lesson in one sentence.
    pub lesson: String,
    /// `invariant: outcome` per checked invariant.
    pub outcomes: Vec<(String, Outcome)>,
    /// Per checked invariant that held vacuously (its premise never occurred), the missing
    /// premise in words, as the page says it: `invariant -> why`.
    pub vacuous: BTreeMap<String, String>,
    /// Whether every outcome matched its expectation.
    pub as_expected: bool,
}

impl IndexRow {
    /// The row of a run.
    pub fn of(r: &RunResult, lesson: Option<&str>, page: String, chart: String) -> IndexRow {
        IndexRow {
            name: r.name.clone(),
            page,
            chart,
            view: None,
            lesson: lesson.unwrap_or("").to_string(),
            outcomes: r
                .expectations
                .iter()
                .map(|e| (e.invariant.to_string(), e.got))
                .collect(),
            vacuous: r
                .expectations
                .iter()
                .filter_map(|e| Some((e.invariant.to_string(), e.vacuous.clone()?)))
                .collect(),
            as_expected: r.matches(),
        }
    }
}

/// The index page (`README.md` of the reports folder). `command` is the line that
/// regenerates the folder.
pub fn index_page(rows: &[IndexRow], command: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# splitbrain lessons\n");
    let _ = writeln!(
        out,
        "Each lesson is a scenario file run with its own seed: a timeline chart, the invariants \
         with their expected and actual outcome, metrics, and the command that reproduces it.\n"
    );
    let _ = writeln!(
        out,
        "Regenerate this folder with `{command}` (the output is byte-for-byte reproducible).\n"
    );
    let _ = writeln!(
        out,
        "| lesson | what it teaches | outcomes | as expected | chart | browser |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for r in rows {
        let outcomes: Vec<String> = r
            .outcomes
            .iter()
            .map(|(n, o)| match o {
                Outcome::Holds => match r.vacuous.get(n) {
                    Some(why) => format!("`{n}` holds (vacuous: {})", cell(why)),
                    None => format!("`{n}` holds"),
                },
                Outcome::Violated => format!("`{n}` **violated**"),
                Outcome::Inconclusive => format!("`{n}` inconclusive"),
            })
            .collect();
        let _ = writeln!(
            out,
            "| [{}]({}) | {} | {} | {} | [chart]({}) | {} |",
            r.name,
            r.page,
            cell(&r.lesson),
            outcomes.join("<br>"),
            if r.as_expected { "yes" } else { "**NO**" },
            r.chart,
            r.view.as_ref().map_or_else(
                || "\u{2013}".to_string(),
                |v| format!("[step through]({v})")
            )
        );
    }
    if let Some(first) = rows
        .iter()
        .find(|r| r.outcomes.iter().any(|(_, o)| *o == Outcome::Violated))
        .or(rows.first())
    {
        let _ = writeln!(out, "\n## {}\n", first.name);
        let _ = writeln!(out, "![timeline of {}]({})", first.name, first.chart);
    }
    out
}
