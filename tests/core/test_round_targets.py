"""A labeled round against the plan's margins (core.round_targets).

The quoted intervals are recomputed with statsmodels (Wilson) and by hand (Katz log,
Eq 4), and the labels a top-up asks for are checked to meet both margins at the round's
rates, which is what the lead is promised.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from statsmodels.stats.proportion import proportion_confint

from core.round_targets import check_targets
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


def _state(margin_precision, margin_recall) -> SessionState:
    return SessionState(
        plan=PlanInputs(margin_precision=margin_precision, margin_recall=margin_recall)
    )


def _wilson_half(tp, n) -> float:
    lower, upper = proportion_confint(tp, n, alpha=0.05, method="wilson")
    return (upper - lower) / 2


def _katz_half(tp, fp, fn, tn, k) -> float:
    """Eq 4 by hand: recall 1/(1+x), x = (FN/n0)/(k TP/n1), se^2 = 1/TP - 1/n1 + 1/FN - 1/n0."""
    n1, n0 = tp + fp, fn + tn
    x = (fn / n0) / (k * tp / n1)
    se = math.sqrt(1 / tp - 1 / n1 + 1 / fn - 1 / n0)
    return (1 / (1 + x * math.exp(-Z * se)) - 1 / (1 + x * math.exp(Z * se))) / 2


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
