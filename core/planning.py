"""Optimal over-sampling ratio, width curves and sample-size planning (methods §7, 1.6).

Everything here rests on one observation: every margin of error in docs/methods.md is a
monotone function of a variance with the shape ::

    constant + coefficient_pos * h1(n1) + coefficient_neg * h0(n0)

where ``h(n) = 1/n`` (sampling with replacement, as in the paper) or, with the finite
population correction, ``h(n) = (N - n)/(n*(N - 1))`` (the binomial variance times
``(N - n)/(N - 1)``).

* Frequentist precision (Eq 10, Wald Eq 3): constant 0, ``pi1*(1-pi1)`` on ``h1``.
* Frequentist recall (Eq 10, delta Eq 5): the squared standard error of ``log(x)``,
  ``(1-pi1)/pi1 = 1/Omega1`` on ``h1`` and ``(1-pi0)/pi0 = 1/Omega0`` on ``h0``.
* Bayesian predictive precision (Eq 6): ``Var(pi1)`` plus ``E[pi1(1-pi1)]`` on ``h1``.
* Bayesian predictive recall (Eq 8): ``Vu`` = the ``n``-free part plus ``1/Theta1`` on
  ``h1`` and ``1/Theta0`` on ``h0``.

Minimising ``a/n1 + b/n0`` with ``n1 = v*k*s/(k*s+1)``, ``n0 = v/(k*s+1)`` over ``s`` gives
``s* = (1/k)*sqrt(a/b)``: Theorem 1 with ``(a, b) = (1/Omega1, 1/Omega0)`` and Theorem 2
with ``(1/Theta1, 1/Theta0)``. :class:`MarginModel` holds these constants once, so margins,
width curves and the integer searches all evaluate the same expressions.

Sizes, rounding and the ``s`` reported
--------------------------------------
* The paper's procedure (:func:`make_plan` with ``method="paper"``): ``s = max(s*, 1)``;
  ``n1`` is the smallest integer whose recall margin meets the target when
  ``n0 = n1/(k*s)`` (real valued, as in Eq 11); then ``n0 = ceil(n1/(k*s))``; if the
  precision margin misses its target, ``n1`` alone is raised to the smallest integer that
  meets it (``n0`` stays: the precision margin does not depend on it, and a larger ``n1``
  only shrinks the recall margin).
* The joint optimum (``method="optimal"``) searches integer ``(n1, n0)`` exactly.
* In both, the reported ``s`` is the realized ratio ``n1/(k*n0)``. A fixed design
  (``s`` and ``v`` given) reports the ``s`` it was given and takes its integer sizes from
  Eq 1 (:func:`core.confusion.stratum_sizes`).

Keeping the promise
-------------------
Both procedures plan on expected values: Eq 10 with the planning values plugged in. A
labeled round's own margins scatter around those, so a margin planned just under its
target is met only about half the time. Every :class:`Plan` therefore carries its exact
assurance (:mod:`core.assurance`): the chance that the round meets each margin and both.
Asked for a chance ``G`` (``assurance_target``), :func:`make_plan` also finds the cheapest
design meeting both margins with probability at least ``G``
(:func:`assured_sizes_at_ratio`, :func:`assured_sizes_optimal`).

References
----------
* Shang et al. 2023: Theorem 1 and Theorem 2 (optimal ratio s*), Eq 10 (margins of a
  design), Eq 11 (planning procedure), Figures 1 and 3 (width curves).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from core import validation
from core.assurance import Assurance, AssuranceModel
from core.bayes import Posterior, Prior
from core.confusion import (
    ConfusionMatrix,
    Population,
    pi0_from_precision_recall,
    planning_rates,
    point_estimates,
    recall_from_rates,
    stratum_sizes,
)
from core.errors import InputError, named

#: Prior strengths ``w`` drawn in the width-curve figure (methods §7, the paper's Figure 1).
DEFAULT_PRIOR_STRENGTHS: tuple[float, ...] = (5.0, 10.0, 100.0)
#: Points on the log grid of ``s`` for the width curves.
DEFAULT_GRID_POINTS = 400
METHODS = ("paper", "optimal")
#: Rows of ``n1`` scanned at once by the joint-optimum search (bounded memory).
_SCAN_CHUNK = 1 << 18
#: Largest stratum sample the assured-plan search takes on (a few seconds at this size).
MAX_ASSURED_STRATUM = 10**10
#: Largest stratum sample the chance of meeting the margins is computed for (under a second
#: and 0.2 GB at this size; 1.5 GB at 10^14).
MAX_CHANCE_STRATUM = 10**12


# --- Theorem 1 and 2 ------------------------------------------------------------------------


def odds(probability):
    """``Omega = pi/(1 - pi)`` (methods §7), vectorized."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(probability, np.subtract(1.0, probability))


def optimal_ratio_from_rates(pi1, pi0, k):
    """Theorem 1: ``s* = (1/k)*sqrt(Omega0/Omega1)`` with ``Omega = pi/(1-pi)``.

    Vectorized with numpy broadcasting and unvalidated: values outside ``0 < pi < 1`` or
    ``k <= 0`` give NaN (use :func:`optimal_ratio` for a checked scalar).
    """
    pi1 = np.asarray(pi1, dtype=float)
    pi0 = np.asarray(pi0, dtype=float)
    k = np.asarray(k, dtype=float)
    valid = (pi1 > 0) & (pi1 < 1) & (pi0 > 0) & (pi0 < 1) & (k > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.sqrt(odds(pi0) / odds(pi1)) / k
    return np.where(valid, ratio, np.nan)[()]


def optimal_ratio_curves(inverse_k, precision, recall):
    """``s*`` of Theorem 1 over ``1/k`` for several (precision, recall) pairs (Figure 3).

    Parameters
    ----------
    inverse_k : array_like, shape (m,)
        Values of ``1/k`` (the x axis of Figure 3).
    precision, recall : array_like, shape (p,)
        One (precision, recall) pair per curve.

    Returns
    -------
    ndarray, shape (p, m)
        ``s*`` with ``pi0`` from Eq 9; NaN where that ``pi0`` is not inside (0, 1).
    """
    k = 1.0 / np.asarray(inverse_k, dtype=float)[np.newaxis, :]
    precision = np.asarray(precision, dtype=float)[:, np.newaxis]
    recall = np.asarray(recall, dtype=float)[:, np.newaxis]
    pi0 = pi0_from_precision_recall(precision, recall, k)
    return optimal_ratio_from_rates(precision, pi0, k)


def optimal_ratio(*, k: float, precision: float, recall: float) -> float:
    """Theorem 1 from the planning values, ``pi1 = precision`` and ``pi0`` by Eq 9.

    >>> round(optimal_ratio_from_rates(0.863, 0.0223, 0.033), 3)  # the paper's example
    1.823
    """
    pi1, pi0, k = _rates(k, precision, recall)
    return float(optimal_ratio_from_rates(pi1, pi0, k))


def optimal_ratio_bayes(posterior: Posterior, k: float) -> float:
    """Theorem 2: ``s* = (1/k)*sqrt(Theta0/Theta1)`` from a posterior (methods §7).

    It minimizes ``Vu`` of Eq 8 over ``s`` for a fixed future round size ``v``.
    """
    k = validation.imbalance("k", k)
    theta1, theta0 = posterior.theta()
    return math.sqrt(theta0 / theta1) / k


def _rates(k, precision, recall) -> tuple[float, float, float]:
    """Validated ``(pi1, pi0, k)`` from precision, recall and ``k`` (Eq 9)."""
    return planning_rates(precision, recall, k)


# --- margins --------------------------------------------------------------------------------


def log_ratio_half_width(x, sd, z):
    """Half the width of ``[1/(1+x*exp(z*sd)), 1/(1+x*exp(-z*sd))]`` (Eq 4 / Eq 7).

    The interval is asymmetric around ``1/(1+x)``; half its width is what a "+- margin"
    of recall means for it.
    """
    t = np.exp(np.multiply(z, sd))
    return 0.5 * (1.0 / (1.0 + np.divide(x, t)) - 1.0 / (1.0 + np.multiply(x, t)))


def _log_ratio_sd_for_half_width(x: float, half_width: float, z: float) -> float:
    """The ``sd`` at which :func:`log_ratio_half_width` equals ``half_width`` (< 1/2).

    With ``t = exp(z*sd)`` the half width is ``x*(t^2-1)/(2*(t+x)*(1+x*t))``, increasing
    from 0 (t = 1) to 1/2 (t -> inf); equating gives the quadratic
    ``x*(1-2H)*t^2 - 2H*(1+x^2)*t - x*(1+2H) = 0``, whose positive root is taken.
    """
    h = half_width
    a = x * (1.0 - 2.0 * h)
    b = 2.0 * h * (1.0 + x * x)
    c = x * (1.0 + 2.0 * h)
    t = (b + math.sqrt(b * b + 4.0 * a * c)) / (2.0 * a)
    return math.log(t) / z


def precision_margin(pi1, n_pos, confidence: float = 0.95, fpc_pos=1.0):
    """Eq 10: ``eP = z*sqrt(pi1*(1-pi1)/n1)``, times ``sqrt(fpc)`` (vectorized)."""
    z = validation.z_value(confidence)
    return z * np.sqrt(np.multiply(pi1, np.subtract(1.0, pi1)) / n_pos * fpc_pos)


def recall_margin(pi1, pi0, k, n_pos, n_neg, confidence: float = 0.95, fpc=(1.0, 1.0)):
    """Eq 10: ``eR = z*x/(1+x)^2*sqrt((1-pi1)/(n1*pi1) + (1-pi0)/(n0*pi0))`` (vectorized).

    ``x = pi0/(k*pi1)``; each stratum's term is multiplied by its FPC factor
    ``(N - n)/(N - 1)`` when ``fpc`` is given.
    """
    z = validation.z_value(confidence)
    pi1 = np.asarray(pi1, dtype=float)
    pi0 = np.asarray(pi0, dtype=float)
    x = pi0 / (np.multiply(k, pi1))
    se = np.sqrt((1.0 - pi1) / (n_pos * pi1) * fpc[0] + (1.0 - pi0) / (n_neg * pi0) * fpc[1])
    return z * x / (1.0 + x) ** 2 * se


def _h(n, population: int | None):
    """``1/n``, or ``(N - n)/(n*(N - 1))`` = FPC factor over ``n`` (0 for a census)."""
    # An empty stratum gives inf, refused by the callers with a message; numpy's warning
    # printed above that message broke the command line's one-line error (fuzz 16).
    with np.errstate(divide="ignore"):
        if population is None:
            return 1.0 / np.asarray(n, dtype=float)
        n = np.asarray(n, dtype=float)
        # clamp: the paper's real-valued n0 = n1/(k*s) may overshoot N0 by a rounding error
        return np.maximum(population - n, 0.0) / (n * max(population - 1, 1))


def _smallest_size(coefficient: float, budget: float, population: int | None) -> float:
    """Real lower bound on ``n`` from ``coefficient*h(n) <= budget`` (``inf`` if none)."""
    if coefficient <= 0.0:
        return 1.0
    if population is None:
        return coefficient / budget if budget > 0 else math.inf
    if budget < 0:
        return math.inf
    # (N - n)/(n (N - 1)) <= q  <=>  n >= N/(1 + q (N - 1))
    return population / (1.0 + budget / coefficient * max(population - 1, 1))


@dataclass(frozen=True, slots=True, kw_only=True)
class MarginModel:
    """Margins of error of a design as functions of ``(n1, n0)``.

    Variances take the form described in the module docstring. Build with
    :meth:`frequentist` (Eq 10) or :meth:`bayesian` (Eq 6-8).

    Attributes
    ----------
    k : float
        Imbalance ratio.
    confidence, z : float
        Confidence (credibility) level and its two-sided normal quantile.
    bayesian : bool
        False: Wald precision and delta-method recall margins (Eq 10). True: predictive
        margins, half the width of the Eq 6 and Eq 7 intervals.
    precision_constant, precision_coefficient : float
        ``Var = precision_constant + precision_coefficient*h1(n1)``.
    recall_constant, recall_coefficient_pos, recall_coefficient_neg : float
        ``sd^2 = recall_constant + recall_coefficient_pos*h1(n1)
        + recall_coefficient_neg*h0(n0)``, the variance of ``log x^``.
    ratio : float
        ``x = pi0/(k*pi1)`` (frequentist) or ``xb`` of Eq 7 (Bayesian); recall = 1/(1+x).
    population_pos, population_neg : int or None
        Stratum sizes ``N1``, ``N0`` when the finite population correction is applied.
    """

    k: float
    confidence: float
    z: float
    bayesian: bool
    precision_constant: float
    precision_coefficient: float
    recall_constant: float
    recall_coefficient_pos: float
    recall_coefficient_neg: float
    ratio: float
    population_pos: int | None = None
    population_neg: int | None = None

    @classmethod
    def frequentist(
        cls,
        *,
        pi1: float,
        pi0: float,
        k: float,
        confidence: float = 0.95,
        population: Population | None = None,
    ) -> MarginModel:
        """Eq 10 with the planning values plugged in; FPC when ``population`` is given."""
        pi1 = validation.open_unit("pi1", pi1)
        pi0 = validation.open_unit("pi0", pi0)
        k = validation.imbalance("k", k)
        return cls(
            k=k,
            confidence=validation.confidence(confidence),
            z=validation.z_value(confidence),
            bayesian=False,
            precision_constant=0.0,
            precision_coefficient=pi1 * (1.0 - pi1),
            recall_constant=0.0,
            recall_coefficient_pos=(1.0 - pi1) / pi1,
            recall_coefficient_neg=(1.0 - pi0) / pi0,
            ratio=pi0 / (k * pi1),
            **_population_fields(population),
        )

    @classmethod
    def bayesian_predictive(
        cls,
        *,
        posterior: Posterior,
        k: float,
        confidence: float = 0.95,
        population: Population | None = None,
    ) -> MarginModel:
        """Predictive margins of Eq 6-8 for a future round drawn from ``posterior``.

        Eq 6 splits as ``Var(pi1) + E[pi1(1-pi1)]/n1'`` and Eq 8 as an ``n``-free part plus
        ``1/(n1'*Theta1) + 1/(n0'*Theta0)``. With ``population`` the finite population
        correction multiplies the ``1/n`` (sampling) parts only: the posterior uncertainty
        about the rates does not shrink because the strata are finite.
        """
        k = validation.imbalance("k", k)
        z11, z01, z10, z00 = posterior.z11, posterior.z01, posterior.z10, posterior.z00
        sum1, sum0 = z11 + z01, z10 + z00
        theta1, theta0 = posterior.theta()
        return cls(
            k=k,
            confidence=validation.confidence(confidence),
            z=validation.z_value(confidence),
            bayesian=True,
            precision_constant=z11 * z01 / (sum1 * sum1 * (sum1 + 1.0)),
            precision_coefficient=z11 * z01 / (sum1 * (sum1 + 1.0)),
            recall_constant=z01 / (z11 * (sum1 + 1.0)) + z00 / (z10 * (sum0 + 1.0)),
            recall_coefficient_pos=1.0 / theta1,
            recall_coefficient_neg=1.0 / theta0,
            ratio=(1.0 / k) * z10 * sum1 / (z11 * sum0),
            **_population_fields(population),
        )

    # evaluation (vectorized in n1, n0) ----------------------------------------------------

    def precision(self, n_pos):
        """Precision margin at ``n1`` (Eq 10 or half the Eq 6 interval)."""
        h1 = _h(n_pos, self.population_pos)
        return self.z * np.sqrt(self.precision_constant + self.precision_coefficient * h1)

    def recall_sd(self, n_pos, n_neg):
        """Standard deviation of ``log x^`` (``se`` of Eq 4/5, ``sqrt(Vu)`` of Eq 8)."""
        h1 = _h(n_pos, self.population_pos)
        h0 = _h(n_neg, self.population_neg)
        return np.sqrt(
            self.recall_constant
            + self.recall_coefficient_pos * h1
            + self.recall_coefficient_neg * h0
        )

    def recall(self, n_pos, n_neg):
        """Recall margin at ``(n1, n0)``: delta method (Eq 10) or half the Eq 7 width."""
        sd = self.recall_sd(n_pos, n_neg)
        if self.bayesian:
            return log_ratio_half_width(self.ratio, sd, self.z)
        x = self.ratio
        return self.z * x / (1.0 + x) ** 2 * sd

    def optimal_ratio(self) -> float:
        """``s*`` minimizing the recall variance at fixed ``v`` (Theorem 1 or 2)."""
        return math.sqrt(self.recall_coefficient_pos / self.recall_coefficient_neg) / self.k

    # inverses: the variance budget a target margin leaves ---------------------------------

    def precision_budget(self, target: float) -> float:
        """Largest ``precision_coefficient*h1(n1)`` meeting ``target`` (may be <= 0)."""
        return (target / self.z) ** 2 - self.precision_constant

    def recall_budget(self, target: float) -> float:
        """Largest ``coefficient_pos*h1 + coefficient_neg*h0`` meeting ``target``."""
        if self.bayesian:
            sd = _log_ratio_sd_for_half_width(self.ratio, target, self.z)
        else:
            x = self.ratio
            sd = target / (self.z * x / (1.0 + x) ** 2)
        return sd * sd - self.recall_constant

    def smallest_precision_sample(self, target: float) -> int | None:
        """Smallest integer ``n1`` with precision margin <= ``target`` (None: unreachable)."""
        bound = _smallest_size(
            self.precision_coefficient, self.precision_budget(target), self.population_pos
        )
        return _smallest_integer(lambda n: self.precision(n) <= target, bound, self.population_pos)

    def unlimited_margins(self) -> tuple[float, float]:
        """``(precision, recall)`` margins with every stratum censused (FPC) or with
        unlimited labels: the floor no design can beat (0 unless Bayesian)."""
        census_pos = self.population_pos if self.population_pos is not None else math.inf
        census_neg = self.population_neg if self.population_neg is not None else math.inf
        return float(self.precision(census_pos)), float(self.recall(census_pos, census_neg))


def _population_fields(population: Population | None) -> dict[str, int | None]:
    if population is None:
        return {}
    if not population.has_counts:
        raise InputError(
            "the finite population correction needs both population counts "
            f"({named('population')}), not only k"
        )
    return {
        "population_pos": population.predicted_positive,
        "population_neg": population.predicted_negative,
    }


def _smallest_integer(
    meets: Callable[[int], bool], hint: float, cap: int | None = None
) -> int | None:
    """Smallest integer ``n >= 1`` (``<= cap``) with ``meets(n)``, for a monotone ``meets``.

    ``hint`` is the closed-form real bound; the search gallops from ``ceil(hint)`` and
    bisects, so floating-point error in the closed form never decides the integer: the
    margin function itself does. Returns None when no ``n <= cap`` meets the target.
    """
    if not math.isfinite(hint):
        hint = cap if cap is not None else 1.0
    start = max(1, math.ceil(hint - 1e-9))
    if cap is not None:
        start = min(start, cap)
    if meets(start):
        good, step = start, 1
        while good - step >= 1 and meets(good - step):
            good -= step
            step *= 2
        bad = max(good - step, 0)
    else:
        bad, step = start, 1
        while True:
            candidate = bad + step
            if cap is not None and candidate >= cap:
                if not meets(cap):
                    return None
                good = cap
                break
            if meets(candidate):
                good = candidate
                break
            bad = candidate
            step *= 2
            if step > 1 << 62:
                return None
    while good - bad > 1:  # invariant: not meets(bad) (or bad == 0), meets(good)
        middle = (good + bad) // 2
        if meets(middle):
            good = middle
        else:
            bad = middle
    return good


# --- width curves (Figure 1) ------------------------------------------------------------------


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True, kw_only=True)
class WidthCurves:
    """Interval widths against the over-sampling ratio ``s`` at a fixed ``v`` (Figure 1).

    Row 0 is frequentist; the other rows are Bayesian predictive intervals, one per prior
    (in ``labels`` order). Arrays are read-only.

    Attributes
    ----------
    s : ndarray, shape (G,)
        The log grid of over-sampling ratios.
    v : float
        Total labels; sizes are the continuous Eq 1 values, so the curves are smooth.
    labels : tuple of str
        One name per row (``"frequentist"``, ``"prior strength 5"``, ...).
    precision_width, recall_width : ndarray, shape (C, G)
        Full widths: Wald (Eq 3) and Katz log-ratio (Eq 4, or the delta method Eq 5 if
        the model was built so) for row 0; Eq 6 and Eq 7 for the Bayesian rows.
    s_star : ndarray, shape (C,)
        Theorem 1 (row 0) and Theorem 2 (Bayesian rows): where each recall curve bottoms.
    precision_width_at_s_star, recall_width_at_s_star : ndarray, shape (C,)
        The widths at each row's ``s*`` (marker positions).
    confidence : float
        Confidence / credibility level of every interval.
    """

    s: np.ndarray
    v: float
    labels: tuple[str, ...]
    precision_width: np.ndarray
    recall_width: np.ndarray
    s_star: np.ndarray
    precision_width_at_s_star: np.ndarray
    recall_width_at_s_star: np.ndarray
    confidence: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WidthCurvesOverV:
    """Interval widths against the total labels ``v`` at a fixed ``s`` (rows as in
    :class:`WidthCurves`).

    Attributes
    ----------
    v : ndarray, shape (G,)
        Totals (real-valued; Eq 1 continuous sizes).
    s : float
        The fixed over-sampling ratio.
    labels : tuple of str
        One name per row.
    precision_width, recall_width : ndarray, shape (C, G)
        Full interval widths.
    confidence : float
        Confidence / credibility level.
    """

    v: np.ndarray
    s: float
    labels: tuple[str, ...]
    precision_width: np.ndarray
    recall_width: np.ndarray
    confidence: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WidthCurveModel:
    """Per-prior constants for the width curves, precomputed once (methods §7, Figure 1).

    The desktop rebuilds this when precision, recall, ``k``, the priors or the confidence
    change, and calls :meth:`over_s` / :meth:`over_v` on every slider move: those do a
    dozen numpy operations on ``(C, G)`` arrays and nothing else.

    Attributes
    ----------
    k, confidence, z : float
        Imbalance ratio, level and its normal quantile.
    labels : tuple of str
        Row names.
    s_star : ndarray, shape (C,)
        Theorem 1 / Theorem 2 per row.
    grid : ndarray, shape (G,)
        Default log grid of ``s`` covering ``1`` and every ``s*`` by at least a decade.
    """

    k: float
    confidence: float
    z: float
    labels: tuple[str, ...]
    s_star: np.ndarray
    grid: np.ndarray
    # (C, 1) columns of the variance decomposition, see MarginModel
    _precision_constant: np.ndarray
    _precision_coefficient: np.ndarray
    _recall_constant: np.ndarray
    _recall_coefficient_pos: np.ndarray
    _recall_coefficient_neg: np.ndarray
    _ratio: np.ndarray
    _delta_rows: np.ndarray  # (C, 1) bool: rows whose recall width is the delta method
    # 1/n1 and 1/n0 per unit of v on the default grid: (ks+1)/ks and ks+1
    _grid_inverse_pos: np.ndarray
    _grid_inverse_neg: np.ndarray
    _any_delta: bool = field(default=False)

    @classmethod
    def build(
        cls,
        *,
        k: float,
        precision: float,
        recall: float,
        confidence: float = 0.95,
        posteriors: Sequence[tuple[str, Posterior]] = (),
        strengths: Sequence[float] = DEFAULT_PRIOR_STRENGTHS,
        recall_interval: str = "katz_log",
        grid_points: int = DEFAULT_GRID_POINTS,
    ) -> WidthCurveModel:
        """Constants for a frequentist row, one row per given posterior and one per
        prior strength (``Prior.from_expected(precision, recall, k, w)``, no data yet).

        ``recall_interval`` is ``"katz_log"`` (Eq 4, default) or ``"delta"`` (Eq 5) for
        the frequentist row; both bottom at the same ``s*``.
        """
        pi1, pi0, k = _rates(k, precision, recall)
        if recall_interval not in ("katz_log", "delta"):
            raise InputError(
                f"recall_interval must be 'katz_log' or 'delta', got {recall_interval!r}"
            )
        grid_points = validation.whole_at_least("grid points", grid_points, 2)
        models = [MarginModel.frequentist(pi1=pi1, pi0=pi0, k=k, confidence=confidence)]
        labels = ["frequentist"]
        for label, posterior in posteriors:
            models.append(
                MarginModel.bayesian_predictive(posterior=posterior, k=k, confidence=confidence)
            )
            labels.append(label)
        for strength in strengths:
            prior = Prior.from_expected(pi1, recall, k, strength)
            models.append(
                MarginModel.bayesian_predictive(
                    posterior=prior.posterior(), k=k, confidence=confidence
                )
            )
            labels.append(f"prior strength {strength:g}")

        def column(name: str) -> np.ndarray:
            return _readonly(np.array([[getattr(m, name)] for m in models], dtype=float))

        s_star = _readonly(np.array([m.optimal_ratio() for m in models]))
        low = min(0.1, float(s_star.min()) / 10.0)
        high = max(100.0, float(s_star.max()) * 10.0)
        grid = _readonly(
            np.logspace(math.floor(math.log10(low)), math.ceil(math.log10(high)), grid_points)
        )
        ks = k * grid
        delta_rows = np.zeros((len(models), 1), dtype=bool)
        delta_rows[0, 0] = recall_interval == "delta"
        return cls(
            k=k,
            confidence=models[0].confidence,
            z=models[0].z,
            labels=tuple(labels),
            s_star=s_star,
            grid=grid,
            _precision_constant=column("precision_constant"),
            _precision_coefficient=column("precision_coefficient"),
            _recall_constant=column("recall_constant"),
            _recall_coefficient_pos=column("recall_coefficient_pos"),
            _recall_coefficient_neg=column("recall_coefficient_neg"),
            _ratio=column("ratio"),
            _delta_rows=_readonly(delta_rows),
            _grid_inverse_pos=_readonly((ks + 1.0) / ks),
            _grid_inverse_neg=_readonly(ks + 1.0),
            _any_delta=bool(delta_rows.any()),
        )

    def _widths(self, inverse_pos, inverse_neg) -> tuple[np.ndarray, np.ndarray]:
        """Full widths for ``1/n1``, ``1/n0`` arrays (broadcast against the ``(C, 1)`` rows)."""
        z = self.z
        precision_width = (
            2.0 * z * np.sqrt(self._precision_constant + self._precision_coefficient * inverse_pos)
        )
        sd = np.sqrt(
            self._recall_constant
            + self._recall_coefficient_pos * inverse_pos
            + self._recall_coefficient_neg * inverse_neg
        )
        x = self._ratio
        # A few labels give a huge sd: exp overflows to inf and the width to its limit, 1
        # (the interval is all of [0, 1]); that is the answer, not a fault to warn about.
        with np.errstate(over="ignore"):
            t = np.exp(z * sd)
            recall_width = 1.0 / (1.0 + x / t) - 1.0 / (1.0 + x * t)
        if self._any_delta:
            delta = 2.0 * z * x / (1.0 + x) ** 2 * sd
            recall_width = np.where(self._delta_rows, delta, recall_width)
        return precision_width, recall_width

    def over_s(self, v: float, s=None) -> WidthCurves:
        """Widths against ``s`` at total ``v`` (default grid: :attr:`grid`)."""
        v = validation.positive("v", v)
        if s is None:
            s = self.grid
            inverse_pos = self._grid_inverse_pos / v
            inverse_neg = self._grid_inverse_neg / v
        else:
            s = np.asarray(s, dtype=float)
            if s.ndim != 1 or not np.all(s > 0):
                raise InputError("s must be a one-dimensional array of values > 0")
            ks = self.k * s
            inverse_pos = (ks + 1.0) / (ks * v)
            inverse_neg = (ks + 1.0) / v
        precision_width, recall_width = self._widths(inverse_pos, inverse_neg)
        ks_star = self.k * self.s_star[:, np.newaxis]
        # (C, 1) inverses against (C, 1) constants: each row at its own s*
        precision_star, recall_star = self._widths(
            (ks_star + 1.0) / (ks_star * v), (ks_star + 1.0) / v
        )
        return WidthCurves(
            s=s,
            v=v,
            labels=self.labels,
            precision_width=_readonly(precision_width),
            recall_width=_readonly(recall_width),
            s_star=self.s_star,
            precision_width_at_s_star=_readonly(precision_star.ravel()),
            recall_width_at_s_star=_readonly(recall_star.ravel()),
            confidence=self.confidence,
        )

    def over_v(self, s: float, v) -> WidthCurvesOverV:
        """Widths against total labels ``v`` at a fixed ``s``."""
        s = validation.oversampling("s", s)
        v = np.asarray(v, dtype=float)
        if v.ndim != 1 or not np.all(v > 0):
            raise InputError("v must be a one-dimensional array of values > 0")
        ks = self.k * s
        precision_width, recall_width = self._widths((ks + 1.0) / (ks * v), (ks + 1.0) / v)
        return WidthCurvesOverV(
            v=v,
            s=s,
            labels=self.labels,
            precision_width=_readonly(precision_width),
            recall_width=_readonly(recall_width),
            confidence=self.confidence,
        )


def width_curves(
    *,
    k: float,
    precision: float,
    recall: float,
    v: float,
    confidence: float = 0.95,
    posteriors: Sequence[tuple[str, Posterior]] = (),
    strengths: Sequence[float] = DEFAULT_PRIOR_STRENGTHS,
    s=None,
) -> WidthCurves:
    """One-shot :meth:`WidthCurveModel.build` then :meth:`WidthCurveModel.over_s`."""
    model = WidthCurveModel.build(
        k=k,
        precision=precision,
        recall=recall,
        confidence=confidence,
        posteriors=posteriors,
        strengths=strengths,
    )
    return model.over_s(v, s)


# --- sample-size planning (methods §8) ----------------------------------------------------------


#: Chance of meeting a margin below which a plan is said to almost never meet it.
RARELY_MET = 0.05
#: Expected items in a labeled cell below which the normal approximations of Eq 10 fail
#: (the paper asks for "at least 5 or 10").
FEW_EXPECTED = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A planned labeling round and the margins of error it buys (methods §8).

    :meth:`to_dict` gives exactly the keys of ``prplanner plan --json``; the remaining
    fields keep what the text output, Excel and the assurance simulation need.

    Attributes
    ----------
    k : float
        Imbalance ratio ``N1/N0``.
    precision, recall : float
        Planning values (assumed true), given or estimated from a previous round.
    pi1, pi0 : float
        ``pi1 = precision``; ``pi0`` from Eq 9.
    s_star : float
        Theorem 1 with the planning values plugged in.
    s_star_bayes : float or None
        Theorem 2 when a prior or a previous round was given.
    method : str
        ``"paper"`` (Section 5 procedure), ``"optimal"`` (exact joint / cost optimum) or
        ``"fixed"`` (``s`` and ``v`` given: nothing optimized).
    s : float
        The design's over-sampling ratio: the realized ``n1/(k*n0)`` for ``paper`` and
        ``optimal``, the given ``s`` for ``fixed``.
    n_pos, n_neg, total : int
        Items to label from the predicted-positive and predicted-negative strata, and their
        sum.
    margin_precision, margin_recall : float
        Margins the design achieves: Eq 10 (Wald precision, delta-method recall), or half
        the Eq 6 / Eq 7 predictive interval width when ``bayesian``; with the finite
        population correction when ``fpc_factors`` is not ``(1, 1)``.
    cost : float or None
        ``cost_pos*n_pos + cost_neg*n_neg`` when label costs were given.
    assurance : Assurance or None
        Exact probability that the labeled round's realized margins meet the targets
        (:mod:`core.assurance`); :func:`make_plan` always fills it.
    simulated_assurance : Assurance or None
        The same probability simulated (``prplanner plan --assurance``), a check.
    assured : AssuredPlan or None
        The cheapest design meeting both margins with a chosen probability, when asked.
    target_margin_precision, target_margin_recall : float
        The targets the plan was made for (used by the assurance simulation).
    confidence : float
        Confidence (credibility) level.
    bayesian : bool
        Whether the margins are Bayesian predictive ones.
    cost_pos, cost_neg : float or None
        Label cost per item in each stratum.
    fpc_factors : tuple of float
        ``(N1 - n1)/(N1 - 1)`` and ``(N0 - n0)/(N0 - 1)``, or ``(1, 1)`` without FPC.
    strata : tuple of int or None
        ``(N1, N0)`` when the finite population correction is applied (the assurance then
        samples without replacement), else None.
    notes : tuple of str
        Things the user should know (a substituted prior, ...).
    """

    k: float
    precision: float
    recall: float
    pi1: float
    pi0: float
    s_star: float
    s_star_bayes: float | None
    method: str
    s: float
    n_pos: int
    n_neg: int
    total: int
    margin_precision: float
    margin_recall: float
    cost: float | None = None
    assurance: Assurance | None = None
    simulated_assurance: Assurance | None = None
    assured: AssuredPlan | None = None
    target_margin_precision: float
    target_margin_recall: float
    confidence: float
    bayesian: bool = False
    cost_pos: float | None = None
    cost_neg: float | None = None
    fpc_factors: tuple[float, float] = (1.0, 1.0)
    strata: tuple[int, int] | None = None
    notes: tuple[str, ...] = ()

    @property
    def targets_met(self) -> dict[str, bool]:
        """Whether the planned margins meet their targets (a fixed design may miss)."""
        return {
            "precision": self.margin_precision <= self.target_margin_precision,
            "recall": self.margin_recall <= self.target_margin_recall,
        }

    def rarely_met(self) -> str | None:
        """Why a labeled round of this plan almost never meets a margin it gives on average
        (its chance below :data:`RARELY_MET`), in words, or ``None``.

        Eq 10's margins rest on normal approximations that want every labeled cell to hold
        a few items ("at least 5 or 10"); the scarcest cell a rarely met margin rests on is
        named when fewer than :data:`FEW_EXPECTED` items are expected in it (trial 15:
        0.08 missed items expected among 458 unflagged labels, a 0 % chance)."""
        chances = self.assurance
        if chances is None:
            return None
        rare = [
            (name, chance)
            for name, chance in (("precision", chances.precision), ("recall", chances.recall))
            if chance < RARELY_MET
        ]
        if not rare:
            return None
        flagged, unflagged = f"{self.n_pos:,} flagged", f"{self.n_neg:,} unflagged"
        cells = {
            "precision": (
                ("true positives", self.n_pos * self.pi1, flagged),
                ("false positives", self.n_pos * (1 - self.pi1), flagged),
            ),
            "recall": (
                ("true positives", self.n_pos * self.pi1, flagged),
                ("missed positives", self.n_neg * self.pi0, unflagged),
            ),
        }
        # Every scarce cell the rare margins rest on, each once (a round of no false
        # positives and no misses had both; recheck 15 was told of one).
        scarce = {
            cell[0]: cell for name, _ in rare for cell in cells[name] if cell[1] < FEW_EXPECTED
        }
        names = " and ".join(name for name, _ in rare)
        worst = min(chance for _, chance in rare)
        shown = "less than 1 %" if worst < 0.005 else f"{100 * worst:.0f} %"
        margins = "margins" if len(rare) > 1 else "margin"
        text = f"a labeled round of this plan almost never meets the {names} {margins} ({shown})"
        if scarce:
            listed = " and ".join(
                f"{f'about {expected:.1f}' if expected >= 0.05 else 'almost no'} {what} "
                f"among its {among} labels"
                for what, expected, among in sorted(scarce.values(), key=lambda cell: cell[1])
            )
            text += f": {listed} are expected, too few for an interval that narrow"
        return text

    def to_dict(self) -> dict:
        """The ``prplanner plan --json`` keys, in contract order."""
        result = {
            name: getattr(self, name)
            for name in (
                "k",
                "precision",
                "recall",
                "pi1",
                "pi0",
                "s_star",
                "s_star_bayes",
                "method",
                "s",
                "n_pos",
                "n_neg",
                "total",
                "margin_precision",
                "margin_recall",
            )
        }
        result["targets_met"] = self.targets_met
        if self.cost is not None:
            result["cost"] = self.cost
        if self.assurance is not None:
            result["assurance"] = self.assurance.to_dict()
        if self.assured is not None:
            result["assured"] = self.assured.to_dict()
        if self.simulated_assurance is not None:
            simulated = self.simulated_assurance
            result["assurance_simulated"] = simulated.to_dict() | {
                "reps": simulated.reps,
                "standard_error": simulated.standard_error,
            }
        return result

    def with_simulated_assurance(self, assurance: Assurance) -> Plan:
        """This plan with a simulated assurance attached (the check of :attr:`assurance`)."""
        return replace(self, simulated_assurance=assurance)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssuredPlan:
    """The cheapest design whose chance of meeting both margins is at least ``target``.

    Attributes
    ----------
    target : float
        The chance asked for (0 < target < 1).
    method : str
        ``"paper"``: the smallest ``v`` at the plan's ratio ``s``; ``"optimal"``: the least
        ``cost_pos*n1 + cost_neg*n0`` over all ``(n1, n0)``.
    s : float
        Realized ``n1/(k*n0)``.
    n_pos, n_neg, total : int
        The design.
    cost : float
        ``cost_pos*n1 + cost_neg*n0`` (the total when no label costs were given).
    margin_precision, margin_recall : float
        The planned (expected-value) margins at this design.
    assurance : Assurance
        Its exact assurance: ``both >= target``.
    """

    target: float
    method: str
    s: float
    n_pos: int
    n_neg: int
    total: int
    cost: float
    margin_precision: float
    margin_recall: float
    assurance: Assurance

    def to_dict(self) -> dict:
        """The ``assured`` object of ``prplanner plan --json``."""
        return {
            "target": self.target,
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "total": self.total,
            "cost": self.cost,
            "assurance": self.assurance.to_dict(),
        }


def previous_round_posterior(
    matrix: ConfusionMatrix | None, prior: Prior | None = None
) -> tuple[Posterior, tuple[str, ...]]:
    """Posterior for Theorem 2 / Bayesian planning from a prior and a previous round.

    The default prior is the paper's ``alpha = 0``; when a count of ``matrix`` is 0 that
    posterior is improper, so the Jeffreys prior (0.5) is used instead and a note says so
    (methods §5). A user-given prior that leaves a zero parameter is refused by
    :meth:`core.bayes.Prior.posterior`.
    """
    notes: tuple[str, ...] = ()
    if prior is None:
        prior = Prior.none()
    if prior.is_zero and (matrix is None or matrix.has_zero_cell):
        if matrix is None:
            raise InputError(
                f"a Bayesian plan needs a prior ({named('prior')}) or a previous round "
                f"({named('counts')})"
            )
        prior = Prior.jeffreys()
        notes = (
            "the previous round has a zero count, so the paper's default prior alpha = 0 "
            "would be improper; the Jeffreys prior (0.5 each) was used instead",
        )
    return prior.posterior(matrix), notes


#: One-sided level of the cautious planning value a zero count gets (rates_from_round).
CAUTIOUS_LEVEL = 0.95


def rates_from_round(
    matrix: ConfusionMatrix, k: float, prior: Prior | None = None
) -> tuple[float, float, tuple[str, ...]]:
    """Planning ``(precision, recall, notes)`` from a previous round.

    The plug-in estimates (methods §2) when both lie strictly inside (0, 1). A zero count
    makes one of them 0 or 1, where Theorem 1 and Eq 10 degenerate; then each stratum
    rate with a zero count (``pi1`` when TP or FP is 0, ``pi0`` when FN or TN is 0) is
    planned at the cautious end of its posterior (``prior``, or Jeffreys as in
    :func:`previous_round_posterior`): the one-sided :data:`CAUTIOUS_LEVEL` bound towards
    1/2, where its variance and the labels it needs are larger (methods, "Planning values
    from a round with a zero count"). The other rate keeps its plug-in estimate; a note
    says so.

    The posterior mean planned too boldly: no misses among 3,000 unflagged items gave
    recall 99.3 %, a plan of 458 unflagged labels (0.08 misses expected) and a 0 % chance
    of meeting the recall target (trial 15).
    """
    from scipy.stats import beta

    estimates = point_estimates(matrix, k)
    tp, fp, fn, tn = matrix.as_tuple()
    if min(tp, fp, fn, tn) > 0:
        return estimates.precision, estimates.recall, ()
    posterior, notes = previous_round_posterior(matrix, prior)

    def planned(successes: int, failures: int, a: float, b: float) -> float:
        if successes and failures:
            return successes / (successes + failures)
        # Towards 1/2 and no further: past it the variance falls again (a round of one
        # or two items would plan at 0.77; review 15).
        if successes == 0:
            return min(float(beta.ppf(CAUTIOUS_LEVEL, a, b)), 0.5)
        return max(float(beta.ppf(1.0 - CAUTIOUS_LEVEL, a, b)), 0.5)

    pi1 = planned(tp, fp, posterior.z11, posterior.z01)
    pi0 = planned(fn, tn, posterior.z10, posterior.z00)
    precision = pi1
    recall = float(recall_from_rates(pi1, pi0, k))
    zero = " and ".join(
        name for name, count in (("TP", tp), ("FP", fp), ("FN", fn), ("TN", tn)) if count == 0
    )
    note = (
        f"the previous round has {zero} = 0, so its estimates (precision "
        f"{estimates.precision:.4g}, recall {estimates.recall:.4g}) are no values to plan on; "
        f"planning uses values that round cannot rule out with {CAUTIOUS_LEVEL:.0%} "
        f"confidence, on the side that needs more labels: precision {precision:.4g}, "
        f"recall {recall:.4g}"
    )
    return precision, recall, (*notes, note)


def make_plan(
    *,
    population: Population,
    precision: float,
    recall: float,
    margin_precision: float = 0.05,
    margin_recall: float = 0.05,
    confidence: float = 0.95,
    method: str = "paper",
    posterior: Posterior | None = None,
    bayesian: bool = False,
    cost_pos: float | None = None,
    cost_neg: float | None = None,
    s: float | None = None,
    v: int | None = None,
    fpc: bool = False,
    assurance_target: float | None = None,
    notes: Sequence[str] = (),
) -> Plan:
    """Plan a labeling round (Eq 10, Section 5) and the chance that it keeps its promise.

    Parameters
    ----------
    population : Population
        ``k`` and, for ``fpc``, both stratum sizes.
    precision, recall : float
        Planning values in (0, 1); ``pi0`` follows from Eq 9.
    margin_precision, margin_recall : float
        Target margins (half-widths) in (0, 0.5).
    confidence : float
        Confidence / credibility level in (0.5, 1).
    method : {"paper", "optimal"}
        ``paper``: the paper's Section 5 procedure at ``s = max(s*, 1)`` (see the module
        docstring for its rounding). ``optimal``: the integer ``(n1, n0)`` of least
        ``cost_pos*n1 + cost_neg*n0`` (least ``n1 + n0`` without costs) meeting both
        targets, found exactly by :func:`optimal_sizes`.
    posterior : Posterior, optional
        Prior plus previous round; gives ``s_star_bayes`` (Theorem 2).
    bayesian : bool
        Plan with the predictive margins of Eq 6-8 and ``s_star_bayes`` (needs
        ``posterior``).
    cost_pos, cost_neg : float, optional
        Label cost per item of each stratum (both or neither).
    s, v : optional
        Both: a fixed design, integer sizes by Eq 1, nothing optimized. ``v`` alone: the
        best use of ``v`` labels: ``paper`` splits it at ``s = max(s*, 1)`` (Eq 1);
        ``optimal`` takes the split minimizing the larger of ``margin/target`` over the two
        metrics. ``s`` alone: the paper's procedure at that ``s``.
    fpc : bool
        Multiply each stratum's sampling variance by ``(N - n)/(N - 1)`` (needs counts).
    assurance_target : float, optional
        ``0 < G < 1``: also find :attr:`Plan.assured`, the cheapest design whose chance of
        meeting both margins is at least ``G`` (:func:`assured_sizes_at_ratio` at the
        plan's ``s`` for ``paper`` and fixed designs, :func:`assured_sizes_optimal` for
        ``optimal``). Off by default, so the paper's procedure is unchanged.
    notes : sequence of str
        Carried into :attr:`Plan.notes`.

    The returned plan always carries :attr:`Plan.assurance`, the exact chance that the
    labeled round's margins meet the targets (:mod:`core.assurance`).

    Raises
    ------
    InputError
        Invalid values, conflicting options, or a target no design can reach (the message
        names the target).
    """
    pi1, pi0, k = _rates(population.k, precision, recall)
    recall = validation.open_unit("recall", recall)
    target_p = validation.margin("margin_precision", margin_precision)
    target_r = validation.margin("margin_recall", margin_recall)
    confidence = validation.confidence(confidence)
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if (cost_pos is None) != (cost_neg is None):
        raise InputError(f"give both label costs ({named('costs')}) or neither")
    if cost_pos is not None:
        cost_pos = validation.positive("cost_pos", cost_pos)
        cost_neg = validation.positive("cost_neg", cost_neg)
    if s is not None:
        s = validation.oversampling("s", s)
    if v is not None:
        v = validation.whole_at_least("v", v, 2)
    if s is not None and v is None and method == "optimal":
        raise InputError(
            f"{named('s')} without {named('v')} fixes the over-sampling ratio, "
            f"{named('method=optimal')} chooses it: give one of them"
        )
    if fpc and not population.has_counts:
        raise InputError(f"{named('fpc')} needs both population counts ({named('population')})")
    if bayesian and posterior is None:
        raise InputError(
            f"the {named('bayesian')} option needs a prior ({named('prior')}) or a previous round "
            f"({named('counts')})"
        )
    if assurance_target is not None:
        assurance_target = validation.open_unit("assurance target", assurance_target)

    s_star = float(optimal_ratio_from_rates(pi1, pi0, k))
    s_star_bayes = optimal_ratio_bayes(posterior, k) if posterior is not None else None
    finite = population if fpc else None
    if bayesian:
        assert posterior is not None  # a Bayesian plan without one was refused above
        model = MarginModel.bayesian_predictive(
            posterior=posterior, k=k, confidence=confidence, population=finite
        )
    else:
        model = MarginModel.frequentist(
            pi1=pi1, pi0=pi0, k=k, confidence=confidence, population=finite
        )
    ratio_star = s_star_bayes if bayesian and s_star_bayes is not None else s_star

    if s is not None and v is not None:
        chosen_method = "fixed"
        n_pos, n_neg = stratum_sizes(v, k, s)
        design_s = s
    elif v is not None:
        chosen_method = method
        if method == "paper":
            n_pos, n_neg = stratum_sizes(v, k, max(ratio_star, 1.0))
            better = _better_split_note(model, v, (n_pos, n_neg), target_p, target_r)
            if better:
                notes = (*notes, better)
        else:
            n_pos, n_neg = best_split(model, v, target_p, target_r)
        design_s = None
    else:
        chosen_method = method
        if method == "paper":
            n_pos, n_neg = paper_sizes(
                model, s if s is not None else max(ratio_star, 1.0), target_p, target_r
            )
        else:
            n_pos, n_neg = optimal_sizes(
                model, target_p, target_r, cost_pos or 1.0, cost_neg or 1.0
            )
        design_s = None

    _check_design(population, n_pos, n_neg, fpc)
    large_share = None if fpc else _large_share_note(population, n_pos, n_neg)
    if large_share is not None:
        notes = (*notes, large_share)
    if design_s is None:
        driver = _ratio_driver(
            ratio_star, n_pos, n_neg, k, method, v is not None, cost_pos is not None, bayesian
        )
        if driver:
            notes = (*notes, driver)
    fpc_factors = population.fpc_factors(n_pos, n_neg) if fpc else (1.0, 1.0)
    plan = Plan(
        k=k,
        precision=pi1,
        recall=recall,
        pi1=pi1,
        pi0=pi0,
        s_star=s_star,
        s_star_bayes=s_star_bayes,
        method=chosen_method,
        s=design_s if design_s is not None else n_pos / (k * n_neg),
        n_pos=n_pos,
        n_neg=n_neg,
        total=n_pos + n_neg,
        margin_precision=float(model.precision(n_pos)),
        margin_recall=float(model.recall(n_pos, n_neg)),
        cost=None if cost_pos is None or cost_neg is None else cost_pos * n_pos + cost_neg * n_neg,
        target_margin_precision=target_p,
        target_margin_recall=target_r,
        confidence=confidence,
        bayesian=bayesian,
        cost_pos=cost_pos,
        cost_neg=cost_neg,
        fpc_factors=fpc_factors,
        strata=population.strata if fpc else None,
        notes=tuple(notes),
    )
    if assurance_target is not None and max(n_pos, n_neg) > MAX_ASSURED_STRATUM:
        # The search evaluates the exact chance dozens of times; at this size each takes
        # seconds and the answer is the expected-value plan to a fraction of a percent.
        # Refused before the chance at the plan itself (about 2 s and 0.5 GB at this size).
        raise InputError(
            f"the assured plan is searched for designs of up to {MAX_ASSURED_STRATUM:,} labels "
            f"per stratum; this plan already needs {max(n_pos, n_neg):,}: widen the margins "
            "or leave out the assurance target"
        )
    if max(n_pos, n_neg) > MAX_CHANCE_STRATUM:
        # The exact chance needs memory growing with the square root of the sizes: 9.8 GB
        # at 10^15 labels (fuzz 13b). At this size the margins are a tiny fraction of a
        # point and the chance is all or nothing: it is left out, and said so.
        return replace(
            plan,
            notes=(
                *plan.notes,
                f"the chance of meeting the margins is not computed for more than "
                f"{MAX_CHANCE_STRATUM:,} labels in a stratum",
            ),
        )
    chance = AssuranceModel.from_plan(plan)
    plan = replace(plan, assurance=chance.at(n_pos, n_neg))
    if assurance_target is None:
        return plan
    if chosen_method == "optimal":
        assured_n_pos, assured_n_neg = assured_sizes_optimal(
            chance, assurance_target, cost_pos or 1.0, cost_neg or 1.0, start=(n_pos, n_neg)
        )
    else:
        # At the paper's ratio, and at the plan's own when the precision margin raised it
        # (Eq 11's second step): searched at s* alone, extra labels went almost all to the
        # unflagged side while precision's chance was the one short, and the assured plan
        # asked twice the labels needed (7,821 at s* = 2.2 against 3,965 at the plan's
        # s = 4.5; trial 14). The cheaper of the two is the assured plan.
        ratios = [s] if s is not None else sorted({max(ratio_star, 1.0), plan.s})
        candidates, refusal = [], None
        for ratio in ratios:
            try:
                candidates.append(
                    assured_sizes_at_ratio(
                        chance, assurance_target, ratio, start_total=n_pos + n_neg
                    )
                )
            except InputError as exc:  # not reachable at this ratio; perhaps at the other
                refusal = exc
        if not candidates and refusal is not None:
            raise refusal
        assured_n_pos, assured_n_neg = min(
            candidates,
            key=lambda sizes: (cost_pos or 1.0) * sizes[0] + (cost_neg or 1.0) * sizes[1],
        )
    assured = AssuredPlan(
        target=assurance_target,
        method="optimal" if chosen_method == "optimal" else "paper",
        s=assured_n_pos / (k * assured_n_neg),
        n_pos=assured_n_pos,
        n_neg=assured_n_neg,
        total=assured_n_pos + assured_n_neg,
        cost=(cost_pos or 1.0) * assured_n_pos + (cost_neg or 1.0) * assured_n_neg,
        margin_precision=float(model.precision(assured_n_pos)),
        margin_recall=float(model.recall(assured_n_pos, assured_n_neg)),
        assurance=chance.at(assured_n_pos, assured_n_neg),
    )
    return replace(plan, assured=assured)


#: Budgets up to this many labels get the exact minimax split in the note (a scan of every
#: split, well under a second); larger ones the least labels plus the spare ones.
_SPLIT_SCAN_LIMIT = 2_000_000


def _better_split_note(model, v: int, paper: tuple[int, int], target_p, target_r) -> str:
    """What to say when the paper's split of a budget misses a target margin that another
    split of the same ``v`` labels meets ("" otherwise). The paper's ``s = max(s*, 1)``
    serves recall alone; with a tight precision target it can miss by half (audit 13)."""

    def meets(n_pos: int, n_neg: int) -> bool:
        return (
            float(model.precision(n_pos)) <= target_p
            and float(model.recall(n_pos, n_neg)) <= target_r
        )

    if meets(*paper):
        return ""
    # The least labels meeting both (a bounded scan), the spare ones added where they fit:
    # more labels never widen a margin. Scanning every split of v took 34 s at v = 10^9.
    try:
        n_pos, n_neg = optimal_sizes(model, target_p, target_r)
    except InputError:  # a target no number of labels reaches
        return ""
    spare = v - n_pos - n_neg
    if spare < 0:
        return ""
    if v <= _SPLIT_SCAN_LIMIT:
        # The split --method optimal takes for the same budget, so the two agree.
        n_pos, n_neg = best_split(model, v, target_p, target_r)
    else:
        room = spare if model.population_neg is None else max(model.population_neg - n_neg, 0)
        n_neg += min(spare, room)
        n_pos += spare - min(spare, room)
    if not meets(n_pos, n_neg):
        return ""
    # Above the scan limit the split is one that meets both, not the one the optimal
    # method picks: it is offered as an example, not attributed to it (review 14).
    source = (
        f"({named('method=optimal')})"
        if v <= _SPLIT_SCAN_LIMIT
        else f"(for example; {named('method=optimal')} finds the split that serves both best)"
    )
    return (
        f"the recommended split (s = max(s*, 1)) of the {v:,} labels misses a target "
        f"margin, but split as {n_pos:,} flagged + {n_neg:,} unflagged items the same "
        f"labels meet both {source}"
    )


#: Marks the note that a plan without the correction labels much of a list (the Plan tab
#: shows it beside its own notes).
PLAN_FPC_MARK = " of lists of known size"


def _large_share_note(population: Population, n_pos: int, n_neg: int) -> str | None:
    """A note when a plan without the finite population correction labels a tenth or
    more of a list of known size: drawn without replacement (as PR Planner's selection
    rule draws), the correction plans it with fewer labels, and the chance stated is then
    the one the labels will be judged by (``labels`` applies it)."""
    from core.evaluation import LARGE_SHARE_LABELED

    strata = population.strata
    if strata is None:
        return None
    shares = (n_pos / strata[0], n_neg / strata[1])
    if max(shares) < LARGE_SHARE_LABELED:
        return None
    return (
        f"the plan labels {100 * shares[0]:.1f} % of the flagged and {100 * shares[1]:.1f} % "
        f"of the unflagged items{PLAN_FPC_MARK}: switch on {named('fpc')} to plan for these "
        "lists (PR Planner draws without replacement from them); the plan then needs fewer "
        "labels, and its chance of meeting the margins is the one the labels will be judged "
        "by"
    )


def _check_design(population: Population, n_pos: int, n_neg: int, fpc: bool) -> None:
    if n_pos < 1 or n_neg < 1:
        empty = "predicted-positive" if n_pos < 1 else "predicted-negative"
        raise InputError(
            f"this design leaves the {empty} sample empty ({n_pos:,} predicted positives "
            f"and {n_neg:,} predicted negatives to label); raise v or move s toward 1"
        )
    strata = population.strata
    if strata is not None:
        for label, n, big_n in (
            ("predicted-positive", n_pos, strata[0]),
            ("predicted-negative", n_neg, strata[1]),
        ):
            if n > big_n:
                hint = (
                    ""
                    if fpc
                    else f"; with {named('fpc')} the plan accounts for the finite population"
                )
                raise InputError(
                    f"the plan needs {n:,} {label} items but the population has only "
                    f"{big_n:,}{hint}"
                )


def _unreachable(metric: str, target: float, model: MarginModel, detail: str = "") -> InputError:
    floor_p, floor_r = model.unlimited_margins()
    floor = floor_p if metric == "precision" else floor_r
    if model.bayesian:
        why = (
            f"the prior and previous round alone leave a predictive {metric} margin of "
            f"{floor:.4g} however many items are labeled"
        )
    else:
        why = detail or f"the smallest reachable {metric} margin is {floor:.4g}"
    return InputError(f"the {metric} margin target {target:g} cannot be reached: {why}")


#: In the note of a plan whose ``s`` is not ``max(s*, 1)``; the app shows that note.
RATIO_NOTE_MARK = "rather than the usual"


def _ratio_driver(
    ratio_star: float,
    n_pos: int,
    n_neg: int,
    k: float,
    method: str,
    budget_given: bool,
    costs_given: bool,
    bayesian: bool,
) -> str:
    """Why the design's ``s`` is not ``max(s*, 1)`` (beyond integer rounding), or ``""``."""
    intended = max(ratio_star, 1.0)
    realized = n_pos / (k * n_neg)
    # n0 = ceil(n1/(k s)) and Eq 1's rounding move s by about 1/n0 (relative), and a whole
    # n1 by about 1/n1: with 71 flagged items in a budget of 1,430, rounding alone moved s
    # by 1 %, and the note blamed the precision margin (audit 13)
    if abs(realized - intended) <= intended * max(0.005, 1.5 / n_neg, 1.5 / max(n_pos, 1)):
        return ""
    which = "Theorem 2" if bayesian else "Theorem 1"
    # Plain words first: the report's Summary quotes this to a manager (trial 14).
    usual = (
        f"the best ratio for recall, s* by {which}"
        if ratio_star >= 1.0
        else f"s never goes below 1; the best ratio for recall, s* by {which}, is {ratio_star:.2f}"
    )
    head = (
        f"the over-sampling ratio is s = {realized:.3g} {RATIO_NOTE_MARK} {intended:.3g} "
        f"({usual}): "
    )
    if method == "paper":
        return head + (
            f"the precision target needs {n_pos:,} flagged items to label, more than the "
            "usual ratio gives with the recall target's sample"
        )
    what = "cheapest" if costs_given else "smallest"
    if budget_given:
        return head + "the optimal method split the budget to meet both margins as well as it can"
    return head + (
        f"the optimal method chose the {what} design meeting both margins"
        + (" at the given label costs" if costs_given else "")
    )


def paper_sizes(
    model: MarginModel, s: float, target_precision: float, target_recall: float
) -> tuple[int, int]:
    """The paper's Section 5 procedure at ratio ``s`` (methods §8), reproduced exactly.

    1. ``n1`` = the smallest integer whose recall margin (Eq 10, ``model``) meets
       ``target_recall`` with ``n0 = n1/(k*s)`` real valued (Eq 11 solved, rounded up);
    2. ``n0 = ceil(n1/(k*s))``;
    3. if the precision margin at ``n1`` misses ``target_precision``, ``n1`` is raised to
       the smallest integer that meets it (``n0`` is kept).

    With the FPC, ``n1 <= N1`` and ``n1/(k*s) <= N0`` bound the search; a target still
    missed there is unreachable at this ``s``.
    """
    s = validation.oversampling("s", s)
    ks = model.k * s
    cap = None
    if model.population_pos is not None and model.population_neg is not None:
        cap = math.floor(min(model.population_pos, ks * model.population_neg) + 1e-9)
        if cap < 1:
            raise InputError(f"s = {s:g} leaves no room for a predicted-positive item")
    budget = model.recall_budget(target_recall)
    if model.bayesian and budget <= 0:
        raise _unreachable("recall", target_recall, model)
    a, b = model.recall_coefficient_pos, model.recall_coefficient_neg
    hint = (a + b * ks) / budget if budget > 0 else math.inf
    n_pos = _smallest_integer(lambda n: model.recall(n, n / ks) <= target_recall, hint, cap)
    if n_pos is None:
        assert cap is not None  # only a search bounded by the population comes back empty
        raise _unreachable(
            "recall",
            target_recall,
            model,
            f"at s = {s:g} the population runs out first (margin "
            f"{float(model.recall(cap, cap / ks)):.4g} with the largest possible sample); "
            f"use {named('method=optimal')} or a larger margin",
        )
    n_neg = max(1, math.ceil(n_pos / ks - 1e-9))
    if model.precision(n_pos) > target_precision:
        needed = model.smallest_precision_sample(target_precision)
        if needed is None:
            raise _unreachable("precision", target_precision, model)
        n_pos = max(n_pos, needed)
    return int(n_pos), int(n_neg)


def _real_negatives(model: MarginModel, n_pos: np.ndarray, target: float) -> np.ndarray:
    """Real-valued ``n0`` solving ``a*h1(n1) + b*h0(n0) = budget`` (inf where none does).

    Convex and decreasing in ``n1``: ``h1`` is convex, so the remaining budget is concave,
    and both ``b/r`` and ``N0/(1 + c*r)`` are convex decreasing in ``r``.
    """
    a, b = model.recall_coefficient_pos, model.recall_coefficient_neg
    big_n0 = model.population_neg
    remaining = model.recall_budget(target) - a * _h(n_pos, model.population_pos)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if big_n0 is None:
            return np.where(remaining > 0, b / remaining, np.inf)
        return np.where(remaining >= 0, big_n0 / (1.0 + remaining / b * max(big_n0 - 1, 1)), np.inf)


def _improving_range(
    model: MarginModel,
    target: float,
    low: int,
    high: int,
    best_cost: float,
    cost_pos: float,
    cost_neg: float,
) -> tuple[int, int]:
    """Narrow ``[low, high]`` to the ``n1`` whose cost could still be below ``best_cost``.

    The integer cost is at least the convex real cost ``cost_pos*n1 + cost_neg*n0(n1)``
    less two ``cost_neg`` (rounding and the correction steps), so the ``n1`` that can
    improve form one interval around the real cost's minimum: found by ternary search and
    two bisections in O(log range) instead of a scan of the whole range (which for tiny
    margins runs to 10**12 and more).
    """

    def floor(n: int) -> float:
        value = _real_negatives(model, np.array([float(n)]), target)[0]
        return cost_pos * n + cost_neg * (float(value) - 2.0)

    left, right = low, high
    while right - left > 2:
        third = (right - left) // 3
        if floor(left + third) < floor(right - third):
            right = right - third
        else:
            left = left + third
    middle = min(range(left, right + 1), key=floor)
    if not floor(middle) < best_cost:
        return middle + 1, middle  # empty: nothing can improve
    lo, hi = low, middle  # first n with floor < best_cost
    while lo < hi:
        mid = (lo + hi) // 2
        if floor(mid) < best_cost:
            hi = mid
        else:
            lo = mid + 1
    first = lo
    lo, hi = middle, high  # last n with floor < best_cost
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if floor(mid) < best_cost:
            lo = mid
        else:
            hi = mid - 1
    return first, lo


def _smallest_negatives(model: MarginModel, n_pos: np.ndarray, target: float) -> np.ndarray:
    """For each ``n1``, the least integer ``n0`` meeting the recall target (inf if none).

    Closed form from ``a*h1(n1) + b*h0(n0) <= budget``, then one correction step each way
    against the margin function itself so rounding never decides.
    """
    big_n0 = model.population_neg
    guess = _real_negatives(model, n_pos, target)
    n_neg = np.maximum(np.ceil(guess - 1e-9), 1.0)
    upper = math.inf if big_n0 is None else float(big_n0)
    n_neg = np.where(n_neg > upper, np.inf, n_neg)
    finite = np.isfinite(n_neg)
    safe = np.where(finite, n_neg, 1.0)
    too_small = finite & (model.recall(n_pos, safe) > target)
    n_neg = np.where(too_small, n_neg + 1.0, n_neg)
    n_neg = np.where(n_neg > upper, np.inf, n_neg)
    finite = np.isfinite(n_neg)
    safe = np.where(finite & (n_neg > 1), n_neg - 1.0, 1.0)
    can_lower = finite & (n_neg > 1) & (model.recall(n_pos, safe) <= target)
    return np.where(can_lower, n_neg - 1.0, n_neg)


def optimal_sizes(
    model: MarginModel,
    target_precision: float,
    target_recall: float,
    cost_pos: float = 1.0,
    cost_neg: float = 1.0,
) -> tuple[int, int]:
    """Exact integer ``(n1, n0)`` of least ``cost_pos*n1 + cost_neg*n0`` meeting both targets.

    Ties go to the smaller ``n1 + n0``, then the smaller ``n1``.

    Why the scan is exact and finite: precision depends on ``n1`` only, so feasible ``n1``
    start at ``n1_lo`` (the smallest meeting the precision target and leaving room for
    the recall target). For each ``n1`` the recall margin falls as ``n0`` grows, so the
    cheapest partner is the least feasible ``n0(n1)``, computed in closed form
    (:func:`_smallest_negatives`). Every ``n0(n1)`` is at least ``n0_floor``, the least
    ``n0`` meeting the recall target even with the ``n1`` term gone (``n1`` unlimited or
    the stratum censused). Hence ``cost(n1) >= cost_pos*n1 + cost_neg*n0_floor``, and no
    ``n1`` above ``(best - cost_neg*n0_floor)/cost_pos`` can beat an incumbent ``best``.
    The incumbent starts at the rounded continuous (Lagrange) optimum; the range is then
    scanned in vectorized chunks, tightening the bound as better designs turn up.
    """
    big_n1, big_n0 = model.population_pos, model.population_neg
    budget = model.recall_budget(target_recall)
    if model.bayesian and budget <= 0:
        raise _unreachable("recall", target_recall, model)
    n_pos_precision = model.smallest_precision_sample(target_precision)
    if n_pos_precision is None:
        raise _unreachable("precision", target_precision, model)
    census_neg = math.inf if big_n0 is None else big_n0
    n_pos_recall = _smallest_integer(
        lambda n: (
            model.recall(n, census_neg) < target_recall
            if big_n0 is None
            else model.recall(n, census_neg) <= target_recall
        ),
        _smallest_size(model.recall_coefficient_pos, budget, big_n1),
        big_n1,
    )
    if n_pos_recall is None:
        raise _unreachable("recall", target_recall, model)
    n_pos_low = max(n_pos_precision, n_pos_recall)
    census_pos = math.inf if big_n1 is None else big_n1
    n_neg_floor = _smallest_integer(
        lambda n: model.recall(census_pos, n) <= target_recall,
        _smallest_size(model.recall_coefficient_neg, budget, big_n0),
        big_n0,
    )
    if n_neg_floor is None:
        raise _unreachable("recall", target_recall, model)

    a, b = model.recall_coefficient_pos, model.recall_coefficient_neg
    lagrange = math.sqrt(a / cost_pos) * (math.sqrt(a * cost_pos) + math.sqrt(b * cost_neg))
    start = n_pos_low if budget <= 0 else max(n_pos_low, round(lagrange / budget))
    if big_n1 is not None:
        start = min(start, big_n1)
    best_n_pos = start
    best_n_neg = float(_smallest_negatives(model, np.array([float(start)]), target_recall)[0])
    best_cost = cost_pos * best_n_pos + cost_neg * best_n_neg
    best_key: tuple[float, float, float] = (best_cost, best_n_pos + best_n_neg, best_n_pos)

    low = n_pos_low
    while True:
        high = math.floor((best_key[0] - cost_neg * n_neg_floor) / cost_pos + 1e-9)
        if big_n1 is not None:
            high = min(high, big_n1)
        if low > high:
            break
        if high - low > 4 * _SCAN_CHUNK:
            low, high = _improving_range(
                model, target_recall, low, high, best_key[0], cost_pos, cost_neg
            )
            if low > high:
                break
        n_pos = np.arange(low, min(high, low + _SCAN_CHUNK - 1) + 1, dtype=float)
        n_neg = _smallest_negatives(model, n_pos, target_recall)
        cost = cost_pos * n_pos + cost_neg * n_neg
        total = n_pos + n_neg
        order = np.lexsort((n_pos, total, cost))
        first = order[0]
        if np.isfinite(cost[first]):
            key = (float(cost[first]), float(total[first]), float(n_pos[first]))
            if key < best_key:
                best_key = key
                best_n_pos, best_n_neg = int(n_pos[first]), float(n_neg[first])
        low = int(n_pos[-1]) + 1
    return int(best_n_pos), int(best_n_neg)


def best_split(
    model: MarginModel, v: int, target_precision: float, target_recall: float
) -> tuple[int, int]:
    """Integer split ``n1 + n0 = v`` minimizing ``max(eP/target_P, eR/target_R)``.

    The minimax split meets both targets whenever any split does, and otherwise misses
    them by the smallest common factor. Ties go to the smaller ``n1``.
    """
    big_n1, big_n0 = model.population_pos, model.population_neg
    low = 1 if big_n0 is None else max(1, v - big_n0)
    high = v - 1 if big_n1 is None else min(v - 1, big_n1)
    if low > high:
        raise InputError(f"v = {v:,} does not fit in the population")
    best_score, best_n_pos = math.inf, low
    for start in range(low, high + 1, _SCAN_CHUNK):
        n_pos = np.arange(start, min(high, start + _SCAN_CHUNK - 1) + 1, dtype=float)
        score = np.maximum(
            model.precision(n_pos) / target_precision,
            model.recall(n_pos, v - n_pos) / target_recall,
        )
        first = int(np.argmin(score))
        if score[first] < best_score:
            best_score, best_n_pos = float(score[first]), int(n_pos[first])
    return best_n_pos, v - best_n_pos


# --- assured plans: the cheapest design meeting both margins with probability >= G ----------

#: The assurance saw-tooths as ``n1`` grows: the integer thresholds of ``TP`` move (its
#: amplitude, about one probability of a single count, shrinks as fast as the trend's slope,
#: so the sizes it can mislead a bisection by stay a few dozen). Below a search's first hit
#: every ``n1`` within this many is checked.
_SAWTOOTH_WINDOW = 32
#: Without finite strata a search stops at this multiple of the expected-value design.
_SEARCH_SPAN = 64


def _unassurable(target: float, where: str) -> InputError:
    return InputError(
        f"no design {where} has a {100 * target:g} % chance of meeting both margins; lower the "
        "assurance target or widen the margins"
    )


def _totals_with_positives(n_pos: int, k: float, s: float) -> tuple[int, int]:
    """The range of ``v`` whose Eq 1 design has exactly ``n_pos`` predicted positives."""
    share = k * s / (k * s + 1.0)
    low = max(2, math.ceil((n_pos - 0.5) / share) - 2)
    while stratum_sizes(low, k, s)[0] < n_pos:
        low += 1
    high = max(low, math.floor((n_pos + 0.5) / share) + 2)
    while high > low and stratum_sizes(high, k, s)[0] > n_pos:
        high -= 1
    return low, high


def assured_sizes_at_ratio(
    chance: AssuranceModel, target: float, s: float, *, start_total: int
) -> tuple[int, int]:
    """Smallest ``v`` whose Eq 1 design at ratio ``s`` meets both margins with probability
    at least ``target`` (the assured version of the paper's procedure).

    The assurance of both margins rises with ``v``: smoothly with ``n0``, with a small
    saw-tooth in ``n1``. So: gallop and bisect from ``start_total`` (the expected-value
    plan) to a ``v`` that meets the target while ``v - 1`` misses it; then, for each of the
    :data:`_SAWTOOTH_WINDOW` values of ``n1`` below, test the largest smaller ``v`` giving
    that ``n1`` and, where it meets the target, bisect down (rising in ``n0``) to the
    smallest. About ``2*log2(v) + 32`` assurance evaluations.
    """
    k, strata = chance.k, chance.strata
    s = validation.oversampling("s", s)
    ks = k * s

    def fits(n_pos: int, n_neg: int) -> bool:
        return (
            n_pos >= 1
            and n_neg >= 1
            and (strata is None or (n_pos <= strata[0] and n_neg <= strata[1]))
        )

    def meets(v: int) -> bool:
        n_pos, n_neg = stratum_sizes(v, k, s)
        return fits(n_pos, n_neg) and chance.at(n_pos, n_neg, at_least=target).both >= target

    if strata is None:
        cap = _SEARCH_SPAN * max(start_total, 100)
    else:
        cap = math.floor(min(strata[0] * (ks + 1.0) / ks, strata[1] * (ks + 1.0)))
        while cap > 2 and not fits(*stratum_sizes(cap, k, s)):
            cap -= 1
    found = _smallest_integer(meets, start_total, cap)
    if found is None:
        where = "within the population" if strata is not None else "of a reasonable size"
        raise _unassurable(target, f"at s = {s:.3g} {where}")
    smallest = found
    found_pos = stratum_sizes(found, k, s)[0]
    for n_pos in range(found_pos - 1, max(found_pos - _SAWTOOTH_WINDOW, 0), -1):
        low, high = _totals_with_positives(n_pos, k, s)
        high = min(high, smallest - 1)
        if high < low or not meets(high):
            continue
        while high - low > 1:  # meets(high); find the least v >= low that meets
            middle = (low + high) // 2
            if meets(middle):
                high = middle
            else:
                low = middle
        smallest = low if meets(low) else high
    return stratum_sizes(smallest, k, s)


def assured_sizes_optimal(
    chance: AssuranceModel,
    target: float,
    cost_pos: float = 1.0,
    cost_neg: float = 1.0,
    *,
    start: tuple[int, int],
) -> tuple[int, int]:
    """Integer ``(n1, n0)`` of least ``cost_pos*n1 + cost_neg*n0`` whose probability of
    meeting both margins is at least ``target``. Ties go to the smaller ``n1 + n0``, then
    the smaller ``n1``.

    A frontier walk rather than a grid: for each ``n1`` the least ``n0`` meeting the
    target (the assurance rises with ``n0``: gallop and bisect from a guess on the
    frontier ``a/n1 + b/n0 = constant`` through the last point found, with the Eq 10
    coefficients ``a``, ``b``) gives ``cost(n1)``. ``n1`` whose precision assurance alone
    misses the target are skipped. A pattern search over ``n1`` (steps halving from
    ``n1/8``) starting at the expected-value design ``start`` finds the bottom of
    ``cost(n1)``; because the bottom is flat and saw-toothed, a walk each way from it then
    checks every ``n1`` until :data:`_SAWTOOTH_WINDOW` in a row bring nothing cheaper.
    """
    strata = chance.strata
    cap_pos = strata[0] if strata is not None else _SEARCH_SPAN * max(start[0], 100)
    cap_neg = strata[1] if strata is not None else _SEARCH_SPAN * max(start[1], 100)
    where = "within the population" if strata is not None else "of a reasonable size"
    precision_memo: dict[int, bool] = {}

    def precision_meets(n_pos: int) -> bool:
        if n_pos not in precision_memo:
            precision_memo[n_pos] = chance.precision_at(n_pos) >= target
        return precision_memo[n_pos]

    low = _smallest_integer(precision_meets, start[0], cap_pos)
    if low is None:
        raise _unassurable(target, where)
    for n_pos in range(low - 1, max(low - _SAWTOOTH_WINDOW, 0), -1):
        if precision_meets(n_pos):
            low = n_pos

    coefficient_pos = (1.0 - chance.pi1) / chance.pi1
    coefficient_neg = (1.0 - chance.pi0) / chance.pi0
    anchor = [start[0], max(start[1], 1)]  # the last frontier point found
    partners: dict[int, int | None] = {}

    def partner(n_pos: int) -> int | None:
        if n_pos not in partners:
            n_neg = None
            if precision_meets(n_pos):
                level = coefficient_pos / anchor[0] + coefficient_neg / anchor[1]
                room = level - coefficient_pos / n_pos
                guess = coefficient_neg / room if room > 0 else cap_neg
                n_neg = _smallest_integer(
                    lambda n: chance.at(n_pos, n, at_least=target).both >= target,
                    min(max(guess, 1.0), cap_neg),
                    cap_neg,
                )
            if n_neg is not None:
                anchor[:] = [n_pos, n_neg]
            partners[n_pos] = n_neg
        return partners[n_pos]

    def key(n_pos: int) -> tuple[float, float, float]:
        n_neg = partner(n_pos)
        if n_neg is None:
            return (math.inf, math.inf, math.inf)
        return (cost_pos * n_pos + cost_neg * n_neg, float(n_pos + n_neg), float(n_pos))

    current = min(max(low, start[0]), cap_pos)
    best = key(current)
    while not math.isfinite(best[0]) and current < cap_pos:
        current = min(cap_pos, 2 * current)
        best = key(current)
    if not math.isfinite(best[0]):
        raise _unassurable(target, where)
    step = max(1, current // 8)
    while step >= 1:
        for candidate in (current + step, current - step):
            if low <= candidate <= cap_pos and key(candidate) < best:
                current, best = candidate, key(candidate)
                break
        else:
            step //= 2
    # The bottom of cost(n1) is flat and saw-toothed: walk each way from the best design
    # until _SAWTOOTH_WINDOW sizes in a row bring nothing cheaper.
    for direction in (1, -1):
        n_pos, misses = current, 0
        while misses < _SAWTOOTH_WINDOW:
            n_pos += direction
            if not low <= n_pos <= cap_pos:
                break
            if key(n_pos) < best:
                current, best, misses = n_pos, key(n_pos), 0
            else:
                misses += 1
    n_neg = partner(current)
    assert n_neg is not None  # key(current) is finite
    return current, int(n_neg)
