// Compare: two or more runs, each against the first (the baseline). Per comparison: the core's
// headline on the primary metric, what differs between the runs (the core's settings diff, the
// differing settings shown and the identical ones behind a toggle, with the warning when more
// than one setting changed and the verdicts are confounded), the difference plot (each
// metric's B − A with its interval and verdict), then per metric both means, the paired
// difference, the core's verdict, wins/ties/losses, the permutation test's p and its adjusted
// p; the questions where the runs disagree most, side by side. Then the question × run grid:
// one row per question with every metric of every run, failures on the primary metric marked,
// with a failures-only filter.
import { api, errorText, Comparison, GroupDiff, LeaderboardRow, PairedDiff, QuestionGrid, RunRecord, SettingsDiff, SideBySide } from "../api";
import { h, append, svg } from "../dom";
import { fixed, signed, when, withInterval } from "../format";
import { go, selection } from "../router";
import { differencePlot } from "./diffplot";
import { pairwiseSection } from "./compare_pairwise";

export async function renderCompare(area: HTMLElement, runs: string[]): Promise<void> {
  append(area, h("h1", {}, "Compare"));
  const all = await api.listRuns().catch(() => [] as RunRecord[]);
  append(area, picker(all, runs));
  if (runs.length < 2) {
    append(area, h("p", { class: "muted" }, "Tick two or more runs (the first is the baseline) and press Compare."));
    return;
  }
  let view;
  try {
    view = await api.compareRuns(runs);
  } catch (e) {
    append(area, h("p", { class: "error" }, errorText(e)));
    return;
  }
  const board = view.leaderboard ? leaderboardTable(view.leaderboard.metric, view.leaderboard.rows, view.leaderboard.notes) : null;
  // With several runs the ranking leads; with two the comparison itself says it all first.
  if (board && view.comparisons.length > 1) append(area, board);
  // The core names every metric once, in the grid; the plot and the tables read the same names.
  const names = new Map(view.grid.metrics.map((m, i) => [m, view.grid.labels[i] ?? m]));
  const label = (metric: string) => names.get(metric) ?? metric;
  view.comparisons.forEach((c, i) => append(area, comparisonTable(c, label), breakdownTable(c, view.breakdowns[i] ?? []), sideBySide(c, view.side_by_side[i] ?? [])));
  append(area, questionGrid(view.grid, view.runs));
  if (board && view.comparisons.length === 1) append(area, board);
  append(area, h("h2", {}, "Means with 95% intervals"), h("section", { class: "charts" }, ...view.charts.map(svg)));
  append(area, pairwiseSection(runs[0], runs[1]));
}

function picker(all: RunRecord[], chosen: string[]): HTMLElement {
  const order = [...chosen];
  const list = h("div", { class: "picker", id: "compare-picker" });
  // Folded away once runs are chosen: the comparison, not the list, belongs above the fold.
  const fold = h("details", { class: "compare-picker", open: chosen.length < 2 },
    h("summary", {}, chosen.length < 2 ? "Runs to compare" : `Change the runs compared (${chosen.length} of ${all.length})`), list);
  for (const run of all) {
    const box = h("input", { type: "checkbox", value: run.id, checked: chosen.includes(run.id) });
    box.addEventListener("change", () => {
      if (box.checked) { if (!order.includes(run.id)) order.push(run.id); } else order.splice(order.indexOf(run.id), 1);
    });
    list.append(h("label", {}, box, ` ${run.name} `, h("span", { class: "muted" }, `${run.id} · ${when(run.created_at)}`)));
  }
  list.append(h("div", { class: "actions" }, h("button", {
    id: "compare-go",
    onclick: () => { selection.clear(); order.forEach((r) => selection.add(r)); go({ screen: "compare", runs: order }); },
  }, "Compare")));
  return fold;
}

/** Both runs' settings, the differing rows marked; the core's warning when they confound. */
function settingsTable(c: Comparison): HTMLElement {
  const s: SettingsDiff = c.settings;
  const summary = s.differing.length === 0 ? "The runs' settings are the same: differences are run-to-run variation."
    : s.differing.length === 1 ? `The runs differ in ${s.differing[0]} only: that is the factor compared.` : null;
  // The differing settings are what a reader needs; the identical ones wait behind a toggle.
  const rows = s.rows.map((r) => h("tr", { "data-setting": r.setting, class: r.differs ? "differs" : "same", hidden: !r.differs },
    h("th", {}, r.setting), h("td", { class: "text" }, r.a), h("td", { class: "text" }, r.b)));
  const same = s.rows.filter((r) => !r.differs).length;
  const toggle = h("button", { class: "same-toggle", type: "button", "aria-expanded": "false", "data-testid": "same-toggle" },
    `Show the ${same} settings that are the same in both`);
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    toggle.textContent = open ? `Hide the ${same} settings that are the same in both` : `Show the ${same} settings that are the same in both`;
    rows.forEach((row, i) => { row.hidden = !open && !s.rows[i].differs; });
  });
  return h("section", { class: "settings", "data-testid": "settings" },
    s.warning ? h("p", { class: "warn confound", "data-testid": "confound-warning" }, s.warning) : h("p", { class: "muted", "data-testid": "settings-summary" }, summary),
    h("table", { class: "rows settings-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "setting"), h("th", {}, `A: ${c.name_a}`), h("th", {}, `B: ${c.name_b}`))),
      h("tbody", {}, ...rows)),
    same > 0 ? toggle : null);
}

function comparisonTable(c: Comparison, label: (metric: string) => string): HTMLElement {
  // With no question scored in both runs nothing was tested: the core's p of 1 and 0/0/0 say
  // nothing about the runs, so the row shows dashes instead.
  const untested = (d: PairedDiff, text: string) => (d.pairs === 0 ? "—" : text);
  const rows = c.diffs.map((d) => h("tr", { "data-metric": d.metric, class: d.primary ? "primary" : "" },
    h("th", { title: d.metric }, d.primary ? `${label(d.metric)} (primary)` : label(d.metric)),
    h("td", { class: "num" }, withInterval(d.mean_a, d.ci95_a)),
    h("td", { class: "num" }, withInterval(d.mean_b, d.ci95_b)),
    h("td", { class: "num" }, withInterval(d.mean_diff, d.ci95_diff, signed)),
    h("td", { class: `verdict ${d.verdict}${c.settings.confounded ? " confounded" : ""}` }, d.verdict_text),
    h("td", { class: "num" }, untested(d, `${d.wins} / ${d.ties} / ${d.losses}`)),
    h("td", { class: "num" }, untested(d, pValue(d.permutation_p))),
    h("td", { class: "num" }, d.primary ? "—" : untested(d, pValue(d.adjusted_p))),
    h("td", { class: "num pairs" }, `${d.pairs}${d.excluded ? ` (+${d.excluded} unpaired)` : ""}`)));
  return h("section", { class: "comparison" },
    h("h2", {}, `A = ${c.name_a} (baseline), B = ${c.name_b}`),
    h("p", { class: "headline", "data-testid": "headline" }, c.headline),
    settingsTable(c),
    c.same_dataset ? null : h("p", { class: "warn" }, "The runs used different versions of the dataset; questions are paired by id."),
    differencePlot(c, label),
    h("table", { class: "rows comparison-table" },
      h("thead", {}, h("tr", {}, ...["metric", "A mean [95%]", "B mean [95%]", "B − A [95% BCa]", "verdict", "wins / ties / losses", "p", "Holm p", "pairs"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows)),
    h("p", { class: "muted" }, "p: paired permutation test. Holm p: adjusted over the secondary metrics, never below the primary's p; a verdict needs it under 0.05 and the interval off zero."));
}

function breakdownTable(c: Comparison, groups: GroupDiff[]): HTMLElement | null {
  if (groups.length === 0) return null;
  return h("section", { class: "breakdown" },
    h("h3", {}, `${c.primary ?? "primary metric"} by question tag (exploratory)`),
    h("p", { class: "muted" }, "Each tag's difference with its interval and p; BH p adjusted across the tags. For finding questions to read, not for verdicts."),
    h("table", { class: "rows" },
      h("thead", {}, h("tr", {}, ...["tag", "n", "A", "B", "B − A [95%]", "p", "BH p"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...groups.map((g) => h("tr", {},
        h("th", {}, g.group),
        h("td", { class: "num" }, String(g.pairs)),
        h("td", { class: "num" }, fixed(g.mean_a)),
        h("td", { class: "num" }, fixed(g.mean_b)),
        h("td", { class: "num" }, withInterval(g.mean_diff, g.ci95_diff, signed)),
        h("td", { class: "num" }, pValue(g.permutation_p)),
        h("td", { class: "num" }, pValue(g.adjusted_p)))))));
}

function leaderboardTable(metric: string, rows: LeaderboardRow[], notes: string[]): HTMLElement {
  return h("section", { class: "leaderboard", id: "leaderboard" },
    h("h2", {}, `Leaderboard: ${metric} (primary metric)`),
    h("p", { class: "muted" }, "Mean with its 95% interval, each run on its own (unpaired); runs whose intervals overlap share a rank. The comparisons below test the same questions paired."),
    ...notes.map((n) => h("p", { class: "warn leaderboard-note" }, n)),
    h("table", { class: "rows" },
      h("thead", {}, h("tr", {}, ...["rank", "run", `${metric} [95%]`, "n"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...rows.map((r) => h("tr", { "data-run": r.run },
        h("td", { class: "num" }, String(r.rank)),
        h("th", {}, r.name),
        h("td", { class: "num" }, withInterval(r.mean, r.ci95)),
        h("td", { class: "num" }, String(r.n)))))));
}

/** Small p-values in scientific notation, so "0.000" never hides how small. */
const pValue = (p: number) => (p < 0.001 ? p.toExponential(1) : fixed(p, 4));

function sideBySide(c: Comparison, items: SideBySide[]): HTMLElement {
  const section = h("section", { class: "disagreements" }, h("h3", {}, "Where they disagree most"));
  for (const item of items) {
    section.append(h("article", { class: "pair" },
      h("header", {}, h("span", { class: "mono" }, item.question_id), ` · ${item.metric}: `, `${fixed(item.score_a, 2)} → ${fixed(item.score_b, 2)}`),
      h("p", { class: "text question" }, item.question),
      h("p", { class: "text muted" }, `Reference: ${item.reference ?? "(should decline)"}`),
      h("div", { class: "two" },
        h("div", {}, h("h4", {}, c.name_a), h("p", { class: "text" }, item.answer_a ?? "(no answer)")),
        h("div", {}, h("h4", {}, c.name_b), h("p", { class: "text" }, item.answer_b ?? "(no answer)")))));
  }
  if (items.length === 0) section.append(h("p", { class: "muted" }, "No question scored differently."));
  return section;
}

/** One row per question, every metric of every run in one cell per metric (one line per run),
 *  the primary metric first; failures on the primary (the core's rule) marked, and a filter
 *  that keeps the questions some run failed. */
function questionGrid(grid: QuestionGrid, runs: RunRecord[]): HTMLElement {
  const failuresOnly = h("input", { type: "checkbox", id: "grid-failures-only" });
  const count = h("span", { class: "muted", id: "grid-count" });
  const body = h("tbody", {}, ...grid.rows.map((row) => h("tr", {
    "data-question": row.question_id, class: row.failed.some(Boolean) ? "has-failure" : "",
  },
    h("td", { class: "mono" }, row.question_id),
    h("td", { class: "question", title: row.question }, row.question),
    ...grid.metrics.map((metric, m) => h("td", { class: m === 0 ? "scores primary-col" : "scores", "data-metric": metric },
      ...runs.map((run, r) => h("span", {
        class: m === 0 && row.failed[r] ? "fail" : "",
        title: `${run.name}: ${grid.labels[m] ?? metric} ${fixed(row.scores[r]?.[m] ?? null)}${row.errors[r] ? ` (error: ${row.errors[r]})` : ""}`,
      }, m === 0 && row.errors[r] ? "error" : fixed(row.scores[r]?.[m] ?? null, 2))))))));
  const apply = () => {
    let shown = 0;
    for (const tr of Array.from(body.rows)) {
      tr.hidden = failuresOnly.checked && !tr.classList.contains("has-failure");
      if (!tr.hidden) shown += 1;
    }
    count.textContent = `${shown} of ${grid.rows.length} questions`;
  };
  failuresOnly.addEventListener("change", apply);
  apply();
  return h("section", { class: "grid-section", id: "question-grid" },
    h("h2", {}, "Questions × runs"),
    h("p", { class: "muted grid-legend" },
      `Each cell lists the runs top to bottom: ${runs.map((r, i) => `${i === 0 ? "A" : String.fromCharCode(65 + i)} = ${r.name}`).join(", ")}. `
      + `${grid.labels[0] ?? "The primary metric"} comes first; a red score failed it (the judge's pass rule, else under ${grid.fails_below}).`),
    h("div", { class: "filters" }, h("label", {}, failuresOnly, " failures only"), count),
    h("div", { class: "grid-scroll" }, h("table", { class: "rows question-grid" },
      h("thead", {}, h("tr", {}, h("th", {}, "id"), h("th", {}, "question"),
        // A break after each underscore: long metric names wrap at word parts, not mid-word.
        ...grid.metrics.map((m, i) => h("th", { class: i === 0 ? "metric primary-col" : "metric", "data-metric": m, title: m }, grid.labels[i] ?? m)))),
      body)));
}
