// The playground in a real browser: Playwright (playwright-core) drives the distribution's
// Chromium over the built page (bash playground/build.sh first), served by a small static server.
// It loads an example, edits a number and sees the table change, makes a syntax error and sees its
// diagnostic (the command line's text, when the release binary is built), answers a decision, and
// opens a shared link. It also measures the first result and the recompute time of a 30-object
// board, and prints them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile, mkdtemp, writeFile, symlink, stat } from "node:fs/promises";
import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, extname, dirname, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, "..", "web");
const project = join(here, "..", "..");
const fixture = (name) => readFile(join(here, "fixtures", name), "utf8");
const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm" };

let server;
let base;
let browser;
const measured = {};

before(async () => {
  server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    const file = join(web, path.endsWith("/") ? path + "index.html" : path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
  console.log("measured:", JSON.stringify(measured, null, 2));
});

async function open(url = base) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(url);
  await page.waitForFunction(() => window.playground && window.playground.results > 0);
  return page;
}

// The text of an object's characteristic in the objects table.
const cell = (page, object, char) =>
  page.locator(`[data-testid=object-row][data-name="${object}"] td[data-char="${char}"]`).first();

// Sets an editor's text as typing would (an input event).
const setText = (page, editor, text) => page.getByTestId(editor).fill(text);

test("the wasm is at most 3 MB", async () => {
  const { size } = await stat(join(web, "pkg", "rulecraft.wasm"));
  measured.wasmBytes = size;
  assert.ok(size <= 3 * 1024 * 1024, `${size} bytes`);
});

test("an example loads, and editing a number changes the table", async () => {
  const page = await open();
  measured.firstResultMsAfterNavigation = Math.round(await page.evaluate(() => window.playground.firstResultMs));
  // The first example is Mary's lamb: it passes; the lamb ends 2/2 (its printed 1/1 and a counter).
  await assert.doesNotReject(page.getByTestId("scenario-result").first().waitFor());
  assert.equal(await page.getByTestId("scenario-result").first().getAttribute("data-passed"), "true");
  assert.equal(await cell(page, "Lamb", "power").textContent(), "2");
  const text = await page.getByTestId("scenario").inputValue();
  await setText(page, "scenario", text.replace("        power: 1\n", "        power: 4\n"));
  await page.waitForFunction(() =>
    document.querySelector('[data-testid=object-row][data-name="Lamb"] td[data-char="power"]')?.textContent === "5");
  // Its expectations no longer hold: the first fails at the expected 2.
  assert.equal(await page.getByTestId("scenario-result").first().getAttribute("data-passed"), "false");
  assert.match(await page.getByTestId("failure").first().textContent(), /`Lamb` power: expected 2, actually 5/);
  // The name explains the value layer by layer.
  await page.locator('[data-testid=object-row][data-name="Lamb"] [data-testid=explain-object]').click();
  await page.waitForFunction(() => /layer 7c/.test(document.querySelector("[data-testid=explanation]").textContent));
  assert.match(await page.getByTestId("explanation").textContent(), /power = 5\n\s+base: 4/);
  await page.close();
});

test("every example passes", async () => {
  const page = await open();
  const count = await page.locator("[data-testid=examples] option").count();
  // The last first: the page opens on the first.
  for (let i = count - 2; i >= 0; i--) {
    const before = await page.evaluate(() => window.playground.results);
    await page.getByTestId("examples").selectOption(String(i));
    await page.waitForFunction((n) => window.playground.results > n, before);
    const results = page.getByTestId("scenario-result");
    assert.ok((await results.count()) > 0);
    for (const r of await results.all()) assert.equal(await r.getAttribute("data-passed"), "true", await r.textContent());
  }
  await page.close();
});

test("a syntax error shows its diagnostic, as the command line prints it", async () => {
  const page = await open();
  const text = await page.getByTestId("scenario").inputValue();
  const broken = text.replace("        power: 1\n", "        power: 1 +\n");
  await setText(page, "scenario", broken);
  const diag = page.getByTestId("error").first();
  await diag.waitFor();
  const shown = await diag.textContent();
  assert.match(shown, /^playground\.scenario:20:18: expected the end of the statement, found `\+`\n/);
  assert.match(shown, /power: 1 \+\n\s+│\s+\^/);
  // The same text as `rulecraft test` prints for the same file in a project of the same rulesets.
  const bin = process.env.RULECRAFT_BIN || join(project, "target", "release", "rulecraft");
  if (existsSync(bin)) {
    const dir = await mkdtemp(join(tmpdir(), "playground-"));
    await symlink(join(project, "rulesets"), join(dir, "rulesets"));
    await symlink(join(project, "content"), join(dir, "content"));
    await writeFile(join(dir, "playground.scenario"), broken);
    let out = "";
    try {
      execFileSync(bin, ["test", "playground.scenario"], { cwd: dir, encoding: "utf8" });
    } catch (e) {
      out = e.stdout;
    }
    assert.ok(out.includes(shown.trimEnd()), `the command line printed:\n${out}\nthe page shows:\n${shown}`);
  } else {
    console.log(`(no ${bin}: the diagnostic is not compared with the command line's)`);
  }
  // Clicking it puts the caret at the line and column.
  await diag.click();
  const caret = await page.getByTestId("scenario").evaluate((t) => t.selectionStart);
  assert.equal(broken.slice(caret, caret + 1), "+");
  await page.close();
});

test("a pending decision is answered with its buttons", async () => {
  const page = await open();
  await page.getByTestId("examples").selectOption({ label: "An Honor gain reduced to zero" });
  await page.waitForFunction(() => document.querySelector("[data-testid=ruleset-pick]").value === "honor");
  const text = await page.getByTestId("scenario").inputValue();
  // The first scenario without its answer and what follows it: it stops at the decision.
  const cut = text.indexOf('    choose "Honor Boon"\n');
  await setText(page, "scenario", text.slice(0, cut) + "}\n");
  const options = page.getByTestId("option");
  await options.first().waitFor();
  assert.match(await page.getByTestId("decision").textContent(), /Alice decides \(choose what happens next\)/);
  const labels = await options.allTextContents();
  assert.equal(labels.length, 2);
  assert.ok(!(await page.getByTestId("log").textContent()).includes("step B: Honor Boon"));
  // Honor Boon's "Before you gain Honor: increase the gain by 1." first.
  await options.nth(labels.findIndex((l) => l.includes("increase the gain by 1"))).click();
  await page.getByTestId("undo").waitFor();
  const log = await page.getByTestId("log").textContent();
  assert.match(log, /before gains_honor\(Bob, 1\): step B: Honor Boon/);
  assert.match(log, /gains_honor\(Bob, 1\): amount 1 -> 2 by Honor Boon/);
  // The answer is in the link: a shared link replays it.
  await page.getByTestId("share").click();
  await page.locator("[data-testid=share][data-link]").waitFor({ state: "attached" });
  const url = await page.getByTestId("share").getAttribute("data-link");
  const again = await open(url);
  await again.getByTestId("undo").waitFor();
  assert.match(await again.getByTestId("log").textContent(), /step B: Honor Boon/);
  await again.close();
  await page.close();
});

test("a shared link opens the same case", async () => {
  const page = await open();
  const text = await page.getByTestId("scenario").inputValue();
  const edited = text.replace("        power: 1\n", "        power: 7\n");
  await setText(page, "scenario", edited);
  await page.getByTestId("content").fill('# a note for the link\n');
  await page.waitForFunction(() =>
    document.querySelector('[data-testid=object-row][data-name="Lamb"] td[data-char="power"]')?.textContent === "8");
  await page.getByTestId("share").click();
  await page.locator("[data-testid=share][data-link]").waitFor({ state: "attached" });
  const url = await page.getByTestId("share").getAttribute("data-link");
  assert.match(url, /#z=[A-Za-z0-9_-]+$/);
  await page.close();
  const shared = await open(url);
  assert.equal(await shared.getByTestId("scenario").inputValue(), edited);
  assert.equal(await shared.getByTestId("content").inputValue(), "# a note for the link\n");
  assert.equal(await shared.getByTestId("ruleset-pick").inputValue(), "mtg-2020");
  assert.equal(await cell(shared, "Lamb", "power").textContent(), "8");
  await shared.close();
});

test("a 30-object board recomputes after an edit", async () => {
  const page = await open();
  await setText(page, "content", await fixture("board-30.cards"));
  await setText(page, "scenario", await fixture("board-30.scenario"));
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=object-row]").length === 30);
  await page.waitForFunction(() => document.querySelector("[data-testid=scenario-result]")?.dataset.passed === "true");
  const content = await page.getByTestId("content").inputValue();
  const engine = [];
  const shown = [];
  for (let i = 0; i < 12; i++) {
    const power = 3 + (i % 5);
    // From the input event to the table showing the new value: printed power + 25 (layer 7c).
    const ms = await page.evaluate(
      ([text, want]) =>
        new Promise((done) => {
          const ed = document.querySelector("[data-testid=content]");
          const table = document.querySelector("[data-testid=objects]");
          const seen = new MutationObserver(() => {
            const c = table.querySelector('[data-testid=object-row] td[data-char="power"]');
            if (c && c.textContent === want) {
              seen.disconnect();
              done(performance.now() - start);
            }
          });
          seen.observe(table, { childList: true, subtree: true });
          const start = performance.now();
          ed.value = text;
          ed.dispatchEvent(new Event("input"));
        }),
      [content.replace("power: 2", `power: ${power}`), String(power + 25)],
    );
    shown.push(ms);
    engine.push(await page.evaluate(() => window.playground.lastMs));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  measured.board30EngineMsMedian = +median(engine.slice(2)).toFixed(1);
  measured.board30EditToTableMsMedian = +median(shown.slice(2)).toFixed(1);
  assert.ok(measured.board30EngineMsMedian < 250, JSON.stringify(engine));
  await page.close();
});

test("the ruleset editor follows the scenario's ruleset line while unedited", async () => {
  const page = await open();
  assert.equal(await page.getByTestId("ruleset-pick").inputValue(), "mtg-2020");
  const text = await page.getByTestId("scenario").inputValue();
  await setText(page, "scenario", text.replace('ruleset: "mtg-2020"', 'ruleset: "mtg-2017"'));
  await page.waitForFunction(() => document.querySelector("[data-testid=ruleset-pick]").value === "mtg-2017");
  assert.match(await page.getByTestId("ruleset").inputValue(), /ruleset "mtg-2017"/);
  // An edited ruleset stays: the scenario then names another, and the editor keeps its text.
  await setText(page, "ruleset", (await page.getByTestId("ruleset").inputValue()) + "\n# edited\n");
  await page.waitForFunction(() => /# edited/.test(document.querySelector("[data-testid=ruleset]").value));
  await setText(page, "scenario", text);
  await page.waitForFunction(() => document.querySelector("[data-testid=scenario-result]")?.dataset.passed === "true");
  assert.match(await page.getByTestId("ruleset").inputValue(), /# edited/);
  assert.equal(await page.getByTestId("ruleset-pick").inputValue(), "mtg-2017");
  await page.close();
});

test("an input the engine takes too long on ends its worker, and the page goes on", async () => {
  // A limit of 1 ms: every input takes longer.
  const page = await browser.newPage();
  await page.goto(base + "?limit_ms=1");
  const stopped = page.getByTestId("error").filter({ hasText: "stopped: the engine took longer than 0.001 s on this input" });
  await stopped.first().waitFor();
  // The page still answers: an edit is taken, and asked of a new worker, stopped in turn. The
  // edit is the 30-object board (about 10 ms of engine time), so that no answer comes back
  // inside the 1 ms limit: a tiny input may, and then shows its own result, not "stopped".
  const stops = await page.evaluate(() => window.playground.stops);
  assert.ok(stops >= 1);
  const scenario = await fixture("board-30.scenario");
  await page.getByTestId("content").fill(await fixture("board-30.cards"));
  await page.getByTestId("scenario").fill(scenario);
  assert.equal(await page.getByTestId("scenario").inputValue(), scenario);
  await page.waitForFunction((n) => window.playground.stops > n, stops);
  await page.waitForFunction(() => /stopped/.test(document.querySelector("[data-testid=diagnostics]").textContent));
  await page.close();
});
