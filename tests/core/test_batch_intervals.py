"""Vectorized intervals of ``core.batch_intervals`` against independent references.

* Proportion intervals: statsmodels' vectorized ``proportion_confint`` on 10,000 matrices
  (live, statsmodels is a test dependency) and the frozen statsmodels table
  ``tests/data/proportion_ci_statsmodels.csv``; agreement to 1e-12.
* Katz log-ratio, delta and FPR: the hand-worked decimal values of
  ``tests/data/ratio_intervals_handworked.json`` and
  ``tests/data/random_design_intervals_handworked.json``.
* Every method, note for note, against the scalar functions of ``core.intervals`` on
  matrices with zero cells, tiny and huge strata, both designs and the FPC.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from core import batch_intervals as batch
from core import intervals
from core.confusion import ConfusionMatrix
from core.errors import InputError

TOLERANCE = 1e-12
#: statsmodels' method name -> ours.
STATSMODELS_NAMES = {
    "normal": "wald",
    "agresti_coull": "agresti_coull",
    "jeffreys": "jeffreys",
    "wilson": "wilson",
    "beta": "clopper_pearson",
}
SCALAR_PRECISION = {
    "wald": intervals.wald_precision,
    "wilson": intervals.wilson_precision,
    "agresti_coull": intervals.agresti_coull_precision,
    "clopper_pearson": intervals.clopper_pearson_precision,
    "jeffreys": intervals.jeffreys_precision,
}


def _matrices(size: int, seed: int) -> tuple[np.ndarray, ...]:
    """Counts with zero cells, single items and strata from 1 to a million items."""
    rng = np.random.default_rng(seed)
    n1 = rng.choice([1, 2, 5, 30, 160, 2_000, 1_000_000], size=size)
    n0 = rng.choice([1, 3, 40, 4_840, 250_000], size=size)
    pi1 = rng.choice([0.0, 0.02, 0.5, 0.86, 0.999, 1.0], size=size)
    pi0 = rng.choice([0.0, 1e-4, 0.02, 0.3, 1.0], size=size)
    tp = rng.binomial(n1, pi1)
    fn = rng.binomial(n0, pi0)
    return tp, n1 - tp, fn, n0 - fn


def _assert_bounds(ours: batch.BatchIntervals, lower, upper) -> None:
    np.testing.assert_allclose(ours.lower, lower, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(ours.upper, upper, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("level", [0.8, 0.95, 0.999])
def test_proportion_intervals_match_statsmodels_on_ten_thousand_matrices(level):
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    tp, fp, _, _ = _matrices(10_000, seed=7)
    ours = batch.precision_intervals(tp, fp, level)
    for their_name, our_name in STATSMODELS_NAMES.items():
        lower, upper = proportion.proportion_confint(tp, tp + fp, 1 - level, method=their_name)
        if their_name == "jeffreys":
            # Brown, Cai and DasGupta's boundary rule, which statsmodels does not apply.
            lower = np.where(tp == 0, 0.0, lower)
            upper = np.where(fp == 0, 1.0, upper)
        _assert_bounds(ours[our_name], lower, upper)


def test_proportion_intervals_match_the_frozen_statsmodels_table(reference_data):
    with open(reference_data / "proportion_ci_statsmodels.csv", newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    assert len(rows) > 500
    for level in sorted({row["confidence"] for row in rows}):
        for their_name, our_name in STATSMODELS_NAMES.items():
            chosen = [r for r in rows if r["confidence"] == level and r["method"] == their_name]
            x = np.array([int(r["x"]) for r in chosen])
            n = np.array([int(r["n"]) for r in chosen])
            lower = np.array([float(r["lower"]) for r in chosen])
            upper = np.array([float(r["upper"]) for r in chosen])
            if their_name == "jeffreys":
                lower, upper = np.where(x == 0, 0.0, lower), np.where(x == n, 1.0, upper)
            ours = batch.precision_intervals(x, n - x, float(level), methods=(our_name,))
            _assert_bounds(ours[our_name], lower, upper)


def _handworked(reference_data, name: str) -> list[dict]:
    return json.loads((reference_data / name).read_text())["cases"]


def test_ratio_intervals_match_hand_worked_values_stratified(reference_data):
    cases = _handworked(reference_data, "ratio_intervals_handworked.json")
    for case in cases:
        cells = (case["tp"], case["fp"], case["fn"], case["tn"])
        args = (*cells, case["k"], case["confidence"], tuple(case["fpc"] or (1.0, 1.0)))
        for name, function in (
            ("katz_log_recall", batch.katz_log_recall),
            ("delta_recall", batch.delta_recall),
            ("katz_log_fpr", batch.katz_log_fpr),
        ):
            ours = function(*args)
            assert [float(ours.lower), float(ours.upper)] == pytest.approx(
                case[name], rel=TOLERANCE
            ), (case["name"], name)


def test_ratio_intervals_match_hand_worked_values_random_design(reference_data):
    cases = _handworked(reference_data, "random_design_intervals_handworked.json")
    for case in cases:
        cells = (case["tp"], case["fp"], case["fn"], case["tn"])
        for name, function in (
            ("katz_log_recall", batch.katz_log_recall),
            ("delta_recall", batch.delta_recall),
            ("katz_log_fpr", batch.katz_log_fpr),
        ):
            if name not in case:
                continue
            ours = function(*cells, None, case["confidence"], design="random")
            assert [float(ours.lower), float(ours.upper)] == pytest.approx(
                case[name], rel=TOLERANCE
            ), (case["name"], name)


def _scalar_matrices(tp, fp, fn, tn):
    return [
        ConfusionMatrix(tp=int(a), fp=int(b), fn=int(c), tn=int(d))
        for a, b, c, d in zip(tp, fp, fn, tn, strict=True)
    ]


def _assert_same_as_scalar(ours: batch.BatchIntervals, scalar: list[intervals.Interval]):
    assert len(ours) == len(scalar)
    np.testing.assert_allclose(ours.lower, [s.lower for s in scalar], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(ours.upper, [s.upper for s in scalar], rtol=0, atol=TOLERANCE)
    assert [interval.note for interval in ours.to_intervals()] == [s.note for s in scalar]
    assert {interval.method for interval in ours.to_intervals()} == {s.method for s in scalar}


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_precision_intervals_equal_the_scalar_ones_with_notes(level):
    tp, fp, fn, tn = _matrices(600, seed=11)
    matrices = _scalar_matrices(tp, fp, fn, tn)
    f1 = np.linspace(0.0, 1.0, tp.size)  # from a stratum labeled in full to no correction
    ours = batch.precision_intervals(tp, fp, level, fpc=(f1, 1.0))
    for method, function in SCALAR_PRECISION.items():
        if method in ("wald", "wilson"):
            scalar = [
                function(m, level, (float(f), 1.0)) for m, f in zip(matrices, f1, strict=True)
            ]
        else:
            scalar = [function(m, level) for m in matrices]
        _assert_same_as_scalar(ours[method], scalar)


@pytest.mark.parametrize("k", [0.05, 1e-4, 3.0])
def test_stratified_ratio_intervals_equal_the_scalar_ones_with_notes(k):
    tp, fp, fn, tn = _matrices(600, seed=12)
    matrices = _scalar_matrices(tp, fp, fn, tn)
    fpc = (np.linspace(0.3, 1.0, tp.size), np.linspace(1.0, 0.5, tp.size))
    for batch_function, scalar_function in (
        (batch.katz_log_recall, intervals.katz_log_recall),
        (batch.delta_recall, intervals.delta_recall),
        (batch.katz_log_fpr, intervals.katz_log_fpr),
    ):
        ours = batch_function(tp, fp, fn, tn, k, 0.95, fpc)
        scalar = [
            scalar_function(m, k, 0.95, (float(f1), float(f0)))
            for m, f1, f0 in zip(matrices, *fpc, strict=True)
        ]
        _assert_same_as_scalar(ours, scalar)
    points = batch.recall_point(tp, fp, fn, tn, k)
    expected = [intervals.recall_point(m, k) for m in matrices]
    np.testing.assert_allclose(points, expected, rtol=1e-15, atol=0)  # NaN where both are


def test_random_design_ratio_intervals_equal_the_scalar_ones_with_notes():
    tp, fp, fn, tn = _matrices(600, seed=13)
    matrices = _scalar_matrices(tp, fp, fn, tn)
    for batch_function, scalar_function in (
        (batch.katz_log_recall, intervals.katz_log_recall),
        (batch.delta_recall, intervals.delta_recall),
        (batch.katz_log_fpr, intervals.katz_log_fpr),
    ):
        ours = batch_function(tp, fp, fn, tn, None, 0.9, design="random")
        scalar = [scalar_function(m, None, 0.9, design="random") for m in matrices]
        _assert_same_as_scalar(ours, scalar)
    # k = n1/n0, the only k a random sample can have, is accepted and changes nothing.
    sample_k = (tp + fp) / (fn + tn)
    with_k = batch.katz_log_recall(tp, fp, fn, tn, sample_k, 0.9, design="random")
    without_k = batch.katz_log_recall(tp, fp, fn, tn, None, 0.9, design="random")
    np.testing.assert_array_equal(with_k.lower, without_k.lower)
    np.testing.assert_array_equal(with_k.upper, without_k.upper)


def test_a_per_matrix_k_equals_one_scalar_call_per_matrix():
    tp, fp, fn, tn = _matrices(200, seed=14)
    k = np.geomspace(1e-3, 10.0, tp.size)
    ours = batch.katz_log_recall(tp, fp, fn, tn, k)
    scalar = [
        intervals.katz_log_recall(m, float(kk), 0.95)
        for m, kk in zip(_scalar_matrices(tp, fp, fn, tn), k, strict=True)
    ]
    _assert_same_as_scalar(ours, scalar)


def test_two_dimensional_counts_keep_their_shape():
    tp = np.array([[1, 5], [0, 20]])
    fp = np.array([[3, 0], [4, 2]])
    ours = batch.precision_intervals(tp, fp)
    for method, result in ours.items():
        assert result.lower.shape == (2, 2), method
        for i, j in np.ndindex(2, 2):
            matrix = ConfusionMatrix(tp=int(tp[i, j]), fp=int(fp[i, j]), fn=1, tn=1)
            expected = SCALAR_PRECISION[method](matrix)
            assert result.interval((i, j)).as_list() == pytest.approx(
                expected.as_list(), abs=TOLERANCE
            )


def test_bad_counts_are_refused_naming_the_matrix():
    with pytest.raises(InputError, match=r"predicted-positive sample is empty.*matrix 2"):
        batch.precision_intervals([3, 1, 0], [1, 1, 0])
    with pytest.raises(InputError, match=r"predicted-negative sample is empty.*matrix 1"):
        batch.katz_log_recall([3, 1], [1, 1], [2, 0], [5, 0], 0.1)
    with pytest.raises(InputError, match=r"FP must be whole numbers >= 0.*matrix 1"):
        batch.wilson_precision([3, 1], [1, 2.5])
    with pytest.raises(InputError, match=r"TP must be whole numbers >= 0.*matrix 0"):
        batch.wilson_precision([-1, 1], [1, 2])
    with pytest.raises(InputError, match=r"k must be a number > 0.*matrix 1"):
        batch.katz_log_recall([3, 1], [1, 1], [2, 2], [5, 5], [0.1, 0.0])
    with pytest.raises(InputError, match="one shape"):
        batch.wilson_precision([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="unknown precision interval"):
        batch.precision_intervals([1], [1], methods=("wald", "score"))


def test_random_design_refuses_a_known_k_and_the_fpc():
    with pytest.raises(InputError, match=r"estimates k by n1/n0 = 0\.5.*matrix 0"):
        batch.katz_log_recall([3], [1], [2], [6], 0.1, design="random")
    with pytest.raises(InputError, match="finite population correction"):
        batch.delta_recall([3], [1], [2], [6], None, 0.95, (0.9, 1.0), design="random")
    with pytest.raises(InputError, match="design must be"):
        batch.katz_log_fpr([3], [1], [2], [6], 0.1, design="cluster")
