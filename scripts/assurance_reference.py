"""Write tests/data/assurance_reference.json: the chance that a labeled round meets its
target margins, by a long simulation that uses no project code.

Each case's counts are drawn with numpy (``default_rng(1000 + case index)``): ``TP ~
Binomial(n_pos, pi1)`` and ``FN ~ Binomial(n_neg, pi0)``, or hypergeometric draws from
finite strata holding ``round(pi * N)`` actual positives. Each round is judged by the
intervals a lead quotes, written out here: Wilson for precision (``n_pos / f1`` trials
under the finite population correction ``f = (N - n)/(N - 1)``, clipped to [0, 1]) and
the Katz log-ratio interval for recall (Haldane-Anscombe 0.5 on all four cells when one
is 0, each stratum's variance times its factor, the bounds widened to reach the plain
estimate). Run ``python3 scripts/assurance_reference.py`` (about a minute).
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import NormalDist

import numpy as np

OUTPUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "assurance_reference.json"
REPS = 400_000


def margins(tp, fn, n1, n0, k, confidence, f1=1.0, f0=1.0):
    """Wilson and Katz half-widths of rounds with counts ``tp`` and ``fn`` (arrays)."""
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    tp, fn = np.asarray(tp, float), np.asarray(fn, float)
    # Wilson with n1/f1 trials
    trials = n1 / f1 if f1 > 0 else np.inf
    p = tp / n1
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    e_p = (np.minimum(centre + half, 1.0) - np.maximum(centre - half, 0.0)) / 2
    # Katz log ratio
    zero = (tp == 0) | (tp == n1) | (fn == 0) | (fn == n0)
    shift = np.where(zero, 0.5, 0.0)
    a, b = tp + shift, n1 - tp + shift
    c, d = fn + shift, n0 - fn + shift
    p1, p0 = a / (a + b), c / (c + d)
    x = p0 / (k * p1)
    se = np.sqrt((1 - p1) / ((a + b) * p1) * f1 + (1 - p0) / ((c + d) * p0) * f0)
    lower, upper = 1 / (1 + x * np.exp(z * se)), 1 / (1 + x * np.exp(-z * se))
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where((tp == 0) & (fn == 0), np.nan, 1 / (1 + (fn / n0) / (k * tp / n1)))
    estimate = np.where(tp == 0, np.where(fn == 0, np.nan, 0.0), estimate)
    reach = np.isfinite(estimate)
    lower = np.where(reach, np.fmin(lower, estimate), lower)
    upper = np.where(reach, np.fmax(upper, estimate), upper)
    return e_p, (upper - lower) / 2


CASES = [
    {"name": "paper plan", "design": {"n_pos": 307, "n_neg": 4411, "k": 0.046, "pi1": 0.79,
     "pi0": 0.01789880597014925, "margin_precision": 0.05, "margin_recall": 0.05,
     "confidence": 0.95}},
    {"name": "fpc optimal plan", "design": {"n_pos": 97, "n_neg": 2265, "k": 0.05,
     "pi1": 0.9, "pi0": 0.019285714285714288, "margin_precision": 0.05,
     "margin_recall": 0.05, "confidence": 0.95, "strata": [300, 6000]}},
    {"name": "unequal costs, assured 80 %", "design": {"n_pos": 285, "n_neg": 4599,
     "k": 0.046, "pi1": 0.79, "pi0": 0.01789880597014925, "margin_precision": 0.05,
     "margin_recall": 0.05, "confidence": 0.95}},
    {"name": "zero cells", "design": {"n_pos": 30, "n_neg": 300, "k": 0.1, "pi1": 0.95,
     "pi0": 0.004, "margin_precision": 0.1, "margin_recall": 0.08, "confidence": 0.95}},
]  # fmt: skip


def simulate(index: int, design: dict) -> dict:
    rng = np.random.default_rng(1000 + index)
    n1, n0 = design["n_pos"], design["n_neg"]
    strata = design.get("strata")
    if strata is None:
        tp = rng.binomial(n1, design["pi1"], REPS)
        fn = rng.binomial(n0, design["pi0"], REPS)
        f1 = f0 = 1.0
    else:
        big1, big0 = strata
        good1, good0 = round(design["pi1"] * big1), round(design["pi0"] * big0)
        tp = rng.hypergeometric(good1, big1 - good1, n1, REPS)
        fn = rng.hypergeometric(good0, big0 - good0, n0, REPS)
        f1, f0 = (big1 - n1) / (big1 - 1), (big0 - n0) / (big0 - 1)
    e_p, e_r = margins(tp, fn, n1, n0, design["k"], design["confidence"], f1, f0)
    met_p = e_p <= design["margin_precision"]
    met_r = e_r <= design["margin_recall"]
    return {
        "precision": float(met_p.mean()),
        "recall": float(met_r.mean()),
        "both": float((met_p & met_r).mean()),
    }


def main() -> None:
    cases = [{**case, "simulated": simulate(i, case["design"])} for i, case in enumerate(CASES)]
    OUTPUT.write_text(
        json.dumps(
            {
                "description": (
                    "Chance that a labeled round's quoted intervals (Wilson precision, Katz "
                    "log-ratio recall with Haldane-Anscombe 0.5 on all cells when one is 0 "
                    "and the bounds widened to the plain estimate, FPC factors (N-n)/(N-1) "
                    "on the variances of finite strata) meet their targets, by an "
                    "independent simulation (scripts/assurance_reference.py, no project "
                    "code): numpy default_rng(1000 + case index), binomial or, with strata, "
                    "hypergeometric draws from strata holding round(pi*N) actual positives."
                ),
                "reps": REPS,
                "cases": cases,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
