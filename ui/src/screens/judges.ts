// The judge panel: every judge of a run against the labels given so far — accuracy, kappa,
// rank correlations, the confusion matrix, and how much the score follows answer length —
// and thresholds calibrated on those labels. The core computes all of it (`assay agree RUN`,
// `--calibrate`); this screen lays it out.
import { api, errorText, Agreement, JudgeAgreement, JudgePanel, PanelJudge } from "../api";
import { h, append, clear } from "../dom";
import { fixed } from "../format";
import { go } from "../router";
import "./labelling.css";

export async function renderJudges(area: HTMLElement, run: string): Promise<void> {
  const content = h("div", { id: "judges-content" });
  append(area,
    h("h1", { id: "judges-title" }, "Judges against your labels"),
    h("div", { class: "actions" }, h("button", { id: "back-to-run", onclick: () => go({ screen: "run", run }) }, "← Run")),
    content);
  const draw = async (calibrate: boolean) => {
    let panel: JudgePanel;
    try {
      panel = await api.judgePanel(run, calibrate);
    } catch (e) {
      clear(content);
      append(content, h("p", { class: "error" }, errorText(e)));
      return;
    }
    clear(content);
    const labels = panel.labels.labels;
    const n = (l: string) => labels.filter((x) => x.label === l).length;
    append(content,
      h("p", { id: "judges-labels" }, `${labels.length} of ${panel.labels.answered} answers labelled: ${n("correct")} correct, ${n("wrong")} wrong, ${n("skip")} skipped (skips are not compared).`),
      judgesNow(panel.judges));
    if (!panel.agreement) {
      append(content, h("p", { class: "muted", id: "judges-problem" }, panel.problem ?? "No agreement yet."));
      return;
    }
    append(content, agreementTable(panel.agreement.agreements), ...panel.agreement.agreements.map(confusion));
    const button = h("button", { id: "calibrate-from-labels", onclick: async () => {
      button.setAttribute("disabled", "");
      await draw(true);
    } }, "Calibrate thresholds from these labels");
    append(content,
      h("h2", {}, "Calibration"),
      h("p", { class: "muted" }, "Fits each judge's score cut points on these labels (the same as assay agree --calibrate) and saves a calibrated copy of the judge, which later runs use. This run's verdicts keep the labels they were given; the labelling screen shows each score's calibrated label beside them."),
      button);
    if (calibrate) append(content, calibrations(panel.agreement));
  };
  await draw(false);
}

/** Each judge of the run as its spec stands now: calibrated or not. */
function judgesNow(judges: PanelJudge[]): HTMLElement {
  return h("ul", { id: "judges-now", class: "plain" }, ...judges.map((j) => h("li", { "data-judge": j.name },
    h("strong", {}, j.name), ` (${j.outcomes.join(" < ")}${j.pass ? `, pass at ${j.pass}` : ""}): `,
    j.thresholds
      ? `calibrated, cut points ${j.thresholds.map((t) => fixed(t, 3)).join(", ")} on ${j.calibrated_on ?? "?"} labels (${j.source})`
      : `not calibrated: the label is the most probable outcome (${j.source})`)));
}

/** `judge@correct` rows compare a judge's pass / fail with the labels; plain rows its own outcomes. */
function comparedAs(a: Agreement): [string, string] {
  const [judge, base] = a.judge.split("@");
  return base ? [judge, "pass / fail"] : [judge, a.outcomes.join(" / ")];
}

function agreementTable(rows: Agreement[]): HTMLElement {
  const head = ["judge", "compared as", "labels", "unscored", "accuracy", "kappa", "score ρ with labels", "score ρ with length", ""];
  return h("table", { class: "data", id: "agreement-table" },
    h("thead", {}, h("tr", {}, ...head.map((c) => h("th", {}, c)))),
    h("tbody", {}, ...rows.map((a) => {
      const [judge, as] = comparedAs(a);
      return h("tr", { "data-judge": a.judge },
        h("td", {}, judge), h("td", {}, as), h("td", { class: "num" }, String(a.n)), h("td", { class: "num" }, String(a.unscored)),
        h("td", { class: "num" }, fixed(a.accuracy)), h("td", { class: "num" }, fixed(a.kappa)),
        h("td", { class: "num" }, fixed(a.label_spearman)), h("td", { class: "num" }, fixed(a.length_spearman)),
        h("td", { class: a.length_biased ? "warn" : "" }, a.length_biased ? "score follows length more than the labels" : ""));
    })));
}

function confusion(a: Agreement): HTMLElement {
  const [judge, as] = comparedAs(a);
  const passFail = as === "pass / fail";
  const outcomes = passFail ? ["fail", "pass"] : a.outcomes;
  // Your labels say wrong or correct, whatever the judge's scale.
  const yours = (o: string) => (passFail ? { fail: "wrong", pass: "correct" }[o] : { No: "wrong", Yes: "correct" }[o]) ?? o;
  return h("figure", { class: "confusion", "data-judge": a.judge },
    h("figcaption", {}, `${judge}: your labels (rows) against the judge (columns)`),
    h("table", { class: "data" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), ...outcomes.map((o) => h("th", {}, `judge: ${o}`)))),
      h("tbody", {}, ...a.confusion.map((row, i) => h("tr", {},
        h("th", {}, `you: ${yours(outcomes[i])}`),
        ...row.map((c, j) => h("td", { class: i === j ? "num agree" : "num" }, String(c))))))));
}

function calibrations(outcome: JudgeAgreement): HTMLElement {
  if (outcome.calibrations.length === 0) {
    return h("p", { class: "muted", id: "calibrations" }, "The labels do not fall on both sides of any threshold: nothing to calibrate yet.");
  }
  const head = ["judge", "labels", "cut points", "accuracy", "kappa", "calibrated copy"];
  return h("table", { class: "data", id: "calibrations" },
    h("thead", {}, h("tr", {}, ...head.map((c) => h("th", {}, c)))),
    h("tbody", {}, ...outcome.calibrations.map((c) => h("tr", { "data-judge": c.judge },
      h("td", {}, c.judge), h("td", { class: "num" }, String(c.labels)), h("td", {}, c.thresholds.map((t) => fixed(t)).join(", ")),
      h("td", {}, `${fixed(c.before.accuracy)} → ${fixed(c.after?.accuracy)}`),
      h("td", {}, `${fixed(c.before.kappa)} → ${fixed(c.after?.kappa)}`),
      h("td", {}, c.written ?? "not written: the labels say correct or wrong, the judge has more outcomes")))));
}
