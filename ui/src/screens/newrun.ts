// New run: dataset folder, target (answers file, rag with one or more local or served models,
// your own service over HTTP, or retrieve only), retrieval settings (reranking included), judges
// and their models, metrics, limit, seed and name.
// Several models, judge models, top-k values or retrieval modes make a matrix experiment, and
// the knowledge-removal experiment can be picked; the core plans the runs (as `assay run`);
// then live progress from the shell's `run-progress` events (items, rate, ETA, the current
// question, running means from the core), with cancel. Also resumes an interrupted run.
import { open } from "@tauri-apps/plugin-dialog";
import { listen, UnlistenFn } from "@tauri-apps/api/event";
import { api, errorText, ProgressEvent } from "../api";
import { h, append } from "../dom";
import { duration, fixed } from "../format";
import { go, selection } from "../router";
import { startRequest, textModels } from "./runform";

let unlisten: UnlistenFn | null = null;

function pathField(id: string, label: string, pick: () => Promise<string | null>, value = ""): [HTMLElement, HTMLInputElement] {
  const input = h("input", { id, type: "text", value, placeholder: "choose with Browse…", spellcheck: "false" });
  const browse = h("button", { type: "button", onclick: async () => { const p = await pick(); if (p) input.value = p; } }, "Browse…");
  return [h("label", { class: "field" }, h("span", {}, label), h("span", { class: "row" }, input, browse)), input];
}

const field = (label: string, control: HTMLElement) => h("label", { class: "field" }, h("span", {}, label), control);
const checked = (box: HTMLElement) => Array.from(box.querySelectorAll<HTMLInputElement>("input:checked")).map((b) => b.value);

export async function renderNewRun(area: HTMLElement, resume?: { run: string; dataset: string }): Promise<void> {
  append(area, h("h1", {}, resume ? `Resume run ${resume.run}` : "New run"));
  const [datasetField, dataset] = pathField("run-dataset", "Dataset folder",
    async () => (await open({ directory: true, title: "Dataset folder (holds dataset.toml)" })) as string | null, resume?.dataset ?? "");
  const [answersField, answers] = pathField("run-answers", "Answers file (JSONL)",
    async () => (await open({ title: "Answers file", filters: [{ name: "JSON Lines", extensions: ["jsonl"] }] })) as string | null);
  const [httpField, httpFile] = pathField("run-http", "Service description (.toml)",
    async () => (await open({ title: "Service description", filters: [{ name: "TOML", extensions: ["toml"] }] })) as string | null);
  const target = h("select", { id: "run-target" },
    h("option", { value: "answers" }, "answers file (replay)"),
    h("option", { value: "rag" }, "rag: retrieve + local or served model"),
    h("option", { value: "http" }, "http: your own service (a .toml describing its API)"),
    h("option", { value: "retrieve" }, "retrieve only (retrieval metrics)"));
  // bm25 comes ticked and is what runs unless the user changes it: the form never leaves the
  // mode to a default the user cannot see. Unticking every mode is refused with the reason.
  const retrievalBoxes = h("div", { class: "picker row", id: "run-retrieval" }, ...["bm25", "dense", "hybrid"].map((m) =>
    h("label", {}, h("input", { type: "checkbox", value: m, checked: m === "bm25" }), ` ${m} `)),
    h("span", { class: "muted", id: "run-retrieval-note" }, "bm25: keywords · dense: MiniLM embeddings · hybrid: both; tick several for a matrix"));
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
  }).catch((e) => modelBoxes.append(h("span", { class: "error" }, errorText(e))));
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

  start.addEventListener("click", async () => {
    error.textContent = "";
    await lists;
    const built = startRequest({
      dataset: dataset.value, target: target.value, answers: target.value === "http" ? httpFile.value : answers.value, models: checked(modelBoxes),
      retrievals: checked(retrievalBoxes), topKs: topK.value, metrics: metrics.value, limit: limit.value, seed: seed.value, maxTokens: maxTokens.value,
      name: name.value, judges: checked(judgeBoxes), judgeModels: checked(judgeModelBoxes),
      experiment: experiment.value, rerank: rerank.value, rerankDepth: rerankDepth.value,
    }, resume?.run ?? null);
    if ("error" in built) { error.textContent = built.error; return; }
    start.disabled = true;
    // Listen before starting (no event is missed); the core says how many runs it planned.
    const runs = await follow(progress, () => (start.disabled = false));
    try {
      runs.planned((await api.startRun(built.request)).runs);
    } catch (e) {
      error.textContent = errorText(e);
      progress.hidden = true;
      start.disabled = false;
    }
  });
}

/** Show the run's progress as events arrive; on finish, offer to open it (or compare them).
 *  The caller passes the number of runs the core planned once start_run answers. */
async function follow(panel: HTMLElement, ended: () => void): Promise<{ planned: (n: number) => void }> {
  let runs = 1;
  let finishedRuns = 0;
  unlisten?.();
  panel.hidden = false;
  panel.replaceChildren();
  panel.scrollIntoView({ block: "start" });
  const bar = h("progress", { id: "progress-bar", max: 1, value: 0 });
  const counts = h("p", { id: "progress-counts" }, "loading the dataset, index and models…");
  const current = h("p", { class: "text muted", id: "progress-current" });
  const means = h("table", { class: "kv", id: "progress-means" });
  const problems = h("ul", { class: "errors" });
  const cancel = h("button", { id: "run-cancel", onclick: () => api.cancelRun() }, "Cancel");
  const outcome = h("p", { id: "progress-outcome", "aria-live": "polite" });
  append(panel, bar, counts, current, means, cancel, outcome, problems);
  const runIds: string[] = [];
  unlisten = await listen<ProgressEvent>("run-progress", ({ payload: e }) => {
    switch (e.kind) {
      case "started":
        if (!runIds.includes(e.run_id)) runIds.push(e.run_id);
        bar.max = Math.max(1, e.total);
        bar.value = e.already_done;
        counts.textContent = `${runs > 1 ? `run ${runIds.length} of ${runs} · ` : ""}${e.already_done} / ${e.total} items`;
        break;
      case "item":
        current.textContent = `${e.question_id}: ${e.question}`;
        break;
      case "done":
        bar.value = e.done;
        counts.textContent = `${runs > 1 ? `run ${runIds.length} of ${runs} · ` : ""}${e.done} / ${e.total} items · ` +
          `${e.rate.toFixed(2)} items/s · ETA ${duration(e.eta_s)}`;
        means.replaceChildren(h("tbody", {}, ...Object.entries(e.means).map(([metric, mean]) =>
          h("tr", { "data-metric": metric }, h("th", {}, metric), h("td", { class: "num" }, fixed(mean))))));
        if (e.error) problems.append(h("li", { class: "error" }, `${e.question_id}: ${e.error}`));
        break;
      case "finished":
        // An experiment sends one `finished` per run; wait for the last one.
        finishedRuns += 1;
        // The counts line already says "run N of M", so an interim finish needs no note.
        if (finishedRuns < runs && e.status === "finished") break;
        cancel.remove();
        current.textContent = "";
        outcome.replaceChildren(`Run ${e.status}. `,
          h("button", { id: "open-finished", onclick: () => go({ screen: "run", run: e.run_id }) }, "Open the run"));
        if (runIds.length > 1) {
          outcome.append(" ", h("button", {
            id: "compare-finished",
            onclick: () => { selection.clear(); runIds.forEach((r) => selection.add(r)); go({ screen: "compare", runs: [...runIds] }); },
          }, `Compare the ${runIds.length} runs`));
        }
        unlisten?.();
        unlisten = null;
        ended();
        break;
      case "failed":
        cancel.remove();
        outcome.className = "error";
        outcome.textContent = e.message;
        unlisten?.();
        unlisten = null;
        ended();
        break;
    }
  });
  return { planned: (n: number) => { runs = Math.max(1, n); } };
}
