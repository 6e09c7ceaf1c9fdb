"""The coverage experiment (``core.coverage``, methods §10): near-nominal coverage on small
runs, and agreement with a literal per-round, per-replicate loop built from the scalar
functions of ``core.intervals`` and ``core.bayes``."""

from __future__ import annotations

import numpy as np
import pytest

from core import intervals
from core.bayes import Prior, bayes_precision_interval, bayes_recall_interval
from core.confusion import ConfusionMatrix
from core.coverage import (
    CoverageResult,
    CoverageSetting,
    coverage_experiment,
    katz_recall_bounds,
    paper_grid,
    run_grid,
)
from core.errors import InputError
from core.progress import Cancelled, TaskControl


def test_paper_grid_has_the_twelve_settings_of_table_3():
    grid = paper_grid()
    assert len(grid) == 12
    assert {(s.k, s.v) for s in grid} == {(1 / 20, 5000), (1 / 100, 10000)}
    assert {s.precision for s in grid} == {0.9}
    assert {s.recall for s in grid} == {0.7, 0.9}
    assert {s.s for s in grid} == {1, 2, 5}
    assert len({(s.k, s.recall, s.s) for s in grid}) == 12
    # Eq 1 with rounding: k = 1/20, s = 1, v = 5000 -> n1 = round(5000/21) = 238.
    first = next(s for s in grid if s.k == 1 / 20 and s.s == 1)
    assert first.sizes == (238, 4762)
    assert first.pi0 == pytest.approx(0.05 * 0.9 * (1 / first.recall - 1))


@pytest.mark.parametrize("setting", [paper_grid()[1], paper_grid()[9]], ids=["k=1/20", "k=1/100"])
def test_small_run_is_near_nominal(setting):
    result = coverage_experiment(setting, reps=300, replicates=300, seed=2024)
    for kind, value in {**result.precision, **result.recall}.items():
        assert 0.88 <= value <= 0.99, (kind, value)
    assert all(count == 0 for count in result.undefined.values())


def _prior_for(matrix):
    """The paper's alpha = 0, Jeffreys where a zero count makes it improper (methods §10)."""
    return Prior.jeffreys() if 0 in matrix.as_tuple() else Prior.none()


def literal_coverage(setting, reps, replicates, confidence, seed, loop_seed):
    """One round at a time with the scalar interval functions; the replicates of each round
    are drawn with numpy's own samplers (Algorithm 1: two binomials; Algorithm 2: a beta,
    then a binomial), not with core's inverse-CDF tables."""
    rounds = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0])
    n1, n0 = setting.sizes
    k, pi1, recall = setting.k, setting.precision, setting.recall
    pi0 = k * pi1 * (1 / recall - 1)  # Eq 9
    tp_all = rounds.binomial(n1, pi1, size=reps)
    fn_all = rounds.binomial(n0, pi0, size=reps)
    tp2_all = rounds.binomial(n1, pi1, size=reps)
    fn2_all = rounds.binomial(n0, pi0, size=reps)
    rng = np.random.default_rng(loop_seed)
    tail = (1 - confidence) / 2
    hits = dict.fromkeys(
        ["p_wald", "p_boot", "p_bayes", "p_mc", "r_katz", "r_boot", "r_bayes", "r_mc"], 0
    )
    jeffreys_rows = 0

    def recall_of(tp_star, fn_star):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(tp_star > 0, 1 / (1 + (fn_star / n0) / (k * tp_star / n1)), 0.0)

    for a in range(reps):
        tp, fn = int(tp_all[a]), int(fn_all[a])
        matrix = ConfusionMatrix(tp=tp, fp=n1 - tp, fn=fn, tn=n0 - fn)
        second_p = tp2_all[a] / n1
        second_r = 1 / (1 + (fn2_all[a] / n0) / (k * second_p))
        hits["p_wald"] += intervals.wald_precision(matrix, confidence).contains(pi1)
        hits["r_katz"] += intervals.katz_log_recall(matrix, k, confidence).contains(recall)
        prior = _prior_for(matrix)
        jeffreys_rows += prior.name != Prior.none().name
        posterior = prior.posterior(matrix)
        hits["p_bayes"] += bayes_precision_interval(posterior, n1, confidence).contains(second_p)
        hits["r_bayes"] += bayes_recall_interval(posterior, k, n1, n0, confidence).contains(
            second_r
        )
        tp_star = rng.binomial(n1, tp / n1, size=replicates)
        fn_star = rng.binomial(n0, fn / n0, size=replicates)
        boot_p, boot_r = tp_star / n1, recall_of(tp_star, fn_star)
        tp_future = rng.binomial(n1, rng.beta(posterior.z11, posterior.z01, size=replicates))
        fn_future = rng.binomial(n0, rng.beta(posterior.z10, posterior.z00, size=replicates))
        mc_p, mc_r = tp_future / n1, recall_of(tp_future, fn_future)
        for key, draws, target in (
            ("p_boot", boot_p, pi1),
            ("r_boot", boot_r, recall),
            ("p_mc", mc_p, second_p),
            ("r_mc", mc_r, second_r),
        ):
            low, high = np.quantile(draws, [tail, 1 - tail])
            hits[key] += bool(low <= target <= high)
    result = {key: value / reps for key, value in hits.items()}
    result["jeffreys_rows"] = jeffreys_rows
    return result


def test_vectorized_experiment_agrees_with_a_literal_loop():
    setting = CoverageSetting(k=1 / 20, precision=0.9, recall=0.7, v=1000, s=2)
    reps, replicates, seed = 600, 300, 77
    fast = coverage_experiment(setting, reps=reps, replicates=replicates, seed=seed)
    slow = literal_coverage(setting, reps, replicates, 0.95, seed, loop_seed=5)
    # Same rounds from the same seed: the closed-form kinds agree exactly.
    assert fast.precision["wald"] == slow["p_wald"]
    assert fast.recall["katz_log"] == slow["r_katz"]
    assert fast.precision["bayes"] == slow["p_bayes"]
    assert fast.recall["bayes"] == slow["r_bayes"]
    assert fast.jeffreys_rows == slow["jeffreys_rows"]
    # Resampling kinds differ only by Monte-Carlo noise in the interval ends. Tolerance:
    # 4 binomial standard errors of a coverage proportion at the nominal 0.95 with these
    # reps, 4*sqrt(0.95*0.05/600) = 0.036, small enough that a 0.90-vs-0.95 error fails.
    tolerance = 4 * np.sqrt(0.95 * 0.05 / reps)
    assert tolerance < 0.04
    assert fast.precision["bootstrap"] == pytest.approx(slow["p_boot"], abs=tolerance)
    assert fast.recall["bootstrap"] == pytest.approx(slow["r_boot"], abs=tolerance)
    assert fast.precision["bayes_mc"] == pytest.approx(slow["p_mc"], abs=tolerance)
    assert fast.recall["bayes_mc"] == pytest.approx(slow["r_mc"], abs=tolerance)


def test_vectorized_katz_matches_the_scalar_function_including_zero_cells():
    cells = np.array([[30, 5, 12, 900], [0, 10, 4, 300], [7, 0, 0, 50], [1, 1, 1, 1]])
    low, high = katz_recall_bounds(*cells.T, 0.1, 1.959963984540054)
    for row, lo, hi in zip(cells, low, high, strict=True):
        expected = intervals.katz_log_recall(ConfusionMatrix.from_sequence(row), 0.1)
        assert (lo, hi) == pytest.approx((expected.lower, expected.upper), rel=1e-12)


def test_seeded_runs_repeat_and_to_dict_follows_the_contract():
    setting = paper_grid()[0]
    first = coverage_experiment(setting, reps=50, replicates=50, seed=3)
    second = coverage_experiment(setting, reps=50, replicates=50, seed=3)
    assert first.precision == second.precision and first.recall == second.recall
    document = first.to_dict()
    assert list(document) == [
        "coverage", "reps", "replicates", "seconds", "design", "warnings", "prior",
        "jeffreys_rows",
    ]  # fmt: skip
    assert document["prior"] == [0.0, 0.0, 0.0, 0.0]
    assert list(document["coverage"]["precision"]) == ["wald", "bootstrap", "bayes", "bayes_mc"]
    assert list(document["coverage"]["recall"]) == ["katz_log", "bootstrap", "bayes", "bayes_mc"]
    assert document["reps"] == 50 and document["replicates"] == 50
    assert isinstance(first, CoverageResult)
    with pytest.raises(AttributeError):
        first.reps = 3


def test_grid_rows_progress_and_cancel():
    seen = []
    grid = run_grid(paper_grid()[:3], reps=20, replicates=20, seed=1,
                    control=TaskControl(on_progress=seen.append))  # fmt: skip
    document = grid.to_dict()
    assert list(document) == ["rows", "seconds"]
    # The contract keys first, then the additive design, warnings and prior keys.
    assert [list(row) for row in document["rows"]] == [
        ["k", "precision", "recall", "v", "s", "coverage", "design", "warnings", "prior",
         "jeffreys_rows"]
    ] * 3  # fmt: skip
    assert seen == sorted(seen) and seen[-1] == 1.0
    control = TaskControl()
    control.cancel()
    with pytest.raises(Cancelled):
        run_grid(paper_grid()[:2], reps=20, replicates=20, control=control)


def test_the_default_prior_is_alpha_zero_with_jeffreys_only_in_improper_rows():
    # n1 = 10 with precision 0.9: FP = 0 in about a third of the rounds (0.9^10 = 0.35).
    setting = CoverageSetting(k=0.05, precision=0.9, recall=0.8, v=210, s=1)
    default = coverage_experiment(setting, reps=200, replicates=50, seed=4)
    # Independent count: redraw the same rounds (module docstring of core.coverage) and
    # count those with a zero cell.
    rounds = np.random.default_rng(np.random.SeedSequence(4).spawn(2)[0])
    n1, n0 = setting.sizes
    tp = rounds.binomial(n1, setting.pi1, size=200)
    fn = rounds.binomial(n0, setting.pi0, size=200)
    zero_rows = int(((tp == 0) | (tp == n1) | (fn == 0) | (fn == n0)).sum())
    assert 30 < zero_rows < 120
    assert default.jeffreys_rows == zero_rows
    assert default.prior.is_zero
    explicit = coverage_experiment(setting, reps=200, replicates=50, seed=4, prior=Prior.none())
    assert explicit.precision == default.precision and explicit.recall == default.recall
    proper = coverage_experiment(setting, reps=200, replicates=50, seed=4, prior=Prior.jeffreys())
    assert proper.jeffreys_rows == 0
    # Rows without a zero cell use alpha = 0, so the analytic Bayes coverage differs from
    # the all-Jeffreys run.
    assert proper.precision["bayes"] != default.precision["bayes"] or (
        proper.recall["bayes"] != default.recall["bayes"]
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be"),
        ({"precision": 1.0}, "precision"),
        ({"recall": 0}, "recall"),
        ({"v": 10.5}, "v must be"),
        ({"s": -1}, "s must be"),
        ({"k": 5.0, "precision": 0.5, "recall": 0.1}, "false omission rate"),
        ({"v": 20, "k": 0.001}, "stratum empty"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    values = {"k": 0.05, "precision": 0.9, "recall": 0.7, "v": 5000, "s": 1.0, **kwargs}
    with pytest.raises(InputError, match=message):
        CoverageSetting(**values)


def test_bad_run_arguments_are_refused():
    with pytest.raises(InputError, match="reps"):
        coverage_experiment(paper_grid()[0], reps=1)
    with pytest.raises(InputError, match="confidence"):
        coverage_experiment(paper_grid()[0], reps=20, replicates=20, confidence=2)


# The small-count warning tells a lead the starred intervals keep their level where the
# normal approximation is weak. Checked here by simulation (an independent method): rounds
# drawn from known strata rates, the share whose quoted recall interval holds the true
# recall. Settings: (pi1, pi0, n1, n0) with TP, FN or FP expected below 10.
SMALL_COUNT_SETTINGS = [
    (0.8, 0.0005, 200, 5_000),  # FN about 2.5
    (0.02, 0.001, 200, 5_000),  # TP about 4, FN about 5
    (0.995, 0.001, 200, 5_000),  # FP about 1
    (0.3, 0.003, 20, 500),  # every cell small
]


@pytest.mark.parametrize("pi1, pi0, n1, n0", SMALL_COUNT_SETTINGS)
def test_the_quoted_recall_interval_keeps_its_level_at_small_counts(pi1, pi0, n1, n0):
    from core.batch_intervals import katz_log_recall

    k = 20_000 / 980_000
    true_recall = k * pi1 / (k * pi1 + pi0)
    rng = np.random.default_rng(2026)
    reps = 20_000
    tp = rng.binomial(n1, pi1, reps)
    fn = rng.binomial(n0, pi0, reps)
    interval = katz_log_recall(tp, n1 - tp, fn, n0 - fn, k, 0.95)
    covered = np.mean((interval.lower <= true_recall) & (true_recall <= interval.upper))
    # 20,000 rounds: a standard error of about 0.0015 around a true 0.95.
    assert covered >= 0.945


@pytest.mark.parametrize(("pi1", "low", "high"), [(0.995, 0.90, 0.94), (0.975, 0.955, 0.98)])
def test_the_quoted_fpr_interval_falls_short_only_at_about_one_false_positive(pi1, low, high):
    # As the small-count warning says: Wilson ratio covers about 92 % with one false
    # positive expected among 200 flagged items, and its level from five on.
    from core.intervals import wilson_ratio_fpr

    k, n1, n0, pi0 = 20_000 / 980_000, 200, 5_000, 0.001
    true_fpr = k * (1 - pi1) / (k * (1 - pi1) + (1 - pi0))
    rng = np.random.default_rng(11)
    reps = 20_000
    tp = rng.binomial(n1, pi1, reps)
    fn = rng.binomial(n0, pi0, reps)
    held: dict[tuple[int, int], bool] = {}
    covered = 0
    for a, b in zip(tp.tolist(), fn.tolist(), strict=True):
        if (a, b) not in held:
            interval = wilson_ratio_fpr(ConfusionMatrix(tp=a, fp=n1 - a, fn=b, tn=n0 - b), k)
            held[a, b] = interval.lower <= true_fpr <= interval.upper
        covered += held[a, b]
    assert low < covered / reps < high
