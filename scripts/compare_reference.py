#!/usr/bin/env python3
"""Reference values for Assay's paired comparison (tests/compare_reference.rs).

Writes tests/fixtures/compare/reference.json: for each case, paired scores (a, b) and scipy's
answers: the mean difference, the two-sided sign test p-value (binomtest on wins vs losses,
ties dropped), the two-sided paired permutation test p-value (permutation_test with
permutation_type='samples': every pair's scores swapped or not, i.e. signs of B − A flipped;
exact up to 2^20 assignments, else 200,000 resamples) and a 95% BCa bootstrap interval of the
mean difference (paired, 200,000 resamples so that its own Monte Carlo error is small next to
the test's tolerance).

Pinned: python 3.11, numpy 2.x, scipy 1.14.1 (pip install scipy==1.14.1).
"""
import json
import pathlib

import numpy as np
from scipy import stats

rng = np.random.default_rng(20261122)
cases = []
shapes = [
    ("binary, B clearly better", 90, lambda n: (rng.random(n) < 0.55, rng.random(n) < 0.8)),
    ("binary, no difference", 90, lambda n: (rng.random(n) < 0.6, rng.random(n) < 0.6)),
    ("continuous, small shift", 200, lambda n: (rng.beta(2, 2, n), np.clip(rng.beta(2, 2, n) + 0.05, 0, 1))),
    ("continuous, A better", 60, lambda n: (rng.beta(5, 2, n), rng.beta(2, 3, n))),
    ("four labels", 120, lambda n: (rng.integers(0, 4, n) / 3, rng.integers(0, 4, n) / 3)),
    ("few pairs", 8, lambda n: (rng.random(n), rng.random(n))),
    ("many ties", 50, lambda n: (np.ones(n), np.where(rng.random(n) < 0.1, 0.0, 1.0))),
    ("twelve pairs, exact permutation", 12, lambda n: (rng.beta(2, 3, n), rng.beta(3, 2, n))),
    ("eighteen pairs, skewed", 18, lambda n: (rng.exponential(0.2, n), rng.exponential(0.3, n))),
]

def mean_diff(x, y, axis=-1):
    return np.mean(y - x, axis=axis)
for name, n, make in shapes:
    a, b = make(n)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = b - a
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    p = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    if np.all(d == d[0]):
        ci = [float(d[0]), float(d[0])]
    else:
        res = stats.bootstrap((a, b), mean_diff, paired=True, vectorized=True,
                              n_resamples=200_000, confidence_level=0.95, method="BCa",
                              random_state=np.random.default_rng(1))
        ci = [float(res.confidence_interval.low), float(res.confidence_interval.high)]
    nonzero = int((d != 0).sum())
    exact = nonzero <= 20
    if nonzero == 0:
        perm_p = 1.0
    else:
        # Zero differences are the same either way round, so the test runs on the others.
        keep = d != 0
        perm = stats.permutation_test((a[keep], b[keep]), mean_diff, permutation_type="samples",
                                      vectorized=True, n_resamples=np.inf if exact else 200_000,
                                      alternative="two-sided", random_state=np.random.default_rng(2))
        perm_p = float(perm.pvalue)
    cases.append({"name": name, "a": a.tolist(), "b": b.tolist(), "mean_diff": float(d.mean()),
                  "wins": wins, "losses": losses, "ties": int(n - wins - losses),
                  "sign_test_p": float(p), "ci95_diff": ci,
                  "permutation_p": perm_p, "permutation_exact": bool(exact)})

sign_tests = []
for wins, losses in [(0, 1), (1, 1), (3, 9), (12, 4), (20, 20), (31, 12), (0, 40), (150, 120), (560, 500), (2100, 2000)]:
    sign_tests.append([wins, losses, float(stats.binomtest(wins, wins + losses, 0.5).pvalue)])

out = pathlib.Path(__file__).resolve().parent.parent / "tests/fixtures/compare/reference.json"
out.write_text(json.dumps({"cases": cases, "sign_tests": sign_tests}, indent=1) + "\n")
print(f"wrote {len(cases)} cases to {out}")
