"""Benchmarks of the coverage experiment (issue 2, section 4).

Run: ``python -m pytest benchmarks/bench_coverage.py --benchmark-enable -q``.
Targets: the paper grid with A = Q = 1000 <= 10 s; the vectorized Algorithm 1 at least 50x
faster than a literal per-replicate loop on one setting (the loop is timed on a reduced A
and scaled, since the full loop takes minutes).
"""

from __future__ import annotations

import time

import numpy as np

from core import resampling
from core.coverage import draw_rounds, paper_grid, run_grid, seed_streams

SETTING = paper_grid()[0]  # k = 1/20, P = 0.9, R = 0.7, s = 1, v = 5000
A = Q = 1000
LOOP_ROWS = 10


def literal_bootstrap_intervals(tp, fn, n1, n0, k, replicates, rng):
    """Algorithm 1 one replicate at a time (what the vectorized code replaces)."""
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
    started = time.perf_counter()
    literal_bootstrap_intervals(
        tp[:LOOP_ROWS], fn[:LOOP_ROWS], n1, n0, SETTING.k, Q, replicates_rng
    )
    loop_seconds_full_a = (time.perf_counter() - started) * A / LOOP_ROWS
    benchmark(vectorized_bootstrap_intervals, tp, fn, n1, n0, SETTING.k, Q, replicates_rng)
    speedup = loop_seconds_full_a / benchmark.stats.stats.median
    benchmark.extra_info["literal_loop_seconds_scaled_to_A"] = loop_seconds_full_a
    benchmark.extra_info["speedup"] = speedup
    print(f"\nliteral loop (scaled to A={A}): {loop_seconds_full_a:.2f} s; speedup {speedup:.0f}x")
    assert speedup >= 50
