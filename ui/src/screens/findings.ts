// What the run screen shows beside the scores so a reader knows which to distrust: the flags
// deterministic checks set, each explained in the core's words (a "possible injection" answer
// keeps its scores, so it must be seen; one that "states nothing" was scored 0 without a model),
// and each statement judge's checked statements with the unsupported ones marked. Which
// statements count as unsupported is the core's rule (`JudgedStatements`); this only lays them
// out. Statement text is the model's or the dataset's: it goes in as text nodes (dom.ts).
import type { JsonRun, JudgedStatements, ShownStatement } from "../api";
import { h } from "../dom";
import { fixed } from "../format";

/** What a flag means, as the run's JSON says; a flag from an older core gets the general word. */
export type FlagMeanings = Record<string, string> | undefined;
const meaningOf = (flag: string, meanings: FlagMeanings): string =>
  meanings?.[flag] ?? "A deterministic check flagged this item: read it before trusting its scores.";

/** "2 of 30 answers flagged: possible injection", one line per flag the run's items carry. */
export function flaggedLines(run: JsonRun): string[] {
  const noun = run.items_done === 1 ? "answer" : "answers";
  return Object.entries(run.flagged ?? {}).map(([flag, n]) => `${n} of ${run.items_done} ${noun} flagged: ${flag}`);
}

/** The summary card counting flagged items; null when no item is flagged. */
export function flaggedCard(run: JsonRun): HTMLElement | null {
  const entries = Object.entries(run.flagged ?? {});
  if (!entries.length) return null;
  const most = Math.max(...entries.map(([, n]) => n));
  return h("div", { class: "card flagged-card", id: "flagged-card", title: entries.map(([flag]) => `${flag}: ${meaningOf(flag, run.flag_meanings)}`).join("\n") },
    h("div", { class: "label" }, "flagged"),
    h("div", { class: "value" }, `${most} / ${run.items_done}`),
    ...flaggedLines(run).map((line) => h("div", { class: "sub warn" }, line)));
}

/** A visible badge per flag on an item, its meaning as the tooltip; null when it has none. */
export function flagBadges(flags: string[] | undefined, meanings: FlagMeanings): HTMLElement | null {
  if (!flags?.length) return null;
  return h("span", { class: "flags" }, ...flags.map((flag) => h("span", { class: "flag", title: meaningOf(flag, meanings), "data-flag": flag }, `⚠ ${flag}`)));
}

/** The drill-down's notice for a flagged item: the badges and what each means. */
export function flagNotice(flags: string[] | undefined, meanings: FlagMeanings): HTMLElement | null {
  const badges = flagBadges(flags, meanings);
  if (!badges || !flags) return null;
  return h("div", { class: "flag-notice", id: "flag-notice" }, badges,
    ...flags.map((flag) => h("p", { class: "muted" }, `${flag}: ${meaningOf(flag, meanings)}`)));
}

/** One statement judge's statements: the answer's, checked against the reference, then the
 * reference's, checked against the answer; unsupported and missed ones marked with their
 * probability of being supported and any number the reference contradicts. */
export function statementSection(judged: JudgedStatements): HTMLElement {
  return h("section", { class: "statements-block", "data-judge": judged.judge },
    h("h3", {}, `Statements: ${judged.judge}`),
    h("p", { class: "muted statements-tally" },
      `${judged.unsupported} of ${judged.answer.length} answer statements unsupported · `
      + `${judged.missed} of ${judged.reference.length} reference statements missed`),
    list("Answer, checked against the reference", judged.answer, "unsupported", "supported"),
    list("Reference, checked against the answer", judged.reference, "missed", "found"));
}

function list(title: string, statements: ShownStatement[], bad: string, good: string): HTMLElement | null {
  if (!statements.length) return null;
  return h("div", { class: "statement-list" },
    h("h4", {}, title),
    h("ol", { class: "statements" }, ...statements.map((s) =>
      h("li", { class: s.unsupported ? "statement unsupported" : "statement", "data-side": s.side },
        // Verdict over probability in one narrow column: the text keeps the width in a narrow panel.
        h("span", { class: "meta" },
          h("span", { class: "tag" }, s.unsupported ? bad : good),
          h("span", { class: "p num", title: "probability that it is supported" }, fixed(s.supported, 2))),
        h("span", { class: "text" }, s.text),
        s.number_conflict ? h("div", { class: "conflict" }, `number conflict: ${s.number_conflict}`) : null))));
}
