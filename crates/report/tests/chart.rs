//! Timeline charts: structure, not pixels. The lessons' charts show what they teach, a chart
//! drawn from a saved trace is the live run's chart byte for byte, and rendering is
//! deterministic.

use splitbrain_engine::{Recorder, SimTime};
use splitbrain_report::chart_model::{BandKind, MarkKind};
use splitbrain_report::{
    model_of_run, read_trace, render_png, render_svg, ChartOptions, TimelineModel,
};
use splitbrain_scenario::{execute, load_file, RunResult, TraceHeader};
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

fn lesson(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(file)
}

fn lessons() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(lesson(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// A writer the recorder can own while the test keeps a handle on the bytes.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs a lesson keeping its events, and also writes its JSON Lines trace (header first).
fn run_with_trace(path: &std::path::Path) -> (RunResult, String) {
    let plan = load_file(path).unwrap();
    let seed = plan.scenario.seed;
    let buf = Shared::default();
    let mut header = serde_json::to_vec(&TraceHeader::new(&plan, seed)).unwrap();
    header.push(b'\n');
    buf.0.borrow_mut().extend_from_slice(&header);
    let rec = Recorder::hash_only()
        .keep_events()
        .with_writer(Box::new(buf.clone()));
    let result = execute(&plan, seed, Some(rec)).unwrap();
    let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
    (result, text)
}

/// Whether the SVG has a text element reading exactly `s`.
fn has_text(svg: &str, s: &str) -> bool {
    svg.contains(&format!(">\n{s}\n</text>"))
}

fn model(file: &str) -> TimelineModel {
    let (r, _) = run_with_trace(&lesson(file));
    model_of_run(&r)
}

#[test]
fn fenced_lesson_shows_the_rejected_write_with_token_33() {
    let m = model("06-lease-gc-pause-fenced.json");
    let rejected: Vec<_> = m
        .marks
        .iter()
        .filter_map(|x| match &x.kind {
            MarkKind::WriteRejected { writer, token } => Some((writer.as_str(), *token)),
            _ => None,
        })
        .collect();
    assert_eq!(rejected, vec![("client-1", Some(33))]);
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(
        has_text(&svg, "33 rejected"),
        "rejected write label missing"
    );
    assert!(svg.contains("lease-gc-pause-fenced"));
    assert!(svg.contains("seed 7"));
    // The paused holder: a pause band on client-1, and its belief goes stale at the server.
    let c1 = m.lanes.iter().position(|l| l.name == "client-1").unwrap();
    assert!(m
        .bands
        .iter()
        .any(|b| b.lane == c1 && b.kind == BandKind::Paused));
    assert!(m
        .bands
        .iter()
        .any(|b| b.lane == c1 && b.kind == BandKind::Stale));
    assert!(has_text(&svg, "paused 15.000 s"));
    // No correctness violation: only exclusive_holders is drawn.
    let names: Vec<&str> = m.violations.iter().map(|v| v.invariant.as_str()).collect();
    assert_eq!(names, vec!["exclusive_holders"]);
}

#[test]
fn unfenced_lesson_shows_the_no_two_accepted_writers_violation_band() {
    let m = model("05-lease-gc-pause-unfenced.json");
    let v = m
        .violations
        .iter()
        .find(|v| v.invariant == "no_two_accepted_writers")
        .expect("a no_two_accepted_writers band");
    assert!(v.from < v.to);
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(has_text(&svg, "no_two_accepted_writers"));
    // The stale write with token 33 is accepted (a dot labelled 33) after 34.
    let accepted: Vec<Option<u64>> = m
        .marks
        .iter()
        .filter_map(|x| match &x.kind {
            MarkKind::WriteAccepted { token, .. } => Some(*token),
            _ => None,
        })
        .collect();
    assert_eq!(accepted, vec![Some(34), Some(33)]);
}

#[test]
fn split_brain_lesson_shows_two_leaders_and_the_partition() {
    let m = model("03-bully-partition-split-brain.json");
    let leaders: Vec<&str> = m
        .bands
        .iter()
        .filter(|b| matches!(b.kind, BandKind::Leader { .. }))
        .map(|b| m.lanes[b.lane].name.as_str())
        .collect();
    assert!(
        leaders.contains(&"n2") && leaders.contains(&"n5"),
        "{leaders:?}"
    );
    assert_eq!(m.net.len(), 1);
    assert_eq!(m.net[0].from, SimTime(2_000_000_000));
    assert_eq!(m.net[0].to, SimTime(6_000_000_000));
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(has_text(&svg, "single_leader"));
    // Heartbeats outnumber the limit: hidden with a note.
    assert!(svg.contains("hid HEARTBEAT"), "thinning note missing");
}

#[test]
fn chart_from_saved_trace_equals_chart_from_the_live_run() {
    for path in lessons() {
        let (live, text) = run_with_trace(&path);
        let saved = read_trace(text.as_bytes()).unwrap();
        assert_eq!(saved.record(), live.record, "{}", path.display());
        let (a, b) = (model_of_run(&live), saved.model());
        assert_eq!(a, b, "{}", path.display());
        let opts = ChartOptions {
            clocks: true,
            ..ChartOptions::default()
        };
        assert_eq!(
            render_svg(&a, &opts).unwrap(),
            render_svg(&b, &opts).unwrap(),
            "{}",
            path.display()
        );
    }
}

#[test]
fn rendering_is_deterministic() {
    let m = model("07a-lease-renewal-ignored.json");
    let opts = ChartOptions::default();
    assert_eq!(
        render_svg(&m, &opts).unwrap(),
        render_svg(&m, &opts).unwrap()
    );
    let png = render_png(&m, &opts).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(png, render_png(&m, &opts).unwrap());
}

#[test]
fn hidden_kinds_window_and_no_messages() {
    let m = model("02-bully-worst-case.json");
    let all = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(has_text(&all, "ELECTION"));
    let hidden = render_svg(
        &m,
        &ChartOptions {
            hide_kinds: vec!["election".into()],
            ..ChartOptions::default()
        },
    )
    .unwrap();
    assert!(!has_text(&hidden, "ELECTION"));
    assert!(hidden.contains("hidden message kinds: ELECTION"));
    let none = render_svg(
        &m,
        &ChartOptions {
            no_messages: true,
            ..ChartOptions::default()
        },
    )
    .unwrap();
    assert!(!none.contains("HEARTBEAT"));
    assert!(none.contains("messages not drawn"));
    let empty = ChartOptions {
        window: Some((SimTime(3_000_000_000), SimTime(2_000_000_000))),
        ..ChartOptions::default()
    };
    assert!(render_svg(&m, &empty).is_err());
}

#[test]
fn a_broken_trace_is_an_error_with_its_line() {
    let (_, text) = run_with_trace(&lesson("01-bully-leader-crash.json"));
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "{\"ev\": \"nonsense\"}";
    let err = read_trace(lines.join("\n").as_bytes()).err().unwrap();
    assert!(err.to_string().starts_with("line 4:"), "{err}");
    assert!(read_trace("".as_bytes()).is_err());
    assert!(read_trace("{}\n".as_bytes())
        .err()
        .unwrap()
        .to_string()
        .starts_with("line 1:"));
}

/// Regression (issue 16): one-way blocks did not show their direction, and twelve of them
/// stacked twelve labels whose brackets ran through each other's text.
#[test]
fn one_way_blocks_show_their_direction_and_share_one_label() {
    let mut faults = Vec::new();
    let names = ["n1", "n2", "n3", "n4"];
    let mut k = 0;
    for a in names {
        for b in names {
            if a != b {
                faults.push(format!(
                    r#"{{"at": "{}ms", "block": {{"from": "{a}", "to": "{b}"}}}}"#,
                    1000 + 10 * k
                ));
                k += 1;
            }
        }
    }
    faults.push(r#"{"at": "5s", "heal": true}"#.to_string());
    let src = format!(
        r#"{{"splitbrain": 1, "name": "twelve-blocks", "seed": 1, "duration": "8s",
            "network": {{"delay": {{"fixed": "1ms"}}}},
            "nodes": {{"n": {{"role": "bully", "count": 4}}}},
            "faults": [{}], "check": ["single_leader"]}}"#,
        faults.join(",")
    );
    let plan = splitbrain_scenario::load_str("twelve.json", &src).unwrap();
    let rec = Recorder::hash_only().keep_events();
    let r = execute(&plan, 1, Some(rec)).unwrap();
    let m = model_of_run(&r);
    let lane = |n: &str| m.lanes.iter().position(|l| l.name == n).unwrap();
    let first = &m.net[0];
    assert_eq!(first.blocked, Some((lane("n1"), lane("n2"))));
    assert_eq!(m.net.iter().filter(|p| p.blocked.is_some()).count(), 12);
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    let labels: Vec<&str> = svg
        .split("<text")
        .filter_map(|t| t.split(">\n").nth(1))
        .filter_map(|t| t.split("\n</text>").next())
        .filter(|t| t.contains("\u{2192}n"))
        .collect();
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert!(
        labels[0].starts_with("one-way blocks (\u{00d7}12): n1\u{2192}n2, n1\u{2192}n3"),
        "{labels:?}"
    );
    assert!(has_text(&svg, "one-way block (sender \u{2192} receiver)"));
    let view = splitbrain_report::view_of_run(&r, None);
    let tops: Vec<&Option<String>> = view.net.iter().map(|n| &n.top_label).collect();
    assert!(tops[0].is_some() && tops[1..].iter().all(|t| t.is_none()));
    assert_eq!(view.net[0].blocked, Some((lane("n1"), lane("n2"))));
}

/// Regression (issue 16): lesson 09's second key (client-2's, half a second) had no label.
#[test]
fn a_narrow_key_band_still_names_whose_value_it_holds() {
    let m = model("09-redis-lock-plain-del.json");
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    // The lane name, the storage write label, and client-2's key on the redis lane.
    assert_eq!(svg.matches(">\nclient-2\n</text>").count(), 3);
}

/// Regression (issue 16): lesson 14b's 12 s restart delay was not drawn, only the crash.
#[test]
fn a_restart_delay_is_drawn_as_unavailable() {
    let m = model("14b-redlock-delayed-restart.json");
    let c = m.lanes.iter().position(|l| l.name == "redis-c").unwrap();
    let un: Vec<(u64, u64)> = m
        .bands
        .iter()
        .filter(|b| b.lane == c && b.kind == BandKind::Unavailable)
        .map(|b| (b.from.0, b.to.0))
        .collect();
    assert_eq!(un.len(), 1);
    assert_eq!(un[0].1 - un[0].0, 12_000_000_000, "{un:?}");
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(has_text(&svg, "unavailable 12.000 s (restart delay)"));
    assert!(has_text(
        &svg,
        "restarted, not yet answering (restart delay)"
    ));
}

/// Regression (issue 16): in lesson 16 the harmless duplicate looked like a harmful write.
#[test]
fn a_duplicate_write_looks_distinct_from_an_applied_one() {
    let m = model("16-idempotent-work-under-gc-pause.json");
    let writes: Vec<(Option<u64>, bool)> = m
        .marks
        .iter()
        .filter_map(|x| match &x.kind {
            MarkKind::WriteAccepted { token, applied, .. } => Some((*token, *applied)),
            _ => None,
        })
        .collect();
    assert_eq!(writes, vec![(Some(34), true), (Some(33), false)]);
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(has_text(&svg, "33 duplicate, no effect"));
    assert!(has_text(&svg, "duplicate write accepted, no effect"));
    assert!(has_text(&svg, "34"));
}

/// Regression (new-user pass): a run stopped at its event limit (`--set
/// limits.max_events=50`) was charted like a finished run: the chart ended early without
/// saying why. The chart, the chart of its saved trace and the browser view say where it
/// stopped, as the run summary and the narration do.
#[test]
fn a_run_stopped_at_the_event_limit_says_so_in_the_chart_and_the_view() {
    let mut plan = load_file(&lesson("05-lease-gc-pause-unfenced.json")).unwrap();
    plan.scenario.limits.max_events = Some(50);
    let seed = plan.scenario.seed;
    let buf = Shared::default();
    let mut header = serde_json::to_vec(&TraceHeader::new(&plan, seed)).unwrap();
    header.push(b'\n');
    buf.0.borrow_mut().extend_from_slice(&header);
    let rec = Recorder::hash_only()
        .keep_events()
        .with_writer(Box::new(buf.clone()));
    let r = execute(&plan, seed, Some(rec)).unwrap();
    assert!(r.bound.is_some(), "the run stops at its bound");
    let note = "stopped at a limit (max_events or max_in_flight) at 12.021 s (50 events): later steps never ran";
    let m = model_of_run(&r);
    assert_eq!(m.stop_note().as_deref(), Some(note));
    let svg = render_svg(&m, &ChartOptions::default()).unwrap();
    assert!(has_text(&svg, &format!("note: {note}")), "{svg}");
    // The same from its saved trace.
    let text = String::from_utf8(buf.0.borrow().clone()).unwrap();
    let saved = read_trace(text.as_bytes()).unwrap();
    assert_eq!(saved.model().stop_note().as_deref(), Some(note));
    // And in the browser view's header.
    let html = splitbrain_report::view_of_run(&r, None).html();
    assert!(
        html.contains(&format!("<p id=\"stopped\">note: {note}</p>")),
        "no stop note in the view"
    );
    // A finished run has none.
    let m = model("05-lease-gc-pause-unfenced.json");
    assert_eq!(m.stopped, None);
    assert!(!render_svg(&m, &ChartOptions::default())
        .unwrap()
        .contains("event limit"));
}

/// Lesson 22: redis-a crashes at 0.150 s holding client-1's key; the key's band on redis-a
/// ends at the crash (the instance lost it then), not at the key's expiry at 10.102 s.
#[test]
fn a_crashed_instances_key_band_ends_at_the_crash() {
    let m = model("22-redis-failover-async-replication.json");
    let a = m.lanes.iter().position(|l| l.name == "redis-a").unwrap();
    let keys: Vec<(SimTime, SimTime)> = m
        .bands
        .iter()
        .filter(|b| b.lane == a && matches!(b.kind, BandKind::Key { .. }))
        .map(|b| (b.from, b.to))
        .collect();
    assert_eq!(
        keys,
        [(SimTime(101_000_000), SimTime(150_000_000))],
        "{keys:?}"
    );
}

/// A lesson's `chart.shown_kinds` are never hidden as too many: lesson 01b's storm of
/// ELECTION, ANSWER and COORDINATOR is its point (the chart hid all three).
#[test]
fn the_kinds_a_lesson_is_about_are_not_hidden_as_too_many() {
    let plan = load_file(&lesson("01b-bully-literal-storm.json")).unwrap();
    let keep = plan.scenario.chart.as_ref().unwrap().shown_kinds.clone();
    assert_eq!(keep, ["ELECTION", "ANSWER", "COORDINATOR"]);
    let r = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let model = model_of_run(&r);
    let svg = render_svg(
        &model,
        &ChartOptions {
            keep_kinds: keep,
            ..ChartOptions::default()
        },
    )
    .unwrap();
    let note = svg
        .lines()
        .find(|l| l.contains("too many messages to draw: hid"))
        .unwrap_or("");
    for k in ["ELECTION", "ANSWER", "COORDINATOR"] {
        assert!(!note.contains(k), "{k} hidden: {note}");
    }
    assert!(note.contains("HEARTBEAT"), "{note}");
}

/// The view page grows with the run's events, not with nodes times steps: the bench's lease
/// workers (bench/view-lease-workers.json, measured by bench/growth-view.sh) at 10 and 40
/// workers. Bytes per trace record stay under a generous bound (about 120 now; a page that
/// stored every node's clocks at every step took 250 and 573) and do not grow with the
/// workers by more than half.
#[test]
fn the_view_page_grows_with_events_not_nodes_times_steps() {
    let bench =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/view-lease-workers.json");
    let text = std::fs::read_to_string(&bench).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let per_record = |workers: u64| -> f64 {
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json["nodes"]["worker"]["count"] = workers.into();
        let file = dir.path().join(format!("workers-{workers}.json"));
        std::fs::write(&file, json.to_string()).unwrap();
        let plan = load_file(&file).unwrap();
        let r = execute(&plan, 0, Some(Recorder::hash_only().keep_events())).unwrap();
        let records = r.trace.as_ref().unwrap().events;
        let page = splitbrain_report::view_of_run(&r, None).html();
        page.len() as f64 / records as f64
    };
    let (small, big) = (per_record(10), per_record(40));
    for (workers, per) in [(10, small), (40, big)] {
        assert!(
            per < 200.0,
            "{workers} workers: {per:.0} page bytes per trace record"
        );
    }
    assert!(
        big < small * 1.5,
        "bytes per record grew from {small:.0} to {big:.0} for 4x the workers"
    );
}
