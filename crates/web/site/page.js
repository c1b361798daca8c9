// A lesson's page: runs the lesson in the page (engine.js), shows its verdicts and its run
// (the view `splitbrain view` writes, in a sandboxed frame), and lets the student change the
// seed, a knob or the whole file, re-running at once and showing each verdict before and
// after. The edited scenario and the seed live in the URL fragment, so a link reproduces the
// run. Scenario text is data throughout: shown with textContent, never parsed as HTML; a
// scenario from a link is validated by the engine exactly as a file is.
"use strict";
(function () {
  const LESSON = JSON.parse(document.getElementById("lesson-data").textContent);
  const $ = id => document.getElementById(id);
  const stem = LESSON.file.replace(/^.*\//, "").replace(/\.json$/, "");
  const page = {
    text: LESSON.scenario, seed: null, base: null, last: null, runs: 0,
    timings: [], ready: null,
  };
  window.SPLITBRAIN_PAGE = page;

  // --- the URL fragment: #seed=N&scenario=BASE64URL(UTF-8 text) ---------------------------
  function toB64url(text) {
    const b = new TextEncoder().encode(text);
    let s = "";
    for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function fromB64url(s) {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
    const b = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
    return new TextDecoder("utf-8", { fatal: true }).decode(b);
  }
  function readFragment() {
    const h = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (h.has("seed")) page.seed = h.get("seed");
    if (h.has("scenario")) {
      try { page.text = fromB64url(h.get("scenario")); }
      catch (e) { showError("the link's scenario is not base64url of UTF-8 text: " + e.message); }
    }
  }
  function writeFragment() {
    const h = new URLSearchParams();
    if (page.seed !== null) h.set("seed", page.seed);
    if (page.text !== LESSON.scenario) h.set("scenario", toB64url(page.text));
    const frag = h.toString();
    history.replaceState(null, "", frag ? "#" + frag : location.pathname + location.search);
  }

  // --- showing a run ----------------------------------------------------------------------
  function edited() { return page.text !== LESSON.scenario; }
  function fileName() { return edited() ? "edited-" + stem + ".json" : LESSON.file; }
  function showError(text) { const e = $("error"); e.hidden = !text; e.textContent = text || ""; }
  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  function outcome(x) {
    if (!x) return "";
    return x.got + (x.vacuous ? " (vacuously)" : "") + (x.matches ? "" : " \u2717 not as expected");
  }
  function showVerdicts() {
    const body = document.querySelector("#verdicts tbody");
    body.replaceChildren();
    const base = page.base ? page.base.summary.expectations : [];
    const now = page.last ? page.last.summary.expectations : [];
    const names = [];
    base.concat(now).forEach(x => { if (!names.includes(x.invariant)) names.push(x.invariant); });
    names.forEach(name => {
      const b = base.find(x => x.invariant === name), n = now.find(x => x.invariant === name);
      const tr = document.createElement("tr");
      tr.dataset.invariant = name;
      const e = (n || b);
      cell(tr, name);
      cell(tr, e.rate ? "a rate (judged by sweep)" : (e.expected || "holds"));
      cell(tr, outcome(b), "before");
      cell(tr, outcome(n), "after");
      if (b && n && b.got !== n.got) tr.className = "changed";
      body.appendChild(tr);
    });
  }
  function show(answer) {
    page.last = answer;
    const s = answer.summary;
    page.seed = answer.seed;
    $("seed").value = answer.seed;
    $("title").textContent = s.scenario;
    $("lesson").textContent = answer.lesson || "";
    $("command").textContent = s.reproduce;
    $("hash").textContent = "trace hash " + answer.trace_hash + " \u00b7 " + s.events + " events" +
      (s.stopped ? " \u00b7 stopped: " + s.stopped : "") +
      (s.as_expected ? " \u00b7 as the file expects" : " \u00b7 NOT as the file expects");
    $("hash").dataset.hash = answer.trace_hash;
    const e = $("edited");
    e.hidden = !edited();
    e.textContent = edited() ? "This run's scenario is not the lesson's file: it was edited here or came with the link. " +
      "\"copy scenario\" gives its text, to run it with splitbrain as the command says." : "";
    showVerdicts();
    $("view").srcdoc = answer.view;
  }

  // --- running ----------------------------------------------------------------------------
  let ticker = null;
  function busy(on) {
    $("stop").disabled = !on;
    clearInterval(ticker);
    if (on) {
      const t0 = performance.now();
      $("status").textContent = "running\u2026";
      ticker = setInterval(() => {
        $("status").textContent = "running\u2026 " + ((performance.now() - t0) / 1000).toFixed(1) + " s (stop ends it)";
      }, 250);
    }
  }
  async function run(request) {
    busy(true);
    const t0 = performance.now();
    try {
      const { answer, ms } = await SPLITBRAIN.call(request);
      return { answer, ms, total: performance.now() - t0 };
    } finally {
      busy(false);
    }
  }
  /** Runs the current text at the current seed and shows it. */
  async function rerun() {
    writeFragment();
    $("scenario").value = page.text;
    const request = { file: fileName(), scenario: page.text, view: true };
    if (page.seed !== null) request.seed = page.seed;
    // After the lesson's own run: compare each run with it, event by event (the engine keeps
    // the lesson's trace, so this costs one run's trace, not a second run).
    if (page.base) request.diverge_from = { file: LESSON.file, scenario: LESSON.scenario, seed: page.base.seed };
    let r;
    try { r = await run(request); }
    catch (e) { $("status").textContent = e.message === "stopped" ? "stopped" : ""; if (e.message !== "stopped") showError(e.message); return; }
    if (!r.answer.ok) { showError(r.answer.error); $("status").textContent = "not run"; return; }
    showError("");
    page.runs += 1;
    page.timings.push({ engine_ms: r.ms, total_ms: r.total });
    show(r.answer);
    $("status").textContent = "ran in " + r.ms.toFixed(0) + " ms" + (edited() ? " \u00b7 edited scenario" : "");
    buildKnobs();
    buildFaults();
    showDivergence();
  }
  /** Each seed's trace hash and outcome (no views). */
  async function hashes(seeds, text) {
    const r = await run({ file: fileName(), scenario: text === undefined ? page.text : text, seeds: seeds.map(String) });
    if (!r.answer.ok) throw new Error(r.answer.error);
    return r.answer.runs;
  }
  page.hashes = hashes;
  /** "How often?": seeds 0..1000 of the current scenario, as `sweep` prints the rates. */
  async function howOften() {
    const out = $("how-often");
    $("how-often-status").textContent = "running 1,000 seeds\u2026";
    let r;
    try { r = await run({ file: fileName(), scenario: page.text, how_often: { from: "0", count: 1000 } }); }
    catch (e) { $("how-often-status").textContent = e.message; return; }
    if (!r.answer.ok) { $("how-often-status").textContent = ""; showError(r.answer.error); return; }
    out.hidden = false;
    out.textContent = "seeds " + r.answer.seeds + ": " + r.answer.as_expected + " as the file expects\n" +
      "  " + "invariant".padEnd(26) + "violated".padStart(16) + "  " + "rate".padStart(8) + "  95% CI\n" + r.answer.rows.join("\n");
    $("how-often-status").textContent = "ran in " + (r.ms / 1000).toFixed(1) + " s";
    page.howOften = r.answer;
  }
  $("how-often-run").addEventListener("click", howOften);
  page.rerun = rerun;

  // --- knobs: every number, true/false and duration of the file's nodes, faults, network ---
  const DURATION = /^[0-9]+(\.[0-9]+)?\s*(ns|us|\u00b5s|ms|s|m|h)$/;
  function knobsOf(value, path, out) {
    if (out.length >= 60) return;
    if (Array.isArray(value)) value.forEach((v, i) => knobsOf(v, path.concat([i]), out));
    else if (value !== null && typeof value === "object") Object.keys(value).forEach(k => knobsOf(value[k], path.concat([k]), out));
    else if (typeof value === "boolean" || (typeof value === "number" && Number.isSafeInteger(value)) ||
      (typeof value === "string" && DURATION.test(value))) out.push([path, value]);
  }
  function buildKnobs() {
    const box = $("knobs");
    box.replaceChildren();
    let doc;
    try { doc = JSON.parse(page.text); } catch (e) { box.textContent = "(the file is not JSON: edit it below)"; return; }
    const knobs = [];
    ["nodes", "faults", "network", "processing"].forEach(k => { if (doc && doc[k] !== undefined) knobsOf(doc[k], [k], knobs); });
    knobs.forEach(([path, value]) => {
      const label = document.createElement("label");
      label.className = "knob";
      const name = document.createElement("span");
      name.textContent = path.join(".");
      const input = document.createElement("input");
      input.dataset.path = path.join(".");
      if (typeof value === "boolean") { input.type = "checkbox"; input.checked = value; }
      else { input.value = String(value); input.size = 8; }
      input.addEventListener("change", () => {
        let v = input.type === "checkbox" ? input.checked : input.value.trim();
        if (typeof value === "number") { if (!/^-?[0-9]+$/.test(v)) { showError(path.join(".") + ": a whole number, found " + v); return; } v = Number(v); }
        const d = JSON.parse(page.text);
        let o = d;
        path.slice(0, -1).forEach(k => { o = o[k]; });
        o[path[path.length - 1]] = v;
        page.text = JSON.stringify(d, null, 2) + "\n";
        rerun();
      });
      label.appendChild(name);
      label.appendChild(input);
      box.appendChild(label);
    });
  }

  // --- faults: add one by clicking a node's lane in the run, move it (its time), delete it --
  // The view (a sandboxed frame) posts {splitbrain: "lane", node, t} when a lane's background
  // is clicked; only messages from that frame, of that shape, are read.
  function make(tag, attrs, text) {
    const e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(k => e.setAttribute(k, attrs[k]));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const faultsBox = make("details", { id: "faults-box", open: "" });
  faultsBox.appendChild(make("summary", {}, "what if? faults (click a node's lane in the run below to add one there; drag a fault's mark to move it)"));
  const faultList = make("div", { id: "faults" });
  const faultForm = make("div", { id: "fault-form" });
  faultForm.hidden = true;
  faultsBox.appendChild(faultForm);
  faultsBox.appendChild(faultList);
  const diverge = make("p", { id: "diverge" });
  diverge.hidden = true;
  $("knobs-box").parentNode.insertBefore(faultsBox, $("knobs-box"));
  $("verdicts").parentNode.insertBefore(diverge, $("verdicts").nextSibling);

  function docOf() { try { const d = JSON.parse(page.text); return d && typeof d === "object" ? d : null; } catch (e) { return null; } }
  function setDoc(d) { page.text = JSON.stringify(d, null, 2) + "\n"; rerun(); }
  function msText(ns) { return Math.round(ns / 1e6) + "ms"; }
  const FAULT_KINDS = ["pause", "crash", "restart", "clock_step", "drift", "partition", "block", "heal"];
  // What each kind's amount field says, and its first value (none: the kind has no amount).
  const AMOUNT = { pause: [" for ", "5s"], clock_step: [" by ", "+5s"], drift: [" to ppm ", "200000"] };
  function faultOf(kind, node, at, extra, doc) {
    const others = Object.keys(doc.nodes || {}).filter(n => n !== node);
    if (kind === "pause") return { at, pause: node, for: extra || "5s" };
    if (kind === "crash") return { at, crash: node };
    if (kind === "restart") return { at, restart: node };
    if (kind === "clock_step") return { at, clock_step: node, by: extra || "+5s" };
    // A clock rate: the node's clock runs at (1e6 + ppm) / 1e6 of true time from then on. A
    // ppm that is not a whole number stays text, so the engine refuses it as a file's.
    if (kind === "drift") return { at, drift: node, ppm: /^-?[0-9]+$/.test(extra) ? Number(extra) : extra };
    if (kind === "partition") return { at, partition: [[node], others] };
    // One way: what the node sends to every other node is dropped; what it receives is not.
    if (kind === "block") return { at, block: { from: node, to: others } };
    return { at, heal: true };
  }
  /** The form a lane click opens: node and time filled in, the kind and its amount chosen. */
  function openFaultForm(node, t) {
    faultForm.replaceChildren();
    faultsBox.open = true;
    faultForm.hidden = false;
    const kind = make("select", { id: "fault-kind" });
    FAULT_KINDS.forEach(k => kind.appendChild(make("option", { value: k }, k.replace("_", " "))));
    const at = make("input", { id: "fault-at", size: "10" }); at.value = msText(t);
    const extra = make("input", { id: "fault-extra", size: "8" }); extra.value = "5s";
    const extraLabel = make("span", {}, " for ");
    kind.addEventListener("change", () => {
      const a = AMOUNT[kind.value];
      extra.hidden = extraLabel.hidden = !a;
      if (a) { extraLabel.textContent = a[0]; extra.value = a[1]; }
    });
    const add = make("button", { id: "fault-add" }, "add and run");
    add.addEventListener("click", () => {
      const d = docOf();
      if (!d) { showError("the scenario is not JSON: edit it below"); return; }
      d.faults = (Array.isArray(d.faults) ? d.faults : []).concat([faultOf(kind.value, node, at.value.trim(), extra.value.trim(), d)]);
      faultForm.hidden = true;
      setDoc(d);
    });
    const cancel = make("button", {}, "cancel");
    cancel.addEventListener("click", () => { faultForm.hidden = true; });
    faultForm.append(make("span", {}, "add a "), kind, make("span", {}, " on "), make("b", { id: "fault-node" }, node),
      make("span", {}, " at "), at, extraLabel, extra, make("span", {}, " "), add, make("span", {}, " "), cancel);
  }
  /** The scenario's faults, each with its time (change it to move the fault) and delete. */
  function buildFaults() {
    faultList.replaceChildren();
    const d = docOf();
    const faults = d && Array.isArray(d.faults) ? d.faults : [];
    if (!faults.length) faultList.appendChild(make("p", {}, "no faults"));
    faults.forEach((f, i) => {
      const row = make("div", { class: "fault", "data-index": String(i) });
      const rest = Object.assign({}, f); delete rest.at;
      if (typeof f.at === "string") {
        const at = make("input", { class: "fault-at", size: "10" }); at.value = f.at;
        at.addEventListener("change", () => { const e = docOf(); e.faults[i].at = at.value.trim(); setDoc(e); });
        row.append(make("span", {}, "at "), at, make("span", {}, " "));
      }
      row.appendChild(make("code", {}, JSON.stringify(rest)));
      const del = make("button", { class: "fault-delete" }, "delete");
      del.addEventListener("click", () => { const e = docOf(); e.faults.splice(i, 1); setDoc(e); });
      row.append(make("span", {}, " "), del);
      faultList.appendChild(row);
    });
  }
  // A duration as a file writes it ("12.5s", "250ms"), in ns (whole), or null: only to place
  // a fault's handle; the moved time is written back in whole ns and the engine validates it.
  function nsOf(text) {
    const m = /^([0-9]*)(?:\.([0-9]*))?(ns|us|\u00b5s|ms|s|min|m|h)$/.exec(typeof text === "string" ? text.trim() : "");
    if (!m || (m[1] === "" && !m[2])) return null;
    const scale = { ns: 1, us: 1e3, "\u00b5s": 1e3, ms: 1e6, s: 1e9, min: 60e9, m: 60e9, h: 3600e9 }[m[3]];
    return Math.round(Number(m[1] || "0") * scale + Number("0." + (m[2] || "0")) * scale);
  }
  /** The faults the view draws as handles to drag: those with a time `at`, on their node. */
  function movableFaults() {
    const d = docOf();
    const faults = d && Array.isArray(d.faults) ? d.faults : [];
    const out = [];
    faults.forEach((f, index) => {
      if (!f || typeof f !== "object") return;
      const t = nsOf(f.at);
      if (t === null || !Number.isSafeInteger(t)) return;
      const nodes = [];
      Object.keys(f).forEach(k => {
        const v = f[k];
        if (k === "at" || k === "for" || k === "by") return;
        if (typeof v === "string") nodes.push(v);
        else if (Array.isArray(v)) v.flat(2).forEach(n => { if (typeof n === "string") nodes.push(n); });
      });
      const what = Object.keys(f).find(k => k !== "at") || "fault";
      out.push({ index, t, nodes, label: "fault " + (index + 1) + " (" + what.replace("_", " ") + ")" });
    });
    return out;
  }
  function postFaults() {
    const w = $("view").contentWindow;
    if (w) w.postMessage({ splitbrain: "faults", faults: movableFaults() }, "*");
  }
  $("view").addEventListener("load", () => { postFaults(); showDivergence(); });
  /** A fault's handle dragged in the view to true time t (whole ns): the same edit as typing
   *  the time in its field, written in ns, then a re-run (the engine validates it as a file). */
  function moveFault(index, t) {
    const e = docOf();
    if (!e || !Array.isArray(e.faults) || !e.faults[index] || typeof e.faults[index] !== "object") return;
    e.faults[index].at = t + "ns";
    setDoc(e);
  }
  window.addEventListener("message", ev => {
    if (ev.source !== $("view").contentWindow) return;
    const m = ev.data;
    if (!m || typeof m !== "object") return;
    if (m.splitbrain === "lane" && typeof m.node === "string" && Number.isFinite(m.t)) openFaultForm(m.node, m.t);
    else if (m.splitbrain === "move-fault" && Number.isSafeInteger(m.index) && m.index >= 0 &&
      Number.isSafeInteger(m.t) && m.t >= 0) moveFault(m.index, m.t);
  });
  page.openFaultForm = openFaultForm;
  page.moveFault = moveFault;

  // --- where the runs part: the first event of this run's trace that differs from the
  // lesson's run's (the engine compares the two traces line by line), shown as both traces
  // write it, with a link that puts the view's cursor there. -------------------------------
  function showDivergence() {
    const d = page.last && page.last.diverge;
    if (!page.base || page.last === page.base || !d) { diverge.hidden = true; return; }
    diverge.hidden = false;
    diverge.replaceChildren();
    if (d.index === null) {
      diverge.dataset.event = "";
      diverge.textContent = "the same events as the lesson's run (" + d.events[1] + " events)";
      return;
    }
    diverge.dataset.event = String(d.index);
    diverge.dataset.t = String(d.t);
    const secs = ns => (ns / 1e9).toFixed(6) + " s";
    const go = make("a", { href: "#", id: "diverge-go" }, "event " + (d.index + 1) + ", at " + secs(d.t));
    go.addEventListener("click", ev => {
      ev.preventDefault();
      const w = $("view").contentWindow;
      if (w) w.postMessage({ splitbrain: "goto", t: d.t }, "*");
    });
    diverge.append(make("span", {}, "the runs first differ at "), go, make("span", {}, " (show it in the run):"),
      make("br"), make("span", {}, "the lesson's run: "), make("code", { id: "diverge-was" }, d.was === null ? "(its trace has ended)" : d.was),
      make("br"), make("span", {}, "this run: "), make("code", { id: "diverge-is" }, d.is === null ? "(its trace has ended)" : d.is));
  }

  // --- controls ---------------------------------------------------------------------------
  $("file").textContent = LESSON.file;
  $("run").addEventListener("click", () => { page.seed = $("seed").value.trim() || null; rerun(); });
  $("seed").addEventListener("keydown", ev => { if (ev.key === "Enter") $("run").click(); });
  $("stop").addEventListener("click", () => SPLITBRAIN.stop());
  $("reset").addEventListener("click", () => { page.text = LESSON.scenario; page.seed = page.base ? page.base.seed : null; rerun(); });
  $("apply").addEventListener("click", () => { page.text = $("scenario").value; rerun(); });
  function copy(text, what) {
    const done = () => { $("status").textContent = "copied the " + what; };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, () => { $("status").textContent = "copy refused: select it by hand"; });
  }
  $("copy-command").addEventListener("click", () => {
    copy((edited() ? "# save the scenario as " + fileName() + " first (copy scenario)\n" : "") + $("command").textContent, "command");
  });
  $("copy-scenario").addEventListener("click", () => copy(page.text, "scenario"));
  window.addEventListener("hashchange", () => {
    const before = [page.text, page.seed];
    page.text = LESSON.scenario; page.seed = null;
    readFragment();
    if (page.text !== before[0] || page.seed !== before[1]) rerun();
  });

  // --- a link's scenario far larger than any lesson: said before it runs, with a stop -----
  // The engine refuses what a file may not hold (the same limits); within them a run can
  // still take long, so a link whose run is larger than these says so and can be stopped.
  const HUGE = { seconds: 120, nodes: 32, faults: 200 };
  function seconds(d) {
    const m = /^([0-9]+(?:\.[0-9]+)?)\s*(ns|us|\u00b5s|ms|s|m|h)$/.exec(typeof d === "string" ? d.trim() : "");
    if (!m) return 0;
    return Number(m[1]) * { ns: 1e-9, us: 1e-6, "\u00b5s": 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 }[m[2]];
  }
  function hugeness(text) {
    let d;
    try { d = JSON.parse(text); } catch (e) { return null; }
    if (!d || typeof d !== "object") return null;
    const nodes = d.nodes && typeof d.nodes === "object" ? Object.values(d.nodes).reduce((n, x) => n + (x && Number.isSafeInteger(x.count) ? x.count : 1), 0) : 0;
    const parts = [];
    if (seconds(d.duration) > HUGE.seconds) parts.push("it runs " + d.duration + " of simulated time");
    if (nodes > HUGE.nodes) parts.push("it has " + nodes + " nodes");
    if (Array.isArray(d.faults) && d.faults.length > HUGE.faults) parts.push("it has " + d.faults.length + " faults");
    return parts.length ? parts.join(", ") : null;
  }
  function warnHuge(what) {
    let w = $("huge");
    if (!w) {
      w = make("p", { id: "huge", class: "warning" });
      $("error").parentNode.insertBefore(w, $("error"));
    }
    w.replaceChildren(make("span", { id: "huge-text" }, "This link's scenario is far larger than a lesson (" + what +
      "): running it may take long. "));
    const stop = make("button", { id: "huge-stop" }, "Stop");
    stop.addEventListener("click", () => SPLITBRAIN.stop());
    w.appendChild(stop);
    w.hidden = false;
  }
  page.hugeness = hugeness;

  // --- first runs: the lesson at its own seed (the "before" column), then the link's run ---
  page.ready = (async () => {
    readFragment();
    const linked = [page.text, page.seed];
    page.text = LESSON.scenario; page.seed = null;
    await rerun();
    page.base = page.last;
    if (linked[0] !== LESSON.scenario || (linked[1] !== null && linked[1] !== page.base.seed)) {
      page.text = linked[0]; page.seed = linked[1];
      const big = hugeness(linked[0]);
      if (big) warnHuge(big);
      await rerun();
      if ($("huge")) $("huge").hidden = true;
    } else {
      writeFragment();
    }
    showVerdicts();
    document.body.dataset.ready = "yes";
  })();
})();
