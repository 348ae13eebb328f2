// Compare's difference plot: each metric's B − A as a point with its paired 95% interval on one
// axis around zero, and the core's verdict beside it, so the whole comparison reads at a glance
// above the tables. The figures are the core's (PairedDiff); this only places them. Built with
// DOM calls (no markup parsing, no inline styles: the CSP allows neither).
import type { Comparison, PairedDiff } from "../api";
import { signed, interval } from "../format";

const NS = "http://www.w3.org/2000/svg";
const WIDTH = 800;
const LABEL = 150;
const PLOT = 300;
const ROW = 24;
const TOP = 26;

function el<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The smallest of 0.05, 0.1, 0.2, 0.5, 1 that holds every interval (scores lie in [0, 1], so
 *  a difference never passes 1). */
export function plotRange(diffs: PairedDiff[]): number {
  const reach = Math.max(0, ...diffs.flatMap((d) => [d.ci95_diff[0], d.ci95_diff[1], d.mean_diff])
    .filter((v): v is number => v !== null && Number.isFinite(v)).map(Math.abs));
  return [0.05, 0.1, 0.2, 0.5, 1].find((r) => reach <= r) ?? 1;
}

export function differencePlot(c: Comparison, label: (metric: string) => string = (m) => m): SVGSVGElement {
  const diffs = c.diffs.filter((d) => d.pairs > 0 && d.mean_diff !== null);
  const range = plotRange(diffs);
  const height = TOP + ROW * diffs.length + 8;
  const x = (v: number) => LABEL + ((Math.max(-range, Math.min(range, v)) + range) / (2 * range)) * PLOT;
  const svg = el("svg", { viewBox: `0 0 ${WIDTH} ${height}`, class: "diff-plot", role: "img", "data-testid": "difference-plot",
    "aria-label": `B − A per metric with 95% paired intervals; ${c.name_b} minus ${c.name_a}` });
  svg.append(el("text", { x: LABEL, y: 12, class: "tick", "text-anchor": "middle" }, signed(-range)));
  svg.append(el("text", { x: LABEL + PLOT / 2, y: 12, class: "tick", "text-anchor": "middle" }, "0"));
  svg.append(el("text", { x: LABEL + PLOT, y: 12, class: "tick", "text-anchor": "middle" }, signed(range)));
  svg.append(el("text", { x: LABEL + PLOT + 32, y: 12, class: "head" }, "B − A [95% paired]"));
  svg.append(el("text", { x: LABEL + PLOT + 212, y: 12, class: "head" }, "verdict"));
  svg.append(el("line", { x1: x(0), x2: x(0), y1: 16, y2: height - 4, class: "zero" }));
  diffs.forEach((d, i) => {
    const y = TOP + ROW * i + ROW / 2;
    const [lo, hi] = d.ci95_diff;
    const row = el("g", { class: `diff-row ${d.verdict}${d.primary ? " primary" : ""}${c.settings.confounded ? " confounded" : ""}`, "data-metric": d.metric });
    row.append(el("text", { x: LABEL - 8, y: y + 4, class: "label", "text-anchor": "end" }, d.primary ? `${label(d.metric)} (primary)` : label(d.metric)));
    if (lo !== null && hi !== null) row.append(el("line", { x1: x(lo), x2: x(hi), y1: y, y2: y, class: "interval" }));
    row.append(el("circle", { cx: x(d.mean_diff as number), cy: y, r: 4, class: "point" }));
    row.append(el("text", { x: LABEL + PLOT + 32, y: y + 4, class: "value" }, `${signed(d.mean_diff)} ${interval(d.ci95_diff)}`));
    row.append(el("text", { x: LABEL + PLOT + 212, y: y + 4, class: "verdict-text" }, shortVerdict(d)));
    row.append(el("title", {}, `${label(d.metric)}: B − A ${signed(d.mean_diff)} ${interval(d.ci95_diff)}; ${d.verdict_text}`));
    svg.append(row);
  });
  return svg;
}

/** The verdict in a few words for the plot; the full sentence is on hover and in the table. */
function shortVerdict(d: PairedDiff): string {
  switch (d.verdict) {
    case "b_better": return "B better";
    case "a_better": return "A better";
    case "too_few_pairs": return "too few pairs";
    case "no_pairs": return "no pairs";
    default: return "not significant";
  }
}
