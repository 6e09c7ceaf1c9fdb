"""A plain random sample (design ``random``, ``k`` estimated by ``n1/n0``, methods §2).

The recall and FPR intervals must carry the uncertainty of the estimated ``k``. Checked
against independent computations only:

* hand-worked values in decimal arithmetic and mpmath
  (``tests/data/random_design_intervals_handworked.json``, steps written out);
* a seeded simulation of random samples at the paper's Table 1 truth (coverage);
* numpy's own beta, binomial and Dirichlet samplers for the Monte-Carlo draws.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import beta as beta_distribution
from scipy.stats import chisquare, ks_1samp, ks_2samp
from statsmodels.stats.proportion import proportion_confint

from core import intervals, resampling
from core.bayes import Prior, bayes_recall_interval_random, posterior_recall_interval_random
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.evaluation import evaluate
from core.prevalence import OperatingPoint

# The paper's Table 1 truth (methods §7): k = 0.033, pi1 = 0.863, pi0 = 0.0223, v = 5000.
K, PI1, PI0, V = 0.033, 0.863, 0.0223, 5000


def _cases(reference_data):
    path = reference_data / "random_design_intervals_handworked.json"
    return json.loads(path.read_text())["cases"]


def _matrix(case) -> ConfusionMatrix:
    return ConfusionMatrix(tp=case["tp"], fp=case["fp"], fn=case["fn"], tn=case["tn"])


def test_random_design_intervals_match_hand_worked_values(reference_data):
    cases = _cases(reference_data)
    assert len(cases) == 3
    for case in cases:
        matrix, level = _matrix(case), case["confidence"]
        for k in (None, matrix.sample_k):  # k may be omitted or given as n1/n0
            katz = intervals.katz_log_recall(matrix, k, level, design="random")
            delta = intervals.delta_recall(matrix, k, level, design="random")
            fpr = intervals.katz_log_fpr(matrix, k, level, design="random")
            assert katz.as_list() == pytest.approx(case["katz_log_recall"], rel=1e-12)
            assert delta.as_list() == pytest.approx(case["delta_recall"], rel=1e-12)
            assert fpr.as_list() == pytest.approx(case["katz_log_fpr"], rel=1e-12)
        haldane = 0 in matrix.as_tuple()
        assert (intervals.HALDANE_NOTE in katz.note) is haldane
        prior = Prior.jeffreys() if haldane else Prior.none()
        posterior = prior.posterior(matrix)
        bayes = bayes_recall_interval_random(posterior, matrix.tp + matrix.fn, level)
        assert bayes.as_list() == pytest.approx(case["bayes_recall"], rel=1e-12)
        exact = posterior_recall_interval_random(posterior, level)
        assert exact.as_list() == pytest.approx(case["posterior_recall"], rel=1e-9)


def test_random_delta_interval_is_the_textbook_wald_interval():
    # R(1-R)*sqrt(1/TP + 1/FN) = sqrt(R(1-R)/(TP+FN)) with R = TP/(TP+FN): by hand,
    # TP = 138, FN = 108: R = 0.5609756..., half = 1.96*sqrt(R(1-R)/246).
    matrix = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
    r = 138 / 246
    half = 1.959963984540054 * np.sqrt(r * (1 - r) / 246)
    delta = intervals.delta_recall(matrix, None, design="random")
    assert delta.as_list() == pytest.approx([r - half, r + half], rel=1e-12)


def test_random_design_refuses_a_k_other_than_n1_over_n0_and_the_fpc():
    matrix = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
    with pytest.raises(InputError, match="n1/n0"):
        intervals.katz_log_recall(matrix, 0.05, design="random")
    with pytest.raises(InputError, match="finite population"):
        intervals.delta_recall(matrix, None, 0.95, (0.9, 0.9), design="random")
    with pytest.raises(InputError, match="design"):
        intervals.katz_log_fpr(matrix, 0.05, design="oversampled")


def _table_1_samples(seed: int, samples: int) -> np.ndarray:
    """``samples`` simple random samples of ``V`` items: multinomial over the four cells."""
    share_pos = K / (1 + K)
    probabilities = [
        share_pos * PI1,
        share_pos * (1 - PI1),
        (1 - share_pos) * PI0,
        (1 - share_pos) * (1 - PI0),
    ]
    return np.random.default_rng(seed).multinomial(V, probabilities, size=samples)


def test_random_design_intervals_cover_the_truth_at_the_nominal_level():
    # 4000 samples: a 95 % coverage estimate has a standard error of 0.0034, so
    # [0.93, 0.97] is about +-6 SE; the old known-k intervals (about 0.88) fail it.
    samples = _table_1_samples(seed=20230417, samples=4000)
    true_recall = 1 / (1 + PI0 / (K * PI1))  # Eq 2
    true_fpr = 1 / (1 + (1 - PI0) / (K * (1 - PI1)))
    hits = dict.fromkeys(["katz_log", "delta", "posterior", "fpr", "known_k"], 0)
    for tp, fp, fn, tn in samples.tolist():
        matrix = ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn)
        k = matrix.sample_k
        hits["katz_log"] += intervals.katz_log_recall(matrix, k, design="random").contains(
            true_recall
        )
        hits["delta"] += intervals.delta_recall(matrix, k, design="random").contains(true_recall)
        hits["fpr"] += intervals.katz_log_fpr(matrix, k, design="random").contains(true_fpr)
        prior = Prior.jeffreys() if 0 in (tp, fp, fn, tn) else Prior.none()
        posterior = posterior_recall_interval_random(prior.posterior(matrix))
        hits["posterior"] += posterior.contains(true_recall)
        # The defect being fixed: the stratified formula with the estimated k as if known.
        hits["known_k"] += intervals.katz_log_recall(matrix, k).contains(true_recall)
    coverage = {name: count / len(samples) for name, count in hits.items()}
    for name in ("katz_log", "delta", "posterior", "fpr"):
        assert 0.93 <= coverage[name] <= 0.97, coverage
    assert coverage["known_k"] < 0.91, coverage


def test_random_bayes_predictive_interval_covers_a_second_sample():
    # bayes predicts the recall of a future round with the same number of actual positives;
    # an independent second random sample has about as many, so ~95 % of its recalls fall in.
    first = _table_1_samples(seed=7, samples=2000)
    second = _table_1_samples(seed=8, samples=2000)
    hits = 0
    for (tp, fp, fn, tn), (tp2, _, fn2, _) in zip(first.tolist(), second.tolist(), strict=True):
        posterior = Prior.none().posterior(ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn))
        interval = bayes_recall_interval_random(posterior, tp + fn)
        hits += interval.contains(tp2 / (tp2 + fn2))
    assert 0.93 <= hits / len(first) <= 0.97


def _pooled_chisquare(observed_a, observed_b):
    """Two-sample chi-square of two count histograms, thin cells pooled; the p-value."""
    size = max(len(observed_a), len(observed_b))
    a = np.bincount(observed_a, minlength=size)
    b = np.bincount(observed_b, minlength=size)
    keep = (a + b) >= 20
    a = np.append(a[keep], a[~keep].sum())
    b = np.append(b[keep], b[~keep].sum())
    if a[-1] + b[-1] == 0:
        a, b = a[:-1], b[:-1]
    expected = (a + b) * a.sum() / (a.sum() + b.sum())
    return chisquare(a, expected).pvalue


def test_random_posterior_and_predictive_draws_match_numpy_samplers():
    z11, z01, z10, z00 = 20.5, 4.5, 6.5, 300.5
    q = 40_000
    draws = resampling.posterior_draws(z11, z01, z10, z00, None, replicates=q, seed=1,
                                       design="random")  # fmt: skip
    # Marginals of Dirichlet(z): precision Beta(z11, z01), recall Beta(z11, z10).
    assert ks_1samp(draws.recall, beta_distribution(z11, z10).cdf).pvalue > 1e-3
    assert ks_1samp(draws.precision, beta_distribution(z11, z01).cdf).pvalue > 1e-3
    rng = np.random.default_rng(2)
    cells = rng.dirichlet([z11, z01, z10, z00], size=q)
    precision = cells[:, 0] / (cells[:, 0] + cells[:, 1])
    recall = cells[:, 0] / (cells[:, 0] + cells[:, 2])
    f1 = 2 * precision * recall / (precision + recall)
    assert ks_2samp(draws.f1, f1).pvalue > 1e-3

    n1, n0, positives = 25, 307, 27
    predictive = resampling.bayes_predictive(
        z11, z01, z10, z00, None, n1, n0, replicates=q, seed=3, design="random",
        positives_future=positives,
    )  # fmt: skip
    # Independent two-step draws: a rate from the posterior, then a binomial.
    tp_among_predicted = rng.binomial(n1, rng.beta(z11, z01, size=q))
    tp_among_positives = rng.binomial(positives, rng.beta(z11, z10, size=q))
    ours_tp = np.rint(predictive.precision * n1).astype(int)
    ours_positives = np.rint(predictive.recall * positives).astype(int)
    assert _pooled_chisquare(ours_tp, tp_among_predicted) > 1e-3
    assert _pooled_chisquare(ours_positives, tp_among_positives) > 1e-3
    # F1 of a future random sample of n1 + n0 items: Dirichlet-multinomial counts.
    counts = np.array([rng.multinomial(n1 + n0, p) for p in rng.dirichlet([z11, z01, z10, z00],
                                                                          size=q)])  # fmt: skip
    tp, fp, fn = counts[:, 0], counts[:, 1], counts[:, 2]
    f1_future = 2 * tp / (2 * tp + fp + fn)
    assert ks_2samp(predictive.f1, f1_future).pvalue > 1e-3


def test_evaluate_and_operating_point_use_the_random_design(reference_data):
    case = _cases(reference_data)[0]  # paper Table 1 as a random sample
    matrix = _matrix(case)
    result = evaluate(matrix, replicates=20_000, seed=5)
    assert result.design == "random"
    recall = result.recall.intervals
    assert recall["katz_log"].as_list() == pytest.approx(case["katz_log_recall"], rel=1e-12)
    assert recall["delta"].as_list() == pytest.approx(case["delta_recall"], rel=1e-12)
    assert recall["bayes"].as_list() == pytest.approx(case["bayes_recall"], rel=1e-12)
    assert recall["posterior"].as_list() == pytest.approx(case["posterior_recall"], rel=1e-9)
    assert result.fpr.intervals["katz_log"].as_list() == pytest.approx(
        case["katz_log_fpr"], rel=1e-12
    )
    # The Monte-Carlo predictive interval agrees with the analytic one up to MC noise and
    # the discreteness of TP*/246 (steps of 0.004).
    assert recall["bayes_mc"].as_list() == pytest.approx(case["bayes_recall"], abs=0.01)
    point = OperatingPoint.from_round(matrix, None)
    katz = case["katz_log_recall"]
    assert point.sigma_tpr == pytest.approx((katz[1] - katz[0]) / 2, rel=1e-12)
    # FPR's band width is the recommended interval's: in a random sample the Wilson
    # interval of FP among the actual negatives (statsmodels, independently).
    low, high = proportion_confint(matrix.fp, matrix.fp + matrix.tn, 0.05, method="wilson")
    assert point.sigma_fpr == pytest.approx((high - low) / 2, rel=1e-9)
    assert point.tpr == pytest.approx(138 / 246, rel=1e-12)
