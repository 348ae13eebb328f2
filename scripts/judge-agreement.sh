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
long_judges=${ASSAY_AGREE_LONG_JUDGES:-correct,supported}
# ASSAY_AGREE_SHORT=0 leaves out the 180 short sample answers (long sets only).
short=${ASSAY_AGREE_SHORT:-1}
# ASSAY_AGREE_LONG_SETS=a,b judges only these long-answer sets (default: all four); a set left
# out keeps the figures of its last run in target/judge-agreement, which the table dates.
long_sets=,${ASSAY_AGREE_LONG_SETS:-trailgear,realdocs-hard,budgets,realdocs},
limit=()
[[ -n ${ASSAY_AGREE_LIMIT:-} ]] && limit=(--limit "$ASSAY_AGREE_LIMIT")
out=target/judge-agreement
mkdir -p "$out"
export ASSAY_DB="${ASSAY_DB:-$PWD/$out/runs.sqlite}"
for model in "${models[@]}"; do
  for set in careful sloppy; do
    ((short)) || continue
    name="agree-$set-$model"
    # Reuse a finished run of the same name (the script can be stopped and started again).
    if ! { $assay runs --json 2>/dev/null || echo '[]'; } | python3 -c "import json,sys; sys.exit(0 if any(r['name']=='$name' and r['status']=='finished' for r in json.load(sys.stdin)) else 1)"; then
      start=$(date +%s)
      $assay run datasets/trailgear --target "answers:answers-$set.jsonl" --judges "$judges" \
        --judge-model "$model" --name "$name" "${limit[@]}" >/dev/null
      echo "$name: $(( $(date +%s) - start )) s" >&2
    fi
  done
  if ((short)); then
    $assay agree "agree-careful-$model" "agree-sloppy-$model" \
      --labels datasets/trailgear/labels-careful.jsonl --labels datasets/trailgear/labels-sloppy.jsonl \
      --json > "$out/$model.json"
  fi
  # Long answers, labelled `correct` by reading: the sample dataset's (written for this
  # project) and three real-document sets' (written by small local models over real PDFs).
  # `correct` and `supported` judge them; `supported` is compared with the same labels
  # (--labels-as correct). Where a set has a claim-level reference (claims-long.jsonl, a
  # strong judge's claim precision/recall/F1 done by reading), the export is kept so the table
  # can rank each score against claim F1. Questions without an answer in the file are left
  # unscored; a set without long answers is skipped.
  for long in trailgear:long realdocs-hard:rdh-long budgets:budgets-long realdocs:rd-long; do
    dataset=${long%%:*} tag=${long#*:}
    [[ -f datasets/$dataset/labels-long.jsonl ]] || continue
    [[ $long_sets == *,$dataset,* ]] || continue
    name="agree-$tag-$model"
    if ! { $assay runs --json 2>/dev/null || echo '[]'; } | python3 -c "import json,sys; sys.exit(0 if any(r['name']=='$name' and r['status']=='finished' for r in json.load(sys.stdin)) else 1)"; then
      start=$(date +%s)
      $assay run "datasets/$dataset" --target answers:answers-long.jsonl --judges "$long_judges" \
        --judge-model "$model" --name "$name" "${limit[@]}" >/dev/null 2>"$out/$name.log"
      echo "$name: $(( $(date +%s) - start )) s" >&2
    fi
    $assay agree "$name" --labels "datasets/$dataset/labels-long.jsonl" --labels-as correct --json > "$out/$model-$tag.json"
    $assay export "$name" --format json --output "$out/$model-$tag.export.json" >/dev/null
  done
done
# The runs' dates and the machine, for the table's header (figures shift with the kernels and
# the judge's build, and a shared machine is slow, not wrong).
{ $assay runs --json 2>/dev/null || echo '[]'; } > "$out/runs.json"
export AGREE_MACHINE="$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) when the table was made"
python3 - "$out" "${models[@]}" > docs/judge-agreement.md <<'PY'
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
runs = {r["name"]: r for r in json.load(open(f"{out}/runs.json"))}
def when(run):
    return f"{run['created_at'][:16].replace('T', ' ')} to {(run.get('finished_at') or '?')[:16].replace('T', ' ')}"
def f(v):
    return "n/a" if v is None or v != v else f"{v:.3f}"
def length(a):
    # Older JSON (before `agree` reported length) has no such field.
    return f(a.get("length_spearman")) + (" ⚠" if a.get("length_biased") else "")
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
print("parse: `unscored` counts items the judge could not score for another reason.")
print("*Length Spearman* is the rank correlation of the judge's expected score with the answer's")
print("length in words over the same answers; ⚠ marks a judge whose score tracks length more than")
print("it tracks the labels (|length Spearman| > |score Spearman|), as `assay agree` warns.\n")
print("| judge | model | n | unscored | accuracy | kappa | Spearman | score Spearman | length Spearman |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
rows = []
for model in models:
    if not os.path.exists(f"{out}/{model}.json"):
        continue
    for a in json.load(open(f"{out}/{model}.json")):
        rows.append((a["judge"], model, a))
rows.sort(key=lambda r: (r[0], models.index(r[1])))
if not rows:
    print("| (the short sample answers were not judged in this run of the script: ASSAY_AGREE_SHORT=0; "
          "their last table is in this file's git history) | | | | | | | | |")
for judge, model, a in rows:
    print(f"| {judge} | {model} | {a['n']} | {a['unscored']} | {f(a['accuracy'])} | {f(a.get('kappa'))} "
          f"| {f(a.get('spearman'))} | {f(a.get('score_spearman'))} | {length(a)} |")
if rows:
    print("\nRuns behind this table (UTC):\n")
    for model in dict.fromkeys(m for _, m, _ in rows):
        for answers in ("careful", "sloppy"):
            run = runs.get(f"agree-{answers}-{model}")
            if run:
                print(f"- {answers}, {model}: {when(run)}")
print(f"\nMachine: {os.environ.get('AGREE_MACHINE', 'not recorded')}.")
print("\n## Long answers\n")
print("`correct` and `supported` on long answers, each set against its `labels-long.jsonl` (`supported`")
print("against the same labels: `--labels-as correct`): `trailgear`, 38 answers of 175-437 words written")
print("for this project; `realdocs-hard`, `budgets` and `realdocs`, answers that small local models")
print("wrote about real PDFs (each set's SOURCES.md says how; LABELLING.md the rules). *claim-F1")
print("Spearman* ranks the judge's score against a claim-level reference (claims-long.jsonl: each")
print("answer's claims checked against the reference answer and back, by reading; CLAIMS.md), the")
print("way a strong reference judge's claim F1 is used; ROUGE-L and token F1 are there to beat.")
print("Time per answer is measured by `assay bench` (the judge reading bench), not here: these")
print("runs share the machine with whatever else runs.\n")
print("| answers | judge | model | n | unscored | accuracy | kappa | score Spearman | claim-F1 Spearman | length Spearman | right failed | wrong passed |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def ranks(x):
    order = sorted(range(len(x)), key=lambda i: x[i]); r = [0.0] * len(x); i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r
def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b); ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else None
import os
for tag, dataset in [("long", "trailgear"), ("rdh-long", "realdocs-hard"), ("budgets-long", "budgets"), ("rd-long", "realdocs")]:
    for model in models:
        path = f"{out}/{model}-{tag}.json"
        if not os.path.exists(path):
            continue
        export = json.load(open(f"{out}/{model}-{tag}.export.json"))["runs"][0]
        claims = {}
        if os.path.exists(f"datasets/{dataset}/claims-long.jsonl"):
            claims = {r["id"]: r["f1"] for r in map(json.loads, open(f"datasets/{dataset}/claims-long.jsonl"))}
        def claim_rho(score_of):
            pairs = [(score_of(i), claims[i["id"]]) for i in export["items"] if i["id"] in claims and score_of(i) is not None]
            return spearman([p[0] for p in pairs], [p[1] for p in pairs]) if claims else None
        for a in json.load(open(path)):
            judge = a["judge"].split("@")[0]
            if judge == "facts":
                continue  # its own table below, under today's threshold
            (no_no, no_yes), (yes_no, yes_yes) = a["confusion"]
            rho = claim_rho(lambda i: (i["verdicts"].get(judge) or {}).get("score"))
            print(f"| {dataset} | {judge} | {model} | {a['n']} | {a['unscored']} | {f(a['accuracy'])} | {f(a.get('kappa'))} "
                  f"| {f(a.get('score_spearman'))} | {f(rho)} | {length(a)} | {yes_no} of {yes_no + yes_yes} | {no_yes} of {no_no + no_yes} |")
        for metric in ["rouge_l", "token_f1"]:
            rho = claim_rho(lambda i: i["metrics"].get(metric))
            if rho is not None:
                print(f"| {dataset} | {metric} (metric) | — | {len(claims)} | — | — | — | — | {f(rho)} | — | — | — |")
print("\n### `facts` (mean of `correct`, `supported` and `rouge_l`; Yes at 0.45)\n")
print("The jury's score is the mean of its members' scores, so it is computed here from each run's")
print("stored `correct` and `supported` verdicts and `rouge_l` metric (where the run also judged")
print("with `facts`, its stored score is checked to be the same). Its threshold, 0.45, was fitted on")
print("the realdocs-hard and trailgear labels; budgets and realdocs had no part in it.\n")
print("| answers | model | n | accuracy | kappa | claim-F1 Spearman | length Spearman | right failed | wrong passed |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
def facts_figures(rows_, threshold):
    """(n, accuracy, kappa, claim-F1 Spearman, length Spearman, right failed, right, wrong passed, wrong)"""
    tp = sum(1 for r in rows_ if r[1] >= threshold and r[2]); fp = sum(1 for r in rows_ if r[1] >= threshold and not r[2])
    fn = sum(1 for r in rows_ if r[1] < threshold and r[2]); tn = sum(1 for r in rows_ if r[1] < threshold and not r[2])
    n = len(rows_)
    po = (tp + tn) / n if n else None
    pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n / n if n else None
    kappa = (po - pe) / (1 - pe) if n and pe != 1 else None
    with_claims = [(r[1], r[4]) for r in rows_ if r[4] is not None]
    rho = spearman([a for a, _ in with_claims], [b for _, b in with_claims]) if with_claims else None
    rho_len = spearman([r[1] for r in rows_], [r[3] for r in rows_])
    return n, po, kappa, rho, rho_len, fn, fn + tp, fp, fp + tn
facts_by_set = {}
for tag, dataset in [("long", "trailgear"), ("rdh-long", "realdocs-hard"), ("budgets-long", "budgets"), ("rd-long", "realdocs")]:
    for model in models:
        path = f"{out}/{model}-{tag}.export.json"
        if not os.path.exists(path):
            continue
        export = json.load(open(path))["runs"][0]
        labels = {r["id"]: r["label"] == "Yes" for r in map(json.loads, open(f"datasets/{dataset}/labels-long.jsonl"))}
        claims = {}
        if os.path.exists(f"datasets/{dataset}/claims-long.jsonl"):
            claims = {r["id"]: r["f1"] for r in map(json.loads, open(f"datasets/{dataset}/claims-long.jsonl"))}
        facts_rows = []
        for item in export["items"]:
            v, m = item["verdicts"], item["metrics"]
            parts = [(v.get("correct") or {}).get("score"), (v.get("supported") or {}).get("score"), m.get("rouge_l")]
            if item["id"] not in labels or any(p is None for p in parts):
                continue
            score = sum(parts) / 3
            stored = (v.get("facts") or {}).get("score")
            assert stored is None or abs(stored - score) < 1e-9, (item["id"], stored, score)
            facts_rows.append((item["id"], score, labels[item["id"]], len(item["answer"].split()), claims.get(item["id"])))
        facts_by_set[(dataset, model)] = facts_rows
def facts_line(name, model, rows_, threshold):
    n, po, kappa, rho, rho_len, fn, right, fp, wrong = facts_figures(rows_, threshold)
    print(f"| {name} | {model} | {n} | {f(po)} | {f(kappa)} | {f(rho)} | {f(rho_len)} | {fn} of {right} | {fp} of {wrong} |")
for (dataset, model), rows_ in facts_by_set.items():
    facts_line(dataset, model, rows_, 0.45)
for model in models:
    pooled = [r for d in ("budgets", "realdocs") for r in facts_by_set.get((d, model), [])]
    if pooled:
        facts_line("budgets + realdocs", model, pooled, 0.45)
# Is the threshold right? Fit it on one group of sets (the threshold with the best kappa; ties
# settled by the middle of the tied range) and report it on the other group, which had no part
# in the fit, both ways round. The sample's short answers are in neither group.
groups = [("realdocs-hard + trailgear", ("realdocs-hard", "trailgear")), ("budgets + realdocs", ("budgets", "realdocs"))]
def best_threshold(rows_):
    scores = sorted({r[1] for r in rows_})
    cuts = [0.0] + [(a + b) / 2 for a, b in zip(scores, scores[1:])] + [1.0]
    kappas = [(facts_figures(rows_, c)[2] or -1.0) for c in cuts]
    top = max(kappas)
    tied = [c for c, k in zip(cuts, kappas) if k == top]
    return tied[len(tied) // 2]
fit_lines = []
for model in models:
    pooled = {name: [r for d in sets for r in facts_by_set.get((d, model), [])] for name, sets in groups}
    if not all(pooled.values()):
        continue
    for (fit_name, _), (held_name, _) in [(groups[0], groups[1]), (groups[1], groups[0])]:
        t = best_threshold(pooled[fit_name])
        fit_lines.append((fit_name, held_name, model, t, facts_figures(pooled[fit_name], t), facts_figures(pooled[held_name], t)))
if fit_lines:
    print("\nThe threshold refitted (best kappa) on one group of sets and read on the other, held out:\n")
    print("| fitted on | threshold | model | kappa there | held out | accuracy | kappa | right failed | wrong passed |")
    print("|---|---:|---|---:|---|---:|---:|---:|---:|")
    for fit_name, held_name, model, t, there, held in fit_lines:
        print(f"| {fit_name} | {t:.3f} | {model} | {f(there[2])} | {held_name} | {f(held[1])} | {f(held[2])} | {held[5]} of {held[6]} | {held[7]} of {held[8]} |")
print("\nRuns behind the long-answer tables (UTC; a set the last call of the script left out keeps its")
print("earlier run):\n")
for tag, dataset in [("long", "trailgear"), ("rdh-long", "realdocs-hard"), ("budgets-long", "budgets"), ("rd-long", "realdocs")]:
    for model in models:
        path = f"{out}/{model}-{tag}.export.json"
        if os.path.exists(path):
            run = json.load(open(path))["runs"][0]
            print(f"- {dataset}, {model}: {run['created_at'][:16].replace('T', ' ')} to {(run.get('finished_at') or '?')[:16].replace('T', ' ')}")
            # A run made outside this script (a set judged in part) says what it covers.
            for note in run.get("notes", []):
                print(f"  - {note}")
print()
if rows:
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
