// The New run form's own logic, kept apart from the DOM so it can be unit-tested: which models
// can be picked, and turning the form's fields into the shell's StartRequest (or a message
// saying what is missing). Whether the settings make sense for the dataset is the core's call.
import type { ListedModel, StartRequest } from "../api";

export interface RunForm {
  dataset: string;
  target: "answers" | "rag" | "retrieve" | string;
  answers: string;
  models: string[];
  /** Retrieval modes ticked; several make a matrix (empty: the core's default). */
  retrievals: string[];
  /** Top-k values, comma-separated; several make a matrix. */
  topKs: string;
  metrics: string;
  limit: string;
  seed: string;
  maxTokens: string;
  name: string;
  judges: string[];
  /** Judge models ticked; several make a matrix (empty: the core's default). */
  judgeModels: string[];
  /** "" for plain runs, or an experiment kind the core knows ("remove-context"). */
  experiment: string;
  /** "" for no reranking, or the model that rescores the first stage's chunks. */
  rerank: string;
  /** How many first-stage chunks it rescores; blank: the core's default. */
  rerankDepth: string;
}

/** Models that generate text (embedding models cannot answer or judge), installed ones first. */
export function textModels(models: ListedModel[]): { id: string; installed: boolean }[] {
  return models
    .filter((m) => m.arch !== "bert")
    .map((m) => ({ id: m.id, installed: m.state === "verified" || m.state === "present" || m.state === "served" }))
    .sort((a, b) => Number(b.installed) - Number(a.installed));
}

/** A whole number from a field, or null when blank; NaN marks a bad entry. */
function whole(text: string): number | null {
  const t = text.trim();
  if (t === "") return null;
  return /^\d+$/.test(t) ? Number(t) : Number.NaN;
}

/** Whole numbers from a comma-separated field; null when one entry is not a whole number. */
function wholeList(text: string): number[] | null {
  const values = text.split(",").map((t) => whole(t)).filter((v): v is number => v !== null);
  return values.some((v) => Number.isNaN(v)) ? null : values;
}

export function startRequest(form: RunForm, resume: string | null): { request: StartRequest } | { error: string } {
  const dataset = form.dataset.trim();
  if (!dataset) return { error: "Choose a dataset folder." };
  const topKs = wholeList(form.topKs);
  if (topKs === null || topKs.includes(0)) return { error: "Top-k must be whole numbers of 1 or more, separated by commas." };
  const numbers = {
    Limit: whole(form.limit), Seed: whole(form.seed), "Max answer tokens": whole(form.maxTokens),
    "Rerank depth": whole(form.rerankDepth),
  };
  for (const [label, value] of Object.entries(numbers)) {
    if (Number.isNaN(value)) return { error: `${label} must be a whole number.` };
  }
  if (numbers["Rerank depth"] === 0) return { error: "Rerank depth must be 1 or more." };
  const retrieves = form.target === "rag" || form.target === "retrieve";
  const rerank = retrieves ? form.rerank.trim() || null : null;
  if (numbers["Rerank depth"] !== null && retrieves && !rerank) return { error: "Pick a rerank model, or leave the depth blank." };
  if (!resume) {
    if (form.target === "answers" && !form.answers.trim()) return { error: "Choose an answers file." };
    if (form.target === "http" && !form.answers.trim()) return { error: "Choose the service's description (a .toml file)." };
    if (form.target === "rag" && form.models.length === 0) return { error: "Pick at least one installed generator model." };
    if (retrieves && form.retrievals.length === 0) {
      return { error: "Retrieval: tick at least one mode (bm25 searches keywords, dense compares embeddings, hybrid does both)." };
    }
    if (form.experiment === "remove-context" && form.target !== "rag") {
      return { error: "The knowledge-removal experiment needs the rag target (it removes chunks from retrieval)." };
    }
  }
  // A retrieve-only run has no answer text: the form hides the judges there and sends none.
  const judges = form.target === "retrieve" && !resume ? [] : form.judges;
  return {
    request: {
      dataset,
      target: form.target === "answers" || form.target === "http" ? `${form.target}:${form.answers.trim()}` : form.target,
      models: form.target === "rag" ? form.models : [],
      retrievals: form.target === "answers" || form.target === "http" ? [] : form.retrievals,
      top_ks: form.target === "answers" || form.target === "http" ? [] : topKs,
      metrics: form.metrics.split(",").map((m) => m.trim()).filter(Boolean),
      limit: numbers.Limit,
      max_tokens: form.target === "rag" ? numbers["Max answer tokens"] : null,
      seed: numbers.Seed,
      name: form.name.trim() || null,
      resume,
      judges,
      judge_models: judges.length > 0 || form.experiment ? form.judgeModels : [],
      experiment: resume ? null : form.experiment || null,
      rerank: resume ? null : rerank,
      rerank_depth: resume || !rerank ? null : numbers["Rerank depth"],
    },
  };
}

/** What New run remembers of the last run started (not its name: a name is for one run). */
export type RememberedForm = Omit<RunForm, "name">;

/** Storage key of the remembered form, per database: runs against another database (a test's,
 *  a second project's) start from their own last choices. */
const rememberKey = (database: string) => `assay.new-run:${database}`;

export function remember(form: RunForm, database: string, storage: Pick<Storage, "setItem">): void {
  const { name: _name, ...kept } = form;
  storage.setItem(rememberKey(database), JSON.stringify(kept));
}

/** The last choices for `database`, or null (none yet, or unreadable: never an error). */
export function recall(database: string, storage: Pick<Storage, "getItem">): RememberedForm | null {
  try {
    const text = storage.getItem(rememberKey(database));
    const value = text ? JSON.parse(text) : null;
    return value && typeof value === "object" && typeof value.dataset === "string" ? (value as RememberedForm) : null;
  } catch {
    return null;
  }
}

/** Where a form starts: the last choices, else the first sample dataset answered by the rag
 *  target (a new user's first evaluation needs no path typed). */
export function formStart(remembered: RememberedForm | null, samples: { root: string; source: string; problem: string | null }[]):
  { dataset: string; target: string } {
  if (remembered) return { dataset: remembered.dataset, target: remembered.target };
  const sample = samples.find((d) => d.source === "sample" && d.problem === null);
  return { dataset: sample?.root ?? "", target: "rag" };
}
