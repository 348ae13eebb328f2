import { describe, expect, it } from "vitest";
import { choiceLabel, isEdited, outcomeText, PairChoice, reviewDecisions, tally } from "../src/screens/reviewstate";
import type { Question } from "../src/api";

const pairs: Question[] = [
  { id: "gen-stove-01", question: "How long to boil 1 L?", answer: "3 min 30 s", doc: "stove", context: "boils in 3 minutes 30 seconds",
    citations: ["stove"], tags: ["generated", "scoped"] },
  { id: "gen-tent-01", question: "tent weight", answer: "2 kg", citations: ["tent"], tags: ["generated", "keyword"] },
  { id: "gen-tent-02", question: "Does the tent have <b>two</b> doors?", answer: "Yes", citations: ["tent"], tags: ["generated", "message"] },
];

describe("reviewDecisions", () => {
  it("sends nothing for undecided pairs", () => {
    expect(reviewDecisions(pairs, new Map())).toEqual([]);
  });

  it("sends edited text with the pair's id, scope, quote and tags unchanged, in list order", () => {
    const choices = new Map<string, PairChoice>([
      ["gen-tent-02", { decision: "reject" }],
      ["gen-stove-01", { decision: "accept", question: "How long does 1 L take to boil?", answer: "About 3.5 minutes." }],
    ]);
    expect(reviewDecisions(pairs, choices)).toEqual([
      { decision: "accept", question: { ...pairs[0], question: "How long does 1 L take to boil?", answer: "About 3.5 minutes." } },
      { decision: "reject", id: "gen-tent-02" },
    ]);
  });

  it("leaves empty text for the core to refuse rather than dropping the decision", () => {
    const choices = new Map<string, PairChoice>([["gen-tent-01", { decision: "accept", question: "tent weight", answer: "  " }]]);
    expect(reviewDecisions(pairs, choices)).toEqual([{ decision: "accept", question: { ...pairs[1], answer: "  " } }]);
  });
});

describe("labels", () => {
  it("tells an edited acceptance from a plain one", () => {
    const plain: PairChoice = { decision: "accept", question: pairs[1].question, answer: "2 kg" };
    const edited: PairChoice = { decision: "accept", question: pairs[1].question, answer: "2.1 kg" };
    expect(isEdited(pairs[1], plain)).toBe(false);
    expect(isEdited(pairs[1], edited)).toBe(true);
    expect(choiceLabel(pairs[1], undefined)).toBe("undecided");
    expect(choiceLabel(pairs[1], plain)).toBe("accept");
    expect(choiceLabel(pairs[1], edited)).toBe("accept (edited)");
    expect(choiceLabel(pairs[1], { decision: "reject" })).toBe("reject");
  });

  it("counts what Apply will do and words the core's outcome", () => {
    const choices = new Map<string, PairChoice>([["gen-tent-01", { decision: "reject" }]]);
    expect(tally(pairs, choices)).toBe("0 to accept, 1 to reject, 2 undecided");
    expect(outcomeText({ accepted: 1, rejected: 1, pending: 1 })).toBe("Accepted 1 pair into the dataset, rejected 1; 1 still pending.");
    expect(outcomeText({ accepted: 2, rejected: 0, pending: 0 })).toBe("Accepted 2 pairs into the dataset, rejected 0; 0 still pending.");
  });
});
