// New run: dataset folder, target (an answers file today), metrics, limit, seed and name; then
// live progress from the shell's `run-progress` events, with cancel. Also resumes a run.
import { open } from "@tauri-apps/plugin-dialog";
import { listen, UnlistenFn } from "@tauri-apps/api/event";
import { api, errorText, ProgressEvent } from "../api";
import { h, append } from "../dom";
import { duration } from "../format";
import { go } from "../main";

let unlisten: UnlistenFn | null = null;

function pathField(id: string, label: string, pick: () => Promise<string | null>, value = ""): [HTMLElement, HTMLInputElement] {
  const input = h("input", { id, type: "text", value, placeholder: "choose with Browse…", spellcheck: "false" });
  const browse = h("button", { type: "button", onclick: async () => { const p = await pick(); if (p) input.value = p; } }, "Browse…");
  return [h("label", { class: "field" }, h("span", {}, label), h("span", { class: "row" }, input, browse)), input];
}

export async function renderNewRun(area: HTMLElement, resume?: { run: string; dataset: string }): Promise<void> {
  append(area, h("h1", {}, resume ? `Resume run ${resume.run.slice(0, 8)}` : "New run"));
  const [datasetField, dataset] = pathField("run-dataset", "Dataset folder",
    async () => (await open({ directory: true, title: "Dataset folder (holds dataset.toml)" })) as string | null, resume?.dataset ?? "");
  const [answersField, answers] = pathField("run-answers", "Answers file (JSONL)",
    async () => (await open({ title: "Answers file", filters: [{ name: "JSON Lines", extensions: ["jsonl"] }] })) as string | null);
  const target = h("select", { id: "run-target" },
    h("option", { value: "answers" }, "answers file (replay)"),
    h("option", { value: "rag" }, "rag: retrieve + local model"),
    h("option", { value: "retrieve" }, "retrieve only (retrieval metrics)"));
  const retrieval = h("select", { id: "run-retrieval" }, ...["bm25", "dense", "hybrid"].map((m) => h("option", { value: m }, m)));
  const topK = h("input", { id: "run-top-k", type: "number", min: "1", placeholder: "4" });
  const modelBoxes = h("div", { class: "picker", id: "run-models" });
  api.listModels().then((view) => {
    const usable = view.models.filter((m) => m.arch !== "bert");
    for (const m of usable) {
      const installed = m.state === "verified" || m.state === "present";
      modelBoxes.append(h("label", {}, h("input", { type: "checkbox", value: m.id, disabled: !installed }),
        ` ${m.id} `, h("span", { class: "muted" }, installed ? "" : "(not installed: see Models)")));
    }
    if (usable.length === 0) modelBoxes.append(h("span", { class: "muted" }, "no models known"));
  }).catch((e) => modelBoxes.append(h("span", { class: "error" }, errorText(e))));
  const ragOnly = [h("label", { class: "field" }, h("span", {}, "Generator models"), modelBoxes)];
  const retrievalOnly = [h("label", { class: "field" }, h("span", {}, "Retrieval"), retrieval),
    h("label", { class: "field" }, h("span", {}, "Top-k"), topK)];
  const metrics = h("input", { id: "run-metrics", type: "text", placeholder: "all that apply (or e.g. token_f1,rouge_l)" });
  const limit = h("input", { id: "run-limit", type: "number", min: "1", placeholder: "all" });
  const seed = h("input", { id: "run-seed", type: "number", min: "0", value: "0" });
  const name = h("input", { id: "run-name", type: "text", placeholder: "dataset and target" });
  const error = h("p", { class: "error", id: "run-error", "aria-live": "assertive" });
  const progress = h("section", { class: "progress", id: "run-progress", hidden: true });
  const start = h("button", { id: "run-start", class: "primary" }, resume ? "Resume" : "Start");

  const form = h("div", { class: "form" }, datasetField);
  if (!resume) {
    form.append(h("label", { class: "field" }, h("span", {}, "Target"), target), answersField, ...ragOnly, ...retrievalOnly,
      h("label", { class: "field" }, h("span", {}, "Metrics"), metrics),
      h("label", { class: "field" }, h("span", {}, "Limit"), limit),
      h("label", { class: "field" }, h("span", {}, "Seed"), seed),
      h("label", { class: "field" }, h("span", {}, "Name"), name));
  }
  form.append(h("div", { class: "actions" }, start));
  append(area, form, error, progress);
  const showFields = () => {
    answersField.hidden = target.value !== "answers";
    for (const el of ragOnly) el.hidden = target.value !== "rag";
    for (const el of retrievalOnly) el.hidden = target.value === "answers";
  };
  target.addEventListener("change", showFields);
  showFields();

  start.addEventListener("click", async () => {
    error.textContent = "";
    if (!dataset.value.trim()) { error.textContent = "Choose a dataset folder."; return; }
    const models = Array.from(modelBoxes.querySelectorAll<HTMLInputElement>("input:checked")).map((b) => b.value);
    if (!resume && target.value === "answers" && !answers.value.trim()) { error.textContent = "Choose an answers file."; return; }
    if (!resume && target.value === "rag" && models.length === 0) { error.textContent = "Pick at least one installed generator model."; return; }
    start.disabled = true;
    await follow(progress, !resume && target.value === "rag" ? models.length : 1);
    try {
      await api.startRun({
        dataset: dataset.value.trim(),
        target: target.value === "answers" ? `answers:${answers.value.trim()}` : target.value,
        models: target.value === "rag" ? models : [],
        retrieval: target.value === "answers" ? null : retrieval.value,
        top_k: topK.value ? Number(topK.value) : null,
        metrics: metrics.value.split(",").map((m) => m.trim()).filter(Boolean),
        limit: limit.value ? Number(limit.value) : null,
        seed: seed.value ? Number(seed.value) : null,
        name: name.value.trim() || null,
        resume: resume?.run ?? null,
      });
    } catch (e) {
      error.textContent = errorText(e);
      progress.hidden = true;
      start.disabled = false;
    }
  });
}

/** Show the run's progress as events arrive; on finish, offer to open it. */
async function follow(panel: HTMLElement, runs: number): Promise<void> {
  let remaining = runs;
  unlisten?.();
  panel.hidden = false;
  panel.replaceChildren();
  const bar = h("progress", { id: "progress-bar", max: 1, value: 0 });
  const counts = h("p", { id: "progress-counts" }, "starting…");
  const current = h("p", { class: "text muted", id: "progress-current" });
  const problems = h("ul", { class: "errors" });
  const cancel = h("button", { id: "run-cancel", onclick: () => api.cancelRun() }, "Cancel");
  const outcome = h("p", { id: "progress-outcome", "aria-live": "polite" });
  append(panel, bar, counts, current, cancel, outcome, problems);
  let runId = "";
  unlisten = await listen<ProgressEvent>("run-progress", ({ payload: e }) => {
    switch (e.kind) {
      case "started":
        runId = e.run_id;
        bar.max = Math.max(1, e.total);
        bar.value = e.already_done;
        counts.textContent = `${e.already_done} / ${e.total} items`;
        break;
      case "item":
        current.textContent = `${e.question_id}: ${e.question}`;
        break;
      case "done":
        bar.value = e.done;
        counts.textContent = `${e.done} / ${e.total} items · ${e.rate.toFixed(1)} items/s · ETA ${duration(e.eta_s)}`;
        if (e.error) problems.append(h("li", { class: "error" }, `${e.question_id}: ${e.error}`));
        break;
      case "finished":
        // A multi-model experiment sends one `finished` per run; wait for the last one.
        remaining -= 1;
        if (remaining > 0 && e.status === "finished") {
          problems.append(h("li", {}, `run ${e.run_id.slice(0, 8)} finished; ${remaining} to go`));
          break;
        }
        cancel.remove();
        outcome.replaceChildren(`Run ${e.status}. `, h("button", { id: "open-finished", onclick: () => go({ screen: "run", run: e.run_id || runId }) }, "Open the run"));
        unlisten?.();
        unlisten = null;
        break;
      case "failed":
        cancel.remove();
        outcome.className = "error";
        outcome.textContent = e.message;
        unlisten?.();
        unlisten = null;
        break;
    }
  });
}
