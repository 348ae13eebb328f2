import { describe, expect, it } from "vitest";
import { startRequest, textModels, RunForm } from "../src/screens/runform";
import type { ListedModel } from "../src/api";

const blank: RunForm = {
  dataset: " /data/trailgear ", target: "answers", answers: "", models: [], retrievals: ["bm25"], topKs: "", metrics: "",
  limit: "", seed: "0", maxTokens: "", name: "", judges: [], judgeModels: ["qwen2.5-coder-1.5b-instruct"], experiment: "",
  rerank: "", rerankDepth: "",
};

function model(id: string, arch: string, state: ListedModel["state"]): ListedModel {
  return { id, arch, state, description: "", size: 1, path: "", quantization: null, quantization_share: null, parameters: null, source: "" };
}

describe("startRequest", () => {
  it("says what is missing before anything is sent", () => {
    expect(startRequest({ ...blank, dataset: "  " }, null)).toEqual({ error: "Choose a dataset folder." });
    expect(startRequest(blank, null)).toEqual({ error: "Choose an answers file." });
    expect(startRequest({ ...blank, target: "rag" }, null)).toEqual({ error: "Pick at least one installed generator model." });
    expect(startRequest({ ...blank, answers: "a.jsonl", limit: "2.5" }, null)).toEqual({ error: "Limit must be a whole number." });
    const badTopK = { error: "Top-k must be whole numbers of 1 or more, separated by commas." };
    expect(startRequest({ ...blank, answers: "a.jsonl", topKs: "-1" }, null)).toEqual(badTopK);
    expect(startRequest({ ...blank, target: "rag", models: ["a"], topKs: "3,x" }, null)).toEqual(badTopK);
    expect(startRequest({ ...blank, target: "rag", models: ["a"], topKs: "0" }, null)).toEqual(badTopK);
    // No retrieval mode ticked is not a silent bm25: the form says what to do.
    const noMode = startRequest({ ...blank, target: "rag", models: ["a"], retrievals: [] }, null);
    expect("error" in noMode && noMode.error).toMatch(/^Retrieval: tick at least one mode/);
    expect("error" in startRequest({ ...blank, target: "retrieve", retrievals: [] }, null)).toBe(true);
    expect(startRequest({ ...blank, target: "retrieve", experiment: "remove-context" }, null)).toEqual({
      error: "The knowledge-removal experiment needs the rag target (it removes chunks from retrieval).",
    });
  });

  it("turns an answers replay into the shell's request", () => {
    const r = startRequest({ ...blank, answers: " a.jsonl ", metrics: "token_f1, rouge_l,", limit: "5", name: " mine " }, null);
    expect(r).toEqual({
      request: {
        dataset: "/data/trailgear", target: "answers:a.jsonl", models: [], retrievals: [], top_ks: [],
        metrics: ["token_f1", "rouge_l"], limit: 5, max_tokens: null, seed: 0, name: "mine", resume: null, judges: [], judge_models: [],
        experiment: null, rerank: null, rerank_depth: null,
      },
    });
  });

  it("sends the judge model only with judges, and no judges for a retrieve-only run", () => {
    const rag = startRequest({ ...blank, target: "rag", models: ["a", "b"], topKs: "3", maxTokens: "48", judges: ["correctness"] }, null);
    expect("request" in rag && rag.request).toMatchObject({
      target: "rag", models: ["a", "b"], retrievals: ["bm25"], top_ks: [3], max_tokens: 48, judges: ["correctness"],
      judge_models: ["qwen2.5-coder-1.5b-instruct"],
    });
    const retrieve = startRequest({ ...blank, target: "retrieve", judges: ["correctness"] }, null);
    expect("request" in retrieve && retrieve.request).toMatchObject({ target: "retrieve", models: [], judges: [], judge_models: [] });
  });

  it("sends matrix lists and the experiment as the core's planner takes them", () => {
    const matrix = startRequest({
      ...blank, target: "rag", models: ["a"], topKs: " 3, 5 ", retrievals: ["bm25", "hybrid"], judges: ["correct"],
      judgeModels: ["j1", "j2"], experiment: "remove-context",
    }, null);
    expect("request" in matrix && matrix.request).toMatchObject({
      top_ks: [3, 5], retrievals: ["bm25", "hybrid"], judge_models: ["j1", "j2"], experiment: "remove-context",
    });
  });

  it("resumes a run with only the dataset", () => {
    const r = startRequest({ ...blank, seed: "" }, "abc123");
    expect("request" in r && r.request).toMatchObject({ dataset: "/data/trailgear", resume: "abc123", seed: null });
  });
});

describe("textModels", () => {
  it("leaves out embedding models and lists installed ones first", () => {
    const listed = textModels([
      model("big", "qwen2", "missing"), model("minilm", "bert", "verified"),
      model("small", "llama", "verified"), model("added", "qwen2", "present"), model("broken", "llama", "corrupt"),
    ]);
    expect(listed).toEqual([
      { id: "small", installed: true }, { id: "added", installed: true },
      { id: "big", installed: false }, { id: "broken", installed: false },
    ]);
  });
});

describe("the http target and served models", () => {
  it("needs the service's description and sends it as http:FILE without retrieval settings", () => {
    expect(startRequest({ ...blank, target: "http" }, null)).toEqual({ error: "Choose the service's description (a .toml file)." });
    const r = startRequest({ ...blank, target: "http", answers: " svc.toml ", topKs: "3", retrievals: ["bm25"] }, null);
    expect("request" in r && r.request.target).toBe("http:svc.toml");
    expect("request" in r && [r.request.retrievals, r.request.top_ks, r.request.models]).toEqual([[], [], []]);
  });

  it("offers served models as generators and judges, like installed ones", () => {
    const listed = textModels([model("remote", "server", "served"), model("absent", "qwen2", "missing")]);
    expect(listed).toEqual([{ id: "remote", installed: true }, { id: "absent", installed: false }]);
  });
});

describe("reranking", () => {
  it("sends the rerank model and depth for targets that retrieve, and never for the others", () => {
    const retrieve = startRequest({ ...blank, target: "retrieve", rerank: "smol", rerankDepth: "10" }, null);
    expect("request" in retrieve && [retrieve.request.rerank, retrieve.request.rerank_depth]).toEqual(["smol", 10]);
    const rag = startRequest({ ...blank, target: "rag", models: ["a"], rerank: "smol" }, null);
    expect("request" in rag && [rag.request.rerank, rag.request.rerank_depth]).toEqual(["smol", null]);
    const replay = startRequest({ ...blank, answers: "a.jsonl", rerank: "smol", rerankDepth: "10" }, null);
    expect("request" in replay && [replay.request.rerank, replay.request.rerank_depth]).toEqual([null, null]);
    const resumed = startRequest({ ...blank, rerank: "smol" }, "abc123");
    expect("request" in resumed && resumed.request.rerank).toBeNull();
  });

  it("refuses a depth that is not a whole number of 1 or more, or a depth without a model", () => {
    expect(startRequest({ ...blank, target: "retrieve", rerank: "smol", rerankDepth: "0" }, null)).toEqual({ error: "Rerank depth must be 1 or more." });
    expect(startRequest({ ...blank, target: "retrieve", rerank: "smol", rerankDepth: "x" }, null)).toEqual({ error: "Rerank depth must be a whole number." });
    expect(startRequest({ ...blank, target: "retrieve", rerankDepth: "10" }, null)).toEqual({ error: "Pick a rerank model, or leave the depth blank." });
  });
});

import { formStart, recall, remember } from "../src/screens/runform";

describe("New run remembers", () => {
  const store = () => {
    const data = new Map<string, string>();
    return { getItem: (k: string) => data.get(k) ?? null, setItem: (k: string, v: string) => void data.set(k, v) };
  };
  const form = {
    dataset: "/d/trailgear", target: "retrieve", answers: "", models: ["m"], retrievals: ["dense"], topKs: "2", metrics: "",
    limit: "5", seed: "0", maxTokens: "", name: "my run", judges: [], judgeModels: [], experiment: "", rerank: "", rerankDepth: "",
  };
  it("the last choices per database, without the run's name", () => {
    const storage = store();
    remember(form, "/db/a.sqlite", storage);
    const back = recall("/db/a.sqlite", storage)!;
    expect(back.target).toBe("retrieve");
    expect(back.retrievals).toEqual(["dense"]);
    expect("name" in back).toBe(false);
    expect(recall("/db/b.sqlite", storage)).toBeNull();
  });
  it("starts a first run on the sample dataset's rag target", () => {
    const samples = [
      { root: "/broken", source: "sample", problem: "questions.jsonl line 3: field `id` missing" },
      { root: "/s/trailgear", source: "sample", problem: null },
    ];
    expect(formStart(null, samples)).toEqual({ dataset: "/s/trailgear", target: "rag" });
    expect(formStart({ ...form }, samples)).toEqual({ dataset: "/d/trailgear", target: "retrieve" });
  });
});
