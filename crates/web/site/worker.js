// The engine's worker: instantiates the module once, then answers each request through the
// module's three exports (sb_input, sb_call, sb_output; crates/web's docs).
"use strict";
let ready = null;
const enc = new TextEncoder(), dec = new TextDecoder();
// The module imports a few browser functions through wasm-bindgen (plotters, a dependency of
// the report crate, pulls it in on wasm32); no run calls them, so each is a stub that fails.
function instantiate(module) {
  const imports = {};
  for (const i of WebAssembly.Module.imports(module)) {
    (imports[i.module] = imports[i.module] || {})[i.name] = () => { throw new Error("the engine called " + i.module + "." + i.name); };
  }
  return WebAssembly.instantiate(module, imports).then(instance => ({ instance, module }));
}
onmessage = async ev => {
  if (ev.data.wasm) { ready = WebAssembly.compile(ev.data.wasm).then(instantiate); return; }
  try {
    const ex = (await ready).instance.exports;
    const req = enc.encode(ev.data.request);
    const t0 = performance.now();
    const at = ex.sb_input(req.length);
    new Uint8Array(ex.memory.buffer, at, req.length).set(req);
    const len = ex.sb_call();
    const ms = performance.now() - t0;
    const answer = dec.decode(new Uint8Array(ex.memory.buffer, ex.sb_output(), len));
    postMessage({ answer, ms });
  } catch (e) {
    // A trap leaves the instance unusable: the next request gets a fresh one.
    ready = instantiate((await ready).module);
    postMessage({ error: "the engine failed: " + e });
  }
};
