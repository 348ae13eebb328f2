// End-to-end test of deleting runs in the real desktop app: the runs list's "Delete selected…"
// shows what goes with each ticked run (answers, verdicts, pairwise judgments, people's labels)
// as the core counts it, "Keep" changes nothing, a second click deletes, and the CLI reading the
// same database agrees; a run whose stored row is damaged is deleted from its own line.
// Screenshots of the confirmation at 1400×900 and 1024×700.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { By } from "selenium-webdriver";
import { app, dataset, db, driver, assay, launch, quit, shot, $, $$, text, nav, windowSize, runByName } from "./session.mjs";

const names = () => JSON.parse(assay("runs", "--json")).map((r) => r.name).sort();

before(async () => {
  assert.ok(existsSync(app), `${app} is missing: build it with --features tauri/custom-protocol`);
  assay("run", dataset, "--target", `answers:${dataset}/answers-careful.jsonl`, "--limit", "3", "--name", "keep me");
  assay("run", dataset, "--target", `answers:${dataset}/answers-sloppy.jsonl`, "--limit", "4", "--name", "delete me");
  assay("labels", "set", "delete me", "q002", "wrong");
  assay("run", dataset, "--target", `answers:${dataset}/answers-careful.jsonl`, "--limit", "2", "--name", "damaged");
  // A settings column that no longer parses, written behind Assay's back.
  execFileSync("python3", ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
    + "c.execute(\"UPDATE runs SET config_json = '{' WHERE id = ?\", (sys.argv[2],)); c.commit()", db, runByName("damaged").id]);
  await launch();
});

after(async () => {
  await quit();
});

async function tick(name) {
  for (const row of await $$("#runs-table tbody tr")) {
    if ((await row.findElement(By.css("td.name")).getText()) === name) await (await row.findElement(By.css("input[type=checkbox]"))).click();
  }
}

test("deleting ticked runs says what goes, Keep changes nothing, and Delete removes them for the CLI too", async () => {
  await windowSize(1400, 900);
  await nav("runs");
  await $("#runs-table tbody tr");
  const listed = await Promise.all((await $$("#runs-table td.name")).map((td) => td.getText()));
  assert.deepEqual(listed.sort(), ["delete me", "keep me"]);
  const before = names();

  await tick("delete me");
  await (await $("#delete-selected")).click();
  const line = await text("#delete-plan li");
  assert.equal(line, "delete me: 4 answers, 0 verdicts, 0 pairwise judgments, 1 people's labels (export them from the run's Labels first to keep them)");
  await shot("50-delete-confirm-1400x900");
  await windowSize(1024, 700);
  await shot("51-delete-confirm-1024x700");
  await windowSize(1400, 900);

  await (await $("#delete-keep")).click();
  assert.equal((await $$("#delete-plan")).length, 0);
  assert.deepEqual(names(), before, "Keep deleted nothing");

  await (await $("#delete-selected")).click();
  await (await $("#delete-confirm")).click();
  await driver.wait(async () => {
    const now = await Promise.all((await $$("#runs-table td.name")).map((td) => td.getText().catch(() => "")));
    return now.length === 1 && now[0] === "keep me";
  }, 15000);
  assert.deepEqual(JSON.parse(assay("runs", "--json")).map((r) => r.name), ["keep me"]);
  assert.equal(JSON.parse(assay("show", "keep me", "--json")).runs[0].items.length, 3, "the other run is whole");
});

test("a damaged run is deleted from its own line", async () => {
  await nav("runs");
  const button = await $("#damaged-runs li button.delete-damaged");
  await button.click();
  assert.match(await text("#delete-plan li"), /^damaged: 2 answers, 0 verdicts, 0 pairwise judgments$/);
  await (await $("#delete-confirm")).click();
  await driver.wait(async () => (await $$("#damaged-runs")).length === 0, 15000);
  const damagedLeft = execFileSync("python3", ["-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*) FROM runs WHERE name = 'damaged'\").fetchone()[0])", db], { encoding: "utf8" });
  assert.equal(damagedLeft.trim(), "0");
});
