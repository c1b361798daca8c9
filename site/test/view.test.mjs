// The pages `splitbrain view` / `run --view` write, driven in headless Chromium (playwright-core):
// the controls (play, pause, speed, the time slider, stepping), the lesson's window at open,
// zoom around the cursor, arrows clipped to the plot, the whole run in reach at 1024 px, a
// clicked message's payload, causes as links; the clocks at a step after a clock step and on a
// fast clock; the lab's fault handles dragged and its "goto"; a lane per thread (24a); and
// the time of a step on the largest pages.
//
// Usage: SPLITBRAIN_BIN=target/quick/splitbrain node site/test/view.test.mjs
// Prints each page's step times (ms, the cursor moved by a key press, layout included, as
// measured by the page with performance.now()).
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = resolve(root, process.env.SPLITBRAIN_BIN || "target/release/splitbrain");
const dir = mkdtempSync(join(tmpdir(), "splitbrain-view-"));
let failures = 0;
function check(ok, msg) { if (!ok) { failures += 1; console.log("FAIL " + msg); } }

function pageOf(stem, extra = []) {
  const out = join(dir, stem + ".html");
  try { execFileSync(bin, ["run", "scenarios/" + stem + ".json", "--view", out, ...extra], { cwd: root, stdio: "ignore" }); }
  catch (e) { if (e.status !== 1) throw e; } // a lesson that violates exits 1
  return pathToFileURL(out).href;
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
async function open(url, width = 1600) {
  const ctx = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", e => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === "yes");
  return { page, errors, close: () => ctx.close() };
}
const text = (page, id) => page.evaluate(i => document.getElementById(i).textContent, id);

// 1. Lesson 02 opens on its chart window (1.300-1.305 s) and the cursor on a step inside it;
//    the next step stays in it.
{
  const { page, errors, close } = await open(pageOf("02-bully-worst-case"));
  const axis = await page.evaluate(() => [...document.querySelectorAll("#timeline text")].map(t => t.textContent).filter(t => /^1\.30/.test(t)));
  check(axis.length >= 2, "02: the axis shows 1.300-1.305 s, got " + axis.join(" "));
  const t0 = await text(page, "cursor-time");
  check(t0 >= "1.300 s" && t0 <= "1.305 s", "02: the cursor opens at " + t0);
  await page.keyboard.press("ArrowRight");
  const t1 = await text(page, "cursor-time");
  const still = await page.evaluate(() => [...document.querySelectorAll("#timeline text")].filter(t => /^1\.30/.test(t.textContent)).length >= 2);
  check(still && t1 >= t0, "02: the first step left the window (" + t1 + ")");
  // + zooms around the cursor: it stays at the same x.
  const x0 = await page.evaluate(() => Number(document.getElementById("cursor").getAttribute("x1")));
  await page.keyboard.press("+");
  const x1 = await page.evaluate(() => Number(document.getElementById("cursor").getAttribute("x1")));
  check(Math.abs(x1 - x0) < 1, `02: + moved the cursor from x ${x0} to ${x1}`);
  check(errors.length === 0, "02: " + errors.join("; "));
  await close();
}

// 2. Play, pause, speed, the slider, stepping (lesson 06).
{
  const { page, errors, close } = await open(pageOf("06-lease-gc-pause-fenced"));
  await page.selectOption("#speed", "25");
  const before = await text(page, "step-index");
  await page.click("#play");
  await page.waitForTimeout(600);
  await page.click("#play");
  const playing = await page.evaluate(() => document.getElementById("play").dataset.playing);
  const after = await text(page, "step-index");
  const n = s => Number(s.split(" ")[1]);
  check(n(after) >= n(before) + 5, `06: play at 25 steps/s moved ${before} -> ${after}`);
  check(playing === "no", "06: pause did not stop");
  await page.waitForTimeout(300);
  check(await text(page, "step-index") === after, "06: the cursor moved after pause");
  // The slider rewinds: its start is the first step.
  await page.evaluate(() => { const s = document.getElementById("slider"); s.value = "0"; s.dispatchEvent(new Event("input")); });
  check(await text(page, "step-index") === "step 1 of " + after.split(" of ")[1], "06: the slider did not rewind");
  // To 17.002 s: client-1's stale write; it still believes it holds the lock.
  await page.evaluate(() => { const s = document.getElementById("slider"); s.value = String(Math.round(17.0025 / 40 * 10000)); s.dispatchEvent(new Event("input")); });
  while (!(await text(page, "step-text")).startsWith("client-1 sends its write")) await page.keyboard.press("ArrowLeft");
  const belief = await page.evaluate(() => document.querySelector('#state tr[data-node="client-1"] td.belief').textContent);
  check(belief.includes("holds lock") && belief.includes("stale"), "06: at the stale write client-1 believes " + belief);
  // A step's cause is a link: the LEASE_GRANTED message, with its payload.
  await page.keyboard.press("Home");
  await page.keyboard.press("ArrowRight"); await page.keyboard.press("ArrowRight");
  await page.click("#causes a.goto");
  const details = await text(page, "details");
  check(details.startsWith("LEASE_GRANTED") && details.includes("payload: {"), "06: the cause link shows " + details.slice(0, 120));
  check(errors.length === 0, "06: " + errors.join("; "));
  await close();
}

// 3. At 1024 px the whole run is in reach: the last step's tick lies inside the visible chart.
{
  const { page, close } = await open(pageOf("12-redlock-gc-pause"), 1024);
  await page.keyboard.press("0");
  const r = await page.evaluate(() => {
    const ticks = [...document.querySelectorAll("#timeline line[id^=tick-]")];
    const last = ticks[ticks.length - 1].getBoundingClientRect(), box = document.getElementById("chart").getBoundingClientRect();
    return { last: last.right, right: box.right, scroll: document.documentElement.scrollWidth };
  });
  check(r.last <= r.right && r.scroll <= 1024, `12 at 1024 px: last tick at ${r.last}, chart ends at ${r.right}, page ${r.scroll} px wide`);
  // Zoomed in, no arrow is drawn past the plot: the plot group is clipped.
  await page.keyboard.press("+"); await page.keyboard.press("+");
  const clipped = await page.evaluate(() => document.getElementById("plot").getAttribute("clip-path"));
  check(clipped === "url(#plot-clip)", "12: the plot is not clipped");
  await close();
}

// 4. The clocks the page computes from each lane's clock pieces (after a wall clock step,
//    lesson 13; on a clock at 3x, lesson 19b), at the last step, where every clock fault is
//    behind the cursor: each row reads as the scenario's clock rule gives (the engine's
//    LocalClock: mono = t * (1e6 + drift) / 1e6, wall = start + mono + steps), the wall in the
//    narration's style (RFC 3339 UTC, milliseconds rounded half up). tests/view_browser.rs
//    checks every row against check's WallClocks too.
{
  const START = 1767225600000000000n; // the engine's DEFAULT_WALL_START_NS, 2026-01-01T00:00:00Z
  const iso = ns => { const ms = (ns + 500000n) / 1000000n; return new Date(Number(ms)).toISOString(); };
  for (const [stem, rule] of [
    ["13-redlock-clock-step", (node, t) => [t, START + t + (node === "redis-c" && t >= 1000000000n ? 20000000000n : 0n)]],
    ["19b-k8s-lease-clock-3x", (node, t) => { const m = node === "leader-b" ? 3n * t : t; return [m, START + m]; }],
  ]) {
    const url = pageOf(stem);
    const { page, errors, close } = await open(url);
    const last = await page.evaluate(() => JSON.parse(document.getElementById("model").textContent).steps.length - 1);
    await close();
    const o = await open(url + "#step=" + last);
    const { t, rows } = await o.page.evaluate(() => ({
      t: JSON.parse(document.getElementById("model").textContent).steps.at(-1).t,
      rows: [...document.querySelectorAll("#state tbody tr")].map(tr => [tr.dataset.node, tr.querySelector("td.mono").textContent, tr.querySelector("td.wall").textContent]),
    }));
    check((await text(o.page, "step-index")) === "step " + (last + 1) + " of " + (last + 1), stem + ": the cursor is not on the last step");
    let moved = 0;
    for (const [node, mono, wall] of rows) {
      const [m, w] = rule(node, BigInt(t));
      check(mono === (Number(m) / 1e9).toFixed(6) + " s", `${stem} ${node}: monotonic ${mono}, expected ${m} ns`);
      check(wall === iso(w), `${stem} ${node}: wall ${wall}, expected ${iso(w)}`);
      if (m !== BigInt(t) || w !== START + BigInt(t)) moved += 1;
    }
    check(rows.length > 0 && moved === 1, `${stem}: ${moved} of ${rows.length} clocks differ from true time`);
    check(errors.length === 0 && o.errors.length === 0, stem + ": " + errors.concat(o.errors).join("; "));
    await o.close();
  }
}

// 4b. The lab's messages (the site's lesson page embeds the view in a frame and posts them;
//     a view opened alone is its own parent): a fault's handle drawn on its node's lane and
//     dragged 100 px to the left posts the fault's new time, a whole number of ns, earlier by
//     100 px of the window; "goto" puts the cursor on the first step at or after a time.
{
  const { page, errors, close } = await open(pageOf("01-bully-leader-crash"));
  await page.evaluate(() => {
    window.moved = [];
    window.addEventListener("message", ev => { if (ev.data && ev.data.splitbrain === "move-fault") window.moved.push(ev.data); });
    window.postMessage({ splitbrain: "faults", faults: [{ index: 0, t: 2000000000, nodes: ["n5"], label: "fault 1 (crash)" }] }, "*");
  });
  await page.waitForSelector("#fault-handle-0");
  const box = await page.locator("#fault-handle-0 path").boundingBox();
  const lane = await page.evaluate(() => {
    const r = document.getElementById("fault-handle-0").getBoundingClientRect();
    const row = [...document.querySelectorAll("#timeline text")].find(t => t.textContent === "n5").getBoundingClientRect();
    return { handle: r.top, row: row.top };
  });
  check(Math.abs(lane.handle - lane.row) < 56, `01: the crash's handle is not on n5's lane (${lane.handle} vs ${lane.row})`);
  const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.move(cx, cy); await page.mouse.down();
  await page.mouse.move(cx - 50, cy, { steps: 3 }); await page.mouse.move(cx - 100, cy, { steps: 3 });
  await page.mouse.up();
  await page.waitForFunction(() => window.moved.length > 0);
  const { moved, span, plotW } = await page.evaluate(() => {
    const M = JSON.parse(document.getElementById("model").textContent);
    const svgW = Number(document.getElementById("timeline").getAttribute("width"));
    return { moved: window.moved, span: M.window[1] - M.window[0], plotW: svgW - M.geometry.left - 30 };
  });
  const want = 2000000000 - 100 / plotW * span;
  check(moved.length === 1 && moved[0].index === 0 && Number.isSafeInteger(moved[0].t) &&
    Math.abs(moved[0].t - want) <= span / plotW * 2, `01: dragging the crash posted ${JSON.stringify(moved)}, expected about ${want}`);
  await page.evaluate(() => window.postMessage({ splitbrain: "goto", t: 2000000000 }, "*"));
  await page.waitForFunction(() => document.getElementById("cursor-time").textContent === "2.000 s");
  check(errors.length === 0, "01 lab: " + errors.join("; "));
  await close();
}

// 4c. Lesson 24a: each of the app's two threads has its own lane, with its own holds; the
//     cursor's table has a row per thread.
{
  const { page, errors, close } = await open(pageOf("24a-redis-shared-lock-object"));
  const rows = await page.evaluate(() => [...document.querySelectorAll("#state tbody tr")].map(tr => tr.dataset.node));
  check(rows.includes("app \u00b7 thread 1") && rows.includes("app \u00b7 thread 2"), "24a: the table's rows are " + rows.join(", "));
  await page.keyboard.press("0");
  const labels = await page.evaluate(() => [...document.querySelectorAll("#timeline text")].map(t => t.textContent));
  check(labels.includes("app \u00b7 thread 1") && labels.includes("app \u00b7 thread 2"), "24a: no lane per thread");
  await page.screenshot({ path: join(dir, "24a.png"), fullPage: true });
  console.log("24a screenshot: " + join(dir, "24a.png"));
  check(errors.length === 0, "24a: " + errors.join("; "));
  await close();
}

// 5. Step time on the largest pages (the goal is under 50 ms a step).
const timings = [];
for (const [name, url] of [["21d", pageOf("21d-raft-gc-pause-fenced")], ["25c", pageOf("25c-etcd-mutex-gc-pause-fenced")]]) {
  const { page, close } = await open(url);
  const ms = await page.evaluate(() => {
    const out = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
      document.body.getBoundingClientRect();
      out.push(performance.now() - t0);
    }
    return out;
  });
  ms.sort((a, b) => a - b);
  timings.push([name, ms[Math.floor(ms.length / 2)], ms[ms.length - 1]]);
  await close();
}
console.log("page  step median ms  step max ms");
timings.forEach(([n, med, max]) => console.log(n.padEnd(6) + med.toFixed(1).padStart(14) + max.toFixed(1).padStart(13)));
await browser.close();
if (failures) { console.log(failures + " failure(s)"); process.exit(1); }
console.log("view pages: all checks passed");
