// The work in flight, kept by the app's frame: one store of the run (or experiment) the shell is
// executing, fed by its `run-progress` events from the moment the app starts, so progress
// survives moving between screens. The frame shows it in the sidebar on every screen (name,
// bar, items, moving rate, an ETA that keeps moving between items, Cancel); New run and the run
// page subscribe to the same store instead of listening on their own.
import { listen } from "@tauri-apps/api/event";
import { api, ProgressEvent, RunStatus, StartRequest, StartedRuns } from "./api";
import { h, clear } from "./dom";
import { duration } from "./format";
import { liveEta } from "./eta";
import { go } from "./router";

export interface Job {
  /** The experiment's runs in the order they started; the last one is under way. */
  runIds: string[];
  names: Record<string, string>;
  /** How many runs the core planned (1 for a single run). */
  planned: number;
  total: number;
  done: number;
  rate: number;
  windowItems: number;
  windowS: number;
  /** When the latest item finished (or the run started), in ms since the epoch. */
  lastDoneAt: number;
  question: string;
  /** What became of the retrieval index and its vectors for the run under way (the core's line). */
  index: string | null;
  means: Record<string, number>;
  problems: string[];
  /** Set once the last run ended (finished, cancelled or failed before the end). */
  ended: { status: RunStatus; runId: string } | null;
  failed: string | null;
  cancelling: boolean;
}

let job: Job | null = null;
const watchers = new Set<(job: Job | null) => void>();

/** The job in flight or the last one that ended (until the next starts). */
export const currentJob = (): Job | null => job;

/** Whether `runId` belongs to a job still under way in this app. */
export const isRunning = (runId: string): boolean => job !== null && job.ended === null && job.failed === null && job.runIds.includes(runId);

/** Call `watch` now and on every change; returns the function that stops watching. */
export function watchJob(watch: (job: Job | null) => void): () => void {
  watchers.add(watch);
  watch(job);
  return () => watchers.delete(watch);
}

function changed(): void {
  for (const watch of [...watchers]) watch(job);
}

/** Start a run (or experiment) through the shell; the store follows it from here. */
export async function startJob(request: StartRequest): Promise<StartedRuns> {
  job = {
    runIds: [], names: {}, planned: 1, total: 0, done: 0, rate: 0, windowItems: 0, windowS: 0,
    lastDoneAt: Date.now(), question: "", index: null, means: {}, problems: [], ended: null, failed: null, cancelling: false,
  };
  changed();
  try {
    const started = await api.startRun(request);
    if (job) job.planned = Math.max(1, started.runs);
    changed();
    return started;
  } catch (e) {
    job = null;
    changed();
    throw e;
  }
}

export async function cancelJob(): Promise<void> {
  if (!job || job.ended || job.failed) return;
  job.cancelling = true;
  changed();
  await api.cancelRun();
}

function apply(e: ProgressEvent): void {
  if (!job) return;
  switch (e.kind) {
    case "started":
      if (!job.runIds.includes(e.run_id)) job.runIds.push(e.run_id);
      job.names[e.run_id] = e.name;
      job.total = e.total;
      job.done = e.already_done;
      job.index = e.index;
      job.windowItems = 0;
      job.windowS = 0;
      job.lastDoneAt = Date.now();
      break;
    case "item":
      job.question = `${e.question_id}: ${e.question}`;
      break;
    case "done":
      job.done = e.done;
      job.total = e.total;
      job.rate = e.rate;
      job.windowItems = e.window_items;
      job.windowS = e.window_s;
      job.lastDoneAt = Date.now();
      job.means = e.means;
      if (e.error) job.problems.push(`${e.question_id}: ${e.error}`);
      break;
    case "finished": {
      // An experiment sends one `finished` per run; a cancelled one ends the whole job.
      const finishedRuns = job.runIds.indexOf(e.run_id) + 1;
      if (finishedRuns < job.planned && e.status === "finished") break;
      job.ended = { status: e.status, runId: e.run_id };
      job.question = "";
      break;
    }
    case "failed":
      job.failed = e.message;
      job.question = "";
      break;
  }
  changed();
}

/** Seconds left now, from the moving rate and the time since the latest item. */
export function jobEta(j: Job, now = Date.now()): number | null {
  return liveEta(j.total - j.done, j.windowItems, j.windowS, (now - j.lastDoneAt) / 1000);
}

/** "run 2 of 2 · 3 / 10 items · 0.42 items/s · ETA 17 s" (rate and ETA once an item finished). */
export function jobCounts(j: Job, now = Date.now()): string {
  const position = j.planned > 1 ? `run ${Math.max(1, j.runIds.length)} of ${j.planned} · ` : "";
  if (j.runIds.length === 0) return "loading the dataset, index and models…";
  const pace = j.windowItems > 0 ? ` · ${j.rate.toFixed(2)} items/s · ETA ${duration(jobEta(j, now))}` : "";
  return `${position}${j.done} / ${j.total} items${pace}`;
}

/** The frame's job panel: listens for the shell's events for the app's whole life. */
export async function mountJobStatus(panel: HTMLElement): Promise<void> {
  await listen<ProgressEvent>("run-progress", ({ payload }) => apply(payload));
  const bar = h("progress", { max: 1, value: 0 });
  const name = h("button", { class: "job-name", id: "job-open", title: "Open the run" });
  const counts = h("p", { class: "job-counts", id: "job-counts" });
  const index = h("p", { class: "job-index muted", id: "job-index" });
  const cancel = h("button", { id: "job-cancel", onclick: () => void cancelJob() }, "Cancel");
  const outcome = h("p", { class: "job-outcome", id: "job-outcome" });
  const dismiss = h("button", { id: "job-dismiss", onclick: () => { job = null; changed(); } }, "Dismiss");
  const title = h("div", { class: "job-title", id: "job-title" }, "Running");
  const draw = () => {
    if (!job) { panel.hidden = true; return; }
    panel.hidden = false;
    title.textContent = job.failed ? "Failed" : job.ended ? `Run ${job.ended.status}` : "Running";
    const runId = job.runIds[job.runIds.length - 1];
    name.textContent = runId ? job.names[runId] ?? runId : "starting a run…";
    name.onclick = runId ? () => go({ screen: "run", run: runId }) : null;
    bar.max = Math.max(1, job.total);
    bar.value = job.done;
    const over = job.ended !== null || job.failed !== null;
    // Once the job is over, no rate or ETA: they would describe a run that no longer moves.
    counts.textContent = over ? `${job.done} / ${job.total} items` : jobCounts(job);
    index.textContent = job.index ?? "";
    index.hidden = job.index === null;
    cancel.hidden = over;
    cancel.disabled = job.cancelling;
    cancel.textContent = job.cancelling ? "Cancelling…" : "Cancel";
    dismiss.hidden = !over;
    outcome.className = job.failed ? "job-outcome error" : "job-outcome";
    outcome.textContent = job.failed ?? (job.ended ? `Run ${job.ended.status}.` : "");
  };
  clear(panel);
  panel.append(title, name, bar, counts, index, outcome, h("div", { class: "row" }, cancel, dismiss));
  watchJob(draw);
  // Between items the ETA moves with the clock.
  setInterval(() => { if (job && !job.ended && !job.failed) counts.textContent = jobCounts(job); }, 1000);
}
