// End-to-end test of the real desktop app: the built binary, driven through tauri-driver and
// WebKitWebDriver, as a person would use it: import a dataset, run both default models on the
// sample dataset with a judge, watch it finish, open a run, compare the two, export HTML,
// review generated question/answer pairs in a copy of the sample dataset.
// The database is a temporary file (two answer-file runs made by the real `assay` CLI first);
// models come from the usual models folder. Screenshots of every view go to e2e/screenshots/,
// light theme first, then the main views again with the system in dark mode.
//
// Needs: target/debug/assay and target/debug/assay-desktop (built with tauri/custom-protocol),
// tauri-driver on PATH, WebKitWebDriver, an X display (xvfb-run), both default generator models
// installed. scripts/desktop-test.sh sets all of that up.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdirSync, readFileSync, existsSync, cpSync, copyFileSync, mkdtempSync } from "node:fs";
import { spawn, execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import path from "node:path";
import { By, Key, until } from "selenium-webdriver";
import {
  root, app, dataset, work, db, generators, model, driver,
  assay, launch, quit, shot, $, $$, text, nav, type, runByName, compareNamed, windowSize, openRunNamed, tickExactly, tickedValues,
} from "./session.mjs";

const runName = "rag from the window";
const runNames = generators.map((g) => `${runName} ${g}`);
const ragLimit = 2;
const maxTokens = 32;
// A copy of the sample dataset with three generated pairs waiting for review (e2e/fixtures).
const reviewed = path.join(work, "review-dataset");

before(async () => {
  assert.ok(existsSync(app), `${app} is missing: build it with --features tauri/custom-protocol`);
  assay("run", dataset, "--target", `answers:${dataset}/answers-careful.jsonl`, "--name", "careful");
  assay("run", dataset, "--target", `answers:${dataset}/answers-sloppy.jsonl`, "--name", "sloppy");
  await launch();
});

after(async () => {
  await quit();
});

test("the runs list shows the runs the CLI made", async () => {
  await $("#runs-table tbody tr");
  const names = await Promise.all((await $$("#runs-table td.name")).map((td) => td.getText()));
  assert.deepEqual([...names].sort(), ["careful", "sloppy"]);
  assert.match(await text("#db-path"), new RegExp(db.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  await shot("01-runs");
});

test("a dataset imports from eShop JSON: bad input is shown inline, then the new dataset opens", async () => {
  await nav("datasets");
  const corpus = path.join(work, "manuals");
  mkdirSync(corpus, { recursive: true });
  writeFileSync(path.join(corpus, "158.md"), "# Tent\nThe tent weighs 2 kg.\n");
  const eshop = path.join(work, "evalquestions.json");
  writeFileSync(eshop, '[{"QuestionId": 1, "ProductId": 999, "Question": "?", "Answer": "!"}]');
  const imported = path.join(work, "imported");
  await type("#import-file", eshop);
  await type("#import-corpus", corpus);
  await type("#import-output", imported);
  await (await $("#import-go")).click();
  await driver.wait(async () => /ProductId/.test(await text("#import-status")), 10000);
  assert.ok(!existsSync(imported), "nothing written on bad input");
  await driver.executeScript("document.getElementById('import-status').scrollIntoView()");
  await shot("02-import-error");

  // Text that looks like markup must come through as text.
  writeFileSync(eshop, '[{"QuestionId": 1, "ProductId": 158, "Question": "<b>How heavy</b> is the tent?", "Answer": "2 kg"}]');
  // A place to write that was typed, not chosen in a dialog, outside the app's data folder: refused.
  const elsewhere = path.join(mkdtempSync(path.join(tmpdir(), "assay-e2e-elsewhere-")), "imported");
  await type("#import-output", elsewhere);
  await (await $("#import-go")).click();
  await driver.wait(async () => /choose the place in the dialog/.test(await text("#import-status")), 10000);
  assert.ok(!existsSync(elsewhere), "nothing written outside the places chosen in dialogs");
  await type("#import-output", imported);
  await (await $("#import-go")).click();
  await driver.wait(async () => /Imported 1 question and 1 document/.test(await text("#import-status")), 10000);
  await type("#dataset-path", imported);
  await (await $("#dataset-open")).click();
  await driver.wait(async () => /1 of 1 questions/.test(await text("#question-count")), 10000);
  assert.equal(await text('#dataset-questions tr[data-question] td.question'), "<b>How heavy</b> is the tent?");
  assert.equal((await $$("#dataset-questions td.question b")).length, 0, "no markup parsed");
  await shot("03-imported-dataset");
});

test("the sample dataset browses with filters and shows a manual", async () => {
  await type("#dataset-path", dataset);
  await (await $("#dataset-open")).click();
  await driver.wait(async () => /of 90 questions/.test(await text("#question-count")), 10000);
  const all = await text("#question-count");
  await (await $("#filter-refuse")).sendKeys("yes");
  const refused = await text("#question-count");
  assert.notEqual(all, refused);
  for (const row of await $$("#dataset-questions tbody tr")) {
    if (await row.isDisplayed()) assert.match(await row.findElement(By.css("td:last-child")).getText(), /yes/);
  }
  await (await $('button[data-doc="summit-stove-2"]')).click();
  await driver.wait(async () => /Summit/i.test(await text("#manual-text")), 10000);
  await shot("04-datasets");
});

test("the models screen lists the registry with what is installed", async () => {
  await nav("models");
  const row = await $(`#models-table tr[data-model="${model}"]`);
  assert.match(await row.getText(), /installed/);
  await shot("05-models");
});

test("both default models run as one experiment from the window, with progress, to the end", async () => {
  await nav("new");
  await type("#run-dataset", dataset);
  await (await $("#run-target")).sendKeys("rag");
  await tickExactly("#run-models", generators);
  await tickExactly("#run-judges", ["correct"]);
  await tickExactly("#run-judge-model", [model]);
  // The core's default retrieval mode comes ticked: hybrid where MiniLM is installed (CI pulls
  // it), else bm25; the form never leaves the mode to a default the user cannot see.
  const minilm = JSON.parse(assay("models", "list", "--json")).find((m) => m.id === "minilm-l6-v2");
  const defaultMode = ["verified", "present"].includes(minilm?.state) ? "hybrid" : "bm25";
  assert.deepEqual(await tickedValues("#run-retrieval"), [defaultMode], "the core's default mode is ticked");
  for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
    await windowSize(w, hgt);
    await driver.executeScript("document.getElementById('run-retrieval').scrollIntoView({ block: 'center' })");
    await shot(`06a-new-run-defaults-${w}x${hgt}`);
  }
  await windowSize(1280, 800);
  await type("#run-limit", String(ragLimit));
  await type("#run-max-tokens", String(maxTokens));
  await type("#run-name", runName);
  await shot("06-new-run-form");
  await (await $("#run-start")).click();
  // Progress: the counter moves and running means appear before the end.
  await driver.wait(async () => /1 \/ \d+ items/.test(await text("#progress-counts")) || (await $$("#open-finished")).length > 0, 180000);
  await driver.wait(until.elementLocated(By.css("#open-finished")), 600000);
  assert.match(await text("#progress-outcome"), /Run finished/);
  const n = generators.length;
  const counted = n > 1 ? `run ${n} of ${n} · ${ragLimit} / ${ragLimit} items` : `${ragLimit} / ${ragLimit} items`;
  assert.match(await text("#progress-counts"), new RegExp(`^${counted} · [\\d.]+ items/s`));
  const runs = runNames.map(runByName);
  assert.ok(n === 1 || runs.every((r) => r.experiment && r.experiment === runs[0].experiment), "one experiment");
  const run = runs[n - 1];
  // The running means shown at the end are the core's summary of the finished run.
  for (const [metric, summary] of Object.entries(run.summary)) {
    assert.equal(await text(`#progress-means tr[data-metric="${metric}"] td`), summary.mean.toFixed(3), metric);
  }
  await shot("07-new-run-finished");
  assert.ok(run.config.max_tokens === maxTokens, "max tokens reached the core");
  assert.ok(runs.every((r) => r.config.retrieval === defaultMode), "the ticked mode reached the core");
  await (await $("#open-finished")).click();
  await driver.wait(async () => (await text("#run-title")) === runNames[n - 1], 15000);
});

test("the run opens with cards, charts and a drill-down with the judge's verdict", async () => {
  const run = runByName(runNames[runNames.length - 1]);
  assert.equal(run.items.length, ragLimit);
  assert.match(await text("#run-meta"), new RegExp(`model ${generators[generators.length - 1]}.*judges correct on ${model}`));
  // The retrieval mode and top-k the core recorded are on the page.
  assert.ok((await text("#run-meta")).includes(`retrieval ${run.config.retrieval} · top-k ${run.config.top_k}`));
  assert.equal(await text('#summary-cards [data-metric="correct"] .value'), run.summary.correct.mean.toFixed(3));
  assert.ok((await $$("figure.chart svg")).length >= 2, "mean and distribution charts");
  await shot("08-run");
  const table = await $("#questions-table");
  await table.click();
  await table.sendKeys(Key.HOME);
  const item = run.items[0];
  const verdict = item.verdicts.correct;
  await driver.wait(async () => (await text("#item-detail h2")) === item.id, 5000);
  assert.equal(await text("#item-detail .answer"), item.answer ?? `(no answer: ${item.error ?? "unknown"})`);
  assert.match(await text('#item-detail [data-judge="correct"] .verdict-label'), new RegExp(`^${verdict.label ?? "unscored"} · score`));
  const outcomes = await $$('#item-detail [data-judge="correct"] .dist .bar');
  assert.equal(outcomes.length, Object.keys(verdict.distribution).length);
  await driver.executeScript("document.querySelector('#item-detail').scrollIntoView(); document.querySelector('#item-detail [data-judge]').scrollIntoView()");
  await shot("09-run-drilldown");
});

test("the two models' runs compare with intervals, verdicts and side-by-side answers", async () => {
  await nav("runs");
  await $("#runs-table tbody tr");
  for (const row of await $$("#runs-table tbody tr")) {
    const name = await row.findElement(By.css("td.name")).getText();
    const box = await row.findElement(By.css("input[type=checkbox]"));
    if (runNames.includes(name) !== (await box.isSelected())) await box.click();
  }
  await (await $("#compare-selected")).click();
  // The runs differ in the generator model only: that is the factor, named, with no warning.
  assert.equal(await text('[data-testid="settings-summary"]'), "The runs differ in model only: that is the factor compared.");
  assert.deepEqual(await Promise.all((await $$(".settings-table tr.differs")).map((r) => r.getAttribute("data-setting"))), ["model"]);
  assert.equal((await $$('[data-testid="confound-warning"]')).length, 0);
  const row = await $('.comparison-table tr[data-metric="token_f1"]');
  const cells = await row.findElements(By.css("td"));
  assert.equal(cells.length, 8, "A, B, B − A, verdict, W/T/L, p, Holm p, pairs");
  assert.match(await cells[2].getText(), /^[+-]?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]$/);
  // Two questions per run: too few pairs for any verdict, whatever the scores.
  assert.equal(await cells[3].getText(), "too few pairs for a verdict (under 10)");
  // The comparison leads with the core's sentence on the primary metric (the judge).
  assert.match(await text('[data-testid="headline"]'), /^correct \(primary metric\), 2 questions: A /);
  // Both runs ranked on the primary metric by the core.
  assert.equal((await $$("#leaderboard tbody tr")).length, 2);
  assert.ok((await $$(".disagreements .pair")).length > 0, "most-disagreeing questions shown");
  // A metric no question has in both runs was not tested: dashes, not a p of 1 and 0 / 0 / 0.
  for (const metricRow of await $$(".comparison-table tbody tr")) {
    const tds = await metricRow.findElements(By.css("td"));
    if (!(await tds[7].getText()).startsWith("0")) continue;
    assert.equal(await tds[3].getText(), "no paired items");
    for (const i of [4, 5, 6]) assert.equal(await tds[i].getText(), "—");
  }
  await shot("10-compare");
});

test("the comparison exports as HTML into the reports folder", async () => {
  await nav("export");
  await (await $("#export-format")).sendKeys("HTML");
  await (await $("#export-data-dir")).click();
  await driver.wait(async () => (await text("#export-status")).startsWith("Written: "), 15000);
  const file = (await text("#export-status")).replace("Written: ", "");
  const html = readFileSync(file, "utf8");
  assert.match(html, /<svg/);
  for (const name of runNames) assert.ok(html.includes(name), `${name} in the report`);
  await shot("11-export");
});

test("a matrix of two top-k values runs as one experiment planned by the core", async () => {
  const matrixName = "matrix from the window";
  await nav("new");
  await type("#run-dataset", dataset);
  await (await $("#run-target")).sendKeys("rag");
  // New run remembers the last run's choices: this one sets each list it relies on.
  await tickExactly("#run-models", [model]);
  await tickExactly("#run-judges", []);
  await tickExactly("#run-judge-model", []);
  await tickExactly("#run-retrieval", ["bm25"]);
  await type("#run-top-k", "1,2");
  assert.ok(await (await $("#run-experiment")).isDisplayed(), "the experiment choice is offered for rag");
  await type("#run-limit", "1");
  await type("#run-max-tokens", "8");
  await type("#run-name", matrixName);
  await shot("07a-new-run-matrix-form");
  await (await $("#run-start")).click();
  await driver.wait(until.elementLocated(By.css("#compare-finished")), 600000);
  assert.match(await text("#progress-counts"), /^run 2 of 2 · 1 \/ 1 items/);
  const runs = [`${matrixName} k=1`, `${matrixName} k=2`].map(runByName);
  assert.deepEqual(runs.map((r) => r.config.top_k), [1, 2]);
  assert.ok(runs[0].experiment && runs[0].experiment === runs[1].experiment, "one experiment");
  assert.ok(runs.every((r) => r.config.retrieval === "bm25"), "the ticked retrieval mode reached the core");
  await shot("07b-new-run-matrix-finished");
});

test("runs that differ in more than the compared factor are marked confounded, at both window sizes", async () => {
  // A two-model run (top-k 4, judged) against the matrix's k=1 run (another top-k, no judge):
  // several settings differ, so no difference can be put down to one of them.
  const a = runNames[0];
  const b = "matrix from the window k=1";
  await compareNamed([a, b]);
  const warning = await text('[data-testid="confound-warning"]');
  assert.match(warning, /^These runs differ in .*top-k.*: a difference between them cannot be put down to any one of these/);
  const differing = await Promise.all((await $$(".settings-table tr.differs")).map((r) => r.getAttribute("data-setting")));
  assert.ok(differing.includes("top-k") && differing.includes("judges"), differing.join(", "));
  const [ra, rb] = [runByName(a), runByName(b)];
  assert.equal(await text('.settings-table tr[data-setting="top-k"] td:nth-of-type(1)'), String(ra.config.top_k));
  assert.equal(await text('.settings-table tr[data-setting="top-k"] td:nth-of-type(2)'), String(rb.config.top_k));
  // The headline carries the warning too, after the core's sentence.
  assert.match(await text('[data-testid="headline"]'), /These runs differ in/);
  // The page fits the narrower window without running off to the right.
  for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
    await windowSize(w, hgt);
    await driver.executeScript("window.scrollTo(0, 0)");
    await shot(`10b-compare-confounded-${w}x${hgt}`);
  }
  // The screen area scrolls (the sidebar stays): it must not need to scroll sideways.
  const overflow = await driver.executeScript("const m = document.getElementById('screen'); return m.scrollWidth - m.clientWidth");
  await windowSize(1280, 800);
  assert.ok(overflow <= 0, `Compare is ${overflow} px wider than its area in a 1024 px window`);
});

test("a retrieve-only run reranked by a local model starts from the window and records its reranker", async () => {
  await nav("new");
  await type("#run-dataset", dataset);
  await (await $("#run-target")).sendKeys("retrieve");
  assert.ok(await (await $("#run-rerank")).isDisplayed(), "reranking is offered where chunks are retrieved");
  const option = await $(`#run-rerank option[value="${model}"]`);
  await driver.wait(async () => (await option.getAttribute("value")) === model, 10000);
  await option.click();
  await tickExactly("#run-retrieval", ["bm25"]);
  await type("#run-top-k", "2");
  await type("#run-rerank-depth", "4");
  await type("#run-limit", "2");
  await type("#run-name", "reranked from the window");
  await shot("07c-new-run-rerank-form");
  await (await $("#run-start")).click();
  await driver.wait(until.elementLocated(By.css("#open-finished")), 300000);
  const run = runByName("reranked from the window");
  assert.equal(run.status, "finished");
  assert.deepEqual(run.config.rerank, { model, depth: 4 });
  assert.match(run.config.target, new RegExp(`rerank=${model.replace(/\./g, "\\.")}@4:`));
  assert.ok(run.items.every((item) => item.retrieved.length === 2), "top-k chunks kept after reranking");
});

test("a new run with a bad answers file shows the error inline", async () => {
  await nav("new");
  const bad = path.join(work, "bad.jsonl");
  writeFileSync(bad, '{"id": "q001", "answer": 42}\n');
  await type("#run-dataset", dataset);
  await (await $("#run-target")).sendKeys("answers");
  await type("#run-answers", bad);
  await (await $("#run-start")).click();
  // The error comes after the form's model lists and the core's dataset load: once over 15 s in
  // a CI run on 2 cores (it passed on the rerun), so the wait allows a minute.
  await driver.wait(async () => (await text("#run-error")).length > 0, 60000);
  assert.match(await text("#run-error"), /bad\.jsonl/);
  await shot("12-new-run-error");
});

test("generated pairs are reviewed in the dataset screen: edit and accept one, reject one, leave one", async () => {
  // The index cache stays behind: the copy builds its own if it ever needs one.
  cpSync(dataset, reviewed, { recursive: true, filter: (src) => path.basename(src) !== ".assay" });
  copyFileSync(path.join(root, "e2e/fixtures/questions.generated.jsonl"), path.join(reviewed, "questions.generated.jsonl"));
  const questionsFile = path.join(reviewed, "questions.jsonl");
  const pendingFile = path.join(reviewed, "questions.generated.jsonl");
  const questionsBefore = readFileSync(questionsFile, "utf8");
  const pendingBefore = readFileSync(pendingFile, "utf8");
  const [first, second, third] = pendingBefore.trim().split("\n").map((line) => JSON.parse(line));
  const card = (pair) => `#review-pairs article[data-pair="${pair.id}"]`;

  await nav("datasets");
  await type("#dataset-path", reviewed);
  await (await $("#dataset-open")).click();
  // The screen first re-opens the last dataset (the sample): wait for the copy's view.
  await driver.wait(async () => (await text("#review-jump").catch(() => "")) === "Review 3 generated pairs", 10000);
  await (await $("#review-jump")).click();
  assert.equal(await text(`${card(first)} .pair-scope`), "scoped to glacier-45");
  assert.equal(await text(`${card(second)} .pair-scope`), "any document");
  assert.equal(await text(`${card(first)} .pair-quote`), first.context);
  // Model text that looks like markup comes through as text.
  assert.equal(await text(`${card(third)} .pair-question`), third.question);
  assert.equal((await $$(`${card(third)} .pair-question b`)).length, 0, "no markup parsed");

  // An edit that empties the answer: the core refuses it inline and nothing changes on disk.
  await (await $(`${card(first)} button[data-action="edit"]`)).click();
  await (await $(`${card(first)} textarea.edit-answer`)).clear();
  await (await $(`${card(first)} button[data-action="save"]`)).click();
  await (await $("#review-apply")).click();
  await driver.wait(async () => /answer.*empty/.test(await text("#review-error")), 10000);
  assert.equal(readFileSync(questionsFile, "utf8"), questionsBefore);
  assert.equal(readFileSync(pendingFile, "utf8"), pendingBefore);

  // From the keyboard: Edit opens the editor on the question; Tab reaches the answer and
  // "Accept edited", Enter presses it; Space on Reject rejects the second pair.
  const editedQuestion = "What does the Glacier 45 cooler weigh empty?";
  const editedAnswer = "11.8 kg when empty.";
  await (await $(`${card(first)} button[data-action="edit"]`)).sendKeys(Key.ENTER);
  let focused = await driver.switchTo().activeElement();
  assert.match(await focused.getAttribute("class"), /edit-question/);
  // Select the text so typing replaces it (WebKitWebDriver drops key chords such as Ctrl+A).
  await driver.executeScript("arguments[0].select()", focused);
  await focused.sendKeys(editedQuestion, Key.TAB);
  focused = await driver.switchTo().activeElement();
  assert.match(await focused.getAttribute("class"), /edit-answer/);
  await focused.sendKeys(editedAnswer, Key.TAB);
  focused = await driver.switchTo().activeElement();
  assert.equal(await focused.getText(), "Accept edited");
  await focused.sendKeys(Key.ENTER);
  await (await $(`${card(second)} button[data-action="reject"]`)).sendKeys(Key.SPACE);
  assert.equal(await text(`${card(first)} .badge`), "accept (edited)");
  assert.equal(await text(`${card(first)} .pair-question`), editedQuestion);
  assert.equal(await text(`${card(second)} .badge`), "reject");
  assert.equal(await text(`${card(third)} .badge`), "undecided");
  assert.equal(await text("#review-tally"), "1 to accept, 1 to reject, 1 undecided");
  assert.equal(await text("#review-error"), "", "the error about the earlier decisions is gone");
  await driver.executeScript("document.getElementById('review').scrollIntoView()");
  await shot("16-review");

  await (await $("#review-apply")).click();
  // The screen re-reads the dataset and draws it anew (elements found meanwhile go stale):
  // wait for the new view's last part, the remaining pair.
  const remaining = async () => {
    try {
      if (!/^Accepted 1 pair/.test(await text("#review-status"))) return null;
      return await Promise.all((await $$("#review-pairs article")).map((a) => a.getAttribute("data-pair")));
    } catch { return null; }
  };
  await driver.wait(async () => (await remaining())?.length === 1, 15000);
  assert.equal(await text("#review-status"), "Accepted 1 pair into the dataset, rejected 1; 1 still pending.");
  assert.equal(await text("#review-error"), "");
  // The questions list was re-read: the accepted pair is one of the dataset's questions now.
  assert.match(await text("#question-count"), /of 91 questions/);
  assert.equal(await text(`#dataset-questions tr[data-question="${first.id}"] td.question`), editedQuestion);
  assert.deepEqual(await remaining(), [third.id]);
  await shot("17-review-applied");

  // On disk: the edited pair was appended with the tag "reviewed"; only the untouched pair waits.
  const lines = readFileSync(questionsFile, "utf8").trim().split("\n");
  assert.equal(lines.length, questionsBefore.trim().split("\n").length + 1);
  assert.ok(readFileSync(questionsFile, "utf8").startsWith(questionsBefore), "existing questions untouched");
  assert.deepEqual(JSON.parse(lines.at(-1)), {
    ...first, question: editedQuestion, answer: editedAnswer, tags: ["generated", "scoped", "reviewed"],
  });
  const pendingAfter = readFileSync(pendingFile, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(pendingAfter, [third]);
});

test("in dark mode the main views follow the system theme", async () => {
  await quit();
  await launch({ GTK_THEME: "Adwaita:dark" });
  const background = await driver.executeScript("return getComputedStyle(document.body).backgroundColor");
  assert.equal(background, "rgb(20, 23, 29)", "the dark palette is in use");
  await $("#runs-table tbody tr");
  await shot("13-dark-runs");
  await openRunNamed(runNames[0]);
  const table = await $("#questions-table");
  await table.click();
  await table.sendKeys(Key.HOME);
  await $('#item-detail [data-judge="correct"]');
  await shot("14-dark-run");
  await nav("new");
  await $("#run-judges input");
  await shot("15-dark-new-run");
  await nav("datasets");
  await type("#dataset-path", reviewed);
  await (await $("#dataset-open")).click();
  await (await $(`#review-pairs article button[data-action="edit"]`)).click();
  await driver.executeScript("document.getElementById('review').scrollIntoView()");
  await shot("18-dark-review");
});

test("the models screen finds the models Ollama and the Hugging Face cache hold and registers them", async () => {
  // Folders laid out as those tools lay theirs out, holding small real GGUF files; a models
  // folder of its own, so the user's registry is not touched.
  const ollama = path.join(work, "ollama-models");
  const gguf = path.join(root, "tests/fixtures/llm/arch/qwen3.gguf");
  const digest = createHash("sha256").update(readFileSync(gguf)).digest("hex");
  mkdirSync(path.join(ollama, "blobs"), { recursive: true });
  copyFileSync(gguf, path.join(ollama, "blobs", `sha256-${digest}`));
  mkdirSync(path.join(ollama, "manifests/models.example/library/qwen3"), { recursive: true });
  writeFileSync(path.join(ollama, "manifests/models.example/library/qwen3/4b"), JSON.stringify({
    schemaVersion: 2, layers: [{ mediaType: "application/vnd.ollama.image.model", digest: `sha256:${digest}`, size: 1 }],
  }));
  const hf = path.join(work, "hf-hub/models--org--Phi-3-GGUF/snapshots/abc");
  mkdirSync(hf, { recursive: true });
  copyFileSync(path.join(root, "tests/fixtures/llm/arch/phi3.gguf"), path.join(hf, "phi-3.gguf"));
  writeFileSync(path.join(hf, "mmproj-phi-3.gguf"), "not a language model");
  await quit();
  await launch({ ASSAY_MODELS: path.join(work, "scan-models"), OLLAMA_MODELS: ollama, HF_HUB_CACHE: path.join(work, "hf-hub"), ASSISTANT_TOKEN: "e2e-token" });
  await nav("models");
  await (await $("#models-scan")).click();
  await $("#scan-table tbody tr");
  const rows = await Promise.all((await $$("#scan-table tbody tr")).map((r) => r.getText()));
  assert.equal(rows.length, 3, rows.join("\n"));
  assert.ok(rows.some((r) => /Ollama\s*qwen3:4b\s*added as qwen3-4b/.test(r)), rows.join("\n"));
  assert.ok(rows.some((r) => /org\/Phi-3-GGUF\/phi-3\.gguf\s*added as/.test(r)), rows.join("\n"));
  assert.ok(rows.some((r) => /mmproj-phi-3\.gguf\s*skipped: a vision projector/.test(r)), rows.join("\n"));
  assert.match(await text("#models-status"), /3 found, 2 added/);
  const added = await $('#models-table tr[data-model="qwen3-4b"]');
  assert.match(await added.getText(), /qwen3/);
  await shot("19-models-scan");
});

test("a run against your own service over HTTP starts from the window and finishes", async () => {
  // The example service (streamed answers, a bearer token) on a free port; the app got the
  // token through its environment, as a user's shell would give it.
  const service = spawn("python3", [path.join(root, "examples/http-target/app.py"), path.join(dataset, "corpus"), "--port", "0"],
    { env: { ...process.env, ASSISTANT_TOKEN: "e2e-token" }, stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise((resolve, reject) => {
      service.stdout.once("data", (d) => { const m = /listening on (\d+)/.exec(String(d)); m ? resolve(m[1]) : reject(new Error(String(d))); });
      service.once("exit", (code) => reject(new Error(`the example service exited: ${code}`)));
    });
    const description = path.join(work, "assistant.toml");
    writeFileSync(description, readFileSync(path.join(root, "examples/http-target/assistant.toml"), "utf8").replace("127.0.0.1:8765", `127.0.0.1:${port}`));
    await nav("new");
    await type("#run-dataset", dataset);
    await (await $("#run-target")).sendKeys("http");
    assert.ok(await (await $("#run-http")).isDisplayed(), "the service description field is offered");
    assert.ok(!(await (await $("#run-top-k")).isDisplayed()), "retrieval settings are not: the service retrieves");
    await type("#run-http", description);
    await type("#run-limit", "3");
    await type("#run-name", "my service");
    await (await $("#run-start")).click();
    await driver.wait(until.elementLocated(By.css("#open-finished")), 120000);
    const run = runByName("my service");
    assert.equal(run.status, "finished");
    assert.equal(run.config.target, "http:assistant.toml");
    await shot("20-http-run-finished");
  } finally {
    service.kill();
  }
});

test("an answer that forges a grader's turn is flagged, and the statement judge's statements show in the drill-down", async () => {
  // The sample's sloppy answers with a forged chat turn appended, judged statement by statement
  // by the smallest model: the detector flags them, the judge lists what it checked.
  const name = "payload statements";
  assay("run", dataset, "--target", `answers:${dataset}/answers-sloppy-payload.jsonl`, "--judges", "supported",
    "--judge-model", model, "--limit", "2", "--name", name);
  const run = runByName(name);
  const flagged = run.items.filter((i) => i.flags?.includes("possible injection")).length;
  assert.ok(flagged > 0, "the forged turns are flagged by the core");
  await openRunNamed(name);
  assert.equal(await text("#flagged-card .value"), `${flagged} / ${run.items.length}`);
  assert.equal((await $$("#questions-table tbody tr .flag")).length, flagged, "a badge on each flagged row");
  const table = await $("#questions-table");
  await table.click();
  await table.sendKeys(Key.HOME);
  const item = run.items[0];
  await driver.wait(async () => (await text("#item-detail h2")) === item.id, 5000);
  if (item.flags?.length) {
    assert.match(await text("#flag-notice .flag"), /possible injection/);
    // The notice says what the flag means, in the core's words (another flag means otherwise).
    assert.ok((await text("#flag-notice")).includes(run.flag_meanings["possible injection"]), await text("#flag-notice"));
    for (const [w, hgt] of [[1400, 900], [1024, 700]]) {
      await windowSize(w, hgt);
      await driver.executeScript("document.querySelector('#flag-notice').scrollIntoView()");
      await shot(`21a-flag-notice-${w}`);
    }
    await windowSize(1280, 800);
  }
  // Every statement the judge checked, once, answer side first; unsupported ones marked.
  const checked = item.verdicts.supported.statements ?? [];
  assert.ok(checked.length > 0, `the judge checked ${item.id}'s statements: ${JSON.stringify(item.verdicts.supported)}`);
  const unique = (side) => [...new Set(checked.filter((s) => s.side === side).map((s) => s.text))];
  const rows = await $$('#item-detail .statements-block[data-judge="supported"] li.statement');
  assert.equal(rows.length, unique("answer").length + unique("reference").length);
  const texts = await Promise.all(rows.map((r) => r.findElement(By.css(".text")).getAttribute("textContent")));
  assert.deepEqual(texts, [...unique("answer"), ...unique("reference")]);
  const marked = await $$('#item-detail .statements-block[data-judge="supported"] li.statement.unsupported');
  const unsupported = new Set(checked.filter((s) => s.supported < 0.5 || s.number_conflict).map((s) => `${s.side}\u0000${s.text}`));
  assert.equal(marked.length, unsupported.size);
  await driver.executeScript("document.querySelector('#item-detail .statements-block').scrollIntoView()");
  await shot("21-flagged-statements");
});

test("a run whose stored row is damaged is listed apart with its field, and the others still open", async () => {
  // Last in this file: it leaves a damaged run in the database.
  assay("run", dataset, "--target", `answers:${dataset}/answers-careful.jsonl`, "--limit", "2", "--name", "to damage");
  const id = runByName("to damage").id;
  const listedBefore = JSON.parse(assay("runs", "--json")).length;
  // A settings column that no longer parses, written behind Assay's back.
  execFileSync("python3", ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
    + "c.execute(\"UPDATE runs SET config_json = '{' WHERE id = ?\", (sys.argv[2],)); c.commit()", db, id]);
  await nav("runs");
  const item = await $(`#damaged-runs li[data-run="${id}"]`);
  assert.match(await item.getText(), /table runs, row .*field config_json/);
  const names = await Promise.all((await $$("#runs-table td.name")).map((td) => td.getText()));
  assert.equal(names.length, listedBefore - 1, "every other run still listed");
  assert.ok(!names.includes("to damage"));
  await (await $('#runs-table tr[data-run] td.name')).click();
  await $("#summary-cards");
  await nav("runs");
  await $("#damaged-runs");
  await shot("22-damaged-run");
});
