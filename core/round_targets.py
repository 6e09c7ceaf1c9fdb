"""Did a labeled round meet the plan's target margins, and what top-up would?

A round is judged by the intervals a lead quotes (:data:`core.methods.RECOMMENDED`:
Wilson for precision, Katz log for recall), with the finite population correction when
the round was planned with it (methods, "Finite population correction"): the half-width
of each is compared with the Plan's target margin. When a margin is missed, the top-up is
the recommended plan with the round as the previous round (methods §6-7, the same rule as
the Plan tab and the report), never below what was already labeled. The app's summary
after labels are read and ``prplanner labels --margin ...`` both use :func:`check_targets`.

A top-up sized so that the margins are met *at the labeled rates* is not sure to meet them:
the new labels scatter. :func:`top_up_chance` is the chance that the topped-up round meets
each target given the labels so far (methods §14, "Topping up"), and with the Plan's
assurance target the top-up is made large enough for that chance.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import InputError

if TYPE_CHECKING:
    from core.confusion import ConfusionMatrix
    from core.session import SessionState
    from core.workbook.rounds import Round


@dataclass(frozen=True, slots=True, kw_only=True)
class Targets:
    """The target margins a round is drawn for, at a confidence level: what the
    labeling workbook's Design sheet records, so that reading the labels back judges the
    round by them without being told again.

    Attributes
    ----------
    margin_precision, margin_recall : float
        Target half-widths, e.g. 0.05 for ±5 points; each in (0, 0.5).
    confidence : float
        The level of the intervals, in (0.5, 1).
    """

    margin_precision: float
    margin_recall: float
    confidence: float

    def __post_init__(self) -> None:
        from core import validation

        validation.margin("the target margin for precision", self.margin_precision)
        validation.margin("the target margin for recall", self.margin_recall)
        validation.confidence(self.confidence)

    @classmethod
    def of(cls, state: SessionState) -> Targets:
        """The Plan's target margins at the session's confidence."""
        return cls(
            margin_precision=state.plan.margin_precision,
            margin_recall=state.plan.margin_recall,
            confidence=state.confidence,
        )

    def applied_to(self, state: SessionState) -> SessionState:
        """``state`` with these margins on its plan and this confidence."""
        plan = dataclasses.replace(
            state.plan, margin_precision=self.margin_precision, margin_recall=self.margin_recall
        )
        return dataclasses.replace(state, plan=plan, confidence=self.confidence)

    def in_words(self) -> str:
        """``precision ±5 %, recall ±5 % at 95 % confidence``."""

        def points(value: float) -> str:
            return f"{100 * value:.3g} %"

        return (
            f"precision ±{points(self.margin_precision)}, recall ±{points(self.margin_recall)}"
            f" at {points(self.confidence)} confidence"
        )

    def to_dict(self) -> dict[str, float]:
        return {
            "margin_precision": self.margin_precision,
            "margin_recall": self.margin_recall,
            "confidence": self.confidence,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class MarginCheck:
    """One metric's quoted interval against its target margin.

    Attributes
    ----------
    metric : str
        ``"precision"`` or ``"recall"``.
    method : str
        The interval quoted (``"wilson"``, ``"katz_log"``).
    lower, upper : float
        Its bounds (NaN when undefined).
    target : float
        The target margin (half-width), e.g. 0.05 for ±5 points.
    """

    metric: str
    method: str
    lower: float
    upper: float
    target: float

    @property
    def half_width(self) -> float:
        return (self.upper - self.lower) / 2.0

    @property
    def met(self) -> bool:
        """The half-width is within the target (an undefined interval is not)."""
        return math.isfinite(self.half_width) and self.half_width <= self.target

    def to_dict(self) -> dict[str, object]:
        half = self.half_width
        return {
            "method": self.method,
            "lower": self.lower if math.isfinite(self.lower) else None,
            "upper": self.upper if math.isfinite(self.upper) else None,
            "half_width": half if math.isfinite(half) else None,
            "target": self.target,
            "met": self.met,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetCheck:
    """A round against the plan's margins.

    Attributes
    ----------
    precision, recall : MarginCheck
        Each metric's quoted interval and target.
    confidence : float
        The level of the intervals.
    fpc : bool
        The intervals carry the finite population correction.
    labeled, drawn : tuple of int
        ``(n_pos, n_neg)`` labeled positive or negative, and drawn (labeled, skipped or
        still without a label).
    needed : tuple of int or None
        Labels ``(n_pos, n_neg)`` in all that a plan from this round asks for (at least
        ``labeled``), when a margin is missed and some sample of the population meets both;
        None when both are met or none does.
    top_up : tuple of int or None
        Sample totals ``(n_pos, n_neg)`` to draw so that ``needed`` items can get a label:
        the skipped items are drawn again by others, the items still without a label are
        expected to get one. None when the sample drawn already suffices (or nothing is
        needed).
    chance : TopUpChance or None
        The chance that a round of ``needed`` labels meets the targets, given the labels so
        far; None when nothing is needed.
    chance_target : float
        The chance the top-up was sized for (the Plan's assurance target; 0: sized to meet
        the margins at the labeled rates). When no sample of the population reaches it,
        ``needed`` is the plan at the labeled rates and ``chance`` says how far short it is.
    """

    precision: MarginCheck
    recall: MarginCheck
    confidence: float
    fpc: bool
    labeled: tuple[int, int]
    drawn: tuple[int, int]
    needed: tuple[int, int] | None
    top_up: tuple[int, int] | None
    chance: TopUpChance | None = None
    chance_target: float = 0.0

    @property
    def met(self) -> bool:
        return self.precision.met and self.recall.met

    @property
    def target_margins(self) -> dict[str, float]:
        """``{"precision": 0.05, "recall": 0.05}``: the target half-widths."""
        return {margin.metric: margin.target for margin in (self.precision, self.recall)}

    @property
    def reachable(self) -> bool:
        """Both margins are met, or some sample of this population meets them."""
        return self.met or self.needed is not None

    def missed(self) -> tuple[MarginCheck, ...]:
        return tuple(check for check in (self.precision, self.recall) if not check.met)

    def to_dict(self) -> dict[str, object]:
        """The ``targets`` object of ``prplanner labels --json``."""

        def pair(value: tuple[int, int] | None) -> dict[str, int] | None:
            return None if value is None else {"n_pos": value[0], "n_neg": value[1]}

        return {
            "met": self.met,
            "confidence": self.confidence,
            "fpc": self.fpc,
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "needed": pair(self.needed),
            "top_up": pair(self.top_up),
            "chance": None if self.chance is None else self.chance.to_dict(),
            "chance_target": self.chance_target or None,
        }


@dataclass(frozen=True, slots=True)
class DrawTopUp:
    """One top-up for every classifier of a draw (:func:`top_up_for_the_draw`).

    Attributes
    ----------
    sizes : (int, int) or None
        Sample totals meeting the targets for the main classifier and for each other
        classifier that a top-up of this draw can serve; None when none needs one.
    served : tuple of str
        The other classifiers that missed a target and that these totals serve.
    own_draw : tuple of str
        The other classifiers that missed a target and that no top-up of this draw serves:
        they need more than the main classifier's lists hold (a draw of their own).
    """

    sizes: tuple[int, int] | None
    served: tuple[str, ...]
    own_draw: tuple[str, ...]


def top_up_for_the_draw(
    main: tuple[int, int] | None,
    others: Sequence[tuple[str, TargetCheck]],
    strata: tuple[int, int],
) -> DrawTopUp:
    """The top-up of a draw of several classifiers: one pair of totals draws every
    classifier's sample (``select --extend``), within the main classifier's lists
    ``strata``, so it is the largest of the top-ups that fit there.

    ``main`` is the main classifier's own top-up (None: it needs none), ``others`` each
    other classifier's name and check against the same targets.
    """
    missed = [(name, check) for name, check in others if not check.met]
    fits = [
        (name, check.top_up)
        for name, check in missed
        if check.top_up is not None
        and check.top_up[0] <= strata[0]
        and check.top_up[1] <= strata[1]
    ]
    served = tuple(name for name, _ in fits)
    own_draw = tuple(name for name, _ in missed if name not in served)
    sizes = [size for size in (main, *(size for _, size in fits)) if size is not None]
    if not sizes:
        return DrawTopUp(sizes=None, served=served, own_draw=own_draw)
    largest = (max(size[0] for size in sizes), max(size[1] for size in sizes))
    return DrawTopUp(sizes=largest, served=served, own_draw=own_draw)


def margin_and_target(half_width: float, target: float, shown) -> tuple[str, str]:
    """``(half-width, target)`` as ``shown`` (a percent formatter) writes them, with more
    decimals when rounding would show a missed margin equal to its target ("±5.00 %,
    wider than the ±5.00 % target" reads as a contradiction)."""
    half_text, target_text = shown(half_width), shown(target)
    decimals = 3
    while half_text == target_text and half_width != target and decimals <= 6:
        half_text = f"{100 * half_width:.{decimals}f} %"
        target_text = f"{100 * target:.{decimals}f} %"
        decimals += 1
    return half_text, target_text


@dataclass(frozen=True, slots=True)
class TippingPoint:
    """How many of one side's open items would have to carry the adverse label to move an
    estimate further than its target margin (a tipping-point analysis of missing labels):
    at least ``count`` of the ``of`` open items on the ``side`` (``"flagged"`` or
    ``"unflagged"``) labeled ``label``, where about ``expected`` would be if they were like
    the labeled items of that side."""

    count: int
    of: int
    side: str
    label: str
    expected: float

    def to_dict(self) -> dict[str, object]:
        return {
            "count": self.count,
            "of": self.of,
            "side": self.side,
            "label": self.label,
            "expected": self.expected,
        }

    def in_words(self) -> str:
        """``to move it that far, at least 9 of the 190 unflagged ones would have to be
        positive; if they are like the labeled ones, about 0.6 are``."""
        if self.expected < 1:
            expected = "fewer than 1 is"
        elif self.expected < 9.95:
            expected = f"about {self.expected:.1f} are"
        else:
            expected = f"about {self.expected:,.0f} are"
        return (
            f"to move it that far, at least {self.count:,} of the {self.of:,} {self.side} ones "
            f"would have to be {self.label}; if they are like the labeled ones, {expected}"
        )


@dataclass(frozen=True, slots=True)
class OpenItemsSwing:
    """How far the skipped and unlabeled items could move one estimate, beyond its target
    margin (:meth:`ClassifierLabels.swings_beyond`), and ``tipping``: how many of them it
    takes in the direction it could move furthest (None when no one side alone can)."""

    metric: str
    estimate: float
    lowest: float
    highest: float
    target: float
    tipping: TippingPoint | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "metric": self.metric,
            "estimate": self.estimate,
            "lowest": self.lowest,
            "highest": self.highest,
            "target": self.target,
            "tipping": None if self.tipping is None else self.tipping.to_dict(),
        }

    def in_words(self, percent, subject: str) -> str:
        """``the 84 skipped items could move recall from 48.9 % to anywhere between ...``
        (``subject`` from :meth:`ClassifierLabels.open_items_in_words` without its verb)."""
        words = (
            f"{subject} could move {self.metric} from {percent(self.estimate)} to anywhere "
            f"between {percent(self.lowest)} and {percent(self.highest)}, further than the "
            f"±{percent(self.target)} target"
        )
        if self.tipping is not None:
            words += f"; {self.tipping.in_words()}"
        return words


def swings_in_words(swings: Sequence[OpenItemsSwing], percent, subject: str) -> list[str]:
    """Each swing as a clause (:meth:`OpenItemsSwing.in_words`), the first naming the
    items (``subject``), the others ``they``."""
    return [
        swing.in_words(percent, subject if index == 0 else "they")
        for index, swing in enumerate(swings)
    ]


def estimate_ranges(
    matrix: ConfusionMatrix, open_items: tuple[int, int], k: float
) -> dict[str, list | None]:
    """``{precision, recall, f1}``: each as ``[lowest, highest]`` over every way the
    ``open_items`` (``(flagged, unflagged)`` skipped or unlabeled) could be labeled; ``None``
    while a stratum has no label or a rate is undefined.

    Precision depends on the flagged items only, so its bounds are all of them negative
    and all positive. Recall and F1 rise with the flagged stratum's positives and fall
    with the unflagged stratum's, so theirs are the two mixed corners: a skipped flagged
    item that is positive raises recall, a skipped unflagged one that is positive (a
    missed item) lowers it.
    """
    from core.confusion import ConfusionMatrix, point_estimates

    tp, fp, fn, tn = matrix.as_tuple()
    open_pos, open_neg = open_items
    if tp + fp + open_pos == 0 or fn + tn + open_neg == 0:
        return {"precision": None, "recall": None, "f1": None}
    worst = (tp, fp + open_pos, fn + open_neg, tn)
    best = (tp + open_pos, fp, fn, tn + open_neg)
    bounds = []
    for cells in (worst, best):
        if cells[0] + cells[1] == 0 or cells[2] + cells[3] == 0:
            return {"precision": None, "recall": None, "f1": None}
        tp_, fp_, fn_, tn_ = cells
        bounds.append(point_estimates(ConfusionMatrix(tp=tp_, fp=fp_, fn=fn_, tn=tn_), k))

    def span(name: str) -> list | None:
        values = [getattr(estimates, name) for estimates in bounds]
        if not all(math.isfinite(value) for value in values):
            return None
        return [min(values), max(values)]

    return {name: span(name) for name in ("precision", "recall", "f1")}


#: A move equal to the target is not beyond it: 0.52 - 0.5 is 0.020000000000000018 in
#: floating point, and exact ties at round numbers were said to exceed a ±2 % target
#: (review 16).
_TIE = 1e-12


def open_items_swings(
    matrix: ConfusionMatrix, open_items: tuple[int, int], k: float, targets: Mapping[str, float]
) -> list[OpenItemsSwing]:
    """The metrics of ``targets`` (``{"precision": 0.05, ...}``) whose estimate the
    ``open_items`` (skipped or unlabeled, ``(flagged, unflagged)``) could move further than
    its target margin: a round can meet its margins by sampling error and still be unsure
    by what was skipped, above all when skipped unflagged items each stand for many."""
    from core.confusion import point_estimates

    if not any(open_items) or matrix.tp + matrix.fp == 0 or matrix.fn + matrix.tn == 0:
        return []
    estimates = point_estimates(matrix, k)
    spans = estimate_ranges(matrix, open_items, k)
    swings = []
    for metric, target in targets.items():
        span, estimate = spans.get(metric), getattr(estimates, metric)
        if span is None or not math.isfinite(estimate):
            continue
        low, high = span
        if max(estimate - low, high - estimate) > target + _TIE:
            downward = estimate - low >= high - estimate
            tipping = _tipping_point(matrix, open_items, k, metric, downward, estimate, target)
            swings.append(OpenItemsSwing(metric, estimate, low, high, target, tipping))
    return swings


def _tipping_point(
    matrix: ConfusionMatrix,
    open_items: tuple[int, int],
    k: float,
    metric: str,
    downward: bool,
    estimate: float,
    target: float,
) -> TippingPoint | None:
    """The fewest open items of one side that, labeled adversely (the rest of that side
    the other way, the other side's left out), move ``metric`` further than ``target``
    from ``estimate`` in the direction ``downward`` or up; None when that side's open
    items cannot do it alone.

    Precision moves with the flagged side only (down: flagged items that are negative;
    up: positive). Recall falls with unflagged items that are positive (missed items, each
    standing for many) and rises with flagged ones that are positive. The worst corner of
    :func:`estimate_ranges` says how far the estimate could move; this says how unlikely
    that is: the count set beside what the labeled items of the side suggest.
    """
    from core.confusion import ConfusionMatrix, point_estimates

    tp, fp, fn, tn = matrix.as_tuple()
    open_pos, open_neg = open_items
    if metric == "precision" or (metric == "recall" and not downward):
        side, of = "flagged", open_pos
        label = "negative" if metric == "precision" and downward else "positive"
        rate = (fp if label == "negative" else tp) / (tp + fp)

        def cells(m: int) -> tuple[int, int, int, int]:
            if label == "negative":
                return tp + of - m, fp + m, fn, tn
            return tp + m, fp + of - m, fn, tn

    elif metric == "recall":
        side, of, label = "unflagged", open_neg, "positive"
        rate = fn / (fn + tn)

        def cells(m: int) -> tuple[int, int, int, int]:
            return tp, fp, fn + m, tn + of - m

    else:  # F1 moves with both sides at once: no one count to name
        return None

    def beyond(m: int) -> bool:
        a, b, c, d = cells(m)
        value = getattr(point_estimates(ConfusionMatrix(tp=a, fp=b, fn=c, tn=d), k), metric)
        if not math.isfinite(value):
            return False
        return (estimate - value if downward else value - estimate) > target + _TIE

    if of == 0 or not beyond(of):
        return None
    # The estimate moves one way as m grows, and m = 0 moves it the favourable way (never
    # beyond): the first m beyond the target, by bisection.
    low, high = 0, of
    while high - low > 1:
        middle = (low + high) // 2
        if beyond(middle):
            high = middle
        else:
            low = middle
    return TippingPoint(count=high, of=of, side=side, label=label, expected=of * rate)


def check_targets(
    state: SessionState,
    item: Round,
    *,
    fpc: bool = False,
    drawn: tuple[int, int] | None = None,
    skipped: tuple[int, int] = (0, 0),
    plan_top_up: bool = True,
) -> TargetCheck:
    """Judge round ``item`` by ``state``'s target margins and confidence.

    Parameters
    ----------
    state : SessionState
        Its ``plan`` holds the margins (and the settings a top-up is planned with) and its
        ``confidence`` the level.
    item : Round
        The labeled round; the finite population correction needs its population counts.
    fpc : bool
        Judge with the finite population correction (the selection rule draws without
        replacement, so a round planned with the correction is judged with it).
    drawn, skipped : tuple of int
        Items drawn per stratum (default: the labeled ones) and how many of them were
        skipped; the top-up draws enough that the skipped ones are made up for.
    plan_top_up : bool
        False: only say whether the margins are met (``needed``, ``top_up`` and ``chance``
        stay None), for a report that shows no top-up.

    Raises
    ------
    InputError
        ``fpc`` for a round without both population counts, or a stratum with no label.
    """
    from core.confusion import Population
    from core.intervals import NO_FPC, katz_log_recall, wilson_precision

    matrix = item.matrix
    matrix.require_both_strata()
    factors = NO_FPC
    if fpc:
        if item.population_pos is None or item.population_neg is None:
            raise InputError(
                "the finite population correction needs the round's two population counts"
            )
        population = Population.from_counts(item.population_pos, item.population_neg)
        factors = population.fpc_factors(matrix.n_pos, matrix.n_neg)
    precision = wilson_precision(matrix, state.confidence, factors)
    recall = katz_log_recall(matrix, item.k, state.confidence, factors)
    checks = {
        name: MarginCheck(
            metric=name,
            method=interval.method,
            lower=interval.lower,
            upper=interval.upper,
            target=target,
        )
        for name, interval, target in (
            ("precision", precision, state.plan.margin_precision),
            ("recall", recall, state.plan.margin_recall),
        )
    }
    labeled = (matrix.n_pos, matrix.n_neg)
    drawn = labeled if drawn is None else drawn
    needed = top_up = chance = None
    chance_target = state.plan.assurance_target
    if plan_top_up and not all(check.met for check in checks.values()):
        needed = _planned_totals(state, item, labeled, fpc)
        if needed is not None:
            # None: even the whole of a stratum, at this round's rates, leaves the quoted
            # interval wider than the target (the plan's approximation said otherwise).
            needed = _until_quoted_margins_met(state, item, needed, fpc)
        if needed is not None:
            # Skipped items stay without a label: a stratum drawn in full gives at most its
            # size less them, and the chance is of the labels that can exist.
            limits = _label_limits(item, labeled, skipped)
            chance = top_up_chance(state, item, _within(needed, limits), fpc=fpc)
            if chance_target and chance.both < chance_target:
                assured = _until_chance_reached(state, item, needed, fpc, chance_target, limits)
                if assured is not None:
                    needed, chance = assured
            top_up = _to_draw(item, needed, drawn, skipped)
    return TargetCheck(
        precision=checks["precision"],
        recall=checks["recall"],
        confidence=state.confidence,
        fpc=fpc,
        labeled=labeled,
        drawn=drawn,
        needed=needed,
        top_up=top_up,
        chance=chance,
        chance_target=chance_target,
    )


def surer_top_up(
    state: SessionState,
    item: Round,
    check: TargetCheck,
    target: float,
    *,
    skipped: tuple[int, int] = (0, 0),
) -> TargetCheck | None:
    """``check`` with its top-up made large enough for a ``target`` chance of meeting both
    targets (from the labels it already asks for, so the plan is not worked out again);
    None when it needs no top-up, already has that chance, or no sample reaches it.
    ``state``, ``item`` and ``skipped`` are those ``check`` was made with."""
    if check.needed is None or check.chance is None or check.chance.both >= target:
        return None
    limits = _label_limits(item, check.labeled, skipped)
    assured = _until_chance_reached(state, item, check.needed, check.fpc, target, limits)
    if assured is None:
        return None
    needed, chance = assured
    top_up = _to_draw(item, needed, check.drawn, skipped)
    if top_up is None:
        return None
    return dataclasses.replace(
        check, needed=needed, top_up=top_up, chance=chance, chance_target=target
    )


def _label_limits(
    item: Round, labeled: tuple[int, int], skipped: tuple[int, int]
) -> tuple[int, int] | None:
    """The most labels each stratum can give: its size less its skipped items (never
    below what is labeled); None when the population counts are not known."""
    if item.population_pos is None or item.population_neg is None:
        return None
    strata = (item.population_pos, item.population_neg)
    limits = [
        max(size - left_out, have)
        for size, left_out, have in zip(strata, skipped, labeled, strict=True)
    ]
    return limits[0], limits[1]


def _within(sizes: tuple[int, int], limits: tuple[int, int] | None) -> tuple[int, int]:
    if limits is None:
        return sizes
    return min(sizes[0], limits[0]), min(sizes[1], limits[1])


def _to_draw(
    item: Round, needed: tuple[int, int], drawn: tuple[int, int], skipped: tuple[int, int]
) -> tuple[int, int] | None:
    """Sample totals giving ``needed`` labels when the ``skipped`` items stay unlabeled,
    within the strata; None when the sample drawn already suffices."""
    strata = (item.population_pos, item.population_neg)
    totals = tuple(
        max(already, want + passed) if size is None else min(max(already, want + passed), size)
        for want, already, passed, size in zip(needed, drawn, skipped, strata, strict=True)
    )
    return None if totals == drawn else (totals[0], totals[1])


def _planned_totals(
    state: SessionState, item: Round, labeled: tuple[int, int], fpc: bool
) -> tuple[int, int] | None:
    """Totals of the recommended plan from ``item`` (at least what is labeled), or None
    when no plan meets both margins."""
    from core.plan_request import PlanRequest, planning_inputs
    from core.workbook.session_io import plan_from_round

    plan, _notes = plan_from_round(state.plan, item)
    plan = dataclasses.replace(plan, fpc=plan.fpc or fpc)
    attempts = [plan]
    if item.population_pos is not None:
        # A small stratum may need most of itself: plan for the finite population, and at
        # the round's s a stratum can run out where another s does not.
        attempts.append(dataclasses.replace(plan, fpc=True))
        attempts.append(dataclasses.replace(plan, fpc=True, method="optimal"))
    for attempt in attempts:
        attempt_state = dataclasses.replace(state, plan=attempt)
        try:
            recommended = PlanRequest.from_session(
                attempt_state, planning_inputs(attempt_state)
            ).plan()
        except InputError:
            continue
        return (max(recommended.n_pos, labeled[0]), max(recommended.n_neg, labeled[1]))
    return None


def _until_quoted_margins_met(
    state: SessionState, item: Round, totals: tuple[int, int], fpc: bool
) -> tuple[int, int] | None:
    """The plan's ``totals`` scaled up (same ratio) until the quoted intervals, at this
    round's rates, meet both margins; None when the strata run out first.

    The plan sizes by the normal-approximation margins (Eq 10); Wilson and
    Katz can be a little wider, most of all near a precision of 0 or 1, and a top-up that
    misses again by a hair helps nobody.
    """
    from core.confusion import ConfusionMatrix, Population
    from core.intervals import NO_FPC, katz_log_recall, wilson_precision

    matrix = item.matrix
    rate_pos, rate_neg = matrix.tp / matrix.n_pos, matrix.fn / matrix.n_neg
    known = item.population_pos is not None and item.population_neg is not None
    strata = (item.population_pos or 0, item.population_neg or 0)

    def sizes_at(scale: float) -> tuple[int, int]:
        n_pos, n_neg = (math.ceil(scale * n) for n in totals)
        if known:
            return min(n_pos, strata[0]), min(n_neg, strata[1])
        return n_pos, n_neg

    def meets(scale: float) -> bool:
        n_pos, n_neg = sizes_at(scale)
        tp, fn = round(rate_pos * n_pos), round(rate_neg * n_neg)
        projected = ConfusionMatrix(tp=tp, fp=n_pos - tp, fn=fn, tn=n_neg - fn)
        factors = NO_FPC
        if fpc and known:
            factors = Population.from_counts(*strata).fpc_factors(n_pos, n_neg)
        precision = wilson_precision(projected, state.confidence, factors)
        recall = katz_log_recall(projected, item.k, state.confidence, factors)
        return (
            precision.half_width <= state.plan.margin_precision
            and recall.half_width <= state.plan.margin_recall
        )

    if meets(1.0):
        return totals
    # sizes_at caps each stratum at its size: the largest scale labels both in full
    largest = max(s / n for s, n in zip(strata, totals, strict=True)) if known else 100.0
    if largest <= 1.0 or not meets(largest):
        return None
    low, high = 1.0, largest  # meets(high), not meets(low)
    while high - low > 1e-4 * low:
        middle = (low + high) / 2
        low, high = (low, middle) if meets(middle) else (middle, high)
    return sizes_at(high)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopUpChance:
    """The chance that a topped-up round meets its target margins, given the labels so far.

    Attributes
    ----------
    precision, recall, both : float
        Probability that the quoted interval (Wilson, Katz log) of the round with the new
        labels meets the precision target, the recall target, and both.
    new_labels : tuple of int
        ``(n_pos, n_neg)`` labels beyond those the round already has.
    """

    precision: float
    recall: float
    both: float
    new_labels: tuple[int, int]

    def to_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "both": self.both}


#: The chance a surer top-up or plan is offered for when the lead has set none: the app's
#: second Top up button, labels' hint and the Plan tab's note.
SURER_CHANCE = 0.9


def chance_in_words(value: float, *, article: bool = False, target: bool = False) -> str:
    """A chance as a lead acts on it: ``74 %`` (``an 80 %`` with ``article``), never a
    rounded-up certainty (``more than 99 %``); a ``target`` the lead set is shown as set
    (``99.9 %``)."""
    if target:
        shown = f"{100 * value:.4g} %"
    else:
        shown = f"{100 * value:.0f} %"
        shown = {"100 %": "more than 99 %", "0 %": "less than 1 %"}.get(shown, shown)
    if not article:
        return shown
    spoken_with_vowel = shown.startswith(("8", "11 ", "18 "))
    return f"{'an' if spoken_with_vowel else 'a'} {shown}"


#: Largest grid of new (TP, FN) counts summed count by count; larger ones group counts.
_CHANCE_CELL_BUDGET = 400_000
#: Predictive probabilities below this share of the largest are left out.
_CHANCE_RELATIVE_TAIL = 1e-12
#: Quantile of the stratum's rate beyond which counts are not enumerated at all.
_RATE_TAIL = 1e-14
#: Largest scale of the plan a top-up for a chance is searched to when the population is
#: not known (a known one stops at both strata labeled in full).
_LARGEST_UNBOUNDED_SCALE = 64.0


def _new_positives(new: int, positives: int, negatives: int):
    """Counts and probabilities of the positives among ``new`` further labels of a stratum
    in which ``positives`` of ``positives + negatives`` labels so far were positive.

    The stratum's rate has the Jeffreys posterior ``Beta(positives + 1/2, negatives + 1/2)``
    and the further items are exchangeable with the labeled ones, so their count of
    positives is beta-binomial (with or without replacement alike). Only the counts a rate
    inside the posterior's central ``1 - 2e-14`` can give (with binomial room around them)
    are enumerated, so a top-up of millions stays a short array.
    """
    import numpy as np
    from scipy.stats import beta, betabinom

    a, b = positives + 0.5, negatives + 0.5
    rates = beta.ppf(_RATE_TAIL, a, b), beta.isf(_RATE_TAIL, a, b)
    spread = [10.0 * math.sqrt(new * rate) + 10.0 for rate in rates]
    low = max(0, math.floor(new * rates[0] - spread[0]))
    high = min(new, math.ceil(new * rates[1] + spread[1]))
    counts = np.arange(low, high + 1, dtype=float)
    log_pmf = betabinom.logpmf(counts, new, a, b)
    pmf = np.exp(log_pmf - log_pmf.max())
    kept = np.flatnonzero(pmf >= _CHANCE_RELATIVE_TAIL)
    counts, pmf = counts[kept[0] : kept[-1] + 1], pmf[kept[0] : kept[-1] + 1]
    return counts, pmf / pmf.sum()


def top_up_chance(
    state: SessionState, item: Round, needed: tuple[int, int], *, fpc: bool = False
) -> TopUpChance:
    """The chance that round ``item``, labeled up to ``needed`` items per stratum, meets
    ``state``'s target margins with its quoted intervals (Wilson for precision, Katz log
    for recall, Eq 4; with the finite population correction when ``fpc``).

    The labels so far are kept; the new labels of each stratum are predicted from them
    (beta-binomial, :func:`_new_positives`), the two strata independently. The chance is
    the summed probability of every pair of new counts whose round meets the targets (the
    margins of :mod:`core.assurance`, which sums a plan's chance the same way). A top-up
    planned to meet the margins at the labeled rates is far from sure to.

    Raises
    ------
    InputError
        ``needed`` is below what is labeled, or larger than a known stratum.
    """

    from core.assurance import grouped_counts, precision_margins, recall_margin_grid
    from core.confusion import Population

    matrix = item.matrix
    new_pos, new_neg = needed[0] - matrix.n_pos, needed[1] - matrix.n_neg
    if new_pos < 0 or new_neg < 0:
        raise InputError(
            f"a top-up to {needed[0]:,} and {needed[1]:,} labels has fewer than the "
            f"{matrix.n_pos:,} and {matrix.n_neg:,} labeled already"
        )
    known = item.population_pos is not None and item.population_neg is not None
    factors = (1.0, 1.0)
    if known:
        population = Population.from_counts(item.population_pos, item.population_neg)
        population.require_sample_fits(*needed)  # refused whether corrected or not
        if fpc:
            factors = population.fpc_factors(*needed)
    tp_new, weight_pos = _new_positives(new_pos, matrix.tp, matrix.fp)
    fn_new, weight_neg = _new_positives(new_neg, matrix.fn, matrix.tn)
    if tp_new.size * fn_new.size > _CHANCE_CELL_BUDGET:
        side = math.isqrt(_CHANCE_CELL_BUDGET)
        tp_new, weight_pos = grouped_counts(tp_new, weight_pos, math.ceil(tp_new.size / side))
        columns = max(side, _CHANCE_CELL_BUDGET // tp_new.size)
        fn_new, weight_neg = grouped_counts(fn_new, weight_neg, math.ceil(fn_new.size / columns))
    tp, fn = matrix.tp + tp_new, matrix.fn + fn_new
    precision_met = (
        precision_margins(tp, needed[0], state.confidence, factors[0])
        <= state.plan.margin_precision
    )
    recall_met = (
        recall_margin_grid(tp, fn, needed[0], needed[1], item.k, state.confidence, factors)
        <= state.plan.margin_recall
    )
    recall_given_tp = recall_met @ weight_neg
    return TopUpChance(
        precision=float(min(weight_pos @ precision_met, 1.0)),
        recall=float(min(weight_pos @ recall_given_tp, 1.0)),
        both=float(min((weight_pos * precision_met) @ recall_given_tp, 1.0)),
        new_labels=(new_pos, new_neg),
    )


def _until_chance_reached(
    state: SessionState,
    item: Round,
    totals: tuple[int, int],
    fpc: bool,
    target: float,
    limits: tuple[int, int] | None = None,
) -> tuple[tuple[int, int], TopUpChance] | None:
    """The labels ``totals`` scaled up (same ratio, each stratum at most its size) until
    the chance of meeting both targets is at least ``target``, with that chance; None when
    even both strata labeled in full (or, the population unknown, 64 times the plan) fall
    short.

    The scale doubles until the chance is reached, then a bisection narrows it; the chance
    saw-tooths slightly with the sizes (whole counts), so the answer is the smallest scale
    found whose own chance reaches the target. ``limits`` caps the labels a stratum can
    give (default: its size).
    """
    known = item.population_pos is not None and item.population_neg is not None
    strata = limits or (item.population_pos or 0, item.population_neg or 0)
    labeled = (item.matrix.n_pos, item.matrix.n_neg)

    def sizes_at(scale: float) -> tuple[int, int]:
        sizes = [max(math.ceil(scale * n), have) for n, have in zip(totals, labeled, strict=True)]
        if known:
            sizes = [min(n, size) for n, size in zip(sizes, strata, strict=True)]
        return sizes[0], sizes[1]

    def chance_at(scale: float) -> TopUpChance:
        return top_up_chance(state, item, sizes_at(scale), fpc=fpc)

    largest = (
        max(s / n for s, n in zip(strata, totals, strict=True))
        if known
        else _LARGEST_UNBOUNDED_SCALE
    )
    low = 1.0
    high = min(2.0, largest)
    best = chance_at(high)
    while best.both < target:
        if high >= largest:
            return None
        low, high = high, min(2.0 * high, largest)
        best = chance_at(high)
    while high - low > 1e-3 * low and sizes_at(low) != sizes_at(high):
        middle = (low + high) / 2
        chance = chance_at(middle)
        if chance.both >= target:
            high, best = middle, chance
        else:
            low = middle
    return sizes_at(high), best


@dataclass(frozen=True, slots=True)
class ClassifierNeed:
    """The sample sizes a further classifier of a draw needs to meet the target margins,
    planned from its latest round on the list about to be drawn from.

    Attributes
    ----------
    name : str
        The classifier (its flag column).
    planned_from : str
        Its latest round, as the Rounds panel shows it (``"W1 (promo)"``).
    n_pos, n_neg : int
        Flagged and unflagged items to draw from each of its strata.
    """

    name: str
    planned_from: str
    n_pos: int
    n_neg: int


def further_classifier_needs(
    state: SessionState, counts: Sequence[tuple[str, int, int]]
) -> tuple[ClassifierNeed, ...]:
    """What each further classifier of a draw needs, before the draw.

    A draw gives every classifier samples of the same sizes from its own strata, sized for
    the main classifier; a classifier with lower precision then missed its margin, and
    only a flagged-only top-up (which the editors can tell) set it right (trial 19). Each
    classifier of ``counts`` (``(name, flagged, unflagged)`` in the new list) that has a
    round in ``state`` is planned from its latest round
    (:func:`core.workbook.layout.most_recent_round` among its own), on the new list's
    counts, with the finite population correction (the rule draws without replacement),
    against the Plan's target margins. Classifiers without a round are left out: nothing
    is known of their precision and recall yet.
    """
    from core.workbook.layout import most_recent_round
    from core.workbook.report_content import round_label
    from core.workbook.rounds import Round, classifier_key

    needs = []
    for name, flagged, unflagged in counts:
        own = [
            item
            for item in state.rounds
            if isinstance(item, Round) and classifier_key(item.classifier) == classifier_key(name)
        ]
        latest = most_recent_round(own)
        if latest is None or flagged < 1 or unflagged < 1:
            continue
        on_new_list = dataclasses.replace(
            latest, population_pos=flagged, population_neg=unflagged, k=flagged / unflagged
        )
        totals = _planned_totals(state, on_new_list, (0, 0), fpc=True)
        if totals is not None:
            needs.append(ClassifierNeed(name, round_label(latest), *totals))
    return tuple(needs)
