// End-to-end test of the real desktop app: the built binary, driven through tauri-driver and
// WebKitWebDriver, against a temporary database seeded by the real `assay` CLI on the trailgear
// sample dataset. Screenshots of every view go to e2e/screenshots/.
//
// Needs: target/debug/assay and target/debug/assay-desktop (built with tauri/custom-protocol),
// tauri-driver on PATH, WebKitWebDriver, an X display (run under xvfb-run). scripts/desktop-test.sh
// sets all of that up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import { Builder, By, Key, until } from "selenium-webdriver";

const root = path.resolve(import.meta.dirname, "..");
const app = path.join(root, "target/debug/assay-desktop");
const cli = path.join(root, "target/debug/assay");
const dataset = path.join(root, "datasets/trailgear");
const shots = path.join(root, "e2e/screenshots");
const work = mkdtempSync(path.join(tmpdir(), "assay-e2e-"));
const db = path.join(work, "assay.sqlite");
const env = { ...process.env, ASSAY_DB: db };

let driverProcess;
let driver;

function assay(...args) {
  return execFileSync(cli, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => { socket.end(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

async function waitForPorts(ports, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await Promise.all(ports.map(portOpen))).every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`tauri-driver did not open ports ${ports.join(", ")}`);
}

async function shot(name) {
  mkdirSync(shots, { recursive: true });
  writeFileSync(path.join(shots, `${name}.png`), await driver.takeScreenshot(), "base64");
}

const $ = (css) => driver.wait(until.elementLocated(By.css(css)), 15000);
const $$ = (css) => driver.findElements(By.css(css));
const text = async (css) => (await $(css)).getText();
const nav = async (screen) => (await $(`button.nav[data-screen="${screen}"]`)).click();

before(async () => {
  assert.ok(existsSync(app), `${app} is missing: build it with --features tauri/custom-protocol`);
  assay("run", dataset, "--target", `answers:${dataset}/answers-careful.jsonl`, "--name", "careful");
  assay("run", dataset, "--target", `answers:${dataset}/answers-sloppy.jsonl`, "--name", "sloppy");
  driverProcess = spawn("tauri-driver", ["--port", "4444", "--native-port", "4445", "--native-driver", "/usr/bin/WebKitWebDriver"],
    { env, stdio: ["ignore", "inherit", "inherit"] });
  await waitForPorts([4444, 4445], 30000);
  const capabilities = { browserName: "wry", "tauri:options": { application: app } };
  driver = await new Builder().usingServer("http://127.0.0.1:4444/").withCapabilities(capabilities).build();
});

after(async () => {
  await driver?.quit().catch(() => undefined);
  driverProcess?.kill();
});

test("the runs list shows the runs the CLI made", async () => {
  await $("#runs-table tbody tr");
  const names = await Promise.all((await $$("#runs-table td.name")).map((td) => td.getText()));
  assert.deepEqual([...names].sort(), ["careful", "sloppy"]);
  assert.match(await text("#db-path"), new RegExp(db.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  await shot("01-runs");
});

test("a run opens with summary cards, charts and a drill-down", async () => {
  const show = JSON.parse(assay("show", "careful", "--json"));
  const expected = show.runs[0].summary.token_f1.mean.toFixed(3);
  const rows = await $$("#runs-table tbody tr");
  for (const row of rows) if ((await row.findElement(By.css("td.name")).getText()) === "careful") { await row.click(); break; }
  assert.equal(await text("#run-title"), "careful");
  // The card shows the core's number for token_f1.
  assert.equal(await text('#summary-cards [data-metric="token_f1"] .value'), expected);
  assert.ok((await $$("figure.chart svg")).length >= 2, "interval chart and histograms");
  const table = await $("#questions-table");
  await table.click();
  await table.sendKeys(Key.ARROW_DOWN);
  const detail = await text("#item-detail");
  assert.match(detail, /Question/);
  assert.match(detail, /Answer/);
  assert.match(detail, new RegExp(show.runs[0].items[1].id));
  await shot("02-run");
});

test("two runs compare with intervals, verdicts and side-by-side answers", async () => {
  await nav("runs");
  for (const box of await $$("#runs-table tbody input[type=checkbox]")) await box.click();
  await (await $("#compare-selected")).click();
  const row = await $('.comparison-table tr[data-metric="token_f1"]');
  const cells = await row.findElements(By.css("td"));
  assert.equal(cells.length, 7);
  assert.match(await cells[2].getText(), /^[+-]?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]$/);
  assert.match(await cells[3].getText(), /better|no significant difference/);
  assert.ok((await $$(".disagreements .pair")).length > 0, "most-disagreeing questions shown");
  await shot("03-compare");
});

test("the comparison exports as HTML into the reports folder", async () => {
  await nav("export");
  await (await $("#export-format")).sendKeys("HTML");
  await (await $("#export-data-dir")).click();
  await driver.wait(async () => (await text("#export-status")).startsWith("Written: "), 15000);
  const file = (await text("#export-status")).replace("Written: ", "");
  const html = readFileSync(file, "utf8");
  assert.match(html, /<svg/);
  assert.match(html, /careful/);
  await shot("04-export");
});

test("a new run starts, reports progress and finishes", async () => {
  await nav("new");
  await (await $("#run-dataset")).sendKeys(dataset);
  await (await $("#run-answers")).sendKeys(`${dataset}/answers-sloppy.jsonl`);
  await (await $("#run-name")).sendKeys("from-the-window");
  await (await $("#run-start")).click();
  await driver.wait(until.elementLocated(By.css("#open-finished")), 60000);
  assert.match(await text("#progress-outcome"), /Run finished/);
  const total = JSON.parse(assay("show", "from-the-window", "--json")).runs[0].items.length;
  assert.match(await text("#progress-counts"), new RegExp(`^${total} / ${total} items`));
  await shot("05-new-run");
  await (await $("#open-finished")).click();
  assert.equal(await text("#run-title"), "from-the-window");
});

test("a new run with a bad answers file shows the error inline", async () => {
  await nav("new");
  const bad = path.join(work, "bad.jsonl");
  writeFileSync(bad, '{"id": "q001", "answer": 42}\n');
  await (await $("#run-dataset")).sendKeys(dataset);
  await (await $("#run-answers")).sendKeys(bad);
  await (await $("#run-start")).click();
  await driver.wait(async () => (await text("#run-error")).length > 0, 15000);
  assert.match(await text("#run-error"), /bad\.jsonl/);
});

test("datasets browse with filters, show a manual, and import eShop JSON", async () => {
  await nav("datasets");
  const pathInput = await $("#dataset-path");
  await pathInput.clear();
  await pathInput.sendKeys(dataset);
  await (await $("#dataset-open")).click();
  const all = await text("#question-count");
  await (await $("#filter-refuse")).sendKeys("yes");
  const refused = await text("#question-count");
  assert.notEqual(all, refused);
  for (const row of await $$("#dataset-questions tbody tr")) {
    if (await row.isDisplayed()) assert.match(await row.findElement(By.css("td:last-child")).getText(), /yes/);
  }
  await (await $('button[data-doc="summit-stove-2"]')).click();
  await driver.wait(async () => /Summit/i.test(await text("#manual-text")), 10000);
  await shot("06-datasets");

  const corpus = path.join(work, "manuals");
  mkdirSync(corpus, { recursive: true });
  writeFileSync(path.join(corpus, "158.md"), "# Tent\nThe tent weighs 2 kg.\n");
  const eshop = path.join(work, "evalquestions.json");
  writeFileSync(eshop, '[{"QuestionId": 1, "ProductId": 999, "Question": "?", "Answer": "!"}]');
  await (await $("#import-file")).sendKeys(eshop);
  await (await $("#import-corpus")).sendKeys(corpus);
  await (await $("#import-output")).sendKeys(path.join(work, "imported"));
  await (await $("#import-go")).click();
  await driver.wait(async () => /ProductId/.test(await text("#import-status")), 10000);
  assert.ok(!existsSync(path.join(work, "imported")), "nothing written on bad input");
  await shot("07-import-error");

  writeFileSync(eshop, '[{"QuestionId": 1, "ProductId": 158, "Question": "How heavy?", "Answer": "2 kg"}]');
  await (await $("#import-go")).click();
  await driver.wait(async () => /Imported 1 questions/.test(await text("#import-status")), 10000);
});
