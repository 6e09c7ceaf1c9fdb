"""``core.compare``: Newcombe's hybrid score interval against the published Table II of
Newcombe (1998), p_worse against numerical integration of the Beta posteriors, and the
recall change against an independent normal approximation."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import beta as beta_distribution

from core.bayes import Prior
from core.compare import Comparison, compare, newcombe_difference
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError

PREVIOUS = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
CURRENT = ConfusionMatrix(tp=150, fp=20, fn=90, tn=4700)


def _newcombe_rows(reference_data):
    with open(reference_data / "newcombe1998_table2.csv", newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


def test_newcombe_method_10_matches_the_published_table(reference_data):
    rows = _newcombe_rows(reference_data)
    assert len(rows) == 7
    for row in rows:
        x1, n1, x2, n2 = (int(row[key]) for key in ("x1", "n1", "x2", "n2"))
        # The paper's theta is p1 - p2; ours is (second - first), so pass them swapped.
        interval = newcombe_difference(x2, n2, x1, n1, 0.95)
        assert interval.lower == pytest.approx(float(row["lower"]), abs=5e-5), row
        assert interval.upper == pytest.approx(float(row["upper"]), abs=5e-5), row


def test_newcombe_is_antisymmetric_and_contains_the_difference():
    forward = newcombe_difference(30, 50, 41, 60)
    backward = newcombe_difference(41, 60, 30, 50)
    assert forward.lower == pytest.approx(-backward.upper)
    assert forward.upper == pytest.approx(-backward.lower)
    assert forward.lower < 41 / 60 - 30 / 50 < forward.upper
    with pytest.raises(InputError, match="successes"):
        newcombe_difference(6, 5, 1, 5)


def test_precision_p_worse_matches_integration_of_the_beta_posteriors():
    result = compare(PREVIOUS, CURRENT, k_previous=0.033, k_current=0.033, seed=1)
    a1, b1 = 138.5, 22.5  # Jeffreys posteriors
    a2, b2 = 150.5, 20.5
    # P(current < previous) = integral of f_prev(t) * F_cur(t) dt.
    exact, _ = integrate.quad(
        lambda t: beta_distribution.pdf(t, a1, b1) * beta_distribution.cdf(t, a2, b2),
        0,
        1,
        points=[0.8, 0.9],
        limit=200,
    )
    assert result.precision_change.p_worse == pytest.approx(exact, abs=0.006)
    assert result.precision_change.estimate == pytest.approx(150 / 170 - 138 / 160)


def test_recall_change_agrees_with_a_delta_method_normal_approximation():
    previous = ConfusionMatrix(tp=2000, fp=300, fn=400, tn=40_000)
    current = ConfusionMatrix(tp=2100, fp=250, fn=330, tn=40_000)
    k = 0.05
    result = compare(previous, current, k_previous=k, k_current=k, seed=2)

    def recall_and_sd(m):
        # Var(R) by the delta method of Eq 5: (x/(1+x)^2)^2 * se^2 with the Katz se.
        p1, p0 = m.tp / m.n_pos, m.fn / m.n_neg
        x = p0 / (k * p1)
        se = math.sqrt((1 - p1) / (m.n_pos * p1) + (1 - p0) / (m.n_neg * p0))
        return 1 / (1 + x), x / (1 + x) ** 2 * se

    r1, s1 = recall_and_sd(previous)
    r2, s2 = recall_and_sd(current)
    sd = math.hypot(s1, s2)
    change = result.recall_change
    assert change.estimate == pytest.approx(r2 - r1)
    assert change.interval.lower == pytest.approx(r2 - r1 - 1.96 * sd, abs=0.1 * 2 * 1.96 * sd)
    assert change.interval.upper == pytest.approx(r2 - r1 + 1.96 * sd, abs=0.1 * 2 * 1.96 * sd)
    normal_cdf = 0.5 * math.erfc((r2 - r1) / sd / math.sqrt(2))
    assert change.p_worse == pytest.approx(normal_cdf, abs=0.02)


def test_p_worse_sanity():
    same = compare(PREVIOUS, PREVIOUS, k_previous=0.05, k_current=0.05, seed=3)
    assert same.precision_change.p_worse == pytest.approx(0.5, abs=0.01)
    assert same.recall_change.p_worse == pytest.approx(0.5, abs=0.01)
    assert same.precision_change.estimate == 0.0
    much_worse = ConfusionMatrix(tp=80, fp=80, fn=300, tn=4540)
    worse = compare(PREVIOUS, much_worse, k_previous=0.05, k_current=0.05, seed=3)
    better = compare(much_worse, PREVIOUS, k_previous=0.05, k_current=0.05, seed=3)
    assert worse.precision_change.p_worse > 0.999 and worse.recall_change.p_worse > 0.999
    assert better.precision_change.p_worse < 0.001 and better.recall_change.p_worse < 0.001
    assert worse.precision_change.interval.upper < 0 < better.precision_change.interval.lower


def test_to_dict_contract_seed_and_frozen():
    first = compare(PREVIOUS, CURRENT, k_previous=0.033, k_current=0.04, seed=5)
    document = first.to_dict()
    assert list(document) == [
        "previous",
        "current",
        "precision_change",
        "recall_change",
        "fpc",
        "warnings",
    ]
    assert document["fpc"] == [False, False]
    # Each side carries its own counts and plug-in precision TP/(TP+FP).
    assert document["previous"]["tp"] == PREVIOUS.tp
    assert document["current"]["k"] == 0.04
    assert document["previous"]["precision"] == pytest.approx(
        PREVIOUS.tp / (PREVIOUS.tp + PREVIOUS.fp)
    )
    for key in ("precision_change", "recall_change"):
        assert list(document[key]) == ["estimate", "interval", "p_worse"]
        assert len(document[key]["interval"]) == 2
    assert (
        document == compare(PREVIOUS, CURRENT, k_previous=0.033, k_current=0.04, seed=5).to_dict()
    )
    assert isinstance(first, Comparison)
    with pytest.raises(AttributeError):
        first.confidence = 0.9
    assert [row[0] for row in first.to_rows()] == ["precision", "recall"]


def test_undefined_recall_is_none_with_a_warning():
    no_positive = ConfusionMatrix(tp=0, fp=20, fn=0, tn=300)
    result = compare(no_positive, CURRENT, k_previous=0.05, k_current=0.05, seed=1)
    document = result.to_dict()
    assert document["recall_change"]["estimate"] is None
    assert all(np.isfinite(document["recall_change"]["interval"]))
    assert any("TP = FN = 0" in warning for warning in result.warnings)


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="k of the previous round"):
        compare(PREVIOUS, CURRENT, k_previous=0, k_current=0.05)
    with pytest.raises(InputError, match="confidence"):
        compare(PREVIOUS, CURRENT, k_previous=0.05, k_current=0.05, confidence=0.3)
    with pytest.raises(InputError, match="empty"):
        compare(ConfusionMatrix(tp=0, fp=0, fn=1, tn=1), CURRENT, k_previous=0.05, k_current=0.05)
    with pytest.raises(InputError, match="improper"):
        compare(ConfusionMatrix(tp=0, fp=3, fn=1, tn=1), CURRENT, k_previous=0.05,
                k_current=0.05, prior=Prior.none())  # fmt: skip


def test_the_precision_change_with_the_correction_is_newcombe_of_n_over_f_trials():
    from statsmodels.stats.proportion import confint_proportions_2indep

    f1, f2 = 0.6, 0.85  # each round's share of its flagged stratum left unlabeled
    interval = newcombe_difference(80, 100, 150, 200, 0.95, (f1, f2))
    lower, upper = confint_proportions_2indep(
        150 / f2, 200 / f2, 80 / f1, 100 / f1, method="newcomb", compare="diff"
    )
    assert (interval.lower, interval.upper) == pytest.approx((lower, upper), abs=1e-12)
    plain = newcombe_difference(80, 100, 150, 200, 0.95)
    assert interval.upper - interval.lower < plain.upper - plain.lower


# --- the finite population correction ---------------------------------------------------
#
# Two rounds drawn without replacement from lists of known size: the change compared is
# that of the lists' own precision and recall. Checked against what is known by hand (a
# list labeled in full leaves no doubt), scipy's beta-binomial, and simulation of the
# sampling itself.

SMALL = Population.from_counts(400, 2_000)


def test_lists_labeled_in_full_change_by_exactly_what_the_labels_show():
    previous = ConfusionMatrix(tp=320, fp=80, fn=100, tn=1_900)
    current = ConfusionMatrix(tp=330, fp=70, fn=90, tn=1_910)
    result = compare(
        previous, current, k_previous=0.2, k_current=0.2, seed=3, corrected=(SMALL, SMALL)
    )
    assert result.corrected == (True, True)
    precision, recall = result.precision_change, result.recall_change
    assert precision.interval.lower == pytest.approx(10 / 400, abs=1e-12)
    assert precision.interval.upper == pytest.approx(10 / 400, abs=1e-12)
    recall_by_hand = 330 / 420 - 320 / 420
    assert recall.interval.lower == pytest.approx(recall_by_hand, abs=1e-12)
    assert recall.interval.upper == pytest.approx(recall_by_hand, abs=1e-12)
    assert precision.p_worse == recall.p_worse == 0.0


def test_the_corrected_precision_draws_follow_the_beta_binomial():
    # One round against itself: the draws of M1/N1 are TP + BetaBinomial(N - n, z11, z01).
    from scipy.stats import betabinom

    from core.bayes import finite_population_rates

    matrix = ConfusionMatrix(tp=130, fp=30, fn=40, tn=760)
    rng = np.random.default_rng(8)
    pi1 = rng.beta(130.5, 30.5, size=400_000)
    pi0 = rng.beta(40.5, 760.5, size=400_000)
    own_pos, own_neg = finite_population_rates(pi1, pi0, matrix, (400, 2_000), rng)
    for draws, labeled, rest, a, b, size in (
        (own_pos, 130, 240, 130.5, 30.5, 400),
        (own_neg, 40, 1_200, 40.5, 760.5, 2_000),
    ):
        for q in (0.025, 0.5, 0.975):
            expected = (labeled + betabinom(rest, a, b).ppf(q)) / size
            assert np.quantile(draws, q) == pytest.approx(expected, abs=1.5 / size)


def _draw_round(rng, flagged_truth, unflagged_truth, n_pos, n_neg):
    """Label n_pos of the flagged list and n_neg of the unflagged one, without replacement."""
    tp = rng.hypergeometric(flagged_truth[0], flagged_truth[1], n_pos)
    fn = rng.hypergeometric(unflagged_truth[0], unflagged_truth[1], n_neg)
    return ConfusionMatrix(tp=int(tp), fp=n_pos - int(tp), fn=int(fn), tn=n_neg - int(fn))


def test_half_labeled_lists_change_intervals_cover_as_stated_and_p_worse_is_uniform():
    # 400 flagged (320 positive) and 2,000 unflagged (100 positive), nothing changed;
    # each round labels 200 and 800 of them. Without the correction the recall change
    # covered 98.9 % and P(decline) fell below 5 % in 1.4 % of pairs (stats check 11).
    rng = np.random.default_rng(2026)
    flagged, unflagged = (320, 80), (100, 1_900)
    no_change = 0.0
    covered = {"precision": 0, "recall": 0}
    small_p = {"precision": 0, "recall": 0}
    large_p = {"precision": 0, "recall": 0}
    pairs = 400
    for _ in range(pairs):
        previous = _draw_round(rng, flagged, unflagged, 200, 800)
        current = _draw_round(rng, flagged, unflagged, 200, 800)
        result = compare(
            previous,
            current,
            k_previous=0.2,
            k_current=0.2,
            replicates=4_000,
            seed=rng,
            corrected=(SMALL, SMALL),
        )
        for metric, change in (
            ("precision", result.precision_change),
            ("recall", result.recall_change),
        ):
            covered[metric] += change.interval.lower <= no_change <= change.interval.upper
            small_p[metric] += change.p_worse < 0.05
            large_p[metric] += change.p_worse > 0.95
    for metric in ("precision", "recall"):
        # 95 % nominal; the Monte-Carlo error of 400 pairs is about 1.1 points.
        assert 0.92 <= covered[metric] / pairs <= 0.98, (metric, covered[metric])
        # A calibrated P(decline) is below 5 % in about 5 % of pairs when nothing changed,
        # and above 95 % as often (ties of the lists' counts count half).
        assert 0.025 <= small_p[metric] / pairs <= 0.08, (metric, small_p[metric])
        assert 0.025 <= large_p[metric] / pairs <= 0.08, (metric, large_p[metric])


def test_compare_fpc_flag(capsys):
    from core.cli import main

    counts = [
        "--tp", "256", "--fp", "64", "--fn", "80", "--tn", "1520",
        "--tp2", "262", "--fp2", "58", "--fn2", "72", "--tn2", "1528",
    ]  # fmt: skip
    lists = ["--population", "400", "2000", "--population2", "400", "2000"]
    assert main(["compare", *lists, *counts, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["compare", *lists, *counts, "--fpc", "--json"]) == 0
    corrected = json.loads(capsys.readouterr().out)
    assert plain["fpc"] == [False, False] and corrected["fpc"] == [True, True]
    # Half of the flagged and two fifths of the unflagged lists labeled: far narrower.
    width = {
        name: document["recall_change"]["interval"][1] - document["recall_change"]["interval"][0]
        for name, document in (("plain", plain), ("corrected", corrected))
    }
    assert width["corrected"] < 0.5 * width["plain"]
    assert main(["compare", *lists, *counts, "--fpc"]) == 0
    assert "with the finite population correction" in capsys.readouterr().out
    # Without both lists' sizes there is nothing to correct for: refused, naming the flag.
    assert main(["compare", "--k", "0.2", *lists[3:], *counts, "--fpc"]) == 2
    assert "--fpc needs both population counts" in capsys.readouterr().err


def test_the_corrected_populations_must_be_the_rounds_own():
    previous = ConfusionMatrix(tp=120, fp=30, fn=40, tn=760)
    with pytest.raises(InputError, match=r"k \(0\.05\) is not its population's N1/N0"):
        compare(previous, previous, k_previous=0.05, k_current=0.2, corrected=(SMALL, None))
    with pytest.raises(InputError, match="must be a pair"):
        compare(previous, previous, k_previous=0.2, k_current=0.2, corrected=(SMALL,))
    # One round corrected, the other not: only the first one's lists are completed.
    mixed = compare(
        previous, previous, k_previous=0.2, k_current=0.2, corrected=(SMALL, None), seed=1
    )
    plain = compare(previous, previous, k_previous=0.2, k_current=0.2, seed=1)
    assert mixed.corrected == (True, False)
    assert mixed.recall_change.interval.width < plain.recall_change.interval.width


@pytest.mark.parametrize(
    ("lower", "upper", "worse", "said"),
    [
        (-0.08, -0.01, 0.999, "more than sampling noise"),
        (-0.087, 0.006, 0.961, "probably a decline, though this range still includes no change"),
        (-0.01, 0.09, 0.04, "probably a rise, though this range still includes no change"),
        (-0.05, 0.05, 0.5, "within sampling noise: it may not be a real change"),
    ],
)
def test_a_change_in_words_never_contradicts_its_chance_of_decline(lower, upper, worse, said):
    # The report said "within sampling noise: it may not be a real change" beside "Chance
    # that precision got worse: 96.1 %" (trial 13).
    from core.compare import change_verdict

    assert change_verdict(lower, upper, worse) == said
