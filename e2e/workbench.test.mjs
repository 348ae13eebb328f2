// End-to-end test of the app as a workbench (issue 35), in its own app and database: a run
// keeps going while the user moves between screens (the job status in the frame, its live
// progress on the run's page, Cancel from another screen, Resume only once no process holds
// the run); the run page's hierarchy (primary metric first, the report's groups, readable
// names with descriptions, legible histograms, a sortable table with the primary visible);
// Compare's difference plot, identical settings folded away and the question × run grid with
// its failures-only filter; getting started (the datasets the app knows with their question
// counts, New run starting on the sample's rag target and remembering the last choices, errors
// that name the field). Screenshots at 1400×900 and 1024×700.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { By, until } from "selenium-webdriver";
import {
  app, dataset, work, model, driver, assay, launch, quit, shot, $, $$, text, nav, type, runByName, compareNamed, windowSize,
  openRunNamed,
} from "./session.mjs";

const longRun = "kept running";

/** The questions a dataset's questions file holds (its non-blank lines), counted here. */
const questionLines = (dir) => readFileSync(path.join(dir, "questions.jsonl"), "utf8").split("\n").filter((l) => l.trim()).length;

/** Whether the screen area needs to scroll sideways. */
const sideways = () => driver.executeScript("const m = document.getElementById('screen'); return m.scrollWidth - m.clientWidth");

before(async () => {
  assert.ok(existsSync(app), `${app} is missing: build it with the embed-ui feature`);
  assay("run", dataset, "--target", `answers:${dataset}/answers-careful.jsonl`, "--name", "careful");
  assay("run", dataset, "--target", `answers:${dataset}/answers-sloppy.jsonl`, "--name", "sloppy");
  await launch();
});

after(async () => {
  await quit();
});

test("the datasets screen lists the datasets it knows with their question counts", async () => {
  await nav("datasets");
  const row = await $(`#known-datasets tr[data-root="${dataset}"]`);
  assert.equal(await row.findElement(By.css("td.questions")).getText(), String(questionLines(dataset)));
  assert.match(await row.getText(), /sample/);
  for (const r of await $$("#known-datasets tbody tr")) {
    const root = await r.getAttribute("data-root");
    if (existsSync(path.join(root, "questions.jsonl")) && !(await r.findElements(By.css(".error"))).length) {
      assert.equal(await r.findElement(By.css("td.questions")).getText(), String(questionLines(root)), root);
    }
  }
  for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
    await windowSize(w, hgt);
    await shot(`30-datasets-known-${w}x${hgt}`);
  }
  await windowSize(1280, 800);
});

test("New run starts on the sample dataset's rag target, and an error names its field", async () => {
  await nav("new");
  await driver.wait(async () => (await (await $("#run-dataset")).getAttribute("value")) !== "", 10000);
  assert.equal(await (await $("#run-dataset")).getAttribute("value"), dataset);
  assert.equal(await (await $("#run-target")).getAttribute("value"), "rag");
  // A missing answers file: the field is named, and no raw operating-system wording.
  await (await $("#run-target")).sendKeys("answers");
  const missing = path.join(work, "no-such-answers.jsonl");
  await type("#run-answers", missing);
  await (await $("#run-start")).click();
  await driver.wait(async () => (await text("#run-error")).length > 0, 60000);
  const message = await text("#run-error");
  assert.match(message, /^Answers file \(JSONL\): /);
  assert.ok(!/os error/.test(message), message);
  await driver.executeScript("document.getElementById('run-error').scrollIntoView({ block: 'center' })");
  await shot("31-new-run-error-named");
});

test("a run keeps going across screens: job status everywhere, live progress on its page, Cancel from elsewhere", async () => {
  await nav("new");
  await (await $("#run-target")).sendKeys("rag");
  const box = await $(`#run-models input[value="${model}"]`);
  await driver.wait(async () => await box.isEnabled(), 10000);
  if (!(await box.isSelected())) await box.click();
  const judge = await $('#run-judges input[value="correct"]');
  if (!(await judge.isSelected())) await judge.click();
  const judgeModel = await $(`#run-judge-model input[value="${model}"]`);
  if (!(await judgeModel.isSelected())) await judgeModel.click();
  await type("#run-limit", "40");
  await type("#run-max-tokens", "24");
  await type("#run-name", longRun);
  await (await $("#run-start")).click();
  // The frame shows the job as soon as it starts, on this screen and every other.
  await driver.wait(async () => (await $("#job-status")).isDisplayed(), 10000);
  await driver.wait(async () => /^[1-9]\d* \/ 40 items · [\d.]+ items\/s · ETA /.test(await text("#job-counts")), 300000);
  // What became of the retrieval index, in the core's words.
  assert.match(await text("#job-index"), /index [0-9a-f]{12}\b.*: 8 documents, \d+ chunks/);
  // The ETA moves between items: two readings 2.5 s apart differ (or an item finished between).
  const first = await text("#job-counts");
  await driver.sleep(2500);
  const second = await text("#job-counts");
  assert.notEqual(first, second, "the ETA stood still between items");
  await nav("runs");
  assert.ok(await (await $("#job-status")).isDisplayed(), "job status on Runs");
  await nav("datasets");
  assert.ok(await (await $("#job-status")).isDisplayed(), "job status on Datasets");
  await shot("32-job-status-datasets");
  // Back to the run's page: its live progress, and no Resume while this app executes it.
  await (await $("#job-open")).click();
  await driver.wait(async () => (await text("#run-title")) === longRun, 15000);
  assert.ok(await (await $("#run-live")).isDisplayed(), "live progress on the run's page");
  assert.match(await text("#progress-counts"), /\/ 40 items/);
  assert.equal((await $$("#resume-run")).length, 0, "no Resume for a run being executed");
  for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
    await windowSize(w, hgt);
    await shot(`33-run-live-${w}x${hgt}`);
  }
  await windowSize(1280, 800);
  // Cancel from another screen: the run stops after its current item and is resumable.
  await nav("models");
  await (await $("#job-cancel")).click();
  await driver.wait(async () => /Run cancelled/.test(await text("#job-outcome")), 300000);
  await shot("34-job-cancelled-models");
  const run = runByName(longRun);
  assert.equal(run.status, "cancelled");
  assert.ok(run.items.length < 40, "stopped before the end");
  await openRunNamed(longRun);
  assert.equal((await $$("#run-live:not([hidden])")).length, 0);
  await $("#resume-run");
});

test("the run page leads with the primary metric, then the report's groups, with legible charts and a sortable table", async () => {
  const run = runByName(longRun);
  await openRunNamed(longRun);
  const primary = await $("#summary-cards .primary-card");
  assert.equal(await primary.getAttribute("data-metric"), "correct");
  assert.equal(await primary.findElement(By.css(".value")).getText(), run.summary.correct.mean.toFixed(3));
  assert.match(await primary.getText(), /passed the judge's threshold/);
  // Groups in the Markdown report's order; each card's readable name and description.
  const groups = await Promise.all((await $$("#summary-cards .metric-group")).map((g) => g.getAttribute("data-group")));
  const order = ["judges", "answer overlap", "citations and refusals", "retrieval"];
  assert.deepEqual(groups, order.filter((g) => groups.includes(g)));
  const f1 = await $('#summary-cards [data-metric="token_f1"]');
  assert.equal(await f1.findElement(By.css(".label")).getText(), "Token F1");
  assert.ok((await f1.getAttribute("title")).length > 10, "a description on hover");
  // Histogram labels at 11 px or more as drawn.
  await (await $("#histograms summary")).click();
  const smallest = await driver.executeScript(`
    let least = Infinity;
    for (const svg of document.querySelectorAll('#histograms svg')) {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      for (const t of svg.querySelectorAll('text')) least = Math.min(least, parseFloat(getComputedStyle(t).fontSize) * scale);
    }
    return least;`);
  assert.ok(smallest >= 11, `histogram text drawn at ${smallest} px`);
  // The verdict says what its score is.
  const table = await $("#questions-table");
  await table.click();
  await driver.wait(async () => (await $$('#item-detail [data-judge="correct"] .score-meaning')).length > 0, 10000);
  assert.equal(await text('#item-detail [data-judge="correct"] .score-meaning'), "(score = P(Yes))");
  // Sorting by the primary metric, descending on the first click.
  await (await $("#questions-table th.primary-col button")).click();
  const values = await Promise.all((await $$("#questions-table tbody td.primary-col")).map((td) => td.getText()));
  const numbers = values.filter((v) => v !== "—").map(Number);
  assert.deepEqual(numbers, [...numbers].sort((a, b) => b - a), values.join(" "));
  for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
    await windowSize(w, hgt);
    await driver.executeScript("window.scrollTo(0, 0); document.getElementById('screen').scrollTo(0, 0)");
    await shot(`35-run-page-${w}x${hgt}`);
    // The primary column is visible without scrolling the table sideways.
    const hidden = await driver.executeScript(`
      const wrap = document.querySelector('#questions-table').parentElement;
      const th = document.querySelector('#questions-table th.primary-col');
      return th.getBoundingClientRect().right - wrap.getBoundingClientRect().right;`);
    assert.ok(hidden <= 0, `the primary column is ${hidden} px past the table's edge at ${w}`);
  }
  await driver.executeScript("document.getElementById('questions-table').scrollIntoView()");
  await shot("36-run-table-1024x700");
  await windowSize(1280, 800);
});

test("Compare shows the difference plot, folds identical settings and grids questions × runs with a failures filter", async () => {
  await compareNamed(["careful", "sloppy"]);
  const [a, b] = [runByName("careful"), runByName("sloppy")];
  // One point per metric scored in both, with the core's verdict in its class.
  const plotted = await $$('[data-testid="difference-plot"] g.diff-row');
  const shared = Object.keys(a.summary).filter((m) => m in b.summary);
  assert.equal(plotted.length, shared.length);
  // Identical settings wait behind the toggle; the differing one shows.
  const visible = await Promise.all((await $$(".settings-table tbody tr")).map(async (r) => [await r.getAttribute("data-setting"), await r.isDisplayed()]));
  for (const [setting, shown] of visible) assert.equal(shown, setting === "answers file / service", `${setting} shown: ${shown}`);
  await (await $('[data-testid="same-toggle"]')).click();
  for (const r of await $$(".settings-table tbody tr")) assert.ok(await r.isDisplayed());
  await (await $('[data-testid="same-toggle"]')).click();
  // The grid: one row per question; failures only keeps the rows some run failed.
  const rows = await $$("#question-grid tbody tr");
  assert.equal(rows.length, a.items.length);
  await (await $("#grid-failures-only")).click();
  const shown = [];
  for (const r of rows) if (await r.isDisplayed()) shown.push(await r.getAttribute("data-question"));
  assert.ok(shown.length > 0 && shown.length < rows.length, `${shown.length} of ${rows.length} failing`);
  // No judge in these runs: the primary is token F1, and a question fails where a run errored
  // or scored it under the grid's threshold. Counted here from the CLI's JSON.
  const primary = await (await $("#question-grid thead th.primary-col")).getAttribute("data-metric");
  assert.equal(primary, "token_f1");
  const failing = (run) => new Set(run.items.filter((i) => i.error || (i.metrics.token_f1 !== undefined && i.metrics.token_f1 < 0.5)).map((i) => i.id));
  const expected = [...new Set([...failing(a), ...failing(b)])].sort();
  assert.deepEqual([...shown].sort(), expected);
  assert.equal(await text("#grid-count"), `${shown.length} of ${rows.length} questions`);
  await (await $("#grid-failures-only")).click();
  for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
    await windowSize(w, hgt);
    await driver.executeScript("document.getElementById('screen').scrollTo(0, 0)");
    await shot(`37-compare-top-${w}x${hgt}`);
    // The verdict (the headline) and the plot start above the fold; nothing runs off sideways.
    const bottom = await driver.executeScript("return document.querySelector('[data-testid=\"headline\"]').getBoundingClientRect().bottom");
    assert.ok(bottom <= hgt - 40, `the headline ends at ${bottom} px in a ${hgt} px window`);
    const plotTop = await driver.executeScript("return document.querySelector('[data-testid=\"difference-plot\"]').getBoundingClientRect().top");
    assert.ok(plotTop < hgt - 60, `the difference plot starts at ${plotTop} px`);
    assert.ok((await sideways()) <= 0, `Compare runs off sideways at ${w}`);
    await driver.executeScript("document.getElementById('question-grid').scrollIntoView()");
    await shot(`38-compare-grid-${w}x${hgt}`);
  }
  await windowSize(1280, 800);
});

test("New run remembers the last choices", async () => {
  await nav("datasets");
  await (await $(`#known-datasets tr[data-root="${dataset}"] button.use-dataset`)).click();
  await driver.wait(async () => (await (await $("#run-dataset")).getAttribute("value")) === dataset, 10000);
  assert.equal(await (await $("#run-target")).getAttribute("value"), "rag");
  await driver.wait(async () => await (await $(`#run-models input[value="${model}"]`)).isSelected(), 10000);
  assert.equal(await (await $("#run-limit")).getAttribute("value"), "40");
  assert.ok(await (await $('#run-judges input[value="correct"]')).isSelected());
  assert.equal(await (await $("#run-name")).getAttribute("value"), "", "a name is not reused");
  await shot("39-new-run-remembered");
});
