import { describe, expect, it } from "vitest";
import { filterQuestions } from "../src/screens/filter";
import type { Question } from "../src/api";

const questions: Question[] = [
  { id: "q1", question: "How long to boil?", answer: "3 min", doc: "stove", tags: ["factual", "numeric"] },
  { id: "q2", question: "Tent weight", answer: "2 kg", doc: "tent", tags: ["factual"] },
  { id: "q3", question: "Is it safe to eat?", doc: "stove", refuse: true, tags: ["safety"] },
];
const none = { text: "", tag: "", doc: "", refuse: "" };

describe("filterQuestions", () => {
  it("keeps everything without conditions", () => {
    expect(filterQuestions(questions, none).map((q) => q.id)).toEqual(["q1", "q2", "q3"]);
  });
  it("combines tag, doc and refuse", () => {
    expect(filterQuestions(questions, { ...none, tag: "factual", doc: "stove" }).map((q) => q.id)).toEqual(["q1"]);
    expect(filterQuestions(questions, { ...none, refuse: "yes" }).map((q) => q.id)).toEqual(["q3"]);
    expect(filterQuestions(questions, { ...none, refuse: "no" }).map((q) => q.id)).toEqual(["q1", "q2"]);
  });
  it("matches text in id, question and reference, ignoring case", () => {
    expect(filterQuestions(questions, { ...none, text: "2 KG" }).map((q) => q.id)).toEqual(["q2"]);
    expect(filterQuestions(questions, { ...none, text: "q3" }).map((q) => q.id)).toEqual(["q3"]);
  });
});
