"""A labeled round against the plan's margins (core.round_targets).

The quoted intervals are recomputed with statsmodels (Wilson) and by hand (Katz log,
Eq 4), and the labels a top-up asks for are checked to meet both margins at the round's
rates, which is what the lead is promised; the chance that a top-up is enough is checked
by hand and by simulation.
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from core.errors import InputError
from core.round_targets import chance_in_words, check_targets, top_up_chance
from core.session import PlanInputs, SessionState
from core.workbook.rounds import Round

Z = NormalDist().inv_cdf(0.975)


def _round(tp, fp, fn, tn, population=(20_000, 1_000_000)) -> Round:
    return Round(
        sheet="labels",
        row=2,
        round="R1",
        k=population[0] / population[1],
        population_pos=population[0],
        population_neg=population[1],
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
    )


def _state(margin_precision, margin_recall, chance_target=0.0) -> SessionState:
    return SessionState(
        plan=PlanInputs(
            margin_precision=margin_precision,
            margin_recall=margin_recall,
            assurance_target=chance_target,
        )
    )


def _wilson_half(tp, n, f1=1.0):
    """Half-width of statsmodels' Wilson interval (each of many counts, or one); with a
    finite population correction ``f1``, the interval of ``n/f1`` trials."""
    lower, upper = proportion_confint(
        np.asarray(tp) / f1, np.asarray(n) / f1, alpha=0.05, method="wilson"
    )
    return (np.asarray(upper) - np.asarray(lower)) / 2


def _katz_half(tp, fp, fn, tn, k, factors=(1.0, 1.0)):
    """Eq 4 by hand: recall 1/(1+x), x = (FN/n0)/(k TP/n1), se^2 = f1 (1/TP - 1/n1) +
    f0 (1/FN - 1/n0) (each of many rounds, or one; no zero cells)."""
    n1, n0 = tp + fp, fn + tn
    x = (fn / n0) / (k * tp / n1)
    se = np.sqrt(factors[0] * (1 / tp - 1 / n1) + factors[1] * (1 / fn - 1 / n0))
    return (1 / (1 + x * np.exp(-Z * se)) - 1 / (1 + x * np.exp(Z * se))) / 2


def test_a_round_meeting_both_margins_needs_nothing():
    item = _round(900, 100, 40, 2960)
    check = check_targets(_state(0.05, 0.1), item)
    assert check.precision.half_width == pytest.approx(_wilson_half(900, 1000), rel=1e-12)
    assert check.recall.half_width == pytest.approx(
        _katz_half(900, 100, 40, 2960, item.k), rel=1e-9
    )
    assert check.met and check.needed is None and check.top_up is None


def test_the_labels_asked_for_meet_both_margins_at_the_rounds_rates():
    item = _round(90, 10, 4, 296)  # precision 90 %, 4 in 300 of the unflagged positive
    state = _state(0.03, 0.08)
    check = check_targets(state, item)
    assert not check.met and [m.metric for m in check.missed()] == ["precision", "recall"]
    n_pos, n_neg = check.needed
    assert n_pos > 100 and n_neg > 300
    tp, fn = round(0.9 * n_pos), round(4 / 300 * n_neg)
    assert _wilson_half(tp, n_pos) <= 0.03
    assert _katz_half(tp, n_pos - tp, fn, n_neg - fn, item.k) <= 0.08
    assert check.top_up == check.needed  # nothing skipped, nothing pending


def test_the_draw_makes_up_for_skipped_items_and_keeps_what_was_drawn():
    item = _round(90, 10, 4, 296)
    state = _state(0.03, 0.08)
    plain = check_targets(state, item)
    check = check_targets(state, item, drawn=(120, 5_000), skipped=(7, 3))
    assert check.needed == plain.needed
    assert check.top_up == (
        max(120, plain.needed[0] + 7),
        max(5_000, plain.needed[1] + 3),
    )
    enough = check_targets(state, item, drawn=(10_000, 200_000), skipped=(7, 3))
    assert enough.needed == plain.needed and enough.top_up is None  # label what is drawn


def test_a_small_population_reaches_the_margins_only_with_the_correction():
    item = _round(30, 10, 6, 54, population=(60, 240))
    state = _state(0.05, 0.05)
    plain = check_targets(state, item)
    assert plain.needed is None and not plain.reachable
    corrected = check_targets(state, item, fpc=True)
    assert corrected.fpc and corrected.reachable
    n_pos, n_neg = corrected.needed
    assert 40 <= n_pos <= 60 and 60 <= n_neg <= 240


def test_the_correction_needs_both_population_counts():
    item = Round(sheet="s", row=2, k=0.05, tp=10, fp=2, fn=3, tn=50)
    with pytest.raises(Exception, match="population counts"):
        check_targets(_state(0.05, 0.05), item, fpc=True)
    assert check_targets(_state(0.05, 0.05), item).to_dict()["fpc"] is False


# --- the chance that a top-up meets the targets ---------------------------------------
#
# Checked by hand where the new labels are few enough to list every outcome, and by
# simulating the rounds: the stratum's rate drawn from its Jeffreys posterior, then the new
# labels from it (Wilson by statsmodels, Katz by hand).


def test_no_new_labels_is_certain_either_way():
    item = _round(85, 15, 5, 995)
    met = check_targets(_state(0.1, 0.4), item)
    assert met.met
    assert top_up_chance(_state(0.1, 0.4), item, (100, 1000)).both == 1.0
    assert top_up_chance(_state(0.05, 0.05), item, (100, 1000)).both == 0.0


def test_one_new_flagged_label_by_hand():
    # 9 of 10 flagged items positive; one more label: positive with the Jeffreys predictive
    # chance (9 + 1/2)/(10 + 1) = 19/22, giving 10/11 (narrower) or 9/11 (wider).
    item = _round(9, 1, 5, 995)
    narrow, wide = _wilson_half(10, 11), _wilson_half(9, 11)
    between = (narrow + wide) / 2
    chance = top_up_chance(_state(between, 0.49), item, (11, 1000))
    assert chance.precision == pytest.approx(19 / 22, rel=1e-12)
    assert chance.new_labels == (1, 0)


def _simulated(item: Round, needed, margins, rounds=40_000, seed=5, fpc=False):
    """Share of simulated top-ups meeting each margin: the rate of each stratum from its
    Jeffreys posterior, then the new labels binomially from it (exchangeable items); with
    ``fpc`` judged with the finite population correction of the round's strata."""
    rng = np.random.default_rng(seed)
    new_pos, new_neg = needed[0] - (item.tp + item.fp), needed[1] - (item.fn + item.tn)
    rate_pos = rng.beta(item.tp + 0.5, item.fp + 0.5, rounds)
    rate_neg = rng.beta(item.fn + 0.5, item.tn + 0.5, rounds)
    tp = item.tp + rng.binomial(new_pos, rate_pos)
    fn = item.fn + rng.binomial(new_neg, rate_neg)
    factors = (1.0, 1.0)
    if fpc:
        strata = (item.population_pos, item.population_neg)
        factors = tuple((big - n) / (big - 1) for big, n in zip(strata, needed, strict=True))
    precision = _wilson_half(tp, needed[0], factors[0]) <= margins[0]
    recall = _katz_half(tp, needed[0] - tp, fn, needed[1] - fn, item.k, factors) <= margins[1]
    return precision.mean(), recall.mean(), (precision & recall).mean()


@pytest.mark.parametrize(
    ("counts", "needed", "margins"),
    [
        ((85, 15, 5, 995), (281, 9437), (0.05, 0.05)),
        ((40, 20, 8, 392), (150, 3000), (0.06, 0.08)),
        ((12, 3, 2, 120), (60, 900), (0.1, 0.12)),
    ],
)
def test_the_chance_agrees_with_simulated_top_ups(counts, needed, margins):
    item = _round(*counts)
    state = _state(*margins)
    chance = top_up_chance(state, item, needed)
    simulated = _simulated(item, needed, margins)
    for exact, share in zip((chance.precision, chance.recall, chance.both), simulated, strict=True):
        # 4 standard errors of a share of 40,000 rounds
        assert exact == pytest.approx(share, abs=4 * math.sqrt(0.25 / 40_000) + 1e-9)


@pytest.mark.parametrize(
    ("counts", "population", "needed", "margins", "seed"),
    [
        # a small stratum: the correction narrows the intervals of the topped-up round
        ((30, 10, 4, 396), (300, 20_000), (200, 2_500), (0.04, 0.1), 11),
        # 350,000 new unflagged labels: the grid of new counts is grouped, not enumerated
        ((85, 15, 5, 995), (20_000, 1_000_000), (8_000, 351_000), (0.006, 0.0125), 17),
    ],
)
def test_the_chance_with_the_correction_agrees_with_simulation(
    counts, population, needed, margins, seed
):
    item = _round(*counts, population=population)
    chance = top_up_chance(_state(*margins), item, needed, fpc=True)
    simulated = _simulated(item, needed, margins, seed=seed, fpc=True)
    for exact, share in zip((chance.precision, chance.recall, chance.both), simulated, strict=True):
        assert exact == pytest.approx(share, abs=4 * math.sqrt(0.25 / 40_000))
    assert 0.05 < chance.both < 0.95  # a case that tells a wrong sum apart


def test_a_top_up_at_the_labeled_rates_is_far_from_certain():
    check = check_targets(_state(0.05, 0.05), _round(85, 15, 5, 995), fpc=True)
    assert check.needed is not None and check.chance is not None
    assert check.chance_target == 0.0
    assert 0.3 < check.chance.both < 0.9


def test_a_top_up_for_a_chance_reaches_it_and_costs_more():
    item = _round(85, 15, 5, 995)
    plain = check_targets(_state(0.05, 0.05), item, fpc=True)
    assured = check_targets(_state(0.05, 0.05, chance_target=0.9), item, fpc=True)
    assert assured.chance_target == 0.9
    assert assured.chance.both >= 0.9
    assert assured.needed[0] >= plain.needed[0] and assured.needed[1] > plain.needed[1]
    assert assured.top_up == assured.needed  # nothing skipped, nothing left unlabeled
    # the chance it states is the chance of the labels it asks for
    again = top_up_chance(_state(0.05, 0.05), item, assured.needed, fpc=True)
    assert again.both == assured.chance.both
    # and it is close to the least that reaches it: 3 % fewer labels fall short
    fewer = tuple(math.floor(0.97 * n) for n in assured.needed)
    assert top_up_chance(_state(0.05, 0.05), item, fewer, fpc=True).both < 0.9


def test_a_chance_is_reached_even_when_a_stratum_runs_out():
    # 300 flagged items: a 99.9 % chance needs more flagged labels than the list has, so
    # the flagged side is labeled in full and the unflagged side grows on.
    item = _round(30, 10, 4, 396, population=(300, 20_000))
    plain = check_targets(_state(0.04, 0.1), item, fpc=True)
    sure = check_targets(_state(0.04, 0.1, chance_target=0.999), item, fpc=True)
    assert sure.chance.both >= 0.999 > plain.chance.both
    assert sure.needed[0] <= 300 and sure.needed[1] > plain.needed[1]
    assert top_up_chance(_state(0.04, 0.1), item, (300, 20_000), fpc=True).both == 1.0


def test_an_unreachable_chance_keeps_the_plan_at_the_labeled_rates():
    # Uncorrected, even all 400 flagged items give Wilson about ±3 % at a precision of 90 %:
    # the labeled rate meets ±3 %, but a 90 % chance of it is out of reach.
    item = _round(36, 4, 4, 396, population=(400, 20_000))
    plain = check_targets(_state(0.03, 0.2), item)
    hopeless = check_targets(_state(0.03, 0.2, chance_target=0.9), item)
    assert plain.needed is not None
    assert hopeless.needed == plain.needed and hopeless.chance.both < 0.9
    full = top_up_chance(_state(0.03, 0.2), item, (400, 20_000))
    assert full.both < 0.9


def test_the_population_unknown_a_chance_is_searched_without_running_away():
    # k only: no stratum caps the top-up; the search doubles up to 64 times the plan and
    # enumerates only the counts the posterior allows (a 55 s, 10 GB case before).
    item = Round(sheet="labels", row=2, round="R1", k=0.03, tp=85, fp=15, fn=5, tn=995)
    plain = check_targets(_state(0.01, 0.005), item)
    sure = check_targets(_state(0.01, 0.005, chance_target=0.9), item)
    assert plain.chance.both < 0.9 <= sure.chance.both
    assert sure.needed[1] > plain.needed[1] > 500_000  # hundreds of thousands of labels
    # the chance of the sizes asked for, recomputed: the same
    again = top_up_chance(_state(0.01, 0.005), item, sure.needed)
    assert again.both == pytest.approx(sure.chance.both, abs=1e-12)


def test_a_top_up_larger_than_a_known_stratum_is_refused_corrected_or_not():
    item = _round(30, 10, 4, 396, population=(300, 20_000))
    for fpc in (False, True):
        with pytest.raises(InputError, match="predicted-positive"):
            top_up_chance(_state(0.04, 0.1), item, (301, 2_000), fpc=fpc)


def test_fewer_labels_than_labeled_are_refused():
    with pytest.raises(InputError, match="fewer than the 100 and 1,000 labeled already"):
        top_up_chance(_state(0.05, 0.05), _round(85, 15, 5, 995), (90, 1000))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0.74, "a 74 %"),
        (0.8, "an 80 %"),
        (0.11, "an 11 %"),
        (0.9, "a 90 %"),
        (0.9996, "a more than 99 %"),
        (0.003, "a less than 1 %"),
    ],
)
def test_a_chance_in_words_never_rounds_up_to_certainty(value, words):
    assert chance_in_words(value, article=True) == words
    assert chance_in_words(value) == words.split(" ", 1)[1]


def test_a_chance_the_lead_asked_for_is_shown_as_asked():
    assert chance_in_words(0.999, article=True, target=True) == "a 99.9 %"
    assert chance_in_words(0.8, article=True, target=True) == "an 80 %"
    assert chance_in_words(0.999) == "more than 99 %"  # a computed one is never certainty


def test_the_chance_counts_only_labels_a_stratum_can_still_give():
    # 60 flagged items, 15 of them skipped: at most 45 flagged labels can ever exist, so
    # the chance is of 45, not of the 50 a plan at the labeled rates asks for.
    item = _round(30, 10, 6, 54, population=(60, 240))
    state = _state(0.05, 0.05)
    check = check_targets(state, item, fpc=True, drawn=(55, 60), skipped=(15, 0))
    assert check.needed[0] > 45
    expected = top_up_chance(state, item, (45, check.needed[1]), fpc=True)
    assert check.chance.both == expected.both
    assert check.top_up[0] == 60  # the whole stratum is drawn


def test_a_surer_top_up_from_a_check_equals_planning_with_that_chance():
    from core.round_targets import surer_top_up

    item = _round(85, 15, 5, 995)
    state = _state(0.05, 0.05)
    plain = check_targets(state, item, fpc=True, drawn=(110, 1000), skipped=(10, 0))
    surer = surer_top_up(state, item, plain, 0.9, skipped=(10, 0))
    direct = check_targets(
        _state(0.05, 0.05, chance_target=0.9), item, fpc=True, drawn=(110, 1000), skipped=(10, 0)
    )
    assert (surer.needed, surer.top_up, surer.chance) == (
        direct.needed,
        direct.top_up,
        direct.chance,
    )
    assert surer.chance.both >= 0.9 > plain.chance.both
    assert surer_top_up(state, item, direct, 0.9) is None  # already that sure


def test_a_missed_margin_never_reads_as_equal_to_its_target():
    # "±5.00 %, wider than the ±5.00 % target" (trial 11b): more decimals until they differ.
    from core.cli.evaluate import percent
    from core.round_targets import margin_and_target

    assert margin_and_target(0.05003, 0.05, percent) == ("5.003 %", "5.000 %")
    assert margin_and_target(0.0612, 0.05, percent) == ("6.12 %", "5.00 %")
    assert margin_and_target(0.05, 0.05, percent) == ("5.00 %", "5.00 %")  # met exactly


def test_one_top_up_serves_every_classifier_that_fits_the_main_lists():
    from types import SimpleNamespace

    from core.round_targets import top_up_for_the_draw

    def check(met, top_up):
        return SimpleNamespace(met=met, top_up=top_up)

    others = [
        ("v2", check(False, (30, 400))),  # fits the main lists (40 flagged, 1,000 not)
        ("big", check(False, (127, 300))),  # needs more flagged items than the main has
        ("fine", check(True, None)),
    ]
    draw = top_up_for_the_draw((25, 500), others, (40, 1_000))
    assert draw.sizes == (30, 500) and draw.served == ("v2",) and draw.own_draw == ("big",)
    assert top_up_for_the_draw(None, [("fine", check(True, None))], (40, 1_000)).sizes is None
    assert top_up_for_the_draw(None, others[:1], (40, 1_000)).sizes == (30, 400)


def _stratified_recall(tp, fp, fn, tn, flagged, unflagged):
    """Recall over the population worked out by hand: the flagged side's positives
    (flagged x precision) over all positives (plus the unflagged side's, unflagged x
    the share of its labeled items that are positive)."""
    found = flagged * tp / (tp + fp)
    missed = unflagged * fn / (fn + tn)
    return found / (found + missed)


def test_the_tipping_point_of_skipped_unflagged_items_is_the_first_count_beyond_target():
    # Trial 16: every month "the skipped items could move recall from 83 % to anywhere
    # between 36 % and 83 %", with nothing to say how likely that is.
    from core.confusion import ConfusionMatrix
    from core.round_targets import open_items_swings

    tp, fp, fn, tn, flagged, unflagged, skipped = 80, 20, 4, 896, 1_000, 49_000, 30
    estimate = _stratified_recall(tp, fp, fn, tn, flagged, unflagged)
    by_hand = next(
        m
        for m in range(skipped + 1)
        if estimate - _stratified_recall(tp, fp, fn + m, tn + skipped - m, flagged, unflagged)
        > 0.05
    )
    assert by_hand == 2  # worked out: 800 / (800 + 49,000 (4 + m) / 930) < 0.7360 from m = 2
    swings = open_items_swings(
        ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn), (0, skipped), flagged / unflagged,
        {"precision": 0.05, "recall": 0.05},
    )  # fmt: skip
    (swing,) = swings
    assert swing.metric == "recall" and swing.estimate == pytest.approx(estimate)
    tipping = swing.tipping
    assert (tipping.count, tipping.of, tipping.side, tipping.label) == (
        by_hand, skipped, "unflagged", "positive",
    )  # fmt: skip
    assert tipping.expected == pytest.approx(skipped * fn / (fn + tn))
    words = swing.in_words(lambda x: f"{100 * x:.1f} %", "the 30 skipped items")
    assert words.endswith(
        "to move it that far, at least 2 of the 30 unflagged ones would have to be positive; "
        "if they are like the labeled ones, fewer than 1 is"
    )


def test_the_tipping_point_of_skipped_flagged_items_for_precision():
    from core.confusion import ConfusionMatrix
    from core.round_targets import open_items_swings

    tp, fp, skipped = 60, 40, 25
    precision = tp / (tp + fp)
    by_hand = next(m for m in range(skipped + 1) if precision - (tp + skipped - m) / (
        tp + fp + skipped) > 0.08)  # fmt: skip
    (swing,) = open_items_swings(
        ConfusionMatrix(tp=tp, fp=fp, fn=5, tn=500), (skipped, 0), 0.05, {"precision": 0.08}
    )
    assert swing.estimate == pytest.approx(precision)
    # Which way it moves furthest decides the side: down (to 48 %, all 25 negative) is
    # further than up (to 68 %).
    assert swing.tipping.label == "negative" and swing.tipping.count == by_hand
    assert swing.tipping.expected == pytest.approx(skipped * fp / (tp + fp))


def test_f1_gets_the_range_and_no_tipping_point():
    from core.confusion import ConfusionMatrix
    from core.round_targets import open_items_swings

    # F1 moves with both sides at once: the range is said, with no count.
    (swing,) = open_items_swings(
        ConfusionMatrix(tp=80, fp=20, fn=4, tn=896), (10, 30), 1_000 / 49_000, {"f1": 0.05}
    )
    assert swing.tipping is None
    assert "would have to be" not in swing.in_words(str, "they")


def test_a_move_equal_to_the_target_is_not_beyond_it():
    # Review 16: precision 13/25 -> 14/28 moves by exactly 0.02, which floating point
    # made 0.020000000000000018 and "beyond" a +-2 % target.
    from core.confusion import ConfusionMatrix
    from core.round_targets import open_items_swings

    swings = open_items_swings(
        ConfusionMatrix(tp=13, fp=12, fn=15, tn=2), (3, 2), 0.02, {"precision": 0.02}
    )
    (swing,) = swings
    exact = next(
        m for m in range(4)
        if Fraction(13, 25) - Fraction(13 + 3 - m, 28) > Fraction(2, 100)
    )  # fmt: skip
    assert swing.tipping.count == exact == 3


def test_each_further_classifier_is_planned_from_its_latest_round_on_the_new_list():
    """Before a draw: what each further classifier needs, from its own latest round, on the
    new list's counts (trial 19: promo missed its precision margin at spam's sizes). Checked
    against Eq 10's margins worked here with the correction's factors: both within the
    targets, and 1 % fewer labels miss one."""
    import dataclasses

    from core.planning import rates_from_round
    from core.round_targets import further_classifier_needs

    def round_of(name, row, date, tp, fp, fn, tn, population):
        return dataclasses.replace(
            _round(tp, fp, fn, tn, population), round=f"W{row}", row=row, classifier=name,
            date=date,
        )  # fmt: skip

    import datetime as dt

    rounds = (
        round_of("spam", 2, dt.date(2024, 3, 3), 407, 37, 32, 4096, (12_202, 287_798)),
        round_of("promo", 3, dt.date(2024, 3, 3), 89, 354, 147, 3980, (10_386, 289_614)),
        round_of("promo", 4, dt.date(2024, 3, 10), 73, 372, 149, 3834, (10_626, 289_374)),
    )
    state = dataclasses.replace(_state(0.05, 0.05), rounds=rounds)
    counts = [("promo", 10_285, 289_715), ("phishing", 1_769, 298_231)]
    (need,) = further_classifier_needs(state, counts)  # phishing has no round yet
    assert (need.name, need.planned_from) == ("promo", "W4 (promo)")
    big, small = 10_285, 289_715
    k = big / small
    precision, recall, _ = rates_from_round(rounds[2].matrix, k, state.plan.prior)
    pi0 = k * precision * (1 - recall) / recall  # Eq 1-3 solved for the unflagged rate

    def margins(n_pos, n_neg):
        f_pos, f_neg = (big - n_pos) / (big - 1), (small - n_neg) / (small - 1)
        e_precision = Z * math.sqrt(precision * (1 - precision) / n_pos * f_pos)
        x = pi0 / (k * precision)
        e_recall = (
            Z * x / (1 + x) ** 2
            * math.sqrt((1 - precision) / (n_pos * precision) * f_pos
                        + (1 - pi0) / (n_neg * pi0) * f_neg)
        )  # fmt: skip
        return e_precision, e_recall

    e_precision, e_recall = margins(need.n_pos, need.n_neg)
    assert e_precision <= 0.05 + 1e-12 and e_recall <= 0.05 + 1e-12
    # The plan's sizes keep its over-sampling ratio: 1 % fewer of both misses a target.
    assert max(margins(need.n_pos * 0.99, need.n_neg * 0.99)) > 0.05
