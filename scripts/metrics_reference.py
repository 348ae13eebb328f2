#!/usr/bin/env python3
"""Reference values for Assay's deterministic metrics (tests/metrics_reference.rs).

    python3 -m pip install -r scripts/requirements-metrics.txt
    python3 scripts/metrics_reference.py generate    # writes pairs.jsonl and rankings.jsonl
    python3 scripts/metrics_reference.py reference   # writes reference.jsonl from them

Versions used for the committed reference.jsonl: rouge-score 0.1.2, sacrebleu 2.6.0,
pytrec-eval-terrier 0.5.11, ranx 0.3.21 (optional cross-check), Python 3.11.

Text metrics: exact match and token F1 follow the SQuAD v2 evaluation logic (written out below
from its definition), ROUGE-1/ROUGE-L F-measure come from rouge-score's RougeScorer with its
defaults, BLEU from sacrebleu.sentence_bleu with its defaults, divided by 100.
Ranking metrics: pytrec_eval's success.k, recip_rank and ndcg_cut.k; when ranx is installed its
hit_rate@k, mrr and ndcg@k must agree with pytrec_eval to 1e-9.
"""

import collections
import json
import random
import re
import string
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metrics"
PAIRS = FIXTURES / "pairs.jsonl"
RANKINGS = FIXTURES / "rankings.jsonl"
REFERENCE = FIXTURES / "reference.jsonl"

# ---------------------------------------------------------------------------------------------
# Fixture generation (seeded, so `generate` always writes the same files)

HANDWRITTEN_PAIRS = [
    # (candidate, reference)
    ("Five seconds.", "Five seconds."),
    ("five seconds", "Five seconds."),
    ("Hold it for five seconds.", "Five seconds."),
    ("Hold RESET for 5 seconds until the LED blinks.", "Hold the reset button for five seconds."),
    ("", ""),
    ("", "Five seconds."),
    ("Five seconds.", ""),
    ("   ", "\t\n"),
    ("...", "!!!"),
    ("The", "a an the"),
    ("the the the", "the"),
    ("red red red car", "red car car"),
    ("Tighten to 3.5 N·m.", "The torque is 3.5 N·m"),
    ("Tighten to 3,5 N·m.", "Tighten to 3.5 N·m."),
    ("10,000 rpm", "10.000 rpm"),
    ("1.5-2.0 bar", "between 1.5 and 2.0 bar"),
    ("Range: 10-20 °C", "10 – 20 °C"),
    ("on-off switch", "on/off switch"),
    ("Use the café setting.", "Use the cafe setting."),
    ("Café au lait", "café au lait"),
    ("cafe\u0301 mode", "café mode"),
    ("Über-cool naïve façade", "uber cool naive facade"),
    ("日本語のマニュアルを参照してください", "日本語のマニュアル"),
    ("设置 温度 为 60 度", "温度 60 度"),
    ("한국어 설명서", "한국어 설명서"),
    ("Done 👍", "Done! 👍🏽"),
    ("🙂🙂🙂", "🙂"),
    ("Straße", "STRASSE"),
    ("İstanbul office", "istanbul office"),
    ("ΟΔΟΣ ΚΑΙ ΣΟΦΙΑ", "οδος και σοφια"),
    ("Temperature in \u212a", "temperature in k"),
    ("１２３ steps", "123 steps"),
    ("٣ minutes", "3 minutes"),
    ("Press\u00a0START", "press start"),
    ("zero\u200bwidth space", "zero width space"),
    ("sep\u001carated\u001dby\u001eseparators\u001f", "sep arated by separators"),
    ("line\u2028separator and\u0085next line", "line separator and next line"),
    ("tabs\tand\nnewlines\r\nmixed", "tabs and newlines mixed"),
    ("hyphen-\nated word", "hyphenated word"),
    ("<skipped> the filter", "the filter"),
    ("Tom &amp; Jerry &lt;3 &quot;cartoon&quot; &gt;", "Tom & Jerry <3 \"cartoon\" >"),
    ("&amp;lt; is escaped", "< is escaped"),
    ("Don't use bleach.", "Do not use bleach."),
    ("Don’t use bleach.", "Don't use bleach."),
    ("It's the user's manual.", "Its the users manual"),
    ("\"Quoted\" (parenthetical) [bracketed] {braced}", "quoted parenthetical bracketed braced"),
    ("e-mail: support@example.com", "Email support at support@example.com."),
    ("Visit https://example.com/help?id=3#faq", "example com help"),
    ("C:\\Program Files\\Assay", "program files assay"),
    ("snake_case_name and CamelCase", "snake case name and camelcase"),
    ("$19.99 + tax = ~$21", "19.99 dollars plus tax"),
    ("50% off; 2x faster!", "50 % off , 2x faster"),
    ("a.b.c", "a b c"),
    ("end.", "end ."),
    ("Mr. Smith, Dr. Jones.", "Mr Smith Dr Jones"),
    ("3.", "3"),
    (".5 mm", "0.5 mm"),
    ("v2.0.1-beta", "version 2.0.1 beta"),
    ("-5 degrees", "minus 5 degrees"),
    ("5-", "5 -"),
    ("x,y,z", "x, y, z"),
    ("4,5.6", "4 , 5.6"),
    ("Yes", "No"),
    ("yes.", "Yes"),
    ("An answer", "answer"),
    ("Anna and the an", "anna and"),
    ("theory of a theme", "theory of theme"),
    ("A", "a"),
    ("the_end", "the end"),
    ("a-b the-c", "b c"),
    ("Replace the filter every 6 months.", "Replace the filter every six months."),
    ("Replace the filter every 6 months.", "Every 6 months, replace the filter."),
    ("Every 6 months, replace the filter.", "Replace the filter every 6 months."),
    ("The warranty lasts two years from the date of purchase.", "Two years."),
    ("Two years.", "The warranty lasts two years from the date of purchase."),
    ("I don't know.", "Two years."),
    ("I can't answer that from the manual.", "This is not covered in the manual."),
    ("Completely unrelated words here", "Nothing shared at all"),
    ("descale descale descale descale", "descale the machine monthly"),
    ("Descale monthly using citric acid; rinse twice.", "Descale the machine monthly with citric acid and rinse it twice."),
    ("The LED blinks red when the filter needs replacing",
     "When the filter needs replacing, the LED blinks red."),
    ("UPPER CASE ANSWER", "upper case answer"),
    ("MiXeD CaSe", "mixed case"),
    ("trailing spaces   ", "trailing spaces"),
    ("   leading spaces", "leading spaces"),
    ("ellipsis… and em—dash", "ellipsis and em dash"),
    ("« guillemets » and „quotes“", "guillemets and quotes"),
    ("O'Reilly's book", "oreillys book"),
]

VOCABULARY = (
    "hold press release the reset button filter water tank pump valve led light blinks red green "
    "seconds minutes hours daily weekly monthly replace clean descale rinse dry install remove "
    "power cord outlet warranty years months service center model number display error code "
    "temperature pressure bar psi torque screw bolt tighten loosen a an of to for with until when "
    "if then and or not do don't never always check manual page section 1 2 3 5 10 30 60 100 "
    "3.5 0.5 1,000 N·m °C café naïve Über 日本 🙂"
).split()

PUNCTUATION_SPRINKLE = [".", ",", "!", "?", ";", ":", " -", "(", ")", "\"", "'", "..."]


def random_sentence(rng, low, high):
    words = [rng.choice(VOCABULARY) for _ in range(rng.randint(low, high))]
    out = []
    for w in words:
        if rng.random() < 0.15:
            w = w.capitalize()
        if rng.random() < 0.1:
            w = w.upper()
        out.append(w)
        if rng.random() < 0.12:
            out[-1] += rng.choice(PUNCTUATION_SPRINKLE)
    return " ".join(out)


def perturb(rng, sentence):
    words = sentence.split()
    choice = rng.randrange(6)
    if choice == 0 and words:  # drop words
        words = [w for w in words if rng.random() > 0.3]
    elif choice == 1 and len(words) > 1:  # swap neighbours
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    elif choice == 2:  # repeat words
        words = [w for w in words for _ in range(rng.choice([1, 1, 2]))]
    elif choice == 3:  # replace words
        words = [rng.choice(VOCABULARY) if rng.random() < 0.3 else w for w in words]
    elif choice == 4:  # change case and punctuation
        words = [w.lower().strip(".,!?") for w in words]
    else:  # append a clause
        words += random_sentence(rng, 1, 6).split()
    return " ".join(words)


def generated_pairs(rng, count):
    pairs = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            ref = random_sentence(rng, 1, 12)
            pairs.append((perturb(rng, ref), ref))
        elif kind == 1:
            pairs.append((random_sentence(rng, 1, 10), random_sentence(rng, 1, 10)))
        elif kind == 2:  # long answers
            ref = random_sentence(rng, 40, 120)
            pairs.append((perturb(rng, perturb(rng, ref)), ref))
        elif kind == 3:  # short, often one or two words: effective order and brevity
            ref = random_sentence(rng, 1, 3)
            pairs.append((random_sentence(rng, 1, 3) if rng.random() < 0.5 else perturb(rng, ref), ref))
        else:  # identical up to case / punctuation
            ref = random_sentence(rng, 3, 15)
            pairs.append((ref.lower() if rng.random() < 0.5 else ref, ref))
    return pairs


def generated_rankings(rng, count):
    rankings = []
    for i in range(count):
        length = rng.choice([0, 1, 2, 3, 4, 5, 8, 10, 20])
        relevant = [rng.random() < rng.choice([0.1, 0.3, 0.6]) for _ in range(length)]
        found = sum(relevant)
        missing = rng.choice([0, 0, 1, 2, 5])
        relevant_total = found + missing
        if relevant_total == 0:  # nDCG is undefined without relevant items: covered by unit tests
            relevant_total = 1
        k = rng.choice([1, 2, 3, 4, 5, 10, 25])
        rankings.append({"id": f"r{i:03}", "relevant": relevant, "relevant_total": relevant_total, "k": k})
    return rankings


def generate():
    rng = random.Random(20261122)
    pairs = HANDWRITTEN_PAIRS + generated_pairs(rng, 160)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    with PAIRS.open("w", encoding="utf-8") as f:
        for i, (candidate, reference) in enumerate(pairs):
            f.write(json.dumps({"id": f"p{i:03}", "candidate": candidate, "reference": reference},
                               ensure_ascii=False) + "\n")
    with RANKINGS.open("w", encoding="utf-8") as f:
        for ranking in generated_rankings(rng, 80):
            f.write(json.dumps(ranking) + "\n")
    print(f"wrote {len(pairs)} pairs to {PAIRS} and 80 rankings to {RANKINGS}")


# ---------------------------------------------------------------------------------------------
# SQuAD v2 exact match and F1, from the definition in the official evaluation script


def squad_normalize(text):
    """Lowercase, remove punctuation, remove articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text, flags=re.UNICODE)
    return " ".join(text.split())


def squad_tokens(text):
    if not text:
        return []
    return squad_normalize(text).split()


def squad_exact_match(candidate, reference):
    return float(squad_normalize(candidate) == squad_normalize(reference))


def squad_f1(candidate, reference):
    gold = squad_tokens(reference)
    pred = squad_tokens(candidate)
    if not gold or not pred:
        # A no-answer on either side scores 1 only when both are no-answers.
        return float(gold == pred)
    same = sum((collections.Counter(gold) & collections.Counter(pred)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------------------------------------


def read_jsonl(path):
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ranking_reference(rankings):
    import pytrec_eval

    out = []
    for r in rankings:
        relevant, k = r["relevant"], r["k"]
        # Distinct, strictly decreasing scores keep the list order (trec_eval sorts by score).
        run = {"q": {f"d{i}": float(len(relevant) - i) for i in range(len(relevant))}}
        qrels = {"q": {f"d{i}": 1 for i, rel in enumerate(relevant) if rel}}
        for j in range(r["relevant_total"] - sum(relevant)):
            qrels["q"][f"unretrieved{j}"] = 1
        if not relevant:
            # trec_eval leaves out queries with an empty run; all three are 0 by definition.
            values = {"hit_at_k": 0.0, "mrr": 0.0, "ndcg_at_k": 0.0}
        else:
            evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"success.{k}", "recip_rank", f"ndcg_cut.{k}"})
            result = evaluator.evaluate(run)["q"]
            values = {
                "hit_at_k": result[f"success_{k}"],
                "mrr": result["recip_rank"],
                "ndcg_at_k": result[f"ndcg_cut_{k}"],
            }
            cross_check_ranx(qrels, run, k, values)
        out.append({"id": r["id"], "kind": "ranking", **values})
    return out


def cross_check_ranx(qrels, run, k, values):
    try:
        import ranx
    except ImportError:
        return
    result = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), [f"hit_rate@{k}", "mrr", f"ndcg@{k}"])
    for ours, theirs in [("hit_at_k", f"hit_rate@{k}"), ("mrr", "mrr"), ("ndcg_at_k", f"ndcg@{k}")]:
        if abs(values[ours] - result[theirs]) > 1e-9:
            sys.exit(f"ranx and pytrec_eval disagree on {ours}: {result[theirs]} vs {values[ours]}")


def reference():
    from rouge_score import rouge_scorer
    import sacrebleu

    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"])
    rows = []
    for pair in read_jsonl(PAIRS):
        candidate, ref = pair["candidate"], pair["reference"]
        rouge = scorer.score(ref, candidate)  # score(target, prediction)
        rows.append({
            "id": pair["id"],
            "kind": "text",
            "exact_match": squad_exact_match(candidate, ref),
            "token_f1": squad_f1(candidate, ref),
            "rouge_1": rouge["rouge1"].fmeasure,
            "rouge_l": rouge["rougeL"].fmeasure,
            "bleu": sacrebleu.sentence_bleu(candidate, [ref]).score / 100.0,
        })
    rows += ranking_reference(read_jsonl(RANKINGS))
    with REFERENCE.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"wrote {len(rows)} reference rows to {REFERENCE}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "generate":
        generate()
    elif command == "reference":
        reference()
    else:
        sys.exit(__doc__)
