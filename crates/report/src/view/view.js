// splitbrain view: draws the embedded TimelineModel (lanes, bands, arrows, marks, network
// rules, violations) as SVG over a zoomable true-time window, with a cursor on the run's steps
// that can be stepped, played at a speed, or dragged on a time slider.
//
// Speed: the picture is drawn once per window (zoom, pan, kinds ticked, resize); moving the
// cursor inside the window moves one line and rewrites the side table, so a step costs the
// same on a run of 3,000 messages as on one of 30. The chart's width is read once per draw
// (reading it while drawing would force a layout for every element).
"use strict";
(function () {
  const M = JSON.parse(document.getElementById("model").textContent);
  const G = M.geometry, P = M.palette;
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("timeline");
  const chart = document.getElementById("chart");
  const $ = id => document.getElementById(id);
  const RIGHT = 30, AXIS = 40;
  let T = 30; // top of the lanes: below the label rows, set by each draw
  const state = {
    from: M.window[0], to: M.window[1], step: -1, selected: null, W: 0,
    shown: Object.fromEntries(M.kinds.map(k => [k.name, k.shown])),
    timer: null, speed: 2,
    // The lab's movable faults ({index, nodes, t, label}), sent by the page that embeds the view.
    labFaults: [],
  };

  // Lane tops, with a heading row where the group changes (as on the static chart).
  const laneY = [], groups = [];
  let y = 0, prevGroup = null;
  M.lanes.forEach((l, i) => {
    if (l.group !== prevGroup) { groups.push([y, l.group]); y += G.group_h; prevGroup = l.group; }
    laneY[i] = y; y += G.lane_h;
  });
  const lanesH = y;
  // Bands per lane, for the cursor's table.
  const bandsOf = M.lanes.map(() => []);
  M.bands.forEach((b, i) => { if (bandsOf[b.lane]) bandsOf[b.lane].push(i); });

  function secs(ns) { return (ns / 1e9).toFixed(3) + " s"; }
  function clockText(ns) { return (ns < 0 ? "-" : "") + (Math.abs(ns) / 1e9).toFixed(6) + " s"; }
  // A lane's clocks at true time t (ns): [monotonic ns, wall as RFC 3339 UTC], from the
  // lane's clock pieces [from, origin, origin mono, drift ppm, wall base] with the engine's
  // integer rule (LocalClock::mono and ::wall): mono = origin mono + floor((t - origin) *
  // (1e6 + drift) / 1e6), wall = wall base + mono, clamped to i64 (BigInt: Unix ns pass 2^53).
  function clocksAt(lane, t) {
    const pieces = M.clocks[lane];
    if (!pieces || pieces.length === 0) return [t, rfc3339ms(BigInt(t))];
    // The last piece starting at or before t (pieces are in true-time order, the first at 0).
    let lo = 0, hi = pieces.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (pieces[mid][0] <= t) lo = mid; else hi = mid - 1; }
    const p = pieces[lo];
    const mono = BigInt(p[2]) + (BigInt(t) - BigInt(p[1])) * BigInt(1000000 + p[3]) / 1000000n;
    let wall = BigInt(p[4]) + mono;
    const MAX = (1n << 63n) - 1n, MIN = -(1n << 63n);
    wall = wall > MAX ? MAX : wall < MIN ? MIN : wall;
    return [Number(mono), rfc3339ms(wall)];
  }
  // Floor division of BigInts (BigInt's / truncates toward zero; a stepped-back wall clock
  // may read before 1970).
  function floorDiv(a, b) { const q = a / b; return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q; }
  // Unix ns as the narration writes them: RFC 3339 UTC with milliseconds, rounded half up
  // (WallTime::rfc3339 of the reading rounded to the millisecond).
  function rfc3339ms(w) {
    const ms = floorDiv(w + 500000n, 1000000n);
    const secs = floorDiv(ms, 1000n), frac = Number(ms - secs * 1000n);
    const days = floorDiv(secs, 86400n), s = Number(secs - days * 86400n);
    // Hinnant's civil_from_days, as the engine's WallTime::rfc3339.
    const z = Number(days) + 719468, era = Math.floor(z / 146097), doe = z - era * 146097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153), d = doy - Math.floor((153 * mp + 2) / 5) + 1;
    const m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    const pad = (v, n) => String(v).padStart(n, "0");
    return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(Math.floor(s / 3600), 2) + ":" +
      pad(Math.floor(s / 60) % 60, 2) + ":" + pad(s % 60, 2) + "." + pad(frac, 3) + "Z";
  }
  // The chart's width, px: read from the page once per draw (and on resize), never per element.
  function measure() { state.W = Math.max(320, chart.clientWidth || 1000); }
  function plotW() { return Math.max(1, state.W - G.left - RIGHT); }
  function x(t) { return G.left + (t - state.from) / (state.to - state.from) * plotW(); }
  function el(name, attrs, parent, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    (parent || svg).appendChild(e);
    return e;
  }
  function visible(a, b) { return b >= state.from && a <= state.to; }
  function clip(t) { return Math.min(Math.max(t, state.from), state.to); }
  function onClick(e, info) {
    e.classList.add("clickable");
    e.addEventListener("click", ev => { ev.stopPropagation(); select(e, info); });
  }

  function niceStep(range, target) {
    const raw = range / target, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }

  function arrowInfo(a) {
    const lines = [M.lanes[a.from].name + " \u2192 " + M.lanes[a.to].name,
      "sent at " + secs(a.sent) + ", " + (a.dropped ? "dropped" : "handled") + " at " + secs(a.end)];
    if (a.payload) lines.push("payload: " + a.payload);
    return { title: a.kind + (a.dropped ? " (dropped)" : ""), t: a.sent, to: a.end, lines };
  }

  function draw() {
    measure();
    const frag = document.createDocumentFragment();
    const W = state.W;
    // Labels above the lanes (violations, network rules), each on the first row it fits.
    const labels = [], rowsEnd = [];
    M.violations.forEach((v, i) => { if (visible(v.from, v.to)) labels.push([v.from, v.invariant, P.violation, "violation-" + i]); });
    M.net.forEach(p => { if (visible(p.from, p.to) && p.top_label !== null) labels.push([p.from, p.top_label, P.grey, null]); });
    labels.forEach(l => {
      const lx = Math.max(G.left, Math.min(x(clip(l[0])), W - RIGHT - l[1].length * 7)), w = l[1].length * 7 + 10;
      let row = rowsEnd.findIndex(e => e < lx);
      if (row < 0) { rowsEnd.push(0); row = rowsEnd.length - 1; }
      rowsEnd[row] = lx + w;
      l.push(lx, row);
    });
    T = 16 + 15 * rowsEnd.length;
    const lanesBottom = T + lanesH, height = lanesBottom + AXIS;
    const x0 = G.left, x1 = W - RIGHT;
    defs(frag, x0, x1, lanesBottom);
    // Brackets first, then each label on a white ground, so no bracket runs through a label.
    labels.forEach(([t, text, c, id, lx, row]) => {
      el("line", { x1: x(clip(t)), x2: x(clip(t)), y1: 14 + 15 * row + 3, y2: T, stroke: c, "stroke-opacity": 0.6 }, frag);
    });
    labels.forEach(([t, text, c, id, lx, row]) => {
      const ty = 14 + 15 * row;
      el("rect", { x: lx - 1, y: ty - 11, width: text.length * 7 + 2, height: 14, fill: "#ffffff" }, frag);
      const e = el("text", { x: lx, y: ty, "font-size": 12, fill: c }, frag, text);
      if (id) { e.classList.add("clickable"); e.addEventListener("click", () => $(id).dispatchEvent(new MouseEvent("click"))); }
    });
    // Lanes and group headings.
    groups.forEach(([gy, title]) => {
      el("text", { x: 10, y: T + gy + 13, "font-size": 11, fill: P.grey }, frag, title.toUpperCase());
    });
    M.lanes.forEach((l, i) => {
      if (i % 2 === 1) el("rect", { x: x0, y: (T + laneY[i]), width: x1 - x0, height: G.lane_h, fill: "#f7f7f7" }, frag);
      el("text", { x: 12, y: (T + laneY[i]) + G.lane_h / 2 - 3, "font-size": 14, fill: P.ink }, frag, l.name);
      el("text", { x: 12, y: (T + laneY[i]) + G.lane_h / 2 + 13, "font-size": 11, fill: P.grey }, frag, l.role);
    });
    // Time grid and axis.
    const stepS = niceStep((state.to - state.from) / 1e9, Math.max(4, Math.round(plotW() / 80))),
      dec = stepS >= 1 ? 0 : Math.ceil(-Math.log10(stepS) - 1e-9);
    for (let k = Math.ceil(state.from / 1e9 / stepS); k * stepS * 1e9 <= state.to; k++) {
      const s = k * stepS, tx = x(s * 1e9);
      el("line", { x1: tx, x2: tx, y1: T, y2: lanesBottom, stroke: "#ebebeb" }, frag);
      el("text", { x: tx, y: lanesBottom + 16, "font-size": 12, "text-anchor": "middle", fill: P.ink }, frag, s.toFixed(dec));
    }
    el("text", { x: (x0 + x1) / 2, y: lanesBottom + 34, "font-size": 13, "text-anchor": "middle" }, frag, "true time (s)");
    // Everything on true time is clipped to the plot area: a zoomed window shows no arrow,
    // band or label past its edges.
    const plot = el("g", { id: "plot", "clip-path": "url(#plot-clip)" }, frag);
    // Network rules: partition sides tinted, cut or blocked links marked on their lanes.
    const tints = [P.sky, P.orange, P.green, P.purple];
    M.net.forEach((p, i) => {
      if (!visible(p.from, p.to)) return;
      p.sides.forEach((side, lane) => {
        if (side === null) return;
        const r = el("rect", { x: x(clip(p.from)), y: (T + laneY[lane]) + 1, width: Math.max(1, x(clip(p.to)) - x(clip(p.from))),
          height: G.lane_h - 2, fill: p.partition ? tints[side % 4] : P.grey, "fill-opacity": 0.16, id: "net-" + i + "-" + lane }, plot);
        onClick(r, { title: p.label, t: p.from, to: p.to, lines: [] });
      });
      // A one-way block: an arrow from the sender's lane to a bar on the receiver's.
      if (p.blocked) {
        const k = M.net.slice(0, i).filter(q => q.blocked && q.from === p.from).length;
        const bx = x(clip(p.from)) + 6 + 7 * k, ya = T + laneY[p.blocked[0]] + G.lane_h / 2, yb = T + laneY[p.blocked[1]] + G.lane_h / 2;
        const dir = yb > ya ? 1 : -1;
        const a = el("line", { id: "block-" + i, x1: bx, y1: ya, x2: bx, y2: yb - dir * 6, stroke: "#465a78", "stroke-width": 2, "marker-end": "url(#head)" }, plot);
        el("line", { x1: bx - 5, x2: bx + 5, y1: yb - dir * 2, y2: yb - dir * 2, stroke: "#465a78", "stroke-width": 3 }, plot);
        onClick(a, { title: p.label, t: p.from, to: p.to, lines: ["messages one way only: " + M.lanes[p.blocked[0]].name + " \u2192 " + M.lanes[p.blocked[1]].name + " are dropped"] });
      }
    });
    // Bands: crashes and pauses under beliefs; then beliefs and server state; then stale and truth.
    const order = { down: 0, unavailable: 0, paused: 0, leader: 1, holds: 1, grant: 1, key: 1, stale: 2, truth: 2 };
    [0, 1, 2].forEach(layer => M.bands.forEach((b, i) => {
      if (order[b.kind] !== layer || !visible(b.from, b.to)) return;
      const bx0 = x(clip(b.from)), bx1 = Math.max(bx0 + 1, x(clip(b.to))), ly = (T + laneY[b.lane]);
      let r;
      if (b.kind === "down") {
        r = el("rect", { x: bx0, y: ly + 2, width: bx1 - bx0, height: G.lane_h - 4, fill: "#a0a0a0", "fill-opacity": 0.75 }, plot);
      } else if (b.kind === "unavailable") {
        r = el("rect", { x: bx0, y: ly + 2, width: bx1 - bx0, height: G.lane_h - 4, fill: "#a0a0a0", "fill-opacity": 0.3, stroke: "#787878" }, plot);
        if (bx1 - bx0 > 200) el("text", { x: bx0 + 5, y: ly + G.lane_h - 5, "font-size": 12, "pointer-events": "none" }, plot, b.label.split(":")[0]);
      } else if (b.kind === "paused") {
        r = el("rect", { x: bx0, y: ly + 2, width: bx1 - bx0, height: G.lane_h - 4, fill: "url(#hatch)", stroke: P.ink }, plot);
        if (bx1 - bx0 > 80) el("text", { x: bx0 + 5, y: ly + G.lane_h - 5, "font-size": 12 }, plot, b.label);
      } else if (b.kind === "truth") {
        r = el("rect", { x: bx0, y: ly + G.band_bottom + 3, width: bx1 - bx0, height: 5, fill: P.ink }, plot);
      } else if (b.kind === "stale") {
        r = el("rect", { x: bx0, y: ly + G.band_top, width: bx1 - bx0, height: G.band_bottom - G.band_top,
          fill: "url(#stale)", stroke: P.vermillion, "stroke-width": 2 }, plot);
      } else {
        r = el("rect", { x: bx0, y: ly + G.band_top, width: bx1 - bx0, height: G.band_bottom - G.band_top,
          fill: b.fill, "fill-opacity": 0.85, stroke: b.fill }, plot);
        const label = (bx1 - bx0) > b.label.length * 7 + 8 ? b.label : ((bx1 - bx0) > b.short.length * 7 + 4 ? b.short : "");
        if (label) el("text", { x: bx0 + 5, y: ly + (G.band_top + G.band_bottom) / 2 + 4, "font-size": 12, fill: textOn(b.fill), "pointer-events": "none" }, plot, label);
      }
      r.id = "band-" + i;
      onClick(r, { title: b.label, t: b.from, to: b.to, lines: [M.lanes[b.lane].name] });
    }));
    // Violations: a band over every lane, outlines on the lanes involved.
    M.violations.forEach((v, i) => {
      if (!visible(v.from, v.to)) return;
      const vx0 = x(clip(v.from)), vx1 = Math.max(vx0 + 3, x(clip(v.to)));
      const r = el("rect", { id: "violation-" + i, x: vx0, y: T, width: vx1 - vx0, height: lanesBottom - T,
        fill: P.violation, "fill-opacity": 0.10, stroke: P.violation, "stroke-opacity": 0.7 }, plot);
      v.lanes.forEach(l => el("rect", { x: vx0, y: (T + laneY[l]) + 1, width: vx1 - vx0, height: G.lane_h - 2, fill: "none",
        stroke: P.violation, "stroke-opacity": 0.8, "pointer-events": "none" }, plot));
      onClick(r, { title: v.invariant + " violated", t: v.from, to: v.to, lines: [v.summary],
        evidence: v.evidence, causes: v.faults, evidenceSteps: v.evidence_steps });
    });
    // Messages of the shown kinds.
    const colour = Object.fromEntries(M.kinds.map(k => [k.name, k.colour]));
    M.arrows.forEach((a, i) => {
      if (!state.shown[a.kind] || !visible(a.sent, Math.max(a.end, a.sent))) return;
      const ay0 = (T + laneY[a.from]) + G.lane_h / 2, ay1 = (T + laneY[a.to]) + G.lane_h / 2;
      const c = a.dropped ? P.vermillion : colour[a.kind];
      const ln = el("line", { id: "arrow-" + i, x1: x(a.sent), y1: ay0, x2: x(Math.max(a.end, a.sent)), y2: ay1,
        stroke: c, "stroke-opacity": 0.9, "stroke-width": 1.2, "marker-end": a.dropped ? "" : "url(#head)" }, plot);
      onClick(ln, arrowInfo(a));
    });
    // Point marks; a write's token (or writer) beside it, as on the static chart, where it fits.
    const tagEnd = {};
    M.marks.forEach((m, i) => {
      if (!visible(m.t, m.t)) return;
      const mx = x(m.t), ly = (T + laneY[m.lane]), mid = ly + G.lane_h / 2;
      let e;
      if (m.kind === "validity") e = el("path", { d: `M${mx - 5},${ly + G.band_top - 8}L${mx + 5},${ly + G.band_top - 8}L${mx},${ly + G.band_top - 2}Z`, fill: P.ink }, plot);
      else if (m.kind === "rejected") e = el("path", { d: `M${mx - 6},${mid - 6}L${mx + 6},${mid + 6}M${mx - 6},${mid + 6}L${mx + 6},${mid - 6}`, stroke: P.vermillion, "stroke-width": 3 }, plot);
      else if (m.kind === "duplicate") e = el("circle", { cx: mx, cy: mid, r: 6, fill: "#ffffff", stroke: P.grey, "stroke-width": 2 }, plot);
      else if (m.kind === "clock_step") e = el("line", { x1: mx, x2: mx, y1: ly + 2, y2: ly + G.lane_h - 2, stroke: P.purple, "stroke-width": 3 }, plot);
      else e = el("circle", { cx: mx, cy: mid, r: 5, fill: m.colour, stroke: P.ink }, plot);
      e.id = "mark-" + i;
      onClick(e, { title: m.label, t: m.t, lines: [M.lanes[m.lane].name] });
      if (m.tag) {
        const w = m.tag.length * 7, lx = mx - w / 2;
        const rows = m.kind === "rejected" ? [true, false] : [false, true];
        for (const below of rows) {
          const k = m.lane + (below ? "b" : "a");
          if (tagEnd[k] !== undefined && tagEnd[k] + 4 >= lx) continue;
          tagEnd[k] = lx + w;
          el("text", { id: "tag-" + i, x: mx, y: below ? mid + 20 : mid - 10, "font-size": 12, "text-anchor": "middle",
            fill: m.kind === "rejected" ? P.vermillion : P.ink, "pointer-events": "none" }, plot, m.tag);
          break;
        }
      }
    });
    labHandles(plot);
    // Step ticks above the lanes.
    M.steps.forEach((s, i) => {
      if (!visible(s.t, s.t)) return;
      const tick = el("line", { id: "tick-" + i, x1: x(s.t), x2: x(s.t), y1: T - 4, y2: T + 2,
        stroke: s.what === "violation" ? P.violation : P.grey, "stroke-width": 2 }, frag);
      tick.classList.add("clickable");
      tick.addEventListener("click", () => setStep(i));
    });
    el("rect", { x: x0, y: T, width: x1 - x0, height: lanesBottom - T, fill: "none", stroke: P.grey, "pointer-events": "none" }, frag);
    el("line", { id: "cursor", x1: 0, x2: 0, y1: T - 4, y2: lanesBottom, stroke: P.ink, "stroke-width": 1.5,
      "stroke-dasharray": "4 3", visibility: "hidden", "pointer-events": "none" }, frag);
    svg.replaceChildren(frag);
    svg.setAttribute("width", W); svg.setAttribute("height", height);
    if (state.selected) { const s = $(state.selected); if (s) s.classList.add("selected"); }
    placeCursor();
  }

  // The lab's faults (a file's faults with a time `at`), each a handle on its node's lane that
  // can be dragged along true time; dropping it tells the page the fault's new time in whole
  // ns, and the page edits the file and re-runs. The view only draws what the page sent.
  let faultDrag = null;
  function labHandles(plot) {
    state.labFaults.forEach(f => {
      if (!visible(f.t, f.t)) return;
      let lane = M.lanes.findIndex(l => f.nodes.includes(l.node));
      if (lane < 0) lane = 0;
      const hx = x(f.t), ly = T + laneY[lane];
      const g = el("g", { id: "fault-handle-" + f.index, class: "fault-handle", "data-index": String(f.index) }, plot);
      el("line", { x1: hx, x2: hx, y1: ly + 2, y2: ly + G.lane_h - 2, stroke: P.purple, "stroke-width": 2, "stroke-dasharray": "3 2" }, g);
      el("path", { d: `M${hx - 7},${ly + 2}L${hx + 7},${ly + 2}L${hx},${ly + 13}Z`, fill: P.purple, stroke: "#ffffff" }, g);
      el("title", {}, g, f.label + " at " + secs(f.t) + ": drag to move it");
      g.addEventListener("mousedown", ev => {
        ev.stopPropagation(); ev.preventDefault();
        faultDrag = { f, g, x: ev.clientX, moved: false, t: f.t };
      });
    });
  }
  // Where a dragged handle is, as a true time: whole ns, inside the run.
  function dragTime(d, clientX) {
    const t = d.f.t + (clientX - d.x) / plotW() * (state.to - state.from);
    return Math.max(0, Math.min(M.end, Math.round(t)));
  }
  window.addEventListener("mousemove", ev => {
    const d = faultDrag;
    if (!d) return;
    if (Math.abs(ev.clientX - d.x) > 3) d.moved = true;
    if (!d.moved) return;
    d.t = dragTime(d, ev.clientX);
    d.g.setAttribute("transform", "translate(" + (x(d.t) - x(d.f.t)) + ",0)");
    $("cursor-time").textContent = secs(d.t);
    $("step-text").textContent = "move " + d.f.label + " to " + secs(d.t) + " (drop to re-run)";
  });
  window.addEventListener("mouseup", () => {
    const d = faultDrag;
    faultDrag = null;
    if (!d || !d.moved || d.t === d.f.t) { if (d) d.g.removeAttribute("transform"); return; }
    window.parent.postMessage({ splitbrain: "move-fault", index: d.f.index, t: d.t }, "*");
  });
  // Messages from the page that embeds the view: the lab's faults to draw, or a true time to
  // put the cursor at (the first step at or after it: where two runs first differ).
  window.addEventListener("message", ev => {
    if (ev.source !== window.parent) return;
    const m = ev.data;
    if (!m || typeof m !== "object") return;
    if (m.splitbrain === "faults" && Array.isArray(m.faults)) {
      state.labFaults = m.faults.filter(f => f && Number.isSafeInteger(f.index) && f.index >= 0 &&
        Number.isSafeInteger(f.t) && f.t >= 0 && Array.isArray(f.nodes) && typeof f.label === "string")
        .map(f => ({ index: f.index, t: f.t, label: f.label, nodes: f.nodes.filter(n => typeof n === "string") }));
      draw();
    } else if (m.splitbrain === "goto" && Number.isSafeInteger(m.t) && M.steps.length) {
      const i = M.steps.findIndex(s => s.t >= m.t);
      setStep(i < 0 ? M.steps.length - 1 : i);
    }
  });

  // The cursor line only: a step inside the window redraws nothing else.
  function placeCursor() {
    const c = $("cursor");
    if (!c) return;
    const s = M.steps[state.step];
    if (!s || !visible(s.t, s.t)) { c.setAttribute("visibility", "hidden"); return; }
    c.setAttribute("x1", x(s.t)); c.setAttribute("x2", x(s.t));
    c.setAttribute("visibility", "visible");
  }

  function defs(parent, x0, x1, bottom) {
    const d = el("defs", {}, parent);
    const h = el("pattern", { id: "hatch", width: 7, height: 7, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, d);
    el("rect", { width: 7, height: 7, fill: "#ffffff", "fill-opacity": 0.6 }, h);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 7, stroke: P.ink, "stroke-opacity": 0.45 }, h);
    const s = el("pattern", { id: "stale", width: 5, height: 5, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, d);
    el("rect", { width: 5, height: 5, fill: "#ffffff" }, s);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 5, stroke: P.vermillion }, s);
    const m = el("marker", { id: "head", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, d);
    el("path", { d: "M0,0L10,5L0,10Z", fill: "context-stroke" }, m);
    const cp = el("clipPath", { id: "plot-clip" }, d);
    el("rect", { id: "plot-clip-rect", x: x0, y: 0, width: Math.max(1, x1 - x0), height: bottom }, cp);
  }

  function textOn(hex) {
    const n = parseInt(hex.slice(1), 16), r = n >> 16, g = (n >> 8) & 255, b = n & 255;
    return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? P.ink : "#ffffff";
  }

  // Whether band b is in force at step i: by the steps it spans when the model gives them
  // (a belief lasts through the steps of its last instant that come before its end, such as
  // a paused holder's stale write), else by true time.
  function bandAt(b, i) {
    if (b.steps) return b.steps[0] <= i && i < b.steps[1];
    const t = M.steps[i].t;
    return b.from <= t && t < b.to;
  }
  // What each node believes at step i: its beliefs, pause or crash, server state.
  function beliefsAt(lane, i) {
    const out = [];
    bandsOf[lane].forEach(k => {
      const b = M.bands[k];
      if (!bandAt(b, i)) return;
      if (b.belief) out.push(b.label);
      else if (b.kind === "stale") out.push("(stale: the servers no longer grant it)");
      else if (b.kind === "paused") out.push("PAUSED");
      else if (b.kind === "down") out.push("DOWN");
      else if (b.kind === "grant" || b.kind === "key") out.push(b.label);
    });
    return out.length ? out.join("; ") : "\u2014";
  }

  function setStep(i, opts) {
    if (M.steps.length === 0) return;
    state.step = Math.max(0, Math.min(M.steps.length - 1, i));
    const s = M.steps[state.step];
    // Keep the cursor in view: pan (same span) only when it leaves the window.
    let moved = false;
    if (s.t < state.from || s.t > state.to) {
      const span = state.to - state.from;
      state.from = Math.max(0, Math.min(M.end - span, s.t - span / 2));
      state.to = state.from + span;
      moved = true;
    }
    $("step-index").textContent = "step " + (state.step + 1) + " of " + M.steps.length;
    $("cursor-time").textContent = secs(s.t);
    $("step-text").textContent = s.text;
    $("slider").value = String(Math.round(s.t / M.end * SLIDER));
    const rows = M.lanes.map((l, lane) => {
      const tr = document.createElement("tr");
      tr.dataset.node = l.name;
      if (s.lane === lane) tr.className = "here";
      const [mono, wall] = clocksAt(lane, s.t);
      const cells = [l.name, clockText(mono), wall, beliefsAt(lane, state.step)];
      ["name", "mono", "wall", "belief"].forEach((cls, k) => {
        const td = document.createElement("td");
        td.className = cls + (k === 1 || k === 2 ? " num" : "");
        td.textContent = cells[k];
        tr.appendChild(td);
      });
      return tr;
    });
    document.querySelector("#state tbody").replaceChildren(...rows);
    if (!(opts && opts.keepDetails)) {
      showDetails({ title: s.text, t: s.t, lines: [], causes: s.cause ? [s.cause] : [],
        causeStep: s.cause_step, causeArrow: s.cause_arrow });
    }
    if (moved || !$("cursor")) draw(); else placeCursor();
  }

  // A link in the details that goes to a step or shows a message.
  function link(text, go) {
    const a = document.createElement("a");
    a.href = "#";
    a.className = "goto";
    a.textContent = text;
    a.addEventListener("click", ev => { ev.preventDefault(); go(); });
    return a;
  }
  function gotoArrow(k) {
    const a = M.arrows[k];
    if (!state.shown[a.kind]) { state.shown[a.kind] = true; const cb = $("kind-" + a.kind); if (cb) { cb.checked = true; cb.setAttribute("checked", ""); } }
    if (!visible(a.sent, a.end)) {
      const span = state.to - state.from;
      state.from = Math.max(0, Math.min(M.end - span, a.sent - span / 4));
      state.to = state.from + span;
    }
    draw();
    const e = $("arrow-" + k);
    if (e) select(e, arrowInfo(a)); else showDetails(arrowInfo(a));
  }

  function showDetails(info) {
    const d = $("details");
    let text = info.title + "\n" + "at " + secs(info.t) + (info.to !== undefined && info.to !== info.t ? " \u2013 " + secs(info.to) : "");
    (info.lines || []).forEach(l => { text += "\n" + l; });
    d.textContent = text;
    if (info.evidence && info.evidence.length) {
      const ev = document.createElement("span");
      ev.className = "evidence";
      ev.appendChild(document.createTextNode("\nevidence:"));
      info.evidence.forEach(([t, node, what], k) => {
        const line = "\n  " + secs(t) + "  " + node + ": " + what;
        const target = info.evidenceSteps ? info.evidenceSteps[k] : null;
        if (target !== null && target !== undefined) {
          ev.appendChild(document.createTextNode("\n  "));
          ev.appendChild(link(secs(t) + "  " + node + ": " + what, () => setStep(target)));
        } else ev.appendChild(document.createTextNode(line));
      });
      d.appendChild(ev);
    }
    if (info.causes && info.causes.length) {
      const c = document.createElement("div");
      c.className = "cause";
      c.id = "causes";
      c.appendChild(document.createTextNode("\ncaused by:"));
      info.causes.forEach(text => {
        c.appendChild(document.createTextNode("\n  "));
        if (info.causeArrow !== null && info.causeArrow !== undefined) c.appendChild(link(text, () => gotoArrow(info.causeArrow)));
        else if (info.causeStep !== null && info.causeStep !== undefined) c.appendChild(link(text, () => setStep(info.causeStep)));
        else c.appendChild(document.createTextNode(text));
      });
      d.appendChild(c);
    }
  }

  function select(e, info) {
    if (state.selected) { const old = $(state.selected); if (old) old.classList.remove("selected"); }
    state.selected = e.id;
    e.classList.add("selected");
    showDetails(info);
  }

  // Zoom by factor around the cursor when it is in view (else around the window's middle),
  // keeping the cursor at the same place on the screen.
  function zoom(factor, centre) {
    const span = state.to - state.from, s = M.steps[state.step];
    const c = centre !== undefined ? centre : (s && visible(s.t, s.t) ? s.t : (state.from + state.to) / 2);
    const ns = Math.max(1e6, Math.min(M.end, span * factor));
    const f = (c - state.from) / span;
    state.from = Math.max(0, Math.min(M.end - ns, c - f * ns));
    state.to = state.from + ns;
    draw();
  }
  function whole() { state.from = 0; state.to = M.end; draw(); }

  function kindControls() {
    const box = $("kinds");
    M.kinds.forEach(k => {
      const lab = document.createElement("label");
      const cb = document.createElement("input");
      cb.type = "checkbox"; cb.checked = state.shown[k.name]; cb.id = "kind-" + k.name;
      if (state.shown[k.name]) cb.setAttribute("checked", "");
      cb.addEventListener("change", () => { if (cb.checked) cb.setAttribute("checked", ""); else cb.removeAttribute("checked"); });
      cb.addEventListener("change", () => { state.shown[k.name] = cb.checked; draw(); });
      const sw = document.createElement("span");
      sw.className = "swatch"; sw.style.background = k.colour;
      lab.appendChild(cb); lab.appendChild(sw);
      lab.appendChild(document.createTextNode(k.name + " (" + k.count + ")"));
      box.appendChild(lab);
    });
  }

  // Play: the cursor moves on by one step every 1/speed s until the last step or a pause.
  function play() {
    if (state.timer !== null) return;
    if (state.step >= M.steps.length - 1) setStep(0);
    $("play").textContent = "\u23f8 pause";
    $("play").dataset.playing = "yes";
    state.timer = setInterval(() => {
      if (state.step >= M.steps.length - 1) { pause(); return; }
      setStep(state.step + 1);
    }, 1000 / state.speed);
  }
  function pause() {
    if (state.timer !== null) clearInterval(state.timer);
    state.timer = null;
    $("play").textContent = "\u25b6 play";
    $("play").dataset.playing = "no";
  }
  function setSpeed(v) {
    state.speed = Math.max(0.1, Number(v) || 2);
    if (state.timer !== null) { pause(); play(); }
  }

  // The time slider: SLIDER positions over the whole run; the cursor goes to the last step at
  // or before the slider's time (rewinding or skipping ahead).
  const SLIDER = 10000;
  function stepAtOrBefore(t) {
    let lo = 0, hi = M.steps.length - 1;
    if (hi < 0 || M.steps[0].t > t) return 0;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (M.steps[mid].t <= t) lo = mid; else hi = mid - 1; }
    return lo;
  }

  function key(name) {
    if (name === "ArrowRight" || name === "n") setStep(state.step + 1);
    else if (name === "ArrowLeft" || name === "p") setStep(state.step - 1);
    else if (name === "Home") setStep(0);
    else if (name === "End") setStep(M.steps.length - 1);
    else if (name === "+" || name === "=") zoom(0.5);
    else if (name === "-") zoom(2);
    else if (name === "0") whole();
    else if (name === " ") { if (state.timer === null) play(); else pause(); }
    else return false;
    return true;
  }
  document.addEventListener("keydown", ev => {
    if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") && ev.key !== " ") return;
    if (key(ev.key)) ev.preventDefault();
  });
  $("next").addEventListener("click", () => setStep(state.step + 1));
  $("prev").addEventListener("click", () => setStep(state.step - 1));
  $("play").addEventListener("click", () => { if (state.timer === null) play(); else pause(); });
  $("speed").addEventListener("change", () => setSpeed($("speed").value));
  $("slider").max = String(SLIDER);
  $("slider").addEventListener("input", () => setStep(stepAtOrBefore(Number($("slider").value) / SLIDER * M.end)));
  $("zoom-in").addEventListener("click", () => zoom(0.5));
  $("zoom-out").addEventListener("click", () => zoom(2));
  $("zoom-reset").addEventListener("click", whole);
  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    const t = state.from + (ev.offsetX - G.left) / plotW() * (state.to - state.from);
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, Math.max(0, Math.min(M.end, t)));
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", ev => { drag = { x: ev.clientX, y: ev.clientY, from: state.from, moved: false }; chart.classList.add("dragging"); });
  window.addEventListener("mouseup", ev => {
    const d = drag;
    drag = null; chart.classList.remove("dragging");
    // In the lab (the page embeds this view), a click on a lane's background, not a drag,
    // tells the page which node and true time were clicked, to add a fault there.
    if (d && !d.moved && window.parent !== window && ev.target && ev.target.closest && ev.target.closest("#timeline")
        && !(ev.target.classList && ev.target.classList.contains("clickable"))) laneClick(ev);
  });
  function laneClick(ev) {
    const r = svg.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top - T;
    if (px < G.left || px > state.W - RIGHT || py < 0 || py > lanesH) return;
    const lane = laneY.findIndex((ly, i) => py >= ly && py < ly + G.lane_h);
    if (lane < 0) return;
    const t = Math.round(state.from + (px - G.left) / plotW() * (state.to - state.from));
    // A thread's lane adds the fault to its node (a fault stops a node, not one thread).
    window.parent.postMessage({ splitbrain: "lane", node: M.lanes[lane].node, t: Math.max(0, Math.min(M.end, t)) }, "*");
  }
  window.addEventListener("mousemove", ev => {
    if (!drag) return;
    if (Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3) drag.moved = true;
    if (!drag.moved) return;
    const span = state.to - state.from, dt = (ev.clientX - drag.x) / plotW() * span;
    state.from = Math.max(0, Math.min(M.end - span, drag.from - dt));
    state.to = state.from + span;
    draw();
  });
  window.addEventListener("resize", draw);

  // Scripted use: #step=N&keys=ArrowRight,ArrowLeft&click=violation-0&kinds=ALL&zoom=A-B&speed=S
  function fromHash() {
    const h = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (h.get("kinds") === "ALL") M.kinds.forEach(k => { state.shown[k.name] = true; });
    if (h.get("zoom")) {
      const [a, b] = h.get("zoom").split("-").map(Number);
      if (a < b) { state.from = Math.max(0, a); state.to = Math.min(M.end, b); }
    }
    if (h.get("speed")) { $("speed").value = h.get("speed"); setSpeed(h.get("speed")); }
    kindControls();
    draw();
    // The cursor opens on the first step inside the window the page opens on, so the lesson's
    // window is what the student sees first (and the next step does not jump away from it).
    let first = M.steps.findIndex(s => s.t >= state.from && s.t <= state.to);
    if (first < 0) first = 0;
    setStep(h.has("step") ? Number(h.get("step")) : first);
    (h.get("keys") || "").split(",").filter(k => k).forEach(k => {
      document.dispatchEvent(new KeyboardEvent("keydown", { key: k === "Space" ? " " : k, bubbles: true }));
    });
    if (h.get("click")) {
      const e = $(h.get("click"));
      if (e) e.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    }
    document.body.dataset.ready = "yes";
  }
  fromHash();
})();
