// One run: summary cards, the report's charts, and the per-question table with a drill-down
// panel (question, reference, answer with citations, retrieved chunks, verdicts, the statements a
// statement judge checked); flagged items carry a badge and are counted in the cards.
import { api, errorText, RunItem, JsonRun, RunView, JudgedStatements, JudgeAgreement } from "../api";
import { open } from "@tauri-apps/plugin-dialog";
import { h, append, clear, svg } from "../dom";
import { fixed, interval, ms, when } from "../format";
import { go } from "../router";
import { keyboardRows } from "./table";
import { flagBadges, flaggedCard, flagNotice, statementSection } from "./findings";
import { labellingSection } from "./labelling";

export async function renderRun(area: HTMLElement, runId: string): Promise<void> {
  let view;
  try {
    view = await api.runView(runId);
  } catch (e) {
    append(area, h("p", { class: "error" }, errorText(e)));
    return;
  }
  const run = view.run;
  const actions = h("div", { class: "actions" },
    h("button", { onclick: () => go({ screen: "runs" }) }, "← Runs"),
    h("button", { id: "export-run", onclick: () => go({ screen: "export", runs: [run.id] }) }, "Export…"),
  );
  // Unfinished, or finished with items whose target failed: a resume asks those again.
  if (run.status !== "finished" || run.errors > 0) {
    actions.append(h("button", {
      id: "resume-run",
      onclick: async () => {
        const record = (await api.listRuns()).find((r) => r.id === run.id);
        if (record) go({ screen: "new", resume: { run: run.id, dataset: record.dataset_root } });
      },
    }, "Resume"));
  }
  append(area,
    h("h1", { id: "run-title" }, run.name),
    h("p", { class: "muted", id: "run-meta" }, [
      run.dataset, run.config.target, run.config.model ? `model ${run.config.model}` : null,
      retrievalSummary(run),
      run.config.judges?.length ? `judges ${run.config.judges.join(", ")} on ${run.config.judge_model ?? "?"}` : null,
      run.status, when(run.created_at), run.id,
    ].filter(Boolean).join(" · ")),
    actions,
    cards(view),
    h("section", { class: "charts" }, svg(view.means_chart)),
    h("details", { class: "charts-block", id: "histograms" }, h("summary", {}, `Score distributions (${view.histograms.length} metrics)`),
      h("section", { class: "charts grid" }, ...view.histograms.map(svg))),
    questions(run, view.statements ?? {}),
    labellingSection(run),
  );
  if (run.config.judges?.length) append(area, calibration(run.id));
}

/** The run's judges against a human labels file, and thresholds fitted on it (`assay agree --calibrate`). */
/** How a run retrieved, for targets that retrieve: mode and top-k as the core recorded them. */
function retrievalSummary(run: JsonRun): string | null {
  const kind = run.config.target.split(":")[0];
  if (kind !== "rag" && kind !== "retrieve") return null;
  return `retrieval ${run.config.retrieval ?? "bm25 (not recorded: the default)"} · top-k ${run.config.top_k ?? "?"}`;
}

function calibration(runId: string): HTMLElement {
  const result = h("div", { id: "calibration-result" });
  const section = h("details", { class: "charts-block", id: "calibration" },
    h("summary", {}, "Judges against human labels"),
    h("p", { class: "muted" }, "A JSON Lines file of {\"id\", \"judge\", \"label\"} per question. Calibrating fits score thresholds on it and saves calibrated copies of the judges for later runs."),
    h("button", {
      id: "calibrate-judges",
      onclick: async () => {
        const labels = await open({ title: "Human labels", filters: [{ name: "JSON Lines", extensions: ["jsonl"] }] });
        if (typeof labels !== "string") return;
        clear(result);
        try {
          append(result, calibrationTable(await api.calibrateJudges([runId], [labels], true)));
        } catch (e) {
          append(result, h("p", { class: "error" }, errorText(e)));
        }
      },
    }, "Calibrate with labels…"),
    result);
  return section;
}

function calibrationTable(outcome: JudgeAgreement): HTMLElement {
  const rows = outcome.calibrations.map((c) => h("tr", {},
    h("td", {}, c.judge), h("td", {}, String(c.labels)), h("td", {}, c.thresholds.map((t) => fixed(t)).join(", ")),
    h("td", {}, `${fixed(c.before.accuracy)} → ${fixed(c.after?.accuracy)}`),
    h("td", {}, `${fixed(c.before.kappa)} → ${fixed(c.after?.kappa)}`),
    h("td", {}, c.written ?? "—")));
  const agreed = outcome.agreements.map((a) => h("tr", {},
    h("td", {}, a.judge), h("td", {}, String(a.n)), h("td", {}, fixed(a.accuracy)), h("td", {}, fixed(a.kappa))));
  return h("div", {},
    h("table", { class: "data" }, h("thead", {}, h("tr", {}, ...["judge", "labels", "accuracy", "kappa"].map((c) => h("th", {}, c)))),
      h("tbody", {}, ...agreed)),
    outcome.calibrations.length
      ? h("table", { class: "data", id: "calibrations" },
        h("thead", {}, h("tr", {}, ...["judge", "labels", "thresholds", "accuracy", "kappa", "calibrated copy"].map((c) => h("th", {}, c)))),
        h("tbody", {}, ...rows))
      : h("p", { class: "muted" }, "The labels do not fall on both sides of any threshold: nothing to calibrate."));
}

function cards(view: RunView): HTMLElement {
  const run = view.run;
  const grid = h("section", { class: "cards", id: "summary-cards" });
  grid.append(
    h("div", { class: "card" }, h("div", { class: "label" }, "items"),
      h("div", { class: "value" }, `${run.items_done} / ${run.items_total}`),
      h("div", { class: "sub" }, `${run.errors} errors`)),
    h("div", { class: "card" }, h("div", { class: "label" }, "avg latency"),
      h("div", { class: "value" }, ms(run.avg_latency_ms))),
  );
  const flagged = flaggedCard(run);
  if (flagged) grid.append(flagged);
  if (view.avg_prompt_tokens !== null || view.avg_completion_tokens !== null) {
    grid.append(h("div", { class: "card", id: "tokens-card" }, h("div", { class: "label" }, "tokens per item"),
      h("div", { class: "value" }, fixed(view.avg_completion_tokens, 0)),
      h("div", { class: "sub" }, `generated · ${fixed(view.avg_prompt_tokens, 0)} in the prompt`)));
  }
  for (const [name, m] of Object.entries(run.summary)) {
    grid.append(h("div", { class: "card", "data-metric": name },
      h("div", { class: "label" }, name),
      h("div", { class: "value" }, fixed(m.mean)),
      h("div", { class: "sub" }, `95% ${interval(m.ci95)} · n=${m.n}`),
      m.pass_rate === undefined ? null : h("div", { class: "sub pass-rate" }, `passed: ${fixed(m.pass_rate * 100, 0)}% of items`),
      m.length_spearman === undefined ? null
        : h("div", { class: "sub length-rho", title: "Spearman correlation of the judge's score with the answer's length in words" },
          `length ρ ${fixed(m.length_spearman, 2)}`),
      h("div", { class: m.unscored > 0 ? "sub warn" : "sub" }, `${m.unscored} unscored`)));
  }
  return grid;
}

function questions(run: JsonRun, statements: Record<string, JudgedStatements[]>): HTMLElement {
  const metricNames = Object.keys(run.summary);
  const detail = h("aside", { class: "detail", id: "item-detail", "aria-live": "polite" },
    h("p", { class: "muted" }, "Select a question (↑/↓, Enter) to see its answer and scores."));
  const body = h("tbody");
  run.items.forEach((item, index) => {
    const row = h("tr", { "data-index": String(index), "data-question": item.id },
      h("td", { class: "mono" }, item.id),
      h("td", { class: "question" }, flagBadges(item.flags), item.question),
      ...metricNames.map((m) => h("td", { class: "num" }, fixed(item.metrics[m] ?? item.verdicts[m]?.score ?? null, 2))),
      h("td", { class: "num" }, item.latency_ms === null ? "—" : String(item.latency_ms)),
      h("td", { class: "error" }, item.error ?? ""));
    body.append(row);
  });
  const table = h("table", { class: "rows", id: "questions-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "id"), h("th", {}, "question"), ...metricNames.map((m) => h("th", {}, m)),
      h("th", {}, "ms"), h("th", {}, "error"))),
    body);
  const show = (row: HTMLTableRowElement) => {
    const item = run.items[Number(row.dataset.index)];
    showItem(detail, item, statements[item.id] ?? []);
  };
  const nav = keyboardRows(table, show, undefined, show);
  body.addEventListener("click", (e) => {
    const row = (e.target as Element).closest("tr");
    if (row) nav.select(Array.from(body.rows).indexOf(row));
  });
  return h("section", { class: "split" }, h("div", { class: "scroll" }, table), detail);
}

function showItem(panel: HTMLElement, item: RunItem, judged: JudgedStatements[]): void {
  clear(panel);
  const cited = new Set(item.citations);
  append(panel,
    h("h2", {}, item.id),
    flagNotice(item.flags),
    h("h3", {}, "Question"), h("p", { class: "text" }, item.question),
    h("h3", {}, "Reference"), h("p", { class: "text" }, item.refuse ? "(should decline)" : item.reference ?? "—"),
    h("h3", {}, "Answer"), h("p", { class: "text answer" }, item.answer ?? `(no answer: ${item.error ?? "unknown"})`),
    h("h3", {}, "Citations"),
    item.citations.length ? h("ul", { class: "chips" }, ...item.citations.map((c) => h("li", { class: "chip cited" }, c))) : h("p", { class: "muted" }, "none"),
  );
  if (item.retrieved.length) {
    append(panel, h("h3", {}, "Retrieved chunks"));
    for (const chunk of item.retrieved) {
      const isCited = cited.has(chunk.chunk_id) || cited.has(chunk.doc);
      append(panel, h("details", { class: isCited ? "chunk cited" : "chunk" },
        h("summary", {}, `${chunk.chunk_id} · score ${chunk.score.toFixed(2)}${isCited ? " · cited" : ""}`),
        h("p", { class: "text" }, chunk.text)));
    }
  }
  const metrics = Object.entries(item.metrics);
  if (metrics.length) {
    append(panel, h("h3", {}, "Metrics"),
      h("table", { class: "kv" }, h("tbody", {}, ...metrics.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", { class: "num" }, fixed(v)))))));
  }
  for (const [judge, verdict] of Object.entries(item.verdicts)) {
    append(panel, h("section", { class: "verdict-block", "data-judge": judge },
      h("h3", {}, `Verdict: ${judge}`),
      // A score-only judge (statements, claims) has no label: its score is the verdict.
      verdict.label === null && verdict.score !== null
        ? h("p", { class: "verdict-label" }, h("strong", {}, `score ${fixed(verdict.score)}`))
        : h("p", { class: "verdict-label" }, h("strong", {}, verdict.label ?? "unscored"), ` · score ${fixed(verdict.score)}`),
      h("div", { class: "dist" }, ...Object.entries(verdict.distribution).map(([label, p]) =>
        h("div", { class: "bar", "data-outcome": label }, h("span", { class: "text" }, label),
          h("meter", { min: 0, max: 1, value: p }), h("span", { class: "num" }, fixed(p, 2))))),
      verdict.explanation ? h("p", { class: "text explanation" }, verdict.explanation) : null,
      verdict.error ? h("p", { class: "error" }, verdict.error) : null));
    // A statement judge's statements right under its own verdict (its sub-scores follow).
    const own = judged.find((j) => j.judge === judge);
    if (own) append(panel, statementSection(own));
  }
  for (const j of judged) {
    if (!(j.judge in item.verdicts)) append(panel, statementSection(j));
  }
}
