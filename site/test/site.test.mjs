// The site in a real browser (headless Chromium through playwright-core):
//
// 1. every lesson's page in site/lessons/ runs the lesson from file:// and, at the lesson's
//    own seed and at 20 other seeds, gives the trace hash `splitbrain run FILE --seed N
//    --json` gives for the same file and seed;
// 2. what if: on lesson 06 the fencing knob switched off re-runs at once and the verdict of
//    no_two_accepted_writers changes from holds to violated, before and after side by side;
//    the page's URL (fragment) opened again gives the same run (hash), the copied command
//    names the seed;
// 3. "how often?" in the page gives sweep's rows over seeds 0..1000 (lessons 03 and 12);
// 4. hostile scenario text from a link stays text: a lesson sentence and description of
//    markup (<img onerror>, <script>) run no script and show as written; a hostile name, and
//    a link's scenario past the file's limits (a 25 h run), are refused with the file's
//    located error.
//
// Usage: SPLITBRAIN_BIN=target/quick/splitbrain node site/test/site.test.mjs [--only STEM]
// Needs chromium (CHROMIUM overrides /usr/bin/chromium). Prints a table of timings: the
// engine's time for each lesson's first run and re-run, in the page, as measured by the page.
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
// SPLITBRAIN_SITE: another built site folder to test (default site/).
const site = resolve(root, process.env.SPLITBRAIN_SITE || "site");
const bin = resolve(root, process.env.SPLITBRAIN_BIN || "target/release/splitbrain");
const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : null;
// 20 seeds besides each lesson's own: small ones, and large ones a JavaScript number cannot hold.
const OTHER_SEEDS = ["0", "1", "2", "3", "4", "5", "42", "99", "1000", "65535", "123456789",
  "4294967295", "4294967296", "9007199254740993", "12345678901234567890", "18446744073709551615",
  "271828", "314159", "8", "77"];

let failures = 0;
function fail(msg) { failures += 1; console.log("FAIL " + msg); }

function nativeHash(file, seed) {
  let out;
  try {
    out = execFileSync(bin, ["run", file, "--seed", seed, "--json"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch (e) {
    out = e.stdout; // exit 1 (not as expected) or 3 (bound) still prints the summary
  }
  return JSON.parse(out).trace_hash;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--allow-file-access-from-files"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
async function open(url) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", e => errors.push(String(e)));
  page.on("dialog", d => { errors.push("dialog: " + d.message()); d.dismiss(); });
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === "yes", null, { timeout: 600000 });
  return { page, errors };
}

// 1. every lesson, its own seed and 20 others.
const lessons = readdirSync(join(site, "lessons")).filter(f => f.endsWith(".html")).sort()
  .filter(f => !only || f.startsWith(only));
const rows = [];
for (const f of lessons) {
  const stem = f.replace(/\.html$/, "");
  const file = "scenarios/" + stem + ".json";
  const url = pathToFileURL(join(site, "lessons", f)).href;
  const { page, errors } = await open(url);
  const own = await page.evaluate(() => ({ seed: SPLITBRAIN_PAGE.base.seed, hash: SPLITBRAIN_PAGE.base.trace_hash, ms: SPLITBRAIN_PAGE.timings[0].engine_ms, shown: document.getElementById("hash").dataset.hash }));
  const want = nativeHash(file, own.seed);
  if (own.hash !== want || own.shown !== want) fail(`${stem} seed ${own.seed}: page ${own.hash}, run ${want}`);
  const got = await page.evaluate(seeds => SPLITBRAIN_PAGE.hashes(seeds), OTHER_SEEDS);
  let same = own.hash === want ? 1 : 0;
  got.forEach(r => {
    const w = nativeHash(file, r.seed);
    if (r.trace_hash !== w) fail(`${stem} seed ${r.seed}: page ${r.trace_hash}, run ${w}`);
    else same += 1;
  });
  // A re-run as a knob change makes it (the same scenario, seed and view), timed by the page.
  const rerun = await page.evaluate(async () => { await SPLITBRAIN_PAGE.rerun(); return SPLITBRAIN_PAGE.timings[SPLITBRAIN_PAGE.timings.length - 1]; });
  if (errors.length) fail(`${stem}: page errors ${errors.join("; ")}`);
  rows.push([stem, `${same}/21`, own.ms.toFixed(0), rerun.engine_ms.toFixed(0), rerun.total_ms.toFixed(0)]);
  console.log(`${stem.padEnd(44)} hashes equal ${same}/21  first run ${own.ms.toFixed(0)} ms  re-run engine ${rerun.engine_ms.toFixed(0)} ms, shown ${rerun.total_ms.toFixed(0)} ms`);
  await page.close();
}

// 2. what if, on lesson 06: switch fencing off; the verdicts change; the link reproduces it.
if (!only || "06-lease-gc-pause-fenced".startsWith(only)) {
  const url = pathToFileURL(join(site, "lessons/06-lease-gc-pause-fenced.html")).href;
  const { page, errors } = await open(url);
  const verdict = (name, col) => page.$eval(`#verdicts tr[data-invariant="${name}"] td.${col}`, td => td.textContent);
  const runs = await page.evaluate(() => SPLITBRAIN_PAGE.runs);
  await page.click('input[data-path="nodes.storage.fencing"]');
  await page.waitForFunction(n => SPLITBRAIN_PAGE.runs > n && !SPLITBRAIN.busy(), runs);
  const before = await verdict("no_two_accepted_writers", "before"), after = await verdict("no_two_accepted_writers", "after");
  if (!before.startsWith("holds") || !after.startsWith("violated")) fail(`06 fencing off: before ${before}, after ${after}`);
  const changed = await page.$eval('#verdicts tr[data-invariant="no_two_accepted_writers"]', tr => tr.className);
  if (changed !== "changed") fail("06 fencing off: the changed verdict is not marked");
  // And a seed change.
  await page.fill("#seed", "12345678901234567890");
  await page.click("#run");
  await page.waitForFunction(() => SPLITBRAIN_PAGE.last.seed === "12345678901234567890" && !SPLITBRAIN.busy());
  const edited = await page.evaluate(() => ({ url: location.href, hash: SPLITBRAIN_PAGE.last.trace_hash, text: SPLITBRAIN_PAGE.text, command: document.getElementById("command").textContent }));
  if (!edited.command.endsWith("--seed 12345678901234567890")) fail("06: command " + edited.command);
  if (!edited.url.includes("#seed=12345678901234567890&scenario=")) fail("06: the URL does not carry the run: " + edited.url);
  // The shared link, opened in a new page, gives the same run.
  const again = await open(edited.url);
  const re = await again.page.evaluate(() => ({ hash: SPLITBRAIN_PAGE.last.trace_hash, text: SPLITBRAIN_PAGE.text }));
  if (re.hash !== edited.hash || re.text !== edited.text) fail(`06: the link reopened gives ${re.hash}, the run was ${edited.hash}`);
  // ... the same hash as the binary on the edited file.
  const tmp = join(root, "target-wasm", "edited-06.json");
  (await import("node:fs")).mkdirSync(dirname(tmp), { recursive: true });
  (await import("node:fs")).writeFileSync(tmp, edited.text);
  const w = nativeHash(tmp, "12345678901234567890");
  if (w !== edited.hash) fail(`06 edited: page ${edited.hash}, run ${w}`);
  if (errors.length || again.errors.length) fail("06: page errors " + errors.concat(again.errors).join("; "));
  console.log(`what-if on 06: no_two_accepted_writers ${before} -> ${after}; link reopened: same hash ${re.hash}`);
  await page.close(); await again.page.close();
}

// 2b. a fault added by clicking a lane (the view posts the node and time), the first event
//     where the runs part (and its link into the view), the fault moved by its field and by
//     dragging its mark in the view, and deleted (lesson 06).
if (!only || "06-lease-gc-pause-fenced".startsWith(only)) {
  const url = pathToFileURL(join(site, "lessons/06-lease-gc-pause-fenced.html")).href;
  const { page, errors } = await open(url);
  const runs = () => page.evaluate(() => SPLITBRAIN_PAGE.runs);
  const settle = n => page.waitForFunction(k => SPLITBRAIN_PAGE.runs > k && !SPLITBRAIN.busy(), n);
  // A click on the lock server's lane at 0.5 ms, as the view in its frame posts it.
  await page.frameLocator("#view").locator("body").evaluate(() => window.parent.postMessage({ splitbrain: "lane", node: "locks", t: 500000 }, "*"));
  await page.waitForSelector("#fault-form:not([hidden])");
  if ((await page.$eval("#fault-node", e => e.textContent)) !== "locks") fail("06 lane click: the form names another node");
  if ((await page.$eval("#fault-at", e => e.value)) !== "1ms") fail("06 lane click: the form's time");
  await page.selectOption("#fault-kind", "crash");
  let n = await runs();
  await page.click("#fault-add");
  await settle(n);
  const changed = await page.$$eval("#verdicts tr.changed", t => t.length);
  const div = await page.$eval("#diverge", e => ({ hidden: e.hidden, text: e.textContent, event: e.dataset.event, t: Number(e.dataset.t) }));
  if (changed < 1) fail("06 crash of locks at 1 ms: no verdict changed");
  if (div.hidden || !div.text.startsWith("the runs first differ at event ") || !(Number(div.event) >= 0)) fail("06: the first diverging event is not shown: " + JSON.stringify(div));
  // It is the first event whose trace line differs: the crash (or what it changed) at 1 ms at the latest.
  const d = await page.evaluate(() => SPLITBRAIN_PAGE.last.diverge);
  if (d.was === d.is || d.t > 1000000) fail("06: the first differing event: " + JSON.stringify(d));
  // Its link puts the view's cursor at that event's time.
  await page.click("#diverge-go");
  await page.waitForTimeout(300); // the view's frame takes the message after this task
  const cursorAt = await page.frameLocator("#view").locator("#cursor-time").textContent();
  if (Math.round(Number(cursorAt.replace(" s", "")) * 1e3) < Math.floor(d.t / 1e6)) fail("06: the link put the cursor at " + cursorAt + " for an event at " + d.t + " ns");
  const faults = await page.evaluate(() => JSON.parse(SPLITBRAIN_PAGE.text).faults);
  if (!faults.some(f => f.crash === "locks" && f.at === "1ms")) fail("06: the fault is not in the scenario: " + JSON.stringify(faults));
  // The page's URL, opened again, is the same run (the clicked fault comes with the link).
  const shared = await page.evaluate(() => ({ url: location.href, hash: SPLITBRAIN_PAGE.last.trace_hash }));
  const reopened = await open(shared.url);
  const rehash = await reopened.page.evaluate(() => SPLITBRAIN_PAGE.last.trace_hash);
  if (rehash !== shared.hash) fail(`06 clicked fault: the link reopened gives ${rehash}, the run was ${shared.hash}`);
  await reopened.page.close();
  // Move it past the end of the lesson's action: the run changes again.
  const k = faults.findIndex(f => f.crash === "locks");
  n = await runs();
  await page.fill(`#faults .fault[data-index="${k}"] input.fault-at`, "39s");
  await page.$eval(`#faults .fault[data-index="${k}"] input.fault-at`, e => e.dispatchEvent(new Event("change")));
  await settle(n);
  const moved = await page.evaluate(() => JSON.parse(SPLITBRAIN_PAGE.text).faults);
  if (!moved.some(f => f.crash === "locks" && f.at === "39s")) fail("06: the fault did not move: " + JSON.stringify(moved));
  // Drag its mark in the view 100 px to the left: the same edit as typing a time, in whole
  // ns, and a re-run.
  n = await runs();
  await page.frameLocator("#view").locator("#zoom-reset").click();
  const handle = page.frameLocator("#view").locator(`#fault-handle-${k} path`);
  await handle.waitFor();
  await handle.scrollIntoViewIfNeeded();
  const box = await handle.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 - 50, box.y + box.height / 2, { steps: 4 });
  await page.mouse.move(box.x + box.width / 2 - 100, box.y + box.height / 2, { steps: 4 });
  const t0 = performance.now();
  await page.mouse.up();
  await settle(n);
  const dragMs = performance.now() - t0;
  const dragged = await page.evaluate(() => JSON.parse(SPLITBRAIN_PAGE.text).faults);
  const at = dragged[k] && dragged[k].at;
  if (!/^[0-9]+ns$/.test(at || "") || !(Number(at.slice(0, -2)) < 39e9)) fail("06: dragging the fault gave at " + at);
  if ((await page.$eval(`#faults .fault[data-index="${k}"] input.fault-at`, e => e.value)) !== at) fail("06: the dragged time is not in the fault's field");
  console.log(`faults on 06: the crash dragged from 39 s to ${at}, re-run shown ${dragMs.toFixed(0)} ms after the drop`);
  // Delete it: the lesson's run again.
  n = await runs();
  await page.click(`#faults .fault[data-index="${k}"] button.fault-delete`);
  await settle(n);
  const back = await page.evaluate(() => ({ same: SPLITBRAIN_PAGE.last.trace_hash === SPLITBRAIN_PAGE.base.trace_hash, div: document.getElementById("diverge").textContent }));
  if (!back.same || !back.div.startsWith("the same events as the lesson's run")) fail("06: deleting the fault: " + JSON.stringify(back));
  if (errors.length) fail("06 faults: page errors " + errors.join("; "));
  console.log(`faults on 06: a click adds a crash of locks at 1 ms (${changed} verdicts change; ${div.text.slice(0, 90)}...), moved to 39 s, deleted`);
  await page.close();
}

// 2c. a link to a scenario far larger than a lesson says so before it runs, with a Stop.
if (!only || "01-bully-leader-crash".startsWith(only)) {
  const big = JSON.parse(readFileSync(join(root, "scenarios/01-bully-leader-crash.json"), "utf8"));
  big.duration = "24h";
  const url = pathToFileURL(join(site, "lessons/01-bully-leader-crash.html")).href + "#scenario=" + Buffer.from(JSON.stringify(big), "utf8").toString("base64url");
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector("#huge:not([hidden])", { timeout: 600000 });
  const warn = await page.$eval("#huge", e => e.textContent);
  if (!warn.includes("24h") || !warn.includes("Stop")) fail("huge link: the warning says " + warn);
  await page.click("#huge-stop");
  await page.waitForFunction(() => document.body.dataset.ready === "yes" || document.getElementById("status").textContent === "stopped", null, { timeout: 600000 });
  console.log("huge link: warned (" + warn.slice(0, 80) + "...) and stopped");
  await page.close();
}

// 3. "how often?": 1,000 seeds in the page give sweep's table rows.
for (const stem of ["03-bully-partition-split-brain", "12-redlock-gc-pause"]) {
  if (only && !stem.startsWith(only)) continue;
  const file = "scenarios/" + stem + ".json";
  const { page, errors } = await open(pathToFileURL(join(site, "lessons", stem + ".html")).href);
  await page.click("#how-often-run");
  await page.waitForFunction(() => SPLITBRAIN_PAGE.howOften !== undefined, null, { timeout: 600000 });
  const rows = await page.evaluate(() => SPLITBRAIN_PAGE.howOften.rows);
  const shown = await page.$eval("#how-often", e => e.textContent);
  const sweep = execFileSync(bin, ["sweep", file, "--seeds", "0..1000"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const want = sweep.split("\n").filter(l => /^  [a-z_]+ /.test(l) && !l.startsWith("  invariant"));
  if (JSON.stringify(rows) !== JSON.stringify(want)) fail(`${stem} how often: page\n${rows.join("\n")}\nsweep\n${want.join("\n")}`);
  if (!rows.every(r => shown.includes(r))) fail(`${stem} how often: the rows are not shown`);
  if (errors.length) fail(`${stem} how often: page errors ${errors.join("; ")}`);
  console.log(`how often on ${stem}: the page's rows equal sweep's:\n${rows.join("\n")}`);
  await page.close();
}

// 4. hostile text from a link.
if (!only) {
  const lesson = JSON.parse(readFileSync(join(root, "scenarios/01-bully-leader-crash.json"), "utf8"));
  // Names are restricted to [A-Za-z0-9._-]; the lesson sentence and description are free text.
  lesson.lesson = "</script><script>window.PWNED=2</script><img src=x onerror=\"window.PWNED=1\"><b onmouseover=alert(1)>bold</b>";
  lesson.description = "<script>window.PWNED=3</script>";
  const b64 = s => Buffer.from(s, "utf8").toString("base64url");
  const url = pathToFileURL(join(site, "lessons/01-bully-leader-crash.html")).href;
  const { page, errors } = await open(url + "#scenario=" + b64(JSON.stringify(lesson, null, 2)));
  const seen = await page.evaluate(() => ({
    pwned: window.PWNED, lesson: document.getElementById("lesson").textContent,
    elements: document.querySelectorAll("header img, header b, header script").length,
    ran: SPLITBRAIN_PAGE.runs,
  }));
  if (seen.pwned !== undefined) fail("hostile text ran a script");
  if (seen.lesson !== lesson.lesson || seen.ran !== 2) fail("hostile text is not shown as written: " + JSON.stringify(seen));
  if (seen.elements !== 0) fail("hostile text became elements");
  if (errors.length) fail("hostile text: page errors " + errors.join("; "));
  // A hostile name is refused as in a file, its error shown as text.
  lesson.name = "<img src=x onerror=\"window.PWNED=4\">";
  const named = await open(url + "#scenario=" + b64(JSON.stringify(lesson, null, 2)));
  const nerr = await named.page.evaluate(() => ({ error: document.getElementById("error").textContent, pwned: window.PWNED, imgs: document.querySelectorAll("img").length }));
  if (!nerr.error.includes("scenario name \"<img") || nerr.pwned !== undefined || nerr.imgs !== 0) fail("a hostile name: " + JSON.stringify(nerr));
  await named.page.close();
  // A link's scenario is validated as a file is: a located error, nothing run.
  const long = JSON.parse(readFileSync(join(root, "scenarios/01-bully-leader-crash.json"), "utf8"));
  long.duration = "25h";
  const bad = await open(url + "#scenario=" + b64(JSON.stringify(long, null, 2)));
  const err = await bad.page.evaluate(() => document.getElementById("error").textContent);
  if (!/edited-01-bully-leader-crash\.json:\d+:\d+: duration/.test(err)) fail("a bad link's scenario is not a located error: " + err);
  console.log("hostile link: shown as text, no script ran; a bad link's scenario is refused: " + err.split("\n")[0]);
  await page.close(); await bad.page.close();
}

await browser.close();
const size = statSync(join(site, "engine.js")).size;
console.log(`site/engine.js ${(size / 1e6).toFixed(2)} MB`);
if (failures) { console.log(`${failures} failures`); process.exit(1); }
console.log("site test passed");
