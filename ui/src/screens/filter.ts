// Filtering the Datasets table: all conditions must hold; text matches id, question or reference.
import { Question } from "../api";

export interface QuestionFilter { text: string; tag: string; doc: string; refuse: "" | "yes" | "no" | string }

export function filterQuestions(questions: Question[], f: QuestionFilter): Question[] {
  const needle = f.text.trim().toLowerCase();
  return questions.filter((q) =>
    (!f.tag || (q.tags ?? []).includes(f.tag)) &&
    (!f.doc || q.doc === f.doc) &&
    (f.refuse === "" || (f.refuse === "yes") === !!q.refuse) &&
    (!needle || [q.id, q.question, q.answer ?? ""].some((s) => s.toLowerCase().includes(needle))));
}
