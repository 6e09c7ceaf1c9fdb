"""Benchmarks of the coverage experiment.

Run: ``python -m pytest benchmarks/bench_coverage.py --benchmark-enable -q``.
Targets: the paper grid with A = Q = 1000 <= 10 s; the vectorized Algorithm 1 at least 50x
faster than a literal per-replicate loop on one setting (the loop is timed on a reduced A
and scaled, since the full loop takes minutes).

"Literal" is Algorithm 1 as the paper writes it: per replicate, resample the labeled items
of each stratum with replacement. A second, already half-vectorized loop (one scalar
``rng.binomial`` per stratum per replicate) is timed too and reported without a target:
most of its cost is the binomial sampling itself, so vectorizing only removes the Python
overhead on top of it.
"""

from __future__ import annotations

import time

import numpy as np

from core import resampling
from core.coverage import draw_rounds, paper_grid, run_grid, seed_streams

SETTING = paper_grid()[0]  # k = 1/20, P = 0.9, R = 0.7, s = 1, v = 5000
A = Q = 1000
LOOP_ROWS = 3


def literal_bootstrap_intervals(tp, fn, n1, n0, k, replicates, rng):
    """Algorithm 1 as written: per replicate, resample each stratum's labeled items."""
    lows, highs = [], []
    for row_tp, row_fn in zip(tp, fn, strict=True):
        positives = np.array([1] * int(row_tp) + [0] * int(n1 - row_tp))
        negatives = np.array([1] * int(row_fn) + [0] * int(n0 - row_fn))
        recalls = []
        for _ in range(replicates):
            tp_star = rng.choice(positives, size=n1, replace=True).sum()
            fn_star = rng.choice(negatives, size=n0, replace=True).sum()
            recalls.append(1 / (1 + (fn_star / n0) / (k * tp_star / n1)) if tp_star else 0.0)
        low, high = np.quantile(recalls, [0.025, 0.975])
        lows.append(low)
        highs.append(high)
    return lows, highs


def binomial_loop_intervals(tp, fn, n1, n0, k, replicates, rng):
    """One scalar binomial per stratum per replicate (Python loop over replicates)."""
    lows, highs = [], []
    for row_tp, row_fn in zip(tp, fn, strict=True):
        recalls = []
        for _ in range(replicates):
            tp_star = rng.binomial(n1, row_tp / n1)
            fn_star = rng.binomial(n0, row_fn / n0)
            recalls.append(1 / (1 + (fn_star / n0) / (k * tp_star / n1)) if tp_star else 0.0)
        low, high = np.quantile(recalls, [0.025, 0.975])
        lows.append(low)
        highs.append(high)
    return lows, highs


def vectorized_bootstrap_intervals(tp, fn, n1, n0, k, replicates, rng):
    draws = resampling.bootstrap(tp, n1 - tp, fn, n0 - fn, k, replicates=replicates, seed=rng,
                                 include_f1=False)  # fmt: skip
    return draws.interval("recall")


def test_paper_grid_a_q_1000(benchmark):
    result = benchmark.pedantic(
        run_grid, kwargs={"reps": A, "replicates": Q, "seed": 1}, rounds=3, iterations=1
    )
    assert len(result.rows) == 12


def test_vectorized_bootstrap_one_setting_a_q_1000(benchmark):
    rounds, replicates_rng = seed_streams(1)
    tp, fn, _, _ = draw_rounds(SETTING, A, rounds)
    n1, n0 = SETTING.sizes
    benchmark(vectorized_bootstrap_intervals, tp, fn, n1, n0, SETTING.k, Q, replicates_rng)


def test_speedup_over_a_literal_loop(benchmark):
    rounds, replicates_rng = seed_streams(2)
    tp, fn, _, _ = draw_rounds(SETTING, A, rounds)
    n1, n0 = SETTING.sizes
    loop_seconds = {}
    for name, loop, rows in (
        ("literal", literal_bootstrap_intervals, LOOP_ROWS),
        ("binomial", binomial_loop_intervals, 10),
    ):
        started = time.perf_counter()
        loop(tp[:rows], fn[:rows], n1, n0, SETTING.k, Q, replicates_rng)
        loop_seconds[name] = (time.perf_counter() - started) * A / rows
    benchmark(vectorized_bootstrap_intervals, tp, fn, n1, n0, SETTING.k, Q, replicates_rng)
    median = benchmark.stats.stats.median
    speedup = loop_seconds["literal"] / median
    benchmark.extra_info.update(
        literal_loop_seconds_scaled_to_A=loop_seconds["literal"],
        binomial_loop_seconds_scaled_to_A=loop_seconds["binomial"],
        speedup=speedup,
        speedup_over_binomial_loop=loop_seconds["binomial"] / median,
    )
    print(
        f"\nvectorized {median:.3f} s; literal loop (scaled to A={A}) "
        f"{loop_seconds['literal']:.1f} s = {speedup:.0f}x; scalar-binomial loop "
        f"{loop_seconds['binomial']:.2f} s = {loop_seconds['binomial'] / median:.1f}x"
    )
    assert speedup >= 50
