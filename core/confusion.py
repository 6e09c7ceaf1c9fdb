"""Confusion matrices, populations and the truth relations of methods §2 (Eq 1, 2, 9).

Notation (methods §2): ``tp = n11``, ``fp = n01`` (the predicted-positive sample, ``n1``),
``fn = n10``, ``tn = n00`` (the predicted-negative sample, ``n0``); ``pi1`` = precision,
``pi0`` = false omission rate, ``k = N1/N0``.

The rate functions accept scalars or numpy arrays (the bootstrap and the simulations call
them on arrays of replicates) and follow IEEE rules: a recall with ``pi1 = 0`` is 0, one with
``pi1 = pi0 = 0`` is NaN; callers that show numbers to users decide what NaN means.

References
----------
* Shang et al. 2023: Eq 1, Eq 2 and Eq 9 (stratum sizes, recall and FPR from the stratum
  rates, implied false omission rate).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core import validation
from core.errors import InputError, named


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfusionMatrix:
    """Labeled counts of one round.

    Attributes
    ----------
    tp, fp : int
        Actual positives / negatives among the items sampled from the predicted-positive
        stratum (``n11``, ``n01``).
    fn, tn : int
        Actual positives / negatives among the items sampled from the predicted-negative
        stratum (``n10``, ``n00``).
    """

    tp: int
    fp: int
    fn: int
    tn: int

    def __post_init__(self) -> None:
        for name in ("tp", "fp", "fn", "tn"):
            object.__setattr__(self, name, validation.count(name.upper(), getattr(self, name)))

    @classmethod
    def from_sequence(cls, values) -> ConfusionMatrix:
        """From ``(tp, fp, fn, tn)``, the paper's ``(n11, n01, n10, n00)`` order."""
        values = tuple(values)
        if len(values) != 4:
            raise InputError(f"a confusion matrix needs 4 counts (TP, FP, FN, TN), got {values!r}")
        tp, fp, fn, tn = values
        return cls(tp=tp, fp=fp, fn=fn, tn=tn)

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.tp, self.fp, self.fn, self.tn)

    @property
    def n_pos(self) -> int:
        """Items labeled from the predicted-positive stratum, ``n1 = TP + FP``."""
        return self.tp + self.fp

    @property
    def n_neg(self) -> int:
        """Items labeled from the predicted-negative stratum, ``n0 = FN + TN``."""
        return self.fn + self.tn

    @property
    def total(self) -> int:
        return self.n_pos + self.n_neg

    @property
    def has_zero_cell(self) -> bool:
        return 0 in self.as_tuple()

    @property
    def smallest_cell(self) -> int:
        return min(self.as_tuple())

    def require_both_strata(self) -> ConfusionMatrix:
        """Raise unless both strata hold at least one labeled item (needed for any estimate)."""
        if self.n_pos == 0:
            raise InputError(
                "the predicted-positive sample is empty (TP + FP = 0): label some "
                "predicted positives"
            )
        if self.n_neg == 0:
            raise InputError(
                "the predicted-negative sample is empty (FN + TN = 0): label some "
                "predicted negatives"
            )
        return self

    @property
    def pi1_hat(self) -> float:
        """``TP/n1``, the precision estimate (methods §2)."""
        self.require_both_strata()
        return self.tp / self.n_pos

    @property
    def pi0_hat(self) -> float:
        """``FN/n0``, the false-omission-rate estimate (methods §2)."""
        self.require_both_strata()
        return self.fn / self.n_neg

    @property
    def sample_k(self) -> float:
        """``n1/n0``: the imbalance ratio a plain random sample estimates (methods §2)."""
        self.require_both_strata()
        return self.n_pos / self.n_neg


@dataclass(frozen=True, slots=True, kw_only=True)
class Population:
    """The unlabeled population split by the classifier's prediction.

    Attributes
    ----------
    k : float
        Imbalance ratio ``N1/N0`` (> 0).
    predicted_positive, predicted_negative : int or None
        ``N1`` and ``N0`` when known (needed for the finite population correction and for
        stratum weights); ``k`` then equals their ratio.
    """

    k: float
    predicted_positive: int | None = None
    predicted_negative: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", validation.imbalance("k", self.k))
        given = (self.predicted_positive is not None, self.predicted_negative is not None)
        if any(given) and not all(given):
            raise InputError(
                "give both population counts (predicted positive and negative) or neither"
            )
        if all(given):
            n1 = validation.count("predicted-positive population", self.predicted_positive)
            n0 = validation.count("predicted-negative population", self.predicted_negative)
            if n1 == 0 or n0 == 0:
                raise InputError(f"population counts must be > 0, got {n1} and {n0}")
            object.__setattr__(self, "predicted_positive", n1)
            object.__setattr__(self, "predicted_negative", n0)
            if not np.isclose(self.k, n1 / n0, rtol=1e-9):
                raise InputError(
                    f"k = {self.k} does not match the population counts {n1}/{n0} = {n1 / n0}"
                )

    @classmethod
    def from_counts(cls, predicted_positive, predicted_negative) -> Population:
        n1 = validation.count("predicted-positive population", predicted_positive)
        n0 = validation.count("predicted-negative population", predicted_negative)
        if n1 == 0 or n0 == 0:
            raise InputError(f"population counts must be > 0, got {n1} and {n0}")
        return cls(k=n1 / n0, predicted_positive=n1, predicted_negative=n0)

    @classmethod
    def from_k(cls, k) -> Population:
        return cls(k=k)

    @property
    def has_counts(self) -> bool:
        return self.predicted_positive is not None

    @property
    def strata(self) -> tuple[int, int] | None:
        """``(N1, N0)``, the predicted-positive and predicted-negative counts, when known."""
        if self.predicted_positive is None or self.predicted_negative is None:
            return None
        return self.predicted_positive, self.predicted_negative

    @property
    def predicted_positive_share(self) -> float:
        """``k/(k+1)``: the share of the population the classifier flags."""
        return self.k / (self.k + 1.0)

    def fpc_factors(self, n_pos: int, n_neg: int) -> tuple[float, float]:
        """Finite population corrections ``(N - n)/(N - 1)`` for each stratum's variance.

        Requires both population counts; a sample larger than its stratum is refused.
        """
        if not self.has_counts:
            raise InputError(
                "the finite population correction needs both population counts "
                f"({named('population')}), not only k"
            )
        self.require_sample_fits(n_pos, n_neg)
        strata = self.strata
        assert strata is not None  # has_counts was checked above
        factors = []
        for n, big_n in zip((n_pos, n_neg), strata, strict=True):
            factors.append((big_n - n) / (big_n - 1) if big_n > 1 else 0.0)
        return factors[0], factors[1]

    def require_sample_fits(self, n_pos: int, n_neg: int) -> None:
        """Refuse a labeled sample larger than its stratum (when the counts are known).

        Items are labeled without replacement, so a stratum of ``N`` items cannot give more
        than ``N`` labels: more means the counts or the population were mistyped.
        """
        strata = self.strata
        if strata is None:
            return
        for label, n, big_n in oversized_strata((n_pos, n_neg), strata):
            raise InputError(
                f"the {label} sample ({n:,} labeled items) is larger than its population "
                f"({big_n:,} items); check the counts and the population, a stratum "
                "cannot give more labels than it has items"
            )


def oversized_strata(
    labeled: tuple[int, int], strata: tuple[int | None, int | None]
) -> list[tuple[str, int, int]]:
    """``(stratum, labeled, population)`` for each stratum given more labels than it has
    items (``"predicted-positive"``, ``"predicted-negative"``; unknown sizes pass): items
    are labeled without replacement, so more means a mistyped count or population."""
    return [
        (label, n, big_n)
        for label, n, big_n in zip(
            ("predicted-positive", "predicted-negative"), labeled, strata, strict=True
        )
        if big_n is not None and n > big_n
    ]


# --- truth relations (vectorized) ----------------------------------------------------------


def recall_from_rates(pi1, pi0, k):
    """Recall ``1/(1 + pi0/(k*pi1))`` (Eq 2)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / (1.0 + np.divide(pi0, np.multiply(k, pi1)))


def fpr_from_rates(pi1, pi0, k):
    """False positive rate ``1/(1 + (1-pi0)/(k*(1-pi1)))`` (methods §2)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / (1.0 + np.divide(np.subtract(1.0, pi0), np.multiply(k, np.subtract(1.0, pi1))))


def prevalence_from_rates(pi1, pi0, k):
    """Share of actual positives in the population, ``(k*pi1 + pi0)/(k + 1)`` (methods §2)."""
    return (np.multiply(k, pi1) + pi0) / (np.add(k, 1.0))


def pi0_from_precision_recall(precision, recall, k):
    """False omission rate implied by precision and recall, ``k*pi1*(1/recall - 1)`` (Eq 9)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.multiply(np.multiply(k, precision), np.divide(1.0, recall) - 1.0)


def planning_rates(precision: float, recall: float, k: float) -> tuple[float, float, float]:
    """Validated ``(pi1, pi0, k)`` from planning values: ``pi1 = precision`` and ``pi0`` by
    Eq 9, which must fall inside (0, 1) for the three values to describe one classifier.

    Raises
    ------
    InputError
        A value outside its range, or a combination whose implied ``pi0`` is not a rate.
    """
    k = validation.imbalance("k", k)
    pi1 = validation.open_unit("precision", precision)
    recall = validation.open_unit("recall", recall)
    pi0 = float(pi0_from_precision_recall(pi1, recall, k))
    if not 0.0 < pi0 < 1.0:
        raise InputError(
            f"precision {pi1:g}, recall {recall:g} and k {k:g} imply a false omission rate "
            f"of {pi0:.4g} (Eq 9), outside (0, 1): these three cannot all hold"
        )
    return pi1, pi0, k


def f_beta(precision, recall, beta: float = 1.0):
    """``(1+beta^2) P R / (beta^2 P + R)``; 0 when both are 0."""
    b2 = beta * beta
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.add(np.multiply(b2, precision), recall)
        value = np.divide((1.0 + b2) * np.multiply(precision, recall), denominator)
    return np.where(np.asarray(denominator) == 0, 0.0, value)[()]


def stratum_sizes(v, k: float, s: float) -> tuple[int, int]:
    """Integer sizes ``n1 = round(v*k*s/(k*s+1))``, ``n0 = v - n1`` (Eq 1, methods §2).

    Rounding is half up (``floor(x + 1/2)``), as in :mod:`core.ensemble`, not Python's
    half-to-even: ``v = 50, k = 1/19, s = 1`` gives ``x = 2.5`` and ``n1 = 3``. ``x`` is first
    rounded to 9 decimals so a half that lands a few ulps below ``.5`` in floating point
    still rounds up.
    """
    v = validation.count("v", v)
    k = validation.imbalance("k", k)
    s = validation.oversampling("s", s)
    n1 = math.floor(round(v * k * s / (k * s + 1.0), 9) + 0.5)
    return int(n1), int(v - n1)


def stratum_sizes_continuous(v, k, s):
    """Real-valued ``(n1, n0)`` of Eq 1 for smooth curves (vectorized over ``v`` and ``s``)."""
    ks = np.multiply(k, s)
    return np.multiply(v, ks) / (ks + 1.0), np.divide(v, ks + 1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class PointEstimates:
    """Plug-in estimates of one labeled round (methods §2).

    Attributes
    ----------
    pi1, pi0 : float
        ``TP/n1`` and ``FN/n0``.
    precision, recall, f1, fpr : float
        Precision ``= pi1``; recall and FPR by Eq 2 with the design's ``k``; F1 from them.
    prevalence : float
        Estimated share of actual positives in the population, ``(k*pi1 + pi0)/(k+1)``.
    k : float
        The ratio used (given, or ``n1/n0`` for a plain random sample).
    """

    pi1: float
    pi0: float
    precision: float
    recall: float
    f1: float
    fpr: float
    prevalence: float
    k: float

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}


def point_estimates(matrix: ConfusionMatrix, k: float | None = None) -> PointEstimates:
    """Estimates of a stratified round with ratio ``k``, or of a random sample (``k=None``).

    Recall uses the general form ``1/(1 + pi0^/(k*pi1^))`` (methods §2), never
    ``TP/(TP + s*FN)``, which holds only when ``n1/n0 = k*s`` exactly.
    """
    matrix.require_both_strata()
    k = matrix.sample_k if k is None else validation.imbalance("k", k)
    pi1, pi0 = matrix.pi1_hat, matrix.pi0_hat
    recall = float(recall_from_rates(pi1, pi0, k))
    if matrix.tp == 0 and matrix.fn == 0:
        recall = float("nan")  # no actual positive was labeled: recall is undefined
    return PointEstimates(
        pi1=pi1,
        pi0=pi0,
        precision=pi1,
        recall=recall,
        f1=float(f_beta(pi1, recall)) if recall == recall else float("nan"),
        fpr=float(fpr_from_rates(pi1, pi0, k)) if matrix.fp + matrix.tn > 0 else float("nan"),
        prevalence=float(prevalence_from_rates(pi1, pi0, k)),
        k=k,
    )
