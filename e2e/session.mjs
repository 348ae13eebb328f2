// The desktop E2E's shared session: where the built app, CLI and sample dataset are, a temporary
// database of this test file's own, and the driver — launch the real app through tauri-driver,
// quit it, take screenshots, find elements, move between screens. Each *.test.mjs file imports
// this and launches its own app (node --test runs every file in its own process, one after
// another), so several test files can be written without editing one another.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import { Builder, By, until } from "selenium-webdriver";

export const root = path.resolve(import.meta.dirname, "..");
// The build's folder: CARGO_TARGET_DIR when the build was told one (as cargo is), else target/.
export const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, "target");
export const app = path.join(targetDir, "debug/assay-desktop");
export const cli = path.join(targetDir, "debug/assay");
export const dataset = path.join(root, "datasets/trailgear");
export const shots = path.join(root, "e2e/screenshots");
export const work = mkdtempSync(path.join(tmpdir(), "assay-e2e-"));
export const db = path.join(work, "assay.sqlite");
export const env = { ...process.env, ASSAY_DB: db };
// Both default generator models answer (one experiment of two runs), judged by the smallest
// model: a few questions and short answers keep CI fast; a person picks models the same way.
export const generators = (process.env.ASSAY_E2E_MODELS || "smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct").split(",");
export const model = generators[0];

export let driverProcess;
export let driver;

export function assay(...args) {
  return execFileSync(cli, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

export function portOpen(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => { socket.end(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

export async function waitForPorts(ports, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await Promise.all(ports.map(portOpen))).every(Boolean)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`tauri-driver did not open ports ${ports.join(", ")}`);
}

/** tauri-driver (and through it the app) with extra environment, e.g. a dark GTK theme. */
export async function launch(extraEnv = {}) {
  // Its own process group, so quit() can end WebKitWebDriver and the app with it.
  driverProcess = spawn("tauri-driver", ["--port", "4444", "--native-port", "4445", "--native-driver", "/usr/bin/WebKitWebDriver"],
    { env: { ...env, ...extraEnv }, stdio: ["ignore", "inherit", "inherit"], detached: true });
  await waitForPorts([4444, 4445], 30000);
  const capabilities = { browserName: "wry", "tauri:options": { application: app } };
  driver = await new Builder().usingServer("http://127.0.0.1:4444/").withCapabilities(capabilities).build();
}

export async function quit() {
  await driver?.quit().catch(() => undefined);
  driver = undefined;
  if (driverProcess && driverProcess.exitCode === null) {
    const exited = new Promise((r) => driverProcess.once("exit", r));
    driverProcess.kill();
    await exited;
  }
  // An app that outlives its session (seen once under heavy load) holds the test's stderr
  // open, and the test process would never exit.
  try { if (driverProcess) process.kill(-driverProcess.pid, "SIGTERM"); } catch { /* the group is gone */ }
  // The ports must be free before the next launch.
  const end = Date.now() + 10000;
  while (Date.now() < end && ((await portOpen(4444)) || (await portOpen(4445)))) await new Promise((r) => setTimeout(r, 200));
}

export async function shot(name) {
  mkdirSync(shots, { recursive: true });
  // Let the page paint what the test just saw before the picture is taken.
  await driver.executeAsyncScript("const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()))");
  writeFileSync(path.join(shots, `${name}.png`), await driver.takeScreenshot(), "base64");
}

export const $ = (css, ms = 15000) => driver.wait(until.elementLocated(By.css(css)), ms);
export const $$ = (css) => driver.findElements(By.css(css));
export const text = async (css) => (await $(css)).getText();
export const nav = async (screen) => (await $(`button.nav[data-screen="${screen}"]`)).click();
export const type = async (css, value) => { const el = await $(css); await el.clear(); await el.sendKeys(value); };
export const runByName = (name) => JSON.parse(assay("show", name, "--json")).runs[0];

/** Tick exactly the runs named (the first named is ticked first: the baseline) and compare. */
export async function compareNamed(names) {
  await nav("runs");
  await $("#runs-table tbody tr");
  // Clear every box first, then tick the named runs in order: the selection keeps tick order.
  for (const row of await $$("#runs-table tbody tr")) {
    const box = await row.findElement(By.css("input[type=checkbox]"));
    if (await box.isSelected()) await box.click();
  }
  for (const wanted of names) {
    for (const row of await $$("#runs-table tbody tr")) {
      if ((await row.findElement(By.css("td.name")).getText()) !== wanted) continue;
      await (await row.findElement(By.css("input[type=checkbox]"))).click();
    }
  }
  await (await $("#compare-selected")).click();
  await $('[data-testid="settings"]');
}

/** The window's inner size for a screenshot at a size a user has. */
export async function windowSize(width, height) {
  await driver.manage().window().setRect({ width, height });
  await driver.wait(async () => (await driver.executeScript("return window.innerWidth")) <= width, 5000);
}

export async function openRunNamed(name) {
  await nav("runs");
  await $("#runs-table tbody tr");
  for (const row of await $$("#runs-table tbody tr")) {
    const cell = await row.findElement(By.css("td.name"));
    if ((await cell.getText()) === name) { await cell.click(); break; }
  }
  await driver.wait(async () => (await text("#run-title")) === name, 15000);
}

/** The values of the ticked checkboxes in `container`, waiting until the core's lists have
 *  ticked at least one (New run ticks its defaults when they arrive). */
export async function tickedValues(container) {
  const ticked = async () => {
    const values = [];
    for (const box of await $$(`${container} input[type=checkbox]`)) {
      if (await box.isSelected()) values.push(await box.getAttribute("value"));
    }
    return values;
  };
  await driver.wait(async () => (await ticked()).length > 0, 10000);
  return ticked();
}

/** Tick exactly `values` among the checkboxes in `container` (New run remembers the last
 *  choices, so a test sets every box it relies on rather than clicking to toggle). */
export async function tickExactly(container, values) {
  await $(`${container} input[type=checkbox]`);
  for (const box of await $$(`${container} input[type=checkbox]`)) {
    const wanted = values.includes(await box.getAttribute("value"));
    if (wanted) await driver.wait(async () => await box.isEnabled(), 10000);
    if ((await box.isSelected()) !== wanted) await box.click();
  }
}
