"""Two labeled rounds compared: did precision or recall change? (methods §9)

* Precision is a binomial proportion in each (independent) round, so its change gets
  Newcombe's hybrid score interval (Newcombe 1998, method 10), built from the two Wilson
  intervals: for ``d = p2 - p1``::

      lower = d - sqrt((p2 - l2)^2 + (u1 - p1)^2)
      upper = d + sqrt((u2 - p2)^2 + (p1 - l1)^2)

* Recall has no such closed form, so its change is a Monte-Carlo interval from the two
  posteriors (methods §5): draw ``pi1, pi0`` of each round from ``Beta(z11, z01)`` and
  ``Beta(z10, z00)``, map them to recall with each round's ``k`` (Eq 2) and take the
  percentiles of the difference. The default prior is Jeffreys (0.5 per cell), proper even
  when a count is 0.
* ``p_worse`` is the posterior probability that the current round's true value is below
  the previous round's (a tie counting half), from the same draws (for precision the draws
  are exactly the Beta posteriors).
* With the finite population correction (a round drawn without replacement from a list of
  known size) the values compared are the strata's own: the labeled items count as they
  are and only the unlabeled ones are drawn, ``M = TP + Binomial(N - n, pi)``
  (:func:`core.bayes.finite_population_rates`, methods "Finite population correction"),
  and each precision's Wilson interval is that of ``n/f`` trials. Without it a round
  labeling half of a small flagged set is compared as if nothing were known of it.

``change = current - previous``: a positive change is an improvement.

References
----------
* Newcombe 1998: method 10 (hybrid score interval for a difference of proportions).
* Shang et al. 2023: Appendix A (posteriors of the recall change).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from core import resampling, validation
from core.bayes import Prior, finite_population_rates
from core.confusion import ConfusionMatrix, Population, point_estimates, recall_from_rates
from core.errors import InputError
from core.intervals import Interval, wilson_precision

#: Posterior draws per round: the Evaluate tab, the History tab, the report and
#: ``prplanner compare`` use this many, so they say the same.
DEFAULT_REPLICATES = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """Change of one metric between two rounds.

    Attributes
    ----------
    previous, current : float
        Plug-in estimates of each round (NaN when undefined).
    estimate : float
        ``current - previous``.
    interval : Interval
        Interval of the change (``method`` says which).
    p_worse : float
        Posterior probability that the current true value is below the previous one.
    """

    previous: float
    current: float
    estimate: float
    interval: Interval
    p_worse: float

    def to_dict(self) -> dict:
        def clean(value: float) -> float | None:
            return float(value) if math.isfinite(value) else None

        return {
            "estimate": clean(self.estimate),
            "interval": [clean(self.interval.lower), clean(self.interval.upper)],
            "p_worse": clean(self.p_worse),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """Result of :func:`compare`.

    Attributes
    ----------
    previous, current : ConfusionMatrix
        The two rounds' labeled counts.
    k_previous, k_current : float
        Each round's imbalance ratio ``N1/N0``.
    precision_change : Change
        Newcombe hybrid score interval (method 10).
    recall_change : Change
        Monte-Carlo interval from the two posteriors.
    confidence : float
    replicates : int
        Posterior draws per round.
    prior : Prior
        Prior used for both posteriors.
    warnings : tuple of str
        Plain-language cautions (undefined estimates, ...).
    corrected : (bool, bool)
        Whether the previous and the current round carry the finite population
        correction (their lists' own values are compared).
    """

    previous: ConfusionMatrix
    current: ConfusionMatrix
    k_previous: float
    k_current: float
    precision_change: Change
    recall_change: Change
    confidence: float
    replicates: int
    prior: Prior
    warnings: tuple[str, ...]
    corrected: tuple[bool, bool] = (False, False)

    def round_estimates(self, which: str) -> dict[str, object]:
        """``{tp, fp, fn, tn, k, precision, recall}`` of the ``"previous"`` or ``"current"``
        round (each side of the comparison, shown with it)."""
        matrix, k = (
            (self.previous, self.k_previous)
            if which == "previous"
            else (self.current, self.k_current)
        )
        return {
            "tp": matrix.tp,
            "fp": matrix.fp,
            "fn": matrix.fn,
            "tn": matrix.tn,
            "k": k,
            "precision": getattr(self.precision_change, which),
            "recall": getattr(self.recall_change, which),
        }

    def to_dict(self) -> dict:
        """The ``prplanner compare --json`` document (its JSON contract) plus ``warnings``."""
        return {
            "previous": self.round_estimates("previous"),
            "current": self.round_estimates("current"),
            "precision_change": self.precision_change.to_dict(),
            "recall_change": self.recall_change.to_dict(),
            "fpc": list(self.corrected),
            "warnings": list(self.warnings),
        }

    def to_rows(self) -> list[tuple[str, float | None, float | None, float | None, float | None]]:
        """``(metric, change, lower, upper, p_worse)`` rows for Excel and the GUI."""
        rows = []
        for name, change in (("precision", self.precision_change), ("recall", self.recall_change)):
            data = change.to_dict()
            rows.append((name, data["estimate"], *data["interval"], data["p_worse"]))
        return rows


def newcombe_difference(
    successes_1: int,
    trials_1: int,
    successes_2: int,
    trials_2: int,
    confidence: float = 0.95,
    fpc: tuple[float, float] = (1.0, 1.0),
) -> Interval:
    """Newcombe's hybrid score interval for ``p2 - p1`` (Newcombe 1998, method 10).

    Each proportion's Wilson interval ``(l, u)`` supplies the variance on the side where
    the difference moves towards it; no continuity correction. ``fpc`` holds each
    proportion's finite population correction (methods §8): its Wilson interval is then
    that of ``n/f`` trials, as the evaluation quotes it.
    """
    for label, successes, trials in (
        ("first", successes_1, trials_1),
        ("second", successes_2, trials_2),
    ):
        successes = validation.count(f"successes of the {label} proportion", successes)
        trials = validation.whole_at_least(f"trials of the {label} proportion", trials, 1)
        if successes > trials:
            raise InputError(f"the {label} proportion has {successes} successes in {trials} trials")
    # wilson_precision reads only the predicted-positive stratum; the other is a placeholder.
    first = ConfusionMatrix(tp=successes_1, fp=trials_1 - successes_1, fn=0, tn=1)
    second = ConfusionMatrix(tp=successes_2, fp=trials_2 - successes_2, fn=0, tn=1)
    p1, p2 = successes_1 / trials_1, successes_2 / trials_2
    w1 = wilson_precision(first, confidence, (fpc[0], 1.0))
    w2 = wilson_precision(second, confidence, (fpc[1], 1.0))
    difference = p2 - p1
    lower = difference - math.hypot(p2 - w2.lower, w1.upper - p1)
    upper = difference + math.hypot(w2.upper - p2, p1 - w1.lower)
    return Interval(lower=lower, upper=upper, method="newcombe_hybrid_score")


def compare(
    previous: ConfusionMatrix,
    current: ConfusionMatrix,
    *,
    k_previous: float,
    k_current: float,
    confidence: float = 0.95,
    replicates: int = DEFAULT_REPLICATES,
    seed=None,
    prior: Prior | None = None,
    corrected: tuple[Population | None, Population | None] = (None, None),
) -> Comparison:
    """Change in precision and recall from ``previous`` to ``current``.

    Parameters
    ----------
    previous, current : ConfusionMatrix
        The two rounds' labeled counts (independent samples).
    k_previous, k_current : float
        Each round's imbalance ratio ``N1/N0`` (the population may have moved).
    confidence : float
        Level in (0.5, 1).
    replicates : int
        Posterior draws per round (>= 1000).
    seed : int, Generator or None
    prior : Prior, optional
        Prior of both posteriors; default Jeffreys (0.5 per cell).
    corrected : pair of Population or None
        The population of the previous and of the current round when its intervals carry
        the finite population correction (both counts known), else None: the change is
        then that of the strata's own precision and recall (module docstring).

    Returns
    -------
    Comparison
    """
    for name, matrix in (("previous", previous), ("current", current)):
        if not isinstance(matrix, ConfusionMatrix):
            raise InputError(f"{name} must be a ConfusionMatrix, got {type(matrix).__name__}")
        matrix.require_both_strata()
    k_previous = validation.positive("k of the previous round", k_previous)
    k_current = validation.positive("k of the current round", k_current)
    confidence = validation.confidence(confidence)
    replicates = validation.whole_at_least(
        "replicates", replicates, 1000, validation.MAX_REPLICATES
    )
    prior = Prior.jeffreys() if prior is None else prior
    rng = resampling.as_generator(seed)
    warnings: list[str] = []

    estimates = [
        point_estimates(previous, k_previous),
        point_estimates(current, k_current),
    ]
    if not isinstance(corrected, tuple | list) or len(corrected) != 2:
        raise InputError("corrected must be a pair: the previous and the current population")
    fpc = []
    for name, matrix, population, k in zip(
        ("previous", "current"),
        (previous, current),
        corrected,
        (k_previous, k_current),
        strict=True,
    ):
        if population is None:
            fpc.append(1.0)
            continue
        if not isinstance(population, Population):
            raise InputError(
                f"the {name} round's population must be a Population, got "
                f"{type(population).__name__}"
            )
        # The completion draws the unlabeled items of these lists; recall weighs the strata
        # by k: both must be the same lists.
        if not math.isclose(population.k, k, rel_tol=1e-9):
            raise InputError(
                f"the {name} round's k ({k:g}) is not its population's N1/N0 ({population.k:g})"
            )
        fpc.append(population.fpc_factors(matrix.n_pos, matrix.n_neg)[0])

    posterior_draws = []
    for matrix, k, population in (
        (previous, k_previous, corrected[0]),
        (current, k_current, corrected[1]),
    ):
        post = prior.posterior(matrix)
        pi1 = rng.beta(post.z11, post.z01, size=replicates)
        pi0 = rng.beta(post.z10, post.z00, size=replicates)
        if population is not None and population.strata is not None:
            pi1, pi0 = finite_population_rates(pi1, pi0, matrix, population.strata, rng)
        posterior_draws.append((pi1, recall_from_rates(pi1, pi0, k)))

    precision_interval = newcombe_difference(
        previous.tp, previous.n_pos, current.tp, current.n_pos, confidence, (fpc[0], fpc[1])
    )
    precision_change = Change(
        previous=estimates[0].precision,
        current=estimates[1].precision,
        estimate=estimates[1].precision - estimates[0].precision,
        interval=precision_interval,
        p_worse=_chance_lower(posterior_draws[1][0] - posterior_draws[0][0]),
    )

    recall_difference = posterior_draws[1][1] - posterior_draws[0][1]
    defined = np.isfinite(recall_difference)
    if not defined.all():
        warnings.append(
            f"{int((~defined).sum()):,} posterior draws gave an undefined recall and were left out"
        )
    if defined.any():
        lower, upper = resampling.percentile_interval(recall_difference[defined], confidence)
        p_worse = _chance_lower(recall_difference[defined])
    else:
        lower = upper = p_worse = float("nan")
    recall_change = Change(
        previous=estimates[0].recall,
        current=estimates[1].recall,
        estimate=estimates[1].recall - estimates[0].recall,
        interval=Interval(lower=lower, upper=upper, method="posterior_mc"),
        p_worse=p_worse,
    )
    for label, estimate in (("previous", estimates[0]), ("current", estimates[1])):
        if not math.isfinite(estimate.recall):
            warnings.append(
                f"the {label} round labeled no actual positive (TP = FN = 0), so its recall "
                "and the recall change estimate are undefined; the interval and p_worse come "
                "from the posterior alone"
            )
    return Comparison(
        previous=previous,
        current=current,
        k_previous=k_previous,
        k_current=k_current,
        precision_change=precision_change,
        recall_change=recall_change,
        confidence=confidence,
        replicates=replicates,
        prior=prior,
        warnings=tuple(warnings),
        corrected=(corrected[0] is not None, corrected[1] is not None),
    )


def _chance_lower(differences: np.ndarray) -> float:
    """The posterior probability that the current value is below the previous one, a tie
    counting half: the values of a small list labeled in part are counts, so two draws can
    be equal, and neither 'worse' nor 'not worse' may claim the ties."""
    return float(np.mean(differences < 0) + 0.5 * np.mean(differences == 0))


def placed_dates(rounds: Iterable[tuple[Hashable, dt.date | None]]) -> list[dt.date]:
    """Where each of ``rounds`` (``(classifier, date)`` in sheet order) stands in time.

    A dated round stands at its date. A round without a date stands at the latest date of
    its classifier's rounds above it (``date.min`` when none is above): it comes after the
    rounds above it, where the lead added it, and ties go by sheet order. The History tab,
    the report, the comparisons and "the most recent round" all order rounds by this one
    rule (fuzz 17: an undated round was the latest round to one and the earliest to
    another).
    """
    latest: dict[Hashable, dt.date] = {}
    placed = []
    for classifier, date in rounds:
        if date is None:
            placed.append(latest.get(classifier, dt.date.min))
            continue
        day = date.date() if isinstance(date, dt.datetime) else date
        latest[classifier] = max(day, latest.get(classifier, day))
        placed.append(day)
    return placed


def history_order(rounds: Sequence[tuple[Hashable, dt.date | None]]) -> list[int]:
    """Positions of ``rounds`` (``(classifier, date)`` in sheet order) as a history lists
    them: each classifier's rounds together, in the order the classifiers first come,
    each by :func:`placed_dates`, then by sheet order (the History tab's table and the
    report's charts)."""
    placed = placed_dates(rounds)
    first: dict[Hashable, int] = {}
    for classifier, _ in rounds:
        first.setdefault(classifier, len(first))
    return sorted(range(len(rounds)), key=lambda at: (first[rounds[at][0]], placed[at], at))


def consecutive_pairs(
    rounds: Iterable[tuple[int, Hashable, dt.date | None]],
) -> list[tuple[int, int]]:
    """``(previous, current)`` indices of consecutive rounds of one classifier.

    ``rounds`` holds ``(index, classifier, date)`` of each round that can be compared, in
    sheet order. Within a classifier, rounds are ordered by :func:`placed_dates` (a round
    without a date after the rounds above it), then by sheet order.
    """
    entries = list(rounds)
    placed = placed_dates((classifier, date) for _, classifier, date in entries)
    by_classifier: dict[Hashable, list[tuple[dt.date, int, int]]] = {}
    for position, ((index, classifier, _), day) in enumerate(zip(entries, placed, strict=True)):
        by_classifier.setdefault(classifier, []).append((day, position, index))
    pairs: list[tuple[int, int]] = []
    for group in by_classifier.values():
        ordered = sorted(group)
        pairs.extend((before[2], after[2]) for before, after in itertools.pairwise(ordered))
    return pairs


def change_verdict(lower: float, upper: float, worse: float | None) -> str:
    """A change in words: beyond sampling noise (its interval excludes 0), or not, and then
    whether a decline or a rise is still likely (said, so that "may not be a real change"
    never sits beside "96 % chance it got worse")."""
    if lower > 0 or upper < 0:
        return "more than sampling noise"
    # "More likely a decline than not" undersold a 95 % chance (trial 19): at 90 % or more
    # the words say probably, and why it is still not called beyond noise.
    if worse is not None and worse >= 0.9:
        return "probably a decline, though this range still includes no change"
    if worse is not None and worse <= 0.1:
        return "probably a rise, though this range still includes no change"
    return "within sampling noise: it may not be a real change"
