"""Planning from a round with a zero count (trial 15: no misses among 3,000 unflagged
items). The posterior mean read recall 99.3 %, planned 458 unflagged labels with 0.08
misses expected, and a labeled round met the recall margin with a 0 % chance. The rate
with the zero count is now planned at the cautious end of what the round allows, and a
plan whose round almost never meets a margin says so and why."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import ndtri

from core.confusion import ConfusionMatrix, Population
from core.planning import CAUTIOUS_LEVEL, make_plan, rates_from_round

#: v8's October round: 250 flagged labeled, 3,000 unflagged, no missed spam.
OCTOBER = ConfusionMatrix(tp=180, fp=70, fn=0, tn=3_000)
POPULATION = Population.from_counts(9_620, 293_120)


def jeffreys_density(x: float, a: float, b: float) -> float:
    """The Beta(a, b) density, written out (not scipy's)."""
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    return math.exp(log_norm + (a - 1) * math.log(x) + (b - 1) * math.log1p(-x))


def test_a_zero_count_is_planned_at_the_cautious_end_of_its_posterior():
    precision, recall, notes = rates_from_round(OCTOBER, POPULATION.k)
    # The flagged side has no zero count: its plug-in estimate.
    assert precision == pytest.approx(180 / 250)
    # The unflagged side: pi0 at the one-sided 95 % Jeffreys bound, Beta(0.5, 3000.5).
    pi0 = POPULATION.k * precision * (1.0 / recall - 1.0)  # Eq 2 solved for pi0
    mass, _error = quad(jeffreys_density, 0.0, pi0, args=(0.5, 3_000.5), points=[1e-6, 1e-4])
    assert mass == pytest.approx(CAUTIOUS_LEVEL, abs=1e-6)
    assert 0.0006 < pi0 < 0.0007 and recall == pytest.approx(0.9736, abs=1e-4)
    assert any("cannot rule out with 95% confidence" in note for note in notes)


def test_the_plan_is_larger_and_says_its_recall_margin_is_rarely_met():
    precision, recall, _notes = rates_from_round(OCTOBER, POPULATION.k)
    plan = make_plan(population=POPULATION, precision=precision, recall=recall)
    # About one missed item expected among the unflagged labels: not the 0.08 of before.
    assert plan.n_neg * plan.pi0 == pytest.approx(1.03, abs=0.05)
    # The chance a labeled round meets the recall margin, by simulation of the round with
    # Katz's interval worked here (Haldane's 0.5 on a zero cell, as quoted).
    rng = np.random.default_rng(15)
    draws = 20_000
    tp = rng.binomial(plan.n_pos, plan.pi1, draws).astype(float)
    fn = rng.binomial(plan.n_neg, plan.pi0, draws).astype(float)
    fp, tn = plan.n_pos - tp, plan.n_neg - fn
    zero = (tp == 0) | (fp == 0) | (fn == 0) | (tn == 0)
    tp, fp, fn, tn = (np.where(zero, cell + 0.5, cell) for cell in (tp, fp, fn, tn))
    pi1_hat, pi0_hat = tp / (tp + fp), fn / (fn + tn)
    x = pi0_hat / (POPULATION.k * pi1_hat)
    se = np.sqrt((1 - pi1_hat) / (plan.n_pos * pi1_hat) + (1 - pi0_hat) / (plan.n_neg * pi0_hat))
    z = ndtri(0.975)
    half = (1 / (1 + x * np.exp(-z * se)) - 1 / (1 + x * np.exp(z * se))) / 2
    assert np.mean(half <= 0.05) < 0.05
    said = plan.rarely_met()
    assert said is not None
    assert said.startswith("a labeled round of this plan almost never meets the recall margin")
    assert f"about 1.0 missed positives among its {plan.n_neg:,} unflagged labels are" in said


def test_a_plan_from_an_ordinary_round_says_nothing_of_the_kind():
    round_ = ConfusionMatrix(tp=180, fp=70, fn=12, tn=2_988)
    precision, recall, notes = rates_from_round(round_, POPULATION.k)
    assert (precision, notes) == (180 / 250, ())
    plan = make_plan(population=POPULATION, precision=precision, recall=recall)
    assert plan.rarely_met() is None


@pytest.mark.parametrize(
    ("counts", "rate"),
    [((0, 1, 10, 900), "pi1"), ((1, 0, 10, 900), "pi1"), ((90, 10, 5, 0), "pi0")],
)
def test_the_cautious_value_stops_at_one_half(counts, rate):
    # TP = 0 with one FP planned precision at 0.77: past 1/2 the variance falls again; and
    # TN = 0 planned on pi0 = 1, refused as "pi0 must be between 1e-12 and ..." (review 15,
    # recheck 15).
    matrix = ConfusionMatrix(**dict(zip(("tp", "fp", "fn", "tn"), counts, strict=True)))
    precision, recall, _notes = rates_from_round(matrix, POPULATION.k)
    pi0 = POPULATION.k * precision * (1 / recall - 1)
    if rate == "pi1":
        assert precision == pytest.approx(0.5)
    else:  # its 5 % bound, 0.69, has not reached 1/2: kept
        mass, _error = quad(jeffreys_density, 0.0, pi0, args=(5.5, 0.5))
        assert mass == pytest.approx(1 - CAUTIOUS_LEVEL, abs=1e-6) and 0.5 < pi0 < 0.75
    plan = make_plan(population=POPULATION, precision=precision, recall=recall)
    assert plan.n_pos > 0 and plan.n_neg > 0


def test_every_scarce_cell_is_named():
    # No false positives and no misses: both margins rest on a cell of under one item, and
    # the warning named only one of them (recheck 15).
    round_ = ConfusionMatrix(tp=180, fp=0, fn=0, tn=3_000)
    precision, recall, _notes = rates_from_round(round_, POPULATION.k)
    plan = make_plan(population=POPULATION, precision=precision, recall=recall)
    said = plan.rarely_met()
    assert said is not None and "the precision and recall margins" in said
    expected_fp = plan.n_pos * (1 - plan.pi1)
    expected_fn = plan.n_neg * plan.pi0
    assert f"about {expected_fp:.1f} false positives among its {plan.n_pos:,} flagged" in said
    assert f"about {expected_fn:.1f} missed positives among its {plan.n_neg:,} unflagged" in said
