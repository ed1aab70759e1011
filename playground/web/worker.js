// The engine in a Web Worker, so that a slow input never freezes the page: the page can end this
// worker and start another. The module's C ABI takes and returns UTF-8 JSON in linear memory
// (playground/src/lib.rs, `abi`): write the request into memory from `alloc`, call, read the
// answer at `out_ptr` for the length returned.
"use strict";

let engine = null;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function load() {
  const url = new URL("pkg/rulecraft.wasm", self.location.href);
  let result;
  try {
    result = await WebAssembly.instantiateStreaming(fetch(url), {});
  } catch (_) {
    // A server that does not say application/wasm: compile from the bytes.
    const bytes = await (await fetch(url)).arrayBuffer();
    result = await WebAssembly.instantiate(bytes, {});
  }
  return result.instance.exports;
}

function answer(len) {
  const bytes = new Uint8Array(engine.memory.buffer, engine.out_ptr(), len);
  return JSON.parse(decoder.decode(bytes));
}

function call(name, request) {
  if (request === undefined) return answer(engine[name]());
  const bytes = encoder.encode(JSON.stringify(request));
  const ptr = engine.alloc(bytes.length);
  new Uint8Array(engine.memory.buffer, ptr, bytes.length).set(bytes);
  try {
    return answer(engine[name](ptr, bytes.length));
  } finally {
    engine.dealloc(ptr, bytes.length);
  }
}

const ready = load().then((e) => {
  engine = e;
});

self.onmessage = async (ev) => {
  const { id, kind, request } = ev.data;
  try {
    await ready;
    const start = performance.now();
    const result = kind === "bundled" ? call("rc_bundled") : call("rc_evaluate", request);
    self.postMessage({ id, result, ms: performance.now() - start });
  } catch (e) {
    // A trap in the module (it should not happen: the engine returns errors): a new worker is
    // made for the next request.
    self.postMessage({ id, error: String(e && e.message ? e.message : e), fatal: true });
  }
};
