"""Benchmarks of the prevalence engine (targets: a 200-point P3 curve with its
band in <= 1 ms; curves for 1,000,000 scored items in <= 1 s), and weighted curves against
scikit-learn's ``average_precision_score`` from 10^4 to 5x10^6 items, with BLAS limited to
one thread and at its default, interleaved in the same run: ours must not be slower.

Run with ``python -m pytest benchmarks/bench_prevalence.py --benchmark-enable -q -s``. With
benchmarks enabled each budgeted case also asserts its median against the budget.
"""

from __future__ import annotations

import statistics
import time

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


# --- weighted curves against scikit-learn ------------------------------------------------

PEER_SIZES = (10_000, 30_000, 100_000, 1_000_000, 5_000_000)


def _weighted_sample(size: int):
    rng = np.random.default_rng(size)
    labels = rng.random(size) < 0.05
    scores = rng.normal(size=size) + 1.5 * labels
    return scores, labels, np.where(scores >= 1.0, 1.0, 10.0)


def _peer_rounds(size: int) -> int:
    return 31 if size <= 100_000 else 9 if size <= 1_000_000 else 5


@pytest.mark.parametrize("blas_threads", [1, None], ids=["blas1", "blas_default"])
@pytest.mark.parametrize("size", PEER_SIZES)
def test_weighted_curves_at_least_as_fast_as_scikit_learn(benchmark, size, blas_threads):
    from sklearn.metrics import average_precision_score
    from threadpoolctl import threadpool_limits

    scores, labels, weights = _weighted_sample(size)

    def ours():
        return scored_curves(scores, labels, weights).average_precision

    def theirs():
        return average_precision_score(labels, scores, sample_weight=weights)

    with threadpool_limits(limits=blas_threads, user_api="blas"):
        assert ours() == pytest.approx(theirs(), rel=1e-10)
        benchmark.pedantic(ours, rounds=3 if size > 1_000_000 else 10, iterations=1)
        if benchmark.disabled:
            return
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(_peer_rounds(size)):  # interleaved: load hits both alike
            for function, sink in ((ours, times[0]), (theirs, times[1])):
                started = time.perf_counter()
                function()
                sink.append(time.perf_counter() - started)
    ours_s, theirs_s = statistics.median(times[0]), statistics.median(times[1])
    benchmark.extra_info.update(ours_ms=ours_s * 1e3, sklearn_ms=theirs_s * 1e3)
    print(
        f"\n{size:>9,} items, BLAS threads {blas_threads or 'default'}: curves "
        f"{ours_s * 1e3:.1f} ms, sklearn average_precision_score {theirs_s * 1e3:.1f} ms "
        f"(ratio {ours_s / theirs_s:.2f})"
    )
    assert ours_s <= theirs_s, f"{ours_s * 1e3:.1f} ms vs scikit-learn {theirs_s * 1e3:.1f} ms"
