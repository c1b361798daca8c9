// splitbrain view: draws the embedded TimelineModel (lanes, bands, arrows, marks, network
// rules, violations) as SVG over a zoomable true-time window, with a cursor on the run's steps.
"use strict";
(function () {
  const M = JSON.parse(document.getElementById("model").textContent);
  const G = M.geometry, P = M.palette;
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.getElementById("timeline");
  const chart = document.getElementById("chart");
  const RIGHT = 30, AXIS = 40;
  let T = 30; // top of the lanes: below the label rows, set by each draw
  const state = {
    from: M.window[0], to: M.window[1], step: -1, selected: null,
    shown: Object.fromEntries(M.kinds.map(k => [k.name, k.shown])),
  };

  // Lane tops, with a heading row where the group changes (as on the static chart).
  const laneY = [], groups = [];
  let y = 0, prevGroup = null;
  M.lanes.forEach((l, i) => {
    if (l.group !== prevGroup) { groups.push([y, l.group]); y += G.group_h; prevGroup = l.group; }
    laneY[i] = y; y += G.lane_h;
  });
  const lanesH = y;

  function secs(ns) { return (ns / 1e9).toFixed(3) + " s"; }
  function clockText(ns) { return (ns < 0 ? "-" : "") + (Math.abs(ns) / 1e9).toFixed(6) + " s"; }
  // A lane's clocks at true time t (ns): [monotonic ns, wall as RFC 3339 UTC], from the
  // lane's clock pieces [from, origin, origin mono, drift ppm, wall base] with the engine's
  // integer rule: mono = origin mono + floor((t - origin) * (1e6 + drift) / 1e6), wall =
  // wall base + mono (BigInt: Unix ns pass 2^53).
  function clocksAt(lane, t) {
    const pieces = M.clocks[lane];
    let p = pieces[0];
    for (const q of pieces) { if (q[0] <= t) p = q; else break; }
    const mono = BigInt(p[2]) + (BigInt(t) - BigInt(p[1])) * BigInt(1000000 + p[3]) / 1000000n;
    let wall = BigInt(p[4]) + mono;
    const MAX = (1n << 63n) - 1n, MIN = -(1n << 63n);
    wall = wall > MAX ? MAX : wall < MIN ? MIN : wall;
    return [Number(mono), rfc3339(wall)];
  }
  // Unix ns as the narration writes them: milliseconds, more digits only where not zero.
  function rfc3339(w) {
    const B = 1000000000n, D = 86400n;
    let secs = w / B, ns = w % B;
    if (ns < 0n) { ns += B; secs -= 1n; }
    let days = secs / D, sod = secs % D;
    if (sod < 0n) { sod += D; days -= 1n; }
    // Hinnant's civil_from_days, as the engine's WallTime::rfc3339.
    const z = Number(days) + 719468, era = Math.floor(z / 146097), doe = z - era * 146097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153), d = doy - Math.floor((153 * mp + 2) / 5) + 1;
    const m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    const pad = (v, n) => String(v).padStart(n, "0");
    const n = Number(ns), s = Number(sod);
    const frac = n % 1000000 === 0 ? pad(n / 1000000, 3) : pad(n, 9).replace(/0+$/, "");
    return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(Math.floor(s / 3600), 2) + ":" +
      pad(Math.floor(s / 60) % 60, 2) + ":" + pad(s % 60, 2) + "." + frac + "Z";
  }
  function width() { return Math.max(600, chart.clientWidth || 1000); }
  function x(t) {
    const w = width() - G.left - RIGHT;
    return G.left + (t - state.from) / (state.to - state.from) * w;
  }
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

  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const W = width();
    // Labels above the lanes (violations, network rules), each on the first row it fits.
    const labels = [], rowsEnd = [];
    M.violations.forEach((v, i) => { if (visible(v.from, v.to)) labels.push([v.from, v.invariant, P.violation, "violation-" + i]); });
    M.net.forEach((p, i) => { if (visible(p.from, p.to) && p.top_label !== null) labels.push([p.from, p.top_label, P.grey, null]); });
    labels.forEach(l => {
      const lx = Math.min(Math.max(x(clip(l[0])), G.left), W - RIGHT - l[1].length * 7), w = l[1].length * 7 + 10;
      let row = rowsEnd.findIndex(e => e < lx);
      if (row < 0) { rowsEnd.push(0); row = rowsEnd.length - 1; }
      rowsEnd[row] = lx + w;
      l.push(lx, row);
    });
    T = 16 + 15 * rowsEnd.length;
    const lanesBottom = T + lanesH, height = lanesBottom + AXIS;
    svg.setAttribute("width", W); svg.setAttribute("height", height);
    // Brackets first, then each label on a white ground, so no bracket runs through a label.
    labels.forEach(([t, text, c, id, lx, row]) => {
      el("line", { x1: x(clip(t)), x2: x(clip(t)), y1: 14 + 15 * row + 3, y2: T, stroke: c, "stroke-opacity": 0.6 });
    });
    labels.forEach(([t, text, c, id, lx, row]) => {
      const ty = 14 + 15 * row;
      el("rect", { x: lx - 1, y: ty - 11, width: text.length * 7 + 2, height: 14, fill: "#ffffff" });
      const e = el("text", { x: lx, y: ty, "font-size": 12, fill: c }, svg, text);
      if (id) { e.classList.add("clickable"); e.addEventListener("click", () => document.getElementById(id).dispatchEvent(new MouseEvent("click"))); }
    });
    const x0 = G.left, x1 = W - RIGHT;
    // Lanes and group headings.
    groups.forEach(([gy, title]) => {
      el("text", { x: 10, y: T + gy + 13, "font-size": 11, fill: P.grey }, svg, title.toUpperCase());
    });
    M.lanes.forEach((l, i) => {
      if (i % 2 === 1) el("rect", { x: x0, y: (T + laneY[i]), width: x1 - x0, height: G.lane_h, fill: "#f7f7f7" });
      el("text", { x: 12, y: (T + laneY[i]) + G.lane_h / 2 - 3, "font-size": 14, fill: P.ink }, svg, l.name);
      el("text", { x: 12, y: (T + laneY[i]) + G.lane_h / 2 + 13, "font-size": 11, fill: P.grey }, svg, l.role);
    });
    // Time grid and axis.
    const stepS = niceStep((state.to - state.from) / 1e9, 12), dec = stepS >= 1 ? 0 : Math.ceil(-Math.log10(stepS));
    for (let s = Math.ceil(state.from / 1e9 / stepS) * stepS; s * 1e9 <= state.to; s += stepS) {
      const tx = x(s * 1e9);
      el("line", { x1: tx, x2: tx, y1: T, y2: lanesBottom, stroke: "#ebebeb" });
      el("text", { x: tx, y: lanesBottom + 16, "font-size": 12, "text-anchor": "middle", fill: P.ink }, svg, s.toFixed(dec));
    }
    el("text", { x: (x0 + x1) / 2, y: lanesBottom + 34, "font-size": 13, "text-anchor": "middle" }, svg, "true time (s)");
    // Network rules: partition sides tinted, cut or blocked links marked on their lanes.
    const tints = [P.sky, P.orange, P.green, P.purple];
    M.net.forEach((p, i) => {
      if (!visible(p.from, p.to)) return;
      p.sides.forEach((side, lane) => {
        if (side === null) return;
        const r = el("rect", { x: x(clip(p.from)), y: (T + laneY[lane]) + 1, width: Math.max(1, x(clip(p.to)) - x(clip(p.from))),
          height: G.lane_h - 2, fill: p.partition ? tints[side % 4] : P.grey, "fill-opacity": 0.16, id: "net-" + i + "-" + lane });
        onClick(r, { title: p.label, t: p.from, to: p.to, lines: [] });
      });
      // A one-way block: an arrow from the sender's lane to a bar on the receiver's.
      if (p.blocked) {
        const k = M.net.slice(0, i).filter(q => q.blocked && q.from === p.from).length;
        const bx = x(clip(p.from)) + 6 + 7 * k, ya = T + laneY[p.blocked[0]] + G.lane_h / 2, yb = T + laneY[p.blocked[1]] + G.lane_h / 2;
        const dir = yb > ya ? 1 : -1;
        const a = el("line", { id: "block-" + i, x1: bx, y1: ya, x2: bx, y2: yb - dir * 6, stroke: "#465a78", "stroke-width": 2, "marker-end": "url(#head)" });
        el("line", { x1: bx - 5, x2: bx + 5, y1: yb - dir * 2, y2: yb - dir * 2, stroke: "#465a78", "stroke-width": 3 });
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
        r = el("rect", { x: bx0, y: ly + 2, width: bx1 - bx0, height: G.lane_h - 4, fill: "#a0a0a0", "fill-opacity": 0.75 });
      } else if (b.kind === "unavailable") {
        r = el("rect", { x: bx0, y: ly + 2, width: bx1 - bx0, height: G.lane_h - 4, fill: "#a0a0a0", "fill-opacity": 0.3, stroke: "#787878" });
        if (bx1 - bx0 > 200) el("text", { x: bx0 + 5, y: ly + G.lane_h - 5, "font-size": 12, "pointer-events": "none" }, svg, b.label.split(":")[0]);
      } else if (b.kind === "paused") {
        r = el("rect", { x: bx0, y: ly + 2, width: bx1 - bx0, height: G.lane_h - 4, fill: "url(#hatch)", stroke: P.ink });
        if (bx1 - bx0 > 80) el("text", { x: bx0 + 5, y: ly + G.lane_h - 5, "font-size": 12 }, svg, b.label);
      } else if (b.kind === "truth") {
        r = el("rect", { x: bx0, y: ly + G.band_bottom + 3, width: bx1 - bx0, height: 5, fill: P.ink });
      } else if (b.kind === "stale") {
        r = el("rect", { x: bx0, y: ly + G.band_top, width: bx1 - bx0, height: G.band_bottom - G.band_top,
          fill: "url(#stale)", stroke: P.vermillion, "stroke-width": 2 });
      } else {
        r = el("rect", { x: bx0, y: ly + G.band_top, width: bx1 - bx0, height: G.band_bottom - G.band_top,
          fill: b.fill, "fill-opacity": 0.85, stroke: b.fill });
        const label = (bx1 - bx0) > b.label.length * 7 + 8 ? b.label : ((bx1 - bx0) > b.short.length * 7 + 4 ? b.short : "");
        if (label) el("text", { x: bx0 + 5, y: ly + (G.band_top + G.band_bottom) / 2 + 4, "font-size": 12, fill: textOn(b.fill), "pointer-events": "none" }, svg, label);
      }
      r.id = "band-" + i;
      onClick(r, { title: b.label, t: b.from, to: b.to, lines: [M.lanes[b.lane].name] });
    }));
    // Violations: a band over every lane, outlines on the lanes involved.
    M.violations.forEach((v, i) => {
      if (!visible(v.from, v.to)) return;
      const vx0 = x(clip(v.from)), vx1 = Math.max(vx0 + 3, x(clip(v.to)));
      const r = el("rect", { id: "violation-" + i, x: vx0, y: T, width: vx1 - vx0, height: lanesBottom - T,
        fill: P.violation, "fill-opacity": 0.10, stroke: P.violation, "stroke-opacity": 0.7 });
      v.lanes.forEach(l => el("rect", { x: vx0, y: (T + laneY[l]) + 1, width: vx1 - vx0, height: G.lane_h - 2, fill: "none",
        stroke: P.violation, "stroke-opacity": 0.8, "pointer-events": "none" }));
      onClick(r, { title: v.invariant + " violated", t: v.from, to: v.to, lines: [v.summary],
        evidence: v.evidence, causes: v.faults });
    });
    // Messages of the shown kinds.
    const colour = Object.fromEntries(M.kinds.map(k => [k.name, k.colour]));
    M.arrows.forEach((a, i) => {
      if (!state.shown[a.kind] || !visible(a.sent, Math.max(a.end, a.sent))) return;
      const ay0 = (T + laneY[a.from]) + G.lane_h / 2, ay1 = (T + laneY[a.to]) + G.lane_h / 2;
      const c = a.dropped ? P.vermillion : colour[a.kind];
      const ln = el("line", { id: "arrow-" + i, x1: x(a.sent), y1: ay0, x2: x(Math.max(a.end, a.sent)), y2: ay1,
        stroke: c, "stroke-opacity": 0.9, "stroke-width": 1.2, "marker-end": a.dropped ? "" : "url(#head)" });
      onClick(ln, { title: a.kind + (a.dropped ? " (dropped)" : ""), t: a.sent, to: a.end,
        lines: [M.lanes[a.from].name + " \u2192 " + M.lanes[a.to].name, "sent at " + secs(a.sent) + ", " + (a.dropped ? "dropped" : "handled") + " at " + secs(a.end)] });
    });
    // Point marks.
    M.marks.forEach((m, i) => {
      if (!visible(m.t, m.t)) return;
      const mx = x(m.t), ly = (T + laneY[m.lane]), mid = ly + G.lane_h / 2;
      let e;
      if (m.kind === "validity") e = el("path", { d: `M${mx - 5},${ly + G.band_top - 8}L${mx + 5},${ly + G.band_top - 8}L${mx},${ly + G.band_top - 2}Z`, fill: P.ink });
      else if (m.kind === "rejected") e = el("path", { d: `M${mx - 6},${mid - 6}L${mx + 6},${mid + 6}M${mx - 6},${mid + 6}L${mx + 6},${mid - 6}`, stroke: P.vermillion, "stroke-width": 3 });
      else if (m.kind === "duplicate") e = el("circle", { cx: mx, cy: mid, r: 6, fill: "#ffffff", stroke: P.grey, "stroke-width": 2 });
      else if (m.kind === "clock_step") e = el("line", { x1: mx, x2: mx, y1: ly + 2, y2: ly + G.lane_h - 2, stroke: P.purple, "stroke-width": 3 });
      else e = el("circle", { cx: mx, cy: mid, r: 5, fill: m.colour, stroke: P.ink });
      e.id = "mark-" + i;
      onClick(e, { title: m.label, t: m.t, lines: [M.lanes[m.lane].name] });
    });
    // Step ticks above the lanes and the cursor.
    M.steps.forEach((s, i) => {
      if (!visible(s.t, s.t)) return;
      const tick = el("line", { x1: x(s.t), x2: x(s.t), y1: T - 4, y2: T + 2,
        stroke: s.what === "violation" ? P.violation : P.grey, "stroke-width": 2 });
      tick.classList.add("clickable");
      tick.addEventListener("click", () => setStep(i));
    });
    if (state.step >= 0 && visible(M.steps[state.step].t, M.steps[state.step].t)) {
      const cx = x(M.steps[state.step].t);
      el("line", { id: "cursor", x1: cx, x2: cx, y1: T - 4, y2: lanesBottom, stroke: P.ink, "stroke-width": 1.5, "stroke-dasharray": "4 3" });
    }
    el("rect", { x: x0, y: T, width: x1 - x0, height: lanesBottom - T, fill: "none", stroke: P.grey, "pointer-events": "none" });
    defs();
  }

  function defs() {
    const d = el("defs", {});
    const h = el("pattern", { id: "hatch", width: 7, height: 7, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, d);
    el("rect", { width: 7, height: 7, fill: "#ffffff", "fill-opacity": 0.6 }, h);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 7, stroke: P.ink, "stroke-opacity": 0.45 }, h);
    const s = el("pattern", { id: "stale", width: 5, height: 5, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, d);
    el("rect", { width: 5, height: 5, fill: "#ffffff" }, s);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 5, stroke: P.vermillion }, s);
    const m = el("marker", { id: "head", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" }, d);
    el("path", { d: "M0,0L10,5L0,10Z", fill: "context-stroke" }, m);
  }

  function textOn(hex) {
    const n = parseInt(hex.slice(1), 16), r = n >> 16, g = (n >> 8) & 255, b = n & 255;
    return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? P.ink : "#ffffff";
  }

  // What each node believes at true time t: its beliefs, pause or crash, server state.
  function beliefsAt(lane, t) {
    const out = [];
    M.bands.forEach(b => {
      if (b.lane !== lane || b.from > t || t >= b.to) return;
      if (b.belief) out.push(b.label);
      else if (b.kind === "stale") out.push("(stale: the servers no longer grant it)");
      else if (b.kind === "paused") out.push("PAUSED");
      else if (b.kind === "down") out.push("DOWN");
      else if (b.kind === "grant" || b.kind === "key") out.push(b.label);
    });
    return out.length ? out.join("; ") : "\u2014";
  }

  function setStep(i) {
    if (M.steps.length === 0) return;
    state.step = Math.max(0, Math.min(M.steps.length - 1, i));
    const s = M.steps[state.step];
    // Keep the cursor in view.
    if (s.t < state.from || s.t > state.to) {
      const span = state.to - state.from;
      state.from = Math.max(0, Math.min(M.end - span, s.t - span / 2));
      state.to = state.from + span;
    }
    document.getElementById("step-index").textContent = "step " + (state.step + 1) + " of " + M.steps.length;
    document.getElementById("cursor-time").textContent = secs(s.t);
    document.getElementById("step-text").textContent = s.text;
    const body = document.querySelector("#state tbody");
    body.innerHTML = "";
    M.lanes.forEach((l, lane) => {
      const tr = document.createElement("tr");
      tr.dataset.node = l.name;
      if (s.lane === lane) tr.className = "here";
      const [mono, wall] = clocksAt(lane, s.t);
      const cells = [l.name, clockText(mono), wall, beliefsAt(lane, s.t)];
      ["name", "mono", "wall", "belief"].forEach((cls, k) => {
        const td = document.createElement("td");
        td.className = cls + (k === 1 || k === 2 ? " num" : "");
        td.textContent = cells[k];
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    showDetails({ title: s.text, t: s.t, lines: [], causes: s.cause ? [s.cause] : [] });
    draw();
  }

  function showDetails(info) {
    const d = document.getElementById("details");
    let text = info.title + "\n" + "at " + secs(info.t) + (info.to !== undefined && info.to !== info.t ? " \u2013 " + secs(info.to) : "");
    (info.lines || []).forEach(l => { text += "\n" + l; });
    if (info.evidence && info.evidence.length) {
      text += "\n\nevidence:";
      info.evidence.forEach(([t, node, what]) => { text += "\n  " + secs(t) + "  " + node + ": " + what; });
    }
    d.textContent = text;
    if (info.causes && info.causes.length) {
      const c = document.createElement("div");
      c.className = "cause";
      c.id = "causes";
      c.textContent = "\ncaused by:\n" + info.causes.map(x => "  " + x).join("\n");
      d.appendChild(c);
    }
  }

  function select(e, info) {
    if (state.selected) { const old = document.getElementById(state.selected); if (old) old.classList.remove("selected"); }
    state.selected = e.id;
    e.classList.add("selected");
    showDetails(info);
  }

  function zoom(factor, centre) {
    const span = state.to - state.from, c = centre === undefined ? (state.from + state.to) / 2 : centre;
    const ns = Math.max(1e6, Math.min(M.end, span * factor));
    const f = (c - state.from) / span;
    state.from = Math.max(0, Math.min(M.end - ns, c - f * ns));
    state.to = state.from + ns;
    draw();
  }

  function kindControls() {
    const box = document.getElementById("kinds");
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

  function key(name) {
    if (name === "ArrowRight" || name === "n") setStep(state.step + 1);
    else if (name === "ArrowLeft" || name === "p") setStep(state.step - 1);
    else if (name === "Home") setStep(0);
    else if (name === "End") setStep(M.steps.length - 1);
    else if (name === "+" || name === "=") zoom(0.5);
    else if (name === "-") zoom(2);
    else if (name === "0") { state.from = 0; state.to = M.end; draw(); }
    else return false;
    return true;
  }
  document.addEventListener("keydown", ev => { if (key(ev.key)) ev.preventDefault(); });
  document.getElementById("next").addEventListener("click", () => setStep(state.step + 1));
  document.getElementById("prev").addEventListener("click", () => setStep(state.step - 1));
  document.getElementById("zoom-in").addEventListener("click", () => zoom(0.5));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(2));
  document.getElementById("zoom-reset").addEventListener("click", () => { state.from = 0; state.to = M.end; draw(); });
  svg.addEventListener("wheel", ev => {
    ev.preventDefault();
    const t = state.from + (ev.offsetX - G.left) / (width() - G.left - RIGHT) * (state.to - state.from);
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, Math.max(0, Math.min(M.end, t)));
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", ev => { drag = { x: ev.clientX, from: state.from }; chart.classList.add("dragging"); });
  window.addEventListener("mouseup", () => { drag = null; chart.classList.remove("dragging"); });
  window.addEventListener("mousemove", ev => {
    if (!drag) return;
    const span = state.to - state.from, dt = (ev.clientX - drag.x) / (width() - G.left - RIGHT) * span;
    state.from = Math.max(0, Math.min(M.end - span, drag.from - dt));
    state.to = state.from + span;
    draw();
  });
  window.addEventListener("resize", draw);

  // Scripted use: #step=N&keys=ArrowRight,ArrowLeft&click=violation-0&kinds=ALL&zoom=A-B
  function fromHash() {
    const h = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (h.get("kinds") === "ALL") M.kinds.forEach(k => { state.shown[k.name] = true; });
    if (h.get("zoom")) {
      const [a, b] = h.get("zoom").split("-").map(Number);
      if (a < b) { state.from = Math.max(0, a); state.to = Math.min(M.end, b); }
    }
    kindControls();
    setStep(h.has("step") ? Number(h.get("step")) : 0);
    (h.get("keys") || "").split(",").filter(k => k).forEach(k => {
      document.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
    });
    if (h.get("click")) {
      const e = document.getElementById(h.get("click"));
      if (e) e.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    }
    document.body.dataset.ready = "yes";
  }
  fromHash();
})();
