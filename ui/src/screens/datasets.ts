// Datasets: the datasets the app knows (the samples, the user's datasets folder, those runs
// used) with their question counts, each one click from browsing or a new run; open a dataset
// folder and browse its questions (filter by tag, document, refuse and text), read a manual as
// plain text, review generated pairs (review.ts), and import eShopSupport JSON or CSV into a
// new dataset.
import { open } from "@tauri-apps/plugin-dialog";
import { api, errorText, DatasetView, KnownDataset, Question } from "../api";
import { go } from "../router";
import { explainError, missingField } from "../errors";
import { h, append, clear } from "../dom";
import { keyboardRows } from "./table";
import { count } from "../format";
import { filterQuestions, QuestionFilter } from "./filter";
import { renderReview } from "./review";

let lastDataset = "";

export async function renderDatasets(area: HTMLElement): Promise<void> {
  append(area, h("h1", {}, "Datasets"));
  const path = h("input", { id: "dataset-path", type: "text", value: lastDataset, placeholder: "dataset folder", spellcheck: "false" });
  const error = h("p", { class: "error", id: "dataset-error" });
  const content = h("div", { id: "dataset-content" });
  // `message` is the outcome of a review just applied, shown once the dataset is re-read.
  // Only the latest load draws: an earlier one still reading must not add a second view.
  let latest = 0;
  const load = async (dir: string, message = "") => {
    const mine = ++latest;
    error.textContent = "";
    clear(content);
    try {
      const view = await api.openDataset(dir);
      if (mine !== latest) return;
      lastDataset = dir;
      await browse(content, view, message, (m) => load(dir, m));
    } catch (e) {
      if (mine === latest) error.textContent = explainError(errorText(e), [{ label: "Dataset folder", value: dir }]);
    }
  };
  const known = h("section", { id: "known-datasets" }, h("p", { class: "muted" }, "Looking for datasets…"));
  void api.listDatasets().then((list) => known.replaceChildren(knownTable(list, (dir) => { path.value = dir; void load(dir); })))
    .catch((e) => known.replaceChildren(h("p", { class: "error" }, `The datasets could not be listed: ${errorText(e)}`)));
  append(area, known,
    h("div", { class: "form" }, h("span", { class: "row" }, path,
      h("button", { onclick: async () => { const p = await api.chooseFolder("Dataset folder (holds dataset.toml)"); if (p) { path.value = p; await load(p); } } }, "Browse…"),
      h("button", { id: "dataset-open", onclick: () => load(path.value.trim()) }, "Open"))),
    error, content, importForm());
  if (lastDataset) await load(lastDataset);
}

/** The datasets found, each with its question count; a broken one with the reason. */
function knownTable(list: KnownDataset[], openDataset: (dir: string) => void): HTMLElement {
  if (list.length === 0) {
    return h("p", { class: "muted" }, "No datasets found yet: open a folder holding dataset.toml below, or import one.");
  }
  return h("table", { class: "rows known-datasets" },
    h("thead", {}, h("tr", {}, ...["dataset", "questions", "found as", "folder", ""].map((t) => h("th", {}, t)))),
    h("tbody", {}, ...list.map((d) => h("tr", { "data-dataset": d.name, "data-root": d.root },
      h("td", { title: d.description }, h("strong", {}, d.name), d.description ? h("div", { class: "muted small clamp" }, d.description) : null),
      h("td", { class: "num questions" }, d.problem ? "—" : String(d.questions)),
      h("td", {}, d.source),
      h("td", { class: "mono path" }, d.root, d.problem ? h("div", { class: "error" }, d.problem) : null),
      h("td", { class: "actions-cell" }, d.problem ? null : h("span", { class: "row" },
        h("button", { class: "open-dataset", onclick: () => openDataset(d.root) }, "Browse"),
        h("button", { class: "use-dataset", onclick: () => go({ screen: "new", dataset: d.root }) }, "New run")))))));
}

async function browse(area: HTMLElement, view: DatasetView, message: string, reload: (message: string) => Promise<void>): Promise<void> {
  const tags = [...new Set(view.questions.flatMap((q) => q.tags ?? []))].sort();
  const docs = [...new Set(view.questions.map((q) => q.doc).filter((d): d is string => !!d))].sort();
  const filter: QuestionFilter = { text: "", tag: "", doc: "", refuse: "" };
  const select = (id: string, label: string, values: string[], key: "tag" | "doc" | "refuse") => {
    const el = h("select", { id }, h("option", { value: "" }, `any ${label}`), ...values.map((v) => h("option", { value: v }, v)));
    el.addEventListener("change", () => { filter[key] = el.value; apply(); });
    return el;
  };
  const text = h("input", { id: "question-search", type: "search", placeholder: "search questions" });
  text.addEventListener("input", () => { filter.text = text.value; apply(); });
  const shownCount = h("span", { class: "muted", id: "question-count" });
  const body = h("tbody");
  const rows = view.questions.map((q) => {
    const row = h("tr", { "data-question": q.id },
      h("td", { class: "mono" }, q.id), h("td", { class: "question" }, q.question), h("td", {}, q.answer ?? ""),
      h("td", {}, q.doc ?? ""), h("td", {}, (q.tags ?? []).join(", ")), h("td", {}, q.refuse ? "yes" : ""));
    body.append(row);
    return { q, row };
  });
  const apply = () => {
    const shown = new Set(filterQuestions(view.questions, filter).map((q: Question) => q.id));
    for (const { q, row } of rows) row.hidden = !shown.has(q.id);
    shownCount.textContent = `${shown.size} of ${view.questions.length} questions`;
  };
  const table = h("table", { class: "rows", id: "dataset-questions" },
    h("thead", {}, h("tr", {}, ...["id", "question", "reference", "doc", "tags", "refuse"].map((t) => h("th", {}, t)))), body);
  const manual = h("pre", { class: "manual", id: "manual-text" });
  const openManual = async (doc: string) => {
    try { manual.textContent = await api.readManual(view.root, doc); } catch (e) { manual.textContent = errorText(e); }
  };
  keyboardRows(table, (row) => { const q = view.questions.find((x) => x.id === row.dataset.question); if (q?.doc) openManual(q.doc); });
  // Generated pairs are reviewed below the questions; the button in the header leads there.
  const review = h("section", { class: "review", id: "review", "aria-labelledby": "review-title" });
  const toReview = h("button", { id: "review-jump", type: "button", hidden: true }, "");
  toReview.addEventListener("click", () => {
    review.scrollIntoView({ block: "start" });
    review.querySelector<HTMLElement>("button:not([disabled])")?.focus();
  });
  append(area,
    h("div", { class: "title-row" }, h("h2", {}, view.name), toReview),
    h("p", { class: "muted" }, `${view.description} · fingerprint ${view.fingerprint.slice(0, 12)}`),
    h("div", { class: "filters" }, text, select("filter-tag", "tag", tags, "tag"), select("filter-doc", "doc", docs, "doc"),
      select("filter-refuse", "refuse", ["yes", "no"], "refuse"), shownCount),
    h("section", { class: "split" }, h("div", { class: "scroll" }, table),
      h("aside", { class: "detail" }, h("h3", {}, "Manuals"),
        h("ul", { class: "chips" }, ...view.documents.map((d) => h("li", {}, h("button", { class: "chip", "data-doc": d, onclick: () => openManual(d) }, d)))),
        manual)),
    review);
  apply();
  const pending = await renderReview(review, view.root, message, reload);
  if (pending) {
    toReview.textContent = `Review ${count(pending, "generated pair")}`;
    toReview.hidden = false;
  }
  if (message) {
    // Back from Apply: keep the reviewer where they were, on the outcome.
    review.scrollIntoView({ block: "start" });
    document.getElementById("review-status")?.focus();
  }
}

function importForm(): HTMLElement {
  const kind = h("select", { id: "import-kind" }, h("option", { value: "eshop" }, "eShopSupport evalquestions.json"), h("option", { value: "csv" }, "CSV (Question, Golden Response, Golden Context)"));
  const file = h("input", { id: "import-file", type: "text", placeholder: "questions file" });
  const corpus = h("input", { id: "import-corpus", type: "text", placeholder: "folder of manuals" });
  const output = h("input", { id: "import-output", type: "text", placeholder: "new dataset folder" });
  const status = h("p", { id: "import-status", "aria-live": "polite" });
  const browse = (input: HTMLInputElement, directory: boolean) => h("button", {
    type: "button",
    onclick: async () => { const p = await open({ directory }); if (typeof p === "string") input.value = p; },
  }, "Browse…");
  // Where the new dataset goes is a place to write: its dialog opens in the core, which allows it.
  const browseOutput = h("button", {
    type: "button",
    onclick: async () => { const p = await api.chooseSavePath("New dataset folder", null, null, null); if (p) output.value = p; },
  }, "Browse…");
  const go = h("button", {
    id: "import-go",
    onclick: async () => {
      const fields = [
        { label: "Questions file", value: file.value }, { label: "Corpus folder", value: corpus.value },
        { label: "Output folder", value: output.value },
      ];
      const missing = missingField(fields);
      if (missing) { status.className = "error"; status.textContent = missing; return; }
      status.className = "";
      status.textContent = "importing…";
      try {
        const r = await api.importDataset(kind.value, file.value.trim(), corpus.value.trim(), output.value.trim());
        status.textContent = `Imported ${count(r.questions, "question")} and ${count(r.documents, "document")} into ${r.output}`;
        lastDataset = r.output;
      } catch (e) {
        status.className = "error";
        status.textContent = explainError(errorText(e), fields);
      }
    },
  }, "Import");
  return h("section", { class: "import" }, h("h2", {}, "Import a dataset"),
    h("div", { class: "form" },
      h("label", { class: "field" }, h("span", {}, "Format"), kind),
      h("label", { class: "field" }, h("span", {}, "Questions file"), h("span", { class: "row" }, file, browse(file, false))),
      h("label", { class: "field" }, h("span", {}, "Corpus folder"), h("span", { class: "row" }, corpus, browse(corpus, true))),
      h("label", { class: "field" }, h("span", {}, "Output folder"), h("span", { class: "row" }, output, browseOutput)),
      h("div", { class: "actions" }, go)),
    status);
}
