#!/usr/bin/env python3
"""Reference values for tests/judge_agreement.rs: Cohen's kappa (unweighted, linear, quadratic)
from scikit-learn and Spearman's rho from scipy on fixed rating pairs with ties.
Writes tests/fixtures/judge/agreement_reference.json."""
import json
import random
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

random.seed(7)
cases = []
for name, k, n in [("binary", 2, 40), ("four", 4, 90), ("five", 5, 60)]:
    a = [random.randrange(k) for _ in range(n)]
    # The second rater agrees often and is off by one otherwise, like a judge.
    b = [x if random.random() < 0.6 else min(k - 1, max(0, x + random.choice([-1, 1]))) for x in a]
    cases.append({
        "name": name, "k": k, "a": a, "b": b,
        "kappa": cohen_kappa_score(a, b),
        "kappa_linear": cohen_kappa_score(a, b, weights="linear"),
        "kappa_quadratic": cohen_kappa_score(a, b, weights="quadratic"),
        "spearman": spearmanr(a, b).statistic,
    })
with open("tests/fixtures/judge/agreement_reference.json", "w") as f:
    json.dump(cases, f, indent=1)
