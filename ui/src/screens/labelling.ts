// Labelling a run's answers: one answer at a time with its question, reference and the judges'
// verdicts; correct / wrong / skip with a note, stored at once (the core's labels table, which
// `assay agree RUN` reads too). Keyboard: 1 correct, 2 wrong, 0 skip, j or → next, k or ←
// previous. Labels move in and out as the JSONL `assay agree --labels` reads.
import { open } from "@tauri-apps/plugin-dialog";
import { api, errorText, AnswerLabel, JsonRun, JudgePanel, LabelRecord, RunItem } from "../api";
import { h, append, clear } from "../dom";
import { fixed, when } from "../format";
import { go } from "../router";
import "./labelling.css";

const labelText: Record<AnswerLabel, string> = { correct: "correct", wrong: "wrong", skip: "skipped" };
const keys: Record<string, AnswerLabel> = { "1": "correct", "2": "wrong", "0": "skip" };

/** The labelling section of a run's page (run.ts appends it). */
export function labellingSection(run: JsonRun): HTMLElement {
  const section = h("section", { class: "labelling", id: "labelling", tabindex: 0, "aria-label": "Label answers" });
  // Only answered questions can be labelled: a failed item has nothing to judge.
  const items = run.items.filter((item) => item.answer !== null);
  append(section, h("h2", {}, "Label answers"));
  if (items.length === 0) {
    append(section, h("p", { class: "muted" }, "No answered question to label yet."));
    return section;
  }
  const progress = h("p", { id: "label-progress", "aria-live": "polite" });
  const card = h("div", { class: "label-card", id: "label-card" });
  const status = h("p", { id: "labels-status", "aria-live": "polite" });
  append(section,
    h("p", { class: "muted" }, "Is the answer correct? 1 correct · 2 wrong · 0 skip · j or → next · k or ← previous. Each label is stored at once."),
    progress, card, exchange(run.id, status, () => void reload()), status,
    h("div", { class: "actions" },
      h("button", { id: "open-judges", onclick: () => go({ screen: "judges", run: run.id }) }, "Judges against these labels →")));

  let labels = new Map<string, LabelRecord>();
  let panel: JudgePanel | null = null;
  let at = 0;
  const note = h("textarea", { id: "label-note", rows: 2, placeholder: "a note (optional): why, what is missing" });

  const drawProgress = () => {
    const all = [...labels.values()];
    const n = (l: AnswerLabel) => all.filter((x) => x.label === l).length;
    progress.textContent = `${all.length} of ${items.length} answers labelled (${n("correct")} correct, ${n("wrong")} wrong, ${n("skip")} skipped)`;
  };
  const draw = () => {
    clear(card);
    const item = items[at];
    const current = labels.get(item.id);
    note.value = current?.note ?? "";
    card.dataset.question = item.id;
    append(card,
      h("div", { class: "label-head" },
        h("strong", {}, `Answer ${at + 1} of ${items.length} · ${item.id}`),
        h("span", { id: "label-current", class: current ? `label-chip ${current.label}` : "label-chip none", "data-label": current?.label ?? "" },
          current ? `your label: ${labelText[current.label]} · ${when(current.labelled_at)}` : "not labelled")),
      h("h3", {}, "Question"), h("p", { class: "text" }, item.question),
      h("h3", {}, "Reference"), h("p", { class: "text" }, item.refuse ? "(should decline)" : item.reference ?? "—"),
      h("h3", {}, "Answer"), h("p", { class: "text answer" }, item.answer ?? ""),
      verdicts(item, panel),
      h("div", { class: "label-buttons" },
        h("button", { "data-label": "correct", onclick: () => void choose("correct") }, "1 · Correct"),
        h("button", { "data-label": "wrong", onclick: () => void choose("wrong") }, "2 · Wrong"),
        h("button", { "data-label": "skip", onclick: () => void choose("skip") }, "0 · Skip"),
        h("button", { id: "label-previous", onclick: () => move(-1) }, "← Previous"),
        h("button", { id: "label-next", onclick: () => move(1) }, "Next →")),
      h("label", { class: "note" }, "Note ", note));
    drawProgress();
  };
  const move = (step: number) => {
    at = Math.max(0, Math.min(items.length - 1, at + step));
    draw();
  };
  const choose = async (label: AnswerLabel) => {
    const item = items[at];
    status.className = "";
    try {
      const stored = await api.labelAnswer(run.id, item.id, label, note.value.trim() || null);
      labels.set(item.id, stored);
      status.textContent = `${item.id}: ${labelText[label]} (stored)`;
      if (at < items.length - 1) move(1); else draw();
    } catch (e) {
      status.className = "error";
      status.textContent = errorText(e);
    }
  };
  // A note changed after labelling is stored with the label it belongs to.
  note.addEventListener("change", () => {
    const current = labels.get(items[at].id);
    if (current && (current.note ?? "") !== note.value.trim()) void choose(current.label).then(() => move(0));
  });
  section.addEventListener("keydown", (e) => {
    const target = e.target as HTMLElement;
    if (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key in keys) void choose(keys[e.key]);
    else if (e.key === "j" || e.key === "ArrowRight") move(1);
    else if (e.key === "k" || e.key === "ArrowLeft") move(-1);
    else return;
    e.preventDefault();
  });
  const reload = async () => {
    try {
      panel = await api.judgePanel(run.id, false);
      labels = new Map(panel.labels.labels.map((l) => [l.question_id, l]));
    } catch (e) {
      status.className = "error";
      status.textContent = errorText(e);
    }
    draw();
  };
  void reload();
  return section;
}

/** Each judge's verdict on the answer, with the label its calibrated thresholds give now. */
function verdicts(item: RunItem, panel: JudgePanel | null): HTMLElement {
  const calibrated = panel?.calibrated_labels[item.id] ?? {};
  const rows = Object.entries(item.verdicts).map(([judge, v]) => {
    const spec = panel?.judges.find((j) => j.name === judge);
    const cut = spec?.thresholds
      ? ` · calibrated (cut ${spec.thresholds.map((t) => fixed(t, 2)).join(", ")} on ${spec.calibrated_on ?? "?"} labels): ${calibrated[judge] ?? "—"}`
      : "";
    return h("li", { "data-judge": judge },
      h("strong", {}, judge), `: ${v.label ?? (v.score === null ? "unscored" : "")} · score ${fixed(v.score, 2)}${cut}`);
  });
  return rows.length ? h("div", {}, h("h3", {}, "Judges said"), h("ul", { class: "label-verdicts" }, ...rows)) : h("p", { class: "muted" }, "No judge scored this run.");
}

/** Export and import of the labels as `assay agree` JSONL. */
function exchange(run: string, status: HTMLElement, reload: () => void): HTMLElement {
  const say = (text: string, error = false) => { status.className = error ? "error" : ""; status.textContent = text; };
  const exported = ([path, lines]: [string, number]) => say(`${lines} labels written to ${path} (skipped answers have no line)`);
  const path = h("input", { id: "labels-import-path", type: "text", placeholder: "a labels .jsonl file" });
  return h("div", { class: "row label-exchange" },
    h("button", { id: "labels-export", onclick: async () => {
      try {
        const chosen = await api.chooseSavePath("Export labels", `labels-${run.slice(0, 12)}.jsonl`, "JSON Lines", ["jsonl"]);
        if (chosen) exported(await api.exportLabels(run, chosen));
      } catch (e) { say(errorText(e), true); }
    } }, "Export labels…"),
    h("button", { id: "labels-export-data-dir", onclick: async () => {
      try { exported(await api.exportLabels(run, null)); } catch (e) { say(errorText(e), true); }
    } }, "Save to the labels folder"),
    path,
    h("button", { onclick: async () => {
      const chosen = await open({ title: "Labels to import", filters: [{ name: "JSON Lines", extensions: ["jsonl"] }] });
      if (typeof chosen === "string") path.value = chosen;
    } }, "Browse…"),
    h("button", { id: "labels-import", onclick: async () => {
      try {
        const done = await api.importLabels(run, path.value);
        say(`${done.stored} labels imported (${done.replaced} replaced an earlier label)`);
        reload();
      } catch (e) { say(errorText(e), true); }
    } }, "Import"));
}
