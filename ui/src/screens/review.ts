// Review of generated question/answer pairs: the pairs `assay generate` left in the dataset's
// questions.generated.jsonl, each with its document scope and quote. Per pair: Accept, Edit (the
// question and answer, then accept), or Reject; Apply sends the decisions to the core, which
// moves accepted pairs into the questions file. Everything a model wrote is shown as text.
import { api, errorText, Question } from "../api";
import { h, append, clear } from "../dom";
import { choiceLabel, outcomeText, PairChoice, reviewDecisions, tally } from "./reviewstate";

/**
 * Fill `section` with the pending pairs of the dataset at `root`; `message` is the outcome of
 * the last Apply (shown first). `reload` re-opens the dataset screen after Apply. Returns how
 * many pairs are pending, or null when they could not be read (the error is shown).
 */
export async function renderReview(section: HTMLElement, root: string, message: string,
  reload: (message: string) => Promise<void>): Promise<number | null> {
  clear(section);
  const status = h("p", { id: "review-status", "aria-live": "polite", tabindex: "-1" }, message);
  const error = h("p", { class: "error", id: "review-error", role: "alert" });
  append(section, h("h2", { id: "review-title" }, "Generated pairs to review"), status, error);
  let pairs: Question[];
  try {
    pairs = await api.pendingPairs(root);
  } catch (e) {
    error.textContent = errorText(e);
    return null;
  }
  if (pairs.length === 0) {
    append(section, h("p", { class: "muted", id: "review-empty" },
      "No generated pairs are waiting. ", h("code", {}, "assay generate DATASET --per-doc N"),
      " writes them to questions.generated.jsonl in the dataset folder."));
    return 0;
  }

  const choices = new Map<string, PairChoice>();
  const counts = h("span", { class: "muted", id: "review-tally" });
  const applyButton = h("button", { class: "primary", id: "review-apply", type: "button" }, "Apply decisions");
  const refresh = () => {
    counts.textContent = tally(pairs, choices);
    applyButton.disabled = choices.size === 0;
  };
  // A changed decision makes an error about the previous ones stale.
  const cards = pairs.map((pair) => pairCard(pair, choices, () => { error.textContent = ""; refresh(); }));
  applyButton.addEventListener("click", async () => {
    error.textContent = "";
    status.textContent = "Applying…";
    applyButton.disabled = true;
    try {
      const outcome = await api.applyReview(root, reviewDecisions(pairs, choices));
      await reload(outcomeText(outcome));
    } catch (e) {
      // Nothing changed on disk (the core checks every decision first): keep the choices so
      // the reviewer can fix the one the error names.
      status.textContent = "";
      error.textContent = errorText(e);
      refresh();
    }
  });
  append(section,
    h("p", { class: "muted" }, `${pairs.length} pending. Accepted pairs join the dataset's questions with the tag “reviewed”; rejected ones are dropped; undecided ones stay for later.`),
    h("div", { class: "actions review-bar" }, applyButton, counts),
    h("div", { class: "review-list", id: "review-pairs" }, ...cards));
  refresh();
  return pairs.length;
}

/** One pair as a card: what the model wrote, the buttons, and an inline editor. */
function pairCard(pair: Question, choices: Map<string, PairChoice>, changed: () => void): HTMLElement {
  const badge = h("span", { class: "badge" });
  const questionText = h("p", { class: "text pair-question" });
  const answerText = h("p", { class: "text pair-answer" });
  const accept = h("button", { type: "button", "data-action": "accept" }, "Accept");
  const edit = h("button", { type: "button", "data-action": "edit" }, "Edit");
  const reject = h("button", { type: "button", "data-action": "reject" }, "Reject");
  const buttons = h("div", { class: "actions" }, accept, edit, reject);

  const questionInput = h("textarea", { class: "edit-question", rows: 2, "aria-label": `question of ${pair.id}` });
  const answerInput = h("textarea", { class: "edit-answer", rows: 3, "aria-label": `answer of ${pair.id}` });
  const save = h("button", { type: "button", class: "primary", "data-action": "save" }, "Accept edited");
  const cancel = h("button", { type: "button", "data-action": "cancel" }, "Cancel");
  const editor = h("div", { class: "pair-editor", hidden: true },
    h("label", { class: "edit-field" }, h("span", {}, "Question"), questionInput),
    h("label", { class: "edit-field" }, h("span", {}, "Answer"), answerInput),
    h("div", { class: "actions" }, save, cancel));

  const texts = h("div", { class: "pair-fields" },
    h("span", { class: "field-name" }, "Question"), questionText,
    h("span", { class: "field-name" }, "Answer"), answerText);
  const card = h("article", { class: "review-pair", "data-pair": pair.id, "aria-label": `generated pair ${pair.id}` },
    h("header", {},
      h("span", { class: "mono pair-id" }, pair.id), badge,
      h("span", { class: "muted pair-scope" }, pair.doc ? `scoped to ${pair.doc}` : "any document"),
      pair.citations?.length ? h("span", { class: "muted" }, `cites ${pair.citations.join(", ")}`) : null,
      h("ul", { class: "chips pair-tags", "aria-label": "tags" }, ...(pair.tags ?? []).map((t) => h("li", { class: "chip" }, t)))),
    texts, editor,
    // The quote stays in view while editing: it is what the answer must agree with.
    h("div", { class: "pair-fields" },
      h("span", { class: "field-name" }, "Quote"), h("blockquote", { class: "text pair-quote" }, pair.context ?? "(no quote)")),
    buttons);

  const show = () => {
    const choice = choices.get(pair.id);
    const shown = choice?.decision === "accept" ? choice : { question: pair.question, answer: pair.answer ?? "" };
    questionText.textContent = shown.question;
    answerText.textContent = shown.answer;
    badge.textContent = choiceLabel(pair, choice);
    card.dataset.choice = choice?.decision ?? "undecided";
    accept.setAttribute("aria-pressed", String(choice?.decision === "accept"));
    reject.setAttribute("aria-pressed", String(choice?.decision === "reject"));
    changed();
  };
  // The editor takes the place of the question and answer, and its buttons of the card's.
  const closeEditor = () => { editor.hidden = true; texts.hidden = false; buttons.hidden = false; edit.focus(); };
  // A second press of a pressed button takes the decision back.
  accept.addEventListener("click", () => {
    if (choices.get(pair.id)?.decision === "accept") choices.delete(pair.id);
    else choices.set(pair.id, { decision: "accept", question: pair.question, answer: pair.answer ?? "" });
    show();
  });
  reject.addEventListener("click", () => {
    if (choices.get(pair.id)?.decision === "reject") choices.delete(pair.id);
    else choices.set(pair.id, { decision: "reject" });
    show();
  });
  edit.addEventListener("click", () => {
    const choice = choices.get(pair.id);
    const start = choice?.decision === "accept" ? choice : { question: pair.question, answer: pair.answer ?? "" };
    questionInput.value = start.question;
    answerInput.value = start.answer;
    editor.hidden = false;
    texts.hidden = true;
    buttons.hidden = true;
    questionInput.focus();
  });
  save.addEventListener("click", () => {
    choices.set(pair.id, { decision: "accept", question: questionInput.value, answer: answerInput.value });
    show();
    closeEditor();
  });
  cancel.addEventListener("click", closeEditor);
  // Escape leaves the editor unchanged; Ctrl+Enter accepts it, as the button does.
  editor.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); closeEditor(); }
    else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save.click(); }
  });
  show();
  return card;
}
