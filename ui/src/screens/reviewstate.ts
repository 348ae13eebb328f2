// The review screen's own logic, kept apart from the DOM so it can be unit-tested: what the
// reviewer decided per pair, and turning that into the decisions the core applies. Whether an
// edited pair is acceptable (empty text, unknown document, id clashes) is the core's call.
import type { Question, ReviewDecision, ReviewOutcome } from "../api";
import { count } from "../format";

/** One pending pair's state in the screen; pairs without an entry are undecided. */
export type PairChoice =
  | { decision: "accept"; question: string; answer: string }
  | { decision: "reject" };

/** The decisions to send, in the order the pairs are listed; undecided pairs stay pending. */
export function reviewDecisions(pairs: Question[], choices: Map<string, PairChoice>): ReviewDecision[] {
  const decisions: ReviewDecision[] = [];
  for (const pair of pairs) {
    const choice = choices.get(pair.id);
    if (!choice) continue;
    if (choice.decision === "reject") {
      decisions.push({ decision: "reject", id: pair.id });
    } else {
      // Only the text is editable: the id, document and quote go back as generated.
      decisions.push({ decision: "accept", question: { ...pair, question: choice.question, answer: choice.answer } });
    }
  }
  return decisions;
}

/** True when an accepted pair's text differs from what the model wrote. */
export function isEdited(pair: Question, choice: PairChoice | undefined): boolean {
  return choice?.decision === "accept" && (choice.question !== pair.question || choice.answer !== (pair.answer ?? ""));
}

/** The per-pair badge: what will happen to it on Apply. */
export function choiceLabel(pair: Question, choice: PairChoice | undefined): string {
  if (!choice) return "undecided";
  if (choice.decision === "reject") return "reject";
  return isEdited(pair, choice) ? "accept (edited)" : "accept";
}

/** "1 to accept, 1 to reject, 1 undecided" above the Apply button. */
export function tally(pairs: Question[], choices: Map<string, PairChoice>): string {
  let accept = 0;
  let reject = 0;
  for (const pair of pairs) {
    const choice = choices.get(pair.id);
    if (choice?.decision === "accept") accept++;
    else if (choice?.decision === "reject") reject++;
  }
  return `${accept} to accept, ${reject} to reject, ${pairs.length - accept - reject} undecided`;
}

/** The core's outcome in words, shown after Apply. */
export function outcomeText(outcome: ReviewOutcome): string {
  return `Accepted ${count(outcome.accepted, "pair")} into the dataset, rejected ${outcome.rejected}; ` +
    `${outcome.pending} still pending.`;
}
