//! Exports of a run to the viewers engineers already use.
//!
//! - [`chrome_trace`]: the Trace Event Format of Chrome's tracing and Perfetto (one JSON
//!   object with `traceEvents`; timestamps in microseconds). Each node is a process; its
//!   beliefs, server state, pauses and crashes are complete slices (`ph: "X"`) on named
//!   threads; each message is a slice at its send and one at its handling, joined by a flow
//!   (`ph: "s"` / `ph: "f"` with the same `id`, `bp: "e"`); steps (observations, faults,
//!   violations) are instant events (`ph: "i"`). Built from the [`ViewModel`], so it shows
//!   what the charts show. Format: "Trace Event Format", Google, docs.google.com/document/d/
//!   1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU.
//! - [`shiviz_log`]: a ShiViz log (the GoVector format): the parsing regex on the first line,
//!   an empty line (no multiple-execution delimiter), then per event a line `host {clock}`
//!   and a line with the event's text. Clocks are vector clocks (Lamport 1978 / Mattern
//!   1988): a node ticks its own entry on every event; a handled message merges the sender's
//!   clock at send, so ShiViz draws happens-before. Format: bestchai.bitbucket.io/shiviz and
//!   github.com/DistributedClocks/GoVector.

use crate::event::Event;
use crate::narrate::describe_obs;
use crate::view::ViewModel;
use serde_json::{json, Value};
use splitbrain_engine::{Fault, FaultEffect, NodeId};
use std::collections::BTreeMap;

/// The regex ShiViz parses [`shiviz_log`] with (ShiViz's and GoVector's default).
pub const SHIVIZ_REGEX: &str = r"(?<host>\S*) (?<clock>{.*})\n(?<event>.*)";

/// Microseconds (the Trace Event Format's unit) of a true time in ns.
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Threads of a node's process in the Chrome trace.
const TID_BELIEFS: u32 = 1;
const TID_FAULTS: u32 = 2;
const TID_MESSAGES: u32 = 3;
const TID_EVENTS: u32 = 4;

/// The run as a Chrome / Perfetto trace (JSON text).
pub fn chrome_trace(view: &ViewModel) -> String {
    let mut ev: Vec<Value> = Vec::new();
    for (pid, lane) in view.lanes.iter().enumerate() {
        ev.push(
            json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
            "args": {"name": format!("{} ({})", lane.name, lane.role)}}),
        );
        ev.push(
            json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
            "args": {"sort_index": pid}}),
        );
        for (tid, name) in [
            (TID_BELIEFS, "beliefs and state"),
            (TID_FAULTS, "pauses and crashes"),
            (TID_MESSAGES, "messages"),
            (TID_EVENTS, "events"),
        ] {
            ev.push(
                json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                "args": {"name": name}}),
            );
        }
    }
    for b in &view.bands {
        let tid = match b.kind {
            "paused" | "down" => TID_FAULTS,
            // The truth strip and the stale part overlap the belief: their own track.
            "truth" | "stale" => continue,
            _ => TID_BELIEFS,
        };
        ev.push(
            json!({"ph": "X", "name": b.label, "cat": b.kind, "pid": b.lane, "tid": tid,
            "ts": us(b.from), "dur": us(b.to - b.from)}),
        );
    }
    for (id, a) in view.arrows.iter().enumerate() {
        let cat = if a.dropped {
            "message,dropped"
        } else {
            "message"
        };
        ev.push(
            json!({"ph": "X", "name": format!("send {}", a.kind), "cat": cat,
            "pid": a.from, "tid": TID_MESSAGES, "ts": us(a.sent), "dur": 0.0,
            "args": {"to": view.lanes[a.to].name}}),
        );
        ev.push(
            json!({"ph": "s", "name": a.kind, "cat": cat, "id": id, "pid": a.from,
            "tid": TID_MESSAGES, "ts": us(a.sent)}),
        );
        let end = a.end.max(a.sent);
        let what = if a.dropped { "dropped" } else { "handle" };
        ev.push(
            json!({"ph": "X", "name": format!("{what} {}", a.kind), "cat": cat,
            "pid": a.to, "tid": TID_MESSAGES, "ts": us(end), "dur": 0.0,
            "args": {"from": view.lanes[a.from].name}}),
        );
        ev.push(
            json!({"ph": "f", "bp": "e", "name": a.kind, "cat": cat, "id": id,
            "pid": a.to, "tid": TID_MESSAGES, "ts": us(end)}),
        );
    }
    for s in &view.steps {
        let mut e = json!({"ph": "i", "name": s.text, "cat": s.what, "ts": us(s.t),
            "args": {"cause": s.cause}});
        match s.lane {
            Some(l) => {
                e["pid"] = json!(l);
                e["tid"] = json!(TID_EVENTS);
                e["s"] = json!("t");
            }
            None => {
                e["pid"] = json!(0);
                e["tid"] = json!(TID_EVENTS);
                e["s"] = json!("g");
            }
        }
        ev.push(e);
    }
    let doc = json!({
        "traceEvents": ev,
        "displayTimeUnit": "ms",
        "otherData": {"scenario": view.name, "seed": view.seed,
            "note": "timestamps are the simulation's true time"},
    });
    let mut s = serde_json::to_string(&doc).expect("a trace serializes");
    s.push('\n');
    s
}

/// The run as a ShiViz log with vector clocks. `names` are the nodes by id; `effects` what
/// each fault of `events` did, in order (the record's `fault_effects`).
pub fn shiviz_log(names: &[String], effects: &[FaultEffect], events: &[Event]) -> String {
    let n = names.len();
    let mut clocks: Vec<Vec<u64>> = vec![vec![0; n]; n];
    let mut sent: BTreeMap<u64, (Vec<u64>, String)> = BTreeMap::new();
    let mut out = String::new();
    out.push_str(SHIVIZ_REGEX);
    out.push_str("\n\n");
    let name = |id: NodeId| names.get(id.index()).cloned().unwrap_or_default();
    let mut emit =
        |clocks: &mut Vec<Vec<u64>>, node: NodeId, text: String, merge: Option<&[u64]>| {
            let i = node.index();
            if i >= n {
                return;
            }
            if let Some(m) = merge {
                for (c, o) in clocks[i].iter_mut().zip(m) {
                    *c = (*c).max(*o);
                }
            }
            clocks[i][i] += 1;
            let clock: serde_json::Map<String, Value> = clocks[i]
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(k, c)| (names[k].clone(), json!(c)))
                .collect();
            out.push_str(&format!(
                "{} {}\n{}\n",
                names[i],
                Value::Object(clock),
                text.replace('\n', " ")
            ));
        };
    let mut idle = effects.iter().map(|e| e.idle);
    for e in events {
        match e {
            Event::Send {
                t,
                from,
                to,
                id,
                kind,
                ..
            } => {
                emit(
                    &mut clocks,
                    *from,
                    format!("{t}  sends {kind} to {}", name(*to)),
                    None,
                );
                if let Some(c) = clocks.get(from.index()) {
                    sent.insert(*id, (c.clone(), kind.clone()));
                }
            }
            Event::Deliver { t, from, to, id } => {
                let (c, kind) = sent.get(id).cloned().unwrap_or_default();
                emit(
                    &mut clocks,
                    *to,
                    format!("{t}  handles {kind} from {}", name(*from)),
                    Some(&c),
                );
            }
            Event::Observe { t, node, obs } => {
                let who = name(*node);
                emit(
                    &mut clocks,
                    *node,
                    format!("{t}  {}", describe_obs(names, &who, obs)),
                    None,
                );
            }
            Event::Fault { t, fault } => {
                let state = idle.next().flatten();
                let node = match fault {
                    Fault::Crash { node }
                    | Fault::Restart { node }
                    | Fault::Pause { node, .. }
                    | Fault::ClockStep { node, .. }
                    | Fault::SetDrift { node, .. } => *node,
                    // Network-wide faults belong to no host.
                    _ => continue,
                };
                emit(
                    &mut clocks,
                    node,
                    format!("{t}  fault: {}", fault.describe_applied(names, state)),
                    None,
                );
            }
            Event::Resume { t, node } => {
                emit(
                    &mut clocks,
                    *node,
                    format!("{t}  resumes after its pause"),
                    None,
                );
            }
            _ => {}
        }
    }
    out
}
