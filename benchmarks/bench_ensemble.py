"""Benchmark of the several-classifiers planner (target: 200 trials for three
children in < 1 s).

Run with ``python -m pytest benchmarks/bench_ensemble.py --benchmark-enable -q``.
"""

from __future__ import annotations

import numpy as np

from core.ensemble import ChildSet, plan_recycled_labels, recycle_samples_for_precision

THREE_CHILDREN = [
    ChildSet(size=8_000, overlap=5_000, name="PIR < CIR"),
    ChildSet(size=3_000, overlap=3_000, name="child inside parent"),
    ChildSet(size=20_000, overlap=9_000, name="PIR > CIR, truncated"),
]


def test_plan_200_trials_three_children_shuffle(benchmark):
    plan = benchmark(plan_recycled_labels, 10_000, THREE_CHILDREN, trials=200, rng=1)
    assert len(plan.savings) == 3


def test_plan_200_trials_three_children_sample(benchmark):
    plan = benchmark(plan_recycled_labels, 10_000, THREE_CHILDREN, mix="sample", trials=200, rng=1)
    assert len(plan.savings) == 3


def test_recycle_one_child_on_100k_item_ids(benchmark):
    # One concrete labeling list: parent of 100,000 items, child of 80,000, n = 1068.
    rng = np.random.default_rng(0)
    parent_ids = np.arange(100_000)
    child_ids = np.arange(40_000, 120_000)
    parent_sample = rng.choice(parent_ids, 1068)
    result = benchmark(
        recycle_samples_for_precision, parent_ids, parent_sample, child_ids, 1068, rng=2
    )
    assert result.sample_ids.size == 1068
