"""Benchmarks of the prevalence engine (issue 3, section 4: a 200-point P3 curve with its
band in <= 1 ms; curves for 1,000,000 scored items in <= 1 s).

Run with ``python -m pytest benchmarks/bench_prevalence.py --benchmark-enable -q``. With
benchmarks enabled each budgeted case also asserts its median against the budget.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.curves import scored_curves
from core.prevalence import OperatingPoint, compare_across_prevalence, p3_curve

P3_BUDGET_SECONDS = 1e-3
CURVES_BUDGET_SECONDS = 1.0
ITEMS = 1_000_000


def _check_budget(benchmark, budget: float) -> None:
    if not benchmark.disabled:
        median = benchmark.stats.stats.median
        assert median <= budget, f"median {median:.3g} s exceeds the {budget:g} s budget"


@pytest.fixture(scope="module")
def million_scored_items():
    rng = np.random.default_rng(2024)
    labels = rng.random(ITEMS) < 0.05
    scores = rng.normal(size=ITEMS) + 1.5 * labels
    # Stratum weights of an over-sampled round: items scored >= 1 drawn 10 times as often.
    weights = np.where(scores >= 1.0, 1.0, 10.0)
    return scores, labels, weights


def test_p3_curve_200_points_with_band(benchmark):
    point = OperatingPoint(tpr=0.8, fpr=0.01, sigma_tpr=0.05, sigma_fpr=0.002)
    curve = benchmark(p3_curve, point, points=200, reference_prevalence=0.01)
    assert curve.lower.size == 200
    _check_budget(benchmark, P3_BUDGET_SECONDS)


def test_p3_curve_json_object(benchmark):
    # What ``prplanner p3 --json`` adds on top: 200 dicts of plain floats.
    point = OperatingPoint(tpr=0.8, fpr=0.01, sigma_tpr=0.05, sigma_fpr=0.002)
    result = benchmark(lambda: p3_curve(point).to_dict())
    assert len(result["curve"]) == 200


def test_five_classifiers_across_prevalence_with_rank_swaps(benchmark):
    points = [
        OperatingPoint(tpr=t, fpr=f, name=str(i))
        for i, (t, f) in enumerate(
            [(0.9, 0.01), (0.5, 0.001), (0.99, 0.2), (0.7, 0.003), (0.3, 1e-4)]
        )
    ]
    comparison = benchmark(compare_across_prevalence, points)
    assert comparison.f_beta.shape == (5, 200)


def test_curves_one_million_scored_items(benchmark, million_scored_items):
    scores, labels, _ = million_scored_items
    curves = benchmark(scored_curves, scores, labels)
    assert curves.n_items == ITEMS
    _check_budget(benchmark, CURVES_BUDGET_SECONDS)


def test_curves_one_million_weighted_items_with_calibration(benchmark, million_scored_items):
    scores, labels, weights = million_scored_items

    def weighted_summary():
        return scored_curves(scores, labels, weights).summary(reference_prevalence=0.01)

    summary = benchmark(weighted_summary)
    assert summary.calibrated_average_precision is not None
    _check_budget(benchmark, CURVES_BUDGET_SECONDS)


def test_average_precision_against_prevalence_one_million_items(benchmark, million_scored_items):
    scores, labels, _ = million_scored_items
    curves = scored_curves(scores, labels)
    eta, area = benchmark(curves.area_under_pr_vs_prevalence)
    assert area.size == eta.size == 200
