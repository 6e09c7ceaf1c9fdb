"""The FPR interval that combines the two strata's Wilson intervals (methods §4).

Checked against an independent computation: statsmodels' Wilson intervals of each
stratum's share of negatives, and the ratio's bounds found by root-finding on the
defining equation (not the closed-form roots the product uses). Coverage is computed
exactly, by enumerating every round a design can produce.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from core.confusion import ConfusionMatrix, fpr_from_rates
from core.intervals import katz_log_fpr, wilson_ratio_fpr
from tests.core.mover_reference import mover_wilson_fpr


def _matrix(tp, fp, fn, tn) -> ConfusionMatrix:
    return ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn)


CASES = [
    # (TP, FP, FN, TN, k, confidence, fpc)
    (225, 31, 14, 730, 0.0329, 0.95, (1.0, 1.0)),  # the README's round
    (0, 30, 3, 297, 0.05, 0.95, (1.0, 1.0)),  # no true positive among the flagged
    (30, 0, 3, 297, 0.05, 0.95, (1.0, 1.0)),  # no false positive
    (3, 27, 40, 60, 0.3, 0.9, (1.0, 1.0)),  # small counts, a low level
    (80, 20, 12, 488, 0.02, 0.99, (0.6, 0.95)),  # finite population correction
    (5, 5, 10, 1, 0.05, 0.95, (1.0, 1.0)),  # almost no negative among the unflagged
]


@pytest.mark.parametrize(("tp", "fp", "fn", "tn", "k", "confidence", "fpc"), CASES)
def test_bounds_match_root_finding_on_statsmodels_wilson(tp, fp, fn, tn, k, confidence, fpc):
    interval = wilson_ratio_fpr(_matrix(tp, fp, fn, tn), k, confidence, fpc)
    lower, upper = mover_wilson_fpr(tp, fp, fn, tn, k, confidence, fpc)
    assert interval.lower == pytest.approx(lower, rel=1e-9, abs=1e-15)
    assert interval.upper == pytest.approx(upper, rel=1e-9, abs=1e-15)
    assert interval.method == "wilson_ratio"


def test_random_design_is_wilson_of_the_actual_negatives():
    matrix = _matrix(40, 12, 9, 939)
    interval = wilson_ratio_fpr(matrix, None, 0.95, design="random")
    lower, upper = proportion_confint(12, 12 + 939, alpha=0.05, method="wilson")
    assert (interval.lower, interval.upper) == pytest.approx((lower, upper), rel=1e-12)


def test_no_actual_negative_leaves_fpr_open():
    interval = wilson_ratio_fpr(_matrix(5, 0, 10, 0), 0.05)
    assert (interval.lower, interval.upper) == (0.0, 1.0)
    assert "FP = TN = 0" in interval.note


def test_interval_holds_its_estimate_for_every_small_round():
    k = 0.07
    for tp, fp, fn, tn in itertools.product(range(0, 7, 2), range(0, 7, 2), range(4), range(4)):
        if tp + fp == 0 or fn + tn == 0 or fp + tn == 0:
            continue
        interval = wilson_ratio_fpr(_matrix(tp, fp, fn, tn), k)
        estimate = fpr_from_rates(tp / (tp + fp), fn / (fn + tn), k) if tn or fp else None
        assert 0.0 <= interval.lower <= interval.upper <= 1.0
        if estimate is not None and math.isfinite(estimate):
            assert interval.lower - 1e-12 <= estimate <= interval.upper + 1e-12


def _exact_coverage(method, p1, p0, n1, n0, k):
    """Probability that the interval holds the true FPR, over every (TP, FN) of the design."""
    truth = k * (1 - p1) / (k * (1 - p1) + (1 - p0))
    weights1 = stats.binom.pmf(np.arange(n1 + 1), n1, p1)
    weights0 = stats.binom.pmf(np.arange(n0 + 1), n0, p0)
    covered = 0.0
    for tp in np.flatnonzero(weights1 > 1e-10):
        for fn in np.flatnonzero(weights0 > 1e-10):
            interval = method(_matrix(int(tp), n1 - int(tp), int(fn), n0 - int(fn)), k)
            if interval.lower <= truth <= interval.upper:
                covered += weights1[tp] * weights0[fn]
    return covered


# Designs where the log-ratio interval falls short (95 % nominal): flagged items almost all
# positive, so FP and often FN are 0 (Katz 0.780, combined 0.964), and flagged items
# mostly negative, so TP is small (Katz 0.844, combined 0.962).
SHORT_DESIGNS = [(0.99, 0.002, 30, 100, 0.05), (0.1, 0.01, 30, 150, 0.05)]


@pytest.mark.parametrize(("p1", "p0", "n1", "n0", "k"), SHORT_DESIGNS)
def test_coverage_holds_where_the_log_ratio_falls_short(p1, p0, n1, n0, k):
    katz = _exact_coverage(katz_log_fpr, p1, p0, n1, n0, k)
    combined = _exact_coverage(wilson_ratio_fpr, p1, p0, n1, n0, k)
    assert katz < 0.85
    assert combined > 0.95


def test_no_negative_among_unflagged_items_all_labeled_puts_fpr_at_one():
    """Every unflagged item labeled (correction factor 0) and none negative: every actual
    negative is flagged, so the FPR is exactly 1."""
    interval = wilson_ratio_fpr(_matrix(5, 5, 5, 0), 0.05, fpc=(1.0, 0.0))
    assert (interval.lower, interval.upper) == (1.0, 1.0)


# A wider grid of designs: the combined interval keeps close to its level throughout (over
# 336 designs its lowest was 0.904, against 0.780 for the log-ratio).
WIDE_DESIGNS = [
    (p1, p0, n1, n0, 0.05)
    for p1 in (0.3, 0.7, 0.95)
    for p0 in (0.005, 0.05)
    for n1, n0 in ((20, 80), (60, 200))
]


@pytest.mark.parametrize(("p1", "p0", "n1", "n0", "k"), WIDE_DESIGNS)
def test_coverage_keeps_close_to_its_level_on_a_wider_grid(p1, p0, n1, n0, k):
    katz = _exact_coverage(katz_log_fpr, p1, p0, n1, n0, k)
    combined = _exact_coverage(wilson_ratio_fpr, p1, p0, n1, n0, k)
    assert combined > 0.92
    assert combined > katz - 0.01  # at most a little under it where both are near 95 %
