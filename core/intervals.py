"""Closed-form frequentist intervals of one labeled round (methods §3-4).

Precision is a binomial proportion inside the predicted-positive stratum, so every
standard proportion interval applies (Wald Eq 3, Wilson, Agresti-Coull, Clopper-Pearson,
Jeffreys). Recall and FPR are ratios of the two strata's rates: Katz log-ratio (Eq 4) and
the delta method (Eq 5); FPR also gets the two strata's Wilson intervals combined into one
for their ratio (MOVER-R), which keeps its level where the log-ratio does not.

Zero cells (methods §3-4): when any of TP, FP, FN, TN is 0 the log-ratio is undefined and
Wald collapses to zero width, so the ratio intervals use the Haldane-Anscombe correction
(0.5 added to every cell) and say so in :attr:`Interval.note`. The corrected interval is
centred on the corrected estimate, so when the plain estimate sits on the boundary (FN = 0
gives recall 1, FP = 0 gives FPR 0) it can fall outside; the bound on that side is then
moved to the estimate, as Clopper-Pearson and Jeffreys do for a proportion at 0 or 1
(Brown, Cai and DasGupta 2001). An interval never excludes its own estimate.

Designs (keyword ``design`` of the ratio intervals). ``"stratified"`` (the default): the
strata were sampled separately and ``k = N1/N0`` is known; recall is ``1/(1 + x)`` with
``x = pi0^/(k*pi1^)`` and ``se^2 = 1/TP - 1/n1 + 1/FN - 1/n0`` (Eq 4). ``"random"``: one
simple random sample of ``v`` items with ``k`` *estimated* by ``n1/n0`` (methods §2, the
paper's Section 2.1). Then ``x = FN/TP`` and, the four counts being multinomial, the delta
method gives ``var(log(FN/TP)) = 1/TP + 1/FN``: the uncertainty of ``k`` adds ``1/n1 + 1/n0``
to the stratified ``se^2``. Treating the estimated ``k`` as known under-covers (about 88 %
instead of 95 % at the paper's Table 1 truth). Likewise FPR uses ``x' = TN/FP`` and
``se'^2 = 1/FP + 1/TN``. The Haldane-Anscombe correction (0.5 added to every count) and the
boundary rule apply in the same way; with no zero cell the estimate ``1/(1 + x)`` equals the
stratified one with ``k = n1/n0``. In the random design the delta interval for recall equals
the textbook ``R +- z*sqrt(R(1-R)/(TP+FN))``.

Bounds of the log-ratio intervals are computed as ``logistic(-(log x +- z*se))``, which
equals ``1/(1 + x*exp(+-z*se))`` but cannot overflow: an extreme input (e.g. a near-zero
prior in :mod:`core.bayes`) gives a bound of exactly 0 or 1 instead of an OverflowError.

The finite population correction multiplies each stratum's binomial variance by
``f = (N - n)/(N - 1)`` (passed as ``fpc=(f1, f0)``). It is applied to the variance-based
normal intervals (Wald, Katz, delta) and to the Wilson score interval, which inverts the
same corrected test and so equals Wilson's interval for ``n/f`` trials (methods, "Finite
population correction"). The exact interval becomes the hypergeometric one when the
stratum's size is given (:func:`hypergeometric_precision`): it is what Clopper-Pearson is
for a sample drawn without replacement, and Jeffreys gives the interval of the stratum's
own precision (beta-binomial over the items not labeled). Agresti-Coull stays as it is,
which is conservative.

Scalar paths use ``math`` and ``scipy.special`` directly: all closed forms for one matrix
take tens of microseconds, fast enough to recompute on every keystroke.

References
----------
* Shang et al. 2023: Eq 3 (Wald), Eq 4 (Katz log-ratio), Eq 5 (delta method).
* Wilson 1927; Agresti and Coull 1998; Clopper and Pearson 1934; Brown, Cai and DasGupta
  2001 (Jeffreys).
* Katz, Baptista, Azen and Pike 1978 (log-ratio interval); Haldane 1956 and Anscombe 1956
  (zero cells); Zou and Donner 2008, Newcombe 2016 (MOVER-R).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core import validation
from core.confusion import ConfusionMatrix, fpr_from_rates, recall_from_rates
from core.errors import InputError

DESIGNS = ("stratified", "random")
HALDANE_NOTE = "zero cell: Haldane-Anscombe correction (+0.5 to every cell) applied"
BOUNDARY_NOTE = "bound moved to the estimate, which lies on the boundary"
NO_FPC = (1.0, 1.0)
CENSUS_NOTE = "every item of the stratum is labeled: no sampling error is left"
NO_NEGATIVE_NOTE = "no actual negative was labeled (FP = TN = 0): FPR is undefined"


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A two-sided interval.

    Attributes
    ----------
    lower, upper : float
        Bounds, inside ``[0, 1]`` for every rate in this package.
    method : str
        Machine name (``"wilson"``, ``"katz_log"``, ...), the key used in JSON and Excel.
    note : str
        Why this interval deserves care (correction applied, clipped), or ``""``.
    """

    lower: float
    upper: float
    method: str
    note: str = ""

    @property
    def width(self) -> float:
        return self.upper - self.lower

    @property
    def half_width(self) -> float:
        return (self.upper - self.lower) / 2.0

    def contains(self, value: float) -> bool:
        return self.lower <= value <= self.upper

    def as_list(self) -> list[float]:
        return [self.lower, self.upper]


def reaching_estimate(interval: Interval, estimate: float) -> Interval:
    """Widen ``interval`` to contain a finite ``estimate`` on the boundary (module docstring)."""
    if not math.isfinite(estimate) or interval.contains(estimate):
        return interval
    note = "; ".join(filter(None, [interval.note, BOUNDARY_NOTE]))
    return Interval(
        lower=min(interval.lower, estimate),
        upper=max(interval.upper, estimate),
        method=interval.method,
        note=note,
    )


def _clipped(lower: float, upper: float, method: str, note: str = "") -> Interval:
    if lower < 0.0 or upper > 1.0:
        note = "; ".join(filter(None, [note, "clipped to [0, 1]"]))
    return Interval(lower=max(0.0, lower), upper=min(1.0, upper), method=method, note=note)


def logistic(t: float) -> float:
    """``1/(1 + exp(-t))`` without overflow for any finite or infinite ``t``."""
    if t >= 0.0:
        return 1.0 / (1.0 + math.exp(-t))
    e = math.exp(t)  # t < 0: underflows to 0 at worst, never overflows
    return e / (1.0 + e)


def log_ratio_bounds(x: float, spread: float) -> tuple[float, float]:
    """``(1/(1 + x*exp(+spread)), 1/(1 + x*exp(-spread)))`` for ``x > 0``, overflow-safe.

    ``1/(1 + x*exp(s)) = logistic(-(log x + s))``; a huge ``spread`` gives ``(0, 1)``.
    """
    log_x = math.log(x)
    return logistic(-(log_x + spread)), logistic(-(log_x - spread))


def _design(design: str) -> str:
    if design not in DESIGNS:
        raise InputError(f"design must be 'stratified' or 'random', got {design!r}")
    return design


def _random_counts(
    matrix: ConfusionMatrix, k: float | None, fpc: tuple[float, float]
) -> tuple[float, float, float, float, str]:
    """``(TP, FP, FN, TN, note)`` of a random sample, Haldane-corrected on a zero cell.

    ``k`` is the ratio the caller computed with; in a random sample it can only be the
    estimate ``n1/n0``, so any other value is refused rather than silently ignored.
    """
    matrix.require_both_strata()
    if k is not None:
        k = validation.imbalance("k", k)
        if not math.isclose(k, matrix.sample_k, rel_tol=1e-9):
            raise InputError(
                f"a random sample estimates k by n1/n0 = {matrix.sample_k:.6g}; got k = {k:g} "
                "(use design='stratified' for a known k)"
            )
    if tuple(fpc) != NO_FPC:
        raise InputError(
            "the finite population correction needs a stratified design with known "
            "population counts; a random sample has none"
        )
    tp, fp, fn, tn = (float(cell) for cell in matrix.as_tuple())
    if matrix.has_zero_cell:
        return tp + 0.5, fp + 0.5, fn + 0.5, tn + 0.5, HALDANE_NOTE
    return tp, fp, fn, tn, ""


def _random_rate(successes: int, failures: int) -> float:
    total = successes + failures
    return successes / total if total else float("nan")


# --- precision: a binomial proportion ---------------------------------------------------


def _successes_and_trials(matrix: ConfusionMatrix) -> tuple[int, int]:
    matrix.require_both_strata()
    return matrix.tp, matrix.n_pos


def wald_precision(
    matrix: ConfusionMatrix, confidence: float = 0.95, fpc: tuple[float, float] = NO_FPC
) -> Interval:
    """Wald interval ``pi1^ +- z*sqrt(pi1^(1-pi1^)/n1)`` (Eq 3), times the FPC if given."""
    x, n = _successes_and_trials(matrix)
    p, z = x / n, validation.z_value(confidence)
    half = z * math.sqrt(p * (1.0 - p) / n * fpc[0])
    note = "zero width: TP or FP is 0 (use Wilson or Jeffreys)" if x in (0, n) else ""
    return _clipped(p - half, p + half, "wald", note)


def wilson_precision(
    matrix: ConfusionMatrix, confidence: float = 0.95, fpc: tuple[float, float] = NO_FPC
) -> Interval:
    """Wilson score interval (Wilson 1927), the usual choice when ``n*p < 10``.

    With the finite population correction ``f = fpc[0]`` the interval inverts
    ``|pi1^ - pi1| <= z*sqrt(f*pi1*(1-pi1)/n)``, which is Wilson's interval for ``n/f``
    trials; a stratum labeled in full (``f = 0``) has no sampling error left.
    """
    x, n = _successes_and_trials(matrix)
    factor = float(fpc[0])
    lower, upper = wilson_bounds(x, n, validation.z_value(confidence), factor)
    note = CENSUS_NOTE if factor <= 0.0 else ""
    return Interval(lower=lower, upper=upper, method="wilson", note=note)


def wilson_bounds(x: float, n: float, z: float, factor: float = 1.0) -> tuple[float, float]:
    """Wilson's score interval of ``x`` successes in ``n`` trials, for ``n/factor`` trials
    under the finite population correction (``factor = 0``: the point ``x/n``)."""
    p = x / n
    if factor <= 0.0:
        return p, p
    trials = n / factor
    z2 = z * z
    center = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # The closed form leaves rounding noise (1e-17) where the bound is exactly 0 or 1.
    lower = 0.0 if x <= 0 else max(0.0, center - half)
    upper = 1.0 if x >= n else min(1.0, center + half)
    return lower, upper


def agresti_coull_precision(matrix: ConfusionMatrix, confidence: float = 0.95) -> Interval:
    """Agresti-Coull interval: Wald around ``(x + z^2/2)/(n + z^2)`` with ``n + z^2`` trials."""
    x, n = _successes_and_trials(matrix)
    z = validation.z_value(confidence)
    n_tilde = n + z * z
    p_tilde = (x + z * z / 2) / n_tilde
    half = z * math.sqrt(p_tilde * (1 - p_tilde) / n_tilde)
    return _clipped(p_tilde - half, p_tilde + half, "agresti_coull")


def clopper_pearson_precision(
    matrix: ConfusionMatrix, confidence: float = 0.95, population_pos: int | None = None
) -> Interval:
    """Clopper-Pearson exact interval from Beta quantiles (guaranteed coverage >= c).

    With ``population_pos`` (the predicted-positive stratum's size ``N1``, for the finite
    population correction) the exact interval for a sample drawn without replacement:
    :func:`hypergeometric_precision`.
    """
    from scipy.special import betaincinv  # deferred: ~0.25 s that planning never needs

    if population_pos is not None:
        return hypergeometric_precision(matrix, population_pos, confidence)
    x, n = _successes_and_trials(matrix)
    alpha = 1.0 - validation.confidence(confidence)
    lower = 0.0 if x == 0 else float(betaincinv(x, n - x + 1, alpha / 2))
    upper = 1.0 if x == n else float(betaincinv(x + 1, n - x, 1 - alpha / 2))
    return Interval(lower=lower, upper=upper, method="clopper_pearson")


#: Above this stratum size scipy's hypergeometric tails slow down with ``N`` (0.7 s a
#: call at 10^11, minutes for an interval at 10^13; fuzz 20): :func:`hypergeometric_tails`
#: sums the ``n + 1`` terms instead.
SCIPY_HYPERGEOMETRIC_LIMIT = 10**9


def hypergeometric_tails(x: int, big_n: int, m: int, n: int) -> tuple[float, float]:
    """``(P(X >= x), P(X <= x))`` for ``X`` hypergeometric: ``n`` draws without
    replacement from ``big_n`` items of which ``m`` are successes. Work is O(n), whatever
    ``big_n``.

    Each term is ``C(n, k) p^k q^(n-k)`` (``p = m/N``, ``q = 1 - p``) times the correction
    ``prod_{i<k}(1 - i/m) prod_{i<n-k}(1 - i/(N-m)) / prod_{i<n}(1 - i/N)``, summed in
    logarithms with ``log1p``: the correction stays accurate where ``log(N!)`` differences
    would lose every digit at ``N = 10^15``.
    """
    import numpy as np
    from scipy.special import gammaln

    failures = big_n - m
    low, high = max(0, n - failures), min(n, m)
    k = np.arange(low, high + 1)
    steps = np.arange(n, dtype=float)

    def log_falling(size: int, count: np.ndarray) -> np.ndarray:
        """``sum_{i<count} log1p(-i/size)`` for each count (0 for count 0; every count
        is at most ``size``)."""
        if size == 0:
            return np.zeros(count.shape)
        shares = steps[: min(n, size)] / size
        cumulative = np.concatenate(([0.0], np.cumsum(np.log1p(-shares))))
        return cumulative[count]

    terms = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    if m:
        terms = terms + k * math.log(m / big_n) + log_falling(m, k)
    if failures:
        terms = terms + (n - k) * math.log(failures / big_n) + log_falling(failures, n - k)
    terms -= log_falling(big_n, np.array([n]))[0]
    probabilities = np.exp(terms)
    at_least = float(probabilities[k >= x].sum())
    at_most = float(probabilities[k <= x].sum())
    return min(at_least, 1.0), min(at_most, 1.0)


def hypergeometric_precision(
    matrix: ConfusionMatrix, population_pos: int, confidence: float = 0.95
) -> Interval:
    """Exact interval for precision when the ``n1`` labeled items were drawn without
    replacement from a stratum of ``N1 = population_pos`` items (Clopper-Pearson's
    construction with hypergeometric tails; methods, "Finite population correction").

    The stratum holds ``M`` true positives, ``0 <= M <= N1``. ``M`` is kept unless one of
    the one-sided tests rejects it: ``P(X >= TP | M) < alpha/2`` or ``P(X <= TP | M) <
    alpha/2``, with ``X`` hypergeometric. The first tail grows with ``M`` and the second
    shrinks, so the kept values form ``[M_low, M_high]``, found by bisection; the interval
    is ``[M_low/N1, M_high/N1]``. Coverage is at least ``c`` for every ``M``; labeling the
    whole stratum gives the exact precision, and as ``N1`` grows the interval tends to
    Clopper-Pearson's.
    """
    from scipy.stats import hypergeom  # deferred, like betaincinv above

    x, n = _successes_and_trials(matrix)
    big_n = validation.whole_at_least("population_pos", population_pos, n, None)
    alpha = 1.0 - validation.confidence(confidence)
    # M can only be between the positives seen and the stratum less the negatives seen.
    fewest, most = x, big_n - (n - x)

    def upper_tail(m: int) -> float:  # P(X >= x | M = m), grows with m
        if big_n > SCIPY_HYPERGEOMETRIC_LIMIT:
            return hypergeometric_tails(x, big_n, m, n)[0]
        return float(hypergeom.sf(x - 1, big_n, m, n))

    def lower_tail(m: int) -> float:  # P(X <= x | M = m), shrinks as m grows
        if big_n > SCIPY_HYPERGEOMETRIC_LIMIT:
            return hypergeometric_tails(x, big_n, m, n)[1]
        return float(hypergeom.cdf(x, big_n, m, n))

    def first_kept(low: int, high: int, kept) -> int:
        """Smallest m in [low, high] with kept(m), ``kept`` being monotone (False..True)."""
        while low < high:
            middle = (low + high) // 2
            if kept(middle):
                high = middle
            else:
                low = middle + 1
        return low

    m_low = first_kept(fewest, most, lambda m: upper_tail(m) >= alpha / 2)
    # The largest m with lower_tail(m) >= alpha/2 is one before the first that fails.
    m_high = first_kept(fewest, most + 1, lambda m: m > most or lower_tail(m) < alpha / 2) - 1
    return Interval(
        lower=m_low / big_n,
        upper=m_high / big_n,
        method="clopper_pearson",  # the exact interval's key; the correction's warning
    )  # says it is hypergeometric (a note would mark the row as a caution)


def jeffreys_precision(
    matrix: ConfusionMatrix, confidence: float = 0.95, population_pos: int | None = None
) -> Interval:
    """Jeffreys interval: equal-tailed Beta(x+1/2, n-x+1/2) quantiles, with the bound set to
    0 (1) when ``x = 0`` (``x = n``) as recommended by Brown, Cai and DasGupta (2001).

    With ``population_pos`` (the finite population correction) the same posterior's
    interval for the stratum's own precision (:func:`core.bayes.finite_posterior_interval`).
    """
    from scipy.special import betaincinv  # deferred: ~0.25 s that planning never needs

    x, n = _successes_and_trials(matrix)
    if population_pos is not None:
        from core.bayes import finite_posterior_interval

        big_n = validation.whole_at_least("population_pos", population_pos, n, None)
        return finite_posterior_interval(x, n, big_n, x + 0.5, n - x + 0.5, confidence, "jeffreys")
    alpha = 1.0 - validation.confidence(confidence)
    lower = 0.0 if x == 0 else float(betaincinv(x + 0.5, n - x + 0.5, alpha / 2))
    upper = 1.0 if x == n else float(betaincinv(x + 0.5, n - x + 0.5, 1 - alpha / 2))
    return Interval(lower=lower, upper=upper, method="jeffreys")


def precision_intervals(
    matrix: ConfusionMatrix,
    confidence: float = 0.95,
    fpc: tuple[float, float] = NO_FPC,
    population_pos: int | None = None,
) -> dict[str, Interval]:
    """All closed-form precision intervals, keyed by method name (JSON order).

    ``fpc`` corrects Wald and Wilson; ``population_pos`` (given with the correction)
    makes the exact interval hypergeometric and Jeffreys that of the stratum's own
    precision.
    """
    return {
        "wald": wald_precision(matrix, confidence, fpc),
        "wilson": wilson_precision(matrix, confidence, fpc),
        "agresti_coull": agresti_coull_precision(matrix, confidence),
        "clopper_pearson": clopper_pearson_precision(matrix, confidence, population_pos),
        "jeffreys": jeffreys_precision(matrix, confidence, population_pos),
    }


# --- recall and FPR: ratios of the two strata's rates -----------------------------------


def _rates_for_log_ratio(matrix: ConfusionMatrix) -> tuple[float, float, float, float, str]:
    """``(pi1, pi0, n1, n0, note)``, Haldane-Anscombe corrected when a cell is 0 (methods §3-4)."""
    matrix.require_both_strata()
    if matrix.has_zero_cell:
        n1, n0 = matrix.n_pos + 1.0, matrix.n_neg + 1.0
        return (matrix.tp + 0.5) / n1, (matrix.fn + 0.5) / n0, n1, n0, HALDANE_NOTE
    n1, n0 = float(matrix.n_pos), float(matrix.n_neg)
    return matrix.tp / n1, matrix.fn / n0, n1, n0, ""


def _recall_ratio_and_se(
    matrix: ConfusionMatrix, k: float | None, fpc: tuple[float, float], design: str
) -> tuple[float, float, str, float]:
    """``(x, se, note, plain estimate)`` of recall's log-ratio for either design."""
    if _design(design) == "random":
        tp, _, fn, _, note = _random_counts(matrix, k, fpc)
        estimate = _random_rate(matrix.tp, matrix.fn)
        return fn / tp, math.sqrt(1.0 / tp + 1.0 / fn), note, estimate
    k = validation.imbalance("k", k)
    pi1, pi0, n1, n0, note = _rates_for_log_ratio(matrix)
    x = pi0 / (k * pi1)
    se = math.sqrt((1 - pi1) / (n1 * pi1) * fpc[0] + (1 - pi0) / (n0 * pi0) * fpc[1])
    return x, se, note, recall_point(matrix, k)


def katz_log_recall(
    matrix: ConfusionMatrix,
    k: float | None,
    confidence: float = 0.95,
    fpc: tuple[float, float] = NO_FPC,
    *,
    design: str = "stratified",
) -> Interval:
    """Katz log-ratio interval for recall (Eq 4), asymmetric by design.

    Stratified: ``x = pi0^/(k*pi1^)``, ``se = sqrt((1-pi1^)/(n1*pi1^) + (1-pi0^)/(n0*pi0^))``,
    bounds ``1/(1 + x*exp(+-z*se))``. Random (``k`` estimated by ``n1/n0``, may be passed
    as ``None``): ``x = FN/TP``, ``se = sqrt(1/TP + 1/FN)`` (module docstring).
    """
    x, se, note, estimate = _recall_ratio_and_se(matrix, k, fpc, design)
    z = validation.z_value(confidence)
    lower, upper = log_ratio_bounds(x, z * se)
    interval = Interval(lower=lower, upper=upper, method="katz_log", note=note)
    return reaching_estimate(interval, estimate)


def delta_recall(
    matrix: ConfusionMatrix,
    k: float | None,
    confidence: float = 0.95,
    fpc: tuple[float, float] = NO_FPC,
    *,
    design: str = "stratified",
) -> Interval:
    """Delta-method interval ``recall^ +- z * x/(1+x)^2 * se`` (Eq 5), symmetric.

    ``x`` and ``se`` as in :func:`katz_log_recall` for the chosen ``design``.
    """
    x, se, note, estimate = _recall_ratio_and_se(matrix, k, fpc, design)
    z = validation.z_value(confidence)
    center = 1 / (1 + x)
    half = z * x / (1 + x) ** 2 * se
    return reaching_estimate(_clipped(center - half, center + half, "delta", note), estimate)


def wald_recall_random(matrix: ConfusionMatrix, confidence: float = 0.95) -> Interval:
    """Textbook recall interval of a plain random sample, ``R +- z*sqrt(R(1-R)/(TP+FN))``
    (methods §2, Section 2.1 of the paper)."""
    matrix.require_both_strata()
    positives = matrix.tp + matrix.fn
    if positives == 0:
        return Interval(
            lower=0.0,
            upper=1.0,
            method="wald",
            note="no actual positive labeled: recall is undefined",
        )
    r, z = matrix.tp / positives, validation.z_value(confidence)
    half = z * math.sqrt(r * (1 - r) / positives)
    note = "zero width: TP or FN is 0" if matrix.tp in (0, positives) else ""
    return _clipped(r - half, r + half, "wald", note)


def katz_log_fpr(
    matrix: ConfusionMatrix,
    k: float | None,
    confidence: float = 0.95,
    fpc: tuple[float, float] = NO_FPC,
    *,
    design: str = "stratified",
) -> Interval:
    """Katz log-ratio interval for the false positive rate (methods §3-4, roles swapped).

    Stratified: ``x' = (1-pi0^)/(k*(1-pi1^))``,
    ``se' = sqrt(pi1^/(n1*(1-pi1^)) + pi0^/(n0*(1-pi0^)))``. Random (``k = n1/n0``):
    ``x' = TN/FP``, ``se' = sqrt(1/FP + 1/TN)`` (module docstring).
    """
    if _design(design) == "random":
        _, fp, _, tn, note = _random_counts(matrix, k, fpc)
        x, se = tn / fp, math.sqrt(1.0 / fp + 1.0 / tn)
        estimate = _random_rate(matrix.fp, matrix.tn)
    else:
        k = validation.imbalance("k", k)
        pi1, pi0, n1, n0, note = _rates_for_log_ratio(matrix)
        x = (1 - pi0) / (k * (1 - pi1))
        se = math.sqrt(pi1 / (n1 * (1 - pi1)) * fpc[0] + pi0 / (n0 * (1 - pi0)) * fpc[1])
        estimate = (
            float(fpr_from_rates(matrix.pi1_hat, matrix.pi0_hat, k))
            if matrix.fp + matrix.tn
            else float("nan")  # no actual negative labeled: FPR is undefined
        )
    z = validation.z_value(confidence)
    lower, upper = log_ratio_bounds(x, z * se)
    interval = Interval(lower=lower, upper=upper, method="katz_log", note=note)
    return reaching_estimate(interval, estimate)


def _mover_ratio_bounds(
    share1: float, bounds1: tuple[float, float], share0: float, bounds0: tuple[float, float]
) -> tuple[float, float]:
    """Bounds of ``share1/share0`` from each share's own interval (MOVER-R: Zou and Donner
    2008, Newcombe 2016; methods §4, "FPR: Wilson intervals of the two strata combined").

    Each bound is the root of ``(t1 - r*t0)^2 = (t1 - b1)^2 + r^2*(t0 - b0)^2`` with the
    shares' bounds ``b1, b0`` on the sides that move the ratio the same way. A quadratic
    without a root (the denominator's interval reaches 0) leaves that side open: 0 or inf.
    """
    (low1, high1), (low0, high0) = bounds1, bounds0
    product = share1 * share0

    def root(b1: float, b0: float, sign: float) -> float:
        quadratic = b0 * (2.0 * share0 - b0)
        constant = b1 * (2.0 * share1 - b1)
        discriminant = product * product - quadratic * constant
        if quadratic == 0.0:
            if sign < 0.0 and product > 0.0:
                return constant / (2.0 * product)
            return math.inf if sign > 0.0 else 0.0
        if discriminant < 0.0:
            return math.inf if sign > 0.0 else 0.0
        return (product + sign * math.sqrt(discriminant)) / quadratic

    lower = max(0.0, root(low1, high0, -1.0))
    upper = root(high1, low0, +1.0)
    if upper < 0.0:  # the upper root lies past a pole of the ratio: nothing bounds it
        upper = math.inf
    return lower, upper


def wilson_ratio_fpr(
    matrix: ConfusionMatrix,
    k: float | None,
    confidence: float = 0.95,
    fpc: tuple[float, float] = NO_FPC,
    *,
    design: str = "stratified",
) -> Interval:
    """The false positive rate's interval from the Wilson intervals of the two strata
    (methods §4, "FPR: Wilson intervals of the two strata combined").

    Stratified: ``FPR = k*r/(k*r + 1)`` with ``r = q1/q0``, ``q1 = FP/n1`` and ``q0 =
    TN/n0`` the shares of actual negatives in each stratum. Each share gets its Wilson
    interval (for ``n/f`` trials under the finite population correction) and the ratio's
    bounds combine them (:func:`_mover_ratio_bounds`). Unlike the log-ratio interval it
    needs no correction for a zero cell and keeps its level when ``q1`` is near 1 (a round
    with few or no true positives among the flagged items). Random: the Wilson interval of
    ``FP/(FP + TN)``, the share of the actual negatives that were flagged.
    """
    matrix.require_both_strata()
    z = validation.z_value(confidence)
    negatives = matrix.fp + matrix.tn
    if _design(design) == "random":
        _random_counts(matrix, k, fpc)  # refuses a k or an FPC a random sample cannot have
        if negatives == 0:
            return Interval(lower=0.0, upper=1.0, method="wilson_ratio", note=NO_NEGATIVE_NOTE)
        lower, upper = wilson_bounds(matrix.fp, negatives, z)
        return Interval(lower=lower, upper=upper, method="wilson_ratio")
    k = validation.imbalance("k", k)
    if negatives == 0:
        return Interval(lower=0.0, upper=1.0, method="wilson_ratio", note=NO_NEGATIVE_NOTE)
    share1, share0 = matrix.fp / matrix.n_pos, matrix.tn / matrix.n_neg
    bounds0 = wilson_bounds(matrix.tn, matrix.n_neg, z, float(fpc[1]))
    if bounds0[1] == 0.0:
        # Every unflagged item was labeled and none is negative: every actual negative is
        # flagged (FP > 0 here), so the FPR is exactly 1.
        return Interval(lower=1.0, upper=1.0, method="wilson_ratio", note=CENSUS_NOTE)
    ratio_lower, ratio_upper = _mover_ratio_bounds(
        share1,
        wilson_bounds(matrix.fp, matrix.n_pos, z, float(fpc[0])),
        share0,
        bounds0,
    )

    def fpr(ratio: float) -> float:
        return 1.0 if math.isinf(ratio) else k * ratio / (k * ratio + 1.0)

    note = CENSUS_NOTE if min(fpc) <= 0.0 else ""
    return Interval(
        lower=fpr(ratio_lower), upper=fpr(ratio_upper), method="wilson_ratio", note=note
    )


def recall_point(matrix: ConfusionMatrix, k: float) -> float:
    """``1/(1 + pi0^/(k*pi1^))`` (methods §2), NaN when no actual positive was labeled."""
    matrix.require_both_strata()
    if matrix.tp == 0 and matrix.fn == 0:
        return float("nan")
    return float(recall_from_rates(matrix.pi1_hat, matrix.pi0_hat, k))
