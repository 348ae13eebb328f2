// New run: dataset folder, target (answers file, rag with one or more local or served models,
// your own service over HTTP, or retrieve only), retrieval settings (reranking included), judges
// and their models, metrics, limit, seed and name.
// Several models, judge models, top-k values or retrieval modes make a matrix experiment, and
// the knowledge-removal experiment can be picked; the core plans the runs (as `assay run`);
// then live progress from the shell's `run-progress` events (items, rate, ETA, the current
// question, running means from the core), with cancel. Also resumes an interrupted run.
import { open } from "@tauri-apps/plugin-dialog";
import { api, errorText } from "../api";
import { h, append } from "../dom";
import { isRunning, currentJob, startJob } from "../jobstatus";
import { showJobProgress } from "./jobprogress";
import { explainError } from "../errors";
import { formStart, recall, remember, RunForm, startRequest, textModels } from "./runform";

function pathField(id: string, label: string, pick: () => Promise<string | null>, value = ""): [HTMLElement, HTMLInputElement] {
  const input = h("input", { id, type: "text", value, placeholder: "choose with Browse…", spellcheck: "false" });
  const browse = h("button", { type: "button", onclick: async () => { const p = await pick(); if (p) input.value = p; } }, "Browse…");
  return [h("label", { class: "field" }, h("span", {}, label), h("span", { class: "row" }, input, browse)), input];
}

const field = (label: string, control: HTMLElement) => h("label", { class: "field" }, h("span", {}, label), control);
const checked = (box: HTMLElement) => Array.from(box.querySelectorAll<HTMLInputElement>("input:checked")).map((b) => b.value);

/** New run; `chosen` is a dataset picked on the Datasets screen ("New run" beside it). */
export async function renderNewRun(area: HTMLElement, resume?: { run: string; dataset: string }, chosen?: string): Promise<void> {
  append(area, h("h1", {}, resume ? `Resume run ${resume.run}` : "New run"));
  // Where the form starts: the last run's choices, else the sample dataset on the rag target.
  // Read before the fields exist, so nothing is filled in under a user already typing.
  const database = await api.dbPath().catch(() => "");
  const remembered = resume ? null : recall(database, localStorage);
  const first = resume ? null : formStart(remembered, await api.listDatasets().catch(() => []));
  const [datasetField, dataset] = pathField("run-dataset", "Dataset folder",
    async () => (await open({ directory: true, title: "Dataset folder (holds dataset.toml)" })) as string | null,
    resume?.dataset ?? chosen ?? first?.dataset ?? "");
  const [answersField, answers] = pathField("run-answers", "Answers file (JSONL)",
    async () => (await open({ title: "Answers file", filters: [{ name: "JSON Lines", extensions: ["jsonl"] }] })) as string | null);
  const [httpField, httpFile] = pathField("run-http", "Service description (.toml)",
    async () => (await open({ title: "Service description", filters: [{ name: "TOML", extensions: ["toml"] }] })) as string | null);
  const target = h("select", { id: "run-target" },
    h("option", { value: "answers" }, "answers file (replay)"),
    h("option", { value: "rag" }, "rag: retrieve + local or served model"),
    h("option", { value: "http" }, "http: your own service (a .toml describing its API)"),
    h("option", { value: "retrieve" }, "retrieve only (retrieval metrics)"));
  // The core's default mode comes ticked when the models list arrives (hybrid when MiniLM is
  // installed, else bm25) and is what runs unless the user changes it: the form never leaves the
  // mode to a default the user cannot see. Unticking every mode is refused with the reason.
  const retrievalNote = h("span", { class: "muted", id: "run-retrieval-note" }, "bm25: keywords · dense: MiniLM embeddings · hybrid: both; tick several for a matrix");
  const retrievalBoxes = h("div", { class: "picker row", id: "run-retrieval" }, ...["bm25", "dense", "hybrid"].map((m) =>
    h("label", {}, h("input", { type: "checkbox", value: m }), ` ${m} `)),
    retrievalNote);
  const topK = h("input", { id: "run-top-k", type: "text", inputmode: "numeric", placeholder: "4 (several, e.g. 3,5, make a matrix)" });
  // Reranking is off by default: with small models it helps some documents and hurts others
  // (README, Reranking), so the user opts in per run and compares.
  const rerank = h("select", { id: "run-rerank" }, h("option", { value: "" }, "none: the first stage's order"));
  const rerankDepth = h("input", { id: "run-rerank-depth", type: "number", min: "1" });
  const experiment = h("select", { id: "run-experiment" },
    h("option", { value: "" }, "none: one run per combination"),
    h("option", { value: "remove-context" }, "remove-context: each combination with and without the golden context (abstention)"));
  const modelBoxes = h("div", { class: "picker", id: "run-models" });
  const judgeBoxes = h("div", { class: "picker", id: "run-judges" });
  const judgeModelBoxes = h("div", { class: "picker", id: "run-judge-model" });
  const judgeModelNote = h("span", { class: "muted", id: "run-judge-model-note" });
  // Models and judges come from the core; both lists fill in when they arrive.
  const lists = Promise.all([api.listModels(), api.listJudges()]).then(([models, judges]) => {
    retrievalBoxes.querySelectorAll<HTMLInputElement>("input").forEach((b) => { b.checked = b.value === models.default_retrieval; });
    if (models.default_retrieval === "bm25") {
      retrievalNote.textContent += " · dense and hybrid need minilm-l6-v2 (see Models)";
    }
    const usable = textModels(models.models);
    for (const m of usable) {
      modelBoxes.append(h("label", {}, h("input", { type: "checkbox", value: m.id, disabled: !m.installed }),
        ` ${m.id} `, m.installed ? null : h("span", { class: "muted" }, "(not installed: see Models)")));
      judgeModelBoxes.append(h("label", {}, h("input", { type: "checkbox", value: m.id, disabled: !m.installed }),
        ` ${m.id} `, m.installed ? null : h("span", { class: "muted" }, "(not installed)")));
      if (m.installed) rerank.append(h("option", { value: m.id }, m.id));
    }
    if (usable.length === 0) modelBoxes.append(h("span", { class: "muted" }, "no models known"));
    judgeModelNote.textContent = `none ticked: ${judges.default_model}; several make a matrix`;
    for (const j of judges.judges) {
      judgeBoxes.append(h("label", { title: j.description },
        h("input", { type: "checkbox", value: j.name }), ` ${j.name} `,
        h("span", { class: "muted" }, `${j.outcomes.join(" < ")} · ${j.description}${j.source === "built-in" ? "" : ` · ${j.source}`}`)));
    }
  }).catch((e) => modelBoxes.append(h("span", { class: "error" }, `Models and judges could not be listed: ${errorText(e)}`)));
  const maxTokens = h("input", { id: "run-max-tokens", type: "number", min: "1", placeholder: "the core's default" });
  const ragOnly = [field("Generator models", modelBoxes), field("Max answer tokens", maxTokens)];
  const retrievalOnly = [field("Retrieval", retrievalBoxes), field("Top-k", topK),
    field("Rerank with", rerank), field("Rerank depth", h("span", { class: "row" }, rerankDepth,
      h("span", { class: "muted" }, "first-stage chunks rescored; blank: the core's default")))];
  const answerJudging = [field("Judges", judgeBoxes), field("Judge models", h("div", {}, judgeModelBoxes, judgeModelNote))];
  const experimentField = field("Experiment", experiment);
  const metrics = h("input", { id: "run-metrics", type: "text", placeholder: "all that apply (or e.g. token_f1,rouge_l)" });
  const limit = h("input", { id: "run-limit", type: "number", min: "1", placeholder: "all" });
  const seed = h("input", { id: "run-seed", type: "number", min: "0", value: "0" });
  const name = h("input", { id: "run-name", type: "text", placeholder: "dataset and target" });
  const error = h("p", { class: "error", id: "run-error", "aria-live": "assertive" });
  const progress = h("section", { class: "progress", id: "run-progress", hidden: true });
  const start = h("button", { id: "run-start", class: "primary" }, resume ? "Resume" : "Start");

  const form = h("div", { class: "form" }, datasetField);
  if (!resume) {
    form.append(field("Target", target), answersField, httpField, ...ragOnly, ...retrievalOnly, ...answerJudging, experimentField,
      field("Metrics", metrics), field("Limit", limit), field("Seed", seed), field("Name", name));
  }
  form.append(h("div", { class: "actions" }, start));
  // Progress goes above the form, where it is seen without scrolling.
  append(area, progress, form, error);
  const showFields = () => {
    answersField.hidden = target.value !== "answers";
    httpField.hidden = target.value !== "http";
    for (const el of ragOnly) el.hidden = target.value !== "rag";
    for (const el of retrievalOnly) el.hidden = target.value === "answers" || target.value === "http";
    for (const el of answerJudging) el.hidden = target.value === "retrieve";
    experimentField.hidden = target.value !== "rag";
    if (target.value !== "rag") experiment.value = "";
  };
  target.addEventListener("change", showFields);
  showFields();

  const values = (): RunForm => ({
    dataset: dataset.value, target: target.value, answers: target.value === "http" ? httpFile.value : answers.value, models: checked(modelBoxes),
    retrievals: checked(retrievalBoxes), topKs: topK.value, metrics: metrics.value, limit: limit.value, seed: seed.value, maxTokens: maxTokens.value,
    name: name.value, judges: checked(judgeBoxes), judgeModels: checked(judgeModelBoxes),
    experiment: experiment.value, rerank: rerank.value, rerankDepth: rerankDepth.value,
  });
  // The fields whose paths an error may name, so the message says which field to fix.
  const pathFields = () => [
    { label: "Dataset folder", value: dataset.value },
    { label: "Answers file (JSONL)", value: answers.value },
    { label: "Service description (.toml)", value: httpFile.value },
  ];
  if (first) {
    target.value = first.target;
    showFields();
  }
  if (remembered) {
    answers.value = remembered.target === "answers" ? remembered.answers : "";
    httpFile.value = remembered.target === "http" ? remembered.answers : "";
    topK.value = remembered.topKs;
    metrics.value = remembered.metrics;
    limit.value = remembered.limit;
    seed.value = remembered.seed;
    maxTokens.value = remembered.maxTokens;
    experiment.value = remembered.experiment;
    rerankDepth.value = remembered.rerankDepth;
    showFields();
    void lists.then(() => {
      const tick = (box: HTMLElement, values: string[]) => box.querySelectorAll<HTMLInputElement>("input[type=checkbox]")
        .forEach((b) => { b.checked = values.includes(b.value) && !b.disabled; });
      tick(modelBoxes, remembered.models);
      tick(retrievalBoxes, remembered.retrievals);
      tick(judgeBoxes, remembered.judges);
      tick(judgeModelBoxes, remembered.judgeModels);
      rerank.value = remembered.rerank;
    });
  }

  start.addEventListener("click", async () => {
    error.textContent = "";
    await lists;
    const form = values();
    const built = startRequest(form, resume?.run ?? null);
    if ("error" in built) { error.textContent = built.error; return; }
    if (!resume) remember(form, database, localStorage);
    start.disabled = true;
    // The frame's store follows the run from here; this panel draws it while the screen is open.
    const started = startJob(built.request);
    showJobProgress(progress, () => (start.disabled = false));
    progress.scrollIntoView({ block: "start" });
    try {
      await started;
    } catch (e) {
      error.textContent = explainError(errorText(e), pathFields());
      progress.hidden = true;
      start.disabled = false;
    }
  });
  // A run under way (started here before leaving, or from a run's page) shows its progress.
  const job = currentJob();
  if (job && job.runIds.some(isRunning)) {
    start.disabled = true;
    showJobProgress(progress, () => (start.disabled = false));
  }
}
