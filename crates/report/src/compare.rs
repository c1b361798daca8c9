//! The comparison of lock designs (`splitbrain compare`): the table as aligned
//! text, markdown and CSV, a chart (one panel per measure, one row per design, each estimate
//! with its 95% interval), and the comparison's page for `report`.

use crate::chart::canvas::{
    line, style, text, text_width, Cv, DrawResult, BLUE, GREEN, GREY, INK, LIGHT, ORANGE, PURPLE,
    SKY, VERMILLION,
};
use crate::chart::{png_surface, svg_surface, ChartError, ChartFormat};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use splitbrain_lab::compare::{CompareTable, DesignRow, Estimate, Proportion};
use std::fmt::Write as _;

/// A measure of the table: its name, unit and how to read it from a row.
struct Measure {
    name: &'static str,
    cell: fn(&DesignRow) -> Cell,
}

/// One cell: a value with its interval, a proportion or an estimate in some unit.
enum Cell {
    /// A proportion of runs, with the design's runs that acquired nothing and its runs (a
    /// rate over runs that acquired nothing is a vacuous zero).
    Rate(Proportion, u64, u64),
    Ms(Estimate),
    Count(Estimate),
}

impl Cell {
    fn value(&self) -> Option<(f64, f64, f64)> {
        match self {
            Cell::Rate(p, ..) => Some((p.rate?, p.lo?, p.hi?)),
            Cell::Ms(e) | Cell::Count(e) => Some((e.value?, e.lo?, e.hi?)),
        }
    }

    /// The cell as text: `12.3% [10.1, 14.8]`, `1234 ms [1100, 1380]`, `-` without data; a
    /// rate over runs some of which acquired no lock says how many:
    /// `0.0% [0.0, 16.1] (20 of 20 runs acquired nothing)`.
    fn text(&self) -> String {
        match self {
            Cell::Rate(p, nothing, runs) => {
                let rate = match (p.rate, p.lo, p.hi) {
                    (Some(r), Some(lo), Some(hi)) => {
                        format!("{} [{}, {}]", pct(r), pct_bare(lo), pct_bare(hi))
                    }
                    // No run decided (every one stopped at a bound or was inconclusive).
                    _ => "n/a".to_string(),
                };
                if *nothing > 0 {
                    format!("{rate} ({nothing} of {runs} runs acquired nothing)")
                } else {
                    rate
                }
            }
            Cell::Ms(e) | Cell::Count(e) => match (e.value, e.lo, e.hi) {
                (Some(v), Some(lo), Some(hi)) => {
                    let unit = if matches!(self, Cell::Ms(_)) {
                        " ms"
                    } else {
                        ""
                    };
                    format!("{}{unit} [{}, {}]", num(v), num(lo), num(hi))
                }
                _ => "-".to_string(),
            },
        }
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}
fn pct_bare(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}
/// A number at a precision that suits its size.
fn num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

const MEASURES: [Measure; 8] = [
    Measure {
        name: "P(two accepted writers)",
        cell: |r| Cell::Rate(r.two_accepted_writers.clone(), r.acquired_nothing, r.runs),
    },
    Measure {
        name: "P(duplicate effect)",
        cell: |r| Cell::Rate(r.duplicate_effect.clone(), r.acquired_nothing, r.runs),
    },
    Measure {
        name: "P(no progress within window)",
        cell: |r| Cell::Rate(r.no_progress.clone(), r.acquired_nothing, r.runs),
    },
    Measure {
        name: "time to acquire, mean",
        cell: |r| Cell::Ms(r.acquire_mean_ms.clone()),
    },
    Measure {
        name: "time to acquire, p99",
        cell: |r| Cell::Ms(r.acquire_p99_ms.clone()),
    },
    Measure {
        name: "takeover after holder fails, mean",
        cell: |r| Cell::Ms(r.takeover_mean_ms.clone()),
    },
    Measure {
        name: "takeover after holder fails, p99",
        cell: |r| Cell::Ms(r.takeover_p99_ms.clone()),
    },
    Measure {
        name: "lock messages per acquisition",
        cell: |r| Cell::Count(r.messages_per_acquisition.clone()),
    },
];

/// The table as aligned text: one row per measure, one column per design.
pub fn compare_text(t: &CompareTable) -> String {
    let mut out = String::new();
    let first = MEASURES.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let cells: Vec<Vec<String>> = MEASURES
        .iter()
        .map(|m| t.rows.iter().map(|r| (m.cell)(r).text()).collect())
        .collect();
    let widths: Vec<usize> = t
        .rows
        .iter()
        .enumerate()
        .map(|(j, r)| {
            cells
                .iter()
                .map(|c| c[j].chars().count())
                .chain([r.label.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let _ = write!(out, "{:<first$}", "");
    for (r, w) in t.rows.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", r.label);
    }
    out.push('\n');
    let _ = write!(out, "{:<first$}", "runs (seeds)");
    for (r, w) in t.rows.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", r.runs);
    }
    out.push('\n');
    for (m, row) in MEASURES.iter().zip(&cells) {
        let _ = write!(out, "{:<first$}", m.name);
        for (c, w) in row.iter().zip(&widths) {
            let _ = write!(out, "  {c:>w$}");
        }
        out.push('\n');
    }
    out
}

/// The table in markdown: one row per measure, one column per design.
pub fn compare_markdown(t: &CompareTable) -> String {
    let mut out = String::from("| measure |");
    for r in &t.rows {
        let _ = write!(out, " {} |", r.label);
    }
    out.push_str("\n|---|");
    for _ in &t.rows {
        out.push_str("---|");
    }
    out.push_str("\n| runs (seeds) |");
    for r in &t.rows {
        let _ = write!(out, " {} |", r.runs);
    }
    out.push('\n');
    for m in &MEASURES {
        let _ = write!(out, "| {} |", m.name);
        for r in &t.rows {
            let _ = write!(out, " {} |", (m.cell)(r).text());
        }
        out.push('\n');
    }
    out
}

/// The table as CSV: one line per design; every measure as value, lower, upper (rates as
/// fractions to 0.001, times in ms and counts at the table's precision), and the counts
/// behind them.
pub fn compare_csv(t: &CompareTable) -> String {
    let mut out = String::from("design,file,runs,bounded,window_ms");
    for m in [
        "two_accepted_writers",
        "duplicate_effect",
        "no_progress",
        "acquire_mean_ms",
        "acquire_p99_ms",
        "takeover_mean_ms",
        "takeover_p99_ms",
        "messages_per_acquisition",
    ] {
        let _ = write!(out, ",{m},{m}_lo,{m}_hi");
    }
    out.push_str(
        ",acquisitions_timed,acquire_censored,takeovers_timed,takeover_censored,\
         runs_acquired_nothing\n",
    );
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    // Values at the precision the table shows (a rate's 0.1% is a fraction's 0.001; times
    // and counts as `num` gives them), trailing zeros dropped: no float noise such as
    // 0.5614970317550455 or 2e-19.
    let trim = |s: String| {
        if s.contains('.') {
            let t = s.trim_end_matches('0').trim_end_matches('.');
            if t == "-0" {
                "0".to_string()
            } else {
                t.to_string()
            }
        } else {
            s
        }
    };
    let frac = |x: Option<f64>| x.map_or(String::new(), |v| trim(format!("{v:.3}")));
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| trim(num(v)));
    for r in &t.rows {
        let _ = write!(
            out,
            "{},{},{},{},{}",
            quote(&r.label),
            quote(&r.file),
            r.runs,
            r.bounded,
            r.window_ms
        );
        for m in &MEASURES {
            match (m.cell)(r) {
                Cell::Rate(p, ..) => {
                    let _ = write!(out, ",{},{},{}", frac(p.rate), frac(p.lo), frac(p.hi));
                }
                Cell::Ms(e) | Cell::Count(e) => {
                    let _ = write!(out, ",{},{},{}", opt(e.value), opt(e.lo), opt(e.hi));
                }
            }
        }
        let _ = writeln!(
            out,
            ",{},{},{},{},{}",
            r.acquire_mean_ms.samples,
            r.acquire_censored,
            r.takeover_mean_ms.samples,
            r.takeover_censored,
            r.acquired_nothing
        );
    }
    out
}

/// Draws the comparison: one panel per measure, one row per design (value and 95% interval).
pub fn render_compare(
    t: &CompareTable,
    title: &str,
    format: ChartFormat,
) -> Result<Vec<u8>, ChartError> {
    let size = chart_size(t);
    match format {
        ChartFormat::Svg => svg_surface(size, |cv| draw(cv, t, title)).map(String::into_bytes),
        ChartFormat::Png => png_surface(size, |cv| draw(cv, t, title)),
    }
}

const W: i32 = 1000;
const TOP: i32 = 64;
const COLS: i32 = 2;
const ROW_H: i32 = 24;
const DESIGN_COLOURS: [RGBColor; 6] = [BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY];

fn panel_h(t: &CompareTable) -> i32 {
    40 + ROW_H * t.rows.len() as i32 + 40
}

fn chart_size(t: &CompareTable) -> (u32, u32) {
    let rows = (MEASURES.len() as i32 + COLS - 1) / COLS;
    (W as u32, (TOP + rows * panel_h(t) + 30) as u32)
}

/// A round upper end for an axis from 0 to at least `x`.
fn axis_max(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return 1.0;
    }
    let step = crate::chart::nice_step(x, 4.0);
    (x / step).ceil() * step
}

fn draw<DB: DrawingBackend>(cv: &Cv<'_, DB>, t: &CompareTable, title: &str) -> DrawResult<DB> {
    cv.fill(&WHITE)?;
    text(
        cv,
        title,
        (16, 14),
        &style(16.0, INK, HPos::Left, VPos::Top),
    )?;
    text(
        cv,
        &format!(
            "seeds {} ({} runs per design); dots: estimate; bars: 95% interval (Wilson for rates, bootstrap over runs otherwise)",
            t.seeds,
            t.rows.first().map_or(0, |r| r.runs)
        ),
        (16, 38),
        &style(11.0, GREY, HPos::Left, VPos::Top),
    )?;
    let label_w = t
        .rows
        .iter()
        .map(|r| text_width(&r.label, 11.0))
        .max()
        .unwrap_or(0)
        + 14;
    let col_w = W / COLS;
    for (k, m) in MEASURES.iter().enumerate() {
        let (col, row) = (k as i32 % COLS, k as i32 / COLS);
        let (px, py) = (col * col_w, TOP + row * panel_h(t));
        let x0 = px + 16 + label_w;
        let x1 = px + col_w - 30;
        let cells: Vec<Cell> = t.rows.iter().map(|r| (m.cell)(r)).collect();
        let is_rate = matches!(cells.first(), Some(Cell::Rate(..)));
        let top = cells
            .iter()
            .filter_map(Cell::value)
            .map(|(v, _, hi)| v.max(hi))
            .fold(0.0, f64::max);
        let max = if is_rate {
            axis_max(top.max(0.05)).min(1.0)
        } else {
            axis_max(top)
        };
        let x_of = |v: f64| x0 + ((x1 - x0) as f64 * (v / max).clamp(0.0, 1.0)).round() as i32;
        text(
            cv,
            m.name,
            (px + 16, py + 8),
            &style(13.0, INK, HPos::Left, VPos::Top),
        )?;
        let y_top = py + 32;
        let y_bot = y_top + ROW_H * t.rows.len() as i32;
        for q in 0..=4 {
            let v = max * q as f64 / 4.0;
            let x = x_of(v);
            line(cv, vec![(x, y_top), (x, y_bot)], LIGHT.stroke_width(1))?;
            let label = if is_rate {
                format!("{}%", num(v * 100.0))
            } else {
                num(v)
            };
            text(
                cv,
                &label,
                (x, y_bot + 4),
                &style(10.0, GREY, HPos::Center, VPos::Top),
            )?;
        }
        let unit = match cells.first() {
            Some(Cell::Ms(_)) => "ms",
            Some(Cell::Count(_)) => "messages",
            _ => "of runs",
        };
        text(
            cv,
            unit,
            (x1, y_bot + 18),
            &style(10.0, GREY, HPos::Right, VPos::Top),
        )?;
        line(cv, vec![(x0, y_top), (x0, y_bot)], INK.stroke_width(1))?;
        for (j, (r, c)) in t.rows.iter().zip(&cells).enumerate() {
            let y = y_top + ROW_H * j as i32 + ROW_H / 2;
            let colour = DESIGN_COLOURS[j % DESIGN_COLOURS.len()];
            text(
                cv,
                &r.label,
                (x0 - 8, y),
                &style(11.0, INK, HPos::Right, VPos::Center),
            )?;
            match c.value() {
                // Every run acquired nothing: a zero here would read as safety.
                Some(_) if matches!(c, Cell::Rate(_, nothing, runs) if nothing == runs) => {
                    text(
                        cv,
                        "vacuous: no run acquired a lock",
                        (x0 + 6, y),
                        &style(10.0, GREY, HPos::Left, VPos::Center),
                    )?;
                }
                Some((v, lo, hi)) => {
                    let (xl, xh) = (x_of(lo), x_of(hi));
                    line(cv, vec![(xl, y), (xh, y)], colour.stroke_width(2))?;
                    for xc in [xl, xh] {
                        line(cv, vec![(xc, y - 4), (xc, y + 4)], colour.stroke_width(1))?;
                    }
                    cv.draw(&Circle::new((x_of(v), y), 4, colour.filled()))?;
                }
                None => {
                    text(
                        cv,
                        "no samples",
                        (x0 + 6, y),
                        &style(10.0, GREY, HPos::Left, VPos::Center),
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// What the comparison page links to and how it was made.
pub struct ComparePage<'a> {
    /// Title.
    pub title: &'a str,
    /// What it teaches.
    pub lesson: &'a str,
    /// The workload and nemesis in words.
    pub description: Option<&'a str>,
    /// The manifest as shown in commands.
    pub manifest_arg: &'a str,
    /// The chart (SVG) and, if written, the PNG, relative to the page.
    pub chart: &'a str,
    /// The PNG chart, if written.
    pub png: Option<&'a str>,
    /// Each design's scenario file, relative to the page, in table order.
    pub scenario_links: Vec<String>,
    /// How the designs differ in what they would otherwise share (the manifest's
    /// `differ_on_purpose`), one line per design and part; empty when they share the workload
    /// and the nemesis.
    pub differences: Vec<String>,
}

/// The comparison's page: lesson, table, chart, what the numbers mean and what they do not,
/// and the command that reproduces them.
pub fn compare_page(t: &CompareTable, p: &ComparePage<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", crate::page::md_text(p.title));
    let _ = writeln!(out, "{}\n", crate::page::md_text(p.lesson));
    if let Some(d) = p.description {
        let _ = writeln!(out, "{d}\n");
    }
    if p.differences.is_empty() {
        let _ = writeln!(
            out,
            "Designs (one scenario file each, same workload and nemesis):\n"
        );
    } else {
        let _ = writeln!(
            out,
            "Designs (one scenario file each; they differ on purpose beyond the lock, see \
             below):\n"
        );
    }
    for (r, link) in t.rows.iter().zip(&p.scenario_links) {
        let _ = writeln!(out, "- **{}**: [`{}`]({link})", r.label, r.scenario);
    }
    if !p.differences.is_empty() {
        let _ = writeln!(out, "\nWhat differs besides the lock, on purpose:\n");
        for d in &p.differences {
            let _ = writeln!(out, "- {d}");
        }
    }
    let _ = writeln!(
        out,
        "\n## Results over seeds {} ({} runs per design)\n",
        t.seeds,
        t.rows.first().map_or(0, |r| r.runs)
    );
    out.push_str(&compare_markdown(t));
    let _ = writeln!(out, "\nIntervals: {}.\n", t.intervals);
    let _ = writeln!(out, "![comparison chart]({})\n", p.chart);
    if let Some(png) = p.png {
        let _ = writeln!(out, "PNG: [{png}]({png})\n");
    }
    let _ = writeln!(out, "## What the numbers mean\n");
    let _ = writeln!(
        out,
        "- **P(two accepted writers)** is the fraction of runs in which the storage accepted a \
         write from a holder after a later holder's write (`no_two_accepted_writers` violated): \
         the corruption a lock for correctness must prevent. It needs a holder to be stopped \
         between its validity check and its write, so it depends on how often the nemesis lands \
         in that window; with fencing the storage rejects such a write whatever the timing. \
         Idempotent work does not lower it: the stale write is still accepted, as a no-op."
    );
    let _ = writeln!(
        out,
        "- **P(duplicate effect)** is the fraction of runs in which one piece of work took effect \
         twice: a job id applied twice, or, without job ids, two clients whose holds overlapped \
         in true time both changing the storage. Fencing stops the stale write that lands after \
         the newer one; it does not stop one that lands first (then both take effect, in order). \
         Idempotent work (job ids) makes the second effect a no-op whatever the order."
    );
    let _ = writeln!(
        out,
        "- **P(no progress within window)** is the fraction of runs with a stall: a client \
         waited and nobody validly held the lock for longer than `lock_progress`'s window \
         ({} ms here) while a majority of lock servers was up.",
        num(t.rows.first().map_or(0.0, |r| r.window_ms))
    );
    let _ = writeln!(
        out,
        "- **Time to acquire** runs from a client's first request after it last held the lock \
         to its acquisition, retries and waiting for the current holder included; with three \
         clients contending it is mostly queueing, not protocol latency. **Takeover** runs from \
         the crash or pause of a client that believed it held the lock to another client's \
         acquisition: about the TTL, since no design can tell a slow holder from a dead one \
         sooner. Waits and failures still open when a run ended are left out (counted as \
         censored in the CSV), which biases both slightly low."
    );
    let _ = writeln!(
        out,
        "- **Lock messages per acquisition** counts every message but the storage's writes and \
         acks, divided by acquisitions: Raft's include its heartbeats and replication, which a \
         busier lock would share among more acquisitions.\n"
    );
    let _ = writeln!(out, "## What they do not mean\n");
    let _ = writeln!(
        out,
        "- They are rates under this nemesis (client pauses and crashes only, a fault every few \
         seconds), not in production: real pauses are rarer, and the lock servers here never \
         fail, so Raft's tolerance of a replica crash and the lease service's single point of \
         failure do not show (lessons 17 and 21 show them).\n\
         - Zero observed in N runs is not zero: the upper end of the interval (about 3/N) is \
         the honest bound. A design's safety comes from its argument (fencing tokens that only \
         grow, checked by the storage), which the runs illustrate but do not prove.\n\
         - A rate over runs in which no client acquired a lock is a vacuous zero: nothing was \
         held, so nothing could be written twice, and no progress is owed while no majority of \
         lock servers is up. The table says how many runs acquired nothing (`N of M runs \
         acquired nothing`, the CSV's `runs_acquired_nothing`); the chart draws no point for \
         a design that acquired nothing in every run.\n\
         - Times are simulated true time under the scenario's network delays (1-5 ms); they \
         compare the designs' structure (TTL waits, retries, rounds), not implementations.\n"
    );
    let _ = writeln!(out, "## Reproduce\n");
    let _ = writeln!(
        out,
        "```sh\nsplitbrain compare {} -o compare-out/\n```",
        p.manifest_arg
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(v: f64) -> Estimate {
        Estimate {
            value: Some(v),
            lo: Some(v * 0.9),
            hi: Some(v * 1.1),
            samples: 10,
        }
    }
    fn prop(k: u64) -> Proportion {
        Proportion::of(k, 100)
    }
    fn row(label: &str, k: u64) -> DesignRow {
        DesignRow {
            label: label.to_string(),
            file: format!("{label}.json"),
            scenario: label.to_string(),
            runs: 100,
            bounded: 0,
            window_ms: 10_000.0,
            two_accepted_writers: prop(k),
            duplicate_effect: prop(0),
            no_progress: prop(0),
            acquired_nothing: 0,
            acquire_mean_ms: est(1500.0),
            acquire_p99_ms: est(4000.0),
            acquire_censored: 2,
            takeover_mean_ms: est(3000.0),
            takeover_p99_ms: Estimate {
                value: None,
                lo: None,
                hi: None,
                samples: 0,
            },
            takeover_censored: 1,
            messages_per_acquisition: est(12.0),
        }
    }
    fn table() -> CompareTable {
        CompareTable {
            seeds: "0..100".to_string(),
            bootstrap_resamples: 1000,
            intervals: "test".to_string(),
            rows: vec![row("lease + fencing", 0), row("Redlock, x", 25)],
        }
    }

    #[test]
    fn the_text_table_is_aligned_with_intervals() {
        let text = compare_text(&table());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 10);
        assert!(lines[2].starts_with("P(two accepted writers)"));
        assert!(lines[2].ends_with("25.0% [17.5, 34.3]"), "{}", lines[2]);
        assert!(lines[2].contains("0.0% [0.0, 3.7]"), "{}", lines[2]);
        assert!(lines[8].contains("  -"), "{}", lines[8]);
        assert!(lines[9].contains("12.0 [10.8, 13.2]"), "{}", lines[9]);
        // Every line is as wide as the header.
        let w = lines[0].chars().count();
        assert!(lines.iter().all(|l| l.chars().count() == w), "{text}");
    }

    #[test]
    fn csv_quotes_labels_and_leaves_missing_estimates_empty() {
        let csv = compare_csv(&table());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let cols = lines[0].split(',').count();
        assert!(
            lines[2].starts_with("\"Redlock, x\",Redlock, x.json")
                || lines[2].starts_with("\"Redlock, x\",\"Redlock, x.json\"")
        );
        assert!(lines[1].contains(",,,"), "{}", lines[1]);
        assert_eq!(lines[1].split(',').count(), cols);
    }

    /// The CSV writes values at the table's precision, not every float as Rust writes it (a
    /// Wilson lower bound of 2e-19 for 0 of 1000, bounds such as 0.5614970317550455, where
    /// the table shows 0.0 and 56.1%).
    #[test]
    fn csv_values_are_at_the_tables_precision_without_float_noise() {
        let mut t = table();
        for r in &mut t.rows {
            r.runs = 1000;
            r.two_accepted_writers = Proportion::of(0, 1000);
            r.duplicate_effect = Proportion::of(1000, 1000);
            r.no_progress = Proportion::of(0, 3);
            r.acquire_mean_ms = Estimate {
                value: Some(1915.0278752439024),
                lo: Some(1681.8719788846154),
                hi: Some(2395.5484775),
                samples: 10,
            };
            r.messages_per_acquisition = Estimate {
                value: Some(8.78048780487805),
                lo: Some(8.466666666666667),
                hi: Some(9.0),
                samples: 10,
            };
        }
        let csv = compare_csv(&t);
        let row = csv.lines().nth(1).unwrap();
        assert!(!row.contains("e-"), "{row}");
        assert!(
            row.split(',')
                .skip(2)
                .all(|f| f.split_once('.').map_or(true, |(_, d)| d.len() <= 3)),
            "{row}"
        );
        assert!(
            row.contains(",0,0,0.004,1,0.996,1,0,0,0.561,1915,1682,2396,"),
            "{row}"
        );
        assert!(row.contains(",8.78,8.47,9,"), "{row}");
    }

    #[test]
    fn the_chart_draws_as_svg_and_png() {
        let svg = render_compare(&table(), "t", ChartFormat::Svg).unwrap();
        let s = String::from_utf8(svg).unwrap();
        assert!(s.contains("P(two accepted writers)") && s.contains("no samples"));
        let png = render_compare(&table(), "t", ChartFormat::Png).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    /// A design whose only Redis instance is down acquires nothing in any run; its 0.0% rates
    /// (two accepted writers, duplicate effect, no progress) must not read as safety. Each
    /// rate says how many runs acquired nothing; the CSV counts them; the chart draws no point
    /// for them.
    #[test]
    fn rates_over_runs_that_acquired_nothing_say_so() {
        let mut t = table();
        t.rows[1].acquired_nothing = 100;
        t.rows[1].two_accepted_writers = prop(0);
        let text = compare_text(&t);
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines[2..5] {
            assert!(
                line.ends_with("0.0% [0.0, 3.7] (100 of 100 runs acquired nothing)"),
                "{text}"
            );
        }
        let md = compare_markdown(&t);
        assert!(
            md.contains("| P(duplicate effect) | 0.0% [0.0, 3.7] | 0.0% [0.0, 3.7] (100 of 100 runs acquired nothing) |"),
            "{md}"
        );
        let csv = compare_csv(&t);
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[0].ends_with(",takeover_censored,runs_acquired_nothing"),
            "{csv}"
        );
        assert!(lines[1].ends_with(",1,0"), "{csv}");
        assert!(lines[2].ends_with(",1,100"), "{csv}");
        let svg = String::from_utf8(render_compare(&t, "t", ChartFormat::Svg).unwrap()).unwrap();
        assert_eq!(svg.matches("vacuous: no run acquired a lock").count(), 3);
    }
}
