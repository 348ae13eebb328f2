#!/usr/bin/env bash
# Long answers to label by reading (datasets/budgets, datasets/realdocs).
# Usage: scripts/long-answers.sh SET MODEL ID...
# Asks the chosen questions of datasets/SET with Assay's rag target (MODEL in process, hybrid
# retrieval, top TOP_K chunks (default 4), at most 400 tokens, greedy) under the prompt below,
# which asks for a thorough answer of two or three paragraphs with citations, and writes the
# answers, exactly as the model wrote them, to target/labels-work/answers-SET-MODEL.jsonl as
# {"id", "answer"}.
# The chosen questions are copied into a subset dataset under target/labels-work (corpus copied
# byte-for-byte, so retrieval searches the same documents); `assay run` has no option for ids.
set -euo pipefail
cd "$(dirname "$0")/.."
assay=${ASSAY_BIN:-$PWD/target/debug/assay}
set_name=$1 model=$2
shift 2
work=target/labels-work
export ASSAY_DB="${ASSAY_DB:-$PWD/$work/runs.sqlite}"
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-2}"
mkdir -p "$work"
cat > "$work/prompt-long.md" <<'PROMPT'
You answer questions using only the numbered excerpts below, taken from the documents of this collection.

{% for chunk in chunks -%}
Excerpt [{{ chunk.n }}]
{{ chunk.text }}

{% endfor -%}
Rules:
- Use only facts from the excerpts above. Do not guess.
- After each fact, write the number of the excerpt it comes from in square brackets, for example [2].
- If the excerpts do not contain the answer, reply exactly: I can't answer that from the documents.
- Give a thorough answer of two or three paragraphs (about 200 words): state the figures, names and conditions the question asks about, and explain them.

Question{% if doc %} (about {{ doc }}){% endif %}: {{ question }}
PROMPT
# One subset folder per dataset (its index is built once and reused); its questions are
# rewritten for each call.
sub="$work/$set_name-subset"
mkdir -p "$sub"
[[ -d $sub/corpus ]] || cp -r "datasets/$set_name/corpus" "$sub/corpus"
printf 'name = "%s-subset"\ndescription = "Chosen questions of datasets/%s for long answers"\ncorpus = "corpus"\nquestions = "questions.jsonl"\n' \
  "$set_name" "$set_name" > "$sub/dataset.toml"
python3 - "datasets/$set_name/questions.jsonl" "$sub/questions.jsonl" "$@" <<'PY'
import json, sys
src, dst, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
questions = {json.loads(l)["id"]: l for l in open(src) if l.strip()}
missing = [i for i in ids if i not in questions]
if missing:
    sys.exit(f"unknown ids: {missing}")
with open(dst, "w") as out:
    for i in ids:
        out.write(questions[i].rstrip("\n") + "\n")
PY
name="long-$set_name-$model"
"$assay" run "$sub" --target rag --model "$model" --retrieval hybrid --top-k ${TOP_K:-4} --max-tokens 400 \
  --prompt "$work/prompt-long.md" --name "$name"
"$assay" show "$name" --json > "$work/$name.json"
python3 - "$work/$name.json" "$work/answers-$set_name-$model.jsonl" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
with open(sys.argv[2], "w") as out:
    for item in run["items"]:
        if item["error"] or item["answer"] is None:
            print(f"{item['id']}: no answer ({item['error']})", file=sys.stderr)
            continue
        out.write(json.dumps({"id": item["id"], "answer": item["answer"]}, ensure_ascii=False) + "\n")
PY
echo "wrote $work/answers-$set_name-$model.jsonl" >&2
