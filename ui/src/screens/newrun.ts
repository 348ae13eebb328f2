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
  const metrics = h("input", { id: "run-metrics", type: "text", placeholder: "all that apply (or e.g. token_f1,rouge_l)" });
  const limit = h("input", { id: "run-limit", type: "number", min: "1", placeholder: "all" });
  const seed = h("input", { id: "run-seed", type: "number", min: "0", value: "0" });
  const name = h("input", { id: "run-name", type: "text", placeholder: "dataset and target" });
  const error = h("p", { class: "error", id: "run-error", "aria-live": "assertive" });
  const progress = h("section", { class: "progress", id: "run-progress", hidden: true });
  const start = h("button", { id: "run-start", class: "primary" }, resume ? "Resume" : "Start");

  const form = h("div", { class: "form" }, datasetField);
  if (!resume) {
    form.append(answersField,
      h("label", { class: "field" }, h("span", {}, "Metrics"), metrics),
      h("label", { class: "field" }, h("span", {}, "Limit"), limit),
      h("label", { class: "field" }, h("span", {}, "Seed"), seed),
      h("label", { class: "field" }, h("span", {}, "Name"), name));
  }
  form.append(h("div", { class: "actions" }, start));
  append(area, form, error, progress);

  start.addEventListener("click", async () => {
    error.textContent = "";
    if (!dataset.value.trim()) { error.textContent = "Choose a dataset folder."; return; }
    if (!resume && !answers.value.trim()) { error.textContent = "Choose an answers file."; return; }
    start.disabled = true;
    await follow(progress);
    try {
      await api.startRun({
        dataset: dataset.value.trim(),
        target: `answers:${answers.value.trim()}`,
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
async function follow(panel: HTMLElement): Promise<void> {
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
