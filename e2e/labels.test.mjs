// End-to-end test of labelling, the judge panel and served models in the real desktop app
// (issue 35): label a judged run's answers with the keyboard (1 / 2 / 0, j / k, arrows), with a
// note; every label is in the database at once (read back with the real CLI); export and
// import the labels as the JSONL `assay agree` reads, a bad file refused with its line and
// field; the judge panel's agreement table and calibration show what `assay agree` computes on
// the same labels; add a served model on the Models screen and remove it, and remove a model
// added by reference, whose file stays. Screenshots at 1400×900 and 1024×700.
//
// The judged run is made by the CLI first (8 of the sample's sloppy answers, judged by
// `correct` and `correctness` on the smallest model). The app runs with a models folder and a
// judges folder of this test's own, so adding, removing and calibrating touch nothing of the
// user's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { By, Key } from "selenium-webdriver";
import {
  app, cli, dataset, work, env, model, driver,
  assay, launch, quit, shot, $, $$, text, nav, windowSize, openRunNamed,
} from "./session.mjs";

const runName = "labelled";
const models = path.join(work, "models");
const judges = path.join(work, "judges");
const appEnv = { ASSAY_MODELS: models, ASSAY_JUDGES_DIR: judges };
// The CLI as the app sees it (its models and judges folders).
const appCli = (...args) => execFileSync(cli, args, { env: { ...env, ...appEnv }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const listed = () => JSON.parse(assay("labels", "list", runName, "--json"));
const byQuestion = () => Object.fromEntries(listed().labels.map((l) => [l.question_id, l]));
// The sample's human labels of the sloppy answers under `correct`: true = correct.
const human = Object.fromEntries(readFileSync(path.join(dataset, "labels-sloppy.jsonl"), "utf8").trim().split("\n")
  .map((l) => JSON.parse(l)).filter((l) => l.judge === "correct").map((l) => [l.id, l.label === "Yes"]));

before(async () => {
  assert.ok(existsSync(app), `${app} is missing: build it with --features tauri/custom-protocol`);
  mkdirSync(models, { recursive: true });
  assay("run", dataset, "--target", `answers:${dataset}/answers-sloppy.jsonl`, "--judges", "correct,correctness",
    "--judge-model", model, "--limit", "8", "--name", runName);
  await launch(appEnv);
});

after(async () => {
  await quit();
});

/** The question the labelling card shows now. */
const shown = async () => (await $("#label-card")).getAttribute("data-question");
const press = async (...keys) => {
  for (const key of keys) {
    const before = await (await $("#label-progress")).getText();
    await (await $("#labelling")).sendKeys(key);
    // A label key is stored before the card moves on: wait for the count or the card to change.
    await driver.sleep(150);
    if (["1", "2", "0"].includes(key)) await driver.wait(async () => (await text("#label-progress")) !== before || (await text("#labels-status")).includes("stored"), 5000);
  }
};

test("answers are labelled with the keyboard, stored at once, a note kept", async () => {
  await openRunNamed(runName);
  await $("#label-card[data-question]");
  await driver.executeScript("document.getElementById('labelling').scrollIntoView(); document.getElementById('labelling').focus()");
  const order = JSON.parse(assay("show", runName, "--json")).runs[0].items.map((i) => i.id);
  assert.equal(await shown(), order[0]);
  // 1 correct, 2 wrong, 0 skip; each moves to the next answer.
  await press("1");
  assert.equal(await shown(), order[1]);
  assert.equal(byQuestion()[order[0]].label, "correct");
  await press("2", "0");
  assert.equal(await shown(), order[3]);
  // Back with k and ←, forward with j and →: the card shows each answer's stored label.
  await press("k");
  assert.equal(await shown(), order[2]);
  assert.equal(await (await $("#label-current")).getAttribute("data-label"), "skip");
  await press(Key.ARROW_LEFT);
  assert.equal(await (await $("#label-current")).getAttribute("data-label"), "wrong");
  await press("j", Key.ARROW_RIGHT);
  assert.equal(await shown(), order[3]);
  let stored = byQuestion();
  assert.deepEqual([order[0], order[1], order[2]].map((q) => stored[q].label), ["correct", "wrong", "skip"]);
  assert.equal(listed().labels.length, 3, "nothing labelled but the three");

  // A note typed in the box goes with the label; keys typed there are text, not labels.
  const note = await $("#label-note");
  await note.sendKeys("misses the 2 N·m figure");
  await (await $('#label-card button[data-label="wrong"]')).click();
  await driver.wait(async () => (await shown()) === order[4], 5000);
  assert.equal(byQuestion()[order[3]].note, "misses the 2 N·m figure");
  assert.equal(byQuestion()[order[3]].label, "wrong");

  // Now as the sample's humans labelled them, from the first answer on.
  await driver.executeScript("document.getElementById('labelling').focus()");
  for (let i = 0; i < 6; i++) await press("k");
  assert.equal(await shown(), order[0]);
  for (const q of order.slice(0, 6)) await press(human[q] ? "1" : "2");
  stored = byQuestion();
  for (const q of order.slice(0, 6)) assert.equal(stored[q].label, human[q] ? "correct" : "wrong", q);
  assert.match(await text("#label-progress"), new RegExp(`^6 of ${order.length} answers labelled`));
  await windowSize(1400, 900);
  await driver.executeScript("document.getElementById('label-card').scrollIntoView()");
  await shot("labels-01-labelling-1400");
  await windowSize(1024, 700);
  await driver.executeScript("document.getElementById('label-card').scrollIntoView()");
  const overflow = await driver.executeScript("const m = document.getElementById('labelling'); return m.scrollWidth - m.clientWidth");
  assert.ok(overflow <= 0, `the labelling section runs ${overflow} px off the right edge at 1024`);
  await shot("labels-02-labelling-1024");
  await windowSize(1400, 900);
});

test("labels export as agree's JSONL and import back; a bad file names line and field", async () => {
  await (await $("#labels-export-data-dir")).click();
  await driver.wait(async () => /labels written to/.test(await text("#labels-status")), 10000);
  const written = (await text("#labels-status")).match(/written to (\S+\.jsonl)/)[1];
  assert.equal(readFileSync(written, "utf8"), assay("labels", "export", runName));
  const first = listed().labels[0];
  // A file that turns the first answer around, then a bad one that names a judge with no pass.
  const flip = path.join(work, "flip.jsonl");
  writeFileSync(flip, JSON.stringify({ id: first.question_id, judge: "correct", label: first.label === "correct" ? "No" : "Yes" }) + "\n");
  const bad = path.join(work, "bad.jsonl");
  writeFileSync(bad, readFileSync(flip, "utf8") + JSON.stringify({ id: first.question_id, judge: "abstention", label: "Attempted" }) + "\n");
  const before = assay("labels", "export", runName);
  const input = await $("#labels-import-path");
  await input.clear(); await input.sendKeys(bad);
  await (await $("#labels-import")).click();
  await driver.wait(async () => (await (await $("#labels-status")).getAttribute("class")) === "error", 10000);
  const error = await text("#labels-status");
  assert.ok(error.includes(`${bad}:2:`) && error.includes("`judge`"), error);
  assert.equal(assay("labels", "export", runName), before, "a refused file changes nothing");
  await input.clear(); await input.sendKeys(flip);
  await (await $("#labels-import")).click();
  await driver.wait(async () => /1 labels imported \(1 replaced/.test(await text("#labels-status")), 10000);
  assert.notEqual(byQuestion()[first.question_id].label, first.label);
  // Back as the humans said, through the same import.
  await input.clear(); await input.sendKeys(written);
  await (await $("#labels-import")).click();
  await driver.wait(async () => /6 labels imported/.test(await text("#labels-status")), 10000);
  assert.equal(byQuestion()[first.question_id].label, first.label);
});

test("the judge panel shows assay agree's figures and calibrates from the labels", async () => {
  await (await $("#open-judges")).click();
  await $("#agreement-table tbody tr");
  const agreed = JSON.parse(assay("agree", runName, "--json"));
  const rows = await $$("#agreement-table tbody tr");
  assert.equal(rows.length, agreed.length);
  for (const a of agreed) {
    const row = await $(`#agreement-table tr[data-judge="${a.judge}"]`);
    const cells = await Promise.all((await row.findElements(By.css("td"))).map((c) => c.getText()));
    assert.equal(cells[2], String(a.n), a.judge);
    assert.equal(cells[4], a.accuracy.toFixed(3), a.judge);
    assert.equal(cells[5], a.kappa === null ? "—" : a.kappa.toFixed(3), a.judge);
    assert.equal(cells[7], a.length_spearman === null ? "—" : a.length_spearman.toFixed(3), a.judge);
    // The confusion matrix: the core's counts, rows your labels.
    const counts = await Promise.all((await $$(`figure.confusion[data-judge="${a.judge}"] td`)).map((c) => c.getText()));
    assert.deepEqual(counts.map(Number), a.confusion.flat(), a.judge);
  }
  assert.match(await text("#judges-labels"), /^6 of 8 answers labelled: /);
  assert.match(await text('#judges-now li[data-judge="correct"]'), /not calibrated/);
  await shot("labels-03-judges-1400");

  // The CLI's calibration on the same labels, in a judges folder of its own, is the reference.
  const reference = JSON.parse(appCli("agree", runName, "--calibrate", "--json", "--judges-dir", path.join(work, "cli-judges")));
  await (await $("#calibrate-from-labels")).click();
  await $("#calibrations tbody tr", 30000);
  for (const c of reference) {
    const cells = await Promise.all((await (await $(`#calibrations tr[data-judge="${c.judge}"]`)).findElements(By.css("td"))).map((x) => x.getText()));
    assert.equal(cells[2], c.thresholds.map((t) => t.toFixed(3)).join(", "), c.judge);
    assert.equal(cells[3], `${c.before.accuracy.toFixed(3)} → ${c.after.accuracy.toFixed(3)}`, c.judge);
  }
  const copy = path.join(judges, "correct.toml");
  assert.ok(existsSync(copy), "the calibrated copy of correct is in the app's judges folder");
  // Recorded with the judge: the panel lists it calibrated, the CLI loads it from that folder.
  const cut = reference.find((c) => c.judge === "correct").thresholds[0];
  assert.match(await text('#judges-now li[data-judge="correct"]'), new RegExp(`calibrated, cut points ${cut.toFixed(3)} on 6 labels`));
  const spec = JSON.parse(appCli("judges", "show", "correct", "--json"));
  assert.equal(spec.calibrated_on, 6);
  await windowSize(1024, 700);
  await driver.executeScript("document.getElementById('calibrations').scrollIntoView()");
  const overflow = await driver.executeScript("const m = document.getElementById('judges-content'); return m.scrollWidth - m.clientWidth");
  assert.ok(overflow <= 0, `the judge panel runs ${overflow} px off the right edge at 1024`);
  await shot("labels-04-judges-calibrated-1024");
  await windowSize(1400, 900);

  // Shown on every score it affects: the labelling card gives each `correct` score its calibrated label.
  await (await $("#back-to-run")).click();
  await $("#label-card[data-question]");
  const line = await text('#label-card li[data-judge="correct"]');
  assert.match(line, new RegExp(`calibrated \\(cut ${cut.toFixed(2)} on 6 labels\\): (Yes|No)`));
  const item = JSON.parse(assay("show", runName, "--json")).runs[0].items[0];
  const expected = item.verdicts.correct.score >= cut ? "Yes" : "No";
  assert.ok(line.endsWith(`: ${expected}`), `${line} (score ${item.verdicts.correct.score}, cut ${cut})`);
});

test("a served model is added and removed on the Models screen; a model added by reference keeps its file", async () => {
  // A model registered by reference in the app's models folder: the real file stays put.
  const file = execFileSync(cli, ["models", "list", "--json"], { env, encoding: "utf8" });
  const smallest = JSON.parse(file).find((m) => m.id === model);
  assert.ok(smallest?.path && existsSync(smallest.path), `${model} is installed`);
  appCli("models", "add", smallest.path, "--id", "e2e-by-reference");

  await nav("models");
  await $('#models-table tr[data-model="e2e-by-reference"]');
  await (await $("#server-id")).sendKeys("e2e-served");
  await (await $("#server-url")).sendKeys("http://127.0.0.1:9/v1");
  await (await $("#server-model")).sendKeys("served-name");
  await (await $("#server-key-env")).sendKeys("E2E_KEY");
  await (await $("#server-add")).click();
  await $('#models-table tr[data-model="e2e-served"]');
  assert.match(await text('#models-table tr[data-model="e2e-served"] td.state'), /served/);
  const toml = readFileSync(path.join(models, "user-models.toml"), "utf8");
  assert.ok(toml.includes("e2e-served") && toml.includes("E2E_KEY"), toml);
  // A bad URL is refused with the field named.
  await (await $("#server-id")).clear(); await (await $("#server-id")).sendKeys("e2e-bad");
  await (await $("#server-url")).clear(); await (await $("#server-url")).sendKeys("ftp://x");
  await (await $("#server-add")).click();
  await driver.wait(async () => /base_urls/.test(await text("#models-status")), 5000);
  await windowSize(1024, 700);
  await driver.executeScript("document.querySelector('[data-remove=\"e2e-served\"]').scrollIntoView()");
  await (await $('[data-remove="e2e-served"]')).click();
  assert.match(await text('#models-table tr[data-model="e2e-served"] .confirm-text'), /server itself is not touched/);
  await shot("labels-05-models-remove-1024");
  await (await $('[data-confirm-remove="e2e-served"]')).click();
  await driver.wait(async () => (await $$('#models-table tr[data-model="e2e-served"]')).length === 0, 10000);
  assert.match(await text("#models-status"), /removed served model e2e-served/);
  assert.ok(!readFileSync(path.join(models, "user-models.toml"), "utf8").includes("e2e-served"));

  await (await $('[data-remove="e2e-by-reference"]')).click();
  assert.match(await text('#models-table tr[data-model="e2e-by-reference"] .confirm-text'), /file stays where it is/);
  await (await $('[data-confirm-remove="e2e-by-reference"]')).click();
  await driver.wait(async () => (await $$('#models-table tr[data-model="e2e-by-reference"]')).length === 0, 10000);
  assert.match(await text("#models-status"), /was not deleted/);
  assert.ok(existsSync(smallest.path), "the referenced file is still there");
  await windowSize(1400, 900);
  await shot("labels-06-models-1400");
});
