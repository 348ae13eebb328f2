// @vitest-environment happy-dom
// The run screen's flags and checked statements: what a reader sees, and that model text in them
// stays text (a statement or a flag holding markup must not become elements).
import { describe, expect, it } from "vitest";
import { flagBadges, flaggedCard, flaggedLines, flagNotice, statementSection } from "../src/screens/findings";
import type { JsonRun, JudgedStatements } from "../src/api";

const HOSTILE = `<img src=x onerror="alert(1)"><script>alert(2)</script>`;

function run(flagged?: Record<string, number>): JsonRun {
  return {
    id: "r1", name: "sloppy", dataset: "trailgear", created_at: "2026-11-26T14:00:00Z", status: "finished",
    config: { target: "answers:answers-sloppy.jsonl", metrics: [] }, items_total: 30, items_done: 30, errors: 0,
    avg_latency_ms: 1, summary: {}, items: [], flagged,
  };
}

const judged: JudgedStatements = {
  judge: "supported",
  answer: [
    { side: "answer", text: "The tent weighs 2.1 kg.", supported: 0.93, unsupported: false },
    { side: "answer", text: `It has three doors. ${HOSTILE}`, supported: 0.12, unsupported: true },
    { side: "answer", text: "It costs $40.", supported: 0, number_conflict: "$40 against $400 in the reference", unsupported: true },
  ],
  reference: [
    { side: "reference", text: "It packs into its own pocket.", supported: 0.31, unsupported: true },
  ],
  unsupported: 2,
  missed: 1,
};

describe("flags", () => {
  it("counts flagged answers per flag, and shows nothing for a run without any", () => {
    expect(flaggedLines(run({ "possible injection": 2 }))).toEqual(["2 of 30 answers flagged: possible injection"]);
    expect(flaggedLines(run())).toEqual([]);
    expect(flaggedCard(run())).toBeNull();
    const card = flaggedCard(run({ "possible injection": 2 }))!;
    expect(card.querySelector(".value")!.textContent).toBe("2 / 30");
    expect(card.textContent).toContain("2 of 30 answers flagged: possible injection");
  });

  it("puts a visible badge on a flagged item, none on another, each explained in the core's words", () => {
    expect(flagBadges(undefined, undefined)).toBeNull();
    expect(flagBadges([], undefined)).toBeNull();
    const meanings = { "possible injection": "looks like it addresses the grader", "states nothing": "scored 0 without the model" };
    const notice = flagNotice(["possible injection", "states nothing"], meanings)!;
    const badges = Array.from(notice.querySelectorAll(".flag"));
    expect(badges.map((b) => [b.textContent, b.getAttribute("title")])).toEqual([
      ["⚠ possible injection", "looks like it addresses the grader"],
      ["⚠ states nothing", "scored 0 without the model"],
    ]);
    expect(Array.from(notice.querySelectorAll("p")).map((p) => p.textContent)).toEqual([
      "possible injection: looks like it addresses the grader",
      "states nothing: scored 0 without the model",
    ]);
    // A flag the run does not explain gets the general word, not another flag's meaning.
    expect(flagBadges(["new flag"], meanings)!.querySelector(".flag")!.getAttribute("title")).toContain("A deterministic check flagged");
  });

  it("shows a flag that holds markup as text", () => {
    const badges = flagBadges([HOSTILE], { [HOSTILE]: HOSTILE })!;
    expect(badges.querySelector("img, script")).toBeNull();
    expect(badges.textContent).toBe(`⚠ ${HOSTILE}`);
  });
});

describe("statements", () => {
  const section = statementSection(judged);
  const items = Array.from(section.querySelectorAll("li.statement"));

  it("lists every statement of both sides in order, unsupported and missed ones marked with their probability", () => {
    expect(section.querySelector("h3")!.textContent).toBe("Statements: supported");
    expect(section.querySelector(".statements-tally")!.textContent)
      .toBe("2 of 3 answer statements unsupported · 1 of 1 reference statements missed");
    expect(items.map((li) => [li.getAttribute("data-side"), li.classList.contains("unsupported"), li.querySelector(".tag")!.textContent,
      li.querySelector(".p")!.textContent])).toEqual([
      ["answer", false, "supported", "0.93"],
      ["answer", true, "unsupported", "0.12"],
      ["answer", true, "unsupported", "0.00"],
      ["reference", true, "missed", "0.31"],
    ]);
    expect(items[2].querySelector(".conflict")!.textContent).toBe("number conflict: $40 against $400 in the reference");
    expect(items[0].querySelector(".conflict")).toBeNull();
  });

  it("keeps statement text as text", () => {
    expect(section.querySelector("img, script")).toBeNull();
    expect(items[1].querySelector(".text")!.textContent).toBe(`It has three doors. ${HOSTILE}`);
  });

  it("leaves out a side with no statements", () => {
    const answerOnly = statementSection({ ...judged, reference: [], missed: 0 });
    expect(answerOnly.querySelectorAll("h4").length).toBe(1);
    expect(answerOnly.querySelector("li[data-side=reference]")).toBeNull();
  });
});
