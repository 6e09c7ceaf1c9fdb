"""Confusion matrix, population and truth relations (methods §2) against hand-worked values."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.confusion import (
    ConfusionMatrix,
    Population,
    f_beta,
    fpr_from_rates,
    pi0_from_precision_recall,
    point_estimates,
    prevalence_from_rates,
    recall_from_rates,
    stratum_sizes,
)
from core.errors import InputError

TABLE1 = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)


def test_paper_table1_random_sample_estimates():
    # Shang et al. (2023), Table 1: a random sample of 5000; P = 138/160, R = 138/246.
    estimates = point_estimates(TABLE1)
    assert estimates.k == pytest.approx(160 / 4840)
    assert estimates.precision == pytest.approx(138 / 160)
    assert estimates.recall == pytest.approx(138 / 246)
    assert estimates.fpr == pytest.approx(22 / (22 + 4732))
    assert estimates.prevalence == pytest.approx(246 / 5000)
    assert estimates.f1 == pytest.approx(2 * 138 / (2 * 138 + 22 + 108))


def test_general_recall_equals_tp_over_tp_plus_s_fn_only_on_the_exact_design():
    # n1/n0 = k*s exactly: k = 1/19, s = 2 -> n1/n0 = 2/19 with n1 = 200, n0 = 1900.
    matrix = ConfusionMatrix(tp=150, fp=50, fn=19, tn=1881)
    k, s = 1 / 19, 2.0
    assert matrix.n_pos / matrix.n_neg == pytest.approx(k * s)
    assert point_estimates(matrix, k).recall == pytest.approx(150 / (150 + s * 19))
    # Off the exact design the shortcut is wrong and the general form is used.
    off = ConfusionMatrix(tp=150, fp=50, fn=19, tn=1500)
    assert point_estimates(off, k).recall != pytest.approx(150 / (150 + s * 19))
    pi1, pi0 = 150 / 200, 19 / 1519
    assert point_estimates(off, k).recall == pytest.approx(1 / (1 + pi0 / (k * pi1)))


def test_truth_relations_hand_values():
    # pi1 = 0.9, pi0 = 0.01, k = 1/19: recall = 1/(1 + 0.01*19/0.9) = 0.9/(0.9 + 0.19)
    assert recall_from_rates(0.9, 0.01, 1 / 19) == pytest.approx(0.9 / 1.09)
    # FPR = 1/(1 + 0.99/(k*0.1)) = 0.1/(0.1 + 0.99*19)
    assert fpr_from_rates(0.9, 0.01, 1 / 19) == pytest.approx(0.1 / (0.1 + 0.99 * 19))
    # prevalence = (0.9/19 + 0.01)/(1/19 + 1) = (0.9 + 0.19)/20
    assert prevalence_from_rates(0.9, 0.01, 1 / 19) == pytest.approx(1.09 / 20)
    assert f_beta(0.5, 1.0) == pytest.approx(2 / 3)
    assert f_beta(0.5, 1.0, beta=2.0) == pytest.approx(5 * 0.5 / (4 * 0.5 + 1))
    assert f_beta(0.0, 0.0) == 0.0


@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(1e-4, 10))
def test_eq9_inverts_eq2(precision, recall, k):
    pi0 = pi0_from_precision_recall(precision, recall, k)
    assert recall_from_rates(precision, pi0, k) == pytest.approx(recall, rel=1e-9)


def test_population_counts_on_a_brute_force_population():
    # Build an explicit population and count: 41200 flagged, 1251000 not.
    population = Population.from_counts(41_200, 1_251_000)
    assert population.k == pytest.approx(41_200 / 1_251_000)
    f1, f0 = population.fpc_factors(412, 1251)
    assert f1 == pytest.approx((41_200 - 412) / 41_199)
    assert f0 == pytest.approx((1_251_000 - 1251) / 1_250_999)
    with pytest.raises(InputError, match="larger than its population"):
        population.fpc_factors(50_000, 10)
    with pytest.raises(InputError, match="needs both population counts"):
        Population.from_k(0.05).fpc_factors(10, 10)


def test_stratum_sizes_eq1_rounding():
    # v = 1000, k = 1/19, s = 2: n1 = 1000 * (2/19)/(2/19 + 1) = 2000/21 = 95.24 -> 95
    assert stratum_sizes(1000, 1 / 19, 2) == (95, 905)
    assert stratum_sizes(5000, 1.0, 1.0) == (2500, 2500)


def test_stratum_sizes_round_halves_up():
    # By hand: k*s/(k*s + 1) = (1/19)/(20/19) = 1/20, so v = 50 gives n1 = 2.5 and v = 10
    # gives 0.5; half up makes them 3 and 1 (Python's round, half to even, gave 2 and 0).
    assert stratum_sizes(50, 1 / 19, 1) == (3, 47)
    assert stratum_sizes(10, 1 / 19, 1) == (1, 9)
    # v = 30, k = 1/19: 1.5 -> 2 (half to even also gives 2); 3.5 at v = 70 -> 4.
    assert stratum_sizes(30, 1 / 19, 1) == (2, 28)
    assert stratum_sizes(70, 1 / 19, 1) == (4, 66)
    # Just below a half still rounds down: v = 49 gives 2.45 -> 2.
    assert stratum_sizes(49, 1 / 19, 1) == (2, 47)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ((-1, 2, 3, 4), "TP must be a whole number >= 0, got -1"),
        ((1, 2.5, 3, 4), "FP must be a whole number >= 0, got 2.5"),
        ((1, 2, "x", 4), "FN must be a whole number >= 0, got 'x'"),
        ((1, 2, 3, math.nan), "TN must be a whole number >= 0"),
        ((1, 2, 3), "needs 4 counts"),
    ],
)
def test_bad_counts_are_refused_with_the_value_named(values, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ConfusionMatrix.from_sequence(values)


def test_empty_stratum_is_refused_for_estimates():
    with pytest.raises(InputError, match="predicted-positive sample is empty"):
        point_estimates(ConfusionMatrix(tp=0, fp=0, fn=3, tn=10), 0.05)
    with pytest.raises(InputError, match="predicted-negative sample is empty"):
        point_estimates(ConfusionMatrix(tp=3, fp=1, fn=0, tn=0), 0.05)


def test_population_validation():
    with pytest.raises(InputError, match="k must be a number > 0"):
        Population(k=0)
    with pytest.raises(InputError, match="does not match"):
        Population(k=0.5, predicted_positive=10, predicted_negative=100)
    with pytest.raises(InputError, match="both population counts"):
        Population(k=0.1, predicted_positive=10)


def test_rate_functions_follow_ieee_rules_on_arrays():
    recall = recall_from_rates(np.array([0.0, 0.5, 0.0]), np.array([0.1, 0.1, 0.0]), 0.1)
    assert recall[0] == 0.0
    assert recall[1] == pytest.approx(1 / (1 + 0.1 / 0.05))
    assert np.isnan(recall[2])


def test_eq9_planning_rates_by_hand_and_one_refusal_everywhere():
    from core.bayes import Prior
    from core.confusion import planning_rates
    from core.coverage import CoverageSetting
    from core.planning import make_plan

    # k*pi1*(1/recall - 1) = 0.05 * 0.9 * (1/0.8 - 1) = 0.01125, worked by hand.
    pi1, pi0, k = planning_rates(0.9, 0.8, 0.05)
    assert (pi1, k) == (0.9, 0.05)
    assert pi0 == pytest.approx(0.01125, rel=1e-12)
    # k = 3, precision 0.9, recall 0.5: pi0 = 3 * 0.9 * 1 = 2.7, not a rate. Every entry
    # point that takes planning values refuses it with the same words.
    attempts = (
        lambda: planning_rates(0.9, 0.5, 3.0),
        lambda: Prior.from_expected(0.9, 0.5, 3.0, 1.0),
        lambda: CoverageSetting(k=3.0, precision=0.9, recall=0.5, v=1000, s=1.0),
        lambda: make_plan(population=Population.from_k(3.0), precision=0.9, recall=0.5),
    )
    for attempt in attempts:
        with pytest.raises(InputError, match=r"imply a false omission rate of 2\.7 \(Eq 9\)"):
            attempt()
