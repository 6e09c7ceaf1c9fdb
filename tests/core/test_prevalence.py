"""core.prevalence against independent computations (methods §11 to 2.3).

References: confusion counts of constructed populations (exact fractions stored in
``tests/data/prevalence_closed_forms.csv``, and counted on the fly under hypothesis), a
dense numerical maximization for ``Delta``, Siblini et al.'s sub-sampling heuristic for
calibrated precision, and plugging solutions back for the inverses and the rank swaps.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.intervals import katz_log_recall, wilson_ratio_fpr
from core.prevalence import (
    OperatingPoint,
    calibrated_metrics,
    calibrated_metrics_from_round,
    calibrated_precision_from_counts,
    compare_across_prevalence,
    f_beta_at_prevalence,
    f_beta_at_ratio,
    largest_cv_fpr,
    max_band_width,
    negatives_for_fpr_cv,
    p3_curve,
    plan_fpr_labeling,
    precision_at_prevalence,
    precision_at_ratio,
    precision_band,
    precision_gain,
    prevalence_from_ratio,
    prevalence_grid,
    rank_swaps,
    ratio_from_prevalence,
    recall_gain_at_prevalence,
    recall_gain_at_ratio,
)

FAST = settings(max_examples=60, deadline=None)


# --- reference data ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def counted_rows(reference_data):
    with (reference_data / "prevalence_closed_forms.csv").open() as handle:
        lines = [line for line in handle if not line.startswith("#")]
    return [{key: float(value) for key, value in row.items()} for row in csv.DictReader(lines)]


def test_closed_forms_match_metrics_counted_on_populations(counted_rows):
    for row in counted_rows:
        tpr, fpr, eta = row["tpr"], row["fpr"], row["prevalence"]
        ratio = eta / (1 - eta)
        assert precision_at_prevalence(tpr, fpr, eta) == pytest.approx(row["precision"], rel=1e-12)
        assert precision_at_ratio(tpr, fpr, ratio) == pytest.approx(row["precision"], rel=1e-12)
        assert f_beta_at_prevalence(tpr, fpr, eta) == pytest.approx(row["f1"], rel=1e-12)
        assert f_beta_at_ratio(tpr, fpr, ratio, beta=2) == pytest.approx(row["f2"], rel=1e-12)
        assert f_beta_at_prevalence(tpr, fpr, eta, beta=0.5) == pytest.approx(row["f05"], rel=1e-12)
        assert precision_gain(tpr, fpr) == pytest.approx(row["precision_gain"], rel=1e-12)
        assert recall_gain_at_prevalence(tpr, eta) == pytest.approx(
            row["recall_gain"], rel=1e-12, abs=1e-12
        )
        assert recall_gain_at_ratio(tpr, ratio) == pytest.approx(
            row["recall_gain"], rel=1e-12, abs=1e-12
        )


def test_closed_forms_are_vectorized_over_the_reference_rows(counted_rows):
    tpr = np.array([row["tpr"] for row in counted_rows])
    fpr = np.array([row["fpr"] for row in counted_rows])
    eta = np.array([row["prevalence"] for row in counted_rows])
    expected = np.array([row["precision"] for row in counted_rows])
    np.testing.assert_allclose(precision_at_prevalence(tpr, fpr, eta), expected, rtol=1e-12)


def test_siblini_eq6_from_counts_gives_the_precision_counted_at_the_reference(counted_rows):
    # Rows with the same rates are the same classifier at other prevalences.
    by_rates: dict[tuple[float, float], list[dict]] = {}
    for row in counted_rows:
        by_rates.setdefault((row["tpr"], row["fpr"]), []).append(row)
    pairs = 0
    for rows in by_rates.values():
        for test_row in rows:
            for reference_row in rows:
                calibrated = calibrated_precision_from_counts(
                    test_row["tp"],
                    test_row["fp"],
                    test_row["prevalence"],
                    reference_row["prevalence"],
                )
                assert calibrated == pytest.approx(reference_row["precision"], rel=1e-10)
                pairs += 1
    assert pairs == 5 * 7 * 7


# --- closed forms against counts, under hypothesis ----------------------------------------


@st.composite
def populations(draw):
    positives = draw(st.integers(1, 10_000))
    negatives = draw(st.integers(1, 1_000_000))
    tp = draw(st.integers(1, positives))
    fp = draw(st.integers(0, negatives))
    return positives, negatives, tp, fp


@FAST
@given(populations(), st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_closed_forms_equal_direct_counts(population, beta):
    positives, negatives, tp, fp = population
    fn = positives - tp
    eta = positives / (positives + negatives)
    tpr, fpr = tp / positives, fp / negatives
    counted_precision = tp / (tp + fp)
    b2 = beta * beta
    counted_f = (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)
    assert precision_at_prevalence(tpr, fpr, eta) == pytest.approx(counted_precision, rel=1e-9)
    assert f_beta_at_prevalence(tpr, fpr, eta, beta) == pytest.approx(counted_f, rel=1e-9)
    counted_gain = (counted_precision - eta) / ((1 - eta) * counted_precision)
    assert precision_gain(tpr, fpr) == pytest.approx(counted_gain, rel=1e-9, abs=1e-9)


def test_ratio_and_prevalence_are_inverse():
    eta = np.geomspace(1e-6, 0.999, 50)
    np.testing.assert_allclose(prevalence_from_ratio(ratio_from_prevalence(eta)), eta, rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: precision_at_prevalence(0.8, 0.1, 0.0), "prevalence must be strictly between"),
        (lambda: precision_at_prevalence(0.8, 0.1, [0.1, 1.0]), "got 1.0"),
        (lambda: precision_at_prevalence(1.2, 0.1, 0.1), "tpr must lie in [0, 1], got 1.2"),
        (lambda: precision_at_prevalence(0.8, "x", 0.1), "fpr must be"),
        (lambda: precision_at_ratio(0.8, 0.1, -2), "ratio must be a finite number > 0, got -2.0"),
        (lambda: precision_gain(0.0, 0.1), "tpr must be > 0 for a gain, got 0.0"),
        (lambda: f_beta_at_prevalence(0.8, 0.1, 0.1, beta=0), "beta must be a number > 0"),
        (lambda: OperatingPoint(tpr=0.0, fpr=0.1), "tpr must be > 0"),
        (lambda: OperatingPoint(tpr=1.01, fpr=0.1), "tpr must be in (0, 1], got 1.01"),
        (lambda: OperatingPoint(tpr=0.5, fpr=0.1, sigma_tpr=0.1), "both sigma_tpr and sigma_fpr"),
        (lambda: OperatingPoint(tpr=0.5, fpr=0.1, sigma_tpr=-1, sigma_fpr=0), "sigma_tpr"),
        (lambda: OperatingPoint(tpr=0.5, fpr=0.1, sigma_tpr=1e300, sigma_fpr=0), "at most 1"),
        (lambda: OperatingPoint(tpr=0.5, fpr=0.1, sigma_tpr=0, sigma_fpr=1.5), "sigma_fpr"),
        (lambda: prevalence_grid(0.5, 0.1), "eta_min (0.5) must be smaller than eta_max (0.1)"),
        (lambda: prevalence_grid(1e-5, 0.5, 1), "points must be a whole number >= 2"),
        (lambda: calibrated_metrics(0.5, 0.1, 1.5), "reference prevalence"),
    ],
)
def test_bad_input_raises_input_error_naming_the_value(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in str(info.value)


def test_precision_is_nan_only_when_nothing_is_predicted_positive():
    assert math.isnan(precision_at_prevalence(0.0, 0.0, 0.3))
    assert precision_at_prevalence(0.0, 0.2, 0.3) == 0.0
    assert precision_at_prevalence(0.5, 0.0, 1e-9) == 1.0


# --- stratified rounds -------------------------------------------------------------------


def test_operating_point_from_a_round_recovers_population_rates_and_prevalences():
    # Population: N1 = 5,000 predicted positive (4,500 actual +), N0 = 95,000 predicted
    # negative (950 actual +). A round labels n1 = 200, n0 = 400 in exact proportion.
    tp_pop, fp_pop, fn_pop, tn_pop = 4_500, 500, 950, 94_050
    matrix = ConfusionMatrix(tp=180, fp=20, fn=4, tn=396)
    point = OperatingPoint.from_round(matrix, 5_000 / 95_000, confidence=0.9, name="v2")
    assert point.tpr == pytest.approx(tp_pop / (tp_pop + fn_pop), rel=1e-12)
    assert point.fpr == pytest.approx(fp_pop / (fp_pop + tn_pop), rel=1e-12)
    assert point.population_prevalence == pytest.approx((tp_pop + fn_pop) / 100_000, rel=1e-12)
    assert point.sample_prevalence == pytest.approx(184 / 600)
    assert point.sigma_tpr == katz_log_recall(matrix, 5_000 / 95_000, 0.9).half_width
    assert point.sigma_fpr == wilson_ratio_fpr(matrix, 5_000 / 95_000, 0.9).half_width
    assert point.name == "v2"


def test_calibrating_a_stratified_round_needs_the_population_prevalence_not_the_sample_one():
    matrix = ConfusionMatrix(tp=180, fp=20, fn=4, tn=396)
    k, pi_ref = 5_000 / 95_000, 0.01
    # Counted: the population (TPR 4500/5450, FPR 500/94550) rebuilt at prevalence 1 %.
    positives, negatives = 5_450 * 1, 5_450 * 99
    tp = 4_500 / 5_450 * positives
    fp = 500 / 94_550 * negatives
    counted = tp / (tp + fp)
    calibrated = calibrated_metrics_from_round(matrix, k, pi_ref)
    assert calibrated.precision == pytest.approx(counted, rel=1e-12)
    point = OperatingPoint.from_round(matrix, k)
    eq6_population = calibrated_precision_from_counts(
        matrix.tp, matrix.fp, point.population_prevalence, pi_ref
    )
    eq6_sample = calibrated_precision_from_counts(
        matrix.tp, matrix.fp, point.sample_prevalence, pi_ref
    )
    assert eq6_population == pytest.approx(counted, rel=1e-12)
    assert abs(eq6_sample - counted) > 0.1


def test_calibrated_gains_and_f1():
    calibrated = calibrated_metrics(0.6, 0.02, 0.05)
    precision = 0.05 * 0.6 / (0.05 * 0.6 + 0.95 * 0.02)
    assert calibrated.precision == pytest.approx(precision)
    assert calibrated.f1 == pytest.approx(2 * precision * 0.6 / (precision + 0.6))
    assert calibrated.precision_gain == pytest.approx((precision - 0.05) / (0.95 * precision))
    assert calibrated.recall_gain == pytest.approx((0.6 - 0.05) / (0.95 * 0.6))
    assert set(calibrated.to_dict()) == {
        "reference_prevalence",
        "precision",
        "f1",
        "precision_gain",
        "recall_gain",
    }


def test_rounds_without_positives_found_are_refused():
    with pytest.raises(InputError, match="recall estimate"):
        OperatingPoint.from_round(ConfusionMatrix(tp=0, fp=10, fn=3, tn=100), 0.1)


def test_calibrated_precision_is_the_limit_of_random_subsampling():
    """Siblini et al., Proposition 1: sub-sample the positives of a test set down to the
    reference prevalence, average the precision over many draws; it converges to Prec_c."""
    rng = np.random.default_rng(7)
    positives, negatives = 3_000, 7_000  # test set prevalence 0.3
    tp, fp = 2_400, 350
    pi, pi_ref = positives / (positives + negatives), 0.05
    kept_positives = round(pi_ref / (1 - pi_ref) * negatives)  # keep every negative
    draws = 20_000
    # Detected positives among the kept ones: hypergeometric, one draw per sub-sample.
    kept_tp = rng.hypergeometric(tp, positives - tp, kept_positives, size=draws)
    precisions = kept_tp / (kept_tp + fp)
    calibrated = calibrated_precision_from_counts(tp, fp, pi, pi_ref)
    standard_error = precisions.std() / math.sqrt(draws)
    assert abs(precisions.mean() - calibrated) < 4 * standard_error + 2e-4
    assert calibrated == pytest.approx(
        precision_at_prevalence(tp / positives, fp / negatives, pi_ref)
    )


# --- the band ----------------------------------------------------------------------------


def _band_width_by_search(tpr, fpr, s_t, s_f):
    """max over eta of UB - LB by a dense grid on logit(eta) refined by Brent's method."""

    def width(logit):
        eta = 1 / (1 + np.exp(-logit))
        upper = eta * (tpr + s_t) / (eta * (tpr + s_t) + (1 - eta) * (fpr - s_f))
        lower = eta * (tpr - s_t) / (eta * (tpr - s_t) + (1 - eta) * (fpr + s_f))
        return upper - lower

    logits = np.linspace(-30, 30, 200_001)
    best = logits[np.argmax(width(logits))]
    refined = minimize_scalar(
        lambda x: -width(x),
        bounds=(best - 1e-3, best + 1e-3),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(width(refined.x)), float(1 / (1 + math.exp(-refined.x)))


@pytest.mark.parametrize(
    ("tpr", "fpr", "s_t", "s_f"),
    [
        (0.8, 0.01, 0.05, 0.002),
        (0.5, 0.2, 0.1, 0.01),
        (0.95, 1e-4, 0.01, 5e-5),
        (0.3, 0.05, 0.2, 0.04),
        (0.7, 0.3, 0.0, 0.1),
    ],
)
def test_delta_and_eta_star_match_a_dense_numerical_maximization(tpr, fpr, s_t, s_f):
    band = precision_band(OperatingPoint(tpr=tpr, fpr=fpr, sigma_tpr=s_t, sigma_fpr=s_f))
    searched_delta, searched_eta = _band_width_by_search(tpr, fpr, s_t, s_f)
    assert band.delta == pytest.approx(searched_delta, rel=1e-9, abs=1e-12)
    assert band.eta_star == pytest.approx(searched_eta, rel=1e-4)
    assert band.note == ""


@FAST
@given(
    st.floats(0.05, 1.0),
    st.floats(1e-4, 0.9),
    st.floats(0.0, 0.95),
    st.floats(0.0, 0.95),
)
def test_band_follows_its_definition_and_contains_the_curve(tpr, fpr, cv_t, cv_f):
    s_t, s_f = cv_t * tpr, cv_f * fpr
    assume(tpr + s_t <= 1 and fpr + s_f <= 1)
    point = OperatingPoint(tpr=tpr, fpr=fpr, sigma_tpr=s_t, sigma_fpr=s_f)
    curve = p3_curve(point, eta_min=1e-6, eta_max=0.99, points=300)
    eta = curve.prevalence
    upper = eta * (tpr + s_t) / (eta * (tpr + s_t) + (1 - eta) * (fpr - s_f))
    lower = eta * (tpr - s_t) / (eta * (tpr - s_t) + (1 - eta) * (fpr + s_f))
    np.testing.assert_allclose(curve.upper, upper, rtol=1e-12)
    np.testing.assert_allclose(curve.lower, lower, rtol=1e-12)
    assert np.all(curve.lower <= curve.precision + 1e-15)
    assert np.all(curve.precision <= curve.upper + 1e-15)
    assert np.max(curve.upper - curve.lower) <= curve.band.delta + 1e-12


@FAST
@given(st.floats(0.0, 0.99), st.floats(0.0, 0.99), st.floats(0.01, 0.5), st.floats(1e-4, 0.5))
def test_delta_never_exceeds_the_larger_cv(cv_t, cv_f, tpr, fpr):
    """Brabec et al., Theorem 5.1: Delta <= max(CV_TPR, CV_FPR), equality iff equal CVs."""
    band = precision_band(
        OperatingPoint(tpr=tpr, fpr=fpr, sigma_tpr=cv_t * tpr, sigma_fpr=cv_f * fpr)
    )
    assert band.delta_bound == pytest.approx(max(cv_t, cv_f), rel=1e-12)
    assert band.delta <= band.delta_bound + 1e-12
    if abs(cv_t - cv_f) > 1e-6:
        assert band.delta < band.delta_bound
    assert max_band_width(cv_t, cv_f) == pytest.approx(band.delta, rel=1e-9, abs=1e-12)


@FAST
@given(st.floats(0.001, 0.99), st.floats(0.01, 0.5), st.floats(1e-4, 0.5))
def test_equal_cvs_attain_the_bound(cv, tpr, fpr):
    band = precision_band(OperatingPoint(tpr=tpr, fpr=fpr, sigma_tpr=cv * tpr, sigma_fpr=cv * fpr))
    assert band.delta == pytest.approx(cv, rel=1e-9)


def test_sigma_fpr_beyond_fpr_clips_and_the_widest_point_is_only_approached_at_zero():
    band = precision_band(OperatingPoint(tpr=0.8, fpr=0.01, sigma_tpr=0.05, sigma_fpr=0.02))
    # Prevalence 0 lies outside (0, 1): eta* is undefined (NaN), and the note says why.
    assert (band.fpr_lower, band.delta) == (0.0, 1.0) and math.isnan(band.eta_star)
    assert "UB = 1" in band.note and "prevalence -> 0" in band.note
    lower, upper = band.bounds_at(np.array([1e-6, 0.5]))
    np.testing.assert_array_equal(upper, [1.0, 1.0])
    assert lower[0] < 1e-3  # UB - LB tends to 1 as eta -> 0


def test_sigma_tpr_beyond_tpr_clips_and_the_widest_point_is_only_approached_at_one():
    band = precision_band(OperatingPoint(tpr=0.1, fpr=0.01, sigma_tpr=0.2, sigma_fpr=0.001))
    assert (band.tpr_lower, band.delta) == (0.0, 1.0) and math.isnan(band.eta_star)
    assert "prevalence -> 1" in band.note
    assert band.delta <= band.delta_bound
    lower, _ = band.bounds_at(0.3)
    assert lower == 0.0


def test_zero_fpr_with_a_positive_sigma_explains_the_null_eta_star_and_bound():
    band = precision_band(OperatingPoint(tpr=0.8, fpr=0.0, sigma_tpr=0.05, sigma_fpr=0.01))
    # By hand: UB(eta) = Prec(eta, 0.85, 0) = 1 everywhere and LB(eta) = Prec(eta, 0.75,
    # 0.01) -> 0 as eta -> 0, so sup(UB - LB) = 1 is not attained in (0, 1).
    assert band.delta == 1.0 and math.isnan(band.eta_star)
    lower, upper = band.bounds_at(np.array([1e-8, 1e-4, 0.5]))
    np.testing.assert_array_equal(upper, [1.0, 1.0, 1.0])
    assert 1.0 - lower[0] > 0.98 and np.all(np.diff(1.0 - lower) < 0)
    assert band.delta_bound == math.inf  # CV_FPR = 0.01/0
    assert "prevalence -> 0" in band.note and "delta_bound" in band.note
    document = p3_curve(OperatingPoint(tpr=0.8, fpr=0.0, sigma_tpr=0.05, sigma_fpr=0.01)).to_dict()
    assert document["eta_star"] != document["eta_star"]  # NaN here, null after json_ready
    assert any("eta* is undefined" in note for note in document["notes"])
    assert any("delta_bound" in note for note in document["notes"])


def test_degenerate_bands_are_explained_not_silent():
    both = precision_band(OperatingPoint(tpr=0.1, fpr=0.01, sigma_tpr=0.2, sigma_fpr=0.02))
    assert both.delta == 1.0 and math.isnan(both.eta_star)
    assert "[0, 1] at every prevalence" in both.note
    exact = precision_band(OperatingPoint(tpr=0.1, fpr=0.01, sigma_tpr=0.0, sigma_fpr=0.0))
    assert exact.delta == 0.0 and "zero width" in exact.note
    with pytest.raises(InputError, match="0/0"):
        precision_band(OperatingPoint(tpr=0.1, fpr=0.0, sigma_tpr=0.2, sigma_fpr=0.0))
    with pytest.raises(InputError, match="needs sigma"):
        precision_band(OperatingPoint(tpr=0.1, fpr=0.01))


# --- Appendix B ------------------------------------------------------------------------


@FAST
@given(st.floats(0.01, 0.6), st.floats(0.0, 1.0))
def test_largest_cv_fpr_plugged_back_recovers_the_target_delta(target, share):
    kap = ((1 - target) / (1 + target)) ** 2
    cv_tpr = share * (1 - kap) / (1 + kap) * 0.999
    cv_fpr = largest_cv_fpr(target, cv_tpr)
    assert cv_fpr > 0
    tpr, fpr = 0.7, 0.02
    searched, _ = _band_width_by_search(tpr, fpr, cv_tpr * tpr, cv_fpr * fpr)
    assert searched == pytest.approx(target, rel=1e-7)


def test_largest_cv_fpr_is_the_target_when_cv_tpr_is_the_target():
    assert largest_cv_fpr(0.1, 0.1) == pytest.approx(0.1, rel=1e-12)


def test_a_cv_tpr_too_large_for_the_target_is_refused():
    with pytest.raises(InputError, match=r"cv_tpr = 0\.3 alone gives a band wider"):
        largest_cv_fpr(0.1, 0.3)


def test_negatives_to_label_give_the_planned_half_width():
    plan = plan_fpr_labeling(0.05, 0.03, 0.02, confidence=0.95)
    z = 1.959963984540054
    half_width = z * math.sqrt(plan.fpr * (1 - plan.fpr) / plan.negatives)
    one_fewer = z * math.sqrt(plan.fpr * (1 - plan.fpr) / (plan.negatives - 1))
    assert half_width <= plan.sigma_fpr < one_fewer
    assert plan.sigma_fpr == pytest.approx(plan.cv_fpr * 0.02)
    assert negatives_for_fpr_cv(0.5, z / 10) == 100  # exact: no extra item from rounding


# --- P3 curve and rank swaps -------------------------------------------------------------


def test_p3_curve_grid_and_contract():
    curve = p3_curve(OperatingPoint(tpr=0.8, fpr=0.01), reference_prevalence=0.02)
    assert curve.prevalence.size == 200
    assert curve.prevalence[0] == pytest.approx(1e-5) and curve.prevalence[-1] == pytest.approx(0.5)
    np.testing.assert_allclose(np.diff(np.log(curve.prevalence)), math.log(5e4) / 199)
    result = curve.to_dict()
    assert list(result) == [
        "tpr", "fpr", "sigma_tpr", "sigma_fpr", "delta", "eta_star", "delta_bound", "curve",
        "calibrated", "notes",
    ]  # fmt: skip
    assert result["notes"] == []
    assert result["delta"] is None and result["curve"][0]["lower"] != result["curve"][0]["lower"]
    assert set(result["curve"][0]) == {"eta", "precision", "lower", "upper", "f1"}


def _f(point, eta, beta=1.0):
    b2 = beta * beta
    precision = eta * point.tpr / (eta * point.tpr + (1 - eta) * point.fpr)
    return (1 + b2) * precision * point.tpr / (b2 * precision + point.tpr)


@FAST
@given(
    st.floats(0.05, 1.0), st.floats(1e-4, 0.5), st.floats(0.05, 1.0), st.floats(1e-4, 0.5),
    st.sampled_from([0.5, 1.0, 2.0]),
)  # fmt: skip
def test_f_beta_swaps_are_exact_and_complete(t_a, f_a, t_b, f_b, beta):
    a, b = OperatingPoint(tpr=t_a, fpr=f_a, name="A"), OperatingPoint(tpr=t_b, fpr=f_b, name="B")
    swaps = rank_swaps(a, b, beta=beta)
    # Complete: a dense grid shows a sign change exactly when a swap is reported.
    eta = np.geomspace(1e-12, 1 - 1e-12, 20_001)
    difference = _f(a, eta, beta) - _f(b, eta, beta)
    clear = np.abs(difference) > 1e-9
    sign_changes = np.count_nonzero(np.diff(np.sign(difference[clear])))
    if not swaps:
        assert sign_changes == 0
        return
    (swap,) = swaps
    assume(1e-11 < swap.prevalence < 1 - 1e-11)
    assert sign_changes == 1
    # Exact: the curves meet there, and the order differs on either side.
    at = swap.prevalence
    assert _f(a, at, beta) == pytest.approx(_f(b, at, beta), rel=1e-9)
    assert swap.value == pytest.approx(_f(a, at, beta), rel=1e-9)
    below, above = at * (1 - 1e-3), at + (1 - at) * 1e-3
    leader_below = "A" if _f(a, below, beta) > _f(b, below, beta) else "B"
    leader_above = "A" if _f(a, above, beta) > _f(b, above, beta) else "B"
    assert (swap.better_below, swap.better_above) == (leader_below, leader_above)
    assert swap.ratio == pytest.approx(at / (1 - at), rel=1e-9)


@FAST
@given(st.floats(0.05, 1.0), st.floats(1e-4, 0.5), st.floats(0.05, 1.0), st.floats(1e-4, 0.5))
def test_precision_ranks_never_swap(t_a, f_a, t_b, f_b):
    a, b = OperatingPoint(tpr=t_a, fpr=f_a), OperatingPoint(tpr=t_b, fpr=f_b)
    assert rank_swaps(a, b, metric="precision") == ()
    eta = np.geomspace(1e-9, 1 - 1e-9, 2_001)
    difference = precision_at_prevalence(t_a, f_a, eta) - precision_at_prevalence(t_b, f_b, eta)
    clear = np.abs(difference) > 1e-12
    assert np.count_nonzero(np.diff(np.sign(difference[clear]))) == 0


def test_a_known_f1_swap():
    # A: high recall, noisy; B: precise, lower recall. F1 equal where
    # u* = (t_B - t_A)/(t_A f_B - t_B f_A) = (0.5 - 0.9)/(0.9*0.001 - 0.5*0.01) = 400/4.1.
    a = OperatingPoint(tpr=0.9, fpr=0.01, name="recall-heavy")
    b = OperatingPoint(tpr=0.5, fpr=0.001, name="precise")
    (swap,) = rank_swaps(a, b)
    assert swap.ratio == pytest.approx(4.1 / 400, rel=1e-12)
    assert (swap.better_below, swap.better_above) == ("precise", "recall-heavy")


def test_identical_or_dominating_points_never_swap():
    a = OperatingPoint(tpr=0.8, fpr=0.01)
    assert rank_swaps(a, OperatingPoint(tpr=0.8, fpr=0.01)) == ()
    assert rank_swaps(a, OperatingPoint(tpr=0.8, fpr=0.02)) == ()  # same TPR
    assert rank_swaps(a, OperatingPoint(tpr=0.4, fpr=0.005)) == ()  # same FPR/TPR
    assert rank_swaps(a, OperatingPoint(tpr=0.9, fpr=0.005)) == ()  # dominates
    with pytest.raises(InputError, match="metric must be one of"):
        rank_swaps(a, a, metric="recall")


def test_compare_across_prevalence_keeps_swaps_inside_the_grid():
    points = [
        OperatingPoint(tpr=0.9, fpr=0.01, name="A"),
        OperatingPoint(tpr=0.5, fpr=0.001, name="B"),
        OperatingPoint(tpr=0.99, fpr=0.5, name="C"),
    ]
    comparison = compare_across_prevalence(points, eta_min=1e-4, eta_max=0.5, grid_points=50)
    assert comparison.precision.shape == comparison.f_beta.shape == (3, 50)
    np.testing.assert_allclose(comparison.f_beta[0], _f(points[0], comparison.prevalence))
    every = [s for i, j in ((0, 1), (0, 2), (1, 2)) for s in rank_swaps(points[i], points[j])]
    inside = [s for s in every if 1e-4 <= s.prevalence <= 0.5]
    assert [s.prevalence for s in comparison.swaps] == sorted(s.prevalence for s in inside)
    assert len(every) > len(inside) > 0


def test_table_at_round_prevalences_is_the_closed_form_and_keeps_the_level():
    point = OperatingPoint.from_round(
        ConfusionMatrix(tp=40, fp=10, fn=5, tn=200), 0.05, confidence=0.9
    )
    assert point.confidence == 0.9
    assert OperatingPoint(tpr=0.8, fpr=0.1).confidence is None
    curve = p3_curve(point, eta_min=0.001, eta_max=0.3, points=7)
    rows = curve.at_round_prevalences()
    star = curve.band.eta_star
    assert [row.prevalence for row in rows] == sorted({0.001, 0.01, 0.02, 0.05, 0.1, 0.2, star})
    for row in rows:
        # Bayes' rule by hand: eta TPR / (eta TPR + (1 - eta) FPR).
        eta = row.prevalence
        expected = eta * point.tpr / (eta * point.tpr + (1 - eta) * point.fpr)
        assert row.precision == pytest.approx(expected, rel=1e-12)
        assert row.f1 == pytest.approx(
            2 * row.precision * point.tpr / (row.precision + point.tpr), rel=1e-12
        )
        assert row.lower <= row.precision <= row.upper
        assert row.is_eta_star == (eta == star)
    # A range with fewer than two round prevalences gets its ends.
    narrow = p3_curve(OperatingPoint(tpr=0.8, fpr=0.1), eta_min=0.03, eta_max=0.04, points=5)
    (first, last) = narrow.at_round_prevalences()
    assert (first.prevalence, last.prevalence) == pytest.approx((0.03, 0.04))
    assert first.lower is None and not first.is_eta_star


def test_the_band_uses_the_rate_intervals_a_lead_is_told_to_quote():
    # If the recommendation changes, the band must follow it (methods, Theorem 5.1).
    from core import prevalence
    from core.methods import RECOMMENDED

    assert prevalence._BAND_RECALL.__name__ == RECOMMENDED["recall"].method + "_recall"
    assert prevalence._BAND_FPR.__name__ == RECOMMENDED["fpr"].method + "_fpr"


def test_a_rounds_band_is_built_from_its_intervals_ends_not_plus_minus_half_widths():
    # FP = 0 (review): the quoted FPR interval is [0, u]; "FPR^ + half-width" would put the
    # band's lower edge at FPR = u/2. Checked at 0.1 % prevalence from the ends by hand.
    from core.intervals import katz_log_recall

    matrix = ConfusionMatrix(tp=200, fp=0, fn=3, tn=397)
    k = 5_000 / 95_000
    point = OperatingPoint.from_round(matrix, k)
    recall = katz_log_recall(matrix, k, 0.95)
    fpr = wilson_ratio_fpr(matrix, k, 0.95)
    assert point.fpr_bounds == (0.0, fpr.upper)
    eta = 0.001
    lower_by_hand = eta * recall.lower / (eta * recall.lower + (1 - eta) * fpr.upper)
    curve = p3_curve(point, eta_min=eta, eta_max=0.5, points=2)
    assert curve.lower[0] == pytest.approx(lower_by_hand, rel=1e-9)
    assert curve.upper[0] == 1.0  # no false positive seen: precision may be 100 %
