// Compare, pairwise: "which run's answer is better?" for the baseline and the first other run.
// Shows the judgments the core has stored for the two runs (if any); "Judge pairwise" calls the
// core's pairwise comparison (the same entry as `assay compare A B --pairwise`), with progress
// and Cancel (what is judged stays stored and is reused next time). Every figure (win/tie/loss,
// win rate and interval, p, verdict, order consistency, the win rate at equal length, each
// question's P(B) and, for a judge of each answer alone, the two scores) is the core's; this
// file only lays it out. Question ids, run names and error text go through `h()`, so they are
// text nodes, never markup.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { errorText, ListedModel, ModelsView } from "../api";
import { h } from "../dom";
import { count, fixed } from "../format";

interface LengthControlled { win_rate: number; slope: number }
interface PairwiseStatistics {
  pairs: number; unscored: number; wins: number; ties: number; losses: number;
  win_rate: number; win_rate_ci95: [number, number]; mean_preference: number; permutation_p: number;
  order_consistent: number; order_consistency: number; length_controlled: LengthControlled | null;
}
interface PairwiseJudgment {
  id: string; a_first: Record<string, number>; b_first: Record<string, number>;
  a_better?: number; b_better?: number; tie?: number; p_b?: number; order_consistent?: boolean; preferred?: "a" | "b" | "tie";
  scores?: [number, number]; words_a: number; words_b: number; flags?: string[]; error?: string;
}
export interface PairwiseOutcome {
  run_a: string; name_a: string; run_b: string; name_b: string; judge: string; judge_model: string;
  judgments: PairwiseJudgment[]; excluded: number; reused: number; judged: number;
  statistics: PairwiseStatistics | null; each_answer_alone: boolean; verdict: string; verdict_text: string; headline: string;
}
type PairwiseProgress =
  | { kind: "started"; pairs: number; reused: number }
  | { kind: "loading_judge"; model: string }
  | { kind: "judged"; question_id: string; done: number; missing: number; error: string | null };

const pValue = (p: number) => (p < 0.001 ? p.toExponential(1) : fixed(p, 4));

/** Which run an order's most probable reply names: with A's answer first, `1` is A. */
function orderWinner(distribution: Record<string, number>, aFirst: boolean): string {
  const [first, second, tie] = [distribution["1"] ?? 0, distribution["2"] ?? 0, distribution["tie"] ?? 0];
  if (Object.keys(distribution).length === 0) return "—";
  if (tie >= first && tie >= second) return "tie";
  return (first > second) === aFirst ? "A" : "B";
}

/** The section for runs `runA` (baseline) and `runB`, filled in once the stored outcome is read. */
export function pairwiseSection(runA: string, runB: string): HTMLElement {
  const section = h("section", { class: "pairwise", id: "pairwise", "data-testid": "pairwise" },
    h("h2", {}, "Pairwise: which answer is better?"),
    h("p", { class: "muted" }, "A judge model compares the two runs' answers to each question. correct (the default) reads each answer alone, with the same question, reference and prompt, and compares the two scores; better reads both side by side, once with each run's answer first, so a preference for a position cancels. Two judge readings per question."));
  const results = h("div", { class: "pairwise-results", "data-testid": "pairwise-results" });
  const models = h("select", { id: "pairwise-model", "aria-label": "judge model" }, h("option", { value: "" }, "default judge model"));
  const judges = h("select", { id: "pairwise-judge-name", "aria-label": "pairwise judge" },
    h("option", { value: "" }, "correct: each answer alone"),
    h("option", { value: "better" }, "better: side by side, both orders"));
  const judge = h("button", { id: "pairwise-judge" }, "Judge pairwise");
  const cancel = h("button", { id: "pairwise-cancel", hidden: true }, "Cancel");
  const bar = h("progress", { id: "pairwise-progress", max: 1, value: 0, hidden: true });
  const status = h("p", { id: "pairwise-status", class: "muted", "aria-live": "polite" });
  section.append(h("div", { class: "actions" }, h("label", {}, "Judge ", judges), " ", h("label", {}, "on ", models), " ", judge, " ", cancel), bar, status, results);

  void invoke<ModelsView>("list_models").then((view) => {
    for (const m of view.models.filter((m: ListedModel) => m.state !== "missing" && m.state !== "corrupt")) {
      models.append(h("option", { value: m.id }, m.id));
    }
  }).catch(() => undefined);
  void invoke<PairwiseOutcome | null>("stored_pairwise", { runA, runB }).then((outcome) => {
    if (outcome) { results.replaceChildren(outcomeView(outcome)); status.textContent = `Stored judgments (${count(outcome.judgments.length, "question")}).`; }
    else status.textContent = "Not judged pairwise yet.";
  }).catch((e) => { status.className = "error"; status.textContent = errorText(e); });

  cancel.addEventListener("click", () => {
    cancel.disabled = true;
    cancel.textContent = "Cancelling… (after the current question)";
    void invoke<boolean>("cancel_pairwise");
  });
  judge.addEventListener("click", async () => {
    judge.disabled = true;
    cancel.hidden = false;
    cancel.disabled = false;
    cancel.textContent = "Cancel";
    bar.hidden = false;
    bar.value = 0;
    status.className = "muted";
    status.textContent = "Starting…";
    const stop = await listen<PairwiseProgress>("pairwise-progress", ({ payload }) => {
      if (payload.kind === "started") status.textContent = `${count(payload.pairs, "question")} both runs answered; ${payload.reused} judged before.`;
      else if (payload.kind === "loading_judge") status.textContent = `Loading the judge model ${payload.model}…`;
      else {
        bar.max = Math.max(1, payload.missing);
        bar.value = payload.done;
        status.textContent = `Judged ${payload.done} of ${payload.missing} (${payload.question_id})${payload.error ? `: ${payload.error}` : ""}`;
      }
    });
    try {
      const outcome = await invoke<PairwiseOutcome>("judge_pairwise", { runA, runB, judge: judges.value || null, judgeModel: models.value || null });
      results.replaceChildren(outcomeView(outcome));
      status.textContent = `Done: ${outcome.judged} judged now, ${outcome.reused} reused.`;
    } catch (e) {
      status.className = "error";
      status.textContent = errorText(e);
    } finally {
      stop();
      judge.disabled = false;
      cancel.hidden = true;
      bar.hidden = true;
    }
  });
  return section;
}

function outcomeView(o: PairwiseOutcome): HTMLElement {
  const s = o.statistics;
  const figures = s === null ? h("p", { class: "muted" }, "No question could be judged.") : h("table", { class: "kv pairwise-figures" }, h("tbody", {},
    row("judge", `${o.judge} on ${o.judge_model}`),
    row(`${o.name_b} / tie / ${o.name_a} preferred`, `${s.wins} / ${s.ties} / ${s.losses}`, "wtl"),
    row(`win rate of ${o.name_b} [95% BCa]`, `${fixed(s.win_rate)} [${fixed(s.win_rate_ci95[0])}, ${fixed(s.win_rate_ci95[1])}]`, "win-rate"),
    row("p (paired permutation)", pValue(s.permutation_p), "p"),
    row("verdict", o.verdict_text, "verdict"),
    o.each_answer_alone
      ? row("order", "each answer judged alone: no order", "order-consistency")
      : row("same winner in both orders", `${fixed(100 * s.order_consistency, 0)}% (${s.order_consistent} of ${s.pairs})`, "order-consistency"),
    row("win rate at equal length", s.length_controlled ? `${fixed(s.length_controlled.win_rate)} (slope on length ${fixed(s.length_controlled.slope, 2)})` : "not read: one run's answer is the longer on nearly every question", "length-controlled"),
    o.excluded ? row("left out", count(o.excluded, "question")) : null));
  const notes = (j: PairwiseJudgment) => h("td", { class: "text" }, [...(j.flags ?? []), ...(j.error ? [`not judged: ${j.error}`] : [])].join("; "));
  const questions = o.each_answer_alone
    ? h("table", { class: "rows pairwise-questions" },
      h("thead", {}, h("tr", {}, ...["question", `P(${o.name_b} better)`, "score A / B", "words A / B", "notes"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...o.judgments.map((j) => h("tr", { "data-question": j.id },
        h("th", { class: "mono" }, j.id),
        h("td", { class: "num" }, j.p_b === undefined ? "—" : fixed(j.p_b)),
        h("td", { class: "num" }, j.scores ? `${fixed(j.scores[0])} / ${fixed(j.scores[1])}` : "—"),
        h("td", { class: "num" }, `${j.words_a} / ${j.words_b}`),
        notes(j)))))
    : h("table", { class: "rows pairwise-questions" },
      h("thead", {}, h("tr", {}, ...["question", `P(${o.name_b} better)`, "A first", "B first", "same winner", "words A / B", "notes"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...o.judgments.map((j) => h("tr", { "data-question": j.id, class: j.order_consistent ? "" : "flips" },
        h("th", { class: "mono" }, j.id),
        h("td", { class: "num" }, j.p_b === undefined ? "—" : fixed(j.p_b)),
        h("td", {}, orderWinner(j.a_first, true)),
        h("td", {}, orderWinner(j.b_first, false)),
        h("td", {}, j.p_b === undefined ? "—" : j.order_consistent ? "yes" : "no"),
        h("td", { class: "num" }, `${j.words_a} / ${j.words_b}`),
        notes(j)))));
  return h("div", {},
    h("p", { class: "headline", "data-testid": "pairwise-headline" }, o.headline),
    figures,
    h("details", { class: "pairwise-per-question" }, h("summary", {}, `Per question (${o.judgments.length})`), questions));
}

function row(label: string, value: string, key?: string): HTMLElement {
  return h("tr", key ? { "data-figure": key } : {}, h("th", {}, label), h("td", { class: "num" }, value));
}
