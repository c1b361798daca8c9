//! Exports, read back by the rules of their formats: the Chrome / Perfetto Trace Event Format
//! (a `traceEvents` array; `M` metadata naming each process; `X` slices with `ts`/`dur` in
//! µs; flows as `s`/`f` pairs sharing an `id`), and ShiViz's log (regex line, blank line, then
//! `host {vector clock}` and an event line per event; clocks tick once per event of their
//! host and a handled message's clock dominates its send's).

use serde_json::Value;
use splitbrain_engine::Recorder;
use splitbrain_report::export::{chrome_trace, shiviz_log, SHIVIZ_REGEX};
use splitbrain_report::view_of_run;
use splitbrain_scenario::{execute, load_file, RunResult};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn run(file: &str) -> RunResult {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(file);
    let plan = load_file(&path).unwrap();
    execute(
        &plan,
        plan.scenario.seed,
        Some(Recorder::hash_only().keep_events()),
    )
    .unwrap()
}

#[test]
fn chrome_trace_has_processes_slices_and_paired_flows() {
    let r = run("02-bully-worst-case.json");
    let view = view_of_run(&r, None);
    let doc: Value = serde_json::from_str(&chrome_trace(&view)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let mut names = Vec::new();
    let mut starts: BTreeMap<u64, (String, f64)> = BTreeMap::new();
    let mut finishes: BTreeMap<u64, (String, f64)> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        assert!(["M", "X", "s", "f", "i"].contains(&ph), "phase {ph}");
        let pid = e["pid"].as_u64().unwrap() as usize;
        assert!(pid < view.lanes.len());
        if ph != "M" {
            assert!(e["ts"].as_f64().unwrap() >= 0.0);
            assert!(e["name"].is_string());
        }
        match ph {
            "M" if e["name"] == "process_name" => {
                names.push(e["args"]["name"].as_str().unwrap().to_string())
            }
            "X" => assert!(e["dur"].as_f64().unwrap() >= 0.0),
            "s" => {
                starts.insert(
                    e["id"].as_u64().unwrap(),
                    (
                        e["name"].as_str().unwrap().into(),
                        e["ts"].as_f64().unwrap(),
                    ),
                );
            }
            "f" => {
                assert_eq!(e["bp"], "e");
                finishes.insert(
                    e["id"].as_u64().unwrap(),
                    (
                        e["name"].as_str().unwrap().into(),
                        e["ts"].as_f64().unwrap(),
                    ),
                );
            }
            "i" => assert!(["t", "g"].contains(&e["s"].as_str().unwrap())),
            _ => {}
        }
    }
    assert_eq!(names.len(), view.lanes.len());
    for (lane, n) in view.lanes.iter().zip(&names) {
        assert!(n.starts_with(&lane.name), "{n}");
    }
    // One flow per message, each finishing where it started's kind says, not before it.
    assert_eq!(starts.len(), view.arrows.len());
    assert_eq!(
        starts.keys().collect::<Vec<_>>(),
        finishes.keys().collect::<Vec<_>>()
    );
    for (id, (kind, ts)) in &starts {
        assert_eq!(&finishes[id].0, kind);
        assert!(finishes[id].1 >= *ts);
    }
    // The lesson's point: 4 + 3 + 2 + 1 ELECTION messages.
    assert_eq!(starts.values().filter(|(k, _)| k == "ELECTION").count(), 10);
    // Beliefs are slices: every leader claim of the run is one.
    let leaders = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "leader")
        .count();
    assert_eq!(
        leaders,
        view.bands.iter().filter(|b| b.kind == "leader").count()
    );
    assert!(leaders >= 2);
}

#[test]
fn shiviz_log_parses_and_its_vector_clocks_order_sends_before_handling() {
    let r = run("05-lease-gc-pause-unfenced.json");
    let events = r.trace.as_ref().unwrap().kept.as_deref().unwrap();
    let log = shiviz_log(&r.record.names, &r.record.fault_effects, events);
    let mut lines = log.lines();
    assert_eq!(lines.next(), Some(SHIVIZ_REGEX));
    assert_eq!(lines.next(), Some(""));
    let rest: Vec<&str> = lines.collect();
    assert!(rest.len() % 2 == 0 && !rest.is_empty());
    let mut last: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut sends: BTreeMap<(String, String, String), Vec<BTreeMap<String, u64>>> = BTreeMap::new();
    let mut handled = 0;
    for pair in rest.chunks(2) {
        // `(?<host>\S*) (?<clock>{.*})` then `(?<event>.*)`.
        let (host, clock) = pair[0].split_once(' ').unwrap();
        assert!(!host.is_empty() && !host.contains(char::is_whitespace));
        assert!(r.record.names.iter().any(|n| n == host), "{host}");
        let clock: BTreeMap<String, u64> = serde_json::from_str(clock).unwrap();
        let event = pair[1];
        // The host's own entry ticks by one per event; no entry goes back.
        let prev = last.get(host).cloned().unwrap_or_default();
        assert_eq!(
            clock[host],
            prev.get(host).copied().unwrap_or(0) + 1,
            "{event}"
        );
        for (k, v) in &prev {
            assert!(clock.get(k).copied().unwrap_or(0) >= *v);
        }
        if let Some(rest) = event.split_once("  sends ").map(|x| x.1) {
            let (kind, to) = rest.split_once(" to ").unwrap();
            sends
                .entry((host.into(), to.into(), kind.into()))
                .or_default()
                .push(clock.clone());
        }
        if let Some(rest) = event.split_once("  handles ").map(|x| x.1) {
            let (kind, from) = rest.split_once(" from ").unwrap();
            // Happens-before: some send of this kind from `from` to `host` is dominated.
            let cands = &sends[&(from.to_string(), host.to_string(), kind.to_string())];
            assert!(cands.iter().any(|s| s.iter().all(|(k, v)| clock
                .get(k)
                .copied()
                .unwrap_or(0)
                >= *v)));
            handled += 1;
        }
        last.insert(host.into(), clock);
    }
    assert!(handled > 10);
}
