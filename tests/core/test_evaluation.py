"""``core.evaluation.evaluate``: the JSON contract, warnings, and values checked against
independent computations (scipy's Beta quantiles, Eq 6 by hand, the closed forms)."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_distribution

from core import intervals
from core.bayes import Prior
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError
from core.evaluation import Evaluation, evaluate

TABLE_1 = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)

PRECISION_METHODS = [
    "wald", "wilson", "agresti_coull", "clopper_pearson", "jeffreys",
    "bootstrap", "bayes", "bayes_mc", "posterior",
]  # fmt: skip
RECALL_METHODS = ["katz_log", "delta", "bootstrap", "bayes", "bayes_mc", "posterior"]


def test_json_document_has_exactly_the_contract_keys_stratified():
    document = evaluate(
        TABLE_1, population=Population.from_k(0.05), replicates=500, seed=1
    ).to_dict()
    assert list(document) == [
        "k",
        "design",
        "precision",
        "recall",
        "f1",
        "fpr",
        "prevalence",
        "warnings",
        "recommended",
        "fpc",
    ]
    assert document["design"] == "stratified" and document["k"] == 0.05
    # The intervals to quote (one per metric), each among those computed.
    assert document["recommended"] == {
        "precision": "wilson",
        "recall": "katz_log",
        "f1": "bootstrap",
        "fpr": "wilson_ratio",
    }
    assert list(document["precision"]["intervals"]) == PRECISION_METHODS
    assert list(document["recall"]["intervals"]) == RECALL_METHODS
    assert list(document["f1"]["intervals"]) == ["bootstrap", "bayes_mc", "posterior"]
    assert list(document["fpr"]["intervals"]) == ["katz_log", "wilson_ratio"]
    assert list(document["prevalence"]) == ["estimate"]
    for metric in ("precision", "recall", "f1", "fpr"):
        assert set(document[metric]) == {"estimate", "intervals"}
        for bounds in document[metric]["intervals"].values():
            assert isinstance(bounds, list) and len(bounds) == 2
    json.dumps(document, allow_nan=False)


def test_random_design_adds_the_wald_recall_interval_and_estimates_k():
    result = evaluate(TABLE_1, replicates=500, seed=1)
    document = result.to_dict()
    assert document["design"] == "random"
    assert document["k"] == pytest.approx(160 / 4840)
    assert list(document["recall"]["intervals"]) == [*RECALL_METHODS, "wald"]
    assert document["precision"]["estimate"] == pytest.approx(0.8625)
    assert document["recall"]["estimate"] == pytest.approx(138 / 246)
    assert result.warnings == ()


def test_values_match_independent_computations():
    k = 0.05
    result = evaluate(TABLE_1, population=k, confidence=0.9, replicates=2000, seed=3)
    z = NormalDist().inv_cdf(0.95)
    # Closed forms are passed through unchanged.
    assert result.precision.intervals["wilson"] == intervals.wilson_precision(TABLE_1, 0.9)
    assert result.recall.intervals["katz_log"] == intervals.katz_log_recall(TABLE_1, k, 0.9)
    # Posterior of precision with alpha = 0: Beta(138, 22) quantiles.
    expected = beta_distribution.ppf([0.05, 0.95], 138, 22)
    assert result.precision.intervals["posterior"].as_list() == pytest.approx(list(expected))
    # Eq 6 by hand: m +- z*sqrt(a*b*(a+b+n)/(n*(a+b)^2*(a+b+1))) with n' = n1 = 160.
    a, b, n = 138, 22, 160
    half = z * math.sqrt(a * b * (a + b + n) / (n * (a + b) ** 2 * (a + b + 1)))
    assert result.precision.intervals["bayes"].as_list() == pytest.approx(
        [a / (a + b) - half, a / (a + b) + half]
    )
    # The predictive interval is wider than the posterior one (it adds binomial noise).
    assert result.precision.intervals["bayes"].width > result.precision.intervals["posterior"].width
    assert result.recall.intervals["bayes_mc"].width > result.recall.intervals["posterior"].width
    # F1 estimate from P and R.
    p, r = result.estimates.precision, result.estimates.recall
    assert result.f1.estimate == pytest.approx(2 * p * r / (p + r))


def test_seed_makes_the_monte_carlo_intervals_reproducible():
    first = evaluate(TABLE_1, population=0.05, replicates=500, seed=42).to_dict()
    second = evaluate(TABLE_1, population=0.05, replicates=500, seed=42).to_dict()
    assert first == second


def test_zero_cells_warn_substitute_jeffreys_and_never_leak_nan():
    matrix = ConfusionMatrix(tp=0, fp=10, fn=0, tn=100)
    result = evaluate(matrix, population=0.1, replicates=500, seed=1)
    document = result.to_dict()
    json.dumps(document, allow_nan=False)
    text = " ".join(result.warnings)
    assert "TP and FN are 0" in text and "Haldane" in text
    assert "Jeffreys" in text and result.prior.name.startswith("Jeffreys")
    assert "below 10" in text
    assert document["recall"]["estimate"] is None
    assert "recall estimate is undefined" in text
    assert document["recall"]["intervals"]["bootstrap"] == [None, None]
    assert "500 of 500 bootstrap replicates" in text
    assert result.undefined_bootstrap == 500
    assert document["f1"]["estimate"] is None


def test_small_cells_are_named_in_the_warning():
    result = evaluate(
        ConfusionMatrix(tp=50, fp=7, fn=3, tn=400), population=0.1, replicates=200, seed=1
    )
    warning = next(w for w in result.warnings if "normal approximation" in w)
    assert "FP = 7" in warning and "FN = 3" in warning and "TP" not in warning
    assert "Katz log for recall" in warning and "Wilson for precision" in warning
    assert "keep their level" in warning


def test_an_explicit_improper_prior_is_refused_but_a_proper_one_is_used():
    matrix = ConfusionMatrix(tp=20, fp=0, fn=5, tn=100)
    with pytest.raises(InputError, match="improper"):
        evaluate(matrix, population=0.1, replicates=200, prior=Prior.none())
    result = evaluate(matrix, population=0.1, replicates=200, seed=1, prior=Prior.uniform())
    assert result.prior == Prior.uniform()
    assert not any("Jeffreys prior" in w for w in result.warnings)
    # Beta(21, 1) quantiles, the upper end taken to 1: precision is 20/20 (the boundary
    # rule every interval follows).
    lower, _upper = beta_distribution.ppf([0.025, 0.975], 21, 1)
    assert result.precision.intervals["posterior"].as_list() == pytest.approx([lower, 1.0])


def test_fpc_narrows_the_normal_intervals_and_says_so():
    population = Population.from_counts(400, 20_000)
    plain = evaluate(TABLE_1, population=population, replicates=200, seed=1)
    corrected = evaluate(TABLE_1, population=population, replicates=200, seed=1, fpc=True)
    factors = population.fpc_factors(160, 4840)
    assert corrected.fpc == pytest.approx(factors)
    ratio = corrected.precision.intervals["wald"].width / plain.precision.intervals["wald"].width
    assert ratio == pytest.approx(math.sqrt(factors[0]), rel=1e-9)
    assert corrected.recall.intervals["katz_log"].width < plain.recall.intervals["katz_log"].width
    # Wilson inverts the corrected score test: Wilson's formula with n1/f1 trials.
    n_eff, p, z = 160 / factors[0], 138 / 160, NormalDist().inv_cdf(0.975)
    center = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z / (1 + z * z / n_eff) * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff**2))
    assert corrected.precision.intervals["wilson"].as_list() == pytest.approx(
        [center - half, center + half], rel=1e-12
    )
    exact, binomial = (r.precision.intervals["clopper_pearson"] for r in (corrected, plain))
    assert binomial.lower < exact.lower <= exact.upper < binomial.upper  # hypergeometric
    for method in ("agresti_coull", "bayes"):
        assert corrected.precision.intervals[method] == plain.precision.intervals[method]
    # The bootstrap is rescaled (Rao and Wu): the same draws, pulled towards the estimate.
    boot = corrected.precision.intervals["bootstrap"], plain.precision.intervals["bootstrap"]
    assert boot[0].width == pytest.approx(math.sqrt(factors[0]) * boot[1].width, rel=1e-9)
    for method in ("jeffreys", "posterior"):  # of the flagged items' own precision
        assert corrected.precision.intervals[method].width < plain.precision.intervals[method].width
    assert any("finite population correction" in w for w in corrected.warnings)
    with pytest.raises(InputError, match="population counts"):
        evaluate(TABLE_1, population=0.05, fpc=True)
    with pytest.raises(InputError, match="population counts"):
        evaluate(TABLE_1, fpc=True)
    with pytest.raises(InputError, match="larger than its population"):
        evaluate(TABLE_1, population=Population.from_counts(100, 20_000), fpc=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"population": 0.0}, "k must be"),
        ({"population": -1.0}, "k must be"),
        ({"confidence": 0.4}, "confidence"),
        ({"confidence": 1.0}, "confidence"),
        ({"replicates": 10}, "replicates"),
        ({"seed": -3}, "seed"),
    ],
)
def test_bad_arguments_raise_input_error(kwargs, message):
    with pytest.raises(InputError, match=message):
        evaluate(TABLE_1, **kwargs)


def test_an_empty_stratum_is_refused():
    with pytest.raises(InputError, match="empty"):
        evaluate(ConfusionMatrix(tp=0, fp=0, fn=3, tn=10), population=0.1)
    with pytest.raises(InputError, match="empty"):
        evaluate(ConfusionMatrix(tp=3, fp=2, fn=0, tn=0), population=0.1)


def test_rows_for_excel_and_the_gui():
    result = evaluate(TABLE_1, population=0.05, replicates=300, seed=1)
    rows = result.to_rows()
    assert len(rows) == 9 + 6 + 3 + 2 + 1
    assert rows[0][:2] == ("precision", "wald")
    assert rows[-1] == (
        "prevalence",
        "estimate",
        pytest.approx(result.estimates.prevalence),
        None,
        None,
        "",
    )
    for metric, method, estimate, lower, upper, note in rows[:-1]:
        assert lower <= upper and isinstance(note, str)
        assert result.to_dict()[metric]["intervals"][method] == [lower, upper]
        assert estimate == result.to_dict()[metric]["estimate"]


def test_evaluation_is_frozen():
    result = evaluate(TABLE_1, population=0.05, replicates=200, seed=1)
    assert isinstance(result, Evaluation)
    with pytest.raises(AttributeError):
        result.k = 1.0


@settings(max_examples=40, deadline=None)
@given(
    tp=st.integers(1, 400), fp=st.integers(1, 400), fn=st.integers(1, 400),
    tn=st.integers(1, 20_000), k=st.floats(0.005, 1.0), seed=st.integers(0, 2**32),
)  # fmt: skip
def test_all_intervals_are_in_the_unit_interval_and_contain_the_estimate(tp, fp, fn, tn, k, seed):
    # Without zero cells and with the default alpha = 0 prior, the posterior and predictive
    # distributions are centred on the plug-in estimates, so every interval contains them.
    # With a zero cell (Haldane, Jeffreys substitution) or an informative prior they need
    # not: those intervals describe a shifted centre by design.
    result = evaluate(ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn), population=k,
                      replicates=400, seed=seed)  # fmt: skip
    for name, metric in result.metrics().items():
        for method, interval in metric.intervals.items():
            assert 0.0 <= interval.lower <= interval.upper <= 1.0, (name, method)
            assert interval.lower - 1e-12 <= metric.estimate <= interval.upper + 1e-12, (
                name,
                method,
            )


def test_f1_is_quoted_from_its_posterior_when_the_bootstrap_cannot_vary():
    result = evaluate(
        ConfusionMatrix(tp=180, fp=0, fn=0, tn=1788),
        population=Population.from_counts(20_000, 980_000),
        seed=1,
    )
    assert result.f1.intervals["bootstrap"].lower == result.f1.intervals["bootstrap"].upper
    assert result.recommended()["f1"] == "posterior"
    assert result.to_dict()["recommended"]["f1"] == "posterior"
    posterior = result.f1.intervals["posterior"]
    assert posterior.upper - posterior.lower > 0.01
    # It holds its own estimate, 100 % (review): the boundary is taken in.
    assert posterior.upper == 1.0 == result.f1.estimate
    assert "bound moved to the estimate" in posterior.note
    # Counts with spread keep the bootstrap.
    usual = evaluate(ConfusionMatrix(tp=180, fp=20, fn=12, tn=1788), population=0.02, seed=1)
    assert usual.recommended()["f1"] == "bootstrap"


def on_small_lists(matrix, **options):
    """``evaluate`` of a round drawn from lists of 60 flagged and 3,000 unflagged items."""
    return evaluate(matrix, population=Population.from_counts(60, 3000), **options)


def _finite_posterior_quantiles(matrix, strata, prior, confidence=0.95):
    """Equal-tailed quantiles of the lists' own recall and F1 under the finite-population
    posterior, exactly: M1 and M0 are the labeled positives plus independent
    beta-binomial counts of the unlabeled items (scipy), enumerated jointly."""
    import numpy as np
    from scipy.stats import betabinom

    flagged, unflagged = strata
    rest_pos, rest_neg = flagged - matrix.n_pos, unflagged - matrix.n_neg
    a11, a01, a10, a00 = prior
    found = matrix.tp + np.arange(rest_pos + 1)
    missed = matrix.fn + np.arange(rest_neg + 1)
    weight = np.outer(
        betabinom.pmf(np.arange(rest_pos + 1), rest_pos, matrix.tp + a11, matrix.fp + a01),
        betabinom.pmf(np.arange(rest_neg + 1), rest_neg, matrix.fn + a10, matrix.tn + a00),
    ).ravel()
    m1, m0 = np.meshgrid(found, missed, indexing="ij")
    values = {
        "recall": (m1 / (m1 + m0)).ravel(),
        "f1": (2 * m1 / (flagged + m1 + m0)).ravel(),
    }
    tail = (1 - confidence) / 2
    quantiles = {}
    for name, value in values.items():
        order = np.argsort(value)
        cumulative = np.cumsum(weight[order])
        lower = value[order][np.searchsorted(cumulative, tail)]
        upper = value[order][np.searchsorted(cumulative, 1 - tail)]
        quantiles[name] = (lower, upper)
    return quantiles


@pytest.mark.parametrize(
    ("counts", "strata"),
    [
        ((27, 3, 2, 298), (60, 3000)),  # half of a small flagged list, few misses
        ((120, 30, 6, 494), (300, 8000)),
    ],
)
@pytest.mark.parametrize("prior", [Prior.jeffreys(), None])
def test_finite_population_posterior_of_recall_and_f1_against_exact_enumeration(
    counts, strata, prior
):
    # No prior given: Jeffreys, not the paper's alpha = 0, which pulled F1 up (the
    # statistician's recheck: the truth fell below the interval 4-5 % of the time).
    matrix = ConfusionMatrix(**dict(zip(("tp", "fp", "fn", "tn"), counts, strict=True)))
    result = evaluate(
        matrix,
        population=Population.from_counts(*strata),
        fpc=True,
        prior=prior,
        replicates=40_000,
        seed=3,
    )
    exact = _finite_posterior_quantiles(matrix, strata, (0.5, 0.5, 0.5, 0.5))
    for metric in ("recall", "f1"):
        interval = result.metrics()[metric].intervals["posterior"]
        # Monte Carlo percentiles of a lumpy distribution: within about one atom.
        assert interval.lower == pytest.approx(exact[metric][0], abs=0.012), metric
        assert interval.upper == pytest.approx(exact[metric][1], abs=0.012), metric
    # Without the correction the posterior is about the rates behind the lists: wider.
    plain = evaluate(matrix, population=Population.from_counts(*strata), seed=3)
    for metric in ("recall", "f1"):
        corrected = result.metrics()[metric].intervals["posterior"]
        uncorrected = plain.metrics()[metric].intervals["posterior"]
        assert corrected.upper - corrected.lower < uncorrected.upper - uncorrected.lower


def test_with_the_correction_f1_is_quoted_from_the_lists_own_posterior():
    # Few missed positives labeled: the bootstrap's F1 was 90.6-98.5 % while recall's own
    # interval reached down to 43 % (statistician's check, 76 % coverage in simulation).
    result = on_small_lists(ConfusionMatrix(tp=27, fp=3, fn=0, tn=300), fpc=True, seed=2023)
    assert result.recommended()["f1"] == "posterior"
    posterior, bootstrap = result.f1.intervals["posterior"], result.f1.intervals["bootstrap"]
    assert posterior.lower < bootstrap.lower - 0.08
    document = result.to_dict()
    assert document["recommended"]["f1"] == "posterior"
    assert document["fpc"] == {
        "applied": True,
        "not_applied_to": {
            "precision": ["agresti_coull", "bayes", "bayes_mc"],
            "recall": ["bayes", "bayes_mc"],
            "f1": ["bayes_mc"],
        },
    }
    plain = evaluate(ConfusionMatrix(tp=27, fp=3, fn=0, tn=300), population=0.02, seed=2023)
    assert plain.to_dict()["fpc"] is None


def test_both_lists_labeled_in_full_leave_the_posterior_at_the_labels():
    matrix = ConfusionMatrix(tp=40, fp=10, fn=5, tn=195)
    result = evaluate(matrix, population=Population.from_counts(50, 200), fpc=True, seed=1)
    for metric in ("recall", "f1"):
        interval = result.metrics()[metric].intervals["posterior"]
        estimate = result.metrics()[metric].estimate
        assert interval.lower == pytest.approx(estimate) and interval.upper == pytest.approx(
            estimate
        )


def test_with_few_flagged_labels_and_the_correction_precision_is_quoted_exact():
    small = ConfusionMatrix(tp=5, fp=1, fn=1, tn=300)
    corrected = on_small_lists(small, fpc=True, seed=1)
    assert corrected.recommended()["precision"] == "clopper_pearson"
    assert any("only 6 flagged items are labeled" in w for w in corrected.warnings)
    # Hypergeometric, by hand: 5 of 6 positive, so the 60 items hold M in [M_L, M_U]
    # with both tails at least 2.5 %; the interval is [M_L/60, M_U/60].
    from scipy.stats import hypergeom

    kept = [
        m for m in range(5, 60)
        if hypergeom.sf(4, 60, m, 6) >= 0.025 and hypergeom.cdf(5, 60, m, 6) >= 0.025
    ]  # fmt: skip
    exact = corrected.precision.intervals["clopper_pearson"]
    assert (exact.lower, exact.upper) == pytest.approx((min(kept) / 60, max(kept) / 60))
    plain = on_small_lists(small, seed=1)
    assert plain.recommended()["precision"] == "wilson"
    enough = on_small_lists(ConfusionMatrix(tp=9, fp=1, fn=1, tn=300), fpc=True, seed=1)
    assert enough.recommended()["precision"] == "wilson"


def test_few_flagged_labels_are_said_once_and_only_with_the_correction():
    small = ConfusionMatrix(tp=5, fp=1, fn=1, tn=300)
    corrected = on_small_lists(small, fpc=True, seed=1)
    text = " ".join(corrected.warnings)
    assert "with the finite population correction at such sizes" in text
    assert "keep their level" not in text  # not said of the starred ones next to it
    plain = on_small_lists(small, seed=1)
    assert not any("flagged items are labeled:" in w for w in plain.warnings)
