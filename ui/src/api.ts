// Typed calls to the desktop shell's commands. The shapes mirror the core's serde types.
import { invoke } from "@tauri-apps/api/core";

export type RunStatus = "running" | "finished" | "cancelled" | "failed";

export interface RunRecord {
  id: string; name: string; dataset: string; dataset_root: string; status: RunStatus;
  total_items: number; created_at: string; finished_at: string | null;
  config: {
    target: string; metrics: string[]; top_k?: number; seed?: number; model?: string | null;
    judges?: string[]; judge_model?: string | null; retrieval?: string | null;
  };
}

/** One run a deletion would remove, with what goes with it (the core's `RunDeletion`). */
export interface RunDeletion {
  id: string; name: string | null;
  contents: { items: number; verdicts: number; labels: number; pairwise_judgments: number };
}

export interface MetricSummary {
  mean: number; ci95: [number, number]; n: number; unscored: number;
  /** Judges with a pass threshold: the share of items whose label passed. */
  pass_rate?: number;
  /** Judges: Spearman of the score with the answer's length in words. */
  length_spearman?: number;
}

export interface Verdict {
  label: string | null; score: number | null; distribution: Record<string, number>;
  explanation: string | null; error?: string | null;
  /** What deterministic checks found in the judged text ("possible injection"); absent when none. */
  flags?: string[];
  /** Statement judges: every statement checked, with its probability of being supported. */
  statements?: StatementCheck[];
}

export interface StatementCheck {
  side: "answer" | "reference"; text: string;
  /** Probability that the other side supports it, in [0, 1]. */
  supported: number;
  /** A number in the statement that the other side contradicts. */
  number_conflict?: string;
}

/** A checked statement as the core shows it: `unsupported` is the core's rule (under 0.5, or a number conflict). */
export type ShownStatement = StatementCheck & { unsupported: boolean };

/** One statement judge's statements on one item (sub-scores folded in), as the core selects them. */
export interface JudgedStatements {
  judge: string; answer: ShownStatement[]; reference: ShownStatement[];
  /** Answer statements unsupported; reference statements missed. */
  unsupported: number; missed: number;
}

export interface RetrievedChunk { chunk_id: string; doc: string; score: number; text: string }

export interface RunItem {
  id: string; question: string; reference: string | null; refuse: boolean; doc: string | null;
  answer: string | null; citations: string[]; retrieved: RetrievedChunk[];
  metrics: Record<string, number>; verdicts: Record<string, Verdict>;
  /** Every flag on any of the item's verdicts; absent when none. */
  flags?: string[];
  latency_ms: number | null; prompt_tokens: number | null; completion_tokens: number | null; error: string | null;
}

export interface JsonRun {
  id: string; name: string; dataset: string; created_at: string; status: RunStatus;
  config: RunRecord["config"]; items_total: number; items_done: number; errors: number;
  avg_latency_ms: number | null; summary: Record<string, MetricSummary>; items: RunItem[];
  /** Per flag, how many items carry it; absent when no item is flagged. */
  flagged?: Record<string, number>;
  /** What each of those flags means (the core's words); absent when no item is flagged. */
  flag_meanings?: Record<string, string>;
}

export interface RunView {
  run: JsonRun; means_chart: string; histograms: string[];
  avg_prompt_tokens: number | null; avg_completion_tokens: number | null;
  /** By question id: the statement judges' checked statements (items without any are absent). */
  statements: Record<string, JudgedStatements[]>;
  /** The primary metric, then the others by the report's groups (the core's layout). */
  guide: MetricGuide;
  /** By judge of the run: its outcomes (worst first) and what its score is. */
  judges: Record<string, { outcomes: string[]; score_meaning: string }>;
  /** Whether a process executes the run now (the library's lease): no Resume then. */
  held: boolean;
}

export interface MetricEntry { name: string; label: string; description: string | null }
export interface MetricGuide { primary: MetricEntry | null; sections: { group: string; metrics: MetricEntry[] }[] }

/** One question across the compared runs: scores per run per metric, failures on the primary. */
export interface GridRow {
  question_id: string; question: string; scores: (number | null)[][]; failed: boolean[]; errors: (string | null)[];
}
/** A stored row that cannot be read: the core names its table, row, field and what it found. */
export interface DamagedRow { table: string; row: string; field: string; problem: string }
/** Every run of the database: those that read, and those whose row is damaged (listed apart). */
export interface RunListing {
  runs: RunRecord[];
  damaged: { id: string; name: string | null; experiment: string | null; damage: DamagedRow }[];
}

/** `labels[i]` is the name a person reads for `metrics[i]` (the core's; a judge keeps its own). */
export interface QuestionGrid { metrics: string[]; labels: string[]; rows: GridRow[]; fails_below: number }

/** A dataset the app found (samples, the datasets folder, those runs used). */
export interface KnownDataset {
  root: string; name: string; description: string; questions: number; source: string; problem: string | null;
}

export interface PairedDiff {
  // Null where no question has the metric in both runs (the verdict is then "no_pairs").
  metric: string; pairs: number; excluded: number; mean_a: number | null; ci95_a: [number | null, number | null];
  mean_b: number | null; ci95_b: [number | null, number | null]; mean_diff: number | null; ci95_diff: [number | null, number | null];
  wins: number; ties: number; losses: number; sign_test_p: number;
  /** Paired permutation test; adjusted for the other metrics (the primary's is its own). */
  permutation_p: number; adjusted_p: number; primary: boolean; min_detectable_diff: number | null;
  verdict: "a_better" | "b_better" | "no_significant_difference" | "too_few_pairs" | "no_pairs";
  /** The verdict in the core's words: which p decided, and "(confounded)" where it applies. */
  verdict_text: string;
}

/** One setting of both runs of a comparison. */
export interface SettingRow { setting: string; a: string; b: string; differs: boolean }

/** What the two runs were asked to do, and whether more than one setting differs. */
export interface SettingsDiff { rows: SettingRow[]; differing: string[]; confounded: boolean; warning: string | null }

export interface Comparison {
  run_a: string; name_a: string; run_b: string; name_b: string; same_dataset: boolean;
  primary: string | null; diffs: PairedDiff[];
  settings: SettingsDiff;
  /** The sentence the comparison leads with, written by the core from the figures. */
  headline: string;
}

export interface SideBySide {
  metric: string; question_id: string; question: string; reference: string | null;
  answer_a: string | null; answer_b: string | null; score_a: number; score_b: number;
}

export interface LeaderboardRow { rank: number; run: string; name: string; mean: number; ci95: [number, number]; n: number }

export interface CompareView {
  runs: RunRecord[]; comparisons: Comparison[]; charts: string[]; side_by_side: SideBySide[][];
  /** The runs ranked on the primary metric by the core, tied where intervals overlap. */
  leaderboard: { metric: string; rows: LeaderboardRow[]; notes: string[] } | null;
  /** Per comparison: the primary metric per question tag (exploratory, BH-adjusted p). */
  breakdowns: GroupDiff[][];
  /** One row per question with every metric of every run (the question × run grid). */
  grid: QuestionGrid;
}

export interface GroupDiff {
  group: string; pairs: number; mean_a: number; mean_b: number; mean_diff: number;
  ci95_diff: [number, number]; permutation_p: number; adjusted_p: number;
}

export interface Question {
  id: string; question: string; answer?: string; doc?: string; context?: string;
  citations?: string[]; refuse?: boolean; tags?: string[];
}

/** What a reviewer decided about one generated pair (the core's `ReviewDecision`). */
export type ReviewDecision = { decision: "accept"; question: Question } | { decision: "reject"; id: string };
export interface ReviewOutcome { accepted: number; rejected: number; pending: number }

export interface DatasetView { root: string; name: string; description: string; fingerprint: string; questions: Question[]; documents: string[] }

export interface StartRequest {
  dataset: string; target: string; metrics: string[]; models: string[]; retrievals: string[]; top_ks: number[];
  limit: number | null; seed: number | null; max_tokens: number | null;
  name: string | null; resume: string | null;
  judges: string[]; judge_models: string[]; experiment: string | null;
  /** A model that rescores the first stage's chunks (retrieve and rag), and how many it rescores. */
  rerank: string | null; rerank_depth: number | null;
}

/** What start_run answers: the first run's id and how many runs the core planned. */
export interface StartedRuns { run_id: string; runs: number }

export interface JudgeChoice { name: string; description: string; outcomes: string[]; mode: "choice" | "claims" | "jury"; source: string }
export interface JudgesView { judges: JudgeChoice[]; default_model: string }

export type ProgressEvent =
  | { kind: "started"; run_id: string; name: string; total: number; already_done: number; index: string | null }
  | { kind: "item"; question_id: string; question: string }
  | { kind: "done"; question_id: string; done: number; total: number; error: string | null;
      /** The moving rate: `window_items` items finished in the last `window_s` seconds. */
      rate: number; window_items: number; window_s: number; eta_s: number | null;
      means: Record<string, number> }
  | { kind: "finished"; run_id: string; status: RunStatus }
  | { kind: "failed"; message: string };

export interface ListedModel {
  id: string; description: string; arch: string; size: number; state: "verified" | "present" | "corrupt" | "missing" | "served";
  path: string; quantization: string | null; quantization_share: number | null; parameters: number | null; source: string;
}
export interface ModelsView {
  models_dir: string; models: ListedModel[];
  /** The retrieval mode a run gets when it names none (the core decides: hybrid when MiniLM is installed). */
  default_retrieval: string;
}
export type ScannedModel = { source: "ollama" | "lm-studio" | "hugging-face"; name: string; path: string } & (
  | { outcome: "added"; id: string; description: string }
  | { outcome: "already-registered"; id: string }
  | { outcome: "skipped"; reason: string });
export type PullProgress =
  | { kind: "downloading"; id: string; package: string; index: number; count: number }
  | { kind: "transferred"; id: string; bytes: number; expected: number; bytes_per_s: number }
  | { kind: "assembling"; id: string; file: string }
  | { kind: "installed"; id: string; path: string }
  | { kind: "failed"; id: string; message: string };

/** A judge against human labels, as the core computes it (`assay agree`). */
export interface Agreement {
  judge: string; outcomes: string[]; n: number; unscored: number; accuracy: number;
  kappa: number | null; spearman: number | null; score_spearman: number | null; length_spearman: number | null;
  /** The score's Spearman with the labels (the label's, for a judge without scores). */
  label_spearman: number | null;
  length_biased: boolean; confusion: number[][];
}
/** Thresholds fitted on the labels, the agreement before and after, and the spec copy written. */
export interface Calibration {
  judge: string; labels: number; thresholds: number[]; before: Agreement; after: Agreement | null; written: string | null;
}
export interface JudgeAgreement { agreements: Agreement[]; calibrations: Calibration[] }

/** A person's label on one answer (the core's `LabelRecord`). */
export type AnswerLabel = "correct" | "wrong" | "skip";
export interface LabelRecord { question_id: string; label: AnswerLabel; note?: string; labelled_at: string }
export interface RunLabels { run: string; answered: number; labels: LabelRecord[] }
export interface LabelsImported { run: string; stored: number; replaced: number }
/** A judge of the run on the judge panel: its scale and the calibration its spec holds now. */
export interface PanelJudge {
  name: string; outcomes: string[]; pass: string | null; thresholds: number[] | null; calibrated_on: number | null; source: string;
}
export interface JudgePanel {
  run: string; judges: PanelJudge[]; labels: RunLabels; agreement: JudgeAgreement | null; problem: string | null;
  /** By question, by calibrated judge: the label its thresholds give the stored score now. */
  calibrated_labels: Record<string, Record<string, string>>;
}

export const api = {
  listModels: () => invoke<ModelsView>("list_models"),
  pullModel: (id: string) => invoke<void>("pull_model", { id }),
  addModel: (path: string) => invoke<string>("add_model", { path }),
  scanModels: () => invoke<ScannedModel[]>("scan_models"),
  listJudges: () => invoke<JudgesView>("list_judges"),
  calibrateJudges: (runs: string[], labels: string[], calibrate: boolean) =>
    invoke<JudgeAgreement>("calibrate_judges", { runs, labels, labelsAs: null, calibrate }),
  dbPath: () => invoke<string>("db_path"),
  runListing: () => invoke<RunListing>("list_runs"),
  listRuns: async () => (await invoke<RunListing>("list_runs")).runs,
  runView: (run: string) => invoke<RunView>("run_view", { run }),
  runHeld: (run: string) => invoke<boolean>("run_held", { run }),
  /** What deleting these runs would remove with each; nothing changes. */
  planRunDeletion: (runs: string[]) => invoke<RunDeletion[]>("plan_run_deletion", { runs }),
  /** Delete the runs (all or none); how many were deleted. */
  deleteRuns: (runs: string[]) => invoke<number>("delete_runs", { runs }),
  listDatasets: () => invoke<KnownDataset[]>("list_datasets"),
  compareRuns: (runs: string[]) => invoke<CompareView>("compare_runs", { runs, seed: null }),
  openDataset: (dir: string) => invoke<DatasetView>("open_dataset", { dir }),
  readManual: (dir: string, doc: string) => invoke<string>("read_manual", { dir, doc }),
  pendingPairs: (dir: string) => invoke<Question[]>("pending_pairs", { dir }),
  applyReview: (dir: string, decisions: ReviewDecision[]) => invoke<ReviewOutcome>("apply_review", { dir, decisions }),
  importDataset: (kind: string, file: string, corpus: string, output: string) =>
    invoke<{ output: string; questions: number; documents: number }>("import_dataset", { kind, file, corpus, output }),
  exportReport: (runs: string[], format: string, path: string | null) => invoke<string>("export_report", { runs, format, path }),
  startRun: (request: StartRequest) => invoke<StartedRuns>("start_run", { request }),
  cancelRun: () => invoke<boolean>("cancel_run"),
  /** Dialogs for places to write open in the core, which then allows writing there (and only there). */
  chooseSavePath: (title: string, defaultName: string | null, filterName: string | null, extensions: string[] | null) =>
    invoke<string | null>("choose_save_path", { title, defaultName, filterName, extensions }),
  chooseFolder: (title: string) => invoke<string | null>("choose_folder", { title }),
  labelsOfRun: (run: string) => invoke<RunLabels>("labels_of_run", { run }),
  labelAnswer: (run: string, question: string, label: AnswerLabel, note: string | null) =>
    invoke<LabelRecord>("label_answer", { run, question, label, note }),
  clearLabel: (run: string, question: string) => invoke<void>("clear_label", { run, question }),
  /** No path: the data folder's labels/ (what the E2E test, which cannot drive dialogs, uses). */
  exportLabels: (run: string, path: string | null) => invoke<[string, number]>("export_labels", { run, path }),
  importLabels: (run: string, path: string) => invoke<LabelsImported>("import_labels_file", { run, path }),
  judgePanel: (run: string, calibrate: boolean) => invoke<JudgePanel>("judge_panel", { run, calibrate }),
  addServer: (id: string, urls: string[], servedModel: string, apiKeyEnv: string | null) =>
    invoke<string>("add_server", { id, urls, servedModel, apiKeyEnv }),
  removeModel: (id: string) => invoke<string>("remove_model", { id }),
};

/** Errors from commands arrive as strings; anything else is shown by its text. */
export function errorText(error: unknown): string {
  return typeof error === "string" ? error : error instanceof Error ? error.message : JSON.stringify(error);
}
