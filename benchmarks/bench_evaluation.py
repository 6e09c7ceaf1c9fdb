"""Benchmarks of one round's evaluation (issue 2, section 4).

Run: ``python -m pytest benchmarks/bench_evaluation.py --benchmark-enable -q``.
Targets: all closed-form intervals of one matrix <= 50 us; bootstrap and Monte-Carlo with
Q = 100000 <= 30 ms each.
"""

from __future__ import annotations

from core import intervals, resampling
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
