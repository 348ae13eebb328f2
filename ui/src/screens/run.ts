// One run, most important first: the primary metric large with what it measures, then the
// other metrics in the report's groups (judges, answer overlap, citations and refusals,
// retrieval) with readable names and their descriptions on hover, the report's charts, and the
// sortable per-question table with a drill-down panel (question, reference, answer with
// citations, retrieved chunks, verdicts with what the score means, the statements a statement
// judge checked); flagged items carry a badge and are counted in the cards. A run this app is
// executing shows its live progress; Resume only where no process holds the run (the core's
// lease says).
import { api, errorText, RunItem, JsonRun, RunView, JudgedStatements, JudgeAgreement, MetricEntry, MetricSummary } from "../api";
import { open } from "@tauri-apps/plugin-dialog";
import { h, append, clear, svg } from "../dom";
import { fixed, interval, ms, when } from "../format";
import { go } from "../router";
import { keyboardRows } from "./table";
import { isRunning } from "../jobstatus";
import { showJobProgress } from "./jobprogress";
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
  // A run this window is executing: its live progress, and the page again once it ends.
  const live = h("section", { class: "progress", id: "run-live", hidden: true });
  if (isRunning(run.id)) {
    showJobProgress(live, () => { if (live.isConnected) go({ screen: "run", run: run.id }); });
  } else if (view.held) {
    actions.append(h("span", { class: "muted", id: "run-held" },
      "Another process (the CLI, or another window) is executing this run; open the page again to see its new items."));
  } else if (run.status !== "finished" || run.errors > 0) {
    // Unfinished, or finished with items whose target failed: a resume asks those again.
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
    live,
    cards(view),
    h("details", { class: "charts-block", id: "means" }, h("summary", {}, "Every mean with its interval"),
      h("section", { class: "charts" }, svg(view.means_chart))),
    h("details", { class: "charts-block", id: "histograms" }, h("summary", {}, `Score distributions (${view.histograms.length} metrics)`),
      h("section", { class: "charts grid" }, ...view.histograms.map(svg))),
    questions(view),
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

/** The pass rate in words: what share passed and by which rule. */
function passWords(m: MetricSummary): string | null {
  return m.pass_rate === undefined ? null : `${fixed(m.pass_rate * 100, 0)}% of scored answers passed the judge's threshold`;
}

/** One metric's card: readable name, the mean, its interval, n and unscored; the description on hover. */
function metricCard(entry: MetricEntry, m: MetricSummary, primary: boolean): HTMLElement {
  const passed = passWords(m);
  return h("div", { class: primary ? "card primary-card" : "card", "data-metric": entry.name, title: entry.description ?? entry.name },
    h("div", { class: "label" }, primary ? `${entry.label} · primary metric` : entry.label),
    h("div", { class: "value" }, fixed(m.mean)),
    h("div", { class: "sub" }, `95% ${interval(m.ci95)} · n=${m.n}`),
    primary && entry.description ? h("div", { class: "sub describe" }, entry.description) : null,
    passed ? h("div", { class: "sub pass-rate" }, passed) : null,
    m.length_spearman === undefined ? null
      : h("div", { class: "sub length-rho", title: "Spearman correlation of the judge's score with the answer's length in words" },
        `length ρ ${fixed(m.length_spearman, 2)}`),
    m.unscored > 0 ? h("div", { class: "sub warn" }, `${m.unscored} unscored`) : null);
}

function cards(view: RunView): HTMLElement {
  const run = view.run;
  const all = h("section", { id: "summary-cards" });
  const facts = h("div", { class: "cards facts" },
    h("div", { class: "card" }, h("div", { class: "label" }, "items"),
      h("div", { class: "value" }, `${run.items_done} / ${run.items_total}`),
      h("div", { class: run.errors > 0 ? "sub warn" : "sub" }, `${run.errors} errors`)),
    h("div", { class: "card" }, h("div", { class: "label" }, "avg latency"),
      h("div", { class: "value" }, ms(run.avg_latency_ms))),
  );
  const flagged = flaggedCard(run);
  if (flagged) facts.append(flagged);
  if (view.avg_prompt_tokens !== null || view.avg_completion_tokens !== null) {
    facts.append(h("div", { class: "card", id: "tokens-card" }, h("div", { class: "label" }, "tokens per item"),
      h("div", { class: "value" }, fixed(view.avg_completion_tokens, 0)),
      h("div", { class: "sub" }, `generated · ${fixed(view.avg_prompt_tokens, 0)} in the prompt`)));
  }
  const primary = view.guide.primary;
  const lead = h("div", { class: "lead" });
  if (primary && run.summary[primary.name]) lead.append(metricCard(primary, run.summary[primary.name], true));
  lead.append(facts);
  all.append(lead);
  for (const section of view.guide.sections) {
    const shown = section.metrics.filter((m) => run.summary[m.name]);
    if (!shown.length) continue;
    all.append(h("section", { class: "metric-group", "data-group": section.group },
      h("h3", {}, section.group),
      h("div", { class: "cards" }, ...shown.map((m) => metricCard(m, run.summary[m.name], false)))));
  }
  return all;
}

/** The metrics in the page's order (primary first), with their readable names. */
function orderedMetrics(view: RunView): MetricEntry[] {
  const entries = [view.guide.primary, ...view.guide.sections.flatMap((s) => s.metrics)].filter((m): m is MetricEntry => !!m);
  return entries.filter((m) => view.run.summary[m.name]);
}

function questions(view: RunView): HTMLElement {
  const run = view.run;
  const statements = view.statements ?? {};
  const metrics = orderedMetrics(view);
  const detail = h("aside", { class: "detail", id: "item-detail", "aria-live": "polite" },
    h("p", { class: "muted" }, "Select a question (↑/↓, Enter) to see its answer and scores."));
  const body = h("tbody");
  const value = (item: RunItem, metric: string) => item.metrics[metric] ?? item.verdicts[metric]?.score ?? null;
  run.items.forEach((item, index) => {
    const row = h("tr", { "data-index": String(index), "data-question": item.id },
      h("td", { class: "mono" }, item.id),
      h("td", { class: "question" }, flagBadges(item.flags, run.flag_meanings), item.question),
      ...metrics.map((m, i) => h("td", { class: i === 0 && view.guide.primary ? "num primary-col" : "num", "data-metric": m.name },
        fixed(value(item, m.name), 2))),
      h("td", { class: "num" }, item.latency_ms === null ? "—" : String(item.latency_ms)),
      h("td", { class: "error" }, item.error ?? ""));
    body.append(row);
  });
  // Sorting: a header click sorts by that column, a second click reverses; rows keep their
  // item index, so the drill-down and the keyboard follow the order shown.
  type Key = (item: RunItem) => number | string | null;
  const columns: { label: string; title?: string; key: Key; cls?: string }[] = [
    { label: "id", key: (i) => i.id },
    { label: "question", key: (i) => i.question },
    ...metrics.map((m, n) => ({ label: m.label, title: m.description ?? m.name, key: (i: RunItem) => value(i, m.name),
      cls: n === 0 && view.guide.primary ? "num primary-col" : "num" })),
    { label: "ms", key: (i) => i.latency_ms, cls: "num" },
    { label: "error", key: (i) => i.error ?? "" },
  ];
  let sorted = { column: -1, descending: false };
  const heads = columns.map((c, n) => {
    const th = h("th", { class: c.cls ?? "", title: c.title ?? `sort by ${c.label}`, "data-sort": "none" },
      h("button", { class: "sort", type: "button", onclick: () => sortBy(n) }, c.label));
    return th;
  });
  const sortBy = (n: number) => {
    sorted = { column: n, descending: sorted.column === n ? !sorted.descending : columns[n].cls?.includes("num") ?? false };
    const key = columns[n].key;
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const [x, y] = [key(run.items[Number(a.dataset.index)]), key(run.items[Number(b.dataset.index)])];
      // Missing values sort last whichever the direction.
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
      const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return sorted.descending ? -order : order;
    });
    body.append(...rows);
    heads.forEach((th, i) => th.setAttribute("data-sort", i === n ? (sorted.descending ? "descending" : "ascending") : "none"));
    heads.forEach((th, i) => th.setAttribute("aria-sort", i === n ? (sorted.descending ? "descending" : "ascending") : "none"));
  };
  const table = h("table", { class: "rows", id: "questions-table" }, h("thead", {}, h("tr", {}, ...heads)), body);
  const show = (row: HTMLTableRowElement) => {
    const item = run.items[Number(row.dataset.index)];
    showItem(detail, item, statements[item.id] ?? [], view);
  };
  const nav = keyboardRows(table, show, undefined, show);
  body.addEventListener("click", (e) => {
    const row = (e.target as Element).closest("tr");
    if (row) nav.select(Array.from(body.rows).filter((r) => !r.hidden).indexOf(row));
  });
  return h("section", { class: "split" }, h("div", { class: "scroll" }, table), detail);
}

function showItem(panel: HTMLElement, item: RunItem, judged: JudgedStatements[], view: RunView): void {
  clear(panel);
  const cited = new Set(item.citations);
  append(panel,
    h("h2", {}, item.id),
    flagNotice(item.flags, view.run.flag_meanings),
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
      // A score-only judge (statements, claims) has no label: its score is the verdict. A
      // choice judge's score is said for what it is ("score = P(Abstained)"), beside the label.
      verdict.label === null && verdict.score !== null
        ? h("p", { class: "verdict-label" }, h("strong", {}, `score ${fixed(verdict.score)}`))
        : h("p", { class: "verdict-label" }, h("strong", {}, verdict.label ?? "unscored"),
          ` · score ${fixed(verdict.score)}`,
          view.judges[judge] ? h("span", { class: "muted score-meaning" }, ` (${view.judges[judge].score_meaning})`) : null),
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
