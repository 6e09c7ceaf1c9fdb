"""Closed-form intervals of many labeled rounds at once (the vector form of
:mod:`core.intervals`).

Every function takes the four counts ``TP, FP, FN, TN`` as arrays (one entry per confusion
matrix; anything that broadcasts) and returns a :class:`BatchIntervals` whose bounds agree
with the scalar functions of :mod:`core.intervals` to rounding, note for note:

* precision, a binomial proportion in the predicted-positive stratum (Eq 3): Wald, Wilson,
  Agresti-Coull, Clopper-Pearson and Jeffreys (bounds 0 and 1 at ``TP = 0`` and ``FP = 0``,
  Brown, Cai and DasGupta 2001);
* recall and FPR, ratios of the two strata's rates: Katz log-ratio (Eq 4) and the delta
  method (Eq 5), in the stratified or the random design, with the Haldane-Anscombe
  correction in rows with a zero cell and the bound moved to a plain estimate on the
  boundary.

A loop over :mod:`core.intervals` costs tens of microseconds a matrix; these cost well under
a microsecond a matrix for the normal-theory methods and about one ``betaincinv`` call per
bound for the exact and Jeffreys intervals. ``scipy.special`` is imported on first use of
those two, so importing this module stays cheap.

References
----------
* Wilson 1927; Agresti and Coull 1998; Clopper and Pearson 1934; Brown, Cai and DasGupta
  2001 (Jeffreys).
* Shang et al. 2023: Eq 3-5 (the stratified intervals computed per matrix).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core import validation
from core.errors import InputError
from core.intervals import BOUNDARY_NOTE, CENSUS_NOTE, DESIGNS, HALDANE_NOTE, Interval

CLIPPED_NOTE = "clipped to [0, 1]"
WALD_ZERO_WIDTH_NOTE = "zero width: TP or FP is 0 (use Wilson or Jeffreys)"
PRECISION_METHODS = ("wald", "wilson", "agresti_coull", "clopper_pearson", "jeffreys")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class BatchIntervals:
    """Two-sided intervals of one method for many confusion matrices.

    Attributes
    ----------
    lower, upper : numpy.ndarray
        Bounds, one per matrix (the broadcast shape of the inputs).
    method : str
        Machine name, as in :class:`core.intervals.Interval`.
    flags : dict of str to numpy.ndarray
        For each note an :class:`~core.intervals.Interval` of the scalar path would carry,
        the matrices it applies to (boolean, same shape as the bounds), in note order.
    """

    lower: np.ndarray
    upper: np.ndarray
    method: str
    flags: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.lower.size)

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def note(self, index) -> str:
        """The note of matrix ``index`` (``"; "``-joined, as the scalar path writes it)."""
        return "; ".join(text for text, where in self.flags.items() if where[index])

    def interval(self, index) -> Interval:
        """Matrix ``index`` as a scalar :class:`~core.intervals.Interval`."""
        return Interval(
            lower=float(self.lower[index]),
            upper=float(self.upper[index]),
            method=self.method,
            note=self.note(index),
        )

    def to_intervals(self) -> list[Interval]:
        """One :class:`~core.intervals.Interval` per matrix (flattened, C order)."""
        return [self.interval(index) for index in np.ndindex(self.lower.shape)]


# --- inputs --------------------------------------------------------------------------------


def _cells(tp, fp, fn, tn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four counts as float arrays of one shape; whole numbers >= 0, both strata used."""
    try:
        cells = np.broadcast_arrays(*(np.asarray(c, dtype=float) for c in (tp, fp, fn, tn)))
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"TP, FP, FN and TN must be arrays of counts of one shape ({exc})"
        ) from None
    for name, cell in zip(("TP", "FP", "FN", "TN"), cells, strict=True):
        bad = ~(np.isfinite(cell) & (cell >= 0) & (cell == np.floor(cell)))
        if bad.any():
            where = _first(bad)
            raise InputError(
                f"{name} must be whole numbers >= 0, got {cell[where]!r} at matrix {where}"
            )
    tp, fp, fn, tn = (np.array(cell) for cell in cells)  # writable, not views of the input
    for empty, message in (
        (tp + fp == 0, "the predicted-positive sample is empty (TP + FP = 0)"),
        (fn + tn == 0, "the predicted-negative sample is empty (FN + TN = 0)"),
    ):
        if empty.any():
            raise InputError(f"{message} at matrix {_first(empty)}: label some items there")
    return tp, fp, fn, tn


def _first(mask: np.ndarray):
    index = np.unravel_index(int(np.flatnonzero(mask)[0]), mask.shape)
    return int(index[0]) if len(index) == 1 else tuple(int(i) for i in index)


def _positive(name: str, value, shape) -> np.ndarray:
    array = np.broadcast_to(np.asarray(value, dtype=float), shape)
    bad = ~(np.isfinite(array) & (array > 0))
    if bad.any():
        where = _first(bad)
        raise InputError(f"{name} must be a number > 0, got {array[where]!r} at matrix {where}")
    return array


def _fpc(fpc, shape) -> tuple[np.ndarray, np.ndarray]:
    """Variance factors ``(f1, f0)`` per matrix, each in (0, 1] (1: no correction)."""
    f1, f0 = (np.broadcast_to(np.asarray(f, dtype=float), shape) for f in fpc)
    for name, f in (("f1", f1), ("f0", f0)):
        if not np.all((f >= 0) & (f <= 1)):
            raise InputError(f"finite population factor {name} must be in [0, 1]")
    return f1, f0


def _design(design: str) -> str:
    if design not in DESIGNS:
        raise InputError(f"design must be 'stratified' or 'random', got {design!r}")
    return design


# --- shared pieces -------------------------------------------------------------------------


def _clipped(lower, upper, method: str, flags: dict | None = None) -> BatchIntervals:
    flags = dict(flags or {})
    flags[CLIPPED_NOTE] = (lower < 0.0) | (upper > 1.0)
    return BatchIntervals(
        lower=np.maximum(lower, 0.0), upper=np.minimum(upper, 1.0), method=method, flags=flags
    )


def _reaching_estimate(interval: BatchIntervals, estimate) -> BatchIntervals:
    """Widen each interval to contain its finite estimate (``core.intervals`` boundary rule)."""
    outside = np.isfinite(estimate) & ((estimate < interval.lower) | (estimate > interval.upper))
    flags = dict(interval.flags)
    flags[BOUNDARY_NOTE] = outside
    return BatchIntervals(
        lower=np.where(outside, np.fmin(interval.lower, estimate), interval.lower),
        upper=np.where(outside, np.fmax(interval.upper, estimate), interval.upper),
        method=interval.method,
        flags=flags,
    )


def log_ratio_bounds(x, spread) -> tuple[np.ndarray, np.ndarray]:
    """``(1/(1 + x*exp(+spread)), 1/(1 + x*exp(-spread)))`` for ``x > 0``, overflow-safe.

    Written as ``logistic(-(log x +- spread))``, with the logistic evaluated from
    ``exp(-|t|)`` so that no argument overflows (the vector form of
    :func:`core.intervals.log_ratio_bounds`).
    """
    log_x = np.log(x)
    return _logistic(-(log_x + spread)), _logistic(-(log_x - spread))


def _logistic(t: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(t))
    return np.where(t >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))


def _alpha(confidence: float) -> float:
    return 1.0 - validation.confidence(confidence)


# --- precision: a binomial proportion ------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class _Proportion:
    """Validated successes ``x = TP`` and trials ``n = TP + FP`` of every matrix.

    The Beta quantiles of the exact and Jeffreys intervals depend on ``(x, n)`` only, and
    many matrices share their counts (rounds of one design, simulated rounds), so they are
    evaluated once per distinct pair.
    """

    x: np.ndarray
    n: np.ndarray

    @classmethod
    def of(cls, tp, fp) -> _Proportion:
        if isinstance(tp, _Proportion):
            return tp
        tp, fp, _, _ = _cells(tp, fp, 0, 1)
        return cls(tp, tp + fp)

    def distinct(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(x, n, inverse)``: the distinct pairs and, per matrix, the index of its pair."""
        x, n = self.x.ravel(), self.n.ravel()
        if n.size == 0 or n.max() >= 2.0**31:
            return x, n, np.arange(n.size)
        key = x.astype(np.int64) * (int(n.max()) + 1) + n.astype(np.int64)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return x[first], n[first], inverse


def wald_precision(tp, fp, confidence: float = 0.95, fpc=(1.0, 1.0)) -> BatchIntervals:
    """Wald interval ``pi1^ +- z*sqrt(pi1^(1-pi1^)/n1 * f1)`` (Eq 3) of every matrix.

    ``fpc = (f1, f0)``: the strata's variance factors ``(N - n)/(N - 1)`` (scalars or one
    per matrix); precision uses ``f1``.
    """
    proportion = _Proportion.of(tp, fp)
    x, n = proportion.x, proportion.n
    p, z = x / n, validation.z_value(confidence)
    f1, _ = _fpc(fpc, x.shape)
    half = z * np.sqrt(p * (1.0 - p) / n * f1)
    zero_width = (x == 0) | (x == n)
    return _clipped(p - half, p + half, "wald", {WALD_ZERO_WIDTH_NOTE: zero_width})


def wilson_precision(tp, fp, confidence: float = 0.95, fpc=(1.0, 1.0)) -> BatchIntervals:
    """Wilson score interval (Wilson 1927) of every matrix.

    ``fpc = (f1, f0)`` as for :func:`wald_precision`: Wilson's interval for ``n/f1``
    trials, the point estimate where ``f1 = 0`` (:func:`core.intervals.wilson_precision`).
    """
    proportion = _Proportion.of(tp, fp)
    x, n = proportion.x, proportion.n
    p, z = x / n, validation.z_value(confidence)
    f1, _ = _fpc(fpc, x.shape)
    with np.errstate(divide="ignore"):
        n = np.where(f1 > 0.0, n / np.where(f1 > 0.0, f1, 1.0), np.inf)
    z2 = z * z
    shrink = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / shrink
    half = z / shrink * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    return BatchIntervals(
        lower=np.maximum(center - half, 0.0),
        upper=np.minimum(center + half, 1.0),
        method="wilson",
        flags={CENSUS_NOTE: f1 == 0.0},
    )


def agresti_coull_precision(tp, fp, confidence: float = 0.95) -> BatchIntervals:
    """Agresti-Coull interval: Wald around ``(x + z^2/2)/(n + z^2)`` with ``n + z^2`` trials."""
    proportion = _Proportion.of(tp, fp)
    x, n = proportion.x, proportion.n
    z = validation.z_value(confidence)
    n_tilde = n + z * z
    p_tilde = (x + z * z / 2.0) / n_tilde
    half = z * np.sqrt(p_tilde * (1.0 - p_tilde) / n_tilde)
    return _clipped(p_tilde - half, p_tilde + half, "agresti_coull")


def _beta_bounds(proportion: _Proportion, confidence: float, shift: float, method: str):
    """Equal-tailed Beta quantiles, 0 at ``x = 0`` and 1 at ``x = n``.

    ``shift = 0`` gives Clopper-Pearson (``Beta(x, n-x+1)`` below, ``Beta(x+1, n-x)``
    above), ``shift = 0.5`` Jeffreys (``Beta(x+1/2, n-x+1/2)`` on both sides). The
    undefined parameters at the boundary are replaced before the call, so ``betaincinv``
    never sees them.
    """
    from scipy.special import betaincinv

    alpha = _alpha(confidence)
    x, n, inverse = proportion.distinct()
    at_zero, at_all = x == 0, x == n
    lower = betaincinv(np.where(at_zero, 1.0, x + shift), n - x + 1.0 - shift, alpha / 2.0)
    upper = betaincinv(x + 1.0 - shift, np.where(at_all, 1.0, n - x + shift), 1.0 - alpha / 2.0)
    lower = np.where(at_zero, 0.0, lower)[inverse].reshape(proportion.x.shape)
    upper = np.where(at_all, 1.0, upper)[inverse].reshape(proportion.x.shape)
    return BatchIntervals(lower=lower, upper=upper, method=method)


def clopper_pearson_precision(tp, fp, confidence: float = 0.95) -> BatchIntervals:
    """Clopper-Pearson exact interval from Beta quantiles, every matrix."""
    return _beta_bounds(_Proportion.of(tp, fp), confidence, 0.0, "clopper_pearson")


def jeffreys_precision(tp, fp, confidence: float = 0.95) -> BatchIntervals:
    """Jeffreys interval: Beta(x+1/2, n-x+1/2) quantiles, bound 0 (1) at ``x = 0`` (``n``)."""
    return _beta_bounds(_Proportion.of(tp, fp), confidence, 0.5, "jeffreys")


def precision_intervals(
    tp, fp, confidence: float = 0.95, fpc=(1.0, 1.0), methods=PRECISION_METHODS
) -> dict[str, BatchIntervals]:
    """The precision intervals of ``methods`` (default all, in JSON order) of every matrix.

    ``fpc = (f1, f0)`` applies to Wald and Wilson, as in
    :func:`core.intervals.precision_intervals` (the exact interval stays binomial here).
    """
    makers = {
        "wald": lambda counts: wald_precision(counts, None, confidence, fpc),
        "wilson": lambda counts: wilson_precision(counts, None, confidence, fpc),
        "agresti_coull": lambda counts: agresti_coull_precision(counts, None, confidence),
        "clopper_pearson": lambda counts: clopper_pearson_precision(counts, None, confidence),
        "jeffreys": lambda counts: jeffreys_precision(counts, None, confidence),
    }
    unknown = [method for method in methods if method not in makers]
    if unknown:
        raise InputError(
            f"unknown precision interval method(s) {', '.join(map(str, unknown))}; "
            f"choose from {', '.join(PRECISION_METHODS)}"
        )
    counts = _Proportion.of(tp, fp)  # validated once for every method
    return {method: makers[method](counts) for method in methods}


# --- recall and FPR: ratios of the two strata's rates --------------------------------------


@dataclass(frozen=True, slots=True)
class _LogRatio:
    """``x``, its log standard error, the Haldane flag and the plain estimate, per matrix."""

    x: np.ndarray
    se: np.ndarray
    corrected: np.ndarray
    estimate: np.ndarray


def _corrected_cells(tp, fp, fn, tn):
    corrected = (tp == 0) | (fp == 0) | (fn == 0) | (tn == 0)
    half = np.where(corrected, 0.5, 0.0)
    return tp + half, fp + half, fn + half, tn + half, corrected


def _random_k(tp, fp, fn, tn, k, fpc) -> None:
    """A random sample estimates ``k`` by ``n1/n0``: refuse any other ``k`` and any FPC."""
    if k is not None:
        sample_k = (tp + fp) / (fn + tn)
        given = _positive("k", k, sample_k.shape)
        differs = ~np.isclose(given, sample_k, rtol=1e-9, atol=0.0)
        if differs.any():
            where = _first(differs)
            raise InputError(
                f"a random sample estimates k by n1/n0 = {sample_k[where]:.6g}; got "
                f"k = {given[where]:g} at matrix {where} (use design='stratified' for a known k)"
            )
    if any(np.any(np.asarray(f) != 1.0) for f in fpc):
        raise InputError(
            "the finite population correction needs a stratified design with known "
            "population counts; a random sample has none"
        )


def _ratio(positive, negative) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return positive / (positive + negative)


def recall_point(tp, fp, fn, tn, k) -> np.ndarray:
    """``1/(1 + pi0^/(k*pi1^))`` (Eq 2) per matrix, NaN where no actual positive was labeled."""
    tp, fp, fn, tn = _cells(tp, fp, fn, tn)
    k = _positive("k", k, tp.shape)
    return _recall_point(tp, fp, fn, tn, k)


def _recall_point(tp, fp, fn, tn, k) -> np.ndarray:
    pi1, pi0 = tp / (tp + fp), fn / (fn + tn)
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = 1.0 / (1.0 + pi0 / (k * pi1))
    return np.where((tp == 0) & (fn == 0), np.nan, recall)


def _recall_log_ratio(tp, fp, fn, tn, k, fpc, design) -> _LogRatio:
    tp, fp, fn, tn = _cells(tp, fp, fn, tn)
    f1, f0 = _fpc(fpc, tp.shape)
    if _design(design) == "random":
        _random_k(tp, fp, fn, tn, k, (f1, f0))
        ctp, _, cfn, _, corrected = _corrected_cells(tp, fp, fn, tn)
        return _LogRatio(
            x=cfn / ctp,
            se=np.sqrt(1.0 / ctp + 1.0 / cfn),
            corrected=corrected,
            estimate=_ratio(tp, fn),
        )
    k = _positive("k", k, tp.shape)
    ctp, cfp, cfn, ctn, corrected = _corrected_cells(tp, fp, fn, tn)
    n1, n0 = ctp + cfp, cfn + ctn
    pi1, pi0 = ctp / n1, cfn / n0
    with np.errstate(divide="ignore", over="ignore"):  # k near 1e-300: x = inf, bounds 0
        x = pi0 / (k * pi1)
    return _LogRatio(
        x=x,
        se=np.sqrt((1 - pi1) / (n1 * pi1) * f1 + (1 - pi0) / (n0 * pi0) * f0),
        corrected=corrected,
        estimate=_recall_point(tp, fp, fn, tn, k),
    )


def _katz(ratio: _LogRatio, confidence: float) -> BatchIntervals:
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        lower, upper = log_ratio_bounds(ratio.x, validation.z_value(confidence) * ratio.se)
    interval = BatchIntervals(
        lower=lower, upper=upper, method="katz_log", flags={HALDANE_NOTE: ratio.corrected}
    )
    return _reaching_estimate(interval, ratio.estimate)


def katz_log_recall(
    tp, fp, fn, tn, k, confidence: float = 0.95, fpc=(1.0, 1.0), *, design: str = "stratified"
) -> BatchIntervals:
    """Katz log-ratio interval for recall (Eq 4) of every matrix.

    Stratified: ``x = pi0^/(k*pi1^)``, ``se = sqrt((1-pi1^)/(n1*pi1^) + (1-pi0^)/(n0*pi0^))``
    (each term times its FPC factor). Random (``k`` estimated by ``n1/n0``; pass ``None``):
    ``x = FN/TP``, ``se = sqrt(1/TP + 1/FN)``. Bounds ``1/(1 + x*exp(+-z*se))``.
    """
    return _katz(_recall_log_ratio(tp, fp, fn, tn, k, fpc, design), confidence)


def delta_recall(
    tp, fp, fn, tn, k, confidence: float = 0.95, fpc=(1.0, 1.0), *, design: str = "stratified"
) -> BatchIntervals:
    """Delta-method interval ``recall^ +- z * x/(1+x)^2 * se`` (Eq 5) of every matrix."""
    ratio = _recall_log_ratio(tp, fp, fn, tn, k, fpc, design)
    z = validation.z_value(confidence)
    center = 1.0 / (1.0 + ratio.x)
    half = z * ratio.x / (1.0 + ratio.x) ** 2 * ratio.se
    interval = _clipped(center - half, center + half, "delta", {HALDANE_NOTE: ratio.corrected})
    return _reaching_estimate(interval, ratio.estimate)


def katz_log_fpr(
    tp, fp, fn, tn, k, confidence: float = 0.95, fpc=(1.0, 1.0), *, design: str = "stratified"
) -> BatchIntervals:
    """Katz log-ratio interval for the false positive rate of every matrix (roles swapped).

    Stratified: ``x' = (1-pi0^)/(k*(1-pi1^))``,
    ``se' = sqrt(pi1^/(n1*(1-pi1^)) + pi0^/(n0*(1-pi0^)))``. Random: ``x' = TN/FP``,
    ``se' = sqrt(1/FP + 1/TN)``.
    """
    tp, fp, fn, tn = _cells(tp, fp, fn, tn)
    f1, f0 = _fpc(fpc, tp.shape)
    if _design(design) == "random":
        _random_k(tp, fp, fn, tn, k, (f1, f0))
        _, cfp, _, ctn, corrected = _corrected_cells(tp, fp, fn, tn)
        ratio = _LogRatio(
            x=ctn / cfp,
            se=np.sqrt(1.0 / cfp + 1.0 / ctn),
            corrected=corrected,
            estimate=_ratio(fp, tn),
        )
    else:
        k = _positive("k", k, tp.shape)
        ctp, cfp, cfn, ctn, corrected = _corrected_cells(tp, fp, fn, tn)
        n1, n0 = ctp + cfp, cfn + ctn
        pi1, pi0 = ctp / n1, cfn / n0
        plain1, plain0 = tp / (tp + fp), fn / (fn + tn)
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate = 1.0 / (1.0 + (1.0 - plain0) / (k * (1.0 - plain1)))
        with np.errstate(divide="ignore", over="ignore"):  # extreme k: bounds 0 or 1
            x = (1 - pi0) / (k * (1 - pi1))
        ratio = _LogRatio(
            x=x,
            se=np.sqrt(pi1 / (n1 * (1 - pi1)) * f1 + pi0 / (n0 * (1 - pi0)) * f0),
            corrected=corrected,
            estimate=np.where((fp == 0) & (tn == 0), np.nan, estimate),
        )
    return _katz(ratio, confidence)
