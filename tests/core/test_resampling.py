"""Vectorized bootstrap and Monte-Carlo replicates (``core.resampling``) against independent
computations: a literal per-replicate resampling loop, the Katz interval, Eq 6/7 and
``scipy.stats.beta.ppf``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_distribution
from scipy.stats import betabinom, binom, chi2_contingency, chisquare, ks_2samp

from core import bayes, intervals, resampling
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.progress import Cancelled, TaskControl


def literal_bootstrap(tp, fp, fn, tn, k, replicates, rng):
    """Algorithm 1 as written: resample the labeled items of each stratum, one replicate at a
    time, and compute precision and recall from the resampled labels."""
    positives_stratum = np.array([1] * tp + [0] * fp)
    negatives_stratum = np.array([1] * fn + [0] * tn)
    precision, recall = [], []
    for _ in range(replicates):
        pos = rng.choice(positives_stratum, size=len(positives_stratum), replace=True)
        neg = rng.choice(negatives_stratum, size=len(negatives_stratum), replace=True)
        p1, p0 = pos.mean(), neg.mean()
        precision.append(p1)
        recall.append(1.0 / (1.0 + p0 / (k * p1)) if p1 > 0 else 0.0)
    return np.array(precision), np.array(recall)


def test_bootstrap_matches_a_literal_resampling_loop():
    tp, fp, fn, tn, k = 40, 10, 30, 920, 1 / 19
    literal_p, literal_r = literal_bootstrap(tp, fp, fn, tn, k, 2000, np.random.default_rng(7))
    fast = resampling.bootstrap(tp, fp, fn, tn, k, replicates=20_000, seed=8)
    # Same distribution: two-sample KS on the replicates (discrete, so a lenient level).
    assert ks_2samp(literal_p, fast.precision).pvalue > 1e-3
    assert ks_2samp(literal_r, fast.recall).pvalue > 1e-3
    # Same percentiles within Monte-Carlo error (a few % of the interval width).
    for literal, metric in ((literal_p, "precision"), (literal_r, "recall")):
        low, high = np.quantile(literal, [0.025, 0.975])
        fast_low, fast_high = fast.interval(metric)
        width = high - low
        assert abs(fast_low - low) < 0.12 * width, metric
        assert abs(fast_high - high) < 0.12 * width, metric


def test_bootstrap_agrees_with_katz_for_large_counts():
    matrix = ConfusionMatrix(tp=9000, fp=1000, fn=600, tn=89_400)
    k = 0.04
    katz = intervals.katz_log_recall(matrix, k)
    wald = intervals.wald_precision(matrix)
    boot = resampling.bootstrap(*matrix.as_tuple(), k, replicates=40_000, seed=1)
    for (low, high), reference in (
        (boot.interval("recall"), katz),
        (boot.interval("precision"), wald),
    ):
        assert abs(low - reference.lower) < 0.04 * reference.width
        assert abs(high - reference.upper) < 0.04 * reference.width


def test_random_design_bootstrap_agrees_with_the_textbook_recall_interval():
    # Resampling the whole sample lets TP + FN vary, as the binomial Wald interval assumes.
    matrix = ConfusionMatrix(tp=1380, fp=220, fn=1080, tn=47_320)
    boot = resampling.bootstrap(*matrix.as_tuple(), design="random", replicates=40_000, seed=2)
    wald = intervals.wald_recall_random(matrix)
    low, high = boot.interval("recall")
    assert abs(low - wald.lower) < 0.05 * wald.width
    assert abs(high - wald.upper) < 0.05 * wald.width


def test_bayes_mc_agrees_with_eq_6_and_7_for_large_counts():
    matrix = ConfusionMatrix(tp=4500, fp=500, fn=400, tn=94_600)
    k = 0.05
    posterior = bayes.Prior.none().posterior(matrix)
    n1, n0 = matrix.n_pos, matrix.n_neg
    eq6 = bayes.bayes_precision_interval(posterior, n1)
    eq7 = bayes.bayes_recall_interval(posterior, k, n1, n0)
    mc = resampling.bayes_predictive(
        posterior.z11, posterior.z01, posterior.z10, posterior.z00, k, n1, n0,
        replicates=40_000, seed=3,
    )  # fmt: skip
    for (low, high), reference in ((mc.interval("precision"), eq6), (mc.interval("recall"), eq7)):
        assert abs(low - reference.lower) < 0.04 * reference.width
        assert abs(high - reference.upper) < 0.04 * reference.width


def test_posterior_draws_of_precision_follow_the_beta_quantiles():
    draws = resampling.posterior_draws(30.5, 6.5, 12.5, 800.5, 0.1, replicates=100_000, seed=4)
    low, high = draws.interval("precision", 0.9)
    expected = beta_distribution.ppf([0.05, 0.95], 30.5, 6.5)
    assert low == pytest.approx(expected[0], abs=0.004)
    assert high == pytest.approx(expected[1], abs=0.004)
    # Recall of each draw is Eq 2 of that draw's pi1 and pi0.
    assert draws.undefined_recall == 0
    assert np.all((draws.recall > 0) & (draws.recall < 1))


def test_posterior_recall_quantiles_match_an_independent_simulation():
    rng = np.random.default_rng(11)
    pi1 = rng.beta(50, 10, size=200_000)
    pi0 = rng.beta(20, 2000, size=200_000)
    recall = (0.05 * pi1) / (0.05 * pi1 + pi0)
    expected = np.quantile(recall, [0.025, 0.975])
    ours = resampling.posterior_draws(50, 10, 20, 2000, 0.05, replicates=200_000, seed=12)
    assert ours.interval("recall") == pytest.approx(tuple(expected), abs=0.004)


def test_scalar_and_batch_shapes():
    single = resampling.bootstrap(20, 5, 3, 300, 0.1, replicates=500, seed=1)
    assert single.precision.shape == (500,) and single.f1.shape == (500,)
    assert isinstance(single.undefined_recall, int)
    assert isinstance(single.interval("recall")[0], float)
    batch = resampling.bootstrap(
        np.array([20, 30, 40]), 5, np.array([3, 4, 5]), 300, 0.1, replicates=500, seed=1
    )
    assert batch.precision.shape == (3, 500)
    assert batch.undefined_recall.shape == (3,)
    low, high = batch.interval("recall")
    assert low.shape == (3,) and np.all(low < high)
    mc = resampling.bayes_predictive(
        np.array([20.0, 30.0]), 5, 3, 300, 0.1, 25, 303, replicates=100, seed=1, include_f1=False
    )
    assert mc.precision.shape == (2, 100) and mc.f1 is None
    with pytest.raises(InputError):
        mc.interval("f1")


def test_batch_rows_have_the_distribution_of_the_single_call():
    rows = resampling.bootstrap(np.full(200, 30), 10, 8, 400, 0.1, replicates=200, seed=5)
    single = resampling.bootstrap(30, 10, 8, 400, 0.1, replicates=40_000, seed=6)
    assert ks_2samp(rows.recall.ravel(), single.recall).pvalue > 1e-3


def test_same_seed_same_replicates_and_chunking_is_invisible(monkeypatch):
    first = resampling.bootstrap(np.array([10, 12]), 5, 3, 90, 0.2, replicates=300, seed=9)
    again = resampling.bootstrap(np.array([10, 12]), 5, 3, 90, 0.2, replicates=300, seed=9)
    np.testing.assert_array_equal(first.recall, again.recall)
    monkeypatch.setattr(resampling, "CHUNK_ELEMENTS", 300)  # one row per chunk
    chunked = resampling.bootstrap(np.array([10, 12]), 5, 3, 90, 0.2, replicates=300, seed=9)
    assert chunked.recall.shape == first.recall.shape


def test_undefined_replicates_are_counted_and_left_out():
    # TP* = FN* = 0 happens with probability (1 - 2/12)^12 * (1 - 0/30)^30 ~ 11 %.
    tp, fp, fn, tn = 2, 10, 0, 30
    boot = resampling.bootstrap(tp, fp, fn, tn, 0.05, replicates=20_000, seed=10)
    expected_share = resampling.expected_undefined_share(tp, fp, fn, tn)
    assert expected_share == pytest.approx((10 / 12) ** 12)
    share = boot.undefined_recall / 20_000
    assert share == pytest.approx(expected_share, abs=4 * math.sqrt(expected_share / 20_000))
    assert np.isnan(boot.recall).sum() == boot.undefined_recall
    assert np.isnan(boot.f1).sum() == boot.undefined_recall
    defined = boot.recall[~np.isnan(boot.recall)]
    assert boot.interval("recall") == pytest.approx(tuple(np.quantile(defined, [0.025, 0.975])))
    # TP* = 0 with FN* > 0 is a defined recall of 0, not a missing value.
    zero_tp = resampling.bootstrap(0, 10, 20, 30, 0.05, replicates=1000, seed=1)
    assert zero_tp.undefined_recall == 0 and np.all(zero_tp.recall == 0)


def test_a_row_without_any_defined_replicate_gives_nan_bounds():
    boot = resampling.bootstrap(
        np.array([0, 5]), 10, np.array([0, 5]), 30, 0.1, replicates=200, seed=1
    )
    low, high = boot.interval("recall")
    assert math.isnan(low[0]) and math.isnan(high[0])
    assert np.isfinite(low[1]) and np.isfinite(high[1])
    assert list(boot.undefined_recall) == [200, 0]


def test_percentile_interval_matches_nanquantile():
    rng = np.random.default_rng(0)
    draws = rng.random((20, 333))
    draws[rng.random((20, 333)) < 0.1] = np.nan
    low, high = resampling.percentile_interval(draws, 0.9)
    expected = np.nanquantile(draws, [0.05, 0.95], axis=-1)
    np.testing.assert_allclose(low, expected[0], rtol=1e-12)
    np.testing.assert_allclose(high, expected[1], rtol=1e-12)


def test_progress_and_cancel_between_chunks(monkeypatch):
    monkeypatch.setattr(resampling, "CHUNK_ELEMENTS", 1000)
    seen = []
    control = TaskControl(on_progress=seen.append)
    resampling.bayes_predictive(np.full(10, 5.0), 5, 5, 50, 0.1, 10, 55, replicates=500,
                                seed=1, control=control)  # fmt: skip
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 5
    cancelled = TaskControl()
    cancelled.cancel()
    with pytest.raises(Cancelled):
        resampling.bootstrap(
            np.full(10, 5), 5, 5, 50, 0.1, replicates=500, seed=1, control=cancelled
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1, 5, 5, 50, 0.1), "tp must be a whole number"),
        ((1.5, 5, 5, 50, 0.1), "tp must be a whole number"),
        ((0, 0, 5, 50, 0.1), "each stratum"),
        ((5, 5, 5, 50, 0.0), "k must be"),
        ((np.array([1, 2]), 5, np.array([1, 2, 3]), 50, 0.1), "one common length"),
    ],
)
def test_bad_input_is_refused(args, message):
    with pytest.raises(InputError, match=message):
        resampling.bootstrap(*args, replicates=100, seed=1)


def test_bad_replicates_seed_and_design_are_refused():
    with pytest.raises(InputError, match="replicates"):
        resampling.bootstrap(5, 5, 5, 50, 0.1, replicates=0)
    with pytest.raises(InputError, match="seed"):
        resampling.bootstrap(5, 5, 5, 50, 0.1, replicates=10, seed=-1)
    with pytest.raises(InputError, match="design"):
        resampling.bootstrap(5, 5, 5, 50, 0.1, replicates=10, design="cluster")
    with pytest.raises(InputError, match="z01"):
        resampling.posterior_draws(1, 0, 1, 1, 0.1, replicates=10)


@pytest.mark.parametrize(("n", "p"), [(1, 0.3), (160, 0.8625), (4840, 108 / 4840), (50, 0.999)])
def test_one_round_binomial_table_sampler_matches_scipy_binom(n, p):
    draws = resampling._one_round_binomial(n, p, 100_000, np.random.default_rng(n))
    support = np.arange(n + 1)
    expected = binom.pmf(support, n, p) * len(draws)
    observed = np.bincount(draws, minlength=n + 1)
    keep = expected > 5  # pool the thin tails into one cell for the chi-square test
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    if expected[-1] < 1e-9:
        observed, expected = observed[:-1], expected[:-1]
    expected *= observed.sum() / expected.sum()
    assert chisquare(observed, expected).pvalue > 1e-4


@pytest.mark.parametrize("batch", [False, True], ids=["scalar", "one-row batch"])
def test_bayes_mc_matches_an_independent_two_step_draw_in_distribution(batch):
    # Algorithm 2 written out here with numpy's own samplers (a Beta rate, then a binomial),
    # independent of core's beta-binomial tables; the scalar and the batch path of
    # bayes_predictive must both sample the same TP* and FN* distributions.
    z11, z01, z10, z00, k, n1, n0, q = 20.5, 4.5, 6.5, 300.5, 0.1, 25, 307, 30_000
    first = np.array([z11]) if batch else z11
    ours = resampling.bayes_predictive(first, z01, z10, z00, k, n1, n0, replicates=q, seed=1)
    precision = ours.precision[0] if batch else ours.precision
    recall = ours.recall[0] if batch else ours.recall
    rng = np.random.default_rng(2)
    tp_two_step = rng.binomial(n1, rng.beta(z11, z01, size=q))
    fn_two_step = rng.binomial(n0, rng.beta(z10, z00, size=q))
    # TP* is recovered exactly from precision* = TP*/n1; compare the two count histograms
    # (chi-square test of homogeneity, cells with fewer than 20 draws pooled).
    tp_ours = np.rint(precision * n1).astype(int)
    observed = np.stack([np.bincount(tp_ours, minlength=n1 + 1),
                         np.bincount(tp_two_step, minlength=n1 + 1)])  # fmt: skip
    keep = observed.sum(axis=0) >= 20
    pooled = np.column_stack([observed[:, keep], observed[:, ~keep].sum(axis=1)])
    pooled = pooled[:, pooled.sum(axis=0) > 0]
    assert chi2_contingency(pooled).pvalue > 1e-3
    # Recall* mixes TP* and FN*; compare the whole distribution with a two-sample KS test.
    # Recall* takes discrete values: round both sides so the same atom computed in a
    # different order (an ulp apart) is not counted as a difference.
    recall_two_step = np.where(
        tp_two_step > 0, 1 / (1 + (fn_two_step / n0) / (k * np.maximum(tp_two_step, 1) / n1)), 0.0
    )
    assert ks_2samp(np.round(recall, 10), np.round(recall_two_step, 10)).pvalue > 1e-3
    # And the mean of TP* against scipy's beta-binomial (3 standard errors of the mean).
    assert precision.mean() * n1 == pytest.approx(betabinom(n1, z11, z01).mean(), abs=0.05)


def test_numpy_fallback_samples_the_same_distribution_as_the_tables(monkeypatch):
    counts = (np.array([30, 31, 29]), 8, np.array([6, 7, 5]), 400)
    tables = resampling.bootstrap(*counts, 0.1, replicates=5000, seed=1)
    mc_tables = resampling.bayes_predictive(np.array([30.5, 31.5]), 8.5, 6.5, 400.5, 0.1, 38,
                                            406, replicates=5000, seed=1)  # fmt: skip
    monkeypatch.setattr(resampling, "TABLE_BUDGET", 0)
    direct = resampling.bootstrap(*counts, 0.1, replicates=5000, seed=2)
    mc_direct = resampling.bayes_predictive(np.array([30.5, 31.5]), 8.5, 6.5, 400.5, 0.1, 38,
                                            406, replicates=5000, seed=2)  # fmt: skip
    for row in range(3):
        assert ks_2samp(tables.recall[row], direct.recall[row]).pvalue > 1e-3
    for row in range(2):
        assert ks_2samp(mc_tables.recall[row], mc_direct.recall[row]).pvalue > 1e-3
        assert ks_2samp(mc_tables.precision[row], mc_direct.precision[row]).pvalue > 1e-3


def test_the_rescaled_bootstrap_covers_a_half_labeled_list_as_stated():
    # A list of 300 flagged items (255 positive) and 1,500 unflagged (45 positive); each
    # round labels 150 and 600 of them without replacement. The target is the list's own
    # F1 and recall. Without the correction F1's bootstrap covered 99.1 % (stats check 11).
    flagged, unflagged, n_pos, n_neg = (255, 45), (45, 1_455), 150, 600
    true_precision = 255 / 300
    true_recall = 255 / (255 + 45)
    true_f1 = 2 * true_precision * true_recall / (true_precision + true_recall)
    rng = np.random.default_rng(11)
    rounds = 1_500
    tp = rng.hypergeometric(*flagged, n_pos, size=rounds)
    fn = rng.hypergeometric(*unflagged, n_neg, size=rounds)
    factors = ((300 - n_pos) / 299, (1_500 - n_neg) / 1_499)
    covered = {}
    for fpc in ((1.0, 1.0), factors):
        boot = resampling.bootstrap(
            tp, n_pos - tp, fn, n_neg - fn, 300 / 1_500, replicates=2_000, seed=rng, fpc=fpc
        )
        for metric, truth in (("f1", true_f1), ("recall", true_recall)):
            lower, upper = resampling.percentile_interval(boot.draws(metric), 0.95)
            covered[(fpc == factors, metric)] = float(np.mean((lower <= truth) & (truth <= upper)))
    # Monte-Carlo error of 1,500 rounds: about 0.6 points.
    assert covered[(False, "f1")] > 0.98 and covered[(False, "recall")] > 0.975
    assert 0.93 <= covered[(True, "f1")] <= 0.97
    assert 0.93 <= covered[(True, "recall")] <= 0.97


def test_a_stratum_labeled_in_full_has_no_bootstrap_spread():
    boot = resampling.bootstrap(40, 10, 5, 45, 0.5, replicates=1_000, seed=1, fpc=(0.0, 0.0))
    assert np.all(boot.precision == 0.8)
    # Eq 2 with k = 0.5, pi1 = 40/50, pi0 = 5/50
    assert np.allclose(boot.recall, 0.5 * 0.8 / (0.5 * 0.8 + 0.1))


def test_the_correction_needs_the_stratified_design_and_factors_in_0_1():
    with pytest.raises(InputError, match="stratified"):
        resampling.bootstrap(4, 1, 1, 4, design="random", replicates=1_000, fpc=(0.5, 0.5))
    with pytest.raises(InputError, match="at most 1"):
        resampling.bootstrap(4, 1, 1, 4, 0.5, replicates=1_000, fpc=(1.5, 1.0))
