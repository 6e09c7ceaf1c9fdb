"""Benchmarks of one round's evaluation, and of the intervals of many rounds at once.

Run: ``python -m pytest benchmarks/bench_evaluation.py --benchmark-enable -q``.
Targets: all closed-form intervals of one matrix <= 50 us; bootstrap and Monte-Carlo with
Q = 100000 <= 30 ms each; Wilson, Clopper-Pearson, Jeffreys and Agresti-Coull of 10,000
matrices (:mod:`core.batch_intervals`) at least as fast as statsmodels' vectorized
``proportion_confint``, measured in the same run, interleaved.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pytest

from core import batch_intervals, intervals, resampling
from core.bayes import Prior, bayes_precision_interval, bayes_recall_interval
from core.confusion import ConfusionMatrix
from core.evaluation import evaluate

MATRIX = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
K = 0.05
Q = 100_000


def all_closed_form_intervals():
    return (
        intervals.precision_intervals(MATRIX, 0.95),
        intervals.katz_log_recall(MATRIX, K),
        intervals.delta_recall(MATRIX, K),
        intervals.katz_log_fpr(MATRIX, K),
    )


def test_closed_form_intervals_of_one_matrix(benchmark):
    result = benchmark(all_closed_form_intervals)
    assert len(result[0]) == 5


def test_closed_form_plus_eq_6_to_8(benchmark):
    posterior = Prior.none().posterior(MATRIX)

    def run():
        all_closed_form_intervals()
        bayes_precision_interval(posterior, MATRIX.n_pos)
        return bayes_recall_interval(posterior, K, MATRIX.n_pos, MATRIX.n_neg)

    benchmark(run)


def test_bootstrap_q_100000(benchmark):
    def run():
        draws = resampling.bootstrap(*MATRIX.as_tuple(), K, replicates=Q, seed=1)
        return draws.interval("precision"), draws.interval("recall"), draws.interval("f1")

    benchmark(run)


def test_bayes_monte_carlo_q_100000(benchmark):
    posterior = Prior.none().posterior(MATRIX)
    z = (posterior.z11, posterior.z01, posterior.z10, posterior.z00)

    def run():
        draws = resampling.bayes_predictive(*z, K, MATRIX.n_pos, MATRIX.n_neg, replicates=Q, seed=1)
        return draws.interval("precision"), draws.interval("recall"), draws.interval("f1")

    benchmark(run)


def test_posterior_draws_q_100000(benchmark):
    def run():
        draws = resampling.posterior_draws(138, 22, 108, 4732, K, replicates=Q, seed=1)
        return draws.interval("recall"), draws.interval("f1")

    benchmark(run)


def test_evaluate_default_q_10000(benchmark):
    benchmark(evaluate, MATRIX, population=K, seed=1)


# --- many matrices at once ---------------------------------------------------------------

MANY = 10_000
#: The four methods statsmodels' ``proportion_confint`` shares with us (ours, theirs).
SHARED_METHODS = (
    ("wilson", "wilson"),
    ("clopper_pearson", "beta"),
    ("jeffreys", "jeffreys"),
    ("agresti_coull", "agresti_coull"),
)
PEER_ROUNDS = 15


def _rounds_of_designs() -> tuple[np.ndarray, np.ndarray]:
    """10,000 labeled rounds of 40 designs (the History tab, the report, the coverage
    experiment): predicted positives n1 in 50..2000, precision about 0.85."""
    rng = np.random.default_rng(12)
    n1 = rng.choice(np.arange(50, 2050, 50), size=MANY)
    return rng.binomial(n1, 0.85), n1


def _distinct_counts() -> tuple[np.ndarray, np.ndarray]:
    """10,000 matrices with (almost) no two alike: n1 up to a million, TP anywhere."""
    rng = np.random.default_rng(13)
    n1 = rng.integers(1, 1_000_000, size=MANY)
    return rng.integers(0, n1 + 1), n1


def _ours(tp, n1):
    methods = tuple(ours for ours, _ in SHARED_METHODS)
    return batch_intervals.precision_intervals(tp, n1 - tp, 0.95, methods=methods)


def _statsmodels(tp, n1):
    from statsmodels.stats.proportion import proportion_confint

    return [proportion_confint(tp, n1, 0.05, method=theirs) for _, theirs in SHARED_METHODS]


def _interleaved_medians(first, second, rounds: int = PEER_ROUNDS) -> tuple[float, float]:
    """Medians of alternating timings, so load on a shared machine hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for function, sink in ((first, times[0]), (second, times[1])):
            started = time.perf_counter()
            function()
            sink.append(time.perf_counter() - started)
    return statistics.median(times[0]), statistics.median(times[1])


@pytest.mark.parametrize("data", [_rounds_of_designs, _distinct_counts], ids=lambda f: f.__name__)
def test_four_proportion_intervals_of_10000_matrices_vs_statsmodels(benchmark, data):
    pytest.importorskip("statsmodels")
    tp, n1 = data()
    result = benchmark(_ours, tp, n1)
    for (ours, _), (lower, upper) in zip(SHARED_METHODS, _statsmodels(tp, n1), strict=True):
        inner = (tp > 0) & (tp < n1)  # statsmodels has no boundary rule for Jeffreys
        np.testing.assert_allclose(result[ours].lower[inner], lower[inner], rtol=0, atol=1e-12)
        np.testing.assert_allclose(result[ours].upper[inner], upper[inner], rtol=0, atol=1e-12)
    if benchmark.disabled:
        return
    ours_s, peer_s = _interleaved_medians(lambda: _ours(tp, n1), lambda: _statsmodels(tp, n1))
    benchmark.extra_info.update(ours_ms=ours_s * 1e3, statsmodels_ms=peer_s * 1e3)
    print(
        f"\n{data.__name__}: ours {ours_s * 1e3:.1f} ms, statsmodels {peer_s * 1e3:.1f} ms "
        f"(ratio {ours_s / peer_s:.2f})"
    )
    # With distinct counts both sides make the same four betaincinv calls of 10,000 values
    # (the Boost kernel is the whole cost); 3 % covers timing noise on a shared machine.
    assert ours_s <= peer_s * 1.03, f"{ours_s * 1e3:.1f} ms vs statsmodels {peer_s * 1e3:.1f} ms"


def test_ratio_intervals_of_10000_matrices_vs_a_loop(benchmark):
    rng = np.random.default_rng(14)
    n1 = rng.integers(1, 2_000, size=MANY)
    n0 = rng.integers(1, 50_000, size=MANY)
    tp, fn = rng.binomial(n1, 0.85), rng.binomial(n0, 0.01)
    fp, tn = n1 - tp, n0 - fn

    def vectorized():
        return (
            batch_intervals.katz_log_recall(tp, fp, fn, tn, K),
            batch_intervals.delta_recall(tp, fp, fn, tn, K),
            batch_intervals.katz_log_fpr(tp, fp, fn, tn, K),
        )

    katz, _, _ = benchmark(vectorized)
    assert len(katz) == MANY
    if benchmark.disabled:
        return
    matrices = [
        ConfusionMatrix(tp=int(a), fp=int(b), fn=int(c), tn=int(d))
        for a, b, c, d in zip(tp, fp, fn, tn, strict=True)
    ]

    def loop():
        for matrix in matrices:
            intervals.katz_log_recall(matrix, K)
            intervals.delta_recall(matrix, K)
            intervals.katz_log_fpr(matrix, K)

    ours_s, loop_s = _interleaved_medians(vectorized, loop, rounds=3)
    print(f"\nratio intervals: vectorized {ours_s * 1e3:.1f} ms, loop {loop_s * 1e3:.1f} ms")
    assert ours_s < loop_s
