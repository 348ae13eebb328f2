// End-to-end test of the pairwise comparison in the real desktop app (issue 34): two runs of the
// sample's answer sets (careful and sloppy, 6 questions each) made by the CLI; on Compare, the
// pairwise section says nothing is judged yet; "Judge pairwise" runs the default pairwise judge
// (`correct`, each answer alone, on the smallest model) with progress, a Cancel stops it after the current question (what was judged stays
// stored), a second press finishes the rest reusing what was stored; the figures shown are the
// ones `assay compare A B --pairwise --json` reads back from the same database (no judging
// then), and an answer's text never turns into markup. Screenshots at 1400×900 and 1024×700.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  app, dataset, work, model, driver,
  assay, launch, quit, shot, $, $$, text, windowSize, compareNamed,
} from "./session.mjs";

const ids = ["q001", "q002", "q003", "q004", "q005", "q006"];
// The sloppy answers with one answer that carries markup: shown as text if shown at all.
const sloppy = path.join(work, "answers-sloppy-6.jsonl");
const careful = path.join(work, "answers-careful-6.jsonl");

function subset(source, target, rewrite = (a) => a) {
  const lines = readFileSync(path.join(dataset, source), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    .filter((a) => ids.includes(a.id)).map(rewrite);
  writeFileSync(target, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
}

before(async () => {
  assert.ok(existsSync(app), `${app} is missing: build it with --features tauri/custom-protocol`);
  subset("answers-careful.jsonl", careful);
  subset("answers-sloppy.jsonl", sloppy, (a) => (a.id === "q002" ? { ...a, answer: `${a.answer} <img src=x onerror="document.title='owned'">` } : a));
  assay("run", dataset, "--target", `answers:${careful}`, "--limit", "6", "--name", "careful-6");
  assay("run", dataset, "--target", `answers:${sloppy}`, "--limit", "6", "--name", "sloppy-6");
  await launch();
});

after(async () => {
  await quit();
});

const figure = async (key) => text(`[data-testid="pairwise-results"] tr[data-figure="${key}"] td`);

test("pairwise section: judge, cancel, finish, and the CLI agrees", async () => {
  await windowSize(1400, 900);
  await compareNamed(["careful-6", "sloppy-6"]);
  await driver.wait(async () => (await text("#pairwise-status")).includes("Not judged pairwise yet"), 15000);
  await (await $(`#pairwise-model option[value="${model}"]`)).click();

  // Start, wait for the first question, cancel: the core stops after the current question.
  await (await $("#pairwise-judge")).click();
  await driver.wait(async () => /^Judged [1-5] of 6/.test(await text("#pairwise-status")), 240000);
  assert.equal(await (await $("#pairwise-progress")).isDisplayed(), true, "progress is shown while judging");
  await (await $("#pairwise-cancel")).click();
  await driver.wait(async () => (await text("#pairwise-status")).includes("stopped after"), 240000);
  assert.equal(await (await $("#pairwise-judge")).isEnabled(), true, "the button is back after a cancel");

  // Again: what was judged is reused, the rest judged now.
  await (await $("#pairwise-judge")).click();
  await driver.wait(async () => (await text("#pairwise-status")).startsWith("Done:"), 600000);
  const done = await text("#pairwise-status");
  const [, judgedNow, reused] = done.match(/Done: (\d+) judged now, (\d+) reused/) ?? [];
  assert.ok(Number(reused) >= 1 && Number(judgedNow) + Number(reused) === 6, done);

  // The CLI reads the stored judgments (no judge runs: every one is reused) and the app shows
  // the same figures.
  const cli = JSON.parse(assay("compare", "careful-6", "sloppy-6", "--pairwise", "--judge-model", model, "--json"));
  const p = cli.pairwise;
  assert.equal(p.reused, 6);
  const s = p.statistics;
  assert.equal(await figure("wtl"), `${s.wins} / ${s.ties} / ${s.losses}`);
  assert.equal(await figure("win-rate"), `${s.win_rate.toFixed(3)} [${s.win_rate_ci95[0].toFixed(3)}, ${s.win_rate_ci95[1].toFixed(3)}]`);
  assert.equal(await figure("verdict"), p.verdict_text);
  // The default pairwise judge (`correct`) reads each answer alone: no order to be consistent in.
  assert.equal(p.judge, "correct");
  assert.equal(p.each_answer_alone, true);
  assert.equal(await figure("order-consistency"), "each answer judged alone: no order");
  assert.equal(await text('[data-testid="pairwise-headline"]'), p.headline);
  await (await $(".pairwise-per-question summary")).click();
  for (const j of p.judgments) {
    const row = await $(`.pairwise-questions tr[data-question="${j.id}"]`);
    const cells = await row.findElements({ css: "td.num" });
    assert.equal(await cells[0].getText(), j.p_b.toFixed(3), j.id);
    assert.equal(await cells[1].getText(), `${j.scores[0].toFixed(3)} / ${j.scores[1].toFixed(3)}`, j.id);
  }
  // The answer with markup never became an element, and never ran.
  assert.equal((await $$('img[src="x"]')).length, 0);
  assert.notEqual(await driver.getTitle(), "owned");

  await (await $("#pairwise")).click();
  await driver.executeScript("document.getElementById('pairwise').scrollIntoView()");
  await shot("pairwise-1400x900");
  await windowSize(1024, 700);
  await driver.executeScript("document.getElementById('pairwise').scrollIntoView()");
  const overflow = await driver.executeScript("const s = document.getElementById('pairwise'); return s.scrollWidth - s.clientWidth");
  assert.ok(overflow <= 1, `the pairwise section scrolls sideways at 1024 px (${overflow} px)`);
  await shot("pairwise-1024x700");

  // Opened again, the stored judgments are shown without judging.
  await compareNamed(["careful-6", "sloppy-6"]);
  await driver.wait(async () => (await text("#pairwise-status")).startsWith("Stored judgments (6"), 15000);
  assert.equal(await text('[data-testid="pairwise-headline"]'), p.headline);
});
