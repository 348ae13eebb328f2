#!/usr/bin/env bash
# The judge × model agreement table (docs/judge-agreement.md): every built-in judge that has
# human labels, run by each default instruct model over both sample answer sets (180 answers,
# labelled by reading each one: datasets/trailgear/labels-*.jsonl), pooled, against the labels.
# Usage: scripts/judge-agreement.sh [MODEL…]   (default: the three default instruct models)
# ASSAY_AGREE_LIMIT=N judges only the first N questions of each set (default: all 90);
# ASSAY_AGREE_JUDGES=a,b picks the judges (default: the three with human labels). Finished runs
# are reused by name, so models can be added one call at a time with their own settings.
# Needs the models pulled (`assay models pull ID`); takes long on CPU (the 1.5B model most).
set -euo pipefail
cd "$(dirname "$0")/.."
assay=${ASSAY_BIN:-target/debug/assay}
[[ -x $assay ]] || cargo build --bin assay
models=("$@")
((${#models[@]})) || models=(qwen2.5-coder-1.5b-instruct qwen2.5-coder-0.5b-instruct smollm2-135m-instruct)
judges=${ASSAY_AGREE_JUDGES:-correct,correctness,abstention}
limit=()
[[ -n ${ASSAY_AGREE_LIMIT:-} ]] && limit=(--limit "$ASSAY_AGREE_LIMIT")
out=target/judge-agreement
mkdir -p "$out"
export ASSAY_DB="${ASSAY_DB:-$PWD/$out/runs.sqlite}"
for model in "${models[@]}"; do
  for set in careful sloppy; do
    name="agree-$set-$model"
    # Reuse a finished run of the same name (the script can be stopped and started again).
    if ! { $assay runs --json 2>/dev/null || echo '[]'; } | python3 -c "import json,sys; sys.exit(0 if any(r['name']=='$name' and r['status']=='finished' for r in json.load(sys.stdin)) else 1)"; then
      start=$(date +%s)
      $assay run datasets/trailgear --target "answers:answers-$set.jsonl" --judges "$judges" \
        --judge-model "$model" --name "$name" "${limit[@]}" >/dev/null
      echo "$name: $(( $(date +%s) - start )) s" >&2
    fi
  done
  $assay agree "agree-careful-$model" "agree-sloppy-$model" \
    --labels datasets/trailgear/labels-careful.jsonl --labels datasets/trailgear/labels-sloppy.jsonl \
    --json > "$out/$model.json"
  # Long answers (175-437 words, 38 questions; the others have no answer in that file and are
  # left unscored): only `correct` is labelled there.
  name="agree-long-$model"
  if ! { $assay runs --json 2>/dev/null || echo '[]'; } | python3 -c "import json,sys; sys.exit(0 if any(r['name']=='$name' and r['status']=='finished' for r in json.load(sys.stdin)) else 1)"; then
    start=$(date +%s)
    $assay run datasets/trailgear --target answers:answers-long.jsonl --judges correct \
      --judge-model "$model" --name "$name" "${limit[@]}" >/dev/null 2>"$out/$name.log"
    echo "$name: $(( $(date +%s) - start )) s" >&2
  fi
  $assay agree "$name" --labels datasets/trailgear/labels-long.jsonl --json > "$out/$model-long.json"
done
python3 - "$out" "${models[@]}" > docs/judge-agreement.md <<'PY'
import json, sys
out, models = sys.argv[1], sys.argv[2:]
def f(v):
    return "n/a" if v is None or v != v else f"{v:.3f}"
print("# Judge agreement with human labels\n")
print("Made by `scripts/judge-agreement.sh`: each judge run by each model on both sample answer")
print("sets of `datasets/trailgear` (careful and sloppy, 90 answers each), pooled, against labels")
print("written by reading every answer (`labels-careful.jsonl`, `labels-sloppy.jsonl`).")
print("`n` is the number of answers judged (the first questions of each set when the run was")
print("limited with `ASSAY_AGREE_LIMIT`).")
print("Accuracy and kappa compare the judge's label (its most probable outcome) with the human")
print("label; kappa is Cohen's (quadratic-weighted for the 4-level `correctness`), so 0 is chance.")
print("Spearman is the rank correlation of the judge's label with the human one; *score Spearman*")
print("ranks the judge's expected score instead, which shows a judge that orders answers well")
print("even where its most probable label sits on the wrong side. Choice mode cannot fail to")
print("parse: `unscored` counts items the judge could not score for another reason.\n")
print("| judge | model | n | unscored | accuracy | kappa | Spearman | score Spearman |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
rows = []
for model in models:
    for a in json.load(open(f"{out}/{model}.json")):
        rows.append((a["judge"], model, a))
rows.sort(key=lambda r: (r[0], models.index(r[1])))
for judge, model, a in rows:
    print(f"| {judge} | {model} | {a['n']} | {a['unscored']} | {f(a['accuracy'])} | {f(a.get('kappa'))} "
          f"| {f(a.get('spearman'))} | {f(a.get('score_spearman'))} |")
print("\n## Long answers\n")
print("The same `correct` judge on `answers-long.jsonl`: 38 answers of 175-437 words (most of")
print("them right, with details the reference does not mention), against `labels-long.jsonl`.\n")
print("| model | n | unscored | accuracy | kappa | score Spearman | right answers failed | wrong answers passed |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for model in models:
    for a in json.load(open(f"{out}/{model}-long.json")):
        (no_no, no_yes), (yes_no, yes_yes) = a["confusion"]
        print(f"| {model} | {a['n']} | {a['unscored']} | {f(a['accuracy'])} | {f(a.get('kappa'))} "
              f"| {f(a.get('score_spearman'))} | {yes_no} of {yes_no + yes_yes} | {no_yes} of {no_no + no_yes} |")
print(f"\n## Confusion matrices of {models[0]}\n")
print("Rows are the human labels, columns the judge's.\n")
for judge, model, a in rows:
    if model != models[0]:
        continue
    print(f"**{judge}** (n {a['n']})\n")
    print("| human \\ judge | " + " | ".join(a["outcomes"]) + " |")
    print("|---|" + "---:|" * len(a["outcomes"]))
    for outcome, row in zip(a["outcomes"], a["confusion"]):
        print(f"| {outcome} | " + " | ".join(str(c) for c in row) + " |")
    print()
print("## How the prompts were chosen\n")
print("The `correct` prompt was picked from five new wordings by running each with the 1.5B model")
print("on the first 12 questions of both answer sets (24 answers) and keeping the one with")
print("the best accuracy and ranking for the default judge model: a \"strict grader\" that names")
print("what makes an answer wrong (a different number, unit, setting or instruction, or a missing")
print("key fact). Four worked examples in the rubric made the 1.5B model worse, not better;")
print("a rubric before the item (longer reused prefix) made the 1.5B model say No too often.")
print("`correctness` uses the same wording with four grades. Those 24 answers are part of the")
print("table above, so its first rows are not held out; the other 156 are.")
PY
cat docs/judge-agreement.md
