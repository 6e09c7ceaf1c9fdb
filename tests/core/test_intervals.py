"""Closed-form intervals of ``core.intervals`` (methods §3-4) against independent references.

* Wilson and Clopper-Pearson: ``scipy.stats.binomtest(...).proportion_ci``.
* Wald, Agresti-Coull, Jeffreys (and Wilson, Clopper-Pearson again): a table computed once
  with statsmodels' ``proportion_confint`` (``tests/data/proportion_ci_statsmodels.csv``).
* Katz log-ratio, delta and FPR: hand-worked values in decimal arithmetic
  (``tests/data/ratio_intervals_handworked.json``, with the steps written out).
"""

from __future__ import annotations

import csv
import json
import math
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from core import intervals
from core.confusion import ConfusionMatrix, Population, point_estimates

OURS_BY_STATSMODELS_NAME = {
    "normal": intervals.wald_precision,
    "agresti_coull": intervals.agresti_coull_precision,
    "jeffreys": intervals.jeffreys_precision,
    "wilson": intervals.wilson_precision,
    "beta": intervals.clopper_pearson_precision,
}


def _read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


def _statsmodels_rows(reference_data):
    return _read_csv(reference_data / "proportion_ci_statsmodels.csv")


def _precision_matrix(x: int, n: int) -> ConfusionMatrix:
    # Precision intervals read only the predicted-positive stratum.
    return ConfusionMatrix(tp=x, fp=n - x, fn=1, tn=9)


def test_reference_table_is_there_and_covers_the_edges(reference_data):
    rows = _statsmodels_rows(reference_data)
    assert len(rows) > 500
    assert {row["method"] for row in rows} == set(OURS_BY_STATSMODELS_NAME)
    assert any(row["x"] == "0" for row in rows) and any(row["x"] == row["n"] for row in rows)


def test_proportion_intervals_match_statsmodels(reference_data):
    for row in _statsmodels_rows(reference_data):
        x, n, level = int(row["x"]), int(row["n"]), float(row["confidence"])
        ours = OURS_BY_STATSMODELS_NAME[row["method"]](_precision_matrix(x, n), level)
        expected_lower, expected_upper = float(row["lower"]), float(row["upper"])
        if row["method"] == "jeffreys":
            # Brown, Cai and DasGupta's boundary rule, which statsmodels does not apply.
            if x == 0:
                expected_lower = 0.0
            if x == n:
                expected_upper = 1.0
        assert ours.lower == pytest.approx(expected_lower, abs=1e-9), row
        assert ours.upper == pytest.approx(expected_upper, abs=1e-9), row


@pytest.mark.parametrize("n", [1, 7, 40, 160, 2500])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.999])
def test_wilson_and_clopper_pearson_match_scipy_binomtest(n, level):
    for x in sorted({0, 1, n // 4, n // 2, n - 1, n}):
        result = binomtest(x, n)
        wilson = result.proportion_ci(confidence_level=level, method="wilson")
        exact = result.proportion_ci(confidence_level=level, method="exact")
        matrix = _precision_matrix(x, n)
        ours_wilson = intervals.wilson_precision(matrix, level)
        ours_exact = intervals.clopper_pearson_precision(matrix, level)
        assert (ours_wilson.lower, ours_wilson.upper) == pytest.approx(
            (wilson.low, wilson.high), abs=1e-10
        )
        assert (ours_exact.lower, ours_exact.upper) == pytest.approx(
            (exact.low, exact.high), abs=1e-10
        )


def _handworked_cases(reference_data):
    return json.loads((reference_data / "ratio_intervals_handworked.json").read_text())["cases"]


def test_katz_delta_and_fpr_match_hand_worked_values(reference_data):
    cases = _handworked_cases(reference_data)
    assert len(cases) >= 6
    for case in cases:
        matrix = ConfusionMatrix(tp=case["tp"], fp=case["fp"], fn=case["fn"], tn=case["tn"])
        level, k = case["confidence"], case["k"]
        fpc = tuple(case["fpc"]) if case["fpc"] else intervals.NO_FPC
        katz = intervals.katz_log_recall(matrix, k, level, fpc)
        delta = intervals.delta_recall(matrix, k, level, fpc)
        fpr = intervals.katz_log_fpr(matrix, k, level, fpc)
        assert katz.as_list() == pytest.approx(case["katz_log_recall"], rel=1e-12), case["name"]
        assert delta.as_list() == pytest.approx(case["delta_recall"], rel=1e-12), case["name"]
        assert fpr.as_list() == pytest.approx(case["katz_log_fpr"], rel=1e-12), case["name"]
        haldane = 0 in (case["tp"], case["fp"], case["fn"], case["tn"])
        assert (intervals.HALDANE_NOTE in katz.note) is haldane
        assert (intervals.HALDANE_NOTE in fpr.note) is haldane


def test_fpc_factors_of_the_population_are_the_hand_worked_ones(reference_data):
    case = next(c for c in _handworked_cases(reference_data) if c["fpc"])
    population = Population.from_counts(1000, 100_000)
    factors = population.fpc_factors(case["tp"] + case["fp"], case["fn"] + case["tn"])
    assert factors == pytest.approx(tuple(case["fpc"]), rel=1e-12)


def test_wald_precision_with_fpc_by_hand():
    matrix = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
    z = NormalDist().inv_cdf(0.975)
    factor = (1000 - 160) / 999
    half = z * math.sqrt(0.8625 * 0.1375 / 160 * factor)
    wald = intervals.wald_precision(matrix, 0.95, (factor, 1.0))
    assert wald.as_list() == pytest.approx([0.8625 - half, 0.8625 + half], rel=1e-12)


def test_paper_table_1_worked_example_random_sample():
    # Paper Table 1: a random sample of 5000, TP=138, FP=22, FN=108, TN=4732.
    matrix = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
    estimates = point_estimates(matrix)
    assert estimates.k == pytest.approx(160 / 4840)
    assert round(estimates.k, 3) == 0.033
    # 86.3 % and 56.1 % as printed (86.25 rounds half up to 86.3).
    assert estimates.precision == pytest.approx(0.8625, rel=1e-12)
    assert abs(100 * estimates.precision - 86.3) <= 0.05 + 1e-9
    assert abs(100 * estimates.recall - 56.1) < 0.05
    # For a random sample recall is TP/(TP + FN): the general form reduces to it.
    assert estimates.recall == pytest.approx(138 / 246, rel=1e-12)
    z = NormalDist().inv_cdf(0.975)
    r = 138 / 246
    half = z * math.sqrt(r * (1 - r) / 246)
    wald = intervals.wald_recall_random(matrix, 0.95)
    assert wald.as_list() == pytest.approx([r - half, r + half], rel=1e-12)


def test_zero_cells_give_finite_intervals_with_notes():
    matrix = ConfusionMatrix(tp=0, fp=40, fn=0, tn=900)
    for interval in (
        *intervals.precision_intervals(matrix).values(),
        intervals.katz_log_recall(matrix, 0.05),
        intervals.delta_recall(matrix, 0.05),
        intervals.katz_log_fpr(matrix, 0.05),
    ):
        assert math.isfinite(interval.lower) and math.isfinite(interval.upper), interval
        assert 0.0 <= interval.lower <= interval.upper <= 1.0
    assert "zero width" in intervals.wald_precision(matrix).note
    assert intervals.HALDANE_NOTE in intervals.katz_log_recall(matrix, 0.05).note
    assert intervals.clopper_pearson_precision(matrix).lower == 0.0
    assert intervals.jeffreys_precision(matrix).lower == 0.0
    assert "undefined" in intervals.wald_recall_random(matrix).note


# --- properties ---------------------------------------------------------------------------

cells = st.integers(min_value=1, max_value=5000)
counts_or_zero = st.integers(min_value=0, max_value=5000)
levels = st.sampled_from([0.8, 0.9, 0.95, 0.99])
ks = st.floats(min_value=1e-3, max_value=2.0)


def _all_closed_form(matrix, k, level):
    return {
        **{f"precision/{m}": i for m, i in intervals.precision_intervals(matrix, level).items()},
        "recall/katz_log": intervals.katz_log_recall(matrix, k, level),
        "recall/delta": intervals.delta_recall(matrix, k, level),
        "fpr/katz_log": intervals.katz_log_fpr(matrix, k, level),
    }


@settings(max_examples=150, deadline=None)
@given(tp=st.integers(0, 3000), fp=st.integers(0, 3000), fn=st.integers(0, 3000),
       tn=st.integers(1, 30000), k=ks, level=levels)  # fmt: skip
def test_bounds_are_ordered_inside_the_unit_interval(tp, fp, fn, tn, k, level):
    if tp + fp == 0:
        fp = 1
    matrix = ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn)
    for name, interval in _all_closed_form(matrix, k, level).items():
        assert 0.0 <= interval.lower <= interval.upper <= 1.0, (name, interval)


@settings(max_examples=200, deadline=None)
@given(tp=counts_or_zero, fp=counts_or_zero, fn=counts_or_zero, tn=cells, k=ks, level=levels)
def test_every_interval_contains_the_estimate_zero_cells_included(tp, fp, fn, tn, k, level):
    # With a zero cell the Katz/delta/FPR intervals are Haldane-corrected; the boundary rule
    # keeps the plain estimate (0 or 1) inside them.
    if tp + fp == 0 or tp + fn == 0:
        tp = 1
    matrix = ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn)
    estimates = point_estimates(matrix, k)
    tolerance = 1e-12
    for name, interval in _all_closed_form(matrix, k, level).items():
        value = getattr(estimates, name.split("/")[0])
        assert interval.lower - tolerance <= value <= interval.upper + tolerance, (name, interval)


@settings(max_examples=100, deadline=None)
@given(tp=cells, fp=cells, fn=cells, tn=cells, k=ks, level=levels,
       factor=st.integers(2, 20))  # fmt: skip
def test_widths_shrink_as_all_counts_scale_up(tp, fp, fn, tn, k, level, factor):
    small = ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn)
    large = ConfusionMatrix(tp=tp * factor, fp=fp * factor, fn=fn * factor, tn=tn * factor)
    before, after = _all_closed_form(small, k, level), _all_closed_form(large, k, level)
    for name in before:
        # Non-strict: clipping at 0 or 1 can leave two widths equal (e.g. both [0, 1]).
        assert after[name].width <= before[name].width + 1e-12, name
        if not (before[name].note or after[name].note) and before[name].width > 1e-9:
            assert after[name].width < before[name].width, name


@settings(max_examples=100, deadline=None)
@given(x=st.integers(0, 400), extra=st.integers(0, 400), level=levels)
def test_katz_is_symmetric_on_the_log_odds_scale(x, extra, level):
    # Eq 4: log(1/R - 1) = log(x) +- z*se, so the two bounds are symmetric around log(x).
    matrix = ConfusionMatrix(tp=x + 1, fp=extra + 1, fn=x + 3, tn=extra + 50)
    interval = intervals.katz_log_recall(matrix, 0.1, level)
    centre = math.log(1 / point_estimates(matrix, 0.1).recall - 1)
    low_side = math.log(1 / interval.lower - 1) - centre
    high_side = centre - math.log(1 / interval.upper - 1)
    assert low_side == pytest.approx(high_side, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    ("x", "big_n", "m", "n"),
    [(3, 50, 10, 20), (0, 50, 10, 20), (10, 50, 10, 20), (7, 20, 20, 7), (0, 20, 0, 7),
     (450, 10**9, 9 * 10**8, 500), (1_600, 10**8, 8 * 10**7, 2_000),
     (480, 10**15, 9 * 10**14, 500), (2, 10**13, 10**9, 300)],
)  # fmt: skip
def test_hypergeometric_tails_match_exact_fractions(x, big_n, m, n):
    """Fuzz 20: scipy's tails took minutes at N = 10^13; the O(n) sum against the exact
    ratio of binomial coefficients (Python integers)."""
    from fractions import Fraction
    from math import comb

    from core.intervals import hypergeometric_tails

    total = comb(big_n, n)
    at_least = sum(comb(m, k) * comb(big_n - m, n - k) for k in range(x, min(n, m) + 1))
    at_most = sum(comb(m, k) * comb(big_n - m, n - k) for k in range(0, min(x, m) + 1))
    got = hypergeometric_tails(x, big_n, m, n)
    assert got[0] == pytest.approx(float(Fraction(at_least, total)), rel=1e-10, abs=1e-300)
    assert got[1] == pytest.approx(float(Fraction(at_most, total)), rel=1e-10, abs=1e-300)


def test_the_exact_interval_of_a_huge_stratum_is_clopper_pearsons():
    matrix = ConfusionMatrix(tp=450, fp=50, fn=10, tn=4_000)
    plain = intervals.clopper_pearson_precision(matrix)
    for big_n in (10**10, 10**13, 10**15):
        finite = intervals.clopper_pearson_precision(matrix, population_pos=big_n)
        assert finite.lower == pytest.approx(plain.lower, abs=1e-6)
        assert finite.upper == pytest.approx(plain.upper, abs=1e-6)
