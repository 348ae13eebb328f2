// The job in flight drawn large, where the user started it (New run) or opened its run (the
// run page): bar, counts with the moving rate and ETA, the current question, running means,
// Cancel, and once it ends the way on (open the run, compare an experiment's runs). It reads
// the frame's store (jobstatus.ts), so leaving and coming back shows the same live progress.
import { h, append } from "../dom";
import { fixed } from "../format";
import { go, selection } from "../router";
import { cancelJob, currentJob, Job, jobCounts, watchJob } from "../jobstatus";

/** Draw the store's job into `panel` until the panel leaves the page; `ended` is called once
 *  when the job ends (finished, cancelled or failed). */
export function showJobProgress(panel: HTMLElement, ended: (job: Job) => void = () => undefined): void {
  panel.hidden = false;
  panel.replaceChildren();
  const bar = h("progress", { id: "progress-bar", max: 1, value: 0 });
  const counts = h("p", { id: "progress-counts" });
  const current = h("p", { class: "text muted", id: "progress-current" });
  const means = h("table", { class: "kv", id: "progress-means" });
  const problems = h("ul", { class: "errors" });
  const cancel = h("button", { id: "run-cancel", onclick: () => void cancelJob() }, "Cancel");
  const outcome = h("p", { id: "progress-outcome", "aria-live": "polite" });
  append(panel, bar, counts, current, means, cancel, outcome, problems);
  let over = false;
  const draw = (job: Job | null) => {
    if (!job) { panel.hidden = true; return; }
    bar.max = Math.max(1, job.total);
    bar.value = job.done;
    counts.textContent = jobCounts(job);
    current.textContent = job.question;
    means.replaceChildren(h("tbody", {}, ...Object.entries(job.means).map(([metric, mean]) =>
      h("tr", { "data-metric": metric }, h("th", {}, metric), h("td", { class: "num" }, fixed(mean))))));
    problems.replaceChildren(...job.problems.map((p) => h("li", { class: "error" }, p)));
    cancel.hidden = job.ended !== null || job.failed !== null;
    cancel.disabled = job.cancelling;
    cancel.textContent = job.cancelling ? "Cancelling… (after the current item)" : "Cancel";
    if (job.failed !== null && !over) {
      over = true;
      outcome.className = "error";
      outcome.textContent = job.failed;
      ended(job);
    } else if (job.ended && !over) {
      over = true;
      const { status, runId } = job.ended;
      const runIds = [...job.runIds];
      outcome.replaceChildren(`Run ${status}. `,
        h("button", { id: "open-finished", onclick: () => go({ screen: "run", run: runId }) }, "Open the run"));
      if (runIds.length > 1) {
        outcome.append(" ", h("button", {
          id: "compare-finished",
          onclick: () => { selection.clear(); runIds.forEach((r) => selection.add(r)); go({ screen: "compare", runs: runIds }); },
        }, `Compare the ${runIds.length} runs`));
      }
      ended(job);
    }
  };
  const stop = watchJob(draw);
  // The ETA moves with the clock between items; the timer ends with the panel.
  const tick = setInterval(() => {
    if (!panel.isConnected) { clearInterval(tick); stop(); return; }
    const job = currentJob();
    if (job && !job.ended && !job.failed) counts.textContent = jobCounts(job);
  }, 1000);
}
