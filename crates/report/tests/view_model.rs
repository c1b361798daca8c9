//! The browser view's data (the model `splitbrain view` embeds in its page), lesson by lesson:
//! what the cursor shows at a step, which message kinds start ticked, what a step's cause links
//! to, and that a kind has the colour the static chart gives it.

use splitbrain_engine::{Recorder, SimTime};
use splitbrain_report::{kind_legend, model_of_run, view_of_run, ChartOptions, ViewModel};
use splitbrain_scenario::{execute, load_file};
use std::path::PathBuf;

fn lesson(stem: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{stem}-"))
        })
        .unwrap_or_else(|| panic!("no lesson {stem}"))
}

/// The view of lesson `stem` at its own seed, as `report` and `run --view` make it.
fn view(stem: &str) -> ViewModel {
    let plan = load_file(&lesson(stem)).unwrap();
    let r = execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap();
    let window = plan
        .scenario
        .chart
        .as_ref()
        .map(|w| (SimTime(w.from.0.as_nanos()), SimTime(w.to.0.as_nanos())));
    view_of_run(&r, window).for_scenario(&plan.scenario)
}

fn step(v: &ViewModel, pred: impl Fn(&splitbrain_report::view::Step) -> bool) -> usize {
    v.steps.iter().position(pred).expect("a step that matches")
}

fn lane(v: &ViewModel, name: &str) -> usize {
    v.lanes.iter().position(|l| l.name == name).unwrap()
}

/// What the cursor's table says a lane believes at step `i` (the bands it shows).
fn shown_at(v: &ViewModel, lane: usize, i: usize) -> Vec<&str> {
    v.bands
        .iter()
        .filter(|b| b.lane == lane && b.steps.0 <= i && i < b.steps.1)
        .map(|b| b.kind)
        .collect()
}

/// Lesson 12: client-1's stale write lands at 17.003 s; the step saying
/// no_two_accepted_writers is violated comes with it, not at 12.060 s while client-1 is still
/// paused (lesson 22 likewise).
#[test]
fn a_violation_step_never_comes_before_its_cause() {
    for (stem, writer) in [("12", "client-1"), ("22", "client-1")] {
        let v = view(stem);
        let write = step(&v, |s| {
            s.text
                .starts_with(&format!("storage ACCEPTS the write of {writer}"))
                && s.t
                    > v.violations
                        .iter()
                        .find(|x| x.invariant == "no_two_accepted_writers")
                        .unwrap()
                        .from
        });
        let viol = step(&v, |s| {
            s.what == "violation" && s.text.starts_with("no_two_accepted_writers")
        });
        assert!(
            viol > write,
            "lesson {stem}: violation at step {viol} ({}), the write at {write} ({})",
            v.steps[viol].t,
            v.steps[write].t
        );
        assert_eq!(v.steps[viol].t, v.steps[write].t, "lesson {stem}");
    }
}

/// Lessons 06, 12 and 21d: at the step where the paused holder sends its stale write it still
/// believes it holds the lock: the table shows its belief (and its stale part), and the
/// resume step says so.
#[test]
fn the_stale_belief_shows_when_the_paused_holder_writes() {
    for stem in ["06", "12", "21d"] {
        let v = view(stem);
        let c1 = lane(&v, "client-1");
        let resume = step(&v, |s| s.text.starts_with("client-1 resumes after"));
        assert!(
            v.steps[resume].text.contains("it still believes it holds"),
            "lesson {stem}: {}",
            v.steps[resume].text
        );
        let write = step(&v, |s| s.text.starts_with("client-1 sends its write"));
        let shown = shown_at(&v, c1, write);
        assert!(
            shown.contains(&"holds") && shown.contains(&"stale"),
            "lesson {stem}: at {:?} the table shows {shown:?}",
            v.steps[write].text
        );
        // And no longer once it gives the lock up (or the run moves on).
        let after = (write + 1..v.steps.len())
            .find(|&i| v.steps[i].t > v.steps[write].t)
            .unwrap_or(v.steps.len() - 1);
        assert!(!shown_at(&v, c1, after).contains(&"holds"), "lesson {stem}");
    }
}

/// Bulk traffic starts unticked, every bulk kind: both of Raft's APPEND_ENTRIES and
/// APPEND_ACK, Redlock's REPLY (its arrows covered the band labels of lesson 12); SET and EVAL
/// stay; a storm that is the lesson (01b) stays.
#[test]
fn every_bulk_kind_starts_unticked() {
    let shown = |v: &ViewModel, k: &str| v.kinds.iter().find(|x| x.name == k).unwrap().shown;
    for stem in ["21a", "21d", "25c"] {
        let v = view(stem);
        assert!(
            !shown(&v, "APPEND_ENTRIES") && !shown(&v, "APPEND_ACK"),
            "{stem}"
        );
        assert!(shown(&v, "WRITE"), "{stem}");
    }
    let v = view("12");
    assert!(!shown(&v, "REPLY"));
    assert!(shown(&v, "SET") && shown(&v, "EVAL") && shown(&v, "WRITE"));
    let v = view("01b");
    for k in ["ELECTION", "ANSWER", "COORDINATOR"] {
        assert!(shown(&v, k), "01b's storm: {k}");
    }
    let v = view("01");
    assert!(!shown(&v, "HEARTBEAT") && shown(&v, "ELECTION"));
}

/// A lesson's `chart.shown_kinds` keeps a bulk kind ticked.
#[test]
fn a_lesson_names_the_kinds_it_is_about() {
    let path = lesson("21d");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["chart"] =
        serde_json::json!({"from": "0s", "to": "20s", "shown_kinds": ["APPEND_ENTRIES"]});
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("21d-kinds.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let plan = load_file(&file).unwrap();
    let r = execute(&plan, 7, Some(Recorder::hash_only().keep_events())).unwrap();
    let v = view_of_run(&r, None).for_scenario(&plan.scenario);
    let shown = |k: &str| v.kinds.iter().find(|x| x.name == k).unwrap().shown;
    assert!(shown("APPEND_ENTRIES"));
    assert!(!shown("APPEND_ACK"));
}

/// The Kubernetes lessons name their lanes by what they are.
#[test]
fn k8s_lanes_are_lease_candidates_and_the_lease_record() {
    let v = view("19a");
    let roles: Vec<(&str, &str)> = v
        .lanes
        .iter()
        .map(|l| (l.name.as_str(), l.role.as_str()))
        .collect();
    assert_eq!(
        roles,
        [
            ("leader-a", "lease candidate"),
            ("leader-b", "lease candidate"),
            ("lease", "lease record")
        ]
    );
}

/// A kind has one colour in the lesson's chart (its window) and in its page: lesson 02's
/// ELECTION differed.
#[test]
fn a_kind_has_the_charts_colour_in_the_page() {
    // 21b and 21e draw more than eight kinds: each keeps its own colour in the PNG too.
    for stem in ["02", "12", "21b", "21e"] {
        let plan = load_file(&lesson(stem)).unwrap();
        let r = execute(
            &plan,
            plan.scenario.seed,
            Some(Recorder::hash_only().keep_events()),
        )
        .unwrap();
        let model = model_of_run(&r);
        let window = plan
            .scenario
            .chart
            .as_ref()
            .map(|w| (SimTime(w.from.0.as_nanos()), SimTime(w.to.0.as_nanos())));
        let opts = ChartOptions {
            window,
            ..ChartOptions::default()
        };
        let v = view_of_run(&r, window);
        let legend = kind_legend(&model, &opts).unwrap();
        assert!(!legend.is_empty(), "{stem}");
        for (k, colour) in legend {
            let page = &v.kinds.iter().find(|x| x.name == k).unwrap().colour;
            assert_eq!(page, &colour, "lesson {stem}: {k}");
        }
    }
}

/// A message carries its payload; a step caused by handling a message links to its arrow, a
/// resume to its pause, a violation's evidence to its steps.
#[test]
fn causes_link_to_their_events_and_messages_carry_payloads() {
    let v = view("06");
    assert!(v.arrows.iter().all(|a| a.payload.starts_with('{')));
    let granted = step(&v, |s| s.text.starts_with("client-1 ACQUIRES"));
    let a = &v.arrows[v.steps[granted].cause_arrow.expect("a message caused it")];
    assert_eq!(a.kind, "LEASE_GRANTED");
    assert_eq!(a.end, v.steps[granted].t);
    assert!(a.payload.contains("33"), "{}", a.payload);
    let resume = step(&v, |s| s.text.starts_with("client-1 resumes"));
    let pause = v.steps[resume].cause_step.expect("its pause");
    assert!(
        v.steps[pause].text.contains("PAUSED"),
        "{}",
        v.steps[pause].text
    );
    for viol in &v.violations {
        assert_eq!(viol.evidence_steps.len(), viol.evidence.len());
        for ((t, _, _), s) in viol.evidence.iter().zip(&viol.evidence_steps) {
            assert_eq!(v.steps[s.expect("each evidence line is a step")].t, *t);
        }
    }
}

/// Writes carry their token beside the mark, as on the static chart.
#[test]
fn writes_carry_their_token() {
    let v = view("06");
    let tags: Vec<&str> = v.marks.iter().filter_map(|m| m.tag.as_deref()).collect();
    assert_eq!(tags, ["34", "33 rejected"]);
}

/// A crashed Redis instance's key ends at the crash: no key band over its down band.
#[test]
fn a_crashed_instance_draws_no_key() {
    let v = view("22");
    for k in v.bands.iter().filter(|b| b.kind == "key") {
        for d in v
            .bands
            .iter()
            .filter(|b| b.kind == "down" && b.lane == k.lane)
        {
            assert!(
                k.to <= d.from || k.from >= d.to,
                "key {k:?} over down {d:?}"
            );
        }
    }
}

/// Lesson 24a: the worker app runs two threads; each has its own lane under the node's
/// (`app · thread 1`, `app · thread 2`) with its own holds and their stale parts, so a
/// student sees which thread held the key when, rather than two threads' holds on one lane.
#[test]
fn each_thread_has_its_own_lane() {
    let v = view("24a");
    let app = lane(&v, "app");
    let t1 = lane(&v, "app \u{00b7} thread 1");
    let t2 = lane(&v, "app \u{00b7} thread 2");
    assert_eq!((t1, t2), (app + 1, app + 2));
    for t in [t1, t2] {
        assert_eq!(v.lanes[t].node, "app");
        assert_eq!(v.clocks[t], v.clocks[app]);
    }
    let holds = |l: usize| -> Vec<&str> {
        v.bands
            .iter()
            .filter(|b| b.lane == l && b.kind == "holds")
            .map(|b| b.label.as_str())
            .collect()
    };
    assert!(holds(app).is_empty(), "{:?}", holds(app));
    assert!(!holds(t1).is_empty() && holds(t1).iter().all(|l| l.contains("(thread 1)")));
    assert!(!holds(t2).is_empty() && holds(t2).iter().all(|l| l.contains("(thread 2)")));
    // Every belief part and truth strip sits on a thread's lane: none is left on the node's.
    assert!(v
        .bands
        .iter()
        .filter(|b| b.lane == app)
        .all(|b| !matches!(b.kind, "holds" | "stale" | "truth")));
    // A single-threaded node keeps one lane.
    assert!(v
        .lanes
        .iter()
        .all(|l| l.node != "client-3" || l.name == "client-3"));
}
