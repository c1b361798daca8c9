//! The browser view in a real browser: headless Chromium loads each lesson's page from a file
//! URL, the page's scripted hash (`#step=N&keys=...&click=ID`) steps the cursor with key
//! presses and clicks a violation, and the test reads the state the page shows from the
//! dumped DOM. A screenshot of lesson 05 is checked for shape (size, lanes drawn), not pixels.
//!
//! Needs `chromium` (Debian's package) on PATH. Without it the test is skipped with a note,
//! unless `CI` is set: under CI it must run.

use splitbrain_check::WallClocks;
use splitbrain_engine::{NodeId, Recorder, SimTime, WallTime};
use splitbrain_report::{view_of_run, ViewModel};
use splitbrain_scenario::{execute, load_file};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn lessons() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The browser, or `None` (skip) when it is absent outside CI.
fn browser_or_skip() -> Option<PathBuf> {
    match chromium() {
        Some(b) => Some(b),
        None if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false") => {
            panic!("CI is set but chromium is not installed: .ci/run installs it (apt-get install -y chromium)")
        }
        None => {
            eprintln!(
                "SKIPPED: the browser test needs `chromium` on PATH (apt-get install -y chromium); \
                 set CI=true to make its absence a failure"
            );
            None
        }
    }
}

/// Runs headless Chromium with `args` then `url`; returns its standard output. Bounded.
fn run_browser(browser: &Path, dir: &Path, args: &[String], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out_path = dir.join("stdout.txt");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    // A bound on the external process: 1800 polls 50 ms apart (about 90 s), counted rather
    // than timed so no OS clock is read.
    for poll in 0.. {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if poll >= 1800 {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s for {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(&out_path).unwrap()
}

/// The text of the element with `id` in a dumped DOM (tags stripped).
fn text_of(dom: &str, id: &str) -> String {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element #{id}"));
    let open_end = start + dom[start..].find('>').unwrap() + 1;
    let tag_start = dom[..start].rfind('<').unwrap();
    let tag: String = dom[tag_start + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    // Nesting of the same tag is not used by the elements read here.
    let close = open_end + dom[open_end..].find(&format!("</{tag}>")).unwrap();
    strip_tags(&dom[open_end..close])
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in s.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
}

/// The rows of the cursor's table: `(node, monotonic, wall, believes)`.
fn state_rows(dom: &str) -> Vec<(String, String, String, String)> {
    let body = &dom[dom.find("<tbody>").unwrap()..dom.find("</tbody>").unwrap()];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            let cells: Vec<String> = row
                .split("<td")
                .skip(1)
                .map(|c| strip_tags(&format!("<td{c}")))
                .collect();
            assert_eq!(cells.len(), 4, "four cells in {row}");
            (
                cells[0].clone(),
                cells[1].clone(),
                cells[2].clone(),
                cells[3].clone(),
            )
        })
        .collect()
}

fn secs(ns: u64) -> String {
    format!("{:.3} s", ns as f64 / 1e9)
}

/// A wall reading as the page's clock column shows it: RFC 3339 UTC with milliseconds,
/// rounded half up (the narration's one time style).
fn wall_ms(w: WallTime) -> String {
    WallTime((w.0 + 500_000).div_euclid(1_000_000) * 1_000_000).rfc3339()
}

struct Page {
    view: ViewModel,
    url: String,
    /// The run's node names, by node index.
    names: Vec<String>,
    /// The run's clocks, as the checkers compute them.
    clocks: WallClocks,
}

fn page(dir: &Path, file: &Path) -> Page {
    let plan = load_file(file).unwrap();
    let result = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let view = view_of_run(&result, None);
    let path = dir.join(format!("{}.html", plan.scenario.name));
    std::fs::write(&path, view.html()).unwrap();
    Page {
        view,
        url: format!("file://{}", path.display()),
        clocks: WallClocks::new(&result.record),
        names: result.record.names.clone(),
    }
}

#[test]
fn every_lesson_page_steps_in_a_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for file in lessons() {
        let p = page(dir.path(), &file);
        let n = p.view.steps.len();
        assert!(n >= 1, "{}: no step to show", file.display());
        // Start at step 1 (0-based), press Right twice and Left once: step 2. A lesson with
        // fewer steps (a Kubernetes Lease record run observes little) is stepped to its last.
        let (target, url) = if n >= 3 {
            (
                2,
                format!("{}#step=1&keys=ArrowRight,ArrowRight,ArrowLeft", p.url),
            )
        } else {
            (
                n - 1,
                format!("{}#step=0&keys=ArrowRight,ArrowRight", p.url),
            )
        };
        let dom = run_browser(&browser, dir.path(), &["--dump-dom".into()], &url);
        assert!(
            dom.contains("data-ready=\"yes\""),
            "{}: page script did not finish",
            file.display()
        );
        assert_eq!(
            text_of(&dom, "step-index"),
            format!("step {} of {n}", target + 1),
            "{}",
            file.display()
        );
        let step = &p.view.steps[target];
        assert_eq!(text_of(&dom, "cursor-time"), secs(step.t));
        assert_eq!(text_of(&dom, "step-text"), step.text);
        let rows = state_rows(&dom);
        let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        let lanes: Vec<&str> = p.view.lanes.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, lanes, "{}: one row per node", file.display());
        for (lane, row) in rows.iter().enumerate() {
            // The page computes the clocks from the lane's pieces; they read as the
            // checkers' clocks do.
            // A thread's lane (`node · thread k`) reads its node's clocks.
            let owner = &p.view.lanes[lane].node;
            let node = NodeId(p.names.iter().position(|n| n == owner).unwrap() as u32);
            let at = SimTime(step.t);
            let mono = p.clocks.mono(node, at).0;
            assert_eq!(row.1, format!("{:.6} s", mono as f64 / 1e9));
            // The wall clock as the narration writes it (RFC 3339 UTC), not Unix seconds.
            assert_eq!(row.2, wall_ms(p.clocks.wall(node, at)));
            assert!(
                row.2.len() >= 24 && row.2.as_bytes()[10] == b'T' && row.2.ends_with('Z'),
                "{}: wall clock {:?} is not an RFC 3339 UTC time",
                file.display(),
                row.2
            );
        }
        // Heartbeats are hidden when they dominate; every other kind is shown.
        for k in &p.view.kinds {
            let checked = dom.contains(&format!("id=\"kind-{}\" checked", k.name));
            assert_eq!(checked, k.shown, "{}: kind {}", file.display(), k.name);
        }
    }
}

/// The clocks the page computes from each lane's clock pieces read as the checkers' clocks
/// at every row, after a wall clock step (lesson 13) and on clocks at 3x (lesson 19b): the
/// last step of each run, where every clock fault is behind the cursor.
#[test]
fn the_page_reads_stepped_and_drifting_clocks_as_the_checkers_do() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for lesson in ["13-redlock-clock-step", "19b-k8s-lease-clock-3x"] {
        let file = lessons()
            .into_iter()
            .find(|f| f.to_string_lossy().contains(lesson))
            .unwrap();
        let p = page(dir.path(), &file);
        let last = p.view.steps.len() - 1;
        let url = format!("{}#step={last}", p.url);
        let dom = run_browser(&browser, dir.path(), &["--dump-dom".into()], &url);
        let at = SimTime(p.view.steps[last].t);
        let mut moved = 0;
        for row in state_rows(&dom) {
            let node = NodeId(p.names.iter().position(|n| *n == row.0).unwrap() as u32);
            let mono = p.clocks.mono(node, at).0;
            let wall = p.clocks.wall(node, at);
            assert_eq!(
                row.1,
                format!("{:.6} s", mono as f64 / 1e9),
                "{lesson} {}",
                row.0
            );
            assert_eq!(row.2, wall_ms(wall), "{lesson} {}", row.0);
            let start = splitbrain_engine::DEFAULT_WALL_START_NS;
            moved += usize::from(mono != at.0 || wall.0 != start + at.0 as i64);
        }
        assert!(
            moved > 0,
            "{lesson}: no clock differs from true time at the last step"
        );
    }
}

#[test]
fn lesson_05_cursor_shows_the_paused_holder_and_the_violation_causes() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = lessons()
        .into_iter()
        .find(|f| f.to_string_lossy().contains("05-lease-gc-pause-unfenced"))
        .unwrap();
    let p = page(dir.path(), &file);
    let pause = p
        .view
        .steps
        .iter()
        .position(|s| s.text.contains("PAUSED"))
        .expect("the pause is a step");
    // Step onto the pause with the keyboard from the step before it, then click violation 0.
    let url = format!("{}#step={}&keys=n&click=violation-0", p.url, pause - 1);
    let dom = run_browser(&browser, dir.path(), &["--dump-dom".into()], &url);
    assert_eq!(text_of(&dom, "cursor-time"), "2.002 s");
    let rows = state_rows(&dom);
    let client1 = rows.iter().find(|r| r.0 == "client-1").unwrap();
    assert_eq!(client1.3, "holds lock \u{00b7} token 33; PAUSED");
    // Regression (new-user pass): the wall clock read `1767225602.002000 s` (Unix seconds);
    // it is the UTC time the narration writes.
    assert_eq!(client1.2, "2026-01-01T00:00:02.002Z");
    let locks = rows.iter().find(|r| r.0 == "locks").unwrap();
    assert_eq!(locks.3, "token 33 \u{2192} client-1");
    let details = text_of(&dom, "details");
    let v = &p.view.violations[0];
    assert!(
        details.starts_with(&format!("{} violated", v.invariant)),
        "{details}"
    );
    assert!(details.contains("evidence:"), "{details}");
    assert!(details.contains("caused by:"), "{details}");
    assert!(details.contains("client-1 was paused"), "{details}");

    // A screenshot, compared for shape: its size, and lanes that are drawn (not blank).
    let shot = dir.path().join("lesson-05.png");
    run_browser(
        &browser,
        dir.path(),
        &[
            "--window-size=1600,700".into(),
            format!("--screenshot={}", shot.display()),
        ],
        &format!("{}#step={pause}", p.url),
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1600, 700));
    let ch = info.color_type.samples();
    let px = |x: u32, y: u32| {
        let i = (y as usize * info.width as usize + x as usize) * ch;
        (buf[i], buf[i + 1], buf[i + 2])
    };
    // The plot area (right of the lane labels, left of the side panel, under the header).
    let (mut inked, mut total, mut pink) = (0usize, 0usize, 0usize);
    for y in (120..420).step_by(2) {
        for x in (160..1150).step_by(2) {
            let (r, g, b) = px(x, y);
            total += 1;
            if (r as u32 + g as u32 + b as u32) < 720 {
                inked += 1;
            }
            // Token 33's tone (Okabe-Ito reddish purple, 204,121,167) on client-1's belief.
            if (r as i32 - 204).abs() < 30
                && (g as i32 - 121).abs() < 30
                && (b as i32 - 167).abs() < 30
            {
                pink += 1;
            }
        }
    }
    assert!(
        inked * 10 > total,
        "lanes look blank: {inked} of {total} pixels inked"
    );
    assert!(pink > 200, "token 33's belief band not visible ({pink} px)");
    if let Ok(keep) = std::env::var("SPLITBRAIN_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
