"""The finite population correction of the precision intervals, checked independently.

* The hypergeometric exact interval against confidence sets enumerated with ``math.comb``
  and exact fractions (``tests/data/hypergeometric_intervals_enumerated.json``) and against
  a brute-force enumeration for random small strata; its coverage is at least the level
  for every possible number of true positives (exact sums over every outcome).
* Wilson with the correction against a numerical inversion of the corrected score test
  (scipy's ``brentq``), and its coverage when items are drawn without replacement.
* Jeffreys and the posterior for a finite stratum against a simulation of the stratum's
  unlabeled items (rate from the posterior, then a binomial count), and against the plain
  Beta quantiles for a huge stratum.
* A stratum labeled in full has no sampling error; a huge stratum gives back the plain
  intervals.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import hypergeom

from core import batch_intervals
from core.bayes import finite_posterior_interval
from core.confusion import ConfusionMatrix
from core.intervals import (
    CENSUS_NOTE,
    clopper_pearson_precision,
    hypergeometric_precision,
    jeffreys_precision,
    wilson_precision,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def _matrix(tp: int, labeled_pos: int) -> ConfusionMatrix:
    return ConfusionMatrix(tp=tp, fp=labeled_pos - tp, fn=3, tn=40)


def _enumerated(tp: int, n: int, big_n: int, confidence: float) -> tuple[int, int]:
    alpha = 1 - Fraction(confidence).limit_denominator(1000)
    total = math.comb(big_n, n)
    kept = []
    for m in range(big_n + 1):
        pmf = [math.comb(m, j) * math.comb(big_n - m, n - j) for j in range(n + 1)]
        if Fraction(sum(pmf[tp:]), total) >= alpha / 2 <= Fraction(sum(pmf[: tp + 1]), total):
            kept.append(m)
    return min(kept), max(kept)


def test_hypergeometric_interval_matches_the_enumerated_reference():
    cases = json.loads((DATA / "hypergeometric_intervals_enumerated.json").read_text())["cases"]
    for case in cases:
        big_n = case["population_pos"]
        interval = hypergeometric_precision(
            _matrix(case["tp"], case["labeled_pos"]), big_n, case["confidence"]
        )
        assert (interval.lower, interval.upper) == (
            case["low_positives"] / big_n,
            case["high_positives"] / big_n,
        ), case


def test_hypergeometric_interval_matches_brute_force_on_random_small_strata():
    rng = random.Random(20261125)
    for _ in range(150):
        big_n = rng.randint(1, 70)
        n = rng.randint(1, big_n)
        tp = rng.randint(0, n)
        confidence = rng.choice((0.8, 0.9, 0.95, 0.99))
        low, high = _enumerated(tp, n, big_n, confidence)
        interval = hypergeometric_precision(_matrix(tp, n), big_n, confidence)
        assert (interval.lower, interval.upper) == (low / big_n, high / big_n), (tp, n, big_n)


@pytest.mark.parametrize(("big_n", "n"), [(60, 25), (200, 30), (35, 34)])
def test_hypergeometric_interval_covers_every_possible_truth(big_n, n):
    """Exact coverage: for every M, the probability of the outcomes whose interval holds
    M/N, summed over the hypergeometric distribution."""
    intervals = [hypergeometric_precision(_matrix(tp, n), big_n, 0.95) for tp in range(n + 1)]
    for m in range(big_n + 1):
        held = [tp for tp, i in enumerate(intervals) if i.lower <= m / big_n <= i.upper]
        assert hypergeom.pmf(held, big_n, m, n).sum() >= 0.95 - 1e-12, m


def test_hypergeometric_interval_is_narrower_than_and_tends_to_clopper_pearson():
    matrix = _matrix(40, 50)
    binomial = clopper_pearson_precision(matrix)
    small = hypergeometric_precision(matrix, 120)
    assert binomial.lower < small.lower and small.upper < binomial.upper
    assert small.note == ""  # no caution: the correction's warning says what it is
    huge = clopper_pearson_precision(matrix, population_pos=10**9)
    assert huge.as_list() == pytest.approx(binomial.as_list(), abs=2e-8)


def test_a_stratum_labeled_in_full_has_no_sampling_error():
    matrix = _matrix(33, 40)
    exact = hypergeometric_precision(matrix, 40)
    assert exact.as_list() == [33 / 40, 33 / 40]
    score = wilson_precision(matrix, 0.95, (0.0, 1.0))
    assert score.as_list() == [33 / 40, 33 / 40]
    assert score.note == CENSUS_NOTE


@pytest.mark.parametrize(("tp", "n", "factor"), [(138, 160, 0.6), (3, 10, 0.9), (10, 10, 0.3)])
def test_corrected_wilson_inverts_the_corrected_score_test(tp, n, factor):
    """The bounds are the p where (p^ - p)^2 = z^2 f p(1-p)/n, found numerically."""
    z = NormalDist().inv_cdf(0.975)
    p_hat = tp / n

    def gap(p: float) -> float:
        return (p_hat - p) ** 2 - z * z * factor * p * (1 - p) / n

    # p^ itself is a root when it is 0 or 1: bracket the other one away from it.
    lower = 0.0 if tp == 0 else brentq(gap, 1e-15, p_hat - 1e-9, xtol=1e-15)
    upper = 1.0 if tp == n else brentq(gap, p_hat + 1e-9, 1 - 1e-15, xtol=1e-15)
    interval = wilson_precision(_matrix(tp, n), 0.95, (factor, 1.0))
    assert interval.as_list() == pytest.approx([lower, upper], abs=1e-12)
    plain = wilson_precision(_matrix(tp, n), 0.95)
    assert plain.lower <= interval.lower and interval.upper <= plain.upper


def test_corrected_wilson_keeps_its_level_when_drawing_without_replacement():
    """Average coverage over the truths, exact over every outcome: near the level, where
    the uncorrected interval over-covers."""
    big_n, n = 300, 150
    factor = (big_n - n) / (big_n - 1)
    tps = np.arange(n + 1)
    corrected = batch_intervals.wilson_precision(tps, n - tps, 0.95, fpc=(factor, 1.0))
    plain = batch_intervals.wilson_precision(tps, n - tps, 0.95)
    truths = range(30, 271)  # precisions 0.1 to 0.9
    coverage = {}
    for name, found in (("corrected", corrected), ("plain", plain)):
        covered = [
            hypergeom.pmf(tps, big_n, m, n)[
                (found.lower <= m / big_n) & (m / big_n <= found.upper)
            ].sum()
            for m in truths
        ]
        coverage[name] = float(np.mean(covered))
    assert 0.94 <= coverage["corrected"] <= 0.965
    assert coverage["plain"] > 0.99


@pytest.mark.parametrize(("tp", "n", "big_n"), [(40, 50, 120), (3, 30, 90), (0, 20, 400)])
def test_finite_jeffreys_matches_a_simulation_of_the_unlabeled_items(tp, n, big_n):
    """M = TP + X: the rate drawn from Beta(TP + 1/2, FP + 1/2), then X ~ Binomial(N - n)."""
    rng = np.random.default_rng(7)
    rates = rng.beta(tp + 0.5, n - tp + 0.5, size=400_000)
    shares = (tp + rng.binomial(big_n - n, rates)) / big_n
    expected = np.quantile(shares, [0.025, 0.975], method="inverted_cdf")
    interval = jeffreys_precision(_matrix(tp, n), 0.95, big_n)
    assert interval.as_list() == pytest.approx(list(expected), abs=1.01 / big_n)
    plain = jeffreys_precision(_matrix(tp, n), 0.95)
    assert interval.width < plain.width


def test_finite_posterior_tends_to_the_beta_quantiles_and_ends_at_the_census():
    huge = finite_posterior_interval(40, 50, 10**9, 40.5, 10.5)
    plain = jeffreys_precision(_matrix(40, 50))
    assert huge.as_list() == pytest.approx(plain.as_list(), abs=1e-6)
    census = finite_posterior_interval(40, 50, 50, 40.5, 10.5)
    assert census.as_list() == [0.8, 0.8]


@pytest.mark.parametrize(("a", "b"), [(40.5, 10.5), (0.5, 200.5), (3000.5, 900.5)])
def test_large_strata_use_an_integral_that_agrees_with_scipys_sum(a, b):
    """Above 20,000 unlabeled items the quantiles come from one integral per step; scipy's
    term-by-term beta-binomial (slow there, exact) must give the same counts."""
    from scipy.stats import betabinom

    rest = 30_000
    expected = betabinom.ppf([0.025, 0.975], rest, a, b)
    interval = finite_posterior_interval(0, 0, rest, a, b)
    assert [interval.lower * rest, interval.upper * rest] == pytest.approx(list(expected), abs=0)


def test_the_correction_note_gives_the_share_labeled_as_a_lead_counts_it():
    # 150 of 300 flagged and 600 of 1,500 unflagged items labeled: half and two fifths,
    # not (n - 1)/(N - 1) = 49.8 % and 39.96 %.
    from core.confusion import Population
    from core.evaluation import evaluate

    result = evaluate(
        ConfusionMatrix(tp=120, fp=30, fn=20, tn=580),
        population=Population(k=300 / 1500, predicted_positive=300, predicted_negative=1500),
        fpc=True,
        replicates=1000,
        seed=1,
    )
    note = next(text for text in result.warnings if "without replacement" in text)
    assert "the labels cover 50.0 % of the flagged and 40.0 % of the unflagged items" in note
    assert "sampling error" not in note  # read as a problem on every round (trial 19)


def test_a_large_share_labeled_without_the_correction_suggests_it():
    # All 30 flagged items labeled, evaluated as if from an endless population: precision
    # 62-91 % for a value known exactly, and no word of it (stats check 11).
    from core.confusion import Population
    from core.evaluation import evaluate

    matrix = ConfusionMatrix(tp=24, fp=6, fn=10, tn=190)
    population = Population(k=30 / 1_000, predicted_positive=30, predicted_negative=1_000)
    plain = evaluate(matrix, population=population, replicates=1000, seed=1)
    hint = [line for line in plain.warnings if "narrows the intervals" in line]
    assert hint and hint[0].startswith("100.0 % of the flagged and 20.0 % of the unflagged")
    # With the correction the census stratum's small counts weaken nothing: FP = 6 is not
    # named, FN = 10 is no small cell either.
    corrected = evaluate(matrix, population=population, replicates=1000, seed=1, fpc=True)
    assert not any("narrows the intervals" in line for line in corrected.warnings)
    assert not any("normal approximation is weak" in line for line in corrected.warnings)
    # A share of 5 % suggests nothing.
    big = Population(k=600 / 20_000, predicted_positive=600, predicted_negative=20_000)
    small_share = evaluate(matrix, population=big, replicates=1000, seed=1)
    assert not any("narrows the intervals" in line for line in small_share.warnings)


@pytest.mark.parametrize("big_n", [10**10, 10**13, 10**15])
def test_a_stratum_beyond_a_billion_items_gives_the_beta_quantiles_without_a_warning(big_n):
    """Fuzz 20: at 10^10 unlabeled items quad warned (printed to the lead's terminal) and
    missed the quantile by 1e-4 of the stratum."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = finite_posterior_interval(450, 500, big_n, 450.5, 50.5)
    plain = jeffreys_precision(_matrix(450, 500))
    assert huge.as_list() == pytest.approx(plain.as_list(), abs=1e-7)


@pytest.mark.parametrize(("q", "a", "b"), [(0.025, 0.5, 50.5), (0.975, 0.5, 50.5),
                                           (0.025, 50.5, 0.5), (0.975, 50.5, 0.5)])  # fmt: skip
def test_quantiles_near_an_end_of_a_large_stratum_match_scipys_sum(q, a, b):
    """Review 20: with no positive labeled (a = 0.5) the integral put the lower quantile of
    10^6 unlabeled items at 349 where scipy's exact sum says 10."""
    from scipy.stats import betabinom

    from core.bayes import _betabinom_quantile

    assert _betabinom_quantile(q, 10**6, a, b) == int(betabinom.ppf(q, 10**6, a, b))


@pytest.mark.parametrize(("q", "a", "b"), [(0.5, 2.5, 3.5), (0.025, 10.5, 10.5)])
def test_quantiles_inside_a_large_stratum_match_the_summed_pmf(q, a, b):
    """Three million items: the integral (mid-range) and the sums (near an end) against
    scipy's own beta-binomial pmf, summed."""
    import numpy as np
    from scipy.stats import betabinom

    from core.bayes import _betabinom_quantile

    m = 3_000_000
    cdf = np.cumsum(betabinom.pmf(np.arange(m + 1), m, a, b))
    assert _betabinom_quantile(q, m, a, b) == int(np.searchsorted(cdf, q))


def test_no_positive_labeled_gives_one_lower_bound_either_side_of_a_billion():
    """Review 20: the lower bound jumped 58 times across the 10^9 switch to the Beta limit."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        below = finite_posterior_interval(0, 500, 10**9 - 1 + 500, 0.5, 500.5)
        above = finite_posterior_interval(0, 500, 10**9 + 1 + 500, 0.5, 500.5)
    assert below.lower == pytest.approx(above.lower, rel=0.01)
    assert below.upper == pytest.approx(above.upper, rel=1e-4)
