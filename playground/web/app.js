// The playground page: three editors, and panels filled from the engine's answer (worker.js).
// Every edit asks the engine again; the editors' state lives in the URL's hash, compressed.
"use strict";

const $ = (id) => document.getElementById(id);
const editors = { ruleset: $("ruleset"), content: $("content"), scenario: $("scenario") };
// How long the engine may take on one input before its worker is ended and another started
// (`?limit_ms=N` sets it, for the tests).
const LIMIT_MS = +new URLSearchParams(location.search).get("limit_ms") || 5000;
// Loading the module: its compilation is not the input's work.
const LOAD_LIMIT_MS = 30000;

const state = {
  bundled: null,
  rulesets: new Map(), // name -> bundled text
  rulesetName: "",
  answers: [], // per scenario: option indexes taken, in order
  explain: null, // {scenario, object} or {scenario, player}
  shown: 0, // the scenario whose objects, log and decision are shown
  last: null, // the last answer
};
window.playground = { firstResultMs: null, lastMs: null, lastRoundTripMs: null, results: 0, stops: 0 };

// ---- The worker -----------------------------------------------------------------------------

let worker = null;
let nextId = 1;
const waiting = new Map();

function startWorker() {
  worker = new Worker("worker.js");
  worker.onmessage = (ev) => {
    const w = waiting.get(ev.data.id);
    if (!w) return;
    waiting.delete(ev.data.id);
    clearTimeout(w.timer);
    if (ev.data.fatal) restartWorker(LIMIT_MS);
    if (ev.data.error) w.reject(new Error(ev.data.error));
    else w.resolve(ev.data);
  };
}

function restartWorker(limit) {
  worker.terminate();
  window.playground.stops += 1;
  for (const w of waiting.values()) {
    clearTimeout(w.timer);
    w.reject(new Error(`stopped: the engine took longer than ${limit / 1000} s on this input`));
  }
  waiting.clear();
  startWorker();
}

function ask(kind, request) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const limit = kind === "bundled" ? LOAD_LIMIT_MS : LIMIT_MS;
    const timer = setTimeout(() => restartWorker(limit), limit);
    waiting.set(id, { resolve, reject, timer });
    worker.postMessage({ id, kind, request });
  });
}

// ---- The URL: the editors' state, deflated and base64url-encoded ----------------------------

function toBase64Url(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

async function encodeState() {
  const doc = { r: state.rulesetName, c: editors.content.value, s: editors.scenario.value };
  // The ruleset's text only when it differs from the bundled one: links stay short.
  if (editors.ruleset.value !== state.rulesets.get(state.rulesetName)) doc.rt = editors.ruleset.value;
  if (state.answers.some((a) => a && a.length)) doc.a = state.answers;
  const bytes = new TextEncoder().encode(JSON.stringify(doc));
  return "#z=" + toBase64Url(await pipe(bytes, new CompressionStream("deflate-raw")));
}

async function decodeState(hash) {
  const m = /^#z=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m) return null;
  const bytes = await pipe(fromBase64Url(m[1]), new DecompressionStream("deflate-raw"));
  return JSON.parse(new TextDecoder().decode(bytes));
}

let hashTimer = null;
function saveHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(async () => {
    history.replaceState(null, "", await encodeState());
  }, 150);
}

// ---- Loading texts into the editors ---------------------------------------------------------

function pickRuleset(name, text) {
  state.rulesetName = name;
  $("ruleset-pick").value = name;
  $("ruleset-file").textContent = `rulesets/${name}.rules`;
  editors.ruleset.value = text !== undefined ? text : state.rulesets.get(name) || "";
}

// The ruleset a scenario names by name on its `ruleset:` line, if it is a bundled one.
function rulesetNamed(scenario) {
  const m = /^\s*ruleset:\s*"?([A-Za-z0-9_.-]+)"?\s*$/m.exec(scenario);
  return m && state.rulesets.has(m[1]) ? m[1] : null;
}

function loadExample(i) {
  const ex = state.bundled.examples[i];
  if (!ex) return;
  editors.scenario.value = ex.text;
  editors.content.value = "# Your own cards: name this file on a scenario's content line,\n# as in `content: classic, \"playground.cards\"`.\n";
  pickRuleset(rulesetNamed(ex.text) || state.rulesetName);
  state.answers = [];
  state.explain = null;
  state.shown = 0;
}

// ---- Asking the engine ----------------------------------------------------------------------

// One request at a time: edits made meanwhile are asked for together when it returns.
let busy = false;
let again = false;

function edited(ev) {
  state.answers = [];
  // The ruleset editor follows the scenario's `ruleset:` line while it holds a bundled text.
  const named = ev && ev.target === editors.scenario && rulesetNamed(editors.scenario.value);
  if (named && named !== state.rulesetName && editors.ruleset.value === state.rulesets.get(state.rulesetName)) {
    pickRuleset(named);
  }
  saveHash();
  evaluate();
}

async function evaluate() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  const request = {
    ruleset: { name: state.rulesetName, text: editors.ruleset.value },
    content: editors.content.value,
    scenario: editors.scenario.value,
    answers: state.answers,
    explain: state.explain,
  };
  const sent = performance.now();
  try {
    const reply = await ask("evaluate", request);
    const now = performance.now();
    state.last = reply.result;
    render(reply.result);
    window.playground.lastMs = reply.ms;
    window.playground.lastRoundTripMs = now - sent;
    window.playground.results += 1;
    if (window.playground.firstResultMs === null) window.playground.firstResultMs = performance.now();
    $("status").textContent = `computed in ${reply.ms.toFixed(1)} ms`;
  } catch (e) {
    $("status").textContent = e.message;
    $("diagnostics").replaceChildren(diag(e.message, "error"));
  } finally {
    busy = false;
    if (again) {
      again = false;
      evaluate();
    }
  }
}

// ---- Rendering ------------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

// Moves the caret of the editor holding `file` to a line and column.
function reveal(file, line, column) {
  let ed = null;
  if (file === state.bundled.scenario_file) ed = editors.scenario;
  else if (file === state.bundled.content_file) ed = editors.content;
  else if (file === `rulesets/${state.rulesetName}.rules`) ed = editors.ruleset;
  if (!ed || !line) return;
  const lines = ed.value.split("\n");
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i].length + 1;
  offset += Math.max(0, (column || 1) - 1);
  ed.focus();
  ed.setSelectionRange(offset, offset + 1);
  const lh = parseFloat(getComputedStyle(ed).lineHeight) || 18;
  ed.scrollTop = Math.max(0, (line - 3) * lh);
}

function diag(text, kind, at) {
  const d = el("pre", { class: `diag ${kind}`, "data-testid": kind }, text);
  if (at) d.addEventListener("click", () => reveal(at.file, at.line, at.column));
  return d;
}

function render(r) {
  // Diagnostics: the errors as the command line prints them (line and caret), then warnings.
  const diags = [];
  for (const e of r.errors || []) diags.push(diag(e.rendered || e.message, "error", e));
  for (const w of r.warnings || []) {
    const m = /^(.*?):(\d+):(\d+): /.exec(w);
    diags.push(diag(w, "warning", m && { file: m[1], line: +m[2], column: +m[3] }));
  }
  if (!diags.length) diags.push(el("div", { class: "ok", "data-testid": "no-errors" }, "no errors"));
  $("diagnostics").replaceChildren(...diags);

  const list = r.scenarios || [];
  // Expectations: each scenario passed or failed, with each failure and its explanation.
  $("expectations").replaceChildren(
    el("ul", { class: "expect-list" }, ...list.map((s, i) => {
      const li = el("li", { "data-testid": "scenario-result", "data-passed": String(s.passed) },
        el("span", { class: s.passed ? "ok" : "fail" }, s.passed ? "✔ passed" : "✘ failed"),
        ` ${s.name} (${s.checks} checks)`);
      for (const f of s.failures) {
        const text = f.rendered + (f.explanation ? "\n" + f.explanation : "");
        li.append(el("div", { class: "failure fail", "data-testid": "failure", onclick: () => reveal(f.file, f.line, f.column) }, text));
      }
      li.addEventListener("dblclick", () => pickScenario(i));
      return li;
    })),
  );
  if (!list.length && !(r.errors || []).length) $("expectations").textContent = "no scenarios";

  const pick = $("scenario-pick");
  pick.replaceChildren(...list.map((s, i) => el("option", { value: String(i) }, s.name)));
  if (state.shown >= list.length) state.shown = 0;
  pick.value = String(state.shown);
  const s = list[state.shown];
  renderScenario(s);
  renderExplanation(r.explanation);
}

function pickScenario(i) {
  state.shown = i;
  state.explain = null;
  $("scenario-pick").value = String(i);
  if (state.last) render(state.last);
}

function renderScenario(s) {
  if (!s) {
    for (const id of ["decision", "objects", "players", "log"]) $(id).replaceChildren();
    return;
  }
  // The pending decision: one button per legal option.
  const dec = $("decision");
  dec.replaceChildren();
  if (s.answer_error) dec.append(el("div", { class: "fail" }, s.answer_error));
  if (s.decision) {
    dec.append(el("span", { class: "who" }, `${s.decision.player} decides (${s.decision.kind}):`));
    s.decision.options.forEach((label, i) =>
      dec.append(el("button", { type: "button", "data-testid": "option", onclick: () => answer(i) }, label)));
  }
  if (s.answered.length) {
    dec.append(el("button", { type: "button", "data-testid": "undo", onclick: undo }, "undo answer"));
  }
  if (s.over) dec.append(el("span", { class: "who" }, " the game is over"));

  // Objects: each one's derived characteristics; its name explains them layer by layer.
  const head = el("tr", {}, el("th", {}, "#"), el("th", {}, "object"), el("th", {}, "owner"), el("th", {}, "zone"),
    ...s.characteristics.map((c) => el("th", {}, c)));
  const rows = s.objects.map((o) => el("tr", { "data-testid": "object-row", "data-name": o.name },
    el("td", {}, String(o.id)),
    el("td", {}, el("button", { class: "link", type: "button", "data-testid": "explain-object", onclick: () => explain({ object: o.id }) },
      o.alias ? `${o.name} (${o.alias})` : o.name)),
    el("td", {}, o.owner), el("td", {}, o.zone),
    ...o.values.map((v, i) => el("td", { "data-char": s.characteristics[i] }, v))));
  $("objects").replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));

  const phead = el("tr", {}, el("th", {}, "player"), ...s.properties.map((p) => el("th", {}, p)));
  const prows = s.players.map((p) => el("tr", { "data-testid": "player-row", "data-name": p.name },
    el("td", {}, el("button", { class: "link", type: "button", onclick: () => explain({ player: p.id }) }, p.name)),
    ...p.values.map((v, i) => el("td", { "data-prop": s.properties[i] }, v))));
  $("players").replaceChildren(el("thead", {}, phead), el("tbody", {}, ...prows));

  // The log: occurrences, their timing steps and responses, in order.
  $("log").replaceChildren(...s.log.map((line) =>
    el("li", { class: /^(before|after|when|instead of) |: step [A-Z]/.test(line) ? "step" : "" }, line)));
}

function renderExplanation(x) {
  const pre = $("explanation");
  if (!x) pre.textContent = state.explain ? "" : "Click an object's name to see how each characteristic was derived, layer by layer.";
  else pre.textContent = x.error ? `error: ${x.error}` : x.text;
}

function explain(target) {
  state.explain = { scenario: state.shown, ...target };
  evaluate();
}

function answer(i) {
  while (state.answers.length <= state.shown) state.answers.push([]);
  state.answers[state.shown] = [...state.answers[state.shown], i];
  saveHash();
  evaluate();
}

function undo() {
  const a = state.answers[state.shown] || [];
  state.answers[state.shown] = a.slice(0, -1);
  saveHash();
  evaluate();
}

// ---- Start ----------------------------------------------------------------------------------

async function start() {
  startWorker();
  const reply = await ask("bundled");
  state.bundled = reply.result;
  for (const f of state.bundled.files) {
    const m = /^rulesets\/(.+)\.rules$/.exec(f.path);
    if (m) state.rulesets.set(m[1], f.text);
  }
  $("ruleset-pick").replaceChildren(...[...state.rulesets.keys()].map((n) => el("option", { value: n }, n)));
  $("examples").append(...state.bundled.examples.map((ex, i) => el("option", { value: String(i) }, ex.title)));

  let doc = null;
  try {
    doc = await decodeState(location.hash);
  } catch (e) {
    $("status").textContent = "the link's state could not be read: an example is shown instead";
  }
  if (doc) {
    pickRuleset(doc.r || "classic", doc.rt);
    editors.content.value = doc.c || "";
    editors.scenario.value = doc.s || "";
    state.answers = Array.isArray(doc.a) ? doc.a : [];
  } else {
    pickRuleset(state.rulesets.keys().next().value);
    loadExample(0);
    $("examples").value = "0";
  }

  for (const ed of Object.values(editors)) ed.addEventListener("input", edited);
  $("ruleset-pick").addEventListener("change", (e) => {
    pickRuleset(e.target.value);
    edited(null);
  });
  $("examples").addEventListener("change", (e) => {
    if (e.target.value === "") return;
    loadExample(+e.target.value);
    saveHash();
    evaluate();
  });
  $("scenario-pick").addEventListener("change", (e) => pickScenario(+e.target.value));
  $("share").addEventListener("click", async () => {
    const url = location.href.split("#")[0] + (await encodeState());
    history.replaceState(null, "", url);
    $("share").dataset.link = url;
    try {
      await navigator.clipboard.writeText(url);
      $("status").textContent = "link copied";
    } catch (_) {
      $("status").textContent = "the link is in the address bar";
    }
  });
  if (!doc) saveHash();
  await evaluate();
}

start().catch((e) => {
  $("status").textContent = `the engine did not start: ${e.message}`;
});
