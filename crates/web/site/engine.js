// splitbrain's engine in the page: the WebAssembly module built from crates/web (embedded
// as base64, so a page opened from file:// needs no fetch) runs in a worker, so a long run
// leaves the page responsive and the student can stop it. Requests and answers are JSON
// text (crates/web's docs); runs go one at a time, and a new call stops the one running.
"use strict";
const SPLITBRAIN = (function () {
  const WASM_B64 = "@WASM@";
  const WORKER_SRC = "@WORKER@";
  let bytes = null, worker = null, pending = null;
  function wasmBytes() {
    if (!bytes) {
      const s = atob(WASM_B64);
      bytes = new Uint8Array(s.length);
      for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
    }
    return bytes;
  }
  function settle(how, value) {
    const p = pending;
    pending = null;
    if (p) p[how](value);
  }
  function start() {
    const url = URL.createObjectURL(new Blob([WORKER_SRC], { type: "text/javascript" }));
    worker = new Worker(url);
    URL.revokeObjectURL(url);
    worker.onmessage = ev => {
      if (ev.data.error !== undefined) settle("reject", new Error(ev.data.error));
      else settle("resolve", { answer: JSON.parse(ev.data.answer), ms: ev.data.ms });
    };
    worker.onerror = ev => { stop(); settle("reject", new Error(ev.message || "the engine failed")); };
    worker.postMessage({ wasm: wasmBytes() });
  }
  /** Runs `request` (an object); resolves to `{answer, ms}` (`ms`: time in the engine). */
  function call(request) {
    if (pending) stop();
    if (!worker) start();
    return new Promise((resolve, reject) => {
      pending = { resolve, reject };
      worker.postMessage({ request: JSON.stringify(request) });
    });
  }
  /** Stops the run under way, if any (its promise rejects with "stopped"). */
  function stop() {
    if (worker) { worker.terminate(); worker = null; }
    settle("reject", new Error("stopped"));
  }
  return { call, stop, busy: () => pending !== null, wasmSize: () => wasmBytes().length };
})();
